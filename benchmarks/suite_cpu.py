"""Where the test suite's time goes: run pytest and print the CPU each kind of process used, beside the wall time.

The suite is bound by CPU on a 2-core machine (both cores busy nearly throughout), so its wall time falls only
where CPU is saved; this says where that CPU is: the pytest workers (with the embedded model each runs in-process),
the `streamlit run` servers of the browser walks (with their own model), chromium's processes, the CLI processes
the tests start, PostgreSQL. `/usr/bin/time` does not see chromium's processes.

Every process on the machine is read from /proc every 0.5 s; a process that starts and ends between two reads is
missed, and one that ends loses up to 0.5 s of its CPU (short CLI runs are undercounted). Processes that were
running before the suite started (other users') count only for what they used during it, under "other".

    .venv/bin/python benchmarks/suite_cpu.py              # the whole suite, as the README runs it
    .venv/bin/python benchmarks/suite_cpu.py tests/test_browser.py -n 0
    .venv/bin/python benchmarks/suite_cpu.py --commands -m model   # the CLI processes by command (the resident
                                                                   # server, `generate`, a `-c` script)
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
EVERY = 0.5  # seconds between two reads of /proc (its own CPU is printed: "this sampler")


def kind(cmdline: str, commands: bool = False) -> str:
    """The kind of process a command line is (the table's rows); with `commands`, a CLI process by its command."""
    if "chromium" in cmdline:
        for role in ("renderer", "gpu-process", "utility", "zygote"):
            if f"--type={role}" in cmdline:
                return f"chromium {role.removesuffix('-process')}"
        return "chromium browser"
    rules = (
        ("streamlit", "streamlit servers"),
        ("playwright", "playwright driver"),
        ("capel_ui", "CLI processes"),
        ("import sys;exec(eval(sys.stdin.readline()))", "pytest workers"),
        ("pytest", "pytest (main)"),
        ("postgres", "postgresql"),
    )
    name = next((name for needle, name in rules if needle in cmdline), "other")
    return f"CLI: {command(cmdline)}" if commands and name == "CLI processes" else name


def command(cmdline: str) -> str:
    """A CLI process's command, short: "-m capel_ui generate --model", "-c from capel_ui.lexicon import …"."""
    return " ".join(cmdline.split()[1:5])[:60]


def _read(pid: str) -> tuple[str, float] | None:
    """(command line, CPU seconds so far) of a process, or None if it is gone or a kernel thread."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    if not cmdline:
        return None
    return cmdline, (int(fields[11]) + int(fields[12])) / TICK


class Sampler(threading.Thread):
    """Adds up each kind's CPU until stopped; a process seen first at the start counts from there."""

    def __init__(self, commands: bool = False) -> None:
        super().__init__(daemon=True)
        self.commands = commands
        self.used: Counter[str] = Counter()
        self._seen: dict[str, tuple[str, float]] = {}
        self._done = threading.Event()
        self._sweep(first=True)

    def _sweep(self, first: bool = False) -> None:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            read = _read(pid)
            if read is None:
                continue
            cmdline, cpu = read
            name, before = self._seen.get(pid, (kind(cmdline, self.commands), cpu if first else 0.0))
            self.used[name] += cpu - before
            self._seen[pid] = (name, cpu)

    def run(self) -> None:
        while not self._done.wait(EVERY):
            self._sweep()

    def stop(self) -> Counter[str]:
        self._done.set()
        self.join()
        self._sweep()
        return self.used


def main(args: list[str]) -> int:
    commands = "--commands" in args  # ours, not pytest's
    args = [a for a in args if a != "--commands"]
    sampler = Sampler(commands)
    sampler.start()
    started = time.monotonic()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", *args], cwd=ROOT)
    wall = time.monotonic() - started
    used = sampler.stop()
    used["this sampler"] = time.process_time()  # not counted in the total
    total = sum(v for k, v in used.items() if k not in ("other", "this sampler"))
    print(f"\nwall {wall:.0f} s · CPU {total:.0f} s ({total / wall:.2f} cores busy of {os.cpu_count()}) · load at end "
          f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    for name, seconds in used.most_common():
        if seconds >= 0.5:
            print(f"  {name:<20} {seconds:7.1f} s CPU  {seconds / max(total, 1e-9):6.1%}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

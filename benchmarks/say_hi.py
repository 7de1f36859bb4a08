"""How long `generate --no-save --target 3 "Say hi."` takes on the embedded model, wall, as a writer runs it.

Run from the project root:  .venv/bin/python benchmarks/say_hi.py [--runs 8]

It stops the servers kept between commands (`models stop`), then times:
1. the first command, which starts the resident model server and leaves a warm process behind;
2. `--runs` commands started warm (`python -m capel_ui`, the warm process forks each), alternating with
3. `--runs` commands each in a process of its own (the same command through `capel_ui.command.run`, as before warm
   processes: it imports the app itself), on the same resident server.
Issue 45's aim: at most 2 s a command on a quiet 2-core machine. Run nothing beside it; the load is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["generate", "--no-save", "--target", "3", "Say hi."]
OWN_PROCESS = "import os, sys; from capel_ui.command import run; os._exit(run(sys.argv[1:]))"
AIM = 2.0


def seconds(argv: list[str]) -> float:
    """Wall seconds of one command (exit 0 or 1: a text that misses is still a text)."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, env={**os.environ})
    elapsed = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return elapsed


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 1)[0]


def show(label: str, times: list[float]) -> None:
    within = sum(t <= AIM for t in times)
    print(
        f"{label:<34} median {statistics.median(times):.2f} s  range {min(times):.2f}–{max(times):.2f} s  "
        f"within {AIM:.0f} s: {within} of {len(times)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8, help="commands of each kind (default 8)")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "capel_ui", "models", "stop"], cwd=ROOT, capture_output=True)
    print(f"load at the start: {load()}")
    first = seconds(["-m", "capel_ui", *ARGS])
    time.sleep(3)  # the warm process loads in the background meanwhile
    warm, own = [], []
    for _ in range(args.runs):
        warm.append(seconds(["-m", "capel_ui", *ARGS]))
        own.append(seconds(["-c", OWN_PROCESS, *ARGS]))
    print(f"the first command (starts the model server): {first:.2f} s")
    show("started warm (python -m capel_ui)", warm)
    show("each in a process of its own", own)
    print(f"load at the end: {load()}")


if __name__ == "__main__":
    main()

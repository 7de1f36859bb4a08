"""Issue 47 (4, 5): a batch's faults, each ending in one line, losing no finished text, writing no row twice. The
hostile input is real: files and folders (a read-only and a full tmpfs where root may mount one), a second `batch`
process, real signals, a database another connection keeps locked, 100,000 rows, an .xlsx that is not a zip or is a
zip bomb. And after a first Ctrl-C a command leaves within one busy timeout, and a further one never ends in a
traceback."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from capel_ui.backends import ScriptedBackend
from capel_ui.batch.table import MAX_ROWS
from capel_ui.cli import main
from capel_ui.storage import get_engine, list_runs
from tests.cli_process import interrupt_generate
from tests.scripted_server import MODEL, ok, status

ROOT = Path(__file__).resolve().parent.parent
ROWS = "id,instruction,target,note\n" + "".join(f"r{i},Write headline {i},5,keep {i}\n" for i in range(1, 4))
FAST = ok(["Sea", " wind", " salt", " light", " stone."])


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["batch", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))


def one_line(err: str) -> str:
    """The command's whole stderr, which must be one line."""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    return err


def scripted_args(src: Path, out: Path) -> list[str]:
    return [str(src), "--out", str(out), "--model", "scripted", "--mode", "baseline"]


def batch_process(server_url: str, *args: str) -> subprocess.Popen[str]:
    """`python -m capel_ui batch ARGS` on the scripted server, its stderr a pipe read line by line."""
    argv = [sys.executable, "-m", "capel_ui", "batch", *args, "--model", MODEL, "--base-url", server_url]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}  # the test's DATABASE_URL too
    return subprocess.Popen([*argv, "--mode", "baseline"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)


def lines_until(proc: subprocess.Popen[str], prefix: str) -> list[str]:
    """The process's stderr lines up to and with the first that starts with `prefix`."""
    seen = []
    for line in proc.stderr:  # type: ignore[union-attr]
        seen.append(line)
        if line.startswith(prefix):
            return seen
    raise AssertionError(f"no line starting {prefix!r}: {seen}")


# ----- folders that cannot be written ----------------------------------------------------------------------------


@contextlib.contextmanager
def mounted(folder: Path, options: str) -> Iterator[Path]:
    """A tmpfs at `folder` (root only); skips the test where it cannot be mounted."""
    folder.mkdir(exist_ok=True)
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if made.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder nothing may be written to: a read-only tmpfs for root (who may write any folder), else mode 555."""
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    with mounted(tmp_path / "ro", "ro,size=64k") as folder:
        yield folder


@dataclass
class FullDisk:
    folder: Path
    filler: Path

    def fill(self) -> None:
        """Write the filler until the disk says it is full."""
        with self.filler.open("ab", buffering=0) as fh, contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 65536)

    def free(self) -> None:
        self.filler.unlink()


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[FullDisk]:
    """A 4 MiB tmpfs, not yet filled (`fill`, then `free`)."""
    with mounted(tmp_path / "disk", "size=4m") as folder:
        yield FullDisk(folder, folder / "filler")


# ----- the output path ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["same", "through a folder and back", "a symbolic link", "a hard link"])
def test_an_output_that_is_the_input_is_refused_in_one_line_and_the_input_is_untouched(
    tmp_path: Path, scripted_model: ScriptedBackend, spelling: str
) -> None:
    src = tmp_path / "in.csv"
    src.write_text(ROWS, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    out = {
        "same": src,
        "through a folder and back": tmp_path / "sub" / ".." / "in.csv",
        "a symbolic link": tmp_path / "link.csv",
        "a hard link": tmp_path / "hard.csv",
    }[spelling]
    if spelling == "a symbolic link":
        out.symlink_to(src)
    elif spelling == "a hard link":
        os.link(src, out)
    code, _, err = run_cli(*scripted_args(src, out))
    assert code == 2 and "is the input file" in one_line(err), err
    assert src.read_text(encoding="utf-8") == ROWS
    assert scripted_model.requests == [] and list_runs(get_engine()) == []


def test_an_output_folder_that_cannot_be_written_is_refused_before_any_text_is_written(
    read_only_folder: Path, tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    src = tmp_path / "in.csv"
    src.write_text(ROWS, encoding="utf-8")
    code, _, err = run_cli(*scripted_args(src, read_only_folder / "out.csv"))
    assert code == 2, err
    assert re.search(r"cannot write .*out\.csv: (Read-only file system|Permission denied); give another --out", err)
    one_line(err)
    assert scripted_model.requests == [] and list_runs(get_engine()) == []


def test_a_full_disk_keeps_every_text_in_history_says_so_in_one_line_and_the_next_run_writes_only_the_file(
    full_disk: FullDisk, tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    scripted_model.reply("Sea wind salt light stone.")
    src, out = tmp_path / "in.csv", full_disk.folder / "out.csv"
    src.write_text(ROWS, encoding="utf-8")
    full_disk.fill()
    code, _, err = run_cli(*scripted_args(src, out))
    last = err.splitlines()[-1]
    assert code == 3, err
    assert last.startswith(f"capel_ui: error: cannot write {out}: No space left on device; the 3 texts written are")
    assert "saved in History" in last and "run the same command again" in last
    assert not out.exists() and sorted(p.name for p in full_disk.folder.iterdir()) == ["filler"]  # no temp, no lock
    assert [r.status for r in list_runs(get_engine())] == ["complete"] * 3
    asked = len(scripted_model.requests)
    full_disk.free()
    code, _, err = run_cli(*scripted_args(src, out))
    assert code == 0 and "3 complete from before" in err and "writing 0" in err, err
    assert len(scripted_model.requests) == asked and len(list_runs(get_engine())) == 3  # nothing written twice
    assert [r["text"] for r in read_csv(out)] == ["Sea wind salt light stone."] * 3


def test_a_full_disk_under_the_database_too_prints_every_text_rather_than_lose_it(
    full_disk: FullDisk, tmp_path: Path, scripted_model: ScriptedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capel_ui.runs import LiveRun

    monkeypatch.setattr(LiveRun, "save_retries", (0.05,))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{full_disk.folder / 'capel.db'}")
    get_engine()  # the database exists, then the disk fills up under it
    scripted_model.reply("Sea wind salt light stone.")
    src, out = tmp_path / "in.csv", full_disk.folder / "out.csv"
    src.write_text(ROWS, encoding="utf-8")
    full_disk.fill()
    code, printed, err = run_cli(*scripted_args(src, out))
    last = err.splitlines()[-1]
    assert code == 3, err
    assert "3 texts could not be saved to the database either: every row is printed above as CSV" in last
    rows = list(csv.DictReader(io.StringIO(printed)))
    assert [(r["id"], r["note"], r["text"]) for r in rows] == [
        (f"r{i}", f"keep {i}", "Sea wind salt light stone.") for i in (1, 2, 3)
    ]


# ----- two at once -------------------------------------------------------------------------------------------------


def test_a_second_batch_on_the_same_file_or_the_same_input_is_refused_naming_the_first(
    tmp_path: Path, scripted
) -> None:
    scripted.script(then=ok(["Sea", " wind", " salt", " light", " stone."], delay=0.15))  # 0.75 s a text
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text(ROWS, encoding="utf-8")
    first = batch_process(scripted.url, str(src), "--out", str(out), "--concurrency", "1")
    lines_until(first, "batch b")  # under way: its locks held
    mine = [str(src), "--model", MODEL, "--base-url", scripted.url, "--mode", "baseline"]
    code, _, err = run_cli(*mine, "--out", str(out))
    assert code == 2 and f"{out} is being written by process {first.pid} since" in one_line(err), err
    code, _, err = run_cli(*mine, "--out", str(tmp_path / "other.xlsx"))  # another file, the same batch
    assert code == 2 and re.search(rf"batch b\w+ \(this input with these options\) is .* process {first.pid}", err)
    one_line(err)
    assert first.wait(timeout=60) == 0, first.stderr.read()  # type: ignore[union-attr]
    assert Counter(r.batch_row for r in list_runs(get_engine())) == {"r1": 1, "r2": 1, "r3": 1}
    assert [r["verified"] for r in read_csv(out)] == ["true"] * 3
    assert not (tmp_path / ".out.csv.lock").exists() and not (tmp_path / "other.xlsx").exists()


# ----- Ctrl-C ------------------------------------------------------------------------------------------------------


def test_ctrl_c_twice_while_the_database_is_locked_leaves_within_seconds_with_every_text_in_the_output(
    tmp_path: Path, scripted
) -> None:
    """Another program holds the database as the batch is stopped: each run tries its final save once (one busy
    timeout, 5 s), not the half minute of every retry, and its text goes into the output with the reason; a second
    Ctrl-C meanwhile is only counted. Exit 130, one last line, no traceback."""
    scripted.script(then=ok(["word "] * 40, delay=0.1))  # 4 s a text: both on their way at the Ctrl-C
    get_engine()
    other = sqlite3.connect(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), isolation_level=None)
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text("id,instruction,target\na,Write forty words,40\nb,Write forty more,40\n", encoding="utf-8")
    proc = batch_process(scripted.url, str(src), "--out", str(out), "--concurrency", "2")
    lines_until(proc, "batch b")
    while len(scripted.chat_requests) < 2:
        time.sleep(0.05)
    time.sleep(1.0)  # some words arrived in both
    other.execute("BEGIN EXCLUSIVE")
    proc.send_signal(signal.SIGINT)
    stopped = time.monotonic()
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    tail = proc.stderr.read()  # type: ignore[union-attr]
    code = proc.wait(timeout=60)
    took = time.monotonic() - stopped
    other.execute("ROLLBACK")
    other.close()
    assert code == 130 and "Traceback" not in tail, tail
    assert tail.splitlines()[-1].startswith("interrupted: ") and "run the same command again" in tail
    assert took < 15, f"left {took:.0f} s after the Ctrl-C"
    rows = read_csv(out)
    assert [r["id"] for r in rows] == ["a", "b"]
    for row in rows:
        assert row["text"].split() and set(row["text"].split()) == {"word"}  # what arrived, kept
        assert "was not saved" in row["error"] and "database is locked" in row["error"]


def test_a_first_ctrl_c_with_the_database_locked_leaves_within_one_busy_timeout_with_the_text_printed(scripted):
    """`generate`: the first Ctrl-C's final save meets another program's lock: it is tried once (5 s), the text is
    printed and said to be the only copy (exit 3), instead of about 30 s of retries."""
    scripted.script(ok(["word "] * 60, delay=0.1))
    get_engine()
    other = sqlite3.connect(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), isolation_level=None)
    sent: list[float] = []

    def before(_i: int) -> None:
        other.execute("BEGIN EXCLUSIVE")
        sent.append(time.monotonic())

    code, out, err = interrupt_generate(scripted, "--mode", "baseline", "--target", "60", after=1.0, before=before)
    took = time.monotonic() - sent[0]
    other.close()
    assert (code, "only copy" in err, "Traceback" in err) == (3, True, False), err
    assert out.split() and set(out.split()) == {"word"}
    assert took < 12, f"left {took:.0f} s after the Ctrl-C"


def test_a_ctrl_c_while_a_variant_waits_out_a_retry_after_leaves_at_once_with_130_and_no_traceback(scripted) -> None:
    """Two variants; one is waiting out a 429's Retry-After (20 s) when Ctrl-C stops the command: the wait ends
    with the Stop (it used to be waited out, then took a second Ctrl-C), exit 130 within seconds, no
    KeyboardInterrupt traceback, and the server is not asked again."""
    scripted.script(ok(["word "] * 40, delay=0.1), status(429, "slow down", headers={"retry-after": "20"}))
    started = time.monotonic()
    code, _, err = interrupt_generate(scripted, "--mode", "baseline", "--target", "40", "--variants", "2", after=1.0)
    assert code == 130 and "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "interrupted: the 2 variants keep what arrived" in err
    assert time.monotonic() - started < 10 and len(scripted.chat_requests) == 2


def peak_memory(pid: int) -> int:
    """A process's peak resident memory in bytes, since it started the program it runs (`VmHWM`; not getrusage's,
    which counts the forked copy of this test process too)."""
    found = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(found.group(1)) * 1024 if found else 0  # none once it has ended


# ----- 100,000 rows ------------------------------------------------------------------------------------------------


def test_100000_rows_are_read_and_planned_in_bounded_time_and_memory_and_a_ctrl_c_writes_every_row(
    tmp_path: Path, scripted
) -> None:
    n = 100_000
    scripted.script(then=ok(["Sea", " wind", " salt", " light", " stone."], delay=0.3))
    src, out = tmp_path / "big.csv", tmp_path / "out.csv"
    src.write_text("id,instruction,target\n" + "".join(f"r{i},Write headline {i},5\n" for i in range(n)))
    started = time.monotonic()
    proc = batch_process(scripted.url, str(src), "--out", str(out))
    lines_until(proc, f"[1/{n}]")
    first_text = time.monotonic() - started
    proc.send_signal(signal.SIGINT)
    peak = 0
    while proc.poll() is None:  # its peak memory while it stops and writes 100,000 rows
        with contextlib.suppress(OSError):
            peak = max(peak, peak_memory(proc.pid))
        time.sleep(0.05)
    tail = proc.stderr.read()  # type: ignore[union-attr]
    assert proc.returncode == 130, tail
    assert first_text < 120, f"the first text took {first_text:.0f} s"  # O(n²) anywhere would take hours
    assert peak < 800 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    rows = read_csv(out)
    assert len(rows) == n and rows[-1]["id"] == f"r{n - 1}" and any(r["verified"] == "true" for r in rows[:4])
    assert tail.splitlines()[-1].startswith("interrupted: ")


def test_a_file_over_the_row_limit_is_refused_in_one_line_before_any_text_is_written(
    tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    src = tmp_path / "huge.csv"
    src.write_text("instruction,target\n" + "Write a headline,5\n" * (MAX_ROWS + 1))
    code, _, err = run_cli(*scripted_args(src, tmp_path / "out.csv"))
    assert code == 2 and f"huge.csv line {MAX_ROWS + 2} is row {MAX_ROWS + 1:,}, past the" in one_line(err), err
    assert scripted_model.requests == []


# ----- XLSX --------------------------------------------------------------------------------------------------------


def zip_bomb() -> bytes:
    """A workbook whose sheet is 64 MiB of spaces compressed about a thousand times (zip files do that)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr("[Content_Types].xml", "<Types/>")
        with book.open("xl/worksheets/sheet1.xml", "w") as sheet:
            for _ in range(64):
                sheet.write(b" " * 2**20)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"instruction,target\nWrite a headline,5\n", "is not an .xlsx workbook: an .xlsx is a zip archive"),
        (b"PK\x03\x04 a zip cut short", "is not an .xlsx workbook: an .xlsx is a zip archive"),
        (zip_bomb, "its part xl/worksheets/sheet1.xml would inflate"),
    ],
    ids=["csv renamed", "cut short", "zip bomb"],
)
def test_an_xlsx_that_is_not_a_zip_or_is_a_zip_bomb_is_refused_in_one_line_before_it_is_inflated(
    tmp_path: Path, scripted_model: ScriptedBackend, content: bytes | object, said: str
) -> None:
    src = tmp_path / "in.xlsx"
    src.write_bytes(content() if callable(content) else content)  # type: ignore[arg-type]
    code, _, err = run_cli(*scripted_args(src, tmp_path / "out.csv"))
    assert code == 2 and said in one_line(err), err
    assert scripted_model.requests == []


def test_the_lock_of_a_killed_batch_is_taken_over(tmp_path: Path, scripted_model: ScriptedBackend) -> None:
    """A lock file left by a process that died (`kill -9` leaves it) holds nothing: flock died with the process."""
    scripted_model.reply("Sea wind salt light stone.")
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text(ROWS, encoding="utf-8")
    (tmp_path / ".out.csv.lock").write_text("process 999999 since 00:00:00")
    code, _, err = run_cli(*scripted_args(src, out))
    assert code == 0, err
    assert not (tmp_path / ".out.csv.lock").exists()

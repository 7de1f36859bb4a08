"""Model pulls under faults, against the scripted Hub on 127.0.0.1 (HF_ENDPOINT), real files and real signals:
every failure is one line saying what happened and what to do, with its exit code from the failure table, and
what arrived is kept under a stable name that the next pull resumes (in the same process or another)."""

from __future__ import annotations

import hashlib
import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from capel_ui.cli import main
from capel_ui.local_models import BY_NAME, installed, models_dir, partial_path
from capel_ui.vocab import EXIT_BACKEND, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from tests.scripted_hub import HubFile, ScriptedHub

ROOT = Path(__file__).resolve().parent.parent
QWEN = BY_NAME["qwen2.5-1.5b"]
DATA = os.urandom(6 * 1024 * 1024)
SHA = hashlib.sha256(DATA).hexdigest()


def cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    code = main(list(argv), stdin=io.StringIO(""), stdout=io.StringIO(), stderr=err)
    return code, err.getvalue()


def pull() -> tuple[int, str]:
    return cli("models", "pull", QWEN.name)


def the_error(err: str) -> str:
    """The one line a failed pull ends with (no traceback above it)."""
    assert "Traceback" not in err, err
    [line] = [x for x in err.splitlines() if x.startswith(("capel_ui: error:", "interrupted:"))]
    return line


def part() -> Path:
    return partial_path(models_dir() / QWEN.name, QWEN.filename, SHA)


def ranges(hub: ScriptedHub) -> list[str | None]:
    return [r for method, _, r in hub.requests if method == "GET"]


def test_a_connection_dropped_mid_file_is_resumed_in_the_same_pull(hub: ScriptedHub) -> None:
    hub.serve(QWEN.repo, QWEN.filename, DATA, cut_first=True)
    code, err = pull()
    assert code == EXIT_OK, err
    assert ranges(hub) == [None, f"bytes={len(DATA) // 2}-"]
    assert Path(installed()[QWEN.name].path).read_bytes() == DATA


def test_a_hub_that_keeps_breaking_off_fails_in_one_line_and_the_next_pull_resumes(hub: ScriptedHub) -> None:
    served = hub.serve(QWEN.repo, QWEN.filename, DATA, cut_every=True)
    code, err = pull()
    line = the_error(err)
    assert code == EXIT_BACKEND and "broke off" in line and "run the same pull again to resume it" in line
    kept = part().stat().st_size
    assert 0 < kept < len(DATA) and QWEN.name not in installed()
    served.cut_every = False
    code, err = pull()
    assert code == EXIT_OK, err
    assert ranges(hub)[-1] == f"bytes={kept}-"
    assert Path(installed()[QWEN.name].path).read_bytes() == DATA and not part().exists()


def test_no_network_says_the_hub_cannot_be_reached(hub: ScriptedHub, monkeypatch) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", closed)
    code, err = pull()
    line = the_error(err)
    assert code == EXIT_BACKEND and f"the Hugging Face Hub ({closed}) cannot be reached" in line
    assert "check the network connection" in line


def test_a_hub_that_trickles_bytes_is_stopped_at_the_stall_limit(hub: ScriptedHub, monkeypatch) -> None:
    monkeypatch.setenv("CAPEL_PULL_STALL_LIMIT", "0.6")
    hub.serve(QWEN.repo, QWEN.filename, DATA, trickle=0.05)
    started = time.monotonic()
    code, err = pull()
    line = the_error(err)
    assert code == EXIT_BACKEND and "so the pull was stopped" in line and "run the same pull again" in line
    assert time.monotonic() - started < 10


def test_a_hub_that_refuses_range_gives_the_whole_file_again_not_a_corrupt_one(hub: ScriptedHub) -> None:
    served = hub.serve(QWEN.repo, QWEN.filename, DATA, cut_every=True)
    assert pull()[0] == EXIT_BACKEND and part().exists()
    served.cut_every, served.refuse_range = False, True
    code, err = pull()
    assert code == EXIT_OK, err
    assert Path(installed()[QWEN.name].path).read_bytes() == DATA


def test_a_models_folder_that_is_a_file_is_named_with_what_to_do(hub: ScriptedHub, tmp_path, monkeypatch) -> None:
    hub.serve(QWEN.repo, QWEN.filename, DATA)
    (tmp_path / "afile").write_text("not a folder")
    monkeypatch.setenv("CAPEL_MODELS_DIR", str(tmp_path / "afile"))
    code, err = pull()
    line = the_error(err)
    assert code == EXIT_USAGE and "is a file, not a folder" in line and "CAPEL_MODELS_DIR" in line
    assert hub.requests == []


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a read-only /sys (Linux)")
def test_a_models_folder_that_cannot_be_written_is_named_with_what_to_do(hub: ScriptedHub, monkeypatch) -> None:
    monkeypatch.setenv("CAPEL_MODELS_DIR", "/sys/capel-models")  # refused even to root
    code, err = pull()
    line = the_error(err)
    assert code == EXIT_USAGE and "cannot write to the models folder" in line and "CAPEL_MODELS_DIR" in line


def test_a_models_folder_linked_to_nothing_is_named_and_one_linked_to_a_folder_works(
    hub: ScriptedHub, tmp_path, monkeypatch
) -> None:
    hub.serve(QWEN.repo, QWEN.filename, DATA)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "gone")
    monkeypatch.setenv("CAPEL_MODELS_DIR", str(link))
    code, err = pull()
    assert code == EXIT_USAGE and "is a link to nothing" in the_error(err)
    (tmp_path / "gone").mkdir()
    code, err = pull()
    assert code == EXIT_OK, err
    assert installed()[QWEN.name].sha256 == SHA


def test_leftovers_of_earlier_pulls_are_cleaned(hub: ScriptedHub) -> None:
    hub.serve(QWEN.repo, QWEN.filename, DATA)
    folder = models_dir() / QWEN.name
    old = folder / ".cache" / "huggingface" / "download" / f"x.{SHA}.1a2b3c4d.incomplete"  # hf_hub_download's
    old.parent.mkdir(parents=True)
    old.write_bytes(b"x" * 100)
    other_version = partial_path(folder, QWEN.filename, "f" * 64)
    other_version.write_bytes(b"y" * 100)
    assert pull()[0] == EXIT_OK
    assert sorted(p.name for p in folder.iterdir() if p.name != ".pull.lock") == sorted(
        ["capel-model.json", QWEN.filename]
    )


# ----- real processes, real signals ----------------------------------------------------------------------------


def start_pull() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "capel_ui", "models", "pull", QWEN.name],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )


def half_way(served: HubFile) -> None:
    """Wait until the Hub sent half the file and the pull wrote what arrived."""
    assert served.held.wait(60)
    last, steady, deadline = -1, 0, time.monotonic() + 30
    while steady < 3:
        assert time.monotonic() < deadline, f"nothing arrived in {part()}"
        size = part().stat().st_size if part().exists() else 0
        steady = steady + 1 if size == last and size > 0 else 0
        last = size
        time.sleep(0.1)


def test_a_pull_killed_half_way_is_resumed_by_the_next_pull_and_checks_out(hub: ScriptedHub) -> None:
    served = hub.serve(QWEN.repo, QWEN.filename, DATA, hold=threading.Event())
    proc = start_pull()
    half_way(served)
    proc.kill()
    proc.wait(30)
    served.hold.set()
    kept = part().stat().st_size
    assert 0 < kept < len(DATA)
    code, err = pull()
    assert code == EXIT_OK, err
    assert ranges(hub)[-1] == f"bytes={kept}-"
    model = installed()[QWEN.name]
    assert hashlib.sha256(Path(model.path).read_bytes()).hexdigest() == SHA == model.sha256


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_pull_interrupted_half_way_says_so_in_one_line_and_keeps_what_arrived(hub: ScriptedHub, sig) -> None:
    served = hub.serve(QWEN.repo, QWEN.filename, DATA, hold=threading.Event())
    proc = start_pull()
    half_way(served)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    served.hold.set()
    line = the_error(err.decode())
    assert proc.returncode == EXIT_INTERRUPTED and "run the same pull again to resume it" in line
    kept = part().stat().st_size
    assert kept > 0
    assert pull()[0] == EXIT_OK and ranges(hub)[-1] == f"bytes={kept}-"
    assert installed()[QWEN.name].sha256 == SHA


# ----- the Models page -------------------------------------------------------------------------------------------


def test_the_models_page_shows_a_pull_that_cannot_reach_the_hub_as_one_error_box(
    hub: ScriptedHub, monkeypatch, app_test
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{s.getsockname()[1]}")
    at = app_test
    at.switch_page("app_pages/models.py").run()
    at.button(key=f"pull_{QWEN.name}").click().run()
    assert not at.exception, at.exception
    [error] = [e.value for e in at.error]
    assert "cannot be reached" in error and "run the same pull again" in error

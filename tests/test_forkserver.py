"""A command started warm (capel_ui/forkserver.py): the first `generate` leaves a warm process behind, which starts
the next one with the app already imported. The command a user runs must not be able to tell, but for its speed:
the same output and exit codes, its own terminal, stdin, folder, environment and keys, its Ctrl-C; and an old warm
process never runs a command for another environment. Real processes against a scripted server (no model)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from capel_ui import forkserver, keep
from capel_ui.storage import get_engine, list_runs
from tests.cli_process import ROOT
from tests.scripted_server import MODEL, ScriptedServer, ok

KEY = "sk-only-for-this-command"


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory, scripted_session: list[ScriptedServer]) -> Iterator[Started]:
    """The file's warm process, left behind by a first command in an environment with warm processes on (the suite
    turns them off) and a cache folder of its own; every warm process the file leaves is stopped at the end."""
    tmp = tmp_path_factory.mktemp("warm")
    env = {**os.environ, "CAPEL_RESIDENT": "1", "CAPEL_CACHE_DIR": str(tmp / "cache")}
    env |= {"PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(ROOT), "DATABASE_URL": f"sqlite:///{tmp / 'c.db'}"}
    env |= {"PYTHONUNBUFFERED": "1"}  # as a shell may have it: stdout and stderr then go out in the order written
    scripted = scripted_session[0].reset().script(ok(["Hello there, friend."]))
    first = _generate(env, scripted, "--mode", "baseline", "--target", "3", "--no-save", "Say hi.")
    assert (first.returncode, first.stdout) == (0, "Hello there, friend.\n"), first.stderr
    (process,) = _wait_for_warm(env)
    yield Started(env, process.pid)
    for left in _warm(env):
        keep.stop(left.pid)


@dataclass
class Started:
    """The environment of the file's commands, and its warm process."""

    env: dict[str, str]
    pid: int

    def started(self) -> int:
        """How many commands the warm process has started."""
        (found,) = [process for process in _warm(self.env) if process.pid == self.pid]
        return found.started


def _warm(env: dict[str, str]) -> list[keep.Warm]:
    saved = os.environ.get("CAPEL_CACHE_DIR")
    os.environ["CAPEL_CACHE_DIR"] = env["CAPEL_CACHE_DIR"]
    try:
        return keep.warm_processes()
    finally:
        os.environ.pop("CAPEL_CACHE_DIR")
        if saved is not None:
            os.environ["CAPEL_CACHE_DIR"] = saved


def _generate(
    env: dict[str, str], scripted: ScriptedServer, *args: str, stdin: str = "", cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    argv = ["generate", "--model", MODEL, "--base-url", scripted.url, *args]
    return subprocess.run(
        [sys.executable, "-m", "capel_ui", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


def _wait_for_warm(env: dict[str, str], count: int = 1) -> list[keep.Warm]:
    deadline = time.monotonic() + 60
    while len(found := _warm(env)) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    sockets = list((Path(env["CAPEL_CACHE_DIR"]) / "servers").glob("warm-*.sock"))
    while len(sockets) < count and time.monotonic() < deadline:
        time.sleep(0.1)
        sockets = list((Path(env["CAPEL_CACHE_DIR"]) / "servers").glob("warm-*.sock"))
    assert len(found) == count and len(sockets) == count, (found, sockets)
    return found


def test_the_next_command_is_started_warm_with_its_own_stdin_folder_and_key(
    warm: Started, scripted: ScriptedServer, tmp_path: Path
) -> None:
    folder = Path(warm.env["CAPEL_CACHE_DIR"]) / "servers"
    assert folder.stat().st_mode & 0o777 == 0o700
    assert next(folder.glob("warm-*.sock")).stat().st_mode & 0o777 == 0o600
    scripted.script(ok(["Hello there, friend."]))
    before = warm.started()
    args = ("--mode", "baseline", "--target", "3", "--no-save", "--json", "-")
    env = {**warm.env, "CAPEL_API_KEY": KEY}
    second = _generate(env, scripted, *args, stdin="Say hi from stdin.", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert warm.started() == before + 1  # the warm process started it
    assert '"text": "Hello there, friend."' in second.stdout
    (request,) = scripted.chat_requests
    assert "Say hi from stdin." in str(request.body["messages"]) and request.key == KEY
    assert KEY.encode() not in Path(f"/proc/{warm.pid}/environ").read_bytes()


def test_a_command_started_warm_exits_as_it_would_alone(warm: Started, scripted: ScriptedServer) -> None:
    before = warm.started()
    zero = _generate(warm.env, scripted, "--target", "0", "Say hi.")
    assert (zero.returncode, zero.stdout) == (2, "") and "capel_ui: error:" in zero.stderr
    assert "Traceback" not in zero.stderr and warm.started() == before + 1


def test_a_command_started_warm_prints_its_text_before_its_summary_as_unbuffered_python_does(
    warm: Started, scripted: ScriptedServer
) -> None:
    """stdout and stderr into one pipe (`2>&1`): the text's line, then the verdict, as in a process of its own."""
    scripted.script(ok(["Hello there, friend."]))
    before = warm.started()
    argv = ["generate", "--model", MODEL, "--base-url", scripted.url, "--mode", "baseline", "--target", "3"]
    done = subprocess.run(
        [sys.executable, "-m", "capel_ui", *argv, "--no-save", "Say hi."],
        env=warm.env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and warm.started() == before + 1, done.stdout
    assert done.stdout.splitlines()[0] == "Hello there, friend."


def test_a_command_with_its_standard_input_closed_runs_in_its_own_process(warm: Started) -> None:
    before = warm.started()
    argv = ["generate", "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1", "--target", "3", "-"]
    done = subprocess.run(
        [sys.executable, "-m", "capel_ui", *argv],
        env=warm.env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.close(0),  # as `0<&-` in a shell
    )
    assert done.returncode == 2 and done.stderr.startswith("capel_ui: error: standard input is closed")
    assert warm.started() == before


def test_ctrl_c_reaches_the_command_a_warm_process_started(warm: Started, scripted: ScriptedServer) -> None:
    before = warm.started()
    command, _ = _started_long(warm, scripted)
    command.send_signal(signal.SIGINT)
    out, err = command.communicate(timeout=60)
    assert command.returncode == 130, err
    assert warm.started() == before + 1
    (row,) = [row for row in _runs(warm) if row.status == "cancelled"]
    assert f"interrupted: kept {row.count} English words" in err.decode()
    assert 1 <= row.count < 60 and out.decode().split() == ["word"] * row.count


def _started_long(
    warm: Started, scripted: ScriptedServer, n: int = 60, ignored: tuple[int, ...] = ()
) -> tuple[subprocess.Popen[bytes], int]:
    """An `n`-word run started warm (a word each 0.1 s), once its first words are written: its command (started with
    the signals `ignored`, as `nohup` starts one) and its child."""
    scripted.script(ok(["word "] * n, delay=0.1))
    argv = ["generate", "--model", MODEL, "--base-url", scripted.url, "--mode", "baseline", "--target", str(n), "Hi"]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}

    def ignore() -> None:
        for sig in ignored:
            signal.signal(sig, signal.SIG_IGN)

    command = subprocess.Popen(
        [sys.executable, "-m", "capel_ui", *argv], env=warm.env, cwd=ROOT, preexec_fn=ignore, **pipes
    )
    deadline = time.monotonic() + 30
    while not scripted.chat_requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    (child,) = _children(warm.pid)
    return command, child


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return "gone"


def _until(check: Callable[[], bool], seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)
    return check()


def _runs(warm: Started) -> list:
    saved = os.environ["DATABASE_URL"]
    os.environ["DATABASE_URL"] = warm.env["DATABASE_URL"]
    try:
        return list_runs(get_engine())
    finally:
        os.environ["DATABASE_URL"] = saved


def test_a_command_killed_outright_stops_its_run_and_keeps_its_text(warm: Started, scripted: ScriptedServer) -> None:
    """SIGKILL cannot be passed on: the warm process sees the command's end of the socket close and stops its child
    as SIGTERM would, instead of writing on for nobody."""
    cancelled = {row.id for row in _runs(warm) if row.status == "cancelled"}
    command, child = _started_long(warm, scripted)
    command.kill()
    command.communicate(timeout=30)
    assert _until(lambda: _state(child) in ("gone", "Z"))
    (row,) = [row for row in _runs(warm) if row.status == "cancelled" and row.id not in cancelled]
    assert 1 <= row.count < 60 and row.verified is False


def test_ctrl_z_stops_the_command_and_its_run_and_fg_lets_both_go_on(warm: Started, scripted: ScriptedServer) -> None:
    command, child = _started_long(warm, scripted, 30)
    command.send_signal(signal.SIGTSTP)
    assert _until(lambda: _state(command.pid) == "T" and _state(child) == "T")
    time.sleep(0.5)
    assert _state(child) == "T"  # stopped, not writing on
    command.send_signal(signal.SIGCONT)
    out, err = command.communicate(timeout=60)
    assert command.returncode == 0, err
    assert out.decode().split() == ["word"] * 30


def test_a_hangup_the_command_was_started_to_ignore_is_not_passed_on(warm: Started, scripted: ScriptedServer) -> None:
    # `nohup capel_ui generate … &`, then the terminal closes: the command and its warm child go on
    command, _child = _started_long(warm, scripted, 30, ignored=(signal.SIGHUP,))
    command.send_signal(signal.SIGHUP)
    out, err = command.communicate(timeout=60)
    assert command.returncode == 0, err
    assert out.decode().split() == ["word"] * 30


GAVE_UP = """
import socket, sys
from capel_ui import forkserver
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(str(forkserver._wanted(sys.argv[1:])))
forkserver._hand_over(conn)
print(forkserver._reply(conn.makefile("rb"), b"pid"))
conn.close()  # as a command does that waited ANSWER_WAIT for its pid: it runs the command itself
"""


def test_a_command_that_gave_up_waiting_is_never_run_by_the_warm_process_too(
    warm: Started, scripted: ScriptedServer
) -> None:
    scripted.script(ok(["Hello there, friend."]))
    before = warm.started()
    argv = ["generate", "--model", MODEL, "--base-url", scripted.url, "--mode", "baseline", "--target", "3", "Hi."]
    gave_up = subprocess.run(
        [sys.executable, "-c", GAVE_UP, *argv], env=warm.env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert gave_up.returncode == 0 and warm.started() == before + 1, gave_up.stderr
    child = int(gave_up.stdout)
    assert _until(lambda: _state(child) in ("gone", "Z"))
    time.sleep(0.5)
    assert not scripted.chat_requests and gave_up.stderr == ""


def test_a_warm_process_never_starts_a_command_of_another_environment(warm: Started, scripted: ScriptedServer) -> None:
    """Last in the file: it leaves two warm processes and stops both."""
    scripted.script(ok(["Hello there, friend."]))
    before = warm.started()
    other = {**warm.env, "CAPEL_KEEP_ALIVE": "600"}
    assert _generate(other, scripted, "--mode", "baseline", "--target", "3", "--no-save", "Hi.").returncode == 0
    assert warm.started() == before
    _wait_for_warm(warm.env, 2)  # the other environment's, left behind by that command
    listed = subprocess.run(
        [sys.executable, "-m", "capel_ui", "models", "running"], env=warm.env, capture_output=True, text=True
    )
    assert f"pid {warm.pid}" in listed.stdout and "2 warm processes waiting." in listed.stderr
    stopped = subprocess.run(
        [sys.executable, "-m", "capel_ui", "models", "stop"], env=warm.env, capture_output=True, text=True
    )
    assert stopped.stderr.endswith("2 warm processes stopped.\n") and not _warm(warm.env)


STATES = [  # what a command's environment changes, and whether it is another state (another warm process)
    pytest.param({"CAPEL_EMBEDDED_THREADS": "1"}, True, id="a setting of the app"),
    pytest.param({"LANG": "C.UTF-8"}, True, id="the locale"),
    pytest.param({"OPENAI_API_KEY": "sk-another"}, False, id="a key: never given to it, read by the command"),
    pytest.param({"PWD": "/tmp", "OLDPWD": "/", "SHLVL": "3"}, False, id="what a shell changes anyway"),
]


@pytest.mark.parametrize(("change", "another"), STATES)
def test_a_warm_process_is_kept_for_one_state(change: dict[str, str], another: bool) -> None:
    base = {"HOME": "/root", "LANG": "en_US.UTF-8", "PWD": "/work", "OPENAI_API_KEY": "sk-one"}
    assert (forkserver.state(base) != forkserver.state(base | change)) is another


def test_a_file_written_in_the_apps_own_folder_keeps_its_warm_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's folder on PYTHONPATH (as the file's commands have it): a test run's `.hypothesis` written there
    made every warm process stale, and a command of the same state find none."""
    monkeypatch.setattr(sys, "path", ["", str(ROOT), *sys.path])
    before = forkserver.state({"HOME": "/root"})
    written = ROOT / f".warm-state-{os.getpid()}"
    written.touch()
    written.unlink()
    assert forkserver.state({"HOME": "/root"}) == before


def test_a_warm_process_killed_is_replaced_by_the_next_command(warm: Started, scripted: ScriptedServer) -> None:
    """After the file's other tests (none left waiting): a warm process killed leaves its socket file behind, which
    must not stop the next command from leaving another."""
    scripted.script(ok(["Hello there, friend."]), then=ok(["Hello there, friend."]))
    args = ("--mode", "baseline", "--target", "3", "--no-save", "Say hi.")
    assert _generate(warm.env, scripted, *args).returncode == 0
    (killed,) = _wait_for_warm(warm.env)
    os.kill(killed.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _warm(warm.env) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list((Path(warm.env["CAPEL_CACHE_DIR"]) / "servers").glob("warm-*.sock"))  # left behind
    assert _generate(warm.env, scripted, *args).returncode == 0  # in its own process: it leaves another
    (replaced,) = _wait_for_warm(warm.env)
    _until_listening(warm.env)  # its one connection counts as a command started
    assert _generate(warm.env, scripted, *args).returncode == 0
    assert _warm(warm.env) == [keep.Warm(replaced.pid, 2)] and replaced.pid != killed.pid


def _until_listening(env: dict[str, str]) -> None:
    """Wait until the warm process of `env`'s folder takes connections (it unlinks a dead one's socket first)."""
    import socket

    (path,) = (Path(env["CAPEL_CACHE_DIR"]) / "servers").glob("warm-*.sock")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
            except OSError:
                time.sleep(0.1)
                continue
        while not any(process.started for process in _warm(env)) and time.monotonic() < deadline:
            time.sleep(0.05)  # the warm process forked a child for the probe (it leaves, no request coming)
        return
    raise AssertionError("no warm process took connections")

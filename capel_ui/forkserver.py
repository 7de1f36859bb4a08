"""Commands started warm: a process that has the app imported forks each `generate` (issue 45).

A command spent most of a second importing the app (`openai`'s client, the run's modules) and loading what its run
reads before it wrote a word. Beside the resident model server
(`backends/resident.py`), a *warm process* keeps all that loaded. A command finds it by its socket and hands it its
terminal (stdin, stdout and stderr, as file descriptors), its arguments, environment and folder; the warm process
forks a child that runs the command as `python -m capel_ui` would, while the command waits for the child's exit code
and passes Ctrl-C, SIGTERM and SIGHUP on to it (Ctrl-Z stops both; a command killed outright stops its child as
SIGTERM would). Forking is safe because the warm process runs no thread and no model
(the model is the resident server's, in a process of its own).

The guarantees are the resident server's (docs/design/resident-server.md):
- Only this user reaches it: a Unix socket in the 0700 cache folder, and the child checks its caller's user id.
- Never stale: the socket's name is a hash of the Python, the app's files, the installed packages' folders and the
  environment, keys aside (`state`); any change and the command runs in its own process, as before, and leaves a
  warm process for the new state behind it.
- Never in the way: no warm process, or one that does not answer before the command has started, and the command
  runs in its own process. `CAPEL_RESIDENT=0` turns it off with the resident server.
- The warm process is never given a key (`keep.shareable`): a command's keys reach only its own child.
- It stops after `keep.keep_alive()` seconds with no command; `models stop` stops it.

Standard library only until a command is forked: `__main__` asks it first.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import io
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .command import run
from .interrupts import EXIT_INTERRUPTED, answered
from .keep import alive, enabled, keep_alive, shareable, warm_socket

COMMANDS = frozenset({"generate"})
"""The commands a warm process starts: the one that runs a model (a rewrite too: `generate --rewrite`); the others
take a fifth of a second as they are."""
ANSWER_WAIT = 5.0
"""Seconds a command waits for the warm process to start it before it runs in its own process instead."""
FORMAT = 2
"""Bumped when a command is handed over differently: a warm process of another format is never asked."""
VOLATILE = frozenset({"PWD", "OLDPWD", "_", "SHLVL"})
"""Environment variables a shell changes between two commands, never read by the app: not part of `state`."""
EXIT_LOST = 3  # vocab.EXIT_BACKEND (vocab is not imported before a command starts)
"""The exit code of a command whose warm process went away before it said how the command ended (and of a child
that failed before its command started, which its waiting command never sees: it runs the command itself)."""
GO = b"go\n"
"""What a command answers its child's pid with: the child runs the command only then, so a command that gave up
waiting (and runs itself) is never run twice."""
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals a waiting command passes on to the child running it (Ctrl-Z: `_pause`; SIGKILL: `_gone`)."""
PACKAGE = Path(__file__).resolve().parent


def state(environ: dict[str, str] | None = None) -> str:
    """A hash of everything a process's imports may depend on: the Python and its flags, the app's files, the
    installed packages' folders (a package installed or upgraded changes its folder; not the app's own folder, where
    a test run's `.hypothesis` or a database's journal is written) and the environment but for its keys and what a
    shell changes anyway."""
    environ = dict(os.environ if environ is None else environ)
    digest = hashlib.sha256(f"{FORMAT}|{sys.executable}|{sys.version}|{sys.flags}".encode())
    for path in sorted(PACKAGE.rglob("*")):
        if "__pycache__" not in path.parts and path.is_file():
            stat = path.stat()
            digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    for entry in sys.path[1:]:  # the first is the command's folder, where `python -m` looked first
        if Path(entry or ".").resolve() == PACKAGE.parent:
            continue  # the app's own folder (on PYTHONPATH): its files are above; a tool's cache or a journal there
        with contextlib.suppress(OSError):  # moves the folder's time and would make every warm process stale
            digest.update(f"{entry}|{os.stat(entry).st_mtime_ns}\n".encode())
    kept = {name: value for name, value in shareable(environ).items() if name not in VOLATILE}
    digest.update(json.dumps(kept, sort_keys=True).encode())
    return digest.hexdigest()[:20]


SOCKET_PATH_MOST = 107
"""The longest path of a Unix socket Linux takes (108 bytes with its end): a deeper cache folder has none."""


@functools.cache
def _started_in() -> str:
    """The state this command started in: looked for before it runs, left behind after (one stat of every file)."""
    return state()


def _wanted(argv: Sequence[str]) -> Path | None:
    """The socket of this command's warm process, where it is a command a warm process starts and one can be used."""
    if not argv or argv[0] not in COMMANDS or not enabled():
        return None
    path = warm_socket(_started_in())
    return path if len(os.fsencode(path)) <= SOCKET_PATH_MOST else None


# The command's side ---------------------------------------------------------------------------------------------


def forward(argv: Sequence[str]) -> int | None:
    """Run this command in the warm process for this state and return its exit code; None where there is none or
    it did not start the command (the caller runs it itself, and `leave_warm_process` starts one for next time)."""
    path = _wanted(argv)
    if path is None or None in (sys.stdin, sys.stdout, sys.stderr):  # a closed descriptor: the new socket would
        return None  # take its number and be handed over as the terminal; the command says what is wrong itself
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(ANSWER_WAIT)
        conn.connect(str(path))
        _hand_over(conn)
        replies = conn.makefile("rb")
        pid = _reply(replies, b"pid")
        if pid is not None:
            # From GO on the child runs the command and this process only passes signals on: a Ctrl-C between the
            # two, answered here, would leave the child to be stopped by the warm process and say so a second time.
            signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
            before = _pass_on(pid)
            try:
                conn.sendall(GO)
            except OSError:  # the child is gone: the command runs here, with this process's own handlers
                for sig, handler in before.items():
                    signal.signal(sig, handler)
                raise
    except (OSError, ValueError):
        pid = None
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)  # one held meanwhile is passed on now
    if pid is None:
        conn.close()
        return None
    conn.settimeout(None)
    return _wait(replies, pid)


def _hand_over(conn: socket.socket) -> None:
    """The terminal's three descriptors, then what the child needs to be this command."""
    umask = os.umask(0o22)
    os.umask(umask)
    request = {"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd(), "path": sys.path, "umask": umask}
    body = json.dumps(request).encode()
    socket.send_fds(conn, [struct.pack("!Q", len(body))], [0, 1, 2])
    conn.sendall(body)


def _reply(replies: io.BufferedReader, word: bytes) -> int | None:
    line = replies.readline()
    name, _, value = line.strip().partition(b" ")
    return int(value) if name == word and value.lstrip(b"-").isdigit() else None


def _pass_on(pid: int) -> dict[int, Any]:
    """From now on the signals this process gets go to the child `pid` (Ctrl-Z stops both); the handlers they had. A
    signal this command was started to ignore stays ignored (`nohup`: the child goes on when the terminal closes)."""

    def pass_on(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)

    before = {sig: signal.signal(sig, pass_on) for sig in answered(FORWARDED)}
    before[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, lambda *_: _pause(pid))
    return before


def _wait(replies: io.BufferedReader, pid: int) -> int:
    """The child's exit code, its signals passed on meanwhile (`_pass_on`)."""
    code = _reply(replies, b"exit")
    if code is None:  # the warm process went away first: wait for the command itself
        while alive(pid):
            time.sleep(0.05)
        sys.stderr.write("capel_ui: the warm process ended before it said how the command ended\n")
        return EXIT_LOST
    return code


def _pause(pid: int) -> None:
    """Ctrl-Z: stop the child, then this command; on `fg` (SIGCONT) let the child go on. The child is not in the
    terminal's process group, so it never gets the terminal's SIGTSTP itself; both stop with SIGSTOP, which a
    process group without a parent in the session (a command started by a script) cannot discard as it does
    SIGTSTP."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGSTOP)
    os.kill(os.getpid(), signal.SIGSTOP)  # stopped here until SIGCONT
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGCONT)


def leave_warm_process(argv: Sequence[str]) -> None:
    """After a command ran in its own process: start a warm process for the next one, if there is none for this
    state (it loads in the background; the command has already answered)."""
    path = _wanted(argv)
    if path is None or _held(path.with_suffix(".lock")):
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        subprocess.Popen(
            [sys.executable, "-m", "capel_ui.forkserver", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=shareable(os.environ),
            start_new_session=True,
        )


def _held(lock: Path) -> bool:
    """Whether a warm process holds this lock (is loading or serving). A socket file alone says nothing: one killed
    leaves it behind, and the next warm process replaces it."""
    try:
        with open(lock, "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # no cache folder yet, or one that cannot be written: the warm process finds out for itself
        return False
    return False


# The warm process's side ----------------------------------------------------------------------------------------


def serve(path: Path) -> None:
    """Load the app, then start each command that asks until `keep_alive()` seconds pass with none."""
    with open(path.with_suffix(".lock"), "a+") as lock:  # held for the process's life: one warm process a state
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return
        _say(lock, 0)  # found (and stopped by `models stop`) while it loads, too
        warm()
        if threading.active_count() != 1:  # a thread left running would be forked half-way: do not serve
            return
        path.unlink(missing_ok=True)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        os.chmod(path, 0o600)
        listener.listen(16)
        _loop(listener, path, lock)
        lock.truncate(0)  # no process of this state is there any more


def warm() -> None:
    """Import what a command's run imports, so its child finds it done: the modules of a run on the embedded model or
    a vendor, the quality rules, the sentence splitter. Nothing is left open (a database read after a fork is not
    safe) and no thread is started."""
    from . import cli, service  # noqa: F401
    from .backends import openai_compat, providers  # noqa: F401
    from .ending import sentence_ends

    sentence_ends("A warm start. It reads.")


def _loop(listener: socket.socket, path: Path, lock: TextIO) -> None:
    """Fork a child for each command; tell each command its child's exit code; leave when idle or told to."""
    woken_r, woken_w = os.pipe()
    os.set_blocking(woken_w, False)
    signal.set_wakeup_fd(woken_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    leaving = []
    signal.signal(signal.SIGTERM, lambda *_: leaving.append(True))
    children: dict[int, socket.socket] = {}
    waiting: dict[socket.socket, int] = {}  # the commands still waiting for their child's exit code
    last, started = time.monotonic(), 0
    while not leaving and (children or time.monotonic() - last < keep_alive()):
        # a command's socket found ready to read is at its end: the next round's `_watched` stops its child
        ready, _, _ = select.select([listener, woken_r, *_watched(waiting)], [], [], 1.0)
        if woken_r in ready:
            os.read(woken_r, 512)
        if listener in ready:
            conn, _ = listener.accept()
            pid = os.fork()
            if pid == 0:
                _child(
                    conn, [listener.fileno(), woken_r, woken_w, lock.fileno(), *(c.fileno() for c in children.values())]
                )
            children[pid], waiting[conn] = conn, pid
            started += 1
            _say(lock, started)
            last = time.monotonic()
        _reap(children)
        waiting = {conn: pid for conn, pid in waiting.items() if pid in children}
    listener.close()
    path.unlink(missing_ok=True)


def _watched(waiting: dict[socket.socket, int]) -> list[socket.socket]:
    """The sockets of the commands to watch for their end: a command killed outright closes its end, and its child
    is stopped (`_stop_child`). One whose request its child has not read yet is left for the next round: the
    request would keep it ready to read."""
    watched = []
    for conn in list(waiting):
        seen = _peek(conn)
        if seen == b"":
            _stop_child(waiting.pop(conn))
        elif seen is None:
            watched.append(conn)
    return watched


def _peek(conn: socket.socket) -> bytes | None:
    """What waits on `conn` without taking it (its child reads the request): None for nothing, b"" for its end."""
    try:
        return conn.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _stop_child(pid: int) -> None:
    """Stop a child whose command is gone as SIGTERM stops a command: its run saved as cancelled, not written on to
    its end for nobody (SIGCONT: a child stopped by Ctrl-Z would never take the SIGTERM)."""
    for sig in (signal.SIGTERM, signal.SIGCONT):
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def _say(lock: TextIO, started: int) -> None:
    """The lock file says which process holds it and how many commands it started (`keep.warm_processes`)."""
    lock.seek(0)
    lock.truncate(0)
    lock.write(f"{os.getpid()} {started}")
    lock.flush()


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            code = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(OSError):
                conn.sendall(f"exit {code if code >= 0 else 128 - code}\n".encode())
            conn.close()


def _child(conn: socket.socket, inherited: list[int]) -> None:
    """Become the command: its caller checked, its descriptors, folder, environment and arguments taken, then run
    as `python -m capel_ui` runs it. Never returns."""
    code = EXIT_LOST
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # until its command has it: gone, it is only stopped
        for fd in inherited:
            os.close(fd)
        request = _take_over(conn)
        if not _told_to_go(conn):
            os._exit(EXIT_LOST)  # its command gave up waiting (or was stopped) and runs itself: never run twice
        conn.close()  # `run` answers a Ctrl-C passed on from here as a process of its own does
        code = run(request["argv"][1:])
    except KeyboardInterrupt:  # before the command started: as `__main__` says it
        sys.stderr.write("capel_ui: interrupted\n")
        code = EXIT_INTERRUPTED
    except BaseException:  # as Python itself ends on an exception nobody caught: its traceback, exit 1
        traceback.print_exc()
        code = 1
    finally:  # whatever happened, this process never returns to the warm process's loop
        os._exit(code)


def _told_to_go(conn: socket.socket) -> bool:
    """Whether the command, told this child's pid, still waits for it (it sends `GO`); one that gave up after
    `ANSWER_WAIT` (or was stopped by a Ctrl-C meanwhile) closed its socket, and this child leaves without a word."""
    said = b""
    try:
        conn.sendall(f"pid {os.getpid()}\n".encode())
        while len(said) < len(GO) and (more := conn.recv(len(GO) - len(said))):
            said += more
    except OSError:  # no answer within ANSWER_WAIT
        return False
    return said == GO


def _take_over(conn: socket.socket) -> dict:
    """Read the command's request and take its descriptors, environment, folder and arguments."""
    conn.settimeout(ANSWER_WAIT)
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    if uid != os.getuid():
        raise ValueError("another user's command")
    head, fds, _, _ = socket.recv_fds(conn, 8, 3)
    if len(head) != 8 or len(fds) != 3:
        raise ValueError("a request without its descriptors")
    (size,) = struct.unpack("!Q", head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(min(size - len(body), 1 << 20))
        if not chunk:
            raise ValueError("a request cut short")
        body += chunk
    request = json.loads(body)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.umask(request["umask"])
    sys.argv, sys.path[:] = list(request["argv"]), list(request["path"])
    _new_stdio()
    return request


def _new_stdio() -> None:
    """sys.stdin, stdout and stderr on the command's descriptors, buffered as Python buffers them at start: stdout
    by line on a terminal, stderr always by line; where Python runs unbuffered (-u, PYTHONUNBUFFERED, as the warm
    process was started), stdout and stderr on their descriptors with no buffer between, each write at once (a
    buffered stdout printed a text's last words after the run's summary on stderr)."""
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        unbuffered = fd != 0 and old.write_through
        buffered = io.BufferedReader(raw) if fd == 0 else raw if unbuffered else io.BufferedWriter(raw)
        by_line = fd == 2 or os.isatty(fd)
        stream = io.TextIOWrapper(
            buffered, encoding=old.encoding, errors=old.errors, line_buffering=by_line, write_through=unbuffered
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


if __name__ == "__main__":
    serve(Path(sys.argv[1]))

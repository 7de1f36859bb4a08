"""A model server that outlives the command that started it, so the next command finds the model loaded.

A command on the embedded model or a pulled GGUF file (`generate`, `rewrite`) would otherwise load the model and
set up llama.cpp in its own process, most of a second of every command before it writes a word (issue 45). It asks
for the file's resident server instead (`attach`): one found answering is used at once; else one is started in a
process of its own (`python -m capel_ui.backends.resident FILE`), which the command waits for and which stays after
it until `keep.KEEP_ALIVE` seconds pass with no request (as Ollama keeps a model loaded for five minutes).

It keeps the guarantees of a server in the command's own process: it listens on 127.0.0.1 only and takes a random
key, kept in a record only this user can read (`<cache>/servers/`, folder 0700, file 0600) and never printed. The
record names the GGUF file (path, size, modification time) and the llama.cpp build: a changed file or build stops the
old server and starts another; a request bigger than `SIZE`, a record whose process is gone or a server that does not
answer is never used (the command then starts a server of its own, as before). `CAPEL_RESIDENT=0` turns it off;
`python -m capel_ui server` lists these servers and `server stop` stops them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO

from .. import keep
from ..keep import alive, cache_dir, enabled, keep_alive, shareable
from .embedded import ServerHandle, ServerSize, file_key, new_server, threads

SIZE = ServerSize(4, 2048)
"""A resident server's slots and each slot's context: a command's variants or a limit's rival closings at once, each
with the least context a command's server gets (`embedded.LEAST_CONTEXT`: texts of up to about 150 words); a request
that needs more starts a server of its own sized for it (its wait is then a small share of its run). 4 × 2,048 tokens
of KV cache is about 190 MB for SmolLM2, kept while the server stays."""
START_WAIT = 120.0
"""Seconds a command waits for a resident server it started to answer before it starts one of its own."""
FORMAT = 1
"""Bumped when a resident server is started differently: a server of another format is replaced."""
POLL = 1.0
_IN_USE: list[TextIO] = []
"""The users' files this process holds a shared lock on (`Place.use`), kept open until it ends."""


@dataclass(frozen=True)
class Record:
    """What a command needs to use a resident server, kept while the server runs."""

    pid: int
    base_url: str
    api_key: str = field(repr=False)
    key: str
    slots: int
    context: int
    threads: int = 0  # 0: a record written before servers said their threads (replaced, as one of other threads)

    @property
    def model_file(self) -> str:
        """The GGUF file's name, from the key (`embedded.file_key`: the path comes first)."""
        return Path(self.key.split("|", 1)[0]).name

    def fits(self, need: ServerSize) -> bool:
        """Whether it holds a request of `need` on the threads this process would start a server on."""
        return need.slots <= self.slots and need.context <= self.context and self.threads == threads()

    def handle(self, gguf: Path) -> ServerHandle:
        return ServerHandle(self.base_url, self.api_key, gguf, self.slots)

    def answers(self) -> bool:
        """Whether the process is there and its server says it is ready (llama.cpp's `/health`)."""
        if not alive(self.pid):
            return False
        request = urllib.request.Request(self.base_url.removesuffix("/v1") + "/health")
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                return json.load(response).get("status") == "ok"
        except (OSError, ValueError):
            return False


@dataclass(frozen=True)
class Place:
    """Where one GGUF file's resident server is recorded: its record, the lock taken to start or stop it, its log."""

    folder: Path
    name: str

    @classmethod
    def of(cls, gguf: Path) -> Place:
        return cls(cache_dir() / "servers", hashlib.sha256(str(gguf).encode()).hexdigest()[:16])

    @property
    def record_path(self) -> Path:
        return self.folder / f"{self.name}.json"

    @property
    def log(self) -> Path:
        return self.folder / f"{self.name}.log"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Held while a command attaches to, or starts, this file's server, and while the server decides to stop:
        two commands never start two servers, and a server never stops under a command that just found it."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(self.folder / f"{self.name}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def read(self) -> Record | None:
        try:
            return Record(**json.loads(self.record_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    def write(self, record: Record) -> None:
        """The record, readable by this user only, put in place whole."""
        tmp = self.record_path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(asdict(record), out)
        os.replace(tmp, self.record_path)

    def use(self) -> None:
        """Say this process uses the server until it ends: a shared lock on the users' file, which the server must
        take whole before it stops (so it never stops under a command that found it but has not asked yet), and
        the record touched (its keep-alive counts from now)."""
        users = open(self.folder / f"{self.name}.users", "a")  # noqa: SIM115 (held until this process ends)
        fcntl.flock(users, fcntl.LOCK_SH)
        _IN_USE.append(users)
        with contextlib.suppress(OSError):
            os.utime(self.record_path)

    def unused(self) -> bool:
        """Whether no process uses the server now (no shared lock on the users' file)."""
        with open(self.folder / f"{self.name}.users", "a") as users:
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(users, fcntl.LOCK_UN)
            return True

    def last_touched(self) -> float:
        try:
            return self.record_path.stat().st_mtime
        except OSError:
            return 0.0

    def remove(self, pid: int) -> None:
        """Remove the record if it is `pid`'s (a newer server's record is left alone)."""
        record = self.read()
        if record is not None and record.pid == pid:
            self.record_path.unlink(missing_ok=True)


def attach(gguf: Path, need: ServerSize) -> ServerHandle | None:
    """The resident server of `gguf` for a request of `need` (found, or started and waited for); None where it is
    turned off, the request does not fit, another command uses a server on other threads, or none could be started
    (the caller then starts its own)."""
    key = _key(gguf)
    if not enabled() or key is None or need.slots > SIZE.slots or need.context > SIZE.context:
        return None
    place = Place.of(gguf)
    try:
        with place.locked():
            record = place.read()
            answers = record is not None and record.answers()  # asked once: up to 2 s where it does not
            if answers and record.key == key and record.fits(need):
                place.use()
                return record.handle(gguf)
            if answers and not place.unused():
                return None  # a command on other threads (or another build) uses it: never stopped under it
            if record is not None:
                stop(place, record)  # another file, build, format or threads, or a server that no longer answers
            started = _start(gguf, place)
            if started is None or started.key != key:
                return None
            place.use()
            return started.handle(gguf)
    except OSError:  # a cache folder that cannot be written: the command starts its own
        return None


def _key(gguf: Path) -> str | None:
    found = file_key(gguf)
    return f"{found}|resident {FORMAT}" if found is not None else None


def _start(gguf: Path, place: Place) -> Record | None:
    """Start `gguf`'s resident server in a process of its own, outside this command's session (a Ctrl-C of the
    command does not reach it), and wait for its record; None if it died or did not answer in time."""
    root = str(Path(__file__).resolve().parents[2])
    env = shareable(os.environ)  # it needs no vendor key, and it outlives the command
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    with open(place.log, "wb") as log:  # the last start's messages (a model that would not load says why here)
        process = subprocess.Popen(
            [sys.executable, "-m", "capel_ui.backends.resident", str(gguf)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            cwd=root,
            start_new_session=True,
        )
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline and process.poll() is None:
        record = place.read()
        if record is not None and record.pid == process.pid:
            return record
        time.sleep(0.02)
    if process.poll() is None:
        process.terminate()
    return None


def stop(place: Place, record: Record) -> None:
    """Stop a resident server (SIGTERM, waited for a few seconds) and forget its record."""
    keep.stop(record.pid)
    place.remove(record.pid)


def running() -> list[tuple[Place, Record]]:
    """The resident servers recorded in this cache folder whose process is there."""
    folder = cache_dir() / "servers"
    places = [Place(folder, path.stem) for path in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    return [(place, record) for place in places if (record := place.read()) is not None and alive(record.pid)]


def _activity(server: object) -> tuple[str, ...]:
    """llama.cpp's counters of work done and requests under way: any change is a request answered or answering."""
    metrics = str(server.handle_metrics())  # type: ignore[attr-defined]
    return tuple(line for line in metrics.splitlines() if line.split(" ")[0] in ACTIVITY)


ACTIVITY = frozenset(
    f"llamacpp:{name}"
    for name in ("prompt_tokens_total", "tokens_predicted_total", "n_decode_total", "requests_processing")
)
"""The metrics that change whenever a request is answered or being answered."""


def serve(gguf: Path) -> None:
    """Run `gguf`'s resident server until `keep_alive()` seconds pass with no request and no command attaching."""
    place = Place.of(gguf)
    key = _key(gguf)
    handle, server = new_server(gguf, SIZE.slots, SIZE.slots * SIZE.context, metrics=True)
    if key is None:
        return
    place.write(Record(os.getpid(), handle.base_url, handle.api_key, key, SIZE.slots, SIZE.context, threads()))
    signal.signal(signal.SIGTERM, lambda *_: _leave(place))
    seen, last = _activity(server), time.time()
    while True:
        time.sleep(POLL)
        now_seen = _activity(server)
        if now_seen != seen:
            seen, last = now_seen, time.time()
        if time.time() - max(last, place.last_touched()) > keep_alive() and place.unused():
            with place.locked():  # a command attaching now waits, then finds no record and starts another
                if time.time() - max(last, place.last_touched()) > keep_alive() and place.unused():
                    _leave(place)


def _leave(place: Place) -> None:
    """Forget this server's record and end the process at once (llama.cpp's threads are not waited for)."""
    place.remove(os.getpid())
    os._exit(0)


if __name__ == "__main__":
    serve(Path(sys.argv[1]))

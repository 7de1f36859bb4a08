"""What a command keeps between processes: where (`cache_dir`), whether (`enabled`), the environment a process
that outlives the command is given (`shareable`), and the warm processes that start commands (`forkserver.py`),
found and stopped by their files here.

Standard library only: the command's first lines (`__main__`, `forkserver`) read it before any import that takes
time.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

KEEP_ALIVE = 300.0
"""Seconds a resident model server or a warm process stays with nothing to do before it stops (as Ollama keeps a
model loaded for five minutes); `CAPEL_KEEP_ALIVE` sets another."""
PRIVATE_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|DATABASE_URL", re.IGNORECASE)
"""Environment variables a process that outlives the command is never given (a vendor's key, a database URL with
its password): a command's own keys reach only that command's process."""


def cache_dir() -> Path:
    """Where what a process would otherwise work out again at every start is kept (wordfreq's English table, the
    end token of each GGUF file, the servers kept between commands): `CAPEL_CACHE_DIR`, else the XDG cache
    (`~/.cache/capel-studio`). Always safe to delete."""
    named = os.environ.get("CAPEL_CACHE_DIR") or ""
    if named:
        return Path(named)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "capel-studio"


def enabled() -> bool:
    """Whether commands keep their model loaded and their imports warm between them (`CAPEL_RESIDENT=0`: off)."""
    return os.environ.get("CAPEL_RESIDENT", "1") != "0"


def keep_alive() -> float:
    """`CAPEL_KEEP_ALIVE`, else `KEEP_ALIVE`."""
    try:
        return float(os.environ.get("CAPEL_KEEP_ALIVE") or KEEP_ALIVE)
    except ValueError:
        return KEEP_ALIVE


def shareable(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without what a process that outlives the command must not hold (`PRIVATE_NAME`)."""
    return {name: value for name, value in environ.items() if not PRIVATE_NAME.search(name)}


@dataclass(frozen=True)
class Warm:
    """A warm process (`forkserver.py`), found by its lock file: its process, and the commands it started."""

    pid: int
    started: int


def warm_socket(state: str) -> Path:
    """Where the warm process of a state (`forkserver.state`) listens; its lock file is beside it."""
    return cache_dir() / "servers" / f"warm-{state}.sock"


def warm_processes() -> list[Warm]:
    """The warm processes of this cache folder whose process is there."""
    folder = cache_dir() / "servers"
    found = []
    for lock in sorted(folder.glob("warm-*.lock")) if folder.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            pid, started = (int(part) for part in lock.read_text().split())
            if alive(pid):
                found.append(Warm(pid, started))
    return found


def stop(pid: int) -> None:
    """Stop a process that outlives commands (a resident model server, a warm process) with SIGTERM and wait a few
    seconds for it to go (the commands a warm process started go on to their end)."""
    if not alive(pid):
        return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """Whether process `pid` is there and ours."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone, or another user's process took the number
        return False
    return True

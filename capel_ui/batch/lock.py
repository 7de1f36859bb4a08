"""One batch process at a time: a lock file that names its holder, released by the system when the holder dies.

Two locks keep a batch from running twice at once. The `batch` command holds one beside its output (`.NAME.lock`):
a second command writing the same file is refused in one line naming the first's process. Every surface holds one
per batch (`batch_lock`, in the system's temporary folder, keyed by the batch id and the database): the same input
with the same options, written to another file or on the Batch page meanwhile, would write every row twice.

The lock is `flock` on the file, so a holder killed with `kill -9` or by a power cut holds nothing: the file it
left is taken over by the next batch, and removed by whoever releases it last.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


class Busy(Exception):
    """Another process holds the lock: the message names it, and says what to do."""


def lock_beside(path: Path) -> Path:
    """The lock file of an output file: hidden, in the same folder."""
    return path.with_name(f".{path.name}.lock")


def batch_lock(batch_id: str, database: str) -> Path:
    """The lock file of one batch on one database (the runs it writes are that database's)."""
    where = hashlib.sha256(database.encode()).hexdigest()[:10]
    return Path(tempfile.gettempdir()) / f"capel-batch-{batch_id}-{where}.lock"


@contextlib.contextmanager
def held(path: Path, busy: str) -> Iterator[None]:
    """Hold the lock at `path` while the block runs; `Busy` ("{busy} is being written by process 4242 since 16:02:11;
    …") if another process holds it. OSError where the lock cannot be made (a folder that cannot be written)."""
    fd = _take(path, busy)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # another holder may have made its own file there since: not ours
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                path.unlink()
        os.close(fd)  # releases the lock


def _take(path: Path, busy: str) -> int:
    """The open, locked lock file (its holder written in it). A file its last holder removed while this process
    waited to lock it is no lock: taken again."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise Busy(f"{busy} is being written by {holder}; wait for it to finish, or stop it") from None
        except BaseException:
            os.close(fd)
            raise
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                _sign(fd)
                return fd
        os.close(fd)


def _sign(fd: int) -> None:
    """Write who holds the lock; a full disk leaves it unsigned (the lock holds all the same)."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} since {time.strftime('%H:%M:%S')}".encode(), 0)

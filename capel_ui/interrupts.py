"""Ctrl-C and SIGTERM as a KeyboardInterrupt that is never lost.

Python calls a signal's handler in whatever frame the main thread is running. When that frame is a callback CPython
runs for itself (importlib's module-lock `cb`, run as a weakref callback at the end of each import; any `__del__`),
an exception raised there is printed as "Exception ignored in …" with a traceback and dropped: the command went on
as if never stopped (seen once under CI load: a Ctrl-C 0.4 s in, while `generate` imported). There the handler
raises nothing and delivers the signal again a moment later, by SIGALRM, in a frame that can raise.

Once a command is stopping, a further Ctrl-C must not cut the saving of what arrived short, nor end in a traceback:
`FirstStops` raises only the first and tells the work to hurry (the runs of a `generate` or a batch try their final
save once), and `leaving` answers any signal that lands while a finished command waits for its threads (a run's
retry sleeping out a server's Retry-After, which a stop does not cut short) by leaving at once, exit 130, without a
traceback.

Imports only the standard library: `__main__` installs it before the imports that take seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from types import FrameType, TracebackType
from typing import NoReturn

Handler = Callable[[int, FrameType | None], None]

AGAIN_AFTER = 0.01  # seconds: the callback has returned by then
_SWALLOWED = {("<frozen importlib._bootstrap>", "cb")}  # (file, function) whose exceptions CPython drops


def swallowed_here(frame: FrameType | None) -> bool:
    """Whether an exception raised in `frame` would be printed and dropped rather than stop the command."""
    if frame is None:
        return False
    code = frame.f_code
    return code.co_name == "__del__" or (code.co_filename, code.co_name) in _SWALLOWED


RAISED: list[int] = []
"""The signals a handler here has turned into a KeyboardInterrupt in this process (appended, never locked: a signal
lands between any two bytecodes): an error after one is the interrupt's doing (`cut_short`)."""


def _interrupt(signum: int) -> NoReturn:
    RAISED.append(signum)
    raise KeyboardInterrupt


def raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """The handler outside a run: a KeyboardInterrupt where one can be raised, else a moment later."""
    if not deliver_later(signum, frame, raise_interrupt):
        _interrupt(signum)


def deliver_later(signum: int, frame: FrameType | None, handler: Handler) -> bool:
    """If `frame` would drop an exception, call `handler(signum, …)` again once it has returned, and say so."""
    if not swallowed_here(frame):
        return False
    signal.signal(signal.SIGALRM, lambda _sig, later: handler(signum, later))
    signal.setitimer(signal.ITIMER_REAL, AGAIN_AFTER)
    return True


def cut_short(exc: BaseException) -> bool:
    """Whether `exc` is an interrupt, wraps one, or came after one in this process (`RAISED`). A library the interrupt
    lands in may turn it into anything: Python 3.11 wraps what a class's `__set_name__` raises in "RuntimeError: Error
    calling __set_name__…"; pydantic-core keeps it only in a SchemaError's words ("…Error building "literal"
    validator: KeyboardInterrupt: "), or builds on the class it left half made and fails later ("SchemaError: 'cls'
    must be valid as the first argument to 'isinstance'"). Each once ended a Ctrl-C or SIGTERM in `generate`'s first
    second "unexpected … this is a bug" (exit 3) instead of "interrupted" (130)."""
    if RAISED:
        return True
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


EXIT_INTERRUPTED = 130  # vocab.EXIT_INTERRUPTED (this module sits below vocab's imports)


class FirstStops:
    """Ctrl-C and SIGTERM over work that saves what it wrote (a `generate`, a batch), main thread only: the first
    raises KeyboardInterrupt where it can be raised (`deliver_later`), which also wakes a read waiting on the network;
    once the work is stopping, or `saving` says it is already saving what arrived, a further signal is only counted
    (`later`), so it cannot cut that save short and leave a run `running` without the words since its last save.
    Every signal calls `hurry` (the final saves are tried once, not waited out: a database another program keeps
    locked is waited for once). Neither may take a lock: a signal lands between any two bytecodes of a thread that
    may hold one."""

    def __init__(self, hurry: Callable[[], None], saving: Callable[[], bool] = lambda: False) -> None:
        self.hurry, self.saving, self.first, self.later = hurry, saving, False, 0
        self._held: dict[int, object] = {}

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.first or self.saving():
            self.later += 1
            self.hurry()
            return
        if deliver_later(signum, frame, self):  # it would be dropped here: again once CPython's callback returns
            return
        self.first = True
        self.hurry()
        _interrupt(signum)

    def disarm(self) -> None:
        """From now on a signal is only counted (and hurries): what is left to do is bounded and must not be cut."""
        self.first = True

    def __enter__(self) -> FirstStops:
        if threading.current_thread() is threading.main_thread():
            self._held = {sig: signal.signal(sig, self) for sig in answered()}
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for sig, handler in self._held.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]


def leaving() -> None:
    """The command has answered and only waits for its threads to end (a run's save, a retry sleeping its wait out):
    a Ctrl-C or SIGTERM now leaves at once with exit 130, never a KeyboardInterrupt traceback from the wait. A thread
    cut short leaves its run as its last save had it (History shows it interrupted)."""

    def leave(_signum: int, _frame: FrameType | None) -> None:
        for stream in (sys.stdout, sys.stderr):  # the command's own lines said what it kept
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(EXIT_INTERRUPTED)

    if threading.current_thread() is threading.main_thread():
        for sig in answered():
            signal.signal(sig, leave)


def answered(signals: Iterable[int] = (signal.SIGINT, signal.SIGTERM)) -> list[int]:
    """`signals` (Ctrl-C and SIGTERM), but for one the command was started with ignored: it stays ignored, as Python
    itself leaves it (a job a script starts in the background, `capel_ui batch … &`, is not stopped by the Ctrl-C
    meant for the script; under `nohup`, a warm command passes no hang-up on)."""
    return [sig for sig in signals if signal.getsignal(sig) != signal.SIG_IGN]


def install() -> None:
    """Ctrl-C and SIGTERM both stop the command the same way (SIGTERM: a service manager, `docker stop`)."""
    for sig in answered():
        signal.signal(sig, raise_interrupt)

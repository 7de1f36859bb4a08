"""Ctrl-C and SIGTERM as a KeyboardInterrupt that is never lost.

Python calls a signal's handler in whatever frame the main thread is running. When that frame is a callback CPython
runs for itself (importlib's module-lock `cb`, run as a weakref callback at the end of each import; any `__del__`),
an exception raised there is printed as "Exception ignored in …" with a traceback and dropped: the command went on
as if never stopped (seen once under CI load: a Ctrl-C 0.4 s in, while `generate` imported). There the handler
raises nothing and delivers the signal again a moment later, by SIGALRM, in a frame that can raise.

Imports only the standard library: `__main__` installs it before the imports that take seconds.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

Handler = Callable[[int, FrameType | None], None]

AGAIN_AFTER = 0.01  # seconds: the callback has returned by then
_SWALLOWED = {("<frozen importlib._bootstrap>", "cb")}  # (file, function) whose exceptions CPython drops


def swallowed_here(frame: FrameType | None) -> bool:
    """Whether an exception raised in `frame` would be printed and dropped rather than stop the command."""
    if frame is None:
        return False
    code = frame.f_code
    return code.co_name == "__del__" or (code.co_filename, code.co_name) in _SWALLOWED


def raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """The handler outside a run: a KeyboardInterrupt where one can be raised, else a moment later."""
    if not deliver_later(signum, frame, raise_interrupt):
        raise KeyboardInterrupt


def deliver_later(signum: int, frame: FrameType | None, handler: Handler) -> bool:
    """If `frame` would drop an exception, call `handler(signum, …)` again once it has returned, and say so."""
    if not swallowed_here(frame):
        return False
    signal.signal(signal.SIGALRM, lambda _sig, later: handler(signum, later))
    signal.setitimer(signal.ITIMER_REAL, AGAIN_AFTER)
    return True


def cut_short(exc: BaseException) -> bool:
    """Whether `exc` is an interrupt, or wraps one: Python 3.11 wraps an exception raised while a class is made (a
    dataclass field's `__set_name__`) in "RuntimeError: Error calling __set_name__…"; a SIGTERM 0.2 s in, while
    `generate` imported, ended "unexpected RuntimeError … this is a bug" (exit 3) instead of "interrupted" (130)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def install() -> None:
    """Ctrl-C and SIGTERM both stop the command the same way (SIGTERM: a service manager, `docker stop`)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, raise_interrupt)

"""`python -m capel_ui` entry point.

A `generate` (a rewrite too) is first offered to the warm process of this state (`forkserver`), which has the app
imported and starts it at once; else the command runs here and leaves a warm process behind for the next one.

SIGTERM (a service manager, `docker stop`) is handled as Ctrl-C is, from before the imports (which take seconds):
a run is cancelled and keeps its text, and a command stopped before it started says so in one line, exit 130.
Before anything is imported, both are only held (`_signal`, the C module, is loaded with the interpreter): a Ctrl-C
0.2 s in, while even the handlers' own module (`interrupts`: `signal`, `enum`) imported under CI load, ended in a
traceback. Every command leaves at once when it is done (its threads joined, its output flushed): the interpreter's
own teardown is skipped.
"""

import _signal
import os
import sys

HELD: list[int] = []
"""The signals that came before `interrupts` had its handlers in place."""


def _hold(signum: int, _frame: object) -> None:
    HELD.append(signum)


def main(argv: list[str]) -> int:
    """Run the command (in the warm process where one starts it, else here) and return its exit code."""
    from .interrupts import EXIT_INTERRUPTED, cut_short, install

    try:
        install()
        if HELD:
            raise KeyboardInterrupt
        from .forkserver import forward, leave_warm_process

        code = forward(argv)
    except (KeyboardInterrupt, Exception) as exc:  # while importing, or waiting for the warm process (or wrapped)
        if not cut_short(exc):
            raise
        sys.stderr.write("capel_ui: interrupted\n")
        return EXIT_INTERRUPTED
    if code is None:
        from .command import run  # imported with forkserver already: no wait here

        code = run(argv)
        leave_warm_process(argv)
    return code


if __name__ == "__main__":
    for held in (_signal.SIGINT, _signal.SIGTERM):
        if _signal.getsignal(held) != _signal.SIG_IGN:  # ignored by whoever started it: left so (`install`)
            _signal.signal(held, _hold)
    os._exit(main(sys.argv[1:]))

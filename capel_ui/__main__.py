"""`python -m capel_ui` entry point.

A `generate` (a rewrite too) is first offered to the warm process of this state (`forkserver`), which has the app
imported and starts it at once; else the command runs here and leaves a warm process behind for the next one.

SIGTERM (a service manager, `docker stop`) is handled as Ctrl-C is, from before the imports (which take seconds):
a run is cancelled and keeps its text, and a command stopped before it started says so in one line, exit 130.
Every command leaves at once when it is done (its threads joined, its output flushed): the interpreter's own teardown
is skipped.
"""

import os
import sys
from collections.abc import Sequence

from .command import run
from .forkserver import forward, leave_warm_process
from .interrupts import EXIT_INTERRUPTED, install


def started_warm(argv: Sequence[str]) -> int | None:
    """The exit code of this command run by a warm process, or None where none started it."""
    try:
        return forward(argv)
    except KeyboardInterrupt:
        sys.stderr.write("capel_ui: interrupted\n")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    install()
    code = started_warm(sys.argv[1:])
    if code is None:
        code = run(sys.argv[1:])
        leave_warm_process(sys.argv[1:])
    os._exit(code)

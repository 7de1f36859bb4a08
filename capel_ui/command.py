"""One command run in this process, as `python -m capel_ui` runs it and as a warm process's child does
(`forkserver.py`): interrupts answered from before the imports, its threads joined, its output flushed."""

import contextlib
import logging
import sys
import threading
from collections.abc import Sequence

from .interrupts import EXIT_INTERRUPTED, cut_short, install, leaving


def run(argv: Sequence[str]) -> int:
    """Run one command in this process and return its exit code once its threads are done and its output flushed
    (the caller leaves with `os._exit`)."""
    install()
    try:
        from .cli import main

        code = main(list(argv))
    except (KeyboardInterrupt, Exception) as exc:  # during the imports, before `main` answers it (or wrapped)
        if not cut_short(exc):
            raise
        sys.stderr.write("capel_ui: interrupted\n")
        code = EXIT_INTERRUPTED
    leaving()  # a signal while the threads still saving end: exit 130 at once, no traceback
    # Once the threads still saving are done, flush and leave with the code, without the interpreter's teardown:
    # - the llama.cpp server's shutdown and the modules' teardown took 0.6 s after the answer was printed;
    # - a Ctrl-C that landed inside C code run by an import (PyRun_String) leaves CPython's "unhandled
    #   KeyboardInterrupt" flag set although it was handled here, and the process would then die by SIGINT (-2)
    #   instead of exiting 130.
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return code

"""`python -m capel_ui` entry point.

SIGTERM (a service manager, `docker stop`) is handled as Ctrl-C is, from before the imports (which take seconds):
a run is cancelled and keeps its text, and a command stopped before it started says so in one line, exit 130.
Every command leaves at once when it is done (its threads joined, its output flushed): the interpreter's own teardown
is skipped.
"""

import contextlib
import logging
import os
import sys
import threading

from .interrupts import cut_short, install, leaving

EXIT_INTERRUPTED = 130  # vocab.EXIT_INTERRUPTED, named here so an interrupt during the imports is answered too


if __name__ == "__main__":
    install()
    try:
        from .cli import main

        code = main()
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
    os._exit(code)

"""`python -m capel_ui` entry point."""

import signal
import sys

from .cli import main, stop_as_interrupt

if __name__ == "__main__":
    # A service manager or `docker stop` sends SIGTERM: the run is cancelled and keeps its text, as on Ctrl-C.
    signal.signal(signal.SIGTERM, stop_as_interrupt)
    sys.exit(main())

"""Test helper: press Stop on a generation whose request is out but has had no answer yet."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sized

from capel_ui.generation import Generation


def stop_while_waiting(gen: Generation, requests: Callable[[], Sized]) -> threading.Thread:
    """Run `gen` in a thread, cancel it once its request reached the server (`requests()` is not empty), and give
    it 20 s to end; the returned thread is still alive if the Stop did not abort the wait."""
    worker = threading.Thread(target=gen.run, daemon=True)
    worker.start()
    while not len(requests()):
        time.sleep(0.02)
    time.sleep(0.2)
    gen.cancel()
    worker.join(timeout=20)  # the scripted server would stay silent for 300 s
    return worker

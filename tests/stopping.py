"""Test helpers: press Stop on a generation, before its answer or in the middle of it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sized

from capel_ui.generation import Generation, Outcome


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


def stop_after_first_chunk(gen: Generation) -> Outcome:
    """Stop `gen` once its first chunk, "One two ", arrived (the server then stalls), and return its outcome."""
    stream = gen.stream()
    assert next(stream) == "One two "
    gen.cancel()
    assert list(stream) in ([], ["three "])
    return gen.outcome()

"""`python -m capel_ui generate` as a real process, interrupted with Ctrl-C (SIGINT) while it streams."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.scripted_server import MODEL, ScriptedServer

ROOT = Path(__file__).resolve().parent.parent


def interrupt_generate(
    scripted: ScriptedServer,
    *args: str,
    after: float,
    signals: tuple[int, ...] = (signal.SIGINT,),
    gap: float = 0.05,
    before: Callable[[int], None] | None = None,
) -> tuple[int, str, str]:
    """Run `generate` against `scripted` with `args`, send `signals` (Ctrl-C by default; several: `gap` seconds
    apart) `after` seconds into its request, calling `before(i)` first if given; return (exit code, stdout,
    stderr)."""
    argv = ["generate", "--model", MODEL, "--base-url", scripted.url, *args, "Describe a lighthouse"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "capel_ui", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    deadline = time.monotonic() + 60
    while not scripted.chat_requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(after)
    for i, sig in enumerate(signals):
        if i:
            time.sleep(gap)
        if before is not None:
            before(i)
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out.decode(), err.decode()

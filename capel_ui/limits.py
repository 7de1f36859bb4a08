"""A run's stops on its own account: the writer's Stop, the time limit, the stall limit and the overrun guard.

A stop keeps what arrived and says why (`BackendError` kinds `deadline`, `stalled`, `overrun`): the current call is
cancelled with that reason, and the run (`generation.Generation`) asks for no further call once stopped or out of
time (`halted`).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Protocol

from .backends import BackendError
from .call import Call
from .counting import count
from .request import OVERRUN_CHARS_PER_UNIT, Request, overrun_limit
from .vocab import DEFAULT_TIME_LIMIT, FailureKind, Mode, unit_label

_MARKER_TEXT = re.compile(r"<\s*\d[\d\s]*>")


class Streaming(Protocol):
    """What the limits read of a run: the call now streaming and the raw text so far."""

    @property
    def current(self) -> Call: ...

    @property
    def raw(self) -> str: ...


class Limits:
    """The stops of one run. `stopping` is the writer's Stop, `expired` a time or stall limit that passed: either
    way no further call is started."""

    def __init__(self, request: Request, mode: Mode, run: Streaming) -> None:
        self.request, self.mode, self.run = request, mode, run
        self.stopping = threading.Event()  # the user's Stop: no further call
        self.expired = threading.Event()  # the time limit passed: no further call
        self.last_text = time.monotonic()  # when text last came (the stall limit counts from it)

    def halted(self) -> bool:
        """Stopped by the writer or out of time: nothing more is asked of the model."""
        return self.stopping.is_set() or self.expired.is_set()

    def start(self, started: float) -> Callable[[], None]:
        """Start the time limit (for the whole run, from `started`) and the stall watch; returns what ends them."""
        req, timer, done = self.request, None, threading.Event()
        if req.time_limit is not None:
            timer = threading.Timer(req.time_limit - (time.monotonic() - started), self.deadline)
            timer.daemon = True
            timer.start()
        if req.stall_limit is not None:
            threading.Thread(target=self._watch_stall, args=(done,), daemon=True, name="stall-limit").start()

        def end() -> None:
            done.set()
            if timer is not None:
                timer.cancel()

        return end

    def halt(self, kind: FailureKind, message: str) -> None:
        """Stop the current call on our own account, keeping what arrived and saying why (`overrun`, `deadline`)."""
        call = self.run.current
        if not call.cancel.is_set():
            call.halted = BackendError(kind, message)
            call.cancel.set()

    def past_limit(self, call: Call, units_done: int) -> bool:
        """Whether the text is far past the target (see `overrun_limit`); counts again only once the raw text
        has grown by a tenth, so a long stream costs linear time."""
        limit = overrun_limit(self.request, self.mode)
        raw = self.run.raw
        if len(raw) > limit * OVERRUN_CHARS_PER_UNIT:
            return True
        if len(raw) < call.next_check:
            return False
        call.next_check = int(len(raw) * 1.1) + 64
        done = count(_MARKER_TEXT.sub(" ", raw), self.request.count_unit)
        return max(done, units_done) > limit

    def overrun(self) -> None:
        req, raw = self.request, self.run.raw
        n, unit = count(_MARKER_TEXT.sub(" ", raw), req.count_unit), unit_label(req.count_unit)
        if n > req.target:
            what = f"Stopped at {n} {unit}, far past the target of {req.target}: the model was not counting down."
        else:  # the size guard, not the count: a few endless "words" (one 5 MB word, say)
            cap = overrun_limit(req, self.mode) * OVERRUN_CHARS_PER_UNIT
            ran = "a single word" if n <= 1 else f"its {n} {unit}"
            what = (
                f"Stopped after {len(raw):,} characters: {ran} ran past {cap:,} characters, far more than "
                f"{req.target} {unit} take."
            )
        self.halt("overrun", f"{what} {self._what_is_kept().capitalize()}; try again, or use an Exact mode.")

    def deadline(self) -> None:
        self.expired.set()
        limit = self.request.time_limit
        default = "default " if limit == DEFAULT_TIME_LIMIT else ""
        self.halt(
            "deadline",
            f"Stopped at the {default}time limit of {limit:g} s; {self._what_is_kept()}. "
            "Raise the time limit (Options, or --time-limit) to let it finish.",
        )

    def _what_is_kept(self) -> str:
        """What a stop leaves: the text that arrived, or nothing (a message must not promise text that never came)."""
        return "the text that arrived is kept" if self.run.raw.strip() else "no text had arrived"

    def _watch_stall(self, done: threading.Event) -> None:
        """Stop the current call once no text has come for `stall_limit` seconds (a server that keeps the
        connection open with keep-alive comments resets every read timeout, so only this notices)."""
        limit = self.request.stall_limit
        assert limit is not None
        while not done.wait(min(1.0, limit / 4)):
            if time.monotonic() - self.last_text > limit:
                self.expired.set()
                new, kept = "new text" if self.run.raw.strip() else "text", self._what_is_kept()
                self.halt(
                    "stalled",
                    f"No {new} for {limit:g} s (the stall limit), so the run was stopped; {kept}. "
                    "The server may be overloaded: try again, or raise the stall limit (--stall-limit).",
                )
                return

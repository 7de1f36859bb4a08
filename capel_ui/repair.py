"""Verified repair: a CAPEL run that goes wrong keeps its verified countdown prefix and asks for the rest.

The one parser knows, at the first marker error, exactly which prefix is right (`MarkerParser.verified()`:
markers `<N>` … `<k>` with one unit each). A `RepairGeneration` stops that call (closing its HTTP stream, so
the rest is not paid for), keeps the prefix, and asks the same model to continue from `<k-1>` down to `<0>`:
as an assistant prefill where the server continues one (`Capabilities.prefill`), otherwise quoted in the user
message. Each call is a plain `Generation` preloaded with the kept prefix, so the continuation is parsed as
the same countdown; the final text is parsed, counted and judged by the one parser and `verdict.judge` like
any other. A preamble before `<N>` and overshoot after `<0>` are cut at the verified prefix without a call.

Calls are bounded (`Request.max_calls`); every call is kept as an attempt (what was wrong, where it resumed,
tokens, time). The last allowed call always runs to its end, so a run still wrong says so with all its text.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from .backends import Backend, Options, Usage
from .generation import Generation, Outcome, Request
from .parser import MarkerError, MarkerParser, Verified
from .prompts import Message
from .vocab import DEFAULT_MAX_CALLS, ERROR_LABELS, Mode, Status

REPAIR_MODES: frozenset[Mode] = frozenset({"capel", "draft-capel"})
PREAMBLE_LIMIT = 200
"""Characters of text with no marker after which a call that may be repaired is stopped: a model that has not
started the countdown by then is not following it, and a fresh call is cheaper than the rest of this one."""
_MARKER_START = re.compile(r"<\s*\d")

CONTINUE = {
    "en": (
        "{prompt}\n\nYour answer so far is quoted between the lines below. Its countdown is correct up to here:\n"
        "-----\n{kept}\n-----\nWrite only what comes next: start with the marker <{next}>, keep counting down one "
        "marker per word, and end with <0>. Do not repeat any of the quoted text."
    ),
    "zh": (
        "{prompt}\n\n下面两条分隔线之间是你目前的回答，到这里为止倒计时都是正确的：\n-----\n{kept}\n-----\n"
        "只写接下来的部分：从标记 <{next}> 开始，每个标记后一个汉字，继续倒数，以 <0> 结束。不要重复上面引用的内容。"
    ),
}
"""The continuation request for servers that take no prefill: the verified prefix quoted, the next marker named."""


def max_calls_for(request: Request, backend: Backend, mode: Mode) -> int:
    """How many calls a run may take: repair only for countdown modes; by default only on models without a
    grammar (where a guaranteed mode is possible, that is the better tool); an explicit bound always wins."""
    if mode not in REPAIR_MODES:
        return 1
    if request.max_calls is not None:
        return request.max_calls
    return 1 if backend.capabilities.grammar else DEFAULT_MAX_CALLS


def with_repair(gen: Generation) -> Generation | RepairGeneration:
    """`gen` itself, or a RepairGeneration whose first call is `gen` when the run may take more than one call."""
    calls = max_calls_for(gen.request, gen.backend, gen.mode)
    return RepairGeneration(gen, calls) if calls > 1 else gen


def continuation_messages(request: Request, prompt: str, kept: str, next_marker: int) -> list[Message]:
    """The request of a repair call on a server without prefill: the original prompt, the prefix quoted."""
    text = CONTINUE[request.lang].format(prompt=prompt, kept=kept, next=next_marker)
    return [{"role": "user", "content": text}]


class _Call(Backend):
    """The backend as one call of a repair sees it: the same model; keeps the call's own reply and counts its
    chunks. A continuation is passed on from its first marker (words a model says before continuing are not
    part of the last kept unit), and without the kept countdown if the reply starts by repeating it (a model
    that rewrites the quoted answer, a server that echoes the prefill)."""

    def __init__(self, inner: Backend, *, from_marker: bool, echo: str = "") -> None:
        self.inner = inner
        self.model, self.label, self.base_url = inner.model, inner.label, inner.base_url
        self.capabilities, self.provider = inner.capabilities, inner.provider
        self.from_marker = from_marker
        self.echo = echo.rstrip()
        self.reply: list[str] = []
        self.dropped = ""
        self.chunks = 0

    def stream(self, messages: Sequence[Message], options: Options) -> Iterator[str | Usage]:
        inner = self.inner.stream(messages, options)
        held, state = "", "marker" if self.from_marker else "pass"
        try:
            for item in inner:
                if isinstance(item, Usage):
                    if held and state == "echo":
                        yield held  # a short reply that only looked like the start of an echo
                    held = ""
                    yield item
                    continue
                self.chunks += 1
                self.reply.append(item)
                if state == "pass":
                    yield item
                    continue
                out, held, state = self._skip(held + item, state)
                if out:
                    yield out
        finally:
            inner.close()  # stopping a call closes its HTTP response
        if state == "marker":
            self.dropped += held

    def _skip(self, held: str, state: str) -> tuple[str, str, str]:
        """(text to pass on, text still held, next state) while looking for the first marker, then an echo."""
        if state == "marker":
            m = _MARKER_START.search(held)
            if m is None:
                return "", held, "marker"
            self.dropped += held[: m.start()]
            held, state = held[m.start() :], "echo" if self.echo else "pass"
            if state == "pass":
                return held, "", "pass"
        if held.startswith(self.echo):
            self.dropped += self.echo
            return held[len(self.echo) :], "", "pass"
        if self.echo.startswith(held):
            return "", held, "echo"  # it may still turn out to repeat the kept countdown: wait
        return held, "", "pass"


class RepairGeneration:
    """A countdown run that may take up to `max_calls` calls; looks like a Generation to LiveRun and pages.

    Live state (`raw`, `units_done`, `errors`, `parser`) is the current call's: the kept prefix plus what
    the call has written. `repairing_from` is the marker the current repair call started at (None on the
    first call), for the live view's "repairing from <k>".
    """

    def __init__(self, first: Generation, max_calls: int) -> None:
        self.first = first
        self.max_calls = max_calls
        self.backend = first.backend
        self.request = first.request
        self.mode = first.mode
        self.notice = first.notice
        self.messages = first.messages
        self.options = first.options
        self.started = first.started
        self.current = first
        self.call = 1
        self.repairing_from: int | None = None
        self.attempts: list[dict[str, Any]] = []
        self.status: Status = "running"
        self._calls: list[_Call] = []
        self._cancel = threading.Event()
        self._final: Outcome | None = None
        self._stopped: str | None = None  # why the current call was stopped early, if it was
        first.backend = self._wrap(from_marker=False)

    def _wrap(self, *, from_marker: bool, echo: str = "") -> _Call:
        call = _Call(self.backend, from_marker=from_marker, echo=echo)
        self._calls.append(call)
        return call

    # ----- live state, as a Generation has it --------------------------------------------------------------
    @property
    def prompt(self) -> str:
        return self.first.prompt

    @property
    def parser(self) -> MarkerParser | None:
        return self.current.parser

    @property
    def raw(self) -> str:
        return self.current.raw

    @property
    def units_done(self) -> int:
        return self.current.units_done

    @property
    def remaining(self) -> int:
        return self.current.remaining

    @property
    def errors(self) -> list[MarkerError]:
        return self.current.errors

    @property
    def in_draft(self) -> bool:
        return self.current.in_draft

    @property
    def first_token(self) -> float | None:
        return self.first.first_token

    def verified_text(self) -> str:
        """The clean text verified so far: a prefix of the final text whatever the later calls do."""
        parser = self.current.parser
        return parser.verified_text() if parser is not None else ""

    def cancel(self) -> None:
        self._cancel.set()
        self.current.cancel()

    def abandon(self) -> None:
        self._cancel.set()
        self.current.abandon()
        if self._final is None:
            self._finish()

    # ----- running -----------------------------------------------------------------------------------------
    def stream(self) -> Iterator[str]:
        """Yield text chunks of every call in turn; the final outcome is built however the loop ends."""
        try:
            while True:
                yield from self._one_call()
                if not self._next_call():
                    break
        finally:
            self._finish()

    def run(self) -> Outcome:
        for _ in self.stream():
            pass
        return self.outcome()

    def _one_call(self) -> Iterator[str]:
        gen, last = self.current, self.call >= self.max_calls
        self._stopped = None
        inner = gen.stream()
        try:
            for chunk in inner:
                yield chunk
                if not last and (reason := _worthless(gen)):
                    self._stopped = reason  # the rest of this call is paid for but thrown away: stop it
                    break
        finally:
            inner.close()
            self.attempts.append(self._attempt())

    def _next_call(self) -> bool:
        """Start the next call if this one went wrong and another is allowed; False when the run is over."""
        gen = self.current
        outcome = gen.outcome()
        if self._cancel.is_set() or (outcome.status == "cancelled" and self._stopped is None):
            return False
        if outcome.failure_kind not in (None, "length"):
            return False  # a cut, a 429 or a timeout: keep what is verified, say what happened
        ver = _verified(gen)
        if ver is None or ver.complete or self.call >= self.max_calls:
            return False
        kept = ver.kept(gen.raw)
        self.call += 1
        self.repairing_from = ver.next_marker
        self.current = self._continuation(kept, ver.next_marker, gen.raw[ver.start : ver.end])
        return True

    def _continuation(self, kept: str, next_marker: int, countdown: str) -> Generation:
        request = self.request
        if request.seed is not None:  # the same seed would write the same words again after a restart
            request = dataclasses.replace(request, seed=request.seed + self.call - 1)
        gen = Generation(self._wrap(from_marker=bool(kept), echo=countdown), request)
        if kept:
            if self.backend.capabilities.prefill:
                gen.options = dataclasses.replace(gen.options, prefill=kept)
            else:
                gen.messages = continuation_messages(self.request, self.prompt, kept, next_marker)
        gen.preload(kept)
        return gen

    def _attempt(self) -> dict[str, Any]:
        """What one call did, as stored with the run: where it resumed, what was wrong, tokens and time."""
        gen, call = self.current, self._calls[-1]
        outcome = gen.outcome()
        ver = _verified(gen)
        wrong = ver.error if ver is not None else None
        estimated = outcome.completion_tokens is None and self._stopped is not None
        return {
            "call": self.call,
            "resumed_from": self.repairing_from,
            "kept_units": self.request.target - self.repairing_from if self.repairing_from is not None else 0,
            "prefill": bool(gen.options.prefill),
            "reply": "".join(call.reply),
            "dropped": call.dropped if call.dropped.strip() else None,
            "verified_units": ver.units if ver is not None else None,
            "wrong": {"type": wrong.type, "message": wrong.message} if wrong else None,
            "stopped": self._stopped,
            "status": "stopped" if self._stopped else outcome.status,
            "failure": outcome.failure,
            "failure_kind": outcome.failure_kind,
            "prompt_tokens": outcome.prompt_tokens,
            # a stream closed early gets no usage from the server: its streamed chunks stand in for its tokens
            "completion_tokens": call.chunks if estimated else outcome.completion_tokens,
            "tokens_estimated": estimated,
            "chunks": call.chunks,
            "seconds": round(outcome.seconds, 3),
            "finish_reason": outcome.finish_reason,
        }

    # ----- the result ----------------------------------------------------------------------------------------
    def _finish(self) -> None:
        if self._final is not None:
            return
        gen = self.current
        if gen.status == "running":
            gen.abandon()
        last = gen.outcome()
        ver = _verified(gen)
        raw, status = gen.raw, last.status
        cut = False
        if ver is not None and ver.complete:
            cut = ver.kept(raw).strip() != raw.strip()
            raw = ver.kept(raw)  # no preamble, nothing after <0>
            if status == "cancelled" and self._stopped and not self._cancel.is_set():
                status = "complete"  # we stopped it at overshoot after a right <0>
        result = MarkerParser(
            self.request.target,
            self.request.lang,
            self.request.count_unit,
            draft=self.mode == "draft-capel",
            code=self.request.code,
        )
        result.feed(raw)
        parsed = result.close()
        self.status = status
        failed = status == "failed"  # no text arrived: nothing to count, so no marker errors either
        self._final = dataclasses.replace(
            last,
            label=self.backend.label,
            prompt=self.prompt,
            raw=raw,
            text=parsed.text,
            count=parsed.count,
            errors=[] if failed else list(parsed.errors),
            countdown_end=parsed.countdown_end,
            draft=None if failed else parsed.draft,
            status=status,
            notice=self._notice(status, parsed.verified, cut),
            failure=self._failure(last),
            prompt_tokens=_total(a["prompt_tokens"] for a in self.attempts),
            completion_tokens=_total(a["completion_tokens"] for a in self.attempts),
            seconds=time.monotonic() - self.started,
            first_token_seconds=self.first.first_token,
            attempts=list(self.attempts),
        )

    def _notice(self, status: Status, verified: bool, cut: bool) -> str | None:
        parts = [self.notice] if self.notice else []
        calls = len(self.attempts)
        if calls > 1:
            starts = ", ".join(f"<{a['resumed_from']}>" if a["kept_units"] else "the start" for a in self.attempts[1:])
            parts.append(f"Repaired: {calls} calls; the countdown was continued from {starts}.")
        if cut:
            parts.append("Text outside the countdown (before its first marker or after <0>) was cut.")
        if status != "cancelled" and not verified and calls >= self.max_calls:
            parts.append(f"Still not verified after {calls} calls, the most allowed; every call is kept with the run.")
        return " ".join(parts) or None

    def _failure(self, last: Outcome) -> str | None:
        if last.failure is None or self.call == 1:
            return last.failure
        kept = self.request.target - (self.repairing_from or 0)
        return (
            f"Repair call {self.call} of {self.max_calls} (from <{self.repairing_from}>) failed: {last.failure} "
            f"The {kept} verified unit(s) before it are kept."
        )

    def outcome(self) -> Outcome:
        """The result so far (final once the stream has ended)."""
        if self._final is not None:
            return self._final
        return dataclasses.replace(self.current.outcome(), attempts=list(self.attempts))


def repair_status(gen: Generation | RepairGeneration) -> str:
    """` · repairing from <k> (call 2 of 3)` while a repair call streams, else "": the live line's suffix."""
    if not isinstance(gen, RepairGeneration) or gen.repairing_from is None:
        return ""
    return f" · repairing from <{gen.repairing_from}> (call {gen.call} of {gen.max_calls})"


def calls_line(attempts: Sequence[dict[str, Any]]) -> str:
    """What each call of a saved run did, in one line: `3 calls: 1 skipped marker at <12> · 2 from <11>: …`."""
    parts = []
    for a in attempts:
        where = f"from <{a.get('resumed_from')}>" if a.get("resumed_from") is not None else "first"
        wrong = a.get("wrong") or {}
        what = ERROR_LABELS.get(wrong.get("type"), wrong.get("type")) if wrong else None
        what = what or a.get("stopped") or a.get("failure_kind") or "right"
        parts.append(f"{a.get('call')} {where}: {what}")
    return f"{len(attempts)} call(s) · " + " · ".join(parts)


def _verified(gen: Generation) -> Verified | None:
    return gen.parser.verified() if gen.parser is not None else None


def _worthless(gen: Generation) -> str | None:
    """Why the rest of this call's stream is worth nothing (a repair will redo it), or None."""
    ver = _verified(gen)
    if ver is None:
        return None
    if ver.error is not None:
        return ERROR_LABELS.get(ver.error.type, ver.error.type)
    if ver.complete and gen.raw[ver.end :].strip():
        return "text after <0>"
    parser = gen.parser
    unmarked = parser is not None and parser.countdown is None and not parser.in_draft
    if unmarked and len(gen.raw) - ver.draft_end > PREAMBLE_LIMIT:
        return f"no marker in the first {PREAMBLE_LIMIT} characters"
    return None


def _total(values: Iterator[int | None] | Any) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None

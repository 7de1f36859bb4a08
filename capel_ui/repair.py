"""Verified repair, a policy of the run: how many calls a run may take and how each next call starts.

The one parser knows, at the first marker error, exactly which prefix is right (`MarkerParser.verified()`:
markers `<N>` … `<k>` with one unit each). A run (`generation.Generation`) that may take more than one call
stops a call that went wrong (closing its HTTP stream, so the rest is not paid for), keeps the prefix, and asks
the same model to continue from `<k-1>` down to `<0>`: as an assistant prefill where the server continues one
(`Capabilities.prefill`), otherwise quoted in the user message (`continuation_messages`). The continuation is
parsed as the same countdown; the final text is parsed, counted and judged by the one parser and
`verdict.decide` like any other. A preamble before `<N>` and overshoot after `<0>` are cut at the verified prefix
without a call.

Calls are bounded (`max_calls_for`); every call is kept as an attempt (what was wrong, where it resumed,
tokens, time). The last allowed call always runs to its end, so a run still wrong says so with all its text.
This module holds only the pure rules; the run applies them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .parser import MarkerParser, Verified
from .prompts import Message
from .vocab import DEFAULT_MAX_CALLS, ERROR_LABELS, Mode

if TYPE_CHECKING:
    from .backends import Backend
    from .request import Request

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


def continuation_messages(request: Request, prompt: str, kept: str, next_marker: int) -> list[Message]:
    """The request of a repair call on a server without prefill: the original prompt, the prefix quoted."""
    text = CONTINUE[request.lang].format(prompt=prompt, kept=kept, next=next_marker)
    return [{"role": "user", "content": text}]


class ReplyFilter:
    """What the run reads of one call's reply. A continuation is read from its first marker (words a model says
    before continuing are not part of the last kept unit), and without the kept countdown if the reply starts by
    repeating it (a model that rewrites the quoted answer, a server that echoes the prefill); the rest is
    `dropped`. The first call is read as it comes."""

    def __init__(self, *, from_marker: bool = False, echo: str = "") -> None:
        self.echo = echo.rstrip()
        self.state = "marker" if from_marker else "pass"
        self.held = ""
        self.dropped = ""

    def feed(self, chunk: str) -> str:
        """The part of `chunk` to read now (text that may still turn out to be skipped is held)."""
        if self.state == "pass":
            return chunk
        out, self.held, self.state = self._skip(self.held + chunk)
        return out

    def flush(self) -> str:
        """The reply has ended: a short reply that only looked like the start of an echo is read after all;
        text with no marker in it is dropped."""
        held, self.held = self.held, ""
        if self.state == "echo":
            return held
        self.dropped += held
        return ""

    def _skip(self, held: str) -> tuple[str, str, str]:
        """(text to read, text still held, next state) while looking for the first marker, then an echo."""
        state = self.state
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


def verified(parser: MarkerParser | None) -> Verified | None:
    """The verified countdown prefix so far, or None for a run without markers."""
    return parser.verified() if parser is not None else None


def worthless(parser: MarkerParser | None, raw: str) -> str | None:
    """Why the rest of this call's stream is worth nothing (a repair will redo it), or None."""
    ver = verified(parser)
    if parser is None or ver is None:
        return None
    if ver.error is not None:
        return ERROR_LABELS.get(ver.error.type, ver.error.type)
    if ver.complete and raw[ver.end :].strip():
        return "text after <0>"
    unmarked = parser.countdown is None and not parser.in_draft
    if unmarked and len(raw) - ver.draft_end > PREAMBLE_LIMIT:
        return f"no marker in the first {PREAMBLE_LIMIT} characters"
    return None

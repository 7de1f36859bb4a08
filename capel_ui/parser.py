"""The one CAPEL marker parser: fed a model's output chunk by chunk, it validates the countdown as it streams.

Chunks may split anywhere (even inside `<12` + `3>`); the result is the same as feeding the output whole,
and feeding one character at a time costs linear time: every character is looked at a bounded number of
times, and the only text held back is a possible marker (at most `_MAX_MARKER` characters) or the tail of
a possible `</draft>` delimiter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .counting import HAN_RANGES, count, marker_unit, refusal
from .prompts import DRAFT_CLOSE, DRAFT_OPEN
from .verdict import Target, Verdict, decide
from .vocab import ErrorType, Lang, Unit, counts_room

_MAX_MARKER = 40  # longest marker-like text held back: `<`, up to 4 digit groups, spaces
_MAX_DIGITS = 7
_MARKER_INNER = frozenset("0123456789 \t")
_SPECIAL = re.compile(r"[<>]")
_WHOLE_MARKER = re.compile(rf"<([0-9]{{1,{_MAX_MARKER - 1}}})>")  # a proper marker within one chunk
_CLOSE_DIGITS = re.compile(rf"(?:^|(?<=[\s>]))(\d{{1,{_MAX_DIGITS}}})$")
_DRAFT_CLOSE = re.compile(re.escape(DRAFT_CLOSE), re.IGNORECASE)
_DRAFT_OPEN = re.compile(r"^\s*" + re.escape(DRAFT_OPEN), re.IGNORECASE)
_SPACES = re.compile(r"[ \t\u00a0\u3000]+")
_LATIN_END = re.compile(f"[^\\W_{HAN_RANGES}]$")
_LATIN_START = re.compile(f"[^\\W_{HAN_RANGES}]")
_SEGMENT_ERRORS = frozenset({"extra_units", "bare_marker"})  # the text after a marker is not one unit


@dataclass(frozen=True)
class MarkerError:
    """One problem in the raw output: its type, where it is (offsets into the raw text), and what it means."""

    type: ErrorType
    start: int
    end: int
    message: str

    def as_dict(self) -> dict[str, object]:
        return {"type": self.type, "start": self.start, "end": self.end, "message": self.message}


@dataclass(frozen=True)
class Marker:
    value: int
    start: int
    end: int
    text: str
    malformed: bool = False


def check_fields(
    verdict: Verdict, countdown_end: int | None, errors: Sequence[MarkerError], text: str
) -> dict[str, object]:
    """The fields of `capel_ui check` (and the first fields of `generate --json`): one shape everywhere."""
    return {
        "target": verdict.target.high,
        "target_kind": verdict.target.kind,
        "target_low": verdict.target.low,
        "count": verdict.count,
        "exact": verdict.exact_count,
        "valid": not errors,
        "verified": verdict.verified,
        "countdown_end": countdown_end,
        "errors": [e.as_dict() for e in errors],
        "text": text,
    }


@dataclass(frozen=True)
class ParseResult:
    """What the parser knows once the output has ended."""

    target: int
    unit: Unit
    text: str
    count: int
    errors: tuple[MarkerError, ...]
    countdown_end: int | None
    markers: int
    draft: str | None = None
    draft_span: tuple[int, int] | None = None
    marker_spans: tuple[tuple[int, int], ...] = ()
    limit: Target | None = None  # a limit or a range the countdown aimed under (None: exactly `target`)

    @property
    def exact(self) -> bool:
        return self.count == self.target

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def verdict(self) -> Verdict:
        """The verdict of this output taken as finished (a parse is of a whole output)."""
        target = self.limit or self.target
        return decide("complete", self.count, target, self.errors, refusal(self.text, self.unit))

    @property
    def verified(self) -> bool:
        return self.verdict.verified

    def as_dict(self) -> dict[str, object]:
        return check_fields(self.verdict, self.countdown_end, self.errors, self.text)


@dataclass(frozen=True)
class Verified:
    """The longest right countdown prefix so far: what a repair keeps, and the marker it continues from.

    `start` is where `<N>` sits in the raw output (text before it is a preamble, dropped), `end` where the
    verified part ends: right before the first marker whose unit is not yet confirmed. A unit counts as
    verified once the next marker closes it correctly, so a word cut mid-way is never kept. `next_marker` is
    the marker a continuation must start with (`<k-1>` after `<N>` … `<k>`), or -1 once `<0>` was reached
    correctly (then `end` is just after `<0>`, and anything later is overshoot to cut). `error` is the first
    error that ended the verified part (None while everything is right). `draft_end` is where the draft
    stops (0 without one): a repair keeps the draft too.
    """

    start: int
    end: int
    next_marker: int
    units: int
    error: MarkerError | None
    draft_end: int = 0

    @property
    def complete(self) -> bool:
        return self.next_marker < 0

    def kept(self, raw: str) -> str:
        """The part of `raw` a repair keeps: the draft, then the verified countdown (no preamble, no overshoot)."""
        return raw[: self.draft_end] + raw[self.start : self.end]


@dataclass
class _Segment:
    """Text between two markers: the unit (stripped) and how many newlines sat on each side of it."""

    start: int
    parts: list[str] = field(default_factory=list)
    length: int = 0
    tail: str = ""  # the last few characters, to spot `12>` without joining parts

    def add(self, s: str) -> None:
        if s:
            self.parts.append(s)
            self.length += len(s)
            self.tail = (self.tail + s)[-(_MAX_DIGITS + 1) :]

    def drop_last(self, n: int) -> None:
        """Remove the last n characters (a `12>` found to be a marker, not text)."""
        text = "".join(self.parts)[: self.length - n]
        self.parts = [text] if text else []
        self.length = len(text)
        self.tail = text[-(_MAX_DIGITS + 1) :]

    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


class _Scanner:
    """Marker scanning: raw chunks in, markers and text out, the same however the chunks split.

    It keeps the raw output, the draft (everything up to `</draft>`), a `<` that may still become a marker, and the
    text since the last marker (`seg`). Each marker found goes to `on_marker`, which reads `seg` as it stands; the
    next segment starts right after the marker.
    """

    def __init__(self, on_marker: Callable[[Marker], None], *, draft: bool) -> None:
        self.on_marker = on_marker
        self.pos = 0  # absolute offset of the next character to read
        self.seg = _Segment(0)
        self.in_draft = draft
        self.draft_span: tuple[int, int] | None = None
        self._raw: list[str] = []
        self._pending = ""  # held-back text starting with `<` that may still become a marker
        self._pending_start = 0
        self._draft_parts: list[str] = []
        self._draft_tail = ""

    @property
    def raw(self) -> str:
        return "".join(self._raw)

    def feed(self, chunk: str) -> None:
        """Read the next chunk: its text goes to `seg`, its markers to `on_marker`."""
        if not chunk:
            return
        self._raw.append(chunk)
        base = self.pos
        self.pos += len(chunk)
        i, n = 0, len(chunk)
        while i < n:
            if self.in_draft:
                i = self._scan_draft(chunk, i, base)
            elif self._pending:
                i = self._scan_marker(chunk, i, base)
            else:
                i = self._scan_text(chunk, i, base)

    def settle(self) -> None:
        """The output has ended: a `<` still held back is a marker cut short, or text."""
        if self._pending:
            self._marker_from_pending(self.pos, closed=False)

    def draft_text(self) -> str | None:
        if self.draft_span is None:
            return None
        return _DRAFT_OPEN.sub("", "".join(self._draft_parts), count=1).strip()

    def _scan_text(self, chunk: str, i: int, base: int) -> int:
        """Text up to the next `<` or `>`: a whole marker read at once, a `<` held back, a `>` looked at."""
        m = _SPECIAL.search(chunk, i)
        if m is None:
            self._text(chunk[i:], base + i)
            return len(chunk)
        j = m.start()
        if j > i:
            self._text(chunk[i:j], base + i)
        whole = _WHOLE_MARKER.match(chunk, j) if chunk[j] == "<" else None
        if whole:  # the common case read at once; what `_scan_marker` would make of it, char by char
            self._marker(Marker(int(whole.group(1)), base + j, base + whole.end(), whole.group(), malformed=False))
            return whole.end()
        if chunk[j] == "<":
            self._pending = "<"
            self._pending_start = base + j
        else:
            self._close_bracket(base + j)
        return j + 1

    def _scan_draft(self, chunk: str, i: int, base: int) -> int:
        """Inside the draft: look for `</draft>`, even split across chunks, via the draft's last few characters."""
        tail = self._draft_tail
        window = tail + chunk[i:]
        m = _DRAFT_CLOSE.search(window)
        if m is None:
            self._draft_parts.append(chunk[i:])
            self._draft_tail = window[-(len(DRAFT_CLOSE) - 1) :]
            return len(chunk)
        used = m.end() - len(tail)  # the tail alone is too short to hold a match, so used > 0
        self._draft_parts.append(chunk[i : i + used])
        draft_raw = "".join(self._draft_parts)
        self._draft_parts = [draft_raw[: len(draft_raw) - len(DRAFT_CLOSE)]]
        self.in_draft = False
        self.draft_span = (0, base + i + used)
        self.seg = _Segment(base + i + used)
        return i + used

    def _scan_marker(self, chunk: str, i: int, base: int) -> int:
        """After a `<`: collect digits and spaces until `>` (a marker) or anything else."""
        n = len(chunk)
        while i < n:
            c = chunk[i]
            if c in _MARKER_INNER and len(self._pending) < _MAX_MARKER:
                self._pending += c
                i += 1
                continue
            if c == ">":
                self._marker_from_pending(self._pending_start + len(self._pending) + 1, closed=True)
                return i + 1
            self._marker_from_pending(self._pending_start + len(self._pending), closed=False)
            return i
        return i

    def _marker_from_pending(self, end: int, *, closed: bool) -> None:
        inner = self._pending[1:]
        start = self._pending_start
        self._pending = ""
        digits = "".join(inner.split())
        if not digits:
            # `<` not followed by a number: plain text (`a < b`, `<b>`). Re-read `>` as text too.
            self._text("<" + inner + (">" if closed else ""), start)
            return
        proper = closed and inner.isdigit()
        text = "<" + inner + (">" if closed else "")
        self._marker(Marker(int(digits), start, end, text, malformed=not proper))

    def _close_bracket(self, at: int) -> None:
        """A `>` in text: `12>` after a space or marker is a malformed marker, otherwise plain text."""
        m = _CLOSE_DIGITS.search(self.seg.tail)
        if m and (m.start() > 0 or self.seg.length == len(self.seg.tail)):
            digits = m.group(1)
            self.seg.drop_last(len(digits))
            self._marker(Marker(int(digits), at - len(digits), at + 1, digits + ">", malformed=True))
            return
        self._text(">", at)

    def _text(self, s: str, at: int) -> None:
        if not self.seg.length:
            self.seg.start = at
        self.seg.add(s)

    def _marker(self, mk: Marker) -> None:
        self.on_marker(mk)
        self.seg = _Segment(mk.end)


class _Text:
    """The clean text built from the countdown's units, extended as units arrive (`text_so_far` reads it once per
    streamed chunk, so it is never joined again from the start)."""

    def __init__(self, lang: Lang) -> None:
        self.lang: Lang = lang
        self._units: list[tuple[str, int, int, int]] = []  # (unit text, newlines before, after, units)
        self._clean = ""  # clean text of the first `_clean_n` units
        self._clean_n = 0
        self._ends: list[int] = []  # where each unit ends in the clean text

    def __len__(self) -> int:
        return len(self._units)

    def add(self, unit: str, before: int, after: int, units: int) -> None:
        """One more unit: its text, the newlines before and after it, and how many units the marker paid for."""
        self._units.append((unit, before, after, units))

    def starts_line(self, before: int) -> bool:
        """Whether a unit with `before` newlines before it starts a line (a code line keeps its indentation)."""
        return before > 0 or not self._units or self._units[-1][2] > 0

    def paid(self) -> int:
        """Units the markers paid for (a whole code line is one)."""
        return sum(n for *_, n in self._units)

    def head(self, n: int) -> str:
        """The clean text of the first `n` units."""
        return self.text()[: self._ends[n - 1]] if n else ""

    def text(self) -> str:
        out: list[str] = []
        end = len(self._clean)  # where the text built so far ends: one running sum, not a sum per unit
        for i in range(self._clean_n, len(self._units)):
            unit, before, _, _ = self._units[i]
            if i:
                prev = self._units[i - 1][0]
                newlines = self._units[i - 1][2] + before
                if newlines:
                    out.append("\n" * newlines)
                    end += newlines
                elif self.lang != "zh" or (_LATIN_END.search(prev) and _LATIN_START.match(unit)):
                    # English units are words; in Chinese, two Latin units (`New` `York`) stay two words.
                    out.append(" ")
                    end += 1
            out.append(unit)
            end += len(unit)
            self._ends.append(end)
        if out:
            self._clean += "".join(out)
            self._clean_n = len(self._units)
        return self._clean


@dataclass
class _Prefix:
    """The verified countdown prefix as markers confirm it (what `Verified` reports): where `<N>` starts, where the
    verified part ends, the marker that must come next, the units verified, and the error that ended it."""

    next: int
    start: int | None = None
    end: int = 0
    units: int = 0
    error: MarkerError | None = None

    def track(
        self, mk: Marker | None, prev: Marker | None, found: Sequence[MarkerError], after: Callable[[Marker], int]
    ) -> None:
        """Extend the prefix with what this marker (None: the end of output) confirmed; `found` are the errors it
        raised, `after(prev)` the marker that must follow `prev`'s unit.

        A marker closes the previous marker's unit: that unit is verified when it is exactly one unit, even if
        this marker itself is wrong (a skip keeps `<4>b` of `<4>b<2>`). The first error other than a preamble
        ends the verified prefix for good.
        """
        if self.error is not None or self.next < 0:
            return
        new = [e for e in found if e.type != "preamble"]
        if mk is not None and prev is not None and not any(e.type in _SEGMENT_ERRORS for e in new):
            self.units += 1
            self.next, self.end = after(prev), mk.start
        if new:
            self.error = min(new, key=lambda e: e.start)
            return
        if mk is None:
            return
        if prev is None:
            self.start = self.end = mk.start  # the first marker, <N>: everything before it is preamble
        if mk.value == 0:
            self.next, self.end = -1, mk.end

    def verified(self, draft_end: int) -> Verified:
        start = draft_end if self.start is None else self.start
        return Verified(start, max(self.end, start), self.next, self.units, self.error, draft_end)


class MarkerParser:
    """Incremental CAPEL validator: `feed()` chunks as they stream, read the live state, `close()` at the end.

    `lang` decides what one marker pays for (a word, a character); `unit` is what the final text is counted
    in. With `draft=True` everything up to `</draft>` is the draft: reported separately, never counted.
    With `code=True` a segment that ends a line (a code line) counts as one unit, as the code-aware rule says.
    A `Target` limit or range counts down the room from its most: `<0>` may close the text after any unit from
    the least on (`<30>` … `<19>Paris.<0>` under at most 30 words), not only after `<1>`'s. In a character unit
    (`vocab.counts_room`) each marker is the room left before its word: the most, less the text so far and the
    space before the word (`<30>Bike<25>repair<18>in<15>Portland.<0>` under at most 30 characters; in Chinese, one
    marker per Han character, its punctuation counted: `<10>今<9>天<8>好，<6>走。<0>`).

    The parser itself checks each marker and segment and names what is wrong (`MarkerError`); `_Scanner` finds
    the markers in the chunks, `_Text` builds the clean text, `_Prefix` follows the verified prefix.
    """

    def __init__(
        self,
        target: int | Target,
        lang: Lang = "en",
        unit: Unit | None = None,
        *,
        draft: bool = False,
        code: bool = False,
    ) -> None:
        self.limit = target if isinstance(target, Target) and target.kind != "exactly" else None
        target = target.high if isinstance(target, Target) else target
        self.target = target
        self.lang: Lang = lang
        self.unit: Unit = unit or marker_unit(lang)
        self.code = code
        self._marker_unit = marker_unit(lang)
        self._room: Unit | None = self.unit if self.limit is not None and counts_room(lang, self.unit) else None
        self._gap = " " if lang == "en" else ""  # what stands between two units, paid for by the marker after it
        self._scanner = _Scanner(self._marker, draft=draft)
        self._text = _Text(lang)
        self._prefix = _Prefix(target)
        self._errors: list[MarkerError] = []
        self._last: Marker | None = None
        self._ended = False  # a <0> was seen
        self._closed: ParseResult | None = None
        self._markers = 0
        self._spans: list[tuple[int, int]] = []  # where each well-formed marker sits in the raw output
        self._reparsed: MarkerParser | None = None

    # ----- live state -------------------------------------------------------------------------------
    @property
    def errors(self) -> list[MarkerError]:
        return list(self._errors)

    @property
    def marker_spans(self) -> list[tuple[int, int]]:
        """(start, end) of every well-formed marker so far: what the page dims while it streams."""
        return list(self._spans)

    @property
    def countdown(self) -> int | None:
        """The value of the last marker seen (None before the first one)."""
        return self._last.value if self._last else None

    @property
    def in_draft(self) -> bool:
        return self._scanner.in_draft

    @property
    def draft_span(self) -> tuple[int, int] | None:
        """Where the draft sits in the raw output, once `</draft>` has been seen."""
        return self._scanner.draft_span

    @property
    def units_done(self) -> int:
        """Units written so far under markers, the unit still being written included (in a room countdown, the
        characters of the text so far)."""
        writing = self._last is not None and not self._ended
        seg = self._scanner.seg
        if self._room is not None:
            text = self._clean_text() if self._last is not None else ""
            current = _SPACES.sub(" ", seg.text().strip()) if writing else ""
            return count(self._gap.join(filter(None, (text, current))), self._room)
        current = count(seg.text(), self._marker_unit) if writing else 0
        return len(self._text) + current

    @property
    def remaining(self) -> int:
        """Units left to write, as the countdown shows it."""
        return max(self.target - self.units_done, 0)

    @property
    def raw(self) -> str:
        return self._scanner.raw

    def text_so_far(self) -> str:
        """The clean text of the units finished so far: always a prefix of the final text, so it can stream."""
        return self._clean_text() if self._last is not None else ""

    def verified(self) -> Verified:
        """The longest verified countdown prefix so far (after `close()`, of the output as a whole)."""
        if self._reparsed is not None:
            return self._reparsed.verified()
        draft_span = self._scanner.draft_span
        return self._prefix.verified(draft_span[1] if draft_span else 0)

    def verified_text(self) -> str:
        """The clean text of the verified units only: a prefix of every text a repair can end with."""
        if self._reparsed is not None:
            return self._reparsed.verified_text()
        return self._text.head(self._prefix.units)

    # ----- feeding ----------------------------------------------------------------------------------
    def feed(self, chunk: str) -> list[MarkerError]:
        """Read the next chunk; returns the errors found in it (they are also kept)."""
        if self._closed is not None:
            raise RuntimeError("parser already closed")
        before = len(self._errors)
        self._scanner.feed(chunk)
        return self._errors[before:]

    # ----- markers ----------------------------------------------------------------------------------
    def _error(self, type_: ErrorType, start: int, end: int, message: str) -> None:
        self._errors.append(MarkerError(type_, start, end, message))

    def _marker(self, mk: Marker) -> None:
        before, prev = len(self._errors), self._last
        self._step(mk)
        self._prefix.track(mk, prev, self._errors[before:], self._next_value)

    def _step(self, mk: Marker) -> None:
        self._markers += 1
        if not mk.malformed:
            self._spans.append((mk.start, mk.end))
        if mk.malformed:
            self._error("malformed_marker", mk.start, mk.end, f"{mk.text!r} is not a marker; write <{mk.value}>")
        if self._ended:
            self._flush_trailing()
            if mk.value == 0:
                self._error("duplicate_end", mk.start, mk.end, "a second <0>; stop after the first one")
            else:
                self._error("trailing_text", mk.start, mk.end, f"<{mk.value}> after <0>; nothing may follow <0>")
            return
        self._close_segment(next_marker=mk)
        last = self._last
        if last is None:
            if mk.value != self.target:
                self._error(
                    "wrong_start", mk.start, mk.end, f"the countdown starts at <{mk.value}>, not <{self.target}>"
                )
        elif self._room is not None:
            self._check_room(mk, last)
        elif mk.value >= last.value:
            what = "repeats" if mk.value == last.value else "rises from"
            self._error(
                "repeat", mk.start, mk.end, f"<{mk.value}> {what} <{last.value}>; each marker must be one lower"
            )
        elif mk.value == 0 and self._may_end_after(last.value):
            pass  # a limit's text closed before its most: what the room countdown is for
        elif mk.value == 0 and last.value > 1:
            short = f"{last.value - 1} early" if self.limit is None else f"before the least, {self.limit.low}"
            self._error(
                "early_stop", mk.start, mk.end, f"<0> right after <{last.value}>: the countdown stopped {short}"
            )
        elif mk.value < last.value - 1:
            missing = last.value - mk.value - 1
            self._error("skip", mk.start, mk.end, f"<{mk.value}> after <{last.value}> skips {missing} marker(s)")
        self._last = mk
        if mk.value == 0:
            self._ended = True

    def _may_end_after(self, value: int) -> bool:
        """Whether `<0>` may follow the unit of `<value>`: under a limit, once its least is written."""
        return self.limit is not None and self.target - value + 1 >= self.limit.low

    def _next_value(self, prev: Marker) -> int:
        """The marker that must follow `prev`'s unit: one lower, or the room left before the next word."""
        if self._room is None:
            return prev.value - 1
        return self.target - count(self._clean_text() + self._gap, self._room)

    def _check_room(self, mk: Marker, last: Marker) -> None:
        """A room countdown's marker after `last`'s word: the room left, or `<0>` once the least is written."""
        assert self.limit is not None and self._room is not None
        used, left = count(self._clean_text(), self._room), self._next_value(last)
        if used > self.target:
            over = f"the text so far takes {used}: over the limit of {self.target}"
            self._error("wrong_room", mk.start, mk.end, over)
        elif mk.value == 0 and used < self.limit.low:
            self._error("early_stop", mk.start, mk.end, f"<0> after {used}: before the least, {self.limit.low}")
        elif mk.value not in (0, left):
            self._error("wrong_room", mk.start, mk.end, f"<{mk.value}> after {used} written: the room left is <{left}>")

    def _close_segment(self, next_marker: Marker | None) -> None:
        """The text since the last marker is complete: check it holds exactly one unit and keep that unit."""
        seg = self._scanner.seg
        text = seg.text()
        last = self._last
        if last is None:
            if text.strip():
                lead = len(text) - len(text.lstrip())
                self._error(
                    "preamble",
                    seg.start + lead,
                    seg.start + len(text.rstrip()),
                    "text before the first marker; the output must start with the countdown",
                )
            return
        units = count(text, self._marker_unit)
        if self.code and units > 1 and text.rstrip(" \t").endswith("\n"):
            units = 1
        stripped = text.strip()
        if units == 0:
            if next_marker is not None:
                self._error("bare_marker", last.start, last.end, f"<{last.value}> has no unit before the next marker")
        elif units > 1:
            lead = len(text) - len(text.lstrip())
            self._error(
                "extra_units",
                seg.start + lead,
                seg.start + len(text.rstrip()),
                f"{units} units after <{last.value}>; write one per marker",
            )
        if stripped:
            leading = text[: len(text) - len(text.lstrip())]
            before = leading.count("\n")
            after = text[len(text.rstrip()) :].count("\n")
            if self.code:
                # A code line keeps its indentation (when it starts a line) and its inner spacing.
                starts_line = self._text.starts_line(before)
                unit_text = leading.rsplit("\n", 1)[-1] + stripped if starts_line else stripped
            else:
                unit_text = _SPACES.sub(" ", stripped)
            self._text.add(unit_text, before, after, units)

    def _flush_trailing(self) -> None:
        seg = self._scanner.seg
        text = seg.text()
        if text.strip():
            start, end = seg.start + len(text) - len(text.lstrip()), seg.start + len(text.rstrip())
            self._error("trailing_text", start, end, "text after <0>; stop at <0>")

    # ----- the end ----------------------------------------------------------------------------------
    def close(self) -> ParseResult:
        """The output has ended: settle held-back text, report what is missing, and build the clean text."""
        if self._closed is not None:
            return self._closed
        if self._scanner.in_draft:
            # No `</draft>` ever came: there is no separate draft; read the whole output as the answer.
            reparse = MarkerParser(self.limit or self.target, self.lang, self.unit, code=self.code)
            reparse.feed(self.raw)
            self._closed = reparse.close()
            self._reparsed = reparse
            return self._closed
        self._scanner.settle()
        last, before = self._last, len(self._errors)
        self._close_countdown(last, self._scanner.pos)
        self._prefix.track(None, last, self._errors[before:], self._next_value)
        text = self._clean_text()
        # Code-aware rule (§3.3): a whole code line is one token, so count what the markers paid for.
        total = self._text.paid() if self.code and self._last is not None else count(text, self.unit)
        self._closed = ParseResult(
            target=self.target,
            unit=self.unit,
            text=text,
            count=total,
            errors=tuple(sorted(self._errors, key=lambda e: (e.start, e.end))),
            countdown_end=last.value if last else None,
            markers=self._markers,
            draft=self._scanner.draft_text(),
            draft_span=self._scanner.draft_span,
            marker_spans=tuple(self._spans),
            limit=self.limit,
        )
        return self._closed

    def _close_countdown(self, last: Marker | None, end: int) -> None:
        """The output ended at `end`: the text after the last marker is its last unit, and what is missing is said."""
        if self._ended:
            self._flush_trailing()
        elif last is None:
            self._close_segment(next_marker=None)
            self._error("early_stop", end, end, "the output has no countdown markers")
        else:
            has_unit = count(self._scanner.seg.text(), self._marker_unit) > 0
            self._close_segment(next_marker=None)
            if self._room is not None and has_unit:
                self._error("missing_end", end, end, "the last word is not followed by <0>")
            elif last.value > 1 or not has_unit:
                self._error(
                    "early_stop", last.start, end, f"the output ended at <{last.value}>, before the unit of <1>"
                )
            else:
                self._error("missing_end", end, end, "the unit of <1> is not followed by <0>")

    def _clean_text(self) -> str:
        if self._last is None:
            # The model ignored the countdown: its words are still its answer.
            draft_span = self._scanner.draft_span
            return (self.raw[draft_span[1] :] if draft_span else self.raw).strip()
        return self._text.text()


def check_output(
    raw: str,
    target: int | Target,
    lang: Lang = "en",
    unit: Unit | None = None,
    *,
    draft: bool = False,
    code: bool = False,
) -> ParseResult:
    """Parse a whole output at once: the same result as feeding it chunk by chunk."""
    parser = MarkerParser(target, lang, unit, draft=draft, code=code)
    parser.feed(raw)
    return parser.close()

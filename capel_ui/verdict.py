"""The one verdict: whether a text may be called verified, decided here and only here.

The live stream, the saved row, the badge, the exports, the CLI exit code, History's filter and its CSV all
read a `Verdict`; none of them re-derives "verified" from count, status and errors. A `Target` says what was
asked for (exactly N, at most N, between A and B); the verdict alone decides whether a count is within it.
"""

from __future__ import annotations

import re
from collections.abc import Sized
from dataclasses import dataclass
from typing import Literal

from .vocab import MAX_TARGET, TARGET_KINDS, TargetKind, unit_label

Tone = Literal["green", "orange", "red", "gray"]

_RANGE = re.compile(r"^\s*(\d+)\s*[-–‒—]\s*(\d+)\s*$")


@dataclass(frozen=True)
class Target:
    """What was asked for: `low` to `high` units. Exactly N is N to N; at most N is 1 to N (a text, not nothing).

    `high` is the number the countdown, the grammar and the stored `target` column are built for.
    """

    kind: TargetKind
    low: int
    high: int

    def __post_init__(self) -> None:
        if self.kind not in TARGET_KINDS:
            raise ValueError(f"unknown target kind {self.kind!r}; use one of {', '.join(TARGET_KINDS)}")
        for n in (self.low, self.high):
            if isinstance(n, bool) or not isinstance(n, int):
                raise ValueError(f"target must be a whole number from 1 to {MAX_TARGET}, got {n!r}")
        if not 1 <= self.low <= self.high <= MAX_TARGET:
            raise ValueError(f"target must run from 1 to {MAX_TARGET}, low to high, got {self.low}-{self.high}")

    @classmethod
    def exactly(cls, n: int) -> Target:
        return cls("exactly", n, n)

    @classmethod
    def at_most(cls, n: int) -> Target:
        return cls("at_most", 1, n)

    @classmethod
    def between(cls, low: int, high: int) -> Target:
        return cls("range", low, high)

    @classmethod
    def of(cls, kind: str | None, number: int, low: int | None = None) -> Target:
        """From the stored or requested fields: the kind, its number (`high`) and a range's `low`."""
        if kind in (None, "exactly"):
            return cls.exactly(number)
        if kind == "at_most":
            return cls.at_most(number)
        if kind == "range":
            return cls.between(low if low is not None else number, number)
        raise ValueError(f"unknown target kind {kind!r}; use one of {', '.join(TARGET_KINDS)}")

    @classmethod
    def parse_range(cls, text: str) -> Target:
        """`10-12` (or 10–12) as a range; ValueError saying what is accepted."""
        m = _RANGE.match(text)
        if not m:
            raise ValueError(f"a range is two whole numbers like 10-12, got {text!r}")
        low, high = int(m.group(1)), int(m.group(2))
        if low > high:
            raise ValueError(f"a range goes from the smaller number to the larger, got {text!r}")
        return cls.between(low, high)

    def within(self, count: int) -> bool:
        return self.low <= count <= self.high

    def deviation(self, count: int) -> int:
        """How far outside the bounds: negative when short, positive when over, 0 within."""
        return count - self.low if count < self.low else count - self.high if count > self.high else 0

    @property
    def label(self) -> str:
        """`12`, `≤ 280` or `10–12`: the target as every surface shows it."""
        if self.kind == "exactly":
            return str(self.high)
        if self.kind == "at_most":
            return f"≤ {self.high}"
        return f"{self.low}–{self.high}"

    def describe(self, unit: str) -> str:
        """In words, for prompts' neighbours and captions: `exactly 12 English words`, `at most 280 characters`."""
        label = unit_label(unit)
        if self.kind == "exactly":
            return f"exactly {self.high} {label}"
        if self.kind == "at_most":
            return f"at most {self.high} {label}"
        return f"{self.low} to {self.high} {label}"


@dataclass(frozen=True)
class Verdict:
    """A run's standing: verified only if it completed, its count is within the target, no marker error, and the
    unit's platform takes the text (`refused`: why X would refuse it whatever its length, see counting.refusal)."""

    status: str
    count: int
    target: Target
    errors: int
    refused: str | None = None

    @property
    def within(self) -> bool:
        """The count meets the target (not a verdict: a partial or invalid run can meet it by chance)."""
        return self.target.within(self.count)

    @property
    def verified(self) -> bool:
        return self.status == "complete" and self.within and self.errors == 0 and self.refused is None

    @property
    def exact_count(self) -> bool:
        """The stored `exact` column: the count meets the target (for exactly N, equals it)."""
        return self.within

    @property
    def deviation(self) -> int:
        """Units outside the target (exactly N: count - N); 0 within."""
        return self.target.deviation(self.count)

    @property
    def tone(self) -> Tone:
        if self.verified:
            return "green"
        if self.status == "failed":
            return "red"
        if self.status in ("partial", "cancelled", "running", "interrupted"):
            return "gray"
        return "orange" if self.within and not self.refused else "red"

    def headline(self, unit: str) -> str:
        """One line a writer can trust, the same words on every surface."""
        label = unit_label(unit)
        t = self.target
        if self.verified:
            if t.kind == "exactly":
                return f"✓ exact · verified · {self.count}/{t.high} {label}"
            if t.kind == "at_most":
                return f"✓ {self.count}/{t.high} {label}"
            return f"✓ {self.count} {label} · within {t.label}"
        if self.status == "failed":
            return "failed · no text arrived"
        parts: list[str] = []
        shown = f"{self.count}/{t.high}" if t.kind != "range" else f"{self.count} of {t.label}"
        if self.status != "complete":
            arrived = f"{self.count} of {t.high}" if t.kind == "exactly" else f"{self.count} (target {t.label})"
            parts.append(f"{self.status} · not verified · {arrived} {label} arrived")
        elif self.within:
            parts.append(f"not verified · {shown} {label}")
        elif t.kind == "exactly":
            parts.append(f"off by {self.deviation:+d} · {shown} {label}")
        else:
            side = "over" if self.deviation > 0 else "short"
            parts.append(f"{side} by {abs(self.deviation)} · {shown} {label}")
        if self.errors:
            parts.append(f"{self.errors} marker error(s)")
        if self.refused:
            parts.append(self.refused)
        return " · ".join(parts)


def decide(
    status: str, count: int | None, target: Target | int, errors: Sized | int, refused: str | None = None
) -> Verdict:
    """The verdict of a run from what it produced; `target` an int means exactly that; `errors` the marker
    errors (or their number); `refused` why the unit's platform refuses the text (counting.refusal)."""
    n_errors = errors if isinstance(errors, int) else len(errors)
    spec = target if isinstance(target, Target) else Target.exactly(target)
    return Verdict(status=status, count=count or 0, target=spec, errors=n_errors, refused=refused)


def live_state(done: int, target: Target | int, unit: str) -> str:
    """The countdown while a run streams: how many units are left, or how far past the target it has gone."""
    label = unit_label(unit)
    t = target if isinstance(target, Target) else Target.exactly(target)
    if done > t.high:
        return f"over by {done - t.high} · {done} of {t.label} {label}"
    if t.kind == "range":
        if done < t.low:
            return f"{done} of {t.label} {label} · {t.low - done} more to reach the range"
        return f"{done} of {t.label} {label} · within"
    return f"{t.high - done} of {t.high} {label} left"

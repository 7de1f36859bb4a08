"""The one verdict: whether a text may be called verified, decided here and only here.

The live stream, the saved row, the badge, the exports, the CLI exit code, History's filter and its CSV all
read a `Verdict`; none of them re-derives "verified" from count, status and errors.
"""

from __future__ import annotations

from collections.abc import Sized
from dataclasses import dataclass
from typing import Literal

from .vocab import unit_label

Tone = Literal["green", "orange", "red", "gray"]


@dataclass(frozen=True)
class Verdict:
    """A run's standing: verified only if it completed, counts exactly to the target and has no marker error."""

    status: str
    count: int
    target: int
    errors: int

    @property
    def verified(self) -> bool:
        return self.status == "complete" and self.count == self.target and self.errors == 0

    @property
    def exact_count(self) -> bool:
        """The count equals the target (not a verdict: a partial or invalid run can hit it by chance)."""
        return self.count == self.target

    @property
    def deviation(self) -> int:
        return self.count - self.target

    @property
    def tone(self) -> Tone:
        if self.verified:
            return "green"
        if self.status == "failed":
            return "red"
        if self.status in ("partial", "cancelled", "running", "interrupted"):
            return "gray"
        return "orange" if self.exact_count else "red"

    def headline(self, unit: str) -> str:
        """One line a writer can trust, the same words on every surface."""
        label = unit_label(unit)
        if self.verified:
            return f"✓ exact · verified · {self.count}/{self.target} {label}"
        if self.status == "failed":
            return "failed · no text arrived"
        parts: list[str] = []
        if self.status != "complete":
            parts.append(f"{self.status} · not verified · {self.count} of {self.target} {label} arrived")
        elif self.exact_count:
            parts.append(f"not verified · {self.count}/{self.target} {label}")
        else:
            parts.append(f"off by {self.deviation:+d} · {self.count}/{self.target} {label}")
        if self.errors:
            parts.append(f"{self.errors} marker error(s)")
        return " · ".join(parts)


def judge(status: str, count: int | None, target: int, errors: Sized | int) -> Verdict:
    """The verdict of a run from what it produced; `errors` is the marker errors (or their number)."""
    n_errors = errors if isinstance(errors, int) else len(errors)
    return Verdict(status=status, count=count or 0, target=target, errors=n_errors)


def live_state(done: int, target: int, unit: str) -> str:
    """The countdown while a run streams: how many units are left, or how far past the target it has gone."""
    label = unit_label(unit)
    if done > target:
        return f"over by {done - target} · {done} of {target} {label}"
    return f"{target - done} of {target} {label} left"

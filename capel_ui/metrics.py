"""Length-compliance metrics: pure functions over (target, count) pairs.

EM, MAE and MALD follow §4.2 of the paper. Length Deviation and Length Score follow LIFEBench
(`evaluate/evaluate_all_results.py`), on the fraction (not the percent the upstream script passed by mistake),
aggregated per target length and then averaged over lengths, dropping outputs whose count is <= 1. Each of
LIFEBench's control methods (equal to, at most, at least) has its own LS; LD is |LD| for all three, as there.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .vocab import BenchControl

Pair = tuple[int, int]  # (target, count)


def _pairs(pairs: Iterable[Pair]) -> list[Pair]:
    out = list(pairs)
    for target, _ in out:
        if target <= 0:
            raise ValueError(f"target must be positive, got {target}")
    return out


def exact_match(pairs: Iterable[Pair]) -> float:
    """Fraction (0..1) of outputs whose length equals the target; 0.0 for no outputs."""
    ps = _pairs(pairs)
    return sum(1 for t, c in ps if t == c) / len(ps) if ps else 0.0


def mae(pairs: Iterable[Pair]) -> float:
    """Mean absolute error |count - target|, in units."""
    ps = _pairs(pairs)
    return sum(abs(c - t) for t, c in ps) / len(ps) if ps else 0.0


def mald(pairs: Iterable[Pair]) -> float:
    """Mean absolute length deviation |count - target| / target: MAE made comparable across targets."""
    ps = _pairs(pairs)
    return sum(abs(c - t) / t for t, c in ps) / len(ps) if ps else 0.0


def length_deviation(target: int, count: int) -> float:
    """LIFEBench LD = (L_output - L_required) / L_required, signed, as a fraction."""
    if target <= 0:
        raise ValueError(f"target must be positive, got {target}")
    return (count - target) / target


def length_score(target: int, count: int) -> float:
    """LIFEBench Equal-To LS: 100·e^(5·LD) when short, 100·e^(-2·LD) when long (100 when exact)."""
    ld = length_deviation(target, count)
    return 100 * math.exp(5 * ld) if ld < 0 else 100 * math.exp(-2 * ld)


def at_most_score(target: int, count: int) -> float:
    """LIFEBench At-Most LS: 100 when the count is within the limit, else the Equal-To penalty for running long."""
    return 100.0 if count <= target else length_score(target, count)


def at_least_score(target: int, count: int) -> float:
    """LIFEBench At-Least LS: 100 when the count reaches the target, else the Equal-To penalty for running short."""
    return 100.0 if count >= target else length_score(target, count)


CONTROL_SCORES: dict[BenchControl, Callable[[int, int], float]] = {
    "equal": length_score,
    "at_most": at_most_score,
    "at_least": at_least_score,
}
"""The LS of each LIFEBench control method."""


def meets(control: BenchControl, target: int, count: int) -> bool:
    """Whether a count satisfies the control: equals, is at most, or is at least the target."""
    if control == "at_most":
        return count <= target
    if control == "at_least":
        return count >= target
    return count == target


def within(pairs: Iterable[Pair], control: BenchControl = "equal") -> float:
    """Fraction (0..1) of outputs meeting the control (for `equal`, the exact match); 0.0 for no outputs."""
    ps = _pairs(pairs)
    return sum(1 for t, c in ps if meets(control, t, c)) / len(ps) if ps else 0.0


@dataclass(frozen=True)
class LifebenchScore:
    """LIFEBench's headline figures: mean |LD| (fraction) and mean LS, each averaged over target lengths."""

    ld: float
    ls: float
    per_length: dict[int, tuple[float, float, int]]  # target -> (mean |LD|, mean LS, samples kept)
    dropped: int


def lifebench_scores(pairs: Iterable[Pair], control: BenchControl = "equal") -> LifebenchScore:
    """Aggregate as LIFEBench does: drop counts <= 1, average per target length, then over lengths; LS is
    the control's own score."""
    score = CONTROL_SCORES[control]
    by_target: dict[int, list[int]] = defaultdict(list)
    dropped = 0
    for target, c in _pairs(pairs):
        if c <= 1:
            dropped += 1
            continue
        by_target[target].append(c)
    per_length: dict[int, tuple[float, float, int]] = {}
    for target in sorted(by_target):
        counts = by_target[target]
        lds = [abs(length_deviation(target, c)) for c in counts]
        lss = [score(target, c) for c in counts]
        per_length[target] = (sum(lds) / len(lds), sum(lss) / len(lss), len(counts))
    if not per_length:
        return LifebenchScore(ld=math.nan, ls=math.nan, per_length={}, dropped=dropped)
    ld = sum(v[0] for v in per_length.values()) / len(per_length)
    ls = sum(v[1] for v in per_length.values()) / len(per_length)
    return LifebenchScore(ld=ld, ls=ls, per_length=per_length, dropped=dropped)

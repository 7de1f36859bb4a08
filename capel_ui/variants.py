"""Variants: K candidates of one request, each verified and saved as a run of one group, ranked.

Writers choose among options. `service.start(..., variants=K)` starts every candidate as an ordinary `LiveRun`
(origin `variant`, one shared `group_id`), so it is verified, saved and shown like any run; the K requests run
concurrently (the embedded llama.cpp server has 4 parallel slots; other servers get parallel requests). This
module says how the K requests differ and how the finished ones rank: verified first, then the judge's rating
when one was configured, else the offline score (quality.py), then fluency.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .generation import Outcome, Request
from .quality import warnings
from .vocab import MAX_VARIANTS


def variant_requests(request: Request, k: int) -> list[Request]:
    """K copies of `request` that sample differently: seeds seed, seed+1, ... when a seed was given."""
    if not 1 <= k <= MAX_VARIANTS:
        raise ValueError(f"variants must be 1 to {MAX_VARIANTS}; got {k}")
    if request.seed is None:
        return [request] * k
    return [replace(request, seed=request.seed + i) for i in range(k)]


def rank_key(verified: bool, judge_score: float | None, score: float | None, fluency: float | None) -> tuple:
    """Sort key, best first when sorted in reverse: verified, then judge, else offline score, then fluency."""
    quality = judge_score if judge_score is not None else score
    return (verified, quality if quality is not None else -1.0, fluency if fluency is not None else -1.0)


@dataclass
class Candidate:
    """One finished variant: its outcome, saved run id, offline score and (if judged) the judge's rating."""

    outcome: Outcome
    run_id: int | None
    score: float | None
    judge_score: float | None = None

    @property
    def key(self) -> tuple:
        return rank_key(self.outcome.verified, self.judge_score, self.score, self.outcome.fluency)

    def as_json(self, rank: int) -> dict[str, Any]:
        """One entry of `generate --variants K --json`."""
        o = self.outcome
        return {
            "rank": rank,
            "run_id": self.run_id,
            "text": o.text,
            "count": o.count,
            "target": o.target,
            "verified": o.verified,
            "verdict": o.verdict.headline(o.request.count_unit),
            "score": self.score,
            "fluency": None if o.fluency is None else round(o.fluency, 4),
            "judge_score": self.judge_score,
            "warnings": [w.message for w in warnings(o.text, o.request.lang, o.request.instruction)],
            "status": o.status,
            "seconds": round(o.seconds, 3),
        }


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Best first (see `rank_key`)."""
    return sorted(candidates, key=lambda c: c.key, reverse=True)

"""Variants: K candidates of one request, run at once, each verified and saved as a run of one group, ranked.

Writers choose among options. Every candidate is an ordinary `LiveRun` (origin `variant`, one shared
`group_id`), so it is verified, saved and shown like any run; the K requests run concurrently (the embedded
llama.cpp server has 4 parallel slots; other servers get parallel requests). Ranking: verified first, then the
judge's rating when one was configured, else the offline score (quality.py), then fluency.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Engine

from .backends import Backend
from .generation import Generation, Outcome, Request
from .judge import judge_run
from .quality import warnings
from .runs import LiveRun, quality_fields, run_together
from .vocab import MAX_VARIANTS, Origin


def variant_requests(request: Request, k: int) -> list[Request]:
    """K copies of `request` that sample differently: seeds seed, seed+1, ... when a seed was given."""
    if not 1 <= k <= MAX_VARIANTS:
        raise ValueError(f"variants must be 1 to {MAX_VARIANTS}; got {k}")
    if request.seed is None:
        return [request] * k
    return [replace(request, seed=request.seed + i) for i in range(k)]


def start_variants(
    backend: Backend, request: Request, engine: Engine | None, k: int, origin: Origin = "variant"
) -> tuple[str, list[LiveRun]]:
    """Create K live runs sharing a new group id (rows saved as `running` at once)."""
    group_id = uuid.uuid4().hex[:12]
    lives = [
        LiveRun(Generation(backend, req), engine, origin=origin, group_id=group_id)
        for req in variant_requests(request, k)
    ]
    return group_id, lives


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


def finish(lives: list[LiveRun], engine: Engine | None, judge: Backend | None = None) -> list[Candidate]:
    """The finished runs as candidates, judged when a judge is configured, best first."""
    out = []
    for live in lives:
        o = live.outcome
        cand = Candidate(o, live.run_id, quality_fields(o)["score"])
        if judge is not None and o.text.strip():
            cand.judge_score = judge_run(engine, live.run_id, judge, o.request.instruction, o.text)
        out.append(cand)
    return sorted(out, key=lambda c: c.key, reverse=True)


def run_variants(
    backend: Backend,
    request: Request,
    engine: Engine | None,
    k: int,
    *,
    judge: Backend | None = None,
    tick: Callable[[list[LiveRun]], None] | None = None,
) -> tuple[str, list[Candidate]]:
    """Run K variants concurrently to the end and return (group id, candidates best first)."""
    group_id, lives = start_variants(backend, request, engine, k)
    run_together(lives, None if tick is None else lambda: tick(lives))
    return group_id, finish(lives, engine, judge)

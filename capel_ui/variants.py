"""Variants: K candidates of one request, each verified and saved as a run of one group, ranked.

Writers choose among options. `service.start(..., variants=K)` starts every candidate as an ordinary `LiveRun`
(origin `variant`, one shared `group_id`), so it is verified, saved and shown like any run; the K requests run
concurrently (the embedded llama.cpp server has 4 parallel slots; other servers get parallel requests). This
module says how the K requests differ and how the finished ones rank: a text no writer would keep (a loop, a
number list: `quality.junk`) after every other, then verified first, then the judge's rating when one was
configured, else the offline score (quality.py, which counts a cut-off ending against a text), then the model's
own view of the ending, then fluency. So Copy and the downloads, which use the best one, never default to junk
while a better variant exists.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .ending import ending_words
from .history import run_warnings
from .outcome import Outcome
from .quality import QualityWarning, explain, junk, warnings
from .request import Request
from .runs import verdict_of
from .storage import RunRecord
from .vocab import MAX_VARIANTS


def variant_requests(request: Request, k: int) -> list[Request]:
    """K copies of `request` that sample differently: seeds seed, seed+1, ... when a seed was given."""
    if not 1 <= k <= MAX_VARIANTS:
        raise ValueError(f"variants must be 1 to {MAX_VARIANTS}; got {k}")
    if request.seed is None:
        return [request] * k
    return [replace(request, seed=request.seed + i) for i in range(k)]


def rank_key(
    verified: bool,
    judge_score: float | None,
    score: float | None,
    fluency: float | None,
    *,
    junk: bool = False,
    end_probability: float | None = None,
    deviation: int | None = None,
) -> tuple:
    """Sort key, best first when sorted in reverse: not junk, verified, then the closest to the target (a baseline
    text "off by -8" before one "off by -19", whatever their scores), then judge, else offline score, then the
    ending score, then fluency (an unknown one below any known)."""
    quality = judge_score if judge_score is not None else score
    known = lambda x: x if x is not None else -1.0  # noqa: E731
    close = -abs(deviation) if deviation is not None else 0
    return (not junk, verified, close, known(quality), known(end_probability), known(fluency))


def run_rank_key(run: RunRecord) -> tuple:
    """`rank_key` of a saved run (the Write page's variant cards)."""
    junk_ = junk(run_warnings(run))
    verdict = verdict_of(run)
    return rank_key(
        verdict.verified,
        run.judge_score,
        run.score,
        run.fluency,
        junk=junk_,
        end_probability=run.end_probability,
        deviation=verdict.deviation,
    )


@dataclass
class Candidate:
    """One finished variant: its outcome, saved run id, offline score and (if judged) the judge's rating."""

    outcome: Outcome
    run_id: int | None
    score: float | None
    judge_score: float | None = None

    @property
    def warnings(self) -> list[QualityWarning]:
        o = self.outcome
        return warnings(o.text, o.request.lang, o.request.instruction)

    @property
    def junk(self) -> bool:
        return junk(self.warnings)

    @property
    def key(self) -> tuple:
        o = self.outcome
        return rank_key(
            o.verified,
            self.judge_score,
            self.score,
            o.fluency,
            junk=self.junk,
            end_probability=o.end_probability,
            deviation=o.deviation,
        )

    @property
    def explanation(self) -> str:
        """What its score means, in a writer's words (quality.explain)."""
        o = self.outcome
        return explain(o.fluency, self.warnings, o.end_probability)

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
            "end_probability": o.end_probability,
            "ending": ending_words(o.end_probability),
            "explanation": self.explanation,
            "warnings": [w.message for w in self.warnings],
            "status": o.status,
            "seconds": round(o.seconds, 3),
        }


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Best first (see `rank_key`)."""
    return sorted(candidates, key=lambda c: c.key, reverse=True)

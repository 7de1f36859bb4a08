"""Variants: K candidates of one request, each verified and saved as a run of one group, ranked.

Writers choose among options. `service.start(..., variants=K)` starts every candidate as an ordinary `LiveRun`
(origin `variant`, one shared `group_id`), so it is verified, saved and shown like any run; the K requests run
concurrently (the embedded llama.cpp server has 4 parallel slots; other servers get parallel requests). This
module says how the K requests differ and how the finished ones rank: a text no writer would keep (a loop, a
number list: `quality.junk`) after every other, then verified first, then the closest to the target, then one that
keeps the request's point (not less than half the instruction's words another variant keeps: `quality.on_point`),
then for a rewrite the facts of the writer's text it kept (rewrite.Faithfulness.rank: facts kept, less facts
invented), then the judge's rating when one was configured, else the offline score (quality.py, which counts a
cut-off ending against a text), then the model's own view of the ending, then fluency. So Copy and the downloads,
which use the best one, never default to junk while a better variant exists. Variants with the same text are one
(`collapse`): the first keeps a count of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from .assessment import Assessment
from .outcome import Outcome
from .prompts import rewrite_source
from .quality import on_point
from .request import Request
from .rewrite import saved_faithfulness
from .runs import assessment_of, verdict_of
from .vocab import MAX_VARIANTS

if TYPE_CHECKING:  # annotations only: ranking a run's texts needs no database
    from .storage import RunRecord

_T = TypeVar("_T")


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
    faithful: tuple[float, float] | None = None,
    deviation: int | None = None,
    on_point: bool = True,
) -> tuple:
    """Sort key, best first when sorted in reverse: not junk, verified, then the closest to the target (a baseline
    text "off by -8" before one "off by -19", whatever their scores), then on the request's point (`quality.on_point`:
    "I'm here to help." after the reminder), then a rewrite's faithfulness (facts kept first), then judge, else
    offline score, then the ending score, then fluency (an unknown one below any known)."""
    quality = judge_score if judge_score is not None else score
    known = lambda x: x if x is not None else -1.0  # noqa: E731
    close = -abs(deviation) if deviation is not None else 0
    faith = faithful or (-1.0, -1.0)
    return (not junk, verified, close, on_point, faith, known(quality), known(end_probability), known(fluency))


def run_rank_key(run: RunRecord, on_point: bool = True) -> tuple:
    """`rank_key` of a saved run (the Write page's variant cards)."""
    junk_ = assessment_of(run).junk
    verdict = verdict_of(run)
    return rank_key(
        verdict.verified,
        run.judge_score,
        run.score,
        run.fluency,
        junk=junk_,
        end_probability=run.end_probability,
        faithful=found.rank if (found := saved_faithfulness(run)) is not None else None,
        deviation=verdict.deviation,
        on_point=on_point,
    )


@dataclass
class Candidate:
    """One finished variant: its outcome, saved run id, offline score and (if judged) the judge's rating."""

    outcome: Outcome
    run_id: int | None
    score: float | None
    judge_score: float | None = None
    copies: int = 1
    on_point: bool = True  # keeps the request's point as well as the other variants (`quality.on_point`)

    @property
    def assessment(self) -> Assessment:
        """Its one judgement, made when its outcome was built (an unfinished outcome: nothing found)."""
        return self.outcome.assessment or Assessment()

    @property
    def junk(self) -> bool:
        return self.assessment.junk

    @property
    def key(self) -> tuple:
        o = self.outcome
        faithful = o.faithfulness.rank if o.faithfulness is not None else None
        return rank_key(
            o.verified,
            self.judge_score,
            self.score,
            o.fluency,
            junk=self.junk,
            end_probability=o.end_probability,
            faithful=faithful,
            deviation=o.deviation,
            on_point=self.on_point,
        )

    @property
    def explanation(self) -> str:
        """What its score means, in a writer's words (its assessment's)."""
        return self.assessment.explanation

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
            "ending": self.assessment.ending,
            "explanation": self.explanation,
            "warnings": self.assessment.messages,
            "status": o.status,
            "seconds": round(o.seconds, 3),
            "copies": self.copies,
            "faithfulness": o.faithfulness.describe() if o.faithfulness is not None else None,
        }


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Best first (see `rank_key`); the same text once (`collapse`), with how many wrote it (`copies`)."""
    if candidates:
        point = _on_point([c.outcome.text for c in candidates], candidates[0].outcome.request.instruction)
        for c, kept in zip(candidates, point, strict=True):
            c.on_point = kept
    ranked = sorted(candidates, key=lambda c: c.key, reverse=True)
    firsts = collapse(ranked, lambda c: c.outcome.text)
    for c in firsts:
        c.copies = sum(1 for other in ranked if _same(other.outcome.text, c.outcome.text))
    return firsts


def collapse(items: list[_T], text: Callable[[_T], str], keep: Callable[[_T], bool] = lambda _: False) -> list[_T]:
    """`items` with each text once (the first of those with the same text, whitespace aside, or the one `keep` says:
    the writer's pick), in their order: two variants that wrote the same text are one choice, not two."""
    at: dict[str, int] = {}
    out: list[_T] = []
    for item in items:
        key = " ".join(text(item).split())
        if key not in at:
            at[key] = len(out)
            out.append(item)
        elif keep(item):
            out[at[key]] = item
    return out


def ranked_runs(runs: list[RunRecord], picked: int | None = None) -> list[RunRecord]:
    """Saved variants best first (`run_rank_key`), the same text once (the writer's `picked` run where it is one of
    them): the Write page's cards."""
    point = dict(zip((r.id for r in runs), _on_point([r.text or "" for r in runs], _instruction(runs)), strict=True))
    ranked = sorted(runs, key=lambda r: run_rank_key(r, point[r.id]), reverse=True)
    return collapse(ranked, lambda r: r.text or "", keep=lambda r: r.id == picked)


def _on_point(texts: list[str], instruction: str) -> list[bool]:
    """`quality.on_point`, but for a rewrite (its facts kept rank it: `faithful`) every text is on point."""
    return [True] * len(texts) if rewrite_source(instruction) is not None else on_point(texts, instruction)


def _instruction(runs: list[RunRecord]) -> str:
    """The request the variants of a group answer (one instruction for all)."""
    return (runs[0].instruction or "") if runs else ""


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())

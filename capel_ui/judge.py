"""LLM-as-judge: a 1-10 rating of a run's text with FastChat's `single-v1` prompt (MT-Bench's single grader).

Only used when the writer configured a judge model (a backend with a key or URL); nothing asks for one
otherwise. The prompt ships in `bench/data/mtbench/judge_prompts.jsonl` (Apache-2.0, FastChat).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from .backends import Backend, BackendError, Options, Usage
from .vocab import PROJECT_ROOT

if TYPE_CHECKING:  # the database is opened only where a rating is saved
    from sqlalchemy import Engine

PROMPTS = PROJECT_ROOT / "capel_ui" / "bench" / "data" / "mtbench" / "judge_prompts.jsonl"
# FastChat's own patterns: "[[rating]]", falling back to "[rating]".
_RATING = (re.compile(r"\[\[(\d+\.?\d*)\]\]"), re.compile(r"\[(\d+\.?\d*)\]"))
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JudgePrompt:
    system: str
    template: str


@cache
def single_v1() -> JudgePrompt:
    """FastChat's `single-v1` entry (single answer, general questions)."""
    with PROMPTS.open(encoding="utf-8") as fh:
        for line in fh:
            entry = json.loads(line)
            if entry["name"] == "single-v1":
                return JudgePrompt(entry["system_prompt"], entry["prompt_template"])
    raise LookupError(f"no single-v1 prompt in {PROMPTS}")


def judge_messages(question: str, answer: str) -> list[dict[str, str]]:
    """The chat messages that ask the judge to rate `answer` to `question`."""
    prompt = single_v1()
    return [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.template.format(question=question, answer=answer)},
    ]


def parse_rating(reply: str) -> float | None:
    """The judge's rating, 1-10, or None when the reply holds none in range."""
    for pattern in _RATING:
        found = pattern.findall(reply)
        if found:
            value = float(found[-1])
            return value if 1.0 <= value <= 10.0 else None
    return None


def rate(backend: Backend, question: str, answer: str) -> float | None:
    """Ask `backend` for a single-v1 rating (temperature 0, as FastChat does). Raises BackendError."""
    parts = [
        item
        for item in backend.stream(judge_messages(question, answer), Options(temperature=0.0, max_tokens=1024))
        if not isinstance(item, Usage)
    ]
    return parse_rating("".join(parts))


def judge_run(engine: Engine | None, run_id: int | None, backend: Backend, question: str, answer: str) -> float | None:
    """Rate a saved run's text and store the rating with the judge's label; a failed judge stores nothing, and a
    database that refuses the rating (locked, full) costs the rating its row, not the run or the answer."""
    try:
        rating = rate(backend, question, answer)
    except BackendError:
        return None
    if engine is not None and run_id is not None and rating is not None:
        from .storage import WRITE_FAULTS, update_run

        try:
            update_run(engine, run_id, judge_score=rating, judge_model=backend.label)
        except WRITE_FAULTS as exc:
            log.info("could not save the judge's rating of run %s: %s", run_id, exc)
    return rating

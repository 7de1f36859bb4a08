"""Exports of a saved run as .txt, .md and .json.

Exports are built from the History row, never from live UI state, so what a writer downloads is exactly
what was saved. The verdict is the saved run's one verdict (`runs.verdict_of`).
No key can reach an export: runs have no key column.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .history import score_line
from .outcome import left_out
from .runs import assessment_of, target_of, verdict_of
from .storage import RunRecord
from .vocab import mode_label


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def export_json(run: RunRecord) -> str:
    """The text with everything decided about it: its verdict and its one judgement (`runs.assessment_of`)."""
    found = assessment_of(run)
    payload: dict[str, Any] = {
        "text": run.text,
        "unit": run.unit,
        "count": run.count,
        "target": run.target,
        "target_kind": run.target_kind,
        "target_low": target_of(run).low,
        "verified": verdict_of(run).verified,
        "exact": bool(run.exact),
        "origin": run.origin,
        "valid": bool(run.valid),
        "status": run.status,
        "model": run.model,
        "mode": run.mode,
        "lang": run.lang,
        "time": run.created_at.isoformat(),
        "seconds": run.seconds,
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "errors": run.errors,
        "score": found.score,
        "fluency": run.fluency,
        "end_probability": run.end_probability,
        "ending": found.ending,
        "explanation": found.explanation,
        "warnings": found.messages,
        "judge_score": run.judge_score,
        "judge_model": run.judge_model,
        "sha256": sha256(run.text),
        "run_id": run.id,
    }
    if (apart := left_out(run.written, run.text)) is not None:  # a limit's cut or an ending written again
        payload |= {"written": run.written, "left_out": apart.words}
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


def export_txt(run: RunRecord) -> str:
    """The clean text alone, ready to paste."""
    return run.text + "\n"


def export_md(run: RunRecord) -> str:
    """The text with a short provenance footer: verdict, score, model, mode, date, checksum."""
    mode = mode_label(run.mode)
    score = score_line(run)
    return (
        f"{run.text}\n\n---\n\n"
        f"*{verdict_of(run).headline(run.unit)}.* {score + ' · ' if score else ''}Model: `{run.model}` · "
        f"mode: {mode} · {run.created_at:%Y-%m-%d %H:%M} UTC · sha256 `{sha256(run.text)[:16]}…`\n"
    )


def export_name(run: RunRecord, ext: str) -> str:
    """A file name a writer can recognise: the first words of the text plus the run id."""
    words = re.findall(r"[^\W_]+", run.text)[:5]
    stem = "-".join(words).lower()[:40] or "capel"
    return f"{stem}-run{run.id}.{ext}"

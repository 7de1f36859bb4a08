"""Exports of a saved run as .txt, .md and .json.

Exports are built from the History row, never from live UI state, so what a writer downloads is exactly
what was saved. Only a complete, exact and valid run is labelled verified; the check is made here, once.
No key can reach an export: runs have no key column.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .parser import is_verified as verified_rule
from .storage import RunRecord
from .vocab import MODE_LABELS, UNIT_LABELS


def is_verified(run: RunRecord) -> bool:
    """A saved run, judged by the parser's one rule (complete, exact, no marker errors)."""
    return verified_rule(run.status, run.count, run.target, run.errors)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verdict(run: RunRecord) -> str:
    """One line a writer can trust: verified, or exactly why not."""
    unit = UNIT_LABELS.get(run.unit, run.unit)  # type: ignore[call-overload]
    count = run.count if run.count is not None else 0
    if is_verified(run):
        return f"Verified: {count}/{run.target} {unit}."
    reasons = []
    if run.status != "complete":
        reasons.append(f"run {run.status}")
    if count != run.target:
        reasons.append(f"off by {count - run.target:+d}")
    if run.errors:
        reasons.append(f"{len(run.errors)} marker error(s)")
    return f"Not verified: {count}/{run.target} {unit} ({', '.join(reasons) or 'unchecked'})."


def export_json(run: RunRecord) -> str:
    payload: dict[str, Any] = {
        "text": run.text,
        "unit": run.unit,
        "count": run.count,
        "target": run.target,
        "verified": is_verified(run),
        "exact": bool(run.exact),
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
        "sha256": sha256(run.text),
        "run_id": run.id,
    }
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


def export_txt(run: RunRecord) -> str:
    """The clean text alone, ready to paste."""
    return run.text + "\n"


def export_md(run: RunRecord) -> str:
    """The text with a short provenance footer: verdict, model, mode, date, checksum."""
    mode = MODE_LABELS.get(run.mode, run.mode)  # type: ignore[call-overload]
    return (
        f"{run.text}\n\n---\n\n"
        f"*{verdict(run)}* Model: `{run.model}` · mode: {mode} · "
        f"{run.created_at:%Y-%m-%d %H:%M} UTC · sha256 `{sha256(run.text)[:16]}…`\n"
    )


def export_name(run: RunRecord, ext: str) -> str:
    """A file name a writer can recognise: the first words of the text plus the run id."""
    words = re.findall(r"[^\W_]+", run.text)[:5]
    stem = "-".join(words).lower()[:40] or "capel"
    return f"{stem}-run{run.id}.{ext}"

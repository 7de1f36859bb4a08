"""Saved runs as people read them: History's table rows, one run in full, and its JSON.

The History page and `python -m capel_ui history` draw the same rows from here, so a run reads the same
in the browser and in a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .ending import ending_help
from .outcome import left_out
from .parser import check_output
from .quality import QualityWarning
from .repair import calls_line
from .runs import assessment_of, display_status, target_of, verdict_of
from .storage import RunRecord
from .vocab import MARKER_MODES, made_by, mode_label

PREVIEW_CHARS = 90


def preview(text: str, n: int = PREVIEW_CHARS) -> str:
    """The text on one line, cut to n characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def history_rows(runs: Sequence[RunRecord], now: datetime | None = None) -> list[dict[str, Any]]:
    """One row per run, the columns History shows (stale running rows shown as interrupted)."""
    return [
        {
            "id": r.id,
            "created": r.created_at.strftime("%Y-%m-%d %H:%M"),
            "status": display_status(r, now),
            "verified": "✓" if verdict_of(r, now).verified else "",
            "origin": r.origin,
            "model": r.model,
            "mode": mode_label(r.mode),
            "lang": r.lang,
            "target": target_of(r).label,
            "count": r.count,
            "errors": len(r.errors),
            "ending": ending_label(r),
            "score": run_score(r),
            "text": preview(r.text or r.instruction),
        }
        for r in runs
    ]


def ending_label(run: RunRecord) -> str:
    """History's "ending" column: what the model thinks of the ending, or for a text no writer would keep
    (`quality.junk`) that instead, as beside its badge ("ends naturally" beside a loop read as praise)."""
    return assessment_of(run).ending or ""


def history_table(runs: Sequence[RunRecord]) -> str:
    """A plain-text table for a terminal, newest first; a hint when there is nothing to show."""
    if not runs:
        return "No runs match. Runs from Write, Compare and `generate` are saved here.\n"
    rows = history_rows(runs)
    cols = ("id", "created", "status", "verified", "origin", "model", "mode", "count", "ending", "score", "text")
    cells = [[_cell(row, c) for c in cols] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(cols)]
    widths[-1] = len(cols[-1])  # the text column is last and not padded
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in cells]
    return "\n".join(lines) + "\n"


def _cell(row: dict[str, Any], col: str) -> str:
    if col == "count":
        return f"{row['count'] if row['count'] is not None else '–'}/{row['target']}"
    if col == "score":
        return "–" if row["score"] is None else f"{row['score']:g}"
    return str(row[col])


def show_run(run: RunRecord) -> str:
    """One run in full, for `history show ID`."""
    verdict = verdict_of(run)
    lines = [
        f"Run {run.id} · {run.created_at:%Y-%m-%d %H:%M:%S} UTC · {run.origin}",
        f"{verdict.headline(run.unit)}",
        *([f"ending: {ending_help(run.end_probability)}"] if run.end_probability is not None else []),
        f"{made_by(run.model, run.mode)} · {run.lang} · {target_of(run).describe(run.unit)}",
    ]
    if run.failure:
        lines.append(f"failure: {run.failure}")
    if run.notice:
        lines.append(f"note: {run.notice}")
    if run.errors:
        kinds = sorted({str(e.get("type")) for e in run.errors})
        lines.append(f"marker errors: {len(run.errors)} ({', '.join(kinds)})")
    if score_line(run):
        lines.append(score_line(run))
    lines += [f"warning: {w.message}" for w in run_warnings(run)]
    if run.attempts:
        lines.append(calls_line(run.attempts))
    apart = left_out(run.written, run.text)
    if apart is not None:
        n = len(apart.words.split())
        lines.append(f"left out: “{apart.words}” ({n} word(s) the model wrote; its whole text is below)")
    lines += ["", "Instruction:", run.instruction, "", "Text:", run.text, ""]
    if apart is not None and run.written:
        lines += ["The model's whole text (the words above put back):", run.written.strip(), ""]
    for title, text in set_aside(run.planned_ending):
        lines += [f"{title}:", text, ""]
    return "\n".join(lines)


def set_aside(planned: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The texts a planned exact run set aside, each with what it was (the notice says they are kept with the run):
    the first text that turned into a list nobody asked for, the first text padded to the count or the answer for
    more content that did not stand."""
    plan = planned or {}
    listed, more = plan.get("list") or {}, plan.get("more") or {}
    out = []
    if listed.get("written"):
        out.append(("The first text, which turned into a list of numbers nobody asked for", listed["written"].strip()))
    if more.get("kept") and more.get("written"):
        out.append((f"The first text, padded to the count after {more['ended_at']} words", more["written"].strip()))
    elif more.get("answer"):
        out.append(("The answer for more content, which did not stand", more["answer"].strip()))
    return out


def run_json(run: RunRecord) -> dict[str, Any]:
    """A run as JSON (the same fields as the CSV), with its shown status and verdict."""
    verdict = verdict_of(run)
    data = {name: getattr(run, name) for name in run.__dataclass_fields__}  # type: ignore[attr-defined]
    for key, value in data.items():
        if isinstance(value, datetime):
            data[key] = value.isoformat()
    apart = left_out(run.written, run.text)
    shown = {"shown_status": display_status(run), "verified": verdict.verified}
    return {**data, **shown, "left_out": apart.words if apart is not None else None}


def marker_spans(run: RunRecord) -> tuple[tuple[int, int], ...]:
    """Where the saved run's markers sit in its raw output, found by the one parser (none outside marker modes)."""
    if run.mode not in MARKER_MODES:
        return ()
    draft = run.mode == "draft-capel"
    return check_output(run.raw, run.target, run.lang, run.unit, draft=draft, code=run.code).marker_spans  # type: ignore[arg-type]


# ----- quality (issue 12) -------------------------------------------------------------------------------------


def run_score(run: RunRecord) -> float | None:
    """The score a run is ranked and listed by: the judge's 1-10 rating if it was judged, else the offline 0-10."""
    return run.judge_score if run.judge_score is not None else assessment_of(run).score


def score_line(run: RunRecord) -> str:
    """ "score 6.2: reads smoothly, ends naturally · judge 7 (gpt-4.1)", or "" for a run with no score yet: the
    number and what it means in a writer's words (the run's assessment), never a bare fluency figure."""
    found = assessment_of(run)
    parts = []
    if found.score is not None:
        parts.append(f"score {found.score:g}: {found.explanation}")
    if run.judge_score is not None:
        parts.append(f"judge {run.judge_score:g} ({run.judge_model})")
    return " · ".join(parts)


def run_warnings(run: RunRecord) -> list[QualityWarning]:
    """The run's quality warnings as its assessment holds them (a model that does not write the language first)."""
    return list(assessment_of(run).warnings)

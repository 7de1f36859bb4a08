"""CSV export of runs for the history page's download button and the CLI."""

from __future__ import annotations

import csv
import dataclasses
import io
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .records import RunRecord
from .repo import clean_base_url

CSV_COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RunRecord))
"""Header of runs_to_csv: exactly the run columns (there is no key column to leak)."""


def errors_summary(errors: Iterable[Mapping[str, Any]]) -> str:
    """Compact 'type×count' list, e.g. 'skip×2; early_stop×1', in first-seen order; '' for none."""
    counts = Counter(str(e.get("type", "?")) for e in errors)
    return "; ".join(f"{kind}×{n}" for kind, n in counts.items())


def _cell(name: str, value: Any) -> str:
    if value is None:
        return ""
    if name == "errors":
        return errors_summary(value)
    if name == "base_url":
        return clean_base_url(value) or ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def runs_to_csv(runs: Iterable[RunRecord]) -> str:
    """RFC 4180 CSV (header row, CRLF, quoted where needed) of the runs; encode with 'utf-8-sig' for Excel.

    Cells are written verbatim: a model output starting with '=' is not defused, so tell spreadsheet users.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for run in runs:
        writer.writerow([_cell(name, getattr(run, name)) for name in CSV_COLUMNS])
    return buffer.getvalue()

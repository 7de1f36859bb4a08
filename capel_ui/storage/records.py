"""Plain, detached, immutable rows handed back by the repository functions.

Why not ORM objects: callers (Streamlit pages, worker threads, the CLI) keep results around after the
session has closed; a frozen dataclass can never lazy-load, raise DetachedInstanceError, or be mutated
into thinking it saved something. Field names and order equal the table columns (a test checks it).
Use dataclasses.asdict() to feed pandas/plotly.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One row of `runs`. Timestamps are aware UTC; errors is a list of {type,start,end,message}."""

    id: int
    created_at: datetime
    updated_at: datetime
    status: str
    instruction: str
    prompt: str
    raw: str
    text: str
    draft: str | None
    model: str
    backend: str
    base_url: str | None
    mode: str
    lang: str
    unit: str
    target: int
    count: int | None
    exact: bool | None
    valid: bool | None
    errors: list[dict[str, Any]]
    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float | None
    first_token_seconds: float | None
    temperature: float | None
    code: bool
    failure: str | None
    comparison_id: str | None


@dataclass(frozen=True, slots=True)
class BenchRunRecord:
    """One row of `bench_runs`, plus how many results it has stored (result_count)."""

    id: int
    key: str
    suite: str
    model: str
    base_url: str | None
    modes: str
    lengths: str
    limit: int | None
    seed: int | None
    created_at: datetime
    updated_at: datetime
    status: str
    result_count: int


@dataclass(frozen=True, slots=True)
class BenchResultRecord:
    """One row of `bench_results`."""

    id: int
    bench_run_id: int
    item_id: str
    lang: str
    target: int
    mode: str
    model: str
    status: str
    count: int | None
    exact: bool | None
    valid: bool | None
    errors: list[dict[str, Any]]
    error_message: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float | None
    raw: str
    text: str
    created_at: datetime

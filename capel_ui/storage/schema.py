"""The database schema, written once: four tables as SQLAlchemy mapped classes, and the records read from them.

`Run`, `BenchRun`, `BenchResult` and `SchemaMigration` are the only full description of the tables. A new
database is created from them (`Base.metadata.create_all`); an older one is brought up to them by the small
numbered steps in `engine.py`. Adding a column: declare it here, then add a step there (a test compares a
freshly created schema with an upgraded one).

A column's `info` carries what the repository checks on write: `choices` (its vocabulary, from `vocab`)
and `comma_list` (a list given for it is stored comma-joined).

Records (`RunRecord`, `BenchRunRecord`, `BenchResultRecord`) are frozen dataclasses generated from the
mapped classes, one field per column in column order (plus `result_count` on bench runs). Why not hand out
the ORM objects: callers (Streamlit pages, worker threads, the CLI) keep rows long after the session is
gone, and a detached ORM object can still be mutated or, if a column is ever expired, try to lazy-load. A
frozen copy can do neither, `dataclasses.asdict` feeds pandas and JSON, and generating it from the mapped
class keeps the column list in one place.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any, get_args, get_type_hints

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint, false
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator, TypeEngine

from ..vocab import BENCH_CONTROLS, BENCH_RESULT_STATUSES, BENCH_RUN_STATUSES, ORIGINS, STATUSES, TARGET_KINDS


def utcnow() -> datetime:
    """Current time as an aware UTC datetime: the one clock every timestamp column uses."""
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """Aware UTC version of `value`; a naive datetime is taken to be UTC already."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that always comes back timezone-aware UTC, whatever the backend.

    PostgreSQL stores the instant (timestamptz); SQLite has no time zones, so values are converted to UTC
    and stored naive. Either way comparisons, filters and ordering are in UTC; naive inputs count as UTC.
    """

    impl = DateTime
    cache_ok = True

    def __init__(self) -> None:
        super().__init__(timezone=True)

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = as_utc(value)
        return value if dialect.name == "postgresql" else value.replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value)


ErrorList = list[dict[str, Any]]


class Base(DeclarativeBase):
    """Python types map to column types: str is unbounded TEXT unless a column says String(n)."""

    type_annotation_map: dict[Any, TypeEngine[Any] | type[TypeEngine[Any]]] = {  # noqa: RUF012 (SQLAlchemy API)
        datetime: UTCDateTime,
        str: Text,
        int: Integer,
        float: Float,
        bool: Boolean,
    }


class Run(Base):
    """One generation (Write, Compare, CLI, ...): inputs, the output saved as it streams, and its verdict."""

    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # Where the run was started. Required on every write; the server default only fills old rows' ALTER TABLE.
    origin: Mapped[str] = mapped_column(String(16), server_default="unknown", info={"choices": ORIGINS})
    status: Mapped[str] = mapped_column(String(16), default="running", info={"choices": STATUSES})
    # verdict.decide(...).verified, decided by the caller when the run closes; storage never computes it.
    verified: Mapped[bool] = mapped_column(default=False, server_default=false())
    instruction: Mapped[str] = mapped_column(default="")
    prompt: Mapped[str] = mapped_column(default="")
    raw: Mapped[str] = mapped_column(default="")
    text: Mapped[str] = mapped_column(default="")
    draft: Mapped[str | None]
    model: Mapped[str] = mapped_column(String(512), index=True)
    backend: Mapped[str] = mapped_column(String(32))
    base_url: Mapped[str | None] = mapped_column(String(1024))  # credentials stripped (repo.clean_base_url)
    mode: Mapped[str] = mapped_column(String(64), index=True)
    lang: Mapped[str] = mapped_column(String(16))
    unit: Mapped[str] = mapped_column(String(32))
    target: Mapped[int]  # N of exactly N and at most N; the upper bound of a range
    count: Mapped[int | None]
    exact: Mapped[bool | None]  # the count meets the target (equals N, is at most N, lies in the range)
    valid: Mapped[bool | None]
    errors: Mapped[ErrorList] = mapped_column(JSON, default=list)  # [{type, start, end, message}, ...]
    prompt_tokens: Mapped[int | None]
    completion_tokens: Mapped[int | None]
    seconds: Mapped[float | None]
    first_token_seconds: Mapped[float | None]
    temperature: Mapped[float | None]
    code: Mapped[bool] = mapped_column(default=False)
    failure: Mapped[str | None]
    failure_kind: Mapped[str | None] = mapped_column(String(32))  # vocab.FAILURE_KINDS
    finish_reason: Mapped[str | None] = mapped_column(String(32))  # as the backend reported it
    notice: Mapped[str | None]  # e.g. "this model misreads the countdown: baseline instruction used"
    comparison_id: Mapped[str | None] = mapped_column(String(64), index=True)  # the runs of one Compare
    group_id: Mapped[str | None] = mapped_column(String(64), index=True)  # the variants of one request
    attempts: Mapped[ErrorList] = mapped_column(JSON, default=list, server_default="[]")  # repair calls
    # Quality (issue 12): fluency from the model's token logprobs (0-1), the offline 0-10 score (quality.py),
    # and an LLM judge's 1-10 rating (FastChat single-v1) with the judge's model label, when one was configured.
    fluency: Mapped[float | None]
    score: Mapped[float | None]
    judge_score: Mapped[float | None]
    judge_model: Mapped[str | None] = mapped_column(String(512))
    # What `target` is: exactly N, at most N, or the upper bound of a range whose lower bound is target_low.
    target_kind: Mapped[str] = mapped_column(
        String(16), default="exactly", server_default="exactly", info={"choices": TARGET_KINDS}
    )
    target_low: Mapped[int | None]
    # The model's probability of ending its answer right after the text (issue 19, ending.py), where the server
    # can say: >= 0.5 "ends naturally", else "cut off".
    end_probability: Mapped[float | None]
    # A rewrite's faithfulness (issue 21, rewrite.faithfulness): the share of the writer's content words it kept,
    # and the share of its words that are not in the writer's text. None on runs that are not rewrites.
    source_kept: Mapped[float | None]
    source_new: Mapped[float | None]
    # A batch (issue 35, capel_ui/batch): every text of one spreadsheet shares its batch id (the input's content
    # hash and options), and `batch_row` names its row and slot (`3`, `3 · headline 7`), so a batch run again
    # skips what is complete.
    batch_id: Mapped[str | None] = mapped_column(String(64), index=True)
    batch_row: Mapped[str | None] = mapped_column(String(255))
    # A rewrite's facts (issue 32, facts.FactCheck.as_json) as JSON text: {"total": 11, "lost": ["$3.4 million"],
    # "invented": []}. None on runs that are not rewrites, and on Chinese ones.
    source_facts: Mapped[str | None]
    # Issue 31: the model's whole text where the run's text keeps less or other than it wrote (a limit's cut at a
    # sentence end, an ending written again), so nothing it wrote is lost and "Put the words back" can restore it.
    # None where the text is all the model wrote.
    written: Mapped[str | None]
    # Issue 44: the one judgement of the finished text (assessment.Assessment.as_json): its warnings, junk and why,
    # the ending label, score, explanation and notes, decided once when the run closed and read by every surface.
    # None on a run still running, and on an old run until it is assessed (`runs.assess_saved`).
    assessment: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), info={"object": True})
    # What a planned exact text weighed (generation.Generation.planned_ending): the ending search, and the texts set
    # aside, the first text padded to the count where the model was asked for more ("more"), the first text that
    # turned into a list nobody asked for ("list"), so the notice's "kept with the run" holds. None on other runs.
    planned_ending: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), info={"object": True})


class BenchRun(Base):
    """One benchmark invocation, found again by `key` so an interrupted run can resume."""

    __tablename__ = "bench_runs"
    __table_args__ = (UniqueConstraint("key", name="uq_bench_runs_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(128))
    suite: Mapped[str] = mapped_column(String(128))
    model: Mapped[str] = mapped_column(String(512))
    base_url: Mapped[str | None] = mapped_column(String(1024))
    modes: Mapped[str] = mapped_column(String(512), info={"comma_list": True})
    lengths: Mapped[str] = mapped_column(String(1024), default="", info={"comma_list": True})
    limit: Mapped[int | None]
    seed: Mapped[int | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    status: Mapped[str] = mapped_column(String(16), default="running", info={"choices": BENCH_RUN_STATUSES})
    # LIFEBench's control method (equal to, at most, at least): part of the key, so a resume never mixes them.
    control: Mapped[str] = mapped_column(
        String(16), default="equal", server_default="equal", info={"choices": BENCH_CONTROLS}
    )


class BenchResult(Base):
    """One (item, target, mode) outcome of a benchmark run; unique so resuming skips finished work."""

    __tablename__ = "bench_results"
    __table_args__ = (UniqueConstraint("bench_run_id", "item_id", "target", "mode", name="uq_bench_results_item"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bench_run_id: Mapped[int] = mapped_column(
        ForeignKey("bench_runs.id", ondelete="CASCADE", name="fk_bench_results_bench_run_id")
    )
    item_id: Mapped[str] = mapped_column(String(255))
    lang: Mapped[str] = mapped_column(String(16))
    target: Mapped[int]
    mode: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(512))
    status: Mapped[str] = mapped_column(String(16), info={"choices": BENCH_RESULT_STATUSES})
    count: Mapped[int | None]
    exact: Mapped[bool | None]
    valid: Mapped[bool | None]
    errors: Mapped[ErrorList] = mapped_column(JSON, default=list)
    error_message: Mapped[str | None]
    prompt_tokens: Mapped[int | None]
    completion_tokens: Mapped[int | None]
    seconds: Mapped[float | None]
    raw: Mapped[str] = mapped_column(default="")
    text: Mapped[str] = mapped_column(default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    fluency: Mapped[float | None]  # as on runs (issue 12)
    score: Mapped[float | None]
    calls: Mapped[int | None]  # model calls the sample took (more than 1 when repaired)
    # The run's control, on each result as `model` is, so aggregation needs nothing but the results.
    control: Mapped[str] = mapped_column(
        String(16), default="equal", server_default="equal", info={"choices": BENCH_CONTROLS}
    )
    end_probability: Mapped[float | None]  # as on runs (issue 19)


class SchemaMigration(Base):
    """Which schema versions a database has (see engine.migrate): 1 is the first shipped schema."""

    __tablename__ = "schema_migrations"

    version: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(200))
    applied_at: Mapped[datetime]


# --- records ----------------------------------------------------------------------------------------


def _record_class(mapped: type[Base], doc: str, extra: tuple[tuple[str, type], ...] = ()) -> type[Any]:
    """A frozen dataclass `<Class>Record` with one field per column of `mapped`, typed as declared there."""
    keys = list(mapped.__table__.columns.keys())
    # Resolve just these annotations (strings here: postponed evaluation) in this module's namespace.
    holder = type("_", (), {"__annotations__": {k: mapped.__annotations__[k] for k in keys}, "__module__": __name__})
    hints = get_type_hints(holder)
    fields = [(key, get_args(hints[key])[0]) for key in keys]  # Mapped[X] -> X
    name = f"{mapped.__name__}Record"
    record = dataclasses.make_dataclass(name, [*fields, *extra], frozen=True, slots=True)
    record.__module__, record.__doc__ = __name__, doc
    return record


RunRecord = _record_class(
    Run, "One row of `runs`, detached and frozen. Timestamps are aware UTC; errors and attempts are lists of dicts."
)
BenchRunRecord = _record_class(
    BenchRun, "One row of `bench_runs`, plus how many results it has stored.", extra=(("result_count", int),)
)
BenchResultRecord = _record_class(BenchResult, "One row of `bench_results`, detached and frozen.")

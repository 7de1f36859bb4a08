"""ORM models for runs and benchmark results.

These describe the tables for queries; they never create them. The schema is built by the numbered
migrations in `migrations.py` (frozen DDL), and a test checks the two agree. When you add a column here,
add a migration that adds it too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from .coltypes import UTCDateTime, long_text, utcnow

RUN_STATUSES: tuple[str, ...] = ("running", "complete", "partial", "failed", "cancelled")
BENCH_RUN_STATUSES: tuple[str, ...] = ("running", "complete", "interrupted")
BENCH_RESULT_STATUSES: tuple[str, ...] = ("ok", "error")

ErrorList = list[dict[str, Any]]


class Base(DeclarativeBase):
    """Declarative base. Its metadata is for queries and schema checks only, never create_all()."""


class Run(Base):
    """One generation run from the app or CLI: inputs, streamed output so far, and its verification."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_created_at", "created_at"),
        Index("ix_runs_model", "model"),
        Index("ix_runs_mode", "mode"),
        Index("ix_runs_comparison_id", "comparison_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
    status: Mapped[str] = mapped_column(String(16), default="running")
    instruction: Mapped[str] = mapped_column(long_text(), default="")
    prompt: Mapped[str] = mapped_column(long_text(), default="")
    raw: Mapped[str] = mapped_column(long_text(), default="")
    text: Mapped[str] = mapped_column(long_text(), default="")
    draft: Mapped[str | None] = mapped_column(long_text())
    model: Mapped[str] = mapped_column(String(512))
    backend: Mapped[str] = mapped_column(String(32))
    base_url: Mapped[str | None] = mapped_column(String(1024))
    mode: Mapped[str] = mapped_column(String(64))
    lang: Mapped[str] = mapped_column(String(16))
    unit: Mapped[str] = mapped_column(String(32))
    target: Mapped[int] = mapped_column(Integer)
    count: Mapped[int | None] = mapped_column(Integer)
    exact: Mapped[bool | None] = mapped_column(Boolean)
    valid: Mapped[bool | None] = mapped_column(Boolean)
    errors: Mapped[ErrorList] = mapped_column(JSON, default=list)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    seconds: Mapped[float | None] = mapped_column(Float)
    first_token_seconds: Mapped[float | None] = mapped_column(Float)
    temperature: Mapped[float | None] = mapped_column(Float)
    code: Mapped[bool] = mapped_column(Boolean, default=False)
    failure: Mapped[str | None] = mapped_column(long_text())
    comparison_id: Mapped[str | None] = mapped_column(String(64))


class BenchRun(Base):
    """One benchmark invocation, found again by `key` so an interrupted run can resume."""

    __tablename__ = "bench_runs"
    __table_args__ = (
        UniqueConstraint("key", name="uq_bench_runs_key"),
        Index("ix_bench_runs_created_at", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(128))
    suite: Mapped[str] = mapped_column(String(128))
    model: Mapped[str] = mapped_column(String(512))
    base_url: Mapped[str | None] = mapped_column(String(1024))
    modes: Mapped[str] = mapped_column(String(512))
    lengths: Mapped[str] = mapped_column(String(1024), default="")
    limit: Mapped[int | None] = mapped_column(Integer)
    seed: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
    status: Mapped[str] = mapped_column(String(16), default="running")


class BenchResult(Base):
    """One (item, target, mode) outcome of a benchmark run; unique so resuming skips finished work."""

    __tablename__ = "bench_results"
    __table_args__ = (UniqueConstraint("bench_run_id", "item_id", "target", "mode", name="uq_bench_results_item"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bench_run_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("bench_runs.id", ondelete="CASCADE", name="fk_bench_results_bench_run_id")
    )
    item_id: Mapped[str] = mapped_column(String(255))
    lang: Mapped[str] = mapped_column(String(16))
    target: Mapped[int] = mapped_column(Integer)
    mode: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(512))
    status: Mapped[str] = mapped_column(String(16))
    count: Mapped[int | None] = mapped_column(Integer)
    exact: Mapped[bool | None] = mapped_column(Boolean)
    valid: Mapped[bool | None] = mapped_column(Boolean)
    errors: Mapped[ErrorList] = mapped_column(JSON, default=list)
    error_message: Mapped[str | None] = mapped_column(long_text())
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    seconds: Mapped[float | None] = mapped_column(Float)
    raw: Mapped[str] = mapped_column(long_text(), default="")
    text: Mapped[str] = mapped_column(long_text(), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

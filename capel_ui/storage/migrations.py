"""Numbered schema migrations, in the style of simonw/llm.

Each migration is a function `mNNN_name(conn)` that builds its own frozen DDL (Core `Table` objects on a
private `MetaData`, or portable `ALTER TABLE ... ADD COLUMN` text). They must never use the ORM models'
metadata: a column added to a model later would otherwise leak into migration 1 and break the next one.
Applied versions are recorded in `schema_migrations`; each migration runs in its own transaction.

Adding one: write `m002_something(conn)`, append it to MIGRATIONS, mirror the change in models.py.
A NOT NULL column added by ALTER TABLE needs a server_default. Never edit an applied migration.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    insert,
    inspect,
    select,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.schema import CreateTable

from ._sqlite import writer
from .coltypes import UTCDateTime, long_text, utcnow

log = logging.getLogger(__name__)

Migration = Callable[[Connection], None]

_meta = MetaData()
schema_migrations = Table(
    "schema_migrations",
    _meta,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", String(200), nullable=False),
    Column("applied_at", UTCDateTime(), nullable=False),
)


def m001_initial(conn: Connection) -> None:
    """Create runs, bench_runs and bench_results as they were first shipped (frozen; never edit)."""
    md = MetaData()
    runs = Table(
        "runs",
        md,
        Column("id", Integer, primary_key=True),
        Column("created_at", UTCDateTime(), nullable=False),
        Column("updated_at", UTCDateTime(), nullable=False),
        Column("status", String(16), nullable=False),
        Column("instruction", long_text(), nullable=False),
        Column("prompt", long_text(), nullable=False),
        Column("raw", long_text(), nullable=False),
        Column("text", long_text(), nullable=False),
        Column("draft", long_text(), nullable=True),
        Column("model", String(512), nullable=False),
        Column("backend", String(32), nullable=False),
        Column("base_url", String(1024), nullable=True),
        Column("mode", String(64), nullable=False),
        Column("lang", String(16), nullable=False),
        Column("unit", String(32), nullable=False),
        Column("target", Integer, nullable=False),
        Column("count", Integer, nullable=True),
        Column("exact", Boolean, nullable=True),
        Column("valid", Boolean, nullable=True),
        Column("errors", JSON, nullable=False),
        Column("prompt_tokens", Integer, nullable=True),
        Column("completion_tokens", Integer, nullable=True),
        Column("seconds", Float, nullable=True),
        Column("first_token_seconds", Float, nullable=True),
        Column("temperature", Float, nullable=True),
        Column("code", Boolean, nullable=False),
        Column("failure", long_text(), nullable=True),
        Column("comparison_id", String(64), nullable=True),
    )
    Index("ix_runs_created_at", runs.c.created_at)
    Index("ix_runs_model", runs.c.model)
    Index("ix_runs_mode", runs.c.mode)
    Index("ix_runs_comparison_id", runs.c.comparison_id)

    bench_runs = Table(
        "bench_runs",
        md,
        Column("id", Integer, primary_key=True),
        Column("key", String(128), nullable=False),
        Column("suite", String(128), nullable=False),
        Column("model", String(512), nullable=False),
        Column("base_url", String(1024), nullable=True),
        Column("modes", String(512), nullable=False),
        Column("lengths", String(1024), nullable=False),
        Column("limit", Integer, nullable=True),
        Column("seed", Integer, nullable=True),
        Column("created_at", UTCDateTime(), nullable=False),
        Column("updated_at", UTCDateTime(), nullable=False),
        Column("status", String(16), nullable=False),
        UniqueConstraint("key", name="uq_bench_runs_key"),
    )
    Index("ix_bench_runs_created_at", bench_runs.c.created_at)

    Table(
        "bench_results",
        md,
        Column("id", Integer, primary_key=True),
        Column(
            "bench_run_id",
            Integer,
            ForeignKey("bench_runs.id", ondelete="CASCADE", name="fk_bench_results_bench_run_id"),
            nullable=False,
        ),
        Column("item_id", String(255), nullable=False),
        Column("lang", String(16), nullable=False),
        Column("target", Integer, nullable=False),
        Column("mode", String(64), nullable=False),
        Column("model", String(512), nullable=False),
        Column("status", String(16), nullable=False),
        Column("count", Integer, nullable=True),
        Column("exact", Boolean, nullable=True),
        Column("valid", Boolean, nullable=True),
        Column("errors", JSON, nullable=False),
        Column("error_message", long_text(), nullable=True),
        Column("prompt_tokens", Integer, nullable=True),
        Column("completion_tokens", Integer, nullable=True),
        Column("seconds", Float, nullable=True),
        Column("raw", long_text(), nullable=False),
        Column("text", long_text(), nullable=False),
        Column("created_at", UTCDateTime(), nullable=False),
        UniqueConstraint("bench_run_id", "item_id", "target", "mode", name="uq_bench_results_item"),
    )
    # checkfirst: tolerate a half-applied run on backends whose DDL autocommits (MySQL).
    md.create_all(conn, checkfirst=True)


MIGRATIONS: tuple[Migration, ...] = (m001_initial,)
"""Every migration, oldest first. Append only."""

_NAME = re.compile(r"^m(\d{3})_\w+$")


def version_of(migration: Migration) -> int:
    """The version number encoded in a migration's name (m001_initial -> 1)."""
    match = _NAME.match(migration.__name__)
    if not match:
        raise ValueError(f"migration {migration.__name__!r} is not named mNNN_description")
    return int(match.group(1))


def _check_sequence(migrations: Sequence[Migration]) -> None:
    versions = [version_of(m) for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migrations must be numbered 1..n in order, got {versions}")


def _ensure_table(engine: Engine) -> None:
    """Create schema_migrations if missing; losing a creation race to another process is fine."""
    try:
        with writer(engine).begin() as conn:
            conn.execute(CreateTable(schema_migrations, if_not_exists=True))
    except DBAPIError:
        if not inspect(engine).has_table(schema_migrations.name):
            raise


def _is_applied(conn: Connection, version: int) -> bool:
    found = conn.execute(select(schema_migrations.c.version).where(schema_migrations.c.version == version))
    return found.first() is not None


def _recorded_versions(engine: Engine) -> set[int]:
    with engine.connect() as conn:
        return {row[0] for row in conn.execute(select(schema_migrations.c.version))}


def _applied_now(engine: Engine, version: int) -> bool:
    with engine.connect() as conn:
        return _is_applied(conn, version)


def applied_migrations(engine: Engine) -> list[tuple[int, str, datetime]]:
    """(version, name, applied_at) for every recorded migration, oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(select(schema_migrations).order_by(schema_migrations.c.version))
        return [(r.version, r.name, r.applied_at) for r in rows]


def migrate(engine: Engine, migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Apply the missing migrations in order, each in its own transaction; return the versions applied.

    Safe to run from several processes at once: on SQLite the transaction starts with BEGIN IMMEDIATE,
    so they queue; elsewhere a loser's DDL or version insert fails, and if a re-check shows the version
    is now recorded we carry on instead of crashing.
    """
    _check_sequence(migrations)
    _ensure_table(engine)
    done = _recorded_versions(engine)
    applied: list[int] = []
    for migration in migrations:
        version = version_of(migration)
        if version in done:
            continue
        try:
            with writer(engine).begin() as conn:
                if _is_applied(conn, version):
                    continue  # another process got there while we were deciding
                migration(conn)
                conn.execute(
                    insert(schema_migrations).values(version=version, name=migration.__name__, applied_at=utcnow())
                )
        except DBAPIError:
            # IntegrityError / OperationalError / ProgrammingError: did another process just apply it?
            if _applied_now(engine, version):
                log.info("migration %s was applied concurrently by another process", migration.__name__)
                continue
            raise
        log.info("applied migration %s", migration.__name__)
        applied.append(version)
    return applied

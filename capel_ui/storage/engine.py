"""Where the database is, how it is opened, and how its schema is created or brought up to date.

Database: DATABASE_URL (any SQLAlchemy URL; SQLite and PostgreSQL are tested), else the SQLite file
data/capel.db under the project root. get_engine() keeps one engine per URL per process: an engine owns a
connection pool, and opening one also checks the schema, which should happen once.

SQLite tuning (the default store is shared by Streamlit threads, benchmark threads and CLI processes): WAL
lets readers run during a write; busy_timeout makes a writer wait instead of failing "database is locked";
foreign_keys=ON makes ON DELETE CASCADE work. We also emit BEGIN ourselves (SQLAlchemy's documented recipe)
so that DDL is transactional and a write transaction starts with BEGIN IMMEDIATE: a deferred transaction
that reads and then writes can fail at once with SQLITE_BUSY (busy_timeout does not help there), an
IMMEDIATE one waits its turn. `writer(engine)` marks a connection as one that will write.

Durability: synchronous=NORMAL, SQLite's advice for WAL, syncs the log to disk at each checkpoint, not at each
commit. A commit is in the log file when it returns, so a killed process (kill -9, a crash, Ctrl-C) loses nothing
and the file is never damaged; a power cut or an operating system crash may lose the last commits since the last
checkpoint (the database comes back as it was before them, consistent). An fsync a commit cost a batch two a row,
2-15 ms each on a busy disk, one writer at a time. No pool pre-ping on SQLite: a file has no server to drop the
connection, and the ping was a query at every checkout.

Schema versions, and why numbered steps rather than Alembic. The schema is written once, in schema.py.
A new database is created from it (create_all) and recorded at the newest version. A database made by an
older CAPEL Studio gets the steps it lacks, in order: each `mNNN_name(conn)` in UPGRADES is a few lines of
ALTER TABLE ADD COLUMN plus a backfill, and `schema_migrations` records which versions a database has
(version 1 is the first shipped schema; every database made before steps existed has it). Each step runs in
its own transaction; on SQLite it starts with BEGIN IMMEDIATE, so processes opening the same file queue up;
on PostgreSQL a loser's DDL or version insert fails, and if a re-check shows the version recorded, it carries
on. That is Alembic's documented "create_all, then stamp head" recipe plus additive revisions, in ~100 lines;
Alembic itself would add a dependency, an env.py, a versions folder and an ini file, and we would still
have to write the race handling (it does not stop two processes upgrading one database at once), because
every app process, CLI call and benchmark opens the database and brings it up to date itself.

Steps are frozen once shipped: they name tables and columns with plain `table()`/`column()` and SQL, never
the models (a later model change must not change what an old step does). A NOT NULL column added by ALTER
TABLE needs a DEFAULT; the model declares the same server_default, so new and upgraded databases agree.
"""

from __future__ import annotations

import logging
import os
import random
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Engine, create_engine, event, inspect, make_url
from sqlalchemy.engine import Connection
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError, SQLAlchemyError
from sqlalchemy.schema import CreateTable
from sqlalchemy.sql import case, column, false, insert, select, table, true, update
from sqlalchemy.types import JSON, Boolean, Float, Integer, String, Text, TypeEngine

from ..vocab import PROJECT_ROOT
from .schema import Base, SchemaMigration, utcnow

log = logging.getLogger(__name__)

DEFAULT_DB_PATH = PROJECT_ROOT / "data" / "capel.db"
BUSY_TIMEOUT_MS = int(os.environ.get("CAPEL_DB_BUSY_TIMEOUT_MS", "5000"))
"""How long a SQLite writer waits for another's lock before the write fails (a run then tries again)."""
MIGRATE_PATIENCE_S = 15.0
"""How long opening a SQLite database goes on trying to create or upgrade its schema while other connections hold
its write lock: busy_timeout is no queue (a waiter can lose every turn to the others, as six threads creating one
file at once on a loaded machine did), and a migration tried again is safe (`migrate`)."""
WRITE_OPTION = "capel_write"
"""Execution option marking a connection that will write; on SQLite it begins with BEGIN IMMEDIATE."""


class StorageError(Exception):
    """The database cannot be opened or used; the message names it and says what to do."""


# --- SQLite tuning --------------------------------------------------------------------------------


def _lower(value: object) -> object:
    """Unicode-aware lower(); SQLite's built-in only folds ASCII, so 'É' would not match 'é'."""
    return value.lower() if isinstance(value, str) else value


def _install_sqlite_hooks(engine: Engine) -> None:
    """Pragmas, Unicode lower() and our own BEGIN on every SQLite connection; nothing for other dialects."""
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see _on_begin)
        cursor = dbapi_connection.cursor()
        try:
            if cursor.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal":  # NORMAL is safe in WAL alone
                cursor.execute("PRAGMA synchronous=NORMAL")  # a commit survives a killed process (docstring)
            cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()
        dbapi_connection.create_function("lower", 1, _lower, deterministic=True)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE_OPTION) else "BEGIN")


def writer(engine: Engine) -> Engine:
    """The same engine (shared pool and listeners) flagged for writing; harmless on other dialects."""
    return engine.execution_options(**{WRITE_OPTION: True})


# --- schema versions ------------------------------------------------------------------------------

Step = Callable[[Connection], None]


def _add_column(conn: Connection, table_name: str, name: str, type_: TypeEngine[Any], default: str | None) -> None:
    """ALTER TABLE ADD COLUMN, the type rendered for this dialect; NOT NULL with a `default` (SQL) if given."""
    ddl = f"ALTER TABLE {table_name} ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"
    conn.exec_driver_sql(ddl if default is None else f"{ddl} DEFAULT {default} NOT NULL")


def m002_run_lifecycle(conn: Connection) -> None:
    """runs: origin, verified, finish_reason, failure_kind, notice, group_id, attempts (frozen; never edit).

    Backfill: before this step only the Write and Compare pages saved runs, so origin is 'compare' where a
    comparison_id is set, else 'write'; verified is the old rule, status 'complete' and exact and valid.
    """
    no = str(false().compile(dialect=conn.dialect))  # 0 on SQLite, false on PostgreSQL, as create_all writes it
    for name, type_, default in (
        ("origin", String(16), "'unknown'"),
        ("verified", Boolean(), no),
        ("finish_reason", String(32), None),
        ("failure_kind", String(32), None),
        ("notice", Text(), None),
        ("group_id", String(64), None),
        ("attempts", JSON(), "'[]'"),
    ):
        _add_column(conn, "runs", name, type_, default)
    conn.exec_driver_sql("CREATE INDEX ix_runs_group_id ON runs (group_id)")
    runs = table("runs", *(column(n) for n in ("origin", "verified", "comparison_id", "status", "exact", "valid")))
    conn.execute(update(runs).values(origin=case((runs.c.comparison_id.is_not(None), "compare"), else_="write")))
    old_rule = (runs.c.status == "complete", runs.c.exact == true(), runs.c.valid == true())
    conn.execute(update(runs).where(*old_rule).values(verified=true()))


def m003_target_kinds(conn: Connection) -> None:
    """runs: target_kind ('exactly', 'at_most', 'range') and target_low (frozen; never edit).

    Backfill: every run before this step asked for exactly `target`, so target_low is target.
    """
    _add_column(conn, "runs", "target_kind", String(16), "'exactly'")
    _add_column(conn, "runs", "target_low", Integer(), None)
    runs = table("runs", column("target"), column("target_low"))
    conn.execute(update(runs).values(target_low=runs.c.target))


def m004_quality_scores(conn: Connection) -> None:
    """runs: fluency, score, judge_score, judge_model; bench_results: fluency, score (frozen; never edit).
    Old rows have none."""
    for name, type_ in (
        ("fluency", Float()),
        ("score", Float()),
        ("judge_score", Float()),
        ("judge_model", String(512)),
    ):
        _add_column(conn, "runs", name, type_, None)
    for name in ("fluency", "score"):
        _add_column(conn, "bench_results", name, Float(), None)


def m005_bench_calls(conn: Connection) -> None:
    """bench_results: calls, the model calls a sample took (repair; frozen, never edit). Old results have none."""
    _add_column(conn, "bench_results", "calls", Integer(), None)


def m006_bench_control(conn: Connection) -> None:
    """bench_runs, bench_results: control, LIFEBench's control method (frozen; never edit).

    Backfill: every benchmark before this step ran the Equal-To track, which the default 'equal' says.
    """
    for table_name in ("bench_runs", "bench_results"):
        _add_column(conn, table_name, "control", String(16), "'equal'")


def m007_end_probability(conn: Connection) -> None:
    """runs, bench_results: end_probability, the model's P(end) after the text (frozen; never edit).
    Old rows have none."""
    for table_name in ("runs", "bench_results"):
        _add_column(conn, table_name, "end_probability", Float(), None)


def m008_rewrite_faithfulness(conn: Connection) -> None:
    """runs: source_kept, source_new, a rewrite's faithfulness (frozen; never edit). Old rows have none."""
    for name in ("source_kept", "source_new"):
        _add_column(conn, "runs", name, Float(), None)


def m009_batch(conn: Connection) -> None:
    """runs: batch_id (indexed) and batch_row, a batch's texts (frozen; never edit). Old rows have none."""
    _add_column(conn, "runs", "batch_id", String(64), None)
    _add_column(conn, "runs", "batch_row", String(255), None)
    conn.exec_driver_sql("CREATE INDEX ix_runs_batch_id ON runs (batch_id)")


def m010_rewrite_facts(conn: Connection) -> None:
    """runs: source_facts, a rewrite's facts kept and lost (frozen; never edit). Old rows have none."""
    _add_column(conn, "runs", "source_facts", Text(), None)


def m011_written(conn: Connection) -> None:
    """runs: written, the model's whole text where the run kept less of it (frozen; never edit). Old rows have none."""
    _add_column(conn, "runs", "written", Text(), None)


def m012_assessment(conn: Connection) -> None:
    """runs: assessment, the one judgement of a finished text (frozen; never edit). Old rows have none until
    `runs.assess_saved` assesses them, once, with the rules of the day."""
    _add_column(conn, "runs", "assessment", JSON(), None)


def m013_planned_ending(conn: Connection) -> None:
    """runs: planned_ending, what a planned exact text weighed and the texts it set aside (frozen; never edit). Old
    rows have none."""
    _add_column(conn, "runs", "planned_ending", JSON(), None)


UPGRADES: tuple[Step, ...] = (
    m002_run_lifecycle,
    m003_target_kinds,
    m004_quality_scores,
    m005_bench_calls,
    m006_bench_control,
    m007_end_probability,
    m008_rewrite_faithfulness,
    m009_batch,
    m010_rewrite_facts,
    m011_written,
    m012_assessment,
    m013_planned_ending,
)
"""The steps that bring an older database up to schema.py, oldest first. Append only; never edit one."""

INITIAL = "m001_initial"
_STEP_NAME = re.compile(r"^m(\d{3})_\w+$")
_versions_table = SchemaMigration.__table__


def _numbered(steps: Sequence[Step]) -> list[tuple[int, Step]]:
    """(version, step) pairs; the steps must be named m002_..., m003_..., in order."""
    matches = [_STEP_NAME.match(step.__name__) for step in steps]
    versions = [int(m.group(1)) if m else -1 for m in matches]
    if versions != list(range(2, len(steps) + 2)):
        names = [step.__name__ for step in steps]
        raise ValueError(f"upgrade steps must be named m002_..., m003_..., numbered in order; got {names}")
    return list(zip(versions, steps, strict=True))


def _recorded(conn: Connection) -> set[int]:
    return set(conn.execute(select(_versions_table.c.version)).scalars())


def _recorded_now(engine: Engine) -> set[int]:
    with engine.connect() as conn:
        return _recorded(conn)


def _ensure_versions_table(engine: Engine) -> None:
    """Create schema_migrations if missing; losing a creation race to another process is fine."""
    try:
        with writer(engine).begin() as conn:
            conn.execute(CreateTable(_versions_table, if_not_exists=True))
    except DBAPIError:
        if not inspect(engine).has_table(_versions_table.name):
            raise


def _apply_once(engine: Engine, versions: Iterable[tuple[int, str]], action: Step) -> bool:
    """Run `action` and record `versions` in one write transaction, unless the first is already recorded.

    False if another process had done it, before we looked or while we were trying (we re-check on failure).
    """
    versions = list(versions)
    first = versions[0][0]
    try:
        with writer(engine).begin() as conn:
            if first in _recorded(conn):
                return False
            action(conn)
            rows = [{"version": v, "name": name, "applied_at": utcnow()} for v, name in versions]
            conn.execute(insert(_versions_table), rows)
        return True
    except DBAPIError:
        if first in _recorded_now(engine):
            log.info("schema version %s was recorded concurrently by another process", first)
            return False
        raise


def migrate(engine: Engine, upgrades: Sequence[Step] = UPGRADES) -> list[int]:
    """Create the schema in an empty database, or apply the upgrade steps it lacks; return the versions recorded.

    Safe when several processes open one database at once (see the module docstring).
    """
    steps = _numbered(upgrades)
    newest = len(steps) + 1
    _ensure_versions_table(engine)
    done = _recorded_now(engine)
    if done and max(done) > newest:
        raise StorageError(
            f"the database at {database_label(engine)} has schema version {max(done)}, newer than this CAPEL Studio "
            f"knows ({newest}); update CAPEL Studio or set DATABASE_URL to another database"
        )
    recorded: list[int] = []
    if not done:
        everything = [(1, INITIAL), *((v, step.__name__) for v, step in steps)]
        if _apply_once(engine, everything, lambda conn: Base.metadata.create_all(conn, checkfirst=True)):
            log.info("created a new database at schema version %s", newest)
            return [v for v, _ in everything]
        done = _recorded_now(engine)
    for version, step in steps:
        if version not in done and _apply_once(engine, [(version, step.__name__)], step):
            log.info("applied upgrade step %s", step.__name__)
            recorded.append(version)
    return recorded


def applied_migrations(engine: Engine) -> list[tuple[int, str, datetime]]:
    """(version, name, applied_at) of every recorded schema version, oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(select(_versions_table).order_by(_versions_table.c.version))
        return [(r.version, r.name, r.applied_at) for r in rows]


# --- engines --------------------------------------------------------------------------------------

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def database_url() -> str:
    """DATABASE_URL if set (any SQLAlchemy URL), else the SQLite file data/capel.db under the project root."""
    url = os.environ.get("DATABASE_URL", "").strip()
    if url:
        return url
    DEFAULT_DB_PATH.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{DEFAULT_DB_PATH}"


def _sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (None for other databases and in-memory ones)."""
    parsed = _parsed_url(url)
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser()


def database_label(engine: Engine) -> str:
    """Where `engine`'s database is, for messages: the SQLite file, or the URL without its password."""
    path = _sqlite_file(str(engine.url))
    return str(path) if path else engine.url.render_as_string(hide_password=True)


def database_fault(exc: SQLAlchemyError, url: str | None = None) -> StorageError:
    """A database that failed in the middle of a command (a lock held too long, a full disk, a read-only file) as
    one line naming it (`url`, default `database_url()`): what was saved before stays, the command can run again."""
    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    reason = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    url = url or database_url()
    path = _sqlite_file(url)
    where = str(path) if path else _parsed_url(url).render_as_string(hide_password=True)
    return StorageError(
        f"the database at {where} failed ({reason}); what was saved before is kept: run the command again once "
        "the database is free (a benchmark goes on where it stopped), or set DATABASE_URL to another database"
    )


_DAMAGED = ("file is not a database", "database disk image is malformed")


def _damaged(where: object, reason: str) -> StorageError:
    return StorageError(
        f"{where} is not a CAPEL Studio database (or is damaged); move it aside and a new one will be "
        f"created, or set DATABASE_URL to another database (SQLite says: {reason})"
    )


def _storage_error(engine: Engine, exc: DBAPIError) -> StorageError:
    """A StorageError for a database that could not be opened or upgraded, saying what to do."""
    reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
    if isinstance(exc.orig, sqlite3.DatabaseError) and any(d in reason for d in _DAMAGED):
        return _damaged(database_label(engine), reason)
    where = database_label(engine)
    return StorageError(f"cannot open the database at {where} ({reason}); check it, or set DATABASE_URL")


SQLITE_HEADER = b"SQLite format 3\x00"
FIRST_COLUMNS: dict[str, frozenset[str]] = {
    "runs": frozenset({"instruction", "prompt", "raw", "text", "mode", "lang", "model"}),
    "bench_runs": frozenset({"key", "suite", "model", "modes"}),
    "bench_results": frozenset({"bench_run_id", "item_id", "target", "mode"}),
    "schema_migrations": frozenset({"version", "name", "applied_at"}),
}
"""Columns each CAPEL Studio table has had since the first shipped schema: a table of one of these names without
them is another application's (a `runs` of its own, golang-migrate's `schema_migrations(version, dirty)`)."""


def _read_schema(path: Path, how: str) -> dict[str, set[str]]:
    """{table: its columns} of the SQLite file at `path`, opened with the URI parameter `how`. Each table's first
    row and every recorded schema version are read too, as opening it would (`migrate`): a damaged table page is
    found here, before a connection switches the file to WAL (which rewrites four bytes of its header)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?{how}", uri=True)
    try:
        query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!'"
        names = [n for (n,) in conn.execute(query)]
        for name in names:
            quoted = '"' + name.replace('"', '""') + '"'
            conn.execute(f"SELECT * FROM {quoted} {'' if name == 'schema_migrations' else 'LIMIT 1'}").fetchall()
        return {n: {c for (c,) in conn.execute("SELECT name FROM pragma_table_info(?)", (n,))} for n in names}
    finally:
        conn.close()


def _tables_of(path: Path) -> dict[str, set[str]]:
    """The user tables of the SQLite file at `path` and their columns, read without writing anything: the file is
    opened `immutable` (no lock, no journal, no log: nothing beside it is created, checkpointed or deleted). A file
    with a write-ahead log beside it (a process has it open, or crashed) is read again, read-only and locked,
    through that log when that read finds no table (a new database, never checkpointed) or fails (it may have
    caught a checkpoint half-way). StorageError if it cannot be read or is damaged."""
    try:
        with path.open("rb") as f:
            header = f.read(len(SQLITE_HEADER))
    except OSError as exc:
        reason = exc.strerror or exc
        raise StorageError(f"cannot read the database at {path} ({reason}); check it, or set DATABASE_URL") from exc
    if header != SQLITE_HEADER:
        raise _damaged(path, "file is not a database")
    logged = path.with_name(path.name + "-wal").exists()
    try:
        try:
            tables = _read_schema(path, "immutable=1")
        except sqlite3.DatabaseError:
            if not logged:
                raise
            tables = {}
        return _read_schema(path, "mode=ro") if logged and not tables else tables
    except sqlite3.DatabaseError as exc:
        reason = str(exc).strip()
        if any(d in reason for d in _DAMAGED):
            raise _damaged(path, reason) from exc
        raise StorageError(
            f"cannot open the database at {path} ({reason}; is its disk full or read-only?); check it, or set "
            "DATABASE_URL"
        ) from exc


def refuse_foreign_file(path: Path) -> None:
    """Raise StorageError, having written nothing, unless `path` is missing, empty, an empty SQLite database or a
    CAPEL Studio one: another application's database (its own `contacts`, or a `runs` table of its own) is never
    given our tables, and a damaged file is reported before any connection could switch it to WAL."""
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return
    if not path.is_file():
        raise StorageError(f"cannot open the database at {path} (a folder, not a file); set DATABASE_URL to a file")
    tables = _tables_of(path)
    foreign = sorted(name for name, cols in tables.items() if not cols >= FIRST_COLUMNS.get(name, {"(not ours)"}))
    if foreign:
        raise StorageError(
            f"{path} belongs to another application (its tables: {', '.join(foreign[:5])}); CAPEL Studio writes only "
            "to an empty file or its own database, so it left this one untouched: set DATABASE_URL to another file"
        )


_CREDENTIALS = re.compile(r"(//[^/@:\s]*:)[^/@\s]*@")


def _parsed_url(url: str) -> URL:
    """`url` parsed; StorageError (one line, any password hidden) for a string that is not a database URL."""
    try:
        return make_url(url)
    except ArgumentError as exc:
        shown = _CREDENTIALS.sub(r"\1***@", url)[:80]
        raise StorageError(
            f"DATABASE_URL {shown!r} is not a database URL; use sqlite:///path/to/file.db or "
            "postgresql+psycopg://user@host/dbname"
        ) from exc


def _new_engine(url: str) -> Engine:
    """`create_engine(url)`, with one line saying what to use when the URL names no driver we have."""
    parsed = _parsed_url(url)
    shown = parsed.render_as_string(hide_password=True)
    try:
        return create_engine(parsed, pool_pre_ping=parsed.get_backend_name() != "sqlite")  # a file drops nothing
    except NoSuchModuleError as exc:
        raise StorageError(
            f"no database driver for {parsed.drivername!r} in DATABASE_URL {shown}; use sqlite:///path/to/file.db "
            "or postgresql+psycopg://user@host/dbname"
        ) from exc
    except ImportError as exc:
        raise StorageError(f"the driver for {shown} is not installed ({exc}); install it or use SQLite") from exc


def _make_folder(path: Path) -> None:
    """Create the database file's folder (SQLite cannot); StorageError naming it when that is impossible."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(
            f"cannot create the folder {path.parent} for the database ({exc.strerror or exc}); "
            "set DATABASE_URL to a file in a folder you can write"
        ) from exc


def create_migrated_engine(url: str) -> Engine:
    """A new, uncached engine for `url`, its schema created or upgraded. StorageError if it cannot be used.

    Prefer get_engine(); this exists for tests and tools that need a second, independent engine.
    """
    path = _sqlite_file(url)
    if path is not None:
        _make_folder(path)
        refuse_foreign_file(path)
    engine = _new_engine(url)
    _install_sqlite_hooks(engine)
    try:
        _migrate_patiently(engine)
    except DBAPIError as exc:
        engine.dispose()
        raise _storage_error(engine, exc) from exc
    except BaseException:
        engine.dispose()
        raise
    return engine


def _migrate_patiently(engine: Engine) -> None:
    """`migrate`, tried again for up to `MIGRATE_PATIENCE_S` while SQLite says the file is busy or locked."""
    deadline = time.monotonic() + MIGRATE_PATIENCE_S
    while True:
        try:
            migrate(engine)
            return
        except OperationalError as exc:
            if not _busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(random.uniform(0.05, 0.25))  # apart from the others trying, not in step with them


def _busy(exc: DBAPIError) -> bool:
    """SQLite's SQLITE_BUSY or SQLITE_LOCKED (any extended code): another connection holds the lock."""
    code = getattr(exc.orig, "sqlite_errorcode", None)
    if not isinstance(exc.orig, sqlite3.OperationalError) or code is None:
        return False
    return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def get_engine(url: str | None = None) -> Engine:
    """The process-wide engine for `url` (default: database_url()), schema up to date; cheap after the first call."""
    key = url or database_url()
    engine = _engines.get(key)
    if engine is not None:
        return engine
    with _lock:  # also keeps this process from migrating the same database twice at once
        engine = _engines.get(key)
        if engine is None:
            engine = _engines[key] = create_migrated_engine(key)
        return engine


def dispose_engines() -> None:
    """Close every cached engine's connections and forget them (tests, shutdown, after fork)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()

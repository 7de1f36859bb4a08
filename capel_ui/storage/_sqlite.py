"""SQLite-only connection tuning, installed on an engine only when its dialect is sqlite.

Why: SQLite is the default store and is shared by Streamlit worker threads, benchmark threads and CLI
processes. WAL lets readers run during a write, busy_timeout makes writers wait instead of failing with
"database is locked", and foreign_keys=ON makes ON DELETE CASCADE work. We also take over BEGIN from
the sqlite3 module (the documented SQLAlchemy recipe) so DDL is transactional and write transactions can
start with BEGIN IMMEDIATE: a deferred transaction that reads and then writes can fail at once with
SQLITE_BUSY (busy_timeout does not help there), an IMMEDIATE one waits its turn.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.engine import Connection

WRITE_OPTION = "capel_write"
"""Execution option marking a connection that will write; on SQLite it begins with BEGIN IMMEDIATE."""

BUSY_TIMEOUT_MS = 5000


def _lower(value: object) -> object:
    """Unicode-aware lower(); SQLite's built-in only folds ASCII, so 'É' would not match 'é'."""
    return value.lower() if isinstance(value, str) else value


def install_sqlite_hooks(engine: Engine) -> None:
    """Attach the PRAGMA/BEGIN listeners; a no-op for every other dialect."""
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        if hasattr(dbapi_connection, "isolation_level"):
            dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see _on_begin)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()
        if hasattr(dbapi_connection, "create_function"):
            dbapi_connection.create_function("lower", 1, _lower, deterministic=True)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        write = conn.get_execution_options().get(WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def writer(engine: Engine) -> Engine:
    """The same engine (shared pool and listeners) flagged for writing; harmless on other dialects."""
    return engine.execution_options(**{WRITE_OPTION: True})

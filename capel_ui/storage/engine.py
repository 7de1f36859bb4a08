"""Where the database lives and how to get a migrated engine for it.

One engine per URL per process (cached): engines own connection pools, so building one per call would
leak connections and re-run the migration check every time.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from sqlalchemy import Engine, create_engine, make_url

from ._sqlite import install_sqlite_hooks
from .migrations import migrate

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
"""The folder that contains the capel_ui package."""

DEFAULT_DB_PATH = PROJECT_ROOT / "data" / "capel.db"

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def database_url() -> str:
    """DATABASE_URL if set (any SQLAlchemy URL), else the SQLite file data/capel.db under the project root."""
    url = os.environ.get("DATABASE_URL", "").strip()
    if url:
        return url
    DEFAULT_DB_PATH.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{DEFAULT_DB_PATH}"


def _ensure_sqlite_dir(url: str) -> None:
    """SQLite cannot create missing folders; make the file's parent so a fresh DATABASE_URL just works."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return
    database = parsed.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)


def create_migrated_engine(url: str) -> Engine:
    """A new, uncached engine for `url` with the SQLite hooks installed and migrations applied.

    Prefer get_engine(); this exists for tests and tools that need a second, independent engine.
    """
    _ensure_sqlite_dir(url)
    engine = create_engine(url, pool_pre_ping=True)
    install_sqlite_hooks(engine)
    migrate(engine)
    return engine


def get_engine(url: str | None = None) -> Engine:
    """The process-wide migrated engine for `url` (default: database_url()); cheap after the first call."""
    key = url or database_url()
    engine = _engines.get(key)
    if engine is not None:
        return engine
    with _lock:  # also keeps this process from migrating the same database twice at once
        engine = _engines.get(key)
        if engine is None:
            engine = create_migrated_engine(key)
            _engines[key] = engine
        return engine


def dispose_engines() -> None:
    """Close every cached engine's connections and forget them (tests, shutdown, after fork)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()

"""Column types shared by the ORM models and the migrations.

These are part of the frozen DDL contract: migration 1 creates columns with them, so changing one
changes what an *old* migration builds. Add a new type instead of editing an existing one.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, Text
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

# Dialects whose DateTime(timezone=True) really stores an offset; elsewhere we store naive UTC.
_TZ_NATIVE = frozenset({"postgresql", "oracle", "mssql"})


def utcnow() -> datetime:
    """Current time as an aware UTC datetime: the one clock every timestamp column uses."""
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """Aware UTC version of `value`; a naive datetime is taken to be UTC already (documented contract)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that always comes back timezone-aware UTC, whatever the backend.

    SQLite and MySQL drop offsets, so values are normalised to UTC and stored naive there; PostgreSQL
    (timestamptz) and friends get the aware value. Either way comparisons and ordering are in UTC.
    """

    impl = DateTime
    cache_ok = True

    def __init__(self) -> None:
        super().__init__(timezone=True)

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[datetime]:
        # MySQL's DATETIME drops microseconds by default, which would break newest-first ordering.
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = as_utc(value)
        return value if dialect.name in _TZ_NATIVE else value.replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value)


def long_text() -> TypeEngine[str]:
    """Unbounded text: plain TEXT, except MySQL/MariaDB whose TEXT stops at 64 KB (long outputs exceed it)."""
    return Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")

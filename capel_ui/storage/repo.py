"""Repository functions: the only way the app, CLI and benchmark runner touch the database.

Every function takes an Engine and opens its own short Session, so worker and benchmark threads can call
them concurrently (the Engine's pool is thread-safe; Sessions are not shared). Writes run in one
transaction each (BEGIN IMMEDIATE on SQLite, see _sqlite.py). Reads return frozen dataclasses from
records.py, never live ORM objects. Unknown field names raise ValueError, so a secret such as
`api_key=` can never be stored: there is no column for it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sqlalchemy import ColumnElement, CursorResult, Engine, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import Label

from ._sqlite import writer
from .coltypes import utcnow
from .models import (
    BENCH_RESULT_STATUSES,
    BENCH_RUN_STATUSES,
    RUN_STATUSES,
    Base,
    BenchResult,
    BenchRun,
    Run,
)
from .records import BenchResultRecord, BenchRunRecord, RunRecord

R = TypeVar("R")

_SECRETISH = re.compile(r"key|secret|token|passw|credential|auth|bearer", re.IGNORECASE)
_SECRET_PARAM = re.compile(r"key|secret|token|passw|credential|auth|sig", re.IGNORECASE)
_STATUSES: dict[type[Base], tuple[str, ...]] = {
    Run: RUN_STATUSES,
    BenchRun: BENCH_RUN_STATUSES,
    BenchResult: BENCH_RESULT_STATUSES,
}
DISTINCT_COLUMNS: tuple[str, ...] = ("model", "mode", "lang", "backend", "unit", "status", "comparison_id")
"""Run columns distinct_values() will list (string columns useful as filters)."""


# --- helpers -------------------------------------------------------------------------------------


@contextmanager
def _writing(engine: Engine) -> Iterator[Session]:
    """A session in one write transaction, committed on success, rolled back on any exception."""
    with Session(writer(engine), expire_on_commit=False) as session, session.begin():
        yield session


def _record(cls: type[R], obj: object, **extra: Any) -> R:
    """Copy the dataclass's fields off an ORM object, so nothing returned is bound to a session."""
    names = [f.name for f in dataclasses.fields(cls) if f.name not in extra]  # type: ignore[arg-type]
    values = {name: getattr(obj, name) for name in names}
    if isinstance(values.get("errors"), list):
        values["errors"] = [dict(e) for e in values["errors"]]
    return cls(**values, **extra)


def clean_base_url(url: str | None) -> str | None:
    """The URL without user:password@ and without query parameters that look like credentials.

    Why: base_url is shown and exported; people do paste `https://key@host` or `?api-key=...` into it.
    """
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode(
        [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _SECRET_PARAM.search(k)]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _normalize_errors(value: object) -> list[dict[str, Any]]:
    """Errors as a JSON-ready list of dicts; accepts dicts, objects with as_dict() (MarkerError) or dataclasses."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ValueError(f"errors must be a list, got {type(value).__name__}")
    out: list[dict[str, Any]] = []
    for item in value:
        if isinstance(item, Mapping):
            out.append(dict(item))
        elif callable(getattr(item, "as_dict", None)):
            out.append(dict(item.as_dict()))
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            out.append(dataclasses.asdict(item))
        else:
            raise ValueError(f"each error must be a mapping, got {type(item).__name__}")
    try:
        json.dumps(out)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"errors are not JSON-serialisable: {exc}") from exc
    return out


def _without_nul(value: str) -> str:
    """NUL characters replaced by U+FFFD, the same on every backend.

    Why: PostgreSQL text cannot hold NUL (the insert fails), while SQLite stores it; a model that streams one
    would otherwise crash its run only on PostgreSQL. Inside `errors` NUL is fine: JSON escapes it.
    """
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def _join_list(value: object) -> object:
    """Accept ['a', 'b'] / [100, 200] for the comma-separated columns."""
    if isinstance(value, (list, tuple, set, frozenset)):
        return ",".join(str(v) for v in value)
    return value


def _prepare(model: type[Base], fields: Mapping[str, Any], *, immutable: frozenset[str]) -> dict[str, Any]:
    """Validate field names and values for `model`; raise ValueError early with a readable message."""
    table = model.__table__
    columns = table.columns
    unknown = sorted(set(fields) - set(columns.keys()))
    if unknown:
        secret = [name for name in unknown if _SECRETISH.search(name)]
        if secret:
            raise ValueError(f"refusing to store {secret}: API keys and other secrets are never stored")
        raise ValueError(f"unknown {table.name} field(s): {unknown}")
    blocked = sorted(set(fields) & immutable)
    if blocked:
        raise ValueError(f"{table.name} field(s) {blocked} cannot be set here")
    values = dict(fields)
    for name, value in values.items():
        if value is None and not columns[name].nullable:
            raise ValueError(f"{table.name}.{name} cannot be None")
    if "status" in values and values["status"] not in _STATUSES[model]:
        raise ValueError(f"{table.name}.status must be one of {_STATUSES[model]}, got {values['status']!r}")
    for name, value in values.items():
        if isinstance(value, str):
            values[name] = _without_nul(value)
    if "errors" in values:
        values["errors"] = _normalize_errors(values["errors"])
    if "base_url" in values:
        values["base_url"] = clean_base_url(values["base_url"])
    for name in ("modes", "lengths"):
        if name in values and model is BenchRun:
            values[name] = _join_list(values[name])
    return values


def _require(model: type[Base], values: Mapping[str, Any]) -> None:
    """Columns that are NOT NULL and have no default must be given when creating a row."""
    missing = [
        c.name
        for c in model.__table__.columns
        if not c.nullable and c.default is None and not c.primary_key and c.name not in values
    ]
    if missing:
        raise ValueError(f"missing required {model.__tablename__} field(s): {missing}")


def _rowcount(result: object) -> int:
    return cast(CursorResult[Any], result).rowcount


# --- runs ----------------------------------------------------------------------------------------


def create_run(engine: Engine, **fields: Any) -> int:
    """Insert a run (status defaults to 'running') and return its id.

    Required: model, backend, mode, lang, unit, target. created_at may be given (imports); it defaults to now.
    """
    values = _prepare(Run, fields, immutable=frozenset({"id"}))
    _require(Run, values)
    with _writing(engine) as s:
        run = Run(**values)
        s.add(run)
        s.flush()
        return run.id


def update_run(engine: Engine, run_id: int, **fields: Any) -> None:
    """Set the given fields and updated_at=now. KeyError if no such run, ValueError for unknown fields.

    Cheap enough to call while streaming, but throttle it (e.g. every ~0.5 s), not every token.
    """
    values = _prepare(Run, fields, immutable=frozenset({"id", "created_at", "updated_at"}))
    values["updated_at"] = utcnow()
    with _writing(engine) as s:
        if _rowcount(s.execute(update(Run).where(Run.id == run_id).values(**values))) == 0:
            raise KeyError(run_id)


def get_run(engine: Engine, run_id: int) -> RunRecord | None:
    """The run with this id, or None."""
    with Session(engine) as s:
        run = s.get(Run, run_id)
        return None if run is None else _record(RunRecord, run)


def delete_run(engine: Engine, run_id: int) -> bool:
    """Delete a run; True if it existed."""
    with _writing(engine) as s:
        return _rowcount(s.execute(delete(Run).where(Run.id == run_id))) > 0


def list_runs(
    engine: Engine,
    *,
    model: str | None = None,
    mode: str | None = None,
    lang: str | None = None,
    exact_only: bool = False,
    since: datetime | None = None,
    until: datetime | None = None,
    search: str | None = None,
    comparison_id: str | None = None,
    limit: int | None = 500,
) -> list[RunRecord]:
    """Runs matching every given filter, newest first.

    since is inclusive and until exclusive (half-open, so day ranges compose); naive datetimes are UTC.
    search is a case-insensitive substring match over instruction and text (% and _ are literal).
    limit=None returns everything.
    """
    conditions: list[ColumnElement[bool]] = []
    if model is not None:
        conditions.append(Run.model == model)
    if mode is not None:
        conditions.append(Run.mode == mode)
    if lang is not None:
        conditions.append(Run.lang == lang)
    if exact_only:
        conditions.append(Run.exact.is_(True))
    if since is not None:
        conditions.append(Run.created_at >= since)
    if until is not None:
        conditions.append(Run.created_at < until)
    if search is not None and search.strip():
        term = _without_nul(search)
        conditions.append(
            or_(Run.instruction.icontains(term, autoescape=True), Run.text.icontains(term, autoescape=True))
        )
    if comparison_id is not None:
        conditions.append(Run.comparison_id == comparison_id)
    query = select(Run).where(*conditions).order_by(Run.created_at.desc(), Run.id.desc())
    if limit is not None:
        query = query.limit(limit)
    with Session(engine) as s:
        return [_record(RunRecord, run) for run in s.scalars(query)]


def distinct_values(engine: Engine, column_name: str) -> list[str]:
    """Sorted distinct non-null values of a runs column (one of DISTINCT_COLUMNS), for filter pickers."""
    if column_name not in DISTINCT_COLUMNS:
        raise ValueError(f"distinct_values supports {DISTINCT_COLUMNS}, got {column_name!r}")
    column = Run.__table__.c[column_name]
    with Session(engine) as s:
        return list(s.scalars(select(column).where(column.is_not(None)).distinct().order_by(column)))


# --- benchmarks ----------------------------------------------------------------------------------


def _count_subquery() -> Label[int]:
    """Correlated COUNT of a bench run's results (portable; avoids GROUP BY over every BenchRun column)."""
    count = select(func.count(BenchResult.id)).where(BenchResult.bench_run_id == BenchRun.id)
    return count.scalar_subquery().label("result_count")


def _bench_run_where(engine: Engine, condition: ColumnElement[bool]) -> BenchRunRecord | None:
    with Session(engine) as s:
        row = s.execute(select(BenchRun, _count_subquery()).where(condition)).first()
        return None if row is None else _record(BenchRunRecord, row[0], result_count=row[1])


def get_bench_run(engine: Engine, bench_run_id: int) -> BenchRunRecord | None:
    """The benchmark run with this id (with its result_count), or None."""
    return _bench_run_where(engine, BenchRun.id == bench_run_id)


def get_or_create_bench_run(engine: Engine, key: str, **fields: Any) -> BenchRunRecord:
    """The benchmark run with this key, created from `fields` if new (an existing one is returned as is).

    Required when creating: suite, model, modes. modes/lengths may be lists; they are stored comma-joined.
    """
    values = _prepare(BenchRun, {**fields, "key": key}, immutable=frozenset({"id", "updated_at"}))
    try:
        with _writing(engine) as s:
            existing = s.scalar(select(BenchRun.id).where(BenchRun.key == key))
            if existing is None:
                _require(BenchRun, values)
                s.add(BenchRun(**values))
    except IntegrityError:
        pass  # another process created the same key first: fall through and read theirs
    found = _bench_run_where(engine, BenchRun.key == key)
    if found is None:
        raise RuntimeError(f"bench run {key!r} vanished right after being created")
    return found


def set_bench_run_status(engine: Engine, bench_run_id: int, status: str) -> None:
    """Mark a benchmark run running/complete/interrupted. KeyError if no such run."""
    values = _prepare(BenchRun, {"status": status}, immutable=frozenset())
    with _writing(engine) as s:
        query = update(BenchRun).where(BenchRun.id == bench_run_id).values(**values, updated_at=utcnow())
        if _rowcount(s.execute(query)) == 0:
            raise KeyError(bench_run_id)


def delete_bench_run(engine: Engine, bench_run_id: int) -> bool:
    """Delete a benchmark run; its results go with it (ON DELETE CASCADE). True if it existed."""
    with _writing(engine) as s:
        return _rowcount(s.execute(delete(BenchRun).where(BenchRun.id == bench_run_id))) > 0


def list_bench_runs(engine: Engine) -> list[BenchRunRecord]:
    """Every benchmark run, newest first, each with its result_count."""
    query = select(BenchRun, _count_subquery()).order_by(BenchRun.created_at.desc(), BenchRun.id.desc())
    with Session(engine) as s:
        return [_record(BenchRunRecord, run, result_count=n) for run, n in s.execute(query)]


def done_keys(engine: Engine, bench_run_id: int) -> set[tuple[str, int, str]]:
    """(item_id, target, mode) of every stored result of a run: what a resumed run can skip."""
    query = select(BenchResult.item_id, BenchResult.target, BenchResult.mode).where(
        BenchResult.bench_run_id == bench_run_id
    )
    with Session(engine) as s:
        return {(item_id, target, mode) for item_id, target, mode in s.execute(query)}


def _result_exists(s: Session, values: Mapping[str, Any]) -> bool:
    query = select(BenchResult.id).where(
        BenchResult.bench_run_id == values["bench_run_id"],
        BenchResult.item_id == values["item_id"],
        BenchResult.target == values["target"],
        BenchResult.mode == values["mode"],
    )
    return s.scalar(query) is not None


def add_bench_result(engine: Engine, bench_run_id: int, **fields: Any) -> bool:
    """Store one result; True if stored, False if (run, item_id, target, mode) was already there.

    Idempotent so a resumed or retried runner can call it blindly. Required: item_id, lang, target, mode,
    model, status ('ok'/'error'). KeyError if the benchmark run does not exist. Also bumps the run's
    updated_at, so it shows when the run last made progress.
    """
    values = _prepare(BenchResult, {**fields, "bench_run_id": bench_run_id}, immutable=frozenset({"id"}))
    _require(BenchResult, values)
    try:
        with _writing(engine) as s:
            if s.get(BenchRun, bench_run_id) is None:
                raise KeyError(bench_run_id)
            if _result_exists(s, values):
                return False
            s.add(BenchResult(**values))
            s.execute(update(BenchRun).where(BenchRun.id == bench_run_id).values(updated_at=utcnow()))
        return True
    except IntegrityError:
        with Session(engine) as s:  # lost a race with another writer (non-SQLite backends)
            if _result_exists(s, values):
                return False
        raise


def bench_results(engine: Engine, bench_run_ids: Sequence[int]) -> list[BenchResultRecord]:
    """Every result of the given benchmark runs, ordered by run then insertion."""
    if not bench_run_ids:
        return []
    query = (
        select(BenchResult)
        .where(BenchResult.bench_run_id.in_(list(bench_run_ids)))
        .order_by(BenchResult.bench_run_id, BenchResult.id)
    )
    with Session(engine) as s:
        return [_record(BenchResultRecord, r) for r in s.scalars(query)]

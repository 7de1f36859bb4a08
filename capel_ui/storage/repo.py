"""The functions the app, CLI and benchmark runner use to read and write the database, and the History CSV.

Each takes an Engine and runs one short transaction on its own connection, so Streamlit and benchmark
threads can call them concurrently (the engine's pool is thread-safe). Writes run in one transaction each
(BEGIN IMMEDIATE on SQLite, see engine.py). Reads return frozen records (schema.py), never ORM objects.

Every write is checked before it reaches the database, with a readable ValueError: unknown field names (so
a secret such as `api_key=` can never be stored: there is no column for it, and a secret-looking name is
refused as such), None for a NOT NULL column, a value outside a column's vocabulary (`status`, `origin`).
Strings have NUL replaced (PostgreSQL cannot store it), errors/attempts are normalised to lists of dicts,
and base_url loses any credentials.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sqlalchemy import (
    JSON,
    ColumnElement,
    CursorResult,
    Engine,
    Select,
    Table,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from ..redact import SECRET_PARAM
from .engine import writer
from .schema import Base, BenchResult, BenchResultRecord, BenchRun, BenchRunRecord, Run, RunRecord, utcnow

_SECRETISH = re.compile(r"key|secret|token|passw|credential|auth|bearer", re.IGNORECASE)

WRITE_FAULTS: tuple[type[Exception], ...] = (SQLAlchemyError, OSError)
"""What a write can raise when the database, not the data, is at fault (a lock held elsewhere, a full disk, a
read-only file): a caller that must not lose its work catches these and carries on (runs.LiveRun, judge)."""

DISTINCT_COLUMNS: tuple[str, ...] = (
    "model", "mode", "lang", "origin", "backend", "unit", "status", "comparison_id", "group_id",
)  # fmt: skip
"""Run columns distinct_values() will list (string columns useful as filters)."""


# --- checking what is written ---------------------------------------------------------------------


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
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not SECRET_PARAM.search(k)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _list_of_dicts(name: str, value: object) -> list[dict[str, Any]]:
    """A JSON-ready list of dicts from dicts, objects with as_dict() (MarkerError) or dataclasses."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ValueError(f"{name} must be a list, got {type(value).__name__}")
    out: list[dict[str, Any]] = []
    for item in value:
        if isinstance(item, Mapping):
            out.append(dict(item))
        elif callable(getattr(item, "as_dict", None)):
            out.append(dict(item.as_dict()))
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            out.append(dataclasses.asdict(item))
        else:
            raise ValueError(f"each item of {name} must be a mapping, got {type(item).__name__}")
    try:
        json.dumps(out)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} are not JSON-serialisable: {exc}") from exc
    return out


def _json_object(name: str, value: object) -> dict[str, Any]:
    """A JSON-ready dict (a run's assessment), refused in one line when it is not."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping, got {type(value).__name__}")
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} is not JSON-serialisable: {exc}") from exc
    return dict(value)


def _without_nul(value: str) -> str:
    """NUL characters replaced by U+FFFD, the same on every backend.

    Why: PostgreSQL text cannot hold NUL (the insert fails), while SQLite stores it; a model that streams one
    would otherwise crash its run only on PostgreSQL. Inside JSON columns NUL is fine: JSON escapes it.
    """
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def _prepare(mapped: type[Base], fields: Mapping[str, Any], *, immutable: frozenset[str]) -> dict[str, Any]:
    """Check field names and values for `mapped` (ValueError saying what is wrong); return what to store."""
    table = cast(Table, mapped.__table__)
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
    for name, value in fields.items():
        col = columns[name]
        if value is None:
            if not col.nullable:
                raise ValueError(f"{table.name}.{name} cannot be None")
            continue
        choices = col.info.get("choices")
        if choices is not None and value not in choices:
            raise ValueError(f"{table.name}.{name} must be one of {choices}, got {value!r}")
        if isinstance(col.type, JSON):
            values[name] = _json_object(name, value) if col.info.get("object") else _list_of_dicts(name, value)
        elif col.info.get("comma_list") and isinstance(value, (list, tuple, set, frozenset)):
            values[name] = ",".join(str(v) for v in value)
        elif isinstance(value, str):
            values[name] = _without_nul(value)
    if values.get("base_url"):
        values["base_url"] = clean_base_url(values["base_url"])
    return values


def _require(mapped: type[Base], values: Mapping[str, Any]) -> None:
    """Columns that are NOT NULL and have no default must be given when creating a row."""
    table = cast(Table, mapped.__table__)
    missing = [
        c.name
        for c in table.columns
        if not c.nullable and c.default is None and not c.primary_key and c.name not in values
    ]
    if missing:
        raise ValueError(f"missing required {table.name} field(s): {missing}")


def _rowcount(result: object) -> int:
    return cast(CursorResult[Any], result).rowcount


def _columns(mapped: type[Base]) -> list[Any]:
    return list(cast(Table, mapped.__table__).columns)


# --- runs -----------------------------------------------------------------------------------------

_RUNS = cast(Table, Run.__table__)
"""The runs table, written with its values as parameters (`execute(insert(_RUNS), values)`): one statement per set
of columns, compiled once and cached, where `.values(**values)` on the mapped class made SQLAlchemy build and key a
new statement from every value (half the CPU of a batch row's two saves)."""


def create_run(engine: Engine, **fields: Any) -> int:
    """Insert a run (status defaults to 'running', verified to False) and return its id.

    Required: origin, model, backend, mode, lang, unit, target. created_at may be given (imports); default now.
    """
    values = _prepare(Run, fields, immutable=frozenset({"id"}))
    _require(Run, values)
    with writer(engine).begin() as conn:
        return int(conn.execute(insert(_RUNS), values).inserted_primary_key[0])


def update_run(engine: Engine, run_id: int, **fields: Any) -> None:
    """Set the given fields and updated_at=now. KeyError if no such run, ValueError for bad fields.

    Cheap enough to call while streaming, but throttle it (e.g. every second), not every token.
    """
    values = _prepare(Run, fields, immutable=frozenset({"id", "created_at", "updated_at"}))
    with writer(engine).begin() as conn:
        if _rowcount(conn.execute(update(_RUNS).where(_RUNS.c.id == run_id), {**values, "updated_at": utcnow()})) == 0:
            raise KeyError(run_id)


def get_run(engine: Engine, run_id: int) -> RunRecord | None:
    """The run with this id, or None."""
    with engine.connect() as conn:
        row = conn.execute(select(*_columns(Run)).where(Run.id == run_id)).first()
    return None if row is None else RunRecord(**row._mapping)


def delete_run(engine: Engine, run_id: int) -> bool:
    """Delete a run; True if it existed."""
    with writer(engine).begin() as conn:
        return _rowcount(conn.execute(delete(Run).where(Run.id == run_id))) > 0


def list_runs(
    engine: Engine,
    *,
    model: str | None = None,
    mode: str | None = None,
    lang: str | None = None,
    origin: str | None = None,
    verified_only: bool = False,
    since: datetime | None = None,
    until: datetime | None = None,
    search: str | None = None,
    comparison_id: str | None = None,
    group_id: str | None = None,
    limit: int | None = 500,
) -> list[RunRecord]:
    """Runs matching every given filter, newest first.

    verified_only keeps runs whose `verified` column is true (complete, on target, no marker error), not
    merely those whose count equals the target. since is inclusive and until exclusive (half-open, so day
    ranges compose); naive datetimes are UTC. search is a case-insensitive substring match over instruction
    and text (% and _ are literal). limit=None returns everything.
    """
    conditions: list[ColumnElement[bool]] = [
        column == value
        for column, value in (
            (Run.model, model),
            (Run.mode, mode),
            (Run.lang, lang),
            (Run.origin, origin),
            (Run.comparison_id, comparison_id),
            (Run.group_id, group_id),
        )
        if value is not None
    ]
    if verified_only:
        conditions.append(Run.verified.is_(True))
    if since is not None:
        conditions.append(Run.created_at >= since)
    if until is not None:
        conditions.append(Run.created_at < until)
    if search is not None and search.strip():
        term = _without_nul(search)
        conditions.append(
            or_(Run.instruction.icontains(term, autoescape=True), Run.text.icontains(term, autoescape=True))
        )
    query = select(*_columns(Run)).where(*conditions).order_by(Run.created_at.desc(), Run.id.desc()).limit(limit)
    with engine.connect() as conn:
        return [RunRecord(**row._mapping) for row in conn.execute(query)]


def unassessed_runs(engine: Engine, *, every: bool = False, after: int = 0, limit: int = 500) -> list[RunRecord]:
    """Finished runs with no judgement stored (saved before judgements were; `every`: all finished runs) whose id is
    above `after`, oldest first, at most `limit` at a time."""
    conditions = [Run.status != "running", Run.id > after] + ([] if every else [Run.assessment.is_(None)])
    query = select(*_columns(Run)).where(*conditions).order_by(Run.id).limit(limit)
    with engine.connect() as conn:
        return [RunRecord(**row._mapping) for row in conn.execute(query)]


def distinct_values(engine: Engine, column_name: str) -> list[str]:
    """Sorted distinct non-null values of a runs column (one of DISTINCT_COLUMNS), for filter pickers."""
    if column_name not in DISTINCT_COLUMNS:
        raise ValueError(f"distinct_values supports {DISTINCT_COLUMNS}, got {column_name!r}")
    column = cast(Table, Run.__table__).c[column_name]
    with engine.connect() as conn:
        return list(conn.execute(select(column).where(column.is_not(None)).distinct().order_by(column)).scalars())


# --- benchmarks -----------------------------------------------------------------------------------


def _bench_runs_query() -> Select[Any]:
    """Bench runs with result_count, a correlated COUNT (portable; no GROUP BY over every column)."""
    count = select(func.count(BenchResult.id)).where(BenchResult.bench_run_id == BenchRun.id)
    return select(*_columns(BenchRun), count.scalar_subquery().label("result_count"))


def _bench_run_where(engine: Engine, condition: ColumnElement[bool]) -> BenchRunRecord | None:
    with engine.connect() as conn:
        row = conn.execute(_bench_runs_query().where(condition)).first()
    return None if row is None else BenchRunRecord(**row._mapping)


def get_bench_run(engine: Engine, bench_run_id: int) -> BenchRunRecord | None:
    """The benchmark run with this id (with its result_count), or None."""
    return _bench_run_where(engine, BenchRun.id == bench_run_id)


def get_or_create_bench_run(engine: Engine, key: str, **fields: Any) -> BenchRunRecord:
    """The benchmark run with this key, created from `fields` if new (an existing one is returned as is).

    Required when creating: suite, model, modes. modes/lengths may be lists; they are stored comma-joined.
    """
    values = _prepare(BenchRun, {**fields, "key": key}, immutable=frozenset({"id", "updated_at"}))
    try:
        with writer(engine).begin() as conn:
            if conn.execute(select(BenchRun.id).where(BenchRun.key == key)).first() is None:
                _require(BenchRun, values)
                conn.execute(insert(BenchRun).values(**values))
    except IntegrityError:
        pass  # another process created the same key first: read theirs
    found = _bench_run_where(engine, BenchRun.key == key)
    if found is None:
        raise RuntimeError(f"bench run {key!r} vanished right after being created")
    return found


def set_bench_run_status(engine: Engine, bench_run_id: int, status: str) -> None:
    """Mark a benchmark run running/complete/interrupted. KeyError if no such run."""
    values = _prepare(BenchRun, {"status": status}, immutable=frozenset())
    with writer(engine).begin() as conn:
        query = update(BenchRun).where(BenchRun.id == bench_run_id).values(**values, updated_at=utcnow())
        if _rowcount(conn.execute(query)) == 0:
            raise KeyError(bench_run_id)


def delete_bench_run(engine: Engine, bench_run_id: int) -> bool:
    """Delete a benchmark run; its results go with it (ON DELETE CASCADE). True if it existed."""
    with writer(engine).begin() as conn:
        return _rowcount(conn.execute(delete(BenchRun).where(BenchRun.id == bench_run_id))) > 0


def list_bench_runs(engine: Engine) -> list[BenchRunRecord]:
    """Every benchmark run, newest first, each with its result_count."""
    query = _bench_runs_query().order_by(BenchRun.created_at.desc(), BenchRun.id.desc())
    with engine.connect() as conn:
        return [BenchRunRecord(**row._mapping) for row in conn.execute(query)]


def done_keys(engine: Engine, bench_run_id: int) -> set[tuple[str, int, str]]:
    """(item_id, target, mode) of every stored result of a run: what a resumed run can skip."""
    query = select(BenchResult.item_id, BenchResult.target, BenchResult.mode).where(
        BenchResult.bench_run_id == bench_run_id
    )
    with engine.connect() as conn:
        return {(item_id, target, mode) for item_id, target, mode in conn.execute(query)}


def _result_exists(conn: Connection, values: Mapping[str, Any]) -> bool:
    query = select(BenchResult.id).where(
        *(getattr(BenchResult, name) == values[name] for name in ("bench_run_id", "item_id", "target", "mode"))
    )
    return conn.execute(query).first() is not None


def add_bench_result(engine: Engine, bench_run_id: int, **fields: Any) -> bool:
    """Store one result; True if stored, False if (run, item_id, target, mode) was already there.

    Idempotent so a resumed or retried runner can call it blindly. Required: item_id, lang, target, mode,
    model, status ('ok'/'error'). KeyError if the benchmark run does not exist. Also bumps the run's
    updated_at, so it shows when the run last made progress.
    """
    values = _prepare(BenchResult, {**fields, "bench_run_id": bench_run_id}, immutable=frozenset({"id"}))
    _require(BenchResult, values)
    try:
        with writer(engine).begin() as conn:
            if conn.execute(select(BenchRun.id).where(BenchRun.id == bench_run_id)).first() is None:
                raise KeyError(bench_run_id)
            if _result_exists(conn, values):
                return False
            conn.execute(insert(BenchResult).values(**values))
            conn.execute(update(BenchRun).where(BenchRun.id == bench_run_id).values(updated_at=utcnow()))
        return True
    except IntegrityError:
        with engine.connect() as conn:  # lost a race with another writer (PostgreSQL)
            if _result_exists(conn, values):
                return False
        raise


def bench_results(engine: Engine, bench_run_ids: Sequence[int]) -> list[BenchResultRecord]:
    """Every result of the given benchmark runs, ordered by run then insertion."""
    if not bench_run_ids:
        return []
    query = (
        select(*_columns(BenchResult))
        .where(BenchResult.bench_run_id.in_(list(bench_run_ids)))
        .order_by(BenchResult.bench_run_id, BenchResult.id)
    )
    with engine.connect() as conn:
        return [BenchResultRecord(**row._mapping) for row in conn.execute(query)]


# --- the History CSV ------------------------------------------------------------------------------

CSV_COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RunRecord))
"""Header of runs_to_csv: one column per run field (there is no key column to leak)."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\0")
"""A text cell starting with one of these is run as a formula by spreadsheets (OWASP CSV injection; ASVS 1.2.10
adds the null character). It gets a leading single quote."""


def errors_summary(errors: Iterable[Mapping[str, Any]]) -> str:
    """Compact 'type×count' list, e.g. 'skip×2; early_stop×1', in first-seen order; '' for none."""
    counts = Counter(str(e.get("type", "?")) for e in errors)
    return "; ".join(f"{kind}×{n}" for kind, n in counts.items())


def _cell(name: str, value: Any) -> str:
    """One CSV cell. Numbers stay numbers (-3 is -3); a text cell that a spreadsheet would run as a formula
    gets a leading ' (OWASP), so `=HYPERLINK(...)` in a model's output is shown, never run."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if name == "errors":
        text = errors_summary(value)
    elif name == "base_url":
        text = clean_base_url(value) or ""
    elif isinstance(value, (list, dict)):
        text = json.dumps(value, ensure_ascii=False) if value else ""
    else:
        text = str(value)
    # Spreadsheets skip leading spaces and line breaks before they look for a formula: so does this check.
    return f"'{text}" if text.lstrip(" \t\r\n").startswith(FORMULA_STARTS) or text.startswith(FORMULA_STARTS) else text


def runs_to_csv(runs: Iterable[RunRecord]) -> str:
    """RFC 4180 CSV (header row, CRLF, quoted where needed) of the runs; encode with 'utf-8-sig' for Excel."""
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\r\n")
    out.writerow(CSV_COLUMNS)
    out.writerows([_cell(name, getattr(run, name)) for name in CSV_COLUMNS] for run in runs)
    return buffer.getvalue()

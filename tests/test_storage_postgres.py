"""capel_ui.storage against a real, throwaway PostgreSQL server (no mocks).

Teams set DATABASE_URL to a PostgreSQL URL to share one database, so the storage layer must behave there
exactly as on SQLite. This module starts its own cluster once per test session (initdb into a temp dir,
loopback only, trust auth), then:

* runs again every test of tests/test_storage.py that uses the `engine` or `db_url` fixture (all the
  backend-independent ones) with this module's versions of those fixtures: `db_url` is a new, empty
  PostgreSQL database per test, `engine` a migrated one that is emptied after every test;
* adds checks that only make sense on a real server (column types, a non-UTC server time zone,
  processes migrating one fresh database at the same instant).

The server binaries come from Debian's `postgresql` package, which `bash scripts/setup.sh --test` installs.
PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` system user.
"""

from __future__ import annotations

import glob
import inspect as pyinspect
import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import DateTime, Engine, inspect, make_url, text
from sqlalchemy.exc import DBAPIError

from capel_ui.storage import (
    add_bench_result,
    bench_results,
    create_migrated_engine,
    create_run,
    dispose_engines,
    get_engine,
    get_or_create_bench_run,
    get_run,
    list_runs,
)
from capel_ui.storage.engine import applied_migrations, migrate
from capel_ui.vocab import PROJECT_ROOT
from tests import test_storage as shared
from tests.test_storage import SCHEMA_VERSIONS, bench_fields, result_fields, run_fields
from tests.test_storage_upgrade import (
    assert_backfilled,
    assert_new_runs_can_be_written,
    assert_nothing_lost,
    downgrade_to_v1,
    insert_rows,
    schema_of,
    v1_rows,
    v1_sqlite_file,
)

SERVER_TIME_ZONE = "Asia/Shanghai"
"""Deliberately not UTC: timestamps must survive a server whose session time zone is +08:00."""

# --- the throwaway cluster -----------------------------------------------------------------------


def _server_bin_dir() -> Path:
    """Newest /usr/lib/postgresql/N/bin that has initdb; fail (never skip: CI must run these) if none."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not found:
        pytest.fail(
            "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb): "
            "run `bash scripts/setup.sh --test` to install Debian's postgresql package",
            pytrace=False,
        )
    return Path(found[-1]).parent


def _as_server_user() -> list[str]:
    """Command prefix that runs a server binary as a non-root user (postgres will not run as root)."""
    if os.geteuid() != 0:
        return []
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        pytest.fail("running as root but there is no `postgres` user: run `bash scripts/setup.sh --test`")
    return ["runuser", "-u", "postgres", "--"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        pytest.fail(f"{what} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}", pytrace=False)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """Start a private PostgreSQL cluster on a free 127.0.0.1 port; yield a URL of its `capel` database.

    The cluster lives in a fresh temp dir (socket included) and is stopped with `pg_ctl stop -m immediate`
    and deleted at the end of the session, whatever happened. fsync is off: the data is disposable.
    """
    bin_dir = _server_bin_dir()
    as_server = _as_server_user()
    # mkdtemp in /tmp, not pytest's tmp_path: /tmp/pytest-of-root is 0700, which the postgres user cannot enter.
    root = Path(tempfile.mkdtemp(prefix="capel-pg-", dir="/tmp" if as_server else None))
    data = root / "data"
    if as_server:
        shutil.chown(root, "postgres", "postgres")
    started = False
    try:
        _run(
            [*as_server, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
             "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"],
            "initdb",
        )  # fmt: skip
        for attempt in range(3):  # the free port could be taken between probing and binding it
            port = _free_port()
            with (data / "postgresql.conf").open("a") as conf:
                conf.write(
                    f"\nlisten_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{root}'\n"
                    f"timezone = '{SERVER_TIME_ZONE}'\nfsync = off\nsynchronous_commit = off\n"
                    "full_page_writes = off\nmax_connections = 200\n"
                )
            start = [*as_server, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log"),
                     "-w", "-t", "60", "start"]  # fmt: skip
            started = subprocess.run(start, capture_output=True, timeout=120, check=False).returncode == 0
            if started:
                break
            if attempt == 2:
                log = (root / "server.log").read_text(errors="replace") if (root / "server.log").exists() else ""
                pytest.fail(f"pg_ctl start failed three times; server log:\n{log}", pytrace=False)
        with psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres", autocommit=True) as c:
            c.execute("CREATE DATABASE capel")
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/capel"
    finally:
        dispose_engines()
        if started or (data / "postmaster.pid").exists():
            stop = [*as_server, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]
            subprocess.run(stop, capture_output=True, timeout=60, check=False)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_admin(pg_server: str) -> Iterator[psycopg.Connection[Any]]:
    """An autocommit connection to the cluster's `postgres` database, for CREATE/DROP DATABASE."""
    url = make_url(pg_server)
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname="postgres", autocommit=True) as c:
        yield c


_database_numbers = itertools.count(1)


@pytest.fixture
def db_url(pg_server: str, pg_admin: psycopg.Connection[Any]) -> Iterator[str]:
    """URL of a new, empty (never migrated) database for this test; dropped afterwards."""
    name = f"capel_test_{next(_database_numbers)}"
    pg_admin.execute(f"CREATE DATABASE {name}")
    try:
        yield make_url(pg_server).set(database=name).render_as_string()
    finally:
        dispose_engines()
        pg_admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


_FINGERPRINT = text(
    "SELECT (SELECT string_agg(c, ',' ORDER BY c) FROM (SELECT table_name || '.' || column_name || ':' || data_type"
    "        AS c FROM information_schema.columns WHERE table_schema = 'public') AS columns),"
    "       (SELECT string_agg(indexdef, ',' ORDER BY indexdef) FROM pg_indexes WHERE schemaname = 'public'),"
    "       (SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations)"
)
_TABLES = ("bench_results", "bench_runs", "runs")
_pristine_schema: dict[str, tuple[Any, ...]] = {}


def _empty_if_schema_unchanged(engine: Engine, url: str) -> bool:
    """Delete every row and restart the id sequences, if the schema is still the freshly migrated one."""
    try:
        with engine.begin() as conn:
            conn.execute(text("SET LOCAL lock_timeout = '5s'"))
            fingerprint = tuple(conn.execute(_FINGERPRINT).one())
            if fingerprint != _pristine_schema[url]:
                return False
            for table in _TABLES:  # tiny tables: DELETE is several times cheaper than TRUNCATE
                conn.execute(text(f"DELETE FROM {table}"))
                conn.execute(text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 1, false)"))
            return True
    except DBAPIError:
        return False


@pytest.fixture
def engine(pg_server: str, pg_admin: psycopg.Connection[Any]) -> Iterator[Engine]:
    """get_engine() of the session's `capel` database: migrated on first use, emptied after every test.

    Emptying (ids restart at 1) is far cheaper than a new database per test. A test that changed the
    schema (a trial migration) or left a table locked gets the database dropped and created again instead.
    """
    engine = get_engine(pg_server)
    if pg_server not in _pristine_schema:
        with engine.connect() as conn:
            _pristine_schema[pg_server] = tuple(conn.execute(_FINGERPRINT).one())
    yield engine
    if not _empty_if_schema_unchanged(engine, pg_server):
        dispose_engines()
        database = make_url(pg_server).database
        pg_admin.execute(f"DROP DATABASE {database} WITH (FORCE)")
        pg_admin.execute(f"CREATE DATABASE {database}")


# --- the backend-independent tests of test_storage.py, run again here ----------------------------

NOT_SHARED = {
    "test_sqlite_wal_mode_is_on": "checks SQLite itself",
    "test_sqlite_busy_timeout_and_foreign_keys_are_set": "checks SQLite itself",
    "test_processes_migrating_the_same_file_at_once_do_not_crash": (
        "superseded below by test_processes_migrating_one_fresh_database_at_the_same_instant, whose "
        "processes start migrating on one signal (each process costs ~1 s of imports on this machine)"
    ),
}
"""Tests in test_storage.py that use a database fixture but are not run again here, and why."""


def _parameters(test: Callable[..., Any]) -> set[str]:
    return set(pyinspect.signature(test).parameters)


def _uses_database(test: Callable[..., Any]) -> bool:
    return bool({"engine", "db_url"} & _parameters(test))


SHARED_TESTS: dict[str, Callable[..., Any]] = {
    name: obj
    for name, obj in vars(shared).items()
    if name.startswith("test_") and callable(obj) and _uses_database(obj) and name not in NOT_SHARED
}
# pytest collects every test_* function in a module's namespace, wherever it was defined; here they get
# this module's `engine` and `db_url` fixtures, i.e. PostgreSQL.
globals().update(SHARED_TESTS)


def test_the_shared_suite_is_really_shared() -> None:
    assert len(SHARED_TESTS) >= 55, sorted(SHARED_TESTS)
    assert set(vars(shared)) >= set(NOT_SHARED), "a NOT_SHARED test was renamed or removed"
    for name in ("test_run_round_trips_every_field_including_errors_and_unicode",
                 "test_threads_write_concurrently_without_database_locked",
                 "test_threads_migrating_fresh_engines_on_the_same_file_do_not_crash"):  # fmt: skip
        assert name in SHARED_TESTS
    # `engine` here is a shared, emptied-between-tests database, not get_engine(db_url): no test may use both.
    assert not [name for name, test in SHARED_TESTS.items() if {"engine", "db_url"} <= _parameters(test)]


# --- PostgreSQL-only checks ----------------------------------------------------------------------


def test_the_server_is_a_real_postgresql_with_a_non_utc_time_zone(engine: Engine) -> None:
    assert (engine.dialect.name, engine.dialect.driver) == ("postgresql", "psycopg")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version()")).scalar_one().startswith("PostgreSQL ")
        assert conn.execute(text("SHOW TimeZone")).scalar_one() == SERVER_TIME_ZONE
        assert conn.execute(text("SHOW server_encoding")).scalar_one() == "UTF8"


def test_timestamps_are_timestamptz_and_store_the_true_instant(engine: Engine) -> None:
    for table in ("runs", "bench_runs", "bench_results", "schema_migrations"):
        created = {c["name"]: c["type"] for c in inspect(engine).get_columns(table)}
        stamp = created.get("created_at", created.get("applied_at"))
        assert isinstance(stamp, DateTime) and stamp.timezone, table
    moment = datetime(2024, 5, 1, 9, 30, tzinfo=timezone(timedelta(hours=-7)))
    run_id = create_run(engine, **run_fields(created_at=moment))
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT created_at AT TIME ZONE 'UTC' FROM runs WHERE id = :id"), {"id": run_id})
        assert stored.scalar_one() == datetime(2024, 5, 1, 16, 30)  # naive UTC wall clock of the same instant
    run = get_run(engine, run_id)
    assert run is not None and run.created_at == moment and run.created_at.tzinfo == UTC
    assert [r.id for r in list_runs(engine, since=datetime(2024, 5, 1, 16, 30), until=moment + timedelta(1))] == [
        run_id
    ]


def test_long_and_unicode_outputs_round_trip(engine: Engine) -> None:
    long_text = "大海在歌唱。🌊 " * 20_000  # ~200k characters: no VARCHAR limit hiding in a TEXT column
    run_id = create_run(engine, **run_fields(lang="zh", unit="chars", raw=long_text, text=long_text))
    run = get_run(engine, run_id)
    assert run is not None and run.text == long_text and run.raw == long_text
    assert [r.id for r in list_runs(engine, search="在歌唱。🌊")] == [run_id]


def test_processes_migrating_one_fresh_database_at_the_same_instant(db_url: str) -> None:
    """Processes import first, then all start migrating on one signal, so their DDL really overlaps.

    Exactly one of them applies migration 1; the other finds it applied or loses a catalog race (duplicate
    CREATE TABLE) that migrate() must absorb. Two processes keep it fast (each costs ~0.5 s of imports); many
    racers on separate connections are covered by test_threads_migrating_fresh_engines_on_the_same_file_....
    """
    code = (
        "import sys\n"
        "from sqlalchemy import create_engine\n"
        "from capel_ui.storage.engine import applied_migrations, migrate\n"
        "engine = create_engine(sys.argv[1])\n"
        "print('ready', flush=True)\n"
        "sys.stdin.readline()\n"
        "print(migrate(engine), len(applied_migrations(engine)), flush=True)\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, db_url],
            cwd=PROJECT_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:  # the signal, as close together as we can
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outputs = [proc.communicate(timeout=60) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    everything, none = f"{SCHEMA_VERSIONS} {len(SCHEMA_VERSIONS)}", f"[] {len(SCHEMA_VERSIONS)}"
    assert sorted(out.strip() for out, _ in outputs) == sorted([everything, none])
    assert len(applied_migrations(get_engine(db_url))) == len(SCHEMA_VERSIONS)


def test_threads_racing_on_the_unique_constraint_across_engines(db_url: str) -> None:
    """Two engines (two pools, like two processes) add the same results at once: each stored exactly once."""
    engines = [create_migrated_engine(db_url) for _ in range(2)]
    try:
        bench = get_or_create_bench_run(engines[0], "shared", **bench_fields())
        barrier = threading.Barrier(8)
        outcomes: list[bool] = []
        failures: list[BaseException] = []

        def worker(n: int) -> None:
            try:
                barrier.wait()
                for i in range(10):
                    outcomes.append(add_bench_result(engines[n % 2], bench.id, **result_fields(f"item-{i}")))
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []
        assert outcomes.count(True) == 10 and outcomes.count(False) == 70
        assert sorted(r.item_id for r in bench_results(engines[1], [bench.id])) == [f"item-{i}" for i in range(10)]
    finally:
        for e in engines:
            e.dispose()


def test_missing_server_binaries_fail_with_the_setup_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(glob, "glob", lambda pattern: [])
    with pytest.raises(pytest.fail.Exception, match=r"bash scripts/setup\.sh --test"):
        _server_bin_dir()


def test_a_v1_database_is_upgraded_in_place_losing_nothing(db_url: str, tmp_path: Path) -> None:
    """The SQLite fixture's rows, in a PostgreSQL database shaped as schema version 1, opened by today's code."""
    engine = get_engine(db_url)
    new_schema = schema_of(engine)
    downgrade_to_v1(engine)
    rows = v1_rows(v1_sqlite_file(tmp_path / "v1.db"))
    insert_rows(engine, rows)
    dispose_engines()

    engine = get_engine(db_url)
    assert [v for v, _, _ in applied_migrations(engine)] == SCHEMA_VERSIONS
    assert_nothing_lost(engine, rows)
    assert_backfilled(engine)
    assert schema_of(engine) == new_schema
    assert_new_runs_can_be_written(engine)
    again = create_migrated_engine(db_url)
    try:
        assert migrate(again) == []
    finally:
        again.dispose()

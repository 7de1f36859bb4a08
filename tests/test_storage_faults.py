"""What CAPEL Studio does with a database it must not write: another application's SQLite file, a damaged one,
and paths and URLs that name no usable database. Each is one line (exit 3 on the CLI), and the file is left
byte for byte as it was."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from capel_ui.backends import Turn
from capel_ui.cli import main
from capel_ui.runs import LiveRun
from capel_ui.storage import StorageError, create_migrated_engine, dispose_engines, get_engine, get_run
from capel_ui.storage import engine as engine_module


def sqlite_file(path: Path, *ddl: str) -> Path:
    conn = sqlite3.connect(path)
    for statement in ddl:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in `folder`, by name: a file added beside the database (-wal, -journal) shows too."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "databases"
    path.mkdir()
    return path


FOREIGN = {
    "contacts": ("CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT, phone TEXT)",),
    "its_own_runs": ("CREATE TABLE runs (id INTEGER PRIMARY KEY, distance_km REAL, minutes INTEGER)",),
    "its_own_schema_migrations": (  # golang-migrate's
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, dirty BOOLEAN)",
    ),
}


@pytest.mark.parametrize("name", FOREIGN)
def test_another_applications_sqlite_file_is_refused_and_left_untouched(folder: Path, name: str) -> None:
    table = FOREIGN[name][0].split()[2]
    key = "version" if table == "schema_migrations" else "id"
    path = sqlite_file(folder / "other.db", *FOREIGN[name], f"INSERT INTO {table} ({key}) VALUES (1)")
    before = snapshot(folder)
    with pytest.raises(StorageError, match=r"belongs to another application .*left this one untouched"):
        get_engine(f"sqlite:///{path}")
    assert snapshot(folder) == before


def test_a_crashed_applications_file_with_its_tables_still_in_its_write_ahead_log_is_refused_untouched(
    folder: Path, tmp_path: Path
) -> None:
    live = tmp_path / "live.db"  # the other application, still running: its table is only in its -wal so far
    app = sqlite3.connect(live, isolation_level=None)
    app.execute("PRAGMA journal_mode=WAL")
    app.execute("PRAGMA wal_autocheckpoint=0")
    app.execute(FOREIGN["contacts"][0])
    app.execute("INSERT INTO contacts (id) VALUES (1)")
    for suffix in ("", "-wal", "-shm"):  # copied while it runs: what its crash leaves behind
        (folder / f"other.db{suffix}").write_bytes(Path(f"{live}{suffix}").read_bytes())
    app.close()
    before = snapshot(folder)
    with pytest.raises(StorageError, match=r"belongs to another application \(its tables: contacts\)"):
        get_engine(f"sqlite:///{folder / 'other.db'}")
    after = snapshot(folder)
    assert after.keys() == before.keys(), "its write-ahead log is neither checkpointed nor deleted"
    for name in ("other.db", "other.db-wal"):  # the -shm is SQLite's index of the log, rebuilt by any reader
        assert after[name] == before[name]


def test_a_new_capel_database_another_process_has_open_is_ours_though_its_tables_are_still_in_its_log(folder: Path):
    url = f"sqlite:///{folder / 'capel.db'}"
    first = get_engine(url)  # its tables sit in capel.db-wal while its connections stay open
    assert (folder / "capel.db-wal").stat().st_size > 0
    second = create_migrated_engine(url)
    try:
        with second.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 0
    finally:
        second.dispose()
    assert first is get_engine(url)


def test_an_empty_sqlite_file_becomes_a_capel_database(folder: Path) -> None:
    path = sqlite_file(folder / "empty.db", "VACUUM")
    engine = get_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 0


def test_a_damaged_capel_database_is_reported_without_being_written(folder: Path) -> None:
    path = folder / "capel-damaged.db"
    get_engine(f"sqlite:///{path}")
    dispose_engines()
    data = bytearray(path.read_bytes())
    data[100:400] = b"\xff" * 300  # page 1's b-tree header and cell pointers: the schema can no longer be read
    path.write_bytes(bytes(data))
    for side in folder.glob("capel-damaged.db-*"):
        side.unlink()
    before = snapshot(folder)
    with pytest.raises(StorageError, match=r"is not a CAPEL Studio database \(or is damaged\)"):
        get_engine(f"sqlite:///{path}")
    assert snapshot(folder) == before


def test_a_capel_database_with_a_damaged_table_page_is_refused_byte_for_byte(folder: Path) -> None:
    """Its schema reads, but the page of a table opening reads (schema_migrations) is zeroed: refused before any
    connection switched it to WAL (which rewrote 4 header bytes)."""
    path = folder / "capel-page.db"
    get_engine(f"sqlite:///{path}")
    dispose_engines()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")  # one file, as a copied or restored database is
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()
    conn.close()
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    data[(root - 1) * size : root * size] = bytes(size)
    path.write_bytes(bytes(data))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(StorageError, match=r"is not a CAPEL Studio database \(or is damaged\)"):
        get_engine(f"sqlite:///{path}")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("capel-page")) == ["capel-page.db"]


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


BAD_DATABASES = {
    "parent_is_a_file": ("sqlite:////dev/null/capel.db", "cannot create the folder /dev/null"),
    "folder_cannot_be_created": ("sqlite:////proc/capel-studio/capel.db", "cannot create the folder /proc/capel"),
    "unknown_scheme": ("foo://bar/baz", "no database driver for 'foo'"),
    "not_a_url": ("just some words", "is not a database URL"),
    "password_in_a_bad_url": ("postgres ql://me:hunter2@db/x", "is not a database URL"),
}


@pytest.mark.parametrize("case", BAD_DATABASES)
@pytest.mark.parametrize("command", [("history",), ("generate", "--model", "scripted", "--target", "2", "Hello.")])
def test_a_database_that_cannot_be_used_is_one_line_and_exit_3(monkeypatch, case: str, command: tuple[str, ...]):
    url, said = BAD_DATABASES[case]
    monkeypatch.setenv("DATABASE_URL", url)
    code, _, err = cli(*command)
    assert code == 3 and said in err
    assert err.count("\n") == 1 and "Traceback" not in err and "hunter2" not in err


def test_the_cli_refuses_another_applications_file_with_exit_3_and_writes_nothing(folder: Path, monkeypatch):
    path = sqlite_file(folder / "contacts.db", *FOREIGN["contacts"])
    before = snapshot(folder)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    code, _, err = cli("generate", "--model", "scripted", "--target", "2", "Hello.")
    assert code == 3 and "belongs to another application (its tables: contacts)" in err
    assert snapshot(folder) == before


# ----- the database fails under a run ------------------------------------------------------------------------


@pytest.fixture
def locked_db(folder: Path, monkeypatch) -> Iterator[sqlite3.Connection]:
    """A CAPEL Studio database another process holds an exclusive lock on (as a long write would); writers here
    give up after 50 ms (CAPEL_DB_BUSY_TIMEOUT_MS) and a run tries its final save twice more, quickly."""
    path = folder / "capel.db"
    get_engine(f"sqlite:///{path}")
    dispose_engines()
    monkeypatch.setattr(engine_module, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(LiveRun, "save_retries", (0.05, 0.05))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN EXCLUSIVE")
    yield other
    other.close()
    dispose_engines()


def test_a_run_the_database_refuses_to_the_end_prints_its_text_says_where_and_exits_3(locked_db, scripted_model):
    scripted_model.reply("One two three.")
    code, out, err = cli("generate", "--model", "scripted", "--mode", "baseline", "--target", "3", "Count.")
    assert code == 3 and out.strip() == "One two three."
    assert "capel_ui: error: this run could not be saved to " in err and "(database is locked)" in err
    assert "Traceback" not in err


def test_a_lock_released_while_the_run_streams_costs_nothing(locked_db, scripted_model, folder: Path):
    scripted_model.reply(Turn(("One", " two", " three."), delay=0.1))
    threading.Timer(0.15, locked_db.rollback).start()  # the other process finishes while the model writes
    code, _, err = cli("generate", "--model", "scripted", "--mode", "baseline", "--target", "3", "Count.")
    assert code == 0 and "saved as run 1" in err
    run = get_run(get_engine(), 1)
    assert (run.status, run.text, run.verified) == ("complete", "One two three.", True)


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch) -> Iterator[Path]:
    """A CAPEL Studio database on a 512 kB filesystem that is then filled to the last byte (a real tmpfs; the
    test is skipped where this process may not mount one)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("needs permission to mount a small tmpfs (root)")
    try:
        path = mount / "capel.db"
        get_engine(f"sqlite:///{path}")  # open (its -shm made) before the disk fills, as a running app has it
        monkeypatch.setattr(LiveRun, "save_retries", (0.05,))
        monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
        with (mount / "filler").open("wb", buffering=0) as filler, contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * 4096)
        yield path
    finally:
        dispose_engines()
        subprocess.run(["umount", str(mount)], check=False)


def test_a_disk_that_fills_up_costs_the_run_its_history_row_but_never_its_text(full_disk, scripted_model):
    scripted_model.reply("Waves fold over the quiet harbour wall.")
    code, out, err = cli("generate", "--model", "scripted", "--mode", "baseline", "--target", "7", "Sea.")
    assert code == 3 and out.strip() == "Waves fold over the quiet harbour wall.", err
    assert f"this run could not be saved to {full_disk} (database or disk is full)" in err


def test_a_judges_rating_the_database_refuses_is_still_given_and_the_run_stands(locked_db, scripted_model):
    from capel_ui.backends import get_backend
    from capel_ui.generation import Request
    from capel_ui.service import start
    from capel_ui.verdict import Target

    locked_db.rollback()  # the run is saved; then another process takes the lock as the judge answers
    scripted_model.reply("One two three.", "Clear and exact. Rating: [[8]]")
    handle = start(
        Request.of(Target.exactly(3), "Count.", mode="baseline"),
        get_backend("scripted"),
        get_engine(),
        origin="cli",
        judge=get_backend("scripted"),
    )
    handle.run()
    locked_db.execute("BEGIN EXCLUSIVE")
    [best] = handle.result()
    assert best.judge_score == 8.0
    locked_db.rollback()
    run = get_run(get_engine(), handle.live.run_id)
    assert (run.status, run.verified, run.judge_score) == ("complete", True, None)


def test_a_benchmark_the_database_refuses_stops_with_one_line_and_exit_3(locked_db, scripted_model):
    scripted_model.reply(*["One two three four five six seven eight."] * 4)
    code, _, err = cli("bench", "--suite", "lifebench", "--model", "scripted", "--modes", "baseline", "--limit", "2")
    assert code == 3 and "Traceback" not in err and "sqlalche.me" not in err
    [line] = [x for x in err.splitlines() if x.startswith("capel_ui: error:")]
    assert "(database is locked)" in line and "run the command again" in line


@pytest.fixture
def read_only_db(folder: Path, monkeypatch) -> Iterator[Path]:
    """A CAPEL Studio database file that cannot be written: immutable (`chattr +i`, which binds root too), or
    read-only by its mode for anyone else; skipped where neither can be set."""
    path = folder / "capel.db"
    get_engine(f"sqlite:///{path}")
    dispose_engines()
    monkeypatch.setattr(LiveRun, "save_retries", (0.05,))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    path.chmod(0o444)
    root = os.geteuid() == 0
    if root and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
        path.chmod(0o644)
        pytest.skip("needs chattr +i on this filesystem")
    try:
        yield path
    finally:
        dispose_engines()
        if root:
            subprocess.run(["chattr", "-i", str(path)], check=False)
        path.chmod(0o644)


def test_a_read_only_database_file_costs_the_run_its_history_row_but_never_its_text(read_only_db, scripted_model):
    scripted_model.reply("Waves fold over the quiet harbour wall.")
    code, out, err = cli("generate", "--model", "scripted", "--mode", "baseline", "--target", "7", "Sea.")
    assert code == 3 and out.strip() == "Waves fold over the quiet harbour wall.", err
    assert f"this run could not be saved to {read_only_db} (attempt to write a readonly database)" in err
    assert "Traceback" not in err

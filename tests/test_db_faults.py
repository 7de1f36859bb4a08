"""The pages when the database fails (AppTest). A run it refuses to the end (a real SQLite file locked by a second
connection; the in-process scripted model): Write, its variants and Compare show each run's
text to copy and say where it could not be saved, instead of losing it. A database URL that names no usable
database: one error box, in the page's own words, never a traceback or a password."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.backends import ScriptedBackend
from capel_ui.runs import LiveRun
from capel_ui.storage import dispose_engines
from capel_ui.storage import engine as engine_module
from tests.conftest import APP_PATH, variants_box


@pytest.fixture
def impatient_database(monkeypatch) -> Iterator[None]:
    """Writers give up on a lock after 50 ms and a run tries its final save once more, quickly (requested before
    `app_test`, so the page's engine is opened with it)."""
    dispose_engines()
    monkeypatch.setattr(engine_module, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(LiveRun, "save_retries", (0.05,))
    yield
    dispose_engines()


def on_scripted_model(at: AppTest) -> AppTest:
    """The sidebar's model: the in-process scripted one (staged before `app_test`, so the sidebar offers it)."""
    at.selectbox(key="provider").set_value("scripted").run()
    assert not at.exception, at.exception
    return at


def lock_database() -> sqlite3.Connection:
    """Another process's write lock on the page's database, held until closed."""
    path = os.environ["DATABASE_URL"].removeprefix("sqlite:///")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN EXCLUSIVE")
    return other


def unsaved(at: AppTest) -> tuple[list[str], list[str]]:
    """(the error boxes saying a run could not be saved, the texts offered to copy)."""
    errors = [e.value for e in at.error if "could not be saved to" in e.value]
    return errors, [c.value for c in at.code]


def click(at: AppTest, label: str) -> AppTest:
    [button] = [b for b in at.button if b.label == label]
    button.click()
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("variants", [1, 2])
def test_write_shows_each_run_the_database_refused_with_its_text_to_copy(
    impatient_database, scripted_model: ScriptedBackend, app_test: AppTest, variants: int
) -> None:
    texts = ["Waves fold over stone.", "Gulls cry above tide."][:variants]
    scripted_model.reply(*texts)
    at = on_scripted_model(app_test)
    at.text_area(key="w_instruction").input("Describe a harbour.")
    at.number_input(key="w_target").set_value(4)
    variants_box(at).set_value(variants)
    at.selectbox(key="w_mode").set_value("baseline")
    other = lock_database()
    try:
        click(at, "Generate")
    finally:
        other.close()
    errors, codes = unsaved(at)
    assert len(errors) == variants and all(
        "(database is locked)" in e and "History does not have it" in e for e in errors
    )
    assert sorted(codes) == sorted(texts)


def test_compare_shows_each_column_the_database_refused_with_its_text_to_copy(
    impatient_database, scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    def reply(messages, options) -> str:  # the CAPEL column counts down, the baseline one writes plainly
        capel = "Required output format" in messages[-1]["content"]
        return "<4>Gulls<3>cry<2>above<1>tide.<0>" if capel else "Waves fold over stone."

    scripted_model.reply(reply)
    at = on_scripted_model(app_test)
    at.switch_page("app_pages/compare.py").run()
    at.text_area(key="c_instruction").input("Describe a harbour.")
    at.number_input(key="c_target").set_value(4)
    at.multiselect(key="c_modes").set_value(["baseline", "capel"])
    other = lock_database()
    try:
        click(at, "Run comparison")
    finally:
        other.close()
    errors, codes = unsaved(at)
    assert len(errors) == 2 and all("(database is locked)" in e for e in errors)
    assert sorted(codes) == ["Gulls cry above tide.", "Waves fold over stone."]


BAD_URLS = {
    "parent_is_a_file": ("sqlite:////dev/null/capel.db", "cannot create the folder /dev/null"),
    "unknown_scheme": ("foo://bar/baz", "no database driver for 'foo'"),
    "not_a_url": ("just some words", "is not a database URL"),
    "password_in_a_bad_url": ("postgres ql://me:hunter2@db/x", "is not a database URL"),
}


@pytest.mark.parametrize("case", BAD_URLS)
def test_a_database_url_that_names_no_usable_database_is_one_error_box_on_the_page(monkeypatch, case: str) -> None:
    url, said = BAD_URLS[case]
    monkeypatch.setenv("DATABASE_URL", url)
    at = AppTest.from_file(str(APP_PATH), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    [box] = [e.value for e in at.error]
    assert box.startswith("History is unavailable:") and said in box and "hunter2" not in box


@pytest.mark.parametrize("case", BAD_URLS)
def test_a_database_url_typed_in_the_sidebar_that_cannot_be_used_is_one_error_box_and_the_old_one_stays(
    app_test: AppTest, case: str
) -> None:
    url, said = BAD_URLS[case]
    app_test.text_input(key="db_url_input").input(url).run()
    assert not app_test.exception, app_test.exception
    [box] = [e.value for e in app_test.error]
    assert box == f"Could not open that database: {box.split(': ', 1)[1]}" and said in box
    assert "StorageError" not in box and "hunter2" not in box
    assert any(os.environ["DATABASE_URL"].removeprefix("sqlite:///") in c.value for c in app_test.caption)

"""The pages when the database refuses a run to the end (another process holds its lock): Write, its variants and
Compare show each run's text to copy and say where it could not be saved, instead of losing it (AppTest, a
scripted OpenAI-compatible server, a real SQLite file locked by a second connection)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.runs import LiveRun
from capel_ui.storage import dispose_engines
from capel_ui.storage import engine as engine_module
from tests.scripted_server import MODEL, Behaviour, ScriptedServer, answer, ok


@pytest.fixture
def impatient_database(monkeypatch) -> Iterator[None]:
    """Writers give up on a lock after 50 ms and a run tries its final save once more, quickly (requested before
    `app_test`, so the page's engine is opened with it)."""
    dispose_engines()
    monkeypatch.setattr(engine_module, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(LiveRun, "save_retries", (0.05,))
    yield
    dispose_engines()


def on_server(at: AppTest, url: str) -> AppTest:
    """The sidebar's model: the scripted server (no grammar field, so no probe request)."""
    at.selectbox(key="provider").set_value("compatible").run()
    at.text_input(key="compat_url").input(url)
    at.text_input(key="compat_model").input(MODEL).run()
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
    impatient_database, app_test: AppTest, scripted: ScriptedServer, variants: int
) -> None:
    texts = ["Waves fold over stone.", "Gulls cry above tide."][:variants]
    scripted.script(*(ok(t) for t in texts))
    at = on_server(app_test, scripted.url)
    at.text_area(key="w_instruction").input("Describe a harbour.")
    at.number_input(key="w_target").set_value(4)
    at.number_input(key="w_variants").set_value(variants)
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
    impatient_database, app_test: AppTest, scripted: ScriptedServer
) -> None:
    def reply(body: dict) -> Behaviour:  # the CAPEL column counts down, the baseline one writes plainly
        capel = "Required output format" in body["messages"][-1]["content"]
        return ok("<4>Gulls<3>cry<2>above<1>tide.<0>" if capel else "Waves fold over stone.")

    scripted.script(answer(reply), answer(reply))
    at = on_server(app_test, scripted.url)
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

"""What the writer set or got survives the pages (AppTest, the in-process scripted model, a real SQLite file):
Write's form across a visit to Compare, History's Delete that never opens the next run under the cursor, and
Benchmark's Run that shows its results at once and says a database's fault in one plain line."""

from __future__ import annotations

import os

from streamlit.testing.v1 import AppTest

from capel_ui.backends import ScriptedBackend
from capel_ui.storage import create_run, get_engine
from tests.test_db_faults import click, impatient_database, lock_database, on_scripted_model  # noqa: F401


def saved_run(text: str) -> int:
    return create_run(
        get_engine(os.environ["DATABASE_URL"]),
        instruction="Name a colour.", prompt="p", raw=text, text=text, model="embedded", backend="embedded",
        mode="exact", lang="en", unit="en_words", target=2, count=2, exact=True, valid=True, status="complete",
        origin="write",
    )  # fmt: skip


def test_writes_target_and_form_come_back_as_set_after_a_visit_to_compare(app_test: AppTest) -> None:
    at = app_test
    at.text_area(key="w_instruction").input("Write a headline.").run()
    at.number_input(key="w_target").set_value(40).run()
    at.checkbox(key="w_code").check().run()
    at.number_input(key="w_seed").set_value(7).run()
    at.number_input(key="w_time_limit").set_value(90.0).run()
    at.switch_page("app_pages/compare.py").run()
    at.switch_page("app_pages/write.py").run()
    assert not at.exception, at.exception
    assert at.number_input(key="w_target").value == 40
    assert at.checkbox(key="w_code").value is True
    assert (at.number_input(key="w_seed").value, at.number_input(key="w_time_limit").value) == (7, 90.0)
    assert at.text_area(key="w_instruction").value == "Write a headline."
    assert not at.warning, [w.value for w in at.warning]  # a value put back is not a widget set twice


def test_deleting_a_run_closes_its_detail_and_says_so_instead_of_opening_the_next(app_test: AppTest) -> None:
    first, second = saved_run("Blue sky"), saved_run("Red sun")
    at = app_test
    at.switch_page("app_pages/history.py").run()
    at.session_state["h_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}  # the newest
    at.run()
    assert [s.value for s in at.main.subheader] == [f"Run {second}"]
    click(at, "Yes, delete")
    assert [s.value for s in at.main.subheader] == []  # no run open: no Delete under the cursor
    assert [s.value for s in at.success] == [f"Run {second} deleted."]
    assert not [b for b in at.button if b.label == "Yes, delete"]
    assert "Select a row to open the run." in [c.value for c in at.caption]
    at.run()
    assert [s.value for s in at.success] == []  # said once
    ids = [row for row in at.dataframe[0].value["id"]]
    assert ids == [first]


def one_sample_benchmark(model: ScriptedBackend, app_test: AppTest) -> AppTest:
    """The Benchmark page set to run one baseline sample of 5 words on the scripted model, not yet run."""
    model.reply("Waves fold over grey stone.")
    at = on_scripted_model(app_test)
    at.switch_page("app_pages/benchmark.py").run()
    at.multiselect(key="b_modes").set_value(["baseline"])
    at.text_input(key="b_lengths_rtg").input("5")
    at.number_input(key="b_limit").set_value(1)
    return at


def test_benchmark_run_shows_its_results_without_a_reload(scripted_model: ScriptedBackend, app_test: AppTest) -> None:
    at = one_sample_benchmark(scripted_model, app_test)
    at.selectbox(key="b_lang").set_value("en")
    click(at, "Run benchmark")
    [done] = [s.value for s in at.success]
    assert done.startswith("Bench run 1 complete: 1 new")
    assert not at.error, [e.value for e in at.error]
    assert any("Runs 1 · 1 samples" in c.value for c in at.caption)  # its table and charts, in the same run


def test_benchmark_on_a_locked_database_says_so_in_one_line_naming_it_without_sql(
    impatient_database,  # noqa: F811
    scripted_model: ScriptedBackend,
    app_test: AppTest,
) -> None:
    at = one_sample_benchmark(scripted_model, app_test)
    other = lock_database()
    try:
        click(at, "Run benchmark")
    finally:
        other.close()
    [error] = [e.value for e in at.error]
    path = os.environ["DATABASE_URL"].removeprefix("sqlite:///")
    assert f"the database at {path} failed (database is locked)" in error
    assert "INSERT" not in error and "SELECT" not in error and "[SQL:" not in error and "\n" not in error

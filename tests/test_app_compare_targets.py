"""The Compare page speaks Write's limits: counting unit, exactly / at most / between, presets, carried from Write.

Driven headless by AppTest on the in-process scripted model (test_browser.py runs Compare's character limit on the
real embedded model).
"""

from __future__ import annotations

import os

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.backends import Capabilities, ScriptedBackend
from capel_ui.presets import PRESET_BY_KEY
from capel_ui.storage import create_run, get_engine, list_runs
from capel_ui.ui.compare import comparison_chart
from capel_ui.vocab import MARKERS_UNITS_ONLY

COMPARE = "app_pages/compare.py"
MARKER_SKIP = f"Skipped ({MARKERS_UNITS_ONLY}): "


@pytest.fixture
def app(app_test: AppTest) -> AppTest:
    return app_test


def engine():
    return get_engine(os.environ["DATABASE_URL"])


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def badges(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def run_button(at: AppTest):
    [b] = [b for b in at.button if b.label == "Run comparison"]
    return b


def compare_target(at: AppTest) -> tuple:
    return (
        at.radio(key="c_lang").value,
        at.selectbox(key="c_unit").value,
        at.button_group(key="c_kind").value,
        at.number_input(key="c_target").value,
    )


def test_compare_runs_a_character_limit_and_skips_capel_only_for_exactly_n_characters_saying_why(
    scripted_model: ScriptedBackend, app: AppTest
) -> None:
    """On the in-process scripted model that takes a grammar (a local model's path): the embedded model runs the
    same Compare at most 30 characters in the browser (test_browser.py), this checks the page's figures and records."""
    scripted_model.capabilities = Capabilities(grammar_field="grammar")
    scripted_model.reply("Fresh sourdough, baked daily.")  # 29 characters
    app.selectbox(key="provider").set_value("scripted").run()
    app.switch_page(COMPARE).run()
    app.text_area(key="c_instruction").input("Write a headline for a bakery's new sourdough.")
    app.selectbox(key="c_unit").set_value("chars").run()
    app.button_group(key="c_kind").set_value("exactly").run()
    app.number_input(key="c_target").set_value(30).run()
    app.multiselect(key="c_modes").set_value(["capel", "exact"]).run()
    assert MARKER_SKIP + "Scripted model · CAPEL" in captions(app)
    app.button_group(key="c_kind").set_value("at_most").run()
    assert not [c for c in captions(app) if c.startswith(MARKER_SKIP)]  # the markers show the characters left
    app.multiselect(key="c_modes").set_value(["exact"]).run()

    run_button(app).click()
    app.run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]

    [run] = list_runs(engine())
    assert (run.mode, run.unit, run.target_kind, run.target, run.status, run.verified) == (
        "exact",
        "chars",
        "at_most",
        30,
        "complete",
        True,
    )
    assert 1 <= run.count <= 30
    assert "at most 30 characters · 1 column(s)" in captions(app)
    assert badges(app) == [f":green-badge[✓ {run.count}/30 characters]"]
    [count] = [m for m in app.metric if m.label == "Count"]
    assert int(count.value) == run.count  # within the limit: nothing outside it beside the count
    assert scripted_model.requests[0][1].grammar is not None  # the limit was asked of the grammar


def test_compare_starts_from_writes_preset_and_keeps_its_own_target_after_a_visit_elsewhere(app: AppTest) -> None:
    app.button_group(key="w_preset").set_value(PRESET_BY_KEY["x-post"].name).run()
    app.switch_page(COMPARE).run()
    assert not app.exception, app.exception
    assert compare_target(app) == ("en", "x_weighted", "at_most", 280)
    app.multiselect(key="c_modes").set_value(["baseline", "capel", "exact"]).run()
    assert not [c for c in captions(app) if c.startswith(MARKER_SKIP)]  # an X post's room, in weighted characters

    app.button_group(key="c_kind").set_value("exactly").run()
    app.number_input(key="c_target").set_value(12).run()
    assert MARKER_SKIP + "SmolLM2-135M (embedded) · CAPEL" in captions(app)
    app.switch_page("app_pages/history.py").run()
    app.switch_page(COMPARE).run()
    assert compare_target(app) == ("en", "x_weighted", "exactly", 12)  # Write did not change: Compare's own

    app.switch_page("app_pages/write.py").run()
    app.button_group(key="w_preset").set_value(PRESET_BY_KEY["weibo"].name).run()
    app.switch_page(COMPARE).run()
    assert compare_target(app) == ("zh", "zh_all", "at_most", 140)  # Write changed: Compare follows it


def test_a_preset_on_compare_sets_its_limit_and_template(app: AppTest) -> None:
    app.switch_page(COMPARE).run()
    app.text_area(key="c_instruction").set_value("").run()
    app.button_group(key="c_preset").set_value(PRESET_BY_KEY["ads-headline"].name).run()
    assert not app.exception, app.exception
    assert compare_target(app) == ("en", "google_ads_chars", "at_most", 30)
    assert app.text_area(key="c_instruction").value == PRESET_BY_KEY["ads-headline"].example


def test_an_upside_down_range_on_compare_says_so_and_cannot_be_run(app: AppTest) -> None:
    app.switch_page(COMPARE).run()
    app.button_group(key="c_kind").set_value("range").run()
    app.number_input(key="c_low").set_value(20).run()
    app.number_input(key="c_target").set_value(12).run()
    assert [e.value for e in app.error] == [
        "The range goes from the smaller number to the larger: make “From” at most “To”."
    ]
    assert run_button(app).disabled


def _compare_run(count: int, **fields) -> None:
    row = {"model": "embedded", "backend": "embedded", "mode": "exact", "lang": "en", "unit": "chars"}
    row |= {"target": 30, "target_kind": "at_most", "count": count, "status": "complete", "comparison_id": "c9"}
    create_run(engine(), instruction="Write a headline.", text="x" * count, origin="compare", **row | fields)


def test_the_comparison_chart_draws_a_limit_as_a_band_and_a_line_with_the_counts_as_bars() -> None:
    _compare_run(27, verified=True)
    _compare_run(41, mode="baseline", verified=False)
    fig = comparison_chart(sorted(list_runs(engine(), comparison_id="c9"), key=lambda r: r.id))
    assert list(fig.data[0].y) == [27, 41]
    [band] = [s for s in fig.layout.shapes if s.type == "rect"]
    [limit] = [s for s in fig.layout.shapes if s.type == "line"]
    assert (band.y0, band.y1, limit.y0) == (0, 30, 30)
    assert fig.data[0].marker.color == ("#2b8a3e", "#c92a2a")
    assert "at most 30 characters" in fig.layout.title.text


def test_compare_on_the_embedded_model_starts_with_columns_that_can_succeed(app: AppTest) -> None:
    app.switch_page(COMPARE).run()
    assert app.multiselect(key="c_modes").value == ["baseline", "exact"]  # the 135M model ignores CAPEL, loops counting

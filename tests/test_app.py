"""The Streamlit pages as a writer uses them, driven headless by AppTest against the embedded model.

Every test gets its own SQLite database (conftest sets DATABASE_URL per test), so what a page shows and what
History stores can both be checked. Widgets are found by key, buttons by their visible label.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url
from streamlit.testing.v1 import AppTest

from capel_ui.assessment import assess
from capel_ui.backends import Capabilities, ScriptedBackend
from capel_ui.storage import RunRecord, create_run, get_engine, list_runs
from capel_ui.variants import run_rank_key
from tests.conftest import variants_box

PAGES = [
    "app_pages/write.py",
    "app_pages/compare.py",
    "app_pages/history.py",
    "app_pages/benchmark.py",
    "app_pages/models.py",
]


@pytest.fixture
def app(app_test: AppTest) -> AppTest:
    """The app as a new visitor sees it: Write open, embedded model selected, nothing run yet."""
    return app_test


def saved_runs() -> list[RunRecord]:
    return list_runs(get_engine(os.environ["DATABASE_URL"]))


def button(at: AppTest, label: str):
    matches = [b for b in at.button if b.label == label]
    assert matches, f"no {label!r} button; buttons: {[b.label for b in at.button]}"
    return matches[0]


def badges(at: AppTest) -> list[str]:
    """The verdict badges on the page (st.badge renders as a coloured markdown directive)."""
    return [m.value for m in at.markdown if "-badge[" in m.value]


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def generate(at: AppTest, instruction: str, target: int, mode: str | None = None, variants: int = 1) -> AppTest:
    at.text_area(key="w_instruction").input(instruction)
    at.number_input(key="w_target").set_value(target)
    variants_box(at).set_value(variants)
    if mode is not None:
        at.selectbox(key="w_mode").set_value(mode)
    button(at, "Generate").click()
    at.run()
    assert not at.exception, at.exception
    return at


# --- Write ---------------------------------------------------------------------------------------


TWELVE = "A hand-made ceramic mug, glazed sea blue, keeps your morning coffee warm."
HEADLINE_25 = (  # 25 words, as a model that takes a grammar would write them under `exact`
    "Seaside town rebuilds its old lighthouse, and the harbour lights up again as fishermen, children and visitors "
    "gather on the old pier to watch it."
)


def test_exact_mode_is_the_default_and_yields_a_verified_25_word_text_saved_to_history(
    scripted_model: ScriptedBackend, app: AppTest
) -> None:
    scripted_model.capabilities = Capabilities(grammar_field="grammar")  # a local model that takes a grammar
    scripted_model.reply(HEADLINE_25)
    app.selectbox(key="provider").set_value("scripted").run()
    assert app.selectbox(key="w_mode").value == "exact"
    assert app.selectbox(key="w_mode").format_func("exact") == "Exact (guaranteed)"

    generate(app, "Write a headline about a seaside town that rebuilt its old lighthouse.", 25)

    assert badges(app) == [":green-badge[✓ exact · verified · 25/25 English words]"]
    assert not app.error
    [run] = saved_runs()
    assert (run.status, run.mode, run.model, run.target, run.count, run.exact) == (
        "complete",
        "exact",
        "scripted",
        25,
        25,
        True,
    )
    assert any(c.startswith(f"Run {run.id} · write · scripted · Exact (guaranteed)") for c in captions(app))
    assert [d.label for d in app.get("download_button")] == ["Download .txt", "Download .md", "Download .json"]
    assert scripted_model.requests[0][1].grammar is not None  # the count was asked of the grammar, not the prompt


VARIANT_TEXTS = (  # four words each: a plain one, a loop (junk), one ending on "the"
    "Lighthouse town shines again.",
    "Light light light light.",
    "The town rebuilt the",
)


def test_three_variants_are_shown_ranked_with_scores_and_the_pick_is_what_the_page_exports(
    scripted_model: ScriptedBackend,
    app: AppTest,  # staged first: the sidebar offers it from the first run
) -> None:
    scripted_model.capabilities = Capabilities(logprobs=True)
    scripted_model.reply(*(countdown_of(t) for t in VARIANT_TEXTS))
    app.selectbox(key="provider").set_value("scripted").run()
    generate(app, "Write a headline about a seaside town that rebuilt its old lighthouse.", 4, variants=3)

    runs = saved_runs()
    assert len(runs) == 3 and len({r.group_id for r in runs}) == 1 and runs[0].group_id
    assert {r.origin for r in runs} == {"variant"}
    assert all(r.verified and r.score is not None and r.fluency is not None for r in runs)
    assert all(r.judge_score is None for r in runs)  # no judge configured: nothing asked for one
    assert not [s for s in app.selectbox if s.key == "w_judge"]
    best = max(runs, key=run_rank_key)
    assert best.text == VARIANT_TEXTS[0]  # neither the loop nor the dangling ending
    assert [b.label for b in app.button if b.key and b.key.startswith("w_pick")].count("Picked") == 1
    assert any(c.startswith(f"Run {best.id} · variant") for c in captions(app))

    other = next(r for r in runs if r.id != best.id)
    [pick] = [b for b in app.button if b.key == f"w_pick{other.id}"]
    pick.click()
    app.run()
    assert not app.exception, app.exception
    assert any(c.startswith(f"Run {other.id} · variant") for c in captions(app))
    assert not any(c.startswith(f"Run {best.id} · variant") for c in captions(app))


def countdown_of(text: str) -> str:
    """`text` as a CAPEL countdown, `<N>word … <1>word<0>`."""
    words = text.split()
    return "".join(f"<{len(words) - i}>{w} " for i, w in enumerate(words)) + "<0>"


@pytest.mark.parametrize(
    ("reply", "badge"),
    [
        (" ".join(["word"] * 25), ":green-badge[✓ exact · verified · 25/25 English words]"),
        (" ".join(["word"] * 22), ":red-badge[off by -3 · 22/25 English words]"),
    ],
    ids=["on_target", "short"],
)
def test_baseline_mode_badge_states_the_count_against_the_target(
    scripted_model: ScriptedBackend, app: AppTest, reply: str, badge: str
) -> None:
    scripted_model.reply(reply)
    app.selectbox(key="provider").set_value("scripted").run()
    generate(app, "Write a short note thanking a neighbour for watering the plants.", 25, mode="baseline")

    [run] = saved_runs()
    assert run.mode == "baseline" and run.status == "complete"
    assert badges(app) == [badge]


def test_the_guaranteed_countdown_on_the_embedded_model_says_it_will_be_written_as_exact(app: AppTest) -> None:
    app.selectbox(key="w_mode").set_value("exact-countdown").run()
    assert not app.exception, app.exception
    assert any("it writes Exact (guaranteed) instead" in c for c in captions(app))  # beside the mode picked
    app.checkbox(key="w_fallback").uncheck().run()  # forced: no promise of a fallback
    assert not any("it writes Exact (guaranteed) instead" in c for c in captions(app))


def test_the_target_box_does_not_go_below_one(app: AppTest) -> None:
    """A target of 0 cannot be asked for: the box holds at 1 (the core refuses 0 from the CLI, tested there)."""
    app.number_input(key="w_target").set_value(0).run()
    assert not app.exception, app.exception
    assert app.number_input(key="w_target").value == 1
    assert saved_runs() == []


def test_empty_instruction_is_refused_with_a_clear_error_and_nothing_is_saved(app: AppTest) -> None:
    generate(app, "   ", 25)

    [message] = [e.value for e in app.error]
    assert "instruction is empty" in message
    assert saved_runs() == []


def test_openai_without_a_key_says_to_set_openai_api_key_instead_of_crashing(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    app.selectbox(key="provider").set_value("openai").run()
    assert not app.exception, app.exception
    assert app.selectbox(key="w_mode").value == "exact"  # gpt-4.1 takes a strict JSON-schema pattern

    generate(app, "Write a headline about a lighthouse.", 25)

    [message] = [e.value for e in app.error]
    assert "OPENAI_API_KEY" in message
    assert saved_runs() == []


# --- The sidebar ---------------------------------------------------------------------------------


def sidebar_captions(at: AppTest) -> list[str]:
    return [c.value for c in at.sidebar.caption]


def test_the_sidebar_says_a_key_comes_from_the_environment(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-SECRET")
    app.selectbox(key="provider").set_value("openai").run()
    assert "Using OPENAI_API_KEY from the environment." in sidebar_captions(app)
    assert not any("SECRET" in c for c in sidebar_captions(app))


def test_the_sidebar_says_a_key_comes_from_secrets_toml_and_a_typed_key_needs_no_note(
    app: AppTest, secrets, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-from-env")
    secrets.project.write_text('DEEPSEEK_API_KEY = "sk-from-secrets"\n')
    app.selectbox(key="provider").set_value("deepseek").run()
    assert f"Using DEEPSEEK_API_KEY from secrets.toml ({secrets.project})." in sidebar_captions(app)
    app.text_input(key="key_deepseek").input("sk-typed").run()
    assert not any(c.startswith("Using ") for c in sidebar_captions(app))


def test_a_broken_secrets_file_is_an_error_in_the_sidebar_not_a_crash(app: AppTest, secrets) -> None:
    secrets.project.write_text('OPENAI_API_KEY = "sk-live-SECRET\n')
    app.selectbox(key="provider").set_value("openai").run()
    assert not app.exception, app.exception
    [message] = [e.value for e in app.sidebar.error]
    assert str(secrets.project) in message and "not valid TOML" in message and "SECRET" not in message


# --- History -------------------------------------------------------------------------------------


def test_history_lists_a_run_made_on_write_and_its_filters_narrow_the_table(
    scripted_model: ScriptedBackend, app: AppTest
) -> None:
    scripted_model.reply(countdown_of("Seaside town rebuilds its old lighthouse and lights the harbour again."))
    app.selectbox(key="provider").set_value("scripted").run()
    generate(app, "Write a headline about a seaside town that rebuilt its old lighthouse.", 11, mode="capel")
    # A second run, as the CLI would have saved it: not exact, about something else.
    create_run(
        get_engine(os.environ["DATABASE_URL"]),
        instruction="Describe a ceramic mug.",
        prompt="p",
        raw="A mug.",
        text="A mug.",
        model="embedded",
        backend="embedded",
        mode="baseline",
        lang="en",
        unit="en_words",
        target=25,
        count=2,
        exact=False,
        valid=True,
        status="complete",
        origin="cli",
    )

    app.switch_page("app_pages/history.py").run()
    assert not app.exception, app.exception
    assert "2 run(s)" in captions(app)
    table = app.dataframe[0].value
    assert sorted(table["mode"]) == ["Baseline", "CAPEL"]

    app.checkbox(key="h_verified").check().run()
    assert "1 run(s)" in captions(app)
    assert list(app.dataframe[0].value["mode"]) == ["CAPEL"]

    app.checkbox(key="h_verified").uncheck()
    app.text_input(key="h_search").input("MUG").run()
    assert "1 run(s)" in captions(app)
    assert list(app.dataframe[0].value["text"]) == ["A mug."]

    app.text_input(key="h_search").input("no run says this").run()
    assert "0 run(s)" in captions(app)
    assert [i.value for i in app.info] == ["No runs match. Runs from Write, Compare and the CLI appear here."]


def test_history_keeps_its_filters_when_the_writer_comes_back(app: AppTest) -> None:
    app.switch_page("app_pages/history.py").run()
    app.text_input(key="h_search").input("lighthouse").run()
    app.checkbox(key="h_verified").check().run()
    app.selectbox(key="h_lang").set_value("zh").run()
    app.switch_page("app_pages/write.py").run()
    app.switch_page("app_pages/history.py").run()
    assert not app.exception, app.exception
    assert app.text_input(key="h_search").value == "lighthouse"
    assert app.checkbox(key="h_verified").value is True
    assert app.selectbox(key="h_lang").value == "zh"


def test_a_database_that_fails_under_a_page_is_one_line_naming_it_not_a_traceback(app: AppTest) -> None:
    path = make_url(os.environ["DATABASE_URL"]).database
    with sqlite3.connect(path) as db:  # the runs table gone while the app runs (a file replaced under it, say)
        db.execute("ALTER TABLE runs RENAME TO runs_elsewhere")
    app.switch_page("app_pages/history.py").run()
    assert not app.exception, app.exception
    [error] = [e.value for e in app.error]
    assert f"the database at {path} failed (no such table: runs)" in error and "what was saved before is kept" in error


def test_history_opens_the_selected_run_with_its_text_and_verdict(app: AppTest) -> None:
    run_id = create_run(
        get_engine(os.environ["DATABASE_URL"]),
        instruction="Name a colour.",
        prompt="p",
        raw="Blue sky",
        text="Blue sky",
        model="embedded",
        backend="embedded",
        mode="exact",
        lang="en",
        unit="en_words",
        target=2,
        count=2,
        exact=True,
        valid=True,
        status="complete",
        origin="write",
    )
    app.switch_page("app_pages/history.py").run()
    assert "Select a row to open the run." in captions(app)

    app.session_state["h_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app.run()

    assert not app.exception, app.exception
    assert [s.value for s in app.main.subheader] == [f"Run {run_id}"]
    assert badges(app) == [":green-badge[✓ exact · verified · 2/2 English words]"]
    assert any("Blue sky" in h.value and "capel-text" in h.value for h in app.html)


# --- Compare -------------------------------------------------------------------------------------


def test_compare_baseline_and_exact_fills_one_column_each_under_one_comparison_id(
    scripted_model: ScriptedBackend, app: AppTest
) -> None:
    scripted_model.capabilities = Capabilities(grammar_field="grammar")
    scripted_model.reply(  # the columns run at once: each gets its answer by what it asked
        lambda messages, options: TWELVE if options.grammar is not None else "A hand-made mug, glazed by hand."
    )
    app.selectbox(key="provider").set_value("scripted").run()
    app.switch_page("app_pages/compare.py").run()
    assert [m.label for m in app.multiselect(key="c_models").value] == ["Scripted model"]
    app.text_area(key="c_instruction").input("Write a product description for a hand-made ceramic mug.")
    app.number_input(key="c_target").set_value(12)
    app.multiselect(key="c_modes").set_value(["baseline", "exact"])
    button(app, "Run comparison").click()
    app.run()
    assert not app.exception, app.exception

    runs = sorted(saved_runs(), key=lambda r: r.id)
    assert [r.mode for r in runs] == ["baseline", "exact"]
    assert all(r.status == "complete" for r in runs)
    assert runs[0].comparison_id and runs[0].comparison_id == runs[1].comparison_id
    assert "exactly 12 English words · 2 column(s)" in captions(app)
    assert not [c for c in captions(app) if "call(s)" in c or "marker error(s)" in c]  # nothing said of nothing
    assert len(app.get("plotly_chart")) == 1
    verdicts = badges(app)
    assert len(verdicts) == 2
    assert verdicts[1] == ":green-badge[✓ exact · verified · 12/12 English words]"
    # Each column shows its own count as a metric, with the deviation from the target beside it.
    counts = [m for m in app.metric if m.label == "Count"]
    assert [int(m.value) for m in counts] == [r.count for r in runs]


# --- Every page, nothing saved yet ---------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_each_page_renders_inside_app_py_with_the_sidebar_on_an_empty_database(app: AppTest, page: str) -> None:
    """The sidebar check fails if a `pages/` folder comes back beside app.py: Streamlit would then run the page
    file alone (v1 multipage mode, which AppTest re-detects on every run as a fresh server does), no sidebar."""
    app.switch_page(page).run()
    assert not app.exception, app.exception
    assert app.sidebar.selectbox(key="provider").value == "embedded"
    if page != "app_pages/benchmark.py":  # the Benchmark page is still changing: only check that it renders
        assert not app.error
        assert app.title[0].value == Path(page).stem.capitalize()
    assert saved_runs() == []


# --- scores (issue 12) ---------------------------------------------------------------------------


def _scored_run(text: str, score: float | None, **extra) -> int:
    """A run saved as the app saves one: its judgement stored with it (here with the given score)."""
    fields = {"model": "embedded", "backend": "embedded", "mode": "exact", "lang": "en", "unit": "en_words"}
    fields |= {"target": 4, "count": 4, "exact": True, "valid": True, "verified": True, "status": "complete"}
    judged = {**assess(text, "en", "Describe a pub").as_json(), "score": score}
    return create_run(
        get_engine(os.environ["DATABASE_URL"]),
        instruction="Describe a pub",
        text=text,
        score=score,
        assessment=judged,
        **fields | extra,
    )


def test_compare_shows_each_columns_score_and_its_quality_warnings(app: AppTest) -> None:
    _scored_run("Lighthouses guide ships home.", 6.5, origin="compare", comparison_id="c1")
    _scored_run("Lighthouses guide shipshome safely.", 2.0, origin="compare", comparison_id="c1", judge_score=8.0)
    app.switch_page("app_pages/compare.py").run()
    app.session_state["c_id"] = "c1"
    app.run()
    assert not app.exception, app.exception
    assert [m.value for m in app.metric if m.label == "Score"] == ["6.5", "8"]  # a judge's rating wins
    assert [w.value for w in app.warning] == ["“shipshome” looks like two words glued together"]


def test_history_table_has_a_score_column(app: AppTest) -> None:
    _scored_run("Lighthouses guide ships home.", 6.5, origin="cli")
    _scored_run("Three words only.", None, origin="cli")
    app.switch_page("app_pages/history.py").run()
    assert not app.exception, app.exception
    table = app.dataframe[0].value
    assert list(table["score"].fillna(-1)) == [-1, 6.5]  # newest first; no score shows empty


def test_variants_default_to_three_for_a_short_text_on_the_embedded_model_only(app: AppTest) -> None:
    assert variants_box(app).value == 3
    app.number_input(key="w_target").set_value(300).run()
    assert variants_box(app).value == 1  # a long text: one at a time
    app.number_input(key="w_target").set_value(25).run()
    app.selectbox(key="provider").set_value("openai").run()
    assert not app.exception, app.exception
    assert variants_box(app).value == 1  # a paid API is not called three times unasked


def test_the_writers_own_number_of_variants_stays_when_the_target_and_model_change(app: AppTest) -> None:
    variants_box(app).set_value(2).run()
    app.number_input(key="w_target").set_value(300).run()
    app.selectbox(key="provider").set_value("openai").run()
    assert not app.exception, app.exception
    assert variants_box(app).value == 2


def test_with_an_openai_key_at_hand_its_models_are_offered_to_judge_and_to_compare(
    app_test: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capel_ui.backends import PROVIDERS

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    app_test.run()
    openai = {f"{m} (OpenAI)" for m in PROVIDERS["openai"].models}
    judges = app_test.selectbox(key="w_judge").options
    assert set(judges) == {"No judge (offline score)", *openai}
    app_test.switch_page("app_pages/compare.py").run()
    assert set(app_test.multiselect(key="c_models").options) == {"SmolLM2-135M (embedded)", *openai}

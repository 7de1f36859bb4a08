"""Issue 14, the writer's day: page logic checked with AppTest (no model runs; the browser tests cover the flows).

Each test opens app.py as a new visitor on its own SQLite database.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.backends import ScriptedBackend, get_backend
from capel_ui.cli import main
from capel_ui.generation import Generation, Request, default_max_tokens
from capel_ui.prompts import REWRITE, rewrite_source
from capel_ui.runs import LiveRun
from capel_ui.storage import get_engine, get_run, list_runs
from capel_ui.ui.benchmark import metric_table, suite_label
from capel_ui.ui.compare import comparison_chart
from capel_ui.ui.state import prefill_for
from capel_ui.vocab import MAX_TARGET
from tests.saved_runs import save_parsed_run
from tests.scripted_server import closed_port_url

ROOT = Path(__file__).resolve().parent.parent


def engine():
    return get_engine(os.environ["DATABASE_URL"])


def failed_run() -> int:
    """A run that failed before any text arrived (nothing listens on the URL), saved as Write saves it."""
    backend = get_backend("m", provider="compatible", base_url=closed_port_url(), max_retries=0)
    live = LiveRun(
        Generation(backend, Request(instruction="Describe", target=12, mode="capel")), engine(), origin="write"
    )
    live.run()
    assert live.run_id is not None
    return live.run_id


def texts(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.caption, *at.info, *at.error, *at.warning)]
    return "\n".join(str(p) for p in parts)


# ----- Write ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("typed", "used"), [(100_000, MAX_TARGET), (0, 1), (-5, 1), (37, 37)])
@pytest.mark.parametrize(("page", "key"), [(None, "w_target"), ("app_pages/compare.py", "c_target")])
def test_the_target_box_shows_the_value_that_is_used(
    app_test: AppTest, typed: int, used: int, page: str | None, key: str
) -> None:
    if page:
        app_test.switch_page(page).run()
    app_test.number_input(key=key).set_value(typed).run()
    assert not app_test.exception, app_test.exception
    assert app_test.number_input(key=key).value == used
    said = [c.value for c in app_test.caption if "The target must be" in c.value]
    assert said == ([] if typed == used else [f"The target must be from 1 to {MAX_TARGET:,}; {used:,} is used."])


def test_a_provider_without_grammar_says_it_uses_capel_and_exact_comes_back_with_the_embedded_model(
    app_test: AppTest,
) -> None:
    at = app_test
    assert at.selectbox(key="w_mode").value == "exact"
    at.selectbox(key="provider").set_value("deepseek").run()  # DeepSeek's API takes no grammar
    assert at.selectbox(key="w_mode").value == "capel"
    [notice] = [i.value for i in at.info if "The guaranteed modes are off for" in i.value]
    assert "DeepSeek" in notice and "CAPEL is used for now" in notice
    assert any("Not guaranteed on DeepSeek" in c.value for c in at.caption)  # why, with its source, below the mode
    at.selectbox(key="provider").set_value("embedded").run()
    assert at.selectbox(key="w_mode").value == "exact"
    assert not [i for i in at.info if "guaranteed modes are off" in i.value]


def test_a_unit_no_grammar_can_guarantee_says_so_and_exact_comes_back_with_a_unit_that_can(app_test: AppTest) -> None:
    at = app_test
    at.radio(key="w_lang").set_value("zh").run()
    assert at.selectbox(key="w_mode").value == "exact"
    at.selectbox(key="w_unit").set_value("zh_words").run()
    assert at.selectbox(key="w_mode").value == "capel"
    [notice] = [i.value for i in at.info if "cannot guarantee" in i.value]
    assert "Chinese words (jieba)" in notice and "Chinese characters or LIFEBench counter" in notice
    at.selectbox(key="w_unit").set_value("zh_chars").run()
    assert at.selectbox(key="w_mode").value == "exact"


def test_a_mode_picked_by_the_writer_is_kept_across_providers(app_test: AppTest) -> None:
    at = app_test
    at.selectbox(key="w_mode").set_value("baseline").run()
    at.selectbox(key="provider").set_value("openai").run()
    at.selectbox(key="provider").set_value("embedded").run()
    assert at.selectbox(key="w_mode").value == "baseline"


def test_options_offer_the_output_limit_with_its_default_the_seed_and_a_time_limit(app_test: AppTest) -> None:
    at = app_test
    at.number_input(key="w_target").set_value(40).run()
    auto = default_max_tokens(Request(instruction="-", target=40, mode="exact"))
    box = at.number_input(key="w_max_tokens")
    assert (box.label, box.value, box.proto.placeholder) == ("Output limit (max tokens)", None, f"automatic: {auto}")
    assert at.number_input(key="w_seed").value is None
    assert at.number_input(key="w_time_limit").label == "Time limit (seconds)"


def test_rewrite_hides_the_instruction_and_shows_the_pasted_texts_count(app_test: AppTest) -> None:
    at = app_test
    at.text_area(key="w_instruction").input("Write a headline about a lighthouse.").run()
    at.toggle(key="w_rewrite").set_value(True).run()
    assert [t.key for t in at.text_area] == ["w_source"]  # no stale, greyed-out instruction
    at.text_area(key="w_source").input(" ".join(["word"] * 60)).run()
    at.number_input(key="w_target").set_value(30).run()
    assert "60 English words → 30" in [c.value for c in at.caption]


def test_switching_language_drops_the_chinese_presets_pill_and_target(app_test: AppTest) -> None:
    at = app_test
    at.pills(key="w_preset").set_value("Chinese blurb · 100 字").run()
    assert (at.radio(key="w_lang").value, at.number_input(key="w_target").value) == ("zh", 100)
    at.radio(key="w_lang").set_value("en").run()
    assert at.pills(key="w_preset").value is None
    assert at.number_input(key="w_target").value == 25
    assert at.text_area(key="w_instruction").value == ""


def test_a_failed_run_shows_the_failure_and_what_to_do_without_marker_errors_or_downloads(app_test: AppTest) -> None:
    run_id = failed_run()
    run = get_run(engine(), run_id)
    assert run is not None and (run.status, run.errors) == ("failed", [])
    app_test.session_state["w_run_id"] = run_id
    app_test.run()
    assert not app_test.exception, app_test.exception
    [message] = [e.value for e in app_test.error]
    assert "Could not connect" in message and "base URL" in message
    assert [m.value for m in app_test.markdown if "-badge[" in m.value] == [":red-badge[failed · no text arrived]"]
    assert app_test.get("download_button") == []
    assert not [e for e in app_test.expander if "marker error" in e.label]
    assert not [h for h in app_test.html if 'class="capel-text"' in h.value or 'class="capel-copy"' in h.value]


def test_every_result_shows_the_character_count_beside_the_unit_count_and_a_copy_button(app_test: AppTest) -> None:
    run_id = save_parsed_run(engine(), "<3> Café <2> au <1> lait <0>", 3, instruction="coffee")
    app_test.session_state["w_run_id"] = run_id
    app_test.run()
    assert "3 English words · 12 characters" in [c.value for c in app_test.caption]
    [copy] = [h.value for h in app_test.html if 'class="capel-copy"' in h.value]
    assert "Café au lait</textarea>" in copy


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_rewrite_run_comes_back_as_a_rewrite_of_its_text(lang: str) -> None:
    source = "The old lighthouse was rebuilt.\n\nIt shines again."
    instruction = REWRITE[lang].format(text=source)
    assert rewrite_source(instruction) == source
    run_id = save_parsed_run(engine(), "<2> a <1> b <0>", 2, instruction=instruction)
    run = get_run(engine(), run_id)
    assert prefill_for(run)["source"] == source and prefill_for(run)["rewrite"] is True
    assert "instruction" not in prefill_for(run)


def test_rerun_from_history_restores_the_inputs_and_clears_the_old_result(app_test: AppTest) -> None:
    at = app_test
    old = save_parsed_run(engine(), "<2> old <1> text <0>", 2, instruction="old")
    at.session_state["w_run_id"] = old
    source = "Some text to make shorter."
    new = get_run(
        engine(), save_parsed_run(engine(), "<2> a <1> b <0>", 2, instruction=REWRITE["en"].format(text=source))
    )
    at.session_state["prefill"] = prefill_for(new)
    at.run()
    assert not at.exception, at.exception
    assert at.toggle(key="w_rewrite").value is True
    assert at.text_area(key="w_source").value == source
    assert at.number_input(key="w_target").value == 2
    assert "w_run_id" not in at.session_state
    assert not [h for h in at.html if 'class="capel-text"' in h.value]


# ----- the database -----------------------------------------------------------------------------------------


def test_a_corrupt_database_stops_the_page_naming_the_file_and_leaves_it_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(os.urandom(4096))
    before = broken.read_bytes()
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{broken}")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    [message] = [e.value for e in at.error]
    assert str(broken) in message and "move it aside" in message
    assert broken.read_bytes() == before


# ----- Compare ----------------------------------------------------------------------------------------------


def test_compare_takes_the_instruction_from_write_and_says_how_to_add_models(
    app_test: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    for env in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(env, raising=False)
    at = app_test
    at.text_area(key="w_instruction").input("Write a note about tides.").run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert at.text_area(key="c_instruction").value == "Write a note about tides."
    assert any("API key in the sidebar" in c.value and "base URL" in c.value for c in at.caption)


def test_the_deviation_chart_marks_an_exact_column_at_zero() -> None:
    runs = [
        get_run(engine(), save_parsed_run(engine(), "<2> a <1> b <0>", 2, instruction="x")),
        get_run(engine(), save_parsed_run(engine(), "<2> a <1> b c d <0>", 2, instruction="y")),
    ]
    fig = comparison_chart(runs)
    [markers] = [t for t in fig.data if t.type == "scatter"]
    assert list(markers.y) == [0, 2] and markers.mode == "markers"
    assert fig.data[0].text[0] == "0 (exact)"


# ----- Benchmark --------------------------------------------------------------------------------------------


def test_benchmark_tables_have_labels_and_rounded_metrics() -> None:
    row = {
        "model": "m",
        "mode": "capel",
        "lang": "en",
        "target": None,
        "n": 3,
        "samples": 3,
        "em": 1 / 3,
        "mae": 26.77981,
        "mald": 0.123456,
        "ld": None,
        "ls": 88.8888,
        "valid": 2 / 3,
        "errors": {"skip": 1},
        "tokens_per_unit": 3.14159,
        "seconds": 2.71828,
    }
    [line] = metric_table([row])
    assert line["Mode"] == "CAPEL" and line["Target"] == "all"
    assert (line["Exact match %"], line["MAE"], line["MALD"], line["LD"], line["LS"]) == (33.3, 26.8, 0.123, None, 88.9)
    assert (line["Valid %"], line["Tokens per unit"], line["Seconds per sample"]) == (66.7, 3.1, 2.7)


def test_benchmark_suites_have_readable_names_and_help_without_cli_flags(app_test: AppTest) -> None:
    at = app_test
    at.switch_page("app_pages/benchmark.py").run()
    suite = at.selectbox(key="b_suite")
    assert list(suite.options) == [suite_label(s) for s in ("rtg", "lifebench", "mtbench", "custom")]
    assert "rtg" not in suite.options and "Random text generation" in suite.options
    for option in list(suite.options):
        at.selectbox(key="b_suite").set_value(option).run()
        assert not at.exception, at.exception
        helps = [c.value for c in at.caption] + [w.help or "" for w in (*at.text_input, *at.number_input)]
        assert not [h for h in helps if "--" in h], option


def test_a_benchmark_run_offers_its_table_and_each_chart_as_a_download(
    scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    scripted_model.reply("Waves fold gently.")  # the page reads a run the CLI stored: any model will do
    out, err = io.StringIO(), io.StringIO()
    argv = ["bench", "--suite", "rtg", "--model", "scripted", "--modes", "baseline", "--lengths", "3", "--limit", "1"]
    assert main(argv, stdin=io.StringIO(), stdout=out, stderr=err) == 0, err.getvalue()
    at = app_test
    at.switch_page("app_pages/benchmark.py").run()
    assert not at.exception, at.exception
    labels = [d.proto.label for d in at.get("download_button")]
    assert labels == ["Results CSV", "mald-em chart (HTML)", "ls-heatmap chart (HTML)", "errors chart (HTML)"]


@pytest.mark.parametrize(
    ("key", "value", "words"), [("w_max_tokens", 0, "output limit"), ("w_time_limit", 0, "time limit")]
)
def test_a_limit_below_one_is_refused_on_generate_with_a_message_and_nothing_saved(
    app_test: AppTest, key: str, value: int, words: str
) -> None:
    at = app_test
    at.text_area(key="w_instruction").input("Write a headline.").run()
    at.number_input(key=key).set_value(value).run()
    assert at.number_input(key=key).value == value  # shown as typed, and refused below, never silently replaced
    next(b for b in at.button if b.label == "Generate").click().run()
    [message] = [e.value for e in at.error]
    assert words in message and "must be" in message
    assert list_runs(engine()) == []


def test_use_this_from_compare_opens_write_with_the_columns_inputs_and_its_text(app_test: AppTest) -> None:
    at = app_test
    run = get_run(engine(), save_parsed_run(engine(), "<3> One <2> two <1> three <0>", 3, instruction="Count to 3"))
    at.session_state["prefill"] = {**prefill_for(run), "run_id": run.id}  # what state.use_column hands over
    at.run()
    assert not at.exception, at.exception
    assert at.text_area(key="w_instruction").value == "Count to 3"
    assert at.number_input(key="w_target").value == 3
    assert at.session_state["w_run_id"] == run.id
    assert [h for h in at.html if 'class="capel-text"' in h.value and "One two three" in h.value]


def test_turning_rewrite_on_and_off_keeps_both_the_instruction_and_the_pasted_text(app_test: AppTest) -> None:
    at = app_test
    at.text_area(key="w_instruction").input("Write a note about tides.").run()
    at.toggle(key="w_rewrite").set_value(True).run()
    at.text_area(key="w_source").input("The tide came in slowly over the flats.").run()
    at.toggle(key="w_rewrite").set_value(False).run()
    assert at.text_area(key="w_instruction").value == "Write a note about tides."
    at.toggle(key="w_rewrite").set_value(True).run()
    assert at.text_area(key="w_source").value == "The tide came in slowly over the flats."


def test_an_emoji_only_instruction_is_refused_with_a_message_and_nothing_runs(app_test: AppTest) -> None:
    at = app_test
    at.text_area(key="w_instruction").input("🎉🌊✨ !!").run()
    next(b for b in at.button if b.label == "Generate").click().run()
    [message] = [e.value for e in at.error]
    assert "has no words" in message and "emoji" in message
    assert list_runs(engine()) == []

"""Signals a writer can trust (issue 31): junk is said to be junk on the page and in the CLI, Copy and the downloads
ask before handing it out, a hand edit is no variant, the mode picker says which modes a model does not follow, and
the CLI's default mode is the best the model can do, said in the verdict line."""

from __future__ import annotations

import dataclasses
import io
import json
import os

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.backends import Capabilities, ScriptedBackend
from capel_ui.backends.providers import PROVIDERS
from capel_ui.cli import main
from capel_ui.export import export_json
from capel_ui.history import history_rows
from capel_ui.quality import NOT_TO_PUBLISH, ONE_JUNK
from capel_ui.runs import save_edit
from capel_ui.storage import get_engine, list_runs
from capel_ui.ui.views import HAND_OUT_ANYWAY
from tests.conftest import variants_box
from tests.test_app_compare_targets import run_button

JUNK = (  # four words each, every one junk: a loop, a number list, a text about itself
    "Light light light light.",
    "Lighthouse: 1. 2. 3.",
    "Here's a possible headline:",
)
EVERY_VARIANT = (
    "Every variant goes round in circles, is a list of numbers or talks about itself: none is worth keeping. Run "
    "again, or change the instruction or the model."
)
"""What is said over JUNK: the ways its variants are junk, not every way there is."""


def countdown_of(text: str) -> str:
    words = text.split()
    return "".join(f"<{len(words) - i}>{w} " for i, w in enumerate(words)) + "<0>"


def _variants(app: AppTest, scripted: ScriptedBackend, texts: tuple[str, ...]) -> AppTest:
    scripted.capabilities = Capabilities(logprobs=True)
    scripted.reply(*(countdown_of(t) for t in texts))
    app.selectbox(key="provider").set_value("scripted").run()
    app.text_area(key="w_instruction").input("Write a headline about a lighthouse.")
    app.number_input(key="w_target").set_value(4)
    variants_box(app).set_value(len(texts))
    [go] = [b for b in app.button if b.label == "Generate"]
    go.click()
    app.run()
    assert not app.exception, app.exception
    return app


def test_when_every_variant_is_junk_the_page_says_so_and_copy_and_downloads_wait_for_a_yes(
    scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    app = _variants(app_test, scripted_model, JUNK)
    shown = [w.value for w in app.warning]
    assert EVERY_VARIANT in shown and ONE_JUNK in shown
    assert not app.get("download_button")  # nothing handed out before the writer says so
    [anyway] = [c for c in app.checkbox if c.label == "Copy or download it anyway"]
    anyway.check()
    app.run()
    assert [d.label for d in app.get("download_button")] == ["Download .txt", "Download .md", "Download .json"]


def test_a_good_variant_among_junk_is_handed_out_without_asking(
    scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    app = _variants(app_test, scripted_model, (*JUNK[:2], "Lighthouse town shines again."))
    shown = [w.value for w in app.warning]
    assert not any(w.startswith("Every variant") for w in shown) and ONE_JUNK not in shown  # the plain one, picked
    assert [d.label for d in app.get("download_button")] == ["Download .txt", "Download .md", "Download .json"]


def test_a_hand_edit_does_not_join_the_variants_best_first(scripted_model: ScriptedBackend, app_test: AppTest) -> None:
    app = _variants(app_test, scripted_model, (*JUNK[:2], "Lighthouse town shines again."))
    engine = get_engine(os.environ["DATABASE_URL"])
    parent = list_runs(engine)[0]
    save_edit(engine, parent, "Lighthouse town glows again.")
    app.run()
    assert "3 variants, best first" in [h.value for h in app.subheader]


LIGHTHOUSE = "The lighthouse town shines again tonight."  # six words, kept
NUMBERS = "Lighthouse: 1. 2. 3. 4. 5."  # six words, a number list


def _ending_naturally(scripted: ScriptedBackend, *replies: str) -> None:
    """The scripted model writes `replies`, each ending where it would end (P(end) 0.9: "ends naturally")."""
    scripted.capabilities, scripted.ending = Capabilities(end_probability=True), 0.9
    scripted.reply(*replies)


def _compare_one(app: AppTest, scripted: ScriptedBackend, reply: str) -> AppTest:
    """Compare with one column (the scripted model, Baseline, 6 words) that writes `reply`, ending naturally."""
    _ending_naturally(scripted, reply)
    app.selectbox(key="provider").set_value("scripted").run()
    app.switch_page("app_pages/compare.py").run()
    app.text_area(key="c_instruction").input("Write a headline about a lighthouse.")
    app.number_input(key="c_target").set_value(6).run()
    app.multiselect(key="c_modes").set_value(["baseline"]).run()
    run_button(app).click()
    app.run()
    assert not app.exception, app.exception
    return app


def _handed_out(app: AppTest) -> list[str]:
    """What the column offers: "Use this" and its download."""
    return [b.label for b in app.button if b.label == "Use this"] + [d.label for d in app.get("download_button")]


def test_a_junk_compare_column_is_not_handed_out_or_used_before_the_writer_says_so(
    scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    app = _compare_one(app_test, scripted_model, NUMBERS)
    assert _handed_out(app) == []


def test_a_junk_compare_column_is_handed_out_once_the_box_is_ticked(
    scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    app = _compare_one(app_test, scripted_model, NUMBERS)
    [anyway] = [c for c in app.checkbox if c.label == HAND_OUT_ANYWAY]
    anyway.check().run()
    assert _handed_out(app) == ["Use this", ".txt"]


def test_a_kept_compare_column_is_handed_out_without_asking(scripted_model: ScriptedBackend, app_test: AppTest) -> None:
    app = _compare_one(app_test, scripted_model, LIGHTHOUSE)
    assert (_handed_out(app), [c.label for c in app.checkbox]) == (["Use this", ".txt"], [])


@pytest.mark.parametrize(
    ("reply", "beside_the_badge"),
    [
        (NUMBERS, f":orange-background[:material/report: {NOT_TO_PUBLISH}]"),
        (LIGHTHOUSE, ":blue-background[ends naturally]"),
    ],
    ids=["junk", "kept"],
)
def test_beside_a_junk_texts_badge_stands_not_a_text_to_publish_never_its_ending(
    scripted_model: ScriptedBackend, app_test: AppTest, reply: str, beside_the_badge: str
) -> None:
    app = _compare_one(app_test, scripted_model, reply)
    marks = [m.value for m in app.markdown if m.value.startswith((":orange-background[", ":blue-background["))]
    assert marks == [beside_the_badge]


def test_the_mode_picker_says_which_modes_the_embedded_model_does_not_follow(app_test: AppTest) -> None:
    names = app_test.selectbox(key="w_mode").format_func
    assert names("capel") == "CAPEL · rarely followed by this model"
    assert names("draft-capel") == "Draft→CAPEL · rarely followed by this model"
    assert names("exact") == "Exact (guaranteed)"


# ----- the CLI ---------------------------------------------------------------------------------------------------


def _generate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["generate", *argv], stdin=io.StringIO(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_every_variant_junk_is_said_plainly_in_the_cli(scripted_model: ScriptedBackend) -> None:
    scripted_model.reply(*JUNK)
    argv = ("--model", "scripted", "--mode", "baseline", "--target", "4", "--variants", "3", "--no-save", "Headline.")
    _, _, err = _generate(*argv)
    assert f"warning: {EVERY_VARIANT}" in err.splitlines()


@pytest.mark.parametrize(
    ("reply", "junk"),
    [("Lighthouse: 1. 2. 3. 4. 5.", True), ("Lighthouse town shines again tonight.", False)],
)
def test_one_junk_text_is_said_plainly_in_the_cli(scripted_model: ScriptedBackend, reply: str, junk: bool) -> None:
    scripted_model.reply(reply)
    _, _, err = _generate("--model", "scripted", "--mode", "baseline", "--target", "6", "--no-save", "Headline.")
    assert (f"warning: {ONE_JUNK}" in err.splitlines()) == junk


@pytest.mark.parametrize(
    ("reply", "said", "not_said"),
    [(NUMBERS, NOT_TO_PUBLISH, "ends naturally"), (LIGHTHOUSE, "ends naturally", NOT_TO_PUBLISH)],
    ids=["junk", "kept"],
)
def test_the_cli_verdict_line_calls_junk_not_a_text_to_publish_instead_of_praising_its_ending(
    scripted_model: ScriptedBackend, reply: str, said: str, not_said: str
) -> None:
    _ending_naturally(scripted_model, reply)
    _, _, err = _generate("--model", "scripted", "--mode", "baseline", "--target", "6", "--no-save", "Headline.")
    [line] = [line for line in err.splitlines() if line.startswith("✓")]
    assert (f" · {said} · " in line, not_said in line) == (True, False)


@pytest.mark.parametrize(
    ("reply", "ending"), [(NUMBERS, NOT_TO_PUBLISH), (LIGHTHOUSE, "ends naturally")], ids=["junk", "kept"]
)
def test_historys_ending_column_calls_junk_not_a_text_to_publish(
    scripted_model: ScriptedBackend, reply: str, ending: str
) -> None:
    _ending_naturally(scripted_model, reply)
    _generate("--model", "scripted", "--mode", "baseline", "--target", "6", "Headline.")
    [row] = history_rows(list_runs(get_engine(os.environ["DATABASE_URL"])))
    assert row["ending"] == ending


def test_the_default_mode_on_a_model_without_a_grammar_is_capel_and_the_verdict_line_says_auto(
    scripted_model: ScriptedBackend,
) -> None:
    scripted_model.reply("<3>Sea<2>wind<1>rises.<0>")
    code, out, err = _generate("--model", "scripted", "--target", "3", "--no-save", "Describe the sea.")
    assert code == 0, err
    assert out.strip() == "Sea wind rises."
    assert "mode: capel (auto)" in err
    assert "<3>" in scripted_model.requests[0][0][-1]["content"]  # the countdown was asked for


def test_a_named_mode_is_not_called_auto(scripted_model: ScriptedBackend) -> None:
    scripted_model.reply("Sea wind rises.")
    _, _, err = _generate("--model", "scripted", "--mode", "baseline", "--target", "3", "--no-save", "Sea.")
    assert "(auto)" not in err


@pytest.mark.model
def test_an_sms_limit_works_by_default_on_the_embedded_model_in_the_guaranteed_mode() -> None:
    code, out, err = _generate("--at-most", "160", "--unit", "sms", "--no-save", "Remind Sam: dentist on Tuesday.")
    assert code == 0, err
    assert "mode: exact (auto)" in err and "✓" in err
    assert 0 < len(out.strip()) <= 160


# ----- Compare says what ran ---------------------------------------------------------------------------------------


def _saved(**fields):
    from capel_ui.storage import create_run, get_run

    engine = get_engine(os.environ["DATABASE_URL"])
    base = dict(
        instruction="Describe a lighthouse.", prompt="p", raw="", text="", model="embedded", backend="embedded",
        mode="exact", lang="en", unit="en_words", target=25, count=0, exact=False, valid=True, errors=[],
        status="complete", origin="compare", verified=False,
    )  # fmt: skip
    return get_run(engine, create_run(engine, **{**base, **fields}))


def test_a_fallback_column_is_titled_by_the_mode_that_ran_and_the_one_asked() -> None:
    from capel_ui.backends.registry import fallback
    from capel_ui.ui.views import mode_title

    notice = fallback("embedded", "exact-countdown").notice("SmolLM2-135M (embedded)", "exact-countdown")
    ran = _saved(text="Waves fold over old stones.", count=5, target=5, notice=notice)
    plain = _saved(text="Waves fold over old stones.", count=5, target=5)
    assert mode_title(ran) == "Exact (guaranteed) · asked Exact countdown (guaranteed)"
    assert mode_title(plain) == "Exact (guaranteed)"


def test_a_failed_column_is_not_on_the_deviation_chart() -> None:
    from capel_ui.ui.compare import charts, comparison_chart

    failed = _saved(status="failed", failure="The API refused the key.", model="gpt-4.1", backend="openai")
    done = _saved(text="Waves fold over old stones.", count=5, target=5, exact=True, verified=True)
    assert [charts(r) for r in (failed, done)] == [False, True]
    bars = comparison_chart([r for r in (failed, done) if charts(r)]).data[0]
    assert list(bars.y) == [0]  # not a -25 for the column that never ran


@pytest.mark.parametrize(
    "text",
    [
        "We approve a 10. 11. 12. 13. 14. 205.",  # the lengthening of issue 31
        "New Same What Same Same Now",  # Draft→CAPEL's "no problems found"
        "The pub is by the sea. Come in. The pub is by the sea.",
    ],
)
def test_historys_score_line_never_praises_junk(text: str) -> None:
    from capel_ui.history import score_line

    run = _saved(text=text, count=len(text.split()), score=5.39, fluency=0.7, end_probability=0.6)
    line = score_line(run)  # an old run (no judgement stored) is judged by today's rules, its score too
    assert line.startswith("score ") and line.endswith("not a text to publish")
    assert not any(p in line for p in ("reads smoothly", "no problems found", "ends naturally"))


@pytest.mark.parametrize(
    ("reply", "ending"), [(NUMBERS, NOT_TO_PUBLISH), (LIGHTHOUSE, "ends naturally")], ids=["junk", "kept"]
)
def test_generate_json_and_the_runs_json_export_call_junk_not_a_text_to_publish(
    scripted_model: ScriptedBackend, reply: str, ending: str
) -> None:
    _ending_naturally(scripted_model, reply)
    _, out, _ = _generate("--model", "scripted", "--mode", "baseline", "--target", "6", "--json", "Headline.")
    [run] = list_runs(get_engine(os.environ["DATABASE_URL"]))
    assert (json.loads(out)["ending"], json.loads(export_json(run))["ending"]) == (ending, ending)


def test_generate_variants_json_calls_a_junk_variant_not_a_text_to_publish(scripted_model: ScriptedBackend) -> None:
    _ending_naturally(scripted_model, NUMBERS, LIGHTHOUSE)
    argv = ("--model", "scripted", "--mode", "baseline", "--target", "6", "--variants", "2", "--json", "Headline.")
    _, out, _ = _generate(*argv)
    endings = {v["text"]: v["ending"] for v in json.loads(out)["variants"]}
    assert endings == {LIGHTHOUSE: "ends naturally", NUMBERS: NOT_TO_PUBLISH}


def test_a_text_in_a_language_the_model_does_not_write_is_not_a_text_to_publish_in_the_cli(
    scripted_model: ScriptedBackend, monkeypatch
) -> None:
    # The scripted provider declared as SmolLM2-135M's is: it does not write Chinese.
    monkeypatch.setitem(PROVIDERS, "scripted", dataclasses.replace(PROVIDERS["scripted"], languages=("en",)))
    _ending_naturally(scripted_model, "海边的书店开门了。")
    code, _, err = _generate("--model", "scripted", "--lang", "zh", "--mode", "baseline", "--target", "8", "Hi.")
    [line] = [line for line in err.splitlines() if line.startswith("✓")]
    assert (code, f" · {NOT_TO_PUBLISH} · " in line, "ends naturally" in line) == (0, True, False)
    assert f"warning: {ONE_JUNK}" in err.splitlines()
    assert any("does not write Chinese" in line for line in err.splitlines())
    _, out, _ = _generate("--model", "scripted", "--lang", "zh", "--mode", "baseline", "--target", "8", "--json", "Hi.")
    assert json.loads(out)["ending"] == NOT_TO_PUBLISH  # as the verdict line says it

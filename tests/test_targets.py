"""Targets a writer works to: exactly N, at most N, between A and B; presets; edits; the database upgrade."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capel_ui.backends import Capabilities
from capel_ui.cli import main
from capel_ui.counting import count
from capel_ui.generation import Request, validate_request
from capel_ui.grammar import bounded_word_rules, char_grammar, char_width, supports, target_grammar
from capel_ui.metrics import at_least_score, at_most_score, length_score
from capel_ui.presets import PRESETS, preset
from capel_ui.prompts import build_messages
from capel_ui.runs import save_edit, target_of, verdict_of
from capel_ui.service import modes_for
from capel_ui.storage import create_run, dispose_engines, get_engine, get_run, list_runs
from capel_ui.verdict import Target, decide, live_state
from capel_ui.vocab import (
    HAND_EDIT_MODEL,
    MARKER_LIMITS,
    MARKERS_UNITS_ONLY,
    NO_GRAMMAR,
    grammar_units,
    mode_label,
    why_unavailable,
)
from tests.gbnf import matches, sample
from tests.test_storage_upgrade import v1_sqlite_file

# ----- Target and the verdict ---------------------------------------------------------------------------------


LLAMA, PLAIN = Capabilities(grammar_field="grammar"), Capabilities()  # a model that takes a grammar, one that does not


@pytest.mark.parametrize(
    ("target", "count", "within", "deviation"),
    [
        (Target.exactly(12), 12, True, 0),
        (Target.exactly(12), 13, False, 1),
        (Target.at_most(280), 271, True, 0),
        (Target.at_most(280), 280, True, 0),
        (Target.at_most(280), 285, False, 5),
        (Target.at_most(280), 0, False, -1),  # nothing is not a post
        (Target.between(10, 12), 10, True, 0),
        (Target.between(10, 12), 12, True, 0),
        (Target.between(10, 12), 8, False, -2),
        (Target.between(10, 12), 13, False, 1),
    ],
)
def test_the_verdict_decides_within_for_every_kind(target: Target, count: int, within: bool, deviation: int) -> None:
    verdict = decide("complete", count, target, 0)
    assert (verdict.verified, verdict.deviation) == (within, deviation)


HEADLINES = [
    (("complete", 271, Target.at_most(280), 0), "chars", "✓ 271/280 characters"),
    (("complete", 285, Target.at_most(280), 0), "chars", "over by 5 · 285/280 characters"),
    (("complete", 11, Target.between(10, 12), 0), "en_words", "✓ 11 English words · within 10–12"),
    (("complete", 8, Target.between(10, 12), 0), "en_words", "short by 2 · 8 of 10–12 English words"),
    (("partial", 90, Target.at_most(280), 0), "sms",
     "partial · not verified · 90 (target ≤ 280) SMS characters arrived"),
    (("complete", 140, Target.at_most(140), 0), "zh_all", "✓ 140/140 字 (all characters)"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "unit", "headline"), HEADLINES)
def test_the_badge_says_how_the_count_stands_against_the_limit(args, unit: str, headline: str) -> None:
    assert decide(*args).headline(unit) == headline


def test_a_partial_run_within_the_limit_is_never_verified() -> None:
    assert not decide("partial", 100, Target.at_most(280), 0).verified
    assert decide("partial", 100, Target.at_most(280), 0).tone == "gray"


@pytest.mark.parametrize(
    ("done", "target", "state"),
    [
        (100, Target.at_most(280), "180 of 280 characters left"),
        (290, Target.at_most(280), "over by 10 · 290 of ≤ 280 characters"),
        (4, Target.between(10, 12), "4 of 10–12 characters · 6 more to reach the range"),
        (11, Target.between(10, 12), "11 of 10–12 characters · within"),
    ],
)
def test_the_live_state_knows_the_target_kind(done: int, target: Target, state: str) -> None:
    assert live_state(done, target, "chars") == state


@pytest.mark.parametrize(
    ("text", "message"),
    [("12-10", "smaller number to the larger"), ("ten", "like 10-12"), ("0-5", "from 1"), ("5-20000", "from 1")],
)
def test_a_bad_range_says_what_is_accepted(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Target.parse_range(text)


# ----- what each mode accepts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "unit", "lang"), [("exactly", "chars", "en"), ("exactly", "zh_all", "zh")])
@pytest.mark.parametrize("mode", ["capel", "draft-capel", "exact-countdown"])
def test_capel_modes_refuse_exactly_n_characters_and_chinese_characters_saying_why(mode, kind, unit, lang) -> None:
    request = Request("Write a post.", 12, mode=mode, unit=unit, target_kind=kind, lang=lang)
    with pytest.raises(ValueError, match="CAPEL \\(markers\\) counts down one word"):
        validate_request(request)
    assert mode not in modes_for(LLAMA, lang, unit, kind).modes
    assert "markers" in MARKER_LIMITS


@pytest.mark.parametrize(("kind", "unit", "low"), [("at_most", "sms", None), ("range", "x_weighted", 10)])
@pytest.mark.parametrize("mode", ["capel", "draft-capel", "exact-countdown"])
def test_capel_modes_take_an_english_character_limit_as_a_countdown_of_the_room(mode, kind, unit, low) -> None:
    request = Request("Write a post.", 12, mode=mode, unit=unit, target_kind=kind, target_low=low)
    validate_request(request)
    assert mode in modes_for(LLAMA, "en", unit, kind).modes


@pytest.mark.parametrize(
    ("mode", "grammar", "lang", "unit", "kind", "reason"),
    [
        ("capel", True, "en", "chars", "exactly", MARKERS_UNITS_ONLY),
        ("capel", False, "en", "en_words", "at_most", None),  # the markers count down the room (issue 31)
        ("capel", False, "en", "chars", "at_most", None),  # the markers count the characters left
        ("capel", False, "zh", "chars", "exactly", MARKERS_UNITS_ONLY),
        ("exact", False, "en", "chars", "at_most", NO_GRAMMAR),
        ("exact-countdown", False, "en", "en_words", "at_most", NO_GRAMMAR),
        ("exact", True, "zh", "zh_words", "exactly", "no grammar can promise a count in Chinese words (jieba)"),
        ("exact", True, "en", "chars", "at_most", None),
        ("baseline", False, "zh", "zh_words", "range", None),
    ],
)
def test_each_unavailable_mode_says_why_and_only_those_are_left_out(mode, grammar, lang, unit, kind, reason) -> None:
    assert why_unavailable(mode, grammar, lang, unit, kind) == reason
    assert (mode in modes_for((LLAMA if grammar else PLAIN), lang, unit, kind).modes) == (reason is None)


def test_exact_mode_needs_two_characters_for_a_character_limit() -> None:
    with pytest.raises(ValueError, match="at least 2 characters"):
        validate_request(Request("Write.", 1, mode="exact", unit="chars", target_kind="at_most"))


def test_x_weighted_has_no_chinese_grammar() -> None:
    assert not supports("zh", "x_weighted")
    with pytest.raises(ValueError, match="not x_weighted"):
        validate_request(Request("写。", 140, lang="zh", mode="exact", unit="x_weighted", target_kind="at_most"))


@pytest.mark.parametrize(
    ("lang", "unit", "kind", "low", "high", "suffix"),
    [
        ("en", "chars", "at_most", 1, 30, "in at most 30 characters (spaces and punctuation count)."),
        ("en", "en_words", "range", 10, 12, "in 10 to 12 words."),
        ("en", "sms", "at_most", 1, 160, "in at most 160 characters (it is one text message)."),
        ("zh", "zh_all", "at_most", 1, 140, "请用不超过140个字（标点符号也算）回答上述指令。"),
        ("zh", "zh_chars", "range", 90, 100, "请用90到100个字回答上述指令。"),
    ],
)
def test_the_baseline_and_exact_prompts_state_the_limit(lang, unit, kind, low, high, suffix) -> None:
    for mode in ("baseline", "exact"):
        [message] = build_messages("Write it.", lang, high, mode, limit=(unit, kind, low))
        assert message["content"].endswith(suffix)


# ----- grammars -------------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 120), st.integers(0, 120), st.sampled_from(["en", "zh"]), st.integers(0, 2**32 - 1))
def test_every_character_grammar_string_is_within_bounds_and_ends_a_sentence(high, spread, lang, seed) -> None:
    """(The grammar is a chain of one rule per character, so the test sampler needs a deep recursion budget.)"""
    low = max(1, high - spread)
    s = sample(char_grammar(lang, low, high), random.Random(seed), max_depth=1000)  # type: ignore[arg-type]
    for unit in grammar_units(lang, "chars"):  # type: ignore[arg-type]
        width = char_width(lang, unit)  # 2 for a Chinese character by Google Ads' count (target_grammar halves N)
        assert low * width <= count(s, unit) <= high * width, (unit, s)
    assert s[-1] in ".!?。！？" and s[-2] not in " ，、；：。！？,;:.!?"


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200), st.integers(0, 50), st.sampled_from(["en", "zh"]), st.integers(0, 2**32 - 1))
def test_every_word_range_grammar_string_is_within_the_range(high, spread, lang, seed) -> None:
    low = max(1, high - spread)
    for unit in grammar_units(lang, "words"):  # type: ignore[arg-type]
        # Each unit's own grammar (LIFEBench counts "3:30" as two words, so its grammar writes no such unit).
        s = bounded_word_rules(lang, low, high, unit).render("gbnf")  # type: ignore[arg-type]
        s = sample(s, random.Random(seed))
        assert low <= count(s, unit) <= high, (unit, s)


@pytest.mark.parametrize(
    ("low", "high", "s", "ok"),
    [
        (1, 30, "Books by the sea, shipped.", True),
        (1, 26, "Books by the sea, shipped.", True),
        (1, 25, "Books by the sea, shipped.", False),
        (27, 30, "Books by the sea, shipped.", False),
        (1, 30, "Books by the sea, shipped", False),  # no sentence end
        (1, 30, "Books by the sea , shipped.", False),  # space before a comma
        (1, 30, "Visit sea.com now.", False),  # a full stop inside a word could make a URL (23 on X)
        (1, 30, "Books 📚 by the sea.", False),  # an emoji is 2 on X and turns an SMS into UCS-2
        (1, 30, "Tea. Books. Sea!", True),
    ],
)
def test_the_character_grammar_by_hand(low: int, high: int, s: str, ok: bool) -> None:
    assert matches(char_grammar("en", low, high), s) is ok


def test_the_exact_word_grammar_is_unchanged_for_exactly_n() -> None:
    from capel_ui.grammar import exact_grammar

    assert target_grammar("en", "en_words", 12, 12).render("gbnf") == exact_grammar("en", 12)  # type: ignore[union-attr]


# ----- presets --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", PRESETS, ids=[p.key for p in PRESETS])
def test_every_preset_runs_in_exact_mode_on_a_grammar_model(p) -> None:
    assert "exact" in modes_for(LLAMA, p.lang, p.unit, p.kind).modes
    validate_request(Request(p.example, p.number, lang=p.lang, mode="exact", unit=p.unit, target_kind=p.kind))


def test_the_platform_presets_carry_the_platforms_limits() -> None:
    limits = {p.key: (p.unit, p.target.label) for p in PRESETS}
    assert limits["x-post"] == ("x_weighted", "≤ 280")
    assert limits["sms"] == ("sms", "≤ 160")
    assert limits["ads-headline"] == ("google_ads_chars", "≤ 30")
    assert limits["ads-description"] == ("google_ads_chars", "≤ 90")
    assert limits["meta-description"] == ("chars", "≤ 155")
    assert limits["linkedin-headline"] == ("chars", "≤ 220")
    assert limits["weibo"] == ("zh_all", "≤ 140")
    assert limits["headline"] == ("en_words", "10")
    with pytest.raises(ValueError, match="x-post"):
        preset("tiktok")


# ----- CLI ------------------------------------------------------------------------------------------------------


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--target", "5", "--at-most", "9"], "not allowed with argument --target"),
        (["--range", "12-10"], "smaller number to the larger"),
        ([], "give one of --target N (exactly), --at-most N or --range A-B"),
        (["--target", "280", "--unit", "chars", "--mode", "capel"], "CAPEL (markers) counts down"),
        (["--preset", "tiktok"], "invalid choice"),
    ],
)
def test_generate_target_flags_are_checked_before_any_model_runs(argv: list[str], message: str) -> None:
    code, out, err = cli("generate", *argv, "Write a post.")
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


@pytest.mark.model
@pytest.mark.parametrize(
    ("argv", "kind", "low", "high", "unit"),
    [
        (["--unit", "chars", "--at-most", "80"], "at_most", 1, 80, "chars"),
        (["--unit", "en_words", "--range", "10-12"], "range", 10, 12, "en_words"),
        (["--preset", "sms"], "at_most", 1, 160, "sms"),
    ],
)
def test_generate_in_exact_mode_returns_a_verified_text_within_the_limit(argv, kind, low, high, unit) -> None:
    code, out, err = cli("generate", *argv, "--mode", "exact", "--json", "Describe a lighthouse at dawn.")
    result = json.loads(out)
    assert code == 0, err
    assert (result["verified"], result["target_kind"], result["target_low"], result["target"]) == (
        True,
        kind,
        low,
        high,
    )
    assert low <= count(result["text"], unit) == result["count"] <= high
    assert result["text"][-1] in ".!?"
    run = get_run(get_engine(), result["run_id"])
    assert run is not None and (run.target_kind, run.target_low, run.target) == (kind, low, high)
    assert verdict_of(run).verified


# ----- edits and History ------------------------------------------------------------------------------------


def _model_run(**fields) -> int:
    values = {"origin": "write", "model": "embedded", "backend": "embedded", "mode": "exact", "lang": "en"}
    return create_run(get_engine(), **{**values, **fields})


def test_an_edit_is_saved_as_a_new_run_of_origin_edit_never_as_model_output() -> None:
    engine = get_engine()
    parent_id = _model_run(unit="chars", target=30, target_kind="at_most", target_low=1, status="complete",
                           text="A lighthouse by the sea, now.", count=29)  # fmt: skip
    parent = get_run(engine, parent_id)
    assert parent is not None
    edit_id = save_edit(engine, parent, "Books by the sea, shipped.")
    edit = get_run(engine, edit_id)
    assert edit is not None and edit_id != parent_id
    assert (edit.origin, edit.model, edit.backend, mode_label(edit.mode), edit.raw) == (
        "edit",
        HAND_EDIT_MODEL,
        "edit",
        "Edited by hand",
        "",
    )
    assert (edit.count, target_of(edit), edit.verified) == (26, Target.at_most(30), True)
    assert f"run {parent_id}" in (edit.notice or "")
    assert [r.id for r in list_runs(engine, origin="edit")] == [edit_id]
    assert get_run(engine, parent_id) == parent  # the model's run is untouched


def test_an_edit_over_the_limit_is_saved_but_not_verified() -> None:
    engine = get_engine()
    parent = get_run(engine, _model_run(unit="chars", target=10, target_kind="at_most", target_low=1))
    assert parent is not None
    edit = get_run(engine, save_edit(engine, parent, "Far too long for ten."))
    assert edit is not None and not edit.verified
    assert verdict_of(edit).headline("chars") == "over by 11 · 21/10 characters"


def test_history_shows_the_target_kind() -> None:
    code, out, _ = cli("history")
    assert code == 0
    _model_run(unit="chars", target=280, target_kind="at_most", target_low=1, status="complete", count=200)
    code, out, _ = cli("history")
    assert "200/≤ 280" in out


def test_upgrading_an_old_database_makes_every_old_run_exactly_its_target(tmp_path: Path) -> None:
    path = v1_sqlite_file(tmp_path / "old.db")
    try:
        engine = get_engine(f"sqlite:///{path}")
        runs = list_runs(engine, limit=None)
        assert runs and all(r.target_kind == "exactly" and r.target_low == r.target for r in runs)
        assert all(target_of(r) == Target.exactly(r.target) for r in runs)
        new_id = create_run(engine, origin="cli", model="m", backend="embedded", mode="exact", lang="en",
                            unit="en_words", target=12, target_kind="range", target_low=10)  # fmt: skip
        new = get_run(engine, new_id)
        assert new is not None and target_of(new) == Target.between(10, 12)
    finally:
        dispose_engines()


# ----- metrics ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("target", "count"), [(100, 80), (100, 100), (100, 130), (50, 10)])
def test_lifebench_at_most_and_at_least_scores(target: int, count: int) -> None:
    assert at_most_score(target, count) == (100.0 if count <= target else length_score(target, count))
    assert at_least_score(target, count) == (100.0 if count >= target else length_score(target, count))
    assert at_most_score(100, 130) < 100 and at_least_score(100, 80) < 100

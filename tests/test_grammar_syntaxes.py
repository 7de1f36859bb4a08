"""Every grammar the app can send, in every syntax, checked by LLGuidance (the engine behind OpenAI's grammar
tools): it compiles, admits texts of exactly N units and refuses N-1 and N+1, for targets 1..500.

The texts are drawn from the GBNF form by tests/gbnf.py, so the Lark, regex and JSON-schema forms are held to
the same language as the GBNF grammar llama.cpp and vLLM have always been sent.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capel_ui.counting import count
from capel_ui.grammar import SYNTAXES, Grammar, Lit, countdown_rules, exact_rules, grammar_for
from capel_ui.vocab import DEFAULT_UNIT, GRAMMAR_MODES
from tests.gbnf import sample
from tests.llg import accepts, compiled

LANGS = ["en", "zh"]
BUILDERS = {"exact": exact_rules, "exact-countdown": countdown_rules}
FORMS = [*SYNTAXES, "json_schema"]  # every shape a grammar leaves the app in


def sent_as(grammar: Grammar, form: str) -> tuple[str, str]:
    """(LLGuidance kind, text) of `grammar` as the app sends it in `form`."""
    if form == "json_schema":
        return "json_schema", json.dumps(grammar.json_schema())
    return form, grammar.render(form)  # type: ignore[arg-type]


def wire(form: str, s: str) -> str:
    """What the model writes for the text `s` under `form` (a JSON string under a JSON schema)."""
    return json.dumps(s, ensure_ascii=False) if form == "json_schema" else s


def draw(mode: str, lang: str, target: int, rng: random.Random) -> str:
    """A text the mode's grammar admits for `target` ("" for target 0: nothing at all)."""
    if target == 0:
        return ""
    return sample(BUILDERS[mode](lang, target).render("gbnf"), rng)


def test_the_modes_with_a_grammar_are_the_guaranteed_ones() -> None:
    assert {m for m in BUILDERS} == set(GRAMMAR_MODES)
    assert grammar_for("capel", "en", 5) is None


@settings(max_examples=25, deadline=None)
@given(
    st.one_of(st.integers(1, 500), st.sampled_from([1, 2, 500])),
    st.sampled_from(LANGS),
    st.sampled_from(sorted(BUILDERS)),
    st.sampled_from(FORMS),
    st.integers(0, 2**32 - 1),
)
def test_every_grammar_admits_exactly_n_units_and_refuses_one_less_or_more(
    target: int, lang: str, mode: str, form: str, seed: int
) -> None:
    rng = random.Random(seed)
    kind, text = sent_as(BUILDERS[mode](lang, target), form)
    compiled(kind, text)  # compiles, or fails with the engine's message
    on_target = draw(mode, lang, target, rng)
    assert accepts(kind, text, wire(form, on_target)), on_target
    for other in (target - 1, target + 1):
        off = draw(mode, lang, other, rng)
        assert not accepts(kind, text, wire(form, off)), off


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    ("lang", "mode", "target", "s", "ok"),
    [
        pytest.param("en", "exact", 3, "Well-known words here.", True, id="en_hyphen_word"),
        pytest.param("en", "exact", 3, "It's two, three!", True, id="en_apostrophe_and_comma"),
        pytest.param("en", "exact", 1, "Yes!", True, id="en_one_word"),
        pytest.param("en", "exact", 3, "one  two three.", False, id="en_double_space"),
        pytest.param("en", "exact", 3, "one two three", False, id="en_must_end_a_sentence"),
        pytest.param("en", "exact", 3, "one two three. ", False, id="en_trailing_space"),
        pytest.param("en", "exact", 3, "one - two.", False, id="en_lone_dash"),
        pytest.param("zh", "exact", 4, "你好，世界。", True, id="zh_four_characters"),
        pytest.param("zh", "exact", 2, "AI好。", False, id="zh_latin_refused"),
        pytest.param("zh", "exact", 2, "\u3400好。", False, id="zh_extension_a_refused"),
        pytest.param(
            "en",
            "exact-countdown",
            5,
            "<5>Hello,<4>world!<3>How's<2>everything?<1>Great.<0>",
            True,
            id="en_paper_example",
        ),
        pytest.param("zh", "exact-countdown", 3, "<3>今<2>天<1>好。<0>", True, id="zh_countdown"),
        pytest.param("en", "exact-countdown", 3, "<3>a<1>b<2>c.<0>", False, id="countdown_order_forced"),
        pytest.param("en", "exact-countdown", 3, "Sure! <3>a<2>b<1>c.<0>", False, id="countdown_no_preamble"),
        pytest.param("zh", "exact-countdown", 2, "<2>我们<1>好。<0>", False, id="countdown_zh_one_char_each"),
    ],
)
def test_every_form_admits_and_refuses_the_same_texts(
    form: str, lang: str, mode: str, target: int, s: str, ok: bool
) -> None:
    kind, text = sent_as(BUILDERS[mode](lang, target), form)
    assert accepts(kind, text, wire(form, s)) is ok


def test_an_accepted_text_counts_to_the_target_in_the_languages_unit() -> None:
    rng = random.Random(3)
    for lang in LANGS:
        s = draw("exact", lang, 37, rng)
        assert accepts("lark", exact_rules(lang, 37).render("lark"), s)  # type: ignore[arg-type]
        assert count(s, DEFAULT_UNIT[lang]) == 37  # type: ignore[index]


def test_a_literal_grammar_admits_only_its_text_in_every_form() -> None:
    grammar = Grammar(Lit("<7> ok."))
    for form in FORMS:
        kind, text = sent_as(grammar, form)
        assert accepts(kind, text, wire(form, "<7> ok."))
        assert not accepts(kind, text, wire(form, "<7> ok"))

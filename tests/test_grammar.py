"""The guaranteed-exact grammars: every string they admit has exactly the target length.

Strings are drawn from the grammars by a small GBNF interpreter (tests/gbnf.py) and counted with the
app's own counters and parser.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capel_ui.counting import count
from capel_ui.grammar import bounded_word_grammar, countdown_grammar, exact_grammar, supports
from capel_ui.parser import check_output
from capel_ui.vocab import UNITS, grammar_units
from tests.gbnf import GrammarError, matches, parse, sample

LANGS = ["en", "zh"]


def supported_units(lang: str) -> list[str]:
    """The units the word (or Han character) grammars count one per grammar unit."""
    return list(grammar_units(lang, "words"))  # type: ignore[arg-type]


# ----- the interpreter itself -------------------------------------------------------------------------------

TOY = r"""
root ::= greet ("," " "? name){1,3} end
greet ::= "h\x69" | "yo"   # comment
name ::= [a-c]+ [0-9]? | [一-鿿]{2}
end ::= [.!] "\n"?
"""


@pytest.mark.parametrize(
    ("s", "ok"),
    [
        pytest.param("hi,a.", True, id="minimal"),
        pytest.param("yo, abc1, 中文,b!\n", True, id="all_features"),
        pytest.param("hi,a,b,c,a.", False, id="too_many_repeats"),
        pytest.param("hi.", False, id="too_few_repeats"),
        pytest.param("hi,d.", False, id="outside_class"),
        pytest.param("hi,中.", False, id="exact_repeat_count"),
        pytest.param("hi,a.\n\n", False, id="trailing_text"),
    ],
)
def test_gbnf_matcher_on_a_toy_grammar(s: str, ok: bool) -> None:
    assert matches(TOY, s) is ok


def test_gbnf_sampler_only_produces_strings_the_matcher_admits() -> None:
    rng = random.Random(7)
    samples = {sample(TOY, rng) for _ in range(300)}
    assert len(samples) > 50
    assert all(matches(TOY, s) for s in samples)


def test_gbnf_rejects_grammars_outside_the_subset() -> None:
    with pytest.raises(GrammarError):
        parse("root ::= missing")
    with pytest.raises(GrammarError):
        parse('word ::= "a"')


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("make", [exact_grammar, countdown_grammar], ids=["exact", "countdown"])
def test_emitted_grammars_parse_in_the_gbnf_subset(make, lang: str) -> None:
    rules = parse(make(lang, 5))
    assert {"root", "word", "wend"} <= set(rules)


# ----- the property: every admitted string is exactly on target ---------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.sampled_from(LANGS), st.integers(0, 2**32 - 1))
def test_every_exact_grammar_string_counts_to_the_target(target: int, lang: str, seed: int) -> None:
    for unit in supported_units(lang):
        s = sample(exact_grammar(lang, target, unit=unit), random.Random(seed))  # type: ignore[arg-type]
        assert count(s, unit) == target, (unit, s)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.sampled_from(LANGS), st.integers(0, 2**32 - 1))
def test_every_countdown_grammar_string_is_a_valid_exact_countdown(target: int, lang: str, seed: int) -> None:
    for unit in supported_units(lang):
        s = sample(countdown_grammar(lang, target, unit=unit), random.Random(seed))  # type: ignore[arg-type]
        result = check_output(s, target, lang, unit)  # type: ignore[arg-type]
        assert result.errors == (), (unit, s)
        assert result.verified
        assert result.count == target
        assert count(result.text, unit) == target  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 60),
    st.sampled_from(LANGS),
    st.sampled_from([exact_grammar, countdown_grammar]),
    st.integers(0, 2**32 - 1),
)
def test_sampled_strings_are_admitted_by_the_matcher(target: int, lang: str, make, seed: int) -> None:
    grammar = make(lang, target)
    assert matches(grammar, sample(grammar, random.Random(seed)))


def test_guaranteed_units_are_the_documented_ones() -> None:
    assert [u for u in UNITS if supports("en", u)] == [
        "en_words", "chars", "x_weighted", "sms", "google_ads_chars", "lifebench"
    ]  # fmt: skip
    assert [u for u in UNITS if supports("zh", u)] == ["zh_chars", "zh_all", "chars", "google_ads_chars", "lifebench"]
    assert not supports("zh", "zh_words")
    assert not supports("en", "zh_chars")


# ----- hand-written checks -----------------------------------------------------------------------------------

PAPER_EXAMPLE = "<5>Hello,<4>world!<3>How's<2>everything?<1>Great.<0>"


@pytest.mark.parametrize(
    ("lang", "make", "target", "s", "ok"),
    [
        pytest.param("en", countdown_grammar, 5, PAPER_EXAMPLE, True, id="en_paper_example_admitted"),
        pytest.param(
            "zh", countdown_grammar, 5, "<5>今<4>天<3>天<2>气<1>好。<0>", True, id="zh_suffix_example_admitted"
        ),
        pytest.param("en", exact_grammar, 3, "Well-known words here.", True, id="en_three_words_admitted"),
        pytest.param("en", exact_grammar, 1, "Yes!", True, id="en_single_word_admitted"),
        pytest.param("zh", exact_grammar, 4, "你好，世界。", True, id="zh_four_characters_admitted"),
        pytest.param("en", exact_grammar, 3, "Only two.", False, id="en_too_few_words"),
        pytest.param("en", exact_grammar, 3, "one two three four.", False, id="en_too_many_words"),
        pytest.param("en", exact_grammar, 3, "one two three", False, id="en_last_word_must_end_sentence"),
        pytest.param("en", exact_grammar, 3, "one  two three.", False, id="en_double_space"),
        pytest.param("en", exact_grammar, 3, "one two three. ", False, id="en_trailing_space"),
        pytest.param("en", exact_grammar, 3, "one - two.", False, id="en_lone_dash_not_a_word"),
        pytest.param("en", exact_grammar, 3, "one 3.14 two.", True, id="en_decimal_is_one_word"),
        pytest.param("en", exact_grammar, 4, "one 3. 14 two.", False, id="en_number_never_cut_by_a_stop"),
        pytest.param("en", exact_grammar, 4, "at 3: 30 today.", False, id="en_time_never_cut_by_a_colon"),
        pytest.param("en", exact_grammar, 3, "one 'two' three.", False, id="en_leading_quote_not_admitted"),
        pytest.param("zh", exact_grammar, 4, "你好世界", False, id="zh_last_character_must_end_sentence"),
        pytest.param("zh", exact_grammar, 2, "AI好。", False, id="zh_latin_not_admitted"),
        pytest.param("zh", exact_grammar, 2, "\u3400好。", False, id="zh_extension_a_not_admitted"),
        pytest.param("en", countdown_grammar, 3, "<3>a<2>b<1>c<0>", False, id="countdown_last_word_must_end"),
        pytest.param("en", countdown_grammar, 3, "<3>a<1>b<2>c.<0>", False, id="countdown_order_forced"),
        pytest.param("en", countdown_grammar, 3, "<3>a<2><1>c.<0>", False, id="countdown_bare_marker"),
        pytest.param("en", countdown_grammar, 3, "<3>a<2>b<1>c.<0>\n", False, id="countdown_nothing_after_end"),
        pytest.param("en", countdown_grammar, 3, "Sure! <3>a<2>b<1>c.<0>", False, id="countdown_no_preamble"),
        pytest.param("zh", countdown_grammar, 2, "<2>我们<1>好。<0>", False, id="countdown_zh_one_char_each"),
    ],
)
def test_grammar_admits_and_rejects_by_hand(lang: str, make, target: int, s: str, ok: bool) -> None:
    assert matches(make(lang, target), s) is ok


# ----- long targets: no repetition count llama.cpp refuses (it stops at 2000) ---------------------------------


@pytest.mark.parametrize("target", [999, 1000, 1001, 2500, 10_000])
def test_a_long_exact_grammar_counts_exactly_with_no_repetition_above_1000(target: int) -> None:
    counts = [int(n) for n in re.findall(r"\{(\d+)(?:,\d+)?\}", exact_grammar("en", target))]
    assert max(counts) <= 1000
    pattern = exact_grammar("en", target, "regex")
    assert re.fullmatch(pattern, " ".join(["w"] * (target - 1) + ["end."]))
    assert not re.fullmatch(pattern, " ".join(["w"] * target + ["end."]))


@pytest.mark.parametrize(("low", "high"), [(1, 2500), (1500, 2100)])
def test_a_long_range_grammar_admits_every_count_in_it_and_no_other(low: int, high: int) -> None:
    pattern = bounded_word_grammar("en", low, high, "regex")
    for n in {low - 1, low, 999, 1000, 1001, 1999, 2000, high, high + 1} - {0}:
        text = " ".join(["w"] * (n - 1) + ["end."])
        assert bool(re.fullmatch(pattern, text)) is (low <= n <= high), n


@pytest.mark.model
def test_llama_cpp_takes_the_grammar_of_a_2500_word_text(embedded) -> None:
    from capel_ui.backends import Options

    messages = [{"role": "user", "content": "Write a long essay about the sea."}]
    items = list(embedded.stream(messages, Options(max_tokens=4, grammar=exact_grammar("en", 2500))))
    assert "".join(i for i in items if isinstance(i, str)).strip()

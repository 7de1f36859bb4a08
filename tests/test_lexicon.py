"""The word-list grammar (llama.cpp only): real words, the writer's own words, no glued word, no dangling end.

Strings are checked and drawn with the small GBNF interpreter (tests/gbnf.py) and counted with the app's own
counters, so the word list never breaks the count guarantee.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capel_ui.backends.providers.common import IN_PROCESS_LLAMA_CPP, LLAMA_CPP
from capel_ui.backends.providers.scripted import ScriptedBackend
from capel_ui.counting import count
from capel_ui.generation import Request, generate
from capel_ui.grammar import bounded_word_rules, countdown_grammar, exact_grammar, lexicon_rules, with_word_list
from capel_ui.lexicon import DANGLING, chinese_chars, english_words, instruction_words, looks_glued
from capel_ui.parser import check_output
from capel_ui.quality import glued
from tests.gbnf import matches, sample
from tests.llg import accepts

PUB = "Write a headline for a seaside pub called The Whaler's Rest."


def en(target: int, own: str = PUB) -> str:
    return exact_grammar("en", target, words=lexicon_rules("en", own))


def admits(syntax: str, grammar: str, text: str) -> bool:
    """Whether `grammar` admits `text`: GBNF in the small interpreter, Lark in LLGuidance (what llama.cpp runs)."""
    return matches(grammar, text) if syntax == "gbnf" else accepts("lark", grammar, text)


pytestmark = pytest.mark.xdist_group("word-list-grammars")
"""In the worker of test_whole_units.py's word-list grammars: most tests here share one grammar (exactly 4 words
with the pub's own words) that takes 2-3 s of CPU to compile as GBNF; spread over three workers it was compiled in
each."""

SYNTAXES = pytest.mark.parametrize("syntax", ["gbnf", "lark"])


@pytest.mark.parametrize(
    ("target", "text", "ok"),
    [
        pytest.param(4, "The dough is traditional.", True, id="common_words"),
        pytest.param(4, "London chefs love pizza.", True, id="capitalised_first_letter"),
        pytest.param(4, "Welcome to the Whaler's.", False, id="possessive_cannot_end_a_sentence"),
        pytest.param(4, "Welcome, Whaler's guests today!", True, id="instruction_name_with_possessive"),
        pytest.param(4, "It opened in 1999.", True, id="numbers"),
        pytest.param(4, "A well-known pub here.", True, id="hyphenated_pair_of_words"),
        pytest.param(4, "It's a warm day.", True, id="contraction"),
        pytest.param(4, "The dough is traditionaldough.", False, id="glued_words"),
        pytest.param(4, "We promote a positiveMindset.", False, id="camel_case"),
        pytest.param(4, "Reducing the signs ofthe.", False, id="glued_typo_dropped_from_the_list"),
        pytest.param(4, "The Whaler'sRestOurM pub.", False, id="headline_glue"),
        pytest.param(4, "Flavours rich in the.", False, id="dangling_the"),
        pytest.param(4, "Stories of pride and.", False, id="dangling_and"),
        pytest.param(4, "The PIZZA is hot.", False, id="shouted_word_not_admitted"),
        pytest.param(4, "Café pizza is hot.", False, id="accented_word_outside_the_counted_set"),
    ],
)
@SYNTAXES
def test_english_word_list_grammar_admits_real_words_only(syntax: str, target: int, text: str, ok: bool) -> None:
    grammar = exact_grammar("en", target, syntax, words=lexicon_rules("en", PUB, syntax))  # type: ignore[arg-type]
    assert admits(syntax, grammar, text) is ok


@SYNTAXES
def test_the_countdown_grammar_takes_the_same_word_rules(syntax: str) -> None:
    g = countdown_grammar("en", 3, syntax, words=lexicon_rules("en", PUB, syntax))  # type: ignore[arg-type]
    assert admits(syntax, g, "<3>The<2>Whaler's<1>welcome.<0>")
    assert not admits(syntax, g, "<3>The<2>Whaler'sRest<1>welcome.<0>")
    assert not admits(syntax, g, "<3>Lots<2>of<1>the.<0>")


@pytest.mark.parametrize(
    ("lang", "text"),
    [("en", "The capital of France is Paris."), ("en", "It opened in 1999."), ("zh", "首都是巴黎。")],
    ids=["en_word", "en_number", "zh_character"],
)
@SYNTAXES
def test_under_a_limit_a_sentence_end_can_be_the_last_word(syntax: str, lang: str, text: str) -> None:
    # In Lark a word with its punctuation inside one terminal was lexed greedily: "Paris." was always a word that
    # goes on, never the last one, so a limit's text could only end at the limit.
    words = lexicon_rules(lang, "What is the capital of France?", syntax)  # type: ignore[arg-type]
    grammar = with_word_list(bounded_word_rules(lang, 1, 30), words, syntax)  # type: ignore[arg-type]
    assert admits(syntax, grammar, text)


def test_a_lark_word_list_names_the_models_end_token_after_the_text() -> None:
    grammar = with_word_list(bounded_word_rules("en", 1, 30), lexicon_rules("en", "", "lark"), "lark", "<|im_end|>")
    assert grammar.splitlines()[1] == 'start: ((word " "){0,29} wend) <|im_end|>'


@pytest.mark.parametrize(
    ("text", "ok"),
    [("灯塔很美。", True), ("你好，世界！", True), ("灯塔很\u9fd0。", False), ("灯塔很好", False), ("海边的。", False)],
    ids=["common", "punctuation", "rare_code_point_outside_the_list", "must_end_a_sentence", "dangling_particle"],
)
@SYNTAXES
def test_chinese_grammar_draws_characters_from_a_real_character_list(syntax: str, text: str, ok: bool) -> None:
    target = count(text, "zh_chars")
    grammar = exact_grammar("zh", target, syntax, words=lexicon_rules("zh", "", syntax))  # type: ignore[arg-type]
    assert admits(syntax, grammar, text) is ok


def test_the_llguidance_word_list_takes_the_longest_target_the_form_offers() -> None:
    grammar = exact_grammar("en", 10_000, "lark", words=lexicon_rules("en", PUB, "lark"))
    assert grammar.startswith("%llguidance {}\n")  # what tells llama.cpp it is LLGuidance's Lark
    assert accepts("lark", grammar, "Rest. " * 9_999 + "Rest.")
    assert not accepts("lark", grammar, "Rest. " * 10_000 + "Rest.")


# A few targets only: parsing the megabyte grammar is what costs (the interpreter caches it per text).
@settings(max_examples=40, deadline=None)
@given(st.sampled_from([4, 80]), st.sampled_from(["en", "zh"]), st.integers(0, 2**32 - 1))
def test_every_word_list_string_counts_to_the_target(target: int, lang: str, seed: int) -> None:
    units = ["en_words", "lifebench"] if lang == "en" else ["zh_chars", "lifebench"]
    for unit in units:
        words = lexicon_rules(lang, PUB, unit=unit)  # type: ignore[arg-type]
        s = sample(exact_grammar(lang, target, words=words), random.Random(seed))  # type: ignore[arg-type]
        assert count(s, unit) == target, (unit, s)  # type: ignore[arg-type]


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([1, 12]), st.integers(0, 2**32 - 1))
def test_every_word_list_countdown_is_a_valid_exact_countdown(target: int, seed: int) -> None:
    s = sample(countdown_grammar("en", target, words=lexicon_rules("en", PUB)), random.Random(seed))
    result = check_output(s, target, "en", "en_words")
    assert result.verified and result.errors == (), s


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("Write a headline for The Whaler's Rest.", ["Whaler"]),
        ("Describe the CAPEL app by Zyxco in 2024.", ["CAPEL", "Zyxco"]),  # the numbers need no entry
        ("Describe a pizza.", []),
        ("为 Nantucket 写一段文字", ["Nantucket"]),
    ],
)
def test_the_instructions_own_words_join_the_grammar(instruction: str, expected: list[str]) -> None:
    assert [w for w in instruction_words(instruction) if w.lower() not in {"capel"} or w == "CAPEL"] == expected


def test_the_word_list_is_built_once_and_holds_common_words_not_typos() -> None:
    words = english_words()
    assert english_words() is words  # cached per process
    assert {"the", "pizza", "don't", "london"} <= set(words)
    assert not {"ofthe", "q", "u.s"} & set(words)
    assert len(words) > 19_000
    assert "的" in chinese_chars() and len(chinese_chars()) > 2_500
    assert lexicon_rules("en", "x") is not None and {"the", "of", "and"} <= DANGLING


@pytest.mark.parametrize(
    ("word", "glued"),
    [
        ("traditionaldough", True),
        ("positiveMindset", True),
        ("thesigns", True),
        ("ofthe", True),
        ("into", False),
        ("another", False),
        ("theater", False),
        ("Nantucket", False),
        ("1999", False),
        ("thankyou", True),  # typos web text puts among wordfreq's frequent words; no dictionary lists them
        ("everytime", True),
        ("soup", False),  # so + up by frequency alone: words a spelling dictionary lists (data/scowl/compounds.txt)
        ("noon", False),
        ("onto", False),
        ("teamwork", False),
    ],
)
def test_looks_glued(word: str, glued: bool) -> None:
    assert looks_glued(word) is glued


def test_the_word_list_holds_the_words_that_only_look_glued() -> None:
    # Left out before (the grammar could not write "soup", "onto" or "teamwork"), and "noon" was called glued.
    assert {"soup", "onto", "teamwork", "noon", "behave"} <= set(english_words())
    assert not glued("Lunch at noon: a soup of beans poured onto bread, then teamwork.")
    assert glued("We met ofthe bakery.") == ["ofthe"]


def test_the_word_list_kept_on_disk_is_the_list_a_new_process_would_build(tmp_path, monkeypatch) -> None:
    """The filtered list is saved for the next process (about 2 s saved at every start); what it reads back is
    exactly what filtering gives, and a folder it cannot write to only means building it every time."""
    import capel_ui.lexicon as lexicon

    built = english_words()
    monkeypatch.setattr(lexicon, "PROJECT_ROOT", tmp_path)
    english_words.cache_clear()
    try:
        assert english_words() == built  # built here, saved under tmp_path
        [saved] = (tmp_path / "data" / "cache").iterdir()
        english_words.cache_clear()
        assert english_words() == built  # read back
        saved.write_text("the of and\n")  # emptied or cut short: built again
        english_words.cache_clear()
        assert english_words() == built
    finally:
        english_words.cache_clear()


@pytest.mark.parametrize(
    ("capabilities", "first_line"),
    [
        pytest.param(IN_PROCESS_LLAMA_CPP, "%llguidance {}", id="in_process_llama_cpp_gets_llguidance_lark"),
        pytest.param(LLAMA_CPP, 'root ::= (word " "){2} wend', id="a_llama_cpp_server_elsewhere_gets_gbnf"),
    ],
)
def test_the_word_list_goes_in_the_syntax_the_server_reads(capabilities, first_line: str) -> None:
    model = ScriptedBackend("One two three.", capabilities=capabilities)
    generate(model, Request("Count to three", 3, mode="exact", plan_ending=False))
    [(_, options)] = model.requests
    assert isinstance(options.grammar, str) and options.grammar.splitlines()[0] == first_line

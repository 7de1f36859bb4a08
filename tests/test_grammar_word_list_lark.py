"""The exact English word list as LLGuidance reads it (llama.cpp built with LLGuidance): each word but the last and
the space after it are one terminal (`WORD_SPACE`), so the model's word tokens (" house") never end a terminal
inside them, and the texts admitted are the ones the word and punctuation rules admitted before, quirks included.

The grammar before is written here as it was sent (`BEFORE`): both are checked by LLGuidance itself."""

from __future__ import annotations

import random

import pytest

from capel_ui.grammar import LLGUIDANCE, bounded_word_rules, exact_rules, lexicon_rules, starting_with, with_word_list
from capel_ui.lexicon import DANGLING, english_words
from tests.llg import _fresh_matcher, accepts

pytestmark = pytest.mark.xdist_group("word-list-grammars")

PUB = "Write a headline for a seaside pub called The Whaler's Rest."
BEFORE = 'start: (word " "){4} wend\n'
"""Five words as the exact grammar was sent before: a `word` rule of a word terminal and a punctuation terminal."""


def grammars(unit: str | None) -> tuple[str, str]:
    """(the five-word grammar before, the one sent now) over the same word list."""
    words = lexicon_rules("en", PUB, "lark", unit)  # type: ignore[arg-type]
    return LLGUIDANCE + BEFORE + words, with_word_list(exact_rules("en", 5, unit), words, "lark")  # type: ignore[arg-type]


# (text, admitted counting en_words, admitted counting LIFEBench words): five words each
TEXTS = [
    pytest.param("The dough rose at dawn.", True, True, id="common_words"),
    pytest.param("At 9 a.m. we met.", True, False, id="abbreviation_whole"),
    pytest.param("At 9 a.m., we met.", True, False, id="abbreviation_then_comma"),
    pytest.param("It was 12%, then 14%.", True, False, id="percentage_then_comma"),
    pytest.param("Rents rose 1,000,000, sadly enough.", True, False, id="number_of_two_groups_then_comma"),
    pytest.param("The 1990s, however, ended well.", True, False, id="decade_then_comma"),
    pytest.param("Tea at 3:30pm, then home.", True, False, id="time_then_comma"),
    pytest.param("It was 1999! Then rain.", True, True, id="number_then_exclamation"),
    pytest.param("The Whaler's Rest opens today.", True, True, id="own_word_with_possessive"),
    pytest.param("A well-known pub opens today.", True, True, id="hyphenated_pair"),
    pytest.param("He is Don's best friend.", True, True, id="possessive_of_a_word_that_begins_another"),
    pytest.param("Go, e.g., to the U.S.", True, False, id="abbreviations_inside_and_last"),
    pytest.param("In 1999, the town grew.", True, True, id="year_then_comma"),
    pytest.param("We met at 3:30, then.", True, False, id="time_then_comma_inside"),
    pytest.param("We sold 250, then more.", False, True, id="number_cut_short_by_its_comma"),
    pytest.param("Plan A. Then we go.", False, True, id="abbreviation_cut_short_by_its_dot"),
    pytest.param("A Ph. D student came.", False, False, id="ph_cut_short"),
    pytest.param("Sales fell 12. Then rose.", False, True, id="number_with_a_stop_inside_a_text"),
    pytest.param("The traditionaldough bakes here today.", False, False, id="glued_words"),
    pytest.param("We walked down to the.", False, False, id="dangling_last_word"),
    pytest.param("The dough rose at dawn", False, False, id="no_stop"),
    pytest.param("The  dough rose at dawn.", False, False, id="two_spaces"),
]


@pytest.mark.parametrize(("text", "en_words", "lifebench"), TEXTS)
@pytest.mark.parametrize("unit", [None, "lifebench"])
def test_the_exact_word_list_admits_the_texts_it_admitted_before(
    text: str, en_words: bool, lifebench: bool, unit: str | None
) -> None:
    before, now = grammars(unit)
    ok = lifebench if unit == "lifebench" else en_words
    assert (accepts("lark", before, text), accepts("lark", now, text)) == (ok, ok)


TRICKY = [
    *("1999", "3:30", "3,400", "1,000,000", "$3.4", "12%", "21st", "3pm", "a.m.", "e.g.", "U.S.", "Ph.D.", "etc."),
    *("a", "A", "i", "I", "Ph", "vs", "approx", "don", "it's", "Whaler", *sorted(DANGLING)),
]
"""Words where the old rules were greedy (a number or an abbreviation punctuation could carry on, a word that
begins a longer one) or that the last word may not be."""


def _word(r: random.Random) -> str:
    """A word as a model might write it, a third of them `TRICKY`."""
    pick = r.random()
    word = r.choice(TRICKY) if pick < 0.3 else str(r.randrange(10**6)) if pick < 0.35 else r.choice(english_words())
    word = word[:1].upper() + word[1:] if r.random() < 0.2 else word
    word += "'s" if r.random() < 0.05 else "-" + r.choice(english_words()) if r.random() < 0.03 else ""
    return word + (r.choice(",;:.!?") if r.random() < 0.3 else "")


def _first_difference(before: str, now: str, text: str, r: random.Random) -> str | None:
    """Where the two grammars first allow different next characters, feeding `text` byte by byte (sometimes
    leaving it for a random allowed byte), or None."""
    old, new = _fresh_matcher("lark", before).deep_copy(), _fresh_matcher("lark", now).deep_copy()
    data, done = list(text.encode()), b""
    wander = r.choice((0.0, 0.0, 0.05))
    while True:
        allowed = old.compute_logit_bias()
        if allowed != new.compute_logit_bias():
            return done.decode(errors="replace")
        options = [b for b in range(256) if allowed[b]]
        if not options or (not data and r.random() < 0.5):
            return None
        byte = data.pop(0) if data and r.random() >= wander else r.choice(options)
        if not allowed[byte]:
            return None
        assert old.consume_token(byte) and new.consume_token(byte)
        done += bytes([byte])


@pytest.mark.parametrize("unit", [None, "lifebench"])
def test_both_grammars_allow_the_same_next_character_all_along_random_texts(unit: str | None) -> None:
    before, now = grammars(unit)
    r = random.Random(45)
    for _ in range(120):
        text = " ".join(_word(r) for _ in range(r.choice((5, 5, 5, 3, 6))))
        assert _first_difference(before, now, text, r) is None, text


@pytest.mark.parametrize(
    ("grammar", "start"),
    [
        pytest.param(exact_rules("en", 80), "start: (WORD_SPACE{79} wend) <|im_end|>", id="exact"),
        pytest.param(
            starting_with(exact_rules("en", 5), "First", ","),
            'start: ("First, " WORD_SPACE{3} wend) <|im_end|>',
            id="rewrite_opening_with_the_writers_word",
        ),
        pytest.param(bounded_word_rules("en", 1, 30), 'start: ((word " "){0,29} wend) <|im_end|>', id="limit"),
        pytest.param(exact_rules("zh", 8), "start: (word{7} wend) <|im_end|>", id="chinese"),
    ],
)
def test_only_an_exact_english_texts_words_are_read_with_their_space(grammar, start: str) -> None:
    # A limit's words may each be the last: with its stop inside one terminal, "Paris." would be read on as a word
    # that goes on and the text could never end there (grammar.WORD_LIST_END).
    lang = "zh" if start.startswith("start: (word{") else "en"
    sent = with_word_list(grammar, lexicon_rules(lang, "", "lark"), "lark", "<|im_end|>")  # type: ignore[arg-type]
    assert sent.splitlines()[1] == start


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        pytest.param("The dough rose at dawn.", True, id="words_as_before"),
        pytest.param("The Whaler's Rest opens today.", True, id="own_words_as_before"),
        pytest.param("At 9 a.m. we met.", False, id="a_number"),
        pytest.param("It was 1999! Then rain.", False, id="a_number_ending_a_sentence"),
        pytest.param("Rest 1.1.1 2.1.1 3.1.1 4.1.1.", False, id="a_list_of_section_numbers"),
    ],
)
def test_the_word_list_without_numbers_admits_the_same_words_and_no_number(text: str, ok: bool) -> None:
    # What a text that turned into a list of numbers is written again under (generation.ListWatch).
    words = lexicon_rules("en", PUB + " Room 101", "lark", numbers=False)
    assert accepts("lark", with_word_list(exact_rules("en", 5), words, "lark"), text) is ok

"""The grammars that exist only as GBNF text (the word list, the character limits) also compile in LLGuidance
and admit what they promise: every grammar the app can build is checked by the engine, not only the tree ones."""

from __future__ import annotations

import pytest

from capel_ui.counting import count
from capel_ui.grammar import char_grammar, countdown_grammar, exact_grammar, lexicon_rules
from tests.llg import accepts, compiled

PUB = "Write a headline for a seaside pub called The Whaler's Rest."


@pytest.mark.parametrize(
    ("make", "text", "ok"),
    [
        pytest.param(
            lambda: exact_grammar("en", 4, words=lexicon_rules("en", PUB)),
            "The Whaler's Rest opens.",
            True,
            id="en_word_list_admits_listed_and_own_words",
        ),
        pytest.param(
            lambda: exact_grammar("en", 3, words=lexicon_rules("en")),
            "the traditionaldough bakes.",
            False,
            id="en_word_list_refuses_a_glued_word",
        ),
        pytest.param(
            lambda: exact_grammar("en", 3, words=lexicon_rules("en")),
            "We walked to.",
            False,
            id="en_word_list_refuses_a_dangling_end",
        ),
        pytest.param(
            lambda: countdown_grammar("en", 2, words=lexicon_rules("en")),
            "<2>Good<1>morning.<0>",
            True,
            id="en_word_list_countdown",
        ),
        pytest.param(
            lambda: exact_grammar("zh", 4, words=lexicon_rules("zh")), "今天很好。", True, id="zh_character_list"
        ),
    ],
)
def test_word_list_grammars_compile_in_llguidance_and_keep_their_promise(make, text, ok) -> None:
    assert accepts("gbnf", make(), text) is ok


@pytest.mark.parametrize(
    ("lang", "low", "high", "text", "ok"),
    [
        ("en", 1, 30, "A lighthouse at dawn.", True),
        ("en", 1, 20, "A lighthouse at dawn, bright.", False),  # 29 characters: over the limit
        ("en", 1, 30, "A lighthouse at", False),  # no sentence end
        ("en", 21, 21, "A lighthouse at dawn.", True),  # exactly 21
        ("en", 25, 30, "A lighthouse at dawn.", False),  # below the range
        ("zh", 1, 10, "灯塔在黎明时闪光。", True),
        ("zh", 1, 5, "灯塔在黎明时闪光。", False),
    ],
)
def test_character_grammars_compile_in_llguidance_and_admit_only_texts_within_the_limit(
    lang, low, high, text, ok
) -> None:
    assert accepts("gbnf", char_grammar(lang, low, high), text) is ok
    if ok:
        assert low <= count(text, "chars") <= high


@pytest.mark.parametrize("high", [2, 30, 90, 155, 280])
def test_every_preset_sized_character_grammar_compiles_in_llguidance(high: int) -> None:
    assert compiled("gbnf", char_grammar("en", 1, high))

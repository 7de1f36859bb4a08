"""Under a limit or a range, the countdown shows the room left (issue 31, point 3: the model plans toward the limit).

CAPEL's markers count down from the limit; `<0>` may close the text after any unit from the least on, so a model that
reads the markers ends its last sentence where the room allows rather than being cut at the limit.
"""

from __future__ import annotations

import sys

import pytest

from capel_ui.backends import Capabilities
from capel_ui.backends.providers.scripted import ScriptedBackend
from capel_ui.generation import Request, generate
from capel_ui.grammar import countdown_rules, lexicon_rules, with_word_list
from capel_ui.parser import check_output
from capel_ui.prompts import build_messages
from capel_ui.service import modes_for
from capel_ui.verdict import Target
from tests.llg import accepts

AT_MOST_5 = Target.at_most(5)


LLAMA, NO_GRAMMAR = (
    Capabilities(grammar_field="grammar"),
    Capabilities(),
)  # a model that takes a grammar, one that does not


@pytest.mark.parametrize(
    ("raw", "target", "count", "errors"),
    [
        pytest.param("<5>Good<4>morning.<0>", AT_MOST_5, 2, [], id="a_limit_closes_at_a_sentence_end"),
        pytest.param("<5>Good<4>day.<3>Sun<2>is<1>out.<0>", AT_MOST_5, 5, [], id="a_limit_used_to_the_last_unit"),
        pytest.param("<5>Good<4>morning.<0>", 5, 2, ["early_stop"], id="exactly_n_still_counts_to_one"),
        pytest.param("<5>Hi.<0>", Target.between(2, 5), 1, ["early_stop"], id="a_range_closed_before_its_least"),
        pytest.param("<5>Good<4>morning.<3>", AT_MOST_5, 2, ["early_stop"], id="a_limit_left_open_without_0"),
        pytest.param("<5>Good<3>morning.<0>", AT_MOST_5, 2, ["skip"], id="a_skipped_marker_is_still_wrong"),
        pytest.param("<6>Good<5>morning.<0>", AT_MOST_5, 2, ["wrong_start"], id="the_room_starts_at_the_limit"),
    ],
)
def test_the_parser_reads_a_room_countdown(raw: str, target: Target | int, count: int, errors: list[str]) -> None:
    result = check_output(raw, target)
    assert (result.count, [e.type for e in result.errors]) == (count, errors)


def test_a_room_countdown_closed_within_the_limit_is_verified() -> None:
    assert check_output("<30>The<29>capital<28>is<27>Paris.<0>", Target.at_most(30)).verified


def test_a_range_countdown_closed_too_early_says_so() -> None:
    [error] = check_output("<5>Hi.<0>", Target.between(2, 5)).errors
    assert "before the least, 2" in error.message


ROOM = countdown_rules("en", 5, low=2)


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("<5>Good<4>morning.<0>", True),
        ("<5>Good<4>day.<3>Sun<2>is<1>out.<0>", True),
        ("<5>Hi.<0>", False),  # below the least
        ("<5>Good<4>morning<0>", False),  # no sentence end before <0>
        ("<5>Good<4>morning.<3>", False),  # never closed
        ("<5>Good<4>morning<3>to<2>you<1>all<0>", False),  # the last unit must close a sentence
    ],
)
@pytest.mark.parametrize("syntax", ["gbnf", "lark", "regex"])
def test_the_room_grammar_closes_only_at_a_sentence_end_from_the_least_on(syntax: str, text: str, ok: bool) -> None:
    assert accepts(syntax, ROOM.render(syntax), text) is ok  # type: ignore[arg-type]


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
def test_the_room_grammar_keeps_its_steps_under_the_word_list(syntax: str) -> None:
    grammar = with_word_list(ROOM, lexicon_rules("en", "", syntax), syntax)  # type: ignore[arg-type]
    assert accepts(syntax, grammar, "<5>Good<4>morning.<0>")  # type: ignore[arg-type]
    assert not accepts(syntax, grammar, "<5>Good<4>mornin.<0>")  # type: ignore[arg-type]


def test_a_chinese_room_countdown_closes_at_a_full_stop() -> None:
    grammar = countdown_rules("zh", 4, low=1).render("gbnf")
    assert accepts("gbnf", grammar, "<4>好。<0>") and not accepts("gbnf", grammar, "<4>今<3>天<0>")


def test_a_long_limits_grammar_renders_as_one_regex_without_recursion() -> None:
    deep = sys.getrecursionlimit() + 100  # a marker nests in the next: a renderer that recursed would fail here
    assert countdown_rules("en", deep, low=1).regex().startswith(f"(<{deep}>")  # 2,000 took 6 s of CPU, 1,100 2 s


@pytest.mark.parametrize(
    ("kind", "low", "says"),
    [
        ("at_most", None, "plan your last sentence so that it ends before the room runs out"),
        ("range", 20, "do not write <0> before the word paired with <11>"),
    ],
)
def test_capel_under_a_limit_asks_for_a_countdown_of_the_room(kind: str, low: int | None, says: str) -> None:
    [message] = build_messages("Describe Paris.", "en", 30, "capel", limit=("en_words", kind, low or 1))  # type: ignore[arg-type]
    assert "starts at 30" in message["content"] and says in message["content"]


def test_capel_is_offered_under_a_word_limit_and_an_english_character_one_but_not_exactly_n_characters() -> None:
    assert "capel" in modes_for(NO_GRAMMAR, "en", "en_words", "at_most").modes
    assert "capel" in modes_for(NO_GRAMMAR, "en", "chars", "at_most").modes  # the room in characters: test_char_room.py
    assert "capel" not in modes_for(NO_GRAMMAR, "en", "chars", "exactly").modes


def test_capel_under_a_limit_gives_the_text_the_model_closed_verified() -> None:
    model = ScriptedBackend()
    model.reply("<10>Paris<9>is<8>lovely.<0>")
    out = generate(model, Request("Describe Paris.", 10, mode="capel", target_kind="at_most"))
    assert (out.text, out.count, out.verified) == ("Paris is lovely.", 3, True)


def test_capel_under_a_range_closed_before_its_least_is_not_verified() -> None:
    model = ScriptedBackend()
    model.reply("<10>Paris<9>is.<0>")
    request = Request("Describe Paris.", 10, mode="capel", target_kind="range", target_low=5, max_calls=1)
    out = generate(model, request)
    assert not out.verified and [e.type for e in out.errors] == ["early_stop"]


def test_a_broken_room_countdown_is_repaired_from_its_last_right_marker() -> None:
    model = ScriptedBackend()
    model.reply("<10>Paris<9>is<8>lovely<7>and<5>old.<0>", "<6>old.<0>")
    out = generate(model, Request("Describe Paris.", 10, mode="capel", target_kind="at_most", max_calls=3))
    assert (out.text, out.verified, len(model.requests)) == ("Paris is lovely and old.", True, 2)


@pytest.mark.model
def test_the_room_countdown_forced_on_the_embedded_model_closes_within_the_limit(embedded) -> None:
    # The room grammar's steps, the word list and the model's end token together on llama.cpp's LLGuidance.
    request = Request(
        "What is the capital of France?",
        20,
        mode="exact-countdown",
        target_kind="at_most",
        allow_fallback=False,
        seed=2,
    )
    out = generate(embedded, request)
    assert out.verified and out.raw.startswith("<20>") and out.raw.endswith("<0>"), out.raw
    assert "<" not in out.text and out.text[-1] in ".!?"

"""Under a character limit the countdown shows the characters left (issue 31, point 3, for the ad headline, the SMS,
the X post): one marker per word, its value the room still allowed, the space before the word paid for by the marker.

`<30>Bike<25>repair<18>in<15>Portland.<0>` under at most 30 characters is "Bike repair in Portland." (24).
"""

from __future__ import annotations

import pytest

from capel_ui.backends import Capabilities, fallback
from capel_ui.backends.providers.scripted import ScriptedBackend
from capel_ui.counting import count
from capel_ui.generation import Request, generate
from capel_ui.grammar import char_room_grammar, grammar_text
from capel_ui.parser import MarkerParser, check_output
from capel_ui.prompts import build_messages
from capel_ui.request import default_max_tokens
from capel_ui.service import modes_for
from capel_ui.verdict import Target
from capel_ui.vocab import markers_can_count
from tests.llg import accepts

AT_MOST_30 = Target.at_most(30)


LLAMA, NO_GRAMMAR = (
    Capabilities(grammar_field="grammar"),
    Capabilities(),
)  # a model that takes a grammar, one that does not


def room_countdown(text: str, high: int, unit: str = "chars") -> str:
    """`text` written as a room countdown under at most `high`: each word after the marker of the room left."""
    out, done = [], ""
    for word in text.split():
        out.append(f"<{high - count(done + ' ', unit) if done else high}>{word}")
        done = f"{done} {word}".strip()
    return "".join(out) + "<0>"


@pytest.mark.parametrize(
    ("raw", "unit", "text", "errors"),
    [
        pytest.param("<30>Bike<25>repair<18>in<15>Portland.<0>", "chars", "Bike repair in Portland.", [], id="right"),
        pytest.param("<30>Bike,<24>fixed<18>fast.<0>", "chars", "Bike, fixed fast.", [], id="punctuation_counts"),
        pytest.param(
            "<30>Bike<29>repair<28>in<27>Portland.<0>",
            "chars",
            "Bike repair in Portland.",
            ["wrong_room"] * 3,
            id="counting_words_is_wrong",
        ),
        pytest.param("<30>Bike<25>repair<18>in", "chars", "Bike repair in", ["missing_end"], id="left_open"),
        pytest.param(
            "<30>Bike<25>repair<18>in<15>Portland,<5>Oregon.<0>",
            "chars",
            "Bike repair in Portland, Oregon.",
            ["wrong_room"],
            id="a_word_past_the_room",
        ),
        pytest.param("<31>Bike<25>repair.<0>", "chars", "Bike repair.", ["wrong_start"], id="starts_at_the_limit"),
        pytest.param("<30>Hi<27>there.<0>", "sms", "Hi there.", [], id="sms"),
        pytest.param("<30>Hi<27>€5<23>off.<0>", "sms", "Hi €5 off.", [], id="sms_euro_takes_two"),
        pytest.param("<30>Hi<27>€5<23>off.<0>", "chars", "Hi €5 off.", ["wrong_room"], id="a_euro_is_one_character"),
        pytest.param("<30>Hi<27>€5<23>off.<0>", "x_weighted", "Hi €5 off.", [], id="x_weighted_euro_weighs_two"),
    ],
)
def test_the_parser_reads_a_countdown_of_the_characters_left(raw: str, unit: str, text: str, errors: list) -> None:
    result = check_output(raw, AT_MOST_30, "en", unit)  # type: ignore[arg-type]
    assert (result.text, [e.type for e in result.errors]) == (text, errors)


def test_a_miscounted_room_says_what_was_left() -> None:
    [error, *_] = check_output("<30>Bike<29>repair.<0>", AT_MOST_30, "en", "chars").errors
    assert error.message == "<29> after 4 written: the room left is <25>"


def test_a_character_range_closed_before_its_least_is_an_early_stop() -> None:
    [error] = check_output("<30>Hi.<0>", Target.between(10, 30), "en", "chars").errors
    assert error.type == "early_stop" and "before the least, 10" in error.message


def test_the_live_count_of_a_character_countdown_is_the_characters_written() -> None:
    parser = MarkerParser(AT_MOST_30, "en", "chars")
    parser.feed("<30>Bike<25>repa")
    assert (parser.units_done, parser.remaining) == (len("Bike repa"), 30 - len("Bike repa"))


def test_a_repair_continues_from_the_room_the_last_right_word_left() -> None:
    parser = MarkerParser(AT_MOST_30, "en", "chars")
    parser.feed("<30>Bike<25>repair<17>in")
    ver = parser.verified()
    assert (ver.next_marker, ver.kept(parser.raw)) == (18, "<30>Bike<25>repair")


@pytest.mark.parametrize(
    "text",
    ["Bike repair in Portland.", "Open 9am, fixed by 3:30 for $12.", "Fast fix.", "We fix bikes, fast! Call us."],
)
def test_a_written_room_countdown_parses_to_its_text_verified(text: str) -> None:
    result = check_output(room_countdown(text, 40), Target.at_most(40), "en", "chars")
    assert (result.text, result.verified) == (text, True)


GRAMMAR = char_room_grammar("en", 1, 30)


@pytest.mark.parametrize(
    ("raw", "ok"),
    [
        ("<30>Bike<25>repair<18>in<15>Portland.<0>", True),
        ("<30>Open<25>at<22>3:30.<0>", True),  # a time whole: 3:30 is one word
        ("<30>Bike<29>repair.<0>", False),  # a marker not the room left
        ("<30>Bike<25>repair<18>in<0>", False),  # <0> not after a sentence end
        ("<30>Bike<25>repair<18>in<15>Portland,<5>Oregon.<0>", False),  # past the limit
        ("<30>Open<25>at<22>3:<19>30.<0>", False),  # a time broken by the grammar: never
        ("<30>Bike<25>repair.", False),  # never closed
    ],
)
@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
def test_the_character_room_grammar_forces_the_room_left_and_a_sentence_end(syntax: str, raw: str, ok: bool) -> None:
    assert accepts(syntax, grammar_text(GRAMMAR, syntax), raw) is ok  # type: ignore[arg-type]


def test_every_string_the_room_grammar_admits_that_a_writer_would_write_is_a_verified_countdown() -> None:
    for text in ["Bikes fixed fast.", "Repairs: $12, done by 3:30.", "Ride on! We fix it."]:
        raw = room_countdown(text, 30)
        assert accepts("gbnf", GRAMMAR, raw) and check_output(raw, AT_MOST_30, "en", "chars").verified, raw


def test_a_range_grammar_closes_only_from_its_least_on() -> None:
    grammar = char_room_grammar("en", 12, 30)
    assert not accepts("gbnf", grammar, "<30>Hi.<0>") and accepts("gbnf", grammar, room_countdown("Hi there, you.", 30))


@pytest.mark.parametrize(
    ("lang", "unit", "kind", "offered"),
    [
        ("en", "chars", "at_most", True),
        ("en", "sms", "at_most", True),
        ("en", "x_weighted", "range", True),
        ("en", "chars", "exactly", False),  # exactly N characters: the room cannot close on the last one by choice
        ("zh", "zh_all", "at_most", True),  # the Weibo post: punctuation counts
        ("zh", "chars", "range", True),
        ("zh", "zh_all", "exactly", False),
    ],
)
def test_markers_count_the_room_of_a_character_limit(lang: str, unit: str, kind: str, offered: bool) -> None:
    assert markers_can_count(lang, unit, kind) is offered  # type: ignore[arg-type]


def test_capel_under_a_character_limit_asks_for_the_characters_left_with_the_units_noun() -> None:
    [message] = build_messages("Write an ad headline.", "en", 30, "capel", limit=("chars", "at_most", 1))
    content = message["content"]
    assert "<30>Hello,<23>world!<16>How<12>are<8>you?<0>" in content
    assert "the limit of 30 characters (spaces and punctuation count)" in content


def test_draft_capel_under_a_character_limit_asks_for_characters_not_words() -> None:
    [message] = build_messages("Write an SMS.", "en", 160, "draft-capel", limit=("sms", "at_most", 1))
    assert "so that it has at most 160 characters" in message["content"]


def test_capel_under_a_character_limit_gives_the_closed_text_verified_with_its_character_count() -> None:
    model = ScriptedBackend()
    model.reply("<30>Bike<25>repair<18>in<15>Portland.<0>")
    out = generate(model, Request("Ad headline.", 30, mode="capel", unit="chars", target_kind="at_most"))
    assert (out.text, out.count, out.verified) == ("Bike repair in Portland.", 24, True)


def test_a_miscounted_character_countdown_is_repaired_from_its_last_right_word() -> None:
    model = ScriptedBackend()
    model.reply("<30>Bike<25>repair<17>in<15>Portland.<0>", "<18>in<15>Portland.<0>")
    request = Request("Ad headline.", 30, mode="capel", unit="chars", target_kind="at_most", max_calls=3)
    out = generate(model, request)
    assert (out.text, out.verified, len(model.requests)) == ("Bike repair in Portland.", True, 2)


def test_the_embedded_model_writes_its_guaranteed_countdown_under_a_character_limit_as_plain_exact() -> None:
    # The 135M model copies the example and loops under countdown markers ("Bike Bike Bike…", read by hand).
    assert "exact-countdown" in modes_for(LLAMA, "en", "chars", "at_most").modes
    assert fallback("embedded", "exact-countdown").mode == "exact"


@pytest.mark.model
def test_the_character_room_grammar_forced_on_the_embedded_model_is_a_verified_countdown(embedded) -> None:
    request = Request(
        "Write a headline for a bakery's new rye bread.",
        40,
        mode="exact-countdown",
        unit="chars",
        target_kind="at_most",
        allow_fallback=False,
        seed=3,
    )
    out = generate(embedded, request)
    assert out.verified and out.raw.startswith("<40>") and out.raw.endswith("<0>"), out.raw
    assert "<" not in out.text and out.count <= 40 and out.text[-1] in ".!?", out.text


@pytest.mark.parametrize(
    ("grammar", "unit", "kind", "mode"),
    [
        (False, "chars", "at_most", "baseline"),  # the model would add up characters itself: offered, not the default
        (False, "sms", "range", "baseline"),
        (False, "en_words", "at_most", "capel"),  # one marker per word: the model keeps that count
        (True, "chars", "at_most", "exact"),
    ],
)
def test_the_cli_default_mode_under_a_character_limit_is_not_a_countdown_the_model_must_add_up(
    grammar: bool, unit: str, kind: str, mode: str
) -> None:
    assert modes_for((LLAMA if grammar else NO_GRAMMAR), "en", unit, kind).default == mode  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["capel", "exact-countdown"])
def test_a_character_countdown_has_output_room_for_a_marker_before_every_word(mode: str) -> None:
    # The densest text the character grammar admits: one-letter words, each with its marker (`<280>a<278>b…`).
    request = Request("x", 280, mode=mode, unit="chars", target_kind="at_most")  # type: ignore[arg-type]
    words = 280 // 2
    assert default_max_tokens(request) >= 280 + words * len("<280>")


@pytest.mark.parametrize(
    ("raw", "errors"),
    [
        ("<10>今<9>天<8>天<7>气<6>好，<4>我<3>们<2>去。<0>", []),
        ("<10>今<9>天<8>天<7>气<6>好，<5>我<4>们<3>去。<0>", ["wrong_room"] * 3),  # the comma not counted
        ("<10>今<9>天<8>天<7>气<6>好，<4>我<3>们<2>去<1>吧。<0>", ["wrong_room"]),  # 11 of 10
    ],
)
def test_a_chinese_countdown_of_the_characters_left_counts_punctuation(raw: str, errors: list) -> None:
    result = check_output(raw, Target.at_most(10), "zh", "zh_all")
    assert [e.type for e in result.errors] == errors


@pytest.mark.parametrize(
    ("raw", "ok"),
    [
        ("<10>今<9>天<8>天<7>气<6>好，<4>我<3>们<2>去。<0>", True),
        ("<10>今<9>天<8>天<7>气<6>好，<5>我<4>们<3>去。<0>", False),
        ("<10>今<9>天<8>的<0>", False),  # <0> only after a sentence end
    ],
)
def test_the_chinese_room_grammar_forces_the_characters_left(raw: str, ok: bool) -> None:
    assert accepts("gbnf", char_room_grammar("zh", 1, 10), raw) is ok


def test_capel_under_a_weibo_limit_asks_for_the_characters_left_with_punctuation() -> None:
    [message] = build_messages("写一条微博。", "zh", 140, "capel", limit=("zh_all", "at_most", 1))
    assert "<10>今<9>天<8>天<7>气<6>好，<4>我<3>们<2>去。<0>" in message["content"] and "<140>" in message["content"]

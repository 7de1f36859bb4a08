"""The character units a writer's limits are in: chars, x_weighted, sms, zh_all.

Each tricky input has the count a writer would expect, written by hand, and the CLI's `count --unit` must agree
with the maintained libraries' own counts (regex's grapheme clusters, twitter-text's weighted length, the GSM
03.38 codec) on all of them.
"""

from __future__ import annotations

import io

import pytest
import regex
from twitter_text import parse_tweet

from capel_ui.cli import main
from capel_ui.counting import count, count_detail, sms_length

FAMILY = "👨\u200d👩\u200d👧"  # man ZWJ woman ZWJ girl: one emoji on screen
THUMBS = "👍🏽"  # thumbs up + skin tone
FLAG = "🇫🇷"  # two regional indicators
E_COMBINING = "e\u0301"  # e + combining acute accent
LONG_URL = "https://example.com/a/very/long/path/that/keeps/going"

# text, chars, x_weighted, sms length, sms encoding, zh_all
TRICKY = [
    pytest.param("", 0, 0, 0, "GSM-7", 0, id="empty"),
    pytest.param("hello world", 11, 11, 11, "GSM-7", 10, id="ascii_words"),
    pytest.param(THUMBS, 1, 2, 4, "UCS-2", 1, id="emoji_with_skin_tone"),
    pytest.param(FAMILY, 1, 2, 8, "UCS-2", 1, id="emoji_zwj_family"),
    pytest.param(FLAG, 1, 2, 4, "UCS-2", 1, id="flag"),
    pytest.param(f"Party {THUMBS}{FLAG}!", 9, 11, 15, "UCS-2", 8, id="emoji_in_a_sentence"),
    pytest.param("https://example.com/a-b", 23, 23, 23, "GSM-7", 23, id="url"),
    pytest.param(
        f"See {LONG_URL} now",
        len(LONG_URL) + 8,
        31,
        len(LONG_URL) + 8,
        "GSM-7",
        len(LONG_URL) + 6,
        id="long_url_counts_23_on_x",
    ),
    pytest.param("你好，世界。", 6, 12, 6, "UCS-2", 6, id="cjk_with_punctuation"),
    pytest.param("我们用Python写代码，很好！", 16, 26, 16, "UCS-2", 16, id="mixed_chinese_and_latin"),
    pytest.param("€[]~", 4, 5, 8, "GSM-7", 4, id="gsm7_extension_characters_cost_two"),
    pytest.param("{price} ^ \\ |", 13, 13, 18, "GSM-7", 10, id="more_gsm7_extension_characters"),
    pytest.param(E_COMBINING, 1, 1, 2, "UCS-2", 1, id="combining_accent"),
    pytest.param("café", 4, 4, 4, "GSM-7", 4, id="precomposed_accent_in_gsm7"),
    pytest.param("ça va", 5, 5, 5, "UCS-2", 4, id="c_cedilla_needs_ucs2"),
    pytest.param("a\r\nb", 3, 3, 4, "GSM-7", 2, id="crlf_is_one_character"),
    pytest.param("— hi —", 6, 6, 6, "UCS-2", 4, id="em_dashes_weigh_one_on_x"),
]


@pytest.mark.parametrize(("text", "chars", "x", "sms", "encoding", "zh_all"), TRICKY)
def test_character_units_count_what_a_writer_sees(text, chars, x, sms, encoding, zh_all) -> None:
    assert count(text, "chars") == chars
    assert count(text, "x_weighted") == x
    assert count(text, "sms") == sms
    assert sms_length(text).encoding == encoding
    assert count(text, "zh_all") == zh_all


def library_count(text: str, unit: str) -> int:
    """The libraries' own counts, computed straight from them."""
    if unit == "chars":
        return len(regex.findall(r"\X", text))
    if unit == "x_weighted":
        return parse_tweet(text).weightedLength
    try:
        return len(text.encode("gsm03.38"))
    except UnicodeEncodeError:
        return len(text.encode("utf-16-le")) // 2


def cli_count(text: str, unit: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    stdin = io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8")
    assert main(["count", "--unit", unit, "-"], stdin=stdin, stdout=out, stderr=err) == 0
    return int(out.getvalue()), err.getvalue()


@pytest.mark.parametrize("unit", ["chars", "x_weighted", "sms"])
@pytest.mark.parametrize("text", [p.values[0] for p in TRICKY])
def test_count_command_agrees_with_the_libraries(text: str, unit: str) -> None:
    assert cli_count(text, unit)[0] == library_count(text, unit)


@pytest.mark.parametrize("text", [p.values[0] for p in TRICKY])
def test_zh_all_is_every_grapheme_but_whitespace(text: str) -> None:
    expected = sum(1 for g in regex.findall(r"\X", text) if not g.isspace())
    assert cli_count(text, "zh_all")[0] == expected


@pytest.mark.parametrize(
    ("text", "segments", "per_segment"),
    [
        pytest.param("a" * 160, 1, 160, id="160_gsm7_is_one_segment"),
        pytest.param("a" * 161, 2, 160, id="161_gsm7_is_two_segments_of_153"),
        pytest.param("a" * 306, 2, 160, id="306_gsm7_fills_two_parts"),
        pytest.param("a" * 307, 3, 160, id="307_gsm7_needs_a_third"),
        pytest.param("€" * 80, 1, 160, id="80_euro_signs_are_160_septets"),
        pytest.param("€" * 81, 2, 160, id="81_euro_signs_overflow"),
        pytest.param("你" * 70, 1, 70, id="70_ucs2_is_one_segment"),
        pytest.param("你" * 71, 2, 70, id="71_ucs2_is_two_segments_of_67"),
        pytest.param("a" * 150 + THUMBS, 3, 70, id="one_emoji_turns_a_text_into_ucs2"),
    ],
)
def test_sms_segments_follow_the_encoding(text: str, segments: int, per_segment: int) -> None:
    info = sms_length(text)
    assert (info.segments, info.per_segment) == (segments, per_segment)


def test_count_command_tells_the_sms_encoding_and_segments_on_stderr() -> None:
    n, err = cli_count("Table for two at 7 pm. Reply STOP to opt out €", "sms")
    assert n == 47
    assert err == "47 GSM-7 characters · 1 segment (160 per segment)\n"
    assert count_detail("你好", "sms") == "2 UCS-2 characters · 1 segment (70 per segment)"
    assert count_detail("hello", "chars") is None

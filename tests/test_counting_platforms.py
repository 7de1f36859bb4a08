"""Counts that agree with the platforms' own tools: X's weighted length (twitter-text v3 and its conformance
suite, `conformance/validate.yml`) and SMS segments (Twilio's segment calculator).

The tables are written here by hand from those references' cases and rules; no file of theirs is read.
"""

from __future__ import annotations

import emoji
import pytest

from capel_ui.counting import count, count_detail, refusal, sms_length
from capel_ui.verdict import Target, decide

ZWJ = "\u200d"
TAGS_ENGLAND = "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"
FAMILY4 = ZWJ.join("👨👩👧👦")


# ----- X: twitter-text v3 (WeightedTweetsWithDiscountedEmojiCounterTest and UnicodeDirectionalMarkerCounterTest) --

X_CONFORMANCE = [
    pytest.param("This is a test.", 15, True, id="plain_latin"),
    pytest.param("Hi http://test.co", 26, True, id="url_counts_23"),
    pytest.param("https://www.twitter.com/aloha " * 10, 240, True, id="ten_urls"),
    pytest.param("285 chars-" + "xxxxxxxxxx-" * 25, 285, False, id="over_280_is_invalid"),
    pytest.param("ÁB", 2, True, id="precomposed_accent_is_one"),
    pytest.param("\U00010000\U0010ffff", 4, True, id="astral_code_points_are_two_each"),
    pytest.param("H🐱☺" + FAMILY4, 7, True, id="mixed_latin_emoji_and_a_zwj_family"),
    pytest.param("😷👾😡🔥💩", 10, True, id="five_emoji"),
    pytest.param("🙋🏽👨" + ZWJ + "🎤", 4, True, id="skin_tone_and_zwj_singer"),
    pytest.param("1\u20e3", 2, True, id="keycap_without_selector"),
    pytest.param(f"Unicode 10.0 emoji: 🤪; 🧕; 🧕🏾; {TAGS_ENGLAND}", 34, True, id="unicode_10_and_a_tag_flag"),
    pytest.param("Unicode 9.0 emoji: 🤠; 💃; 💃🏾", 29, True, id="unicode_9"),
    pytest.param(FAMILY4 * 140, 280, True, id="140_families_fill_a_post"),
    pytest.param("ABC\u202a\uffffABC\ufffe", 12, False, id="refused_characters_make_it_invalid"),
    pytest.param("\u2066\u202ahttp://foobar.پاکستان/\u202c\u2069", 31, True, id="directional_marks_are_valid"),
]


@pytest.mark.parametrize(("text", "weighted", "valid"), X_CONFORMANCE)
def test_x_weighted_length_agrees_with_twitter_texts_conformance_suite(text: str, weighted: int, valid: bool) -> None:
    assert count(text, "x_weighted") == weighted
    assert decide("complete", weighted, Target.at_most(280), 0, refusal(text, "x_weighted")).verified is valid


# Emoji newer than twitter-text-parser's list (Emoji 12.0), each one sequence on screen: 2 on X, like any emoji.
NEWER_EMOJI = [
    pytest.param("🧑" + ZWJ + "🎨", id="artist_12_1"),
    pytest.param("🐦" + ZWJ + "⬛", id="black_bird_15_0"),
    pytest.param("💑🏿", id="couple_with_skin_tone_13_1"),
    pytest.param("🧑🏽" + ZWJ + "🤝" + ZWJ + "🧑🏿", id="people_holding_hands_two_tones"),
    pytest.param("🫱🏻" + ZWJ + "🫲🏿", id="handshake_two_tones_14_0"),
    pytest.param("❤️" + ZWJ + "🔥", id="heart_on_fire_13_1"),
    pytest.param("🏳️" + ZWJ + "🌈", id="rainbow_flag"),
    pytest.param("🫎", id="moose_15_0"),
    pytest.param("\U0001fae9", id="face_with_bags_under_eyes_16_0"),
    pytest.param("#️⃣", id="keycap_with_selector"),
    pytest.param("🇺🇦", id="regional_indicator_flag"),
    pytest.param(TAGS_ENGLAND, id="tag_sequence_flag"),
]


@pytest.mark.parametrize("text", NEWER_EMOJI)
def test_any_emoji_sequence_weighs_two_on_x_whatever_its_unicode_version(text: str) -> None:
    assert count(text, "x_weighted") == 2
    assert count(f"Hi {text}!", "x_weighted") == 6


def test_every_emoji_of_unicodes_current_list_weighs_two_on_x() -> None:
    """Every fully-qualified emoji (and every minimally-qualified or unqualified form) the `emoji` package lists."""
    wrong = {e: count(e, "x_weighted") for e in emoji.EMOJI_DATA if count(e, "x_weighted") != 2}
    assert len(emoji.EMOJI_DATA) > 5000
    assert wrong == {}


@pytest.mark.parametrize(
    ("text", "weighted"),
    [
        pytest.param("😀😀", 4, id="two_emoji_side_by_side_are_two"),
        pytest.param("🇫🇷🇩🇪", 4, id="two_flags_are_two"),
        pytest.param("1 2 3", 5, id="digits_alone_are_latin"),
        pytest.param("a" + ZWJ + "b", 3, id="zwj_between_letters_joins_nothing"),
        pytest.param("क्" + ZWJ + "ष", 4, id="zwj_in_devanagari_is_one"),
        pytest.param("©", 2, id="copyright_sign_is_an_emoji_as_twitter_text_says"),
    ],
)
def test_x_weighted_length_does_not_merge_what_is_not_one_emoji(text: str, weighted: int) -> None:
    assert count(text, "x_weighted") == weighted


@pytest.mark.parametrize("char", ["\ufffe", "\uffff", "\ufeff"])
def test_a_character_x_refuses_makes_any_length_unverified_and_says_why(char: str) -> None:
    text = f"Short and sweet{char}"
    reason = refusal(text, "x_weighted")
    assert reason is not None and "not a valid X post" in reason
    verdict = decide("complete", count(text, "x_weighted"), Target.at_most(280), 0, reason)
    assert verdict.within and not verdict.verified
    assert verdict.tone == "red"
    assert reason in verdict.headline("x_weighted")
    assert count_detail(text, "x_weighted") == reason


def test_refused_characters_only_matter_for_x() -> None:
    assert refusal("Short\uffff", "chars") is None
    assert refusal("Short and sweet", "x_weighted") is None
    assert count_detail("Short and sweet", "x_weighted") is None


# ----- SMS: Twilio's segment calculator (a character is never split between two parts) ------------------------

SMS = [
    pytest.param("{" + "2" * 158, "GSM-7", 160, 1, id="escape_pair_within_one_segment"),
    pytest.param("{" + "2" * 159, "GSM-7", 161, 2, id="escape_pair_over_one_segment"),
    pytest.param("😜" + "2" * 68, "UCS-2", 70, 1, id="ucs2_with_emoji_in_one_segment"),
    pytest.param("😜" + "2" * 69, "UCS-2", 71, 2, id="ucs2_with_emoji_over_one_segment"),
    pytest.param("a" * 152 + "€" + "b" * 152, "GSM-7", 306, 3, id="euro_never_split_at_the_first_boundary"),
    pytest.param("a" * 306, "GSM-7", 306, 2, id="306_plain_septets_fill_two_parts"),
    pytest.param("a" * 152 + "[" + "b" * 152, "GSM-7", 306, 3, id="bracket_pair_moves_to_the_next_part"),
    pytest.param("a" * 153 + "€" + "b" * 151, "GSM-7", 306, 2, id="euro_right_after_a_boundary_fits"),
    pytest.param("€" * 153, "GSM-7", 306, 3, id="153_euro_signs_are_76_per_part"),
    pytest.param("a" * 66 + "😜" + "b" * 66, "UCS-2", 134, 3, id="surrogate_pair_never_split"),
    pytest.param("a" * 67 + "😜" + "b" * 65, "UCS-2", 134, 2, id="surrogate_pair_right_after_a_boundary"),
    pytest.param("a" * 59 + "👨\u200d👩\u200d👧" + "b" * 59, "UCS-2", 126, 2, id="zwj_family_kept_whole"),
    pytest.param("a" * 62 + "👨\u200d👩\u200d👧" + "b" * 62, "UCS-2", 132, 3, id="zwj_family_moves_whole"),
    pytest.param("你" * 134, "UCS-2", 134, 2, id="134_ucs2_fill_two_parts"),
    pytest.param("a" * 150 + "\r\n" + "b" * 150, "GSM-7", 302, 2, id="crlf_in_gsm7"),
]


@pytest.mark.parametrize(("text", "encoding", "length", "segments"), SMS)
def test_sms_segments_agree_with_twilios_calculator(text: str, encoding: str, length: int, segments: int) -> None:
    info = sms_length(text)
    assert (info.encoding, info.length, info.segments) == (encoding, length, segments)

"""The length counters: what one "word" or "character" is in each unit the app can count in."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capel_ui.counting import (
    RunningCount,
    count,
    count_en_words,
    count_lifebench,
    count_zh_chars,
    count_zh_words,
    counter_of,
    marker_unit,
)
from capel_ui.vocab import DEFAULT_UNIT, UNIT_SPECS, UNITS

NBSP = "\u00a0"


def case(text: str, expected: int, id: str):
    return pytest.param(text, expected, id=id)


# ----- en_words: what a word processor counts --------------------------------------------------------

EN_WORDS = [
    case("", 0, "empty_string_is_zero"),
    case("   \t\n ", 0, "whitespace_only_is_zero"),
    case("hello", 1, "single_word"),
    case("hello world", 2, "two_words"),
    case("  leading and trailing  ", 3, "leading_and_trailing_spaces_ignored"),
    case("one   two", 2, "runs_of_spaces_separate_once"),
    case("one\ttwo\nthree\r\nfour", 4, "tabs_and_newlines_separate_words"),
    case(f"non{NBSP}breaking", 2, "nbsp_separates_words"),
    case("a\u3000b", 2, "ideographic_space_separates_words"),
    case("well-known", 1, "hyphenated_word_is_one"),
    case("don't", 1, "ascii_apostrophe_contraction_is_one"),
    case("don’t", 1, "curly_apostrophe_contraction_is_one"),
    case("3.14", 1, "decimal_number_is_one"),
    case("1,000", 1, "number_with_thousands_separator_is_one"),
    case("U.S.A.", 1, "dotted_abbreviation_is_one"),
    case("e.g.", 1, "latin_abbreviation_is_one"),
    case("https://example.com/a-b", 1, "url_is_one"),
    case("café", 1, "accented_word_is_one"),
    case("naïve façade", 2, "accented_words"),
    case("snake_case", 1, "underscore_inside_word_is_one"),
    case("C++", 1, "word_with_symbols_is_one"),
    case("#1", 1, "hash_number_is_one"),
    case("Hello, world!", 2, "attached_punctuation_is_not_a_word"),
    case("—", 0, "lone_em_dash_is_not_a_word"),
    case("-", 0, "lone_hyphen_is_not_a_word"),
    case("*", 0, "lone_asterisk_is_not_a_word"),
    case("😀", 0, "lone_emoji_is_not_a_word"),
    case("_", 0, "lone_underscore_is_not_a_word"),
    case("... !!! ?", 0, "punctuation_runs_are_not_words"),
    case("hello ,", 1, "detached_comma_is_not_a_word"),
    case("yes — no", 2, "spaced_em_dash_is_not_a_word"),
    case("word—word", 1, "unspaced_em_dash_joins_one_word"),
    case("😀 smile", 1, "emoji_beside_word_not_counted"),
    case("Привет, мир!", 2, "cyrillic_words"),
    case("Καλημέρα κόσμε", 2, "greek_words"),
    case("٣ apples", 2, "arabic_indic_digit_is_a_word"),
    case("你好 世界", 2, "han_runs_count_as_space_separated_words"),
    case("e\u0301tude", 1, "combining_accent_stays_in_word"),
]


@pytest.mark.parametrize(("text", "expected"), EN_WORDS)
def test_en_words(text: str, expected: int) -> None:
    assert count(text, "en_words") == expected
    assert count_en_words(text) == expected


# ----- zh_chars: Han characters, plus one per Latin run ----------------------------------------------

ZH_CHARS = [
    case("", 0, "empty_string_is_zero"),
    case("我爱北京天安门", 7, "each_han_character_counts_one"),
    case("你好，世界！", 4, "chinese_punctuation_not_counted"),
    case("“你好”", 2, "chinese_quotes_not_counted"),
    case("，。！？“”、；：", 0, "punctuation_only_is_zero"),
    case("％＋＝@#*", 0, "symbols_not_counted"),
    case("   \t\n", 0, "whitespace_only_is_zero"),
    case("你 好", 2, "spaces_between_characters_not_counted"),
    case("你\n好", 2, "newline_between_characters_not_counted"),
    case("😀", 0, "emoji_not_counted"),
    case("AI", 1, "latin_run_counts_one"),
    case("AI技术", 3, "latin_run_then_han"),
    case("2024年", 2, "digit_run_then_han"),
    case("3.14", 1, "decimal_number_counts_one"),
    case("1,000", 1, "thousands_number_counts_one"),
    case("don't", 1, "contraction_counts_one"),
    case("GPT-4", 1, "hyphenated_model_name_counts_one"),
    case("Hello world", 2, "two_latin_words_count_two"),
    case("ＡＩ", 1, "fullwidth_latin_run_counts_one"),
    case("我用AI写了3.14页。", 7, "mixed_han_latin_number_punctuation"),
    case("\u3400", 1, "cjk_extension_a_character"),
    case("\U00020000", 1, "cjk_extension_b_character"),
    case("\U0002a700", 1, "cjk_extension_c_character"),
    case("\uf900", 1, "cjk_compatibility_ideograph"),
    case("\U0002f800", 1, "cjk_compatibility_supplement_ideograph"),
    case("\u9fff", 1, "last_base_block_character"),
    case("人々", 2, "iteration_mark_counts_one"),
    case("〇", 1, "ideographic_zero_counts_one"),
]


@pytest.mark.parametrize(("text", "expected"), ZH_CHARS)
def test_zh_chars(text: str, expected: int) -> None:
    assert count(text, "zh_chars") == expected
    assert count_zh_chars(text) == expected


# ----- zh_words: jieba segmentation, punctuation dropped ----------------------------------------------

ZH_WORDS = [
    case("", 0, "empty_string_is_zero"),
    case("我爱北京天安门", 4, "jieba_segments_into_four_words"),
    case("我爱北京天安门。", 4, "final_full_stop_not_a_word"),
    case("你好，世界！", 2, "punctuation_tokens_dropped"),
    case("，。！？", 0, "punctuation_only_is_zero"),
    case("我爱AI", 3, "latin_token_is_a_word"),
    case("   ", 0, "spaces_are_not_words"),
]


@pytest.mark.parametrize(("text", "expected"), ZH_WORDS)
def test_zh_words(text: str, expected: int) -> None:
    assert count(text, "zh_words") == expected
    assert count_zh_words(text) == expected


def test_zh_words_counts_fewer_than_characters_for_multi_character_words() -> None:
    text = "我爱北京天安门"
    assert count(text, "zh_words") < count(text, "zh_chars")


# ----- lifebench: the official regex, quirks included -------------------------------------------------

LIFEBENCH = [
    case("", 0, "empty_string_is_zero"),
    case("hello world", 2, "two_english_words"),
    case("hello \n\n  world", 2, "whitespace_collapsed"),
    case("well-known", 1, "hyphenated_word_is_one"),
    case("don't", 1, "ascii_apostrophe_contraction_is_one"),
    case("don’t", 2, "curly_apostrophe_splits_in_two"),
    case("3.14", 2, "decimal_point_splits_number"),
    case("U.S.A.", 3, "dotted_abbreviation_counts_each_letter"),
    case("我爱北京", 4, "each_base_block_han_counts_one"),
    case("你好，世界！", 4, "chinese_punctuation_not_counted"),
    case("AI技术", 2, "latin_glued_to_han_not_counted_only_han_counts"),
    case("2024年", 1, "digits_glued_to_han_not_counted"),
    case("AI 技术", 3, "spaced_latin_and_han_both_count"),
    case("\u3400", 0, "cjk_extension_a_not_counted"),
    case("\U00020000", 0, "cjk_extension_b_not_counted"),
    case("café", 0, "accented_word_has_no_ascii_word_boundary"),
    case("Привет", 0, "cyrillic_not_counted"),
    case("— * 😀", 0, "symbols_not_counted"),
]


@pytest.mark.parametrize(("text", "expected"), LIFEBENCH)
def test_lifebench(text: str, expected: int) -> None:
    assert count(text, "lifebench") == expected
    assert count_lifebench(text) == expected


# ----- the count() entry point ------------------------------------------------------------------------


def test_unknown_unit_raises_value_error_naming_the_accepted_units() -> None:
    with pytest.raises(ValueError, match="nope") as info:
        count("hello", "nope")  # type: ignore[arg-type]
    for unit in UNITS:
        assert unit in str(info.value)


@pytest.mark.parametrize("unit", UNITS)
def test_count_dispatches_to_the_unit_counter(unit: str) -> None:
    text = "我爱北京天安门, don't 3.14 well-known café"
    assert count(text, unit) == counter_of(unit)(text)  # type: ignore[arg-type]


@pytest.mark.parametrize(("lang", "unit"), [("en", "en_words"), ("zh", "zh_chars")], ids=["en", "zh"])
def test_a_marker_pays_for_one_unit_of_the_default_unit(lang: str, unit: str) -> None:
    assert marker_unit(lang) == unit  # type: ignore[arg-type]
    assert DEFAULT_UNIT[lang] == unit  # type: ignore[index]


@settings(max_examples=200, deadline=None)
@given(st.text(), st.sampled_from(UNITS))
def test_every_counter_is_total_and_non_negative(text: str, unit: str) -> None:
    n = count(text, unit)  # type: ignore[arg-type]
    assert isinstance(n, int)
    assert n >= 0


ADDING_UP = [unit for unit in UNITS if UNIT_SPECS[unit].adds_up]


@pytest.mark.parametrize("unit", ADDING_UP)
@settings(max_examples=150, deadline=None)
@given(st.text(), st.sampled_from([" ", "\n", "\t", "\u3000", NBSP]), st.text())
def test_a_unit_said_to_add_up_counts_a_text_cut_after_a_whitespace_as_its_two_parts(
    unit: str, a: str, space: str, b: str
) -> None:
    assert count(a + space + b, unit) == count(a + space, unit) + count(b, unit)  # type: ignore[arg-type]


STREAMS = [  # a text as a stream grows it, chunk by chunk
    pytest.param("The keeper climbed the stairs at dusk. " * 200, 7, id="english_sentences"),
    pytest.param("灯塔守护者在黄昏时爬上楼梯，看着大海。" * 150, 5, id="chinese_characters"),
    pytest.param("word " * 300 + "x" * 5000 + " tail " * 300, 97, id="a_huge_word_in_the_middle"),
    pytest.param("Mixed 中文 text, 3.14 and don't. " * 120, 11, id="mixed"),
]


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize(("text", "chunk"), STREAMS)
def test_a_running_count_is_the_count_of_the_text_so_far(unit: str, text: str, chunk: int) -> None:
    running = RunningCount(unit)  # type: ignore[arg-type]
    text = text if UNIT_SPECS[unit].adds_up else text[:400]  # counted whole each time: a short stream says it
    for end in [*range(chunk, len(text), chunk * 37), len(text)]:
        assert running(text[:end]) == count(text[:end], unit)  # type: ignore[arg-type]
    assert running("A new call. " * 3) == count("A new call. " * 3, unit)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_en_words_never_exceeds_whitespace_tokens(text: str) -> None:
    assert count(text, "en_words") <= len(text.split())

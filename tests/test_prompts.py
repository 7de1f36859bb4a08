"""Prompt builders: the length suffix each mode appends, and its self-consistency with the parser."""

from __future__ import annotations

import re

import pytest

from capel_ui.counting import count
from capel_ui.parser import check_output
from capel_ui.prompts import (
    DRAFT_CLOSE,
    DRAFT_OPEN,
    MAX_TARGET,
    MODES,
    build_messages,
    build_prompt,
    capel_suffix,
    limit_suffix,
    more_messages,
    suffix,
    validate_target,
)

PAPER_EXAMPLE = "<5>Hello,<4>world!<3>How's<2>everything?<1>Great.<0>"
HAN = re.compile(r"[\u4e00-\u9fff]")


# ----- English CAPEL suffix (§3.2) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "piece",
    [
        pytest.param("For each integer k from 37 down to 1", id="countdown_rule_with_target"),
        pytest.param("Print the marker <k>.", id="marker_rule"),
        pytest.param("one English token", id="one_token_per_marker"),
        pytest.param("No spaces inside this token.", id="no_spaces_in_token"),
        pytest.param("After the word paired with <1>, write <0> and stop generating.", id="stop_rule"),
        pytest.param("toward the 37-word total", id="markers_not_counted"),
        pytest.param("do not end with dozens of bare markers", id="no_bare_marker_tail"),
        pytest.param("Produce exactly 37 markers (<37> ... <1>) and exactly 37 words.", id="exactly_n_markers"),
        pytest.param("must decrease by 1: no skips or repeats", id="decrease_by_one"),
        pytest.param("Two markers may never appear back-to-back", id="no_back_to_back_markers"),
        pytest.param("No extra text is allowed after <0> (not even a newline).", id="nothing_after_end"),
        pytest.param("Correct example (N = 5)", id="example_heading"),
        pytest.param(PAPER_EXAMPLE, id="paper_example"),
        pytest.param("<5>Quick<4>demo<3>ends<0>", id="early_stop_example"),
        pytest.param("<5>Wrong<4>marker<3>again<2>here<1>now<0><0>", id="duplicate_end_example"),
        pytest.param("<7>Starts<6>well<5>then<4>stop.<3><2><1><0>", id="bare_tail_example"),
    ],
)
def test_english_suffix_has_every_part_of_the_paper_suffix(piece: str) -> None:
    assert piece in capel_suffix("en", 37)


def test_english_suffix_leaves_no_placeholder_unfilled() -> None:
    text = capel_suffix("en", 37)
    assert "{" not in text and "}" not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_code_aware_rule_appears_only_with_code(lang: str) -> None:
    marker = "trailing \\n" if lang == "en" else "一整行代码"
    assert marker not in capel_suffix(lang, 10)  # type: ignore[arg-type]
    assert marker in capel_suffix(lang, 10, code=True)  # type: ignore[arg-type]
    assert marker in suffix(lang, 10, "draft-capel", code=True)  # type: ignore[arg-type]


def test_english_code_rule_says_a_code_line_is_one_token() -> None:
    assert "a complete code line counts as one token" in capel_suffix("en", 10, code=True)


# ----- Chinese CAPEL suffix -----------------------------------------------------------------------------------


def test_chinese_suffix_is_written_in_chinese() -> None:
    text = capel_suffix("zh", 37)
    han = len(HAN.findall(text))
    latin = len(re.findall(r"[A-Za-z]", text))
    assert han > 200
    assert han > 10 * latin


def test_chinese_suffix_has_the_target_filled_in() -> None:
    text = capel_suffix("zh", 37)
    assert "从 37 递减到 1" in text
    assert "恰好输出 37 个标记（<37> … <1>）" in text
    assert "{" not in text and "}" not in text


def _examples(text: str, heading: str) -> list[str]:
    """The countdown lines printed under each `heading` line of a suffix."""
    lines = text.splitlines()
    return [lines[i + 1].strip() for i, line in enumerate(lines) if line.startswith(heading)]


def test_chinese_suffix_has_two_correct_examples() -> None:
    assert len(_examples(capel_suffix("zh", 9), "正确示例")) == 2


@pytest.mark.parametrize(("lang", "heading"), [("en", "Correct example"), ("zh", "正确示例")])
def test_correct_examples_in_the_suffix_parse_as_valid_and_exact(lang: str, heading: str) -> None:
    examples = _examples(capel_suffix(lang, 9), heading)  # type: ignore[arg-type]
    assert examples
    for example in examples:
        n = int(re.match(r"<(\d+)>", example).group(1))  # type: ignore[union-attr]
        result = check_output(example, n, lang)  # type: ignore[arg-type]
        assert result.errors == (), example
        assert result.verified, example
        assert count(result.text, "lifebench") == n


@pytest.mark.parametrize(
    ("lang", "example", "target", "error"),
    [
        pytest.param("en", "<5>Quick<4>demo<3>ends<0>", 5, "early_stop", id="en_early_stop"),
        pytest.param("en", "<5>Wrong<4>marker<3>again<2>here<1>now<0><0>", 5, "duplicate_end", id="en_two_ends"),
        pytest.param("en", "<7>Starts<6>well<5>then<4>stop.<3><2><1><0>", 7, "bare_marker", id="en_bare_tail"),
        pytest.param("zh", "<5>今<4>天<3>好<0>", 5, "early_stop", id="zh_early_stop"),
        pytest.param("zh", "<5>我<4>们<3>去<2>学<1>校<0><0>", 5, "duplicate_end", id="zh_two_ends"),
        pytest.param("zh", "<7>开<6>始<5>不<4>错<3><2><1><0>", 7, "bare_marker", id="zh_bare_tail"),
    ],
)
def test_error_examples_in_the_suffix_are_flagged_by_the_parser(
    lang: str, example: str, target: int, error: str
) -> None:
    assert example in capel_suffix(lang, 9)  # type: ignore[arg-type]
    result = check_output(example, target, lang)  # type: ignore[arg-type]
    assert {e.type for e in result.errors} == {error}


# ----- other modes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "Please answer the instruction in exactly 42 words."),
        ("zh", "请用正好42个字回答上述指令。"),
    ],
)
def test_baseline_is_the_plain_length_instruction(lang: str, expected: str) -> None:
    assert suffix(lang, 42, "baseline") == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_draft_capel_asks_for_a_draft_then_the_countdown(lang: str) -> None:
    text = suffix(lang, 12, "draft-capel")  # type: ignore[arg-type]
    assert DRAFT_OPEN == "<draft>" and DRAFT_CLOSE == "</draft>"
    assert "<draft>" in text and "</draft>" in text
    assert text.index("</draft>") < text.index("<12>")
    assert text.endswith(capel_suffix(lang, 12))  # type: ignore[arg-type]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_exact_countdown_mode_uses_the_capel_suffix(lang: str) -> None:
    assert suffix(lang, 8, "exact-countdown") == capel_suffix(lang, 8)  # type: ignore[arg-type]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_exact_mode_states_the_target_without_markers(lang: str) -> None:
    text = suffix(lang, 64, "exact")  # type: ignore[arg-type]
    assert "64" in text
    assert "<" not in text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_mode_mentions_the_target(mode: str, lang: str) -> None:
    assert "321" in suffix(lang, 321, mode)  # type: ignore[arg-type]


def test_unknown_mode_and_language_are_rejected() -> None:
    with pytest.raises(ValueError, match="mode"):
        suffix("en", 5, "nope")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="language"):
        suffix("fr", 5, "capel")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="language"):
        capel_suffix("fr", 5)  # type: ignore[arg-type]


# ----- messages ------------------------------------------------------------------------------------------------


def test_build_messages_gives_one_user_message_with_instruction_then_suffix() -> None:
    messages = build_messages("  Describe the sea.  ", "en", 20)
    assert len(messages) == 1
    (message,) = messages
    assert message["role"] == "user"
    assert message["content"] == "Describe the sea.\n\n" + capel_suffix("en", 20)
    assert message["content"] == build_prompt("Describe the sea.", "en", 20)


def test_build_messages_passes_mode_and_code_through() -> None:
    (message,) = build_messages("Write code.", "en", 30, "draft-capel", code=True)
    assert message["content"].endswith(suffix("en", 30, "draft-capel", code=True))


# ----- target validation ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        pytest.param(0, id="zero"),
        pytest.param(-1, id="negative"),
        pytest.param(MAX_TARGET + 1, id="above_max"),
        pytest.param(True, id="bool"),
        pytest.param(5.0, id="float"),
        pytest.param("5", id="string"),
    ],
)
def test_bad_targets_are_rejected_everywhere(target: object) -> None:
    with pytest.raises(ValueError, match="target"):
        validate_target(target)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="target"):
        build_messages("Hi", "en", target)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="target"):
        suffix("zh", target, "baseline")  # type: ignore[arg-type]


@pytest.mark.parametrize("target", [1, MAX_TARGET], ids=["one", "max"])
def test_boundary_targets_are_accepted(target: int) -> None:
    assert validate_target(target) == target
    assert f"<{target}>" in capel_suffix("en", target)


@pytest.mark.parametrize(
    ("unit", "noun"),
    [("zh_chars", "个字"), ("zh_words", "个词"), ("zh_all", "个字（标点符号也算）")],
    ids=["characters", "jieba_words", "all_characters"],
)
def test_a_chinese_prompt_names_the_unit_the_length_is_counted_in(unit: str, noun: str) -> None:
    assert limit_suffix("zh", unit, "exactly", 20, 20) == f"请用正好20{noun}回答上述指令。"


def test_the_request_for_more_content_holds_the_instruction_and_no_count_for_the_model_to_write_back() -> None:
    for lang in ("en", "zh"):
        (message,) = more_messages("Describe a traditional Italian pizza.", lang)
        assert message["content"].startswith("Describe a traditional Italian pizza.")
        assert not re.search(r"\d", message["content"])

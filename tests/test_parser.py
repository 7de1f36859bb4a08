"""The CAPEL marker parser: what it reports for each kind of mistake, the clean text, and streaming."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capel_ui.parser import MarkerParser, ParseResult, check_output
from capel_ui.verdict import Target
from capel_ui.vocab import ERROR_TYPES

PAPER_EXAMPLE = "<5>Hello,<4>world!<3>How's<2>everything?<1>Great.<0>"


def capel(*units: str) -> str:
    """A valid countdown over `units`: `<N>u1<N-1>u2 ... <1>uN<0>`."""
    n = len(units)
    return "".join(f"<{n - i}>{u}" for i, u in enumerate(units)) + "<0>"


def error_types(result: ParseResult) -> list[str]:
    return [e.type for e in result.errors]


def feed_in_chunks(raw: str, cuts: list[int], target: int, **kw: object) -> ParseResult:
    parser = MarkerParser(target, **kw)  # type: ignore[arg-type]
    prev = 0
    for cut in [*sorted(cuts), len(raw)]:
        parser.feed(raw[prev:cut])
        prev = cut
    return parser.close()


# ----- valid outputs ------------------------------------------------------------------------------------

VALID = [
    pytest.param(PAPER_EXAMPLE, 5, "en", "Hello, world! How's everything? Great.", id="paper_example"),
    pytest.param("<1>Hi.<0>", 1, "en", "Hi.", id="single_word"),
    pytest.param(capel("well-known", "don't", "3.14"), 3, "en", "well-known don't 3.14", id="word_processor_words"),
    pytest.param("<3> a <2>\tb\n<1>\nc<0>", 3, "en", "a b\n\nc", id="whitespace_between_marker_and_unit"),
    pytest.param("<3>a <2>b <1>c <0>", 3, "en", "a b c", id="space_before_each_marker"),
    pytest.param("<2>α<1>β<0>", 2, "en", "α β", id="greek_words"),
    pytest.param("<3>x<y<2>b<1>c<0>", 3, "en", "x<y b c", id="angle_bracket_without_number_is_text"),
    pytest.param("<2><b>bold</b><1>text<0>", 2, "en", "<b>bold</b> text", id="html_tag_inside_unit_is_text"),
    pytest.param("<5>今<4>天<3>天<2>气<1>好。<0>", 5, "zh", "今天天气好。", id="chinese_full_stop_attached"),
    pytest.param("<3>我，<2>爱<1>你。<0>", 3, "zh", "我，爱你。", id="chinese_comma_attached"),
    pytest.param("<4>“你<3>好，<2>世<1>界”<0>", 4, "zh", "“你好，世界”", id="chinese_quotes_attached"),
    pytest.param("<3>我<2>\n爱<1>你<0>", 3, "zh", "我\n爱你", id="chinese_newline_kept"),
]


@pytest.mark.parametrize(("raw", "target", "lang", "text"), VALID)
def test_valid_output_has_no_errors_and_exact_clean_text(raw: str, target: int, lang: str, text: str) -> None:
    result = check_output(raw, target, lang)  # type: ignore[arg-type]
    assert result.errors == ()
    assert result.valid and result.exact and result.verified
    assert result.text == text
    assert result.count == target
    assert result.countdown_end == 0
    assert result.markers == target + 1


def test_newlines_the_model_wrote_are_kept_in_the_clean_text() -> None:
    raw = "<4>Title:\n<3>first<2>line\n\n<1>end<0>"
    result = check_output(raw, 4)
    assert result.text == "Title:\nfirst line\n\nend"
    assert result.verified


def test_trailing_newline_after_end_marker_is_tolerated() -> None:
    assert check_output("<3>a<2>b<1>c<0>\n", 3).verified


def test_clean_text_is_counted_in_the_requested_unit() -> None:
    result = check_output(capel("3.14", "is", "pi"), 3, "en", "lifebench")
    assert result.unit == "lifebench"
    assert result.count == 4  # LIFEBench splits 3.14 in two
    assert result.valid and not result.exact


def test_clean_text_is_kept_whatever_the_errors() -> None:
    assert check_output("<9>a<2>b<2>c<0> tail", 1).text == "a b c"


# ----- one test per error type --------------------------------------------------------------------------

# (raw, target, the only error expected, the slice of raw it points at)
ERRORS = [
    pytest.param("Sure! <3>a<2>b<1>c<0>", 3, "preamble", "Sure!", id="preamble"),
    pytest.param("<4>a<3>b<2>c<1>d<0>", 3, "wrong_start", "<4>", id="wrong_start"),
    pytest.param("<3>a<1>b<0>", 3, "skip", "<1>", id="skip"),
    pytest.param("<5>a<4>b<2>c<1>d<0>", 5, "skip", "<2>", id="skip_in_the_middle"),
    pytest.param("<3>a<3>b<2>c<1>d<0>", 3, "repeat", "<3>", id="repeat"),
    pytest.param("<3>a<2>b<2>c<1>d<0>", 3, "repeat", "<2>", id="repeat_later"),
    pytest.param("<3>a<2><1>c<0>", 3, "bare_marker", "<2>", id="bare_marker"),
    pytest.param("<3>a<2>b<1><0>", 3, "bare_marker", "<1>", id="bare_marker_before_end"),
    pytest.param("<3>a<2>b c<1>d<0>", 3, "extra_units", "b c", id="extra_units"),
    pytest.param("<3>我们<2>去<1>吧<0>", 3, "extra_units", "我们", id="extra_units_two_han_characters"),
    pytest.param("<5>a<4>b<3>c<0>", 5, "early_stop", "<0>", id="early_stop_jump_to_end"),
    pytest.param("<3>a<2>b", 3, "early_stop", "<2>b", id="early_stop_output_ends"),
    pytest.param("<3>a<2>b<1>", 3, "early_stop", "<1>", id="early_stop_last_marker_bare"),
    pytest.param("<3>a<2>b<1>c", 3, "missing_end", "", id="missing_end"),
    pytest.param("<3>a<2>b<1>c<0> extra", 3, "trailing_text", "extra", id="trailing_text"),
    pytest.param("<3>a<2>b<1>c<0><0>", 3, "duplicate_end", "<0>", id="duplicate_end"),
]
ROOM_ERROR = ("<30>Bike<29>repair.<0>", "<29>")  # a character room countdown (test_char_room.py): 25 were left


@pytest.mark.parametrize(("raw", "target", "error", "where"), ERRORS)
def test_each_mistake_is_reported_once_at_the_right_place(raw: str, target: int, error: str, where: str) -> None:
    lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in raw) else "en"
    result = check_output(raw, target, lang)  # type: ignore[arg-type]
    assert error_types(result) == [error]
    (err,) = result.errors
    assert raw[err.start : err.end] == where
    assert err.message
    assert not result.valid and not result.verified


def test_a_miscounted_room_is_reported_at_its_marker() -> None:
    raw, where = ROOM_ERROR
    [error] = check_output(raw, Target.at_most(30), "en", "chars").errors
    assert (error.type, raw[error.start : error.end]) == ("wrong_room", where)


def test_every_error_type_is_covered_by_the_table() -> None:
    covered = {p.values[2] for p in ERRORS} | {"malformed_marker", "wrong_room"}
    assert covered == set(ERROR_TYPES)


def test_missing_end_points_at_the_end_of_the_output() -> None:
    raw = "<3>a<2>b<1>c"
    (err,) = check_output(raw, 3).errors
    assert err.start == err.end == len(raw)


def test_rising_marker_is_a_repeat() -> None:
    result = check_output("<3>a<2>b<3>c<2>d<1>e<0>", 3)
    assert "repeat" in error_types(result)


def test_early_stop_from_a_marker_above_one_is_not_called_a_skip() -> None:
    result = check_output("<5>a<4>b<3>c<0>", 5)
    assert error_types(result) == ["early_stop"]
    assert result.count == 3 and not result.exact


def test_duplicate_end_after_trailing_text_reports_both() -> None:
    result = check_output("<2>a<1>b<0>x<0>", 2)
    assert error_types(result) == ["trailing_text", "duplicate_end"]
    assert result.text == "a b"


def test_markers_only_tail_reports_each_bare_marker() -> None:
    raw = "<7>Starts<6>well<5>then<4>stop.<3><2><1><0>"
    result = check_output(raw, 7)
    assert error_types(result) == ["bare_marker"] * 3
    assert [raw[e.start : e.end] for e in result.errors] == ["<3>", "<2>", "<1>"]
    assert result.count == 4


def test_output_without_markers_keeps_its_text_and_reports_preamble_and_early_stop() -> None:
    raw = "  Just a plain answer.  "
    result = check_output(raw, 3)
    assert result.text == "Just a plain answer."
    assert result.count == 4
    assert error_types(result) == ["preamble", "early_stop"]
    assert result.countdown_end is None
    assert result.markers == 0


def test_empty_output_is_an_early_stop() -> None:
    result = check_output("", 3)
    assert error_types(result) == ["early_stop"]
    assert result.text == "" and result.count == 0


def test_preamble_text_is_not_counted() -> None:
    result = check_output("Here you go:\n<2>a<1>b<0>", 2)
    assert result.text == "a b"
    assert result.exact and not result.valid


# ----- malformed markers --------------------------------------------------------------------------------

VALID_13 = capel(*"abcdefghijklm")


@pytest.mark.parametrize(
    ("raw", "bad"),
    [
        pytest.param(VALID_13.replace("<12>", "<12"), "<12", id="missing_close_bracket"),
        pytest.param(VALID_13.replace("<12>", " 12>"), "12>", id="missing_open_bracket"),
        pytest.param(VALID_13.replace("<12>", "< 12 >"), "< 12 >", id="spaces_inside"),
        pytest.param(VALID_13.replace("<12>", "<1 2>"), "<1 2>", id="split_digits"),
    ],
)
def test_malformed_marker_is_reported_but_still_counts_down(raw: str, bad: str) -> None:
    result = check_output(raw, 13)
    assert error_types(result) == ["malformed_marker"]
    (err,) = result.errors
    assert raw[err.start : err.end] == bad
    assert str(12) in err.message
    assert result.text == " ".join("abcdefghijklm")
    assert result.exact


def test_malformed_marker_at_output_end_is_reported() -> None:
    raw = "<2>a<1>b<0"
    result = check_output(raw, 2)
    assert "malformed_marker" in error_types(result)
    assert raw[result.errors[0].start : result.errors[0].end] == "<0"


def test_digits_glued_to_a_word_before_close_bracket_are_text() -> None:
    result = check_output("<2>a<1>x12><0>", 2)
    assert result.errors == ()
    assert result.text == "a x12>"


# ----- code-aware rule ----------------------------------------------------------------------------------


def test_code_line_counts_as_one_unit_only_with_code_rule() -> None:
    raw = "<2>def f():\n<1>return 1\n<0>"
    assert check_output(raw, 2, code=True).verified
    plain = check_output(raw, 2)
    assert error_types(plain) == ["extra_units", "extra_units"]
    assert plain.count == 4


# ----- Draft→CAPEL --------------------------------------------------------------------------------------


def test_draft_is_reported_separately_and_not_counted() -> None:
    raw = "<draft>A free draft, quite long.</draft><3>a<2>b<1>c<0>"
    result = check_output(raw, 3, draft=True)
    assert result.verified
    assert result.draft == "A free draft, quite long."
    assert result.text == "a b c"
    assert result.count == 3
    assert result.draft_span == (0, raw.index("<3>"))


def test_markers_inside_the_draft_are_ignored() -> None:
    raw = "<draft>Plan: <9>x<7>y<0><0> done</draft>\n<2>a<1>b<0>"
    result = check_output(raw, 2, draft=True)
    assert result.errors == ()
    assert result.draft == "Plan: <9>x<7>y<0><0> done"
    assert result.markers == 3


def test_draft_close_tag_is_case_insensitive() -> None:
    result = check_output("<draft>d</DRAFT><1>a<0>", 1, draft=True)
    assert result.draft == "d" and result.verified


def test_draft_without_close_tag_is_read_as_the_answer() -> None:
    result = check_output("<draft>oops<2>a<1>b<0>", 2, draft=True)
    assert result.draft is None
    assert error_types(result) == ["preamble"]
    assert result.text == "a b"


def test_draft_mode_accepts_a_countdown_without_draft() -> None:
    result = check_output("<2>a<1>b<0>", 2, draft=True)
    assert result.verified and result.draft is None


def test_draft_tags_are_plain_text_without_draft_mode() -> None:
    result = check_output("<draft>x</draft><1>a<0>", 1)
    assert error_types(result) == ["preamble"]


# ----- live state while streaming -----------------------------------------------------------------------


def test_live_countdown_and_remaining_follow_the_stream() -> None:
    p = MarkerParser(3)
    assert p.countdown is None and p.remaining == 3
    p.feed("<3>")
    assert p.countdown == 3 and p.remaining == 3
    p.feed("Hel")
    assert p.remaining == 2
    p.feed("lo<2>world<1>")
    assert p.countdown == 1 and p.remaining == 1
    p.feed("again")
    assert p.remaining == 0
    p.feed("<0>")
    assert p.countdown == 0 and p.remaining == 0
    assert p.errors == []
    assert p.close().verified


def test_skip_is_reported_by_feed_before_close() -> None:
    p = MarkerParser(5)
    assert p.feed("<5>a<4>b") == []
    new = p.feed("<2>")
    assert [e.type for e in new] == ["skip"]
    assert [e.type for e in p.errors] == ["skip"]


def test_preamble_is_reported_when_the_first_marker_arrives() -> None:
    p = MarkerParser(2)
    assert p.feed("Sure, here: ") == []
    assert [e.type for e in p.feed("<2>")] == ["preamble"]


def test_marker_split_across_chunks_is_read_once_complete() -> None:
    p = MarkerParser(12)
    p.feed("<1")
    assert p.countdown is None
    p.feed("2")
    assert p.countdown is None
    assert p.feed(">") == []
    assert p.countdown == 12


def test_repeat_is_reported_as_soon_as_the_marker_closes() -> None:
    p = MarkerParser(3)
    p.feed("<3>a<3")
    assert p.errors == []
    assert [e.type for e in p.feed(">")] == ["repeat"]


def test_trailing_text_is_reported_by_feed_when_another_marker_follows() -> None:
    p = MarkerParser(1)
    p.feed("<1>a<0>oops")
    assert [e.type for e in p.feed("<0>")] == ["trailing_text", "duplicate_end"]


def test_live_in_draft_flag_and_no_countdown_inside_the_draft() -> None:
    p = MarkerParser(1, draft=True)
    p.feed("<draft>x<1>y</dr")
    assert p.in_draft and p.countdown is None and p.draft_span is None
    p.feed("aft><1>")
    assert not p.in_draft and p.countdown == 1
    assert p.draft_span == (0, len("<draft>x<1>y</draft>"))
    p.feed("a<0>")
    result = p.close()
    assert result.draft == "x<1>y" and result.verified


def test_feeding_after_close_is_refused() -> None:
    p = MarkerParser(1)
    p.feed("<1>a<0>")
    first = p.close()
    assert p.close() is first
    with pytest.raises(RuntimeError):
        p.feed("more")


def test_one_character_at_a_time_gives_the_same_result_as_whole() -> None:
    raw = "Intro <3>a < b<2>x 12><1 1>y<0> tail<0>"
    whole = check_output(raw, 3)
    assert feed_in_chunks(raw, list(range(1, len(raw))), 3) == whole


# ----- chunking property --------------------------------------------------------------------------------

WORDS = ["a", "Hello,", "world!", "don't", "3.14", "我", "爱", "你。", "x1", "well-known", "\n", "  "]
JUNK = st.sampled_from(
    [
        "<",
        ">",
        "<<",
        ">>",
        " ",
        "\n",
        "\t",
        "<0>",
        "<1>",
        "<12",
        "12>",
        " 12>",
        "< 12 >",
        "<1 2>",
        "<draft>",
        "</draft>",
        "</dr",
        "aft>",
        "<DRAFT>",
        "</DRAFT>",
        "<b>",
        "a < b",
        "9",
        "1234567>",
        " 12345678>",
        "<" + "1" * 45 + ">",
        "<" + " " * 45 + ">",
        "<x",
        "，",
        "好",
        "junk",
    ]
)


@st.composite
def capel_like(draw: st.DrawFn) -> tuple[str, int]:
    target = draw(st.integers(1, 12))
    units = draw(st.lists(st.sampled_from(WORDS), min_size=target, max_size=target))
    pieces = []
    for i, u in enumerate(units):
        value = target - i
        digits = str(value)
        if draw(st.integers(0, 9)) == 0:  # split the digits: `<1 2>`, `< 7>`
            digits = digits[0] + " " + digits[1:] if len(digits) > 1 else " " + digits
        pieces.append(f"<{digits}>")
        pieces.append(u)
    if draw(st.integers(0, 5)):
        pieces.append("<0>")
    if draw(st.booleans()):
        pieces.insert(0, "<draft>" + draw(st.sampled_from(["", "plan <3>x", "d"])) + "</draft>")
    n_mut = draw(st.integers(0, 6))
    for _ in range(n_mut):
        at = draw(st.integers(0, len(pieces)))
        pieces.insert(at, draw(JUNK | st.text(max_size=5)))
    if pieces and draw(st.integers(0, 4)) == 0:
        del pieces[draw(st.integers(0, len(pieces) - 1))]
    return "".join(pieces), target


@settings(max_examples=300, deadline=None)
@given(
    capel_like(),
    st.lists(st.integers(0, 400), max_size=20),
    st.sampled_from(["en", "zh"]),
    st.booleans(),
    st.booleans(),
)
def test_chunking_never_changes_the_result(
    case: tuple[str, int], cuts: list[int], lang: str, draft: bool, code: bool
) -> None:
    raw, target = case
    kw = {"lang": lang, "draft": draft, "code": code}
    whole = check_output(raw, target, **kw)  # type: ignore[arg-type]
    cuts = [c for c in cuts if c <= len(raw)]
    assert feed_in_chunks(raw, cuts, target, **kw) == whole
    assert feed_in_chunks(raw, list(range(1, len(raw))), target, **kw) == whole
    for err in whole.errors:
        assert 0 <= err.start <= err.end <= len(raw)


@settings(max_examples=100, deadline=None)
@given(capel_like(), st.sampled_from(["en", "zh"]))
def test_errors_reported_while_streaming_are_in_the_final_result(case: tuple[str, int], lang: str) -> None:
    raw, target = case
    p = MarkerParser(target, lang)  # type: ignore[arg-type]
    seen = []
    for ch in raw:
        seen.extend(p.feed(ch))
    result = p.close()
    assert set(seen) <= set(result.errors)


@settings(max_examples=150, deadline=None)
@given(capel_like(), st.sampled_from(["en", "zh"]), st.booleans())
def test_streamed_clean_text_only_grows_into_the_final_text(case: tuple[str, int], lang: str, draft: bool) -> None:
    raw, target = case
    p = MarkerParser(target, lang, draft=draft)  # type: ignore[arg-type]
    shown = []
    for ch in raw:
        p.feed(ch)
        shown.append(p.text_so_far())
    final = p.close().text
    for before, after in pairwise(shown):
        assert after.startswith(before)
    assert final.startswith(shown[-1] if shown else "")


def test_text_so_far_streams_the_finished_units() -> None:
    p = MarkerParser(3)
    p.feed("<3>Hello,<2>wor")
    assert p.text_so_far() == "Hello,"
    p.feed("ld!\n<1>Bye")
    assert p.text_so_far() == "Hello, world!"
    p.feed("<0>")
    assert p.text_so_far() == "Hello, world!\nBye"
    assert p.close().text == "Hello, world!\nBye"


EN_WORD = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9'.,-]{0,8}[!?.,;:]?", fullmatch=True)
ZH_UNIT = st.from_regex(r"[“]?[\u4e00-\u9fff][，。！？”]?", fullmatch=True)


@settings(max_examples=100, deadline=None)
@given(st.lists(EN_WORD, min_size=1, max_size=40))
def test_any_english_countdown_of_single_words_is_verified(words: list[str]) -> None:
    result = check_output(capel(*words), len(words), "en")
    assert result.verified
    assert result.text == " ".join(words)


@settings(max_examples=100, deadline=None)
@given(st.lists(ZH_UNIT, min_size=1, max_size=40))
def test_any_chinese_countdown_of_single_characters_is_verified(chars: list[str]) -> None:
    result = check_output(capel(*chars), len(chars), "zh")
    assert result.verified
    assert result.text == "".join(chars)


# ----- clean text details ---------------------------------------------------------------------------------------


def test_chinese_keeps_two_latin_units_apart_so_the_text_counts_what_the_markers_paid_for() -> None:
    result = check_output("<4>我<3>爱<2>New<1>York<0>", 4, "zh")
    assert (result.text, result.count) == ("我爱New York", 4)


def test_chinese_joins_han_and_latin_units_without_spaces() -> None:
    assert check_output("<3>我<2>爱<1>AI。<0>", 3, "zh").text == "我爱AI。"


def test_code_aware_mode_keeps_indentation_and_inner_spacing_of_code_lines() -> None:
    raw = "<3>def f():\n<2>    x  =  1\n<1>    return x\n<0>"
    assert check_output(raw, 3, "en", code=True).text == "def f():\n    x  =  1\n    return x"


def test_code_aware_mode_counts_a_code_line_as_one_unit() -> None:
    raw = "<3>def f():\n<2>    x  =  1\n<1>    return x\n<0>"
    result = check_output(raw, 3, "en", code=True)
    assert (result.count, result.valid) == (3, True)


def test_prose_collapses_runs_of_spaces_inside_a_unit() -> None:
    assert check_output("<3>Hello<2>  big <1>world<0>", 3).text == "Hello big world"

"""Quality checks a writer sees as warnings: non-words, glued words, a dangling ending, fluency, the score."""

from __future__ import annotations

import math

import pytest

from capel_ui.quality import (
    QualityWarning,
    dangling_end,
    fluency,
    glued,
    nonword_rate,
    nonwords,
    offline_score,
    warnings,
    words,
)


@pytest.mark.parametrize(
    ("text", "own", "expected"),
    [
        ("The rich flavors of traditional dough!", "", []),
        ("…rich flavors of traditionaldough!", "", ["traditionaldough"]),
        ("It promotes a positiveMindset.", "", ["positiveMindset"]),
        ("The Whaler'sRestOurM.", "", ["Whaler'sRestOurM"]),
        ("Mozzarella di bulbele and Parmiglie.", "", ["bulbele", "Parmiglie"]),
        ("Welcome to Zyxco's new café.", "Write for Zyxco", []),  # the writer's own name, accents, possessive
        ("Open 24/7 since 1999, well-known.", "", []),
        ("“Curly quotes” don’t hide words.", "", []),
        ("", "", []),
    ],
)
def test_nonwords_are_the_words_wordfreq_never_saw(text: str, own: str, expected: list[str]) -> None:
    assert nonwords(text, "en", own) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("by reducing thesigns.", ["thesigns"]),
        ("the reminds ofthe.", ["ofthe"]),  # a web typo wordfreq knows is still glued
        ("into another theater", []),
        ("a positiveMindset", ["positiveMindset"]),
    ],
)
def test_glued_words_are_flagged_even_when_wordfreq_knows_them(text: str, expected: list[str]) -> None:
    assert glued(text) == expected


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("The challenge is the.", "en", "the"),
        ("Stories of pride and", "en", "and"),
        ("A walk by the sea.", "en", None),
        ("Let me do it.", "en", None),
        ("", "en", None),
        ("我们喜欢海边的。", "zh", "的"),
        ("我们喜欢海边。", "zh", None),
        ("海边的 Whaler's Rest of", "zh", "of"),
    ],
)
def test_a_dangling_ending_is_a_function_word_last(text: str, lang: str, expected: str | None) -> None:
    assert dangling_end(text, lang) == expected  # type: ignore[arg-type]


def test_chinese_text_is_checked_character_by_character() -> None:
    assert words("灯塔 AI", "zh") == ["灯", "塔", "AI"]
    assert nonwords("灯塔很美", "zh") == []
    assert nonword_rate("", "zh") == 0.0


def test_warnings_list_each_problem_once_in_reading_order_with_a_message() -> None:
    found = warnings("A thesigns and thesigns with bulbele and", "en")
    assert found == [
        QualityWarning("glued", "thesigns"),
        QualityWarning("nonword", "bulbele"),
        QualityWarning("dangling", "and"),
    ]
    assert [w.message for w in found] == [
        "“thesigns” looks like two words glued together",
        "“bulbele” is not a known word",
        "the text ends on “and”, mid-sentence",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the the the the best", ["the"]),
        ("Girls, Girls, girls and you? you? you?", ["Girls", "you"]),
        ("very, very good", []),
        ("好好好", ["好"]),
    ],
)
def test_a_word_three_times_in_a_row_is_a_loop(text: str, expected: list[str]) -> None:
    assert [w.word for w in warnings(text, "zh" if "好" in text else "en") if w.kind == "repeat"] == expected


@pytest.mark.parametrize(
    ("logprobs", "expected"),
    [([], None), (None, None), ([0.0, 0.0], 1.0), ([math.log(0.5)] * 3, 0.5), ([math.log(0.25), 0.0], 0.5)],
)
def test_fluency_is_the_geometric_mean_token_probability(logprobs, expected) -> None:
    got = fluency(logprobs)
    assert got == expected if expected is None else got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("flu", "found", "n", "expected"),
    [
        (1.0, [], 10, 10.0),
        (0.25, [], 10, 5.0),
        (None, [], 10, 5.0),  # no logprobs from the server: the middle of the scale
        (0.25, [QualityWarning("nonword", "x")], 10, 3.0),
        (0.25, [QualityWarning("dangling", "the")], 10, 3.0),
        (0.25, [QualityWarning("repeat", "the"), QualityWarning("repeat", "a")], 10, 3.0),  # once per kind
        (0.01, [QualityWarning("glued", "x")] * 5, 5, 0.0),  # never below 0
    ],
)
def test_offline_score_is_fluency_minus_bad_words_and_a_dangling_end(flu, found, n, expected) -> None:
    assert offline_score(flu, found, n) == expected


def test_history_lists_the_score_and_show_prints_score_and_warnings(tmp_path) -> None:
    from capel_ui.history import history_table, show_run
    from capel_ui.storage import create_run, get_engine, get_run, update_run

    engine = get_engine(f"sqlite:///{tmp_path / 'h.db'}")
    fields = {"origin": "cli", "model": "m", "backend": "compatible", "mode": "exact", "lang": "en"}
    run_id = create_run(engine, **fields, unit="en_words", target=4, instruction="Describe Zyxco")
    update_run(engine, run_id, status="complete", text="Zyxco makes thesigns and", count=4, score=3.25, fluency=0.4)
    run = get_run(engine, run_id)
    assert "score" in history_table([run]).splitlines()[0] and "3.25" in history_table([run])
    shown = show_run(run)
    assert "score 3.25 · wording flows 40%" in shown
    assert "warning: “thesigns” looks like two words glued together" in shown
    assert "warning: the text ends on “and”, mid-sentence" in shown
    assert "Zyxco" not in "".join(line for line in shown.splitlines() if line.startswith("warning"))

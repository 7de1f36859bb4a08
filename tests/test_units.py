"""A counting unit is declared once: its spec in vocab.UNIT_SPECS, which names its counter (a function of
counting.py) and its prompt noun. A toy unit added to that record and its counter alone is offered, labelled,
counted and guaranteed (or not) everywhere."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capel_ui import counting, vocab
from capel_ui.backends import Capabilities
from capel_ui.counting import count
from capel_ui.grammar import supports, target_grammar
from capel_ui.parser import check_output
from capel_ui.request import Request, validate_request
from capel_ui.service import modes_for
from capel_ui.verdict import live_state
from capel_ui.vocab import (
    MARKERS_UNITS_ONLY,
    UNIT_SPECS,
    UnitSpec,
    grammar_units_text,
    unit_label,
    units_for,
    units_phrase,
    why_unavailable,
)

LLAMA, NO_GRAMMAR = (
    Capabilities(grammar_field="grammar"),
    Capabilities(),
)  # a model that takes a grammar, one that does not


def test_every_unit_has_exactly_one_counter_and_each_language_one_own_unit() -> None:
    for unit, spec in UNIT_SPECS.items():
        assert callable(counting.counter_of(unit)) and spec.counter.startswith("count_")
        assert all(spec.noun.get(lang) for lang in spec.langs)  # a prompt names every unit in its own words
    for lang in vocab.LANGS:
        [own] = [u for u, s in UNIT_SPECS.items() if lang in s.default_for]
        assert units_for(lang)[0] == own == vocab.DEFAULT_UNIT[lang]


def _vowels(text: str) -> int:
    return sum(c in "aeiou" for c in text)


def _hyphens(text: str) -> int:
    return text.count("-")


TOYS = [
    # name, spec, counter, text, its count, which grammar guarantees it in English
    (
        "vowels",
        UnitSpec("vowels", ("en",), grammar={"en": "chars"}, counter="count_vowels"),
        _vowels,
        "banana split",
        4,
        "chars",
    ),
    ("hyphens", UnitSpec("hyphen-words", ("en",), counter="count_hyphens"), _hyphens, "well-known x-ray", 2, None),
]


@pytest.mark.parametrize(("name", "spec", "counter", "text", "n", "kind"), TOYS, ids=[t[0] for t in TOYS])
def test_a_toy_unit_touches_only_its_spec_and_its_counter(monkeypatch, name, spec, counter, text, n, kind) -> None:
    monkeypatch.setitem(UNIT_SPECS, name, spec)
    monkeypatch.setattr(counting, spec.counter, counter, raising=False)
    # offered and labelled
    assert name in units_for("en") and name not in units_for("zh")
    assert unit_label(name) == spec.label
    assert live_state(1, 3, name) == f"2 of 3 {spec.label} left"
    # counted, by the one count() and by the parser's final check
    assert count(text, name) == n
    assert check_output("<2>well-known <1>banana<0>", 2, "en", name).count == count("well-known banana", name)
    # never counted by markers; guaranteed by its grammar, or said not to be
    assert why_unavailable("capel", False, "en", name) == MARKERS_UNITS_ONLY
    assert supports("en", name) is (kind is not None)
    assert ("exact" in modes_for(LLAMA, "en", name).modes) is (kind is not None)
    assert (name in grammar_units_text()) is (kind is not None)
    request = Request("Write about the sea.", 20, "en", "exact", name)
    if kind is None:
        with pytest.raises(ValueError, match=f"guarantees .*, not {name}"):
            validate_request(request)
        assert why_unavailable("exact", True, "en", name) == f"no grammar can promise a count in {spec.label}"
    else:
        validate_request(request)
        assert target_grammar("en", name, 1, 20) == target_grammar("en", "chars", 1, 20)


# ----- long texts: every counter in linear time, with the same count -----------------------------------------

LONG = [
    pytest.param("x_weighted", "Visit https://example.com/a.b today 🎉 ok. 東京 ", id="x_weighted"),
    pytest.param("x_weighted", "plain words and more words ", id="x_weighted_ascii"),
    pytest.param("sms", "Price: 5€ [sale] {today} ", id="sms_gsm7"),
    pytest.param("sms", "Hello 世界, ok ", id="sms_ucs2"),
    pytest.param("zh_words", "我爱北京天安门，今天天气很好。 ", id="zh_words"),
]


@pytest.mark.parametrize(("unit", "phrase"), LONG)
def test_a_long_text_counted_in_pieces_counts_as_the_whole(unit: str, phrase: str) -> None:
    text = phrase * (3 * counting.PIECE // len(phrase) + 1)
    assert len(list(counting.pieces(text))) > 3
    assert count(text, unit) == _whole(text, unit)


def _whole(text: str, unit: str) -> int:
    """The library's own count of the whole text at once (what the counters did before counting in pieces)."""
    if unit == "x_weighted":
        from twitter_text import parse_tweet

        return parse_tweet(text).weightedLength
    if unit == "sms":
        try:
            return len(text.encode("gsm03.38"))
        except UnicodeEncodeError:
            return len(text.encode("utf-16-le")) // 2
    return sum(1 for tok in counting._jieba().lcut(text) if counting._ALNUM.search(tok))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii"), max_size=80) | st.text(max_size=80))
def test_x_weighted_counts_as_twitter_text_does(text: str) -> None:
    from twitter_text import parse_tweet

    assert count(text, "x_weighted") == parse_tweet(text).weightedLength


def test_pieces_cover_the_text_after_whitespace_and_never_exceed_their_size() -> None:
    for text in ["", "abc", "a b " * 700, "x" * 2500, "ab\ncd " * 400 + "z" * 3000]:
        parts = list(counting.pieces(text))
        assert "".join(parts) == text
        assert all(0 < len(p) <= counting.PIECE for p in parts)
        assert all(p[-1].isspace() for p in parts[:-1] if any(c.isspace() for c in p))


@pytest.mark.parametrize(
    ("n", "unit", "expected"),
    [
        (1, "en_words", "1 English word"),
        (12, "en_words", "12 English words"),
        (1, "chars", "1 character"),
        (0, "chars", "0 characters"),
        (1, "zh_all", "1 字 (all characters)"),
        (1, "sms", "1 SMS character"),
    ],
)
def test_a_count_of_one_is_said_in_the_singular(n: int, unit: str, expected: str) -> None:
    assert units_phrase(n, unit) == expected


def test_a_writers_unit_pickers_leave_out_the_benchmarks_own_counter() -> None:
    assert "lifebench" not in units_for("en") and "lifebench" not in units_for("zh")
    assert "lifebench" in units_for("en", expert=True)

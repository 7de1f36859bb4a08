"""A counting unit is declared once: its spec in vocab.UNIT_SPECS and its counter in counting.COUNTERS. A toy
unit added to those two tables alone is offered, labelled, counted and guaranteed (or not) everywhere."""

from __future__ import annotations

import pytest

from capel_ui import counting, vocab
from capel_ui.counting import count
from capel_ui.generation import Request, validate_request
from capel_ui.grammar import supports, target_grammar
from capel_ui.parser import check_output
from capel_ui.verdict import live_state
from capel_ui.vocab import (
    MARKERS_EXACT_ONLY,
    UNIT_SPECS,
    UnitSpec,
    available_modes,
    grammar_units_text,
    unit_label,
    units_for,
    why_unavailable,
)


def test_every_unit_has_exactly_one_counter_and_each_language_one_own_unit() -> None:
    assert set(counting.COUNTERS) == set(UNIT_SPECS)
    for lang in vocab.LANGS:
        [own] = [u for u, s in UNIT_SPECS.items() if lang in s.default_for]
        assert units_for(lang)[0] == own == vocab.DEFAULT_UNIT[lang]


def _vowels(text: str) -> int:
    return sum(c in "aeiou" for c in text)


def _hyphens(text: str) -> int:
    return text.count("-")


TOYS = [
    # name, spec, counter, text, its count, which grammar guarantees it in English
    ("vowels", UnitSpec("vowels", ("en",), grammar={"en": "chars"}), _vowels, "banana split", 4, "chars"),
    ("hyphens", UnitSpec("hyphen-words", ("en",)), _hyphens, "well-known x-ray", 2, None),
]


@pytest.mark.parametrize(("name", "spec", "counter", "text", "n", "kind"), TOYS, ids=[t[0] for t in TOYS])
def test_a_toy_unit_touches_only_its_spec_and_its_counter(monkeypatch, name, spec, counter, text, n, kind) -> None:
    monkeypatch.setitem(UNIT_SPECS, name, spec)
    monkeypatch.setitem(counting.COUNTERS, name, counter)
    # offered and labelled
    assert name in units_for("en") and name not in units_for("zh")
    assert unit_label(name) == spec.label
    assert live_state(1, 3, name) == f"2 of 3 {spec.label} left"
    # counted, by the one count() and by the parser's final check
    assert count(text, name) == n
    assert check_output("<2>well-known <1>banana<0>", 2, "en", name).count == count("well-known banana", name)
    # never counted by markers; guaranteed by its grammar, or said not to be
    assert why_unavailable("capel", False, "en", name) == MARKERS_EXACT_ONLY
    assert supports("en", name) is (kind is not None)
    assert ("exact" in available_modes(True, "en", name)) is (kind is not None)
    assert (name in grammar_units_text()) is (kind is not None)
    request = Request("Write about the sea.", 20, "en", "exact", name)
    if kind is None:
        with pytest.raises(ValueError, match=f"guarantees .*, not {name}"):
            validate_request(request)
        assert why_unavailable("exact", True, "en", name) == f"no grammar can promise a count in {spec.label}"
    else:
        validate_request(request)
        assert target_grammar("en", name, 1, 20) == target_grammar("en", "chars", 1, 20)

"""The quality rules table: every rule flags the texts it was written for and leaves the writer's texts alone, and
what a warning says, costs and makes of a text comes from the table."""

from __future__ import annotations

import pytest

from capel_ui.quality import (
    ALL_JUNK,
    JUNK_KINDS,
    KINDS,
    RULES,
    Context,
    QualityWarning,
    Rule,
    explain,
    junk,
    notes,
    offline_score,
    rules_markdown,
    warnings,
)


def found_in(c: Context) -> list[QualityWarning]:
    return warnings(c.text, c.lang, c.own_text, language_note=c.language_note)


def cases(flagged: bool) -> list[pytest.ParameterSet]:
    return [pytest.param(rule, c, id=f"{rule.name}: {c.text[:40]}") for rule in RULES for c in rule.examples(flagged)]


@pytest.mark.parametrize(("rule", "example"), cases(True))
def test_a_rule_flags_the_texts_it_was_written_for(rule: Rule, example: Context) -> None:
    assert rule.detect(example), "the rule itself finds nothing"
    assert rule.kind.name in {w.kind for w in found_in(example)}


@pytest.mark.parametrize(("rule", "example"), cases(False))
def test_a_rule_leaves_the_writers_texts_alone(rule: Rule, example: Context) -> None:
    assert rule.kind.name not in {w.kind for w in found_in(example)}


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_every_rule_has_examples_both_ways(rule: Rule) -> None:
    assert rule.flags, f"{rule.name} has no text it must flag"
    assert rule.passes, f"{rule.name} has no writer's text it must leave alone"


def test_rules_are_named_once_and_warn_of_known_kinds() -> None:
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    assert {r.kind for r in RULES} <= set(KINDS)


def test_kinds_named_alike_are_one_problem_with_one_price() -> None:
    for kind in KINDS:
        alike = [k for k in KINDS if k.wording == kind.wording]
        assert {(k.penalty, k.word_penalty, k.junk, k.circle) for k in alike} == {
            (kind.penalty, kind.word_penalty, kind.junk, kind.circle)
        }


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_what_a_kind_says_costs_and_makes_of_a_text_comes_from_its_record(kind) -> None:
    found = [QualityWarning(kind.name, "x")]
    assert found[0].message == kind.message.format(word="x")
    assert explain(None, found).startswith(kind.wording.format(n=1, s=""))
    assert offline_score(None, found, 10) == round(5.0 - kind.penalty - kind.word_penalty / 10, 2)
    assert junk(found) is kind.junk is (kind.name in JUNK_KINDS)
    assert not kind.junk or kind.every_variant in ALL_JUNK  # each junk kind named when every variant is junk


def test_the_language_note_is_the_first_warning_and_says_itself() -> None:
    note = "This model does not write Chinese."
    found = warnings("我们喜欢海边的书店 thesigns。", "zh", language_note=note)
    assert found[0] == QualityWarning("language", note) and found[0].message == note
    assert found[1:] == warnings("我们喜欢海边的书店 thesigns。", "zh")
    assert junk(found) and explain(0.9, found).startswith("not real text in this language")


def test_warnings_come_in_the_tables_order_and_words_in_reading_order() -> None:
    found = warnings("Here's a possible X post: bulbele and thesigns, Dear [Name], come to the")
    assert [(w.kind, w.word) for w in found] == [
        ("meta", "Here's a possible X post:"),
        ("nonword", "bulbele"),
        ("glued", "thesigns"),
        ("blank", "[Name]"),
        ("dangling", "the"),
    ]


def test_a_text_that_talks_about_itself_twice_is_told_once_by_the_first_rule() -> None:
    found = warnings("Here's a possible X post: In just 80 words, our pub is the best. Let me know if you like it.")
    assert [w.word for w in found if w.kind == "meta"] == ["Here's a possible X post:"]


def test_circles_found_as_a_word_and_a_phrase_are_one_line_and_one_penalty() -> None:
    found = warnings("Rest rest rest, the whaler rest, the whaler rest, the whaler rest.")
    assert {w.kind for w in found} == {"repeat", "loop"}
    assert len(notes(found)) == 1
    assert offline_score(None, found, 10) == 1.0


def test_the_rules_table_reads_as_markdown_one_row_per_rule() -> None:
    table = rules_markdown().splitlines()
    assert table[0].startswith("| Kind | What it flags |") and len(table) == len(RULES) + 2
    for row, rule in zip(table[2:], RULES, strict=True):
        cells = row.replace("\\|", "").split("|")[1:-1]
        assert len(cells) == 6 and cells[0].strip() == rule.kind.name
    assert "“Plan B.”" in rules_markdown()
    assert "\\[Guest's Name\\]" in rules_markdown()  # a bracket shown as itself, not a link

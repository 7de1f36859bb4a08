"""Benchmark suites load the real public data, fill its placeholders and pick temperatures as documented."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from capel_ui.bench.suites import (
    LIFEBENCH_FILE,
    LIFEBENCH_LENGTHS,
    MTBENCH_FILE,
    MTBENCH_TEMPERATURES,
    RTG_TOPICS,
    load_suite,
    parse_custom,
    parse_lengths,
)
from capel_ui.vocab import PROJECT_ROOT

# ----- the data ships with the project ----------------------------------------------------------------------------


def test_suite_data_lives_inside_the_project_with_its_licence_and_source_beside_it() -> None:
    """A clone of the project alone runs every suite: the files, their licences and their README are in it."""
    data = PROJECT_ROOT / "capel_ui" / "bench" / "data"
    assert LIFEBENCH_FILE.is_relative_to(data) and MTBENCH_FILE.is_relative_to(data)
    assert (LIFEBENCH_FILE.parent / "LIFEBench_LICENSE_MIT.txt").is_file()
    assert (MTBENCH_FILE.parent / "FastChat_LICENSE_Apache-2.0.txt").is_file()
    readme = (data / "README.md").read_text(encoding="utf-8")
    for name in ("data_lite.jsonl", "mt_bench_question.jsonl", "judge_prompts.jsonl", "e38620e", "0e6d3e4"):
        assert name in readme


def test_the_single_answer_judge_prompt_ships_with_the_mtbench_data() -> None:
    rows = [json.loads(line) for line in (MTBENCH_FILE.parent / "judge_prompts.jsonl").read_text().splitlines()]
    single = next(r for r in rows if r["name"] == "single-v1")
    assert "[[rating]]" in single["system_prompt"] + single["prompt_template"]


def test_no_code_or_test_reads_data_from_outside_the_project() -> None:
    name = "sha" + "red"  # spelled in parts so this file does not match itself
    spellings = (f"../{name}", f'"{name}" / "data"', f"{name}/data")
    offenders = [
        str(path.relative_to(PROJECT_ROOT))
        for folder in ("capel_ui", "tests", "benchmarks")
        for path in (PROJECT_ROOT / folder).rglob("*.py")
        if any(s in path.read_text(encoding="utf-8") for s in spellings)
    ]
    assert offenders == []


# ----- lifebench ------------------------------------------------------------------------------------------------


def test_lifebench_has_its_60_tasks_at_the_default_four_lengths() -> None:
    suite = load_suite("lifebench")
    assert suite.sources == 60
    assert suite.lengths == (16, 32, 64, 128)
    assert len(suite.items) == 60 * 4
    assert Counter(i.lang for i in suite.items if i.target == 16) == {"en": 30, "zh": 30}


def test_lifebench_placeholders_are_filled_in_each_language() -> None:
    suite = load_suite("lifebench", lengths=[64])
    for item in suite.items:
        assert "{word_count" not in item.instruction
        if item.lang == "en":
            assert "equal to 64" in item.instruction
        else:
            assert "等于 64" in item.instruction


def test_lifebench_keeps_other_braces_in_articles_untouched() -> None:
    # Task 325 is an article that itself contains `{array}` and similar: only the two placeholders are filled.
    item = next(i for i in load_suite("lifebench", lengths=[16]).items if i.item_id == "325")
    assert "{array}" in item.instruction
    assert "equal to 16 words" in item.instruction


def test_lifebench_is_scored_with_lifebench_counter_in_both_languages() -> None:
    suite = load_suite("lifebench", lengths=[16])
    assert suite.unit_for("en") == "lifebench"
    assert suite.unit_for("zh") == "lifebench"


def test_lifebench_lengths_must_be_its_own_targets() -> None:
    with pytest.raises(ValueError, match="16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192"):
        load_suite("lifebench", lengths=[50])
    assert load_suite("lifebench", lengths=[8192], limit=1).lengths == (8192,)
    assert LIFEBENCH_LENGTHS[-1] == 8192


def test_limit_takes_the_first_prompts_and_crosses_them_with_every_length() -> None:
    suite = load_suite("lifebench", lengths=[16, 32], limit=5)
    assert [(i.item_id, i.target) for i in suite.items] == [
        ("1", 16),
        ("2", 16),
        ("3", 16),
        ("4", 16),
        ("5", 16),
        ("1", 32),
        ("2", 32),
        ("3", 32),
        ("4", 32),
        ("5", 32),
    ]


def test_limit_with_a_seed_is_a_repeatable_sample_in_file_order() -> None:
    a = [i.item_id for i in load_suite("lifebench", lengths=[16], limit=6, seed=7).items]
    b = [i.item_id for i in load_suite("lifebench", lengths=[16], limit=6, seed=7).items]
    c = [i.item_id for i in load_suite("lifebench", lengths=[16], limit=6, seed=8).items]
    assert a == b
    assert a != c
    order = [i.item_id for i in load_suite("lifebench", lengths=[16]).items]
    assert a == sorted(a, key=order.index)


def test_lang_keeps_only_that_languages_prompts() -> None:
    suite = load_suite("lifebench", lengths=[16], lang="zh", limit=3)
    assert [i.lang for i in suite.items] == ["zh", "zh", "zh"]
    assert "等于 16" in suite.items[0].instruction


# ----- mtbench ----------------------------------------------------------------------------------------------------


def test_mtbench_has_the_80_first_turns_at_the_default_word_budgets() -> None:
    suite = load_suite("mtbench")
    assert suite.sources == 80
    assert suite.lengths == (50, 120, 250)
    assert len(suite.items) == 240
    first = suite.items[0]
    assert first.item_id == "81"
    assert first.instruction.startswith("Compose an engaging travel blog post about a recent trip to Hawaii")
    assert "Start every sentence with the letter A" not in first.instruction  # the second turn is not used


def test_mtbench_instruction_is_the_first_turn_alone_so_the_mode_suffix_adds_the_length() -> None:
    with MTBENCH_FILE.open(encoding="utf-8") as fh:
        first_turns = {str(q["question_id"]): q["turns"][0] for q in map(json.loads, fh)}
    suite = load_suite("mtbench", lengths=[50])
    assert {i.item_id: i.instruction for i in suite.items} == first_turns
    assert suite.unit_for("en") == "en_words"


def test_mtbench_temperatures_follow_fastchat_per_category() -> None:
    suite = load_suite("mtbench", lengths=[50])
    by_category = {i.category: i.temperature for i in suite.items}
    assert by_category == {
        "writing": 0.7,
        "roleplay": 0.7,
        "extraction": 0.0,
        "math": 0.0,
        "coding": 0.0,
        "reasoning": 0.0,
        "stem": 0.1,
        "humanities": 0.1,
    }
    assert by_category == MTBENCH_TEMPERATURES
    assert Counter(i.category for i in suite.items) == {c: 10 for c in MTBENCH_TEMPERATURES}


def test_mtbench_accepts_any_budget_up_to_the_app_maximum() -> None:
    assert load_suite("mtbench", lengths=[7, 10000], limit=1).lengths == (7, 10000)
    with pytest.raises(ValueError, match="from 1 to 10000"):
        load_suite("mtbench", lengths=[10001])


# ----- rtg --------------------------------------------------------------------------------------------------------


def test_rtg_asks_for_a_coherent_passage_of_exactly_n_in_each_language() -> None:
    suite = load_suite("rtg", lengths=[1, 64], limit=2)
    en, zh = suite.items[2], suite.items[3]
    assert en.instruction == "Write a coherent passage about the first snowfall of winter, exactly 64 words long."
    assert zh.instruction == "请以“冬天的第一场雪”为题，写一段连贯的文字，正好64个字。"
    assert suite.items[0].instruction.endswith("exactly 1 word long.")
    assert suite.unit_for("en") == "en_words"
    assert suite.unit_for("zh") == "zh_chars"
    assert {i.temperature for i in suite.items} == {0.7}


def test_rtg_without_lengths_samples_n_in_1_to_1000_repeatably() -> None:
    suite = load_suite("rtg", seed=3)
    assert len(suite.items) == 2 * len(RTG_TOPICS)
    targets = {i.item_id: i.target for i in suite.items}
    assert all(1 <= n <= 1000 for n in targets.values())
    assert targets == {i.item_id: i.target for i in load_suite("rtg", seed=3).items}
    assert targets != {i.item_id: i.target for i in load_suite("rtg", seed=4).items}
    for item in suite.items:
        assert str(item.target) in item.instruction


def test_rtg_sampled_n_of_a_topic_does_not_depend_on_limit_or_language() -> None:
    everything = {i.item_id: i.target for i in load_suite("rtg", seed=5).items}
    english = {i.item_id: i.target for i in load_suite("rtg", seed=5, lang="en").items}
    assert all(everything[k] == v for k, v in english.items())
    assert all(k.startswith("en-") for k in english)


# ----- custom -----------------------------------------------------------------------------------------------------


def test_custom_csv_rows_become_items_with_ids_or_row_numbers(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text("instruction,lang,target,id\nDescribe rain.,en,12,rain\n写一首诗。,cn,20,\n", encoding="utf-8")
    suite = load_suite("custom", file=str(path))
    assert [(i.item_id, i.lang, i.target, i.instruction) for i in suite.items] == [
        ("rain", "en", 12, "Describe rain."),
        ("2", "zh", 20, "写一首诗。"),
    ]
    assert suite.fingerprint


def test_custom_jsonl_rows_may_carry_a_temperature(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    rows = [
        {"instruction": "Say hi.", "lang": "en", "target": 3, "temperature": 0.2},
        {"instruction": "x", "lang": "zh", "target": "5"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    items = load_suite("custom", file=str(path)).items
    assert [(i.item_id, i.target, i.temperature) for i in items] == [("1", 3, 0.2), ("2", 5, None)]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.csv", "instruction,target\nhi,3\n", "lacks column(s) lang"),
        ("a.csv", "instruction,lang,target\nhi,fr,3\n", "a.csv row 2: lang must be en or zh"),
        ("a.csv", "instruction,lang,target\nhi,en,three\n", "a.csv row 2: target must be a whole number"),
        ("a.csv", "instruction,lang,target\nhi,en,0\n", "a.csv row 2: target must be from 1 to 10000"),
        ("a.csv", "instruction,lang,target\n,en,3\n", "a.csv row 2: missing instruction"),
        ("a.csv", "instruction,lang,target,id\nhi,en,3,x\nho,en,3,x\n", "a.csv row 3: id 'x' appears twice"),
        ("a.csv", "instruction,lang,target\n", "has no rows"),
        ("a.jsonl", '{"instruction": "hi", "lang": "en"}\n', "a.jsonl line 1: missing target"),
        ("a.jsonl", '{"instruction": "hi"\n', "a.jsonl line 1: not valid JSON"),
        ("a.jsonl", "[1, 2]\n", "a.jsonl line 1: each line must be a JSON object"),
    ],
)
def test_custom_files_with_bad_rows_are_rejected_saying_where_and_why(name: str, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_custom(text, name)


def test_custom_needs_a_file_and_refuses_lengths(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs --file"):
        load_suite("custom")
    with pytest.raises(ValueError, match="cannot read"):
        load_suite("custom", file=str(tmp_path / "missing.csv"))
    with pytest.raises(ValueError, match="does not apply to the custom suite"):
        load_suite("custom", file="x.csv", lengths=[16])


# ----- names and lengths ------------------------------------------------------------------------------------------


def test_unknown_suite_names_the_suites() -> None:
    with pytest.raises(ValueError, match="use one of rtg, lifebench, mtbench, custom"):
        load_suite("alpaca")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("16,32,64", (16, 32, 64)), ("64, 16,16", (16, 64)), ("", ()), (None, ())],
)
def test_lengths_parse_sorted_without_repeats(text: str | None, expected: tuple[int, ...]) -> None:
    assert parse_lengths(text) == expected


@pytest.mark.parametrize(("text", "message"), [("16,x", "whole numbers"), ("0", "from 1 to 10000"), ("20000", "20000")])
def test_bad_lengths_say_what_is_accepted(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_lengths(text)

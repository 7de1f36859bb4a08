"""Exports carry what the writer saw: the text, its verdict and its quality score (real SQLite file)."""

from __future__ import annotations

import json

import pytest

from capel_ui.assessment import assess
from capel_ui.export import export_json, export_md, export_name, export_txt
from capel_ui.storage import get_engine, get_run, update_run
from tests.saved_runs import save_parsed_run

RAW = "<4>Waves<3>fold<2>over<1>stones.<0>"


@pytest.fixture
def run_id():
    return save_parsed_run(get_engine(), RAW, 4, instruction="Write about the sea.")


def scored(run_id: int, **fields):
    """The run as the app saves a scored one: its score in its column and in its judgement."""
    engine = get_engine()
    run = get_run(engine, run_id)
    judged = {**assess(run.text, "en", run.instruction, fluency=fields.get("fluency")).as_json()}
    judged["score"] = fields.get("score", judged["score"])
    update_run(engine, run_id, **fields, assessment=judged)
    return get_run(engine, run_id)


def test_the_json_export_carries_the_offline_score_and_fluency(run_id):
    exported = json.loads(export_json(scored(run_id, score=7.5, fluency=0.62)))
    assert (exported["score"], exported["fluency"]) == (7.5, 0.62)


def test_the_json_export_carries_the_judge_rating_and_who_gave_it(run_id):
    exported = json.loads(export_json(scored(run_id, judge_score=8.0, judge_model="gpt-5-mini (OpenAI)")))
    assert (exported["judge_score"], exported["judge_model"]) == (8.0, "gpt-5-mini (OpenAI)")


def test_an_unscored_run_exports_its_score_as_null(run_id):
    exported = json.loads(export_json(get_run(get_engine(), run_id)))
    assert exported["score"] is None and exported["judge_score"] is None


def test_the_markdown_footer_names_the_score(run_id):
    footer = export_md(scored(run_id, score=7.5, fluency=0.62)).split("---")[-1]
    assert "score 7.5: reads smoothly · Model: `embedded`" in footer


def test_the_markdown_footer_of_an_unscored_run_has_no_empty_score(run_id):
    footer = export_md(get_run(get_engine(), run_id)).split("---")[-1]
    assert "score" not in footer and "* Model: `embedded`" in footer


def test_the_text_export_is_the_clean_text_alone(run_id):
    assert export_txt(get_run(get_engine(), run_id)) == "Waves fold over stones.\n"


@pytest.mark.parametrize(
    ("raw", "stem"),
    [
        ("<4>Waves<3>fold<2>over<1>stones.<0>", "waves-fold-over-stones"),
        ("<2>海浪<1>白<0>", "海浪-白"),
        ("<1>!!!<0>", "capel"),
    ],
)
def test_the_file_name_starts_with_the_first_words_and_ends_with_the_run_id(raw, stem):
    run = get_run(get_engine(), save_parsed_run(get_engine(), raw, 4, instruction="x"))
    assert export_name(run, "md") == f"{stem}-run{run.id}.md"

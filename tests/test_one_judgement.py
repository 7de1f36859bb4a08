"""One judgement of a finished text (issue 44): made once (`assessment.assess`) when the run closes, stored with it,
and read back by every surface. One junk text and one good text are walked through `generate --json`, its verdict
line, History (rows, the page, `history show`), each export, a batch's output, Write and Compare: every surface says
the same ending, score and warnings as the stored judgement. No module but the assessment judges a finished text."""

from __future__ import annotations

import ast
import csv
import io
import json
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.assessment import Assessment, assess
from capel_ui.backends import ScriptedBackend
from capel_ui.cli import main
from capel_ui.export import export_json, export_md
from capel_ui.history import history_rows, show_run
from capel_ui.quality import NOT_TO_PUBLISH
from capel_ui.runs import assess_saved, assessment_of
from capel_ui.storage import create_run, get_engine, get_run, list_runs, runs_to_csv
from tests.conftest import variants_box
from tests.test_signals import _compare_one, _ending_naturally, _generate

ROOT = Path(__file__).resolve().parent.parent / "capel_ui"
INSTRUCTION = "Write a headline about a lighthouse."
TEXTS = {
    "junk": "Lighthouse: 1. 2. 3. 4. 5.",  # six words, a number list
    "good": "The lighthouse town shines again tonight.",  # six words, kept
}

# ----- no module but the assessment judges a finished text --------------------------------------------------------

JUDGING = frozenset({"warnings", "junk", "ending_said", "explain", "notes", "offline_score"})
"""The quality functions that judge a finished text."""
MAY_JUDGE = {
    "capel_ui.assessment": "the one judgement",
    "capel_ui.planned": "compares rival endings while the run is still choosing: a comparison, not an assessment",
}


def _judging_imports(source: str) -> set[str]:
    """The judging names a module's source takes from capel_ui.quality, however it imports them."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "quality":
            found |= {a.name for a in node.names} & JUDGING
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "quality":
            found |= {node.attr} & JUDGING
    return found


def judges(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module outside the quality rules, the assessment and the planner that judges a finished text itself."""
    out = {}
    for path in root.rglob("*.py"):
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        if name.startswith("capel_ui.quality") or name in MAY_JUDGE:
            continue
        found = _judging_imports(path.read_text(encoding="utf-8"))
        if found:
            out[name] = found
    return out


def test_no_module_but_the_assessment_judges_a_finished_text() -> None:
    assert judges() == {}, "judge a finished text in capel_ui/assessment.py only, and read `Assessment` elsewhere"


@pytest.mark.parametrize(
    "source",
    ["from ..quality import junk\n", "from capel_ui.quality import warnings, words\n", "x = quality.explain(1, [])\n"],
)
def test_the_check_fails_on_a_surface_that_judges_again(tmp_path: Path, source: str) -> None:
    package = tmp_path / "capel_ui"
    package.mkdir()
    (package / "surface.py").write_text(source, encoding="utf-8")
    assert list(judges(package)) == ["capel_ui.surface"]


# ----- every surface shows the stored judgement ---------------------------------------------------------------------


def _stored(kind: str, scripted: ScriptedBackend) -> tuple[dict, str, Assessment, int]:
    """`generate --json` of the text of `kind`: its JSON, its stderr, the judgement stored with its run, the run id."""
    _ending_naturally(scripted, TEXTS[kind])
    _, out, err = _generate("--model", "scripted", "--mode", "baseline", "--target", "6", "--json", INSTRUCTION)
    doc = json.loads(out)
    run = get_run(get_engine(os.environ["DATABASE_URL"]), doc["run_id"])
    assert run is not None and run.assessment is not None  # stored when the run closed
    return doc, err, Assessment.from_json(run.assessment), run.id


def _said(found: Assessment) -> tuple:
    return (found.ending, found.score, list(found.notes))


@pytest.mark.parametrize("kind", ["junk", "good"])
def test_the_cli_history_and_every_export_show_the_stored_judgement(kind: str, scripted_model: ScriptedBackend) -> None:
    doc, err, found, run_id = _stored(kind, scripted_model)
    assert found.junk is (kind == "junk")
    assert found.ending == (NOT_TO_PUBLISH if kind == "junk" else "ends naturally")
    assert (doc["ending"], doc["score"], doc["warnings"]) == (found.ending, found.score, found.messages)
    assert [line.removeprefix("warning: ") for line in err.splitlines() if line.startswith("warning: ")][
        : len(found.notes)
    ] == list(found.notes)
    assert f" · {found.ending} · " in next(line for line in err.splitlines() if line.startswith(("✓", "✗")))
    engine = get_engine(os.environ["DATABASE_URL"])
    run = get_run(engine, run_id)
    [row] = history_rows([run])
    assert (row["ending"], row["score"]) == (found.ending, found.score)
    shown = show_run(run)
    assert f"score {found.score:g}: {found.explanation}" in shown
    assert all(f"warning: {w.message}" in shown for w in found.warnings)
    exported = json.loads(export_json(run))
    assert (exported["ending"], exported["score"], exported["warnings"]) == (found.ending, found.score, found.messages)
    assert f"score {found.score:g}: {found.explanation}" in export_md(run)
    [cells] = list(csv.DictReader(io.StringIO(runs_to_csv([run]))))
    assert json.loads(cells["assessment"]) == found.as_json()


@pytest.mark.parametrize("kind", ["junk", "good"])
def test_a_batch_row_shows_the_same_judgement_as_the_cli(
    kind: str, scripted_model: ScriptedBackend, tmp_path: Path
) -> None:
    _, _, found, _ = _stored(kind, scripted_model)
    _ending_naturally(scripted_model, TEXTS[kind])
    src = tmp_path / "in.csv"
    src.write_text(f"id,instruction,target\nr1,{INSTRUCTION},6\n", encoding="utf-8")
    err = io.StringIO()
    main(
        ["batch", str(src), "--model", "scripted", "--mode", "baseline", "--out", str(tmp_path / "out.csv")], stderr=err
    )
    [row] = list(csv.DictReader(io.StringIO((tmp_path / "out.csv").read_text(encoding="utf-8-sig"))))
    assert (row["ending"], float(row["score"]), row["warnings"]) == (found.ending, found.score, "; ".join(found.notes))


def _write_one(app: AppTest, scripted: ScriptedBackend, text: str) -> AppTest:
    _ending_naturally(scripted, text)
    app.selectbox(key="provider").set_value("scripted").run()
    app.text_area(key="w_instruction").input(INSTRUCTION)
    app.number_input(key="w_target").set_value(6)
    app.selectbox(key="w_mode").set_value("baseline")
    variants_box(app).set_value(1)
    [go] = [b for b in app.button if b.label == "Generate"]
    go.click()
    app.run()
    assert not app.exception, app.exception
    return app


def _page_says(app: AppTest) -> tuple:
    """The ending beside the badge, the score caption and the warnings box of the one text on the page."""
    [mark] = [m.value for m in app.markdown if m.value.startswith((":orange-background[", ":blue-background["))]
    captions = [c.value for c in app.caption if c.value.startswith("score ")]
    notes = [n for w in app.warning for n in w.value.split("  \n") if w.icon == ":material/spellcheck:"]
    return mark, captions, notes


@pytest.mark.parametrize("page", ["write", "compare"])
@pytest.mark.parametrize("kind", ["junk", "good"])
def test_write_and_compare_show_the_stored_judgement(
    page: str, kind: str, scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    _, _, found, _ = _stored(kind, scripted_model)
    walk = _write_one if page == "write" else _compare_one
    mark, captions, notes = _page_says(walk(app_test, scripted_model, TEXTS[kind]))
    assert found.ending in mark
    assert captions == [f"score {found.score:g}: {found.explanation}"]
    assert notes == list(found.notes)
    app_test.switch_page("app_pages/history.py").run()
    table = app_test.dataframe[0].value
    assert set(table["ending"]) == {found.ending}  # the CLI's run and the page's, said alike


# ----- old runs are judged once ------------------------------------------------------------------------------


def test_an_old_run_is_judged_once_and_its_score_and_warnings_then_agree() -> None:
    engine = get_engine(os.environ["DATABASE_URL"])
    fields = dict(
        instruction=INSTRUCTION, prompt="p", raw="", text=TEXTS["junk"], model="embedded", backend="embedded",
        mode="baseline", lang="en", unit="en_words", target=6, count=6, exact=True, valid=True, errors=[],
        status="complete", origin="cli", verified=True, score=9.5, end_probability=0.9,
    )  # fmt: skip
    run_id = create_run(engine, **fields)  # saved before judgements were stored: a score from old rules
    assert assess_saved(engine) == 1 and assess_saved(engine) == 0  # once
    run = get_run(engine, run_id)
    expected = assess(TEXTS["junk"], "en", INSTRUCTION, end_probability=0.9)
    assert (run.score, assessment_of(run).notes) == (expected.score, expected.notes)
    assert run.score != 9.5 and assessment_of(run).ending == NOT_TO_PUBLISH


def test_history_reassess_judges_every_run_again_on_purpose() -> None:
    engine = get_engine(os.environ["DATABASE_URL"])
    fields = dict(
        instruction=INSTRUCTION, prompt="p", raw="", text=TEXTS["good"], model="embedded", backend="embedded",
        mode="baseline", lang="en", unit="en_words", target=6, count=6, exact=True, valid=True, errors=[],
        status="complete", origin="cli", verified=True, assessment={"rules": 0, "warnings": [["loop", "x"]]},
    )  # fmt: skip
    run_id = create_run(engine, **fields)
    out = io.StringIO()
    assert main(["history", "reassess"], stdout=out, stderr=io.StringIO()) == 0
    assert "1 run" in out.getvalue()
    assert assessment_of(get_run(engine, run_id)).warnings == ()
    assert list_runs(engine)[0].assessment["rules"] >= 1

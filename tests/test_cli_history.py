"""`generate` keeps every run (origin cli) unless told not to, and `history` shows them without a browser (the
in-process scripted model). A run stopped by Ctrl-C in a real process: test_cli's
test_ctrl_c_stops_the_run_keeps_the_text_and_exits_130."""

from __future__ import annotations

import csv
import io
import json
import os

from capel_ui.storage import get_engine, get_run, list_runs
from tests.test_cli import generate_scripted, run


def test_generate_saves_the_run_with_origin_cli(scripted_model):
    scripted_model.reply("One two three.")
    code, _, err = generate_scripted("--mode", "baseline", "--target", "3", "Count to three")
    (row,) = list_runs(get_engine())
    assert code == 0 and (row.origin, row.status, row.verified, row.text) == ("cli", "complete", True, "One two three.")
    assert f"saved as run {row.id}" in err


def test_generate_json_prints_the_run_id(scripted_model):
    scripted_model.reply("One two three.")
    _, out, _ = generate_scripted("--mode", "baseline", "--target", "3", "--json", "Count to three")
    result = json.loads(out)
    assert get_run(get_engine(), result["run_id"]).text == result["text"]


def test_generate_json_says_verified(scripted_model):
    scripted_model.reply("One two three.")
    _, out, _ = generate_scripted("--mode", "baseline", "--target", "3", "--json", "Count to three")
    assert json.loads(out)["verified"] is True


def test_generate_no_save_keeps_nothing(scripted_model):
    scripted_model.reply("One two three.")
    _, out, _ = generate_scripted("--mode", "baseline", "--target", "3", "--json", "--no-save", "Count")
    assert json.loads(out)["run_id"] is None and list_runs(get_engine()) == []


def _three_runs(scripted_model):
    scripted_model.reply("One two three.", "One two.", "Un deux trois.")
    generate_scripted("--mode", "baseline", "--target", "3", "lighthouse")
    generate_scripted("--mode", "baseline", "--target", "3", "harbour")
    generate_scripted("--mode", "capel", "--target", "3", "--no-fallback", "French")
    return list_runs(get_engine())


def test_history_lists_runs_newest_first(scripted_model):
    runs = _three_runs(scripted_model)
    code, out, _ = run("history")
    ids = [int(line.split()[0]) for line in out.splitlines()[1:]]
    assert code == 0 and ids == [r.id for r in runs]


def test_history_verified_lists_only_verified_runs(scripted_model):
    _three_runs(scripted_model)
    _, out, _ = run("history", "--verified", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["instruction"] for r in rows] == ["lighthouse"]


def test_history_filters_by_mode_and_search(scripted_model):
    _three_runs(scripted_model)
    _, out, _ = run("history", "--mode", "baseline", "--search", "harb", "--json")
    assert [json.loads(line)["instruction"] for line in out.splitlines()] == ["harbour"]


def test_history_filters_by_origin(scripted_model):
    _three_runs(scripted_model)
    _, out, _ = run("history", "--origin", "write")
    assert "No runs match" in out


def test_history_show_prints_one_run_in_full(scripted_model):
    runs = _three_runs(scripted_model)
    code, out, _ = run("history", "show", str(runs[-1].id))
    assert code == 0 and "✓ exact · verified · 3/3 English words" in out and "One two three." in out


def test_history_show_of_a_missing_run_is_bad_input():
    code, _, err = run("history", "show", "999")
    assert code == 2 and "no run 999" in err


def test_history_csv_to_standard_output_has_a_verified_column(scripted_model):
    _three_runs(scripted_model)
    _, out, _ = run("history", "--csv", "-")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert sorted(r["verified"] for r in rows) == ["false", "false", "true"]


def test_history_csv_to_a_file_is_what_the_page_exports(scripted_model, tmp_path):
    from capel_ui.storage import runs_to_csv

    runs = _three_runs(scripted_model)
    target = tmp_path / "runs.csv"
    run("history", "--csv", str(target))
    assert target.read_bytes().decode("utf-8-sig") == runs_to_csv(runs)


def test_a_corrupt_database_is_named_and_left_untouched(tmp_path, monkeypatch):
    broken = tmp_path / "broken.db"
    broken.write_bytes(os.urandom(4096))
    before = broken.read_bytes()
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{broken}")
    code, _, err = run("history")
    assert code == 3 and str(broken) in err and "move it aside" in err
    assert broken.read_bytes() == before

"""Issue 47: a batch's input is read strictly and its writer's columns come back as they were. A malformed CSV (a
quote left open, a row with a cell too few or too many, a NUL byte, a cell over the limit, no rows) is refused in one
line naming the line, before any text is written, on the command line and on the Batch page; a 50,000-word source
is read; rows spanning lines are accounted for; only the app's cells are neutralised for spreadsheets."""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.backends import ScriptedBackend
from capel_ui.batch.table import EXCEL_CELL, EXCEL_CUT, MAX_CELL, read_table, xlsx_bytes
from capel_ui.storage import get_engine, list_runs
from tests.test_batch import read_csv, run_cli

HEADER = "id,instruction,target\n"
LIGHTHOUSE = (
    HEADER + 'r1,"Write a headline about a lighthouse,12\n'
    "r2,Write a slogan for a bakery,10\n"
    "r3,Write a tagline for a bookshop,8\n"
)


def xlsx(rows: list[list[object]]) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    for row in rows:
        book.active.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


MALFORMED = [
    # what is wrong, the file, what the one line says
    ("a quote left open swallows the rest", LIGHTHOUSE.encode(), ["lighthouse.csv line 2:", "never closed"]),
    ("a quote left open, closed lines later",
     (HEADER + 'r1,"Write a headline,12\nr2,Write a slogan,10\nr3,"Write a tagline",8\n').encode(),
     ["lines 2-4:", "left open on line 2"]),
    ("text after a closing quote", (HEADER + 'r1,"Write a headline" about the sea,12\n').encode(),
     ["line 2:", "closing quote"]),
    ("a row with a cell too few", (HEADER + "r1,Write a headline,12\nr2,Write a slogan 10\n").encode(),
     ["line 3 has 2 cells where the header names 3"]),
    ("a row with a cell too many", (HEADER + "r1,Write a headline, short,12\n").encode(),
     ["line 2 has 4 cells where the header names 3", "cell 4 ('12') would be lost"]),
    ("a NUL byte", (HEADER + "r1,Write a headline,12\nr2,Write\0 a slogan,10\n").encode(), ["line 3 holds a NUL byte"]),
    ("UTF-16 without a byte-order mark", (HEADER + "r1,Write a headline,12\n").encode("utf-16-le"),
     ["line 1 holds a NUL byte"]),
    ("a cell over the limit", (HEADER + "r1," + "x" * (MAX_CELL + 1) + ",12\n").encode(),
     ["line 2:", f"over the {MAX_CELL:,} characters"]),
    ("an empty file", b"", ["is empty"]),
    ("a header only", HEADER.encode(), ["no rows under its header"]),
    ("a header and blank lines", (HEADER + "\n,,\n").encode(), ["no rows under its header"]),
]  # fmt: skip


@pytest.mark.parametrize(("data", "said"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_a_malformed_csv_is_refused_in_one_line_naming_the_line_before_any_text_is_written(
    tmp_path: Path, scripted_model: ScriptedBackend, data: bytes, said: list[str]
) -> None:
    scripted_model.reply("Sea wind salt light stone.")
    src, out = tmp_path / "lighthouse.csv", tmp_path / "out.csv"
    src.write_bytes(data)
    code, err = run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(out))
    [line] = err.splitlines()
    assert code == 2 and line.startswith("capel_ui: error: ") and all(s in line for s in said), err
    assert not out.exists() and scripted_model.requests == [] and list_runs(get_engine()) == []


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        ([["id", "instruction", "target"], ["r1", "Write", 12], ["r2", "Write", 10, "stray"]], "row 3: column D"),
        ([["id", "instruction", "target"]], "no rows under its header"),
    ],
    ids=["a value in a column the header does not name", "a header only"],
)
def test_a_malformed_xlsx_is_refused_in_one_line_naming_the_row(
    tmp_path: Path, scripted_model: ScriptedBackend, rows: list[list[object]], said: str
) -> None:
    src = tmp_path / "in.xlsx"
    src.write_bytes(xlsx(rows))
    code, err = run_cli(str(src), "--model", "scripted", "--out", str(tmp_path / "out.xlsx"))
    assert code == 2 and len(err.splitlines()) == 1 and said in err, err
    assert scripted_model.requests == []


def test_the_batch_page_shows_a_malformed_csv_as_one_error_line_and_offers_nothing_to_write(app_test: AppTest):
    at = app_test
    at.switch_page("app_pages/batch.py").run()
    at.file_uploader[0].set_value(("lighthouse.csv", LIGHTHOUSE.encode(), "text/csv")).run()
    assert not at.exception, at.exception
    [error] = [e.value for e in at.error]
    assert error.startswith("lighthouse.csv line 2: a quote opens a cell and is never closed"), error
    assert not [b for b in at.button if b.label.startswith("Write")]


def test_a_source_text_of_50000_words_is_read_and_rewritten(tmp_path: Path, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply("Sea wind salt light stone.")
    source = " ".join(["The keeper climbed the stairs of the old lighthouse at dusk."] * 4546)[:-1] + "."
    assert len(source.split()) > 50_000 and len(source) > 131_072  # over the csv module's own limit
    src, out = tmp_path / "book.csv", tmp_path / "out.csv"
    with src.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([["id", "source", "target"], ["book", source, "5"]])
    code, err = run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(out))
    assert code == 0, err
    [row] = read_csv(out)
    assert row["source"] == source and row["verified"] == "true"


def test_rows_spanning_lines_and_blank_lines_are_accounted_for(tmp_path: Path, scripted_model) -> None:
    scripted_model.reply("Sea wind salt light stone.")
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text(HEADER + 'r1,"Write a headline\nabout a lighthouse",5\n\nr2,Write a slogan,5\n', encoding="utf-8")
    code, err = run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(out))
    assert code == 0, err
    assert (
        "4 lines under the header hold 2 rows; row 1 is lines 2-3 (a quoted cell with line breaks); "
        "1 blank line skipped" in err
    ), err
    assert [r["id"] for r in read_csv(out)] == ["r1", "r2"]


WRITERS = {"note": "-5", "formula": "=SUM(A1)", "phone": "+44 20 7946 0000", "handle": "@capel", "tab": "\tindented"}
MODEL_TEXT = '=HYPERLINK("http://x.invalid","Sea wind salt light")'


def writers_input(tmp_path: Path) -> Path:
    src = tmp_path / "in.csv"
    with src.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["id", "instruction", "target", *WRITERS])
        out.writerow(["r1", "Write a headline about the sea", "5", *WRITERS.values()])
    return src


def test_the_writers_columns_come_back_as_they_were_and_only_the_apps_cells_are_neutralised_in_csv(
    tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    scripted_model.reply(MODEL_TEXT)
    out = tmp_path / "out.csv"
    run_cli(str(writers_input(tmp_path)), "--model", "scripted", "--mode", "baseline", "--out", str(out))
    [row] = read_csv(out)
    assert {k: row[k] for k in WRITERS} == WRITERS
    assert row["text"] == "'" + MODEL_TEXT  # the model's text: shown by a spreadsheet, never run


def test_an_xlsx_holds_every_text_as_a_string_cell_never_a_formula(tmp_path: Path, scripted_model) -> None:
    from openpyxl import load_workbook

    scripted_model.reply(MODEL_TEXT)
    out = tmp_path / "out.xlsx"
    run_cli(str(writers_input(tmp_path)), "--model", "scripted", "--mode", "baseline", "--out", str(out))
    sheet = load_workbook(out).active
    cells = {sheet.cell(1, c).value: sheet.cell(2, c) for c in range(1, sheet.max_column + 1)}
    assert {k: cells[k].value for k in WRITERS} == WRITERS
    assert cells["text"].value == MODEL_TEXT
    assert all(cells[k].data_type == "s" for k in [*WRITERS, "text"])
    xml = zipfile.ZipFile(out).read("xl/worksheets/sheet1.xml").decode()
    assert "<f>" not in xml and "<f " not in xml


# ----- a cell longer than an Excel cell holds ---------------------------------------------------------------------

LONG = " ".join(["The keeper climbed the stairs of the old lighthouse at dusk."] * 700)  # 42,699 characters


@pytest.mark.parametrize(
    ("size", "whole"), [(EXCEL_CELL - 1, True), (EXCEL_CELL, True), (EXCEL_CELL + 1, False), (len(LONG), False)]
)
def test_an_xlsx_cell_holds_a_text_up_to_excels_limit_whole_and_says_where_a_longer_one_was_cut(
    size: int, whole: bool
) -> None:
    text = (LONG * 2)[:size]
    back = read_table(xlsx_bytes(["notes"], [{"notes": text}]), "out.xlsx").rows[0]["notes"]
    if whole:
        assert back == text
    else:  # openpyxl alone would cut it at 32,767 without a word
        assert len(back) == EXCEL_CELL and back.endswith(EXCEL_CUT) and text.startswith(back.removesuffix(EXCEL_CUT))


def test_a_batch_into_xlsx_refuses_a_cell_excel_cannot_hold_before_any_text_is_written(tmp_path: Path) -> None:
    src = tmp_path / "book.csv"
    with src.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([["id", "instruction", "target", "notes"], ["r1", "Write a headline", "5", LONG]])
    code, err = run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(tmp_path / "out.xlsx"))
    assert code == 2, err
    assert f"book.csv line 2, notes: {len(LONG):,} characters: an Excel cell holds 32,767" in err, err
    assert f"--out {tmp_path / 'out.csv'}" in err, err
    assert not (tmp_path / "out.xlsx").exists() and list_runs(get_engine()) == []


def test_the_batch_page_says_its_xlsx_cuts_a_cell_excel_cannot_hold_and_the_csv_keeps_it_whole(
    scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    scripted_model.reply("Sea wind salt light stone.")
    buffer = io.StringIO()
    csv.writer(buffer).writerows([["id", "instruction", "target", "notes"], ["r1", "Write a headline", "5", LONG]])
    at = app_test
    at.selectbox(key="provider").set_value("scripted").run()
    at.switch_page("app_pages/batch.py").run()
    at.file_uploader[0].set_value(("book.csv", buffer.getvalue().encode(), "text/csv")).run()
    next(b for b in at.button if b.label == "Write 1 text").click().run()
    assert not at.exception, at.exception
    note = f"The XLSX cuts 1 cell at Excel's 32,767 characters (row 1, notes: {len(LONG):,} characters)"
    assert any(c.value.startswith(note) and "the CSV keeps every text whole" in c.value for c in at.caption)


def test_a_batch_into_xlsx_says_which_text_the_model_wrote_past_an_excel_cell(
    tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    scripted_model.reply(LONG)  # 7,700 words: within the row's limit, past an Excel cell
    src = tmp_path / "in.csv"
    src.write_text(HEADER + "r1,Write the keeper's story,at most 10000\n", encoding="utf-8")
    out = tmp_path / "out.xlsx"
    code, err = run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(out))
    assert code == 0, err
    assert f"warning: The XLSX cuts 1 cell at Excel's 32,767 characters (row 1, text: {len(LONG):,} characters)" in err
    assert read_table(out.read_bytes(), "out.xlsx").rows[0]["text"].endswith(EXCEL_CUT)

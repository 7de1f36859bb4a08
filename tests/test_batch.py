"""Batch (issue 35): spreadsheets in and out, rows to requests, packs, resume (a SIGKILLed batch run again), and the
`batch` command end to end on the scripted model; one run on the embedded model."""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from capel_ui.backends import Capabilities, ScriptedBackend
from capel_ui.batch.packs import PACKS
from capel_ui.batch.rows import Options, batch_id, parse_target, plan
from capel_ui.batch.runner import Batch, saved_runs
from capel_ui.batch.table import Table, csv_bytes, read_table, write_atomic, xlsx_bytes
from capel_ui.cli import main
from capel_ui.counting import count
from capel_ui.history import history_rows
from capel_ui.storage import get_engine, get_run, list_runs
from capel_ui.verdict import Target
from tests.scripted_server import MODEL, ok

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    code = main(["batch", *argv], stdout=io.StringIO(), stderr=err)
    return code, err.getvalue()


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ----- tables -----------------------------------------------------------------------------------------------


def test_a_csv_from_any_spreadsheet_reads_the_same_semicolons_bom_and_blank_lines() -> None:
    data = "\ufeffInstruction;Target;Note\r\nWrite a headline;10;a\r\n;;\r\nWrite a slogan;≤ 30;\r\n".encode()
    table = read_table(data, "in.csv")
    assert table.header == ["Instruction", "Target", "Note"]
    assert table.rows == [
        {"Instruction": "Write a headline", "Target": "10", "Note": "a"},
        {"Instruction": "Write a slogan", "Target": "≤ 30", "Note": ""},
    ]


def test_xlsx_round_trips_and_a_formula_like_text_stays_text_in_xlsx_and_is_neutralised_in_csv() -> None:
    rows = [{"instruction": '=HYPERLINK("http://x")', "target": 50, "verified": True, "score": 6.5}]
    header = ["instruction", "target", "verified", "score"]
    back = read_table(xlsx_bytes(header, rows), "out.xlsx")
    assert back.rows == [{"instruction": '=HYPERLINK("http://x")', "target": "50", "verified": "true", "score": "6.5"}]
    from openpyxl import load_workbook

    ws = load_workbook(io.BytesIO(xlsx_bytes(header, rows))).active
    assert ws["A2"].data_type == "s"  # shown, never run
    text = csv_bytes(header, rows).decode("utf-8-sig")
    assert "'=HYPERLINK" in text and "\r\n" in text


def test_an_atomic_write_leaves_the_old_file_or_the_new_one_and_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "o").mkdir()
    out = tmp_path / "o" / "out.csv"
    out.write_bytes(b"old")
    write_atomic(out, b"new")
    assert out.read_bytes() == b"new"
    assert [p.name for p in out.parent.iterdir()] == ["out.csv"]


@pytest.mark.parametrize(
    ("text", "kind", "target"),
    [
        ("50", "", Target.exactly(50)),
        ("50.0", "", Target.exactly(50)),
        ("≤ 30", "", Target.at_most(30)),
        ("at most 280", "", Target.at_most(280)),
        ("<=160", "", Target.at_most(160)),
        ("30", "at most", Target.at_most(30)),
        ("30", "at_most", Target.at_most(30)),
        ("10-12", "", Target.between(10, 12)),
        ("10–12", "between", Target.between(10, 12)),
        ("between 8 and 10", "", Target.between(8, 10)),
    ],
)
def test_targets_are_read_as_a_writer_types_them(text: str, kind: str, target: Target) -> None:
    assert parse_target(text, kind) == target


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("", "", "no target"),
        ("fifty", "", "is not a whole number"),
        ("12-10", "", "smaller number to the larger"),
        ("10", "between", "needs a range"),
        ("10-12", "at most", "is a range but kind says"),
        ("10", "roughly", "kind 'roughly' is not one of"),
        ("0", "", "from 1 to"),
    ],
)
def test_a_bad_target_says_what_is_accepted(text: str, kind: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_target(text, kind)


def test_the_batch_id_is_the_inputs_content_and_options() -> None:
    a = batch_id(b"x", Options())
    assert a == batch_id(b"x", Options()) and a.startswith("b")
    assert a != batch_id(b"y", Options())
    assert a != batch_id(b"x", Options(pack="app-store"))


def test_every_pack_gives_its_platforms_set_with_the_platforms_limits() -> None:
    table = Table(["product", "facts"], [{"product": "Kettle", "facts": "boils in 60 s"}])
    jobs = plan(table, Options(pack="google-ads-rsa"), lambda m: Capabilities(grammar_field="grammar"))
    assert [j.slot for j in jobs] == [f"headline {i}" for i in range(1, 16)] + [f"description {i}" for i in range(1, 5)]
    assert {j.asked for j in jobs} == {f"at most {n} characters by Google Ads' count" for n in (30, 90)}
    assert all("Kettle: boils in 60 s" in j.request.instruction and j.request.mode == "exact" for j in jobs)
    assert len({j.request.instruction for j in jobs}) == 19  # each its own angle
    assert [j.asked for j in plan(table, Options(pack="app-store"), lambda m: Capabilities())] == [
        "at most 30 characters",
        "at most 170 characters",
    ]
    [meta] = plan(table, Options(pack="meta-description"), lambda m: Capabilities())
    assert meta.asked == "at most 155 characters"
    thread = plan(table, Options(pack="x-thread", posts=4), lambda m: Capabilities())
    assert [j.slot for j in thread] == ["post 1", "post 2", "post 3", "post 4"]
    assert {j.asked for j in thread} == {"at most 280 X weighted characters"}
    assert set(PACKS) == {"google-ads-rsa", "app-store", "meta-description", "x-thread"}


# ----- the command on the scripted model ---------------------------------------------------------------------

MIXED = """id,instruction,source,target,unit,kind,mode,variants,shop
a,Write a headline about a lighthouse,,5,,,,,north
b,Describe a mug,,≤ 40,chars,,,,south
c,,,10,,,,,no instruction
d,Write a slogan,,3-6,en_words,between,,,east
e,,"Our wool scarf is knitted in the Highlands from local fleece, dyed with plants.",at most 10,,,,,west
f,Write a headline,,5,,,capel,,caps
g,Write a tagline,,5,lightyears,,,,bad unit
h,Write two taglines,,5,,,,2,variants
"""


def answer_for(messages, options) -> str:
    """A model that always hits the mark: five words, or a short sentence under a character limit."""
    prompt = messages[-1]["content"]
    if "characters" in prompt:
        return "A mug for tea."
    if "Rewrite" in prompt:
        return "Wool scarf knitted in the Highlands."
    return "Sea wind salt light stone."


def test_a_mixed_csv_gives_one_row_per_text_bad_rows_say_why_and_other_columns_are_kept(
    tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    scripted_model.reply(answer_for)
    src = write(tmp_path / "in.csv", MIXED)
    code, err = run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(tmp_path / "out.csv"))
    rows = read_csv(tmp_path / "out.csv")
    assert code == 1, err  # two bad rows and a CAPEL run the scripted model does not count down
    assert list(rows[0]) == [
        "id",
        "instruction",
        "source",
        "target",
        "unit",
        "kind",
        "mode",
        "variants",
        "shop",
        "slot",
        "asked",
        "text",
        "count",
        "verified",
        "ending",
        "score",
        "warnings",
        "run_id",
        "error",
    ]
    by_id = {(r["id"], r["slot"]): r for r in rows}
    assert len(rows) == 9  # 8 rows, one with 2 variants
    assert by_id[("a", "")]["text"] == "Sea wind salt light stone." and by_id[("a", "")]["verified"] == "true"
    assert by_id[("a", "")]["shop"] == "north" and by_id[("a", "")]["asked"] == "exactly 5 English words"
    assert by_id[("b", "")]["count"] == "14" and by_id[("b", "")]["verified"] == "true"
    assert "no instruction" in by_id[("c", "")]["error"] and by_id[("c", "")]["text"] == ""
    assert by_id[("d", "")]["verified"] == "true"
    assert by_id[("e", "")]["text"] == "Wool scarf knitted in the Highlands." and by_id[("e", "")]["verified"] == "true"
    assert by_id[("f", "")]["verified"] == "false"  # CAPEL asked, no markers came back
    assert "unit 'lightyears' is not one of" in by_id[("g", "")]["error"]
    assert [by_id[("h", f"variant {v}")]["verified"] for v in (1, 2)] == ["true", "true"]
    runs = list_runs(get_engine())
    assert len(runs) == 7 and {r.origin for r in runs} == {"batch"}
    assert len({r.batch_id for r in runs}) == 1
    assert sorted(r.batch_row for r in runs) == ["a", "b", "d", "e", "f", "h · variant 1", "h · variant 2"]
    assert "[7/9]" in err or "[9/9]" in err
    assert "wrote" in err


def test_the_same_input_run_again_writes_nothing_twice_and_gives_the_same_output(
    tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    scripted_model.reply(answer_for)
    src = write(tmp_path / "in.csv", MIXED)
    run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(tmp_path / "one.csv"))
    asked = len(scripted_model.requests)
    _, err = run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(tmp_path / "two.xlsx"))
    assert len(scripted_model.requests) == asked  # nothing written again
    assert "7 complete from before" in err and "writing 0" in err
    one = read_csv(tmp_path / "one.csv")
    two = read_table((tmp_path / "two.xlsx").read_bytes(), "two.xlsx").rows
    assert [r["text"] for r in one] == [r["text"] for r in two]
    assert [r["run_id"] for r in one] == [r["run_id"] for r in two]
    assert len(list_runs(get_engine())) == 7


def test_a_failed_text_is_written_again_on_the_next_run_and_only_it(
    tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    from capel_ui.backends import Turn

    src = write(tmp_path / "in.csv", "instruction,target\nWrite a headline,5\nWrite a slogan,5\n")
    scripted_model.reply(
        lambda m, o: Turn(fail="auth") if "slogan" in m[-1]["content"] else "Sea wind salt light stone."
    )
    code, _ = run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(tmp_path / "o.csv"))
    assert code == 1
    assert [bool(r["error"]) for r in read_csv(tmp_path / "o.csv")] == [False, True]
    scripted_model.reply("Sea wind salt light stone.")
    before = len(scripted_model.requests)
    code, _ = run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(tmp_path / "o.csv"))
    assert code == 0 and len(scripted_model.requests) == before + 1
    assert [r["verified"] for r in read_csv(tmp_path / "o.csv")] == ["true", "true"]


def ad_writer(duplicates: int):
    """A model that writes a headline of its angle, but the same headline for its first `duplicates` answers."""
    seen = {"n": 0}

    def reply(messages, options) -> str:
        prompt = messages[-1]["content"]
        seen["n"] += 1
        angle = re.search(r"(?:Angle: |\. )([^.]*)\.", prompt.split(" for ", 1)[1]).group(1)
        if seen["n"] <= duplicates:
            return "Fresh plants delivered."
        words = re.findall(r"[a-z]+", angle)
        if "description" in prompt:
            return f"Plants that {' '.join(words[:6])}. Order today and save."[:88].rstrip() + "."
        return f"Plants {words[-1]} {words[0]} {seen['n']}."

    return reply


def test_a_google_ads_pack_gives_19_distinct_texts_per_product_each_within_its_limit(
    tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    scripted_model.capabilities = Capabilities(grammar_field="grammar")
    scripted_model.reply(ad_writer(duplicates=3))
    src = write(tmp_path / "p.csv", "product,facts,sku\nLeafy,an online plant shop,L1\nMossy,moss walls,M2\n")
    code, err = run_cli(str(src), "--model", "scripted", "--pack", "google-ads-rsa", "--out", str(tmp_path / "o.xlsx"))
    rows = read_table((tmp_path / "o.xlsx").read_bytes(), "o.xlsx").rows
    assert code == 0, err
    assert len(rows) == 38
    for sku in ("L1", "M2"):
        mine = [r for r in rows if r["sku"] == sku]
        assert len({r["text"].casefold() for r in mine}) == 19
        for r in mine:
            limit = 30 if r["slot"].startswith("headline") else 90
            assert count(r["text"], "chars") <= limit and r["verified"] == "true" and r["error"] == ""
    assert scripted_model.requests[0][1].grammar is not None  # guaranteed: the limit was asked of the grammar
    assert len(scripted_model.requests) == 38 + 2  # two of the three duplicates were written again


def test_a_duplicate_that_stays_one_is_reported(tmp_path: Path, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply("Fresh plants delivered.")
    src = write(tmp_path / "p.csv", "facts\nan online plant shop\n")
    code, _ = run_cli(
        str(src), "--model", "scripted", "--pack", "x-thread", "--posts", "2", "--out", str(tmp_path / "o.csv")
    )
    rows = read_csv(tmp_path / "o.csv")
    assert code == 1
    assert rows[0]["error"] == "" and rows[1]["error"] == "the same text as post 1 after 4 tries"


def test_a_packs_text_no_writer_would_keep_is_written_again(tmp_path: Path, scripted_model: ScriptedBackend) -> None:
    replies = iter(
        [
            "Here's a possible X post: bread.",  # talks about itself
            "Our sourdough is back on Saturdays.",
            "Come early: the loaves go by ten.",
        ]
    )
    scripted_model.reply(lambda m, o: next(replies))
    src = write(tmp_path / "p.csv", "facts\nsourdough on Saturdays\n")
    code, err = run_cli(
        str(src), "--model", "scripted", "--pack", "x-thread", "--posts", "2", "--concurrency", "1",
        "--out", str(tmp_path / "o.csv"),
    )  # fmt: skip
    rows = read_csv(tmp_path / "o.csv")
    assert code == 0, err
    assert [r["text"] for r in rows] == ["Come early: the loaves go by ten.", "Our sourdough is back on Saturdays."]
    assert len(scripted_model.requests) == 3


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    assert run_cli(str(tmp_path / "missing.csv"))[0] == 2
    code, err = run_cli(str(write(tmp_path / "a.txt", "x")))
    assert code == 2 and "give a .csv or .xlsx file" in err
    code, err = run_cli(str(write(tmp_path / "e.csv", "instruction,target\n")))
    assert code == 2 and "has no rows" in err


def test_an_id_repeated_is_an_error_on_the_later_row(tmp_path: Path, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply("Sea wind salt light stone.")
    src = write(tmp_path / "in.csv", "id,instruction,target\nx,Write one,5\nx,Write two,5\n")
    run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(tmp_path / "o.csv"))
    rows = read_csv(tmp_path / "o.csv")
    assert rows[0]["verified"] == "true" and rows[1]["error"] == "id 'x' repeats row 1"


def test_the_runner_runs_at_most_the_backends_slots_at_once(tmp_path: Path, scripted_model: ScriptedBackend) -> None:
    import threading

    from capel_ui.backends import Turn

    live, most, lock = [0], [0], threading.Lock()

    def slow(messages, options):
        with lock:
            live[0] += 1
            most[0] = max(most[0], live[0])
        time.sleep(0.8)
        with lock:
            live[0] -= 1
        return Turn(("Sea wind salt light stone.",))

    scripted_model.reply(slow)
    data = ("instruction,target\n" + "Write a headline,5\n" * 6).encode()
    table = read_table(data, "in.csv")
    batch = Batch(table, data, Options(model="scripted", mode="baseline"), get_engine(), concurrency=3)
    batch.run()
    assert most[0] == 3
    assert batch.progress.done == 6 and batch.progress.verified == 6
    assert len(saved_runs(get_engine(), batch.id)) == 6


def test_each_row_is_saved_running_with_its_batch_and_key_before_its_model_is_asked(
    scripted_model: ScriptedBackend,
) -> None:
    """What History holds as each row's model is asked: the rows before it closed, this one `running` under the
    batch and its row key (so a batch killed then leaves it for the next run to close and write again)."""
    from capel_ui.backends import Turn

    seen: list[list[tuple[str, str | None, str | None]]] = []

    def look(messages, options):
        seen.append(sorted((r.batch_row, r.batch_id, r.status) for r in list_runs(get_engine())))
        return Turn(("Sea wind salt light stone.",))

    scripted_model.reply(look)
    data = b"id,instruction,target\na,Write a headline,5\nb,Write another,5\n"
    batch = Batch(
        read_table(data, "in.csv"), data, Options(model="scripted", mode="baseline"), get_engine(), concurrency=1
    )
    batch.run()
    bid = batch.id
    assert seen == [[("a", bid, "running")], [("a", bid, "complete"), ("b", bid, "running")]]


# ----- resume after a SIGKILL ---------------------------------------------------------------------------------

FAST = ok(["Sea", " wind", " salt", " light", " stone."])
SLOW = ok(["Sea", " wind", " salt", " light", " stone."], delay=0.6)
"""A text that takes 3 s: the one on its way when the batch is stopped (the texts before and after it are the
scripted server's fastest, so a run waits only on its process)."""


def test_a_batch_killed_half_way_and_run_again_finishes_the_rest_and_has_each_row_once(
    tmp_path: Path, scripted
) -> None:
    scripted.script(*[FAST] * 3, SLOW, then=FAST)  # the fourth text is on its way when the run is killed
    rows = "".join(f"r{i},Write headline {i},5,keep {i}\n" for i in range(1, 9))
    src = write(tmp_path / "in.csv", "id,instruction,target,note\n" + rows)
    out = tmp_path / "out.csv"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the test's own database (DATABASE_URL), read here after
    args = [str(src), "--out", str(out), "--model", MODEL, "--base-url", scripted.url, "--mode", "baseline"]
    args += ["--concurrency", "1"]
    argv = [sys.executable, "-m", "capel_ui", "batch", *args]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:  # kill it once three texts are written and the fourth is on its way
        lines.append(line)
        if line.startswith("[3/8]"):
            # the fourth run is saved before its request: it is on its way once the server has that request
            deadline = time.monotonic() + 10
            while len(scripted.chat_requests) < 4 and time.monotonic() < deadline:
                time.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, lines
    left = read_csv(out)  # written as rows finished, whole each time: every row, the finished ones verified
    assert [r["id"] for r in left] == [f"r{i}" for i in range(1, 9)] and left[0]["verified"] == "true"
    assert {r["error"] for r in left if r["verified"] != "true"} == {
        "not written yet: run the same batch again to finish it"
    }
    engine = get_engine()
    first = list_runs(engine)
    assert 3 <= len([r for r in first if r.status == "complete"]) < 8
    [killed] = [r for r in first if r.status == "running"]  # the fourth, on its way at the kill
    code, err = run_cli(*args)  # run again (in this process: only the kill needs a process of its own)
    assert code == 0, err
    assert re.search(r"[3-7] complete from before", err)
    closed = get_run(engine, killed.id)  # closed as interrupted when the batch resumed, not left "running"
    assert (closed.status, history_rows([closed])[0]["status"]) == ("interrupted", "interrupted")
    assert "killed" in closed.failure
    result = read_csv(out)
    assert [r["id"] for r in result] == [f"r{i}" for i in range(1, 9)]
    assert [r["note"] for r in result] == [f"keep {i}" for i in range(1, 9)]
    assert all(r["verified"] == "true" for r in result)
    complete = [r for r in list_runs(engine) if r.status == "complete"]
    assert sorted(r.batch_row for r in complete) == sorted(f"r{i}" for i in range(1, 9))  # each written once
    assert len({r["run_id"] for r in result}) == 8


def test_ctrl_c_writes_what_is_done_says_what_is_not_and_the_next_run_finishes(tmp_path: Path, scripted) -> None:
    scripted.script(FAST, FAST, SLOW, then=FAST)  # the third text is on its way at the Ctrl-C
    src = write(tmp_path / "in.csv", "instruction,target\n" + "".join(f"Write headline {i},5\n" for i in range(6)))
    out = tmp_path / "out.xlsx"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the test's own database (DATABASE_URL)
    args = [str(src), "--out", str(out), "--model", MODEL, "--base-url", scripted.url, "--mode", "baseline"]
    args += ["--concurrency", "1"]
    argv = [sys.executable, "-m", "capel_ui", "batch", *args]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if line.startswith("[2/6]"):
            proc.send_signal(signal.SIGINT)
            break
    tail = proc.stderr.read()
    assert proc.wait(timeout=60) == 130, tail
    assert "run the same command again to finish the rest" in tail
    rows = read_table(out.read_bytes(), "out.xlsx").rows
    assert len(rows) == 6
    assert 2 <= sum(r["verified"] == "true" for r in rows) < 6
    assert {r["error"] for r in rows if r["verified"] != "true"} <= {
        "not written yet: run the same batch again to finish it",
        "stopped before it finished: run the same batch again to write it",
    }
    code, err = run_cli(*args)  # run again (in this process: only the Ctrl-C needs a process of its own)
    assert code == 0, err
    assert [r["verified"] for r in read_table(out.read_bytes(), "out.xlsx").rows] == ["true"] * 6


# ----- the embedded model -------------------------------------------------------------------------------------


@pytest.mark.model
def test_the_embedded_model_writes_a_small_mixed_batch_every_text_verified(tmp_path: Path) -> None:
    src = write(
        tmp_path / "in.csv",
        "instruction,target,unit\nWrite a headline about a lighthouse,8,\nDescribe a ceramic mug,at most 60,chars\n"
        "Write a slogan for a bakery,6-8,en_words\n",
    )
    code, err = run_cli(str(src), "--out", str(tmp_path / "out.xlsx"))
    rows = read_table((tmp_path / "out.xlsx").read_bytes(), "out.xlsx").rows
    assert code == 0, err
    assert [r["verified"] for r in rows] == ["true"] * 3
    assert count(rows[0]["text"], "en_words") == 8
    assert count(rows[1]["text"], "chars") <= 60
    assert 6 <= count(rows[2]["text"], "en_words") <= 8


# ----- the page -------------------------------------------------------------------------------------------------


def test_the_batch_page_previews_the_example_writes_it_and_offers_both_downloads(
    scripted_model: ScriptedBackend, app_test
) -> None:
    scripted_model.capabilities = Capabilities(grammar_field="grammar")
    scripted_model.reply(
        lambda m, o: "Seaside books by the sea." if "characters" in m[-1]["content"] else " ".join(["word"] * 30)
    )
    at = app_test
    at.selectbox(key="provider").set_value("scripted").run()
    at.switch_page("app_pages/batch.py").run()
    assert [b.label for b in at.button if b.label == "Try the example"]
    next(b for b in at.button if b.label == "Try the example").click().run()
    assert not at.exception, at.exception
    preview = at.dataframe[0].value
    assert list(preview["row"]) == ["mug", "shop", "scarf"]
    assert preview["asks"][1].startswith("exact · at most 30 characters · Write a Google Ads headline")
    next(b for b in at.button if b.label == "Write 3 texts").click().run()
    assert not at.exception, at.exception
    assert any(s.value == "2 of 3 verified" for s in at.subheader)  # the scarf's 30 words miss 8-10
    result = at.dataframe[-1].value
    assert list(result["id"]) == ["mug", "shop", "scarf"]
    assert list(result["verified"]) == [True, True, False]
    assert list(result["category"]) == ["kitchen", "ads", "clothes"]
    assert {r.origin for r in list_runs(get_engine())} == {"batch"}
    at.run()  # drawn again: the same batch, found complete, nothing left to write
    assert not [b for b in at.button if b.label.startswith("Write")]
    assert any("3 written already" in c.value for c in at.caption)


def test_a_junk_row_is_not_a_text_to_publish_in_the_output_never_ends_naturally(
    tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    scripted_model.capabilities, scripted_model.ending = Capabilities(end_probability=True), 0.9
    scripted_model.reply(
        lambda messages, options: "Lighthouse: 1. 2. 3. 4." if "lighthouse" in str(messages) else "Tea in a blue mug."
    )
    src = write(
        tmp_path / "in.csv", "id,instruction,target\nj,Write a headline about a lighthouse,5\nk,Describe a mug,5\n"
    )
    run_cli(str(src), "--model", "scripted", "--mode", "baseline", "--out", str(tmp_path / "out.csv"))
    endings = {r["id"]: r["ending"] for r in read_csv(tmp_path / "out.csv")}
    assert endings == {"j": "not a text to publish", "k": "ends naturally"}

"""`python -m capel_ui`: output, exit codes (0 exact, 1 not, 2 bad input, 3 backend failed) and messages."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from capel_ui.backends import Capabilities, Turn
from capel_ui.cli import main
from capel_ui.counting import count
from capel_ui.prompts import build_prompt
from capel_ui.storage import get_engine, list_runs
from tests.cli_process import interrupt_generate
from tests.scripted_server import MODEL, honour_grammar, ok, status

ROOT = Path(__file__).resolve().parent.parent
PAPER_EXAMPLE = "<5>Hello,<4>world!<3>How's<2>everything?<1>Great.<0>"
CHECK_KEYS = {
    "target",
    "target_kind",
    "target_low",
    "count",
    "exact",
    "valid",
    "verified",
    "countdown_end",
    "errors",
    "text",
}


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def run_module(*argv: str, stdin: bytes = b"", timeout: float = 300) -> subprocess.CompletedProcess[bytes]:
    """The real entry point, from the repository root, as a user types it."""
    command = [sys.executable, "-m", "capel_ui", *argv]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(command, cwd=ROOT, input=stdin, capture_output=True, timeout=timeout, env=env)


def generate_on(server, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    """`generate` on the scripted HTTP server (for what is sent over the wire)."""
    return run("generate", "--model", MODEL, "--base-url", server.url, *argv, stdin=stdin)


def generate_scripted(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    """`generate` on the staged in-process scripted model (`scripted_model`)."""
    return run("generate", "--model", "scripted", *argv, stdin=stdin)


# ----- prompt -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "lang", "target", "mode", "marker"),
    [
        (["--target", "5"], "en", 5, "capel", "<5>"),
        (["--target", "12", "--lang", "zh"], "zh", 12, "capel", "<12>"),
        (["--target", "40", "--mode", "baseline"], "en", 40, "baseline", "exactly 40 words"),
    ],
)
def test_prompt_prints_the_instruction_with_the_length_suffix(argv, lang, target, mode, marker):
    code, out, err = run("prompt", *argv, "Describe a lighthouse")
    assert code == 0 and err == ""
    assert out == build_prompt("Describe a lighthouse", lang, target, mode) + "\n"
    assert out.startswith("Describe a lighthouse\n\n") and marker in out


# ----- count --------------------------------------------------------------------------------------------

COUNTS = [
    ("en_words", "It's 3.14, well-known — truly.", 4),
    ("zh_chars", "今天天气很好，我们去AI公园！", 12),
    ("zh_words", "我爱北京天安门。", 4),
    ("lifebench", "don’t stop 我爱", 5),
]


@pytest.mark.parametrize(("unit", "text", "expected"), COUNTS)
def test_count_reads_standard_input(unit, text, expected):
    assert run("count", "--unit", unit, stdin=text) == (0, f"{expected}\n", "")


@pytest.mark.parametrize(("unit", "text", "expected"), COUNTS)
def test_count_reads_a_file(tmp_path, unit, text, expected):
    path = tmp_path / "text.txt"
    path.write_text(text, encoding="utf-8")
    assert run("count", "--unit", unit, str(path)) == (0, f"{expected}\n", "")


def test_count_defaults_to_english_words():
    assert run("count", stdin="one two three") == (0, "3\n", "")


def test_count_reads_utf8_standard_input_in_a_real_process():
    done = run_module("count", "--unit", "zh_chars", "-", stdin="今天天气很好。".encode())
    assert (done.returncode, done.stdout, done.stderr) == (0, b"6\n", b"")


# ----- check --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "raw", "exit_code", "exact", "valid", "text"),
    [
        (["--target", "5"], PAPER_EXAMPLE, 0, True, True, "Hello, world! How's everything? Great."),
        (["--target", "6"], PAPER_EXAMPLE, 1, False, False, "Hello, world! How's everything? Great."),
        (["--target", "5"], "<5>Quick<4>demo<3>ends<0>", 1, False, False, "Quick demo ends"),
        (["--target", "3", "--lang", "zh"], "<3>今<2>天<1>好。<0>", 0, True, True, "今天好。"),
        (["--at-most", "10"], "<10>Quick<9>demo<8>ends.<0>", 0, True, True, "Quick demo ends."),  # the room left
        (["--range", "5-10"], "<10>Quick<9>demo<8>ends.<0>", 1, False, False, "Quick demo ends."),  # below 5
    ],
)
def test_check_prints_the_verdict_as_json_and_exits_by_it(argv, raw, exit_code, exact, valid, text):
    code, out, err = run("check", *argv, stdin=raw)
    assert code == exit_code and err == ""
    result = json.loads(out)
    assert set(result) == CHECK_KEYS
    assert (result["exact"], result["valid"], result["text"]) == (exact, valid, text)
    assert result["count"] == count(text, "en_words" if "zh" not in argv else "zh_chars")
    assert bool(result["errors"]) is not valid


def test_check_reports_each_marker_error_with_its_type():
    code, out, _ = run("check", "--target", "5", stdin="<5>Quick<4>demo<3>ends<0>")
    result = json.loads(out)
    assert code == 1
    assert result["countdown_end"] == 0
    assert result["errors"] and all({"type", "message"} <= set(e) for e in result["errors"])


def test_check_reads_a_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text(PAPER_EXAMPLE, encoding="utf-8")
    code, out, _ = run("check", "--target", "5", str(path))
    assert code == 0 and json.loads(out)["exact"] is True


# ----- bad input: exit 2, one line saying what was wrong and what is accepted --------------------------------


def non_utf8_file(tmp_path: Path) -> str:
    path = tmp_path / "latin1.txt"
    path.write_bytes("café crème".encode("latin-1"))
    return str(path)


BAD_INPUT = [
    pytest.param(["prompt", "--target", "0", "x"], ["0", "from 1 to 10000"], id="target_zero"),
    pytest.param(["prompt", "--target", "-5", "x"], ["-5", "from 1 to 10000"], id="target_negative"),
    pytest.param(["check", "--target", "10001", "-"], ["10001", "from 1 to 10000"], id="target_too_big"),
    pytest.param(["prompt", "--target", "abc", "x"], ["'abc'", "whole number from 1 to 10000"], id="target_nan"),
    pytest.param(["prompt", "--lang", "fr", "--target", "5", "x"], ["'fr'", "en", "zh"], id="unknown_language"),
    pytest.param(["count", "--unit", "nope"], ["'nope'", "en_words", "zh_chars", "lifebench"], id="unknown_unit"),
    pytest.param(["count", "no/such/file.txt"], ["no/such/file.txt", "UTF-8 text file"], id="missing_file"),
    pytest.param(["count", non_utf8_file], ["latin1.txt", "not UTF-8", "UTF-8 text file"], id="non_utf8_file"),
    pytest.param(["check", "--target", "5", non_utf8_file], ["not UTF-8"], id="non_utf8_file_to_check"),
    pytest.param(["generate", "--target", "5", "--temperature", "3", "x"], ["temperature", "0 to 2"], id="temperature"),
    pytest.param(
        ["generate", "--target", "5", "--temperature", "nan", "x"], ["temperature", "finite"], id="temperature_nan"
    ),
    pytest.param(
        ["generate", "--target", "5", "--time-limit", "nan", "x"], ["time limit", "finite"], id="time_limit_nan"
    ),
    pytest.param(
        ["generate", "--target", "5", "--time-limit", "inf", "x"], ["time limit", "finite"], id="time_limit_inf"
    ),
    pytest.param(
        ["generate", "--target", "5", "--model", "mystery-9", "x"], ["'mystery-9'", "--base-url"], id="unknown_model"
    ),
    pytest.param(["generate", "--target", "5", "   "], ["instruction is empty"], id="empty_instruction"),
    pytest.param(["frobnicate"], ["'frobnicate'", "generate"], id="unknown_command"),
    pytest.param([], ["required"], id="no_command"),
]


@pytest.mark.parametrize(("argv", "words"), BAD_INPUT)
def test_bad_input_exits_2_with_one_line_naming_the_problem(tmp_path, argv, words):
    argv = [a(tmp_path) if callable(a) else a for a in argv]
    code, out, err = run(*argv)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and err.startswith("capel_ui: error: ")
    for word in words:
        assert word in err


def test_exact_mode_on_a_model_without_grammar_is_bad_input_and_calls_nothing(scripted_model):
    code, out, err = generate_scripted("--mode", "exact", "--target", "5", "Describe a lighthouse")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "does not take a grammar" in err
    assert scripted_model.requests == []


def test_exact_mode_in_an_unguaranteed_unit_is_bad_input(scripted_model):
    scripted_model.capabilities = Capabilities(grammar_field="grammar")
    argv = ["--mode", "exact", "--unit", "zh_words", "--lang", "zh", "--target", "5"]
    code, _, err = generate_scripted(*argv, "写")
    assert code == 2
    assert len(err.splitlines()) == 1 and "zh_chars" in err
    assert scripted_model.requests == []


def test_exact_mode_on_a_server_that_ignores_its_grammar_field_is_refused_after_one_probe(scripted):
    scripted.script(honour_grammar(("grammar",)))  # llama.cpp-like: knows `grammar`, silently ignores `ebnf`
    code, out, err = generate_on(scripted, "--grammar-field", "ebnf", "--mode", "exact", "--target", "5", "Sea")
    assert (code, out) == (2, "")
    assert "ignored the `ebnf` grammar" in err and "use CAPEL" in err
    assert [r.body["max_tokens"] for r in scripted.chat_requests] == [16]  # the probe, and no run


def test_exact_mode_runs_on_a_server_the_probe_finds_honouring_its_grammar(scripted):
    scripted.script(honour_grammar(("grammar",)), ok(["Waves ", "fold ", "over ", "old ", "stones."]))
    code, out, _ = generate_on(scripted, "--grammar-field", "grammar", "--mode", "exact", "--target", "5", "Sea")
    assert (code, out) == (0, "Waves fold over old stones.\n")
    assert "root ::=" in scripted.chat_requests[1].body["grammar"]  # the run after the probe carries the grammar


def test_capel_mode_on_a_server_with_a_grammar_field_sends_no_probe(scripted):
    scripted.script(ok(["<2>Sea", "<1>wind", "<0>"]))
    code, _, _ = generate_on(scripted, "--grammar-field", "ebnf", "--mode", "capel", "--target", "2", "Sea")
    assert code == 0 and len(scripted.chat_requests) == 1


# ----- generate against a scripted vendor ----------------------------------------------------------------


def test_generate_prints_the_text_and_exits_0_when_exact(scripted_model):
    scripted_model.reply(["Lighthouses ", "guide ", "ships ", "home."])  # a token per chunk: 4 tokens
    code, out, err = generate_scripted("--mode", "baseline", "--target", "4", "Describe a lighthouse")
    assert code == 0
    assert out == "Lighthouses guide ships home.\n"
    assert "4/4" in err and "exact" in err and "4 tokens" in err


def test_generate_exits_1_when_the_count_is_off(scripted_model):
    scripted_model.reply("Just three words.")
    code, out, err = generate_scripted("--mode", "baseline", "--target", "5", "Describe a lighthouse")
    assert code == 1
    assert out == "Just three words.\n"
    assert "3/5" in err and "off by -2" in err


def test_generate_in_capel_mode_prints_the_clean_text_without_markers(scripted_model):
    scripted_model.reply(["<3>One", "<2>two", "<1>three.", "<0>"])
    code, out, _ = generate_scripted("--target", "3", "Count to three")
    assert code == 0
    assert out == "One two three.\n"


def test_generate_reads_the_instruction_from_standard_input(scripted_model):
    scripted_model.reply("One two three.")
    code, _, _ = generate_scripted("--mode", "baseline", "--target", "3", "-", stdin="Count to three, please")
    assert code == 0
    [(messages, _)] = scripted_model.requests
    assert messages[-1]["content"].startswith("Count to three, please\n\n")


def test_generate_refused_key_exits_3_saying_how_to_give_one(scripted, monkeypatch):
    monkeypatch.setenv("CAPEL_API_KEY", "sk-cli-key")
    scripted.script(status(401, "Incorrect API key provided"))
    code, out, err = generate_on(scripted, "--mode", "baseline", "--target", "5", "Describe a lighthouse")
    assert code == 3
    assert scripted.chat_requests[-1].key == "sk-cli-key"
    assert "refused the API key" in err and "CAPEL_API_KEY" in err
    assert "sk-cli-key" not in out + err


def test_generate_cut_stream_exits_3_with_the_partial_text_in_json(scripted_model):
    scripted_model.reply(Turn(("The lamp ", "turned ", "all night"), fail="cut"))  # the wire's cut: test_backends
    code, out, err = generate_scripted("--mode", "baseline", "--target", "20", "--json", "Describe a lighthouse")
    assert code == 3
    result = json.loads(out)
    assert result["status"] == "partial"
    assert result["text"] == "The lamp turned all night" and result["count"] == 5
    assert result["exact"] is False and "cut" in result["failure"]
    assert "was cut" in err


def test_generate_unreachable_server_exits_3_naming_the_url(scripted):
    url = scripted.url
    scripted.stop()
    code, _, err = run("generate", "--model", MODEL, "--base-url", url, "--mode", "baseline", "--target", "5", "x")
    assert code == 3
    assert url in err


# ----- generate with the embedded model ------------------------------------------------------------------


@pytest.mark.model
def test_generate_json_has_the_run_details(embedded):
    argv = ["generate", "--mode", "exact", "--target", "12", "--seed", "4", "--json"]
    code, out, _ = run(*argv, "Describe a lighthouse")
    assert code == 0
    result = json.loads(out)
    assert {"model", "mode", "raw", "seconds", "prompt_tokens", "completion_tokens"} <= set(result)
    assert set(result) >= CHECK_KEYS
    assert (result["model"], result["mode"], result["status"]) == ("embedded", "exact", "complete")
    assert result["count"] == 12 and result["exact"] and result["valid"]
    assert result["prompt_tokens"] > 0 and result["completion_tokens"] >= 12 and result["seconds"] > 0
    assert result["raw"].strip() == result["text"]


@pytest.mark.model
def test_acceptance_generate_exact_37_words_from_the_command_line():
    """Seed 4: the model wants to end after 11 words, is asked for more and keeps its own text with its ending
    written again (about 4 s of model time). Only the final text is printed: the stream printed nothing the padded
    text did not keep (test_planned_endings.py has the search's and the call for more's own tests)."""
    done = run_module("generate", "--mode", "exact", "--target", "37", "--seed", "4", "Describe a lighthouse")
    assert done.returncode == 0, done.stderr.decode()
    text = done.stdout.decode()
    assert count(text, "en_words") == 37 and text.count("\n") == 1
    assert "37/37" in done.stderr.decode()


@pytest.mark.parametrize(
    ("signals", "as_json"),
    [((signal.SIGINT,), True), ((signal.SIGTERM,), False), ((signal.SIGINT, signal.SIGINT), True)],
    ids=["ctrl_c", "sigterm_text", "ctrl_c_twice"],
)
def test_ctrl_c_stops_the_run_keeps_the_text_and_exits_130(scripted, signals, as_json):
    """A real process (a few seconds each): the JSON and the text output, and the run left in History, are checked
    here at once (test_cli_history's Ctrl-C test was the text-mode run)."""
    scripted.script(ok(["word "] * 60, delay=0.1))
    json_flag = ["--json"] if as_json else []
    code, out, err = interrupt_generate(
        scripted, "--mode", "baseline", "--target", "60", *json_flag, after=1.0, signals=signals
    )
    assert code == 130, err  # some words arrived, not all 60
    (row,) = list_runs(get_engine())
    assert (row.status, row.verified) == ("cancelled", False) and 1 <= row.count < 60  # a second Ctrl-C too
    if as_json:
        result = json.loads(out)
        assert result["status"] == "cancelled" and result["run_id"] == row.id
        assert 1 <= result["count"] < 60 and result["text"] == " ".join(["word"] * result["count"])
        assert f"interrupted: kept {result['count']} English words" in err
    else:
        assert f"interrupted: kept {row.count} English words" in err
        assert out.split() == row.text.split() == ["word"] * row.count  # text mode prints what was kept


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ("Here's a possible X post: our bakery sells sourdough.", "warning: the text talks about itself"),
        ("Bread bread bread bread is good.", "warning: “Bread” repeats over and over"),
        ("Our bakery sells fresh sourdough.", None),
    ],
)
def test_generate_says_under_the_verdict_what_the_pages_warn_of(scripted_model, reply: str, said: str | None) -> None:
    scripted_model.reply(reply)
    out, err = io.StringIO(), io.StringIO()
    argv = ["generate", "--model", "scripted", "--mode", "baseline", "--target", "8", "--no-save", "Write a post."]
    main(argv, stdin=io.StringIO(), stdout=out, stderr=err)
    warned = [line for line in err.getvalue().splitlines() if line.startswith("warning:")]
    assert (said is None and not warned) or (said is not None and any(w.startswith(said) for w in warned)), warned


def test_a_second_ctrl_c_while_the_run_saves_waits_for_the_save(scripted):
    """The final save is held up by another process's lock on the database (as a slow disk or a busy History would);
    a second Ctrl-C lands during it: the run is still saved, cancelled, with every word that was printed."""
    scripted.script(ok(["word "] * 60, delay=0.1))
    get_engine()  # the database exists (migrated) before another process locks it
    path = os.environ["DATABASE_URL"].removeprefix("sqlite:///")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def before(i: int) -> None:
        if i == 0:
            other.execute("BEGIN EXCLUSIVE")  # taken just before the first Ctrl-C: its final save waits
        else:
            threading.Timer(1.0, lambda: other.execute("ROLLBACK")).start()  # released after the second

    twice = (signal.SIGINT, signal.SIGINT)
    code, out, err = interrupt_generate(
        scripted, "--mode", "baseline", "--target", "60", after=1.0, signals=twice, gap=0.5, before=before
    )
    other.close()
    assert code == 130, err
    assert "Traceback" not in err
    (row,) = list_runs(get_engine())
    assert (row.status, row.verified) == ("cancelled", False) and 1 <= row.count < 60
    assert out.split() == row.text.split() == ["word"] * row.count

"""What a run saves when the server or the database misbehaves: a key the server wrote into its answer is masked in
the saved text and every export (the notice says so), and a locked database does not hold the first words back."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import time

import pytest

from capel_ui.backends import get_backend
from capel_ui.cli import main
from capel_ui.generation import Generation, Request
from capel_ui.runs import LiveRun
from capel_ui.storage import get_engine, list_runs
from tests.cli_process import interrupt_generate
from tests.scripted_server import MODEL, cut_after, ok

KEY = "sk-ant-secret-0123456789"


def test_a_key_the_server_writes_into_its_answer_is_masked_in_history_and_exports(scripted, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", scripted.url)
    scripted.script(ok(["Your key is sk-ant-secret-", "0123456789 and more words."]))  # split across chunks
    argv = ["generate", "--model", "claude-sonnet-4-5", "--mode", "baseline", "--target", "7", "Echo."]
    main(argv, stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    [run] = list_runs(get_engine())
    assert run.text == "Your key is *** and more words." and KEY not in run.raw
    assert "API key this run was sent with" in run.notice
    out = io.StringIO()
    assert main(["history", "--csv", "-"], stdin=io.StringIO(), stdout=out, stderr=io.StringIO()) == 0
    assert KEY not in out.getvalue() and "Your key is ***" in out.getvalue()


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_a_key_the_server_writes_into_its_answer_never_reaches_the_terminal(scripted, monkeypatch, json_out):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", scripted.url)
    scripted.script(ok(["Your key is s", "k-ant-secret-01", "23456789 and more words."]))
    argv = ["generate", "--model", "claude-sonnet-4-5", "--mode", "baseline", "--target", "7", "Echo."]
    out, err = io.StringIO(), io.StringIO()
    main(argv + (["--json"] if json_out else []), stdin=io.StringIO(), stdout=out, stderr=err)
    assert KEY not in out.getvalue() + err.getvalue() and "Your key is ***" in out.getvalue()


def test_a_stream_cut_right_after_a_keys_first_letters_keeps_them(scripted, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", scripted.url)
    scripted.script(cut_after(["Three short words sk"]))  # "sk" could begin the key: held, then the cut
    argv = ["generate", "--model", "claude-sonnet-4-5", "--mode", "baseline", "--target", "7", "Echo."]
    main(argv, stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    [run] = list_runs(get_engine())
    assert run.text == "Three short words sk"


def test_a_locked_database_does_not_hold_back_the_first_words(scripted):
    engine = get_engine()
    other = sqlite3.connect(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    scripted.script(ok(["One two ", "three four."]))
    backend = get_backend(MODEL, base_url=scripted.url)
    began = time.monotonic()
    live = LiveRun(Generation(backend, Request("Count.", 4, mode="baseline")), engine, origin="cli")
    stream = live.stream()
    assert next(stream) == "One two "
    assert time.monotonic() - began < 3.0  # SQLite's busy timeout (5 s, storage.engine) did not come first
    other.execute("ROLLBACK")
    other.close()
    assert list(stream) == ["three four."]
    [run] = list_runs(engine)
    assert (run.id, run.status, run.text, run.verified) == (live.run_id, "complete", "One two three four.", True)


def test_a_second_ctrl_c_while_a_locked_database_holds_the_save_leaves_with_the_text_and_says_it_is_unsaved(scripted):
    """Another program keeps the database locked: the first Ctrl-C's save waits on it; the second asks not to try
    again, so the command leaves within one busy timeout (5 s), not the half minute of every retry, and says the text
    it printed is the only copy."""
    scripted.script(ok(["word "] * 60, delay=0.1))
    get_engine()  # the database exists (migrated) before another process locks it
    other = sqlite3.connect(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), isolation_level=None)
    ended: list[float] = []

    def before(i: int) -> None:
        if i == 0:
            other.execute("BEGIN EXCLUSIVE")  # held until the command has left
        ended.append(time.monotonic())

    code, out, err = interrupt_generate(
        scripted,
        "--mode",
        "baseline",
        "--target",
        "60",
        after=1.0,
        signals=(signal.SIGINT,) * 2,
        gap=1.0,
        before=before,
    )
    waited = time.monotonic() - ended[-1]
    other.close()
    assert (code, "only copy" in err, "Traceback" in err) == (3, True, False), err
    assert out.split() and set(out.split()) == {"word"}
    assert waited < 15, f"left {waited:.0f} s after the second Ctrl-C"

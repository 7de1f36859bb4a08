"""A reply that is one enormous "word" in one chunk costs what any reply of its size costs: the run stops as an
overrun and is saved, partial, with the text that arrived. (The quality check once tried every split of a word
in two, each looked up in wordfreq: a 25,000-letter word took 80 s, 5 MB never finished; the timing is in
benchmarks/cli_speed.py.)"""

from __future__ import annotations

import io
import threading

import pytest

from capel_ui.cli import main
from capel_ui.quality import loops
from capel_ui.storage import get_engine, list_runs
from capel_ui.vocab import EXIT_MISS

WORD = "a" * 100_000


@pytest.mark.parametrize("mode", ["capel", "baseline"])
def test_a_one_word_reply_of_100_000_letters_is_saved_partial_as_an_overrun(scripted_model, mode: str) -> None:
    scripted_model.reply([WORD])  # a repair call gets the same
    argv = ["generate", "--model", "scripted", "--mode", mode, "--target", "50", "Sea"]
    err = io.StringIO()
    code = main(argv, stdin=io.StringIO(), stdout=io.StringIO(), stderr=err)
    assert code == EXIT_MISS
    assert "Stopped after 100,000 characters: a single word ran past 7,500 characters" in err.getvalue()
    [run] = list_runs(get_engine())
    assert (run.status, run.failure_kind, run.mode) == ("partial", "overrun", mode)
    assert run.text == WORD


@pytest.mark.parametrize("reply", ["word " * 20_000, "a b " * 20_000, "the cat sat " * 20_000])
def test_the_loop_check_of_a_long_runaway_reply_finishes(reply: str) -> None:
    # One word over and over made the back-to-back phrase check scan to the end of the text from every word:
    # 5 MB of "word word …" kept `generate` saving for over 40 minutes. Fixed, this takes milliseconds.
    done: list[list[str]] = []
    worker = threading.Thread(target=lambda: done.append(loops(reply)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert done and done[0], "the loop check did not finish within a minute"

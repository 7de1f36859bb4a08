"""The natural-ending score: asked of the model after every complete run, stored with it, shown in plain words."""

from __future__ import annotations

import math
import os

import pytest

from capel_ui.backends import Turn, get_backend
from capel_ui.ending import CLOSE_MIN, NATURAL, close_probability, ending_score, ending_words, natural_share
from capel_ui.generation import Generation, Request
from capel_ui.history import history_rows, show_run
from capel_ui.runs import LiveRun
from capel_ui.storage import get_engine, get_run

TEXT = "Lighthouses guide ships home."


def engine():
    return get_engine(os.environ["DATABASE_URL"])


def saved(scripted_model, ending, reply=TEXT, *, target: int = 4):
    """A run of the scripted model that says `ending` of any text, saved; its row."""
    scripted_model.ending = ending
    scripted_model.reply(reply)
    request = Request("Describe a lighthouse.", target, mode="baseline")
    live = LiveRun(Generation(get_backend("scripted"), request), engine(), origin="cli")
    live.run()
    return get_run(engine(), live.run_id)


@pytest.mark.parametrize(
    ("p", "words"),
    [(None, None), (0.0, "cut off"), (0.49, "cut off"), (NATURAL, "ends naturally"), (1.0, "ends naturally")],
)
def test_an_ending_is_natural_from_even_odds_on(p, words) -> None:
    assert ending_words(p) == words


def test_the_natural_share_counts_only_scored_texts() -> None:
    assert natural_share([0.9, 0.1, None, 0.5]) == pytest.approx(2 / 3)
    assert natural_share([None]) is None


@pytest.mark.parametrize(("p", "words"), [(0.8, "ends naturally"), (0.05, "cut off")])
def test_the_ending_score_is_asked_after_the_run_stored_and_said_in_plain_words(scripted_model, p, words) -> None:
    run = saved(scripted_model, p)
    assert run.end_probability == p
    [(messages, text)] = scripted_model.endings_asked
    assert text == TEXT  # the clean text, as the model's answer ...
    assert messages[-1]["content"].startswith("Describe a lighthouse.")  # ... to the instruction with its length
    assert "in exactly 4 words" in messages[-1]["content"]
    assert history_rows([run])[0]["ending"] == words


def test_a_cut_off_ending_costs_points_and_says_so_in_history(scripted_model) -> None:
    natural = saved(scripted_model, 0.9)
    cut = saved(scripted_model, 0.0)
    assert natural.score - cut.score == pytest.approx(3.0)
    shown = show_run(cut)
    assert "ending: The model would have gone on (ending score 0.00: its probability of stopping here" in shown
    assert "score" in shown and "last sentence cut off" in shown


def test_a_server_that_cannot_say_leaves_the_ending_unknown(scripted_model) -> None:
    run = saved(scripted_model, None)
    assert run.end_probability is None and history_rows([run])[0]["ending"] == ""
    assert "ending:" not in show_run(run)


def test_a_run_that_did_not_complete_is_not_scored(scripted_model) -> None:
    run = saved(scripted_model, 0.9, Turn(("Lighthouses ", "guide"), fail="cut"))
    assert run.status == "partial" and run.end_probability is None
    assert scripted_model.endings_asked == []


def test_write_shows_a_cut_off_ending_beside_the_verdict_as_a_warning(app_test, scripted_model) -> None:
    run = saved(scripted_model, 0.02)
    app_test.session_state["w_run_id"] = run.id
    app_test.run()
    assert not app_test.exception, app_test.exception
    marks = [m.value for m in app_test.markdown]
    assert [m for m in marks if "-badge[" in m] == [":green-badge[✓ exact · verified · 4/4 English words]"]
    assert ":orange-background[:material/warning: cut off]" in marks  # the count's badge stays the count's
    assert any("would have gone on" in w.value for w in app_test.warning)


@pytest.mark.model
def test_the_embedded_model_scores_a_finished_answer_above_a_cut_one(embedded) -> None:
    """The real model: its own finished sentence ends; the same sentence cut before its last word does not."""
    messages = [{"role": "user", "content": "Write a headline for a seaside pub.\n\nPlease answer in exactly 7 words."}]
    finished = embedded.end_probability(messages, "The Whaler's Rest: fresh seafood by the sea.")
    cut = embedded.end_probability(messages, "The Whaler's Rest: fresh seafood by the")
    assert finished is not None and cut is not None
    assert finished >= NATURAL > cut


# ----- the close: would the model have ended its last sentence where the text does? --------------------------


@pytest.mark.parametrize(
    ("pieces", "logprobs", "expected"),
    [
        pytest.param([" in", " Italian", "."], [-0.1, -0.15, -0.14], math.exp(-0.14), id="a_stop_the_model_chose"),
        pytest.param([" dish", " named", "."], [-0.5, -2.07, -10.55], math.exp(-10.55), id="a_forced_stop"),
        pytest.param([" and", "rews", "."], [-1.99, -16.7, -4.33], math.exp(-21.03), id="a_word_bent_to_close"),
        pytest.param(["<1>", "cry", ".", "<0>"], [0, -0.5, -0.2, -9], math.exp(-0.2), id="countdown_markers_around"),
        pytest.param(["One", " two", "."], [-1.0], None, id="tokens_and_logprobs_do_not_line_up"),
        pytest.param(["One", " two", "."], [], None, id="no_logprobs"),
    ],
)
def test_close_probability_reads_the_tokens_after_the_last_words_first(pieces, logprobs, expected) -> None:
    got = close_probability(pieces, logprobs)
    assert got == expected if expected is None else got == pytest.approx(expected)


def test_close_probability_stops_at_a_cut_inside_the_text() -> None:
    pieces = [" Fresh", " bread", ".", " Come", " early", " and"]
    assert close_probability(pieces, [-1, -1, -0.3, -2, -1, -9], end=len(" Fresh bread.")) == pytest.approx(
        math.exp(-0.3)
    )


@pytest.mark.parametrize(
    ("end", "close", "expected"),
    [
        (0.8, None, 0.8),
        (None, 0.001, None),
        (0.8, CLOSE_MIN, 0.8),
        (0.8, 0.9, 0.8),
        (0.8, CLOSE_MIN / 100, 0.008),
    ],
    ids=["close_unknown", "p_end_unknown", "close_at_the_line", "natural_close", "forced_close_is_cut_off"],
)
def test_the_ending_score_discounts_a_sentence_closed_where_the_model_would_not(end, close, expected) -> None:
    got = ending_score(end, close)
    assert got == expected if expected is None else got == pytest.approx(expected)

"""An exact text that turns into a list of numbers nobody asked for is written again from the sentence before it,
while it streams: a writer neither waits for eighty words of "1.1.1 2.1.1" nor gets them (issue 45's slowest text)."""

from __future__ import annotations

import io

import pytest

from capel_ui.backends import Turn
from capel_ui.backends.providers.common import LLAMA_CPP
from capel_ui.backends.providers.scripted import ScriptedBackend
from capel_ui.cli import main
from capel_ui.counting import count
from capel_ui.generation import Generation, Request, generate
from capel_ui.quality import list_start
from capel_ui.storage import RunRecord, get_engine, list_runs
from tests.gbnf import matches

INVITE = "Write an invitation to a neighbourhood picnic."
OPENING = "Join us for a picnic in Elm Park on Saturday at midday with food, games and music for every family here."
LISTED = OPENING + " 1.1.1 2.1.1 3.1.1 4.1.2 5.1.1 6.1.1 7.1.1 8.1.1 9.1.1 10.1.1 11.1.1 12.1.1 13.1.1 14.1.1 15.1.1"
"""As the embedded model wrote at 80 words (benchmarks/quality.py, 11.7 s for ~400 tokens): a list nobody asked for."""
REST = " Bring a blanket and a dish to share, and we will bring the lemonade."  # 14 words
NUMBERED = REST.replace("a dish", "2 dishes")  # as many words, one a number
TARGET = count(OPENING + REST, "en_words")  # 35: the opening's 21, then 14


def llama(*replies, **kw) -> ScriptedBackend:
    """A scripted model that declares what llama.cpp can do; its ending reads natural (no search)."""
    return ScriptedBackend(*replies, capabilities=LLAMA_CPP, ending=0.9, **kw)


def by_prefill(first: str, then: str):
    """The first call writes `first`; a call that goes on from a prefill, or the second from the start, `then`."""
    calls: list[int] = []

    def reply(messages, options):
        calls.append(1)
        return first if len(calls) == 1 else then

    return reply


@pytest.mark.parametrize(
    ("text", "own", "begins"),
    [
        pytest.param(LISTED, INVITE, "1.1.1", id="section_numbers_after_a_sentence"),
        pytest.param(OPENING + " 1.1.1 2.1.1 3.1.1", INVITE, "1.1.1", id="the_moment_it_became_one"),
        pytest.param(
            "Here are the ideas I have for staying motivated in the office today, all tried: 1. Rest 2. Eat 3. Walk",
            "",
            "1. Rest",
            id="enumerators",
        ),
        pytest.param(
            "1.1.1133 Tips for Studying Focus-The key to staying focused in study sessions is to plan each hour of the"
            " day well",
            "",
            "1.1.1133",
            id="a_section_heading_first",
        ),
    ],
)
def test_where_a_text_turned_into_a_list_is_found_while_it_streams(text: str, own: str, begins: str) -> None:
    at = list_start(text, own)
    assert at is not None and text[at:].startswith(begins)


@pytest.mark.parametrize(
    ("text", "own"),
    [
        pytest.param("Tips: 1. Rest 2. Eat 3. Walk", "", id="fewer_than_twenty_words_so_far"),
        pytest.param(
            "In 2019, 2020 and 2021 our sales grew as the town grew and the bakery became the place where neighbours "
            "meet for bread.",
            "",
            id="years_in_prose",
        ),
        pytest.param(LISTED, "List the steps to plan a picnic.", id="a_list_was_asked_for"),
        pytest.param(OPENING + REST, INVITE, id="prose"),
    ],
)
def test_prose_and_a_list_asked_for_are_never_a_list_to_drop(text: str, own: str) -> None:
    assert list_start(text, own) is None


def test_an_exact_text_that_turns_into_a_list_goes_on_again_from_the_sentence_before_it() -> None:
    model = llama(by_prefill(LISTED, REST))
    out = generate(model, Request(INVITE, TARGET, mode="exact", seed=5))
    (_, first), (messages, again) = model.requests
    assert out.text == OPENING + REST and out.verified and out.count == TARGET
    assert again.prefill == OPENING and again.seed == first.seed + 1 and messages == model.requests[0][0]
    assert "list of numbers nobody asked for (“1.1.1, 2.1.1, 3.1.1”)" in out.notice and "from word 22" in out.notice
    assert out.planned_ending["list"]["written"].startswith(LISTED[:60])  # what it first wrote is kept


def test_the_call_that_goes_on_after_a_list_must_write_exactly_the_units_left() -> None:
    model = llama(by_prefill(LISTED, REST))
    generate(model, Request(INVITE, TARGET, mode="exact", seed=5))
    grammar = model.requests[1][1].grammar
    assert matches(grammar, REST) and not matches(grammar, REST[:-1] + " too.") and not matches(grammar, OPENING)


def test_what_is_written_again_after_a_list_can_hold_no_number() -> None:
    model = llama(by_prefill(LISTED, REST))
    generate(model, Request(INVITE, TARGET, mode="exact", seed=5))
    first, again = (options.grammar for _, options in model.requests)
    assert matches(first, OPENING + NUMBERED) and not matches(again, NUMBERED)


def test_a_list_in_the_first_sentence_is_written_again_from_the_start() -> None:
    listed = "Picnic: 1.1.1 2.1.1 3.1.1 " + " ".join(f"{i}.1.1" for i in range(4, 40))
    model = llama(by_prefill(listed, OPENING + REST))
    out = generate(model, Request(INVITE, TARGET, mode="exact", seed=5))
    again = model.requests[1][1]
    assert out.text == OPENING + REST and out.verified and again.prefill is None
    assert matches(again.grammar, OPENING + REST) and not matches(again.grammar, OPENING + NUMBERED)
    assert "written again from the start" in out.notice


def test_a_text_that_opened_as_a_numbered_section_is_written_again_from_the_start() -> None:
    heading = "1.1.1133 Tips for Studying Focus-The key to staying focused in study sessions is to plan each hour"
    model = llama(by_prefill(heading + " of the day well and to rest often between the hours of work.", OPENING + REST))
    out = generate(model, Request("Give advice on studying.", TARGET, mode="exact", seed=5))
    assert out.text == OPENING + REST and "written again from the start" in out.notice


def test_a_list_is_written_again_once_and_a_second_list_stands_named_junk() -> None:
    model = llama(LISTED)
    run = Generation(model, Request(INVITE, TARGET, mode="exact", seed=5))
    out = run.run()
    assert len(model.requests) == 2 and out.assessment.junk


@pytest.mark.parametrize(
    "request_",
    [
        pytest.param(Request("List the steps to plan a picnic.", TARGET, mode="exact"), id="a_list_asked_for"),
        pytest.param(Request(INVITE, TARGET, mode="exact", temperature=0), id="greedy_it_would_come_back"),
        pytest.param(Request(INVITE, TARGET, mode="exact", plan_ending=False), id="an_unplanned_run"),
    ],
)
def test_no_list_is_written_again_where_it_was_asked_for_or_would_come_back(request_: Request) -> None:
    model = llama(by_prefill(LISTED, REST))
    generate(model, request_)
    assert len(model.requests) == 1


def test_a_stream_prints_only_what_a_list_written_again_leaves_standing() -> None:
    chunks = tuple(w for w in LISTED.replace(" ", "  ").split(" ") if w)  # word by word
    model = llama(by_prefill(Turn(tuple(" " + c for c in chunks)[:1] + tuple(" " + c for c in chunks[1:])), REST))
    run = Generation(model, Request(INVITE, TARGET, mode="exact", seed=5, ask_more=False))
    seen = [(run.settled_text(), run.view().note) for _ in run.stream()]
    text = run.outcome().text
    assert all(text.startswith(settled.lstrip()) for settled, _ in seen)
    assert any("writing it again from word 22" in note for _, note in seen)


def test_a_second_call_that_breaks_leaves_a_partial_text_and_says_why() -> None:
    model = llama(by_prefill(LISTED, Turn((" Bring a blanket",), fail="cut")))
    out = generate(model, Request(INVITE, TARGET, mode="exact", seed=5))
    assert (out.status, out.verified) == ("partial", False) and out.text.startswith(OPENING)
    assert "written again from word 22" in out.notice


def saved_list_run(model: ScriptedBackend) -> RunRecord:
    """`generate` from the command line, saved: its first text turned into a list and was written again."""
    model.capabilities, model.ending = LLAMA_CPP, 0.9
    model.reply(by_prefill(LISTED, REST))
    err = io.StringIO()
    argv = ["generate", "--model", "scripted", "--mode", "exact", "--target", str(TARGET), "--seed", "5", INVITE]
    assert main(argv, stdin=io.StringIO(), stdout=io.StringIO(), stderr=err) == 0, err.getvalue()
    (run,) = list_runs(get_engine())
    return run


def test_the_first_text_that_turned_into_a_list_is_saved_and_history_shows_it(scripted_model: ScriptedBackend) -> None:
    run, shown, err = saved_list_run(scripted_model), io.StringIO(), io.StringIO()
    assert main(["history", "show", str(run.id)], stdin=io.StringIO(), stdout=shown, stderr=err) == 0
    first = shown.getvalue().split("The first text, which turned into a list of numbers nobody asked for:\n")[1]
    assert run.planned_ending["list"]["kept"] == 21 and first.startswith(OPENING + " 1.1.1 2.1.1 3.1.1")


def test_the_history_page_shows_the_first_text_kept_with_the_run(scripted_model: ScriptedBackend, app_test) -> None:
    saved_list_run(scripted_model)
    app_test.switch_page("app_pages/history.py").run()
    app_test.session_state["h_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app_test.run()
    titles = [c.value for c in app_test.caption if "nobody asked for (kept with the run)" in c.value]
    assert titles and any(t.value.startswith(OPENING + " 1.1.1 2.1.1") for t in app_test.text)

"""Failure kinds are declared once (`vocab.FAILURES`) and every surface reads them from there; a run is one
object, whether it takes one call or several. Real HTTP to the scripted server on 127.0.0.1."""

from __future__ import annotations

import io
import json

import pytest

from capel_ui.backends import get_backend
from capel_ui.bench.runner import run_sample
from capel_ui.cli import main
from capel_ui.generation import Generation, Request
from capel_ui.vocab import EXIT_BACKEND, EXIT_MISS, FAILURE_KINDS, FAILURES, is_answer
from tests.scripted_server import MODEL, countdown, cut_after, empty, endless, html_page, keep_alive, ok, status

# ----- the table ---------------------------------------------------------------------------------------------


def test_every_failure_kind_has_one_spec_saying_what_it_means():
    assert set(FAILURES) == set(FAILURE_KINDS)
    assert all(spec.meaning.strip() for spec in FAILURES.values())


@pytest.mark.parametrize("kind", FAILURE_KINDS)
def test_text_stopped_by_a_limit_is_the_answer_and_never_sent_again(kind):
    spec = FAILURES[kind]
    assert is_answer(kind) is spec.answer
    assert not (spec.answer and spec.retry), "an answer would be thrown away by a retry"


def test_a_deadline_is_the_model_s_answer_like_the_output_limit():
    assert FAILURES["deadline"].answer and FAILURES["length"].answer and FAILURES["overrun"].answer
    assert is_answer(None)


def test_only_transient_failures_are_retried_and_only_the_output_limit_is_continued():
    assert {k for k, s in FAILURES.items() if s.retry} == {"unreachable", "rate_limit", "server"}
    assert {k for k, s in FAILURES.items() if s.resume} == {"length"}


# ----- every surface reads it ---------------------------------------------------------------------------------

CASES = [
    pytest.param("length", lambda: ok(["word "] * 3, finish_reason="length"), {}, id="length"),
    pytest.param("overrun", lambda: endless("word ", delay=0.001), {}, id="overrun"),
    pytest.param("deadline", lambda: endless("word ", delay=0.05), {"time_limit": 1.0}, id="deadline"),
    pytest.param("stalled", lambda: keep_alive(["word "]), {"stall_limit": 1.0}, id="stalled"),
    pytest.param("cut", lambda: cut_after(["word ", "word "]), {}, id="cut"),
    pytest.param("not_openai", html_page, {}, id="not_openai"),
    pytest.param("auth", lambda: status(401, "bad key"), {}, id="auth"),
    pytest.param("empty", empty, {}, id="empty"),
]


@pytest.mark.parametrize(("kind", "behaviour", "limits"), CASES)
def test_cli_exit_code_and_benchmark_status_agree_with_the_failure_table(scripted, kind, behaviour, limits):
    scripted.script(behaviour(), behaviour())
    argv = [f"--{name.replace('_', '-')}={value:g}" for name, value in limits.items()]
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["generate", "--model", MODEL, "--base-url", scripted.url, "--mode", "baseline", "--target", "10", *argv, "x"],
        stdout=out,
        stderr=err,
    )
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, api_key="sk-test", max_retries=0)
    row = run_sample(backend, Request("Write.", 10, mode="baseline", **limits))
    assert row is not None and row["error_message"].split(":")[0] == kind
    answer = FAILURES[kind].answer
    assert code == (EXIT_MISS if answer else EXIT_BACKEND), err.getvalue()
    assert row["status"] == ("ok" if answer else "error")


# ----- one run, however many calls ---------------------------------------------------------------------------


def continuation(start: int) -> list[str]:
    return countdown(start, words=("tide", "foam", "sand", "reef", "kelp"))


def test_a_one_call_run_and_a_repaired_run_are_the_same_object_and_report_calls_alike(scripted_model):
    scripted_model.reply(countdown(5, wrong="skip", at=3), countdown(5, wrong="skip", at=3), continuation(2))
    backend = get_backend("scripted", max_retries=0)
    one = Generation(backend, Request("Sea", 5, max_calls=1))
    repaired = Generation(backend, Request("Sea", 5, max_calls=3))
    assert type(one) is type(repaired)
    notes = [one.live_note() for _ in one.stream()]
    notes += [repaired.live_note() for _ in repaired.stream()]
    assert set(notes) == {"", " · repairing from <2> (call 2 of 3)"}
    for gen, calls, verified in ((one, 1, False), (repaired, 2, True)):
        outcome = gen.outcome()
        assert (len(gen.calls), outcome.calls, outcome.verified) == (calls, calls, verified)
    assert one.settled_text() == "sea wind salt light"  # a one-call run shows all it has, past the skip
    assert repaired.settled_text() == "sea wind salt tide foam"


def test_a_repaired_run_keeps_each_call_s_request_and_reply(scripted_model):
    scripted_model.reply(countdown(5, wrong="skip", at=3), continuation(2))
    backend = get_backend("scripted", max_retries=0)
    gen = Generation(backend, Request("Sea", 5, max_calls=2))
    outcome = gen.run()
    first, second = gen.calls
    assert first.messages == gen.messages and second.messages != gen.messages  # the prefix quoted
    assert (first.resumed_from, second.resumed_from) == (None, 2)
    assert "".join(second.reply) == "".join(continuation(2))
    assert json.dumps(outcome.attempts) and [a["call"] for a in outcome.attempts] == [1, 2]


def test_only_a_missing_model_or_a_refused_request_is_the_writer_s_input_at_fault():
    assert {k for k, s in FAILURES.items() if s.bad_input} == {"not_found", "bad_request"}

"""Verified repair: a broken countdown keeps its verified prefix and the same model continues from the next marker.

Everything runs through the CLI or the one run lifecycle against the in-process scripted model, and the tests read
the messages it was sent. How a continuation is asked of each kind of server (llama.cpp's trailing assistant
message, vLLM's flag, DeepSeek's beta URL), a closed HTTP response and a read timeout are about the wire: those run
against the scripted server (real HTTP on 127.0.0.1) and read the request bodies it received.
"""

from __future__ import annotations

import io
import json
import time

import pytest

from capel_ui.backends import Capabilities, ScriptedBackend, Turn, get_backend
from capel_ui.cli import main
from capel_ui.generation import Generation, Request
from capel_ui.parser import MarkerParser
from capel_ui.runs import LiveRun
from capel_ui.storage import get_engine, get_run, list_runs
from tests.conftest import variants_box
from tests.scripted_server import MODEL, countdown, ok

# ----- the parser's verified prefix ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "kept", "next_marker", "wrong"),
    [
        pytest.param("<5>a<4>b<3>c<2>d<1>e<0>", "<5>a<4>b<3>c<2>d<1>e<0>", -1, None, id="right"),
        pytest.param("<5>a<4>b<2>c<1>d<0>", "<5>a<4>b", 3, "skip", id="skip_keeps_the_unit_before"),
        pytest.param("<5>a<4>b<4>c<3>d", "<5>a<4>b", 3, "repeat", id="repeat"),
        pytest.param("<5>a<4>b c<3>d", "<5>a", 4, "extra_units", id="two_units_drop_the_segment"),
        pytest.param("<5>a<4><3>b", "<5>a", 4, "bare_marker", id="bare_marker"),
        pytest.param("<5>a<4>b<0>", "<5>a<4>b", 3, "early_stop", id="early_zero"),
        pytest.param("<5>a<4>b<3>c<2>d<1>e", "<5>a<4>b<3>c<2>d", 1, "missing_end", id="missing_end_redoes_<1>"),
        pytest.param("Sure! <5>a<4>b<3>c<2>d<1>e<0>", "<5>a<4>b<3>c<2>d<1>e<0>", -1, None, id="preamble_dropped"),
        pytest.param("<5>a<4>b<3>c<2>d<1>e<0> Bye!", "<5>a<4>b<3>c<2>d<1>e<0>", -1, None, id="overshoot_cut"),
        pytest.param("<6>a<5>b<4>c", "", 5, "wrong_start", id="wrong_start_keeps_nothing"),
        pytest.param("<5>a<4>b 3>c", "<5>a<4>b ", 3, "malformed_marker", id="malformed_marker"),
        pytest.param("<3>海<2>浪 花<1>好<0>", "<3>海", 2, "extra_units", id="chinese_two_characters"),
    ],
)
def test_verified_prefix_is_the_longest_right_countdown(raw, kept, next_marker, wrong):
    n = 3 if "海" in raw else 5
    parser = MarkerParser(n, "zh" if n == 3 else "en")
    for ch in raw:  # split anywhere: the prefix is the same
        parser.feed(ch)
    parser.close()
    ver = parser.verified()
    assert ver.kept(raw) == kept
    assert ver.next_marker == next_marker
    assert (ver.error.type if ver.error else None) == wrong
    assert ver.units == (n if next_marker < 0 else n - next_marker)


def test_verified_prefix_keeps_the_draft():
    raw = "<draft>a rough idea</draft><3>One<2>two<2>two"
    parser = MarkerParser(3, draft=True)
    parser.feed(raw)
    ver = parser.verified()
    assert ver.kept(raw) == "<draft>a rough idea</draft><3>One<2>two"
    assert ver.next_marker == 1


def test_verified_text_is_only_confirmed_units():
    parser = MarkerParser(5)
    parser.feed("<5>Calm<4>grey<3>water and")
    assert parser.text_so_far() == "Calm grey"
    assert parser.verified_text() == "Calm grey"
    parser.feed(" sky<2>x")
    assert parser.text_so_far() == "Calm grey water and sky"
    assert parser.verified_text() == "Calm grey"  # the two units after <3> are not verified


# ----- the CLI, end to end -----------------------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str, str]:
    """`capel_ui generate` on the staged in-process scripted model."""
    out, err = io.StringIO(), io.StringIO()
    code = main(["generate", "--model", "scripted", "--mode", "capel", *argv], stdout=out, stderr=err)  # repair: CAPEL
    return code, out.getvalue(), err.getvalue()


def run_cli_on(server, *argv: str) -> tuple[int, str, str]:
    """`capel_ui generate` on the scripted HTTP server (for what is sent over the wire)."""
    out, err = io.StringIO(), io.StringIO()
    argv = ("--mode", "capel", *argv)  # repair is CAPEL's (a later --mode in argv wins)
    code = main(["generate", "--model", MODEL, "--base-url", server.url, *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def asked(model: ScriptedBackend, call: int) -> list[dict]:
    """The messages the scripted model was sent in call `call` (0-based)."""
    return model.requests[call][0]


GRAMMAR = Capabilities(grammar_field="grammar", prefill="assistant")
"""A llama.cpp-like model: takes a grammar, continues a trailing assistant message."""


def continuation(start: int, **kw) -> list[str]:
    """What a model writes when asked to continue from marker `<start>`."""
    return countdown(start, words=("tide", "foam", "sand", "reef", "kelp"), **kw)


@pytest.mark.parametrize(
    ("wrong", "at", "resumes_at"),
    [
        ("skip", 3, 2),
        ("repeat", 3, 2),
        ("extra_units", 3, 3),
        ("bare_marker", 3, 3),
        ("early_stop", 3, 2),
        ("missing_end", 0, 1),
        ("wrong_start", 0, 5),
    ],
)
def test_a_broken_countdown_is_repaired_from_the_next_marker(scripted_model, wrong, at, resumes_at):
    scripted_model.reply(countdown(5, wrong=wrong, at=at), continuation(resumes_at))
    code, out, err = run_cli("--target", "5", "--json", "Write about the sea")
    result = json.loads(out)
    assert code == 0, err
    assert result["verified"] is True and result["count"] == 5
    assert result["calls"] == 2 and len(result["attempts"]) == 2
    first, second = result["attempts"]
    assert first["wrong"]["type"] == wrong and first["resumed_from"] is None
    assert second["resumed_from"] == resumes_at and second["wrong"] is None
    assert "2 of 3 calls" in err


def test_the_repair_request_quotes_the_verified_prefix_on_a_model_without_prefill(scripted_model):
    scripted_model.reply(countdown(5, wrong="skip", at=3), continuation(2))
    code, out, _ = run_cli("--target", "5", "--json", "Write about the sea")
    assert code == 0
    first, second = asked(scripted_model, 0), asked(scripted_model, 1)
    assert [m["role"] for m in second] == ["user"]
    quoted = second[0]["content"]
    assert quoted.startswith(first[0]["content"])  # the original prompt, then the quote
    assert "<5>sea<4>wind<3>salt" in quoted and "start with the marker <2>" in quoted
    assert scripted_model.requests[1][1].prefill is None
    assert json.loads(out)["text"] == "sea wind salt tide foam"


def test_a_chinese_repair_request_asks_in_chinese(scripted_model):
    scripted_model.reply(["<3>海", "<2>浪花", "<1>白", "<0>"], ["<2>浪", "<1>白", "<0>"])
    code, out, _ = run_cli("--lang", "zh", "--target", "3", "--json", "写大海")
    assert code == 0 and json.loads(out)["text"] == "海浪白"
    quoted = asked(scripted_model, 1)[0]["content"]
    assert "从标记 <2> 开始" in quoted and "\n<3>海\n" in quoted


def test_a_model_that_continues_its_answer_gets_the_prefix_as_a_prefill(scripted_model):
    scripted_model.capabilities = GRAMMAR
    scripted_model.reply(countdown(5, wrong="repeat", at=4), continuation(3))
    code, _, _ = run_cli("--max-calls", "3", "--target", "5", "Sea")
    assert code == 0
    assert scripted_model.requests[1][1].prefill == "<5>sea<4>wind"
    assert asked(scripted_model, 1) == asked(scripted_model, 0)  # the same messages: the prefill goes on from them


# The wire: how each kind of server is asked to continue a partial answer.


def test_a_llama_cpp_server_gets_the_prefix_as_a_trailing_assistant_message(scripted):
    scripted.script(ok(countdown(5, wrong="repeat", at=4)), ok(continuation(3)))
    code, _, _ = run_cli_on(scripted, "--grammar-field", "grammar", "--max-calls", "3", "--target", "5", "Sea")
    assert code == 0
    body = scripted.chat_requests[1].body
    assert body["messages"][-1] == {"role": "assistant", "content": "<5>sea<4>wind"}
    assert body["messages"][:-1] == scripted.chat_requests[0].body["messages"]
    assert "continue_final_message" not in body


def test_a_vllm_server_is_asked_to_continue_the_final_message(scripted):
    scripted.script(ok(countdown(5, wrong="skip", at=4)), ok(continuation(3)))
    code, _, _ = run_cli_on(scripted, "--grammar-field", "guided_grammar", "--max-calls", "2", "--target", "5", "Sea")
    assert code == 0
    body = scripted.chat_requests[1].body
    assert body["messages"][-1] == {"role": "assistant", "content": "<5>sea<4>wind"}
    assert (body["continue_final_message"], body["add_generation_prompt"]) == (True, False)


def test_deepseek_gets_a_prefix_completion_on_its_beta_url(scripted):
    backend = get_backend("deepseek-chat", provider="deepseek", base_url=scripted.url, api_key="sk-test")
    scripted.script(ok(countdown(4, wrong="early_stop", at=3)), ok(continuation(2)))
    live = LiveRun(Generation(backend, Request("Sea", 4)), None, origin="cli")
    outcome = live.run()
    assert outcome.verified and outcome.calls == 2
    first, second = scripted.chat_requests
    assert first.path == "/v1/chat/completions" and second.path == "/v1/beta/chat/completions"
    assert second.body["messages"][-1] == {"role": "assistant", "content": "<4>sea<3>wind", "prefix": True}


def test_the_stream_is_stopped_at_the_first_error(scripted):
    chunks = countdown(12, wrong="skip", at=10)
    scripted.script(ok(chunks, delay=0.02), ok(continuation(9)))
    code, out, _ = run_cli_on(scripted, "--target", "12", "--json", "Sea")
    first = json.loads(out)["attempts"][0]
    assert code == 0
    assert first["stopped"] == "Skipped marker" and first["status"] == "stopped"
    assert first["reply"] == "".join(chunks[:4])  # nothing after the chunk with the skipped marker was read
    assert first["tokens_estimated"] is True and first["completion_tokens"] == 4
    for _ in range(200):  # the server notices the closed connection at its next write
        if scripted.hung_up:
            break
        time.sleep(0.02)
    assert scripted.hung_up == [scripted.chat_requests[0]]  # the app closed the HTTP response: the rest unsent


# Back on the in-process model: what a repair does with what it is given.


def test_words_before_the_first_marker_of_a_continuation_are_dropped(scripted_model):
    scripted_model.reply(countdown(5, wrong="skip", at=3), ["Sure, continuing: ", *continuation(2)])
    code, out, _ = run_cli("--target", "5", "--json", "Sea")
    result = json.loads(out)
    assert code == 0 and result["text"] == "sea wind salt tide foam"
    assert result["attempts"][1]["dropped"] == "Sure, continuing: "
    assert result["attempts"][1]["reply"].startswith("Sure, continuing: <2>")


def test_the_reply_is_read_no_further_than_the_first_error(scripted_model):
    chunks = countdown(12, wrong="skip", at=10)
    scripted_model.reply(chunks, continuation(9))
    code, out, _ = run_cli("--target", "12", "--json", "Sea")
    first = json.loads(out)["attempts"][0]
    assert code == 0
    assert first["stopped"] == "Skipped marker" and first["status"] == "stopped"
    assert first["reply"] == "".join(chunks[:4])
    assert first["tokens_estimated"] is True and first["completion_tokens"] == 4


@pytest.mark.parametrize("wrong", ["preamble", "trailing_text"])
def test_text_outside_the_countdown_is_cut_without_another_call(scripted_model, wrong):
    scripted_model.reply(countdown(5, wrong=wrong))
    code, out, _ = run_cli("--target", "5", "--json", "Sea")
    result = json.loads(out)
    assert code == 0 and result["verified"] and result["calls"] == 1
    assert result["raw"] == "<5>sea<4>wind<3>salt<2>light<1>stone<0>"
    assert "was cut" in result["notice"]
    assert len(scripted_model.requests) == 1


def test_max_calls_1_turns_repair_off(scripted_model):
    scripted_model.reply(countdown(5, wrong="skip", at=3))
    code, out, _ = run_cli("--target", "5", "--max-calls", "1", "--json", "Sea")
    result = json.loads(out)
    assert code == 1 and result["calls"] == 1 and result["attempts"] == []
    assert [e["type"] for e in result["errors"]] == ["skip"]
    assert len(scripted_model.requests) == 1


def test_a_run_still_wrong_after_the_last_call_says_so_and_keeps_every_attempt(scripted_model):
    scripted_model.reply(
        countdown(5, wrong="skip", at=3),
        continuation(2, wrong="extra_units", at=2),
        continuation(2, wrong="repeat", at=2),
    )
    code, out, _ = run_cli("--target", "5", "--json", "Sea")
    result = json.loads(out)
    assert code == 1 and result["verified"] is False
    assert result["calls"] == 3 and [a["call"] for a in result["attempts"]] == [1, 2, 3]
    assert [a["wrong"]["type"] for a in result["attempts"]] == ["skip", "extra_units", "repeat"]
    assert result["attempts"][2]["stopped"] is None  # the last call runs to its end: the writer sees all of it
    assert "Still not verified after 3 calls" in result["notice"]
    assert len(scripted_model.requests) == 3


def test_the_bound_on_calls_is_checked_before_any_call(scripted_model):
    code, _, err = run_cli("--target", "5", "--max-calls", "0", "Sea")
    assert code == 2 and "max calls" in err
    assert scripted_model.requests == []


@pytest.mark.parametrize(
    ("failure", "kind", "words"),
    [
        (Turn(("<2>tide",), fail="cut"), "cut", "was cut"),
        (Turn(fail="rate_limit", retry_after=3600), "rate_limit", "429"),
    ],
)
def test_a_failing_repair_call_keeps_what_was_verified_and_says_what_happened(scripted_model, failure, kind, words):
    scripted_model.reply(countdown(5, wrong="skip", at=3), failure)
    code, out, err = run_cli("--target", "5", "--json", "Sea")
    result = json.loads(out)
    assert code == 3
    assert result["status"] == "partial" and result["verified"] is False
    assert result["text"].startswith("sea wind salt")
    assert "Repair call 2 of 3 (from <2>) failed" in result["failure"] and words in result["failure"]
    assert result["attempts"][1]["failure_kind"] == kind
    assert "3 verified unit(s) before it are kept" in err


def test_every_call_is_saved_with_the_run(scripted_model):
    scripted_model.reply(countdown(5, wrong="skip", at=3), continuation(2))
    code, out, _ = run_cli("--target", "5", "--json", "Sea")
    run = get_run(get_engine(), json.loads(out)["run_id"])
    assert code == 0 and run.verified and run.count == 5
    assert [a["call"] for a in run.attempts] == [1, 2]
    assert run.attempts[0]["wrong"]["type"] == "skip" and run.attempts[1]["resumed_from"] == 2
    assert run.raw == "<5>sea<4>wind<3>salt<2>tide<1>foam<0>"


def test_a_model_with_a_grammar_is_not_repaired_unless_asked(scripted_model):
    scripted_model.capabilities = GRAMMAR
    backend = get_backend("scripted")
    gen = Generation(backend, Request("Sea", 5))
    assert gen.max_calls == 1
    asked_for = Generation(backend, Request("Sea", 5, max_calls=2))
    assert type(asked_for) is type(gen) and asked_for.max_calls == 2


@pytest.mark.parametrize("mode", ["baseline"])
def test_modes_without_a_countdown_are_never_repaired(scripted_model, mode):
    gen = Generation(get_backend("scripted"), Request("Sea", 5, mode=mode, max_calls=3))
    assert gen.max_calls == 1


def test_a_simulated_model_continues_from_what_the_request_quotes(scripted_model):
    """The scripted model can answer from the request, as the repair benchmark's simulated writer does."""

    def respond(messages, options) -> list[str]:
        text = messages[-1]["content"]
        start = int(text.rsplit("start with the marker <", 1)[1].split(">", 1)[0]) if "-----" in text else 6
        return continuation(start, wrong="skip" if start == 6 else None, at=4)

    scripted_model.reply(respond)
    code, out, _ = run_cli("--target", "6", "--json", "Sea")
    assert code == 0 and json.loads(out)["calls"] == 2


# ----- the embedded model (llama.cpp) ------------------------------------------------------------------------


@pytest.mark.model
def test_the_embedded_server_continues_a_trailing_assistant_message(embedded):
    from capel_ui.backends import Options
    from capel_ui.prompts import build_messages

    messages = build_messages("Write about the sea.", "en", 8, "capel")
    options = Options(max_tokens=40, temperature=0, seed=1, prefill="<8>The<7>sea<6>is")
    reply = "".join(c for c in embedded.stream(messages, options) if isinstance(c, str))
    assert not reply.lstrip().startswith("<8>")  # it went on from the prefill rather than starting over
    first = MarkerParser(8)
    first.feed("<8>The<7>sea<6>is" + reply)
    assert first.close().markers > 3


def test_a_reply_without_markers_is_stopped_and_started_again_with_another_seed(scripted_model):
    prose = ["Lighthouses have guided ships for centuries. "] * 12
    scripted_model.reply(prose, countdown(5))
    code, out, _ = run_cli("--target", "5", "--seed", "7", "--json", "Sea")
    result = json.loads(out)
    assert code == 0 and result["calls"] == 2
    assert result["attempts"][0]["stopped"] == "no marker in the first 200 characters"
    (first, first_options), (second, second_options) = scripted_model.requests
    assert (first_options.seed, second_options.seed) == (7, 8)
    assert second == first  # nothing verified: the same request, a fresh start
    assert "continued from the start" in result["notice"]


# ----- the Write page ------------------------------------------------------------------------------------------


def test_write_repairs_a_broken_countdown_and_shows_the_calls(scripted_model, app_test):
    scripted_model.reply(countdown(5, wrong="skip", at=3), continuation(2))
    at = app_test
    at.selectbox(key="provider").set_value("scripted").run()
    assert at.selectbox(key="w_mode").value == "capel"
    assert at.number_input(key="w_max_calls_False").value == 3  # on by default without a grammar
    at.text_area(key="w_instruction").input("Write about the sea")
    at.number_input(key="w_target").set_value(5)
    variants_box(at).set_value(1)  # one run (a local model offers three by default)
    next(b for b in at.button if b.label == "Generate").click()
    at.run()
    assert not at.exception, at.exception
    assert any("✓ exact" in m.value for m in at.markdown if "-badge[" in m.value)
    assert any("2 call(s) · 1 first: Skipped marker · 2 from <2>: right" in c.value for c in at.caption)
    [run] = list_runs(get_engine())
    assert run.verified and [a["call"] for a in run.attempts] == [1, 2]


# ----- benchmarks ------------------------------------------------------------------------------------------------


def bench_on(max_calls: int | None):
    from capel_ui.bench.report import aggregate
    from capel_ui.bench.runner import BenchConfig, run_bench, run_results

    config = BenchConfig(
        suite="mtbench", model="scripted", modes=("capel",), lengths=(5,), limit=2, max_calls=max_calls
    )
    out = run_bench(config, backend=get_backend("scripted"), engine=get_engine())
    records = run_results(get_engine(), [out.bench_run_id])
    return out, records, aggregate(records)


def test_a_benchmark_with_max_calls_repairs_and_reports_calls_and_tokens_per_exact_text(scripted_model):
    scripted_model.reply(
        countdown(5, wrong="skip", at=3),  # stopped at the skip: 4 chunks stand for its tokens
        continuation(2),  # 3 chunks
        countdown(5),  # 6 chunks
    )
    _, records, rows = bench_on(3)
    assert [r.calls for r in records] == [2, 1] and all(r.exact for r in records)
    overall = rows[-1]
    assert overall["target"] is None and overall["em"] == 1.0
    assert overall["calls"] == 1.5
    assert overall["tokens_per_exact"] == (4 + 3 + 6) / 2


def test_a_benchmark_measures_one_call_unless_asked_and_keeps_its_own_run(scripted_model):
    scripted_model.reply(countdown(5, wrong="skip", at=3), countdown(5))
    plain, records, rows = bench_on(None)
    assert [r.calls for r in records] == [1, 1] and [r.exact for r in records] == [False, True]
    assert rows[-1]["calls"] == 1.0 and rows[-1]["tokens_per_exact"] == (5 + 6) / 1  # both texts' chunks, 1 exact
    repaired, _, _ = bench_on(3)
    assert repaired.key != plain.key  # repair is a different measurement: its own, resumable run


# ----- interruptions during a repair call ---------------------------------------------------------------------


def test_a_timeout_during_a_repair_call_keeps_the_verified_prefix(scripted):
    from tests.scripted_server import hang

    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, max_retries=0, timeout=0.3)
    scripted.script(ok(countdown(5, wrong="repeat", at=3)), hang(5))
    outcome = LiveRun(Generation(backend, Request("Sea", 5)), get_engine(), origin="cli").run()
    assert outcome.status == "partial" and not outcome.verified
    assert outcome.failure_kind == "timeout" and "Repair call 2 of 3 (from <2>) failed" in outcome.failure
    assert outcome.text == "sea wind salt" and outcome.calls == 2
    assert outcome.raw == "<5>sea<4>wind<3>salt"


def test_stopping_during_a_repair_call_keeps_every_call_as_cancelled(scripted_model):
    scripted_model.reply(countdown(5, wrong="skip", at=3), Turn(tuple(continuation(2)), delay=0.05))
    live = LiveRun(Generation(get_backend("scripted"), Request("Sea", 5)), get_engine(), origin="cli")
    for _ in live.stream():
        if live.view().call > 1:
            live.cancel()
    outcome = live.outcome
    assert outcome.status == "cancelled" and not outcome.verified
    assert [a["call"] for a in outcome.attempts] == [1, 2]
    run = get_run(get_engine(), live.run_id)
    assert run.status == "cancelled" and len(run.attempts) == 2 and run.text.startswith("sea wind salt")


def test_history_show_lists_what_each_call_did(scripted_model):
    scripted_model.reply(countdown(5, wrong="skip", at=3), continuation(2))
    code, out, _ = run_cli("--target", "5", "--json", "Sea")
    assert code == 0
    shown = io.StringIO()
    assert main(["history", "show", str(json.loads(out)["run_id"])], stdout=shown) == 0
    assert "2 call(s) · 1 first: Skipped marker · 2 from <2>: right" in shown.getvalue()


@pytest.mark.parametrize("grammar", [False, True])
def test_a_draft_capel_run_keeps_its_draft_when_repaired(scripted_model, grammar):
    if grammar:
        scripted_model.capabilities = GRAMMAR
    first = ["<draft>Waves, salt and wind.</draft>", *countdown(5, wrong="skip", at=3)]
    scripted_model.reply(first, continuation(2))
    code, out, _ = run_cli("--mode", "draft-capel", "--max-calls", "2", "--target", "5", "--json", "Sea")
    result = json.loads(out)
    assert code == 0 and result["verified"] and result["text"] == "sea wind salt tide foam"
    assert result["raw"].startswith("<draft>Waves, salt and wind.</draft><5>sea")
    messages, options = scripted_model.requests[1]
    second = options.prefill if grammar else messages[-1]["content"]
    assert "<draft>Waves, salt and wind.</draft><5>sea<4>wind<3>salt" in second


def test_a_countdown_cut_by_the_output_limit_is_continued(scripted_model):
    scripted_model.reply(Turn(("<5>sea", "<4>wind", "<3>sa"), finish_reason="length"), continuation(3))
    code, out, _ = run_cli("--target", "5", "--json", "Sea")
    result = json.loads(out)
    assert code == 0 and result["verified"] and result["text"] == "sea wind tide foam sand"  # `sa` was cut: redone
    assert result["attempts"][0]["failure_kind"] == "length" and result["attempts"][1]["resumed_from"] == 3


def test_the_printed_text_of_a_repaired_run_is_the_final_text_once(scripted_model):
    scripted_model.reply(countdown(5, wrong="extra_units", at=3), continuation(3))
    code, out, err = run_cli("--target", "5", "Sea")
    assert code == 0
    assert out == "sea wind tide foam sand\n"  # `salt light` (two words after <3>) never reached the screen
    assert "✓ exact · verified · 5/5" in err and "2 of 3 calls" in err and "continued from <3>" in err


@pytest.mark.parametrize("grammar", [False, True])
def test_a_reply_that_repeats_the_kept_countdown_is_read_from_where_it_goes_on(scripted_model, grammar):
    if grammar:
        scripted_model.capabilities = GRAMMAR
    echoed = ["Here is the full answer: ", "<5>sea", "<4>wi", "nd", *continuation(3)]
    scripted_model.reply(countdown(5, wrong="repeat", at=4), echoed)
    field = ["--max-calls", "3"] if grammar else []
    code, out, _ = run_cli(*field, "--target", "5", "--json", "Sea")
    result = json.loads(out)
    assert code == 0 and result["calls"] == 2 and result["text"] == "sea wind tide foam sand"
    assert result["attempts"][1]["dropped"] == "Here is the full answer: <5>sea<4>wind"


def test_a_reply_that_only_starts_like_the_kept_countdown_is_kept_as_written(scripted_model):
    scripted_model.reply(countdown(5, wrong="repeat", at=4), ["<5>sea", "<4>", "rain", "<3>x", "<2>y", "<1>z", "<0>"])
    code, out, _ = run_cli("--target", "5", "--max-calls", "2", "--json", "Sea")
    result = json.loads(out)
    assert code == 1 and result["attempts"][1]["dropped"] is None
    assert result["attempts"][1]["wrong"]["type"] == "repeat"  # <5> again after the kept <4>: a new error

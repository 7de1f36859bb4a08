"""Faulty servers a writer meets (issue 14): each ends in a clear message and keeps the text that arrived.

A scripted OpenAI-compatible server plays the faulty vendor: an endless stream, a web page instead of the API,
a stream line that is not JSON, a prompt too long for the context, a request still waiting for its first token
when the writer clicks Stop.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from capel_ui.backends import BackendError, Guarded, OpenAICompatBackend, get_backend
from capel_ui.backends.openai_compat import check_base_url
from capel_ui.cli import main
from capel_ui.generation import OVERRUN_CHARS_PER_UNIT, Generation, Request, overrun_limit
from capel_ui.vocab import EXIT_BACKEND, EXIT_MISS, EXIT_OK, EXIT_USAGE, FAILURE_KINDS
from tests.cli_process import interrupt_generate
from tests.scripted_server import (
    MODEL,
    bad_json_after,
    closed_port_url,
    endless,
    hang,
    html_as_event_stream,
    html_page,
    keep_alive,
    ok,
    stall_after,
    status,
    stream_error,
    whole_json,
)
from tests.stopping import stop_after_first_chunk, stop_while_waiting

ROOT = Path(__file__).resolve().parent.parent


def backend(server) -> Guarded:
    inner = OpenAICompatBackend(MODEL, base_url=server.url, api_key="sk-test")
    return Guarded(inner, sleep=lambda s: None)


def run(server, **request) -> Generation:
    """One call, run to its end: what a single stream does (no repair call after it)."""
    request.setdefault("max_calls", 1)
    gen = Generation(backend(server), Request(instruction="Describe a lighthouse", **request))
    gen.run()
    return gen


def test_the_new_failure_kinds_are_named_in_the_vocabulary():
    assert {"not_openai", "overrun", "deadline"} <= set(FAILURE_KINDS)


# ----- a stream that never ends -----------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "target"), [("capel", 20), ("baseline", 20), ("draft-capel", 10)])
def test_an_endless_stream_without_markers_is_stopped_far_past_the_target_keeping_the_text(scripted, mode, target):
    scripted.script(endless("word ", delay=0.002))
    gen = run(scripted, target=target, mode=mode)
    out = gen.outcome()
    limit = overrun_limit(gen.request, gen.mode)
    assert (out.status, out.failure_kind, out.verified) == ("partial", "overrun", False)
    assert limit < len(out.raw.split()) < limit + 20, "stopped soon after the limit, not at the end of the stream"
    assert out.raw.startswith("word word")
    assert f"far past the target of {target}" in out.failure and "text that arrived is kept" in out.failure


def test_one_endless_word_is_stopped_by_its_size_not_taken_whole(scripted):
    scripted.script(endless("x" * 2000, delay=0.0))
    out = run(scripted, target=20, mode="baseline").outcome()
    assert (out.status, out.failure_kind) == ("partial", "overrun")
    assert len(out.raw) < 200_000, "a 5 MB reply is not taken whole"
    cap = overrun_limit(out.request, "baseline") * OVERRUN_CHARS_PER_UNIT  # 4,500 characters for 20 words
    assert f"Stopped after {len(out.raw):,} characters: a single word ran past {cap:,} characters" in out.failure
    assert "1 English words" not in out.failure and "not counting down" not in out.failure


def test_a_chinese_countdown_that_keeps_going_is_stopped_too(scripted):
    scripted.script(endless("很", delay=0.001))
    out = run(scripted, target=30, lang="zh", mode="capel").outcome()
    assert (out.status, out.failure_kind) == ("partial", "overrun")
    assert "Chinese characters" in out.failure


def test_a_normal_countdown_reply_is_never_cut_by_the_overrun_check(scripted):
    raw = "".join(f"<{n}> word " for n in range(60, 0, -1)) + "<0>"
    scripted.script(ok([raw[i : i + 7] for i in range(0, len(raw), 7)]))
    out = run(scripted, target=60, mode="capel").outcome()
    assert (out.status, out.verified, out.failure_kind) == ("complete", True, None)


def test_a_benchmark_scores_an_overrun_sample_with_the_count_it_reached_and_notes_why(scripted):
    from capel_ui.bench.runner import run_sample

    scripted.script(endless("word ", delay=0.001))
    row = run_sample(backend(scripted), Request("Write.", 10, mode="baseline"))
    assert row is not None
    assert (row["status"], row["error_message"].split(":")[0]) == ("ok", "overrun")
    assert row["count"] > overrun_limit(Request("Write.", 10, mode="baseline"), "baseline")


def test_a_time_limit_stops_a_slow_stream_with_what_arrived_and_says_why(scripted):
    scripted.script(endless("word ", delay=0.05))
    out = run(scripted, target=1000, mode="baseline", time_limit=0.5).outcome()
    assert (out.status, out.failure_kind) == ("partial", "deadline")
    assert out.count >= 1 and out.text.startswith("word")
    assert "time limit of 0.5 s" in out.failure


def test_a_time_limit_before_any_text_is_a_failure_saying_so(scripted):
    scripted.script(stall_after([], seconds=60))
    out = run(scripted, target=10, mode="baseline", time_limit=0.3).outcome()
    assert (out.status, out.failure_kind, out.errors) == ("failed", "deadline", [])
    assert "time limit of 0.3 s; no text had arrived" in out.failure and "is kept" not in out.failure


@pytest.mark.parametrize(
    ("behaviour", "said"),
    [
        pytest.param(keep_alive([]), "No text for 0.5 s (the stall limit)", id="keep_alive_comments_only"),
        pytest.param(hang(60), "No text for 0.5 s (the stall limit)", id="no_answer_at_all"),
        pytest.param(keep_alive(["Two words "]), "No new text for 0.5 s (the stall limit)", id="text_then_comments"),
    ],
)
def test_a_server_that_writes_nothing_for_the_stall_limit_is_stopped_saying_so(scripted, behaviour, said):
    scripted.script(behaviour)
    out = run(scripted, target=10, mode="baseline", stall_limit=0.5).outcome()
    assert out.failure_kind == "stalled" and said in out.failure
    assert ("the text that arrived is kept" in out.failure) == bool(out.text)
    assert out.status == ("partial" if out.text else "failed")


@pytest.mark.parametrize(("field", "value"), [("time_limit", 0), ("time_limit", -3), ("max_tokens", 0)])
def test_a_limit_that_cannot_be_met_is_refused_before_any_call(scripted, field, value):
    with pytest.raises(ValueError, match="must be"):
        Generation(backend(scripted), Request(instruction="x", target=5, **{field: value}))
    assert scripted.chat_requests == []


# ----- a server that is not the API -------------------------------------------------------------------------


def test_a_web_page_with_status_200_says_the_server_is_not_an_openai_compatible_api(scripted):
    scripted.script(html_page())
    out = run(scripted, target=5, mode="baseline").outcome()
    assert (out.status, out.failure_kind) == ("failed", "not_openai")
    assert "did not answer as an OpenAI-compatible API" in out.failure and "check the base URL" in out.failure
    assert "text/html" in out.failure and "returned no text" not in out.failure


def test_a_stream_line_that_is_not_json_says_it_is_not_an_openai_compatible_stream(scripted):
    scripted.script(bad_json_after(["One two ", "three"]))
    out = run(scripted, target=5, mode="baseline").outcome()
    assert (out.status, out.failure_kind, out.text) == ("partial", "not_openai", "One two three")
    assert "not JSON" in out.failure and "JSONDecodeError" not in out.failure
    assert "text that arrived is kept" in out.failure


# ----- messages ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "words"),
    [
        (
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            "prompt alone (9000 tokens) is too long",
        ),
        (
            "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
            "(5000 in the messages, 0 in the completion).",
            "prompt alone (5000 tokens) is too long",
        ),
        (
            "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens "
            "(1000 in the messages, 8000 in the completion).",
            "lower the output limit",
        ),
    ],
)
def test_a_context_error_says_whether_the_prompt_itself_is_too_long(scripted, message, words):
    scripted.script(status(400, message))
    out = run(scripted, target=5, mode="baseline").outcome()
    assert out.failure_kind == "context" and words in out.failure
    assert "prompt alone" not in out.failure or "lower the target" not in out.failure


@pytest.mark.parametrize(("provider", "words"), [("openai", "check your network"), ("compatible", "base URL")])
def test_unreachable_says_what_the_writer_can_check(provider, words):
    b = get_backend("gpt-4.1", provider=provider, base_url=closed_port_url(), api_key="sk-x", max_retries=0)
    out = Generation(b, Request(instruction="x", target=3, mode="baseline")).run()
    assert (out.status, out.failure_kind, out.errors) == ("failed", "unreachable", [])
    assert words in out.failure


@pytest.mark.parametrize(
    "url", ["127.0.0.1:8000/v1", "htp://localhost/v1", "http:///v1", "http://host:99999/v1", "http://a b/v1", ""]
)
def test_a_typed_base_url_that_is_not_a_web_address_is_refused_before_anything_is_sent(scripted, url):
    with pytest.raises(BackendError, match="base URL") as info:
        get_backend(MODEL, provider="compatible", base_url=url or " ")
    assert info.value.kind == "bad_request"
    assert scripted.requests == []


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://api.example.com/v1", "http://[::1]:8080/v1"])
def test_a_well_formed_base_url_is_accepted(url):
    assert check_base_url(f" {url} ") == url


def test_a_failed_run_has_no_marker_errors_so_no_early_stop_for_a_connection_failure():
    b = get_backend(MODEL, provider="compatible", base_url=closed_port_url(), max_retries=0)
    out = Generation(b, Request(instruction="x", target=12, mode="capel")).run()
    assert (out.status, out.errors, out.verdict.headline("en_words")) == ("failed", [], "failed · no text arrived")


def test_a_retry_after_far_beyond_the_wait_budget_stops_at_once_saying_how_long(scripted):
    scripted.script(status(429, headers={"retry-after": "100000"}), then=ok("never asked for"))
    out = run(scripted, target=3, mode="baseline").outcome()
    assert (out.status, out.failure_kind) == ("failed", "rate_limit")
    assert "asks to wait 27.8 h" in out.failure
    assert len(scripted.chat_requests) == 1


# ----- Stop before the first token --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "behaviour",
    [
        pytest.param(stall_after([], seconds=300), id="headers_sent_then_silence"),
        pytest.param(hang(300), id="no_answer_at_all_yet"),
    ],
)
def test_stop_before_the_first_token_aborts_the_request_at_once(scripted, behaviour):
    scripted.script(behaviour)  # a model still reading a long prompt: nothing (or only headers) for 5 minutes
    gen = Generation(backend(scripted), Request(instruction="x", target=5, mode="baseline"))
    worker = stop_while_waiting(gen, lambda: scripted.chat_requests)
    assert not worker.is_alive(), "the request still waits for its first token"
    out = gen.outcome()
    assert (out.status, out.failure, out.errors) == ("cancelled", None, [])
    assert len(scripted.chat_requests) == 1, "an aborted request is not retried"


def test_a_request_after_a_stop_on_the_same_backend_still_works(scripted):
    scripted.script(hang(300), ok("One two three."))
    b = backend(scripted)
    gen = Generation(b, Request(instruction="x", target=3, mode="baseline"))
    worker = threading.Thread(target=gen.run, daemon=True)
    worker.start()
    while not scripted.chat_requests:
        time.sleep(0.02)
    gen.cancel()
    worker.join(timeout=20)
    out = Generation(b, Request(instruction="x", target=3, mode="baseline")).run()
    assert (out.status, out.verified) == ("complete", True)


def test_stop_mid_stream_keeps_the_text_and_is_no_failure(scripted):
    scripted.script(stall_after(["One two ", "three "], seconds=300))
    out = stop_after_first_chunk(Generation(backend(scripted), Request(instruction="x", target=9, mode="baseline")))
    assert (out.status, out.failure) == ("cancelled", None) and out.text.startswith("One two")


# ----- the CLI ----------------------------------------------------------------------------------------------


def cli(server, *argv: str) -> tuple[int, str, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    code = main(["generate", "--model", MODEL, "--base-url", server.url, *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_an_overrun_prints_what_arrived_says_why_and_exits_not_verified(scripted):
    scripted.script(endless("word ", delay=0.002))
    code, out, err = cli(scripted, "--mode", "baseline", "--target", "10", "Describe")
    assert code == EXIT_MISS
    assert out.split()[:3] == ["word"] * 3 and "far past the target of 10" in err


def test_cli_time_limit_flag_stops_the_run_and_the_json_says_why(scripted):
    scripted.script(endless("word ", delay=0.05))
    code, out, _ = cli(scripted, "--mode", "baseline", "--target", "500", "--time-limit", "1", "--json", "D")
    data = json.loads(out)
    assert (code, data["status"]) == (EXIT_MISS, "partial") and "time limit" in data["failure"]


def test_cli_a_web_page_is_a_failure_exit_3_naming_the_base_url(scripted):
    scripted.script(html_page())
    code, _, err = cli(scripted, "--mode", "baseline", "--target", "3", "D")
    assert code == EXIT_BACKEND and "check the base URL" in err


def test_cli_a_malformed_base_url_is_bad_input_exit_2():
    import io

    err = io.StringIO()
    code = main(["generate", "--model", "m", "--base-url", "localhost:8000/v1", "--target", "3", "x"], stderr=err)
    assert code == EXIT_USAGE and "must start with http:// or https://" in err.getvalue()


@pytest.mark.parametrize("argv", [["generate", "--target", "3", "x"], ["history"]])
def test_cli_a_corrupt_database_is_a_failure_exit_3_never_1_and_the_file_is_kept(tmp_path, monkeypatch, argv):
    import io

    broken = tmp_path / "broken.db"
    broken.write_bytes(os.urandom(4096))
    before = broken.read_bytes()
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{broken}")
    err = io.StringIO()
    code = main(
        [*argv[:1], *(["--model", "m", "--base-url", closed_port_url()] if argv[0] == "generate" else []), *argv[1:]],
        stderr=err,
    )
    assert code == EXIT_BACKEND and str(broken) in err.getvalue() and "move it aside" in err.getvalue()
    assert broken.read_bytes() == before


def test_cli_ctrl_c_prints_words_that_came_before_the_first_marker(scripted):
    scripted.script(stall_after(["Sure, here it is: ", "one two three four"], seconds=300))
    # both chunks are sent at once (held back: no marker yet), then the stream stalls
    code, out, err = interrupt_generate(scripted, "--mode", "capel", "--target", "20", after=1.0)
    assert code == 130, err
    assert "one two three four" in out
    assert "interrupted: kept" in err


# ----- answers that are not quite a stream (issue 22) ------------------------------------------------------------


def test_a_complete_json_answer_to_a_stream_request_is_used(scripted):
    scripted.script(whole_json("One two three."))
    code, out, err = cli(scripted, "--mode", "baseline", "--target", "3", "Count.")
    assert code == EXIT_OK and out.strip() == "One two three.", err


def test_a_web_page_sent_as_an_event_stream_is_not_an_api_rather_than_no_text(scripted):
    scripted.script(html_as_event_stream())
    code, _, err = cli(scripted, "--mode", "baseline", "--target", "3", "Count.")
    assert code == EXIT_BACKEND and "did not answer as an OpenAI-compatible API" in err
    assert "(it sent a web page labelled as an event stream, with no event in it)" in err
    assert "returned no text" not in err


def test_an_error_event_in_the_stream_is_the_servers_error_in_its_words(scripted):
    scripted.script(stream_error(["One two "], message="The engine is overloaded."))
    code, out, err = cli(scripted, "--mode", "baseline", "--target", "3", "Count.")
    assert code == EXIT_BACKEND and out.strip() == "One two"
    assert "reported an error in its stream: The engine is overloaded; the 8 characters that arrived are kept" in err

"""What a stream's text may hold, through the real wire format (the scripted server): a lone surrogate escape
(legal JSON, no character) and an escape that is not JSON at all, on the compatible path, a hosted provider and
GPT-4.1's JSON-schema route. The run keeps its text, is saved (as valid UTF-8) and says what the server sent."""

from __future__ import annotations

import io
import sqlite3

import pytest

from capel_ui.cli import main
from capel_ui.storage import get_engine, list_runs
from capel_ui.vocab import EXIT_BACKEND, EXIT_MISS, EXIT_OK
from tests.scripted_server import MODEL, ScriptedServer, ok


def generate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["generate", *argv], stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def saved_text_bytes() -> bytes:
    """The saved run's text as SQLite holds it (CAST to BLOB: the bytes, which must decode as UTF-8)."""
    path = get_engine().url.database
    with sqlite3.connect(path) as db:
        return db.execute("SELECT CAST(text AS BLOB) FROM runs").fetchone()[0]


def on_compatible(server: ScriptedServer) -> list[str]:
    return ["--model", MODEL, "--base-url", server.url]


def on_anthropic(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "key-for-anthropic-123")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    return ["--model", "claude-sonnet-4-5"]


@pytest.mark.parametrize("route", ["compatible", "anthropic"])
def test_a_lone_surrogate_escape_becomes_a_replacement_character_and_the_run_is_saved(scripted, monkeypatch, route):
    args = on_compatible(scripted) if route == "compatible" else on_anthropic(scripted, monkeypatch)
    scripted.script(ok(["One two ", "three \udc00 four ", "five six."]))  # sent as the JSON escape \udc00
    code, out, err = generate(*args, "--mode", "baseline", "--target", "6", "Count to six.")
    assert code == EXIT_OK, err
    assert out.strip() == "One two three \ufffd four five six."
    [run] = list_runs(get_engine())
    assert (run.status, run.verified, run.text) == ("complete", True, "One two three \ufffd four five six.")
    assert "not valid Unicode" in run.notice
    assert saved_text_bytes().decode("utf-8") == run.text


def test_a_lone_surrogate_in_a_responses_api_stream_is_replaced_and_the_run_saved(scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-1")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted.url)
    scripted.script(ok(["One two ", "three \udc00 four ", "five six."]))  # response.output_text.delta events
    code, _, err = generate("--model", "gpt-5-mini", "--mode", "baseline", "--target", "6", "Count to six.")
    assert code == EXIT_OK, err
    assert scripted.responses_requests  # the Responses API, not chat completions
    [run] = list_runs(get_engine())
    assert (run.status, run.text) == ("complete", "One two three \ufffd four five six.")
    assert "not valid Unicode" in run.notice


def test_a_lone_surrogate_in_gpt_4_1s_json_string_is_replaced_and_the_run_saved(scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-1")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted.url)
    scripted.script(ok(['{"text": "Harbour lights', " \\udc00 blink", ' slowly."}']))  # the escape in the JSON text
    code, out, err = generate("--model", "gpt-4.1", "--mode", "exact", "--target", "4", "Harbour.")
    assert code in (EXIT_OK, EXIT_MISS), err
    [run] = list_runs(get_engine())
    assert run.status == "complete" and run.text == "Harbour lights \ufffd blink slowly."
    assert "not valid Unicode" in run.notice
    assert "Harbour lights" in out and "Traceback" not in err


def test_an_escape_that_is_not_json_keeps_the_text_before_it_and_names_the_servers_output(scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-1")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted.url)
    scripted.script(ok(['{"text": "Harbour lights', ' blink \\uZZZZ slowly."}']))
    code, out, err = generate("--model", "gpt-4.1", "--mode", "exact", "--target", "4", "Harbour.")
    assert code == EXIT_BACKEND, err
    [run] = list_runs(get_engine())
    assert (run.status, run.text, run.failure_kind) == ("partial", "Harbour lights blink", "not_openai")
    assert "malformed JSON" in run.failure and "\\\\uZZZZ" in run.failure and "cut" not in run.failure
    assert "malformed JSON" in err and "Harbour lights blink" in out

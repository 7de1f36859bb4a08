"""Every hosted provider a writer compares, reached through its OpenAI-compatible endpoint: the model id picks
the provider, the key comes from its own variable, and the request reaches the vendor's address (moved to the
scripted server on 127.0.0.1 by the provider's base-URL variable) in the chat-completions wire format.

And the guarantee on chat models without grammar tools: GPT-4.1 and GPT-4o take the length as a strict
JSON-schema `pattern`, which the scripted server here enforces."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from capel_ui.backends import get_backend
from capel_ui.backends.providers import spec_of
from capel_ui.backends.registry import provider_of
from capel_ui.cli import main
from capel_ui.storage import get_engine, list_runs
from capel_ui.vocab import EXIT_OK, EXIT_USAGE
from tests.scripted_server import Behaviour, ScriptedServer, answer, ok, status

HOSTED = [
    # provider, model typed, id sent, key variable, base-URL variable
    ("anthropic", "claude-sonnet-4-5", "claude-sonnet-4-5", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    ("gemini", "gemini-2.5-flash", "gemini-2.5-flash", "GEMINI_API_KEY", "GEMINI_BASE_URL"),
    ("xai", "grok-4", "grok-4", "XAI_API_KEY", "XAI_BASE_URL"),
    ("mistral", "mistral-large-latest", "mistral-large-latest", "MISTRAL_API_KEY", "MISTRAL_BASE_URL"),
    ("openrouter", "openrouter:anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4.5", "OPENROUTER_API_KEY",
     "OPENROUTER_BASE_URL"),
]  # fmt: skip


def generate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["generate", *argv], stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("provider", "model", "sent", "key_env", "url_env"), HOSTED, ids=[h[0] for h in HOSTED])
def test_each_hosted_model_reaches_its_vendor_with_its_key_and_id(
    monkeypatch, scripted: ScriptedServer, provider, model, sent, key_env, url_env
) -> None:
    monkeypatch.setenv(key_env, f"key-for-{provider}-123")
    monkeypatch.setenv(url_env, scripted.url)
    scripted.script(ok("Three short words."))
    code, out, err = generate("--model", model, "--mode", "baseline", "--target", "3", "Write three words.")
    assert (code, out.strip()) == (EXIT_OK, "Three short words."), err
    [request] = scripted.chat_requests
    assert request.path == "/v1/chat/completions" and request.key == f"key-for-{provider}-123"
    body = request.body
    assert (body["model"], body["stream"], body["messages"][-1]["role"]) == (sent, True, "user")
    assert "response_format" not in body and "grammar" not in body  # no guarantee is claimed for these
    [run] = list_runs(get_engine())
    assert (run.backend, run.model, run.verified) == (provider, sent, True)


@pytest.mark.parametrize(("provider", "model", "sent", "key_env", "url_env"), HOSTED, ids=[h[0] for h in HOSTED])
def test_a_missing_key_names_the_variable_to_set(monkeypatch, provider, model, sent, key_env, url_env) -> None:
    monkeypatch.delenv(key_env, raising=False)
    code, _, err = generate("--model", model, "--target", "3", "Hi.")
    assert code != EXIT_OK and f"set {key_env}" in err
    assert provider_of(model) == provider


def test_the_hosted_providers_offer_capel_and_baseline_and_say_why_not_exact() -> None:
    for provider, model, *_ in HOSTED:
        spec = spec_of(provider)  # xAI's pattern route opens only once a probe passed (test_vendor_guarantee.py)
        assert spec.keyed and (not spec.capabilities(model).grammar or spec.probe_gated), provider
        assert "CAPEL" in spec.note


def test_mistral_repairs_by_continuing_its_verified_prefix() -> None:
    assert spec_of("mistral").capabilities("mistral-large-latest").prefill == "prefix"


def test_an_exact_mode_on_a_model_without_a_pattern_is_refused_in_one_line(monkeypatch, scripted) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k-123456")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", scripted.url)
    code, _, err = generate("--model", "claude-sonnet-4-5", "--mode", "exact", "--target", "3", "Hi.")
    assert code == EXIT_USAGE and "grammar" in err and scripted.chat_requests == []


# ----- GPT-4.1 / GPT-4o: the length as a strict JSON-schema pattern ------------------------------------------------

CANDIDATES = [
    "Harbour lights blink slowly.",
    "The old harbour lights blink slowly across the water tonight.",
    "Fog rolls over the quiet harbour while the old lights blink slowly tonight.",
]


def enforcing_pattern(body: dict[str, Any]) -> Behaviour:
    """As OpenAI's strict mode does: answer only with a JSON object whose `text` matches the schema's pattern
    (here: the first candidate that does), or refuse a schema that is not strict, object-rooted, closed."""
    spec = (body.get("response_format") or {}).get("json_schema") or {}
    schema = spec.get("schema") or {}
    if not spec.get("strict") or schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        return status(400, "Invalid schema for response_format 'text': strict object schemas only.")
    if schema.get("required") != ["text"]:
        return status(400, "Invalid schema: 'required' must list every property.")
    pattern = schema["properties"]["text"]["pattern"]
    fitting = [t for t in CANDIDATES if re.fullmatch(pattern, t)]
    if not fitting:
        return status(400, "No text matches the pattern.")
    reply = json.dumps({"text": fitting[0]})
    return ok([reply[:7], reply[7:20], reply[20:]])  # split anywhere, as a stream is


@pytest.mark.parametrize(("target", "text"), [(4, CANDIDATES[0]), (10, CANDIDATES[1])])
def test_gpt_4_1_exact_goes_through_a_strict_json_schema_pattern_and_is_verified(
    monkeypatch, scripted: ScriptedServer, target: int, text: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-1")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted.url)  # as the openai client honours it
    scripted.script(answer(enforcing_pattern))
    code, out, err = generate("--model", "gpt-4.1", "--mode", "exact", "--target", str(target), "Harbour.")
    assert (code, out.strip()) == (EXIT_OK, text), err
    fmt = scripted.chat_requests[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    [run] = list_runs(get_engine())
    assert (run.text, run.count, run.verified, run.mode) == (text, target, True, "exact")


def test_gpt_4o_takes_the_pattern_too_and_deepseek_does_not() -> None:
    assert get_backend("gpt-4o", api_key="sk-x").capabilities.grammar_field == "json_schema"
    assert get_backend("deepseek-chat", api_key="sk-x").capabilities.grammar_field is None


# ----- Compare: one model per vendor, one click ----------------------------------------------------------------


def test_compare_puts_one_model_per_vendor_side_by_side_with_one_click(app_test, monkeypatch) -> None:
    for env in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(env, "key-123456")
    at = app_test.switch_page("app_pages/compare.py").run()
    next(b for b in at.button if b.label == "One model per vendor").click().run()
    assert not at.exception, at.exception
    chosen = [m.provider for m in at.multiselect(key="c_models").value]
    assert chosen[0] == "embedded" and {"openai", "anthropic", "gemini"} <= set(chosen)
    assert at.multiselect(key="c_modes").value == ["exact", "capel"]
    plan = [c.value for c in at.caption if c.value.startswith("Skipped")]
    assert not any("Claude" in line and "CAPEL" in line for line in plan)  # Claude runs in CAPEL, not skipped

"""Every hosted vendor as its own documents describe it: each scripted vendor checks bodies as that vendor does
(tests/scripted_vendors.py) and answers a refusal in its own shape; the app sends only what each documents, in its
words, within each model's limits, refuses before sending what a vendor would ignore or refuse, and shows a
vendor's refusal in full."""

from __future__ import annotations

import io
import json

import pytest

from capel_ui.cli import main
from capel_ui.vocab import EXIT_OK, EXIT_USAGE
from tests.scripted_server import ScriptedServer, countdown, ok, status
from tests.scripted_vendors import VENDORS

KEYS = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "gemini": ("GEMINI_API_KEY", "GEMINI_BASE_URL"),
    "xai": ("XAI_API_KEY", "XAI_BASE_URL"),
    "mistral": ("MISTRAL_API_KEY", "MISTRAL_BASE_URL"),
    "openrouter": ("OPENROUTER_API_KEY", "OPENROUTER_BASE_URL"),
}


def generate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["generate", *argv], stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def vendor(monkeypatch, scripted: ScriptedServer):
    """Point `provider`'s address at the scripted server, checking bodies as that vendor does."""

    def become(provider: str) -> ScriptedServer:
        key_env, url_env = KEYS[provider]
        monkeypatch.setenv(key_env, f"key-{provider}-123456")
        monkeypatch.setenv(url_env, scripted.url)
        return scripted.as_vendor(VENDORS[provider])

    return become


RUNS = [
    # provider, model, mode, extra flags (a seed where the vendor takes one)
    ("openai", "gpt-4.1", "baseline", ("--seed", "3")),
    ("openai", "gpt-4o", "capel", ("--seed", "3")),
    ("anthropic", "claude-sonnet-4-5", "baseline", ()),
    ("anthropic", "claude-sonnet-5-5", "capel", ()),
    ("gemini", "gemini-3.8-flash", "capel", ()),
    ("gemini", "gemini-2.5-flash", "baseline", ()),
    ("xai", "grok-4.6", "capel", ("--seed", "3")),
    ("mistral", "mistral-small-latest", "capel", ("--seed", "3")),
    ("mistral", "mistral-large-latest", "baseline", ()),
    ("openrouter", "openrouter:anthropic/claude-sonnet-4.5", "capel", ("--seed", "3")),
]


@pytest.mark.parametrize(("provider", "model", "mode", "extra"), RUNS, ids=[f"{r[0]}-{r[2]}" for r in RUNS])
def test_generate_succeeds_against_each_vendor_checking_bodies_as_it_does(vendor, provider, model, mode, extra):
    server = vendor(provider)
    server.script(ok(countdown(3) if mode == "capel" else "Three short words."))
    code, _, err = generate("--model", model, "--mode", mode, "--target", "3", *extra, "Write three words.")
    assert code == EXIT_OK, err
    [request] = server.chat_requests
    assert request.body["stream"] is True


def test_mistral_gets_random_seed_and_no_stream_options(vendor) -> None:
    server = vendor("mistral")
    server.script(ok("Three short words."))
    code, _, err = generate(
        "--model", "mistral-small-latest", "--mode", "baseline", "--target", "3", "--seed", "3", "Hi."
    )
    assert code == EXIT_OK, err
    body = server.last_body
    assert body["random_seed"] == 3 and "seed" not in body and "stream_options" not in body


def test_mistral_refusal_reaches_the_writer_in_full_plain_text(vendor) -> None:
    server = vendor("mistral")
    server.as_vendor(None)  # a body Mistral refuses, as the app sent before issue 33
    detail = [{"type": "extra_forbidden", "loc": ["body", "stream_options"], "msg": "Extra inputs are not permitted"}]
    server.script(status(422, {"object": "error", "message": {"detail": detail}, "type": "invalid_request_error"}))
    code, _, err = generate("--model", "mistral-small-latest", "--mode", "baseline", "--target", "3", "Hi.")
    assert code != EXIT_OK
    assert "(422): body.stream_options: Extra inputs are not permitted" in err, err
    assert "{" not in err.split("(422)")[1]  # plain words, not the JSON body


def test_the_scripted_mistral_refuses_what_mistral_refuses(vendor) -> None:
    check = VENDORS["mistral"]
    refused = check("/v1/chat/completions", {"model": "m", "messages": [], "stream_options": {}, "seed": 3})
    assert refused is not None and refused[0] == 422
    assert [d["loc"][-1] for d in refused[1]["message"]["detail"]] == ["stream_options", "seed"]
    assert check("/v1/chat/completions", {"model": "m", "messages": [], "random_seed": 3}) is None


def test_openai_gets_max_completion_tokens_capped_to_the_models_limit(vendor) -> None:
    server = vendor("openai")
    server.script(ok("Three short words."))
    code, _, err = generate("--model", "gpt-4.1", "--mode", "baseline", "--target", "3", "--max-tokens", "80064", "Hi.")
    assert code == EXIT_OK, err
    body = server.last_body
    assert body["max_completion_tokens"] == 32_768 and "max_tokens" not in body


def test_the_scripted_openai_refuses_a_budget_over_gpt_4_1s_limit() -> None:
    refused = VENDORS["openai"]("/v1/chat/completions", {"model": "gpt-4.1", "messages": [], "max_tokens": 80064})
    assert refused is not None and "at most 32768" in refused[1]["error"]["message"]


@pytest.mark.parametrize(
    ("model", "target", "largest"),
    [("gpt-4.1", "8000", "4,088"), ("gpt-4o", "3000", "2,040")],
)
def test_a_target_the_model_cannot_hold_is_refused_before_sending_with_the_largest_that_fits(
    vendor, model, target, largest
) -> None:
    server = vendor("openai")
    code, _, err = generate("--model", model, "--mode", "exact", "--target", target, "Hi.")
    assert code == EXIT_USAGE and server.chat_requests == []
    assert f"The largest target that fits is {largest} English words" in err, err


def test_a_pattern_longer_than_llguidance_compiles_is_refused_with_its_limit(vendor) -> None:
    server = vendor("openai")
    code, _, err = generate("--model", "gpt-4.1", "--mode", "exact", "--target", "6000", "--max-tokens", "30000", "Hi.")
    assert code == EXIT_USAGE and server.chat_requests == []
    assert "LLGuidance" in err and "The largest target that fits is 5,500 English words" in err, err


@pytest.mark.parametrize(
    ("provider", "model", "flags", "said"),
    [
        ("anthropic", "claude-sonnet-4-5", ("--seed", "3"), "takes no seed"),
        ("anthropic", "claude-sonnet-4-5", ("--temperature", "1.5"), "temperature from 0 to 1"),
        ("gemini", "gemini-2.5-flash", ("--seed", "3"), "takes no seed"),
    ],
)
def test_what_a_vendor_would_ignore_is_refused_before_sending(vendor, provider, model, flags, said) -> None:
    server = vendor(provider)
    code, _, err = generate("--model", model, "--mode", "baseline", "--target", "3", *flags, "Hi.")
    assert code != EXIT_OK and said in err, err
    assert server.chat_requests == []


def test_openrouter_requires_every_parameter_sent_to_be_honoured(vendor) -> None:
    server = vendor("openrouter")
    server.script(ok("Three short words."))
    code, _, err = generate(
        "--model", "openrouter:google/gemini-2.5-flash", "--mode", "baseline", "--target", "3", "Hi."
    )
    assert code == EXIT_OK, err
    assert server.last_body["provider"] == {"require_parameters": True}  # pinned to OpenAI: test_vendor_guarantee


def test_claude_budget_is_capped_to_its_output_limit(vendor) -> None:
    server = vendor("anthropic")
    server.script(ok("Three short words."))
    code, _, err = generate("--model", "claude-sonnet-4-5", "--mode", "baseline", "--target", "3", "--max-tokens",
                            "90000", "Hi.")  # fmt: skip
    assert code == EXIT_OK, err
    assert server.last_body["max_tokens"] == 64_000


@pytest.mark.parametrize(
    ("provider", "body", "plain"),
    [
        ("mistral", {"model": "m", "messages": [], "seed": 1}, "body.seed: Extra inputs are not permitted"),
        ("gemini", {"model": "m", "messages": [], "seed": 1}, 'Unknown name "seed": Cannot find field.'),
        ("xai", {"model": "m", "messages": [], "foo": 1}, "Unknown field: foo"),
        ("anthropic", {"model": "claude-sonnet-4-5", "messages": [], "max_tokens": 70000}, "maximum allowed number"),
        ("openai", {"model": "m", "messages": [], "foo": 1}, "Unrecognized request argument supplied: foo"),
    ],
)
def test_each_vendors_refusal_is_read_as_its_own_plain_words(provider, body, plain) -> None:
    from types import SimpleNamespace

    from capel_ui.backends.dialect import explanation

    refusal = VENDORS[provider]("/v1/chat/completions", body)
    assert refusal is not None
    said = explanation(SimpleNamespace(response=SimpleNamespace(text=json.dumps(refusal[1]))))
    assert plain in said and "{" not in said


def test_doctor_without_a_key_says_where_to_put_one_and_sends_nothing(monkeypatch, scripted) -> None:
    monkeypatch.delenv("XAI_API_KEY", raising=False)
    monkeypatch.setenv("XAI_BASE_URL", scripted.url)
    out, err = io.StringIO(), io.StringIO()
    code = main(["doctor", "--provider", "xai"], stdin=io.StringIO(""), stdout=out, stderr=err)
    assert code != EXIT_OK and "No API key for xAI (Grok): set XAI_API_KEY" in err.getvalue()
    assert scripted.requests == []

"""`models list --provider X` asks the vendor's /models endpoint when a key is set (else lists what the app
declares), and `doctor --provider X` sends the smallest request per capability and prints what the vendor took:
both against scripted vendors that check bodies as the real ones do and refuse some."""

from __future__ import annotations

import io

import pytest

from capel_ui.backends import spec_of
from capel_ui.cli import main
from capel_ui.vocab import EXIT_OK
from tests.pattern_vendors import writes
from tests.scripted_server import ScriptedServer
from tests.scripted_vendors import VENDORS


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_models_list_asks_the_vendors_models_endpoint_with_the_key(monkeypatch, scripted: ScriptedServer) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", "mk-secret-123456")
    monkeypatch.setenv("MISTRAL_BASE_URL", scripted.url)
    scripted.models = ["mistral-large-latest", "mistral-next-2027"]
    code, out, err = run("models", "list", "--provider", "mistral")
    assert code == EXIT_OK, err
    assert [line.split()[0] for line in out.splitlines()] == ["mistral-large-latest", "mistral-next-2027"]
    assert "context 256,000" in out.splitlines()[0]  # a declared id shows its limit (Mistral Large 3: 256k)
    [request] = scripted.requests
    assert (request.method, request.path, request.key) == ("GET", "/v1/models", "mk-secret-123456")
    assert "mk-secret" not in out + err


def test_models_list_without_a_key_shows_the_declared_ids_and_asks_nobody(monkeypatch, scripted) -> None:
    monkeypatch.delenv("XAI_API_KEY", raising=False)
    monkeypatch.setenv("XAI_BASE_URL", scripted.url)
    code, out, err = run("models", "list", "--provider", "xai")
    assert code == EXIT_OK and out.split()[0] == "grok-4.6"
    assert "No XAI_API_KEY set" in err and "xai-sdk 1.21.0" in err and scripted.requests == []


def test_openrouter_ids_come_back_in_the_apps_naming(monkeypatch, scripted) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-123456")
    monkeypatch.setenv("OPENROUTER_BASE_URL", scripted.url)
    scripted.models = ["anthropic/claude-sonnet-5"]
    code, out, _ = run("models", "list", "--provider", "openrouter")
    assert code == EXIT_OK and out.split()[0] == "openrouter:anthropic/claude-sonnet-5"


DOCTOR = [
    # provider, model, the capabilities the scripted vendor accepts (yes) / refuses (no), a word of its refusal
    ("gemini", "gemini-3.8-flash", {"streaming": "yes", "seed (seed)": "no", "grammar tool": "no"}, "Unknown name"),
    ("mistral", "mistral-small-latest",
     {"streaming": "yes", "seed (random_seed)": "yes", "prefill/prefix": "yes", "grammar tool": "no"},
     "Extra inputs are not permitted"),
    ("openai", "gpt-4.1", {"streaming": "yes", "seed (seed)": "yes", "JSON-schema pattern": "yes"}, ""),
]  # fmt: skip


@pytest.mark.parametrize(("provider", "model", "expected", "refusal"), DOCTOR, ids=[d[0] for d in DOCTOR])
def test_doctor_prints_what_the_vendor_accepted_per_capability(
    monkeypatch, scripted: ScriptedServer, provider, model, expected, refusal
) -> None:
    key_env, url_env = f"{provider.upper()}_API_KEY", f"{provider.upper()}_BASE_URL"
    monkeypatch.setenv(key_env, "doctor-key-123456")
    monkeypatch.setenv(url_env, scripted.url)
    scripted.as_vendor(VENDORS[provider]).script(then=writes("OK"))  # a vendor that holds a pattern it is sent
    code, out, err = run("doctor", "--provider", provider, "--model", model)
    assert code == EXIT_OK, err
    rows = {line[:22].strip(): line[22:].split()[0] for line in out.splitlines()}
    assert {k: rows[k] for k in expected} == expected, out
    assert refusal in out and "doctor-key-123456" not in out + err
    sent = [r.body for r in scripted.requests if r.body]
    probed = 1 if spec_of(provider).capabilities(model).grammar else 0  # the guarantee: the app's own probe
    assert len(sent) == 5 + probed and all(b["model"] == model for b in sent)

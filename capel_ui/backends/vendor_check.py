"""Asking a hosted vendor directly, outside any run: which models its key can use (`models list --provider X`)
and which of the capabilities the app relies on its endpoint accepts (`doctor --provider X`).

Both go through the `openai` client at the vendor's OpenAI-compatible address (moved by its base-URL variable, as
for runs), with the key `resolve_key` finds; every message leaves redacted (the key masked). The doctor sends the
smallest request for each capability as the vendor's own documents would name it, even one the app does not send
there yet (a seed to Gemini, say): that is the open question it settles.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import openai

from ..redact import redact
from .base import BackendError
from .dialect import explanation
from .providers import spec_of
from .providers.spec import ProviderSpec
from .registry import key_help, resolve_key

TIMEOUT = 30.0
PROMPT = [{"role": "user", "content": "Answer with the single word OK."}]


def _client(spec: ProviderSpec, base_url: str | None = None) -> tuple[openai.OpenAI, str]:
    """The client for `spec`'s API, and its key (to mask); a BackendError when no key is set."""
    key = resolve_key(spec.name)
    if key is None:
        raise BackendError("auth", f"No API key for {spec.label}: {key_help(spec.name)}.")
    url = base_url or spec.address(None)
    if spec.name == "openai" and not base_url:
        url = None  # the client reads OPENAI_BASE_URL itself, as for runs
    client = openai.OpenAI(base_url=url, api_key=key.value, max_retries=0, timeout=TIMEOUT)
    client.organization = client.project = None
    return client, key.value


def vendor_models(provider: str) -> list[str]:
    """The model ids the vendor's `/models` endpoint lists for this key, in the app's naming (OpenRouter's with
    `openrouter:`); a BackendError with the vendor's own words when it refuses."""
    spec = spec_of(provider)
    client, key = _client(spec)
    try:
        ids = sorted(m.id for m in client.models.list())
    except openai.APIStatusError as exc:
        said = explanation(exc)
        raise BackendError("server", redact(f"{spec.label} answered {exc.status_code}: {said}", [key])) from None
    except openai.APIError as exc:
        said = f"Could not ask {spec.label} for its models: {exc}"
        raise BackendError("unreachable", redact(said, [key])) from None
    prefix = "openrouter:" if provider == "openrouter" else ""
    return [f"{prefix}{i}" for i in ids]


@dataclass(frozen=True)
class Check:
    """One capability, what was sent for it and what the vendor answered."""

    capability: str
    accepted: bool
    said: str  # the vendor's words, or what came back


def doctor(provider: str, model: str | None = None) -> Iterator[Check]:
    """The smallest real request per capability the app relies on (streaming, seed, prefill/prefix, JSON-schema
    pattern, grammar tool), one after another, each with what the vendor answered."""
    spec = spec_of(provider)
    model = (model or spec.default_model or "").removeprefix("openrouter:")
    client, key = _client(spec)
    dialect = spec.dialect
    budget = dialect.max_tokens_field if dialect else "max_tokens"
    base: dict[str, Any] = {"model": model, "messages": PROMPT, "stream": True, budget: 16}
    usage = {"stream_options": {"include_usage": True}} if dialect is None or dialect.stream_usage else {}
    caps = spec.capabilities(model)
    seed_field = (dialect.seed_field if dialect else None) or "seed"
    prefix_message: dict[str, Any] = {"role": "assistant", "content": "O"}
    if caps.prefill == "prefix" or caps.prefill is None:
        prefix_message["prefix"] = True  # Mistral's and DeepSeek's documented form; asked of the others too
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "pattern": "^(OK)$"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "text", "strict": True, "schema": schema}}
    checks = [
        ("streaming", {**base, **usage}, client),
        (f"seed ({seed_field})", {**base, seed_field: 1}, client),
        ("prefill/prefix", {**base, "messages": [*PROMPT, prefix_message]}, _prefill_client(client, spec, caps)),
        ("JSON-schema pattern", {**base, "response_format": fmt}, client),
    ]
    for name, body, c in checks:
        yield _send(name, body, c, key, pattern=name == "JSON-schema pattern")
    yield _grammar_tool(client, model, key)


def _prefill_client(client: openai.OpenAI, spec: ProviderSpec, caps: Any) -> openai.OpenAI:
    if caps.prefill_path:
        return client.with_options(base_url=str(client.base_url).rstrip("/") + caps.prefill_path)
    return client


def _send(name: str, body: dict[str, Any], client: openai.OpenAI, key: str, *, pattern: bool = False) -> Check:
    text = ""
    try:
        stream = client.chat.completions.create(extra_body=body, **_minimal(body))
        for chunk in stream:
            for choice in chunk.choices or ():
                text += (choice.delta.content or "") if choice.delta else ""
    except openai.APIStatusError as exc:
        return Check(name, False, redact(f"refused ({exc.status_code}): {explanation(exc)}", [key]))
    except openai.APIError as exc:
        return Check(name, False, redact(f"failed: {exc}", [key]))
    if pattern:
        try:
            held = json.loads(text).get("text") == "OK"
        except (ValueError, AttributeError):
            held = False
        said = "answered within the pattern" if held else f"accepted, but the answer broke the pattern: {text!r}"
        return Check(name, held, said)
    return Check(name, bool(text), f"answered {text[:40]!r}" if text else "answered no text")


def _minimal(body: dict[str, Any]) -> dict[str, Any]:
    """The client's required arguments; everything else goes as `extra_body`, exactly as written."""
    return {"model": body["model"], "messages": body["messages"], "stream": True}


def _grammar_tool(client: openai.OpenAI, model: str, key: str) -> Check:
    """A Responses API custom tool whose input a Lark grammar fixes to "OK" (OpenAI's GPT-5 family)."""
    tool = {
        "type": "custom",
        "name": "write_text",
        "description": "Write the text.",
        "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "OK"'},
    }
    written = ""
    try:
        events = client.responses.create(
            model=model,
            input=PROMPT,  # type: ignore[arg-type]
            tools=[tool],  # type: ignore[list-item]
            tool_choice={"type": "custom", "name": "write_text"},
            stream=True,
            store=False,
        )
        for event in events:
            if event.type == "response.custom_tool_call_input.delta":
                written += event.delta
    except openai.APIStatusError as exc:
        return Check("grammar tool", False, redact(f"refused ({exc.status_code}): {explanation(exc)}", [key]))
    except openai.APIError as exc:
        return Check("grammar tool", False, redact(f"failed: {exc}", [key]))
    held = written == "OK"
    said = "answered within the grammar" if held else f"answered {written!r}"
    return Check("grammar tool", held, said)

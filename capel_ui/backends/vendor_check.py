"""Asking a hosted vendor directly, outside any run: which models its key can use (`models list --provider X`)
and which of the capabilities the app relies on its endpoint accepts (`doctor --provider X`).

Both go through the `openai` client at the vendor's OpenAI-compatible address (moved by its base-URL variable, as
for runs), with the key `resolve_key` finds. Every string that came from the vendor leaves this module masked
(`redact`: the key in use, URL credentials, authorization headers): `vendor_models` masks each id it returns,
`doctor` each check it yields, whatever part of the answer, a refusal or a header it quotes, so a server that echoes
the key (in an answer, a model id, an error body) never puts it on the terminal. The doctor sends the
smallest request for each capability as the vendor's own documents would name it, even one the app does not send
there yet (a seed to Gemini, say): that is the open question it settles. The pattern and the grammar tool admit
one answer no model writes unprompted (`probe.PROBE_ANSWER`, while the prompt asks for "OK"), so an answer within
them tells an enforced constraint from an ignored one; the last line, the guarantee, is the app's own probe of the
route its runs take on this key and model (`probe.vendor_probe`), or the vendor's declared reason why there is none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import openai

from ..redact import redact
from .base import BackendError
from .dialect import explanation
from .probe import PROBE_ANSWER, PROBE_GRAMMAR, vendor_probe
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
        ids = sorted(redact(str(m.id), [key]) for m in client.models.list())
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
    pattern, grammar tool), one after another, each with what the vendor answered; then the guarantee."""
    spec = spec_of(provider)
    named = model or spec.default_model or ""
    model = named.removeprefix("openrouter:")
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
        "properties": {"text": PROBE_GRAMMAR.json_schema()},
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
    held = False
    for name, body, c in checks:
        check = _masked(_send(name, body, c, key, pattern=name == "JSON-schema pattern"), key)
        held = held or (name == "JSON-schema pattern" and check.accepted)
        yield check
    yield _masked(_grammar_tool(client, model, key), key)
    yield _masked(_guarantee(provider, named, held), key)


def _guarantee(provider: str, model: str, pattern_held: bool) -> Check:
    """Whether the guaranteed modes hold on this key and model: the app's own probe of the route its runs take
    (asked again now, and cached for this process), or the vendor's declared reason why it has none."""
    result = vendor_probe(provider, model, refresh=True, always=True)
    if result is None:
        return Check("guarantee", False, "Not guaranteed: this model takes no grammar here; CAPEL and baseline run.")
    said = result.reason
    if not result.honoured and pattern_held and not spec_of(provider).capabilities(model).grammar:
        said += " The pattern held in this probe all the same; undocumented, so runs do not rely on it."
    return Check("guarantee", result.honoured, said)


def _masked(check: Check, key: str) -> Check:
    """The check as it may be shown: everything the vendor said in it redacted."""
    return replace(check, said=redact(check.said, [key]))


def _quoted(answer: str, key: str, limit: int = 40) -> str:
    """The start of an answer, quoted: masked before it is cut (a key cut short would not be recognised)."""
    return repr(redact(answer, [key])[:limit])


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
        return Check(name, False, f"refused ({exc.status_code}): {explanation(exc)}")
    except openai.APIError as exc:
        return Check(name, False, f"failed: {exc}")
    if pattern:
        try:
            held = json.loads(text).get("text") == PROBE_ANSWER
        except (ValueError, AttributeError):
            held = False
        said = (
            f"answered within the pattern ({PROBE_ANSWER!r}, not the OK asked for)"
            if held
            else f"accepted, but the answer broke the pattern: {_quoted(text, key)}"
        )
        return Check(name, held, said)
    return Check(name, bool(text), f"answered {_quoted(text, key)}" if text else "answered no text")


def _minimal(body: dict[str, Any]) -> dict[str, Any]:
    """The client's required arguments; everything else goes as `extra_body`, exactly as written."""
    return {"model": body["model"], "messages": body["messages"], "stream": True}


def _grammar_tool(client: openai.OpenAI, model: str, key: str) -> Check:
    """A Responses API custom tool whose input a Lark grammar fixes to `PROBE_ANSWER` (OpenAI's GPT-5 family)."""
    tool = {
        "type": "custom",
        "name": "write_text",
        "description": "Write the text.",
        "format": {"type": "grammar", "syntax": "lark", "definition": PROBE_GRAMMAR.render("lark").strip()},
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
        return Check("grammar tool", False, f"refused ({exc.status_code}): {explanation(exc)}")
    except openai.APIError as exc:
        return Check("grammar tool", False, f"failed: {exc}")
    held = written == PROBE_ANSWER
    said = f"answered within the grammar ({PROBE_ANSWER!r})" if held else f"answered {_quoted(written, key)}"
    return Check("grammar tool", held, said)

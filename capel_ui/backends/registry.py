"""Providers, their models and defaults, in one place; `get_backend()` turns a choice into a Backend.

Keys are looked up by name: the value passed in (typed for the session, or from Streamlit secrets), else
the provider's environment variable. A missing key is an error that says where to put one. Keys are held
only by the `openai` client object; nothing here stores or logs them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Literal

from .base import DEFAULT_CAPABILITIES, Backend, BackendError, Capabilities
from .embedded import start_server
from .openai_compat import OpenAICompatBackend

Provider = Literal["embedded", "gguf", "openai", "deepseek", "compatible"]

EMBEDDED_MODEL = "embedded"
LLAMA_CPP = Capabilities(grammar_field="grammar")
REASONING_OPENAI = Capabilities(reasoning=True, max_completion_tokens=True, ignores_temperature=True)


@dataclass(frozen=True)
class ProviderSpec:
    name: Provider
    label: str
    base_url: str | None
    key_env: str | None
    models: tuple[str, ...] = ()
    default_model: str | None = None
    model_caps: dict[str, Capabilities] = field(default_factory=dict)
    default_caps: Capabilities = DEFAULT_CAPABILITIES
    note: str = ""


PROVIDERS: dict[Provider, ProviderSpec] = {
    "embedded": ProviderSpec(
        "embedded",
        "Embedded (SmolLM2-135M, offline)",
        None,
        None,
        (EMBEDDED_MODEL,),
        EMBEDDED_MODEL,
        default_caps=LLAMA_CPP,
        note="A 135M model: fast and offline, guaranteed modes work; it does not write Chinese and rarely "
        "follows the countdown on its own.",
    ),
    "gguf": ProviderSpec(
        "gguf",
        "Local GGUF file",
        None,
        None,
        default_caps=LLAMA_CPP,
        note="Any .gguf file on this machine, served in-process by llama.cpp (e.g. a Qwen model for Chinese).",
    ),
    "openai": ProviderSpec(
        "openai",
        "OpenAI",
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        ("gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o", "gpt-4o-mini", "o4-mini"),
        "gpt-4.1",
        {"o4-mini": REASONING_OPENAI, "o3-mini": REASONING_OPENAI, "o3": REASONING_OPENAI, "o1": REASONING_OPENAI},
    ),
    "deepseek": ProviderSpec(
        "deepseek",
        "DeepSeek",
        "https://api.deepseek.com",
        "DEEPSEEK_API_KEY",
        ("deepseek-chat", "deepseek-reasoner"),
        "deepseek-chat",
        {"deepseek-reasoner": Capabilities(reasoning=True, ignores_temperature=True)},
    ),
    "compatible": ProviderSpec(
        "compatible",
        "OpenAI-compatible server",
        "http://127.0.0.1:8000/v1",
        "CAPEL_API_KEY",
        note="vLLM, Ollama, llama.cpp server, LM Studio: give the base URL and model id; pick the grammar field "
        "if the server takes one (llama.cpp: grammar; vLLM: structured_outputs or guided_grammar).",
    ),
}

# The paper (§4.3) saw these models misread the countdown; CAPEL falls back to the baseline instruction for them
# unless the user overrides it.
COUNTDOWN_FALLBACK: frozenset[str] = frozenset({"o4-mini", "gpt-4o-mini"})


def uses_fallback(model: str) -> bool:
    return model in COUNTDOWN_FALLBACK


def provider_of(model: str, base_url: str | None = None) -> Provider:
    """Guess the provider from a model id (CLI convenience): `embedded`, a .gguf path, a known id, or a URL."""
    if model == EMBEDDED_MODEL:
        return "embedded"
    if model.endswith(".gguf"):
        return "gguf"
    if base_url:
        for name, spec in PROVIDERS.items():
            if spec.base_url and base_url.rstrip("/") == spec.base_url.rstrip("/"):
                return name
        return "compatible"
    for name in ("openai", "deepseek"):
        if model in PROVIDERS[name].models:
            return name
    if model.startswith(("gpt-", "o1", "o3", "o4", "chatgpt-")):
        return "openai"
    if model.startswith("deepseek"):
        return "deepseek"
    raise BackendError(
        "bad_request",
        f"Unknown model {model!r}: use `embedded`, a path to a .gguf file, an OpenAI or DeepSeek model id, "
        "or give --base-url for any OpenAI-compatible server.",
    )


def resolve_key(provider: Provider, given: str | None = None) -> str | None:
    """The key typed for this session wins; else the provider's environment variable; else None."""
    if given:
        return given
    env = PROVIDERS[provider].key_env
    return os.environ.get(env) if env else None


def capabilities_for(provider: Provider, model: str, grammar_field: str | None = None) -> Capabilities:
    spec = PROVIDERS[provider]
    caps = spec.model_caps.get(model, spec.default_caps)
    if grammar_field:
        caps = replace(caps, grammar_field=grammar_field)  # type: ignore[arg-type]
    return caps


def get_backend(
    model: str = EMBEDDED_MODEL,
    *,
    provider: Provider | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    grammar_field: str | None = None,
    max_retries: int = 3,
    timeout: float = 120.0,
) -> Backend:
    """A ready backend for a model choice; raises BackendError with what to do (missing key, bad file)."""
    provider = provider or provider_of(model, base_url)
    spec = PROVIDERS[provider]
    caps = capabilities_for(provider, model, grammar_field)
    if provider in ("embedded", "gguf"):
        handle = start_server(None if provider == "embedded" else model)
        label = "SmolLM2-135M (embedded)" if provider == "embedded" else handle.path.name
        backend = OpenAICompatBackend(
            model,
            base_url=handle.base_url,
            api_key=handle.api_key,
            label=label,
            capabilities=caps,
            max_retries=max_retries,
            timeout=timeout,
        )
        backend.provider = provider
        return backend
    key = resolve_key(provider, api_key)
    hint = f"set {spec.key_env} or type a key in the sidebar" if spec.key_env else "type a key in the sidebar"
    if not key and provider in ("openai", "deepseek"):
        raise BackendError("auth", f"No API key for {spec.label}: {hint} (keys are kept for this session only).")
    url = base_url or spec.base_url
    backend = OpenAICompatBackend(
        model,
        base_url=url,
        api_key=key,
        label=f"{model} ({spec.label})",
        capabilities=caps,
        max_retries=max_retries,
        timeout=timeout,
        key_hint=hint,
    )
    backend.provider = provider
    return backend

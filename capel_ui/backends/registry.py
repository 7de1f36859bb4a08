"""Providers, their models and defaults, in one place; `get_backend()` turns a choice into a Backend.

The app, the CLI and the benchmarks all go through here, so a model's label, its capabilities and where its
key comes from are decided once. Keys are looked up by `resolve_key()`: the key typed for this session, else
`.streamlit/secrets.toml` (as Streamlit reads it), else the provider's environment variable. A missing key is
an error that says where to put one. Keys are held only by the `openai` client object; nothing here stores,
logs or shows them (`ApiKey`'s repr leaves the value out).
"""

from __future__ import annotations

import os
import re
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from ..vocab import PROJECT_ROOT
from .base import DEFAULT_CAPABILITIES, Backend, BackendError, Capabilities, GrammarField, PrefillStyle
from .embedded import start_server
from .openai_compat import OpenAICompatBackend
from .openai_responses import OpenAIResponsesBackend

Provider = Literal["embedded", "gguf", "openai", "deepseek", "compatible"]

EMBEDDED_MODEL = "embedded"
LLAMA_CPP = Capabilities(grammar_field="grammar", logprobs=True, prefill="assistant")
REASONING_OPENAI = Capabilities(reasoning=True, max_completion_tokens=True, ignores_temperature=True)
CHAT_OPENAI = Capabilities(logprobs=True)  # chat models return token log-probabilities (the fluency score)
# GPT-5 family: reasoning models that take grammar-constrained custom tools (Responses API). gpt-5, -mini and
# -nano reason at least "minimal"; from gpt-5.1 on the smallest effort is "none".
GPT5 = replace(REASONING_OPENAI, grammar_field="custom_tool", reasoning_effort="minimal")
GPT5_1 = replace(GPT5, reasoning_effort="none")
OPENAI_MODELS: dict[str, Capabilities] = {
    "gpt-5.6-sol": GPT5_1,
    "gpt-5.6-terra": GPT5_1,
    "gpt-5.6-luna": GPT5_1,
    "gpt-5.5": GPT5_1,
    "gpt-5.4": GPT5_1,
    "gpt-5.4-mini": GPT5_1,
    "gpt-5.4-nano": GPT5_1,
    "gpt-5.2": GPT5_1,
    "gpt-5.1": GPT5_1,
    "gpt-5": GPT5,
    "gpt-5-mini": GPT5,
    "gpt-5-nano": GPT5,
    "gpt-4.1": CHAT_OPENAI,
    "gpt-4.1-mini": CHAT_OPENAI,
    "gpt-4.1-nano": CHAT_OPENAI,
    "gpt-4o": CHAT_OPENAI,
    "gpt-4o-mini": CHAT_OPENAI,
    "o4-mini": REASONING_OPENAI,
    "o3": REASONING_OPENAI,
    "o3-mini": REASONING_OPENAI,
    "o1": REASONING_OPENAI,
}
"""OpenAI's models of 2026 and what each takes; any other id typed is sent as it is (see `capabilities_for`)."""


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
        ("gpt-4.1", *(m for m in OPENAI_MODELS if m not in ("gpt-4.1", "o3-mini", "o1"))),
        "gpt-4.1",
        OPENAI_MODELS,
        default_caps=Capabilities(logprobs=True),
        note="GPT-5-family models run the exact modes through a grammar-constrained custom tool (Responses API); "
        "OPENAI_BASE_URL is honoured as the openai client honours it (gateways, proxies, Azure's /openai/v1).",
    ),
    "deepseek": ProviderSpec(
        "deepseek",
        "DeepSeek",
        "https://api.deepseek.com",
        "DEEPSEEK_API_KEY",
        ("deepseek-chat", "deepseek-reasoner"),
        "deepseek-chat",
        {"deepseek-reasoner": Capabilities(reasoning=True, ignores_temperature=True)},
        # logprobs for the fluency score; chat prefix completion (beta) for repair
        default_caps=Capabilities(logprobs=True, prefill="prefix", prefill_path="/beta"),
        note="DeepSeek's API takes no grammar: CAPEL and baseline only.",
    ),
    "compatible": ProviderSpec(
        "compatible",
        "OpenAI-compatible server",
        "http://127.0.0.1:8000/v1",
        "CAPEL_API_KEY",
        note="vLLM, SGLang, Ollama, llama.cpp server, LM Studio: give the base URL and model id; pick the grammar "
        "field if the server takes one (llama.cpp: grammar; vLLM: structured_outputs or guided_grammar; SGLang: "
        "ebnf; Ollama, LM Studio: json_schema). The Write page probes whether the server honours it.",
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


# ----- keys -------------------------------------------------------------------------------------------------

KeySource = Literal["typed", "secrets", "environment"]


@dataclass(frozen=True)
class ApiKey:
    """A key and where it came from, so the sidebar and error messages can name the source, never the value."""

    value: str = field(repr=False)
    env: str  # the variable name it is known by (OPENAI_API_KEY, ...)
    source: KeySource
    path: Path | None = None  # the secrets file it came from

    @property
    def origin(self) -> str:
        """Where the key came from, in words: `OPENAI_API_KEY from the environment`."""
        if self.source == "typed":
            return "the key typed for this session"
        if self.source == "secrets":
            return f"{self.env} from secrets.toml ({self.path})"
        return f"{self.env} from the environment"


def secrets_files() -> tuple[Path, ...]:
    """Where Streamlit reads secrets, weakest first: the user's `~/.streamlit/`, then the project's."""
    return (Path.home() / ".streamlit" / "secrets.toml", PROJECT_ROOT / ".streamlit" / "secrets.toml")


def _toml_position(exc: tomllib.TOMLDecodeError) -> str:
    """`line 3, column 7` from a TOML error, and nothing else of its message (that could quote a key)."""
    found = re.search(r"line \d+, column \d+", str(exc))
    return f" at {found.group(0)}" if found else ""


def read_secret(name: str) -> tuple[str, Path] | None:
    """`name` from the secrets files (the project's wins over the user's), with the file it came from.

    A file that is not valid TOML is a BackendError naming the file and the position, never its content.
    """
    found: tuple[str, Path] | None = None
    for path in secrets_files():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except tomllib.TOMLDecodeError as exc:
            raise BackendError(
                "auth", f'{path} is not valid TOML{_toml_position(exc)}: fix it (NAME = "value") or remove it.'
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
            raise BackendError("auth", f"Cannot read {path}: {reason}; fix it or remove it.") from None
        value = data.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise BackendError("auth", f'{name} in {path} must be a quoted string: {name} = "...".')
        if value.strip():
            found = (value.strip(), path)
    return found


def resolve_key(provider: Provider, typed: str | None = None) -> ApiKey | None:
    """The key to use for `provider`: the one typed for this session, else secrets.toml, else the environment.

    The one lookup for the app and the CLI alike; None when the provider takes no key or none is set.
    Raises BackendError (kind `auth`) for a secrets file that cannot be read.
    """
    env = PROVIDERS[provider].key_env
    if env is None:
        return None
    if typed and typed.strip():
        return ApiKey(typed.strip(), env, "typed")
    secret = read_secret(env)
    if secret is not None:
        return ApiKey(secret[0], env, "secrets", secret[1])
    value = os.environ.get(env, "").strip()
    return ApiKey(value, env, "environment") if value else None


def key_help(provider: Provider) -> str:
    """Where a key for `provider` can go, for messages that ask for one."""
    env = PROVIDERS[provider].key_env
    return f"set {env} in the environment or in .streamlit/secrets.toml, or type a key in the app's sidebar"


# ----- model choices -----------------------------------------------------------------------------------------


def model_label(provider: Provider, model: str) -> str:
    """How a model is named to people everywhere (pickers, captions, error messages)."""
    if provider == "embedded":
        return "SmolLM2-135M (embedded)"
    if provider == "gguf":
        return Path(model).name
    return f"{model} ({PROVIDERS[provider].label})"


@dataclass(frozen=True)
class ModelChoice:
    """Which model to call, as the sidebar and Compare pick it; deliberately holds no key (it sits in session
    state and widget options, and a key must never be in either)."""

    provider: Provider
    model: str
    base_url: str | None = None
    grammar_field: GrammarField | None = None

    @property
    def label(self) -> str:
        return model_label(self.provider, self.model)

    @property
    def capabilities(self) -> Capabilities:
        return capabilities_for(self.provider, self.model, self.grammar_field)


EMBEDDED = ModelChoice("embedded", EMBEDDED_MODEL)


def capabilities_for(provider: Provider, model: str, grammar_field: str | None = None) -> Capabilities:
    """What `model` takes: the registry's entry (a dated id gets its family's), with the grammar field chosen.

    A compatible server reached through the Responses API (`custom_tool`: a gateway in front of OpenAI) serves
    OpenAI's models, so a known OpenAI id keeps its reasoning settings there."""
    spec = PROVIDERS[provider]
    if provider == "compatible" and grammar_field == "custom_tool":
        spec = PROVIDERS["openai"]
    caps = spec.model_caps.get(model) or spec.model_caps.get(_family(model), spec.default_caps)
    if grammar_field:
        caps = replace(caps, grammar_field=grammar_field)  # type: ignore[arg-type]
        if provider == "compatible" and caps.prefill is None:
            caps = replace(caps, prefill=PREFILL_BY_GRAMMAR_FIELD.get(grammar_field))
    return caps


PREFILL_BY_GRAMMAR_FIELD: dict[str, PrefillStyle] = {
    "grammar": "assistant",
    "guided_grammar": "continue_final_message",
    "structured_outputs": "continue_final_message",
}
"""A compatible server's grammar field names the server (llama.cpp, vLLM), and so how it continues an answer."""


def _family(model: str) -> str:
    """A dated snapshot's family (`gpt-5-mini-2025-08-07` → `gpt-5-mini`), so it gets the family's capabilities."""
    return re.sub(r"-\d{4}-\d{2}-\d{2}$", "", model)


def backend_class(caps: Capabilities) -> type[OpenAICompatBackend]:
    """The Responses API for grammar tools, chat completions for everything else: callers never choose."""
    return OpenAIResponsesBackend if caps.grammar_field == "custom_tool" else OpenAICompatBackend


def _base_url(provider: Provider, typed: str | None) -> str | None:
    """The URL typed, else the provider's. For OpenAI, None: the client then reads OPENAI_BASE_URL itself."""
    if typed:
        return typed
    return None if provider == "openai" else PROVIDERS[provider].base_url


def get_backend(
    model: str = EMBEDDED_MODEL,
    *,
    provider: Provider | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    grammar_field: str | None = None,
    max_retries: int = 3,
    timeout: float = 120.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Backend:
    """A ready backend for a model choice; raises BackendError with what to do (missing key, bad file).

    `api_key` is the key typed for this session (it wins, see `resolve_key`). `sleep` is how the backend waits
    between retries; tests pass a no-op so retry paths run without real waiting.
    """
    provider = provider or provider_of(model, base_url)
    spec = PROVIDERS[provider]
    caps = capabilities_for(provider, model, grammar_field)
    if provider in ("embedded", "gguf"):
        handle = start_server(None if provider == "embedded" else model)
        url, secret, hint = handle.base_url, handle.api_key, "the embedded server refused its own key; restart the app"
    else:
        key = resolve_key(provider, api_key)
        where = key_help(provider)
        if key is None and provider in ("openai", "deepseek"):
            raise BackendError("auth", f"No API key for {spec.label}: {where} (kept for this session only).")
        url, secret = _base_url(provider, base_url), key.value if key else None
        hint = f"check {key.origin}, or {where}" if key else f"this server wants a key: {where}"
    backend = backend_class(caps)(
        model,
        base_url=url,
        api_key=secret,
        label=model_label(provider, model),
        capabilities=caps,
        max_retries=max_retries,
        timeout=timeout,
        key_hint=hint,
        sleep=sleep,
    )
    backend.provider = provider
    return backend

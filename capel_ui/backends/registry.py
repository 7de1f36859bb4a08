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
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..vocab import MODE_LABELS, PROJECT_ROOT, Mode
from .base import Backend, BackendError, Capabilities, GrammarField, retry_backoff
from .guard import Guarded, redacted
from .providers import PROVIDERS, BackendArgs, ProviderSpec, spec_of
from .providers.embedded import EMBEDDED_MODEL

Provider = str
"""A provider's name: any registered one (see `providers/`; `spec_of` checks it)."""

COUNTDOWN_FALLBACK: frozenset[str] = frozenset({"o4-mini", "gpt-4o-mini"})
"""Models the paper (§4.3) saw misread the countdown: CAPEL gives them the baseline instruction instead."""
MARKERS_TOO_HARD: frozenset[str] = frozenset({EMBEDDED_MODEL})
"""Models too small to write under countdown markers: SmolLM2-135M, made to put <k> before each word, copies the
prompt's example ("Hello, world! How's everything…") or loops ("world! world! world!"; 7 in 15 best-ranked texts
of benchmarks/quality.py looped). The guaranteed countdown writes plain `exact` for them: the same grammar-kept
count, without the markers in the model's way."""


@dataclass(frozen=True)
class Fallback:
    """The mode a run uses instead of the one asked for on this model, and why."""

    mode: Mode
    reason: str  # what the model does, after its name: "is known to misread the countdown (paper §4.3)"

    def notice(self, label: str, asked: Mode) -> str:
        """The run's notice: what was done instead, why, and how to force the mode asked for."""
        used = "the baseline instruction" if self.mode == "baseline" else MODE_LABELS[self.mode]
        return (
            f"{label} {self.reason}, so {used} was used; turn off the fallback (Write's Options, or --no-fallback) "
            f"to force {MODE_LABELS[asked]}."
        )


PLANS_BY_COUNTDOWN = (
    "plans its last sentence when it sees the countdown (a plain exact text is closed at the last word wherever the "
    "model was, and no ending search runs on its server)"
)


def fallback(
    model: str, mode: Mode, capabilities: Capabilities | None = None, markers_count: bool = False
) -> Fallback | None:
    """What `mode` is written as on `model` (unless the user turns fallbacks off), or None. `capabilities` and
    `markers_count` (CAPEL's markers can count this target: `vocab.markers_can_count`) let `exact` take the
    countdown-visible grammar on a model that plans by it where no ending search runs."""
    if mode in ("capel", "draft-capel") and model in COUNTDOWN_FALLBACK:
        return Fallback("baseline", "is known to misread the countdown (paper §4.3)")
    if mode == "exact-countdown" and model in MARKERS_TOO_HARD:
        return Fallback("exact", "is too small to write under countdown markers (it loops or copies the example)")
    caps = capabilities or Capabilities()
    if mode == "exact" and markers_count and caps.plans_by_countdown and not caps.end_probability:
        return Fallback("exact-countdown", PLANS_BY_COUNTDOWN)
    return None


def provider_of(model: str, base_url: str | None = None) -> Provider:
    """Guess the provider from a model id (CLI convenience): one a provider owns whatever the URL (`embedded`,
    a .gguf path), else the provider at that URL (any other URL: one that takes a base URL), else a known id."""
    for spec in PROVIDERS.values():
        if spec.owns(model):
            return spec.name
    if base_url:
        for spec in PROVIDERS.values():
            if spec.base_url and base_url.rstrip("/") == spec.base_url.rstrip("/"):
                return spec.name
        return next(spec.name for spec in PROVIDERS.values() if spec.takes_base_url)
    for spec in PROVIDERS.values():
        if spec.recognises(model):
            return spec.name
    raise BackendError(
        "bad_request",
        f"Unknown model {model!r}: use `embedded`, a path to a .gguf file, a model id of OpenAI, Anthropic, Google, "
        "xAI, Mistral or DeepSeek (gpt-…, claude-…, gemini-…, grok-…, mistral-…, deepseek-…), openrouter:vendor/model, "
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
    env = spec_of(provider).key_env
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
    env = spec_of(provider).key_env
    return f"set {env} in the environment or in .streamlit/secrets.toml, or type a key in the app's sidebar"


# ----- model choices -----------------------------------------------------------------------------------------


def model_label(provider: Provider, model: str) -> str:
    """How a model is named to people everywhere (pickers, captions, error messages)."""
    return spec_of(provider).name_model(model)


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

    @property
    def spec(self) -> ProviderSpec:
        """Its provider's declaration: ask it (local? takes a base URL?) rather than compare names."""
        return spec_of(self.provider)


EMBEDDED = ModelChoice("embedded", EMBEDDED_MODEL)


def capabilities_for(provider: Provider, model: str, grammar_field: str | None = None) -> Capabilities:
    """What `model` takes, as its provider declares it, with the grammar field chosen."""
    return spec_of(provider).capabilities(model, grammar_field)


def get_backend(
    model: str = EMBEDDED_MODEL,
    *,
    provider: Provider | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    grammar_field: str | None = None,
    max_retries: int = 3,
    timeout: float = 120.0,
    sleep: Callable[[float], None] | None = None,
) -> Backend:
    """A ready backend for a model choice, inside the guard that retries and words its failures; raises
    BackendError with what to do (missing key, bad file, unknown provider).

    `api_key` is the key typed for this session (it wins, see `resolve_key`). `sleep` is how the guard waits
    between retries (None: on the run's cancel token, which a Stop ends); tests pass a no-op so retry paths run
    without real waiting.
    """
    spec = spec_of(provider or provider_of(model, base_url))
    key = resolve_key(spec.name, api_key)
    where = key_help(spec.name)
    if key is None and spec.keyed:
        raise BackendError("auth", f"No API key for {spec.label}: {where} (kept for this session only).")
    hint = f"check {key.origin}, or {where}" if key else f"this server wants a key: {where}"
    args = BackendArgs(
        spec,
        model,
        base_url or None,
        key.value if key else None,
        hint,
        spec.capabilities(model, grammar_field),
        spec.name_model(model),
        timeout,
    )
    secrets = (args.api_key,)
    try:
        backend = spec.factory(args)
    except BackendError as exc:
        raise redacted(exc, secrets) from None
    backend.provider = spec.name
    return Guarded(
        backend, remote=spec.keyed, max_retries=max_retries, backoff=retry_backoff(), sleep=sleep, secrets=secrets
    )

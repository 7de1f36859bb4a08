"""OpenRouter: one key, many vendors' models, OpenAI-compatible. A model is named `openrouter:vendor/model`
(`openrouter:anthropic/claude-sonnet-4.5`); the part after `openrouter:` is the id sent.

Which features pass through depends on the model behind it, so none beyond streaming is declared: CAPEL with
repair by a quoted prefix, and the baseline. The one exception is a route pinned to OpenAI's own gpt-4.1 and gpt-4o
(`openrouter:openai/gpt-4.1`): sent with `provider.only: ["openai"]`, it takes the length as OpenAI's strict
JSON-schema `pattern`, once a probe with the writer's key passed (OpenRouter passes `response_format` on, but
`require_parameters` only promises a provider that takes it, not one that enforces `pattern`).

Sources (read 2026-11-26): OpenRouter's API reference, "Chat completion" (the OpenAI fields plus `provider`) and
"Provider routing": every request carries `provider.require_parameters: true`, so OpenRouter routes only to a
provider that honours every parameter sent (a seed, say) instead of one that drops it unsaid; `only` lists the
provider slugs allowed. "Structured outputs": "supported by select models", with streaming. Model ids: its
`/models` endpoint (`python -m capel_ui models list --provider openrouter`); the three below are examples.
Limits: per route, none declared."""

from __future__ import annotations

from dataclasses import replace

from ..base import Backend
from ..dialect import OPENAI_CHAT_FIELDS, Dialect
from .common import http_api
from .openai import PATTERN_OPENAI
from .spec import BackendArgs, ProviderSpec

PREFIX = "openrouter:"

DIALECT = Dialect(
    "OpenRouter's chat completions",
    OPENAI_CHAT_FIELDS | {"provider"},
    "OpenRouter's API reference, “Chat completion” and “Provider routing”",
    fixed=(("provider", {"require_parameters": True}),),
)
PINNED_TO_OPENAI = replace(DIALECT, fixed=(("provider", {"only": ["openai"], "require_parameters": True}),))
"""A route that only OpenAI itself may serve, so its strict JSON-schema `pattern` is OpenAI's to enforce."""
PATTERN_MODELS = ("gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o", "gpt-4o-mini")
PATTERN_ROUTES = tuple(f"{PREFIX}openai/{m}" for m in PATTERN_MODELS)


def _build(args: BackendArgs) -> Backend:
    return http_api(replace(args, model=args.model.removeprefix(PREFIX)), args.spec.address(args.base_url))


SPEC = ProviderSpec(
    "openrouter",
    "OpenRouter",
    _build,
    base_url="https://openrouter.ai/api/v1",
    base_url_env="OPENROUTER_BASE_URL",
    key_env="OPENROUTER_API_KEY",
    keyed=True,
    model_input="list",
    models=(f"{PREFIX}anthropic/claude-sonnet-4.5", f"{PREFIX}google/gemini-2.5-flash", f"{PREFIX}openai/gpt-4.1"),
    owns=lambda model: model.startswith(PREFIX),
    model_caps={route: PATTERN_OPENAI for route in PATTERN_ROUTES},
    dialect=DIALECT,
    dialects={route: PINNED_TO_OPENAI for route in PATTERN_ROUTES},
    probe_gated=True,
    no_guarantee="OpenRouter routes to whichever provider serves the model, and `require_parameters` only promises "
    "one that takes `response_format`, not one that enforces `pattern` (OpenRouter's “Structured outputs” and "
    "“Provider routing”); only openrouter:openai/gpt-4.1 and gpt-4o, pinned to OpenAI, can hold it",
    models_source="OpenRouter's /models endpoint (examples), read 2026-11-26",
    note="OpenRouter (one key, many models): CAPEL (with repair) and baseline; openrouter:openai/gpt-4.1 and gpt-4o "
    "pinned to OpenAI also the guaranteed modes, once a probe with your key passed.",
)

"""OpenRouter: one key, many vendors' models, OpenAI-compatible. A model is named `openrouter:vendor/model`
(`openrouter:anthropic/claude-sonnet-4.5`); the part after `openrouter:` is the id sent.

Which features pass through depends on the model behind it, so none beyond streaming is declared: CAPEL with
repair by a quoted prefix, and the baseline.

Sources (read 2026-11-26): OpenRouter's API reference, "Chat completion" (the OpenAI fields plus `provider`) and
"Provider routing": every request carries `provider.require_parameters: true`, so OpenRouter routes only to a
provider that honours every parameter sent (a seed, say) instead of one that drops it unsaid. Model ids: its
`/models` endpoint (`python -m capel_ui models list --provider openrouter`); the three below are examples.
Limits: per route, none declared."""

from __future__ import annotations

from dataclasses import replace

from ..base import Backend
from ..dialect import OPENAI_CHAT_FIELDS, Dialect
from .common import http_api
from .spec import BackendArgs, ProviderSpec

PREFIX = "openrouter:"

DIALECT = Dialect(
    "OpenRouter's chat completions",
    OPENAI_CHAT_FIELDS | {"provider"},
    "OpenRouter's API reference, “Chat completion” and “Provider routing”",
    fixed=(("provider", {"require_parameters": True}),),
)


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
    dialect=DIALECT,
    models_source="OpenRouter's /models endpoint (examples), read 2026-11-26",
    note="OpenRouter (one key, many models): CAPEL (with repair) and baseline.",
)

"""xAI (Grok), whose API is OpenAI-compatible chat completions.

It streams and reports usage; no grammar or documented string `pattern` in its structured outputs, so CAPEL
with repair by a quoted prefix, and the baseline.

Sources (read 2026-11-26): the body's fields are those of xai-sdk 1.21.0's `chat.create` (`max_tokens`, `seed`,
`temperature`, `top_p`, `logprobs`, `top_logprobs`, `response_format`, `stop`, `n`) as xAI's REST "Chat
completions" reference names them, with `stream_options`. Model ids: the xai-sdk 1.21.0 README (grok-4.6) and
docstrings (grok-4.20-non-reasoning, grok-4.5); grok-4, grok-4-fast and grok-3-mini are gone from xAI's lineup.
Limits: none declared (the SDK does not carry them); xAI's own refusal is shown in full."""

from __future__ import annotations

from ..dialect import Dialect
from .common import http_api
from .spec import ProviderSpec

DIALECT = Dialect(
    "xAI's chat completions",
    frozenset(
        {"model", "messages", "stream", "stream_options", "max_tokens", "temperature", "top_p", "seed", "n"}
        | {"logprobs", "top_logprobs", "response_format", "stop"}
    ),
    "xai-sdk 1.21.0 chat.create; xAI's REST API reference, “Chat completions”",
)

SPEC = ProviderSpec(
    "xai",
    "xAI (Grok)",
    lambda args: http_api(args, args.spec.address(args.base_url)),
    base_url="https://api.x.ai/v1",
    base_url_env="XAI_BASE_URL",
    key_env="XAI_API_KEY",
    keyed=True,
    model_input="list",
    models=("grok-4.6", "grok-4.20-non-reasoning", "grok-4.5"),
    prefixes=("grok-",),
    dialect=DIALECT,
    models_source="xai-sdk 1.21.0 README and docstrings, read 2026-11-26",
    note="Grok: CAPEL (with repair) and baseline.",
)

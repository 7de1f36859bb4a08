"""DeepSeek: chat completions with log-probabilities and chat prefix completion (beta), no grammar.

Sources (read 2026-11-26): DeepSeek's API docs, "Create Chat Completion" (`max_tokens`, `stream`,
`stream_options`, `temperature`, `top_p`, `logprobs`, `top_logprobs`, `response_format`, `stop`; no `seed`) and
"Chat Prefix Completion (Beta)" (`prefix: true` on the last assistant message, at /beta); "Models & Pricing" for
the limits (deepseek-chat 8K output, deepseek-reasoner 64K, both 128K context). DeepSeek has no SDK of its own
(it documents the `openai` client)."""

from __future__ import annotations

from ..base import Capabilities
from ..dialect import Dialect, ModelLimit
from .common import http_api
from .spec import ProviderSpec

DIALECT = Dialect(
    "DeepSeek's chat completions",
    frozenset(
        {"model", "messages", "max_tokens", "stream", "stream_options", "temperature", "top_p", "stop"}
        | {"logprobs", "top_logprobs", "response_format", "frequency_penalty", "presence_penalty"}
    ),
    "DeepSeek's API docs, “Create Chat Completion”",
    seed_field=None,
    no_seed="DeepSeek's “Create Chat Completion” reference lists no `seed`, so the same seed would not give the "
    "same text.",
)

SPEC = ProviderSpec(
    "deepseek",
    "DeepSeek",
    lambda args: http_api(args, args.base_url or args.spec.base_url),
    base_url="https://api.deepseek.com",
    key_env="DEEPSEEK_API_KEY",
    keyed=True,
    model_input="list",
    models=("deepseek-chat", "deepseek-reasoner"),
    model_caps={"deepseek-reasoner": Capabilities(reasoning=True, ignores_temperature=True)},
    # logprobs for the fluency score; chat prefix completion (beta) for repair
    default_caps=Capabilities(logprobs=True, prefill="prefix", prefill_path="/beta"),
    prefixes=("deepseek",),
    dialect=DIALECT,
    no_guarantee="DeepSeek's chat completions take no grammar, and `response_format` only as `json_object` or `text` "
    "(its “Create Chat Completion” reference)",
    limits={
        "deepseek-chat": ModelLimit(output=8_192, context=128_000),
        "deepseek-reasoner": ModelLimit(output=65_536, context=128_000),
    },
    models_source="DeepSeek's “Models & Pricing” page, read 2026-11-26",
    note="DeepSeek's API takes no grammar: CAPEL and baseline only.",
)

"""OpenAI: chat completions, and the Responses API's grammar tools for the GPT-5 family.

Sources (read 2026-11-26): the request fields are those of the `openai` SDK 3.57.0's
`types/chat/completion_create_params.py` (`CompletionCreateParams`, generated from OpenAI's openapi.json): the
output limit is `max_completion_tokens` (its `max_tokens` is documented as deprecated, and refused by reasoning
models). Model ids: the SDK's `types/shared/chat_model.py` literal (`ChatModel`); it also lists the gpt-6 family,
not offered here until `python -m capel_ui doctor --provider openai` says what they take (any id typed is sent as it
is; `models list --provider openai` shows what your key can use). Limits: OpenAI's model pages ("Models" →
each model's "Context window" and "Max output tokens"), for the ids below; an id not listed has no limit declared
and OpenAI's own refusal is shown in full."""

from __future__ import annotations

from dataclasses import replace

from ..base import Capabilities
from ..dialect import OPENAI_CHAT_FIELDS, Dialect, ModelLimit
from .common import http_api
from .spec import ProviderSpec

REASONING_OPENAI = Capabilities(reasoning=True, max_completion_tokens=True, ignores_temperature=True)
CHAT_OPENAI = Capabilities(logprobs=True)  # chat models return token log-probabilities (the fluency score)
# GPT-4.1 and GPT-4o take strict JSON-schema structured outputs whose string has a `pattern`: the guaranteed
# modes send the length as that pattern (an object `{"text": ...}` at the root, as strict mode requires).
PATTERN_OPENAI = replace(CHAT_OPENAI, grammar_field="json_schema", json_object=True)
# GPT-5 family: reasoning models that take grammar-constrained custom tools (Responses API). gpt-5, -mini and
# -nano reason at least "minimal"; from gpt-5.1 on the smallest effort is "none".
# They see how many words are left under the countdown grammar and plan their last sentence by it, where `exact`
# alone is closed at word N wherever the model was (no ending search runs on OpenAI): `plans_by_countdown`.
GPT5 = replace(REASONING_OPENAI, grammar_field="custom_tool", reasoning_effort="minimal", plans_by_countdown=True)
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
    "gpt-4.1": PATTERN_OPENAI,
    "gpt-4.1-mini": PATTERN_OPENAI,
    "gpt-4.1-nano": PATTERN_OPENAI,
    "gpt-4o": PATTERN_OPENAI,
    "gpt-4o-mini": PATTERN_OPENAI,
    "o4-mini": REASONING_OPENAI,
    "o3": REASONING_OPENAI,
    "o3-mini": REASONING_OPENAI,
    "o1": REASONING_OPENAI,
}
"""OpenAI's models (ids from openai 3.57.0's `ChatModel`) and what each takes; any other id typed is sent as it is
(with the default)."""

GPT4_1 = ModelLimit(output=32_768, context=1_047_576)
GPT4O = ModelLimit(output=16_384, context=128_000)
GPT5_LIMIT = ModelLimit(output=128_000, context=400_000)
O_SERIES = ModelLimit(output=100_000, context=200_000)
OPENAI_LIMITS: dict[str, ModelLimit] = {
    "gpt-4.1": GPT4_1,
    "gpt-4.1-mini": GPT4_1,
    "gpt-4.1-nano": GPT4_1,
    "gpt-4o": GPT4O,
    "gpt-4o-mini": GPT4O,
    "gpt-5": GPT5_LIMIT,
    "gpt-5-mini": GPT5_LIMIT,
    "gpt-5-nano": GPT5_LIMIT,
    "gpt-5.1": GPT5_LIMIT,
    "gpt-5.2": GPT5_LIMIT,
    "o4-mini": O_SERIES,
    "o3": O_SERIES,
    "o3-mini": O_SERIES,
    "o1": O_SERIES,
}
"""Max output tokens and context window per OpenAI's model pages (read 2026-11-26); newer ids: none declared."""

DIALECT = Dialect(
    "OpenAI's chat completions",
    OPENAI_CHAT_FIELDS - {"max_tokens"},
    "openai 3.57.0 CompletionCreateParams; OpenAI's API reference, “Create chat completion”",
    max_tokens_field="max_completion_tokens",
)

SPEC = ProviderSpec(
    "openai",
    "OpenAI",
    # no URL typed: None, so the `openai` client reads OPENAI_BASE_URL itself
    lambda args: http_api(args, args.base_url, openai_account=True),
    base_url="https://api.openai.com/v1",
    key_env="OPENAI_API_KEY",
    keyed=True,
    model_input="list",
    models=("gpt-4.1", *(m for m in OPENAI_MODELS if m not in ("gpt-4.1", "o3-mini", "o1"))),
    model_caps=OPENAI_MODELS,
    default_caps=Capabilities(logprobs=True),
    prefixes=("gpt-", "o1", "o3", "o4", "chatgpt-"),
    dialect=DIALECT,
    limits=OPENAI_LIMITS,
    models_source="openai 3.57.0 `ChatModel` literal and OpenAI's model pages, read 2026-11-26",
    note="GPT-5-family models run the exact modes through a grammar-constrained custom tool (Responses API), "
    "GPT-4.1 and GPT-4o through a strict JSON-schema pattern; "
    "OPENAI_BASE_URL is honoured as the openai client honours it (gateways, proxies, Azure's /openai/v1).",
)

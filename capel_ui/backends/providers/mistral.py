"""Mistral, whose chat completions API is OpenAI-compatible and continues a prefilled answer.

A last assistant message with `"prefix": true` is continued (as DeepSeek's beta does), so a broken countdown is
repaired from its verified prefix; no grammar or documented string `pattern`: CAPEL with repair, and baseline.

Sources (read 2026-11-26): the body is mistralai 3.7.0's `ChatCompletionStreamRequest` (generated from Mistral's
OpenAPI document): `random_seed`, not `seed`; no `stream_options` (Mistral reports usage in its last chunk
unasked); `max_tokens`; an `AssistantMessage` takes `prefix`. Mistral answers any other field with 422 "Extra
inputs are not permitted". Model ids: the `-latest` aliases of mistralai 3.7.0's docs and Mistral's "Models
overview" page; limits from that page (context windows; no separate output limit is published, so the
budget is capped to the context)."""

from __future__ import annotations

from ..base import Capabilities
from ..dialect import Dialect, ModelLimit
from .common import http_api
from .spec import ProviderSpec

DIALECT = Dialect(
    "Mistral's chat completions",
    frozenset(
        {"model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed", "n"}
        | {"response_format", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs", "prediction"}
    ),
    "mistralai 3.7.0 ChatCompletionStreamRequest; Mistral's API reference, “Chat Completion”",
    seed_field="random_seed",
    stream_usage=False,
)

SPEC = ProviderSpec(
    "mistral",
    "Mistral",
    lambda args: http_api(args, args.spec.address(args.base_url)),
    base_url="https://api.mistral.ai/v1",
    base_url_env="MISTRAL_BASE_URL",
    key_env="MISTRAL_API_KEY",
    keyed=True,
    model_input="list",
    models=("mistral-large-latest", "mistral-medium-latest", "mistral-small-latest", "magistral-small-latest"),
    default_caps=Capabilities(prefill="prefix"),
    prefixes=("mistral-", "magistral-", "ministral-", "open-mistral-"),
    dialect=DIALECT,
    limits={
        "mistral-large-latest": ModelLimit(context=128_000),
        "mistral-medium-latest": ModelLimit(context=128_000),
        "mistral-small-latest": ModelLimit(context=128_000),
        "magistral-small-latest": ModelLimit(context=128_000),
    },
    models_source="mistralai 3.7.0 docs and Mistral's “Models overview”, read 2026-11-26",
    note="Mistral: CAPEL (repaired by continuing its verified prefix) and baseline.",
)

"""Mistral, whose chat completions API is OpenAI-compatible and continues a prefilled answer.

A last assistant message with `"prefix": true` is continued (as DeepSeek's beta does), so a broken countdown is
repaired from its verified prefix; no grammar or documented string `pattern`: CAPEL with repair, and baseline.

Sources (read 2026-11-26): the body is mistralai 3.7.0's `ChatCompletionStreamRequest` (generated from Mistral's
OpenAPI document): `random_seed`, not `seed`; no `stream_options` (Mistral reports usage in its last chunk
unasked); `max_tokens`; an `AssistantMessage` takes `prefix`. Mistral answers any other field with 422 "Extra
inputs are not permitted". Model ids: the `-latest` aliases of mistralai 3.7.0's docs and Mistral's "Models
overview" page. Context windows: Mistral's "Known limitations" page (platform-docs-public, synced 2026-08-11):
Mistral Large 3, Medium 3.5 and Small 4 256k tokens, Magistral 128k; input and output share it and no separate
output limit is published, so the budget is capped to the context. Reasoning: Mistral's "Reasoning" page says
`mistral-small-latest` and `mistral-medium-latest` (Medium 3.5) reason by `reasoning_effort`, and that "none"
omits the thinking chunk, which would otherwise be generated output inside `max_tokens` (`UsageInfo` has no
reasoning count): they are sent `reasoning_effort: "none"`, so the budget is the text's. Magistral (deprecated
there) always reasons. Guarantee: Mistral's custom structured outputs prepend the schema to the system prompt and
document no `pattern` (“Custom structured outputs”; `JsonSchema` in its OpenAPI), so no guaranteed mode."""

from __future__ import annotations

from dataclasses import replace

from ..base import Capabilities
from ..dialect import Dialect, ModelLimit
from .common import http_api
from .spec import ProviderSpec

DIALECT = Dialect(
    "Mistral's chat completions",
    frozenset(
        {"model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed", "n"}
        | {"response_format", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs", "prediction"}
        | {"reasoning_effort"}
    ),
    "mistralai 3.7.0 ChatCompletionStreamRequest; Mistral's API reference, “Chat Completion”",
    seed_field="random_seed",
    stream_usage=False,
)
NO_THINKING = replace(DIALECT, fixed=(("reasoning_effort", "none"),))
"""For the models that reason by `reasoning_effort`: none, so no thinking chunk spends the text's budget."""
LONG, MAGISTRAL = ModelLimit(context=256_000), ModelLimit(context=128_000)

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
    dialects={"mistral-small-latest": NO_THINKING, "mistral-medium-latest": NO_THINKING},
    limits={
        "mistral-large-latest": LONG,
        "mistral-medium-latest": LONG,
        "mistral-small-latest": LONG,
        "magistral-small-latest": MAGISTRAL,
    },
    no_guarantee="Mistral's custom structured outputs put the schema in the system prompt and document no `pattern` "
    "(Mistral's “Custom structured outputs”)",
    models_source="mistralai 3.7.0 docs, Mistral's “Models overview”, “Known limitations” and “Reasoning”, read "
    "2026-11-26",
    note="Mistral: CAPEL (repaired by continuing its verified prefix) and baseline.",
)

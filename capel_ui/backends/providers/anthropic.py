"""Anthropic (Claude), through its OpenAI-compatible chat completions endpoint.

That endpoint streams and reports usage, but ignores `response_format` (no JSON-schema pattern), returns no
log-probabilities, and does not document continuing a prefilled assistant turn: Claude runs CAPEL with repair by
a quoted prefix, and the baseline. (Anthropic's own SDK continues a prefilled answer; it is not needed for the
modes offered here, so it is not a dependency.)

Sources (read 2026-11-26): the body is what Anthropic's "OpenAI SDK compatibility" page lists as supported
(`model`, `messages`, `max_tokens`/`max_completion_tokens`, `stream`, `stream_options`, `temperature` from 0 to 1,
values above 1 capped to 1, `top_p`, `stop`, `n` = 1); `seed`, `logprobs` and `response_format` are listed as
ignored, so a seed or a temperature above 1 is refused here before sending rather than dropped by Claude
unsaid. Model ids: the `anthropic` SDK 2.14.0's `types/model_param.py` literal (`ModelParam`), newest first.
Limits: Anthropic's "Models overview" page (max output, context window) for the 4.5 models; the 5.x ids have
none declared here (Claude's own refusal is shown in full)."""

from __future__ import annotations

from ..dialect import Dialect, ModelLimit
from .common import http_api
from .spec import ProviderSpec

DIALECT = Dialect(
    "Claude's OpenAI-compatible endpoint",
    frozenset({"model", "messages", "max_tokens", "stream", "stream_options", "temperature", "top_p", "stop", "n"}),
    "Anthropic's “OpenAI SDK compatibility” page",
    seed_field=None,
    no_seed="Anthropic's OpenAI SDK compatibility page lists `seed` as ignored, so the same seed would not give "
    "the same text.",
    temperature_max=1.0,
)

CLAUDE_4_5 = ModelLimit(output=64_000, context=200_000)

SPEC = ProviderSpec(
    "anthropic",
    "Anthropic (Claude)",
    lambda args: http_api(args, args.spec.address(args.base_url)),
    base_url="https://api.anthropic.com/v1/",
    base_url_env="ANTHROPIC_BASE_URL",
    key_env="ANTHROPIC_API_KEY",
    keyed=True,
    model_input="list",
    models=(
        "claude-sonnet-5-5",
        "claude-opus-5-5",
        "claude-haiku-5-5",
        "claude-sonnet-4-5",
        "claude-opus-4-5",
        "claude-haiku-4-5",
    ),
    prefixes=("claude-",),
    dialect=DIALECT,
    no_guarantee="Claude's OpenAI-compatible endpoint ignores `response_format` (Anthropic's “OpenAI SDK "
    "compatibility” page); its native structured outputs (`output_config.format`) need an Anthropic backend this "
    "app does not have, and Anthropic's SDK moves `pattern` into the description",
    limits={"claude-sonnet-4-5": CLAUDE_4_5, "claude-opus-4-5": CLAUDE_4_5, "claude-haiku-4-5": CLAUDE_4_5},
    models_source="anthropic 2.14.0 `ModelParam` literal and Anthropic's “Models overview”, read 2026-11-26",
    note="Claude's OpenAI-compatible endpoint takes no grammar or JSON-schema pattern: CAPEL (with repair) and "
    "baseline.",
)

"""Anthropic (Claude), through its OpenAI-compatible chat completions endpoint.

That endpoint streams and reports usage, but ignores `response_format` (no JSON-schema pattern), returns no
log-probabilities, and does not document continuing a prefilled assistant turn: Claude runs CAPEL with repair by
a quoted prefix, and the baseline. (Anthropic's own SDK continues a prefilled answer; it is not needed for the
modes offered here, so it is not a dependency.)"""

from __future__ import annotations

from .common import http_api
from .spec import ProviderSpec

SPEC = ProviderSpec(
    "anthropic",
    "Anthropic (Claude)",
    lambda args: http_api(args, args.spec.address(args.base_url)),
    base_url="https://api.anthropic.com/v1/",
    base_url_env="ANTHROPIC_BASE_URL",
    key_env="ANTHROPIC_API_KEY",
    keyed=True,
    model_input="list",
    models=("claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"),
    prefixes=("claude-",),
    note="Claude's OpenAI-compatible endpoint takes no grammar or JSON-schema pattern: CAPEL (with repair) and "
    "baseline.",
)

"""xAI (Grok), whose API is OpenAI-compatible chat completions.

It streams and reports usage; no grammar or documented string `pattern` in its structured outputs, so CAPEL
with repair by a quoted prefix, and the baseline."""

from __future__ import annotations

from .common import http_api
from .spec import ProviderSpec

SPEC = ProviderSpec(
    "xai",
    "xAI (Grok)",
    lambda args: http_api(args, args.spec.address(args.base_url)),
    base_url="https://api.x.ai/v1",
    base_url_env="XAI_BASE_URL",
    key_env="XAI_API_KEY",
    keyed=True,
    model_input="list",
    models=("grok-4", "grok-4-fast", "grok-3-mini"),
    prefixes=("grok-",),
    note="Grok: CAPEL (with repair) and baseline.",
)

"""Google (Gemini), through the Gemini API's OpenAI-compatible endpoint.

It streams and reports usage; its structured outputs take a JSON schema, but whether a string `pattern` is
enforced is not documented, so no guaranteed mode is declared (CAPEL with repair by a quoted prefix, and the
baseline); it does not continue a prefilled assistant turn."""

from __future__ import annotations

from .common import http_api
from .spec import ProviderSpec

SPEC = ProviderSpec(
    "gemini",
    "Google (Gemini)",
    lambda args: http_api(args, args.spec.address(args.base_url)),
    base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
    base_url_env="GEMINI_BASE_URL",
    key_env="GEMINI_API_KEY",
    keyed=True,
    model_input="list",
    models=("gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite"),
    prefixes=("gemini-",),
    note="Gemini's OpenAI-compatible endpoint: CAPEL (with repair) and baseline.",
)

"""Google (Gemini), through the Gemini API's OpenAI-compatible endpoint.

It streams and reports usage; its structured outputs take a JSON schema, but whether a string `pattern` is
enforced is not documented, so no guaranteed mode is declared (CAPEL with repair by a quoted prefix, and the
baseline); it does not continue a prefilled assistant turn.

Sources (read 2026-11-26): the body is what Google's "OpenAI compatibility" page (ai.google.dev, Gemini API)
shows for chat completions (`model`, `messages`, `stream`, `stream_options`, `max_tokens`, `temperature`, `top_p`,
`n`, `stop`, `response_format`). `seed` is in the native API's `GenerationConfig` (google-genai 3.6.1 `types.py`)
but was answered "Unknown name" on the compatible endpoint (issue 33) and is not on that page: refused before
sending until `python -m capel_ui doctor --provider gemini` shows your key's endpoint takes it. Model ids: the
google-genai 3.6.1 README's examples (gemini-3.8-flash) and docstrings (gemini-3.1-*), then the 2.5 family.
Limits: Google's "Gemini models" page for the 2.5 family (65,536 output tokens, 1,048,576 context); the 3.x ids
have none declared here."""

from __future__ import annotations

from ..dialect import Dialect, ModelLimit
from .common import http_api
from .spec import ProviderSpec

DIALECT = Dialect(
    "Gemini's OpenAI-compatible endpoint",
    frozenset(
        {"model", "messages", "stream", "stream_options", "max_tokens", "temperature", "top_p", "n", "stop"}
        | {"response_format"}
    ),
    "Google's Gemini API “OpenAI compatibility” page",
    seed_field=None,
    no_seed="Gemini's OpenAI-compatible endpoint answered `seed` with “Unknown name” and Google's compatibility "
    "page does not list it (check with `python -m capel_ui doctor --provider gemini`).",
)

GEMINI_2_5 = ModelLimit(output=65_536, context=1_048_576)

SPEC = ProviderSpec(
    "gemini",
    "Google (Gemini)",
    lambda args: http_api(args, args.spec.address(args.base_url)),
    base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
    base_url_env="GEMINI_BASE_URL",
    key_env="GEMINI_API_KEY",
    keyed=True,
    model_input="list",
    models=(
        "gemini-3.8-flash",
        "gemini-3.1-pro-preview",
        "gemini-3.1-flash-lite",
        "gemini-2.5-flash",
        "gemini-2.5-pro",
        "gemini-2.5-flash-lite",
    ),
    prefixes=("gemini-",),
    dialect=DIALECT,
    no_guarantee="`pattern` is not among the keywords Gemini's `response_json_schema` supports (google-genai 3.6.1 "
    "`GenerateContentConfig`), and Google's compatibility page does not say how `response_format` maps onto it",
    limits={m: GEMINI_2_5 for m in ("gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite")},
    models_source="google-genai 3.6.1 README and docstrings, Google's “Gemini models” page, read 2026-11-26",
    note="Gemini's OpenAI-compatible endpoint: CAPEL (with repair) and baseline.",
)

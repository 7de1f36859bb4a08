"""xAI (Grok), whose API is OpenAI-compatible chat completions.

It streams and reports usage, and its structured outputs enforce a string `pattern`: the guaranteed modes run as
on gpt-4.1 (one string whose pattern fixes the count, `{"text": ...}` at the root, decoded as it streams so the
countdown stays live), once a probe with the writer's key passed on that model (`probe.vendor_probe`: reports of
400s for `pattern` disagree with the page, so the key decides). Until then, and wherever the probe fails, CAPEL
with repair by a quoted prefix, and the baseline.

Sources (read 2026-11-26): the body's fields are those of xai-sdk 1.21.0's `chat.create` (`max_tokens`, `seed`,
`temperature`, `top_p`, `logprobs`, `top_logprobs`, `response_format`, `stop`, `n`) as xAI's REST "Chat
completions" reference names them, with `stream_options`. Structured outputs: xAI's "Structured outputs" page
(docs.x.ai/developers/model-capabilities/text/structured-outputs): "the response is guaranteed to match your
schema"; `pattern` takes "a practical subset of ECMAScript Regular Expressions" (literals, classes, `.`, `|`,
groups, `(?:...)`, `* + ?`, `{n}`, `{n,}`, `{n,m}`, `\\d \\w \\s`, common escapes); not supported: backreferences,
Unicode property escapes, word boundaries, lookahead and lookbehind, inline modifiers; `^`/`$` implicit; streaming
with `response_format`. No pattern or schema size is documented. Model ids: the xai-sdk 1.21.0 README (grok-4.6)
and docstrings (grok-4.20-non-reasoning, grok-4.5); grok-4, grok-4-fast and grok-3-mini are gone from xAI's
lineup. Limits: none declared (the SDK does not carry them); xAI's own refusal is shown in full."""

from __future__ import annotations

from ..base import Capabilities
from ..dialect import Dialect, PatternSubset
from .common import http_api
from .spec import ProviderSpec

PATTERN_MAX_CHARS = 16_000
"""The longest length pattern sent to xAI. xAI documents no size; an exact, at-most or between word target is about
460 characters whatever its count (the count sits in `{n}`), exact countdown about 260 per word exactly and 460 per
word at most, so this admits every plain target and a countdown up to about 60 words (34 under a limit)."""

PATTERN = PatternSubset(
    frozenset(
        {"lookahead", "lookbehind", "backreference", "Unicode property escape", "word boundary", "inline modifier"}
    ),
    PATTERN_MAX_CHARS,
    "xAI's “Structured outputs” page, “Regex support”",
    size_note=f"xAI documents no size; {PATTERN_MAX_CHARS:,} is this app's choice (providers/xai.py)",
)

DIALECT = Dialect(
    "xAI's chat completions",
    frozenset(
        {"model", "messages", "stream", "stream_options", "max_tokens", "temperature", "top_p", "seed", "n"}
        | {"logprobs", "top_logprobs", "response_format", "stop"}
    ),
    "xai-sdk 1.21.0 chat.create; xAI's REST API reference, “Chat completions”",
    pattern=PATTERN,
)

GROK = Capabilities(grammar_field="json_schema", json_object=True)
"""Every Grok model: the length as a strict JSON-schema `pattern` (the page names no model it excludes)."""

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
    default_caps=GROK,
    prefixes=("grok-",),
    dialect=DIALECT,
    probe_gated=True,
    models_source="xai-sdk 1.21.0 README and docstrings, read 2026-11-26",
    note="Grok: the guaranteed modes through a strict JSON-schema `pattern` once a probe with your key passed "
    "(`python -m capel_ui doctor --provider xai`); CAPEL (with repair) and baseline always.",
)

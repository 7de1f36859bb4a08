"""What a vendor's chat-completions endpoint accepts, as its own documents and SDK types say, and the request
shaped to it; and how much a model writes and reads (its output and context limits).

Each hosted provider declares one `Dialect` (in its module under `providers/`, with its sources) and one
`ModelLimit` per model id. The chat-completions client builds its request in OpenAI's words, then `shape` puts it in
the vendor's: the output limit under the vendor's name for it (`max_completion_tokens` at OpenAI, `max_tokens`
elsewhere) and capped to the model's limit, the seed under the vendor's name (`random_seed` at Mistral), no
`stream_options` where the vendor refuses it, the vendor's fixed fields added (OpenRouter's
`provider.require_parameters`), and anything the vendor documents as ignored or out of range refused before
sending, with a sentence that says why. A field the vendor does not document at all is never sent.

A vendor whose structured outputs enforce a string `pattern` from a documented regex subset (xAI) declares it as a
`PatternSubset`: the length pattern is checked against it offline (the constructs the vendor refuses, a size this
app chose where the vendor documents none) and refused in one line before anything is sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .base import BackendError

CLIENT_ARGS = frozenset({"timeout", "extra_body", "extra_headers"})
"""Keyword arguments of the `openai` client that are not body fields."""


@dataclass(frozen=True)
class ModelLimit:
    """How many tokens a model writes in one answer (`output`) and reads and writes in all (`context`)."""

    output: int | None = None
    context: int | None = None


@dataclass(frozen=True)
class RegexConstruct:
    """A regex construct some pattern engines refuse: its name as vendors' documents say it, and an example of it."""

    name: str
    example: str


REGEX_CONSTRUCTS: tuple[RegexConstruct, ...] = (
    RegexConstruct("lookahead", "(?=a)"),
    RegexConstruct("lookbehind", "(?<=a)"),
    RegexConstruct("backreference", r"(a)\1"),
    RegexConstruct("named group", "(?<x>a)"),
    RegexConstruct("Unicode property escape", r"\p{L}"),
    RegexConstruct("word boundary", r"\b"),
    RegexConstruct("inline modifier", "(?i)a"),
)
"""The constructs `regex_constructs` finds (the app's own patterns use none of them: `grammar.Grammar.regex`)."""

_TOKEN = re.compile(r"\\[pPkbB1-9]|\\.|\[(?:\\.|[^\]\\])*\]|\(\?<?[=!]|\(\?<\w|\(\?[a-zA-Z]|.", re.DOTALL)
_FOUND = {
    "(?=": "lookahead", "(?!": "lookahead", "(?<=": "lookbehind", "(?<!": "lookbehind",
    "\\k": "backreference", "\\p": "Unicode property escape", "\\P": "Unicode property escape",
    "\\b": "word boundary", "\\B": "word boundary",
}  # fmt: skip


def regex_constructs(pattern: str) -> list[str]:
    """The `REGEX_CONSTRUCTS` in `pattern`, each named once in order of appearance; read token by token, so an
    escaped `\\(?=` or a `[\\b]` inside a class is not one."""
    found: dict[str, None] = {}
    for token in _TOKEN.findall(pattern):
        name = _FOUND.get(token)
        if name is None and len(token) == 2 and token[0] == "\\" and token[1].isdigit():
            name = "backreference"
        elif name is None and token.startswith("(?<"):
            name = "named group"
        elif name is None and token.startswith("(?") and token[2:].isalpha():
            name = "inline modifier"
        if name is not None:
            found[name] = None
    return list(found)


@dataclass(frozen=True)
class PatternSubset:
    """What a vendor's structured outputs enforce in a string `pattern`: the constructs it refuses (by its
    documents), the longest pattern this app sends it (a vendor that documents no size gets one chosen here and
    said as such), and where that was read."""

    refused: frozenset[str]  # names of `REGEX_CONSTRUCTS`
    max_chars: int
    source: str
    size_note: str = ""  # why `max_chars` is what it is

    def why_not(self, pattern: str, vendor: str) -> str | None:
        """Why `vendor` cannot take `pattern` (one line), or None where it can."""
        refused = [name for name in regex_constructs(pattern) if name in self.refused]
        if refused:
            return (
                f"{vendor} does not support {', '.join(refused)} in a JSON-schema `pattern` ({self.source}), so "
                "nothing was sent; use CAPEL or the baseline."
            )
        if len(pattern) > self.max_chars:
            return (
                f"The length pattern is {len(pattern):,} characters, more than the {self.max_chars:,} this app sends "
                f"to {vendor}: {self.size_note or self.source}. Nothing was sent; lower the target or use Exact "
                "rather than Exact countdown."
            )
        return None


def schema_patterns(schema: Any) -> Iterator[str]:
    """Every string `pattern` in a JSON schema (the app's: one string, or `{"text": <string>}`)."""
    if isinstance(schema, dict):
        if isinstance(schema.get("pattern"), str):
            yield schema["pattern"]
        for value in schema.values():
            yield from schema_patterns(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from schema_patterns(value)


@dataclass(frozen=True)
class Dialect:
    """The chat-completions body a vendor documents, and how it names what the app sends."""

    vendor: str  # who, in a sentence: "Mistral's chat completions"
    accepts: frozenset[str]  # the top-level body fields it documents
    source: str  # where that was read (SDK + version, the vendor's page by name)
    max_tokens_field: str = "max_tokens"  # "max_completion_tokens" at OpenAI (max_tokens is deprecated there)
    seed_field: str | None = "seed"  # "random_seed" at Mistral; None: the vendor takes no seed (see `no_seed`)
    no_seed: str = ""  # why a seed is refused where `seed_field` is None
    stream_usage: bool = True  # takes `stream_options: {include_usage: true}` (Mistral reports usage unasked)
    temperature_max: float = 2.0  # Claude's compatibility layer caps anything above 1 silently
    fixed: tuple[tuple[str, Any], ...] = ()  # sent with every request (OpenRouter's provider routing)
    pattern: PatternSubset | None = None  # the regex subset its structured outputs enforce (checked before sending)

    def takes(self, field: str) -> bool:
        return field in self.accepts


def shape(params: dict[str, Any], dialect: Dialect | None, limit: ModelLimit | None, label: str) -> dict[str, Any]:
    """`params` (built in OpenAI's words) in the vendor's words, the output limit capped to the model's; a
    BackendError (nothing sent) for a seed, a temperature or a field the vendor does not take."""
    out = dict(params)
    budget = out.pop("max_completion_tokens", None) or out.pop("max_tokens", None)
    most = (limit.output or limit.context) if limit is not None else None
    if budget is not None and most is not None:
        budget = min(budget, most)
    if dialect is None:
        if budget is not None:
            out["max_completion_tokens" if "max_completion_tokens" in params else "max_tokens"] = budget
        return out
    if budget is not None:
        out[dialect.max_tokens_field] = budget
    if "seed" in out:
        seed = out.pop("seed")
        if dialect.seed_field is None:
            raise BackendError("bad_request", f"{label} takes no seed: {dialect.no_seed} Leave the seed empty.")
        out[dialect.seed_field] = seed
    if not dialect.stream_usage:
        out.pop("stream_options", None)
    temperature = out.get("temperature")
    if temperature is not None and temperature > dialect.temperature_max:
        raise BackendError(
            "bad_request",
            f"{label} takes a temperature from 0 to {dialect.temperature_max:g} ({dialect.source}), not "
            f"{temperature:g}; lower it.",
        )
    for key, value in dialect.fixed:
        out.setdefault(key, value)
    _check_patterns(out, dialect, label)
    unknown = sorted(k for k in out if k not in CLIENT_ARGS and k != "stream" and not dialect.takes(k))
    if unknown:
        raise BackendError(
            "bad_request",
            f"{dialect.vendor} does not take {', '.join(unknown)} ({dialect.source}), so it was not sent; "
            "pick another mode or model.",
        )
    return _extra_body(out)


def _check_patterns(params: dict[str, Any], dialect: Dialect, label: str) -> None:
    """A BackendError (nothing sent) for a JSON-schema pattern the vendor's documented subset cannot take."""
    subset = dialect.pattern
    if subset is None or "response_format" not in params:
        return
    for pattern in schema_patterns(params["response_format"]):
        why = subset.why_not(pattern, label)
        if why is not None:
            raise BackendError("bad_request", why)


def _extra_body(params: dict[str, Any]) -> dict[str, Any]:
    """Fields the `openai` client has no argument for (Mistral's `random_seed`, OpenRouter's `provider`) go in its
    `extra_body`, which it merges into the JSON body as it is."""
    from openai.types.chat.completion_create_params import CompletionCreateParamsBase

    known = set(CompletionCreateParamsBase.__annotations__) | CLIENT_ARGS | {"stream"}
    foreign = {k: params.pop(k) for k in [k for k in params if k not in known]}
    if foreign:
        params["extra_body"] = {**params.get("extra_body", {}), **foreign}
    return params


OPENAI_CHAT_FIELDS = frozenset(
    {
        "model",
        "messages",
        "stream",
        "stream_options",
        "max_completion_tokens",
        "max_tokens",
        "temperature",
        "top_p",
        "seed",
        "logprobs",
        "top_logprobs",
        "response_format",
        "stop",
        "n",
    }
)
"""The fields of OpenAI's chat completions the app may send (`CompletionCreateParams`, openai 3.57.0)."""

PATTERN_MAX_WORDS = 5_500
"""The longest exact-words target whose JSON-schema `pattern` LLGuidance (the engine OpenAI documents for
structured outputs) compiles with a real vocabulary: above it, "too many states" (measured for issue 33)."""


def explanation(exc: Any) -> str:
    """A vendor's refusal in plain text, all of it: the message of OpenAI's, Anthropic's, xAI's and DeepSeek's
    `{"error": {"message"}}`, Google's `[{"error": ...}]`, and each entry of Mistral's (FastAPI's) validation
    `detail` as `where: what` (`body.stream_options: Extra inputs are not permitted`)."""
    response = getattr(exc, "response", None)
    text = ""
    try:
        text = response.text if response is not None else ""
    except Exception:  # a streamed body not read: fall back to what the SDK kept
        text = ""
    body: Any = None
    if text:
        try:
            body = json.loads(text)
        except ValueError:
            return text.strip()[:2000]
    if body is None:
        body = getattr(exc, "body", None)
    said = _said(body)
    return said or str(getattr(exc, "message", "") or exc)


def _said(body: Any) -> str:
    if isinstance(body, list):
        return "; ".join(s for s in (_said(b) for b in body) if s)
    if isinstance(body, str):
        return body.strip()
    if not isinstance(body, dict):
        return ""
    if "detail" in body:  # FastAPI / pydantic validation (Mistral)
        detail = body["detail"]
        if isinstance(detail, list):
            parts = []
            for d in detail:
                if isinstance(d, dict):
                    where = ".".join(str(p) for p in d.get("loc") or ())
                    parts.append(f"{where}: {d.get('msg', '')}" if where else str(d.get("msg", "")))
                else:
                    parts.append(str(d))
            return "; ".join(parts)
        return _said(detail)
    for key in ("error", "message"):
        if body.get(key):
            return _said(body[key])
    return ""

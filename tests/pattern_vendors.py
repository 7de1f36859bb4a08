"""Scripted vendors whose structured outputs hold a JSON-schema string `pattern` while decoding, as the vendor
documents it, and refuse what it refuses: behaviours for `ScriptedServer.script` and checks for `.as_vendor`.

- xAI ("Structured outputs", docs.x.ai/developers/model-capabilities/text/structured-outputs, "Regex support"):
  `pattern` is "a practical subset of ECMAScript Regular Expressions"; not supported: backreferences, Unicode
  property escapes (`\\p{L}`), word boundaries (`\\b`, `\\B`), lookahead and lookbehind, inline modifiers (`(?i)`).
  "The response is guaranteed to match your schema", streamed with `response_format`. A request it refuses is a
  400 in xAI's shape, `{"code": "Client specified an invalid argument", "error": ...}` (litellm#6610); the words
  reported for a refused `pattern` are "Invalid arguments passed to the model" (hermes-agent PR #27575).

`writes(text)` is a model that wants to write `text` (over and over) decoding under the request's pattern as a
constrained decoder does: each character it wants where the pattern still admits a way on, else the first one the
pattern admits, until the pattern admits nothing more; it answers the JSON the schema asks for in small pieces.
`ignores(text)` is one whose vendor accepted the schema and ignored it. Nothing here reads the app's own
declarations: the constructs are found by this module's own reading of a pattern.
"""

from __future__ import annotations

import json
import re
from itertools import cycle
from typing import Any

import regex

from tests.scripted_server import Behaviour, answer, ok
from tests.scripted_vendors import xai

XAI_INVALID = "Client specified an invalid argument"
REFUSED_PATTERN = "Invalid arguments passed to the model"
SEA = "sea wind salt light stone wave shore gull rope tide "
FALLBACK = " .,!?<>0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ一。，"
"""What a constrained decoder writes where the model's own next character does not fit."""
_XAI_UNSUPPORTED = re.compile(
    r"\\[\\\[\](){}.*+?^$|/-]"  # an escaped character: nothing
    r"|\[(?:\\.|[^\]\\])*\]"  # a class: nothing (`[\b]` is a backspace in ECMAScript)
    r"|(?P<found>\\[pPkbB1-9]|\(\?<?[=!]|\(\?<[A-Za-z]|\(\?[a-zA-Z])"
)


def request_pattern(body: dict[str, Any]) -> tuple[str, bool] | None:
    """The pattern a chat request's `response_format` carries, and whether it sits in `{"text": ...}`."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    if isinstance(schema.get("pattern"), str):
        return schema["pattern"], False
    text = (schema.get("properties") or {}).get("text") or {}
    return (text["pattern"], True) if isinstance(text.get("pattern"), str) else None


def xai_unsupported(pattern: str) -> list[str]:
    """The constructs of `pattern` xAI's page lists as not supported, as written."""
    return [m.group("found") for m in _XAI_UNSUPPORTED.finditer(pattern) if m.group("found")]


def xai_enforcing(path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    """xAI's check of a body: its fields (tests/scripted_vendors.py), then a pattern it does not support."""
    refusal = xai(path, body)
    if refusal is not None:
        return refusal
    found = request_pattern(body)
    if found and xai_unsupported(found[0]):
        return 400, {"code": XAI_INVALID, "error": REFUSED_PATTERN}
    return None


def xai_refusing_pattern(path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    """The xAI the 2026 reports describe: any `pattern` refused with a 400."""
    if request_pattern(body) is not None:
        return 400, {"code": XAI_INVALID, "error": REFUSED_PATTERN}
    return xai(path, body)


def constrained(pattern: str, wanted: str, most: int = 20_000) -> str:
    """What a model that wants to write `wanted` (again and again) writes under `pattern`, one character at a time."""
    compiled = regex.compile(pattern)
    text, want = "", cycle(wanted)
    desire = next(want)
    while len(text) < most:
        for c in dict.fromkeys(desire + FALLBACK):
            if compiled.fullmatch(text + c, partial=True):
                text += c
                desire = next(want) if c == desire else desire
                break
        else:
            return text
    return text


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def writes(wanted: str = SEA) -> Behaviour:
    """A model under an enforcing vendor: the text its pattern lets it write, as JSON, streamed in small pieces (no
    pattern: `wanted` once, as plain text)."""

    def respond(body: dict[str, Any]) -> Behaviour:
        found = request_pattern(body)
        if found is None:
            return ok(_pieces(wanted))
        pattern, in_object = found
        text = constrained(pattern, wanted)
        return ok(_pieces(json.dumps({"text": text} if in_object else text, ensure_ascii=False)))

    return answer(respond)


def ignores(text: str = "OK") -> Behaviour:
    """A model whose vendor took the schema and ignored its pattern: `{"text": text}` whatever was asked."""
    return answer(lambda body: ok(json.dumps({"text": text}) if request_pattern(body) else text))

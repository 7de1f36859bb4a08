"""Read a streamed JSON string as text while it arrives, so the live countdown runs under a JSON-schema grammar.

A server that takes the grammar as a JSON schema (`{"type": "string", "pattern": ...}`) streams `"word word…"`
with JSON escapes, split anywhere (even inside `\\u00e9`). `JsonStringReader.feed()` returns the text decoded so
far; an output that does not open with a quote (a server that ignored the schema) passes through unchanged, so
it is still counted (and refused) like any other text. Strict structured outputs with an object at the root
(OpenAI) stream `{"text": "word word…"}`: the reader skips to the string's opening quote.

A surrogate escape without its pair (`\\udc00`: legal JSON, no character) becomes U+FFFD. An escape that is not
JSON (`\\uZZZZ`) is the server's malformed output: `feed` raises `MalformedString` carrying the text decoded
before it, so the stream keeps that text and says what the server sent.
"""

from __future__ import annotations

import re

_OBJECT_START = re.compile(r'\{\s*"text"\s*:\s*"')
_OBJECT_PREFIX_MAX = 64  # characters before the string in `{"text": "`; more, and it is not that object

REPLACEMENT = "\ufffd"
_HEX = frozenset("0123456789abcdefABCDEF")


class MalformedString(ValueError):
    """The JSON string holds an escape that is not JSON; `decoded` is the text read before it (not yet returned),
    `escape` the escape as sent."""

    def __init__(self, decoded: str, escape: str) -> None:
        super().__init__(f"invalid JSON escape {escape!r}")
        self.decoded, self.escape = decoded, escape


_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class JsonStringReader:
    """Incremental decoder of one JSON string value (leading whitespace allowed, anything after it ignored)."""

    def __init__(self) -> None:
        self.state = "before"  # before → inside → after, or raw (not a JSON string: pass through)
        self._pending = ""  # an escape cut by a chunk boundary
        self._high: str | None = None  # a high surrogate waiting for its pair

    def feed(self, chunk: str) -> str:
        if self.state == "raw":
            return chunk
        if self.state == "object":
            return self._object(self._pending + chunk)
        if self.state == "before":
            stripped = chunk.lstrip()
            if not stripped:
                return ""
            if stripped[0] == "{":
                return self._object(stripped)
            if stripped[0] != '"':
                self.state = "raw"
                return stripped
            self.state, chunk = "inside", stripped[1:]
        if self.state == "after":
            return ""
        return self._inside(self._pending + chunk)

    def _object(self, data: str) -> str:
        """Wait for `{"text": "`, then read the string; anything else passes through as it is."""
        found = _OBJECT_START.match(data)
        if found:
            self.state = "inside"
            return self._inside(data[found.end() :])
        if len(data) > _OBJECT_PREFIX_MAX:
            self.state = "raw"
            return data
        self.state, self._pending = "object", data
        return ""

    def _inside(self, data: str) -> str:
        out: list[str] = []
        i = 0
        self._pending = ""
        while i < len(data):
            c = data[i]
            if c == '"':
                out.append(self._unpaired())
                self.state = "after"
                break
            if c != "\\":
                out.extend((self._unpaired(), c))
                i += 1
                continue
            if i + 1 >= len(data):
                self._pending = data[i:]
                break
            kind = data[i + 1]
            if kind != "u":
                out.extend((self._unpaired(), _SIMPLE.get(kind, kind)))
                i += 2
                continue
            digits = data[i + 2 : i + 6]
            if not set(digits) <= _HEX:
                raise MalformedString("".join(out), data[i : i + 6])
            if i + 6 > len(data):
                self._pending = data[i:]
                break
            out.append(self._codepoint(int(digits, 16)))
            i += 6
        return "".join(out)

    def _unpaired(self) -> str:
        """U+FFFD for a high surrogate whose pair never came, else ""."""
        if self._high is None:
            return ""
        self._high = None
        return REPLACEMENT

    def _codepoint(self, code: int) -> str:
        """A `\\uXXXX` escape; a surrogate pair becomes one character once both halves arrived, a half alone U+FFFD."""
        if 0xD800 <= code < 0xDC00:
            lone, self._high = self._unpaired(), chr(code)
            return lone
        if 0xDC00 <= code < 0xE000:
            if self._high is None:
                return REPLACEMENT
            pair = (self._high + chr(code)).encode("utf-16", "surrogatepass").decode("utf-16")
            self._high = None
            return pair
        return self._unpaired() + chr(code)

"""Keys and URL credentials out of every message before it is shown or saved.

A base URL may carry `user:password@` or `?api-key=…`, and a server or proxy may echo the request's headers in
its error body: the failure text then holds the key. `redact` masks the key in use, URL credentials, query
parameters that name a secret and authorization headers; the backend guard applies it to every failure, the
run's saved failure text and the CLI's error lines pass through it, so no key reaches a message, the database
or an export. `valid_text` is the other half of what may leave a backend: text that is valid Unicode.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
SECRET_PARAM = re.compile(r"key|secret|token|passw|credential|auth|sig", re.IGNORECASE)
"""A query parameter or header whose name says it carries a secret (`api-key`, `access_token`, `sig`...)."""

_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)([^/\s@?#]+)@", re.IGNORECASE)
_QUERY = re.compile(r"([?&;]([^=&\s#?]+)=)([^&\s#\"'<>]+)")
_HEADER = re.compile(
    r"((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key)([\"']?\s*[:=]\s*[\"']?)"
    r"(?:(bearer|basic|token)\s+)?([^\s\"',;}&]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"

KEY_NOTICE = f"The text held the API key this run was sent with; it is shown and saved as {MASK}."
"""Said with a run whose model wrote the key in use into its answer."""

MIN_SECRET = 6
"""Shorter "keys" (`none`, a placeholder) are not masked: they would blank ordinary words."""


def _userinfo(info: str) -> str:
    user, sep, _ = info.partition(":")
    return f"{user}:{MASK}" if sep else MASK


def mask_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with each of `secrets` (the keys in use) replaced by `***`, and nothing else changed: for a model's
    own text, which may speak of tokens and passwords."""
    return SecretMasker(secrets).mask(text)


class SecretMasker:
    """`mask_secrets` over a stream of pieces: a key split across two pieces ("sk-ant-" then "0123…") is masked
    too. The end of the text so far that could begin a key is held back until the next piece (or `flush`) says
    which it is. `masked` counts the keys masked."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self.secrets = sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len, reverse=True)
        self.held, self.masked = "", 0

    def feed(self, piece: str) -> str:
        """What of the text so far can be shown now, keys masked."""
        if not self.secrets:
            return piece
        text = self.mask(self.held + piece)
        keep = self._open_end(text)
        self.held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        """The rest held back, at the end of the stream."""
        rest, self.held = self.held, ""
        return rest

    def mask(self, text: str) -> str:
        """`text` whole, each key in it masked and counted (the longest first: one key may hold another)."""
        for secret in self.secrets:
            self.masked += text.count(secret)
            text = text.replace(secret, MASK)
        return text

    def _open_end(self, text: str) -> int:
        """The length of the longest end of `text` that is the start of a key."""
        longest = max(len(s) for s in self.secrets) - 1
        for n in range(min(longest, len(text)), 0, -1):
            if any(s.startswith(text[-n:]) for s in self.secrets):
                return n
        return 0


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with each of `secrets` (the keys in use), URL credentials, secret query parameters and
    authorization headers replaced by `***`."""
    text = mask_secrets(text, secrets)
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{_userinfo(m.group(2))}@", text)
    text = _QUERY.sub(lambda m: m.group(1) + MASK if SECRET_PARAM.search(m.group(2)) else m.group(0), text)
    text = _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) + ' ' if m.group(3) else ''}{MASK}", text)
    return _BEARER.sub(rf"\1 {MASK}", text)


def valid_text(text: str) -> str:
    """`text` with each lone surrogate (`\\udc00` in a JSON stream is legal JSON but no character: a tokenizer that
    split an emoji, a buggy proxy) replaced by U+FFFD, so it can be printed, encoded as UTF-8 and saved."""
    return _SURROGATE.sub(REPLACEMENT, text)

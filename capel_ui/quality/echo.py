"""A text that gives the request back instead of answering it ("Remind a patient of a dental appointment…" as the
reminder). Each function is one way it happens and returns what it quotes, or None; never for a rewrite, whose text
is the writer's own. Its facts ("…on Tuesday at 3:30 pm with Dr. Patel") are what the text should hold: only the
request itself, from its first word, is an echo."""

from __future__ import annotations

import re

from ..prompts import rewrite_source
from .about_itself import shown

ECHO_RUN = 5
"""Words of the instruction's opening, in order, that make a text an echo of the request."""
_PLAIN_WORD = re.compile(r"[\w'’:.-]+")
_ASKING_WORDS = """
    write advertise announce describe remind create compose draft summarize summarise tell give explain generate
    promote invite introduce thank welcome congratulate apologize apologise ask suggest make design craft produce
    share post tweet pitch sell list outline rewrite shorten translate name"""
_ASKING = frozenset(_ASKING_WORDS.split())
"""Words an instruction opens with to ask for a text: a short text that is that opening ("Advertise a dog." for
"Advertise a dog grooming salon in Bristol.") gives the request back; "Dog grooming in Bristol." for "Dog grooming
in Bristol: an ad headline" is the writer's subject, written."""
_ORDERING = frozenset(("advertise", "compose", "draft", "summarize", "summarise", "generate", "rewrite", "translate"))
"""Words that order a text and never open one: a text that opens with the instruction's first two words, the first
of these, is the order given back ("Advertise a family business in Portland…" for "Advertise a family-run bike
repair shop in Portland."); "Write to us today!" or "Describe your dream trip…" may well be the text."""


def _plain(text: str) -> list[str]:
    return [w.strip(".:").lower() for w in _PLAIN_WORD.findall(text)]


def _asks(own_text: str) -> bool:
    """Whether `own_text` is a request a text could give back: there is one, and it is no rewrite's."""
    return bool(own_text) and rewrite_source(own_text) is None


def _opening_of(text: str, at: int) -> str:
    return shown(" ".join(_PLAIN_WORD.findall(text)[at : at + ECHO_RUN]) + " …")


def is_the_requests_opening(text: str, own_text: str) -> str | None:
    """The whole of a short text (under `ECHO_RUN` words) that is the request's opening, from an asking word:
    "Advertise a dog." for "Advertise a dog grooming salon in Bristol."."""
    said, ask = _plain(text), _plain(own_text)
    if _asks(own_text) and 2 <= len(said) < ECHO_RUN and said == ask[: len(said)] and said[0] in _ASKING:
        return text.strip()
    return None


def opens_with_the_order(text: str, own_text: str) -> str | None:
    """A text opening with the request's first two words, the first an order (`_ORDERING`): "Advertise a family
    business in Portland…" for "Advertise a family-run bike repair shop in Portland."."""
    said, ask = _plain(text), _plain(own_text)
    if _asks(own_text) and len(said) >= 2 and said[:2] == ask[:2] and said[0] in _ORDERING:
        return _opening_of(text, 0)
    return None


def gives_back_the_request(text: str, own_text: str) -> str | None:
    """The request's first `ECHO_RUN` words, in order, anywhere in the text."""
    said, ask = _plain(text), _plain(own_text)
    if not _asks(own_text) or len(ask) < ECHO_RUN:
        return None
    opening = ask[:ECHO_RUN]
    at = next((i for i in range(len(said) - ECHO_RUN + 1) if said[i : i + ECHO_RUN] == opening), None)
    return None if at is None else _opening_of(text, at)

"""The two records the quality rules are made of: the `Context` every rule looks at, and the `Rule` itself (its
detector, the `Kind` of warning it gives, and the texts that justify it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from ..vocab import Lang
from . import circles
from . import words as words_
from .kinds import Kind


@dataclass(frozen=True)
class Context:
    """What every rule looks at: the text, its language, the writer's own text (their instruction: its words, names
    and asks are theirs, not the model's faults) and the provider's sentence when its model does not write `lang`.
    What several rules need is worked out once per text."""

    text: str
    lang: Lang = "en"
    own_text: str = ""
    language_note: str | None = None

    @cached_property
    def words(self) -> list[str]:
        return words_.words(self.text, self.lang)

    @cached_property
    def word_kinds(self) -> dict[str, str]:
        """Each distinct word that is glued or a non-word, in reading order, and which."""
        own = words_.own_words(self.own_text)
        found = ((w, words_.word_kind(w, self.lang, own)) for w in dict.fromkeys(self.words))
        return {w: kind for w, kind in found if kind is not None}

    @cached_property
    def places(self) -> dict[str, int]:
        """Where each distinct word first comes."""
        return {w: i for i, w in enumerate(dict.fromkeys(self.words))}

    @cached_property
    def repeats(self) -> list[str]:
        """Words said over and over."""
        return circles.repeated_words(self.words)

    @cached_property
    def loops(self) -> list[str]:
        """Phrases that come back again and again."""
        return circles.loops(self.text, self.lang, self.own_text)

    @cached_property
    def sentences_twice(self) -> list[str]:
        """Sentences written twice."""
        return circles.repeated_sentences(self.text)

    @cached_property
    def said_again(self) -> list[str]:
        """Sentences or titles said twice."""
        return circles.said_again(self.text)

    @property
    def goes_round_in_circles(self) -> bool:
        return bool(self.repeats or self.loops or self.sentences_twice)


Detector = Callable[[Context], Sequence[str]]
"""What a rule found in a text (words or phrases, as its warnings quote them), in reading order."""


@dataclass(frozen=True)
class Rule:
    """One way a text goes wrong: `detect` finds it, `kind` says what the warning says and costs. `flags` are texts
    it must find something in, `passes` texts a writer wrote that it must leave alone (a string, or a `Context` with
    the instruction, language or note it needs)."""

    name: str
    kind: Kind
    about: str
    """What it flags, in a writer's words."""
    detect: Detector
    flags: tuple[str | Context, ...]
    passes: tuple[str | Context, ...]
    reading_order: bool = False
    """Its warnings and those of the rules next to it that say so too are listed as the text has them."""

    def examples(self, flagged: bool) -> list[Context]:
        """Its `flags` (or its `passes`) as contexts."""
        return [e if isinstance(e, Context) else Context(e) for e in (self.flags if flagged else self.passes)]


def one(find: Callable[[str, str], str | None]) -> Detector:
    """A detector from a check of (text, own_text) that finds one thing or None."""

    def detect(c: Context) -> list[str]:
        hit = find(c.text, c.own_text)
        return [hit] if hit else []

    return detect

"""The kinds of warning a finished text can get, one record each: what the warning says, what it costs the score,
whether it makes the text junk (no writer keeps it) and how `explain` and `ALL_JUNK` name it. `KINDS` is in the
order `explain` names problems: what makes a text junk first, then what a writer can fix. The rules that find each
kind, with their examples, are `rules.RULES`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """What every warning of one kind says and costs; several rules may find the same kind."""

    name: str
    message: str
    """The warning's sentence, `{word}` for what it is about."""
    wording: str
    """How `explain` names the problem ("goes round in circles"); kinds with the same wording are one problem (one
    penalty, one phrase). `{n}` counts their distinct words, `{s}` makes it plural."""
    penalty: float = 0.0
    """Points off the 0-10 score, once per problem."""
    word_penalty: float = 0.0
    """Points off per share of the text's words that have this warning (20: one bad word in ten costs 2)."""
    junk: bool = False
    """No writer keeps a text with it: the count is right, the text is not."""
    every_variant: str = ""
    """How `ALL_JUNK` says it of every variant ("goes round in circles"); only for a junk kind."""
    circle: bool = False
    """One of the ways a text goes round in circles: `notes` names all of them in one line."""
    once: bool = False
    """A text gets one warning of this kind: the first of its rules that finds something names it."""

    def __post_init__(self) -> None:
        if self.junk != bool(self.every_variant):
            raise ValueError(f"{self.name}: a junk kind says how every variant is junk, and only a junk kind does")


_CIRCLES = "goes round in circles"
_BAD_WORDS = "{n} unknown or glued word{s}"

LANGUAGE = Kind(
    "language",
    "{word}",  # the provider's own sentence (ProviderSpec.language_note)
    "not real text in this language",
    junk=True,
    every_variant="is not real text in this language",
)
REPEAT = Kind(
    "repeat",
    "“{word}” repeats over and over: the text is going round in circles",
    _CIRCLES,
    penalty=4.0,
    junk=True,
    every_variant=_CIRCLES,
    circle=True,
)
LOOP = Kind(
    "loop",
    "“{word}” comes back again and again: the text is going round in circles",
    _CIRCLES,
    penalty=4.0,
    junk=True,
    every_variant=_CIRCLES,
    circle=True,
)
NUMBERS = Kind(
    "numbers",
    "the text is mostly a list of numbers ({word}), not prose",
    "a list of numbers, not prose",
    penalty=4.0,
    junk=True,
    every_variant="is a list of numbers",
)
SECTION = Kind(
    "section",
    "the text opens as a numbered section (“{word}”): it is a list's heading, not prose",
    "opens as a numbered section",
    penalty=4.0,
    junk=True,
    every_variant="opens as a numbered section",
)
FORM = Kind(
    "form",
    "the text is a form to fill in (“{word}”), not the text asked for",
    "a form to fill in",
    penalty=4.0,
    junk=True,
    every_variant="is a form to fill in",
    once=True,
)
META = Kind(
    "meta",
    "the text talks about itself (“{word}”): it is not the text alone",
    "talks about itself",
    penalty=3.0,
    junk=True,
    every_variant="talks about itself",
    once=True,
)
ECHO = Kind(
    "echo",
    "the text repeats the request (“{word}”): it is the instruction, not an answer",
    "repeats the request",
    penalty=3.0,
    junk=True,
    every_variant="repeats the request",
    once=True,
)
SALAD = Kind(
    "salad",
    "“{word}” is a string of words, not sentences",
    "a string of words, not sentences",
    penalty=4.0,
    junk=True,
    every_variant="is a string of words",
)
DOUBLED = Kind("doubled", "“{word}” says the same word twice", "a word said twice", penalty=1.5)
RESTATED = Kind("restated", "“{word}” is said twice: a writer would say it once", "a phrase said twice", penalty=2.0)
BLANK = Kind(
    "blank", "“{word}” is a blank to fill in: the count changes when you fill it", "a blank to fill in", penalty=3.0
)
NONWORD = Kind("nonword", "“{word}” is not a known word", _BAD_WORDS, word_penalty=20.0)
GLUED = Kind("glued", "“{word}” looks like two words glued together", _BAD_WORDS, word_penalty=20.0)
DANGLING = Kind("dangling", "the text ends on “{word}”, mid-sentence", "ends mid-sentence", penalty=2.0)

KINDS: tuple[Kind, ...] = (
    LANGUAGE,
    REPEAT,
    LOOP,
    NUMBERS,
    SECTION,
    FORM,
    META,
    ECHO,
    SALAD,
    DOUBLED,
    RESTATED,
    BLANK,
    NONWORD,
    GLUED,
    DANGLING,
)
"""Every kind, in the order `explain` names problems."""
BY_NAME = {k.name: k for k in KINDS}

JUNK_KINDS = frozenset(k.name for k in KINDS if k.junk)
"""What no writer keeps: a text going round in circles, a list of numbers, a numbered section or a form's fields
instead of prose, one that introduces itself ("Here's a possible blurb: …", and its count includes the
introduction) or repeats the instruction, a string of words, or text in a language the model does not write."""
CIRCLE_KINDS = frozenset(k.name for k in KINDS if k.circle)
"""The ways a text goes round in circles: one word over and over, or a phrase."""
PENALTY = {k.name: k.penalty for k in KINDS if k.penalty}
"""Points off for each kind of problem, once per problem (a loop counts once whether a word or a phrase repeats)."""


@dataclass(frozen=True)
class QualityWarning:
    """One thing a writer should look at before publishing: `kind` names a `Kind` (nonword, glued, repeat, loop,
    numbers, section, meta, echo, salad, doubled, restated, blank, dangling, language); `word` is what it is about."""

    kind: str
    word: str

    @property
    def message(self) -> str:
        """The warning's sentence (an unknown kind reads as an unknown word)."""
        return BY_NAME.get(self.kind, NONWORD).message.format(word=self.word)

"""The ending of a text: would the model have stopped there? Scored on every run that can be, said in plain words.

A guaranteed count is met by closing the text at word N whatever the model was saying ("…is scheduled forbes.").
The model itself knows better: its probability of ending its answer right after the text (the end-of-turn token
next, with the writer's instruction as the question and the text as its answer) is high after a finished thought
and low after a cut one. The question states the length ("… in exactly 12 words", the baseline prompt): asked
the bare instruction, a small model would go on after any short text, finished or not (measured: a free 20-word
answer that the model itself ended scored 0.03 against the bare instruction and 0.70 against its own prompt).
`Backend.end_probability` asks the server where it is known to answer (llama.cpp: the embedded model, GGUF files,
llama.cpp servers: `Capabilities.end_probability`). OpenAI's chat models cannot continue a given answer, and
DeepSeek's prefix completion has not been tried with top log-probabilities, so their runs have no ending score.

The score is a proxy from the model that wrote the text; a 135M model is noisy, so it ranks and counts, and the
words a writer reads are two: "ends naturally" or "cut off".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .prompts import Message

if TYPE_CHECKING:
    from .backends import Backend

NATURAL = 0.5
"""P(end) from which a text ends naturally: the model would more likely stop than go on."""


def score_ending(backend: Backend, messages: Sequence[Message], text: str) -> float | None:
    """P(end | messages, text) from `backend`, or None where it cannot say (or the text is empty). `messages`:
    the instruction with its length (`Generation.ending_messages`)."""
    if not text.strip():
        return None
    return backend.end_probability(messages, text.strip())


def ends_naturally(p: float | None) -> bool | None:
    """True when the model would end here, False when it would go on (cut off), None when unknown."""
    return None if p is None else p >= NATURAL


def ending_words(p: float | None) -> str | None:
    """ "ends naturally" or "cut off", as every surface says it; None when the server gave no score."""
    natural = ends_naturally(p)
    return None if natural is None else "ends naturally" if natural else "cut off"


def ending_help(p: float | None) -> str:
    """What the words mean, with the number, for a tooltip or a terminal line."""
    if p is None:
        return "No ending score: this model's server does not give the probabilities it needs."
    if p >= NATURAL:
        return f"The model would end its answer here (probability {p:.2f} of stopping after the last word)."
    return (
        f"The model would have gone on (probability {p:.2f} of stopping here): the last sentence reads as cut "
        "off. Try another variant, or edit the ending."
    )


def natural_share(scores: Sequence[float | None]) -> float | None:
    """The share of scored texts that end naturally (None when none was scored)."""
    known = [p for p in scores if p is not None]
    return sum(p >= NATURAL for p in known) / len(known) if known else None

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

After a full stop the grammar forced, a small model happily ends its answer, so P(end) alone calls many cut
sentences natural. The run's own token log-probabilities (llama.cpp reports them before the grammar) say whether
the model would have closed its last sentence there at all (`close_probability`); the ending score is P(end)
discounted by that (`ending_score`), at no extra request.

The score is a proxy from the model that wrote the text; a 135M model is noisy, so it ranks and counts, and the
words a writer reads are two: "ends naturally" or "cut off".

The same score plans the ending where the server can give it (llama.cpp, `Generation`): an exact text is written
up to its last `PLAN_UNITS` units, then `ENDING_CANDIDATES` endings of exactly the units left are written at once
(the embedded server has 4 parallel slots) and the run keeps the one the model would most likely end on
(`best_ending`); a text under a limit or in a range ends at the last sentence end the model would end on
(`natural_cut`), not wherever the limit cut it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .prompts import Message

if TYPE_CHECKING:
    from .backends import Backend

NATURAL = 0.5
"""P(end) from which a text ends naturally: the model would more likely stop than go on."""
CLOSE_MIN = 0.05
"""The model's own probability of closing its last sentence where the text does (the rest of the last word and
the stop after it: `close_probability`) below which the ending is cut off, whatever P(end) says. Measured on the
embedded model (16 instructions, 12 and 40 words): endings the model chose itself 0.18-0.92; endings a length
grammar forced ("…a classic Italian dish named.", "…andrews.", "…ready tore.") 1e-7 to 0.02. P(end) alone
scored many of those 0.7-0.9: after a forced full stop, a small model happily ends its answer."""
PLAN_UNITS = 6
"""The most units an exact text's planned ending writes: a short closing clause."""
ENDING_CANDIDATES = 3
"""The most candidate endings written at once (the embedded llama.cpp server has 4 parallel slots: one stays free
for the ending scores and other runs)."""
PLAN_COST = 0.3
"""The extra time a planned ending may cost, as a share of the text's own: rivals are written at once, but on a
CPU the slots share its cores (a token costs about the same written alone or beside others), and each rival also
costs a request and an ending score (benchmarks/endings.py)."""
RIVAL_COST = 1.0
"""A rival ending's cost per unit against the text's own. Rivals use the plain word rule (24 ms a token against 45
for the word list, embedded, one thread) and are checked for non-words afterwards, but each also reads the prompt
and the text so far and is scored: measured, a rival costs about as much per unit as the text."""
_SENTENCE_END = re.compile(r"[.!?。！？][\"')\]”’）」]*(?=\s|$)")


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
        f"The model would have gone on (ending score {p:.2f}: its probability of stopping here, lowered when it "
        "would not have closed the last sentence there): the last sentence reads as cut off. Try another variant, "
        "or edit the ending."
    )


def cut_off_note(p: float) -> str:
    """The warning under a text whose last sentence reads as cut off: short enough for a narrow Compare column
    (`ending_help` says what the number is, in a tooltip)."""
    return f"Last sentence cut off: the model would have gone on (ending score {p:.2f}). Try a variant, or edit it."


def natural_share(scores: Sequence[float | None]) -> float | None:
    """The share of scored texts that end naturally (None when none was scored)."""
    known = [p for p in scores if p is not None]
    return sum(p >= NATURAL for p in known) / len(known) if known else None


_TRAILING = re.compile(r"(?:\s|<\s*\d+\s*>)+$")  # a countdown's closing <0>, spaces
_WORD_START = re.compile(r"[\s>]")


def close_probability(pieces: Sequence[str], logprobs: Sequence[float], end: int | None = None) -> float | None:
    """The model's own probability of closing its last sentence where the text does: the product of the raw
    probabilities (llama.cpp reports them before the grammar) of the tokens after the one that starts the last
    word, up to `end` (an index into the joined `pieces`; default: their end, without a trailing `<0>` or spaces).
    The word's first token is the model's choice of word; what follows shows whether the grammar forced it: "and"
    then "rews", "named" then "." (P 1e-5). None when tokens and log-probabilities do not line up."""
    if not logprobs or len(pieces) != len(logprobs):
        return None
    text = "".join(pieces)
    stop = len(_TRAILING.sub("", text)) if end is None else end
    starts = [m.end() for m in _WORD_START.finditer(text, 0, stop)]
    word = starts[-1] if starts else 0
    total, pos, first = 0.0, 0, True
    for piece, lp in zip(pieces, logprobs, strict=True):
        start, pos = pos, pos + len(piece)
        if pos <= word:
            continue
        if start >= stop:
            break
        if first:  # the token that starts the last word
            first = False
            continue
        total += lp
    return math.exp(total)


def ending_score(end_probability: float | None, close: float | None) -> float | None:
    """P(end), discounted when the last sentence was closed where the model would not have closed it (`CLOSE_MIN`):
    what "ends naturally" and ranking read. P(end) unchanged when the close is unknown or natural."""
    if end_probability is None or close is None:
        return end_probability
    return end_probability * min(1.0, close / CLOSE_MIN)


def sentence_ends(text: str) -> list[int]:
    """Where a sentence of `text` ends (the index after its stop and any closing quote or bracket), in order."""
    return [m.end() for m in _SENTENCE_END.finditer(text)]


def _known(p: float | None) -> float:
    return -1.0 if p is None else p


def best_ending(scores: Sequence[tuple[float | None, float | None]]) -> int:
    """The index of the candidate ending to keep, of (P(end), fluency) pairs: the one the model would most likely
    end on, then the most fluent (an unknown score below any known); the first of equals."""
    return max(range(len(scores)), key=lambda i: (_known(scores[i][0]), _known(scores[i][1]), -i))


def natural_cut(scores: Sequence[float | None]) -> int:
    """Of the sentence ends of a text, shortest first (`scores`: P(end) after each; the last is the whole text),
    the one to end at: the last the model would end on, else the one it would most likely end on (the longer of
    equals). A limit is a ceiling, not a length to fill."""
    natural = [i for i, p in enumerate(scores) if p is not None and p >= NATURAL]
    if natural:
        return natural[-1]
    return max(range(len(scores)), key=lambda i: (_known(scores[i]), i))


def plan_size(target: int) -> tuple[int, int]:
    """(units, candidates) of a planned ending for an exact text of `target` units: the last third of a short text,
    at most `PLAN_UNITS`; as many candidates (the run's own ending and its rivals) as the time budget allows, 2 to
    `ENDING_CANDIDATES`: the rivals, (K-1)·units more units written beside the text's own, may cost `PLAN_COST`
    of the text's time."""
    units = min(target, PLAN_UNITS, max(3, target // 4))
    fits = 1 + int(PLAN_COST * target / (units * RIVAL_COST))
    return units, max(2, min(ENDING_CANDIDATES, fits))

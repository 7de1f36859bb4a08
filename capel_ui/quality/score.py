"""What the warnings of a finished text add up to: junk or not, the lines the pages show, the 0-10 offline score
that ranks variants when no judge model is configured, and that score in a writer's words. Every penalty and
phrase comes from the kind's record (`kinds.KINDS`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ..ending import NATURAL, ending_words, ends_naturally
from .kinds import BY_NAME, CIRCLE_KINDS, JUNK_KINDS, KINDS, Kind, QualityWarning


def junk(found: Sequence[QualityWarning]) -> bool:
    """A text no writer would keep: one of its warnings is of a junk kind (`JUNK_KINDS`)."""
    return any(w.kind in JUNK_KINDS for w in found)


def _listed(phrases: Sequence[str]) -> str:
    return ", ".join(phrases[:-1]) + f" or {phrases[-1]}" if len(phrases) > 1 else "".join(phrases)


_AGAIN = "Run again, or change the instruction or the model."


def all_junk(kinds: Iterable[str | None] = ()) -> str:
    """What the Write page and `generate --variants K` say when every variant is junk: the ways they are (each
    variant's first reason, `Assessment.junk_kind`: "Every variant talks about itself or goes round in circles"),
    or every junk kind where none is known."""
    found = set(kinds)
    named = [k for k in KINDS if k.junk and k.name in found] or [k for k in KINDS if k.junk]
    phrases = list(dict.fromkeys(k.every_variant for k in named))
    return f"Every variant {_listed(phrases)}: none is worth keeping. {_AGAIN}"


ALL_JUNK = all_junk()
"""`all_junk` with every junk kind named (the documentation's wording)."""
NOT_TO_PUBLISH = "not a text to publish"
"""What a text no writer would keep (`junk`) is called, in its score line and beside its verdict badge."""
ONE_JUNK = f"This text is not worth keeping (see the warnings): the count is right, the text is not. {_AGAIN}"
"""What the Write page and `generate` say over a single text that is junk, before Copy and the downloads."""


def ending_said(end_probability: float | None, found: Sequence[QualityWarning]) -> str | None:
    """The ending as every surface says it (badge, History, exports, JSON, batch output): "not a text to publish" for
    a text no writer would keep (`junk`: "ends naturally" beside a loop reads as praise), else `ending_words`."""
    return NOT_TO_PUBLISH if junk(found) else ending_words(end_probability)


def notes(found: Sequence[QualityWarning]) -> list[str]:
    """The warnings as the pages show them, one line each, except that every word and phrase a text goes round in
    circles on is named in one line (a loop is often caught as a word and two or three phrases: four lines that
    each ended "the text is going round in circles" were most of a phone's screen)."""
    circling = list(dict.fromkeys(w.word for w in found if w.kind in CIRCLE_KINDS))
    out: list[str] = []
    for w in found:
        if w.kind not in CIRCLE_KINDS:
            out.append(w.message)
        elif len(circling) == 1:
            out.append(w.message)
            circling = []
        elif circling:
            named = [f"“{c}”" for c in circling]
            out.append(
                f"{', '.join(named[:-1])} and {named[-1]} come back again and again: the text is going round in circles"
            )
            circling = []
    return out


def fluency(logprobs: Sequence[float] | None) -> float | None:
    """The geometric mean probability of the model's tokens (0–1), or None when the server gave none."""
    if not logprobs:
        return None
    return math.exp(sum(logprobs) / len(logprobs))


def flow_words(fluency_: float | None) -> str | None:
    """Fluency as a writer would say it (a small model's own tokens: 0.3 and up is smooth for it)."""
    if fluency_ is None:
        return None
    if fluency_ >= 0.3:
        return "reads smoothly"
    return "reads stiffly in places" if fluency_ >= 0.1 else "reads awkwardly"


CUT_OFF = 3.0
"""Points off for an ending the model would not have stopped at (P(end) 0), less as P(end) nears `NATURAL`."""


def ending_penalty(end_probability: float | None) -> float:
    """`CUT_OFF` for an ending the model would never stop at, nothing from `NATURAL` up, nothing when unknown."""
    if end_probability is None:
        return 0.0
    return CUT_OFF * (1.0 - min(end_probability / NATURAL, 1.0))


def _problems(found: Sequence[QualityWarning]) -> dict[str, list[Kind]]:
    """The problems `found` shows, by `Kind.wording`, in `KINDS` order: kinds that share a wording are one problem."""
    present = {w.kind for w in found}
    out: dict[str, list[Kind]] = {}
    for kind in KINDS:
        if kind.name in present:
            out.setdefault(kind.wording, []).append(kind)
    return out


def offline_score(
    fluency_: float | None, found: Sequence[QualityWarning], n_words: int, end_probability: float | None = None
) -> float:
    """0–10 without a judge: 10·√fluency (5 when unknown; the square root spreads a small model's typical 0.1–0.6
    over the scale), minus each kind's `word_penalty` per share of bad words and its `penalty` once per problem (a
    loop, a number list, a text about itself, a blank…: a repeating or counting model is confident, so its fluency
    alone would reward it), and up to `CUT_OFF` for an ending the model would not have stopped at."""
    base = 5.0 if fluency_ is None else 10.0 * math.sqrt(fluency_)
    penalty = sum(BY_NAME[w.kind].word_penalty for w in found if w.kind in BY_NAME) / max(n_words, 1)
    penalty += sum(kinds[0].penalty for kinds in _problems(found).values())
    penalty += ending_penalty(end_probability)
    return round(max(0.0, min(10.0, base - penalty)), 2)


def _named(found: Sequence[QualityWarning]) -> list[str]:
    """Each problem of `found` as `explain` names it, with its count of distinct words where it has one."""
    out = []
    for wording, kinds in _problems(found).items():
        names = {k.name for k in kinds}
        n = len({w.word for w in found if w.kind in names})
        out.append(wording.format(n=n, s="s" if n > 1 else ""))
    return out


def explain(fluency_: float | None, found: Sequence[QualityWarning], end_probability: float | None = None) -> str:
    """What the score says, in a writer's words: "reads smoothly, ends naturally" or "2 unknown words, last
    sentence cut off". Problems first, then how it reads. A text no writer keeps (`junk`: a loop, a number list, a
    text about itself, word salad) gets no praise at all: "goes round in circles: not a text to publish"."""
    parts = _named(found)
    natural = ends_naturally(end_probability)
    if junk(found):  # no praise for junk: a confident number list "reads smoothly" to the model that wrote it
        if natural is False:
            parts.append("last sentence cut off")
        return ", ".join(parts) + f": {NOT_TO_PUBLISH}"
    if natural is not None:
        parts.append("ends naturally" if natural else "last sentence cut off")
    flow = flow_words(fluency_)
    if flow:
        parts.append(flow)
    return ", ".join(parts) if parts else "no problems found"

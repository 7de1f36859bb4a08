"""A text going round in circles: one word over and over (`repeats`), a phrase that comes back again and again
(`loops`), a sentence written twice (`repeated_sentences`), one word joined to itself (`doubled`). A small model under
a length grammar falls into these ("enforcement de lame, enforcement de lame, …") and is confident while it does,
so its fluency alone would rank such a text first."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..vocab import Lang
from .words import EN_WORD, HAN_CHAR, STOP, norm, own_words, words

REPEAT_RUN = 3
"""A word this many times in a row is a loop, not style."""


def repeats(text: str, lang: Lang = "en") -> list[str]:
    """Words said `REPEAT_RUN` or more times in a row ("the the the"): a small model's loop under a grammar."""
    return repeated_words(words(text, lang))


def repeated_words(text_words: Sequence[str]) -> list[str]:
    """`repeats` of words already split, each as first written."""
    found: dict[str, None] = {}
    run, last, first = 0, "", ""
    for w in text_words:
        run, first = (run + 1, first) if w.lower() == last else (1, w)
        last = w.lower()
        if run == REPEAT_RUN:
            found.setdefault(first, None)
    return list(found)


# ----- loops: a phrase that comes back again and again ------------------------------------------------------------

LOOP_SPAN = 8
"""The longest phrase (in words, or Han characters) looked for as a loop."""
LONG_TWICE = 8
"""Words from which an English phrase written twice anywhere is a loop ("…a must-visit destination in the Whale's Rest,
offering a unique blend of local and international cuisine…" twice over, one word apart): a writer says so long a
stretch once. At most `LOOP_SPAN`, the longest phrase looked for."""
LOOP_WINDOW = 5_000
"""Words (or Han characters) a loop is looked for in, from the start: a loop shows long before that, and a reply of
megabytes (a runaway stream, stopped and saved) is checked in bounded time."""


def loops(text: str, lang: Lang = "en", own_text: str = "") -> list[str]:
    """Phrases (two or more words) the text goes round in: said back to back three times ("a b a b a b"), or
    twice when three words or longer ("enforcement de lame, enforcement de lame"), or the same phrase of three
    or more words (four Han characters) three times anywhere (of eight English words, twice), unless its only
    words besides small ones are the instruction's (`own_text`): 80 words on "The Whaler's Rest" name it three
    times. A single word over and over is `repeats`; one word that is a fifth of a text of ten words or more
    ("arugula, arugula with arugula, and arugula") is a loop too. Case and punctuation are ignored; the phrase is
    returned as first written."""
    found = words(text, lang)[:LOOP_WINDOW]
    low = norm(found)
    hits: dict[str, None] = {}
    spans = [*_back_to_back(low), *_recurring(low, lang, own_words(own_text)), *_dominant(low, lang)]
    for start, n in _merge(spans, low):
        hits.setdefault(_phrase(found[start : start + n], lang), None)
    return list(hits)


def _phrase(items: Sequence[str], lang: Lang) -> str:
    return ("" if lang == "zh" and all(HAN_CHAR.fullmatch(w) for w in items) else " ").join(items)


def _back_to_back(low: Sequence[str]) -> list[tuple[int, int]]:
    """(start, length) of phrases repeated back to back: 2 words three times, 3+ words twice."""
    out = []
    for n in range(2, LOOP_SPAN + 1):
        need = 3 if n == 2 else 2
        i = 0
        while i + n * need <= len(low):
            if len(set(low[i : i + n])) == 1:  # one word over and over is `repeats`, not a phrase
                i += 1
                continue
            reps = 1
            while low[i + reps * n : i + (reps + 1) * n] == low[i : i + n]:
                reps += 1
            if reps >= need:
                out.append((i, n))
                i += reps * n
            else:
                i += 1
    return out


def _recurring(low: Sequence[str], lang: Lang, own: set[str]) -> list[tuple[int, int]]:
    """(first start, length) of phrases of 3+ words (4+ Han characters) that occur three times (an English one of
    `LONG_TWICE` words, twice), not all small words ("one of the" is English, not a loop) or the instruction's own
    (`own`, lower case)."""
    seen: dict[tuple[str, ...], list[int]] = {}
    shortest = 4 if lang == "zh" else 3
    usual = STOP | own
    for n in range(shortest, LOOP_SPAN + 1):
        for i in range(len(low) - n + 1):
            gram = tuple(low[i : i + n])
            if any(w not in usual for w in gram):
                seen.setdefault(gram, []).append(i)
    out = [(starts[0], len(gram)) for gram, starts in seen.items() if _apart(starts, len(gram)) >= _times(gram, lang)]
    return _longest(out)


def _times(gram: tuple[str, ...], lang: Lang) -> int:
    """How often a phrase must come back to be a loop: three times, or twice for a long English one (`LONG_TWICE`)."""
    return 2 if lang == "en" and len(gram) >= LONG_TWICE else 3


def _apart(starts: Sequence[int], n: int) -> int:
    """How many of the occurrences do not overlap each other."""
    count, last = 0, -n
    for s in starts:
        if s >= last + n:
            count, last = count + 1, s
    return count


def _longest(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Drop a phrase found inside a longer one found at the same start ("de lame" within "enforcement de lame")."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    out: list[tuple[int, int]] = []
    for start, n in spans:
        if not any(start >= a and start + n <= a + m for a, m in out):
            out.append((start, n))
    return out


def _dominant(low: Sequence[str], lang: Lang) -> list[tuple[int, int]]:
    """A content word that is a fifth or more of a text of ten words or more, four times at least; or, in a text of
    five to nine words, three times ("New Same What Same Same Now")."""
    if len(low) < 5:
        return []
    counts: dict[str, int] = {}
    for w in low:
        if len(w) >= 4 and w not in STOP and not HAN_CHAR.search(w) and not w.isdigit():
            counts[w] = counts.get(w, 0) + 1
    least = 4 if len(low) >= 10 else 3
    top = [w for w, c in counts.items() if c >= least and c >= len(low) / 5]
    return [(low.index(w), 1) for w in top]


def _merge(spans: list[tuple[int, int]], low: Sequence[str]) -> list[tuple[int, int]]:
    """One phrase per stretch of text a loop covers: of phrases whose first places overlap ("enforcement de lame",
    "de lame enforcement", "lame enforcement de" in one loop) the longest, and none that is part of a phrase already
    kept. A loop named fifteen times over is one loop."""
    kept: list[tuple[int, int]] = []
    for start, n in sorted(spans, key=lambda s: (-s[1], s[0])):
        inside = any(start < a + m and a < start + n for a, m in kept)
        words_ = " " + " ".join(low[start : start + n]) + " "
        part = any(words_ in " " + " ".join(low[a : a + m]) + " " for a, m in kept)
        if not inside and not part:
            kept.append((start, n))
    return sorted(kept)


# ----- sentences written twice, words joined to themselves --------------------------------------------------------

SENTENCE_TWICE = 4
"""Words from which a sentence written twice is a loop ("Thank you." twice is not)."""
SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
"""A sentence as the quality checks split a text: up to its stops, or a line's end."""


def repeated_sentences(text: str) -> list[str]:
    """Sentences of `SENTENCE_TWICE` words or more written twice or more (case and punctuation ignored), as first
    written: a loop too long for a phrase ("The Whaler's Rest is a premium pub. … The Whaler's Rest is a premium
    pub.")."""
    return _written_twice(SENTENCE, SENTENCE_TWICE, text, None)


PART_TWICE = 3
"""Words from which a sentence or a title said twice is one a writer would say once ("The Lighthouse's Promise: A
World of Hope. The Lighthouse's Promise."); shorter ("Thank you. Thank you.") is how people talk."""
_PART = re.compile(r"[^.!?。！？:;：；\n]+[.!?。！？:;：；]*")


def said_again(text: str) -> list[str]:
    """Sentences, or the parts of a sentence a colon or a semicolon sets apart (a title and its subtitle), of
    `PART_TWICE` words or more written again whole (case and punctuation ignored), as first written: a headline
    that ends on its own title again. A long sentence written twice is also a loop (`repeated_sentences`)."""
    return _written_twice(_PART, PART_TWICE, text, ' .!?。！？:;：；"“”-')


def _written_twice(pieces: re.Pattern[str], least: int, text: str, strip: str | None) -> list[str]:
    """The `pieces` of `text` of `least` words or more found again whole (case and punctuation ignored), each as
    first written, without the `strip` characters (None: whitespace) around it."""
    seen: dict[tuple[str, ...], str] = {}
    out: dict[str, None] = {}
    for m in pieces.finditer(text[: LOOP_WINDOW * 8]):
        found = EN_WORD.findall(m.group())
        if len(found) < least:
            continue
        key = tuple(norm(found))
        if key in seen:
            out.setdefault(seen[key], None)
        else:
            seen[key] = m.group().strip(strip)
    return [_short(s) for s in out]


def _short(phrase: str, most: int = 60) -> str:
    return phrase if len(phrase) <= most else phrase[: most - 1].rstrip() + "…"


_SAID_TWICE_WORDS = """
had has does did very really much many well round over again more long bye knock chop night there here away soon
tick tock blah
"""
_SAID_TWICE = frozenset(_SAID_TWICE_WORDS.split())
"""Words English says twice on purpose ("had had", "very very", "round and round", "over and over")."""
_DOUBLED = re.compile(r"\b([^\W\d_]{3,})(?:,?\s+(?:and|or|&)\s+|\s+)\1\b", re.IGNORECASE)


def doubled(text: str, own_text: str = "") -> list[str]:
    """A word joined to itself ("a dedicated and dedicated", "fresh fresh"), unless the writer wrote it so; small
    words ("that that", "had had") and a word over and over (`repeats`) are left out."""
    own = own_text.lower()
    out: dict[str, None] = {}
    for m in _DOUBLED.finditer(text):
        word = m.group(1).lower()
        if word in STOP or word in _SAID_TWICE or m.group().lower() in own:
            continue
        after = text[m.end() :].lstrip(" ,")
        if after.lower().startswith(word) and not after[len(word) : len(word) + 1].isalpha():
            continue  # three in a row: `repeats`
        out.setdefault(m.group(), None)
    return list(out)

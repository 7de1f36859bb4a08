"""Quality checks of a finished text, offline and pure: non-words, glued words, a dangling ending, fluency.

A guaranteed count is worthless if the words are mangled, so every run is checked: a word wordfreq has never
seen (zipf frequency 0) is a non-word unless the writer used it in their own instruction; a non-word made of
two real words ("traditionaldough", "positiveMindset") is glued; a text ending on "of", "the", "and" ends
dangling. Fluency is the geometric mean probability of the model's own tokens (from the server's logprobs).
`offline_score` folds these into 0–10 so variants can be ranked when no judge model is configured.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .lexicon import DANGLING, ZH_DANGLING, looks_glued, zipf
from .vocab import Lang

# A word as the checks see it: letters, digits, inner ' ’ or - (any script); Han characters one at a time.
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_EN_WORD = re.compile(rf"[^\W_{_HAN}]+(?:['’\-][^\W_{_HAN}]+)*")  # runs joined by single marks: one pass
_HAN_CHAR = re.compile(f"[{_HAN}]")


@dataclass(frozen=True)
class QualityWarning:
    """One thing a writer should look at before publishing: `kind` is nonword, glued or dangling."""

    kind: str  # nonword, glued, repeat, dangling, or language (the model does not write it: `word` names the model)
    word: str

    @property
    def message(self) -> str:
        if self.kind == "glued":
            return f"“{self.word}” looks like two words glued together"
        if self.kind == "dangling":
            return f"the text ends on “{self.word}”, mid-sentence"
        if self.kind == "repeat":
            return f"“{self.word}” repeats {REPEAT_RUN} or more times in a row"
        if self.kind == "language":
            return (
                f"{self.word} does not write this language: the count is right, but this is not prose a writer "
                "could use; pull a model that does (Models page)"
            )
        return f"“{self.word}” is not a known word"


REPEAT_RUN = 3
"""A word this many times in a row is a loop, not style."""


def _zipf(word: str, lang: Lang) -> float:
    return zipf(word, lang)


def words(text: str, lang: Lang = "en") -> list[str]:
    """The words the checks look at: English-like words, and in Chinese also each Han character."""
    found = _EN_WORD.findall(text)
    if lang == "zh":
        found = [*_HAN_CHAR.findall(text), *found]
    return found


def _own(text: str) -> set[str]:
    return {w.lower() for w in _EN_WORD.findall(text)}


def is_word(word: str, lang: Lang = "en", own: Iterable[str] = ()) -> bool:
    """Known to wordfreq (or the writer's own word). Possessives count as their word ("Whaler's")."""
    base = re.sub(r"['’]s$", "", word)
    if word.lower() in own or base.lower() in own:
        return True
    if "-" in base:  # a hyphenated compound is fine when each part is a word
        return all(is_word(p, lang, own) for p in base.split("-") if p)
    return _zipf(base, lang if _HAN_CHAR.search(base) else "en") > 0


def is_glued(word: str, lang: Lang = "en") -> bool:
    """camelCase, or two common words run together ("thesigns", "ofthe"): see `lexicon.looks_glued`."""
    base = re.sub(r"['’]s$", "", word)
    return not _HAN_CHAR.search(base) and looks_glued(base)


def glued(text: str, lang: Lang = "en", own_text: str = "") -> list[str]:
    """Words of `text` that look glued (known to wordfreq or not), leaving out the writer's own words."""
    own = _own(own_text)
    found = words(text, lang)
    bad = {w for w in dict.fromkeys(found) if w.lower() not in own and is_glued(w, lang)}
    return [w for w in found if w in bad]


def nonwords(text: str, lang: Lang = "en", own_text: str = "") -> list[str]:
    """Words of `text` wordfreq does not know, leaving out words the writer used in `own_text`."""
    own = _own(own_text)
    found = words(text, lang)
    bad = {w for w in dict.fromkeys(found) if not is_word(w, lang, own)}
    return [w for w in found if w in bad]


def _kind(word: str, lang: Lang, own: set[str]) -> str | None:
    """glued, nonword, or None for a good word (or one of the writer's own)."""
    if word.lower() in own:
        return None
    if is_glued(word, lang):
        return "glued"
    return None if is_word(word, lang, own) else "nonword"


def dangling_end(text: str, lang: Lang = "en") -> str | None:
    """The last word when a sentence cannot end on it ("of", "the", "的"), else None."""
    if lang == "zh":
        han = _HAN_CHAR.findall(text)
        if han and han[-1] in ZH_DANGLING and not _EN_WORD.search(text[text.rfind(han[-1]) :]):
            return han[-1]
    found = _EN_WORD.findall(text)
    if found and found[-1].lower() in DANGLING:
        return found[-1]
    return None


def warnings(text: str, lang: Lang = "en", own_text: str = "") -> list[QualityWarning]:
    """Every non-word (glued ones said so) and a dangling ending, in reading order. Each distinct word is looked
    at once, so a long text costs a pass over its words."""
    own = _own(own_text)
    found = words(text, lang)
    kinds = ((_kind(w, lang, own), w) for w in dict.fromkeys(found))
    out = [QualityWarning(kind, w) for kind, w in kinds if kind is not None]
    out += [QualityWarning("repeat", w) for w in _repeats(found)]
    end = dangling_end(text, lang)
    if end is not None:
        out.append(QualityWarning("dangling", end))
    return out


def repeats(text: str, lang: Lang = "en") -> list[str]:
    """Words said `REPEAT_RUN` or more times in a row ("the the the"): a small model's loop under a grammar."""
    return _repeats(words(text, lang))


def _repeats(text_words: Sequence[str]) -> list[str]:
    found: dict[str, None] = {}
    run, last, first = 0, "", ""
    for w in text_words:
        run, first = (run + 1, first) if w.lower() == last else (1, w)
        last = w.lower()
        if run == REPEAT_RUN:
            found.setdefault(first, None)
    return list(found)


def nonword_rate(text: str, lang: Lang = "en", own_text: str = "") -> float:
    """The share of words that are non-words (0 for an empty text)."""
    found = words(text, lang)
    return len(nonwords(text, lang, own_text)) / len(found) if found else 0.0


def fluency(logprobs: Sequence[float] | None) -> float | None:
    """The geometric mean probability of the model's tokens (0–1), or None when the server gave none."""
    if not logprobs:
        return None
    return math.exp(sum(logprobs) / len(logprobs))


def offline_score(fluency_: float | None, found: Sequence[QualityWarning], n_words: int) -> float:
    """0–10 without a judge: 10·√fluency (5 when unknown; the square root spreads a small model's typical
    0.1–0.6 over the scale), minus 20 points per share of bad words, 2 for a dangling ending and 2 for a loop
    (a repeating model is confident, so its fluency alone would reward it)."""
    base = 5.0 if fluency_ is None else 10.0 * math.sqrt(fluency_)
    bad = sum(1 for w in found if w.kind in ("nonword", "glued"))
    penalty = 20.0 * bad / max(n_words, 1)
    penalty += sum(2.0 for kind in ("dangling", "repeat") if any(w.kind == kind for w in found))
    return round(max(0.0, min(10.0, base - penalty)), 2)

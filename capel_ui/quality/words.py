"""The words of a text as the checks see them, and the checks of single words: a word wordfreq has never seen
(zipf frequency 0) is a non-word unless the writer used it in their own instruction; one made of two real words
("traditionaldough", "positiveMindset") is glued; a text ending on "of", "the", "and" ends dangling."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..lexicon import DANGLING, ZH_DANGLING, looks_glued, zipf
from ..vocab import Lang

# A word as the checks see it: letters, digits, inner ' ’ or - (any script); Han characters one at a time.
HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
EN_WORD = re.compile(rf"[^\W_{HAN}]+(?:['’\-][^\W_{HAN}]+)*")  # runs joined by single marks: one pass
HAN_CHAR = re.compile(f"[{HAN}]")
_CONTENT = re.compile(r"[A-Za-z][A-Za-z'-]{3,}|\d[\d:.,]*")
_STOP_WORDS = """
a an the and or but of to in on at by for from with as is are was were be been it its this that these those
i you we they he she his her our your their my me us them not no so if then than too very can will just also
all any some more most such one
"""
STOP = frozenset(_STOP_WORDS.split()) | DANGLING
"""The small words of English: a phrase of only these is English, not a loop; prose always has some."""


def content_words(text: str) -> set[str]:
    """The words of `text` that carry its point (four letters or more, or a number; no dangling "with"), lower case."""
    return {w.lower().rstrip(".,:") for w in _CONTENT.findall(text)} - DANGLING


def on_point(texts: Sequence[str], instruction: str) -> list[bool]:
    """For each of `texts` (variants of one request), whether it keeps at least half as many of the instruction's
    content words as the one that keeps most: "I'm here to help with whatever you need." is not on the point of a
    dental reminder that "Your appointment is scheduled for tomorrow at 3:30 pm." keeps. All True where no text
    keeps any (nothing to tell them apart by)."""
    point = content_words(instruction)
    kept = [len(point & content_words(t)) for t in texts]
    most = max(kept, default=0)
    return [2 * k >= most for k in kept]


def words(text: str, lang: Lang = "en") -> list[str]:
    """The words the checks look at: English-like words, and in Chinese also each Han character."""
    found = EN_WORD.findall(text)
    if lang == "zh":
        found = [*HAN_CHAR.findall(text), *found]
    return found


def own_words(text: str) -> set[str]:
    """The writer's own words (of their instruction), lower case: never flagged in the text."""
    return {w.lower() for w in EN_WORD.findall(text)}


def norm(found: Sequence[str]) -> list[str]:
    """Words as compared with each other: lower case, curly apostrophes straight."""
    return [w.lower().replace("’", "'") for w in found]


def is_word(word: str, lang: Lang = "en", own: Iterable[str] = ()) -> bool:
    """Known to wordfreq (or the writer's own word). Possessives count as their word ("Whaler's")."""
    base = re.sub(r"['’]s$", "", word)
    if word.lower() in own or base.lower() in own:
        return True
    if "-" in base:  # a hyphenated compound is fine when each part is a word
        return all(is_word(p, lang, own) for p in base.split("-") if p)
    return zipf(base, lang if HAN_CHAR.search(base) else "en") > 0


def is_glued(word: str, lang: Lang = "en") -> bool:
    """camelCase, or two common words run together ("thesigns", "ofthe"): see `lexicon.looks_glued`. A word wordfreq
    knows is glued only when one of its halves is a small word ("ofthe", "alot"): "reworked", "Haircare" and
    "woodfired" are compounds a writer uses (re + worked, hair + care), not typos."""
    base = re.sub(r"['’]s$", "", word)
    if HAN_CHAR.search(base) or not looks_glued(base):
        return False
    if re.search(r"[a-z][A-Z]", base) or zipf(base, "en") <= 0:
        return True
    low = base.lower()
    return any(
        (low[:i] in STOP and zipf(low[i:], "en") >= 3.0) or (low[i:] in STOP and zipf(low[:i], "en") >= 3.0)
        for i in range(1, len(low))
    )


def word_kind(word: str, lang: Lang, own: set[str]) -> str | None:
    """glued, nonword, or None for a good word (or one of the writer's own, `own` in lower case)."""
    if word.lower() in own:
        return None
    if is_glued(word, lang):
        return "glued"
    return None if is_word(word, lang, own) else "nonword"


def glued(text: str, lang: Lang = "en", own_text: str = "") -> list[str]:
    """Words of `text` that look glued (known to wordfreq or not), leaving out the writer's own words."""
    own = own_words(own_text)
    found = words(text, lang)
    bad = {w for w in dict.fromkeys(found) if w.lower() not in own and is_glued(w, lang)}
    return [w for w in found if w in bad]


def nonwords(text: str, lang: Lang = "en", own_text: str = "") -> list[str]:
    """Words of `text` wordfreq does not know, leaving out words the writer used in `own_text`."""
    own = own_words(own_text)
    found = words(text, lang)
    bad = {w for w in dict.fromkeys(found) if not is_word(w, lang, own)}
    return [w for w in found if w in bad]


def nonword_rate(text: str, lang: Lang = "en", own_text: str = "") -> float:
    """The share of words that are non-words (0 for an empty text)."""
    found = words(text, lang)
    return len(nonwords(text, lang, own_text)) / len(found) if found else 0.0


def dangling_end(text: str, lang: Lang = "en") -> str | None:
    """The last word when a sentence cannot end on it ("of", "the", "的"), or a lone letter after such a word (a word
    cut at a limit: "…: The B."; "Plan B." stands), else None."""
    if lang == "zh":
        han = HAN_CHAR.findall(text)
        if han and han[-1] in ZH_DANGLING and not EN_WORD.search(text[text.rfind(han[-1]) :]):
            return han[-1]
    found = EN_WORD.findall(text)
    if found and found[-1].lower() in DANGLING:
        return found[-1]
    cut = len(found) >= 2 and len(found[-1]) == 1 and found[-1].isalpha() and found[-1].lower() not in ("a", "i")
    return found[-1] if cut and found[-2].lower() in DANGLING else None

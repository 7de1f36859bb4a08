"""Quality checks of a finished text, offline and pure: non-words, glued words, loops, number lists, a dangling
ending, fluency, and the score that ranks variants, explained in a writer's words.

A guaranteed count is worthless if the words are mangled, so every run is checked: a word wordfreq has never
seen (zipf frequency 0) is a non-word unless the writer used it in their own instruction; a non-word made of
two real words ("traditionaldough", "positiveMindset") is glued; a text ending on "of", "the", "and" ends
dangling. A small model under a length grammar also falls into loops ("enforcement de lame, enforcement de
lame, …") and number lists ("1. Stone: 1. Ware: 2. Dish: … 41. 42."): both are confident, so fluency (the
geometric mean probability of the model's own tokens, from the server's logprobs) alone would rank them first.
`offline_score` folds everything, with the model's own view of the ending (ending.py), into 0–10 so variants
can be ranked when no judge model is configured; `junk` marks what a writer would never keep.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .ending import NATURAL, ending_words, ends_naturally
from .lexicon import DANGLING, ZH_DANGLING, looks_glued, zipf
from .prompts import rewrite_source
from .vocab import Lang

# A word as the checks see it: letters, digits, inner ' ’ or - (any script); Han characters one at a time.
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_EN_WORD = re.compile(rf"[^\W_{_HAN}]+(?:['’\-][^\W_{_HAN}]+)*")  # runs joined by single marks: one pass
_HAN_CHAR = re.compile(f"[{_HAN}]")


_CONTENT = re.compile(r"[A-Za-z][A-Za-z'-]{3,}|\d[\d:.,]*")


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


@dataclass(frozen=True)
class QualityWarning:
    """One thing a writer should look at before publishing: `kind` is nonword, glued, repeat (one word over and
    over), loop (a phrase or a sentence over and over), numbers (a number list), meta (it talks about itself), echo
    (it repeats the instruction), salad (words with no sentence in them), doubled (one word joined to itself:
    "dedicated and dedicated"), blank (a template's blank left to fill in: "[Guest's Name]") or dangling; `word` is what
    it is about."""

    kind: str
    word: str

    @property
    def message(self) -> str:
        if self.kind == "glued":
            return f"“{self.word}” looks like two words glued together"
        if self.kind == "dangling":
            return f"the text ends on “{self.word}”, mid-sentence"
        if self.kind == "repeat":
            return f"“{self.word}” repeats over and over: the text is going round in circles"
        if self.kind == "loop":
            return f"“{self.word}” comes back again and again: the text is going round in circles"
        if self.kind == "numbers":
            return f"the text is mostly a list of numbers ({self.word}), not prose"
        if self.kind == "meta":
            return f"the text talks about itself (“{self.word}”): it is not the text alone"
        if self.kind == "echo":
            return f"the text repeats the request (“{self.word}”): it is the instruction, not an answer"
        if self.kind == "doubled":
            return f"“{self.word}” says the same word twice"
        if self.kind == "salad":
            return f"“{self.word}” is a string of words, not sentences"
        if self.kind == "blank":
            return f"“{self.word}” is a blank to fill in: the count changes when you fill it"
        if self.kind == "language":
            return self.word  # the provider's own sentence (ProviderSpec.language_note)
        return f"“{self.word}” is not a known word"


REPEAT_RUN = 3
"""A word this many times in a row is a loop, not style."""
JUNK_KINDS = frozenset({"repeat", "loop", "numbers", "meta", "echo", "salad", "language"})
"""What no writer keeps: a text going round in circles, a list of numbers instead of prose, one that introduces
itself ("Here's a possible blurb: …", and its count includes the introduction) or repeats the instruction, or text
in a language the model does not write."""


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
    """camelCase, or two common words run together ("thesigns", "ofthe"): see `lexicon.looks_glued`. A word wordfreq
    knows is glued only when one of its halves is a small word ("ofthe", "alot"): "reworked", "Haircare" and
    "woodfired" are compounds a writer uses (re + worked, hair + care), not typos."""
    base = re.sub(r"['’]s$", "", word)
    if _HAN_CHAR.search(base) or not looks_glued(base):
        return False
    if re.search(r"[a-z][A-Z]", base) or _zipf(base, "en") <= 0:
        return True
    low = base.lower()
    return any(
        (low[:i] in _STOP and _zipf(low[i:], "en") >= 3.0) or (low[i:] in _STOP and _zipf(low[:i], "en") >= 3.0)
        for i in range(1, len(low))
    )


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
    """The last word when a sentence cannot end on it ("of", "the", "的"), or a lone letter after such a word (a word
    cut at a limit: "…: The B."; "Plan B." stands), else None."""
    if lang == "zh":
        han = _HAN_CHAR.findall(text)
        if han and han[-1] in ZH_DANGLING and not _EN_WORD.search(text[text.rfind(han[-1]) :]):
            return han[-1]
    found = _EN_WORD.findall(text)
    if found and found[-1].lower() in DANGLING:
        return found[-1]
    cut = len(found) >= 2 and len(found[-1]) == 1 and found[-1].isalpha() and found[-1].lower() not in ("a", "i")
    return found[-1] if cut and found[-2].lower() in DANGLING else None


def warnings(text: str, lang: Lang = "en", own_text: str = "") -> list[QualityWarning]:
    """Every non-word (glued ones said so), loop, number list and a dangling ending, in reading order. Each
    distinct word is looked at once, so a long text costs a pass over its words."""
    own = _own(own_text)
    found = words(text, lang)
    kinds = ((_kind(w, lang, own), w) for w in dict.fromkeys(found))
    out = [QualityWarning(kind, w) for kind, w in kinds if kind is not None]
    out += [QualityWarning("repeat", w) for w in _repeats(found)]
    out += [QualityWarning("loop", phrase) for phrase in loops(text, lang, own_text)]
    out += [QualityWarning("loop", sentence) for sentence in repeated_sentences(text)]
    if not junk(out):  # "Same Same" in a loop is the loop; "thesigns and thesigns" is the glued word
        named = {w.word.lower() for w in out}
        pairs = doubled(text, own_text)
        out += [QualityWarning("doubled", p) for p in pairs if p.split()[0].lower() not in named]
    if lang == "en" and word_salad(found):
        out.append(QualityWarning("salad", " ".join(found[:6]) + (" …" if len(found) > 6 else "")))
    listed = number_list(text, own_text)
    if listed:
        out.append(QualityWarning("numbers", listed))
    opener = talks_about_itself(text, own_text)
    if opener:
        out.insert(0, QualityWarning("meta", opener))
    echo = echoes_request(text, own_text)
    if echo:
        out.insert(0, QualityWarning("echo", echo))
    out += [QualityWarning("blank", b) for b in blanks(text, own_text)]
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


# ----- loops: a phrase that comes back again and again ------------------------------------------------------------

LOOP_SPAN = 8
"""The longest phrase (in words, or Han characters) looked for as a loop."""
LOOP_WINDOW = 5_000
"""Words (or Han characters) a loop is looked for in, from the start: a loop shows long before that, and a reply of
megabytes (a runaway stream, stopped and saved) is checked in bounded time."""
_STOP_WORDS = """
a an the and or but of to in on at by for from with as is are was were be been it its this that these those
i you we they he she his her our your their my me us them not no so if then than too very can will just also
all any some more most such one
"""
_STOP = frozenset(_STOP_WORDS.split()) | DANGLING


def _norm(found: Sequence[str]) -> list[str]:
    return [w.lower().replace("’", "'") for w in found]


def loops(text: str, lang: Lang = "en", own_text: str = "") -> list[str]:
    """Phrases (two or more words) the text goes round in: said back to back three times ("a b a b a b"), or
    twice when three words or longer ("enforcement de lame, enforcement de lame"), or the same phrase of three
    or more words (four Han characters) three times anywhere, unless its only words besides small ones are the
    instruction's (`own_text`): 80 words on "The Whaler's Rest" name it three times. A single word over and over
    is `repeats`; one word that is a fifth of a text of ten words or more ("arugula, arugula with arugula, and
    arugula") is a loop too. Case and punctuation are ignored; the phrase is returned as first written."""
    found = words(text, lang)[:LOOP_WINDOW]
    low = _norm(found)
    hits: dict[str, None] = {}
    spans = [*_back_to_back(low), *_recurring(low, lang, _own(own_text)), *_dominant(low, lang)]
    for start, n in _merge(spans, low):
        hits.setdefault(_phrase(found[start : start + n], lang), None)
    return list(hits)


def _phrase(items: Sequence[str], lang: Lang) -> str:
    return ("" if lang == "zh" and all(_HAN_CHAR.fullmatch(w) for w in items) else " ").join(items)


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
    """(first start, length) of phrases of 3+ words (4+ Han characters) that occur three times, not all small
    words ("one of the" is English, not a loop) or the instruction's own (`own`, lower case)."""
    seen: dict[tuple[str, ...], list[int]] = {}
    shortest = 4 if lang == "zh" else 3
    usual = _STOP | own
    for n in range(shortest, LOOP_SPAN + 1):
        for i in range(len(low) - n + 1):
            gram = tuple(low[i : i + n])
            if any(w not in usual for w in gram):
                seen.setdefault(gram, []).append(i)
    out = [(starts[0], len(gram)) for gram, starts in seen.items() if _apart(starts, len(gram)) >= 3]
    return _longest(out)


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
        if len(w) >= 4 and w not in _STOP and not _HAN_CHAR.search(w) and not w.isdigit():
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


SENTENCE_TWICE = 4
"""Words from which a sentence written twice is a loop ("Thank you." twice is not)."""
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")


def repeated_sentences(text: str) -> list[str]:
    """Sentences of `SENTENCE_TWICE` words or more written twice or more (case and punctuation ignored), as first
    written: a loop too long for a phrase ("The Whaler's Rest is a premium pub. … The Whaler's Rest is a premium
    pub.")."""
    seen: dict[tuple[str, ...], str] = {}
    out: dict[str, None] = {}
    for m in _SENTENCE.finditer(text[: LOOP_WINDOW * 8]):
        found = _EN_WORD.findall(m.group())
        if len(found) < SENTENCE_TWICE:
            continue
        key = tuple(_norm(found))
        if key in seen:
            out.setdefault(seen[key], None)
        else:
            seen[key] = m.group().strip()
    return [_short(s) for s in out]


def _short(phrase: str, most: int = 60) -> str:
    return phrase if len(phrase) <= most else phrase[: most - 1].rstrip() + "…"


_SAID_TWICE = frozenset(
    [
        "had",
        "has",
        "does",
        "did",
        "very",
        "really",
        "much",
        "many",
        "well",
        "round",
        "over",
        "again",
        "more",
        "long",
        "bye",
        "knock",
        "chop",
        "night",
        "there",
        "here",
        "away",
        "soon",
        "tick",
        "tock",
        "blah",
    ]
)
"""Words English says twice on purpose ("had had", "very very", "round and round", "over and over")."""
_DOUBLED = re.compile(r"\b([^\W\d_]{3,})(?:,?\s+(?:and|or|&)\s+|\s+)\1\b", re.IGNORECASE)


def doubled(text: str, own_text: str = "") -> list[str]:
    """A word joined to itself ("a dedicated and dedicated", "fresh fresh"), unless the writer wrote it so; small
    words ("that that", "had had") and a word over and over (`repeats`) are left out."""
    own = own_text.lower()
    out: dict[str, None] = {}
    for m in _DOUBLED.finditer(text):
        word = m.group(1).lower()
        if word in _STOP or word in _SAID_TWICE or m.group().lower() in own:
            continue
        after = text[m.end() :].lstrip(" ,")
        if after.lower().startswith(word) and not after[len(word) : len(word) + 1].isalpha():
            continue  # three in a row: `repeats`
        out.setdefault(m.group(), None)
    return list(out)


SALAD_WORDS = 8
"""Words from which a text with no small word at all ("a", "the", "and", "of", "is"…) is word salad: prose of eight
words or more always has one; "New Same What Same Same Now Best Fresh Deal" has none."""


def word_salad(found: Sequence[str]) -> bool:
    """Words strung together with no sentence in them (`SALAD_WORDS` or more, not one small word)."""
    low = _norm(found)
    return len(low) >= SALAD_WORDS and not any(w in _STOP for w in low)


# ----- number lists ------------------------------------------------------------------------------------------

_ENUMERATOR = re.compile(r"(?<![\w.,])(\d{1,3})[.):](?=\s|$)")
_SECTION = re.compile(r"(?<![\w.,])(\d{1,3}(?:\.\d{1,3}){2,})\.?(?=[\s,;]|$)")  # "2.1.1", "1.2.3": a section number
_NUMBER = re.compile(r"^\d[\d.,:]*$")
_LIST_ASKED = re.compile(r"\b(lists?|steps?|numbered|rank|top \d+)\b|清单|列表|步骤", re.IGNORECASE)
NUMBER_LIST_MIN = 3
"""Enumerators ("1.", "2)", "41:") from which a text is a number list, unless the writer asked for a list."""


def number_list(text: str, own_text: str = "") -> str | None:
    """The enumerators of a text that is a number list rather than prose (`1., 2., 41.`), or None: three or more
    enumerators or section numbers ("1.2.1 1.2.2"), or numbers making up a third of a text of six words or more. A
    list the instruction asked for ("list five steps") is not flagged."""
    if _LIST_ASKED.search(own_text):
        return None
    marks = [f"{m}." for m in _ENUMERATOR.findall(text)] + _SECTION.findall(text)
    tokens = text.split()
    numbers = [t for t in tokens if _NUMBER.match(t)]
    if len(marks) >= NUMBER_LIST_MIN:
        shown = list(dict.fromkeys(marks))
    elif len(tokens) >= 6 and len(numbers) >= 3 and len(numbers) >= len(tokens) / 3:
        shown = list(dict.fromkeys(numbers))
    else:
        return None
    return ", ".join(shown[:3]) + (", …" if len(shown) > 3 else "")


# ----- a text that talks about itself ------------------------------------------------------------------------

_ABOUT_ITSELF = re.compile(
    r"^\W{0,3}(?:"
    # "Sure! …", "Certainly, here is …", "As an AI …": a chat reply, not the text
    r"(?:sure|certainly|of course|absolutely|okay)\s*[!,.:]|as an ai\b[^\n]{0,40}?[,.:]"
    # "Here's a possible X post:", "Here is a 40-word blurb for …:", "Below is a short description:"
    r"|(?:here(?:'s|’s| is| are)|below is)\s+(?:a|an|the|my|your|some|one|two|three)\b[^\n:.!?]{0,80}?"
    r"\b(?:possible|sample|suggested|draft|version|post|tweet|blurb|headline|text|description|sentence|paragraph"
    r"|summary|example|option|answer|response|rewrite|caption|tagline|slogan|ad|copy|message|words|abstract|bio"
    r"|note|invitation|intro|introduction|announcement|email|letter|review)\b[^\n:.!?]{0,60}?"
    r"(?::|\.(?=\s|$))"
    # "Title: …", "X Post: …", "Instagram caption: …", "40 words: …": a label before the text
    r"|(?:[\w'’-]+\s+){0,2}?(?:title|headline|blurb|post|tweet|caption|answer|response|output|text|abstract"
    r"|description|tagline|slogan)\s*:|\d+[- ]words?\s*:"
    # "The product description is: …", "…description for a hand-made mug is: …", "Your new headline could be: …"
    r"|(?:the|your|my|a|an|this|our)\s+(?:[\w'’-]+\s+){0,3}?(?:title|headline|blurb|post|tweet|caption|text"
    r"|description|abstract|summary|tagline|slogan|bio|message|version|answer)"
    r"(?:\s+(?:for|about)\s+[^\n:.!?]{1,60}?)?\s+(?:is|would be|could be|reads)\s*:"
    # Chinese: "好的！", "以下是一段微博文案：", "标题："
    r"|好的[，,！!。]|(?:以下是|下面是|这是)[^。！？\n]{0,30}?(?:文案|简介|介绍|微博|帖子|短文|文字|版本|内容|示例|句子)"
    r"[^。！？\n]{0,10}?[:：]|(?:标题|文案|答案)[:：]"
    r")",
    re.IGNORECASE,
)
_LENGTH_MENTION = re.compile(
    r"\b(?:(?:in|with) (?:just |only |exactly )?)?\d+ (?:words?|characters?)\b\s*:?|\d+\s*个?字\s*[:：]",
    re.IGNORECASE,
)
"""The text naming its own length ("12 words:", "In just 80 words", "280 characters"): the prompt's, not the
writer's."""
ABOUT_ITSELF_SHOWN = 60
"""Characters of the opening quoted in the warning."""


_CHAT = re.compile(
    r"\b(?:(?:please|could you(?: please)?|can you) provide (?:me with |us with )?(?:the |more |some |any |your )?"
    r"(?:details|information|specifics|context|topic|text you)"
    r"|I(?:'d| would) be happy to|I hope this helps|let me know if|as an? (?:[\w-]+ ){0,3}?AI"
    # "I'm not sure what to do here, …", "Please add your own sentence, in your own words." (walked, SMS and ads)
    r"|I(?:'m| am) not sure what (?:to do|you (?:mean|want))|(?:add|insert|write) your own (?:sentence|text|words)"
    r"|in your own words)\b[^.!?\n]{0,40}|(?:please )?(?:respond|answer) with\s*:",
    re.IGNORECASE,
)
"""A chat reply inside the text: asking the writer for details ("X Post: Please provide…"), offering help, unsure
of the task, or handing it back ("Please respond with: …", "add your own sentence")."""
_INTERJECTION = re.compile(
    r"^(?:awesome|great|perfect|alright|okay|ok|sure|certainly|absolutely|of course)[!,.]\s+(?=\S)", re.I
)
"""A chat reply's first word, before the opening that introduces the text: "Awesome! Here's a revised version…"."""
_PLATFORM_FORMS = "x post|tweet|headline|blurb|caption|description|sms|text message|ad"
_NAMES_ITS_FORM = re.compile(
    rf"\b(?:it|this)(?:'s|’s| is) (?:just |only |simply )?(?:an? |my |the |your )(?:[\w-]+ ){{0,3}}?"
    rf"(?:post|{_PLATFORM_FORMS})\s*(?=[.!?]|$)"
    rf"|^\W{{0,3}}this is (?:an? |my |the |your )(?:[\w-]+ ){{0,3}}?(?:{_PLATFORM_FORMS}) (?:about|for)\b",
    re.IGNORECASE,
)
"""The text naming what it is, as a sentence of its own ("…, and it is an X post.", "It is just a text message.")
or as its opening ("This is an X post about a new café…"; not "This is a post for everyone who…")."""
_MAKERS = re.compile(r"\b(?:hugging ?face|smollm\w*|(?:ai|large) language model)\b", re.IGNORECASE)
"""The embedded model's own maker or kind, named in a text the instruction did not name it in: "Dear Hugging Face, I
hope this message finds you well…" for a post about a reading club (SmolLM2 was trained to say who made it). Not
"OpenAI" or "ChatGPT": a post about AI tools may well name them."""
_VERB = re.compile(r"[A-Za-z]+")


_ASKED_FORM = re.compile(
    r"^\W{0,3}(?:write|compose|draft|create)\s+(?:an?|the|one)\s+(?:[\w-]+\s+){0,3}?(abstract|post|headline|blurb"
    r"|description|caption|tweet|bio|summary|email|letter|invitation|review)\b",
    re.IGNORECASE,
)


def _opens_on_the_asked_form(text: str, own_text: str) -> str | None:
    """ "The abstract for a study on … includes an assertion about …" for "Write an abstract for a study…": a text
    that opens on the very thing it was asked to be, as its subject, describes it instead of being it."""
    asked = _ASKED_FORM.match(own_text)
    if asked is None:
        return None
    form = re.escape(asked.group(1))
    said = re.match(
        rf"^\W{{0,3}}(?:the|this|my|our|your)\s+(?:[\w-]+\s+){{0,2}}?{form}\s+(?:for|of|on|about|is about)\b"
        rf"[^.!?\n]{{0,30}}",
        text,
        re.IGNORECASE,
    )
    return said.group() if said else None


def _says_it_will_do_the_task(text: str, own_text: str) -> str | None:
    """ "I'll remind the customer that…" for "Remind a customer…": the model saying what it will do with the request
    (its first word, the verb of an instruction) instead of doing it."""
    verb = _VERB.match(own_text.lstrip())
    if verb is None:
        return None
    said = re.search(rf"\bI(?:'ll|’ll| will| can| am going to) {verb.group()}\b[^.!?\n]{{0,60}}", text, re.IGNORECASE)
    return said.group() if said else None


def talks_about_itself(text: str, own_text: str = "") -> str | None:
    """What a text says about itself instead of being the text, or None: an opening that introduces it ("Here's a
    possible X post:", "Sure! Here is …", "Headline: …"), or its own length named anywhere ("12 words:", "In just
    80 words,") unless the writer's instruction (`own_text`) names it so, what it is ("…and it is an X post."), or
    what the model will do with the request ("I'll remind the customer…"). A writer's text may well start "Here is
    where…" or "Absolutely fresh…": only an opening that names what it is (a post, a blurb, a version…) and ends on a
    colon or full stop is flagged, or a chat reply's "Sure!"/"Certainly,"."""
    opening = text.lstrip()
    found = _ABOUT_ITSELF.match(opening) or _ABOUT_ITSELF.match(_INTERJECTION.sub("", opening, count=1))
    chat = _CHAT.search(text) or _NAMES_ITS_FORM.search(text) or _MAKERS.search(text)
    if found:
        shown = found.group().strip()
    elif chat and chat.group().lower() not in own_text.lower():
        shown = chat.group().strip()
    elif task := _says_it_will_do_the_task(text, own_text) or _opens_on_the_asked_form(text, own_text):
        shown = task.strip()
    else:
        own = own_text.lower()
        mention = next((m for m in _LENGTH_MENTION.finditer(text) if m.group().strip(" :：").lower() not in own), None)
        if mention is None:
            return None
        shown = mention.group().strip()
    return _shown(_whole_words(shown, text))


ECHO_RUN = 5
"""Words of the instruction's opening, in order, that make a text an echo of the request ("Remind a patient of a
dental appointment…" given back as the reminder). Its facts ("…on Tuesday at 3:30 pm with Dr. Patel") are what the
text should hold: only the request itself, from its first word, is an echo."""
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


def echoes_request(text: str, own_text: str) -> str | None:
    """The opening of the instruction a text gives back word for word (`ECHO_RUN` words from its first, or the
    whole of a shorter text), or None; never for a rewrite, whose text is the writer's own."""
    if not own_text or rewrite_source(own_text) is not None:
        return None
    plain = lambda t: [w.strip(".:").lower() for w in _PLAIN_WORD.findall(t)]  # noqa: E731
    ask, said = plain(own_text), plain(text)
    if 2 <= len(said) < ECHO_RUN and said == ask[: len(said)] and said[0] in _ASKING:  # "Advertise a dog."
        return text.strip()
    if len(said) >= 2 and said[:2] == ask[:2] and said[0] in _ORDERING:  # "Advertise a family business in…"
        return _shown(" ".join(_PLAIN_WORD.findall(text)[:ECHO_RUN]) + " …")
    if len(ask) < ECHO_RUN:
        return None
    opening = ask[:ECHO_RUN]
    at = next((i for i in range(len(said) - ECHO_RUN + 1) if said[i : i + ECHO_RUN] == opening), None)
    if at is None:
        return None
    return _shown(" ".join(_PLAIN_WORD.findall(text)[at : at + ECHO_RUN]) + " …")


def _shown(phrase: str) -> str:
    """`phrase` as a warning quotes it: at most `ABOUT_ITSELF_SHOWN` characters, cut after a whole word."""
    if len(phrase) <= ABOUT_ITSELF_SHOWN:
        return phrase
    cut = phrase[: ABOUT_ITSELF_SHOWN - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut and phrase[len(cut)].isalnum() else cut).rstrip(" ,;:") + "…"


def _whole_words(found: str, text: str) -> str:
    """`found` (a match that took at most so many characters of `text`) without a word it cut in two, and "…" for
    what follows: "I'll remind the customer that the service is…", not "…is curren"."""
    at = text.find(found)
    end = at + len(found)
    if at < 0 or end >= len(text) or not (found[-1:].isalnum() and text[end].isalnum()) or " " not in found:
        return found
    return found.rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


_BLANK = re.compile(r"\[[^\[\]\n]{1,40}\](?!\()|\{[^{}\n]{1,40}\}|【[^【】\n]{1,20}】")
"""A template's blank: "[Guest's Name]", "{date}", "【客户姓名】" (not a Markdown link's "[text](url)")."""
_LETTER = re.compile(rf"[^\W\d_]|[{_HAN}]")


def blanks(text: str, own_text: str = "") -> list[str]:
    """The blanks a text leaves for the writer to fill in ("Dear [Guest's Name],"), each once, in reading order:
    a text a writer cannot publish as it stands, and whose count changes once the blank is filled. Not a bracket
    the writer's own instruction holds, nor one without a letter ("[1]", "[…]")."""
    found = (m.group() for m in _BLANK.finditer(text))
    return list(dict.fromkeys(b for b in found if _LETTER.search(b) and b not in own_text))


def junk(found: Sequence[QualityWarning]) -> bool:
    """A text no writer would keep: it goes round in circles or is a number list (`JUNK_KINDS`)."""
    return any(w.kind in JUNK_KINDS for w in found)


ALL_JUNK = (
    "Every variant goes round in circles, is a list of numbers, talks about itself, repeats the request, is a string "
    "of words or is not real text in this language: none is worth keeping. Run again, or change the instruction or "
    "the model."
)
"""What the Write page and `generate --variants K` say when every variant is junk."""
NOT_TO_PUBLISH = "not a text to publish"
"""What a text no writer would keep (`junk`) is called, in its score line and beside its verdict badge."""


def ending_said(end_probability: float | None, found: Sequence[QualityWarning]) -> str | None:
    """The ending as every surface says it (badge, History, exports, JSON, batch output): "not a text to publish" for
    a text no writer would keep (`junk`: "ends naturally" beside a loop reads as praise), else `ending_words`."""
    return NOT_TO_PUBLISH if junk(found) else ending_words(end_probability)


ONE_JUNK = (
    "This text is not worth keeping (see the warnings): the count is right, the text is not. Run again, or change "
    "the instruction or the model."
)
"""What the Write page and `generate` say over a single text that is junk, before Copy and the downloads."""


CIRCLE_KINDS = frozenset({"repeat", "loop"})
"""The ways a text goes round in circles: one word over and over, or a phrase."""


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


def nonword_rate(text: str, lang: Lang = "en", own_text: str = "") -> float:
    """The share of words that are non-words (0 for an empty text)."""
    found = words(text, lang)
    return len(nonwords(text, lang, own_text)) / len(found) if found else 0.0


def fluency(logprobs: Sequence[float] | None) -> float | None:
    """The geometric mean probability of the model's tokens (0–1), or None when the server gave none."""
    if not logprobs:
        return None
    return math.exp(sum(logprobs) / len(logprobs))


PENALTY = {
    "dangling": 2.0,
    "loop": 4.0,
    "numbers": 4.0,
    "meta": 3.0,
    "echo": 3.0,
    "salad": 4.0,
    "doubled": 1.5,
    "blank": 3.0,
}
"""Points off for each kind of problem, once per kind (a loop counts once whether a word or a phrase repeats)."""
CUT_OFF = 3.0
"""Points off for an ending the model would not have stopped at (P(end) 0), less as P(end) nears `NATURAL`."""


def _kinds(found: Sequence[QualityWarning]) -> set[str]:
    return {"loop" if w.kind == "repeat" else w.kind for w in found}


def ending_penalty(end_probability: float | None) -> float:
    """`CUT_OFF` for an ending the model would never stop at, nothing from `NATURAL` up, nothing when unknown."""
    if end_probability is None:
        return 0.0
    return CUT_OFF * (1.0 - min(end_probability / NATURAL, 1.0))


def offline_score(
    fluency_: float | None, found: Sequence[QualityWarning], n_words: int, end_probability: float | None = None
) -> float:
    """0–10 without a judge: 10·√fluency (5 when unknown; the square root spreads a small model's typical
    0.1–0.6 over the scale), minus 20 points per share of bad words, 2 for a dangling ending, 4 for a loop and 4
    for a number list (a repeating or counting model is confident, so its fluency alone would reward it), and up
    to 3 for an ending the model would not have stopped at (`ending_penalty`), and 3 for a text that opens by
    talking about itself, and 3 for a blank left to fill in ("[Guest's Name]")."""
    base = 5.0 if fluency_ is None else 10.0 * math.sqrt(fluency_)
    bad = sum(1 for w in found if w.kind in ("nonword", "glued"))
    penalty = 20.0 * bad / max(n_words, 1)
    penalty += sum(PENALTY.get(kind, 0.0) for kind in _kinds(found))
    penalty += ending_penalty(end_probability)
    return round(max(0.0, min(10.0, base - penalty)), 2)


def flow_words(fluency_: float | None) -> str | None:
    """Fluency as a writer would say it (a small model's own tokens: 0.3 and up is smooth for it)."""
    if fluency_ is None:
        return None
    if fluency_ >= 0.3:
        return "reads smoothly"
    return "reads stiffly in places" if fluency_ >= 0.1 else "reads awkwardly"


def explain(fluency_: float | None, found: Sequence[QualityWarning], end_probability: float | None = None) -> str:
    """What the score says, in a writer's words: "reads smoothly, ends naturally" or "2 unknown words, last
    sentence cut off". Problems first, then how it reads. A text no writer keeps (`junk`: a loop, a number list, a
    text about itself, word salad) gets no praise at all: "goes round in circles: not a text to publish"."""
    kinds = _kinds(found)
    parts = []
    if "language" in kinds:
        parts.append("not real text in this language")
    if "loop" in kinds:
        parts.append("goes round in circles")
    if "numbers" in kinds:
        parts.append("a list of numbers, not prose")
    if "meta" in kinds:
        parts.append("talks about itself")
    if "echo" in kinds:
        parts.append("repeats the request")
    if "salad" in kinds:
        parts.append("a string of words, not sentences")
    if "doubled" in kinds:
        parts.append("a word said twice")
    if "blank" in kinds:
        parts.append("a blank to fill in")
    bad = len({w.word for w in found if w.kind in ("nonword", "glued")})
    if bad:
        parts.append(f"{bad} unknown or glued word{'s' if bad > 1 else ''}")
    if "dangling" in kinds:
        parts.append("ends mid-sentence")
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

"""Texts that are not prose as they stand: a list of numbers (`number_list`), a numbered section's heading
(`section_heading`) and where a streaming text turned into either (`list_start`), words strung together with no
sentence in them (`word_salad`), a template with a blank left to fill in (`blanks`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .words import HAN, STOP, norm, own_words

_ENUMERATOR = re.compile(r"(?<![\w.,])(\d{1,3})[.):](?=\s|$)")
_SECTION = re.compile(r"(?<![\w.,])(\d{1,3}(?:\.\d{1,3}){2,})\.?(?=[\s,;]|$)")  # "2.1.1", "1.2.3": a section number
_NUMBER = re.compile(r"^\d[\d.,:]*$")
_LIST_ASKED = re.compile(r"\b(lists?|steps?|numbered|rank|top \d+)\b|清单|列表|步骤", re.IGNORECASE)
_INNER = re.compile(r"\d[.,:]\d")
"""A number with a separator inside it: "1.11,234", "18.40", "3:30"."""
NUMBER_LIST_MIN = 3
"""Enumerators ("1.", "2)", "41:") from which a text is a number list, unless the writer asked for a list."""
NUMBER_RUN = 4
"""Numbers one after another from which a text holds a list of them (three or more with a separator inside: a
plain count such as "2, 3, 5, 7 and 11" is prose)."""


def number_list(text: str, own_text: str = "") -> str | None:
    """The enumerators of a text that is a number list rather than prose (`1., 2., 41.`), or None: three or more
    enumerators or section numbers ("1.2.1 1.2.2"), numbers making up a third of a text of six words or more, or a
    run of them one after another (`NUMBER_RUN`: "…to your neighbourhood picnic: 1.11,234, 18.40,10, 250,118,12,
    18.21,15."). A list the instruction asked for ("list five steps") is not flagged."""
    if _LIST_ASKED.search(own_text):
        return None
    found = [(m.start(), f"{m[1]}.") for m in _ENUMERATOR.finditer(text)] + [
        (m.start(), m[1]) for m in _SECTION.finditer(text)
    ]
    marks = [mark for _, mark in sorted(found)]  # in the order written
    tokens = text.split()
    numbers = [t for t in tokens if _NUMBER.match(t)]
    if len(marks) >= NUMBER_LIST_MIN:
        shown = list(dict.fromkeys(marks))
    elif len(tokens) >= 6 and len(numbers) >= 3 and len(numbers) >= len(tokens) / 3:
        shown = list(dict.fromkeys(n.rstrip(".,:") for n in numbers))
    elif run := _number_run(tokens):
        shown = list(dict.fromkeys(run))
    else:
        return None
    return ", ".join(shown[:3]) + (", …" if len(shown) > 3 else "")


_SECTION_NUMBER = r"\d{1,3}(?:\.\d{1,4}){2,}"
_HEADING = re.compile(rf"(?:^|(?<=[.!?:]\s))\W{{0,3}}({_SECTION_NUMBER})(?:\s+{_SECTION_NUMBER})*\.?\s+(?=[A-Z])")
"""A section number heading the text or one of its sentences, a capitalised word after it: "1.2.4 Tricks…", or after
more section numbers: "1.4.4 1.4.6 Italian pizza: …"."""
_DATE = re.compile(r"\d{1,2}\.\d{1,2}\.(?:\d{2}|(?:19|20)\d{2})")
"""A date written with dots (12.05.2024, 1.2.25): a headline may open on one."""


_OUTLINE = re.compile(r"^[^\w$£€¥]{0,3}(1\.\d{1,2})\.?\s+([A-Z][\w'’-]*)")
"""An outline's first heading opening the text: "1.1 Stay focused on goals: …"."""
_MAGNITUDE_WORDS = """
million billion trillion thousand hundred percent per times stars hours minutes seconds days weeks months years miles
metres meters kilometres kilometers km kilos kg litres liters pounds ounces degrees points
"""
_MAGNITUDES = frozenset(_MAGNITUDE_WORDS.split())
"""Words a decimal opening a headline counts ("1.5 Million Reasons to Visit"): then it heads no outline."""


def section_heading(text: str, own_text: str = "") -> str | None:
    """The section number that heads the text or one of its sentences ("1.2.4 Tricks for Staying Focused.",
    "12.1.112 Tips for Staying Motivated at Work 1.1.112 Keep a morning routine."): three parts or more, a capitalised
    word after it, not a date ("12.05.2024 Grand Opening"); or an outline's first heading opening the text ("1.1 Stay
    focused on goals: …"), not a decimal that counts ("1.5 Million Reasons…"). A 135M model asked for tips or advice
    outlines them so; one such heading is a list's first line, below the three a number list needs. Not where a
    list was asked for."""
    if _LIST_ASKED.search(own_text):
        return None
    found = (m.group(1) for m in _HEADING.finditer(text))
    heading = next((n for n in found if not _DATE.fullmatch(n)), None)
    outline = _OUTLINE.match(text)
    if heading is None and outline is not None and outline.group(2).lower() not in _MAGNITUDES:
        return outline.group(1)
    return heading


def _number_run(tokens: Sequence[str]) -> list[str]:
    """The first run of `NUMBER_RUN` or more numbers one after another, three or more of them with a separator
    inside (the grammar's numbers strung together: "1.11,234, 18.40,10, 250,118,12"); empty where there is none."""
    run: list[str] = []
    for token in [*tokens, ""]:
        if _NUMBER.match(token):
            run.append(token.rstrip(".,:"))
            continue
        if len(run) >= NUMBER_RUN and sum(bool(_INNER.search(n)) for n in run) >= NUMBER_LIST_MIN:
            return run
        run = []
    return []


LIST_WATCH = 20
"""Words a text must have before `list_start` looks at it: a few numbers early in prose ("In 2019, 2020 and 2021
sales…") are a third of six words, not of twenty."""
LIST_GAP = 3
"""The most words between two numbers of one list ("1. Rest well 2. Eat", "1.15 ounces, 18 calories")."""
_NUMBER_AT = re.compile(r"(?<!\S)\W{0,3}\d")
"""Where a token that opens with a number starts ("1.1.1", "(2)", "18.40,10")."""


def list_start(text: str, own_text: str = "") -> int | None:
    """Where a text that turned into a number list or a numbered section nobody asked for began it, None while it
    reads as prose or has fewer than `LIST_WATCH` words. Asked while a text streams (generation.py writes the rest
    again from the sentence before it): the last part of the text `number_list` or `section_heading` names, then
    back over the numbers before it that are at most `LIST_GAP` words apart ("…of 80 words. 1.1.1 2.1.1 … 15.1.1"
    -> at "1.1.1", a year sentences before it left out)."""
    if len(text.split()) < LIST_WATCH or not _listed(text, own_text):
        return None
    starts = [m.start() for m in _NUMBER_AT.finditer(text)]
    named = (i for i in reversed(range(len(starts))) if _listed(text[starts[i] :], own_text))
    i = next(named, 0)
    while i > 0 and _one_list(text[starts[i - 1] : starts[i]]):
        i -= 1
    return starts[i] if starts else 0


def _listed(text: str, own_text: str) -> bool:
    return bool(number_list(text, own_text) or section_heading(text, own_text))


_LISTY = re.compile(r"\W{0,3}\d{1,3}[.):]|\S*\d[.,:]\d")
"""A number that marks a list by itself: an enumerator ("1.", "2)") or one with a separator inside ("1.1.1")."""
SENTENCE_STOP = re.compile(r"(?<!\d)[.!?。！？](?=\s)")
"""A stop that ends a sentence before a list may begin: before a space, not an enumerator's ("1."). Where a text
written again after a list goes on from (generation.py)."""


def _one_list(between: str) -> bool:
    """Whether a number and what follows it up to the next number belong to that number's list: at most `LIST_GAP`
    words, and no sentence ends after a plain number ("…of 80 words. 1.1.1": the 80 is the sentence's)."""
    if len(between.split()) > LIST_GAP + 1:
        return False
    return bool(_LISTY.match(between.split()[0])) or not SENTENCE_STOP.search(between)


SALAD_WORDS = 8
"""Words from which a text with no small word at all ("a", "the", "and", "of", "is"…) is word salad: prose of eight
words or more always has one; "New Same What Same Same Now Best Fresh Deal" has none."""


def word_salad(found: Sequence[str]) -> bool:
    """Words strung together with no sentence in them (`SALAD_WORDS` or more, not one small word)."""
    low = norm(found)
    return len(low) >= SALAD_WORDS and not any(w in STOP for w in low)


_BLANK = re.compile(r"\[[^\[\]\n]{1,40}\](?!\()|\{[^{}\n]{1,40}\}|【[^【】\n]{1,20}】")
"""A template's blank: "[Guest's Name]", "{date}", "【客户姓名】" (not a Markdown link's "[text](url)")."""
_LETTER = re.compile(rf"[^\W\d_]|[{HAN}]")


def blanks(text: str, own_text: str = "") -> list[str]:
    """The blanks a text leaves for the writer to fill in ("Dear [Guest's Name],"), each once, in reading order:
    a text a writer cannot publish as it stands, and whose count changes once the blank is filled. Not a bracket
    the writer's own instruction holds, nor one without a letter ("[1]", "[…]")."""
    found = (m.group() for m in _BLANK.finditer(text))
    return list(dict.fromkeys(b for b in found if _LETTER.search(b) and b not in own_text))


_FIELD = re.compile(
    r"\byour\s+(?:full\s+|first\s+|last\s+)?(?:name|e-?mail|phone(?:\s+number)?|address|location|category|company"
    r"|organi[sz]ation|job\s+title|signature|contact(?:\s+details)?|website)\s*:",
    re.IGNORECASE,
)
FORM_FIELDS = 2
"""Fields that make a text a form: one ("Your name: on every loaf") may be a line of the text."""


def form_fields(text: str, own_text: str = "") -> list[str]:
    """A form for someone to fill in where the text should be ("Your Name: Sarah Emma Taylor, Your Category: …,
    Your Location: …"): its first field, where it has `FORM_FIELDS` fields or more; nothing where the writer's
    instruction asks for a form or names the field itself."""
    found = [m.group() for m in _FIELD.finditer(text)]
    if len(found) < FORM_FIELDS or "form" in own_words(own_text):
        return []
    own = own_text.lower()
    return [f for f in found if f.lower().rstrip(": ") not in own][:1]

"""The facts of a text, and which of them a rewrite kept: what a writer checks a shortened text for.

A fact is a span of the writer's text that a reader would miss if it went: a name (a run of capitalised words:
"Mayor Linda Okafor", "North Carolina"), a sum of money ("$3.4 million"), a number with what it counts ("14
months", "5 to 2"), a date ("March", "since 1995"), and the main clause of the first sentence (what the text is
about; `clauses.core` gives it: the sentence without any part that may be dropped). Each is kept or not: a fact
is kept when its words are in the rewrite in their order, next to each other (the main clause: in its order, not
necessarily next to each other). A rewrite's figure reads "keeps 9 of 11 facts: lost '$3.4 million', 'in 1962'".

Facts in the rewrite that are not in the source (a new name or number) are invented: `invented` lists them, so a
lengthening can say "adds 2 facts not in your text: 'state grant', '2025'".

Pure rules over the text (no model, no download): names are found by capitals, so a name that opens a sentence
counts only when it is two or more capitalised words or appears capitalised elsewhere too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORD = re.compile(r"[^\W_]+(?:['’.,][^\W_]+)*")
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
MONTHS = frozenset(_MONTHS.split())
DAYS = frozenset(_DAYS.split())
_NUMBER_WORDS = _set(
    """
    two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen
    nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion trillion dozen
    """
)
_SCALE = r"(?:\s+(?:thousand|million|billion|trillion))?"
_MONEY = re.compile(rf"[$€£¥]\s?\d[\d,]*(?:\.\d+)?{_SCALE}|\d[\d,]*(?:\.\d+)?{_SCALE}\s+(?:dollars|euros|pounds|yuan)")
_NUM = r"\d[\d,]*(?:\.\d+)?%?"
_NUMBER = re.compile(
    rf"(?<![\w$€£¥.]){_NUM}(?:\s+(?:to|of|and)\s+{_NUM})?(?:\s+(?:percent|per cent))?(?:\s+[a-z][a-z-]+s\b)?"
    r"|(?<![\w-])(?:" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")\s+[a-z][a-z-]+s\b",
    re.IGNORECASE,
)
_DATE = re.compile(
    r"\b(?:(?:" + "|".join(w.capitalize() for w in sorted(MONTHS | DAYS, key=len, reverse=True)) + r")\b"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+\d{4})?)"
)
_YEAR = re.compile(r"\b(?:in|since|by|until|from|of|before|after)\s+(?:1[5-9]\d\d|20\d\d)\b|\b(?:1[5-9]\d\d|20\d\d)\b")
_CAPITAL = re.compile(r"[A-Z][\w’'.-]*")
_JOINERS = _set("of for the and de van von la du")
_NOT_NAMES = _set(
    """
    i a an the this that these those it its he she we they you my our your his her their there here but and or so
    yet for with with in on at by to from as if when while after before because although though since until mr
    mrs ms dr first second third fourth fifth sixth seventh eighth ninth tenth last next every each all some most
    many much more no not one what who which where why how then now today tonight yesterday tomorrow
    """
)
_ORDINALS = _set("first second third fourth fifth sixth seventh eighth ninth tenth last next")
_UNIT_STOP = _set(
    """
    the a an and or but of to in on at by for from with is are was were be been will would has have had that
    which who this it its as than more less so if is was has does gets
    """
)


@dataclass(frozen=True)
class Fact:
    """One fact of a text: `text` as the writer wrote it, `kind` (name, money, number, date, main), and where it
    is (`start`, `end`: character offsets in the text)."""

    text: str
    kind: str
    start: int
    end: int

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(norm(w) for w in _WORD.findall(self.text))


def norm(word: str) -> str:
    """A word as facts compare it: lower-cased, curly apostrophe straight, no possessive 's, no trailing dot."""
    low = word.lower().replace("’", "'").rstrip(".,")
    return low[:-2] if low.endswith("'s") else low


def words_of(text: str) -> list[str]:
    return [norm(w) for w in _WORD.findall(text)]


def extract(text: str, main: str | None = None) -> list[Fact]:
    """The facts of `text`, in their order, none inside another: money, dates, numbers, names; and `main`, the main
    clause of the first sentence, when given (see `clauses.core`)."""
    found: list[Fact] = []

    def add(start: int, end: int, kind: str) -> None:
        span = text[start:end].strip(" ,;:")
        span = span.rstrip(".") if kind == "name" else span
        if not span or any(f.start < end and start < f.end for f in found):
            return
        start = text.index(span, start)
        found.append(Fact(span, kind, start, start + len(span)))

    for m in _MONEY.finditer(text):
        add(m.start(), m.end(), "money")
    for m in _DATE.finditer(text):
        if m.group().lower() in ("may", "march") and not _date_context(text, m):
            continue  # "we may", "the march": a date only with a day, a year or a preposition before it
        add(m.start(), m.end(), "date")
    for m in _YEAR.finditer(text):
        add(m.start(), m.end(), "date")
    for m in _NUMBER.finditer(text):
        add(m.start(), _number_end(text, m), "number")
    for start, end in _names(text):
        add(start, end, "name")
    found.sort(key=lambda f: f.start)
    if main:
        found.insert(0, Fact(main, "main", -1, -1))
    return found


def _date_context(text: str, m: re.Match[str]) -> bool:
    before = text[: m.start()].split()[-1:] or [""]
    return bool(re.search(r"\d", m.group())) or before[0].lower() in ("in", "on", "since", "by", "until", "of")


def _number_end(text: str, m: re.Match[str]) -> int:
    """A number's span ends before a function word it took as its noun ("500 of": "500")."""
    words = m.group().split()
    if len(words) > 1 and words[-1].lower() in _UNIT_STOP:
        return m.start() + m.group().rstrip().rfind(" ")
    return m.end()


def _names(text: str) -> list[tuple[int, int]]:
    """Runs of capitalised words (joined by "of", "for", "the", "and" inside one), not a lone word that only opens
    a sentence, not a lone common word ("The", "With", "First")."""
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", text)]
    capitals_inside = {
        _bare(tok) for n, (_, _, tok) in enumerate(tokens) if n and not _sentence_end(tokens[n - 1][2]) and _cap(tok)
    }
    out: list[tuple[int, int]] = []
    n = 0
    while n < len(tokens):
        start, _, tok = tokens[n]
        opens = n == 0 or _sentence_end(tokens[n - 1][2])
        low = _bare(tok).lower()
        ordinal = low in _ORDINALS and n + 1 < len(tokens) and _cap(tokens[n + 1][2]) and not _pause(tok)
        if not _cap(tok) or (low in _NOT_NAMES and not ordinal) or low in MONTHS | DAYS:
            n += 1
            continue
        run = [n]
        m = n + 1
        while m < len(tokens) and not _pause(tokens[m - 1][2]):
            word = _bare(tokens[m][2])
            if _cap(tokens[m][2]) and word.lower() not in _NOT_NAMES:
                run.append(m)
            elif word.lower() in _JOINERS and m + 1 < len(tokens) and _cap(tokens[m + 1][2]):
                pass  # "Board for Professional": the joiner is kept only if a capital follows it
            else:
                break
            if "'s" in tokens[m][2] or "’s" in tokens[m][2]:
                break
            m += 1
        last = run[-1]
        if "'s" in tokens[n][2] or "’s" in tokens[n][2]:
            last = n
        lone = last == n
        if not (lone and opens and _bare(tok) not in capitals_inside):
            out.append((start, tokens[last][1]))
        n = last + 1
    return out


def _bare(tok: str) -> str:
    core = re.sub(r"^\W+|\W+$", "", tok)
    return re.sub(r"['’]s$", "", core)


def _cap(tok: str) -> bool:
    word = _bare(tok)
    return bool(_CAPITAL.match(word or "x"))


def _pause(tok: str) -> bool:
    return bool(re.search(r"[,;:.!?)\]]['\"’”]?$", tok))


def _sentence_end(tok: str) -> bool:
    return bool(re.search(r"[.!?…:]['\"’”)]*$", tok)) and not re.search(r"\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr)\.$", tok)


# ----- kept or lost -------------------------------------------------------------------------------------------


def kept(fact: Fact, text_words: list[str]) -> bool:
    """Whether `fact` is in a text (its words, `words_of(text)`): its words next to each other in their order, or
    for the main clause in their order."""
    want = fact.words
    if not want:
        return True
    if fact.kind == "main":
        it = iter(text_words)
        return all(w in it for w in want)
    n = len(want)
    return any(tuple(text_words[i : i + n]) == want for i in range(len(text_words) - n + 1))


@dataclass(frozen=True)
class FactCheck:
    """The source's facts a rewrite kept and lost, and the facts of the rewrite that the source does not have."""

    total: int
    lost: tuple[str, ...] = ()
    invented: tuple[str, ...] = ()

    @property
    def kept(self) -> int:
        return self.total - len(self.lost)

    @property
    def share(self) -> float:
        return self.kept / self.total if self.total else 1.0

    def describe(self, most: int = 3) -> str:
        """ "keeps 9 of 11 facts: lost '$3.4 million', 'in 1962'" (at most `most` named)."""
        if not self.total:
            shown = "no names, numbers or dates to keep"
        else:
            shown = f"keeps {self.kept} of {self.total} facts"
            if self.lost:
                names = ", ".join(f"'{_short(f)}'" for f in self.lost[:most])
                more = f" and {len(self.lost) - most} more" if len(self.lost) > most else ""
                shown += f": lost {names}{more}"
        if self.invented:
            names = ", ".join(f"'{_short(f)}'" for f in self.invented[:most])
            shown += f" · adds {len(self.invented)} not in your text: {names}"
        return shown

    def as_json(self) -> dict[str, object]:
        return {"total": self.total, "lost": list(self.lost), "invented": list(self.invented)}

    @classmethod
    def from_json(cls, doc: dict[str, object]) -> FactCheck:
        return cls(int(doc.get("total", 0)), tuple(doc.get("lost", ())), tuple(doc.get("invented", ())))  # type: ignore[arg-type]


def _short(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def check(source: str, text: str, main: str | None = None) -> FactCheck:
    """Which of the facts of `source` (`extract`) `text` kept, and which facts of `text` are not in `source`."""
    have = words_of(text)
    facts = extract(source, main)
    lost = tuple(f.text for f in facts if not kept(f, have))
    src = words_of(source)
    invented = tuple(f.text for f in extract(text) if f.kind != "main" and not kept(f, src))
    return FactCheck(len(facts), lost, invented)

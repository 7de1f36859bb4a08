"""Shortening by whole units of meaning: which parts of a text may be dropped, and the best drops for a length.

A text is split into sentences and each sentence into the parts a reader can lose without the sentence breaking
(`units`): the whole sentence; an opening phrase ("With four years of growth,", "Therefore,"); a relative clause
after a comma (", which has been closed to trucks since March"); an adverbial, participle or purpose clause after a
comma (", because …", ", approving …", ", to explore …"); a clause after ", but" or ", and we"; an appositive between
commas (", the information age,"); a parenthesis; a prepositional phrase at the end of a clause or before another
one ("on Tuesday", "over the next 4 years"); an adverb ("quickly and fairly", "very"); an adjective after a
determiner (a known one, or an adjective's ending: "the [right] [public] school"); "that" after "said"; and, only
when no exact count is reachable otherwise (`relaxed`), a noun before the noun that ends its phrase ("the
[student] population at"). What is left of a sentence when all its parts are dropped is its `core` (subject,
verb, object): a kept sentence always keeps it, so no clause loses its subject and no two clauses are spliced.

The parts are found by rules over punctuation and closed word classes (conjunctions, relatives, prepositions,
auxiliaries, determiners): no tagger, no model, nothing to download. A dependency parser would find more parts
(restrictive relatives, objects of prepositions after verbs), but none that works offline is on PyPI from its
makers (spaCy's English pipelines are published on GitHub, and re-uploads by others are a weak dependency;
stanza and NLTK's tagger download their models at run time), and the 135M model cannot parse. The rules are
conservative instead: a phrase that might be an argument of its verb ("is at an all-time high") is not offered,
nor a list item, nor a noun that may be the subject of the next word ("the gates open").

`shorten` then chooses which parts to drop for a length by a dynamic programme over the whole text, not word by
word from the left: each sentence's ways of dropping parts are scored by the facts they keep (facts.py: names,
numbers, money, dates, the first sentence's main clause), the content words they keep and the cuts they make,
and the sentences' ways are combined, knapsack-style, into the best few whole texts of the asked length. The
model then picks one of those texts (rewrite.py: a grammar of exactly those texts), so its likelihood decides
among texts that all keep the facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import combinations, pairwise

from . import facts as factmod
from .lexicon import DANGLING


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_ABBREVIATIONS = _set("mr mrs ms dr st jr sr vs etc inc ltd co no e.g i.e u.s")
_TIMES = _set("a.m p.m")
_ALNUM = re.compile(r"[^\W_]")
_PAUSES = ",;:"
_STOPS = ".!?…"

RELATIVES = _set("which who whom whose where when")
SUBORDINATORS = _set("because although though while since as after before until unless whereas if so once")
INTRODUCERS = _set(
    """
    with without after before during since because although though while if when unless until once in on at for
    from by despite as under over through across among like
    """
)
TRANSITIONS = _set(
    """
    first second third fourth fifth sixth seventh eighth ninth tenth finally therefore however moreover meanwhile
    instead still also now then today yesterday tonight indeed furthermore besides nevertheless thus hence
    consequently overall later earlier recently
    """
)
OPENING_CONJUNCTIONS = _set("but and so yet also still")
ADJUNCT_PREPOSITIONS = _set(
    "in on at during since after before across throughout around near over within by under among along"
)
PREPOSITIONS = ADJUNCT_PREPOSITIONS | _set("for from with into onto upon about of to than like via per toward towards")
PRONOUNS = _set("i you he she it we they this there")
COPULAS = _set("is are was were be been being am become became becomes remain remains remained stay stays")
VERBISH = COPULAS | _set(
    """
    has have had having do does did will would shall should can could may might must said says say found made
    makes make took take takes began begins became gave give gives went go goes came come comes got get gets saw
    see sees know knew knows think thought told tell tells voted argued asked called led needs need needed wants
    want wanted includes include included opens opened closed stood stands helps help helped cannot can't won't
    """
)
SAY_VERBS = _set("said says say argued argues told tells claimed claims believe believes believed found noted")
DETERMINERS = _set("a an the this that these those our their its his her my your some many")
ADJECTIVES = _set(
    "new major serious significant important startling great huge big real extra basic whole entire special "
    "enduring unrivaled decisive"
)
DELETABLE_ADVERBS = _set("very really also now still even indeed certainly literally actually truly")
_LY_KEEP = _set(
    """
    only early family july italy supply reply rely apply holy ugly lonely likely unlikely daily weekly monthly yearly
    hourly friendly elderly assembly ally rally fly belly jelly bully silly hilly curly costly deadly lovely lively
    orderly timely nearly merely roughly approximately mostly partly largely chiefly mainly exactly barely hardly
    scarcely anomaly monopoly butterfly firefly
    """
)
_ING_KEEP = _set("during morning evening something nothing anything everything spring string thing bring king")
NO_END = (
    DANGLING
    | COPULAS
    | _set(
        """
    we you he she they do does did have has had will would shall should can could may might must not no any some
    than that this these those what who whose when where why how if so very just only also more most both every
    each much many all
    """
    )
)
"""Words a kept sentence does not end on ("… the moment will." reads broken)."""


@dataclass(frozen=True)
class Unit:
    """A droppable part of a sentence: tokens `start` to `end` (end excluded) and what kind of part it is."""

    start: int
    end: int
    kind: str

    def __len__(self) -> int:
        return self.end - self.start


@dataclass
class Sentence:
    """One sentence: its whitespace tokens as written, their character spans in the text, whether a paragraph
    break comes before it, and its droppable parts."""

    tokens: list[str]
    spans: list[tuple[int, int]]
    paragraph: bool = False
    units: list[Unit] = field(default_factory=list)

    def bare(self, i: int) -> str:
        return _bare(self.tokens[i]).lower()

    def words(self, mask: frozenset[int] = frozenset()) -> int:
        return sum(1 for i, t in enumerate(self.tokens) if i not in mask and _ALNUM.search(t))

    @property
    def core(self) -> str:
        """The sentence without any of its droppable parts: its main clause."""
        dropped = {i for u in self.units for i in range(u.start, u.end)}
        return render([self], [frozenset(dropped)])


def _bare(tok: str) -> str:
    return re.sub(r"^[^\w$€£]+|[^\w%]+$", "", tok)


def _trail(tok: str) -> str:
    m = re.search(r"[^\w%]*$", tok)
    return m.group() if m else ""


def _pause(tok: str) -> str:
    t = _trail(tok).rstrip("\"'”’)]»")
    return t[-1] if t and t[-1] in _PAUSES else ""


def _ends_sentence(tok: str) -> bool:
    t = _trail(tok).rstrip("\"'”’)]»")
    if not t or t[-1] not in _STOPS:
        return False
    word = _bare(tok).lower()
    return not (t == "." and (word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())))


def sentences(text: str, relaxed: bool = False) -> list[Sentence]:
    """The sentences of `text`, each with its droppable parts (`units`; `relaxed`: nouns before nouns too)."""
    out: list[Sentence] = []
    tokens: list[str] = []
    spans: list[tuple[int, int]] = []
    paragraph = False
    last_end = 0
    found = list(re.finditer(r"\S+", text))
    for n, m in enumerate(found):
        if not tokens and out and "\n\n" in text[last_end : m.start()]:
            paragraph = True
        tokens.append(m.group())
        spans.append((m.start(), m.end()))
        last_end = m.end()
        if _bare(m.group()).lower() in _TIMES and n + 1 < len(found) and not found[n + 1].group()[:1].isupper():
            continue  # "at 10 a.m. and the last concert": no sentence end
        if _ends_sentence(m.group()):
            out.append(Sentence(tokens, spans, paragraph))
            tokens, spans, paragraph = [], [], False
    if tokens:
        out.append(Sentence(tokens, spans, paragraph))
    for s in out:
        s.units = units(s, relaxed)
    return out


# ----- the droppable parts ------------------------------------------------------------------------------------


def units(s: Sentence, relaxed: bool = False) -> list[Unit]:
    """The droppable parts of sentence `s`, none crossing another (a part may hold smaller ones). `relaxed`: also a
    noun before the noun that ends a phrase ("the [student] population at"), the last resort for an exact count."""
    n = len(s.tokens)
    found: list[Unit] = []
    if n == 0:
        return found
    found += _opening(s)
    for c in range(n - 1):
        if _pause(s.tokens[c]) in (",", ";"):
            found += _after_comma(s, c + 1)
    found += _parentheses(s)
    found += _prepositional(s)
    found += _subordinate(s)
    found += _restrictive(s)
    found += _modifiers(s, relaxed)
    return _laminar(found, n)


def _next_comma(s: Sentence, j: int) -> int | None:
    """The first token from j on that ends with a comma or semicolon (None: none before the sentence's end)."""
    for k in range(j, len(s.tokens) - 1):
        if _pause(s.tokens[k]) in (",", ";"):
            return k
    return None


def _opening(s: Sentence) -> list[Unit]:
    n, first = len(s.tokens), s.bare(0)
    if first in INTRODUCERS or first in TRANSITIONS or first in SUBORDINATORS or first.endswith("ly"):
        k = _next_comma(s, 0)
        clause = first in SUBORDINATORS - _set("as since after before") or first in _set("when if")
        absolute = first in _set("with without despite during after before")  # "With crime declining,"
        longest = 20 if clause or absolute else 6  # "For twenty years the building stood empty," is a clause
        goes_on = k is not None and s.bare(k + 1) not in _set("and or but so yet")
        if k is not None and k < longest and goes_on and n - k > 3:
            return [Unit(0, k + 1, "opening")]
    if first in OPENING_CONJUNCTIONS and not _pause(s.tokens[0]) and n > 4:
        return [Unit(0, 1, "opening")]
    return []


def _after_comma(s: Sentence, j: int) -> list[Unit]:
    """A part that starts right after a comma at token j: to the next comma (an insertion) or to the end."""
    n, w = len(s.tokens), s.bare(j)
    k = _next_comma(s, j)
    to_comma = Unit(j, k + 1, "") if k is not None else None
    if k is not None and s.bare(k + 1) in ("and", "or", "but"):  # ", where …, and cooled by …": it goes on
        to_comma = None
    rest = [s.bare(i) for i in range(k + 1, n)] if k is not None else []
    list_end = bool(rest) and len(rest) <= 6 and not any(w in VERBISH or _past(w) for w in rest)
    to_end = Unit(j, n, "")
    clause = to_end if list_end else (to_comma or to_end)  # ", with a cafe … for painters, potters and …"
    if any(_dash(s.tokens[i]) for i in range(j, (k + 1) if to_comma else n)):
        return []
    if _in_list(s, j, k):
        return []
    if w in RELATIVES:
        return [_kind(clause, "relative")]
    past = _past(w) and j + 1 < n and s.bare(j + 1) in ADJUNCT_PREPOSITIONS and _verb_before(s, j)  # ", built in"
    if w in SUBORDINATORS or (w in PREPOSITIONS and w != "of") or _participle(w) or past or w == "to":
        return [_kind(clause, "adverbial")]
    verb_follows = any(s.bare(i) in VERBISH - COPULAS or s.bare(i) in _set("is are was were") for i in range(j + 2, n))
    wh = j + 1 < n and s.bare(j + 1) in RELATIVES | _set("what how why")  # ", and which schools …": a list item
    coordinated = j + 1 < n and (s.bare(j + 1) in PRONOUNS | _set("then") or (verb_follows and n - j > 5 and not wh))
    if w == "but" or (w in ("and", "or", "so", "yet") and coordinated):
        return [_kind(to_end, "clause")] if n - j >= 4 else []
    earlier = [i for i in range(j - 1) if _pause(s.tokens[i]) in (",", ";")]
    after_opening = not earlier and (s.bare(0) in INTRODUCERS | TRANSITIONS | SUBORDINATORS)
    if to_comma is not None and len(to_comma) <= 8 and k is not None and k + 1 < n and not after_opening:
        seg = [s.bare(i) for i in range(j, k + 1)]
        if not any(x in VERBISH for x in seg) and s.bare(k + 1) not in ("and", "or") and w not in ("and", "or"):
            return [_kind(to_comma, "appositive")]
    if to_comma is None and j > 0 and w == s.bare(j - 1) and n - j >= 3:  # "charter schools, schools that …"
        return [_kind(to_end, "appositive")]
    return []


def _past(w: str) -> bool:
    return w.endswith("ed") and len(w) > 4 and w.isalpha()


def _verb_before(s: Sentence, j: int) -> bool:
    """Whether the sentence has a verb before token j outside a relative clause between commas: if not, a past form
    after the comma is the main verb ("Councilman Dave Reyes, who voted against the plan, argued …")."""
    inside = False
    for i in range(j - 1):
        if i and _pause(s.tokens[i - 1]) in (",", ";") and s.bare(i) in RELATIVES:
            inside = True
        if not inside and (s.bare(i) in VERBISH or _past(s.bare(i))):
            return True
        if _pause(s.tokens[i]) in (",", ";"):
            inside = False
    return False


def _in_list(s: Sentence, j: int, k: int | None) -> bool:
    """Whether the segment from token j to the comma at k is an item of a list ("the global economy, the
    information age, unimagined new work, …"): short, verbless segments between commas on both sides of it."""
    if k is None or len(s.tokens) - k < 2:
        return False
    nxt = _next_comma(s, k + 1)
    before = [i for i in range(j - 1) if _pause(s.tokens[i]) in (",", ";")]
    prev_start = before[-1] + 1 if before else 0

    def short(a: int, b: int) -> bool:
        return b - a <= 4 and not any(s.bare(i) in VERBISH for i in range(a, b + 1))

    return (nxt is not None and short(k + 1, nxt)) or (bool(before) and short(prev_start, j - 1))


def _kind(u: Unit, kind: str) -> Unit:
    return Unit(u.start, u.end, kind)


def _participle(w: str) -> bool:
    return w.endswith("ing") and len(w) > 5 and w.isalpha() and w not in _ING_KEEP


def _parentheses(s: Sentence) -> list[Unit]:
    out, start = [], None
    for i, tok in enumerate(s.tokens):
        if tok.startswith("(") and start is None:
            start = i
        if start is not None and _trail(tok).find(")") >= 0:
            if i + 1 < len(s.tokens):
                out.append(Unit(start, i + 1, "parenthesis"))
            start = None
    return out


def _prepositional(s: Sentence) -> list[Unit]:
    """A prepositional phrase (in, on, at, during, since, over …) that ends where a clause or phrase ends: at a pause,
    the sentence's end, an infinitive or another such phrase that itself ends so; never after a copula ("is at an
    all-time high"), an adverb ("paid for mostly by"), or a lone word after a comma ("built in 1962")."""
    n = len(s.tokens)
    ends_at: dict[int, int] = {}  # a valid phrase starting at i ends at ends_at[i]
    for i in range(n - 1, 0, -1):
        if s.bare(i) not in ADJUNCT_PREPOSITIONS or _pause(s.tokens[i]) or _pause(s.tokens[i - 1]):
            continue
        prev = s.bare(i - 1)
        when = i + 1 < n and bool(re.match(r"\d|\$", s.bare(i + 1)) or _when(s.bare(i + 1)))  # "voted on Tuesday"
        if prev in COPULAS | PREPOSITIONS | DANGLING or (prev in VERBISH and not when):
            continue
        if _adverb(prev) or prev in _LY_KEEP:
            continue
        if i >= 2 and _pause(s.tokens[i - 2]):
            continue
        k = i + 1
        while k < n and not _pause(s.tokens[k - 1]) and k - i <= 9 and not _dash(s.tokens[k - 1]):
            w = s.bare(k)
            if w in ADJUNCT_PREPOSITIONS | RELATIVES | SUBORDINATORS | VERBISH | _set("and or but to that"):
                break
            if w in DELETABLE_ADVERBS | _set("never always often not"):  # "in her name still supports": a verb
                k = n + 99
                break
            k += 1
        if k > n:
            continue
        if k == i + 1 or k - i > 9 or _dash(s.tokens[k - 1]):
            continue
        ends = k == n or bool(_pause(s.tokens[k - 1])) or k in ends_at
        ends = ends or (s.bare(k) == "to" and k + 1 < n and s.bare(k + 1) not in DETERMINERS)
        if k < n and _pause(s.tokens[k - 1]) and s.bare(k) in RELATIVES:
            continue  # "cooled by breezes, which …": the relative is about the phrase's noun
        if k < n and _pause(s.tokens[k - 1]) and re.match(r"[A-Z0-9$]", s.tokens[k]):
            continue  # "on Saturday, June 14,": what follows the comma is about the phrase's noun
        if ends and _ALNUM.search(s.tokens[k - 1]) and not (k == n and prev in NO_END):
            ends_at[i] = k
    return [Unit(i, k, "phrase") for i, k in ends_at.items()]


def _restrictive(s: Sentence) -> list[Unit]:
    """A relative clause without a comma that ends the sentence, after a verb ("… foster competition and innovation
    [that can make public schools better]."): the noun before it stays whole. Not one inside a subject ("Residents
    who opposed it said …": no verb before it), nor an object clause ("show us who needs help")."""
    n = len(s.tokens)
    for i in range(2, n - 2):
        if s.bare(i) not in _set("that which who") or _pause(s.tokens[i - 1]):
            continue
        prev, nxt = s.bare(i - 1), s.bare(i + 1)
        if prev in PRONOUNS | _set("us me him them her") | PREPOSITIONS | DETERMINERS | VERBISH | SAY_VERBS:
            continue
        if nxt not in VERBISH or any(_pause(t) for t in s.tokens[i:-1]) or not _verb_before(s, i):
            continue
        return [Unit(i, n, "relative")]
    return []


def _when(w: str) -> bool:
    """A word that says when: a month, a weekday, a season (a phrase "on Tuesday" is an adjunct even after a verb)."""
    return w in factmod.MONTHS | factmod.DAYS | _set("spring summer autumn fall winter morning evening night")


def _subordinate(s: Sentence) -> list[Unit]:
    """A subordinate clause at a sentence's end without a comma before it ("… to high school until he or she is
    ready")."""
    n = len(s.tokens)
    for i in range(2, n - 2):
        w, prev = s.bare(i), s.bare(i - 1)
        if w not in _set("until unless because although though while whereas before after when"):
            continue
        if _pause(s.tokens[i - 1]) or prev in NO_END or prev in PREPOSITIONS:
            continue
        if not any(_pause(t) for t in s.tokens[i:-1]):
            return [Unit(i, n, "subordinate")]
    return []


def _dash(tok: str) -> bool:
    return "--" in tok or "—" in tok or "–" in tok


def _modifiers(s: Sentence, relaxed: bool = False) -> list[Unit]:
    """Adverbs ("quickly and fairly", "very"), a few adjectives after a determiner, "that" after "said"."""
    out, n = [], len(s.tokens)
    for i in range(1, n - 1):
        w, tok = s.bare(i), s.tokens[i]
        if not w or tok[0].isupper() or _pause(s.tokens[i - 1]):
            continue
        nxt = s.bare(i + 1)
        if _adverb(w) and not re.match(r"\d|\$", nxt) and not _pause(tok):
            if nxt in ("and", "or") and i + 2 < n and _adverb(s.bare(i + 2)):
                out.append(Unit(i, i + 3, "adverb"))
            elif s.bare(i - 1) not in ("and", "or"):
                out.append(Unit(i, i + 1, "adverb"))
        elif _modifier(s, i, relaxed) or (
            w in ADJECTIVES and s.bare(i - 1) in DETERMINERS and not _pause(tok) and nxt.isalpha()
        ):
            if s.bare(i - 1) in ("a", "an") and _vowel(w) != _vowel(nxt):
                continue
            if nxt not in NO_END and nxt not in PREPOSITIONS:
                out.append(Unit(i, i + 1, "adjective"))
        elif w == "that" and (s.bare(i - 1) in SAY_VERBS or (i >= 2 and s.bare(i - 2) in _set("told tell tells"))):
            out += [Unit(i, i + 1, "that")] if nxt not in NO_END - PRONOUNS - _set("the a an") else []
    return out


_HEAD_ENDS = PREPOSITIONS | RELATIVES | VERBISH | _set("and or but that to not")
_NOT_HEADS = _set("up down out off away back today tonight now then here there ago again together previous")
_NOT_MODIFIERS = _set(
    """
    few several many more most less least much little no enough all both each every some any other same such only
    own first second third last next best worst one two three four five six seven eight nine ten
    """
)


COMMON_ADJECTIVES = _set(
    """
    big small large little old young good bad high low long short full empty hot cold warm cool dark bright local
    public private main real modern green fresh clean quiet busy free open strong weak rich poor safe simple
    """
)
_ADJECTIVE_ENDINGS = ("al", "ic", "ive", "ous", "ful", "less", "able", "ible", "ary", "ent", "ant", "ish", "ern")


def _adjective(w: str) -> bool:
    """Whether `w` looks like an adjective (no tagger: a known one, or an adjective's ending)."""
    return w in ADJECTIVES or w in COMMON_ADJECTIVES or (len(w) > 4 and w.endswith(_ADJECTIVE_ENDINGS))


def _modifier(s: Sentence, i: int, relaxed: bool = False) -> bool:
    """Word i is an adjective between a determiner and the noun that ends its phrase ("the [right] [public] school
    for …"): dropping it leaves the phrase whole. A noun before a noun ("safety inspection") stays: without a
    tagger it cannot be told from a noun before its verb ("the gates open")."""
    n = len(s.tokens)
    w = s.bare(i)
    if not (_adjective(w) or (relaxed and not w.endswith("s"))):
        return False
    if not w.isalpha() or w in NO_END | PREPOSITIONS | VERBISH | DETERMINERS | _NOT_MODIFIERS or _pause(s.tokens[i]):
        return False
    if len(w) > 4 and w.endswith("est"):  # "the highest standards": a superlative says which
        return False
    j = i - 1
    while j > 0 and s.bare(j) not in DETERMINERS:
        if _pause(s.tokens[j]) or not s.bare(j).isalpha() or s.bare(j) in NO_END | PREPOSITIONS | VERBISH:
            return False
        j -= 1
    if s.bare(j) not in DETERMINERS or i - j > 3:
        return False
    head = i + 1
    while head < n - 1 and not _pause(s.tokens[head]) and s.bare(head + 1) not in _HEAD_ENDS and head - i < 3:
        head += 1
    hw = s.bare(head)
    if head >= n or s.tokens[head][:1].isupper() or not hw.isalpha() or hw in NO_END | _NOT_HEADS | _NOT_MODIFIERS:
        return False
    if hw.endswith(("ing", "ed")) or head - i > 2:
        return False
    if j == 0 and hw.endswith("s") and not hw.endswith("ss"):  # "The festival returns on …": a verb, not a noun
        return False
    ends = head == n - 1 or bool(_pause(s.tokens[head])) or s.bare(head + 1) in _HEAD_ENDS
    if relaxed and not _adjective(w):  # a noun before a noun: only before a pause or a phrase ("population at")
        ends = head == n - 1 or bool(_pause(s.tokens[head])) or s.bare(head + 1) in ADJUNCT_PREPOSITIONS
    return ends and all(s.bare(m).isalpha() and not s.tokens[m][:1].isupper() for m in range(i, head + 1))


def _adverb(w: str) -> bool:
    return w in DELETABLE_ADVERBS or (w.endswith("ly") and len(w) > 4 and w.isalpha() and w not in _LY_KEEP)


def _vowel(w: str) -> bool:
    return w[:1] in "aeiou"


def _laminar(found: list[Unit], n: int) -> list[Unit]:
    """The parts without duplicates, the whole sentence, or one crossing a part kept before it (longer first)."""
    kept: list[Unit] = []
    for u in sorted(set(found), key=lambda u: (-(u.end - u.start), u.start)):
        if u.end - u.start >= n or u.start >= u.end:
            continue
        if any(u.start < v.end and v.start < u.end and not _nested(u, v) for v in kept):
            continue
        if any((v.start, v.end) == (u.start, u.end) for v in kept):
            continue
        kept.append(u)
    return sorted(kept, key=lambda u: (u.start, -u.end))


def _nested(a: Unit, b: Unit) -> bool:
    return (a.start >= b.start and a.end <= b.end) or (b.start >= a.start and b.end <= a.end)


# ----- rendering a choice of drops ------------------------------------------------------------------------------


def render(sents: list[Sentence], masks: list[frozenset[int]]) -> str:
    """The text with the tokens in each sentence's mask dropped (a mask holding every token drops the sentence):
    a cut at a sentence's end closes it with its own stop, a cut between two commas takes both, a cut after an
    opening phrase capitalises the next word."""
    parts: list[str] = []
    for s, mask in zip(sents, masks, strict=True):
        text = _render_sentence(s, mask)
        if text:
            if parts and s.paragraph:
                parts.append("\n\n")
            elif parts:
                parts.append(" ")
            parts.append(text)
    return "".join(parts)


def _render_sentence(s: Sentence, mask: frozenset[int]) -> str:
    n = len(s.tokens)
    if all(i in mask for i in range(n)):
        return ""
    out: list[str] = []
    i = 0
    capital = False
    while i < n:
        if i not in mask:
            tok = s.tokens[i]
            if capital:
                tok = _capitalise(tok)
                capital = False
            out.append(tok)
            i += 1
            continue
        j = i
        while j < n and j in mask:
            j += 1
        if not out:  # the opening was dropped
            capital = s.tokens[0][:1].isupper() or _bare(s.tokens[0])[:1].isupper()
        elif j == n:  # the end was dropped: close on the sentence's own stop ("9 p.m." has its own)
            last = _without_pause(out[-1])
            stop = _stop(s.tokens[-1])
            out[-1] = last if last.endswith(".") and stop == "." else last + stop
        else:
            before, after = _pause(out[-1]), _pause(s.tokens[j - 1])
            if before and after:  # ", which …," goes whole
                out[-1] = _without_pause(out[-1])
            elif after and not before:
                out[-1] = out[-1] + after
        i = j
    return " ".join(out)


def _capitalise(tok: str) -> str:
    m = re.search(r"[^\W\d_]", tok)
    return tok if m is None else tok[: m.start()] + tok[m.start()].upper() + tok[m.start() + 1 :]


def _without_pause(tok: str) -> str:
    return re.sub(r"[,;:—–-]+$", "", tok)


def _stop(tok: str) -> str:
    t = _trail(tok)
    m = re.search(r"[.!?…]+[\"'”’)\]»]*$", t)
    return m.group() if m else "."


# ----- choosing the drops for a length --------------------------------------------------------------------------

FACT_WEIGHT = 1.0
"""What keeping one fact of the source is worth."""
CONTENT_WEIGHT = 0.04
"""What keeping one content word is worth (25 of them are worth a fact)."""
CUT_COST = 0.12
"""What each cut inside a sentence costs (fewer, larger cuts read better than many small ones)."""
LEAD_WEIGHT = 0.5
"""What keeping the first sentence is worth beyond its facts (it says what the text is about)."""
MAX_UNITS = 13
"""At most this many droppable parts of one sentence are combined (2^13 ways); the rest stay."""
PER_LENGTH = 2
"""Ways of one sentence kept per kept length."""
BEAM = 8
"""Best partial texts kept per length while sentences are combined."""


@dataclass(frozen=True)
class Choice:
    """One way of shortening a text: its text, its score (facts, content words, cuts) and its word count."""

    text: str
    score: float
    words: int
    masks: tuple[frozenset[int], ...]


@dataclass(frozen=True)
class _Way:
    words: int
    score: float
    mask: frozenset[int]


def shorten(text: str, low: int, high: int, best: int = 4, relaxed: bool = False) -> list[Choice]:
    """The `best` ways of shortening `text` to `low`-`high` words (en_words), by whole parts only, best first:
    each keeps whole sentences or sentences without some of their parts; the same text appears once. Empty when
    no choice of parts reaches that length. `relaxed`: nouns before nouns may go too (see `units`)."""
    sents = sentences(text, relaxed)
    if not sents:
        return []
    main = sentences(text)[0].core
    facts = factmod.extract(text)
    ways = [_ways(s, n, facts, main) for n, s in enumerate(sents)]
    beam: dict[int, list[tuple[float, tuple[int, ...]]]] = {0: [(0.0, ())]}
    for options in ways:
        nxt: dict[int, list[tuple[float, tuple[int, ...]]]] = {}
        for have, partials in beam.items():
            for k, way in enumerate(options):
                total = have + way.words
                if total > high:
                    continue
                bucket = nxt.setdefault(total, [])
                for score, picks in partials:
                    bucket.append((score + way.score, (*picks, k)))
        beam = {n: sorted(b, key=lambda x: -x[0])[:BEAM] for n, b in nxt.items()}
    found: list[Choice] = []
    seen: set[str] = set()
    finals = sorted(
        ((score, n, picks) for n, b in beam.items() if low <= n <= high for score, picks in b), key=lambda x: -x[0]
    )
    for score, n, picks in finals:
        masks = tuple(ways[i][k].mask for i, k in enumerate(picks))
        out = render(sents, list(masks))
        if out in seen or not out:
            continue
        seen.add(out)
        found.append(Choice(out, round(score, 4), n, masks))
        if len(found) == best:
            break
    return found


def _ways(s: Sentence, index: int, facts: list[factmod.Fact], main: str) -> list[_Way]:
    """The ways of keeping sentence `s` (every token dropped: the sentence goes), the best `PER_LENGTH` per length."""
    n = len(s.tokens)
    covered = [
        (f, {i for i, (a, b) in enumerate(s.spans) if a < f.end and f.start < b})
        for f in facts
        if f.start < s.spans[-1][1] and s.spans[0][0] < f.end
    ]
    content = [i for i in range(n) if s.bare(i) and s.bare(i) not in NO_END and _ALNUM.search(s.tokens[i])]
    parts = sorted(s.units, key=lambda u: -len(u))[:MAX_UNITS]
    masks: set[frozenset[int]] = set()
    for r in range(len(parts) + 1):
        for combo in combinations(parts, r):
            if any(_nested(a, b) for a, b in combinations(combo, 2)):
                continue  # dropping a part and a part inside it is dropping the outer one
            masks.add(frozenset(i for u in combo for i in range(u.start, u.end)))
    by_length: dict[int, list[_Way]] = {}
    for mask in masks:
        if not _reads(s, mask):
            continue
        words = s.words(mask)
        score = sum(FACT_WEIGHT for _, toks in covered if not toks & mask)
        score += CONTENT_WEIGHT * sum(1 for i in content if i not in mask)
        score -= CUT_COST * _runs(mask)
        score += (LEAD_WEIGHT + FACT_WEIGHT * bool(main)) if index == 0 else 0.0
        by_length.setdefault(words, []).append(_Way(words, score, mask))
    out = [w for ways in by_length.values() for w in sorted(ways, key=lambda w: -w.score)[:PER_LENGTH]]
    out.append(_Way(0, 0.0, frozenset(range(n))))
    return out


def _runs(mask: frozenset[int]) -> int:
    return sum(1 for i in mask if i - 1 not in mask)


def _reads(s: Sentence, mask: frozenset[int]) -> bool:
    """Whether the sentence still reads with `mask` dropped: at least three words, not ending on a dangling word,
    no "a" before a dropped adjective's vowel-led noun."""
    kept = [i for i in range(len(s.tokens)) if i not in mask]
    if s.words(mask) < 3:
        return False
    if kept[-1] != len(s.tokens) - 1 and s.bare(kept[-1]) in NO_END:
        return False
    for a, b in pairwise(kept):
        if b != a + 1 and s.bare(a) in ("a", "an") and _vowel(s.bare(b)) != (s.bare(a) == "an"):
            return False
    return True

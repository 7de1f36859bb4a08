"""Rewrite to length: the writer's own text made shorter or longer, its meaning kept, on every model.

A rewrite is a run whose instruction is `prompts.REWRITE` around the writer's text (`prompts.rewrite_source` gives
the text back). How it is written depends on what the model can do:

- Shortening on a model that takes a llama.cpp grammar (the embedded model, GGUF files, a llama.cpp server), in
  English words, in `exact` mode: **by whole parts** (clauses.py). The text's droppable parts (whole sentences,
  opening phrases, relative and adverbial clauses, appositives, prepositional phrases, adverbs, modifiers) are
  combined by a dynamic programme over the whole text into the few texts of the asked length that keep the most
  facts (facts.py); the grammar admits exactly those texts, so the model's likelihood picks one, no clause is
  spliced and no word is the model's own. Where no choice of whole parts reaches the length (a short text, an
  exact count between two reachable ones): **selection**. The grammar (`grammar.selection_grammar`) admits only
  the writer's own words, in their order, N of them, each sentence cut at a word that may end it and closed with
  its own stop, so the model decides what to cut and cannot invent, preface or comment. A text longer than
  `MAX_SELECTION_WORDS` is not shortened so (the grammar grows with its length): it is rewritten as below, and the
  run says so.
- Anything else (lengthening, other units, other modes, other models) goes through the prompt (`prompts.REWRITE_TASK`)
  and the mode's usual path; a leading "Here is the rewritten text:" line the model adds is cut before counting
  (`strip_preamble`), so no preamble is ever part of the counted text.

- Lengthening on the embedded model (135M parameters) is refused (`lengthening_refusal`): it cannot add to a text
  without inventing facts or writing filler; the refusal names what works (a pulled or hosted model).

Every rewrite gets a faithfulness figure (`faithfulness`): the source's facts it kept ("keeps 9 of 11 facts: lost
'$3.4 million'"), the facts it has that the source does not, and the share of its words not in the source.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from . import clauses
from .counting import count
from .facts import FactCheck, check
from .grammar import SourceWord, selection_grammar
from .lexicon import DANGLING
from .prompts import rewrite_source
from .verdict import Target
from .vocab import Lang, Mode, Unit

MAX_SELECTION_WORDS = 600
"""The longest text shortened by selection: its grammar has about 40 rules per word (about 200 kB at 600 words)."""

_TOKEN = re.compile(r"\S+")
_ALNUM = re.compile(r"[^\W_]")
_LEAD = "\"'“‘([{«*_"
_TRAIL = "\"'”’)]}»*_"
_STOPS = ".!?…"
_PAUSES = ",;:"


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_ABBREVIATIONS = _set("mr mrs ms dr st jr sr vs etc inc ltd co no e.g i.e u.s")


Ends = Literal["clause", "phrase", "word"]
"""Where a kept part may end, strictest first: `clause` where a clause or phrase ends (before a pause, a conjunction or
a preposition other than "of" and "to"), `phrase` also before "of" and "to", `word` on any word that is not a
dangling one."""


def source_words(text: str, *, ends: Ends = "clause", intro: bool = True) -> list[SourceWord]:
    """The words of `text` as the selection grammar may write them: each whitespace-separated word that holds a
    letter or digit (what en_words counts), without the quotes and brackets around it, with the pause after it and
    its sentence's stop. A token without a letter or digit (a dash, an ampersand) is left out. `ends`: where a kept
    part may end (see `Ends`); `intro`: never inside a sentence's opening phrase ("With four years of growth," is
    no sentence)."""
    tokens = [t for t in _TOKEN.findall(text) if _ALNUM.search(t)]
    words: list[SourceWord] = []
    sentence, pending = 0, []
    for tok in tokens:
        core, after = _split(tok)
        pending.append((core, after))
        if _ends_sentence(core, after):
            words += _sentence(pending, sentence, _stop(after), ends, intro)
            sentence, pending = sentence + 1, []
    if pending:
        words += _sentence(pending, sentence, ".", ends, intro)
    return words


def first_word(text: str) -> tuple[str, str]:
    """The first word of `text` as the writer wrote it, without the punctuation around it, and the pause (, ; :)
    after it: ("Second", ",") for "Second, to have…"; ("", "") for a text without words."""
    words = source_words(text)
    return (words[0].core, words[0].pause) if words else ("", "")


def _split(token: str) -> tuple[str, str]:
    """(the word, the punctuation after it): `“Hello,”` is (`Hello`, `,`)."""
    core = token.lstrip(_LEAD)
    end = len(core)
    while end > 0 and not _ALNUM.match(core[end - 1]):
        end -= 1
    after = "".join(ch for ch in core[end:] if ch not in _TRAIL)
    return core[:end] or core, after


def _ends_sentence(core: str, after: str) -> bool:
    if not after or after[-1] not in _STOPS:
        return False
    word = core.lower()
    return not (after == "." and (word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())))


def _stop(after: str) -> str:
    stop = after.rstrip(_PAUSES)[-1:]
    return stop if stop in "!?" else "."


_NO_END = DANGLING | _set(
    """
    we you he she they am is are was were be been being do does did have has had will would shall should can could
    may might must not no any some than that this these those what who whose when where why how if so very just
    only also more most both every each much many
    """
)
"""Words a kept part does not end on: a sentence cut to "… we are." or "… the moment will." reads broken."""
_CLAUSES = _set(
    """
    and or but nor so yet because although though while whereas if unless until when where which who whom whose that
    """
)
"""Words that open a clause: a kept part may go on from one after a cut."""
_PREPOSITIONS = _set(
    """
    in on at for from with into onto upon about after before over under through during without within against
    toward towards between among as than like via per including across around behind beyond along despite near
    throughout since
    """
)
"""Words that open a phrase tied to the word before them: a kept part may end before one, never go on from one
("With four years of growth, of our economy" reads broken). Not "of" ("Just 500." of "Just 500 of these teachers
have been certified"), "to" (mostly "need to improve") nor "by" ("many of our educators, led.")."""


_INTRODUCERS = _PREPOSITIONS | _set("if when because although though while unless until since once")
"""A sentence that opens with one of these opens with a phrase that cannot stand alone ("With four years of
growth, we have won …"): a strict cut never ends the sentence inside it."""


def _sentence(pending: list[tuple[str, str]], sentence: int, stop: str, ends: Ends, intro: bool) -> list[SourceWord]:
    out: list[SourceWord] = []
    intro = intro and pending[0][0].lower() in _INTRODUCERS
    before = _CLAUSES | _PREPOSITIONS | (_set("of to") if ends == "phrase" else frozenset())
    for n, (core, after) in enumerate(pending, 1):
        low = core.lower()
        leads = n == 1 or bool(out and out[-1].pause)
        pause = after[-1] if after and after[-1] in _PAUSES else ""
        phrase_end = ends == "word" or bool(pause) or n == len(pending) or pending[n][0].lower() in before
        adverb = low.endswith("ly") and len(low) > 4  # "we should quickly." leaves its verb behind
        endable = n == len(pending) or (low not in _NO_END and phrase_end and not intro and not adverb)
        intro = intro and not pause  # the opening phrase ends at the sentence's first pause
        out.append(SourceWord(core, sentence, leads or low in _CLAUSES, leads, endable, pause, stop))
    return out


# ----- which route a rewrite takes ---------------------------------------------------------------------------


RouteKind = Literal["clauses", "selection", "prompt"]
CLAUSE_CHOICES = 4
"""How many texts of whole parts the grammar offers the model to choose among (the best by facts kept)."""


@dataclass(frozen=True)
class Route:
    """How a rewrite of `source` is written: by whole parts (`kind` "clauses": `grammar` admits only `choices`, the
    best texts of whole sentences and clauses), by selection (`grammar`, the GBNF of the writer's own words) or by
    the prompt (`grammar` None); `note` says which route ran, and why when it is not the best one."""

    source: str
    grammar: str | None = None
    note: str | None = None
    kind: RouteKind = "prompt"
    choices: tuple[str, ...] = ()

    @property
    def selection(self) -> bool:
        return self.grammar is not None

    @property
    def described(self) -> str:
        """The route in a writer's words, as the CLI and the page say it."""
        return {
            "clauses": "shortened by whole sentences, clauses and phrases of your own text (the facts kept first)",
            "selection": "shortened by selecting your own words at phrase ends (no choice of whole clauses fits)",
            "prompt": "rewritten by the model from the rewrite prompt",
        }[self.kind]


def route(source: str, mode: Mode, lang: Lang, unit: Unit, target: Target, llama_grammar: bool) -> Route:
    """Whole parts where they keep the meaning and are guaranteed (shortening English words in exact mode on a
    llama.cpp grammar), selection where no choice of whole parts reaches the length, the prompt otherwise."""
    n = count(source, unit)
    if target.high < n and mode == "exact" and lang == "zh" and unit == "zh_chars" and llama_grammar:
        return _chinese(source, target)
    if not (target.high < n and mode == "exact" and lang == "en" and unit == "en_words" and llama_grammar):
        return Route(source)
    if n > MAX_SELECTION_WORDS:
        note = (
            f"The text has {n} words, more than the {MAX_SELECTION_WORDS} that shortening by selection takes, so the "
            "model rewrote it in its own words; shorten it in parts to keep only your own words."
        )
        return Route(source, note=note)
    low, high = selection_bounds(target)
    found = clauses.shorten(source, low, high, best=CLAUSE_CHOICES)
    found = found or clauses.shorten(source, low, high, best=CLAUSE_CHOICES, relaxed=True)  # a noun modifier too
    found = [c for c in found if low <= count(c.text, unit) <= high]
    if found:
        main = main_clause(source)
        kept = [check(source, c.text, main).kept for c in found]
        choices = tuple(c.text for c, k in zip(found, kept, strict=True) if k == max(kept))  # the most facts only
        note = (
            "Shortened by whole sentences, clauses and phrases of your text: the model chose among the "
            f"{len(choices)} best texts of this length (those that keep the most facts)."
        )
        return Route(source, clause_grammar(choices), note, "clauses", choices)
    try:
        note = (
            f"No choice of whole sentences and clauses of your text has {target.describe(unit)}, so words were "
            "selected at phrase ends instead; a sentence may read cut (a nearby length keeps whole clauses)."
        )
        return Route(source, selection_rules(source, low, high), note, "selection")
    except ValueError:  # too few words, or no spread of them that fits: the model rewrites it instead
        return Route(source)


def _chinese(source: str, target: Target) -> Route:
    """A Chinese shortening by whole clauses (clauses_zh.py, jieba's segmentation), or the prompt if none fits."""
    from . import clauses_zh

    if count(source, "zh_chars") > MAX_SELECTION_WORDS:
        return Route(source)
    low, high = selection_bounds(target)
    found = clauses_zh.shorten(source, low, high, best=CLAUSE_CHOICES)
    if not found:
        note = (
            f"No choice of whole sentences and clauses of your text has {target.describe('zh_chars')}, so the model "
            "rewrote it."
        )
        return Route(source, note=note)
    kept = [clauses_zh.check(source, t).kept for t in found]
    choices = tuple(t for t, k in zip(found, kept, strict=True) if k == max(kept))
    note = (
        "Shortened by whole sentences, clauses and modifiers of your text (jieba's segmentation): the model chose "
        f"among the {len(choices)} best texts of this length (those that keep the most facts)."
    )
    return Route(source, clause_grammar(choices), note, "clauses", choices)


def clause_grammar(choices: tuple[str, ...]) -> str:
    """GBNF admitting exactly one of `choices`, each as written."""
    return "root ::= " + " | ".join(json.dumps(c, ensure_ascii=False) for c in choices) + "\n"


LENGTHENING_MODELS = ("embedded",)
"""Models that cannot lengthen a text faithfully (SmolLM2-135M invents facts or writes number lists)."""


def lengthening_refusal(instruction: str, unit: Unit, target: Target, model: str) -> str | None:
    """Why a lengthening of the writer's text is refused on `model`, or None: the embedded model cannot add to a text
    without inventing facts or writing filler, so it is not asked to (a verified list of numbers is no rewrite)."""
    source = rewrite_source(instruction)
    if source is None or model not in LENGTHENING_MODELS or target.low <= count(source, unit):
        return None
    return (
        f"the embedded model cannot make your text longer faithfully (it has {count(source, unit)} "
        f"{unit_words(unit)}, the target at least {target.low}): at 135M parameters it invents facts or writes filler. "
        "Shorten it here, or lengthen it with a larger model: pull one (python -m capel_ui models pull …) or "
        "choose a hosted model."
    )


def unit_words(unit: Unit) -> str:
    return {"en_words": "words", "zh_chars": "characters", "chars": "characters"}.get(unit, "units")


def plan(instruction: str, mode: Mode, lang: Lang, unit: Unit, target: Target, llama_grammar: bool) -> Route | None:
    """The route of a rewrite run (its instruction built by `prompts.REWRITE`), or None for any other run."""
    source = rewrite_source(instruction)
    return None if source is None else route(source, mode, lang, unit, target, llama_grammar)


SELECTION_TIERS: tuple[tuple[Ends, bool, bool, float], ...] = (
    ("clause", True, False, 0.12),
    ("clause", True, False, 0.25),
    ("phrase", True, False, 0.12),
    ("phrase", True, False, 0.25),
    ("phrase", False, False, 0.12),
    ("phrase", False, False, 0.25),
    ("word", False, False, 0.12),
    ("word", False, True, 0.12),
)
"""(where a kept part may end, not inside an opening phrase, drops inside a phrase, slack), tried in turn until a
selection of the asked length exists: the strictest ends first (a short text may offer too few of them for an exact
count), spread evenly, then more loosely; last, words may be dropped inside a phrase."""


def selection_rules(source: str, low: int, high: int) -> str:
    """The GBNF of a selection rewrite of `source` keeping `low` to `high` of its words, in the strictest tier that
    can reach that length (ValueError if none can: the text has too few words)."""
    for n, (ends, intro, inner, slack) in enumerate(SELECTION_TIERS, 1):
        words = source_words(source, ends=ends, intro=intro)
        try:
            return selection_grammar(words, low, high, inner_drops=inner, slack=slack)
        except ValueError:
            if n == len(SELECTION_TIERS):
                raise
    raise AssertionError("unreachable")


def selection_bounds(target: Target) -> tuple[int, int]:
    """The kept words a selection aims at: exactly N, a range as asked, and at most N as 80-100% of N (a writer who
    gives a limit wants the room used, and a selection is never over it)."""
    if target.kind == "at_most":
        return max(1, -(-target.high * 4 // 5)), target.high
    return target.low, target.high


# ----- no preamble, no commentary -----------------------------------------------------------------------------

_OPENER = re.compile(r"^(?:sure|certainly|of course|okay|ok|absolutely|here(?:'s| is| are)|below is)\b", re.IGNORECASE)
_LABEL = re.compile(
    r"^\W{0,3}(?:[^\W\d_][\w'’-]*\s+){0,5}?"
    r"(?:text|version|rewrite|rewritten|revised|revision|edit|edited|editing|summary|shortened|expanded|output|"
    r"result|answer)\b[^:\n]{0,100}:\W{0,3}\s*",
    re.IGNORECASE,
)
_COMMENTARY = re.compile(
    r"\n\s*\n\s*\W{0,3}(?:note|notes|explanation|changes|word count|i hope|i have|i've"
    r"|this (?:version|rewrite|revised))\b.*\Z",
    re.IGNORECASE | re.DOTALL,
)
_QUOTES = (('"', '"'), ("“", "”"), ("'", "'"))
PREAMBLE_WORDS = 30
"""A first line of at most this many words that ends with a colon is a preamble ("Here is the shorter text:")."""


def strip_preamble(text: str, source: str = "") -> str:
    """The rewrite without what a model says around it: leading lines that introduce it ("Here is the rewritten
    text:", "Sure! Here's a shorter version:", a short line ending with a colon), a label before it on its first
    line ("Revised text: …"), a trailing "Note: …" paragraph after a blank line, and quotes around the whole.
    Nothing the writer's own `source` holds is cut ("This leads to the fourth principle: Learning …" stays)."""
    body = text.strip()
    while "\n" in body:
        first, rest = body.split("\n", 1)
        line = first.strip()
        intro = line.endswith(":") and len(line.split()) <= PREAMBLE_WORDS
        if not (intro or (_OPENER.match(line) and line[-1:] in ":!.")) or not rest.strip() or _in(line, source):
            break
        body = rest.strip()
    first = body.split("\n", 1)[0]
    cut = first.find(":") + 1 if _OPENER.match(first) and 0 < first.find(":") < 200 else 0
    label = _LABEL.match(body)
    cut = cut or (label.end() if label else 0)
    if cut and not _in(body[:cut], source):  # "Here is the revised text …: The city voted."
        body = body[cut:].strip()
    tail = _COMMENTARY.search(body)
    if tail and not _in(tail.group(), source):
        body = body[: tail.start()].strip()
    for open_, close in _QUOTES:
        if len(body) > 2 and body.startswith(open_) and body.endswith(close) and open_ not in body[1:-1]:
            body = body[1:-1].strip()
    return body


def _in(part: str, source: str) -> bool:
    """Whether `part` (a line or label a model may have added) is the writer's own text."""
    words = " ".join(_WORD.findall(part.lower()))
    return bool(words) and words in " ".join(_WORD.findall(source.lower()))


# ----- faithfulness -------------------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_FUNCTION_WORDS = DANGLING | _set(
    """
    is are was were be been being am do does did done have has had having will would shall should can could may
    might must not no yes this that these those there here it they them we us you he she him me who what when
    where why how all any some more most other so then than too just only also now up out over about after before
    again once off own same both few s t don doesn won isn aren wasn weren hasn haven hadn ll re ve d m
    """
)


@dataclass(frozen=True)
class Faithfulness:
    """How much of the writer's text a rewrite kept: `facts` the source's facts it kept and lost and the facts it
    invented (facts.py; English), `kept` the share of the source's content words found in the text, `new` the
    share of the text's words that are not in the source (a preamble, an invented fact)."""

    kept: float
    new: float
    facts: FactCheck | None = None

    def describe(self) -> str:
        if self.facts is not None:
            return f"{self.facts.describe()} · {self.new:.0%} words not in your text"
        return f"keeps {self.kept:.0%} of your content words · {self.new:.0%} words not in your text"

    @property
    def rank(self) -> tuple[float, float]:
        """Best first when sorted in reverse: the share of facts kept less the invented ones, then content words."""
        if self.facts is None:
            return (self.kept - self.new, self.kept)
        return (self.facts.share - 0.5 * len(self.facts.invented) / max(1, self.facts.total), self.kept - self.new)


def main_clause(source: str) -> str:
    """The main clause of the source's first sentence: what it says with every droppable part dropped."""
    sents = clauses.sentences(source)
    return sents[0].core if sents else ""


def faithfulness(source: str, text: str, lang: Lang = "en") -> Faithfulness:
    """The faithfulness of `text` as a rewrite of `source` (see `Faithfulness`); words are compared lower-cased,
    without a possessive 's; Chinese compares Han characters, and its facts are clauses_zh's."""
    src, out = _units(source, lang), _units(text, lang)
    content = {w for w in src if w not in _FUNCTION_WORDS}
    have = set(out)
    kept = sum(1 for w in content if w in have) / len(content) if content else 1.0
    known = set(src)
    new = sum(1 for w in out if w not in known) / len(out) if out else 0.0
    if lang == "zh":
        from .clauses_zh import check as check_zh

        return Faithfulness(round(kept, 4), round(new, 4), check_zh(source, text))
    return Faithfulness(round(kept, 4), round(new, 4), check(source, text, main_clause(source)))


def saved_faithfulness(run: object) -> Faithfulness | None:
    """A saved run's faithfulness: as stored with it, or worked out for a rewrite saved before it was stored;
    None for a run that is no rewrite."""
    kept, new = getattr(run, "source_kept", None), getattr(run, "source_new", None)
    stored = getattr(run, "source_facts", None)
    if kept is not None and stored is not None:
        return Faithfulness(kept, new or 0.0, FactCheck.from_json(json.loads(stored)) if stored else None)
    source = rewrite_source(getattr(run, "instruction", "") or "")
    return None if source is None else faithfulness(source, getattr(run, "text", ""), getattr(run, "lang", "en"))


def faithfulness_fields(found: Faithfulness | None) -> dict[str, object]:
    """`source_kept`, `source_new` and `source_facts` of a rewrite, as stored with the run; nothing for other runs."""
    if found is None:
        return {}
    facts = json.dumps(found.facts.as_json(), ensure_ascii=False) if found.facts is not None else None
    return {"source_kept": found.kept, "source_new": found.new, "source_facts": facts}


def _units(text: str, lang: Lang) -> list[str]:
    if lang == "zh":
        from .counting import HAN

        return HAN.findall(text)
    return [_norm(w) for w in _WORD.findall(text)]


def _norm(word: str) -> str:
    low = word.lower().replace("’", "'")
    return low[:-2] if low.endswith("'s") else low

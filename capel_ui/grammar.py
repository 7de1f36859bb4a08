"""The guaranteed modes' grammars, written once and emitted in every syntax a server takes.

`exact` admits N words (English: one space between words, the last word ending a sentence) or N Chinese
characters (punctuation allowed after any of them). `exact-countdown` forces the CAPEL markers, one unit
after each. The unit rules are chosen so that en_words and lifebench (English), and zh_chars and lifebench
(Chinese), all count each unit as exactly one.

A grammar is a small expression tree (expr.py: `Lit`, `Chars`, `Ref`, `Seq`, `Alt`, `Rep`): a start expression
plus named unit rules. `Grammar.render()` writes it as GBNF (llama.cpp, vLLM, SGLang's EBNF), Lark (OpenAI's custom
tools and LLGuidance: unit rules become terminals) or one regular expression (Rust `regex` / JSON-schema
`pattern`: unit rules are inlined). A new rule set (a word list, an at-most grammar) is a new tree; every
syntax follows from it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from .expr import (
    GBNF,
    SYNTAXES,
    Alt,
    Chars,
    Expr,
    Lit,
    Ref,
    Rep,
    Seq,
    Syntax,
    group,
    json_lit,
    lark,
    opt,
    regex,
    render,
)
from .lexicon import ABBREVIATIONS, ABBREVIATIONS_ENDING, NUMBER_EXPR, NUMBER_PAUSE
from .prompts import validate_target
from .vocab import LANG_LABELS, Lang, Mode, Unit, counts_room, grammar_kind, unit_label

# ----- a grammar --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grammar:
    """A start expression, its unit rules and its steps; `render(syntax)` is the text a server takes.

    `rules` are the units (`word`, `wend`, ...): a word list replaces them (`with_word_list`), LLGuidance lexes each
    as one terminal. `steps` are named parts of the text's shape (a limit's countdown, `countdown_rules`): kept
    under a word list, parser rules in Lark, each referring only to steps before it (so a regex inlines them in
    one pass, however many)."""

    start: Expr
    rules: tuple[tuple[str, Expr], ...] = ()
    steps: tuple[tuple[str, Expr], ...] = ()

    def render(self, syntax: Syntax = "gbnf") -> str:
        if syntax == "gbnf":
            return self._gbnf()
        if syntax == "lark":
            return self._lark()
        if syntax == "regex":
            return self.regex()
        raise ValueError(f"unknown grammar syntax {syntax!r}; use one of {', '.join(SYNTAXES)}")

    def _gbnf(self) -> str:
        lines = [f"root ::= {render(self.start, GBNF)}"]
        lines += [f"{name} ::= {render(expr, GBNF)}" for name, expr in self.steps + self.rules]
        return "\n".join(lines) + "\n"

    def _lark(self, rules: frozenset[str] = frozenset(), end: str | None = None) -> str:
        """Unit rules as terminals (upper case), so LLGuidance lexes each unit as one lexeme; the names in `rules`
        stay parser rules (lower case); `end`, a special token named after the whole text."""
        parser_rules = rules | {name for name, _ in self.steps}
        d = lark(lambda n: n if n in parser_rules else n.upper())
        start = render(self.start, d)
        lines = [f"start: ({start}) {end}" if end else f"start: {start}"]
        lines += [f"{name}: {render(expr, d)}" for name, expr in self.steps]
        lines += [f"{name.upper()}: {render(expr, d)}" for name, expr in self.rules]
        return "\n".join(lines) + "\n"

    def json_schema(self) -> dict[str, Any]:
        """A JSON schema for one string whose `pattern` is this grammar (Ollama's and LM Studio's `format`)."""
        return {"type": "string", "pattern": f"^({self.regex()})$"}

    def regex(self) -> str:
        """One regular expression (no anchors) with every unit rule inlined."""
        rules: Mapping[str, Expr] = dict(self.rules)
        done: dict[str, str] = {}  # the steps rendered so far, each once
        d = regex(lambda n: f"({done[n]})" if n in done else group(rules[n], d))
        for name, expr in self.steps:
            done[name] = render(expr, d)
        return render(self.start, d)


# ----- the unit rules ------------------------------------------------------------------------------------------

# An English word: starts and ends with a letter or digit, may hold ' or - inside, then optional punctuation.
# At most 16 characters: a small model otherwise pads words into long hyphen chains and runs out of tokens.
_EN_WCORE = Seq((Chars("A-Za-z0-9"), opt(Seq((Rep(Chars("A-Za-z0-9'-"), 0, 14), Chars("A-Za-z0-9"))))))
_EN_PLAIN_RULES: tuple[tuple[str, Expr], ...] = (
    ("word", Seq((Ref("wcore"), opt(Chars(",;:.!?"))))),
    ("wend", Seq((Ref("wcore"), Chars(".!?")))),
    ("wcore", _EN_WCORE),
)
"""The plain English word, as LIFEBench counts one (it counts "3:30" or "a.m." as two)."""

# A number written whole (lexicon.NUMBER_EXPR) and an abbreviation with its dots (a.m., U.S., e.g.) are one en_words
# word; a number goes on inside a text with no stop or colon after it.
_EN_LETTERED = Seq((Chars("A-Za-z"), opt(Seq((Rep(Chars("A-Za-z0-9'-"), 0, 14), Chars("A-Za-z0-9"))))))
_EN_RULES: tuple[tuple[str, Expr], ...] = (
    (
        "word",
        Alt(
            (
                Seq((Ref("wcore"), opt(Chars(",;:.!?")))),
                Seq((Ref("num"), opt(Chars(NUMBER_PAUSE)))),
                Seq((Ref("abbr"), opt(Chars(",;:")))),
            )
        ),
    ),
    ("wend", Alt((Seq((Alt((Ref("wcore"), Ref("num"))), Chars(".!?"))), Ref("abbrend")))),
    ("wcore", _EN_LETTERED),
    ("num", NUMBER_EXPR),
    ("abbr", Alt(tuple(Lit(a) for a in ABBREVIATIONS))),
    ("abbrend", Alt(tuple(Lit(a) for a in ABBREVIATIONS_ENDING))),
)
"""English words as en_words counts them (whitespace-separated): a number or an abbreviation is written whole."""

# A Chinese unit: one CJK ideograph (base block: what models write), optionally followed by punctuation.
_ZH_RULES: tuple[tuple[str, Expr], ...] = (
    ("word", Seq((Ref("han"), opt(Chars("，、；：。！？"))))),
    ("wend", Seq((Ref("han"), Chars("。！？")))),
    ("han", Chars("一-鿿")),
)

_SEPARATOR: dict[Lang, str] = {"en": " ", "zh": ""}


def supports(lang: Lang, unit: Unit) -> bool:
    """Whether the guaranteed modes can promise an exact count in `unit` for `lang`."""
    return grammar_kind(lang, unit) is not None


def whole_units(unit: Unit | None) -> bool:
    """Whether a number or an abbreviation is one unit in `unit` (en_words: whitespace-separated; LIFEBench counts
    "3:30" as two)."""
    return unit != "lifebench"


def _rules(lang: Lang, unit: Unit | None = None) -> tuple[tuple[str, Expr], ...]:
    if lang == "en":
        return _EN_RULES if whole_units(unit) else _EN_PLAIN_RULES
    if lang == "zh":
        return _ZH_RULES
    raise ValueError(f"unknown language {lang!r}; use en or zh")


def exact_rules(lang: Lang, target: int, unit: Unit | None = None) -> Grammar:
    """Exactly `target` units of plain prose, the last one closing a sentence."""
    validate_target(target)
    rules = _rules(lang, unit)
    if target == 1:
        return Grammar(Ref("wend"), rules)
    sep = _SEPARATOR[lang]
    unit = Seq((Ref("word"), Lit(sep))) if sep else Ref("word")
    return Grammar(Seq((Rep(unit, target - 1, target - 1), Ref("wend"))), rules)


def countdown_rules(lang: Lang, target: int, unit: Unit | None = None, low: int | None = None) -> Grammar:
    """The CAPEL countdown with markers forced: `<N>` unit `<N-1>` unit ... `<1>` unit `<0>`. With `low` below
    `target` (a limit or a range) the markers show the room left and, once `low` units are written, a unit that
    closes a sentence may end the text at once: `<N>` unit ... `<k>` unit. `<0>`."""
    validate_target(target)
    if low is not None and low < target:
        return _room_countdown(lang, target, low, unit)
    items: list[Expr] = []
    for k in range(target, 1, -1):
        items += [Lit(f"<{k}>"), Ref("word")]
    items += [Lit("<1>"), Ref("wend"), Lit("<0>")]
    return Grammar(Seq(tuple(items)), _rules(lang, unit))


def _room_countdown(lang: Lang, target: int, low: int, unit: Unit | None) -> Grammar:
    """`countdown_rules` under a limit: one step per marker (`c<k>`: the marker, then a unit and the next step, or,
    from the `low`-th unit on, a unit that closes a sentence and `<0>`)."""
    _check_bounds(low, target)
    steps: list[tuple[str, Expr]] = [("c1", Seq((Lit("<1>"), Ref("wend"), Lit("<0>"))))]
    for k in range(2, target + 1):
        go_on = Seq((Ref("word"), Ref(f"c{k - 1}")))
        can_end = target - k + 1 >= low  # units written once this marker's unit is
        body = Alt((go_on, Seq((Ref("wend"), Lit("<0>"))))) if can_end else go_on
        steps.append((f"c{k}", Seq((Lit(f"<{k}>"), body))))
    return Grammar(Ref(f"c{target}"), _rules(lang, unit), tuple(steps))


def grammar_for(
    mode: Mode, lang: Lang, target: int, unit: Unit | None = None, low: int | None = None
) -> AnyGrammar | None:
    """The grammar a mode sends, or None for the modes that send none (`low`: a limit's or a range's least)."""
    if mode == "exact":
        return exact_rules(lang, target, unit)
    if mode == "exact-countdown":
        if unit is not None and counts_room(lang, unit):
            return char_room_grammar(lang, *char_bounds(lang, unit, low or target, target))
        return countdown_rules(lang, target, unit, low)
    return None


def exact_grammar(
    lang: Lang, target: int, syntax: Syntax = "gbnf", *, words: str | None = None, unit: Unit | None = None
) -> str:
    """`exact_rules` as text in `syntax`; `words` (`lexicon_rules` in the same syntax) replaces the unit rules."""
    return _text(exact_rules(lang, target, unit), syntax, words)


def countdown_grammar(
    lang: Lang,
    target: int,
    syntax: Syntax = "gbnf",
    *,
    words: str | None = None,
    unit: Unit | None = None,
    low: int | None = None,
) -> str:
    """`countdown_rules` as text in `syntax`; `words` (`lexicon_rules` in the same syntax) replaces the unit rules."""
    return _text(countdown_rules(lang, target, unit, low), syntax, words)


def _text(grammar: Grammar, syntax: Syntax, words: str | None) -> str:
    if words is None:
        return grammar.render(syntax)
    if syntax not in WORD_LIST_SYNTAXES:
        raise ValueError("a word list is GBNF or LLGuidance Lark text (llama.cpp only); it has no other syntax")
    return with_word_list(grammar, words, syntax)  # type: ignore[arg-type]


# ----- the word list (llama.cpp only) --------------------------------------------------------------------------

WordListSyntax = Literal["gbnf", "lark"]
WORD_LIST_SYNTAXES: tuple[WordListSyntax, ...] = ("gbnf", "lark")
LLGUIDANCE = "%llguidance {}\n"
"""The first line that tells llama.cpp a grammar is LLGuidance's Lark, not GBNF (a build with LLGuidance)."""
WORD_LIST_END = frozenset({"word", "wend"})
"""In LLGuidance Lark, a word of the word list is a parser rule (a word terminal, then a punctuation terminal), not
one terminal. Where a grammar lets a word be the last or not (a limit, a range, a closing sentence), both are lexed
at once. Two terminals that share the whole 20,000-word list and differ only in their punctuation make LLGuidance
give up on llama.cpp's real tokens ("lexer error: too many expressions constructed; stopping"), and llama.cpp then
writes with no grammar at all: "at most 30 words" came back 35. And a `word` terminal with its punctuation inside
is lexed greedily: "Paris." was always a word that goes on, never the last one, so a limit ran to its ceiling
("The capital of France is Paris. Please make it a little more concise. …", 30 of at most 30)."""


def lexicon_rules(
    lang: Lang, own_text: str = "", syntax: WordListSyntax = "gbnf", unit: Unit | None = None, numbers: bool = True
) -> str:
    """Word-list `word`/`wend` rules as GBNF text, or as Lark terminals for LLGuidance (llama.cpp only; about
    350 kB, built once per process).

    English: wordfreq's frequent words, numbers (unless `numbers` is False), and the words of `own_text` (the
    instruction or draft: names, brands) the list lacks; the last word never a dangling "of"/"the". Chinese: a real
    character list.
    """
    from . import lexicon

    if lang == "en":
        extra = lexicon.instruction_words(own_text)
        whole = whole_units(unit)
        if syntax == "gbnf":
            return lexicon.english_lexicon_rules(extra, whole, numbers)
        return lexicon.english_lexicon_lark(extra, whole, numbers)
    if lang == "zh":
        return lexicon.chinese_lexicon_rules() if syntax == "gbnf" else lexicon.chinese_lexicon_lark()
    raise ValueError(f"unknown language {lang!r}; use en or zh")


def with_word_list(grammar: Grammar, words: str, syntax: WordListSyntax = "gbnf", end: str | None = None) -> str:
    """`grammar` as text, its unit rules (`word`, `wend`) replaced by the word list's `words` in the same syntax:
    GBNF for llama.cpp's own engine, or Lark (marked `%llguidance`) where llama.cpp was built with LLGuidance.

    The list is written as text, not as a tree: it is only ever sent to llama.cpp, and at 20k words a
    tree rendered per request would cost more than the request's own grammar work.
    """
    if syntax == "lark":
        # `end`: the model's end-of-turn token (`Capabilities.end_token`): LLGuidance stops only on a named one
        start = Grammar(_spaced_words(grammar.start), steps=grammar.steps)
        return LLGUIDANCE + start._lark(WORD_LIST_END, end) + words.strip() + "\n"
    return Grammar(grammar.start, steps=grammar.steps).render(syntax) + words.strip() + "\n"


_WORD_THEN_SPACE = Seq((Ref("word"), Lit(" ")))


def _spaced_words(start: Expr) -> Expr:
    """An exact count of English words (`(word " "){n} wend`) with each word but the last and the space after it as
    one LLGuidance terminal, `WORD_SPACE` (lexicon._word_space: what it saves): the model's word tokens (" house")
    then never end a terminal inside them. The same texts are admitted. The last word keeps its rules (`wend`), and
    so does a range or a limit, whose words may each be the last: a word terminal with its stop inside would be read
    on past the end ("Paris." read as a word that goes on, WORD_LIST_END)."""
    if not isinstance(start, Seq):
        return start
    spaced = (Rep(Ref("word_space"), i.lo, i.hi) if _exact_words(i) else i for i in start.items)
    return Seq(tuple(spaced))


def _exact_words(item: Expr) -> bool:
    return isinstance(item, Rep) and item.lo == item.hi and item.item == _WORD_THEN_SPACE


AnyGrammar = Grammar | str
"""The one type a grammar travels as: a `Grammar` every syntax can render, or its text as sent (GBNF: a character
limit, a word list, a rewrite's own words; `%llguidance` Lark where llama.cpp was built with LLGuidance)."""


def grammar_text(grammar: AnyGrammar, syntax: Syntax) -> str | None:
    """The text of `grammar` in `syntax`. A plain string is GBNF text (the character limits, the word list): it
    has a Lark form, written by LLGuidance's own converter (the engine that reads it at OpenAI), and no regex."""
    if isinstance(grammar, Grammar):
        return grammar.render(syntax)
    if syntax == "lark":
        from llguidance.gbnf_to_lark import gbnf_to_lark

        return gbnf_to_lark(grammar)
    return grammar if syntax == "gbnf" else None


_ANCHOR_WORD = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9'-]{0,14}[A-Za-z0-9])?")


def starting_with(grammar: Grammar, first: str, pause: str = "") -> Grammar:
    """An English word grammar (N-1 `word`s then `wend`, or a range of them) whose first word is `first`, with the
    `pause` (, ; :) the writer put after it (a rewrite starts as the writer's text does: no "Here is the rewritten
    text:" can open it). Returned unchanged when `first` is no plain word or the grammar has no leading run of
    words (a one-word target)."""
    start = grammar.start
    if not (isinstance(start, Seq) and isinstance(start.items[0], Rep) and _ANCHOR_WORD.fullmatch(first)):
        return grammar
    rep, rest = start.items[0], start.items[1:]
    if rep.hi < 1 or pause not in ("", ",", ";", ":"):
        return grammar
    head: tuple[Expr, ...] = (Lit(first + pause + " "),)
    more = (Rep(rep.item, max(rep.lo - 1, 0), rep.hi - 1),) if rep.hi > 1 else ()
    return Grammar(Seq((*head, *more, *rest)), grammar.rules)


# --- bounded targets: at most N, between A and B (issue 13) -----------------------------------------------


def bounded_word_rules(lang: Lang, low: int, high: int, unit: Unit | None = None) -> Grammar:
    """From `low` to `high` words (or Han characters) of plain prose, the last one closing a sentence."""
    _check_bounds(low, high)
    rules = _rules(lang, unit)
    if high == 1:
        return Grammar(Ref("wend"), rules)
    sep = _SEPARATOR[lang]
    unit = Seq((Ref("word"), Lit(sep))) if sep else Ref("word")
    return Grammar(Seq((Rep(unit, low - 1, high - 1), Ref("wend"))), rules)


def bounded_word_grammar(lang: Lang, low: int, high: int, syntax: Syntax = "gbnf") -> str:
    """`bounded_word_rules` as text in `syntax`."""
    return bounded_word_rules(lang, low, high).render(syntax)


# The character grammars are a chain of states, one per character still allowed, so the grammar itself keeps
# the count: `s<k>` starts a word, `w<k>` follows a letter (English), `h<k>`/`g<k>` likewise for Han characters.
# Every character they admit is one grapheme, one X weighted character and one GSM-7 septet (English: letters,
# digits, space, ' , ; : . ! ?; no URL can form because a full stop is always followed by a space or the end).
_EN_LETTER = "[A-Za-z0-9]"
_EN_PAUSE = "[,;:]"
_EN_STOP = "[.!?]"
_ZH_HAN = "[一-鿿]"
_ZH_PAUSE = "[，、；：]"
_ZH_STOP = "[。！？]"


def _en_char_rules(low: int, high: int, room: bool = False) -> list[str]:
    """The English rules, k characters still allowed: `s<k>` starts a word, `w<k>` follows a letter, `n<k>` a digit,
    `p<k>` a "%"; a stop written with k left makes the text `high - k + 1` long. A number is written whole: a dot,
    comma, colon or slash only between its digits (3:30, 1.6, 3,400, 11/03), a "$" before it, a "%" or letters
    after it (12%, 21st, 9am); no stop or colon ends it inside a text ("3: 30 PM", "a 12. percent").

    With `room` the text is a room countdown (`parser.MarkerParser`): each word starts with the marker `<k>`, the
    characters still allowed, which stands for the space before it; the text ends with `<0>`."""
    states: dict[str, list[tuple[str, str | None]]] = {}
    gap, close = ("", '"<0>"') if room else ('" "', "")  # the marker that starts the next word stands for its space
    for k in range(high, 0, -1):
        end: list[tuple[str, str | None]] = [(f"{_EN_STOP} {close}".strip(), None)] if high - k + 1 >= low else []
        space = [(gap, f"s{k - 1}")]
        after = [(f"{_EN_PAUSE} {gap}".strip(), f"s{k - 2}"), (f"{_EN_STOP} {gap}".strip(), f"s{k - 2}")]
        mark = f'"<{k}>" ' if room else ""
        starts = [(f"{mark}[A-Za-z]", f"w{k - 1}"), (f"{mark}[0-9]", f"n{k - 1}"), (f'{mark}"$" [0-9]', f"n{k - 2}")]
        states[f"s{k}"] = starts
        states[f"w{k}"] = [(_EN_LETTER, f"w{k - 1}"), ('"\'" [A-Za-z]', f"w{k - 2}"), *space, *after, *end]
        states[f"n{k}"] = [
            ("[0-9]", f"n{k - 1}"),
            ("[.,:/] [0-9]", f"n{k - 2}"),
            ("[a-z]", f"w{k - 1}"),
            ('"%"', f"p{k - 1}"),
            *space,
            (f"[,;!?] {gap}".strip(), f"s{k - 2}"),
            *end,
        ]
        states[f"p{k}"] = [*space, *after, *end]
    return [f"{name} ::= {' | '.join(alts)}" for name, alts in _live(states).items()]


def _live(states: dict[str, list[tuple[str, str | None]]]) -> dict[str, list[str]]:
    """`states` (each a list of: what is written, the state it leads to or None for the end) without those that
    can never reach the end, each as its GBNF alternatives."""
    alive: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, alts in states.items():
            if name not in alive and any(nxt is None or nxt in alive for _, nxt in alts):
                alive.add(name)
                grew = True
    return {
        name: [f"{what} {nxt}".strip() if nxt else what for what, nxt in alts if nxt is None or nxt in alive]
        for name, alts in states.items()
        if name in alive
    }


def _zh_char_states(k: int, used_at_end: int, low: int, room: bool = False) -> list[str]:
    """The rules `h<k>` and `g<k>` for Chinese: Han characters, a punctuation mark after any of them (with `room`,
    each Han character after the marker `<k>` of the characters still allowed, and `<0>` at the end)."""
    han = f'"<{k}>" {_ZH_HAN}' if room else _ZH_HAN
    rules = [f"h{k} ::= {han} g{k - 1}"] if k >= 2 else []
    alts = []
    if k >= 2:
        alts.append(f"{han} g{k - 1}")
    if k >= 3:
        alts += [f"{_ZH_PAUSE} h{k - 1}", f"{_ZH_STOP} h{k - 1}"]
    if used_at_end >= low:
        alts.append(f'{_ZH_STOP} "<0>"' if room else _ZH_STOP)
    if alts:
        rules.append(f"g{k} ::= " + " | ".join(alts))
    return rules


def char_grammar(lang: Lang, low: int, high: int) -> str:
    """From `low` to `high` characters (every one counted, punctuation and spaces included), ending at a word
    boundary with a sentence end (. ! ? or 。！？). `low == high` is exactly N characters.

    GBNF text only: one rule per character still allowed would blow up if inlined into a single regex."""
    _check_bounds(low, high)
    if high < 2:
        raise ValueError("a character target must allow at least 2 characters (a word and its full stop)")
    if lang == "en":
        return "\n".join([f"root ::= s{high}", *_en_char_rules(low, high)]) + "\n"
    if lang != "zh":
        raise ValueError(f"unknown language {lang!r}; use en or zh")
    rules = [f"root ::= h{high}"]
    for k in range(high, 0, -1):
        rules += _zh_char_states(k, high - k + 1, low)
    return "\n".join(rules) + "\n"


def char_room_grammar(lang: Lang, low: int, high: int) -> str:
    """`char_grammar` as a room countdown: `<30>Bike<25>repair<18>in<15>Portland.<0>` under at most 30 characters
    (the markers show the characters still allowed; `<0>` closes a sentence from the `low`-th character on); in
    Chinese a marker before each Han character (`<10>今<9>天<8>好，<6>走。<0>`). GBNF text, as `char_grammar`."""
    _check_bounds(low, high)
    if high < 2:
        raise ValueError("a character target must allow at least 2 characters (a word and its full stop)")
    if lang == "en":
        return "\n".join([f"root ::= s{high}", *_en_char_rules(low, high, room=True)]) + "\n"
    if lang != "zh":
        raise ValueError(f"unknown language {lang!r}; use en or zh")
    rules = [f"root ::= h{high}"]
    for k in range(high, 0, -1):
        rules += _zh_char_states(k, high - k + 1, low, room=True)
    return "\n".join(rules) + "\n"


_CHAR_SAMPLES: dict[Lang, str] = {"en": "Az09' ,;:.!?$%", "zh": "一鿿，、；：。！？"}
"""Each kind of character the character grammars write (a class's ends included)."""


@cache
def char_width(lang: Lang, unit: Unit) -> int:
    """The most one character the character grammar writes counts in `unit`, by the unit's own counter: 1, or 2 for
    a Han character or Chinese punctuation by Google Ads' count (every one the Chinese grammar writes is
    double-width), so a limit of N such units is a grammar of N // 2 characters."""
    from .counting import count

    return max(1, *(count(c, unit) for c in _CHAR_SAMPLES[lang]))


def char_bounds(lang: Lang, unit: Unit, low: int, high: int) -> tuple[int, int]:
    """A target from `low` to `high` in `unit` as the character grammar's bounds (characters it writes): the same
    where each counts 1; else within the target whatever it writes (ValueError for a target no whole number of
    characters meets: exactly 29 where each counts 2)."""
    width = char_width(lang, unit)
    if width == 1:
        return low, high
    fewest, most = -(-low // width), high // width
    if fewest > most:
        asked = f"{low}–{high}" if low < high else f"exactly {high}"
        raise ValueError(
            f"{asked} {unit_label(unit)} cannot be written in {LANG_LABELS[lang]}: every character the grammar "
            f"writes counts {width}; ask for {most * width} or {fewest * width}"
        )
    return fewest, most


def target_grammar(lang: Lang, unit: Unit, low: int, high: int) -> AnyGrammar:
    """The `exact` mode grammar for a target from `low` to `high` in `unit` (exactly N: low == high == N); a
    character limit is GBNF text (see `char_grammar`, its bounds in the unit's count: `char_bounds`), a word target
    a `Grammar` every syntax can render."""
    kind = grammar_kind(lang, unit)
    if kind == "chars":
        return char_grammar(lang, *char_bounds(lang, unit, low, high))
    if kind != "words":
        raise ValueError(f"no grammar can guarantee {unit} in {lang}")
    return exact_rules(lang, high, unit) if low == high else bounded_word_rules(lang, low, high, unit)


def _check_bounds(low: int, high: int) -> None:
    validate_target(high)
    if not 1 <= low <= high:
        raise ValueError(f"a range must run from 1 up to its upper bound, got {low}-{high}")


# --- selection: a rewrite that keeps N of the writer's own words (issue 21) ------------------------------------


@dataclass(frozen=True)
class SourceWord:
    """One word of the writer's text as the selection grammar may write it: `core` (no punctuation around it, one
    en_words word), the `pause` (, ; :) that followed it in the text, its sentence and that sentence's `stop`.
    `opens`: it starts a clause (a sentence's first word, a word after a pause, a conjunction or relative), where
    a kept part may go on after a cut; `leads`: a kept sentence may start on it (its first word, or a word after a
    pause: "With crime declining, we are winning" may become "We are winning"). `endable`: a kept part may end on
    it (not on a dangling "the", "of", "we",
    "will"; a sentence's own last word always may)."""

    core: str
    sentence: int
    opens: bool = False
    leads: bool = False
    endable: bool = True
    pause: str = ""
    stop: str = "."

    @property
    def capitalised(self) -> str:
        """The word as a sentence's first word."""
        return self.core[:1].upper() + self.core[1:]


SELECTION_SLACK = 0.12
"""How far (a share of the kept words, at least 2) the kept count may run ahead of or behind an even spread at a
checkpoint: tight enough that every part of the text keeps its share, loose enough to let the model choose."""
SELECTION_SLACK_CAP = 60
"""The slack is at most this many words times its share (7 at 0.12): a fixed width keeps a long text's grammar
linear in its length."""
SELECTION_CHECKPOINT = 16
"""Inside a long sentence, a checkpoint every this many words: it also bounds the grammar at O(M · (slack + 16))."""


@dataclass(frozen=True)
class _Plan:
    """The text's words, looked up in O(1) while the grammar is written, and where the spread is checked: `lo[p]` to
    `hi[p]` words kept once p words were passed, at each checkpoint p (`after[i]`: the first checkpoint at or after
    i; `before[i]` the last one at or before it, 0 at the start)."""

    words: tuple[SourceWord, ...]
    low: int
    high: int
    lo: dict[int, int]
    hi: dict[int, int]
    after: tuple[int, ...]
    before: tuple[int, ...]
    phrase: tuple[int, ...]  # a phrase id per word: a new one where a phrase opens or a sentence starts
    next_phrase: tuple[int, ...]  # the first word after i that opens a phrase of i's sentence, else len(words)
    next_lead: tuple[int, ...]  # the first word after i a kept sentence may start on, else len(words)
    next_sentence: tuple[int, ...]  # the first word of the sentence after i's, else len(words)

    @classmethod
    def of(cls, words: tuple[SourceWord, ...], low: int, high: int, share: float) -> _Plan:
        m, mid = len(words), (low + high) / 2
        slack = max(2, min(round(share * high), round(share * SELECTION_SLACK_CAP))) + (high - low) / 2
        points, run = [], 0
        for p in range(1, m + 1):
            run += 1
            if p == m or words[p].sentence != words[p - 1].sentence or run >= SELECTION_CHECKPOINT:
                points.append(p)
                run = 0
        lo = {p: max(0, math.floor(mid * p / m - slack)) for p in points}
        hi = {p: math.ceil(mid * p / m + slack) for p in points}
        after, before, mark = [m] * (m + 1), [0] * (m + 1), m
        for i in range(m, -1, -1):
            mark = i if i in lo else mark
            after[i] = mark
        for i in range(1, m + 1):
            before[i] = i if i in lo else before[i - 1]
        phrase, pid = [], -1
        for i, w in enumerate(words):
            pid += 1 if i == 0 or w.opens or w.sentence != words[i - 1].sentence else 0
            phrase.append(pid)
        nxt_phrase, nxt_lead, nxt_sentence = [m] * m, [m] * m, [m] * m
        for i in range(m - 2, -1, -1):
            j, same = i + 1, words[i + 1].sentence == words[i].sentence
            nxt_phrase[i] = j if (words[j].opens and same) else nxt_phrase[j] if same else m
            nxt_lead[i] = j if words[j].leads else nxt_lead[j]
            nxt_sentence[i] = nxt_sentence[j] if same else j
        return cls(
            words, low, high, lo, hi, tuple(after), tuple(before), tuple(phrase),
            tuple(nxt_phrase), tuple(nxt_lead), tuple(nxt_sentence),
        )  # fmt: skip

    def ok(self, start: int, end: int, kept: int) -> bool:
        """Whether passing the words after `start` up to `end` with `kept` words kept stays within every band."""
        p = self.after[start + 1] if start + 1 <= len(self.words) else len(self.words) + 1
        while p <= end:
            if not self.lo[p] <= kept <= self.hi[p]:
                return False
            p = self.after[p + 1] if p < len(self.words) else len(self.words) + 1
        return True

    def kept_range(self, i: int) -> range:
        """The kept counts a state at word i can have: at least the band's floor at the checkpoint before it, at most
        its ceiling at the one after it (the count never falls)."""
        floor = self.lo.get(self.before[i], 0)
        ceiling = self.hi.get(self.after[i], self.high)
        return range(min(i, self.high - 1, ceiling), floor - 1, -1)

    def same(self, i: int, j: int) -> bool:
        """Whether word j exists and is in word i's sentence."""
        return j < len(self.words) and self.words[i].sentence == self.words[j].sentence

    def in_phrase(self, i: int, j: int) -> bool:
        """Whether word j continues word i's phrase."""
        return j < len(self.words) and self.phrase[i] == self.phrase[j]


States = dict[tuple[str, int, int], list[str]]


def selection_grammar(
    words: Sequence[SourceWord], low: int, high: int, *, inner_drops: bool = False, slack: float = SELECTION_SLACK
) -> str:
    """GBNF admitting `low` to `high` of `words`, in their order, each as written (a sentence's first word
    capitalised), one space between them, and nothing else: no word of the model's own, no preamble, no comment.

    A cut ends a kept part on a word that can end one and goes on at the start of a later clause (or closes the
    sentence with its own stop and goes on where a later sentence or clause starts); with `inner_drops` a word may
    also be dropped inside a phrase ("the basic strength" to "the strength"), which a small model misuses ("we are
    winning" to "we winning"), so it is the last resort (see rewrite.selection_rules). The kept count follows an
    even spread through the text within a `slack` (a share of the kept words) at every sentence end and every
    `SELECTION_CHECKPOINT` words, so every part of the text keeps its share and the grammar stays
    O(M · (slack + checkpoint)) rules. Only states that can still reach the end
    are written, so every prefix the grammar admits can be finished."""
    _check_bounds(low, high)
    plan = _Plan.of(tuple(words), low, high, slack)
    if len(plan.words) < low:
        raise ValueError(f"the text has {len(plan.words)} words, fewer than the {low} to keep")
    states: States = {}
    for i in range(len(plan.words) - 1, -1, -1):
        for k in plan.kept_range(i):
            _selection_states(plan, i, k, states, inner_drops)
    if ("a", 0, 0) not in states:
        raise ValueError(f"no selection of {low} to {high} words follows this text's sentences")
    lines = ["root ::= a0k0"]
    lines += [f"{kind}{i}k{k} ::= {' | '.join(alts)}" for (kind, i, k), alts in states.items()]
    return "\n".join(lines) + "\n"


def _selection_states(plan: _Plan, i: int, k: int, states: States, inner_drops: bool) -> None:
    """The rules of the states at word i with k words kept, those that can still reach the end. `t`: word i was
    just written as the k+1-th, how the text goes on; `c`: word i is kept now (`u`: capitalised, as a sentence's
    first). Where the next kept word comes from after a cut: `p` the clause opening at i or a later one of the
    sentence, `a` a sentence start (a lead at i or any later one, capitalised), `b` (with `inner_drops`) word i or a
    later one of its phrase."""
    w = plan.words[i]
    tail = _tail(plan, i, k + 1, states, inner_drops)
    if tail:
        states[("t", i, k)] = tail
    if not tail or (i and not plan.ok(i - 1, i, k)):
        return  # nothing can follow, or a checkpoint at word i that k kept words miss
    states[("c", i, k)] = [f"{json_lit(w.core)} t{i}k{k}"]
    if inner_drops and i and plan.in_phrase(i - 1, i):
        _state(states, ("b", i, k), ("c", i, k), ("b", i + 1, k) if plan.in_phrase(i, i + 1) else None)
    if w.opens or i == 0:
        nxt = plan.next_phrase[i]
        _state(states, ("p", i, k), ("c", i, k), ("p", nxt, k) if plan.same(i, nxt) and plan.ok(i, nxt, k) else None)
    if w.leads or i == 0:
        lead = plan.next_lead[i]
        states[("u", i, k)] = [f"{json_lit(w.capitalised)} t{i}k{k}"]
        _state(states, ("a", i, k), ("u", i, k), ("a", lead, k) if plan.ok(i, lead, k) else None)


def _tail(plan: _Plan, i: int, n: int, states: States, inner_drops: bool) -> list[str]:
    """How the text goes on after word i, kept as the n-th word: the next word with the text's own separator, a
    cut to a later clause of the sentence, a cut closing the sentence, or the end."""
    w, out = plan.words[i], []
    more = n < plan.high
    sep = json_lit(w.pause + " ")
    if more and plan.same(i, i + 1):
        nxt = ("b" if inner_drops and plan.in_phrase(i, i + 1) else "c", i + 1, n)
        if nxt in states:
            out.append(f"{sep} {_name(nxt)}")
    if not w.endable:
        return out
    jump = plan.next_phrase[i + 1] if plan.same(i, i + 1) else len(plan.words)
    if more and plan.same(i, jump) and plan.ok(i, jump, n) and ("p", jump, n) in states:
        out.append(f"{sep} p{jump}k{n}")
    after = plan.next_sentence[i]
    if more and plan.ok(i, after, n) and ("a", after, n) in states:
        out.append(f"{json_lit(w.stop + ' ')} a{after}k{n}")
    if plan.low <= n <= plan.high and plan.ok(i, len(plan.words), n):
        out.append(json_lit(w.stop))
    return out


def _name(key: tuple[str, int, int]) -> str:
    return f"{key[0]}{key[1]}k{key[2]}"


def _state(
    states: States, key: tuple[str, int, int], here: tuple[str, int, int], skip: tuple[str, int, int] | None
) -> None:
    """Write state `key`: keep the word here, or skip on to state `skip` (if it can reach the end)."""
    states[key] = [_name(here)] + ([_name(skip)] if skip is not None and skip in states else [])


# --- a planned ending (issue 19): the text written in two parts, its last units chosen among candidates ----------


def closing_rules(lang: Lang, unit: Unit, room: int) -> AnyGrammar:
    """One or more sentences more, at most `room` units in `unit` (the space before them included), the last one
    closed: what a text under a limit may add after its own last sentence (a rival closing, `planned.EndingPlanner`)."""
    validate_target(room)
    kind = grammar_kind(lang, unit)
    sep = _SEPARATOR[lang]
    if kind == "chars":
        room = char_bounds(lang, unit, 1, room)[1]  # the characters the unit's room holds
        if room < 2 + len(sep):
            raise ValueError(f"a closing sentence needs at least {2 + len(sep)} characters, got {room}")
        body = char_grammar(lang, 2, room - len(sep))
        start = "s" if lang == "en" else "h"
        lead = f'"{sep}" ' if sep else ""
        return body.replace(f"root ::= {start}{room - len(sep)}", f"root ::= {lead}{start}{room - len(sep)}", 1)
    if kind != "words":
        raise ValueError(f"no grammar can guarantee {unit} in {lang}")
    rules = _rules(lang, unit)
    unit_expr = Seq((Lit(sep), Ref("word"))) if sep else Ref("word")
    last = Seq((Lit(sep), Ref("wend"))) if sep else Ref("wend")
    if room == 1:
        return Grammar(last, rules)
    return Grammar(Seq((Rep(unit_expr, 0, room - 1), last)), rules)

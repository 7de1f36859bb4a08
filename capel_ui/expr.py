"""The expression tree every grammar is written in, and its renderers: one rule written once, emitted as GBNF
(llama.cpp, vLLM, SGLang's EBNF), Lark (OpenAI's custom tools, LLGuidance) or a regular expression (Rust `regex`, a
JSON-schema `pattern`, Python's `re`).

Below `lexicon` and `grammar`: the word list's number rule (`lexicon.NUMBER_EXPR`) is one tree the word rules, the
grammars and `known_unit` each render, not the same rule typed out again in each syntax.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

Syntax = Literal["gbnf", "lark", "regex"]
SYNTAXES: tuple[Syntax, ...] = get_args(Syntax)


# ----- the expression tree --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lit:
    """A literal string."""

    text: str


@dataclass(frozen=True)
class Chars:
    """One character from a class, written as the inside of `[...]` (the same in GBNF, Lark and regex)."""

    spec: str


@dataclass(frozen=True)
class Ref:
    """A named unit rule."""

    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Expr, ...]


@dataclass(frozen=True)
class Rep:
    """`item` repeated `lo` to `hi` times (`hi == lo`: exactly; `(0, 1)`: optional)."""

    item: Expr
    lo: int
    hi: int


Expr = Lit | Chars | Ref | Seq | Alt | Rep


def seq(*items: Expr) -> Expr:
    return items[0] if len(items) == 1 else Seq(items)


def opt(item: Expr) -> Rep:
    return Rep(item, 0, 1)


def _suffix(rep: Rep) -> str:
    if (rep.lo, rep.hi) == (0, 1):
        return "?"
    return f"{{{rep.lo}}}" if rep.lo == rep.hi else f"{{{rep.lo},{rep.hi}}}"


def regex_lit(text: str) -> str:
    """A literal in a regex; `<` and `>` stay bare (escaped, Rust reads them as word boundaries)."""
    return "".join("\\" + c if c in r"\.+*?()|[]{}^$#&-~" else c for c in text)


@dataclass(frozen=True)
class Dialect:
    lit: Callable[[str], str]
    chars: Callable[[str], str]
    ref: Callable[[str], str]
    sep: str  # between items of a sequence


MAX_REP = 1000
"""The largest count one repetition is written with: llama.cpp refuses a grammar whose repetition passes 2000
("failed to parse grammar"), so a longer one is written as nested blocks (`_blocks`)."""


def _blocks(rep: Rep) -> Expr:
    """`rep` without any count above MAX_REP, and unambiguous (one way to read each text, so a grammar engine
    keeps few parse states): a block of MAX_REP then the rest, or fewer than MAX_REP."""
    item, lo, hi, block = rep.item, rep.lo, rep.hi, Rep(rep.item, MAX_REP, MAX_REP)
    if hi <= MAX_REP:
        return rep
    if lo >= MAX_REP:
        return Seq((block, _blocks(Rep(item, lo - MAX_REP, hi - MAX_REP))))
    return Alt((Rep(item, lo, MAX_REP - 1), Seq((block, _blocks(Rep(item, 0, hi - MAX_REP))))))


def render(e: Expr, d: Dialect) -> str:
    if isinstance(e, Rep) and e.hi > MAX_REP:
        return group(_blocks(e), d)
    if isinstance(e, Lit):
        return d.lit(e.text)
    if isinstance(e, Chars):
        return d.chars(e.spec)
    if isinstance(e, Ref):
        return d.ref(e.name)
    if isinstance(e, Seq):
        return d.sep.join(group(i, d) if isinstance(i, Alt) else render(i, d) for i in e.items)
    if isinstance(e, Alt):
        return (" | " if d.sep else "|").join(render(o, d) for o in e.options)
    inner = render(e.item, d)
    # A quoted literal is one atom in GBNF and Lark; in a regex only a single character is.
    bare = isinstance(e.item, Chars | Ref) or (isinstance(e.item, Lit) and (bool(d.sep) or len(e.item.text) == 1))
    return (inner if bare else f"({inner})") + _suffix(e)


def group(e: Expr, d: Dialect) -> str:
    return f"({render(e, d)})"


def json_lit(text: str) -> str:
    """A quoted literal, the same in GBNF and Lark."""
    return json.dumps(text, ensure_ascii=False)


def lark_chars(spec: str) -> str:
    """A character class as a Lark regex terminal (its "/" escaped: the terminal's own delimiter)."""
    return "/[" + spec.replace("/", "\\/") + "]/"


GBNF = Dialect(json_lit, lambda s: f"[{s}]", lambda n: n, " ")
"""GBNF with named rules as written."""


def lark(ref: Callable[[str], str]) -> Dialect:
    """Lark, each named rule written as `ref` names it (a terminal in upper case, a parser rule in lower)."""
    return Dialect(json_lit, lark_chars, ref, " ")


def regex(ref: Callable[[str], str]) -> Dialect:
    """A regular expression, each named rule inlined by `ref`."""
    return Dialect(regex_lit, lambda s: f"[{s}]", ref, "")


def standalone(e: Expr, syntax: Syntax) -> str:
    """`e`, which names no rule, as one grouped expression of `syntax` (a regex group, a Lark or GBNF group)."""
    d = {"gbnf": GBNF, "lark": lark(_no_rule), "regex": regex(_no_rule)}[syntax]
    return group(e, d)


def _no_rule(name: str) -> str:
    raise ValueError(f"a standalone expression names no rule ({name!r})")

"""A small GBNF interpreter for the subset capel_ui.grammar emits, for tests.

Supported: rules `name ::= ...` (a rule may span lines; a new one starts at `name ::=`), `#` comments,
string literals with escapes (\\n \\t \\r \\\\ \\" \\xHH \\uHHHH \\UHHHHHHHH), character classes with ranges
(non-ASCII too, e.g. `[一-鿿]`) and `^` negation, `.` (any character), grouping `( )`, alternation `|`,
and the repetitions `?`, `*`, `+`, `{m}`, `{m,}`, `{m,n}`.

`sample(grammar, rng)` draws a random string the grammar admits; `matches(grammar, s)` says whether it
admits `s` (a memoised set-of-end-positions matcher: fine for the grammars and lengths tests use).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache

# ----- AST --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Lit:
    text: str


@dataclass(frozen=True, eq=False)
class Cls:
    ranges: tuple[tuple[str, str], ...]
    negated: bool = False

    def has(self, c: str) -> bool:
        inside = any(lo <= c <= hi for lo, hi in self.ranges)
        return inside != self.negated


@dataclass(frozen=True, eq=False)
class Ref:
    name: str


@dataclass(frozen=True, eq=False)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True, eq=False)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True, eq=False)
class Rep:
    item: Node
    lo: int
    hi: int | None  # None: unbounded


Node = Lit | Cls | Ref | Seq | Alt | Rep

ANY = Cls((), negated=True)  # `.`

# ----- parsing ----------------------------------------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-", "^": "^"}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_RULE_START = re.compile(r"\s*([A-Za-z][A-Za-z0-9_-]*)\s*::=")
_REPEAT = re.compile(r"\{\s*(\d+)\s*(?:(,)\s*(\d*)\s*)?\}")


class GrammarError(ValueError):
    pass


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def error(self, msg: str) -> GrammarError:
        return GrammarError(f"{msg} at offset {self.i}: {self.s[self.i : self.i + 30]!r}")

    def skip_space(self, newlines: bool = True) -> None:
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "#":
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            elif c in " \t\r" or (newlines and c == "\n"):
                self.i += 1
            else:
                break

    def at_rule_start(self) -> bool:
        return _RULE_START.match(self.s, self.i) is not None

    def rules(self) -> dict[str, Node]:
        out: dict[str, Node] = {}
        self.skip_space()
        while self.i < len(self.s):
            m = _RULE_START.match(self.s, self.i)
            if not m:
                raise self.error("expected `name ::=`")
            self.i = m.end()
            name = m.group(1)
            if name in out:
                raise self.error(f"rule {name!r} defined twice")
            out[name] = self.alternation()
            self.skip_space()
        return out

    def alternation(self) -> Node:
        options = [self.sequence()]
        while True:
            self.skip_space()
            if self.i < len(self.s) and self.s[self.i] == "|":
                self.i += 1
                options.append(self.sequence())
            else:
                break
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def sequence(self) -> Node:
        items: list[Node] = []
        while True:
            self.skip_space()
            if self.i >= len(self.s) or self.s[self.i] in "|)" or self.at_rule_start():
                break
            items.append(self.postfix(self.primary()))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def primary(self) -> Node:
        c = self.s[self.i]
        if c == '"':
            return self.literal()
        if c == "[":
            return self.char_class()
        if c == "(":
            self.i += 1
            inner = self.alternation()
            self.skip_space()
            if self.i >= len(self.s) or self.s[self.i] != ")":
                raise self.error("expected `)`")
            self.i += 1
            return inner
        if c == ".":
            self.i += 1
            return ANY
        m = _NAME.match(self.s, self.i)
        if m:
            self.i = m.end()
            return Ref(m.group())
        raise self.error("unexpected character")

    def postfix(self, node: Node) -> Node:
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "?":
                node, self.i = Rep(node, 0, 1), self.i + 1
            elif c == "*":
                node, self.i = Rep(node, 0, None), self.i + 1
            elif c == "+":
                node, self.i = Rep(node, 1, None), self.i + 1
            elif c == "{":
                m = _REPEAT.match(self.s, self.i)
                if not m:
                    raise self.error("bad repetition")
                lo = int(m.group(1))
                if m.group(2) is None:
                    hi: int | None = lo
                else:
                    hi = int(m.group(3)) if m.group(3) else None
                if hi is not None and hi < lo:
                    raise self.error("repetition max below min")
                node, self.i = Rep(node, lo, hi), m.end()
            else:
                break
        return node

    def char(self) -> str:
        """One possibly escaped character inside a literal or class."""
        c = self.s[self.i]
        self.i += 1
        if c != "\\":
            return c
        e = self.s[self.i]
        self.i += 1
        if e in _HEX_LEN:
            n = _HEX_LEN[e]
            digits = self.s[self.i : self.i + n]
            if len(digits) != n or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise self.error("bad hex escape")
            self.i += n
            return chr(int(digits, 16))
        if e in _ESCAPES:
            return _ESCAPES[e]
        raise self.error(f"unknown escape \\{e}")

    def literal(self) -> Lit:
        self.i += 1
        out = []
        while True:
            if self.i >= len(self.s):
                raise self.error("unterminated string")
            if self.s[self.i] == '"':
                self.i += 1
                return Lit("".join(out))
            out.append(self.char())

    def char_class(self) -> Cls:
        self.i += 1
        negated = self.s.startswith("^", self.i)
        if negated:
            self.i += 1
        ranges: list[tuple[str, str]] = []
        while True:
            if self.i >= len(self.s):
                raise self.error("unterminated character class")
            if self.s[self.i] == "]":
                self.i += 1
                return Cls(tuple(ranges), negated)
            lo = self.char()
            hi = lo
            if self.s.startswith("-", self.i) and not self.s.startswith("-]", self.i):
                self.i += 1
                hi = self.char()
                if hi < lo:
                    raise self.error("empty range")
            ranges.append((lo, hi))


@lru_cache(maxsize=64)
def parse(grammar_text: str) -> dict[str, Node]:
    """The rules of a grammar, by name; raises GrammarError for text outside the subset."""
    rules = _Parser(grammar_text).rules()
    if "root" not in rules:
        raise GrammarError("no root rule")

    def check(node: Node) -> None:
        if isinstance(node, Ref) and node.name not in rules:
            raise GrammarError(f"undefined rule {node.name!r}")
        for child in _children(node):
            check(child)

    for node in rules.values():
        check(node)
    return rules


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Seq):
        return node.items
    if isinstance(node, Alt):
        return node.options
    if isinstance(node, Rep):
        return (node.item,)
    return ()


# ----- sampling ---------------------------------------------------------------------------------------------

# Characters tried for a negated class or `.`.
_POOL = "abcXYZ019 .,;:!?'-_<>\"\\\n\t中文，。éß😀"


def _repeat_count(rng: random.Random, lo: int, hi: int | None) -> int:
    """Varied lengths: often an extreme (min, max, min+1), otherwise uniform; unbounded grows geometrically."""
    if hi is None:
        extra = 0
        while rng.random() < 0.7 and extra < 40:
            extra += 1
        return lo + rng.choice([0, 1, extra, extra])
    if hi == lo:
        return lo
    r = rng.random()
    if r < 0.2:
        return lo
    if r < 0.4:
        return hi
    if r < 0.5:
        return min(lo + 1, hi)
    return rng.randint(lo, hi)


def _sample_class(node: Cls, rng: random.Random) -> str:
    if node.negated:
        options = [c for c in _POOL if node.has(c)]
        if not options:
            raise GrammarError("cannot sample a negated class that excludes the whole pool")
        return rng.choice(options)
    sizes = [ord(hi) - ord(lo) + 1 for lo, hi in node.ranges]
    if not sizes:
        raise GrammarError("empty character class")
    # Weight ranges by size, but give every range a fair chance (single punctuation marks included).
    lo, hi = node.ranges[rng.randrange(len(sizes))] if rng.random() < 0.5 else rng.choices(node.ranges, sizes)[0]
    if rng.random() < 0.15:
        return rng.choice((lo, hi))
    return chr(rng.randint(ord(lo), ord(hi)))


def sample(grammar_text: str, rng: random.Random, *, max_depth: int = 200) -> str:
    """A random string admitted by the grammar's `root` rule."""
    rules = parse(grammar_text)
    out: list[str] = []

    def go(node: Node, depth: int) -> None:
        if depth > max_depth:
            raise GrammarError("recursion too deep while sampling")
        if isinstance(node, Lit):
            out.append(node.text)
        elif isinstance(node, Cls):
            out.append(_sample_class(node, rng))
        elif isinstance(node, Ref):
            go(rules[node.name], depth + 1)
        elif isinstance(node, Seq):
            for item in node.items:
                go(item, depth + 1)
        elif isinstance(node, Alt):
            go(rng.choice(node.options), depth + 1)
        else:
            for _ in range(_repeat_count(rng, node.lo, node.hi)):
                go(node.item, depth + 1)

    go(rules["root"], 0)
    return "".join(out)


# ----- matching ---------------------------------------------------------------------------------------------


def matches(grammar_text: str, s: str) -> bool:
    """Whether the grammar's `root` rule admits exactly `s`."""
    rules = parse(grammar_text)
    memo: dict[tuple[int, int], frozenset[int]] = {}

    def ends(node: Node, pos: int) -> frozenset[int]:
        key = (id(node), pos)
        hit = memo.get(key)
        if hit is not None:
            return hit
        memo[key] = frozenset()  # guards left recursion (treated as no match)
        result = _ends(node, pos)
        memo[key] = result
        return result

    def _ends(node: Node, pos: int) -> frozenset[int]:
        if isinstance(node, Lit):
            return frozenset([pos + len(node.text)]) if s.startswith(node.text, pos) else frozenset()
        if isinstance(node, Cls):
            return frozenset([pos + 1]) if pos < len(s) and node.has(s[pos]) else frozenset()
        if isinstance(node, Ref):
            return ends(rules[node.name], pos)
        if isinstance(node, Seq):
            cur = {pos}
            for item in node.items:
                cur = {e for p in cur for e in ends(item, p)}
                if not cur:
                    break
            return frozenset(cur)
        if isinstance(node, Alt):
            return frozenset(e for option in node.options for e in ends(option, pos))
        # Rep
        result: set[int] = set()
        cur = {pos}
        seen: set[int] = set()
        k = 0
        while cur:
            if k >= node.lo:
                result |= cur
            if node.hi is not None and k == node.hi:
                break
            nxt = {e for p in cur for e in ends(node.item, p)}
            if k >= node.lo:
                seen |= cur
                nxt -= seen  # positions already reached with enough repetitions add nothing new
            cur = nxt
            k += 1
        return frozenset(result)

    return len(s) in ends(rules["root"], 0)

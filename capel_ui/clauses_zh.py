"""Shortening Chinese by whole clauses, and the facts of a Chinese text (issue 32): clauses.py for Chinese.

A Chinese sentence (up to 。！？) is a chain of clauses joined by commas; a later clause can usually go without the
sentence breaking (its first clause holds the subject), and so can an adverb ("非常", "已经"; never a negation or
"只", "才", "都") or an adjective before its noun ("老火车站", "美丽的城市"). Words and their classes come from
jieba's part-of-speech tagger (`jieba.posseg`, installed with the project, offline). The facts are the names
jieba tags as people, places and organisations (nr, ns, nt, nz), the numbers with their measure words, and the
first clause of the first sentence. The choice of parts for a length is the same dynamic programme over the whole
text as in English (`clauses.shorten`), counted in `zh_chars`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from itertools import combinations

from .counting import count
from .facts import FactCheck


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_STOPS = "。！？!?…"
_PAUSES = "，；,;"
NEVER = frozenset(
    [
        "不",
        "没",
        "没有",
        "未",
        "别",
        "勿",
        "非",
        "只",
        "仅",
        "才",
        "就",
        "都",
        "也",
        "还",
        "又",
        "再",
        "最",
        "更",
        "很",
        "太",
        "正",
        "在",
        "将",
        "已",
        "曾",
        "均",
        "皆",
        "共",
    ]
)
"""Adverbs that change what a clause says (a negation, "only", "all", "also"…): never dropped."""
_NAME_TAGS = ("nr", "ns", "nt", "nz")
_SAY = _set("说 表示 称 认为 指出 介绍 透露 强调 宣布 说道")


@cache
def _posseg():
    import jieba
    import jieba.posseg

    jieba.setLogLevel(60)
    return jieba.posseg


@dataclass
class Sentence:
    words: list[str]
    tags: list[str]
    units: list[tuple[int, int]] = field(default_factory=list)

    def text(self, mask: frozenset[int] = frozenset()) -> str:
        kept = [i for i in range(len(self.words)) if i not in mask]
        if not kept:
            return ""
        out = [self.words[i] for i in kept]
        last = kept[-1]
        if last != len(self.words) - 1 and out[-1] in _PAUSES:  # the end went: close with the sentence's stop
            out[-1] = self.words[-1] if self.words[-1] in _STOPS else "。"
        elif last != len(self.words) - 1:
            out.append(self.words[-1] if self.words[-1] in _STOPS else "。")
        text = "".join(out)
        text = re.sub(r"[，；,;]+(?=[。！？!?…]|$)", "", text)  # a clause before the stop went: its comma too
        return re.sub(r"([，；,;])[，；,;]+", r"\1", text)

    @property
    def core(self) -> str:
        return self.text(frozenset(i for a, b in self.units for i in range(a, b)))


def sentences(text: str) -> list[Sentence]:
    """The sentences of `text` with their droppable parts: later clauses, adverbs, adjectives before a noun."""
    out: list[Sentence] = []
    words: list[str] = []
    tags: list[str] = []
    for pair in _posseg().cut(text.strip()):
        w, t = pair.word, pair.flag
        if not w.strip():
            continue
        words.append(w)
        tags.append(t)
        if w in _STOPS:
            out.append(Sentence(words, tags))
            words, tags = [], []
    if words:
        out.append(Sentence(words, tags))
    for s in out:
        s.units = _units(s)
    return out


def _units(s: Sentence) -> list[tuple[int, int]]:
    n = len(s.words)
    pauses = [i for i, w in enumerate(s.words) if w in _PAUSES]
    found: list[tuple[int, int]] = []
    for k, p in enumerate(pauses):  # a later clause: from after a comma to the next comma (included) or the stop
        end = pauses[k + 1] + 1 if k + 1 < len(pauses) else (n - 1 if s.words[-1] in _STOPS else n)
        before = s.tags[:p]  # the clauses before it say something: a noun or pronoun and a verb
        has_verb = any(t.startswith("v") for t in before) and any(t[0] in "nr" for t in before)
        said = p > 0 and s.words[p - 1] in _SAY  # "主席说，…": what was said is the object of 说
        if end - (p + 1) >= 2 and has_verb and not said:
            found.append((p + 1, end))
    first = pauses[0] if pauses else n
    for i in range(1, n - 1):
        w, t, nxt = s.words[i], s.tags[i], s.tags[i + 1]
        if w in _PAUSES or w in _STOPS:
            continue
        adverb = t == "d" and w not in NEVER and s.words[i + 1] not in _PAUSES + _STOPS
        if adverb or (t == "a" and nxt.startswith("n") and i < first - 1):
            found.append((i, i + 1))
        elif t == "a" and s.words[i + 1] == "的" and i + 2 < n and s.tags[i + 2].startswith("n"):
            found.append((i, i + 2))
    return sorted(set(found))


def facts(text: str) -> list[str]:
    """The facts of a Chinese text: names (people, places, organisations), numbers with their measure words."""
    out: list[str] = []
    pairs = [(p.word, p.flag) for p in _posseg().cut(text)]
    i = 0
    while i < len(pairs):
        w, t = pairs[i]
        if t in _NAME_TAGS and len(w) > 1:
            out.append(w)
        elif t == "m" and re.search(r"[\d一二三四五六七八九十百千万亿两]", w):
            j = i + 1
            while j < len(pairs) and pairs[j][1] in ("m", "q"):
                w += pairs[j][0]
                j += 1
            if not re.fullmatch(r"[一两]\D?", w):  # "一群", "一个": no number a reader would miss
                out.append(w)
            i = j
            continue
        i += 1
    return list(dict.fromkeys(out))


def check(source: str, text: str) -> FactCheck:
    """Which facts of `source` `text` kept (each as written, and the first sentence's first clause in order), and
    which facts of `text` the source does not have."""
    main = ""
    sents = sentences(source)
    if sents:
        first = sents[0]
        pause = next((i for i, w in enumerate(first.words) if w in _PAUSES), len(first.words))
        main = "".join(w for i, w in enumerate(first.words[:pause]) if not any(a <= i < b for a, b in first.units))
    wanted = facts(source)
    lost = [f for f in wanted if f not in text]
    if main and not _in_order(main, text):
        lost.insert(0, main)
    invented = tuple(f for f in facts(text) if f not in source)
    return FactCheck(len(wanted) + bool(main), tuple(lost), invented)


def _in_order(want: str, have: str) -> bool:
    it = iter(have)
    return all(ch in it for ch in want if not ch.isspace())


# ----- the best texts for a length --------------------------------------------------------------------------------

MAX_UNITS = 12


def shorten(text: str, low: int, high: int, best: int = 4) -> list[str]:
    """The `best` texts of `low`-`high` zh_chars made of `text`'s whole parts, the most facts kept first."""
    sents = sentences(text)
    if not sents:
        return []
    wanted = facts(text)
    ways: list[list[tuple[int, float, frozenset[int]]]] = []
    for n, s in enumerate(sents):
        sent_text = s.text()
        options: dict[int, list[tuple[int, float, frozenset[int]]]] = {}
        parts = sorted(s.units, key=lambda u: u[0] - u[1])[:MAX_UNITS]
        masks = {
            frozenset(i for a, b in combo for i in range(a, b))
            for r in range(len(parts) + 1)
            for combo in combinations(parts, r)
        }
        for mask in masks:
            kept = s.text(mask)
            size = count(kept, "zh_chars")
            if size < 4:
                continue
            score = sum(1.0 for f in wanted if f in sent_text and f in kept) + 0.02 * size
            score -= 0.12 * sum(1 for i in mask if i - 1 not in mask)
            score += 1.5 if n == 0 else 0.0
            options.setdefault(size, []).append((size, score, mask))
        flat = [w for opts in options.values() for w in sorted(opts, key=lambda w: -w[1])[:2]]
        flat.append((0, 0.0, frozenset(range(len(s.words)))))
        ways.append(flat)
    beam: dict[int, list[tuple[float, tuple[int, ...]]]] = {0: [(0.0, ())]}
    for options in ways:
        nxt: dict[int, list[tuple[float, tuple[int, ...]]]] = {}
        for have, partials in beam.items():
            for k, (size, score, _) in enumerate(options):
                if have + size <= high:
                    nxt.setdefault(have + size, []).extend((s + score, (*p, k)) for s, p in partials)
        beam = {n: sorted(b, key=lambda x: -x[0])[:8] for n, b in nxt.items()}
    finals = sorted(((s, p) for n, b in beam.items() if low <= n <= high for s, p in b), key=lambda x: -x[0])
    out: list[str] = []
    for _, picks in finals:
        t = "".join(sents[i].text(ways[i][k][2]) for i, k in enumerate(picks))
        if t and t not in out and low <= count(t, "zh_chars") <= high:
            out.append(t)
        if len(out) == best:
            break
    return out

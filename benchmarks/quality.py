"""Would a writer keep the guaranteed texts? EM, natural endings, loops, number lists, non-words, s/text per mode.

Run from the project root:  .venv/bin/python benchmarks/quality.py [--limit 5] [--lengths 12 40 80] [--variants 3]
(225 texts with the defaults: about 15 minutes on 2 idle cores; set CAPEL_EMBEDDED_THREADS=1 when other processes
use the model; --show prints every text with its P(end))

Each instruction runs at each length through every setup below on the embedded model, through `generate()` (the
path the app uses), as `--variants` variants written at once (the app's default for a short text is 3), seeds
seed, seed+1, ... The setups, interleaved so that their timings share the machine's load:

- `baseline (free)`: the model's own answer, no length asked of the grammar. It ends where the model chooses, so
  its count is rarely right: its natural-ending share is the reference a guaranteed mode should come near.
- `exact plain`: the plain letters-only word rule, the text cut at word N (the guarantee before the word list).
- `exact as filed`: `exact` as it was when issue 19 was filed: the word list sent to llama.cpp as a GBNF trie (its
  own grammar engine), the text cut at word N. The issue's "today's exact".
- `exact list`: the word list as LLGuidance Lark (no glued or invented words), still cut at word N
  (`plan_ending=False`).
- `exact`: the default: the word list, and where the text's own ending reads cut off, its last words searched
  again for ones the model would end a phrase on (ending.search_ending).
- `exact-countdown`: the guaranteed countdown as the app runs it: on the embedded model it falls back to `exact`
  (backends.MARKERS_TOO_HARD), so this row is `exact` again under another seed's load.
- `countdown forced`: the countdown-visible grammar itself (the fallback turned off), its ending searched the same
  way: why the fallback is there.

Columns, over every text of a setup (all variants): EM (exact count); natural (share with an ending score of at
least `ending.NATURAL`: the model's probability that a phrase ends after the last word as written; checked against
a reader in benchmarks/ending_labels.py); loops and numbers (share of texts with a
repeated-phrase loop, or a number list nobody asked for: quality.py); itself (share of texts that talk about
themselves: "Here's a possible post:", "12 words:", `quality.talks_about_itself`); nonword% (words wordfreq never
saw, pooled; the instruction's own words excluded); dangling% (last word "of", "the"...); s/text (mean wall time
of a text); wanted (share of texts with words after a sentence end where the model wanted its whole answer to end,
P(end) >= 0.5, asked one at a time after every timed run: the count asked for more than it had to say), pad% (the
words after that end that repeat three words already written, pooled: padding a reader sees) and filler (a tail
like "The end." or "I hope this helps", or a sentence written twice).
Then the same over the best-ranked variant of each request (the one Copy and the downloads use: variants.rank).
The ratios at the end are the speed aims of issues 31 (the planned exact text at most twice the unplanned word list's
time, printed for any --setups holding both) and 19: the word list against the plain rule, and the searched
ending against `exact` as filed (the issue's "today's exact") and against the unplanned word list of today.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import re
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.backends import get_backend
from capel_ui.backends.openai_compat import REQUESTS, end_share
from capel_ui.ending import natural_share, sentence_ends
from capel_ui.generation import Outcome, Request, generate
from capel_ui.plan import RunPlan
from capel_ui.quality import (
    dangling_end,
    loops,
    nonwords,
    number_list,
    repeated_sentences,
    talks_about_itself,
    words,
)
from capel_ui.variants import Candidate, rank, variant_requests

INSTRUCTIONS = (
    "Describe a traditional Italian pizza.",
    "Give advice on staying motivated at work.",
    "Explain how stress affects the body.",
    "Write a headline for a seaside pub called The Whaler's Rest.",
    "Describe the challenges of learning a new language.",
    "Write a short product description for a steel water bottle.",
    "Explain why the sky is blue.",
    "Write an invitation to a neighbourhood picnic.",
)
SETUPS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("baseline (free)", "baseline", {}),
    ("exact plain", "exact", {"word_list": False, "plan_ending": False}),
    ("exact as filed", "exact", {"plan_ending": False}),
    ("exact list", "exact", {"plan_ending": False}),
    ("exact padded", "exact", {"ask_more": False}),  # issue 31 point 4: no call for more where it wanted to end
    ("exact", "exact", {}),
    ("exact-countdown", "exact-countdown", {}),
    ("countdown forced", "exact-countdown", {"allow_fallback": False}),
)
AS_FILED = "exact as filed"
HEADER = (
    f"{'setup':<17} {'n':>3} {'EM':>5} {'natural':>8} {'loops':>6} {'numbers':>8} {'itself':>7} {'nonword%':>9}"
    f" {'dangling%':>10} {'wanted':>7} {'pad%':>5} {'filler':>7} {'s/text':>7}"
)
WANTED_END = 0.5
"""P(end) from which the model wanted its whole answer to end at a sentence end inside the text: what follows it is
padding (written only because the count asked for more)."""
FILLER = re.compile(
    r"\b(the end|thank you|thanks for reading|hope this helps|i hope|let me know|have a (?:great|nice|good|lovely)"
    r"|that's (?:it|all)|cheers|enjoy!|in summary|in conclusion|to sum up)\b",
    re.IGNORECASE,
)
"""A tail a model invents to fill a count ("The end.", "I hope this helps!")."""


@dataclass
class Row:
    label: str
    target: int
    instruction: str
    outcomes: list[Outcome]
    padded: list[int] = dataclasses.field(default_factory=list)  # words after the model's first wanted end, each text
    requests: dict[str, int] = dataclasses.field(default_factory=dict)  # HTTP requests of the row, by what they asked

    @property
    def best(self) -> Outcome:
        """The best-ranked variant: what the Write page shows first and Copy and the downloads use."""
        candidates = [Candidate(o, None, o.score) for o in self.outcomes]
        return rank(candidates)[0].outcome


def with_capabilities(backend, **changes: Any):
    """The same model with some of its declared capabilities changed (what the app sent before a fix)."""
    inner = copy.copy(backend.inner)
    inner.capabilities = dataclasses.replace(inner.capabilities, **changes)
    changed = copy.copy(backend)
    changed.inner = inner
    return changed


def as_filed(backend):
    """The same embedded model with the word list sent as GBNF (llama.cpp's own grammar engine), as before LLGuidance
    read it: `exact` when issue 19 was filed."""
    return with_capabilities(backend, llguidance=False)


def run_row(backend, label: str, mode: str, fields: dict[str, Any], target: int, ins: str, seed: int, k: int) -> Row:
    requests = variant_requests(Request(ins, target, mode=mode, seed=seed, **fields), k)  # type: ignore[arg-type]
    REQUESTS.clear()
    with ThreadPoolExecutor(k) as pool:  # written at once, as the app writes variants
        outcomes = list(pool.map(lambda r: generate(backend, r), requests))
    return Row(label, target, ins, outcomes, requests=dict(REQUESTS))


def share(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else float("nan")


def padded_words(backend, row: Row, text: str) -> int:
    """Words after the first sentence end inside `text` where the model wanted its whole answer to end (P(end) of
    the text up to there >= `WANTED_END`, asked one at a time): what it wrote only to reach the count."""
    messages = RunPlan.of(backend, Request(row.instruction, row.target, mode="exact")).ending_messages
    for i in sentence_ends(text):
        rest = text[i:].strip()
        if rest and (end_share(backend.next_tokens(messages, text[:i])) or 0.0) >= WANTED_END:
            return len(words(rest))
    return 0


def padding(text: str, after_wanted: int) -> int:
    """Words of the last `after_wanted` (those after the model's wanted end) that repeat three words already written
    ("The Whaler's Rest: A Spice of the Sea's Home." again): padding a reader sees, not new content."""
    found = [w.lower() for w in words(text)]
    seen: set[tuple[str, ...]] = set()
    padded: set[int] = set()
    for k in range(len(found) - 2):
        gram = tuple(found[k : k + 3])
        if gram in seen:
            padded.update(j for j in range(k, k + 3) if j >= len(found) - after_wanted)
        seen.add(gram)
    return len(padded)


def filler(text: str) -> bool:
    """A filler tail ("The end.", "I hope this helps") or a sentence written twice (quality.repeated_sentences)."""
    last = [m.group() for m in re.finditer(r"[^.!?]+[.!?]*", text)][-2:]
    return bool(FILLER.search(" ".join(last))) or bool(repeated_sentences(text))


def summarize(label: str, outs: list[Outcome], instruction_of: dict[int, str], padded: dict[int, int]) -> str:
    n_words = sum(len(words(o.text)) for o in outs)
    bad = sum(len(nonwords(o.text, own_text=instruction_of[id(o)])) for o in outs)
    natural = natural_share([o.end_probability for o in outs])
    pad = 100 * sum(padding(o.text, padded[id(o)]) for o in outs) / max(n_words, 1)
    return (
        f"{label:<17} {len(outs):>3} {share([o.exact for o in outs]):>5.2f} "
        f"{'-' if natural is None else f'{natural:.2f}':>8} "
        f"{share([bool(loops(o.text, own_text=instruction_of[id(o)])) for o in outs]):>6.2f} "
        f"{share([number_list(o.text, instruction_of[id(o)]) is not None for o in outs]):>8.2f} "
        f"{share([talks_about_itself(o.text, instruction_of[id(o)]) is not None for o in outs]):>7.2f} "
        f"{100 * bad / max(n_words, 1):>9.1f} {100 * share([bool(dangling_end(o.text)) for o in outs]):>10.0f} "
        f"{share([padded[id(o)] > 0 for o in outs]):>7.2f} {pad:>5.1f} "
        f"{share([filler(o.text) for o in outs]):>7.2f} {statistics.mean(o.seconds for o in outs):>7.2f}"
    )


def seconds(rows: list[Row], label: str) -> float:
    return statistics.mean(o.seconds for r in rows if r.label == label for o in r.outcomes)


def table(title: str, rows: list[Row], pick) -> None:
    print(f"\n{title}")
    print(HEADER)
    print("-" * len(HEADER))
    for label, _, _ in SETUPS:
        chosen = [r for r in rows if r.label == label]
        outs = [o for r in chosen for o in pick(r)]
        instruction_of = {id(o): r.instruction for r in chosen for o in pick(r)}
        padded = {id(o): p for r in chosen for o, p in zip(r.outcomes, r.padded, strict=True)}
        if outs:
            print(summarize(label, outs, instruction_of, padded))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=5, help=f"first N instructions (of {len(INSTRUCTIONS)})")
    ap.add_argument("--lengths", type=int, nargs="+", default=[12, 40, 80])
    ap.add_argument("--variants", type=int, default=3, help="variants per request, written at once (1 to 5)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--show", action="store_true", help="print every text with its P(end); * marks the best-ranked")
    ap.add_argument("--setups", nargs="+", metavar="SETUP", help="only these setups (quoted labels); default all")
    ap.add_argument("--save", type=Path, help="write every text, its setup, time, ending plan and tokens to this JSON")
    args = ap.parse_args()
    setups = [s for s in SETUPS if not args.setups or s[0] in args.setups]

    t0 = time.monotonic()
    backend = get_backend("embedded")
    backends = {label: as_filed(backend) if label == AS_FILED else backend for label, _, _ in SETUPS}
    generate(backend, Request("Say hello.", 3, mode="exact", seed=1))  # warm up: the word list, the server
    print(f"embedded model ready in {time.monotonic() - t0:.1f} s; {os.cpu_count()} cores; seed {args.seed}")
    rows = [
        run_row(backends[label], label, mode, fields, n, ins, args.seed + 10 * i, args.variants)
        for n in args.lengths
        for i, ins in enumerate(INSTRUCTIONS[: args.limit])
        for label, mode, fields in setups  # interleaved: A, B, C, ... for each request
    ]
    for r in rows:  # after every timed run, one request at a time: the padding measure never shares the timings' load
        r.padded = [padded_words(backend, r, o.text) for o in r.outcomes]
    if args.save:
        args.save.write_text(json.dumps([texts_of(r) for r in rows], indent=1, ensure_ascii=False))
    if args.show:
        for r in rows:
            best = r.best
            for o, p in zip(r.outcomes, r.padded, strict=True):
                mark = "*" if o is best else " "
                print(f"{mark}[{r.label} {r.target}] ending {o.end_probability} padded {p} {o.text}")
    for n in [*args.lengths, None]:
        chosen = [r for r in rows if n is None or r.target == n]
        where = f"N = {n}" if n else f"all lengths {args.lengths}"
        table(f"{where}: every text", chosen, lambda r: r.outcomes)
        table(f"{where}: the best-ranked variant of each request", chosen, lambda r: [r.best])
    print_speed(rows)
    print(f"\ntotal {time.monotonic() - t0:.0f} s")


def texts_of(r: Row) -> dict[str, Any]:
    """One request's texts as --save writes them."""
    return {
        "setup": r.label,
        "target": r.target,
        "instruction": r.instruction,
        "texts": [
            {
                "text": o.text,
                "end_probability": o.end_probability,
                "seconds": o.seconds,
                "padded": p,
                "more": (o.planned_ending or {}).get("more"),  # the call for more content: the padded text, kept?
                "ending": {k: v for k, v in (o.planned_ending or {}).items() if k != "more"},  # scores, search
                "tokens": [o.prompt_tokens, o.completion_tokens],
            }
            for o, p in zip(r.outcomes, r.padded, strict=True)
        ],
    }


def print_speed(rows: list[Row]) -> None:
    """The speed aims of issues 19, 31 and 45, as far as the setups run allow."""
    labels = {r.label for r in rows}
    if {"exact", "baseline (free)"} <= labels:
        print_against_free(rows)
    if {"exact", "exact list"} <= labels:
        print(
            f"\nspeed (s/text, all lengths): planned exact / unplanned word list "
            f"{seconds(rows, 'exact') / seconds(rows, 'exact list'):.2f}x (issue 31's aim <= 2)"
        )
        by_length = [
            f"{n}: {seconds(chosen, 'exact') / seconds(chosen, 'exact list'):.2f}x"
            for n in sorted({r.target for r in rows})
            if (chosen := [r for r in rows if r.target == n])
        ]
        print(f"by length (N words: planned / unplanned): {', '.join(by_length)}")
    if labels != {label for label, _, _ in SETUPS}:
        return
    print(
        f"\nspeed (s/text, all lengths): word list / plain rule "
        f"{seconds(rows, 'exact list') / seconds(rows, 'exact plain'):.2f}x (aim <= 1.3); searched ending / exact as "
        f"filed {seconds(rows, 'exact') / seconds(rows, AS_FILED):.2f}x (aim <= 1.5); searched / unsearched word list "
        f"{seconds(rows, 'exact') / seconds(rows, 'exact list'):.2f}x; as filed / word list "
        f"{seconds(rows, AS_FILED) / seconds(rows, 'exact list'):.2f}x"
    )


def print_against_free(rows: list[Row]) -> None:
    """Issue 45's aim: a planned exact text at most 1.5x the time of a free answer of the same length (the free
    answers' seconds per word times N: they end where the model chooses, seldom at N), and where its seconds go:
    writing (its calls, an answer asked for more content included) and the ending (scores and search) after them."""
    print("\nplanned exact against a free answer of the same length (issue 45's aim <= 1.5x):")
    for n in sorted({r.target for r in rows}):
        free = [o for r in rows if r.label == "baseline (free)" and r.target == n for o in r.outcomes]
        exact = [o for r in rows if r.label == "exact" and r.target == n for o in r.outcomes]
        if not free or not exact:
            continue
        per_word = sum(o.seconds for o in free) / max(1, sum(len(words(o.text)) for o in free))
        spent = statistics.mean(o.seconds for o in exact)
        ending = statistics.mean((o.planned_ending or {}).get("seconds", 0.0) for o in exact)
        asked = [r.requests for r in rows if r.label == "exact" and r.target == n]
        questions = sum(sum(v for k, v in a.items() if k != "completion") for a in asked) / max(1, len(exact))
        calls = sum(a.get("completion", 0) for a in asked) / max(1, len(exact))
        print(
            f"  {n} words: planned exact {spent:.2f} s = writing {spent - ending:.2f} s ({calls:.1f} calls) + ending "
            f"{ending:.2f} s ({questions:.0f} questions); free answer {per_word * n:.2f} s at {n} words "
            f"({per_word * 1000:.0f} ms a word) -> {spent / (per_word * n):.2f}x"
        )


if __name__ == "__main__":
    main()

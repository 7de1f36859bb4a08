"""Are the guaranteed texts publishable? EM, non-words, glued words, dangling endings, fluency, seconds per text.

Run from the project root:  .venv/bin/python benchmarks/quality.py [--limit 5] [--lengths 12 40 80] [--concurrency 2]
(75 texts: about 5 minutes on 2 idle cores; set CAPEL_EMBEDDED_THREADS=1 when other processes use the model)

A fixed set of instructions runs at each length through `baseline` and each guaranteed mode on the embedded
model, through `generate()` (the path the app uses). `exact` and `exact-countdown` use the word-list grammar
(the default on llama.cpp); the `(plain)` rows are the same modes with the old letters-only word rule
(`Request(word_list=False)`), i.e. today's `exact` before this change. Columns:

- EM: share of texts with exactly the target count.
- nonword%: words wordfreq has never seen (zipf 0), pooled over all texts; the instruction's own words are not
  counted (the same for every mode).  glued: non-words that are camelCase or two real words run together.
- dangling%: share of texts whose last word is a function word ("of", "the", "and", ...).
- fluency: mean geometric-mean token probability from the server's logprobs.  s/text: mean wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.backends import get_backend
from capel_ui.generation import Outcome, Request, generate
from capel_ui.quality import dangling_end, is_glued, nonwords, words

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
SETUPS: tuple[tuple[str, str, bool], ...] = (
    ("baseline", "baseline", True),
    ("exact (plain)", "exact", False),
    ("exact", "exact", True),
    ("exact-countdown (plain)", "exact-countdown", False),
    ("exact-countdown", "exact-countdown", True),
)
HEADER = f"{'mode':<24} {'n':>3} {'EM':>5} {'nonword%':>9} {'glued':>6} {'dangling%':>10} {'fluency':>8} {'s/text':>7}"


@dataclass
class Row:
    label: str
    target: int
    instruction: str
    outcome: Outcome


def run_one(backend, label: str, mode: str, word_list: bool, target: int, instruction: str, seed: int) -> Row:
    req = Request(instruction, target, mode=mode, word_list=word_list, seed=seed)  # type: ignore[arg-type]
    return Row(label, target, instruction, generate(backend, req))


def summarize(label: str, rows: list[Row]) -> str:
    outs = [r.outcome for r in rows]
    n_words = sum(len(words(o.text)) for o in outs)
    bad = [w for r in rows for w in nonwords(r.outcome.text, own_text=r.instruction)]
    glued = sum(1 for w in bad if is_glued(w))
    dangling = sum(1 for o in outs if dangling_end(o.text))
    flu = [o.fluency for o in outs if o.fluency is not None]
    return (
        f"{label:<24} {len(outs):>3} {sum(o.exact for o in outs) / len(outs):>5.2f} "
        f"{100 * len(bad) / max(n_words, 1):>9.1f} {glued:>6} {100 * dangling / len(outs):>10.0f} "
        f"{statistics.mean(flu) if flu else float('nan'):>8.3f} {statistics.mean(o.seconds for o in outs):>7.1f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=5, help="first N instructions (of 8)")
    ap.add_argument("--lengths", type=int, nargs="+", default=[12, 40, 80])
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--show", action="store_true", help="print every text")
    args = ap.parse_args()

    t0 = time.monotonic()
    backend = get_backend("embedded")
    print(f"embedded model ready in {time.monotonic() - t0:.1f} s; {os.cpu_count()} cores; seed {args.seed}")
    jobs = [
        (label, mode, wl, n, ins)
        for n in args.lengths
        for ins in INSTRUCTIONS[: args.limit]
        for label, mode, wl in SETUPS
    ]
    with ThreadPoolExecutor(args.concurrency) as pool:
        rows = list(pool.map(lambda j: run_one(backend, *j, args.seed), jobs))
    if args.show:
        for r in rows:
            print(f"[{r.label} {r.target}] {r.outcome.text}")
    for n in [*args.lengths, None]:
        print(f"\nN = {n}" if n else f"\nall lengths {args.lengths}")
        print(HEADER)
        print("-" * len(HEADER))
        for label, _, _ in SETUPS:
            print(summarize(label, [r for r in rows if r.label == label and (n is None or r.target == n)]))
    print(f"\ntotal {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()

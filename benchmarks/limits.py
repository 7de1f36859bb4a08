"""Do texts under a word limit end where the model's answer ends, or run into the limit and get cut?

Run from the project root:  .venv/bin/python benchmarks/limits.py [--limit 8] [--limits 30 60] [--show]
(64 texts with the defaults: about 8 minutes on 2 idle cores; set CAPEL_EMBEDDED_THREADS=1 when other processes use
the model)

Each instruction runs under "at most N words" through every setup on the embedded model, through `generate()` (the
path the app uses), one text per request, seeds seed, seed+1, ...; setups interleaved so their timings share the
load:

- `baseline (free)`: the instruction with "in at most N words", no grammar: how often the model keeps a limit alone.
- `exact as filed`: the guaranteed word list as it was sent until 26 November 2026 (evening): LLGuidance Lark without
  the model's end token, so llama.cpp could stop only where the grammar forced an end, at the limit.
- `exact`: the default: the model's end token named after the text, so the model stops where its answer ends; a
  text that runs into the limit ends at its most natural sentence end inside it (the rest kept with the run).
- `room countdown`: the countdown of the room left (`<N>` word `<N-1>` word … `<k>` word. `<0>`), the fallback turned
  off: the markers show the model how much room is left (issue 31, point 3).

Columns: n; within (share verified within the limit); words (mean words the model wrote, before any cut); ceiling
(share that ran into the limit: the model wrote all N words); cut (share with words left out by a planned cut);
natural (share with an ending score of at least `ending.NATURAL`); loops, numbers, itself (quality.py's junk signals);
s/text (mean wall time of a text).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality import with_capabilities  # benchmarks/quality.py, beside this script

from capel_ui.backends import get_backend
from capel_ui.counting import count
from capel_ui.ending import natural_share
from capel_ui.generation import Outcome, Request, generate
from capel_ui.quality import loops, number_list, talks_about_itself

INSTRUCTIONS = (
    "What is the capital of France?",
    "Describe a traditional Italian pizza.",
    "Give advice on staying motivated at work.",
    "Explain how stress affects the body.",
    "Write a short product description for a steel water bottle.",
    "Explain why the sky is blue.",
    "Write an invitation to a neighbourhood picnic.",
    "Remind a patient of a dental appointment on Tuesday at 3:30 pm with Dr. Patel.",
)
SETUPS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("baseline (free)", "baseline", {}),
    ("exact as filed", "exact", {}),
    ("exact", "exact", {}),
    ("room countdown", "exact-countdown", {"allow_fallback": False}),
)
AS_FILED = "exact as filed"
HEADER = (
    f"{'setup':<16} {'n':>3} {'within':>7} {'words':>6} {'ceiling':>8} {'cut':>5} {'natural':>8} {'loops':>6} "
    f"{'numbers':>8} {'itself':>7} {'s/text':>7}"
)


def as_filed(backend):
    """The embedded model without its end token in the grammar: the word list as sent before the fix."""
    return with_capabilities(backend, end_token=None)


def written(o: Outcome) -> str:
    """Everything the model wrote, before a planned cut."""
    return o.written or o.text


def share(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else float("nan")


def summarize(label: str, rows: list[tuple[str, int, str, Outcome]]) -> str:
    outs = [o for *_, o in rows]
    natural = natural_share([o.end_probability for o in outs])
    return (
        f"{label:<16} {len(outs):>3} {share([o.verified for o in outs]):>7.2f} "
        f"{statistics.mean(count(written(o), 'en_words') for o in outs):>6.1f} "
        f"{share([count(written(o), 'en_words') >= n for _, n, _, o in rows]):>8.2f} "
        f"{share([o.left_out is not None for o in outs]):>5.2f} "
        f"{'-' if natural is None else f'{natural:.2f}':>8} "
        f"{share([bool(loops(o.text, own_text=ins)) for _, _, ins, o in rows]):>6.2f} "
        f"{share([number_list(o.text, ins) is not None for _, _, ins, o in rows]):>8.2f} "
        f"{share([talks_about_itself(o.text, ins) is not None for _, _, ins, o in rows]):>7.2f} "
        f"{statistics.mean(o.seconds for o in outs):>7.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=8, help=f"first N instructions (of {len(INSTRUCTIONS)})")
    ap.add_argument("--limits", type=int, nargs="+", default=[30, 60], help="the word limits (at most N)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--show", action="store_true", help="print every text")
    ap.add_argument("--setups", nargs="+", metavar="SETUP", help="only these setups (quoted labels); default all")
    ap.add_argument("--save", type=Path, help="write every text and its setup to this JSON file")
    args = ap.parse_args()
    setups = [s for s in SETUPS if not args.setups or s[0] in args.setups]

    t0 = time.monotonic()
    backend = get_backend("embedded")
    backends = {label: as_filed(backend) if label == AS_FILED else backend for label, _, _ in SETUPS}
    generate(backend, Request("Say hello.", 3, mode="exact", seed=1))  # warm up: the word list, the server
    print(f"embedded model ready in {time.monotonic() - t0:.1f} s; {os.cpu_count()} cores; seed {args.seed}")
    rows: list[tuple[str, int, str, Outcome]] = []
    for n in args.limits:
        for i, ins in enumerate(INSTRUCTIONS[: args.limit]):
            for label, mode, fields in setups:
                request = Request(ins, n, mode=mode, target_kind="at_most", seed=args.seed + i, **fields)  # type: ignore[arg-type]
                rows.append((label, n, ins, generate(backends[label], request)))
    if args.show:
        for label, n, _, o in rows:
            cut = f"  [left out: {o.left_out.words}]" if o.left_out else ""
            print(f"[{label} {n}] {o.count}/{n} {o.text}{cut}")
    if args.save:
        saved = [
            {"setup": s, "limit": n, "instruction": i, "text": o.text, "written": written(o)} for s, n, i, o in rows
        ]
        args.save.write_text(json.dumps(saved, indent=1, ensure_ascii=False))
    for n in [*args.limits, None]:
        print(f"\n{'at most ' + str(n) if n else 'all limits'} words")
        print(HEADER)
        print("-" * len(HEADER))
        for label, _, _ in setups:
            chosen = [r for r in rows if r[0] == label and (n is None or r[1] == n)]
            if chosen:
                print(summarize(label, chosen))
    print(f"\ntotal {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()

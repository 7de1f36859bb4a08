"""Planned endings (issue 19): natural-ending share and seconds per text, planned vs unplanned `exact`.

Run from the project root:  .venv/bin/python benchmarks/endings.py [--limit 5] [--lengths 12 40 80] [--x-runs 10]
(set CAPEL_EMBEDDED_THREADS=1 when other processes use the model)

Each instruction runs at each length through, in turn (interleaved, one at a time, so the timings share the load):
`baseline` (the free answer: it ends where the model chooses, so its count is rarely right; the reference share),
`exact` unplanned (`Request(plan_ending=False)`: today's cut at word N) and `exact` planned (the last units chosen
among candidate endings by the model's P(end)); `--countdown` adds `exact-countdown` both ways. Then the X preset
("at most 280" X-weighted characters) `--x-runs` times each way. Columns: EM (exact count), natural (share of texts
with P(end) >= 0.5), P(end) (mean), s/text (mean wall time) and the planned/unplanned time ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.quality import INSTRUCTIONS  # one set of instructions for both benchmarks
from capel_ui.backends import get_backend
from capel_ui.ending import natural_share
from capel_ui.generation import Outcome, Request, generate
from capel_ui.presets import preset

SETUPS: tuple[tuple[str, str, bool], ...] = (
    ("baseline (free)", "baseline", False),
    ("exact unplanned", "exact", False),
    ("exact planned", "exact", True),
)
COUNTDOWN: tuple[tuple[str, str, bool], ...] = (
    ("countdown unplanned", "exact-countdown", False),
    ("countdown planned", "exact-countdown", True),
)
HEADER = f"{'setup':<22} {'N':>4} {'n':>3} {'EM':>5} {'natural':>8} {'P(end)':>7} {'s/text':>7}"


@dataclass
class Row:
    label: str
    target: int | str
    instruction: str
    outcome: Outcome


def line(label: str, target: int | str, rows: list[Row]) -> str:
    outs = [r.outcome for r in rows]
    ps = [o.end_probability for o in outs]
    known = [p for p in ps if p is not None]
    share = natural_share(ps)
    return (
        f"{label:<22} {target!s:>4} {len(outs):>3} {sum(o.verified for o in outs) / len(outs):>5.2f} "
        f"{'-' if share is None else f'{share:.2f}':>8} {statistics.mean(known) if known else float('nan'):>7.2f} "
        f"{statistics.mean(o.seconds for o in outs):>7.2f}"
    )


def ratio(rows: list[Row], planned: str, unplanned: str) -> str:
    a = [r.outcome.seconds for r in rows if r.label == planned]
    b = [r.outcome.seconds for r in rows if r.label == unplanned]
    return f"{statistics.mean(a) / statistics.mean(b):.2f}×" if a and b else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=5, help=f"first N instructions (of {len(INSTRUCTIONS)})")
    ap.add_argument("--lengths", type=int, nargs="+", default=[12, 40, 80])
    ap.add_argument("--x-runs", type=int, default=10, help="runs of the X preset each way (0: none)")
    ap.add_argument("--countdown", action="store_true", help="also exact-countdown, planned and unplanned")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--show", action="store_true", help="print every text with its P(end)")
    args = ap.parse_args()

    t0 = time.monotonic()
    backend = get_backend("embedded")
    generate(backend, Request("Say hello.", 3, mode="exact", seed=1))  # warm up: the word list, the server
    print(f"embedded model ready in {time.monotonic() - t0:.1f} s; {os.cpu_count()} cores; seed {args.seed}")
    setups = SETUPS + (COUNTDOWN if args.countdown else ())
    rows: list[Row] = []
    for n in args.lengths:
        for i, ins in enumerate(INSTRUCTIONS[: args.limit]):
            for label, mode, plan in setups:  # interleaved: A, B, C, A, B, C ...
                req = Request(ins, n, mode=mode, plan_ending=plan, seed=args.seed + i)  # type: ignore[arg-type]
                rows.append(Row(label, n, ins, generate(backend, req)))
    x = preset("x-post")
    for i in range(args.x_runs):
        for label, plan in (("X ≤280 unplanned", False), ("X ≤280 planned", True)):
            req = Request.of(
                x.target, x.example, lang=x.lang, unit=x.unit, mode="exact", plan_ending=plan, seed=args.seed + i
            )
            rows.append(Row(label, "X", x.example, generate(backend, req)))
    if args.show:
        for r in rows:
            print(f"[{r.label} {r.target}] P={r.outcome.end_probability} {r.outcome.text}")
    print(HEADER)
    print("-" * len(HEADER))
    labels = list(dict.fromkeys(r.label for r in rows))
    for target in [*args.lengths, "X"]:
        for label in labels:
            chosen = [r for r in rows if r.label == label and r.target == target]
            if chosen:
                print(line(label, target, chosen))
    print()
    for n in args.lengths:
        same = [r for r in rows if r.target == n]
        print(f"N = {n}: planned/unplanned time exact {ratio(same, 'exact planned', 'exact unplanned')}", end="")
        if args.countdown:
            print(f", countdown {ratio(same, 'countdown planned', 'countdown unplanned')}", end="")
        print()
    print(f"all lengths: exact {ratio([r for r in rows if r.target != 'X'], 'exact planned', 'exact unplanned')}")
    if args.x_runs:
        xs = [r for r in rows if r.label == "X ≤280 planned"]
        print(
            f"X preset planned: {sum((r.outcome.end_probability or 0) >= 0.5 for r in xs)} of {len(xs)} end naturally"
        )
    print(f"\ntotal {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()

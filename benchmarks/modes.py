"""What each mode costs on the embedded model: length hit, completion tokens, seconds, tokens per counted word.

Run from the project root:  .venv/bin/python benchmarks/modes.py [--targets 50 200] [--seed 7]

Every mode runs the same English instruction with the same seed through `generate()`, the path the app uses.
SmolLM2-135M rarely follows the countdown on its own, so `baseline` and `capel` show the unguided model;
`exact` and `exact-countdown` are grammar-guaranteed. Timings depend on what else the machine's cores are doing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.backends import get_backend
from capel_ui.generation import Request, generate
from capel_ui.vocab import MARKER_MODES, Mode

INSTRUCTION = "Write about the history of lighthouses."
MODES: tuple[Mode, ...] = ("baseline", "capel", "exact", "exact-countdown")
HEADER = f"{'mode':<16} {'N':>4} {'count':>6} {'exact?':>6} {'valid':>5} {'tokens':>7} {'seconds':>8} {'tok/word':>8}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    t0 = time.monotonic()
    backend = get_backend("embedded")
    print(f"embedded model ready in {time.monotonic() - t0:.1f} s; {os.cpu_count()} cores; seed {args.seed}")
    print(f"instruction: {INSTRUCTION!r}\n")
    print(HEADER)
    print("-" * len(HEADER))
    cost: dict[tuple[Mode, int], float | None] = {}
    for n in args.targets:
        for mode in MODES:
            o = generate(backend, Request(INSTRUCTION, n, mode=mode, seed=args.seed))
            per_word = o.tokens_per_unit
            cost[mode, n] = per_word
            status = "" if o.status == "complete" else f"  [{o.status}: {o.failure}]"
            valid = ("yes" if o.valid else "no") if mode in MARKER_MODES else "-"  # only countdowns can be invalid
            print(
                f"{mode:<16} {n:>4} {o.count:>6} {'yes' if o.exact else 'no':>6} "
                f"{valid:>5} {o.completion_tokens or 0:>7} {o.seconds:>8.1f} "
                f"{per_word if per_word is not None else float('nan'):>8.2f}{status}",
                flush=True,
            )
        print()
    for n in args.targets:
        exact, base = cost.get(("exact", n)), cost.get(("baseline", n))
        countdown = cost.get(("exact-countdown", n))
        if exact and base:
            extra = f"; exact-countdown {countdown:.2f} ({countdown / base:.1f}x)" if countdown else ""
            print(
                f"N={n}: exact costs {exact:.2f} tokens per counted word vs baseline {base:.2f} "
                f"({exact / base:.2f}x){extra}"
            )


if __name__ == "__main__":
    main()

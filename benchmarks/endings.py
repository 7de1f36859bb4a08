"""The X preset ("at most 280" X-weighted characters): does a post end at a natural sentence end inside the limit?

Run from the project root:  .venv/bin/python benchmarks/endings.py [--runs 10] [--show]
(set CAPEL_EMBEDDED_THREADS=1 when other processes use the model)

The preset's example instruction runs `--runs` times each way on the embedded model, seeds seed, seed+1, ...,
interleaved so their timings share the load: unplanned (`plan_ending=False`: the text fills the limit and is cut
where it falls) and planned (the default: the text ends at the last sentence end inside the limit that the model
would end a phrase on, or gains a short closing sentence where the limit leaves room). Printed per way: verified
share, how many texts end naturally (ending score >= `ending.NATURAL`), how many stop inside a sentence (the last
character is no stop), mean characters and seconds. The exact-N endings are measured by benchmarks/quality.py.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.backends import get_backend
from capel_ui.ending import NATURAL
from capel_ui.generation import Outcome, Request, generate
from capel_ui.presets import preset

WAYS = (("unplanned", False), ("planned", True))


def line(label: str, outs: list[Outcome]) -> str:
    natural = sum((o.end_probability or 0) >= NATURAL for o in outs)
    inside = sum(o.text.rstrip("\"')”’ ")[-1:] not in ".!?" for o in outs)
    return (
        f"{label:<10} verified {sum(o.verified for o in outs)}/{len(outs)}   ends naturally {natural}/{len(outs)}   "
        f"stops inside a sentence {inside}/{len(outs)}   {statistics.mean(o.count for o in outs):5.0f} characters   "
        f"{statistics.mean(o.seconds for o in outs):5.2f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--show", action="store_true", help="print every post with its ending score")
    args = ap.parse_args()
    t0 = time.monotonic()
    backend = get_backend("embedded")
    x = preset("x-post")
    outs: dict[str, list[Outcome]] = {label: [] for label, _ in WAYS}
    for i in range(args.runs):
        for label, plan in WAYS:
            req = Request.of(x.target, x.example, lang=x.lang, unit=x.unit, mode="exact", plan_ending=plan,
                             seed=args.seed + i)  # fmt: skip
            outs[label].append(generate(backend, req))
    if args.show:
        for label, found in outs.items():
            for o in found:
                print(f"[{label}] ending {o.end_probability} {o.count} chars: {o.text}")
    print(f'X preset "{x.example}", {args.runs} runs each way')
    for label, found in outs.items():
        print(line(label, found))
    print(f"\ntotal {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()

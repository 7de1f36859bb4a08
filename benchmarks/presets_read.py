"""Is the variant ranked first a text a writer would keep? Every English preset, three instructions each, on the
embedded model, the way Write and `generate --variants 3` run them.

Run from the project root:  .venv/bin/python benchmarks/presets_read.py [--variants 3] [--seed 11] [--show]
(8 presets × 3 instructions × 3 variants: about 5 minutes on 2 idle cores; set CAPEL_EMBEDDED_THREADS=1 when other
processes use the model)

Each request starts through `service.start` (the one path Write and the CLI use: the preset's unit and limit, the
mode `--mode auto` picks, `variants` K written at once, ranked by `variants.rank`), nothing saved. Columns per preset:
verified (share of all texts), junk (share of all texts `quality.junk` calls "not a text to publish"), best junk
(share of best-ranked variants that are junk: only when every variant was), best warned (best-ranked variants with any
quality warning), all junk (requests whose every variant is junk). The flags are the app's own: what they miss only a
reader sees, so `--show` prints every best-ranked text with its score line, to be read (docs/results.md says what a
reader found).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.backends import get_backend
from capel_ui.presets import PRESETS, Preset
from capel_ui.request import Request
from capel_ui.service import modes_for, start
from capel_ui.variants import Candidate

INSTRUCTIONS: dict[str, tuple[str, ...]] = {
    "headline": (
        "Write a headline about a new footbridge over the river in York.",
        "Write a headline for a bakery that opens a second shop in Leeds.",
    ),
    "tweet-length": (
        "Write a social media post inviting neighbours to a street clean-up on Sunday morning.",
        "Write a social media post about a bookshop's reading club for children.",
    ),
    "abstract": (
        "Write an abstract for a study of how sleep affects exam results in teenagers.",
        "Write an abstract for a study of bike lanes and road safety in three cities.",
    ),
    "x-post": (
        "Announce a free coding workshop for teenagers at the city library on Saturday.",
        "Write an X post about a café that now opens at 6 am on weekdays.",
    ),
    "sms": (
        "Remind a customer that their car service is on Friday at 9:15 am at Hill Garage.",
        "Tell a customer that their parcel will arrive tomorrow between 10 am and noon.",
    ),
    "ads-headline": (
        "Advertise a dog grooming salon in Bristol.",
        "Write a Google Ads headline for a vegan bakery in Brighton.",
    ),
    "ads-description": (
        "Advertise a family-run bike repair shop in Portland.",
        "Write a Google Ads description for an online Spanish course for beginners.",
    ),
    "meta-description": (
        "Describe a page that sells handmade leather wallets.",
        "Write the meta description of a page with opening hours of a city swimming pool.",
    ),
    "linkedin-headline": (
        "Write a LinkedIn headline for a data analyst who works in healthcare.",
        "Write a LinkedIn headline for a primary school teacher who teaches coding.",
    ),
}
"""Two instructions of a writer's for each English preset, besides the preset's own example."""


def ranked(preset: Preset, instruction: str, backend, k: int, seed: int) -> list[Candidate]:
    """The K variants of one request, best first, as `generate --preset … --variants K` ranks them."""
    mode = modes_for(backend.capabilities, preset.lang, preset.unit, preset.kind).default
    request = Request.of(preset.target, instruction, lang=preset.lang, unit=preset.unit, mode=mode, seed=seed)
    handle = start(request, backend, None, origin="cli", variants=k)
    handle.run_together(lambda: None)
    return handle.result()


def share(flags: list[bool]) -> str:
    return f"{100 * sum(flags) / len(flags):.0f}%" if flags else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", type=int, default=3)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--show", action="store_true", help="print every best-ranked text with its score line")
    args = ap.parse_args()
    backend = get_backend("embedded")
    print("| preset | requests | verified | junk | best junk | best warned | all junk | s/request |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    totals: dict[str, list[bool]] = {"verified": [], "junk": [], "best junk": [], "best warned": [], "all": []}
    shown: list[str] = []
    for preset in (p for p in PRESETS if p.lang == "en"):
        rows: dict[str, list[bool]] = {key: [] for key in totals}
        times: list[float] = []
        for instruction in (preset.example, *INSTRUCTIONS[preset.key]):
            started = time.monotonic()
            found = ranked(preset, instruction, backend, args.variants, args.seed)
            times.append(time.monotonic() - started)
            best = found[0]
            rows["verified"] += [c.outcome.verified for c in found]
            rows["junk"] += [c.junk for c in found]
            rows["best junk"].append(best.junk)
            rows["best warned"].append(bool(best.assessment.warnings))
            rows["all"].append(all(c.junk for c in found))
            shown.append(
                f"[{preset.key}] {instruction}\n  best: {best.outcome.text!r}\n  score line: {best.explanation}"
            )
        for key in totals:
            totals[key] += rows[key]
        cells = " | ".join(share(rows[key]) for key in totals)
        print(f"| {preset.key} | {len(times)} | {cells} | {statistics.mean(times):.1f} |", flush=True)
    print(f"| all | {len(totals['all'])} | {' | '.join(share(totals[key]) for key in totals)} | |")
    if args.show:
        print("\n" + "\n".join(shown))


if __name__ == "__main__":
    main()

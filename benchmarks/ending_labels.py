"""Does the ending score agree with a reader? 186 endings read and labelled by hand, scored by the embedded model.

Run from the project root:  .venv/bin/python benchmarks/ending_labels.py [--show]   (186 texts, one at a time:
about 3 minutes on idle cores, 25 on a loaded machine)

Each text of `benchmarks/data/ending_labels.json` (see its README) is scored two ways by the embedded model, asked
with the instruction and its length as the question (`Generation.ending_messages`):
- P(end): the model's probability of ending its whole answer right after the text (the issue's first proxy);
- the ending score (ending.py): its probability of writing the last word as it stands and then punctuation that
  ends a phrase; "ends naturally" from `NATURAL` up.
Printed: how often each agrees with the reader, and how it errs (natural texts it calls cut off, cut ones it calls
natural). `--show` lists every text with both figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.backends import get_backend
from capel_ui.backends.openai_compat import end_share
from capel_ui.ending import NATURAL, adjusted
from capel_ui.plan import RunPlan
from capel_ui.request import Request

DATA = Path(__file__).with_name("data") / "ending_labels.json"


def scores(backend, item: dict) -> tuple[float | None, float | None]:
    """(P(end), the model's ending score) of one labelled text."""
    messages = RunPlan.of(backend, Request(item["instruction"], item["target"], mode="exact")).ending_messages
    text = item["text"].strip()
    return end_share(backend.next_tokens(messages, text)), backend.ending_score(messages, text)


def agreement(name: str, calls: list[bool], items: list[dict]) -> str:
    """How often `calls` (True: natural) agree with the reader, and each kind's errors with its share."""
    natural = [i["reader"] == "natural" for i in items]
    agree = sum(c == n for c, n in zip(calls, natural, strict=True))
    n_nat, n_cut = sum(natural), len(natural) - sum(natural)
    missed = sum(n and not c for c, n in zip(calls, natural, strict=True))
    passed = sum(c and not n for c, n in zip(calls, natural, strict=True))
    return (
        f"{name:<36} agrees {agree / len(items):4.0%}   natural called cut off {missed:>3} of {n_nat:<3}"
        f"({missed / max(n_nat, 1):3.0%})   cut off called natural {passed:>3} of {n_cut:<3}"
        f"({passed / max(n_cut, 1):3.0%})"
    )


def table(items: list[dict], found: list[tuple[float | None, float | None]]) -> None:
    """The three ways to call an ending, on `items`."""
    print(agreement("P(end) >= 0.5", [(p or 0) >= 0.5 for p, _ in found], items))
    print(agreement(f"model's score >= {NATURAL}", [(s or 0) >= NATURAL for _, s in found], items))
    shipped = [adjusted(s, i["text"].strip()) for i, (_, s) in zip(items, found, strict=True)]
    print(agreement("ending score (model + last words)", [(s or 0) >= NATURAL for s in shipped], items))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="every text with both figures")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="texts scored at once (default 1: on a loaded machine, 4 at once gave 0.0 for 142 of 186 texts that "
        "score up to 0.98 one at a time, 26 November 2026)",
    )
    args = ap.parse_args()
    items = json.loads(DATA.read_text(encoding="utf-8"))
    backend = get_backend("embedded")
    with ThreadPoolExecutor(args.threads) as pool:
        found = list(pool.map(lambda i: scores(backend, i), items))
    for split in ("dev", "held-out"):
        part = [k for k, i in enumerate(items) if i["split"] == split]
        chosen = [items[k] for k in part]
        reader = sum(i["reader"] == "natural" for i in chosen)
        print(f"\n{split}: {len(chosen)} endings, {reader} natural to the reader")
        table(chosen, [found[k] for k in part])
    print(f"\nall: {len(items)} endings")
    table(items, found)
    print(f"(texts the model could not read, counted cut off: {sum(s is None for _, s in found)})")
    if args.show:
        for item, (p, s) in zip(items, found, strict=True):
            ending, score = " ".join(item["text"].split()[-8:]), s if s is not None else float("nan")
            shipped = adjusted(s, item["text"].strip())
            print(
                f"{item['split']:<8} {item['reader']:<8} P(end) {p or 0:4.2f} model {score:5.3f} "
                f"ending {shipped if shipped is not None else float('nan'):5.3f}  …{ending}"
            )


if __name__ == "__main__":
    main()

"""Does the ending score agree with a reader? 262 endings read and labelled by hand, scored by the embedded model.

Run from the project root:  .venv/bin/python benchmarks/ending_labels.py [--show] [--threads 4]   (262 texts: about
4 minutes on idle cores, longer on a loaded machine)

Each text of `benchmarks/data/ending_labels.json` (see its README) is scored two ways by the embedded model, asked
with the instruction and its length as the question (`Generation.ending_messages`):
- P(end): the model's probability of ending its whole answer right after the text (the issue's first proxy);
- the ending score (ending.py): its probability of writing the last word as it stands and then punctuation that
  ends a phrase; "ends naturally" from `NATURAL` up.
Printed: how often each agrees with the reader, and how it errs (natural texts it calls cut off, cut ones it calls
natural), per split: `dev` (the threshold and the last-word rules were written looking at it), `held-out` and
`held-out-2` (only measured). A text the server did not score (a request that failed or timed out) is counted
apart, never as cut off. `--show` lists every text with both figures.
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


def agreement(name: str, scored: list[float | None], items: list[dict]) -> str:
    """How often `scored` (natural from `NATURAL` up) agrees with the reader, and each kind's errors with its share,
    over the texts that have a score."""
    kept = [(s, i) for s, i in zip(scored, items, strict=True) if s is not None]
    calls = [s >= NATURAL for s, _ in kept]
    natural = [i["reader"] == "natural" for _, i in kept]
    agree = sum(c == n for c, n in zip(calls, natural, strict=True))
    n_nat, n_cut = sum(natural), len(natural) - sum(natural)
    missed = sum(n and not c for c, n in zip(calls, natural, strict=True))
    passed = sum(c and not n for c, n in zip(calls, natural, strict=True))
    return (
        f"{name:<36} agrees {agree / max(len(kept), 1):4.0%}   natural called cut off {missed:>3} of {n_nat:<3}"
        f"({missed / max(n_nat, 1):3.0%})   cut off called natural {passed:>3} of {n_cut:<3}"
        f"({passed / max(n_cut, 1):3.0%})   not scored {len(items) - len(kept)}"
    )


def table(items: list[dict], found: list[tuple[float | None, float | None]]) -> None:
    """The three ways to call an ending, on `items`."""
    share = [None if p is None else p / 0.5 * NATURAL for p, _ in found]  # P(end) >= 0.5 on the same scale
    print(agreement("P(end) >= 0.5", share, items))
    print(agreement(f"model's score >= {NATURAL}", [s for _, s in found], items))
    shipped = [adjusted(s, i["text"].strip()) for i, (_, s) in zip(items, found, strict=True)]
    print(agreement("ending score (model + last words)", shipped, items))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="every text with both figures")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="texts scored at once (default 1; 4 at once gives the same scores, up to batching's rounding, but on a "
        "loaded machine more requests run past the 30 s a score may take and are counted as not scored)",
    )
    args = ap.parse_args()
    items = json.loads(DATA.read_text(encoding="utf-8"))
    backend = get_backend("embedded")
    with ThreadPoolExecutor(args.threads) as pool:
        found = list(pool.map(lambda i: scores(backend, i), items))
    for split in ("dev", "held-out", "held-out-2"):
        part = [k for k, i in enumerate(items) if i["split"] == split]
        chosen = [items[k] for k in part]
        reader = sum(i["reader"] == "natural" for i in chosen)
        print(f"\n{split}: {len(chosen)} endings, {reader} natural to the reader")
        table(chosen, [found[k] for k in part])
    print(f"\nall: {len(items)} endings")
    table(items, found)
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

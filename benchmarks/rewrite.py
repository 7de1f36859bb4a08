"""Rewrite to length: does a shortening keep the writer's facts, and whole clauses? Facts kept, new words, s/text.

Run from the project root:  .venv/bin/python benchmarks/rewrite.py [--limit 13] [--modes exact] [--show]
(13 paragraphs × 2 targets = 26 texts in `exact`: about 8 minutes on 2 cores; CAPEL_EMBEDDED_THREADS=1 when other
processes use the model)

Paragraphs: the 8 public-domain ones (`capel_ui/bench/data/rewrite/paragraphs.jsonl`) and 5 written for this
project of other kinds (`own.jsonl`: news ×2, product, event, biography; see the folder's README). Each is
shortened on the embedded model to 50% and 75% of its English words through `generate()`, as the app and
`generate --rewrite` run it; `exact` takes the route `rewrite.route` chooses (whole clauses, else selection). Then
each is lengthened to 125%, which the embedded model must refuse (it cannot lengthen without inventing). Columns:

- EM: share of texts with exactly the target count and verified.
- facts: mean share of the source's facts kept (facts.py: names, numbers, money, dates, the first sentence's main
  clause).  all: share of texts that kept every fact.
- clauses: share of texts written by whole clauses (the rest by selection, where no choice of whole parts fits).
- new words: mean share of the text's words that are not in the source.  invented: texts with a fact not in the
  source.
- s/text: mean wall time.

Whether every kept sentence is grammatical is read by a person (`--show` prints every text); docs/results.md
says what was read.

`--routes` runs no model: for each paragraph and target it prints the route and every text the grammar offers
the model (all keep the same number of facts, the most any whole-clause text of that length keeps), and the
table of facts kept by the texts offered (the fewest of them): what the model's pick keeps, whatever it picks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.backends import get_backend
from capel_ui.counting import count
from capel_ui.generation import generate
from capel_ui.outcome import Outcome
from capel_ui.plan import RunPlan
from capel_ui.prompts import REWRITE
from capel_ui.request import Request
from capel_ui.rewrite import faithfulness, route
from capel_ui.verdict import Target
from capel_ui.vocab import PROJECT_ROOT

DATA = PROJECT_ROOT / "capel_ui" / "bench" / "data" / "rewrite"
TASKS = (("shorten to 50%", 0.5), ("shorten to 75%", 0.75))
HEADER = (
    f"{'task':<15} {'mode':<6} {'n':>3} {'EM':>5} {'facts':>6} {'all':>5} {'clauses':>7} {'new words':>9} "
    f"{'invented':>8} {'s/text':>7}"
)


@dataclass
class Row:
    task: str
    mode: str
    item: dict[str, str]
    outcome: Outcome
    route: str
    seconds: float


def paragraphs(limit: int) -> list[dict[str, str]]:
    items = []
    for name in ("paragraphs.jsonl", "own.jsonl"):
        items += [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]
    return items[:limit]


def request(source: str, share: float, mode: str, args: argparse.Namespace) -> Request:
    target = max(1, round(count(source, "en_words") * share))
    return Request.of(
        Target.exactly(target),
        REWRITE["en"].format(text=source),
        mode=mode,
        temperature=args.temperature,
        seed=args.seed,
        max_calls=1,
    )


def run_one(backend, source: str, share: float, mode: str, args) -> tuple[Outcome, str, float]:
    req = request(source, share, mode, args)
    t0 = time.perf_counter()
    chosen = RunPlan.of(backend, req).rewrite
    outcome = generate(backend, req)
    return outcome, chosen.kind if chosen else "-", time.perf_counter() - t0


def summary(rows: list[Row]) -> str:
    n = len(rows)
    faith = [r.outcome.faithfulness for r in rows if r.outcome.faithfulness is not None]
    facts = [f.facts for f in faith if f.facts is not None]
    em = sum(r.outcome.verified for r in rows) / n
    kept = statistics.mean(f.share for f in facts)
    every = sum(not f.lost for f in facts) / n
    by_clauses = sum(r.route == "clauses" for r in rows) / n
    new = statistics.mean(f.new for f in faith)
    invented = sum(bool(f.invented) for f in facts)
    secs = statistics.mean(r.seconds for r in rows)
    task, mode = rows[0].task, rows[0].mode
    return (
        f"{task:<15} {mode:<6} {n:>3} {em:>5.0%} {kept:>6.0%} {every:>5.0%} {by_clauses:>7.0%} {new:>9.1%} "
        f"{invented:>8} {secs:>7.1f}"
    )


def lengthening(backend, items: list[dict[str, str]], args: argparse.Namespace) -> str:
    """Each paragraph lengthened to 125%: the embedded model refuses every one, saying why."""
    refused, why = 0, ""
    for item in items:
        try:
            generate(backend, request(item["text"], 1.25, "exact", args))
        except ValueError as exc:
            refused, why = refused + 1, str(exc)
    return f"lengthen to 125%: {refused} of {len(items)} refused before any model call ({why[:110]}…)"


def routes(items: list[dict[str, str]]) -> None:
    """The texts each route offers, and the facts they keep, without a model."""
    print(f"{'task':<15} {'n':>3} {'facts':>6} {'all':>5} {'clauses':>7} {'offered':>7} {'new words':>9}")
    for task, share in TASKS:
        kept, every, by_clauses, offered, new = [], 0, 0, 0, []
        for item in items:
            source = item["text"]
            target = Target.exactly(round(count(source, "en_words") * share))
            chosen = route(source, "exact", "en", "en_words", target, True)
            found = [faithfulness(source, text) for text in chosen.choices]
            print(f"\n[{task} · {chosen.kind} · {item['id']} · {len(chosen.choices)} offered]")
            for text in chosen.choices:
                print(f"  * {text}")
            if found:
                worst = min(found, key=lambda f: f.facts.share)
                kept.append(worst.facts.share)
                every += not worst.facts.lost
                new.append(max(f.new for f in found))
                print(f"  {worst.describe()}")
            by_clauses += chosen.kind == "clauses"
            offered += len(chosen.choices)
        n = len(items)
        mean = statistics.mean(kept) if kept else 0.0
        new_words = statistics.mean(new) if new else 0.0
        print(f"\n{task:<15} {n:>3} {mean:>6.0%} {every / n:>5.0%} {by_clauses / n:>7.0%} {offered / n:>7.1f} "
              f"{new_words:>9.1%}  (facts and new words over the {len(kept)} by clauses)")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=13, help="paragraphs (default all 13)")
    ap.add_argument("--modes", default="exact")
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", action="store_true", help="print every text")
    ap.add_argument("--routes", action="store_true", help="no model: the texts each route offers, their facts")
    args = ap.parse_args()
    if args.routes:
        routes(paragraphs(args.limit))
        return
    backend = get_backend("embedded")
    modes = args.modes.split(",")
    items = paragraphs(args.limit)
    print(f"{len(items)} paragraphs × {len(TASKS)} targets × {len(modes)} modes, temperature {args.temperature}")
    table: dict[tuple[str, str], list[Row]] = {}
    for item in items:  # paragraph by paragraph, so a run cut short has both targets of the ones it did
        for task, share in TASKS:
            for mode in modes:
                outcome, kind, secs = run_one(backend, item["text"], share, mode, args)
                table.setdefault((task, mode), []).append(Row(task, mode, item, outcome, kind, secs))
                if args.show:
                    f = outcome.faithfulness
                    print(f"\n[{task} · {mode} · {kind} · {item['id']} · {outcome.count}/{outcome.target}"
                          f" · {'verified' if outcome.verified else 'NOT verified'} · {secs:.1f} s"
                          f" · {f.describe() if f else '-'}]\n{outcome.text}", flush=True)  # fmt: skip
    print("\n" + HEADER)
    for rows in table.values():
        print(summary(rows))
    print(lengthening(backend, items, args))


if __name__ == "__main__":
    main()

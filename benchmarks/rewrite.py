"""Rewrite to length: does a rewrite keep the writer's meaning? EM, faithfulness, preambles, seconds per text.

Run from the project root:  .venv/bin/python benchmarks/rewrite.py [--limit 4] [--modes exact,baseline,capel]
(4 paragraphs × 3 targets × 3 modes = 36 texts: a few minutes on 2 cores; CAPEL_EMBEDDED_THREADS=1 when other
processes use the model)

Public-domain paragraphs (`capel_ui/bench/data/rewrite/`, see its README) are rewritten on the embedded model to
50% and 75% of their English words (shortening) and to 125% (lengthening), each through `generate()` as the app and
`generate --rewrite` run it. `exact` shortens by selection (a grammar of the writer's own words, rewrite.py) and
lengthens under the word-list grammar; `baseline` and `capel` are the prompt paths. Columns:

- EM: share of texts with exactly the target count and verified.
- kept: mean share of the source's content words the text kept.  from src: mean share of the text's words that
  are in the source (1 - rewrite.faithfulness's `new`).  >=80%: share of texts with at least 80% from the source.
- preamble: texts whose reply opened with a preamble ("Here is …:"), cut before counting; counted: texts whose
  counted text still opens like one (must be 0).
- s/text: mean wall time.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.backends import get_backend
from capel_ui.counting import count
from capel_ui.generation import Outcome, Request, generate
from capel_ui.prompts import REWRITE
from capel_ui.rewrite import strip_preamble
from capel_ui.verdict import Target
from capel_ui.vocab import PROJECT_ROOT

DATA = PROJECT_ROOT / "capel_ui" / "bench" / "data" / "rewrite" / "paragraphs.jsonl"
TASKS = (("shorten to 50%", 0.5), ("shorten to 75%", 0.75), ("lengthen to 125%", 1.25))
OPENS_LIKE_PREAMBLE = re.compile(r"^\W*(here(?:'s| is| are)|sure|certainly|the (?:revised|rewritten)|revised)\b", re.I)
HEADER = f"{'task':<17} {'mode':<9} {'n':>3} {'EM':>5} {'kept':>5} {'from src':>8} {'>=80%':>6} {'preamble':>8} {'counted':>7} {'s/text':>7}"  # noqa: E501


@dataclass
class Row:
    task: str
    mode: str
    source: str
    outcome: Outcome
    seconds: float


def paragraphs(limit: int) -> list[dict[str, str]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()][:limit]


def run_one(backend, source: str, share: float, mode: str, args: argparse.Namespace) -> tuple[Outcome, float]:
    target = max(1, round(count(source, "en_words") * share))
    request = Request.of(
        Target.exactly(target),
        REWRITE["en"].format(text=source),
        mode=mode,
        temperature=args.temperature,
        seed=args.seed,
        max_calls=1,
    )
    t0 = time.perf_counter()
    outcome = generate(backend, request)
    return outcome, time.perf_counter() - t0


def summary(rows: list[Row]) -> str:
    n = len(rows)
    faith = [r.outcome.faithfulness for r in rows if r.outcome.faithfulness is not None]
    em = sum(r.outcome.verified for r in rows) / n
    kept = statistics.mean(f.kept for f in faith)
    from_src = statistics.mean(1 - f.new for f in faith)
    high = sum(1 - f.new >= 0.8 for f in faith) / n
    preamble = sum(strip_preamble(r.outcome.raw, r.source) != r.outcome.raw.strip() for r in rows)
    counted = sum(bool(OPENS_LIKE_PREAMBLE.match(r.outcome.text)) for r in rows)
    secs = statistics.mean(r.seconds for r in rows)
    task, mode = rows[0].task, rows[0].mode
    return (
        f"{task:<17} {mode:<9} {n:>3} {em:>5.0%} {kept:>5.0%} {from_src:>8.0%} {high:>6.0%} {preamble:>8} "
        f"{counted:>7} {secs:>7.1f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=4, help="paragraphs (default 4 of 8)")
    ap.add_argument("--modes", default="exact,baseline,capel")
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", action="store_true", help="print every text")
    args = ap.parse_args()
    backend = get_backend("embedded")
    modes = args.modes.split(",")
    items = paragraphs(args.limit)
    print(f"{len(items)} paragraphs × {len(TASKS)} targets × {len(modes)} modes, temperature {args.temperature}")
    table: dict[tuple[str, str], list[Row]] = {}
    for task, share in TASKS:
        for item in items:
            for mode in modes:  # interleaved, so a slow spell of the machine hits every mode alike
                outcome, secs = run_one(backend, item["text"], share, mode, args)
                table.setdefault((task, mode), []).append(Row(task, mode, item["text"], outcome, secs))
                if args.show or item is items[0]:
                    f = outcome.faithfulness
                    print(f"\n[{task} · {mode} · {item['id']} · {outcome.count}/{outcome.target}"
                          f" · {f.describe() if f else '-'}]\n{outcome.text}")  # fmt: skip
    print("\n" + HEADER)
    for rows in table.values():
        print(summary(rows))


if __name__ == "__main__":
    main()

"""Batch speed and cost: rows per minute on the embedded model and against a scripted API, tokens per verified row.

Run from the project root:  .venv/bin/python benchmarks/batch.py [--embedded-rows 8] [--api-rows 40] [--skip-embedded]

Each backend writes a fresh batch (a new database in a temporary folder, so nothing is resumed) through
`capel_ui.batch.Batch`, the path the `batch` command and the Batch page take: every row a saved run, the rows run
concurrently within the backend's limits.

- embedded: SmolLM2-135M on llama.cpp, its 4 parallel slots, `exact` mode (guaranteed), a mix of exactly N words,
  a word range and character limits.
- scripted API: an OpenAI-compatible server on 127.0.0.1 that streams like a hosted model (a word every 50 ms)
  and answers every tenth request with a 429 (Retry-After 1 s) that the guard waits out; 4 requests at once,
  `baseline` mode with "at most" targets.

Timings depend on what else the machine's cores are doing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

EMBEDDED_ROWS = [
    ("Write a product description for a hand-made ceramic mug", "30", "en_words"),
    ("Write a headline for a seaside bookshop", "10", "en_words"),
    ("Write a Google Ads headline for an online plant shop", "≤ 30", "chars"),
    ("Write a tagline for a cycling repair shop", "8-10", "en_words"),
    ("Write a meta description for a page about a restored lighthouse", "≤ 155", "chars"),
    ("Write a product description for a cast-iron skillet", "25", "en_words"),
    ("Write a text message reminding a customer of their table on Friday", "≤ 160", "sms"),
    ("Write a short review of a pair of running shoes", "15-20", "en_words"),
]
REPLY = "Fresh sourdough every Saturday morning, baked slowly with local flour and sea salt."  # 13 words, 84 chars


def table_for(rows: list[tuple[str, str, str]], n: int) -> bytes:
    lines = ["instruction,target,unit,nonce"]
    nonce = time.time_ns()
    for i in range(n):
        instruction, target, unit = rows[i % len(rows)]
        lines.append(f'"{instruction} (#{i + 1})",{target},{unit},{nonce}')
    return ("\n".join(lines) + "\n").encode()


def run_batch(label: str, data: bytes, options, concurrency: int | None = None) -> None:
    from capel_ui.batch.runner import Batch
    from capel_ui.batch.table import read_table
    from capel_ui.storage import get_engine

    table = read_table(data, "bench.csv")
    batch = Batch(table, data, options, get_engine(), concurrency=concurrency)
    for model in {j.model for j in batch.jobs}:
        batch.backend(model)  # the model is started before the clock runs
    t0 = time.monotonic()
    batch.run()
    seconds = time.monotonic() - t0
    results = [batch.results[j.key] for j in batch.jobs]
    verified = [r for r in results if r.verified]
    tokens = sum(r.tokens or 0 for r in results)
    per_verified = f"{tokens / len(verified):.0f}" if verified else "-"
    print(
        f"{label:<14} {len(results):>5} {batch.workers_used:>5} {seconds:>8.1f} {len(results) / seconds * 60:>9.1f} "
        f"{len(verified):>4}/{len(results):<4} {tokens:>8} {per_verified:>10}"
    )
    for r in results:
        if not r.verified:
            print(f"    not verified: {r.verdict or r.error}")


def scripted_api(rows: int) -> None:
    from capel_ui.batch.rows import Options
    from tests.scripted_server import MODEL, ScriptedServer, answer, ok, status

    served = {"n": 0}
    lock = threading.Lock()

    def respond(body) -> object:
        with lock:
            served["n"] += 1
            n = served["n"]
        if n % 10 == 0:
            return status(429, {"error": {"message": "Rate limit reached"}}, headers={"retry-after": "1"})
        words = [" " + w for w in REPLY.split()]
        words[0] = words[0].lstrip()
        return ok(words, usage=(60, 20), delay=0.05)  # a word every 50 ms, as a hosted model streams

    server = ScriptedServer().start()
    try:
        server.script(then=answer(respond))
        data = table_for([("Write an X post about our bakery's Saturday sourdough", "at most 30", "en_words")], rows)
        options = Options(model=MODEL, mode="baseline", base_url=server.url)
        run_batch("scripted API", data, options, concurrency=4)
        print(f"    {served['n']} requests served, {served['n'] // 10} of them answered 429 and retried")
    finally:
        server.stop()


def embedded(rows: int) -> None:
    from capel_ui.batch.rows import Options

    run_batch("embedded", table_for(EMBEDDED_ROWS, rows), Options(model="embedded", mode="exact"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedded-rows", type=int, default=8)
    ap.add_argument("--api-rows", type=int, default=40)
    ap.add_argument("--skip-embedded", action="store_true")
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="capel-batch-bench-")
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.db"
    os.environ.setdefault("CAPEL_RETRY_BACKOFF", "0.5")
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}; database {folder}/bench.db\n")
    columns = ("rows", 5), ("at", 5), ("seconds", 8), ("rows/min", 9), ("verified", 9), ("tokens", 8), ("tok/verif", 10)
    print(f"{'backend':<14} " + " ".join(f"{name:>{width}}" for name, width in columns))
    scripted_api(args.api_rows)
    if not args.skip_embedded:
        embedded(args.embedded_rows)


if __name__ == "__main__":
    main()

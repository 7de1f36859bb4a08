"""How much the embedded llama.cpp server grows as new prompts come: with the app's setting (a host-memory prompt
cache of 16 MiB, `embedded.RAM_PROMPT_CACHE`), with none and with llama.cpp's default (8 GiB), each in a process of
its own.

Run from the project root:  .venv/bin/python benchmarks/server_memory.py [--prompts 150]

Each prompt is a new instruction (as a day of runs in the app brings), asked for its next tokens after a short answer
so far (an ending question: one forward pass after the prompt is read). Printed: the process's resident memory
before and after, and the seconds the prompts took.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SETTINGS = {"the app's (16 MiB)": None, "none": 0, "llama.cpp's default (8 GiB)": 8192}


def rss_mb() -> float:
    """This process's resident memory (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(prompts: int, cache_mib: int | None) -> dict[str, float]:
    """Start the server in this process with `cache_mib` (None: the app's setting), then ask `prompts` new prompts."""
    from capel_ui.backends import embedded, get_backend

    if cache_mib is not None:
        embedded.RAM_PROMPT_CACHE = cache_mib
    backend = get_backend("embedded")

    def ask(i: int) -> None:
        asked = f"Describe item {i} of a long catalogue of garden tools, and say what it is for. " * 3
        backend.next_tokens([{"role": "user", "content": asked}], f"Item {i} is a " + "very useful garden tool " * 5)

    ask(0)  # the model loaded and warm
    before, started = rss_mb(), time.perf_counter()
    for i in range(1, prompts + 1):
        ask(i)
    return {"before": before, "after": rss_mb(), "seconds": time.perf_counter() - started}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=150)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.prompts, json.loads(args.child))))
        return
    env = {**os.environ, "CAPEL_RESIDENT": "0"}  # the server in the child itself, where its memory is measured
    print(f"{args.prompts} new prompts, embedded SmolLM2 server in-process")
    print(f"{'setting':<30} {'before MB':>10} {'after MB':>9} {'growth MB':>10} {'s':>6}")
    for label, mib in SETTINGS.items():
        cmd = [sys.executable, __file__, "--prompts", str(args.prompts), "--child", json.dumps(mib)]
        found = json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout)
        growth = found["after"] - found["before"]
        print(f"{label:<30} {found['before']:>10.0f} {found['after']:>9.0f} {growth:>10.0f} {found['seconds']:>6.1f}")


if __name__ == "__main__":
    main()

"""MarkerParser throughput on long valid CAPEL outputs, streamed one character at a time and in 16-char chunks.

Run from the project root:  .venv/bin/python benchmarks/parser_speed.py

The parser must be linear: the 100k-marker output should take about 10x the 10k one, not 100x.
The last mode also reads `text_so_far()` after every chunk, as the CLI does while it streams.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.parser import MarkerParser

SIZES = (1_000, 10_000, 100_000)
# mode -> (chunk size, read text_so_far() after each chunk)
MODES = {"1 char": (1, False), "16 chars": (16, False), "16 + text": (16, True)}
WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "river", "light", "sea", "wind")
WORDS += ("morning", "story", "people", "garden", "Hello,", "world!", "don't", "well-known", "3.14", "Great.")
REPEATS = 3  # best of 3 per cell


def build_output(markers: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    parts = [f"<{k}>{rng.choice(WORDS)}" for k in range(markers, 0, -1)]
    return "".join(parts) + "<0>"


def run(raw: str, target: int, step: int, read_text: bool) -> float:
    """Seconds to feed `raw` in `step`-character chunks and close the parser (best of REPEATS)."""
    chunks = [raw[i : i + step] for i in range(0, len(raw), step)]
    best = float("inf")
    for _ in range(REPEATS):
        parser = MarkerParser(target)
        t0 = time.perf_counter()
        for chunk in chunks:
            parser.feed(chunk)
            if read_text:
                parser.text_so_far()
        result = parser.close()
        best = min(best, time.perf_counter() - t0)
        if not result.verified:
            raise SystemExit(f"benchmark output did not verify: {result.errors[:3]}")
    return best


def main() -> None:
    outputs = {n: build_output(n) for n in SIZES}
    times: dict[tuple[str, int], float] = {}
    print(f"{'markers':>8} {'chars':>9} {'mode':>9} {'seconds':>9} {'chars/s':>12} {'markers/s':>12}")
    for n, raw in outputs.items():
        for mode, (step, read_text) in MODES.items():
            secs = run(raw, n, step, read_text)
            times[(mode, n)] = secs
            print(f"{n:>8} {len(raw):>9} {mode:>9} {secs:>9.3f} {len(raw) / secs:>12,.0f} {n / secs:>12,.0f}")
    print()
    size_ratio = len(outputs[100_000]) / len(outputs[10_000])
    for mode in MODES:
        ratio = times[(mode, 100_000)] / times[(mode, 10_000)]
        verdict = "linear" if ratio < 20 else "SUPERLINEAR"
        print(f"100k/10k time ratio, {mode:>9}: {ratio:5.1f}  ({verdict}; the output is {size_ratio:.1f}x longer)")


if __name__ == "__main__":
    main()

"""How fast the CLI answers, each command a real `python -m capel_ui` process, all measured in one run.

Run from the project root:  .venv/bin/python benchmarks/cli_speed.py [--megabytes 5]

1. `check` on a 10,000-marker output, in seconds beyond start-up: minus `prompt` (a command that loads the same
   modules and does next to nothing), best of 3 each. Should be within 0.2 s (it was 1.2–1.5 s while the
   parser's clean text was built in quadratic time).
2. `count`'s start-up on a one-line text. Should be at most 0.5 s (it was 1.3 s while every command loaded the
   `openai` client and the X parser).
3. `generate` on a scripted OpenAI-compatible server answering one chunk of N MB, in capel (one call) and
   baseline modes: one N MB "word" against N MB of ordinary words. The ratio should stay near 1 (the one word
   once took past 120 s: the quality check tried every split of it in two).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.parser_speed import build_output
from tests.scripted_server import MODEL, ScriptedServer, ok

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 3


def seconds(argv: list[str], stdin: bytes = b"", env: dict[str, str] | None = None) -> float:
    """Wall-clock seconds of one `python -m capel_ui …` process (its exit code may be 1: not verified)."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "capel_ui", *argv], cwd=ROOT, input=stdin, capture_output=True, env=env
    )
    elapsed = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:3])} failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return elapsed


def best(argv: list[str], stdin: bytes = b"") -> float:
    return min(seconds(argv, stdin) for _ in range(REPEATS))


def generate(text: str, mode: str, env: dict[str, str]) -> float:
    """Seconds for `generate` to take `text` in one chunk, stop it as an overrun and save it."""
    with ScriptedServer() as server:
        server.script(ok([text]))
        argv = ["generate", "--model", MODEL, "--base-url", server.url, "--mode", mode, "--target", "50"]
        return seconds([*argv, "--max-calls", "1", "Write about the sea."], env=env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--megabytes", type=float, default=5.0, help="size of the scripted reply (default 5)")
    size = int(ap.parse_args().megabytes * 1_000_000)

    raw = build_output(10_000).encode()
    startup = best(["prompt", "--target", "1", "Hi"])
    check = best(["check", "--target", "10000", "-"], raw)
    count = best(["count", "-"], b"A short line of text.")
    print(f"start-up (prompt)                 {startup:6.2f} s")
    print(f"check, 10,000 markers             {check - startup:6.2f} s beyond start-up   (at most 0.2)")
    print(f"count start-up                    {count:6.2f} s                    (at most 0.5)")

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{Path(tmp) / 'bench.db'}"}
        word, words = "a" * size, ("word " * (size // 5))[:size]
        for mode in ("capel", "baseline"):
            one, many = generate(word, mode, env), generate(words, mode, env)
            print(
                f"generate {mode:<8} {size / 1e6:g} MB: one word {one:6.1f} s, ordinary words {many:6.1f} s, "
                f"ratio {one / many:4.2f}"
            )


if __name__ == "__main__":
    main()

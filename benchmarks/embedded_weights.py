"""The embedded model read from its shipped Q4_1 file and from the Q8_0 copy `scripts/setup.sh` makes
(capel_ui/backends/weights.py): how long each takes to load, to read a prompt and to write, and whether the two
write the same greedy answers. Each file and thread count runs in a process of its own, one after another.

Run from the project root, on an otherwise idle machine:  .venv/bin/python benchmarks/embedded_weights.py

The prompts are the app's own: the CAPEL countdown prompt of a 37-word English text and of a 60-character Chinese
one (the longest first wait a writer has on this model: SmolLM2's tokenizer spells Han characters in bytes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROMPTS = {  # name: (instruction, lang, target)
    "en countdown, 37 words": ("Describe a lighthouse.", "en", 37),
    "zh countdown, 60 characters": ("介绍一下北京。", "zh", 60),
}
GREEDY = (  # answers compared word for word, 48 tokens at temperature 0
    "Describe a traditional Italian pizza.",
    "Give advice on staying motivated at work.",
    "Explain how stress affects the body.",
    "Write a headline for a seaside pub called The Whaler's Rest.",
    "What is the capital of France?",
)
REPEATS = 3


def one(path: str) -> dict:
    """Load `path` on this process's threads, then read each prompt `REPEATS` times and write 64 tokens."""
    from capel_ui.backends.embedded import new_server
    from capel_ui.prompts import build_prompt

    began = time.perf_counter()
    handle, _server = new_server(Path(path), 1, 4096)
    out: dict = {"load": time.perf_counter() - began, "prompts": {}, "greedy": []}
    base = handle.base_url.removesuffix("/v1")
    ask = lambda path, body: _post(base, handle.api_key, path, body)  # noqa: E731
    for name, (instruction, lang, target) in PROMPTS.items():
        text = ask("/apply-template", {"messages": [_user(build_prompt(instruction, lang, target))]})["prompt"]
        runs = [ask("/completion", {**_fixed(text), "n_predict": 64, "ignore_eos": True}) for _ in range(REPEATS)]
        timings = [r["timings"] for r in runs]
        out["prompts"][name] = {
            "tokens": timings[0]["prompt_n"],
            "read": max(t["prompt_per_second"] for t in timings),
            "write": max(t["predicted_per_second"] for t in timings),
        }
    for instruction in GREEDY:
        text = ask("/apply-template", {"messages": [_user(instruction)]})["prompt"]
        out["greedy"].append(ask("/completion", {**_fixed(text), "n_predict": 48})["content"])
    return out


def _user(content: str) -> dict:
    return {"role": "user", "content": content}


def _fixed(prompt: str) -> dict:
    """A request read afresh (no cached prefix) and answered greedily."""
    return {"prompt": prompt, "cache_prompt": False, "temperature": 0, "top_k": 1, "seed": 1}


def _post(base: str, key: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())


def measure(path: Path, threads: int) -> dict:
    env = {**os.environ, "CAPEL_EMBEDDED_THREADS": str(threads), "CAPEL_RESIDENT": "0"}
    done = subprocess.run(
        [sys.executable, __file__, "--one", str(path)], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    from capel_ui.backends.embedded import copy_of, shipped_smollm2

    shipped = shipped_smollm2()
    files = {"Q4_1 (shipped)": shipped, "Q8_0 (copy)": copy_of(shipped)}
    if not files["Q8_0 (copy)"].is_file():
        sys.exit("no Q8_0 copy: run `.venv/bin/python -m capel_ui.backends.weights` (scripts/setup.sh does)")
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    found = {}
    for threads in (1, 2):
        print(f"\n{threads} thread(s)   {'load':>6}  " + "  ".join(f"{n:>34}" for n in PROMPTS))
        for label, path in files.items():
            found[label, threads] = got = measure(path, threads)
            cells = [
                f"{p['tokens']:>4} tok read {p['read']:>4.0f}/s write {p['write']:>3.0f}/s"
                for p in got["prompts"].values()
            ]
            print(f"  {label:<15} {got['load']:>5.2f}s  " + "  ".join(f"{c:>34}" for c in cells))
    pairs = list(zip(found["Q4_1 (shipped)", 2]["greedy"], found["Q8_0 (copy)", 2]["greedy"], strict=True))
    print(f"\ngreedy answers (48 tokens) word for word the same: {sum(a == b for a, b in pairs)} of {len(pairs)}")
    for a, b in pairs:
        if a != b:
            print(f"  Q4_1: {a!r}\n  Q8_0: {b!r}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one(sys.argv[2])))
    else:
        main()

"""Verified repair: exact match and calls per sample with repair on and off, on a simulated writer and the real model.

Run from the project root:
    .venv/bin/python benchmarks/repair.py                       # simulated writer, 5/20/50 % error per call
    .venv/bin/python benchmarks/repair.py --embedded --samples 10 --target 20   # SmolLM2-135M in capel mode

The simulated writer answers over real HTTP on 127.0.0.1 (the tests' scripted OpenAI-compatible server). It
writes a CAPEL countdown and goes wrong in a call with the given probability for a full-length call; the
error sits at a uniformly random marker (a constant per-marker hazard h with 1-(1-h)^N = rate, so a
continuation of k markers goes wrong with probability 1-(1-h)^k). The kind of error follows the paper's
taxonomy (§ error taxonomy): 87 % off-by-one shortfalls from a marker fused with its word (a marker with no
word after it), 9 % early stops (the stream ends), 4 % ordering violations (a skipped or repeated marker).
A repair request is answered from its prefill (the server takes none here, so from the quoted prefix): the
writer continues from the marker it is asked for. Tokens: one per streamed piece (a marker or a word); a
stream the app closes early is counted by the pieces it received.

Every sample goes through the app's run lifecycle (`LiveRun`) and is judged by the one parser and verdict.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capel_ui.backends import Backend, get_backend  # noqa: E402
from capel_ui.generation import Generation, Outcome, Request  # noqa: E402
from capel_ui.runs import LiveRun  # noqa: E402
from tests.scripted_server import Behaviour, ScriptedServer, answer, ok  # noqa: E402

WORDS = [
    "the",
    "sea",
    "keeps",
    "its",
    "old",
    "promise",
    "to",
    "every",
    "shore",
    "and",
    "every",
    "small",
    "boat",
    "that",
    "dares",
    "the",
    "tide",
]
KINDS = (("fused", 0.87), ("early_stop", 0.09), ("skip", 0.02), ("repeat", 0.02))
ASKED = re.compile(r"start with the marker <(\d+)>")
INSTRUCTIONS = (
    "Write about the history of lighthouses.",
    "Describe a walk along the coast at dawn.",
    "Explain why bread rises.",
    "Tell a short story about a lost cat.",
    "Describe the sound of rain on a tin roof.",
    "Write about a market in winter.",
    "Explain how a bicycle stays upright.",
    "Describe a library at night.",
    "Write about the first day of spring.",
    "Tell a short story about a kite.",
)


@dataclass
class Writer:
    """A simulated CAPEL writer: a countdown from the marker it is asked for, wrong with the given hazard."""

    target: int
    rate: float
    rng: random.Random

    @property
    def hazard(self) -> float:
        return 1 - (1 - self.rate) ** (1 / self.target)

    def start_of(self, body: dict[str, Any]) -> int:
        last = body["messages"][-1]
        if last["role"] == "assistant":  # a prefill: go on after its last marker
            values = [int(v) for v in re.findall(r"<(\d+)>", last["content"])]
            return values[-1] - 1 if values else self.target
        asked = ASKED.search(last["content"])
        return int(asked.group(1)) if asked else self.target

    def reply(self, body: dict[str, Any]) -> Behaviour:
        pieces = self.countdown(self.start_of(body))
        return ok(pieces, usage=(len(str(body)) // 4, len(pieces)))

    def countdown(self, start: int) -> list[str]:
        pieces: list[str] = []
        k = start
        while k >= 1:
            if self.rng.random() < self.hazard:
                kind = self.rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
                if kind == "early_stop":
                    return pieces
                if kind == "fused":
                    pieces.append(f"<{k}>")  # the word fused away: one short
                    k -= 1
                    continue
                if kind == "repeat":
                    pieces += [f"<{k}>", self.rng.choice(WORDS)]
                elif kind == "skip" and k > 1:
                    k -= 1
            pieces += [f"<{k}>", self.rng.choice(WORDS)]
            k -= 1
        return [*pieces, "<0>"]


@dataclass
class Tally:
    samples: int = 0
    verified: int = 0
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0

    def add(self, outcome: Outcome) -> None:
        self.samples += 1
        self.verified += outcome.verified
        self.calls += outcome.calls
        self.tokens += outcome.completion_tokens or 0
        self.seconds += outcome.seconds

    def row(self, label: str) -> str:
        em = 100 * self.verified / self.samples
        per_exact = f"{self.tokens / self.verified:.1f}" if self.verified else "–"
        return (
            f"{label:<26} {self.samples:>7} {em:>7.1f} {self.calls / self.samples:>10.2f} "
            f"{per_exact:>14} {self.seconds / self.samples:>9.2f}"
        )


HEADER = f"{'':<26} {'samples':>7} {'EM %':>7} {'calls/smp':>10} {'tokens/exact':>14} {'s/smp':>9}"


def one(backend: Backend, instruction: str, target: int, max_calls: int, seed: int | None) -> Outcome:
    request = Request(instruction, target, mode="capel", max_calls=max_calls, seed=seed, allow_fallback=False)
    return LiveRun(Generation(backend, request), None, origin="cli").run()


def simulated(args: argparse.Namespace) -> None:
    print(f"simulated writer · target {args.target} words · {args.samples} samples per row · seed {args.seed}")
    print(HEADER)
    with ScriptedServer() as server:
        backend = get_backend("simulated", provider="compatible", base_url=server.url)
        for rate in args.rates:
            for max_calls in (1, args.max_calls):
                rng = random.Random(f"{args.seed}-{rate}-{max_calls}")
                writer = Writer(args.target, rate, rng)
                server.script(then=answer(writer.reply))
                tally = Tally()
                for i in range(args.samples):
                    tally.add(one(backend, INSTRUCTIONS[i % len(INSTRUCTIONS)], args.target, max_calls, None))
                label = f"{rate:.0%} error/call, " + ("repair off" if max_calls == 1 else f"max {max_calls} calls")
                print(tally.row(label), flush=True)


def embedded(args: argparse.Namespace) -> None:
    t0 = time.monotonic()
    backend = get_backend("embedded")
    print(f"embedded SmolLM2-135M ready in {time.monotonic() - t0:.1f} s · capel mode · target {args.target} words")
    print(f"{args.samples} instructions · seed {args.seed}")
    print(HEADER)
    for max_calls in (1, args.max_calls):
        tally = Tally()
        wrong: dict[str, int] = {}
        for i in range(args.samples):
            outcome = one(backend, INSTRUCTIONS[i % len(INSTRUCTIONS)], args.target, max_calls, args.seed + i)
            tally.add(outcome)
            for attempt in outcome.attempts or [{"wrong": outcome.errors and outcome.errors[0].as_dict()}]:
                kind = _what_went_wrong(attempt)
                wrong[kind] = wrong.get(kind, 0) + 1
        print(tally.row("repair off" if max_calls == 1 else f"max {max_calls} calls"), flush=True)
        print(f"{'':<26} per call: {dict(sorted(wrong.items(), key=lambda kv: -kv[1]))}")


def _what_went_wrong(attempt: dict[str, Any]) -> str:
    """A call's first problem: why it was stopped, else its first marker error (with its message), else 'right'."""
    if attempt.get("stopped"):
        return f"stopped: {attempt['stopped']}"
    wrong = attempt.get("wrong")
    if not wrong:
        return "right"
    return f"{wrong['type']}: {wrong['message']}" if wrong["type"] == "early_stop" else wrong["type"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedded", action="store_true", help="the embedded model instead of the simulated writer")
    ap.add_argument("--samples", type=int, default=400)
    ap.add_argument("--target", type=int, default=40)
    ap.add_argument("--rates", type=float, nargs="+", default=[0.05, 0.2, 0.5])
    ap.add_argument("--max-calls", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    (embedded if args.embedded else simulated)(args)


if __name__ == "__main__":
    main()

"""Every grammar the app can send, for every target 1..N (default 500), checked with LLGuidance (the engine behind
OpenAI's grammar tools): it compiles, admits a text of exactly N units and refuses N-1 and N+1. Prints the time
per form.

The unit tests (tests/test_grammar_syntaxes.py) sample targets; this walks all of them (a few minutes on 2 cores):

    .venv/bin/python benchmarks/grammars.py            # 1..500
    .venv/bin/python benchmarks/grammars.py --max 100

The exact word list (LLGuidance's Lark on the embedded model) as it was sent before and as it is now:

    .venv/bin/python benchmarks/grammars.py --speed    # offline: compile and mask CPU ms with SmolLM2's vocabulary
    .venv/bin/python benchmarks/grammars.py --server   # streamed on the embedded model, back to back, same seed
"""

from __future__ import annotations

import argparse
import json
import os
import re
import struct
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.grammar import LLGUIDANCE, countdown_rules, exact_rules, lexicon_rules, with_word_list
from tests.llg import accepts

FORMS = ("gbnf", "lark", "regex", "json_schema")


def text(mode: str, lang: str, n: int) -> str:
    """A plain text of `n` units the mode's grammar admits ("" for none)."""
    if n == 0:
        return ""
    units = ["w"] * (n - 1) + ["end."] if lang == "en" else ["字"] * (n - 1) + ["完。"]
    if mode == "exact":
        return (" " if lang == "en" else "").join(units)
    return "".join(f"<{n - i}>{u}" for i, u in enumerate(units)) + "<0>"


def check(n: int, seconds: dict[str, float]) -> list[str]:
    """The failures for target `n` (empty when every form of every grammar is right)."""
    failures = []
    for mode, build in (("exact", exact_rules), ("exact-countdown", countdown_rules)):
        for lang in ("en", "zh"):
            grammar = build(lang, n)  # type: ignore[arg-type]
            for form in FORMS:
                started = time.monotonic()
                source = json.dumps(grammar.json_schema()) if form == "json_schema" else grammar.render(form)  # type: ignore[arg-type]
                wire = (lambda s: json.dumps(s, ensure_ascii=False)) if form == "json_schema" else (lambda s: s)
                if not accepts(form, source, wire(text(mode, lang, n))):  # type: ignore[arg-type]
                    failures.append(f"{mode} {lang} {form} N={n}: refuses N units")
                for other in (n - 1, n + 1):
                    if accepts(form, source, wire(text(mode, lang, other))):  # type: ignore[arg-type]
                        failures.append(f"{mode} {lang} {form} N={n}: admits {other} units")
                seconds[form] = seconds.get(form, 0.0) + time.monotonic() - started
    return failures


# ----- the exact word list before and now ---------------------------------------------------------------------

INSTRUCTION = "Describe a lighthouse in exactly 80 words."
SAMPLE = (
    "The old lighthouse stands on a rocky point above the harbour, its white tower bright against the grey sky. Every "
    "night the keeper climbs the long stairs to light the great lamp, and ships far out at sea follow its steady beam "
    "home. In the morning fishermen wave as they pass, and children run along the beach to collect shells. Visitors "
    "come in summer to walk the cliffs, take photos and hear stories of storms and the brave local sailors."
)
"""80 words of the word list, walked token by token offline (`--speed`)."""
END = "<|im_end|>"


def word_list_grammars(words: int = 80, end: str = END) -> dict[str, str]:
    """The exact English word list for INSTRUCTION as it was sent before (a `word` rule: a word terminal, then a
    punctuation terminal, then a space) and as it is sent now (grammar.with_word_list)."""
    rules = lexicon_rules("en", INSTRUCTION, "lark")
    before = f'{LLGUIDANCE}start: ((word " "){{{words - 1}}} wend) {end}\n{rules.strip()}\n'
    return {"before": before, "now": with_word_list(exact_rules("en", words), rules, "lark", end)}


def _gguf_tokens(f: BinaryIO) -> tuple[list[str], list[int]]:
    """The token list and token types of a GGUF file's header (its metadata, read up to the tokens)."""

    def num(fmt: str) -> Any:
        return struct.unpack("<" + fmt, f.read(struct.calcsize(fmt)))[0]

    def text() -> str:
        return f.read(num("Q")).decode("utf-8", "surrogateescape")

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(kind: int) -> Any:
        if kind == 8:
            return text()
        if kind == 9:
            inner, count = num("I"), num("Q")
            return [value(inner) for _ in range(count)]
        return num(scalar[kind])

    assert f.read(4) == b"GGUF", "not a GGUF file"
    num("I"), num("Q")  # version, tensors
    found: dict[str, Any] = {}
    for _ in range(num("Q")):
        key = text()
        found[key] = value(num("I"))
        if {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type"} <= found.keys():
            break
    return found["tokenizer.ggml.tokens"], found["tokenizer.ggml.token_type"]


def smollm2_tokenizer() -> tuple[Any, Callable[[str], list[int]]]:
    """An LLTokenizer of SmolLM2's real vocabulary (byte-level BPE, "Ġ" for a space) and a tokenizer of plain text
    ending with the end token: each word with its space as the longest tokens that spell it (SmolLM2's own BPE gives
    the same for common words)."""
    import llguidance

    from capel_ui.backends.embedded import smollm2_path

    with smollm2_path().open("rb") as f:
        names, kinds = _gguf_tokens(f)
    shown = [*range(33, 127), *range(161, 173), *range(174, 256)]  # GPT-2's printable bytes stand for themselves
    byte_of = {chr(b): b for b in shown} | {chr(256 + i): b for i, b in enumerate(sorted(set(range(256)) - set(shown)))}
    tokens = [bytes(byte_of[c] for c in t) if kind == 1 else t.encode() for t, kind in zip(names, kinds, strict=True)]
    ids = {t: i for i, (t, kind) in enumerate(zip(tokens, kinds, strict=True)) if kind == 1}

    def encode(data: bytes | str) -> list[int]:
        data = data.encode() if isinstance(data, str) else data
        out, i = [], 0
        while i < len(data):
            size = next(n for n in range(min(32, len(data) - i), 0, -1) if data[i : i + n] in ids)
            out.append(ids[data[i : i + size]])
            i += size
        return out

    class Vocab:
        def __init__(self) -> None:
            self.tokens, self.eos_token_id, self.bos_token_id = tokens, names.index(END), None
            self.special_token_ids = [i for i, kind in enumerate(kinds) if kind != 1]

        def __call__(self, data: bytes) -> list[int]:
            return encode(data)

    def tokenize(s: str) -> list[int]:
        return [*(t for piece in re.findall(r" ?[^ ]+", s) for t in encode(piece)), names.index(END)]

    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(Vocab())), tokenize


def speed(reps: int) -> None:
    """Compile and mask CPU time of the two forms along SAMPLE, the least of `reps` runs, back to back."""
    import llguidance

    tokenizer, tokenize = smollm2_tokenizer()
    ids = tokenize(SAMPLE)
    best: dict[str, list[float]] = {}
    for _ in range(reps):
        for form, grammar in word_list_grammars(len(SAMPLE.split())).items():
            started = time.process_time()
            matcher = llguidance.LLMatcher(tokenizer, grammar, log_level=1)
            compiled = time.process_time()
            masks = []
            for token in ids:
                mark = time.process_time()
                matcher.compute_logit_bias()
                masks.append(time.process_time() - mark)
                assert matcher.consume_token(token), matcher.get_error()[:300]
            build = compiled - started
            figures = [build, masks[0] + masks[1], sum(masks[2:]) / len(masks[2:]), build + sum(masks)]
            best[form] = [min(a, b) for a, b in zip(best.get(form, figures), figures, strict=True)]
    print(f"{len(ids)} tokens of SmolLM2, CPU ms, least of {reps} runs; {os.popen('uptime').read().strip()}")
    for form, (build, first, mask, total) in best.items():
        print(
            f"{form:6s} compile {1000 * build:6.1f}  first two masks {1000 * first:5.1f}  "
            f"mask {1000 * mask:4.2f}/token  whole request {1000 * total:6.1f}"
        )


def server(reps: int) -> None:
    """The same request streamed on the embedded model with no grammar and with each form, back to back, `reps`
    times: time to the first token, llama.cpp's own ms a token, and whether both forms wrote the same text (the
    proof a writer sees no change)."""
    from capel_ui.backends.embedded import end_token, new_server, smollm2_path

    handle, _running = new_server(smollm2_path(), 1, 4096)
    grammars = {"none": None, **word_list_grammars(80, end_token(handle.base_url, handle.api_key) or END)}
    body = {"messages": [{"role": "user", "content": INSTRUCTION}], "temperature": 0.7, "seed": 7, "stream": True}
    _stream(handle, {**body, "max_tokens": 4})  # the model's first run warms it
    texts: dict[str, set[str]] = {}
    for _ in range(reps):
        for form, grammar in grammars.items():
            extra = {"grammar": grammar} if grammar else {}
            text, first, per_token, tokens = _stream(handle, {**body, "max_tokens": 100, **extra})
            texts.setdefault(form, set()).add(text)
            print(f"{form:6s} first token {1000 * first:5.0f} ms  {per_token:5.1f} ms/token  ({tokens} tokens)")
    same = texts["before"] == texts["now"] and len(texts["now"]) == 1
    print(f"the two forms wrote {'the same text' if same else 'DIFFERENT texts'}: {sorted(texts['now'])[0][:70]!r}…")
    print(os.popen("uptime").read().strip())


def _stream(handle: Any, body: dict[str, Any]) -> tuple[str, float, float, int]:
    """(text, seconds to its first token, llama.cpp's ms a token, tokens) of one streamed chat request."""
    request = urllib.request.Request(
        handle.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {handle.api_key}", "Content-Type": "application/json"},
    )
    started, first, pieces, timings = time.perf_counter(), 0.0, [], {}
    with urllib.request.urlopen(request, timeout=600) as response:
        for line in response:
            if not line.startswith(b"data: {"):
                continue
            chunk = json.loads(line[6:])
            timings = chunk.get("timings") or timings
            for choice in chunk.get("choices", []):
                if piece := (choice.get("delta") or {}).get("content"):
                    first = first or time.perf_counter() - started
                    pieces.append(piece)
    return "".join(pieces), first, timings.get("predicted_per_token_ms", 0.0), len(pieces)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=500, help="the largest target to check (default 500)")
    parser.add_argument("--speed", action="store_true", help="time the exact word list before and now, offline")
    parser.add_argument("--server", action="store_true", help="stream it on the embedded model, before and now")
    parser.add_argument("--reps", type=int, default=5, help="runs of each form for --speed and --server (default 5)")
    args = parser.parse_args()
    if args.speed:
        speed(args.reps)
        return 0
    if args.server:
        server(args.reps)
        return 0
    seconds: dict[str, float] = {}
    failures = [f for n in range(1, args.max + 1) for f in check(n, seconds)]
    for form, total in seconds.items():
        print(f"{form:12s} {total:7.1f} s for {args.max * 4} grammars ({1000 * total / (args.max * 4):.1f} ms each)")
    print("\n".join(failures) or f"all {args.max * 16} grammars compile and admit exactly N units")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The real embedded model (SmolLM2-135M in llama.cpp's server), reached through the openai client."""

from __future__ import annotations

import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from capel_ui.backends import Options, Usage
from capel_ui.counting import count
from capel_ui.generation import Generation, Request, generate
from capel_ui.parser import check_output

pytestmark = pytest.mark.model

INSTRUCTION = {"en": "Describe a lighthouse.", "zh": "描写一座灯塔。"}
# Ten targets drawn once in 1..300, taken in turn by English and Chinese: the shortest English one above 100 words
# is run here, a text well past any preset's length (the model is slow: one test per case that differs). Short
# exact texts in every unit, Chinese included, are the presets (test_presets_embedded.py); grammars beyond 2,000
# words are test_grammar.py's.
DRAWN = list(zip(random.Random(2024).sample(range(1, 301), 10), ["en", "zh"] * 5, strict=True))
EXACT_CASES = [min(c for c in DRAWN if c[1] == "en" and c[0] > 100)]


def test_streaming_yields_several_chunks_then_usage_with_token_counts(embedded):
    messages = [{"role": "user", "content": "Tell me about the sea."}]
    items = list(embedded.stream(messages, Options(max_tokens=24, seed=1, temperature=0)))
    chunks, usage = items[:-1], items[-1]
    assert len(chunks) >= 5 and all(isinstance(c, str) and c for c in chunks)
    assert isinstance(usage, Usage)
    assert usage.prompt_tokens and usage.prompt_tokens > 5
    assert 1 <= usage.completion_tokens <= 24
    assert usage.finish_reason in ("stop", "length")
    assert usage.first_token_seconds is not None and 0 < usage.first_token_seconds <= usage.seconds


def test_a_grammar_is_honoured(embedded):
    messages = [{"role": "user", "content": "Write anything you like."}]
    grammar = 'root ::= "Code " [0-9]{4} "-" ("red" | "green")'
    items = list(embedded.stream(messages, Options(max_tokens=30, seed=2, grammar=grammar)))
    text = "".join(i for i in items if isinstance(i, str))
    assert text.startswith("Code ") and text[5:9].isdigit() and text[9] == "-"
    assert text[10:] in ("red", "green")


@pytest.mark.parametrize(("target", "lang"), EXACT_CASES)
def test_exact_mode_hits_the_target(embedded, target, lang):
    # The grammar's count, not the call for more (test_planned_endings.py runs that on this model): without it,
    # 103 words take 4.8 s of CPU, not 10.5 s.
    request = Request(INSTRUCTION[lang], target, lang=lang, mode="exact", seed=target, ask_more=False)
    outcome = generate(embedded, request)
    unit = "en_words" if lang == "en" else "zh_chars"
    assert count(outcome.text, unit) == target, outcome.finish_reason
    assert outcome.count == target
    assert outcome.status == "complete" and outcome.verified
    assert outcome.finish_reason == "stop"


@pytest.mark.parametrize(("lang", "target"), [("en", 1), ("zh", 5)])  # one word; Chinese (several: the grammar tests)
def test_exact_countdown_forced_on_the_embedded_model_is_a_valid_countdown_with_clean_text(embedded, lang, target):
    request = Request(INSTRUCTION[lang], target, lang=lang, mode="exact-countdown", seed=target, allow_fallback=False)
    outcome = generate(embedded, request)
    check = check_output(outcome.raw, target, lang)
    assert check.valid and check.exact and check.countdown_end == 0
    assert outcome.verified and outcome.count == target
    assert outcome.raw.startswith(f"<{target}>") and outcome.raw.endswith("<0>")
    assert "<" not in outcome.text and ">" not in outcome.text
    unit = "en_words" if lang == "en" else "zh_chars"
    assert count(outcome.text, unit) == target


def test_the_embedded_model_writes_a_guaranteed_countdown_as_exact_and_says_why(embedded):
    # Under the markers SmolLM2-135M wrote "Hello, world! how's everything…" (the prompt's example) or "world!
    # world! world!" for every instruction of benchmarks/quality.py.
    outcome = generate(embedded, Request(INSTRUCTION["en"], 12, mode="exact-countdown", seed=3))
    assert outcome.mode == "exact" and outcome.verified and outcome.count == 12
    assert "<" not in outcome.raw and "too small to write under countdown markers" in (outcome.notice or "")
    assert "--no-fallback) to force Exact countdown (guaranteed)" in (outcome.notice or "")


def test_cancel_mid_stream_keeps_the_text_that_arrived(embedded):
    gen = Generation(embedded, Request("Write a long story about the sea.", 300, mode="baseline", seed=5))
    received: list[str] = []
    some_text = threading.Event()

    def consume() -> None:
        for chunk in gen.stream():
            received.append(chunk)
            if len(received) >= 3:
                some_text.set()
        some_text.set()

    worker = threading.Thread(target=consume)
    worker.start()
    assert some_text.wait(60)
    gen.cancel()
    worker.join(60)
    assert not worker.is_alive()
    outcome = gen.outcome()
    assert outcome.status == "cancelled"
    assert outcome.raw == "".join(received) and outcome.raw.strip()
    assert outcome.count == count(outcome.raw, "en_words") < 300
    assert outcome.failure is None and not outcome.verified


def test_two_generations_run_concurrently_and_both_complete(embedded):
    plain = {"ask_more": False, "plan_ending": False}  # two calls in flight at once, not the endings' extra calls
    requests = [
        Request(INSTRUCTION["en"], 20, mode="exact", seed=11, **plain),  # short: both in flight at once all the same
        Request(INSTRUCTION["zh"], 12, lang="zh", mode="exact", seed=12, **plain),
    ]
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda r: generate(embedded, r), requests))
    assert [o.status for o in outcomes] == ["complete", "complete"]
    assert [o.count for o in outcomes] == [20, 12]
    assert all(o.verified for o in outcomes)


def test_the_server_grows_no_more_than_its_prompt_cache_with_each_new_prompt(embedded):
    """llama.cpp's default host-memory prompt cache kept a copy of the slot at each new prompt (about 3 MB here):
    393 MB over 150 prompts, on its way to 8 GiB in a day's session. The app's cap keeps a few (RAM_PROMPT_CACHE):
    these 14 prompts would hold ~45 MB of copies without it."""

    def rss_mb() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    def ask(i: int) -> None:
        asked = f"Describe garden tool number {i} of a long catalogue, with care. " * 4
        messages = [{"role": "user", "content": asked}]
        embedded.next_tokens(messages, f"Tool number {i} is a " + "very useful garden tool " * 5)

    ask(0)
    before = rss_mb()
    for i in range(1, 15):
        ask(i)
    assert rss_mb() - before < 30  # the cap (16 MiB) and some slack

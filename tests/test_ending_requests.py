"""The ending questions a run asks a llama.cpp server: bounded, retried, and said when they go unanswered.

An ending score is an extra: a server too busy to answer one in time (a timeout, a 503) is asked again a few times,
never by more requests at once than it has slots, and a run whose label could not be had says so on its verdict
line and in its notice, instead of showing no label. The server here is the scripted one on 127.0.0.1, answering the
ending-score call as llama.cpp does (a JSON answer with each token's log-probability and its alternatives) or not.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from capel_ui.backends import Guarded, OpenAICompatBackend, register
from capel_ui.backends import openai_compat as compat
from capel_ui.backends.base import gate_of, register_slots
from capel_ui.backends.providers import PROVIDERS, ProviderSpec
from capel_ui.backends.providers.common import LLAMA_CPP, http_api
from capel_ui.cli import main
from capel_ui.ending import NOT_SCORED
from tests.scripted_server import ScriptedServer, ok

MESSAGES = [{"role": "user", "content": "Say hi.\n\nPlease answer in exactly 3 words."}]
TEXT = "Hi there friend."
LLAMA_TEST = ProviderSpec(
    "llama-test",
    "llama.cpp server (test)",
    lambda args: http_api(args, args.base_url),
    takes_base_url=True,
    default_caps=LLAMA_CPP,
    owns=lambda model: model == "llama-test-model",
    hidden=True,
)


def _token(text: str, logprob: float, alternatives: list[tuple[str, float]]) -> dict[str, Any]:
    top = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives]
    return {"token": text, "logprob": logprob, "bytes": list(text.encode()), "top_logprobs": top}


SCORED = {
    "id": "chatcmpl-ending",
    "object": "chat.completion",
    "created": 0,
    "model": "llama-test-model",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": TEXT},
            "finish_reason": "stop",
            "logprobs": {
                "content": [
                    _token(" friend", -0.2, [(" friend", -0.2), (" pal", -2.0)]),
                    _token(".", -0.4, [(".", -0.4), ("!", -1.5), (" and", -3.0)]),
                    _token("", -0.1, [("", -0.1)]),
                ]
            },
        }
    ],
}
"""llama.cpp's answer to the ending score of `TEXT`: " friend", then a stop the model would write (score 0.89)."""


class EndingServer:
    """The scripted server's ending-score answers (its chat completions that ask for no stream): `plan` says, for
    each in turn, "busy" (503), "slow" (an answer after the client gave up) or "ok"; it records how many were
    answered at once at most."""

    def __init__(self, server: ScriptedServer, *plan: str, hold: float = 0.0) -> None:
        self.plan, self.hold = list(plan), hold
        self.asked = self.now = self.most = 0
        self._lock = threading.Lock()
        server.as_vendor(self)

    def __call__(self, path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
        if body.get("stream"):
            return None  # the run's own call: the script answers it
        with self._lock:
            self.asked += 1
            self.now += 1
            self.most = max(self.most, self.now)
            how = self.plan.pop(0) if self.plan else "ok"
        try:
            time.sleep(1.0 if how == "slow" else self.hold)
            if how == "busy":
                return 503, {"error": {"message": "Loading model", "type": "unavailable_error"}}
            return 200, SCORED
        finally:
            with self._lock:
                self.now -= 1


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    """A scripted server of this test's own (its address keys the slots and the gate of its ending questions); an
    ending question to it times out after 0.3 s (30 s for users), so its slow answer is a timeout."""
    monkeypatch.setattr(compat, "ENDING_TIMEOUT", 0.3)
    with ScriptedServer() as scripted:
        yield scripted


@pytest.fixture
def llama_test() -> Iterator[ProviderSpec]:
    """A llama.cpp server at a URL the writer gives, declared as one (its ending scores asked)."""
    register(LLAMA_TEST)
    yield LLAMA_TEST
    PROVIDERS.pop(LLAMA_TEST.name)


def llama_backend(server: ScriptedServer) -> Guarded:
    return Guarded(OpenAICompatBackend("llama-test-model", base_url=server.url, api_key=None, capabilities=LLAMA_CPP))


@pytest.mark.parametrize("first", ["busy", "slow"], ids=["a_503", "a_timeout"])
def test_an_ending_score_the_server_was_too_busy_for_is_asked_again(server, first: str) -> None:
    answers = EndingServer(server, first, "ok")
    assert llama_backend(server).ending_score(MESSAGES, TEXT) == pytest.approx(0.89, abs=0.01)
    assert answers.asked == 2


@pytest.mark.parametrize("every", ["busy", "slow"], ids=["always_503", "always_too_slow"])
def test_a_run_whose_ending_the_server_never_scored_says_so(server, llama_test, every: str) -> None:
    answers = EndingServer(server, *[every] * compat.ENDING_TRIES)
    server.script(ok(["Hi", " there", " friend."]))
    argv = ["generate", "--model", "llama-test-model", "--base-url", server.url, "--mode", "baseline"]
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--target", "3", "--no-save", "--json", "Say hi."], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert answers.asked == compat.ENDING_TRIES  # asked again, a bounded number of times
    doc = json.loads(out.getvalue())
    assert doc["text"] == TEXT and doc["end_probability"] is None
    assert f"The {NOT_SCORED}." in doc["notice"]
    assert doc["ending"] == NOT_SCORED  # the judgement says it, so the pages, History and exports say it too


def test_the_verdict_line_says_the_ending_was_not_scored(server, llama_test) -> None:
    EndingServer(server, *["busy"] * compat.ENDING_TRIES)
    server.script(ok(["Hi", " there", " friend."]))
    argv = ["generate", "--model", "llama-test-model", "--base-url", server.url, "--mode", "baseline"]
    err = io.StringIO()
    assert main([*argv, "--target", "3", "--no-save", "Say hi."], stdout=io.StringIO(), stderr=err) == 0
    verdict = err.getvalue().splitlines()[0]
    assert verdict.startswith("✓") and f" · {NOT_SCORED} · " in verdict


@pytest.mark.parametrize(("slots", "most"), [(None, 1), (2, 2), (3, 3)], ids=["unknown_one", "two", "three"])
def test_ending_scores_asked_at_once_never_outnumber_the_servers_slots(server, slots: int | None, most: int) -> None:
    """Eight scores asked at once reach the server at most as many at a time as it has slots (one where it does not
    say: the scripted server has no /props)."""
    if slots is not None:
        register_slots(server.url, slots)
    answers = EndingServer(server, hold=0.2)
    backend = llama_backend(server)
    with ThreadPoolExecutor(8) as pool:
        scores = list(pool.map(lambda _: backend.ending_score(MESSAGES, TEXT), range(8)))
    assert scores == [pytest.approx(0.89, abs=0.01)] * 8
    assert answers.most == most


@pytest.mark.parametrize(("slots", "at_once"), [(1, False), (2, True)], ids=["one_slot", "two_slots"])
def test_two_variants_search_their_endings_at_once_only_where_the_server_has_a_slot_for_each(
    server, slots: int, at_once: bool
) -> None:
    register_slots(server.url, slots)
    gate = gate_of(llama_backend(server))
    searching, second = threading.Event(), threading.Event()

    def second_search() -> None:
        with gate.place():
            second.set()

    with gate.place():
        searching.set()
        with gate.place():  # a question inside the search: asked in its place, not a second one
            worker = threading.Thread(target=second_search)
            worker.start()
            assert second.wait(1.0) is at_once
    worker.join(5)
    assert second.is_set()


@pytest.mark.model
def test_a_words_first_token_is_asked_of_the_tokenizer_once(embedded) -> None:
    """Forced by a grammar, " winter." starts with a lone space: the tokenizer's own first token (" winter") is asked
    for (llama.cpp's /tokenize) once a process; the same score again asks only the model."""
    messages = [{"role": "user", "content": "Give tips for sleeping better.\n\nPlease answer in exactly 12 words."}]
    text = "Sleep well and wake up ready for winter."
    compat.REQUESTS.clear()
    first = embedded.ending_score(messages, text)
    asked = dict(compat.REQUESTS)
    again = embedded.ending_score(messages, text)
    assert again == pytest.approx(first)
    assert asked.get("tokenize", 0) <= 1 and compat.REQUESTS["tokenize"] == asked.get("tokenize", 0)
    assert compat.REQUESTS["ending score"] == 2 * asked["ending score"] == 4  # the model is asked each time


@pytest.mark.model
def test_the_next_tokens_where_a_streamed_text_could_end_come_from_its_stream_as_asking_would_answer() -> None:
    """An exact text streamed with its word list: the next tokens at each of its sentence ends (where the model may
    have wanted to stop) need no request, and are what asking the server gives (another backend, no stream seen)."""
    from capel_ui.backends import get_backend
    from capel_ui.ending import end_share, sentence_ends
    from capel_ui.generation import Request, generate
    from capel_ui.plan import RunPlan

    writer, asker = get_backend("embedded"), get_backend("embedded")
    req = Request("Explain how stress affects the body.", 40, mode="exact", seed=27, plan_ending=False)
    text = generate(writer, req).text
    messages = RunPlan.of(writer, req).ending_messages
    ends = [i for i in sentence_ends(text) if i < len(text)]
    assert ends, text
    compat.REQUESTS.clear()
    streamed = [writer.next_tokens(messages, text[:i]) for i in ends]
    assert compat.REQUESTS["next tokens"] == 0
    asked = [asker.next_tokens(messages, text[:i]) for i in ends]
    assert compat.REQUESTS["next tokens"] == len(ends)
    for mine, theirs in zip(streamed, asked, strict=True):
        assert mine is not None and theirs is not None
        assert mine[0][0] == theirs[0][0]
        assert end_share(mine) == pytest.approx(end_share(theirs), abs=1e-3)

"""The grammar fields and the probe against a real server: the embedded llama.cpp server (SmolLM2-135M).

llama.cpp honours `grammar` and a `response_format` JSON schema (converted to a grammar by its own
json-schema-to-grammar, as Ollama's llama-server runner and LM Studio's llama.cpp engine do) and silently
ignores fields it does not know: exactly the two cases the probe must tell apart.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from capel_ui.backends import get_backend
from capel_ui.backends.embedded import end_token, start_server
from capel_ui.backends.probe import probe
from capel_ui.generation import Request, generate
from capel_ui.grammar import LLGUIDANCE, exact_rules, lexicon_rules, with_word_list

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def server():
    return start_server(None)


@pytest.mark.parametrize(
    ("field", "honoured"), [("grammar", True), ("json_schema", True), ("ebnf", False), ("guided_grammar", False)]
)
def test_the_probe_tells_a_field_llama_cpp_honours_from_one_it_ignores(server, field, honoured):
    result = probe(server.base_url, "embedded", field, api_key=server.api_key)
    assert result.honoured is honoured, result.reason
    assert ("Guaranteed on this server" in result.label) is honoured


@pytest.mark.parametrize(
    ("lang", "mode", "target"), [("en", "exact", 12), ("zh", "exact", 8), ("en", "exact-countdown", 5)]
)
def test_a_json_schema_pattern_gives_an_exact_verified_text_decoded_from_the_json_string(server, lang, mode, target):
    backend = get_backend(
        "embedded", provider="compatible", base_url=server.base_url, api_key=server.api_key, grammar_field="json_schema"
    )
    outcome = generate(backend, Request("Describe a lighthouse", target, lang=lang, mode=mode))
    assert outcome.verified, (outcome.raw, outcome.failure)
    assert not outcome.raw.startswith('"') and "\\" not in outcome.raw


def _written(server, grammar: str) -> str:
    """What the model writes for one request under `grammar`, sampled with a fixed seed."""
    body = {
        "messages": [{"role": "user", "content": "Describe a lighthouse in exactly 20 words."}],
        "grammar": grammar,
        "max_tokens": 60,
        "temperature": 0.8,
        "seed": 11,
    }
    request = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {server.api_key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)["choices"][0]["message"]["content"]


def test_the_word_list_as_sent_now_writes_the_text_it_wrote_before(server):
    # Same seed, same masks at every token, same text: the writer sees no change (benchmarks/grammars.py --server
    # times the two). Before: each word a word terminal, a punctuation terminal and a space.
    end = end_token(server.base_url, server.api_key)
    words = lexicon_rules("en", "Describe a lighthouse", "lark")
    before = f'{LLGUIDANCE}start: ((word " "){{19}} wend) {end}\n{words}'
    now = with_word_list(exact_rules("en", 20), words, "lark", end)
    assert now != before
    assert _written(server, now) == _written(server, before)

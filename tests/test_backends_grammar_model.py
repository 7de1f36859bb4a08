"""The grammar fields and the probe against a real server: the embedded llama.cpp server (SmolLM2-135M).

llama.cpp honours `grammar` and a `response_format` JSON schema (converted to a grammar by its own
json-schema-to-grammar, as Ollama's llama-server runner and LM Studio's llama.cpp engine do) and silently
ignores fields it does not know: exactly the two cases the probe must tell apart.
"""

from __future__ import annotations

import pytest

from capel_ui.backends import get_backend, probe
from capel_ui.backends.embedded import start_server
from capel_ui.generation import Request, generate

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

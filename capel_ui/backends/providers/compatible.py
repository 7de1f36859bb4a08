"""Any OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp server, LM Studio) at a URL the writer gives."""

from __future__ import annotations

from dataclasses import replace

from ..base import DEFAULT_CAPABILITIES, Capabilities, PrefillStyle
from . import openai
from .common import http_api
from .spec import ProviderSpec

PREFILL_BY_GRAMMAR_FIELD: dict[str, PrefillStyle] = {
    "grammar": "assistant",
    "guided_grammar": "continue_final_message",
    "structured_outputs": "continue_final_message",
}
"""A compatible server's grammar field names the server (llama.cpp, vLLM), and so how it continues an answer."""


def capabilities(model: str, grammar_field: str | None) -> Capabilities:
    """The grammar field chosen, and the prefill it implies. Through the Responses API (`custom_tool`: a gateway
    in front of OpenAI) the server serves OpenAI's models, so a known OpenAI id keeps its reasoning settings."""
    if not grammar_field:
        return DEFAULT_CAPABILITIES
    if grammar_field == "custom_tool":
        return openai.SPEC.capabilities(model, grammar_field)
    prefill = PREFILL_BY_GRAMMAR_FIELD.get(grammar_field)
    return replace(DEFAULT_CAPABILITIES, grammar_field=grammar_field, prefill=prefill)  # type: ignore[arg-type]


SPEC = ProviderSpec(
    "compatible",
    "OpenAI-compatible server",
    lambda args: http_api(args, args.base_url or args.spec.base_url),
    base_url="http://127.0.0.1:8000/v1",
    key_env="CAPEL_API_KEY",
    model_input="id",
    takes_base_url=True,
    takes_grammar_field=True,
    caps_for=capabilities,
    note="vLLM, SGLang, Ollama, llama.cpp server, LM Studio: give the base URL and model id; pick the grammar "
    "field if the server takes one (llama.cpp: grammar; vLLM: structured_outputs or guided_grammar; SGLang: "
    "ebnf; Ollama, LM Studio: json_schema). The Write page probes whether the server honours it.",
)

"""What several providers share: the llama.cpp capabilities and the two ways to build a backend over HTTP."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..base import Backend, Capabilities
from ..embedded import end_token, start_server
from ..openai_compat import OpenAICompatBackend
from ..openai_responses import OpenAIResponsesBackend
from .spec import BackendArgs

LLAMA_CPP = Capabilities(grammar_field="grammar", logprobs=True, prefill="assistant", end_probability=True)
IN_PROCESS_LLAMA_CPP = replace(LLAMA_CPP, llguidance=True)
"""The in-process llama.cpp (xllamacpp) is built with LLGuidance; a llama.cpp server elsewhere need not be."""


def backend_class(caps: Capabilities) -> type[OpenAICompatBackend]:
    """The Responses API for grammar tools, chat completions for everything else: callers never choose."""
    return OpenAIResponsesBackend if caps.grammar_field == "custom_tool" else OpenAICompatBackend


def http_api(args: BackendArgs, url: str | None, *, openai_account: bool = False) -> Backend:
    """A backend for an OpenAI-style API at `url` (None: the `openai` client's own, OPENAI_BASE_URL or OpenAI's).
    `openai_account`: send OPENAI_ORG_ID and OPENAI_PROJECT_ID (OpenAI's own provider only)."""
    return backend_class(args.capabilities)(
        args.model,
        base_url=url,
        api_key=args.api_key,
        label=args.label,
        capabilities=args.capabilities,
        timeout=args.timeout,
        key_hint=args.key_hint,
        openai_account=openai_account,
    )


def llama_cpp(args: BackendArgs, path: Path | str | None) -> Backend:
    """A backend on the in-process llama.cpp server for a GGUF file (None: the embedded SmolLM2)."""
    handle = start_server(path)
    hint = "the embedded server refused its own key; restart the app"
    caps = replace(args.capabilities, end_token=end_token(handle.base_url, handle.api_key))
    return http_api(replace(args, api_key=handle.api_key, key_hint=hint, capabilities=caps), handle.base_url)

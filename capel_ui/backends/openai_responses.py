"""OpenAI's Responses API: the guaranteed modes on GPT-5-family models through a grammar-constrained custom tool.

The model is forced (`tool_choice`) to call one custom tool whose input must match a Lark grammar; OpenAI runs
the grammar with LLGuidance, the engine the tests check every grammar with. The tool input streams as
`response.custom_tool_call_input.delta` events, which this backend yields as text chunks like any other stream,
so the live countdown, the validator and the verdict are the same. Without a grammar (CAPEL, baseline) the
model writes plain text (`response.output_text.delta`). Retries and error
messages are `guard.Guarded`'s, as for every backend.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

import openai

from ..grammar import AnyGrammar, grammar_text
from ..prompts import Message
from .base import BackendError, Options, ReasoningEffort, Usage
from .openai_compat import OpenAICompatBackend, Read

TOOL_NAME = "write_text"
TOOL_DESCRIPTION = "Write the requested text. The input is the text itself, exactly as the grammar allows."

REASONING_ROOM = 2048
"""Output tokens added to the text's budget for a reasoning model: `max_output_tokens` counts the reasoning
tokens too, and at the smallest effort they are usually far fewer. Only tokens used are billed."""

EFFORTS: tuple[ReasoningEffort, ...] = ("none", "minimal", "low", "medium", "high")


class OpenAIResponsesBackend(OpenAICompatBackend):
    """A model behind OpenAI's Responses API (`client.responses.create`)."""

    _effort: ReasoningEffort | None = None  # a larger effort, once the model refused the smallest

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIResponsesBackend(model={self.model!r}, base_url={self.base_url!r})"

    def request_params(self, messages: Sequence[Message], options: Options) -> dict[str, Any]:
        """The keyword arguments for `responses.create`: a forced grammar tool when there is a grammar."""
        caps = self.capabilities
        params: dict[str, Any] = {
            "model": self.model,
            "input": [{"role": m["role"], "content": m["content"]} for m in messages],
            "stream": True,
            "store": False,
        }
        if options.max_tokens is not None:
            budget = options.max_tokens + (REASONING_ROOM if caps.reasoning else 0)
            params["max_output_tokens"] = min(budget, caps.max_output_tokens or budget)  # the model's limit
        if caps.reasoning and caps.reasoning_effort:
            params["reasoning"] = {"effort": self._effort or caps.reasoning_effort}
        if not caps.ignores_temperature:
            if options.temperature is not None:
                params["temperature"] = options.temperature
            if options.top_p is not None:
                params["top_p"] = options.top_p
        if options.grammar is not None:
            params.update(self.grammar_params(options.grammar))
        if options.timeout is not None:
            params["timeout"] = options.timeout
        if options.prefill:  # repair quotes the kept countdown instead (Capabilities.prefill is None here)
            raise BackendError("bad_request", f"{self.label} cannot continue a partial answer (no prefill)")
        return params  # no seed: the Responses API takes none

    def grammar_params(self, grammar: AnyGrammar) -> dict[str, Any]:
        """One custom tool whose input must match the grammar (in Lark), and the call forced."""
        lark = grammar_text(grammar, "lark")
        if lark is None:
            raise BackendError("bad_request", f"This grammar has no Lark form, so {self.label} cannot take it.")
        tool = {
            "type": "custom",
            "name": TOOL_NAME,
            "description": TOOL_DESCRIPTION,
            "format": {"type": "grammar", "syntax": "lark", "definition": lark},
        }
        return {"tools": [tool], "tool_choice": {"type": "custom", "name": TOOL_NAME}, "parallel_tool_calls": False}

    def _create(self, params: dict[str, Any], client: openai.OpenAI) -> Any:
        """Open the stream; a model that refuses this reasoning effort is asked again with one it takes."""
        tried: set[str] = set()
        while True:
            tried.add((params.get("reasoning") or {}).get("effort", ""))
            try:
                return client.responses.create(**params)
            except openai.BadRequestError as exc:
                higher = self._higher_effort(exc, params)
                if higher is None or higher in tried:
                    raise
                self._effort = higher
                params["reasoning"] = {"effort": higher}

    @staticmethod
    def _higher_effort(exc: openai.BadRequestError, params: dict[str, Any]) -> ReasoningEffort | None:
        """The smallest effort the refusal says the model supports (else the next one up); None: not about effort.

        OpenAI answers e.g. "'reasoning_effort' does not support 'minimal' with this model. Supported values
        are: 'none', 'low', 'medium', and 'high'." (gpt-5.1 dropped minimal; gpt-5 has no none).
        """
        effort = (params.get("reasoning") or {}).get("effort")
        text = str(exc).lower()
        if effort not in EFFORTS or "effort" not in text:
            return None
        listed = re.search(r"supported values are:([^.]*)", text)
        supported = set(re.findall(r"'([a-z]+)'", listed.group(1))) if listed else set()
        above = EFFORTS[EFFORTS.index(effort) + 1 :]
        choices = [e for e in EFFORTS if e in supported and e != effort] or list(above[:1])
        return choices[0] if choices else None

    def _failure(self, exc: openai.APIError) -> BackendError:
        """The chat backend's messages, plus the two 400s only this route meets: custom tools and grammars."""
        if isinstance(exc, openai.BadRequestError):
            text = str(exc).lower()
            if "grammar" in text or "lark" in text:
                return BackendError(
                    "bad_request",
                    f"{self._where()} could not compile the length grammar for {self.label} (400): {exc}; "
                    "try a smaller target or a non-exact mode.",
                    status=exc.status_code,
                )
            if "custom" in text or "tool" in text:
                return BackendError(
                    "bad_request",
                    f"{self.label} does not take grammar-constrained custom tools (400); pick a GPT-5-family "
                    "model for the exact modes, or a non-exact mode.",
                    status=exc.status_code,
                )
        return super()._failure(exc)

    def stream(self, messages: Sequence[Message], options: Options) -> Iterator[str | Usage]:
        params = self.request_params(messages, options)
        yield from self._run(params, options, self._events)

    def _events(self, response: Any, params: dict[str, Any], state: Read) -> Iterator[str]:
        """The text of a Responses stream: the forced tool's input when there is a grammar, else output text."""
        wanted = "response.custom_tool_call_input.delta" if "tools" in params else "response.output_text.delta"
        for event in response:
            state.events += 1
            kind = getattr(event, "type", None)
            if kind == wanted and event.delta:
                yield event.delta
            elif kind in ("response.completed", "response.incomplete"):
                state.usage = getattr(event.response, "usage", None)
                state.finish = "stop" if kind == "response.completed" else _incomplete_reason(event.response)
            elif kind == "response.failed":
                raise _failed(self.label, event.response)
            elif kind == "error":
                raise BackendError("server", f"{self._where()} failed mid-stream: {event.message}")

    def _end(self, state: Read) -> Usage:
        """As for chat, with OpenAI's usage fields; a budget spent wholly on reasoning ends as a `length` finish
        with no text (the run then fails saying so), not as an empty answer."""
        if state.received:
            super()._end(state)  # a stream that never said it finished was cut
        elif state.finish != "length":
            raise BackendError(
                "empty",
                f"{self.label} returned no text (finish reason: {state.finish or 'none'}); try again or another "
                "model (the exact modes need one that takes grammar tools).",
            )
        return Usage(
            prompt_tokens=getattr(state.usage, "input_tokens", None),
            completion_tokens=getattr(state.usage, "output_tokens", None),
            seconds=time.monotonic() - state.started,
            first_token_seconds=state.first,
            finish_reason=state.finish,
            reasoning_tokens=_reasoning_tokens(state.usage),
        )


def _reasoning_tokens(usage: Any) -> int | None:
    return getattr(getattr(usage, "output_tokens_details", None), "reasoning_tokens", None)


def _incomplete_reason(response: Any) -> str:
    """`length` when the output budget ran out (as chat completions say it), else the reason as given."""
    reason = getattr(getattr(response, "incomplete_details", None), "reason", None)
    return "length" if reason == "max_output_tokens" else (reason or "incomplete")


def _failed(label: str, response: Any) -> BackendError:
    error = getattr(response, "error", None)
    message = getattr(error, "message", None) or "no reason given"
    return BackendError("server", f"{label} failed to answer: {message}; try again later.")

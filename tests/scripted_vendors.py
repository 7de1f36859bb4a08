"""Each hosted vendor's check of a chat-completions body, as its own documents and SDK types say it is checked,
for `ScriptedServer.as_vendor`: the fields it knows (read here from the vendor's SDK types or compatibility page,
never from the app's own declarations), the limits it enforces, and the error body it answers with.

- OpenAI (openai 3.57.0 `CompletionCreateParams`): an unknown field is 400 "Unrecognized request argument
  supplied"; a budget over the model's output limit is 400 "max_tokens is too large" (gpt-4.1: 32,768, gpt-4o:
  16,384, OpenAI's model pages).
- Mistral (mistralai 3.7.0 `ChatCompletionStreamRequest`): any other field is 422 with FastAPI's `detail`
  ("Extra inputs are not permitted"), inside Mistral's `{"object": "error", "message": ...}`.
- Gemini (Google's "OpenAI compatibility" page): a field it does not map is 400 `[{"error": {"message": "Invalid JSON
  payload received. Unknown name \\"seed\\"..."}}]` (Google's list-wrapped error).
- Anthropic (its "OpenAI SDK compatibility" page): fields it ignores are accepted and ignored, a temperature over
  1 is capped: nothing is refused, so the tests assert what was sent; a `max_tokens` over the model's output limit
  is 400 in Anthropic's `{"type": "error", "error": {...}}`.
- xAI (xai-sdk 1.21.0 `chat.create`, REST reference): an unknown field is 400 `{"code": ..., "error": ...}`.
- DeepSeek ("Create Chat Completion"): `max_tokens` over 8,192 on deepseek-chat is 400 "Invalid max_tokens value".
- OpenRouter: accepts the OpenAI fields and `provider`.
"""

from __future__ import annotations

from typing import Any

from tests.scripted_server import Vendor

OPENAI_FIELDS = frozenset(
    [
        "audio",
        "frequency_penalty",
        "function_call",
        "functions",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "messages",
        "metadata",
        "modalities",
        "model",
        "moderation",
        "n",
        "parallel_tool_calls",
        "prediction",
        "presence_penalty",
        "prompt_cache_key",
        "prompt_cache_options",
        "prompt_cache_retention",
        "reasoning_effort",
        "response_format",
        "safety_identifier",
        "seed",
        "service_tier",
        "stop",
        "store",
        "stream",
        "stream_options",
        "temperature",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "user",
        "verbosity",
        "web_search_options",
    ]
)
MISTRAL_FIELDS = frozenset(
    [
        "model",
        "messages",
        "temperature",
        "top_p",
        "max_tokens",
        "stream",
        "stop",
        "random_seed",
        "metadata",
        "response_format",
        "tools",
        "tool_choice",
        "presence_penalty",
        "frequency_penalty",
        "min_tokens",
        "repetition_penalty",
        "top_k",
        "logprobs",
        "top_logprobs",
        "prompt_logprobs",
        "top_prompt_logprobs",
        "n",
        "prediction",
        "parallel_tool_calls",
        "reasoning_effort",
        "prompt_mode",
        "guardrails",
        "safe_prompt",
    ]
)
GEMINI_FIELDS = frozenset(
    [
        "model",
        "messages",
        "stream",
        "stream_options",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "n",
        "stop",
        "response_format",
        "reasoning_effort",
        "tools",
        "tool_choice",
        "extra_body",
    ]
)
XAI_FIELDS = frozenset(
    [
        "model",
        "messages",
        "stream",
        "stream_options",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "seed",
        "n",
        "stop",
        "logprobs",
        "top_logprobs",
        "response_format",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "presence_penalty",
        "frequency_penalty",
        "user",
        "reasoning_effort",
        "search_parameters",
    ]
)
OUTPUT_LIMITS = {"gpt-4.1": 32_768, "gpt-4o": 16_384, "claude-sonnet-4-5": 64_000, "deepseek-chat": 8_192}


def _budget(body: dict[str, Any]) -> tuple[str, int] | None:
    for name in ("max_completion_tokens", "max_tokens"):
        if body.get(name) is not None:
            return name, int(body[name])
    return None


def openai(path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    if not path.endswith("/chat/completions"):
        return None
    unknown = sorted(set(body) - OPENAI_FIELDS)
    if unknown:
        return _openai_error(f"Unrecognized request argument supplied: {unknown[0]}", unknown[0])
    budget, most = _budget(body), OUTPUT_LIMITS.get(body.get("model", ""))
    if budget and most and budget[1] > most:
        name, n = budget
        return _openai_error(
            f"{name} is too large: {n}. This model supports at most {most} completion tokens, whereas you provided "
            f"{n}.",
            name,
        )
    return None


def _openai_error(message: str, param: str) -> tuple[int, Any]:
    return 400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}


def mistral(path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    extra = [k for k in body if k not in MISTRAL_FIELDS]
    for i, message in enumerate(body.get("messages") or []):
        allowed = {"role", "content", "prefix", "name", "tool_calls", "tool_call_id"}
        extra += [f"messages.{i}.{k}" for k in message if k not in allowed]
    if not extra:
        return None
    detail = [
        {"type": "extra_forbidden", "loc": ["body", *k.split(".")], "msg": "Extra inputs are not permitted", "input": 1}
        for k in extra
    ]
    return 422, {"object": "error", "message": {"detail": detail}, "type": "invalid_request_error", "param": None,
                 "code": None}  # fmt: skip


def gemini(path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    unknown = sorted(set(body) - GEMINI_FIELDS)
    if not unknown:
        return None
    message = f'Invalid JSON payload received. Unknown name "{unknown[0]}": Cannot find field.'
    return 400, [{"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}]


def anthropic(path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    budget, most = _budget(body), OUTPUT_LIMITS.get(body.get("model", ""))
    if budget and most and budget[1] > most:
        message = (
            f"max_tokens: {budget[1]} > {most}, which is the maximum allowed number of output tokens for "
            f"{body['model']}"
        )
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return None


def xai(path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    unknown = sorted(set(body) - XAI_FIELDS)
    if not unknown:
        return None
    return 400, {"code": "Client specified an invalid argument", "error": f"Unknown field: {unknown[0]}"}


def deepseek(path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    budget, most = _budget(body), OUTPUT_LIMITS.get(body.get("model", ""))
    if budget and most and budget[1] > most:
        message = f"Invalid max_tokens value, the valid range of max_tokens is [1, {most}]"
        return 400, {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
    return None


def openrouter(path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    unknown = sorted(set(body) - OPENAI_FIELDS - {"provider", "top_k", "models", "transforms", "route"})
    if unknown:
        return 400, {"error": {"message": f"Unknown parameter: {unknown[0]}", "code": 400}}
    return None


VENDORS: dict[str, Vendor] = {
    "openai": openai,
    "mistral": mistral,
    "gemini": gemini,
    "anthropic": anthropic,
    "xai": xai,
    "deepseek": deepseek,
    "openrouter": openrouter,
}

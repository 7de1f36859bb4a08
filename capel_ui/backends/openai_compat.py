"""Every remote call goes through the `openai` client with a base URL: OpenAI, DeepSeek, vLLM, Ollama,
llama.cpp and the embedded model all share this one code path."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import SimpleNamespace
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

import openai

from ..ending import end_share as end_share  # re-exported: benchmarks/ import it from here
from ..ending import score_from_tokens, split_ending
from ..grammar import AnyGrammar, Grammar, grammar_text
from ..prompts import Message
from .abort import TrackingBackend, http_client, shutdown
from .base import (
    DEFAULT_CAPABILITIES,
    Backend,
    BackendError,
    Capabilities,
    Fault,
    Options,
    SlotGate,
    Unanswered,
    Usage,
    gate_of,
    register_slots,
    retry_backoff,
    server_slots,
)
from .dialect import ModelLimit, explanation, shape
from .jsonstring import JsonStringReader, MalformedString


def _retry_after(exc: Exception) -> float | None:
    """The wait the server asked for, in seconds: `retry-after-ms`, or `Retry-After` as seconds or an HTTP date."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    try:
        if headers.get("retry-after-ms") is not None:
            return max(float(headers["retry-after-ms"]) / 1000, 0.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(float(value), 0.0)
        except ValueError:
            when = parsedate_to_datetime(value)
            return max((when - datetime.now(UTC)).total_seconds(), 0.0)
    except (TypeError, ValueError):  # unparsable: fall back to our own backoff
        return None


def check_base_url(url: str) -> str:
    """The base URL as given, if it is a web address (http or https, with a host); else a BackendError saying
    what a base URL looks like. Checked before anything is sent."""
    example = "e.g. http://127.0.0.1:8000/v1"
    value = url.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https"):
        raise BackendError("bad_request", f"The base URL {url!r} must start with http:// or https:// ({example}).")
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
    except ValueError:
        raise BackendError("bad_request", f"The base URL {url!r} has an invalid port ({example}).") from None
    if not parts.hostname or any(c.isspace() for c in value):
        raise BackendError("bad_request", f"The base URL {url!r} names no host ({example}).")
    return value


class OpenAICompatBackend(Backend):
    """A model behind an OpenAI-compatible chat completions endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        label: str | None = None,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
        timeout: float = 120.0,
        key_hint: str = Backend.key_hint,
        openai_account: bool = False,
    ) -> None:
        self.model = model
        self.base_url = check_base_url(base_url) if base_url is not None else None
        self.label = label or model
        self.capabilities = capabilities
        self.key_hint = key_hint
        self._endings = EndingQuestions(self)  # the ending search's questions, asked of this server
        # The client's own retries are off: `guard.Guarded` retries, bounded, and never once text arrived.
        self._network = TrackingBackend()  # lets a Stop abort a request still waiting for its first byte
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            max_retries=0,
            timeout=timeout,
            http_client=http_client(self._network),
        )
        if not openai_account:  # OPENAI_ORG_ID / OPENAI_PROJECT_ID name an OpenAI account: never sent elsewhere
            self._client.organization = self._client.project = None
        if base_url is None:  # the client chose it (OPENAI_BASE_URL, else OpenAI's): name the one in use
            self.base_url = str(self._client.base_url).rstrip("/")

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatBackend(model={self.model!r}, base_url={self.base_url!r})"

    def request_params(self, messages: Sequence[Message], options: Options) -> dict[str, Any]:
        """The keyword arguments for `chat.completions.create`, shaped by this backend's capabilities."""
        caps = self.capabilities
        params: dict[str, Any] = {"model": self.model, "messages": list(messages), "stream": True}
        params["stream_options"] = {"include_usage": True}
        if options.max_tokens is not None:
            params["max_completion_tokens" if caps.max_completion_tokens else "max_tokens"] = options.max_tokens
        if not caps.ignores_temperature:
            if options.temperature is not None:
                params["temperature"] = options.temperature
            if options.top_p is not None:
                params["top_p"] = options.top_p
        if options.seed is not None:
            params["seed"] = options.seed
        if options.logprobs and caps.logprobs:
            params["logprobs"] = True
            if self._endings.scores_endings():  # the ending's questions about the text as written: answered here
                params["top_logprobs"] = TOP_LOGPROBS
        if options.grammar is not None:
            params.update(self.grammar_params(options.grammar))
        if options.timeout is not None:  # else the client keeps the timeout the backend was built with
            params["timeout"] = options.timeout
        if options.prefill:
            self._add_prefill(params, options.prefill)
        limit = ModelLimit(caps.max_output_tokens, caps.context_tokens)
        return shape(params, caps.dialect, limit, self.label)  # in the vendor's words (dialect.py)

    def _add_prefill(self, params: dict[str, Any], prefill: str) -> None:
        """End the messages with the answer so far, in the way this server continues it."""
        style = self.capabilities.prefill
        if style is None:
            raise BackendError("bad_request", f"{self.label} cannot continue a partial answer (no prefill)")
        message: dict[str, Any] = {"role": "assistant", "content": prefill}
        if style == "prefix":
            message["prefix"] = True
        elif style == "continue_final_message":
            extra = params.setdefault("extra_body", {})
            extra.update(continue_final_message=True, add_generation_prompt=False)
        params["messages"] = [*params["messages"], message]

    def grammar_params(self, grammar: AnyGrammar) -> dict[str, Any]:
        """Where this server takes a grammar, and in which syntax (see `GrammarField`)."""
        field = self.capabilities.grammar_field
        if field is None or field == "custom_tool":
            raise BackendError("bad_request", f"{self.label} does not take a grammar; pick a non-exact mode")
        if field == "json_schema":
            if not isinstance(grammar, Grammar):
                raise BackendError("bad_request", f"This grammar has no JSON-schema form for {self.label}.")
            schema = {"name": "text", "schema": _root_schema(grammar, self.capabilities), "strict": True}
            return {"response_format": {"type": "json_schema", "json_schema": schema}}
        text = grammar_text(grammar, "gbnf")  # llama.cpp, vLLM and SGLang (xgrammar's EBNF) all read GBNF
        if field == "structured_outputs":
            return {"extra_body": {"structured_outputs": {"grammar": text}}}
        return {"extra_body": {field: text}}

    def next_tokens(self, messages: Sequence[Message], prefix: str) -> list[tuple[str, float]] | None:
        """The most likely next tokens after `prefix` (`EndingQuestions.next_tokens`)."""
        return self._endings.next_tokens(messages, prefix)

    def ending_score(self, messages: Sequence[Message], text: str) -> float | None:
        """The ending score of `text` (`EndingQuestions.ending_score`)."""
        return self._endings.ending_score(messages, text)

    def _where(self) -> str:
        return self.base_url or "the OpenAI API"

    def _failure(self, exc: openai.APIError) -> BackendError:
        """What went wrong, as a `Fault` the guard words (and may retry)."""
        status = getattr(exc, "status_code", None)
        if isinstance(exc, openai.APITimeoutError):
            return Fault("timeout")
        if isinstance(exc, openai.APIConnectionError):
            return Fault("unreachable")
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return Fault("auth", status=status)
        if isinstance(exc, openai.RateLimitError):
            return Fault("rate_limit", status=status, retry_after=_retry_after(exc))
        if isinstance(exc, openai.NotFoundError):
            return Fault("not_found", status=status)
        said = explanation(exc)  # the vendor's own words, in full and plain (dialect.py)
        if isinstance(exc, openai.BadRequestError):
            text = str(exc).lower()
            too_long = "context" in text or "too long" in text or ("maximum" in text and "token" in text)
            return Fault("context" if too_long else "bad_request", said, status=status)
        if isinstance(exc, openai.UnprocessableEntityError):  # Mistral's validation: what the body broke
            return Fault("bad_request", said, status=status)
        if isinstance(exc, openai.InternalServerError):
            return Fault("server", status=status, retry_after=_retry_after(exc))
        return Fault("server", said, status=status)

    def _create(self, params: dict[str, Any], client: openai.OpenAI) -> Any:
        """One attempt at opening the stream (the Responses backend calls its own endpoint here)."""
        return client.chat.completions.create(**params)

    def _open(self, params: dict[str, Any]) -> Any:
        """Start the stream (one attempt: `guard.Guarded` retries)."""
        client = self._client
        path = self.capabilities.prefill_path
        messages = params.get("messages") or []  # a Responses request has `input` instead
        if path and messages and messages[-1].get("role") == "assistant" and self.base_url:
            client = client.with_options(base_url=self.base_url.rstrip("/") + path)  # e.g. DeepSeek's beta
        try:
            return self._create(params, client)
        except openai.APIError as exc:
            raise self._failure(exc) from exc

    def _release(self, forget: Any, thread: int) -> None:
        if forget is not None:
            forget()
        self._network.release(thread)

    def _not_openai(self, what: str, received: int = 0) -> BackendError:
        kept = f" after {received} characters; the text that arrived is kept" if received else ""
        return BackendError(
            "not_openai",
            f"{self._where()} did not answer as an OpenAI-compatible API ({what}){kept}; check the base URL "
            "(it usually ends in /v1).",
        )

    def _check_stream(self, response: Any, params: dict[str, Any]) -> bool:
        """True for an event stream; False for a complete chat.completion JSON answer to a chat request (a gateway
        that ignores `stream`: its text is used); anything else (an HTML page from a proxy) is not an API."""
        http = getattr(response, "response", None)
        kind = (http.headers.get("content-type") or "") if http is not None else "text/event-stream"
        if "text/event-stream" in kind.lower():
            return True
        if "json" in kind.lower() and "messages" in params:
            return False
        response.close()
        raise self._not_openai(f"it sent {kind.split(';')[0].strip() or 'no content type'}, not an event stream")

    def _whole_answer(self, response: Any, params: dict[str, Any], state: Read) -> Iterator[str]:
        """The text of a complete chat.completion JSON answer, as one chunk (the stream's `_end` checks it)."""
        body = json.loads(response.response.read())
        error = body.get("error") if isinstance(body, dict) else None
        if error:
            message = error.get("message", error) if isinstance(error, dict) else error
            raise BackendError("server", f"{self._where()} answered with an error: {message}")
        try:
            choice = body["choices"][0]
            content = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as exc:
            raise self._not_openai("its JSON answer is not a chat completion") from exc
        state.events += 1
        state.finish = choice.get("finish_reason") or "stop"
        state.usage = SimpleNamespace(**body["usage"]) if isinstance(body.get("usage"), dict) else None
        if content and "response_format" in params:
            yield from self._decoded(JsonStringReader(), content, state)
        elif content:
            yield content

    def stream(self, messages: Sequence[Message], options: Options) -> Iterator[str | Usage]:
        REQUESTS.add("completion")
        params = self.request_params(messages, options)
        yield from self._run(params, options, self._chat_chunks)

    def _run(
        self, params: dict[str, Any], options: Options, read: Callable[[Any, dict[str, Any], Read], Iterator[str]]
    ) -> Iterator[str | Usage]:
        """Open the stream, hand on the text `read` finds in it, and end with a Usage (or the error saying why
        not). Stop aborts it at any point; a failure of the open stream keeps what arrived."""
        state = Read(started=time.monotonic())
        opened: list[Any] = []
        thread = threading.get_ident()

        def abort() -> None:  # runs in the thread that cancels
            if opened:
                _abort(opened[0])
            self._network.abort(thread)  # also before the server has answered at all

        forget = options.cancel.on_set(abort) if options.cancel is not None else None
        try:
            response = self._open(params)
        except BaseException:
            self._release(forget, thread)
            raise
        opened.append(response)
        try:
            if not self._check_stream(response, params):
                read = self._whole_answer
            _keep_head(response, state)
            for content in read(response, params, state):
                if state.first is None:
                    state.first = time.monotonic() - state.started
                state.received += len(content)
                state.text.append(content)
                yield content
        except BackendError:
            raise
        except json.JSONDecodeError as exc:
            raise self._not_openai("a line of its stream is not JSON", state.received) from exc
        except openai.APIError as exc:
            if type(exc) is not openai.APIError:  # a subclass: the transport failed (connection, timeout): cut
                raise self._cut(exc, state) from exc
            # The SDK raises the base class for an `error` event in the stream: the server's own failure.
            kept = f"; the {state.received} characters that arrived are kept" if state.received else ""
            said = exc.message.strip().rstrip(".")
            raise BackendError("server", f"{self._where()} reported an error in its stream: {said}{kept}.") from exc
        except Exception as exc:  # any other failure of an open stream (API or transport) means it was cut
            raise self._cut(exc, state) from exc
        finally:
            self._release(forget, thread)
            response.close()
        usage = self._end(state)
        self._endings.remember(params, state.tokens, state.text)
        yield usage

    def _cut(self, exc: BaseException, state: Read) -> BackendError:
        return BackendError(
            "cut",
            f"The stream from {self.label} was cut after {state.received} characters ({type(exc).__name__}); "
            "the text that arrived is kept.",
        )

    def _chat_chunks(self, response: Any, params: dict[str, Any], state: Read) -> Iterator[str]:
        """The text of a chat-completions stream (decoded from a JSON string under a JSON-schema grammar)."""
        reader = JsonStringReader() if "response_format" in params else None
        for chunk in response:
            state.events += 1
            if getattr(chunk, "usage", None):
                state.usage = chunk.usage
            for choice in chunk.choices or ():
                state.finish = choice.finish_reason or state.finish
                content = choice.delta.content if choice.delta else None
                state.logprobs.extend(_token_logprobs(choice))
                state.tokens.extend(_token_alternatives(choice))
                if content and reader is not None:
                    yield from self._decoded(reader, content, state)
                elif content:
                    yield content

    def _decoded(self, reader: JsonStringReader, content: str, state: Read) -> Iterator[str]:
        """The text of one piece of a JSON-string answer; an escape that is not JSON ends the stream as the server's
        malformed output, after the text decoded before it."""
        try:
            text = reader.feed(content)
        except MalformedString as bad:
            if bad.decoded:
                yield bad.decoded
            kept = f" after {state.received} characters; the text that arrived is kept" if state.received else ""
            raise BackendError(
                "not_openai",
                f"{self._where()} sent malformed JSON under the JSON-schema grammar (the escape {bad.escape!r} is "
                f"not JSON){kept}; try again, or a non-exact mode.",
            ) from None
        if text:
            yield text

    def _end(self, state: Read) -> Usage:
        """The Usage of a finished stream; a stream that never said it finished, or sent no text, is an error."""
        if state.finish is None and state.received:
            raise BackendError(
                "cut",
                f"The stream from {self.label} ended without finishing after {state.received} characters; "
                "the text that arrived is kept.",
            )
        if not state.received and not state.events:  # an "event stream" with no event in it: a web page, say
            page = state.head.lstrip()[:1] == b"<"
            raise self._not_openai(
                "it sent a web page labelled as an event stream, with no event in it"
                if page
                else "its event stream held no events"
            )
        if not state.received:
            raise BackendError(
                "empty",
                f"{self.label} returned no text (finish reason: {state.finish or 'none'}); try again or another model.",
            )
        return Usage(
            prompt_tokens=getattr(state.usage, "prompt_tokens", None),
            completion_tokens=getattr(state.usage, "completion_tokens", None),
            seconds=time.monotonic() - state.started,
            first_token_seconds=state.first,
            finish_reason=state.finish,
            logprobs=tuple(state.logprobs),
        )


@dataclass
class Read:
    """What one stream has delivered so far: the reader of its events fills `usage` and `finish`."""

    started: float
    first: float | None = None
    received: int = 0  # characters of text handed on
    events: int = 0  # events read (a stream of none is not an API's)
    usage: Any = None
    finish: str | None = None
    logprobs: list[float] = field(default_factory=list)  # per output token, when asked for (the fluency score)
    head: bytes = b""  # the body's first bytes as they came (`_keep_head`): what a stream of no events was
    text: list[str] = field(default_factory=list)  # the text handed on, piece by piece
    tokens: list[tuple[str, list[tuple[str, float]]]] = field(default_factory=list)  # each token, its alternatives


HEAD_BYTES = 64


def _keep_head(response: Any, state: Read) -> None:
    """Keep the first `HEAD_BYTES` of the body in `state.head` as the SDK reads them: its event decoder drops
    every line that is not an event, so only this tells a web page sent as an event stream from an empty stream."""
    http = getattr(response, "response", None)
    read = getattr(http, "iter_bytes", None)
    if read is None:
        return

    def iter_bytes(*args: Any, **kwargs: Any) -> Iterator[bytes]:
        for data in read(*args, **kwargs):
            if len(state.head) < HEAD_BYTES:
                state.head += data[: HEAD_BYTES - len(state.head)]
            yield data

    http.iter_bytes = iter_bytes


def _abort(response: Any) -> None:
    """End an open stream from another thread: shut its socket down, which wakes the read waiting for the next
    token at once (closing the response from here would race with that read); the reader then closes it."""
    http = getattr(response, "response", None)
    network = http.extensions.get("network_stream") if http is not None else None
    if network is None:
        response.close()
        return
    shutdown(network.get_extra_info("socket"))


TOP_LOGPROBS = 20
"""Alternatives asked for with the next token (OpenAI's and DeepSeek's most): an end token below all of them
is unlikely enough to count as 0."""
ENDING_TIMEOUT = 30.0
ENDING_TRIES = 3
"""Attempts at one ending question where the server timed out or was too busy (503)."""
TOKENIZED = 4096
"""Words whose first token is kept (`_first_piece`)."""
SEEN = 4096
"""Places in streamed texts whose next tokens are kept (`EndingQuestions.remember`): a few dozen texts' worth."""


K = TypeVar("K")
V = TypeVar("V")


class Remembered(Generic[K, V]):
    """A bounded memory of answers (least recently used forgotten first), safe across threads."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


class RequestCount(Counter[str]):
    """HTTP requests sent by every OpenAI-compatible backend of this process, by what they asked: `completion`,
    `next tokens`, `ending score`, `tokenize`, `props`. What one run's ending costs, counted where timing would
    depend on the machine's load (benchmarks, tests: `clear()` first)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def add(self, kind: str) -> None:
        with self._lock:
            self[kind] += 1


REQUESTS = RequestCount()


def _first_piece_matters(written: tuple[str, float, Any], unit: str) -> bool:
    """Whether the tokenizer's own first token of `unit` could change its score, given the first token the grammar
    let the model write (`ending_score`): that one is shorter than the word, and is a lone space or one of the
    model's likeliest tokens there is a longer start of the word. Else no /tokenize round trip is needed."""
    token, _, alternatives = written
    if len(token) >= len(unit):
        return False
    return not token.strip() or any(len(t) > len(token) and unit.startswith(t) for t, _ in alternatives)


def _busy(fault: Fault) -> bool:
    """A server that did not answer in time, or said it is too busy (503): worth asking again, a little later."""
    return fault.kind == "timeout" or fault.status == 503


def _content(answer: Any) -> list[dict[str, Any]]:
    """The tokens of a complete (not streamed) JSON answer, each with its log-probability and alternatives, if any."""
    try:
        return [t for t in answer["choices"][0]["logprobs"]["content"] or () if isinstance(t, dict)]
    except (KeyError, IndexError, TypeError):
        return []


def _listed(token: dict[str, Any]) -> list[tuple[str, float]]:
    """(token, logprob) of the alternatives a JSON answer listed at one token's place."""
    return [(str(t["token"]), float(t["logprob"])) for t in token.get("top_logprobs") or ()]


def _alternatives(token: Any) -> list[tuple[str, float]]:
    """(token, logprob) of the alternatives the server listed at one token's place."""
    return [(str(t.token), float(t.logprob)) for t in getattr(token, "top_logprobs", None) or ()]


def _token_alternatives(choice: Any) -> list[tuple[str, list[tuple[str, float]]]]:
    """Each streamed token of a choice with the alternatives listed at its place (`top_logprobs`), if any."""
    content = getattr(getattr(choice, "logprobs", None), "content", None) or ()
    return [(str(t.token), _alternatives(t)) for t in content]


def _messages_key(messages: Sequence[Message]) -> str:
    """The messages as one string: what a streamed text and an ending question must share for one to answer the
    other."""
    return json.dumps(list(messages), sort_keys=True, ensure_ascii=False)


def _token_logprobs(choice: Any) -> list[float]:
    """The log-probabilities of a streamed choice's tokens (`choice.logprobs.content[].logprob`), if any."""
    content = getattr(getattr(choice, "logprobs", None), "content", None) or ()
    return [float(t.logprob) for t in content if getattr(t, "logprob", None) is not None]


def _root_schema(grammar: Grammar, caps: Capabilities) -> dict[str, Any]:
    """The grammar as a JSON schema: one string (Ollama, LM Studio, llama.cpp), or, where strict structured
    outputs want an object at the root (OpenAI), `{"text": <that string>}` with nothing else allowed."""
    string = grammar.json_schema()
    if not caps.json_object:
        return string
    return {"type": "object", "properties": {"text": string}, "required": ["text"], "additionalProperties": False}


class EndingQuestions:
    """The ending search's questions to one server (llama.cpp: an answer continued, next-token log-probabilities, a
    word forced by a literal grammar, its tokenizer): asked through its backend's client, at most as many at once as
    the server has slots, each question tried again when the server was too busy. A job of its own, apart from
    streaming a text (`OpenAICompatBackend`)."""

    def __init__(self, backend: OpenAICompatBackend) -> None:
        self.backend = backend
        self._tokenize: bool | None = None  # whether the server has llama.cpp's /tokenize (None: not asked yet)
        self._pieces = Remembered[str, str](TOKENIZED)  # a word's first token, by the word (`_first_piece`)
        self._seen = Remembered[tuple[str, str], list[tuple[str, float]]](SEEN)  # next tokens streamed (`remember`)

    def scores_endings(self) -> bool:
        """Whether this server is known to continue an answer and list next-token log-probabilities (llama.cpp:
        `Capabilities.end_probability`); a reasoning model would think first, so it is never asked."""
        caps = self.backend.capabilities
        return caps.end_probability and caps.prefill is not None and not caps.reasoning

    def _ending_params(self, messages: Sequence[Message], prefix: str, max_tokens: int) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.backend.model, "messages": list(messages), "stream": False}
        caps = self.backend.capabilities
        params["max_completion_tokens" if caps.max_completion_tokens else "max_tokens"] = max_tokens
        params.update(logprobs=True, top_logprobs=TOP_LOGPROBS, temperature=0.0, timeout=ENDING_TIMEOUT)
        self.backend._add_prefill(params, prefix)
        return params

    def next_tokens(self, messages: Sequence[Message], prefix: str) -> list[tuple[str, float]] | None:
        """The most likely next tokens after `prefix` (sent as the answer so far), one token asked for with its
        top log-probabilities. (Asking for the likeliest few tokens at once, each with its alternatives, would answer
        the search's next question about the likeliest path too, 40 % fewer questions, but each further token costs
        the server what a question does: 10 % more of its time on the embedded model.)"""
        if not self.scores_endings() or not prefix.strip():
            return None
        seen = self._seen.get((_messages_key(messages), prefix))
        if seen is not None:
            return seen
        content = _content(self._ask("next tokens", self._ending_params(messages, prefix, 1)))
        return (_listed(content[0]) or None) if content else None

    def remember(
        self, params: dict[str, Any], tokens: list[tuple[str, list[tuple[str, float]]]], pieces: list[str]
    ) -> None:
        """Keep the alternatives a finished stream listed at each of its tokens, as the answer to the next-token
        question about the text before that token: llama.cpp lists them from the model's own probabilities, before
        the grammar and the sampler, as a question would, so a question about the text as written (where the model
        wanted to stop: `wanted_end`; the head of an ending search) needs no request, and the slot keeps the whole
        text cached for the questions that do. Only where the tokens spell the streamed text (its `pieces`) exactly
        (no JSON string); a stream that listed no alternatives (any other server) costs nothing here."""
        if not tokens or not self.scores_endings() or "".join(token for token, _ in tokens) != "".join(pieces):
            return
        messages, at = list(params.get("messages") or []), ""
        if messages and messages[-1].get("role") == "assistant":  # a prefill: the tokens follow it
            at = str(messages.pop()["content"])
        key = _messages_key(messages)
        for token, alternatives in tokens:
            if alternatives and at.strip():
                self._seen.put((key, at), alternatives)
            at += token

    def _ask(self, kind: str, params: dict[str, Any]) -> Any:
        """One ending question (`kind`, counted in `REQUESTS`), in a place of the server's gate (at most as many
        at once as it has slots: more only queue there and time out), tried again after a timeout or a 503 (a
        server too busy to answer in time) at most `ENDING_TRIES` times in all; then the last failure."""
        wait = retry_backoff()
        for attempt in range(1, ENDING_TRIES + 1):
            with self._gate().place():
                REQUESTS.add(kind)
                try:
                    return self._post(params)
                except Fault as fault:
                    if attempt == ENDING_TRIES or not _busy(fault):
                        raise
            time.sleep(wait * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # the last attempt returns or raises

    def _post(self, params: dict[str, Any]) -> Any:
        """One question, sent and read as plain JSON: the SDK's request and answer types cost ~3 ms of a question
        that takes ~25 ms on the embedded model."""
        body = {k: v for k, v in params.items() if k not in ("timeout", "extra_body")}
        body.update(params.get("extra_body") or {})
        try:
            return self.backend._client.post(
                "/chat/completions", body=body, cast_to=object, options={"timeout": params["timeout"]}
            )
        except openai.APIError as exc:
            raise self.backend._failure(exc) from exc

    def _gate(self) -> SlotGate:
        """This server's gate (base.SlotGate), sized by its slots: the embedded server registers them; a llama.cpp
        server elsewhere says them once (`/props`: total_slots); one where it does not."""
        if self.backend.base_url and server_slots(self.backend.base_url) is None:
            register_slots(self.backend.base_url, self._props_slots())
        return gate_of(self.backend)

    def _props_slots(self) -> int:
        root = (self.backend.base_url or "").rstrip("/").removesuffix("/v1")
        REQUESTS.add("props")
        try:
            client = self.backend._client.with_options(base_url=root, timeout=ENDING_TIMEOUT)
            props = client.get("/props", cast_to=object)
            return max(1, int(props["total_slots"]))
        except (openai.APIError, KeyError, TypeError, ValueError):
            return 1

    def ending_score(self, messages: Sequence[Message], text: str) -> float | None:
        """The ending score of `text` (ending.py), mostly in one request: the text before its last word sent as the
        answer so far, the last word and its stop forced by a literal grammar, each token's log-probability and the
        alternatives at its place asked for (llama.cpp reports them before the grammar). Greedy decoding under the
        grammar may start the word with a shorter token than the tokenizer's own, then force the rest in pieces the
        model never writes (" winter." as " ", "w", "int", "e", "r": 5e-21; " yourself." as " your", "self":
        9e-6). Where that first token is a lone space, or the tokenizer's first token of the word (`_first_piece`)
        is among the model's likeliest there, the score is asked again with that token sent with the answer so
        far. A word bent to fit (" off" then "line", " offline" nowhere among the likeliest) keeps the model's own
        first token, and its low rest."""
        parts = split_ending(text)
        if not self.scores_endings() or not self.backend.capabilities.takes_gbnf or parts is None:
            return None
        try:
            return self._scored(messages, *parts)
        except Fault as fault:
            if _busy(fault):
                tried = f"tried {ENDING_TRIES} times"
                raise Unanswered(f"{self.backend.label} did not answer the ending score in time ({tried})") from fault
            raise

    def _scored(self, messages: Sequence[Message], head: str, unit: str, after: str) -> float | None:
        tokens = self._forced(messages, head, unit + after)
        if tokens and _first_piece_matters(tokens[0], unit):
            first = self._first_piece(unit)
            wanted = not tokens[0][0].strip() or first in {token for token, _ in tokens[0][2]}
            if len(first) > len(tokens[0][0]) and wanted:
                rest = unit[len(first) :]
                return score_from_tokens(self._forced(messages, head + first, rest + after), rest, first_written=True)
        return score_from_tokens(tokens, unit)

    def _forced(self, messages: Sequence[Message], prefix: str, forced: str) -> list[tuple[str, float, Any]]:
        """The tokens the server writes after `prefix` when a literal grammar forces `forced` (nothing forced: the
        one next token), each with its log-probability and the alternatives at its place."""
        params = self._ending_params(messages, prefix, 8 + len(forced) if forced else 1)
        if forced:
            params.update(self.backend.grammar_params(f"root ::= {json.dumps(forced, ensure_ascii=False)}\n"))
        return [(str(t["token"]), float(t["logprob"]), _listed(t)) for t in _content(self._ask("ending score", params))]

    def _first_piece(self, unit: str) -> str:
        """The first token of `unit` as the server's tokenizer writes it (llama.cpp's /tokenize, asked once a word:
        `_pieces`); "" where the server has no such endpoint or the piece is not a prefix of the unit (then the
        grammar forces the word)."""
        if self._tokenize is False:
            return ""
        piece = self._pieces.get(unit)
        if piece is None:
            root = (self.backend.base_url or "").rstrip("/").removesuffix("/v1")
            REQUESTS.add("tokenize")
            try:
                client = self.backend._client.with_options(base_url=root, timeout=ENDING_TIMEOUT)
                found = client.post("/tokenize", body={"content": unit, "with_pieces": True}, cast_to=object)
                piece = str(found["tokens"][0]["piece"])
            except openai.NotFoundError:
                self._tokenize = False
                return ""
            except (openai.APIError, KeyError, IndexError, TypeError):
                return ""  # not kept: asked again next time
            self._tokenize = True
            self._pieces.put(unit, piece)
        return piece if piece and unit.startswith(piece) else ""

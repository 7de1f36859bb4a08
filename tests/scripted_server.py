"""A scripted OpenAI-compatible server: the stand-in for a remote vendor in tests (stdlib only).

Each test gives a script, a list of behaviours consumed one per chat request, and afterwards reads what the
server received (`requests`: path, headers, JSON body). It listens on 127.0.0.1 on a free port:

    server.script(status(429, headers={"retry-after": "0"}), ok(["Hello", " world."]))
    backend = get_backend("m", provider="compatible", base_url=server.url)
    ...
    assert len(server.chat_requests) == 2

Behaviours: `ok` (a stream, or one JSON answer when the request has `"stream": false`), `status` (an error
answer in OpenAI's shape), `context_error` (400 "maximum context length"), `cut_after` (some chunks, then the
socket closes mid-body), `stall_after` (some chunks, then silence), `stream_error` (some chunks, then an SSE
error event), `empty` (finish_reason but no text), `hang` (no answer at all for a while), `html_page` (a 200
web page instead of an API answer), `bad_json_after` (some chunks, then a `data:` line that is not JSON),
`endless` (one chunk after another until the client hangs up) and `answer` (a behaviour computed from the
request: a simulated model that reads a repair's prefill or quoted prefix). `countdown` writes CAPEL output
(right, or going wrong in a chosen way at a chosen marker) for scripts.
When the script runs out the server answers with `then` (by default a 500 that says the script ran out, with
`retry-after: 0` so a client's retries do not sleep).

One server serves a whole test session (the `scripted` fixture): `reset()` gives the next test an empty script
and empty records, and releases whatever the previous test left waiting (a `hang`, a `stall_after`, `endless`).

OpenAI's Responses API (`POST /responses`) is spoken too, with the same behaviours: `ok` streams the chunks as
`response.custom_tool_call_input.delta` events when the request carries tools (else as
`response.output_text.delta`), then `response.completed`, or `response.incomplete` (max_output_tokens) for
`finish_reason="length"`; `reasoning_tokens` adds a reasoning item and counts them in the usage. Event and field
names are those of the `openai` SDK's `types/responses`. `honour_grammar(fields)` answers a probe the way a
server that reads only those grammar fields would: the literal its grammar admits, or chatter if it ignored it.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "scripted-model"

Vendor = Callable[[str, dict[str, Any]], "tuple[int, Any] | None"]
"""A vendor's check of a request (path, JSON body): None to accept it, else (status, error body) as it answers."""


@dataclass(frozen=True)
class Behaviour:
    kind: str
    chunks: tuple[str, ...] = ()
    usage: tuple[int, int] | None = None
    finish_reason: str | None = "stop"
    code: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    reasoning_tokens: int = 0
    fields: tuple[str, ...] = ()
    logprobs: tuple[float, ...] | None = None  # one per chunk, sent only when the request asks (`logprobs`)


def ok(
    chunks: Sequence[str] | str,
    *,
    usage: tuple[int, int] | None = (11, 7),
    finish_reason: str | None = "stop",
    delay: float = 0.0,
    reasoning_tokens: int = 0,
    logprobs: Sequence[float] | None = None,
) -> Behaviour:
    """A normal answer. `usage` is (prompt_tokens, completion_tokens), sent when the client asks for it;
    `finish_reason=None` ends the stream with [DONE] but never says why it finished. `logprobs` (one per
    chunk, each chunk one token) go in `choices[].logprobs.content` when the request has `logprobs: true`."""
    chunks = (chunks,) if isinstance(chunks, str) else tuple(chunks)
    lps = None if logprobs is None else tuple(logprobs)
    return Behaviour(
        "ok",
        chunks,
        usage=usage,
        finish_reason=finish_reason,
        seconds=delay,
        reasoning_tokens=reasoning_tokens,
        logprobs=lps,
    )


def honour_grammar(fields: Sequence[str] = ("grammar",), chatter: str = "Hello! How can I help?") -> Behaviour:
    """Answer with the one literal a `root ::= "..."` grammar (or a JSON-schema `pattern` of one literal) admits,
    read from the first of `fields` the request carries (`grammar`, `guided_grammar`, `ebnf`,
    `structured_outputs`, `json_schema`, or `custom_tool`: a Responses request's Lark `start: "..."`); a request
    without one of them gets `chatter`, as from a server that silently ignores fields it does not know."""
    return Behaviour("honour", (chatter,), fields=tuple(fields))


def status(code: int, body: Any = None, headers: dict[str, str] | None = None) -> Behaviour:
    """An HTTP error. `body` is a message (wrapped in OpenAI's error object) or any JSON value."""
    if body is None or isinstance(body, str):
        body = {"error": {"message": body or f"scripted error {code}", "type": "scripted", "code": code}}
    return Behaviour("status", code=code, body=body, headers=dict(headers or {}))


def context_error(tokens: int = 9000, limit: int = 8192) -> Behaviour:
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages resulted in {tokens} "
        "tokens. Please reduce the length of the messages."
    )
    return status(
        400, {"error": {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}}
    )


def cut_after(chunks: Sequence[str]) -> Behaviour:
    """Send these chunks, then close the socket in the middle of the chunked body (no [DONE], no finish)."""
    return Behaviour("cut", tuple(chunks))


def stall_after(chunks: Sequence[str], seconds: float = 30.0) -> Behaviour:
    """Send these chunks, then nothing for `seconds` (a read timeout mid-stream)."""
    return Behaviour("stall", tuple(chunks), seconds=seconds)


def keep_alive(chunks: Sequence[str] = (), every: float = 0.05, limit: int = 100_000) -> Behaviour:
    """Send these chunks, then only SSE comments (`: keep-alive`) every `every` seconds and never more text,
    until the client hangs up (or `limit` comments): each comment resets a client's read timeout."""
    return Behaviour("keepalive", tuple(chunks), seconds=every, code=limit)


def stream_error(
    chunks: Sequence[str], message: str = "The server had an error while processing your request."
) -> Behaviour:
    """Send these chunks, then an SSE `{"error": ...}` event, as OpenAI does when a stream fails server-side."""
    return Behaviour("stream_error", tuple(chunks), body={"error": {"message": message, "type": "server_error"}})


def empty(finish_reason: str = "stop") -> Behaviour:
    """A well-formed stream with a finish reason and usage but no content at all."""
    return Behaviour("ok", (), usage=(11, 0), finish_reason=finish_reason)


def hang(seconds: float = 30.0) -> Behaviour:
    """Read the request, then answer nothing for `seconds` (released early when the server stops)."""
    return Behaviour("hang", seconds=seconds)


def html_page(body: str = "<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>") -> Behaviour:
    """A 200 answer with an HTML page, as a web server or a login proxy sends at a wrong base URL."""
    return Behaviour("html", body=body)


def whole_json(text: str, finish_reason: str = "stop", usage: tuple[int, int] | None = (9, 4)) -> Behaviour:
    """A complete chat.completion JSON answer even to a stream request (a gateway that ignores `stream`)."""
    return Behaviour("whole_json", (text,), usage=usage, finish_reason=finish_reason)


def html_as_event_stream(body: str = "<!doctype html><html><body><h1>Sign in</h1></body></html>") -> Behaviour:
    """A web page sent with an event-stream content type (a login proxy that labels everything as asked)."""
    return Behaviour("html_stream", body=body)


def bad_json_after(chunks: Sequence[str], line: str = "data: {not json") -> Behaviour:
    """Send these chunks, then a `data:` line whose payload is not JSON, then [DONE]."""
    return Behaviour("bad_json", tuple(chunks), body=line)


def endless(chunk: str = "word ", delay: float = 0.01, limit: int = 100_000) -> Behaviour:
    """Stream `chunk` every `delay` seconds, never finishing, until the client hangs up (or `limit` chunks)."""
    return Behaviour("endless", (chunk,), seconds=delay, code=limit)


def answer(respond: Callable[[dict[str, Any]], Behaviour]) -> Behaviour:
    """A behaviour chosen when the request arrives, from its JSON body (e.g. a continuation of its prefill)."""
    return Behaviour("answer", body=respond)


WORDS = ("sea", "wind", "salt", "light", "stone", "wave", "shore", "gull", "rope", "tide")


def countdown(
    start: int,
    *,
    wrong: str | None = None,
    at: int = 0,
    words: Sequence[str] = WORDS,
    per_chunk: int = 1,
) -> list[str]:
    """CAPEL output from marker `<start>` down to `<0>`, as stream chunks (one marker and its word each).

    `wrong` makes it go wrong at marker `<at>` the way the paper's taxonomy names: `skip` (jumps from `<at>` to
    `<at-2>`), `repeat` (writes `<at>` twice), `extra_units` (two words after `<at>`), `bare_marker` (nothing
    after `<at>`), `early_stop` (`<0>` right after `<at>`'s word), `missing_end` (no `<0>`), `preamble` (a
    sentence before the first marker), `trailing_text` (a sentence after `<0>`), `wrong_start` (starts one
    above `start`). After the error the countdown goes on as such a model would, down to `<0>`.
    """
    parts: list[str] = []
    if wrong == "preamble":
        parts.append("Sure, here it is: ")
    k = start + 1 if wrong == "wrong_start" else start
    i = 0
    while k >= 1:
        word = words[i % len(words)]
        i += 1
        if k == at and wrong == "bare_marker":
            parts.append(f"<{k}>")
        elif k == at and wrong == "extra_units":
            parts.append(f"<{k}>{word} {words[i % len(words)]}")
        elif k == at and wrong == "repeat":
            parts.extend([f"<{k}>{word}", f"<{k}>{word}"])
        else:
            parts.append(f"<{k}>{word}")
        if k == at and wrong == "early_stop":
            break
        k -= 2 if (k == at and wrong == "skip") else 1
    if wrong != "missing_end":
        parts.append("<0>")
    if wrong == "trailing_text":
        parts.append(" I hope this helps!")
    return ["".join(parts[j : j + per_chunk]) for j in range(0, len(parts), per_chunk)]


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, or None

    @property
    def key(self) -> str | None:
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


class ScriptedServer:
    def __init__(self, *, models: Sequence[str] = (MODEL,)) -> None:
        self._default_models = tuple(models)
        self._stopped = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.reset()
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="scripted-server", daemon=True
        )

    def reset(self) -> ScriptedServer:
        """A clean slate for the next test: no script, no records; answers still in progress end at once.

        A request keeps the records and the stop signal of the test it arrived in, so a late one of an earlier
        test never shows in this test's `requests` or `hung_up`."""
        with self._lock:
            self._stop.set()
            self._stop = threading.Event()
            self.models = list(self._default_models)
            self.requests: list[Received] = []
            self.hung_up: list[Received] = []  # requests whose client closed the connection before the answer ended
            self._script: list[Behaviour] = []
            self._then: Behaviour | None = None
            self.vendor: Vendor | None = None  # checks each body as that vendor does (tests/scripted_vendors.py)
        return self

    def as_vendor(self, vendor: Vendor | None) -> ScriptedServer:
        """Check every request body as `vendor` does before the script answers: a body it refuses gets its error
        answer (status and body in the vendor's own shape), and the script is not consumed."""
        self.vendor = vendor
        return self

    # ----- script ---------------------------------------------------------------------------------------
    def script(self, *behaviours: Behaviour, then: Behaviour | None = None) -> ScriptedServer:
        """Answer the next chat requests with `behaviours` in order, then with `then` forever."""
        with self._lock:
            self._script = list(behaviours)
            self._then = then
        return self

    def _next(self) -> Behaviour:
        with self._lock:
            if self._script:
                return self._script.pop(0)
            return self._then or status(500, "the scripted server's script ran out", {"retry-after": "0"})

    @property
    def chat_requests(self) -> list[Received]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def last_body(self) -> dict[str, Any]:
        return self.chat_requests[-1].body

    @property
    def responses_requests(self) -> list[Received]:
        return [r for r in self.requests if r.path.endswith("/responses")]

    # ----- life -----------------------------------------------------------------------------------------
    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        self._stopped = True
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def closed_port_url() -> str:
    """A base URL on which nothing listens (the port was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (after a timeout, a cut, or between keep-alive requests) is not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        scripted = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scripted: ScriptedServer
    stop: threading.Event  # the stop signal of the test this request belongs to
    hung_up: list[Received]  # that test's record of requests whose client hung up

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _record(self) -> Received:
        """Read the request and keep it in the records of the test it arrived in (with that test's stop signal)."""
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        received = Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        with self.scripted._lock:
            self.scripted.requests.append(received)
            self.stop, self.hung_up = self.scripted._stop, self.scripted.hung_up
        return received

    def do_GET(self) -> None:
        self._record()
        if self.path.rstrip("/").endswith("/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in self.scripted.models]
            self._json(200, {"object": "list", "data": data})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        received = self._record()
        responses = self.path.rstrip("/").endswith("/responses")
        if not responses and not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        body = received.body if isinstance(received.body, dict) else {}
        vendor = self.scripted.vendor
        refusal = vendor(self.path, body) if vendor is not None else None
        if refusal is not None:
            self._json(*refusal)
            return
        behaviour = self.scripted._next()
        if behaviour.kind == "answer":
            behaviour = behaviour.body(body)
        if behaviour.kind == "honour":
            behaviour = _honoured(behaviour, body)
        try:
            if responses:
                _ResponsesStream(self, behaviour, body).perform()
            else:
                self._perform(behaviour, body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test): fine
            self.close_connection = True
            with self.scripted._lock:
                self.hung_up.append(received)

    # ----- answers --------------------------------------------------------------------------------------
    def _json(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _perform(self, b: Behaviour, request: dict[str, Any]) -> None:
        model = request.get("model", MODEL)
        if b.kind == "status":
            self._json(b.code, b.body, b.headers)
            return
        if b.kind == "hang":
            self.stop.wait(b.seconds)
            self.close_connection = True
            return
        if b.kind == "html":
            data = str(b.body).encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            return
        if b.kind == "whole_json":
            self._complete(replace(b, kind="ok"), model)
            return
        if b.kind == "html_stream":
            self._start_stream()
            self._write_chunk(b.body.encode())
            self._write_chunk(b"")
            return
        if b.kind == "endless":
            self._start_stream()
            for i in range(b.code):
                if self.stop.wait(b.seconds):
                    break
                delta = {"role": "assistant", "content": b.chunks[0]} if i == 0 else {"content": b.chunks[0]}
                self._event(_chunk(model, delta))
            self.close_connection = True
            return
        if not request.get("stream"):
            self._complete(b, model)
            return
        self._start_stream()
        for i, text in enumerate(b.chunks):
            event = _chunk(model, {"role": "assistant", "content": text} if i == 0 else {"content": text})
            if b.logprobs is not None and request.get("logprobs"):
                token = {"token": text, "bytes": list(text.encode()), "logprob": b.logprobs[i], "top_logprobs": []}
                event["choices"][0]["logprobs"] = {"content": [token], "refusal": None}
            self._event(event)
            if b.kind == "ok" and b.seconds:
                time.sleep(b.seconds)
        if b.kind == "cut":
            self.connection.shutdown(socket.SHUT_RDWR)  # mid-body: no [DONE], no terminating chunk
            self.close_connection = True
            return
        if b.kind == "stall":
            self.stop.wait(b.seconds)
            self.close_connection = True
            return
        if b.kind == "keepalive":
            for _ in range(b.code):
                if self.stop.wait(b.seconds):
                    break
                try:
                    self._write_chunk(b": keep-alive\n\n")
                except OSError:  # the client hung up
                    break
            self.close_connection = True
            return
        if b.kind == "stream_error":
            self._event(b.body)
        elif b.kind == "bad_json":
            self._write_chunk(f"{b.body}\n\n".encode())
        else:
            if b.finish_reason is not None:
                self._event(_chunk(model, {}, finish_reason=b.finish_reason))
            include_usage = (request.get("stream_options") or {}).get("include_usage")
            if include_usage and b.usage is not None:
                self._event({**_chunk(model, None), "choices": [], "usage": _usage(b.usage)})
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    def _complete(self, b: Behaviour, model: str) -> None:
        if b.kind != "ok":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        message = {"role": "assistant", "content": "".join(b.chunks)}
        payload = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": b.finish_reason}],
        }
        if b.usage is not None:
            payload["usage"] = _usage(b.usage)
        self._json(200, payload)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def _event(self, payload: Any) -> None:
        self._write_chunk(f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _chunk(model: str, delta: dict[str, Any] | None, finish_reason: str | None = None) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
    }


def _usage(usage: tuple[int, int]) -> dict[str, int]:
    prompt, completion = usage
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


# ----- grammar-honouring answers ------------------------------------------------------------------------------


def _literal_of(grammar: str) -> str | None:
    """The one string a `root ::= "..."` GBNF grammar admits (None for any other grammar)."""
    head, _, literal = grammar.strip().partition("::=")
    if head.strip() != "root" or "\n" in literal.strip():
        return None
    try:
        value = json.loads(literal.strip())
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _pattern_literal(pattern: str) -> str | None:
    """The one string an anchored pattern `^(literal)$` admits (regex escapes undone)."""
    if not (pattern.startswith("^(") and pattern.endswith(")$")):
        return None
    body = pattern[2:-2]
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            i += 1
        elif body[i] in "[](){}|*+?^$":
            return None
        out.append(body[i])
        i += 1
    return "".join(out)


def _honoured(b: Behaviour, body: dict[str, Any]) -> Behaviour:
    extra = {"structured_outputs": (body.get("structured_outputs") or {}).get("grammar")}
    for name in b.fields:
        if name == "custom_tool":
            tool = next((t for t in body.get("tools") or [] if t.get("type") == "custom"), {})
            definition = (tool.get("format") or {}).get("definition", "")
            literal = _literal_of(definition.replace("start:", "root ::=", 1)) if definition else None
            if literal is not None:
                return ok(literal)
            continue
        if name == "json_schema":
            schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
            literal = _pattern_literal(schema.get("pattern", ""))
            if literal is not None:
                return ok(json.dumps(literal, ensure_ascii=False))
            continue
        grammar = extra.get(name) if name in extra else body.get(name)
        literal = _literal_of(grammar) if isinstance(grammar, str) else None
        if literal is not None:
            return ok(literal)
    return ok(b.chunks)


# ----- OpenAI's Responses API ---------------------------------------------------------------------------------


class _ResponsesStream:
    """One `POST /responses` answer, as OpenAI streams it (`event:` + `data:` lines, no [DONE])."""

    def __init__(self, handler: _Handler, b: Behaviour, request: dict[str, Any]) -> None:
        self.h, self.b, self.request = handler, b, request
        self.seq = 0
        tools = request.get("tools") or []
        self.tool = next((t for t in tools if t.get("type") == "custom"), None)

    def perform(self) -> None:
        b = self.b
        if b.kind == "status":
            self.h._json(b.code, b.body, b.headers)
            return
        if b.kind == "hang":
            self.h.stop.wait(b.seconds)
            self.h.close_connection = True
            return
        self.h._start_stream()
        self.event("response.created", response=self.response("in_progress", []))
        if b.reasoning_tokens:
            item = {"type": "reasoning", "id": "rs_scripted", "summary": []}
            self.event("response.output_item.added", output_index=0, item=item)
            self.event("response.output_item.done", output_index=0, item=item)
        index = 1 if b.reasoning_tokens else 0
        item = self.item("")
        self.event("response.output_item.added", output_index=index, item=item)
        for text in b.chunks:
            self.delta(index, text)
            if b.kind == "ok" and b.seconds:
                time.sleep(b.seconds)
        if b.kind == "cut":
            self.h.connection.shutdown(socket.SHUT_RDWR)
            self.h.close_connection = True
            return
        if b.kind == "stall":
            self.h.stop.wait(b.seconds)
            self.h.close_connection = True
            return
        if b.kind == "stream_error":
            self.event("error", code="server_error", message=b.body["error"]["message"], param=None)
        elif b.finish_reason is not None:
            self.finish(index, "".join(b.chunks))
        self.h._write_chunk(b"")

    def item(self, text: str) -> dict[str, Any]:
        if self.tool is not None:
            name = self.tool["name"]
            return {"type": "custom_tool_call", "id": "ctc_scripted", "call_id": "call_1", "name": name, "input": text}
        content = [{"type": "output_text", "text": text, "annotations": []}] if text else []
        return {"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed", "content": content}

    def delta(self, index: int, text: str) -> None:
        if self.tool is not None:
            self.event("response.custom_tool_call_input.delta", item_id="ctc_scripted", output_index=index, delta=text)
        else:
            fields = {"item_id": "msg_scripted", "output_index": index, "content_index": 0, "logprobs": []}
            self.event("response.output_text.delta", delta=text, **fields)

    def finish(self, index: int, text: str) -> None:
        item = self.item(text)
        if self.tool is not None:
            self.event("response.custom_tool_call_input.done", item_id="ctc_scripted", output_index=index, input=text)
        self.event("response.output_item.done", output_index=index, item=item)
        if self.b.finish_reason == "length":
            self.event("response.incomplete", response=self.response("incomplete", [item], "max_output_tokens"))
        else:
            self.event("response.completed", response=self.response("completed", [item]))

    def response(self, status: str, output: list[dict[str, Any]], incomplete: str | None = None) -> dict[str, Any]:
        r = self.request
        payload: dict[str, Any] = {
            "id": "resp_scripted",
            "object": "response",
            "created_at": int(time.time()),
            "model": r.get("model", MODEL),
            "status": status,
            "output": output,
            "parallel_tool_calls": bool(r.get("parallel_tool_calls", True)),
            "tool_choice": r.get("tool_choice", "auto"),
            "tools": r.get("tools", []),
            "error": None,
            "incomplete_details": {"reason": incomplete} if incomplete else None,
            "max_output_tokens": r.get("max_output_tokens"),
            "reasoning": r.get("reasoning"),
            "usage": None,
        }
        if status != "in_progress" and self.b.usage is not None:
            prompt, completion = self.b.usage
            completion += self.b.reasoning_tokens
            payload["usage"] = {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": self.b.reasoning_tokens},
                "total_tokens": prompt + completion,
            }
        return payload

    def event(self, kind: str, **fields: Any) -> None:
        payload = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        data = f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n"
        self.h._write_chunk(data.encode())

"""An in-process scripted model, registered like any provider (model `scripted`), for tests that are not about
a wire format. As simonw/llm's `MockModel` and inspect_ai's `mockllm`: it answers what it is told, in the
chunks it is told, and records every request so a test can assert what was sent.

    model = ScriptedBackend("<2>Hello <1>world<0>", Turn(("Half",), fail="cut"))
    with staged(model):
        backend = get_backend("scripted")  # the staged model, inside the same retry/wording guard as any other

A reply is a string (streamed a word at a time), a list of chunks, a `Turn` (chunks, then optionally a failure
of any kind, raised as a real service's would be, so the guard retries and words it), or a callable of
(messages, options) returning one of those. Replies are used in order; the last one repeats.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from ...prompts import Message
from ...vocab import FailureKind
from ..base import DEFAULT_CAPABILITIES, Backend, BackendError, Capabilities, Fault, Options, Usage
from ..guard import WORDED_KINDS
from .spec import BackendArgs, ProviderSpec

SCRIPTED_MODEL = "scripted"
DEFAULT_REPLY = "A scripted reply."
DEFAULT_STATUS: dict[str, int] = {"auth": 401, "rate_limit": 429, "not_found": 404, "bad_request": 400, "server": 500}
"""The HTTP status a service would send with each failure kind (what the guard's messages quote)."""


@dataclass(frozen=True)
class Turn:
    """One scripted answer: its chunks, then how it ends (a finish reason, or a failure of kind `fail`)."""

    chunks: tuple[str, ...] = ()
    fail: FailureKind | None = None
    detail: str = ""  # the service's own words for the failure (a 400's reason, a context overflow)
    retry_after: float | None = None  # seconds the "service" asks to wait before the next attempt
    finish_reason: str = "stop"
    delay: float = 0.0  # seconds before each chunk (a slow model, for time limits and Stop)
    logprobs: tuple[float, ...] | None = None  # per chunk when asked for; default -0.1 each


Answer = str | Sequence[str] | Turn
Reply = Answer | Callable[[Sequence[Message], Options], Answer]
Ending = float | Callable[[str], float | None] | None
"""What the scripted model says of a text's ending (`ending_score`): always the same, per text, or nothing."""
NextTokens = Callable[[str], list[tuple[str, float]] | None] | None
"""What the scripted model would write next after a text (`next_tokens`), or nothing (no ending search)."""


def as_turn(reply: Answer) -> Turn:
    """A reply in its one form: a string streams a word at a time (each chunk keeps the spaces before it)."""
    if isinstance(reply, Turn):
        return reply
    if isinstance(reply, str):
        return Turn(tuple(re.findall(r"\s*\S+|\s+$", reply)))
    return Turn(tuple(reply))


class ScriptedBackend(Backend):
    """A model that answers from a script and records each request (`requests`: the messages and options)."""

    def __init__(
        self,
        *replies: Reply,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
        model: str = SCRIPTED_MODEL,
        label: str = "Scripted model",
        ending: Ending = None,
        next_tokens: NextTokens = None,
    ) -> None:
        self.model, self.label, self.capabilities, self.base_url = model, label, capabilities, None
        self.ending = ending  # the ending score of a text: a number, a function of the text, or None
        self.alternatives = next_tokens  # the next tokens after a text, for the ending search
        self.provider = SCRIPTED_MODEL
        self.replies: list[Reply] = list(replies) or [DEFAULT_REPLY]
        self.requests: list[tuple[list[Message], Options]] = []
        self.endings_asked: list[tuple[list[Message], str]] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ScriptedBackend(model={self.model!r}, requests={len(self.requests)})"

    def reply(self, *replies: Reply) -> None:
        """Replace what is left of the script."""
        with self._lock:
            self.replies = list(replies)

    def _next(self, messages: Sequence[Message], options: Options) -> Turn:
        with self._lock:
            self.requests.append((list(messages), options))
            reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return as_turn(reply(messages, options) if callable(reply) else reply)

    def ending_score(self, messages: Sequence[Message], text: str) -> float | None:
        """As scripted (`ending`); each question is recorded in `endings_asked`."""
        with self._lock:
            self.endings_asked.append((list(messages), text))
        return self.ending(text) if callable(self.ending) else self.ending

    def next_tokens(self, messages: Sequence[Message], prefix: str) -> list[tuple[str, float]] | None:
        """As scripted (`alternatives`, a function of the answer so far)."""
        return self.alternatives(prefix) if self.alternatives is not None else None

    def _check(self, options: Options) -> None:
        """Refuse what the declared capabilities do not cover, as the real backends do."""
        if options.grammar is not None and not self.capabilities.grammar:
            raise BackendError("bad_request", f"{self.label} does not take a grammar; pick a non-exact mode")
        if options.prefill and self.capabilities.prefill is None:
            raise BackendError("bad_request", f"{self.label} cannot continue a partial answer (no prefill)")

    def _failure(self, turn: Turn, received: int) -> BackendError:
        """The scripted failure, as a service's would reach the guard: a `Fault` for what the guard words."""
        kind = turn.fail or "server"
        if kind in WORDED_KINDS:
            return Fault(kind, turn.detail, status=DEFAULT_STATUS.get(kind), retry_after=turn.retry_after)
        if kind == "cut":
            return BackendError(
                "cut",
                f"The stream from {self.label} was cut after {received} characters; the text that arrived is kept.",
            )
        return BackendError(kind, turn.detail or f"{self.label} failed ({kind}), as scripted.")

    def stream(self, messages: Sequence[Message], options: Options) -> Iterator[str | Usage]:
        self._check(options)
        turn = self._next(messages, options)
        started, first = time.monotonic(), None
        for chunk in turn.chunks:
            if turn.delay and _wait(turn.delay, options):
                return
            if options.cancel is not None and options.cancel.is_set():
                return
            first = first if first is not None else time.monotonic() - started
            yield chunk
        if turn.fail is not None:
            raise self._failure(turn, sum(map(len, turn.chunks)))
        asked = options.logprobs and self.capabilities.logprobs
        yield Usage(
            prompt_tokens=sum(len(m["content"].split()) for m in messages),
            completion_tokens=len(turn.chunks),
            seconds=time.monotonic() - started,
            first_token_seconds=first,
            finish_reason=turn.finish_reason,
            logprobs=(turn.logprobs or (-0.1,) * len(turn.chunks)) if asked else (),
        )


def _wait(seconds: float, options: Options) -> bool:
    """Sleep `seconds`, waking at once on Stop; True when stopped."""
    if options.cancel is None:
        time.sleep(seconds)
        return False
    woken = threading.Event()
    forget = options.cancel.on_set(woken.set)
    try:
        return woken.wait(seconds)
    finally:
        forget()


_staged: list[ScriptedBackend] = []


@contextmanager
def staged(backend: ScriptedBackend) -> Iterator[ScriptedBackend]:
    """Make `backend` the one `get_backend("scripted")` returns (inside its guard) until the block ends."""
    _staged.append(backend)
    try:
        yield backend
    finally:
        _staged.remove(backend)


def _build(args: BackendArgs) -> Backend:
    return _staged[-1] if _staged else ScriptedBackend(capabilities=args.capabilities, label=args.label)


SPEC = ProviderSpec(
    SCRIPTED_MODEL,
    "Scripted model (tests)",
    _build,
    local=True,
    model_input="fixed",
    models=(SCRIPTED_MODEL,),
    model_label=lambda model: "Scripted model",
    hidden=True,
    shown_while=lambda: bool(_staged),  # an AppTest that stages a model picks it in the sidebar like any other
    caps_for=lambda model, field: _staged[-1].capabilities if _staged else DEFAULT_CAPABILITIES,  # as declared
    note="Answers from a script, in this process; for tests only.",
)

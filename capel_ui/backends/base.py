"""The one backend interface: stream a chat completion as text chunks, then a Usage.

Like simonw/llm's `execute()`, a backend is a plain class with one streaming method; what differs between
services (grammar field, reasoning models, `max_completion_tokens`) is declared in `Capabilities`, not
branched on by callers.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from ..grammar import AnyGrammar, WordListSyntax
from ..prompts import Message
from ..vocab import GRAMMAR_FIELDS, FailureKind, GrammarField  # noqa: F401  (GRAMMAR_FIELDS: re-exported)

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high"]
PrefillStyle = Literal["prefix", "continue_final_message", "assistant"]
"""How a server continues a partial answer (an assistant prefill), used by repair calls:
`prefix` DeepSeek's chat prefix completion (last assistant message with `"prefix": true`), `continue_final_message`
vLLM's flag (with `add_generation_prompt: false`), `assistant` a server that continues a final assistant message
as it is (llama.cpp)."""


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do; the UI offers modes from this, the request builder shapes calls with it."""

    grammar_field: GrammarField | None = None
    reasoning: bool = False
    max_completion_tokens: bool = False
    ignores_temperature: bool = False
    logprobs: bool = False  # returns token log-probabilities when asked (`logprobs=True`)
    prefill: PrefillStyle | None = None
    prefill_path: str | None = None  # where the server serves prefill, under the base URL (DeepSeek: /beta)
    reasoning_effort: ReasoningEffort | None = None  # the smallest effort the model takes (sent when reasoning)
    json_object: bool = False  # strict JSON-schema outputs need an object at the root (OpenAI): `{"text": "..."}`
    end_probability: bool = False  # scores endings (ending.py): continues an answer, lists next-token log-probabilities
    llguidance: bool = False  # llama.cpp built with LLGuidance: reads `%llguidance` Lark grammars (the word list)
    end_token: str | None = None  # the model's end-of-turn token, named at the end of a Lark grammar (LLGuidance
    # lets the model stop only on a token the grammar names: `embedded.end_token`)
    plans_by_countdown: bool = False  # a model large enough to plan its last sentence by CAPEL's markers: where no
    # ending search runs (`end_probability`), `exact` writes under the countdown-visible grammar (registry.fallback)
    max_output_tokens: int | None = None  # the most the model writes in one answer (its provider's `ModelLimit`)
    context_tokens: int | None = None  # the most it reads and writes in all
    dialect: Any = None  # the vendor's `dialect.Dialect`: the body its endpoint documents (None: OpenAI's words)

    @property
    def grammar(self) -> bool:
        return self.grammar_field is not None

    @property
    def takes_gbnf(self) -> bool:
        """Which grammar form the server takes: llama.cpp's own `grammar` field reads GBNF text as sent (a word list,
        a character limit, a rewrite's own words); every other grammar field gets a `Grammar` in its own syntax."""
        return self.grammar_field == "grammar"

    @property
    def word_list_syntax(self) -> WordListSyntax | None:
        """The syntax a word list is sent in (`grammar.with_word_list`), None where the server takes none: Lark for
        llama.cpp built with LLGuidance (it checks a token against the list faster), else GBNF."""
        if not self.takes_gbnf:
            return None
        return "lark" if self.llguidance else "gbnf"

    @property
    def plans_endings(self) -> bool:
        """Whether an exact text's ending can be searched again (planned.py): a llama.cpp grammar, an answer continued
        as a prefill, and the end probability of a text."""
        return self.takes_gbnf and self.prefill is not None and self.end_probability


DEFAULT_CAPABILITIES = Capabilities()


class CancelToken:
    """Set from any thread to stop a request. A backend waiting on the network registers how to abort that
    wait (`on_set`), so a Stop before the first token ends the request at once instead of after it."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def set(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Wait up to `seconds`, less if the token is set meanwhile (a Stop during a retry's wait); True if set."""
        return self._event.wait(seconds)

    def on_set(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` when the token is set (at once if it already is); returns a function that unregisters it."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return lambda: self._forget(callback)
        callback()
        return lambda: None

    def _forget(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)


@dataclass(frozen=True)
class Options:
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    grammar: AnyGrammar | None = None  # a str is GBNF text, or `%llguidance` Lark text (Capabilities.llguidance)
    timeout: float | None = None  # seconds; None uses the backend's own timeout
    seed: int | None = None
    cancel: CancelToken | None = None  # set to abort the request, also while waiting for the first token
    logprobs: bool = False  # ask for each output token's log-probability (the fluency score), where served
    prefill: str | None = None  # the start of the answer, for the model to continue (needs Capabilities.prefill)


@dataclass(frozen=True)
class Usage:
    """Yielded once, last, by every stream; token counts are None when the service does not report them."""

    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float
    first_token_seconds: float | None
    finish_reason: str | None = None
    reasoning_tokens: int | None = None  # output tokens a reasoning model spent thinking (part of the budget)
    logprobs: tuple[float, ...] = ()  # per output token, when asked for and the service returned them


def total(values: Iterable[int | None]) -> int | None:
    """The sum of the token counts known, None when none is (a service may not report them: `Usage`)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


class BackendError(Exception):
    """A failure the user can act on: `kind` says what happened, the message says what to do."""

    def __init__(self, kind: FailureKind, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message


class Fault(BackendError):
    """A failure as a backend saw it, before it is worded: `guard.Guarded` (around every backend `get_backend`
    returns) decides whether to retry it and writes the message the user reads. `detail` is the service's own
    text (for a 400, a context overflow, an odd status); `retry_after` the wait the service asked for, if any."""

    def __init__(
        self, kind: FailureKind, detail: str = "", *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(kind, detail or kind, status=status)
        self.detail = detail
        self.retry_after = retry_after


def retry_backoff() -> float:
    """The first wait between attempts, in seconds (then doubled): `CAPEL_RETRY_BACKOFF`, else 0.5. The guard's
    between attempts at a run's call, and an ending question's (openai_compat)."""
    try:
        return max(float(os.environ.get("CAPEL_RETRY_BACKOFF") or 0.5), 0.0)
    except ValueError:
        return 0.5


class Unanswered(Exception):
    """An ending question the server did not answer in time, each retry included (timeouts, 503s): the run is not
    failed, but says its ending was not scored. Not a BackendError, which a backend's guard turns into "this server
    cannot say"."""


# ----- a server's slots: how many of its ending questions run at once ------------------------------------------

_SLOTS: dict[str, int] = {}


def register_slots(base_url: str, slots: int) -> None:
    """Say how many requests the server at `base_url` answers at once (llama.cpp's slots)."""
    _SLOTS[base_url] = slots


def server_slots(base_url: str | None) -> int | None:
    """The slots registered for `base_url`, None where unknown."""
    return _SLOTS.get(base_url) if base_url else None


class SlotGate:
    """At most `slots` ending questions to one server at once: more only queue in the server and time out there
    (issue 47). A thread holding a place (a run's ending search, whose questions follow one another) asks all its
    questions in it; a search per place, so variants search at once wherever the server has a slot for each, and
    one after another where it has not (each search then finds a slot holding its own text)."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self._free = threading.BoundedSemaphore(self.slots)
        self._held = threading.local()

    @contextmanager
    def place(self, halted: Callable[[], bool] | None = None) -> Iterator[bool]:
        """Hold a place (once per thread: a question asked inside a search holds no second one). Yields False where
        `halted` said stop while it waited."""
        depth = getattr(self._held, "depth", 0)
        if not depth:
            while not self._free.acquire(timeout=0.1):
                if halted is not None and halted():
                    yield False
                    return
        self._held.depth = depth + 1
        try:
            yield True
        finally:
            self._held.depth = depth
            if not depth:
                self._free.release()


_GATES: dict[str, SlotGate] = {}
_GATES_LOCK = threading.Lock()


def gate_of(backend: Backend) -> SlotGate:
    """The gate of `backend`'s server (by its base URL, else its label): as many places as the server registered
    slots, else one (a server that does not say answers one ending question at a time)."""
    key = backend.base_url or backend.label
    with _GATES_LOCK:
        if key not in _GATES:
            _GATES[key] = SlotGate(server_slots(backend.base_url) or 1)
        return _GATES[key]


class Backend(ABC):
    """A model behind an API. `stream()` yields str chunks and finally one Usage; it raises BackendError."""

    model: str
    label: str
    capabilities: Capabilities
    base_url: str | None
    provider: str = "compatible"  # which entry of the registry built it (set by `get_backend`)
    key_hint: str = "type a key in the sidebar or set the provider's environment variable"  # for a refused key

    @abstractmethod
    def stream(self, messages: Sequence[Message], options: Options) -> Iterator[str | Usage]:
        """Stream the completion of `messages`."""

    def ending_score(self, messages: Sequence[Message], text: str) -> float | None:
        """The ending score of `text` as the answer to `messages` (ending.py: the model's probability of writing its
        last word as it stands, then punctuation that ends a phrase); None where the service cannot say. Raises
        `Unanswered` where it can but did not answer in time."""
        return None

    def next_tokens(self, messages: Sequence[Message], prefix: str) -> list[tuple[str, float]] | None:
        """The model's most likely next tokens after `prefix` (the answer so far), with their log-probabilities: what
        the ending search extends (ending.search_ending); None where the service cannot say."""
        return None

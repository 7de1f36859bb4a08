"""The one backend interface: stream a chat completion as text chunks, then a Usage.

Like simonw/llm's `execute()`, a backend is a plain class with one streaming method; what differs between
services (grammar field, reasoning models, `max_completion_tokens`) is declared in `Capabilities`, not
branched on by callers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from ..prompts import Message
from ..vocab import FailureKind

GrammarField = Literal["grammar", "guided_grammar", "structured_outputs"]


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do; the UI offers modes from this, the request builder shapes calls with it."""

    grammar_field: GrammarField | None = None
    reasoning: bool = False
    max_completion_tokens: bool = False
    ignores_temperature: bool = False

    @property
    def grammar(self) -> bool:
        return self.grammar_field is not None


DEFAULT_CAPABILITIES = Capabilities()


@dataclass(frozen=True)
class Options:
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    grammar: str | None = None
    timeout: float | None = None  # seconds; None uses the backend's own timeout
    seed: int | None = None


@dataclass(frozen=True)
class Usage:
    """Yielded once, last, by every stream; token counts are None when the service does not report them."""

    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float
    first_token_seconds: float | None
    finish_reason: str | None = None


class BackendError(Exception):
    """A failure the user can act on: `kind` says what happened, the message says what to do."""

    def __init__(self, kind: FailureKind, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message


class Backend(ABC):
    """A model behind an API. `stream()` yields str chunks and finally one Usage; it raises BackendError."""

    model: str
    label: str
    capabilities: Capabilities
    base_url: str | None
    provider: str = "compatible"  # which entry of the registry built it (set by `get_backend`)

    @abstractmethod
    def stream(self, messages: Sequence[Message], options: Options) -> Iterator[str | Usage]:
        """Stream the completion of `messages`."""

"""One call of a run: one request to the model, its stream, and what became of it (`generation.Generation` holds
its list; the limits stop one, the outcome reads them)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .backends import BackendError, CancelToken, Options, Usage
from .parser import MarkerParser, ParseResult
from .prompts import Message
from .redact import SecretMasker
from .repair import ReplyFilter
from .vocab import Status


@dataclass
class Call:
    """One call of a run: one request to the model, its stream, and what became of it.

    `parts` is the text the run reads: the prefix kept from the calls before, then what this call's reply
    passed on (`reader`); `reply` is what the model sent, word for word, and `reader.dropped` what was not read.
    """

    number: int
    messages: list[Message]
    options: Options
    parser: MarkerParser | None
    reader: ReplyFilter
    masker: SecretMasker  # the key in use, masked before anything reads the reply (redact.py)
    resumed_from: int | None = None  # the marker a repair call continued from; None on the first call
    started: float = field(default_factory=time.monotonic)
    parts: list[str] = field(default_factory=list)
    reply: list[str] = field(default_factory=list)
    chunks: int = 0
    usage: Usage | None = None
    failure: BackendError | None = None
    halted: BackendError | None = None  # our own stop (overrun, deadline): its reason is the failure
    stopped: str | None = None  # why the run stopped this call to start the next (repair.worthless)
    status: Status = "running"
    first_token: float | None = None
    ended: float | None = None
    result: ParseResult | None = None  # the parser's, once the call has ended
    next_check: int = 0  # the raw length at which the overrun check counts again

    def read(self, piece: str) -> str:
        """A piece of the reply (the key in use masked already) kept word for word, and what of it the run reads."""
        if not piece:
            return ""
        self.reply.append(piece)
        return self.reader.feed(piece)

    def release(self) -> str:
        """What the masker held back as a possible key's start (the reply ended, was cut or stopped), read."""
        return self.read(self.masker.flush())

    @property
    def cancel(self) -> CancelToken:
        return self.options.cancel  # type: ignore[return-value]  (every call gets its own token)

    @property
    def estimated(self) -> bool:
        """A stream the run closed early gets no usage from the server: its chunks stand in for its tokens."""
        return self.stopped is not None and (self.usage is None or self.usage.completion_tokens is None)

    @property
    def completion_tokens(self) -> int | None:
        return self.chunks if self.estimated else self.usage.completion_tokens if self.usage else None

    @property
    def prompt_tokens(self) -> int | None:
        return self.usage.prompt_tokens if self.usage else None

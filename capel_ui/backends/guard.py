"""Retries, Stop and the words of a failure, around any backend: `get_backend` wraps every backend it builds.

A backend only says what went wrong (a `Fault`: its kind, the status, the wait the service asked for); this
wrapper decides whether to try again and words the message the user reads, the same for an HTTP service and
the in-process scripted model. Only a failure before any text is retried, never once Stop was pressed, and the
waits of one request add up to at most `WAIT_BUDGET` seconds. Every failure leaves here redacted (`redact`: the
key in use, URL credentials, echoed authorization headers), so no key reaches a message or the database.
Every piece of text leaves here as valid Unicode (`valid_text`: a lone surrogate escape becomes U+FFFD, and the
run's notice says so), so no backend's odd output can crash a print or a save.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..prompts import Message
from ..redact import redact, valid_text
from ..vocab import FAILURES
from .base import Backend, BackendError, CancelToken, Capabilities, Fault, Options, Usage

RETRYABLE_KINDS = frozenset(kind for kind, spec in FAILURES.items() if spec.retry)
"""The failure kinds worth another attempt, as `vocab.FAILURES` declares them; a `server` fault is retried only
for a 5xx status."""

WORDED_KINDS = frozenset(kind for kind, spec in FAILURES.items() if spec.worded)
"""The kinds of `Fault` this guard words: what a service says before its stream starts (`FailureSpec.worded`)."""

MAX_BACKOFF = 20.0
WAIT_BUDGET = 30.0
"""Seconds one request may spend waiting between its attempts, in all. A server that asks (Retry-After) for
a longer wait than is left gets no retry: the user hears at once how long it asked for, instead of a spinner."""


def redacted(exc: BackendError, secrets: Sequence[str | None] = ()) -> BackendError:
    """`exc` with its message redacted (see `redact`), of the same kind and status."""
    return BackendError(exc.kind, redact(exc.message, secrets), status=exc.status)


def retryable(fault: Fault) -> bool:
    """Whether `fault` is worth another attempt (see `RETRYABLE_KINDS`)."""
    if fault.kind == "server":
        return fault.status is not None and fault.status >= 500
    return fault.kind in RETRYABLE_KINDS


class Guarded(Backend):
    """A backend with bounded retries, no retry after Stop, and a message that says what to do for each fault.

    Everything but `stream` is the inner backend's (`request_params`, `grammar_params`, ...)."""

    def __init__(
        self,
        inner: Backend,
        *,
        remote: bool = False,
        max_retries: int = 3,
        backoff: float = 0.5,
        wait_budget: float = WAIT_BUDGET,
        sleep: Callable[[float], None] | None = None,
        secrets: Sequence[str | None] = (),
    ) -> None:
        self.inner = inner
        self.secrets = tuple(secrets)  # the key in use: masked in every failure this backend raises
        self.remote = remote  # a vendor's API at a fixed address: when unreachable, the network is to check
        self.max_retries = max_retries
        self.backoff = backoff
        self.wait_budget = wait_budget
        self._sleep = sleep  # None: wait on the run's cancel token, so a Stop ends a retry's wait at once

    def __getattr__(self, name: str) -> Any:  # only called for what this wrapper does not have itself
        if name == "inner":  # not set yet (a copy being made): no inner to ask
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return repr(self.inner)

    model = property(lambda self: self.inner.model)
    label = property(lambda self: self.inner.label)
    base_url = property(lambda self: self.inner.base_url)

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    @property
    def provider(self) -> str:  # type: ignore[override]
        return self.inner.provider

    def stream(self, messages: Sequence[Message], options: Options) -> Iterator[str | Usage]:
        attempts = self._attempts(messages, options)
        try:
            for item in attempts:
                yield valid_text(item) if isinstance(item, str) else item
        except BackendError as exc:
            raise redacted(exc, self.secrets) from None
        finally:
            attempts.close()  # closed early (Stop, Ctrl-C): the open response is closed now, not when collected

    def _attempts(self, messages: Sequence[Message], options: Options) -> Iterator[str | Usage]:
        attempt, waited = 0, 0.0
        while True:
            attempt += 1
            received = False
            try:
                for item in self.inner.stream(messages, options):
                    received = received or isinstance(item, str)
                    yield item
                return
            except Fault as fault:
                stopped = options.cancel is not None and options.cancel.is_set()  # aborted on purpose: no retry
                if received or stopped or attempt > self.max_retries or not retryable(fault):
                    raise self.worded(fault, attempt) from fault
                left = max(self.wait_budget - waited, 0.0)
                if fault.retry_after is not None and fault.retry_after > left:
                    raise self._too_long(fault, fault.retry_after, attempt) from fault
                delay = fault.retry_after
                if delay is None:
                    delay = min(self.backoff * 2 ** (attempt - 1) * (1 + random.random() / 4), MAX_BACKOFF, left)
                if self._pause(delay, options.cancel):
                    raise self.worded(fault, attempt) from fault  # stopped while waiting: no further attempt
                waited += delay

    def _pause(self, delay: float, cancel: CancelToken | None) -> bool:
        """Wait `delay` seconds before the next attempt (a Retry-After may ask for many); True if a Stop ended the
        wait. Tests pass their own `sleep`, which records the waits instead."""
        if self._sleep is not None:
            self._sleep(delay)
            return cancel is not None and cancel.is_set()
        if cancel is not None:
            return cancel.wait(delay)
        time.sleep(delay)
        return False

    def ending_score(self, messages: Sequence[Message], text: str) -> float | None:
        """The inner backend's answer; a failure (the score is an extra) is no answer, never a failed run."""
        try:
            return self.inner.ending_score(messages, text)
        except BackendError:
            return None

    def next_tokens(self, messages: Sequence[Message], prefix: str) -> list[tuple[str, float]] | None:
        """The inner backend's answer; a failure (the search is an extra) is no answer, never a failed run."""
        try:
            tokens = self.inner.next_tokens(messages, prefix)
        except BackendError:
            return None
        return None if tokens is None else [(valid_text(token), logprob) for token, logprob in tokens]  # may be text

    def _where(self) -> str:
        return self.base_url or self.label

    def worded(self, fault: Fault, attempts: int) -> BackendError:
        """The message for `fault` after `attempts` attempts: what happened and what to do."""
        tried = f" (tried {attempts} times)" if attempts > 1 else ""
        where, status, kind = self._where(), fault.status, fault.kind
        if kind == "timeout":
            text = f"{self.label} at {where} did not answer in time{tried}; try again or raise the timeout."
        elif kind == "unreachable" and self.remote:  # its URL is fixed: the writer's own connection is to check
            text = f"Could not reach {where}{tried}: check your network connection and try again."
        elif kind == "unreachable":
            text = f"Could not connect to {where}{tried}: is the server running and the base URL right?"
        elif kind == "auth":
            text = f"{where} refused the API key ({status}): {self.inner.key_hint}."
        elif kind == "rate_limit":
            text = f"{where} is rate-limiting requests (429){tried}; wait a minute or lower concurrency."
        elif kind == "not_found":
            text = f"{where} does not know the model {self.model!r} (404); check the model id."
        elif kind == "context":
            text = self._context(fault.detail)
        elif kind == "bad_request":
            text = f"{where} rejected the request ({status or 400}): {fault.detail}"
        elif kind == "server" and status is not None and status >= 500:
            text = f"{where} failed with a server error ({status}){tried}; try again later."
        elif kind == "server" and status is not None:
            text = f"{where} answered {status}: {fault.detail}"
        else:
            text = f"{where} failed: {fault.detail}"
        return BackendError(kind, text, status=status)

    def _context(self, detail: str) -> str:
        overflow = _prompt_overflow(detail)
        if overflow is not None:
            return (
                f"The prompt alone ({overflow[0]} tokens) is too long for {self.label}'s context of "
                f"{overflow[1]} tokens; shorten the instruction or the text to rewrite."
            )
        return (
            f"The prompt plus the output limit is too long for {self.label}'s context; shorten the prompt, "
            "or lower the output limit or the target."
        )

    def _too_long(self, fault: Fault, asked: float, attempts: int) -> BackendError:
        """The server asked for a longer wait than this request has left: stop now and say how long it asked."""
        tried = f"; tried {attempts} times" if attempts > 1 else ""
        wait, where = _duration(asked), self._where()
        if fault.kind == "rate_limit":
            text = (
                f"{where} is rate-limiting requests (429) and asks to wait {wait} before the next one{tried}; "
                "try again after that, or lower concurrency."
            )
        else:
            text = (
                f"{where} is unavailable ({fault.status}) and asks to wait {wait} before retrying{tried}; "
                "try again after that."
            )
        return BackendError(fault.kind, text, status=fault.status)


def _duration(seconds: float) -> str:
    """`45 s`, `15 min`, `2.5 h`: a wait as people read it."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _prompt_overflow(message: str) -> tuple[int, int] | None:
    """(prompt tokens, context size) when a context error says the prompt alone does not fit, as OpenAI, vLLM
    and llama.cpp word it; None when the prompt fits and only the output budget overflows, or it is unclear."""
    text = message.replace(",", "")
    limit = re.search(r"(?:maximum context length is|context size(?: is)?|n_ctx\D{0,4})\s*(\d+)", text)
    prompt = re.search(
        r"(?:messages resulted in|(\d+) in the messages|n_prompt_tokens\D{0,4}|prompt (?:is|has|contains))\s*(\d+)?",
        text,
    )
    if not limit or not prompt:
        return None
    n = int(prompt.group(1) or prompt.group(2) or 0)
    size = int(limit.group(1))
    return (n, size) if n >= size else None

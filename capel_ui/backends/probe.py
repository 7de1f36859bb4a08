"""Does this server honour a grammar? One tiny request whose grammar admits a single answer tells.

A model asked to say hello, under a grammar that admits only `PROBE_ANSWER`, writes exactly that only if the
server applies the grammar; a server that ignores the field answers hello (or fails). The answer is cached per
(URL, model, grammar field) for the life of the process, and the Write page offers the guaranteed modes for an
OpenAI-compatible server only when it says yes. Even then the verdict of every run still comes from counting.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..grammar import Grammar, Lit
from ..vocab import FAILURES, MODE_SPECS, Mode
from .base import Backend, BackendError, Options, Usage
from .providers import spec_of

PROBE_ANSWER = "<7> ok."
PROBE_GRAMMAR = Grammar(Lit(PROBE_ANSWER))
PROBE_MESSAGES = [{"role": "user", "content": "Say hello."}]
PROBE_OPTIONS = Options(temperature=0.0, max_tokens=16, grammar=PROBE_GRAMMAR, timeout=30.0)


@dataclass(frozen=True)
class ProbeResult:
    honoured: bool
    reason: str  # for people: "guaranteed on this server" or why not
    settled: bool = True  # False when the server could not be asked (down, timed out, busy)

    @property
    def label(self) -> str:
        return self.reason


_cache: dict[tuple[str, str, str], ProbeResult] = {}
_lock = threading.Lock()


def probe(
    base_url: str, model: str, grammar_field: str, *, api_key: str | None = None, refresh: bool = False
) -> ProbeResult:
    """Whether `base_url` honours `grammar_field` for `model` (cached; `refresh` asks again)."""

    def build() -> Backend:
        from .registry import get_backend  # the registry builds backends; it does not need the probe

        return get_backend(
            model,
            provider="compatible",
            base_url=base_url,
            api_key=api_key,
            grammar_field=grammar_field,
            max_retries=0,
            timeout=30.0,
        )

    return _cached(base_url, model, grammar_field, build, refresh)


def _cached(
    base_url: str, model: str, grammar_field: str, build: Callable[[], Backend], refresh: bool = False
) -> ProbeResult:
    """The cached answer for (URL, model, field), else ask the backend `build` gives and keep a settled answer."""
    key = (base_url.rstrip("/"), model, grammar_field)
    with _lock:
        if not refresh and key in _cache:
            return _cache[key]
    result = _ask(build, grammar_field)
    if result.settled:  # a server that was down or busy is asked again next time
        with _lock:
            _cache[key] = result
    return result


def _ask(build: Callable[[], Backend], grammar_field: str) -> ProbeResult:
    try:
        text = "".join(i for i in build().stream(PROBE_MESSAGES, PROBE_OPTIONS) if not isinstance(i, Usage))
    except BackendError as exc:
        settled = FAILURES[exc.kind].lasting
        return ProbeResult(False, f"Not guaranteed: the probe with `{grammar_field}` failed ({exc.message})", settled)
    if text.strip() == PROBE_ANSWER:
        return ProbeResult(True, f"Guaranteed on this server (it honoured a `{grammar_field}` grammar).")
    shown = " ".join(text.split())[:40]
    return ProbeResult(
        False,
        f"Not guaranteed: this server ignored the `{grammar_field}` grammar (it answered {shown!r}); "
        "pick another grammar field or use CAPEL.",
    )


def needs_probe(provider: str, base_url: str | None, grammar_field: str | None) -> bool:
    """Only a server whose grammar field the writer named is asked: the registry knows every other model."""
    return spec_of(provider).takes_grammar_field and bool(grammar_field) and bool(base_url)


def why_refused(backend: Backend, modes: Iterable[Mode]) -> str | None:
    """Why the guaranteed modes among `modes` must not run on this backend (a compatible server whose probe says
    it ignores or rejects its grammar field), or None where they may: a known model, a server that honours the
    field, one that could not be asked (the run itself then says what went wrong), or no guaranteed mode."""
    field = backend.capabilities.grammar_field
    base_url = getattr(backend, "base_url", None)
    if not any(MODE_SPECS[m].guaranteed for m in modes) or not needs_probe(backend.provider, base_url, field):
        return None
    result = _cached(base_url or "", backend.model, field or "", lambda: backend)  # with the backend's own key
    return why_not_guaranteed(True, result)


def why_not_guaranteed(takes_grammar: bool | None, probed: ProbeResult | None) -> str | None:
    """The one rule for whether a model can run the guaranteed modes, used by the service and the pages alike:
    None where it can (the registry says it takes a grammar and, for a server that was probed, the probe did not
    settle on "ignored"), else why not. A server that could not be asked (down, busy) is not refused here: the run
    itself then says what went wrong, and the probe asks again next time."""
    if not takes_grammar:
        return "This model takes no grammar, so the guaranteed modes cannot run on it."
    if probed is None or probed.honoured or not probed.settled:
        return None
    return probed.reason


def clear_cache() -> None:
    with _lock:
        _cache.clear()

"""Does this server honour a grammar? One tiny request whose grammar admits a single answer tells.

A model asked to say hello, under a grammar that admits only `PROBE_ANSWER`, writes exactly that only if the
server applies the grammar; a server that ignores the field answers hello (or fails). The answer is cached per
(URL, model, grammar field) for the life of the process, and the Write page offers the guaranteed modes for an
OpenAI-compatible server only when it says yes. Even then the verdict of every run still comes from counting.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..grammar import Grammar, Lit
from .base import BackendError, Options, Usage

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
    key = (base_url.rstrip("/"), model, grammar_field)
    with _lock:
        if not refresh and key in _cache:
            return _cache[key]
    result = _ask(base_url, model, grammar_field, api_key)
    if result.settled:  # a server that was down or busy is asked again next time
        with _lock:
            _cache[key] = result
    return result


def _ask(base_url: str, model: str, grammar_field: str, api_key: str | None) -> ProbeResult:
    from .registry import get_backend  # the registry builds backends; it does not need the probe

    try:
        backend = get_backend(
            model,
            provider="compatible",
            base_url=base_url,
            api_key=api_key,
            grammar_field=grammar_field,
            max_retries=0,
            timeout=30.0,
        )
        text = "".join(i for i in backend.stream(PROBE_MESSAGES, PROBE_OPTIONS) if not isinstance(i, Usage))
    except BackendError as exc:
        settled = exc.kind in ("bad_request", "not_found", "auth", "context", "empty")
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
    """Only an OpenAI-compatible server given a grammar field is asked: the registry knows every other model."""
    return provider == "compatible" and bool(grammar_field) and bool(base_url)


def refusal(provider: str, base_url: str | None, model: str, grammar_field: str | None) -> str | None:
    """Why a guaranteed mode must not run on this server (its probe says it ignores or rejects the grammar), or
    None where it may: a known model, a server that honours the field, or one that could not be asked (the run
    itself then says what went wrong)."""
    if not needs_probe(provider, base_url, grammar_field):
        return None
    result = probe(base_url or "", model, grammar_field or "")
    return None if result.honoured or not result.settled else result.reason


def clear_cache() -> None:
    with _lock:
        _cache.clear()

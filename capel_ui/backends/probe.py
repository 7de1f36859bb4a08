"""Does this server honour a grammar? One tiny request whose grammar admits a single answer tells.

A model asked to say hello, under a grammar that admits only `PROBE_ANSWER` (which no model writes unprompted),
writes exactly that only if the server applies the grammar; a server that ignores the field answers hello (or
fails). The answer is cached for the life of the process: per (URL, model, grammar field) for a server the writer
named, and per (address, model, route, key hash) for a hosted vendor whose pattern route is probe-gated (xAI: see
`ProviderSpec.probe_gated`), so a key typed later is asked again and no key is ever stored. Write and Compare offer
the guaranteed modes on such a server or vendor only once it said yes; even then every run's verdict comes from
counting.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from ..grammar import Grammar, Lit
from ..redact import redact
from ..vocab import FAILURES, MODE_SPECS, Mode
from .base import Backend, BackendError, Options, Usage
from .providers import spec_of
from .providers.spec import ProviderSpec

PROBE_ANSWER = "<7> ok."
PROBE_GRAMMAR = Grammar(Lit(PROBE_ANSWER))
PROBE_MESSAGES = [{"role": "user", "content": "Say hello."}]
PROBE_OPTIONS = Options(temperature=0.0, max_tokens=16, grammar=PROBE_GRAMMAR, timeout=30.0)
VENDOR_PROBE_OPTIONS = replace(PROBE_OPTIONS, max_tokens=256)  # a reasoning model may think before it answers


@dataclass(frozen=True)
class ProbeResult:
    honoured: bool
    reason: str  # for people: "guaranteed on this server" or why not
    settled: bool = True  # False when the server could not be asked (down, timed out, busy)

    @property
    def label(self) -> str:
        return self.reason


@dataclass(frozen=True)
class Wording:
    """How a probe asks and says its answer: of a server the writer named, or of a vendor's key and model."""

    honoured: str  # format fields: {route} (what was probed), {label} (the model), {shown}, {why}
    ignored: str
    failed: str
    options: Options = PROBE_OPTIONS


SERVER = Wording(
    "Guaranteed on this server (it honoured a {route} grammar).",
    "Not guaranteed: this server ignored the {route} grammar (it answered {shown!r}); pick another grammar field or "
    "use CAPEL.",
    "Not guaranteed: the probe with {route} failed ({why})",
)
VENDOR = Wording(
    "Guaranteed on this key and model: {label} kept its answer to the one its {route} admits.",
    "Not guaranteed on this key and model: {label} ignored its {route} (it answered {shown!r}); CAPEL (with repair) "
    "and baseline run here.",
    "Not guaranteed on this key and model: the probe of its {route} failed ({why}); CAPEL (with repair) and baseline "
    "run here.",
    VENDOR_PROBE_OPTIONS,
)
VENDOR_ROUTES = {"json_schema": "JSON-schema `pattern`", "custom_tool": "grammar tool"}

CacheKey = tuple[str, str, str, str]  # address, model, grammar field, key hash ("" for a server)
_cache: dict[CacheKey, ProbeResult] = {}
_lock = threading.Lock()


def key_hash(key: str | None) -> str:
    """What the cache keeps of a key: enough of its SHA-256 to tell two keys apart, never the key."""
    return hashlib.sha256(key.encode()).hexdigest()[:16] if key else ""


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

    key = (base_url.rstrip("/"), model, grammar_field, "")
    return _cached(key, build, refresh, SERVER, {"route": f"`{grammar_field}`"})


def _cached(
    key: CacheKey, build: Callable[[], Backend], refresh: bool, words: Wording, said: dict[str, str]
) -> ProbeResult:
    """The cached answer for `key`, else ask the backend `build` gives and keep a settled answer."""
    with _lock:
        if not refresh and key in _cache:
            return _cache[key]
    result = _ask(build, words, said)
    if result.settled:  # a server that was down or busy is asked again next time
        with _lock:
            _cache[key] = result
    return result


def _ask(build: Callable[[], Backend], words: Wording, said: dict[str, str]) -> ProbeResult:
    """The probe's answer in words; what the server wrote is quoted with the backend's key masked (`redact`, before
    it is cut), as its failures already are (the guard), so a server that echoes the key never shows it."""
    try:
        backend = build()
        text = "".join(i for i in backend.stream(PROBE_MESSAGES, words.options) if not isinstance(i, Usage))
    except BackendError as exc:
        settled = FAILURES[exc.kind].lasting
        return ProbeResult(False, words.failed.format(**said, why=exc.message), settled)
    if text.strip() == PROBE_ANSWER:
        return ProbeResult(True, words.honoured.format(**said))
    shown = " ".join(redact(text, getattr(backend, "secrets", ())).split())[:40]
    return ProbeResult(False, words.ignored.format(**said, shown=shown))


def vendor_probe(
    provider: str,
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    refresh: bool = False,
    always: bool = False,
) -> ProbeResult | None:
    """Whether the guaranteed modes hold on a hosted vendor for this key and model. A model the vendor gives no
    grammar route gets its declared reason (`ProviderSpec.no_guarantee`: not asked, nothing sent); a probe-gated
    route (xAI) is asked with the probe through the very request a run sends (cached per address, model and key
    hash), and only a pass opens it: a probe that could not ask is a "no" for now. None where the declaration alone
    is trusted (OpenAI's own routes) unless `always` (the doctor asks every route)."""
    spec = spec_of(provider)
    if not spec.capabilities(model).grammar:
        return declared(spec)
    if not (spec.probe_gated or always):
        return None
    from .registry import get_backend  # the registry builds backends; it does not need the probe

    try:
        backend = get_backend(model, provider=provider, base_url=base_url, api_key=api_key, max_retries=0, timeout=30)
    except BackendError as exc:  # no key, an unreadable secrets file: said, never cached
        field = spec.capabilities(model).grammar_field or ""
        return ProbeResult(False, VENDOR.failed.format(**_vendor_said(spec, model, field), why=exc.message))
    return _vendor_result(backend, refresh)


def declared(spec: ProviderSpec) -> ProbeResult | None:
    """A hosted vendor's declared reason why its models with no grammar route get no guaranteed mode, as a settled
    answer (None for a provider that declares none: the registry's own sentence then says it)."""
    if not (spec.keyed and spec.no_guarantee):
        return None
    why = f"Not guaranteed on {spec.label}: {spec.no_guarantee}. CAPEL (with repair) and baseline run here."
    return ProbeResult(False, why)


def _vendor_result(backend: Backend, refresh: bool = False) -> ProbeResult:
    """The probe of a vendor's route, with the backend a run would use (its own address, model id and key)."""
    spec = spec_of(backend.provider)
    field = backend.capabilities.grammar_field or ""
    secrets = [s for s in getattr(backend, "secrets", ()) if s]
    key = ((backend.base_url or "").rstrip("/"), backend.model, field, key_hash(secrets[0] if secrets else None))
    result = _cached(key, lambda: backend, refresh, VENDOR, _vendor_said(spec, backend.model, field))
    return result if result.honoured else replace(result, settled=True)


def _vendor_said(spec: ProviderSpec, model: str, field: str) -> dict[str, str]:
    return {"route": VENDOR_ROUTES.get(field, f"`{field}` grammar"), "label": spec.name_model(model)}


def needs_probe(provider: str, base_url: str | None, grammar_field: str | None) -> bool:
    """Only a server whose grammar field the writer named is asked: the registry knows every other model."""
    return spec_of(provider).takes_grammar_field and bool(grammar_field) and bool(base_url)


def why_refused(backend: Backend, modes: Iterable[Mode]) -> str | None:
    """Why the guaranteed modes among `modes` must not run on this backend (a compatible server whose probe says
    it ignores or rejects its grammar field), or None where they may: a known model, a server that honours the
    field, one that could not be asked (the run itself then says what went wrong), or no guaranteed mode."""
    field = backend.capabilities.grammar_field
    base_url = getattr(backend, "base_url", None)
    if not any(MODE_SPECS[m].guaranteed for m in modes):
        return None
    if spec_of(backend.provider).probe_gated and field:  # a vendor's pattern route: open only once it passed
        return why_not_guaranteed(True, _vendor_result(backend))
    if not needs_probe(backend.provider, base_url, field):
        return None
    key = ((base_url or "").rstrip("/"), backend.model, field or "", "")
    result = _cached(key, lambda: backend, False, SERVER, {"route": f"`{field}`"})  # with the backend's own key
    return why_not_guaranteed(True, result)


def why_not_guaranteed(takes_grammar: bool | None, probed: ProbeResult | None) -> str | None:
    """The one rule for whether a model can run the guaranteed modes, used by the service and the pages alike:
    None where it can (the registry says it takes a grammar and, where it was probed, the probe did not settle on
    "no"), else why not: the probe's (or the vendor's declared) reason first, it says more. A server that could not
    be asked (down, busy) is not refused here: the run itself then says what went wrong, and the probe asks again
    next time (a probe-gated vendor's probe that could not ask is settled on "no": `vendor_probe`)."""
    if probed is not None and probed.settled and not probed.honoured:
        return probed.reason
    if not takes_grammar:
        return "This model takes no grammar, so the guaranteed modes cannot run on it."
    return None


def clear_cache() -> None:
    with _lock:
        _cache.clear()

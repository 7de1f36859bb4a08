"""What a provider is, and the registry of them: each provider module declares one `ProviderSpec`, and
`providers/__init__.py` registers them in order (a test may `register` its own).

Callers never compare provider names: they ask the spec (local? keyed? takes a base URL? which models?). A
provider's name is open: any registered name is one (`spec_of` checks it), so a new provider is one module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from ...vocab import LANG_LABELS, LANGS, Lang
from ..base import DEFAULT_CAPABILITIES, Backend, BackendError, Capabilities
from ..dialect import Dialect, ModelLimit

ModelInput = Literal["fixed", "file", "list", "id"]
"""What the sidebar asks for the model: nothing (the provider's one model), a file path, a pick from the
provider's models (or another id typed), or an id typed."""


@dataclass(frozen=True)
class BackendArgs:
    """What a provider's factory gets to build its backend (the key already looked up, see `resolve_key`)."""

    spec: ProviderSpec
    model: str
    base_url: str | None  # the URL typed, if any
    api_key: str | None  # the key to send, if any
    key_hint: str  # what to do when the key is refused
    capabilities: Capabilities
    label: str
    timeout: float


@dataclass(frozen=True)
class ProviderSpec:
    """Everything about one provider, declared once (in its own module under `providers/`)."""

    name: str
    label: str
    factory: Callable[[BackendArgs], Backend]
    base_url: str | None = None  # the default address (a compatible server's is only a placeholder)
    base_url_env: str | None = None  # a variable that moves a vendor's address (a gateway, a proxy, a test server)
    key_env: str | None = None  # the variable its key is known by; None: it takes no key
    keyed: bool = False  # a vendor's API: no key, no backend; its address is fixed, so a failure to reach it
    # points at the writer's network
    local: bool = False  # runs on this machine: free to run many times, its address is not worth saving
    model_input: ModelInput = "id"
    takes_base_url: bool = False  # the writer gives the address (and the sidebar asks for it)
    takes_grammar_field: bool = False  # the writer names the grammar field, so the Write page probes it
    models: tuple[str, ...] = ()  # offered in the pickers, default first
    list_models: Callable[[], tuple[str, ...]] | None = None  # instead of `models`: what is there now (pulled)
    model_caps: dict[str, Capabilities] = field(default_factory=dict)
    default_caps: Capabilities = DEFAULT_CAPABILITIES
    caps_for: Callable[[str, str | None], Capabilities] | None = None  # instead of the tables above
    owns: Callable[[str], bool] = lambda model: False  # a model id that is this provider's whatever the URL
    prefixes: tuple[str, ...] = ()  # model ids starting so are this provider's (with `models`), given no URL
    model_label: Callable[[str], str] | None = None  # how a model is named; default `id (label)`
    languages: tuple[Lang, ...] = LANGS  # what its models write well
    note: str = ""
    dialect: Dialect | None = None  # the body its endpoint documents (None: OpenAI's words, sent as they are)
    dialects: dict[str, Dialect] = field(default_factory=dict)  # per model id, where one model's body differs
    probe_gated: bool = False  # its pattern route is documented but not yet proven: the guaranteed modes run only
    # once a probe with the writer's key passed on that model and address (`probe.vendor_probe`)
    no_guarantee: str = ""  # why a model with no grammar route here gets no guaranteed mode, with the source
    limits: dict[str, ModelLimit] = field(default_factory=dict)  # per model id (a dated id gets its family's)
    models_source: str = ""  # where the model ids and limits were read, and when
    hidden: bool = False  # for tests: registered like any other, never offered in the sidebar...
    shown_while: Callable[[], bool] | None = None  # ...except while this says so (a test staged the scripted model)

    def address(self, typed: str | None) -> str | None:
        """Where to send requests: the URL typed, else `base_url_env` if set, else the vendor's own address."""
        moved = os.environ.get(self.base_url_env, "").strip() if self.base_url_env else ""
        return typed or moved or self.base_url

    def offered(self) -> tuple[str, ...]:
        """The models the pickers offer now, default first."""
        return self.list_models() if self.list_models is not None else self.models

    @property
    def default_model(self) -> str | None:
        offered = self.offered()
        return offered[0] if offered else None

    def recognises(self, model: str) -> bool:
        """Whether a model id given without a URL is this provider's (`provider_of`)."""
        return model in self.offered() or bool(self.prefixes and model.startswith(self.prefixes))

    def capabilities(self, model: str, grammar_field: str | None = None) -> Capabilities:
        """What `model` takes: its entry (a dated id gets its family's), with the grammar field chosen."""
        if self.caps_for is not None:
            return self.caps_for(model, grammar_field)
        caps = self.model_caps.get(model) or self.model_caps.get(_family(model), self.default_caps)
        caps = replace(caps, grammar_field=grammar_field) if grammar_field else caps  # type: ignore[arg-type]
        if self.dialect is None and not self.dialects and not self.limits:
            return caps
        limit = self.limit(model) or ModelLimit()
        dialect = self.dialects.get(model) or self.dialects.get(_family(model)) or self.dialect
        return replace(caps, dialect=dialect, max_output_tokens=limit.output, context_tokens=limit.context)

    def limit(self, model: str) -> ModelLimit | None:
        """The model's declared limits (a dated id gets its family's), None for an id not declared."""
        return self.limits.get(model) or self.limits.get(_family(model))

    def language_note(self, lang: Lang) -> str | None:
        """What a writer reads when this provider's models do not write `lang` (the count is still right, the text
        is not), and what to use instead; None when they do."""
        if lang in self.languages:
            return None
        name = LANG_LABELS.get(lang, lang)
        return (
            f"{self.label} does not write {name}: the count is right, but the text is not meaningful {name}. "
            f"For {name}, pull a model that writes it on the Models page (`python -m capel_ui models pull`, e.g. "
            "a Qwen GGUF), or use an API model such as DeepSeek."
        )

    def name_model(self, model: str) -> str:
        """How `model` is named to people everywhere (pickers, captions, error messages)."""
        return self.model_label(model) if self.model_label else f"{model} ({self.label})"


def _family(model: str) -> str:
    """A dated snapshot's family (`gpt-5-mini-2025-08-07` → `gpt-5-mini`), so it gets the family's capabilities."""
    return re.sub(r"-(\d{4}-\d{2}-\d{2}|\d{8})$", "", model)  # OpenAI's and Anthropic's dated snapshots


PROVIDERS: dict[str, ProviderSpec] = {}
"""Every registered provider by name, in the sidebar's order."""


def register(spec: ProviderSpec) -> ProviderSpec:
    """Add (or replace) a provider; returns it, so a module can write `SPEC = register(ProviderSpec(...))`."""
    PROVIDERS[spec.name] = spec
    return spec


def spec_of(name: str) -> ProviderSpec:
    """The registered provider called `name`; a BackendError naming the known ones for any other."""
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(n for n, s in PROVIDERS.items() if not s.hidden)
        raise BackendError("bad_request", f"Unknown provider {name!r}: one of {known}.") from None


def language_note(provider: str, lang: Lang) -> str | None:
    """The sentence for a run of `provider` in `lang` when its models do not write it (`ProviderSpec.language_note`);
    None when they do, or for a provider nobody registered."""
    spec = PROVIDERS.get(provider)
    return spec.language_note(lang) if spec is not None else None


def visible() -> list[ProviderSpec]:
    """The providers people pick from (the test-only ones left out, unless a test has staged one)."""
    return [s for s in PROVIDERS.values() if not s.hidden or (s.shown_while is not None and s.shown_while())]


def grammar_offer() -> str:
    """Where the guaranteed modes can run, read from the registry for a message that says what to pick instead:
    `Embedded (…), Local GGUF file, OpenAI (gpt-5.6-sol, …) or an OpenAI-compatible server
    that takes a grammar (--grammar-field)`."""
    offers = []
    for spec in visible():
        gated = " once a probe with your key passed" if spec.probe_gated else ""
        if spec.default_caps.grammar:
            offers.append(spec.label + (f" ({gated.strip()})" if gated else ""))
        elif some := [m for m, caps in spec.model_caps.items() if caps.grammar]:
            offers.append(f"{spec.label} ({', '.join(some[:3])}{', …' if len(some) > 3 else ''}{gated})")
        elif spec.takes_grammar_field:
            offers.append(f"an {spec.label} that takes a grammar (--grammar-field)")
    return ", ".join(offers[:-1]) + (f" or {offers[-1]}" if len(offers) > 1 else "".join(offers))

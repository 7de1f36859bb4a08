"""What the pages use, decided by the sidebar and kept for the session: the model choice, its key, the
temperature, the database, and the backend built from them.

One cache layer per resource, and it is the core's: `storage.get_engine` keeps one migrated engine per URL and
`backends.start_server` one llama.cpp server per GGUF file, per process, for the app, the CLI and the
benchmarks alike. Nothing here wraps them in `st.cache_resource` (a second layer that could disagree with
the first, and that `st.cache_resource.clear()` would empty while the core kept its own).

Keys typed in the sidebar stay in the session's state (`state.S.api_key`) and go to `get_backend`, which looks them
up with the CLI's rule (`resolve_key`); they are never part of a ModelChoice, a saved run, a log line or an
export.
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy.engine import Engine

from ..backends import (
    ApiKey,
    Backend,
    BackendError,
    ModelChoice,
    ProbeResult,
    Provider,
    get_backend,
    needs_probe,
    resolve_key,
    spec_of,
    visible,
    why_not_guaranteed,
)
from ..backends.probe import probe, vendor_probe
from ..runs import store
from ..storage import database_url
from . import state
from .state import S


def typed_key(provider: Provider) -> str | None:
    """The key typed in the sidebar for this session, if any."""
    return state.get(S.typed_key(provider)) or state.get(S.api_key(provider)) or None


def api_key(provider: Provider) -> ApiKey | None:
    """The key `provider` would use now (typed, secrets.toml, environment), or None; a broken secrets file
    counts as none here (the sidebar shows its error, and building a backend reports it)."""
    try:
        return resolve_key(provider, typed_key(provider))
    except BackendError:
        return None


def keyed_api_models() -> list[ModelChoice]:
    """The vendors' API models (OpenAI, DeepSeek) whose key is at hand: what Compare and the judge offer."""
    keyed = [spec for spec in visible() if spec.keyed and api_key(spec.name)]
    return [ModelChoice(spec.name, model) for spec in keyed for model in spec.offered()]


def pulled_models() -> list[ModelChoice]:
    """The local models pulled to this machine (`python -m capel_ui models pull`), for Compare's picker."""
    spec = spec_of("local")
    return [ModelChoice(spec.name, model) for model in spec.offered()]


def db_url() -> str:
    """This session's database: the URL typed in the sidebar, else DATABASE_URL, else data/capel.db."""
    return state.get(S.DB_URL) or database_url()


def engine() -> Engine:
    """The database engine for this session's URL, created, migrated and its old runs judged once per process."""
    return store(db_url())


def build_backend(choice: ModelChoice) -> Backend:
    """A backend for the choice, with this session's typed key; raises BackendError saying what to do."""
    if choice.spec.local:
        with st.spinner("Starting the embedded model…"):  # shows only if it takes long: the first start
            return _backend(choice)
    return _backend(choice)


def _backend(choice: ModelChoice) -> Backend:
    return get_backend(
        choice.model,
        provider=choice.provider,
        base_url=choice.base_url,
        api_key=typed_key(choice.provider),
        grammar_field=choice.grammar_field,
    )


def grammar_probe(choice: ModelChoice) -> ProbeResult | None:
    """For an OpenAI-compatible server given a grammar field: whether it honours it (asked once per URL, model
    and field; see backends/probe.py). For a hosted vendor: its probe-gated route's probe with this session's key
    (xAI, asked once per address, model and key), or its declared reason why it has none (`vendor_probe`). None for
    every other choice: the registry already knows."""
    if needs_probe(choice.provider, choice.base_url, choice.grammar_field):
        with st.spinner("Checking whether this server honours the grammar…"):
            return probe(choice.base_url, choice.model, choice.grammar_field, api_key=typed_key(choice.provider))
    if not choice.spec.keyed:
        return None
    with st.spinner("Checking whether the guarantee holds on this key and model…"):
        return vendor_probe(choice.provider, choice.model, base_url=choice.base_url, api_key=typed_key(choice.provider))


def takes_grammar(choice: ModelChoice, probed: ProbeResult | None) -> bool:
    """Whether the guaranteed modes are offered for this model: the registry says it takes a grammar and, for a
    compatible server, its probe (`grammar_probe`, passed in) did not settle on "ignored"."""
    return why_not_guaranteed(choice.capabilities.grammar, probed) is None


def model_choice() -> ModelChoice:
    """The model picked in the sidebar (the embedded model until one is given)."""
    return state.get(S.MODEL_CHOICE)


def temperature() -> float | None:
    """The sidebar's temperature, or None for the model's own default."""
    if state.get(S.TEMPERATURE_DEFAULT):
        return None
    return state.get(S.TEMPERATURE_VALUE)

"""The shared sidebar, drawn by app.py on every page: model, key (session only), temperature, database.

It only draws and records choices in session state (`resources` names the keys and reads them back).
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from streamlit.navigation.page import StreamlitPage

from ..backends import (
    EMBEDDED,
    GRAMMAR_FIELDS,
    BackendError,
    ModelChoice,
    Provider,
    ProviderSpec,
    resolve_key,
    spec_of,
    visible,
)
from ..backends.openai_compat import check_base_url
from ..redact import redact
from ..storage import StorageError, database_fault, get_engine
from . import resources, state
from .state import S


def masked(url: str) -> str:
    """A database URL fit to show: the password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(unparsable URL)"


def sidebar() -> None:
    """The shared settings (called from app.py before the page runs)."""
    with st.sidebar:
        _model()
        _sampling()
        _database()
    _check_database()


def run_page(page: StreamlitPage) -> None:
    """Run the chosen page. A database that fails in the middle of it (a lock held too long, a full disk, a table
    gone) is one line naming the database and what to do, never a traceback; what was saved stays."""
    try:
        page.run()
    except SQLAlchemyError as exc:
        st.error(f"{redact(str(database_fault(exc)))}.", icon=":material/database:")


def _check_database() -> None:
    """A database that cannot be opened (a damaged file) stops the page with a message naming the file and
    what to do; the file is left as it is (the core never overwrites it)."""
    try:
        resources.engine()
    except StorageError as exc:
        st.error(f"History is unavailable: {exc}.", icon=":material/database:")
        st.stop()


def _model() -> None:
    st.subheader("Model")
    names: list[Provider] = [spec.name for spec in visible()]
    provider: Provider = st.selectbox("Provider", names, format_func=lambda p: spec_of(p).label, key=S.PROVIDER)
    spec = spec_of(provider)
    base_url = _base_url(spec) if spec.takes_base_url else None
    model = _model_id(spec)
    grammar_field = _grammar_field() if spec.takes_grammar_field else None
    if spec.note:
        st.caption(spec.note)
    if spec.key_env:
        _key(provider, spec.key_env)
    if model:
        state.put(S.MODEL_CHOICE, ModelChoice(provider, model, base_url, grammar_field))  # type: ignore[arg-type]
    else:
        state.put(S.MODEL_CHOICE, EMBEDDED)
        st.caption("No model given yet: the embedded model is used.")


def _base_url(spec: ProviderSpec) -> str | None:
    """The server's address, checked as it is typed; nothing is sent to a malformed URL."""
    base_url = st.text_input("Base URL", value=spec.base_url or "", key=S.BASE_URL).strip() or None
    if base_url:
        try:
            check_base_url(base_url)
        except BackendError as exc:
            st.error(str(exc))
    return base_url


def _model_id(spec: ProviderSpec) -> str:
    """The model, asked for as the provider declares (`ProviderSpec.model_input`)."""
    if spec.model_input == "fixed":
        return spec.default_model or ""
    if spec.model_input == "file":
        return st.text_input("GGUF file", placeholder="/path/to/model.gguf", key=S.gguf_path(spec.name)).strip()
    if spec.list_models is not None and not spec.offered():
        st.caption("No model pulled yet: open **Models** to pull one.")
        return ""
    if spec.model_input == "id" or not spec.offered():
        key = S.COMPAT_MODEL if spec.takes_base_url else S.custom_model(spec.name)  # a server's, kept across providers
        return st.text_input("Model id", placeholder="e.g. qwen3:8b", key=key).strip()
    if spec.list_models is not None:  # pulled models only: nothing else can be typed
        return st.selectbox("Model", spec.offered(), key=S.model(spec.name))
    picked = st.selectbox("Model", [*spec.models, "other…"], key=S.model(spec.name))
    return st.text_input("Model id", key=S.custom_model(spec.name)).strip() if picked == "other…" else picked


def _grammar_field() -> str | None:
    field = st.selectbox(
        "Grammar support",
        ["none", *GRAMMAR_FIELDS],
        key=S.GRAMMAR_FIELD,
        help="llama.cpp server: grammar. vLLM: structured_outputs (new) or guided_grammar (old). SGLang: ebnf. "
        "Ollama, LM Studio: json_schema. A Responses API gateway: custom_tool. The Write page probes it.",
    )
    return None if field == "none" else field


def _key(provider: Provider, env: str) -> None:
    """The password box, and where the key in use comes from when none is typed. The key typed is kept per provider
    for the session (`S.typed_key`), so switching provider and back finds it still there; it is never saved."""
    kept = state.get(S.typed_key(provider))
    if kept and not state.has(S.api_key(provider)):  # the box was left out of a run: put its key back
        state.put(S.api_key(provider), kept)
    typed = st.text_input(
        "API key",
        type="password",
        key=S.api_key(provider),
        help=f"Kept for this browser session only, per provider; never saved. Or set {env} in the environment or "
        "in .streamlit/secrets.toml.",
    )
    state.put(S.typed_key(provider), (typed or "").strip() or None)
    try:
        key = resolve_key(provider, resources.typed_key(provider))
    except BackendError as exc:  # a broken secrets.toml: say so here, before a run fails on it
        st.error(str(exc))
        return
    if key is not None and key.source != "typed":
        st.caption(f"Using {key.origin}.")


def _sampling() -> None:
    st.subheader("Sampling")
    st.toggle("Model's default temperature", value=True, key=S.TEMPERATURE_DEFAULT)
    if not state.get(S.TEMPERATURE_DEFAULT):
        st.slider("Temperature", 0.0, 2.0, 0.7, 0.05, key=S.TEMPERATURE_VALUE)


def _database() -> None:
    with st.expander("Database"):
        st.caption(f"Runs are saved to `{masked(resources.db_url())}`.")
        new = st.text_input(
            "SQLAlchemy URL for this session", placeholder="postgresql+psycopg://user@host/db", key=S.DB_URL_INPUT
        ).strip()
        if new and new != state.get(S.DB_URL):
            try:
                get_engine(new)
            except StorageError as exc:  # a bad path or URL, a foreign or damaged file: one line saying what to do
                st.error(f"Could not open that database: {exc}")
            except Exception as exc:  # anything else (an unreachable server): keep the current database
                st.error(f"Could not open that database: {type(exc).__name__}: {redact(str(exc))}")
            else:
                state.put(S.DB_URL, new)
                st.rerun()

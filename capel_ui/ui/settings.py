"""The shared sidebar and what it decides: model, key (session only), temperature, database.

Keys live in `st.session_state` for the session and are handed to the `openai` client when a backend is
built; they are never part of a ModelChoice, a saved run, a log line or an export.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from sqlalchemy.engine import Engine, make_url
from streamlit.navigation.page import StreamlitPage

from ..backends import (
    EMBEDDED_MODEL,
    PROVIDERS,
    Backend,
    Capabilities,
    Provider,
    ServerHandle,
    capabilities_for,
    get_backend,
    start_server,
)
from ..storage import database_url, get_engine

_shell = threading.local()


def run_page(page: StreamlitPage) -> None:
    """Run the selected page inside app.py's shell (sidebar, layout); see `ensure_shell`."""
    _shell.active = True
    try:
        page.run()
    finally:
        _shell.active = False


def ensure_shell() -> None:
    """Hand a page that Streamlit ran directly back to app.py.

    With a `pages/` folder beside app.py, a fresh server treats a bookmarked page (say /history) in legacy
    multipage mode and runs the page file alone, without app.py's sidebar, until `st.navigation` has run
    once in the process. Clearing that legacy flag (exactly what `st.navigation` does) and rerunning makes
    Streamlit run app.py, which routes to the same page.
    """
    if getattr(_shell, "active", False):
        return
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False
    st.rerun()


@dataclass(frozen=True)
class ModelChoice:
    """Which model to call; deliberately holds no key."""

    provider: Provider
    model: str
    base_url: str | None = None
    grammar_field: str | None = None

    @property
    def label(self) -> str:
        if self.provider == "embedded":
            return "SmolLM2-135M (embedded)"
        if self.provider == "gguf":
            return Path(self.model).name
        return f"{self.model} · {PROVIDERS[self.provider].label}"

    @property
    def capabilities(self) -> Capabilities:
        return capabilities_for(self.provider, self.model, self.grammar_field)


EMBEDDED = ModelChoice("embedded", EMBEDDED_MODEL)


def secret(name: str) -> str | None:
    """Streamlit secrets, then the environment. With no secrets file even `.get` raises, hence the guard."""
    try:
        value = st.secrets.get(name)
    except Exception:
        value = None
    return str(value) if value else os.environ.get(name) or None


def api_key(provider: Provider) -> str | None:
    """The key typed for this session, else secrets/environment under the provider's variable name."""
    typed = st.session_state.get(f"key_{provider}")
    if typed:
        return typed
    env = PROVIDERS[provider].key_env
    return secret(env) if env else None


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    return get_engine(url)


def db_url() -> str:
    return st.session_state.get("db_url") or database_url()


def engine() -> Engine:
    """The database engine for this session's DATABASE_URL, created and migrated once per process."""
    return _engine(db_url())


@st.cache_resource(show_spinner="Starting the embedded model…")
def _server(path: str | None) -> ServerHandle:
    return start_server(path)


def build_backend(choice: ModelChoice) -> Backend:
    """A backend for the choice, with this session's key; raises BackendError saying what to do."""
    if choice.provider in ("embedded", "gguf"):
        _server(None if choice.provider == "embedded" else choice.model)
    return get_backend(
        choice.model,
        provider=choice.provider,
        base_url=choice.base_url,
        api_key=api_key(choice.provider),
        grammar_field=choice.grammar_field,
    )


def model_choice() -> ModelChoice:
    return st.session_state.get("model_choice", EMBEDDED)


def temperature() -> float | None:
    value = st.session_state.get("temperature_value")
    return None if st.session_state.get("temperature_default", True) else value


def masked(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(unparsable URL)"


def sidebar() -> None:
    """The shared settings, drawn on every page (called from app.py before the page runs)."""
    with st.sidebar:
        st.subheader("Model")
        names: list[Provider] = list(PROVIDERS)
        provider: Provider = st.selectbox("Provider", names, format_func=lambda p: PROVIDERS[p].label, key="provider")
        spec = PROVIDERS[provider]
        base_url = None
        grammar_field = None
        if provider == "embedded":
            model = EMBEDDED_MODEL
        elif provider == "gguf":
            model = st.text_input("GGUF file", placeholder="/path/to/model.gguf", key="gguf_path").strip()
        elif provider == "compatible":
            base_url = st.text_input("Base URL", value=spec.base_url or "", key="compat_url").strip() or None
            model = st.text_input("Model id", placeholder="e.g. qwen3:8b", key="compat_model").strip()
            field = st.selectbox(
                "Grammar support",
                ["none", "grammar", "structured_outputs", "guided_grammar"],
                key="compat_grammar",
                help="llama.cpp server: grammar. vLLM: structured_outputs (new) or guided_grammar (old).",
            )
            grammar_field = None if field == "none" else field
        else:
            options = [*spec.models, "other…"]
            picked = st.selectbox("Model", options, key=f"model_{provider}")
            model = st.text_input("Model id", key=f"custom_{provider}").strip() if picked == "other…" else picked
        if spec.note:
            st.caption(spec.note)
        if spec.key_env:
            st.text_input(
                "API key",
                type="password",
                key=f"key_{provider}",
                help=f"Kept for this browser session only; never saved. Or set {spec.key_env}.",
            )
            if not st.session_state.get(f"key_{provider}") and secret(spec.key_env):
                st.caption(f"Using {spec.key_env} from the environment.")
        if model:
            st.session_state["model_choice"] = ModelChoice(provider, model, base_url, grammar_field)
        else:
            st.session_state["model_choice"] = EMBEDDED
            st.caption("No model given yet: the embedded model is used.")

        st.subheader("Sampling")
        st.toggle("Model's default temperature", value=True, key="temperature_default")
        if not st.session_state.get("temperature_default", True):
            st.slider("Temperature", 0.0, 2.0, 0.7, 0.05, key="temperature_value")

        with st.expander("Database"):
            st.caption(f"Runs are saved to `{masked(db_url())}`.")
            new = st.text_input(
                "SQLAlchemy URL for this session", placeholder="postgresql+psycopg://user@host/db", key="db_url_input"
            ).strip()
            if new and new != st.session_state.get("db_url"):
                try:
                    _engine(new)
                except Exception as exc:  # bad URL or unreachable server: keep the current database
                    st.error(f"Could not open that database: {type(exc).__name__}: {exc}")
                else:
                    st.session_state["db_url"] = new
                    st.rerun()

"""Shared fixtures. Add new ones below; keep each one small and say what it stands for."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest

from capel_ui.backends import Backend, get_backend, registry
from capel_ui.backends.probe import clear_cache as clear_probe_cache
from tests.scripted_server import ScriptedServer

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest


@pytest.fixture(autouse=True)
def _database_in_tmp(tmp_path, monkeypatch) -> None:
    """No test touches data/: the History database is a SQLite file in the test's own folder."""
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'capel.db'}")


@pytest.fixture(autouse=True)
def _fresh_probe_cache() -> Iterator[None]:
    """No test sees another's probe answer: the cache per (URL, model, field) lives as long as the process."""
    clear_probe_cache()
    yield
    clear_probe_cache()


class SecretsFiles(NamedTuple):
    home: Path  # stands for ~/.streamlit/secrets.toml
    project: Path  # stands for the project's .streamlit/secrets.toml


@pytest.fixture(autouse=True)
def secrets(tmp_path, monkeypatch) -> SecretsFiles:
    """No test reads the machine's real secrets.toml files: both places are empty files-to-be in the test's folder.

    Write one (`secrets.project.write_text(...)`) to test what a key in secrets.toml does.
    """
    files = SecretsFiles(tmp_path / "home" / "secrets.toml", tmp_path / "project" / "secrets.toml")
    for path in files:
        path.parent.mkdir()
    monkeypatch.setattr(registry, "secrets_files", lambda: tuple(files))
    return files


@pytest.fixture(scope="session")
def scripted_session() -> Iterator[list[ScriptedServer]]:
    """The scripted server of this test process, in a list of one (tests take `scripted`, which resets it for
    them, and starts a new one after a test stopped it to stand for an unreachable server)."""
    servers = [ScriptedServer().start()]
    yield servers
    servers[0].stop()


@pytest.fixture
def scripted(scripted_session: list[ScriptedServer]) -> Iterator[ScriptedServer]:
    """An OpenAI-compatible stand-in for a remote vendor, as if fresh: no script, nothing received; give it a
    script with `.script(...)`. Answers still in progress when the test ends are released."""
    if scripted_session[0].stopped:
        scripted_session[0] = ScriptedServer().start()
    server = scripted_session[0]
    yield server.reset()
    server.reset()


@pytest.fixture(scope="session")
def embedded() -> Backend:
    """The embedded SmolLM2-135M behind llama.cpp's server (started once per test process; it must run)."""
    return get_backend("embedded")


APP_PATH = Path(__file__).resolve().parent.parent / "app.py"


@pytest.fixture
def app_test() -> AppTest:
    """A fresh AppTest of app.py (first run done): a new visitor on Write, embedded model, empty database."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP_PATH), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at

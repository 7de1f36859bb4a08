"""Shared fixtures. Add new ones below; keep each one small and say what it stands for."""
# ruff: noqa: E402 (bytecode is allowed before the project is imported, below)

from __future__ import annotations

import os
import sys

# pytest keeps its assertion rewrite of a test module only where bytecode may be written: under
# PYTHONDONTWRITEBYTECODE=1 (set on some machines) every worker rewrote every test module on every run, about 10 s
# of CPU per process before the first test. The suite writes bytecode (git-ignored __pycache__) whatever the
# environment says, from here on (before this file imports the project); the CLI and streamlit processes it
# starts then read this project's modules compiled.
sys.dont_write_bytecode = False

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

from capel_ui.backends import Backend, ScriptedBackend, get_backend, registry, staged
from capel_ui.backends.probe import clear_cache as clear_probe_cache
from tests.scripted_hub import ScriptedHub
from tests.scripted_server import ScriptedServer
from tests.xdist_groups import name_the_group

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

    from tests.test_browser import Server

if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    # Each worker runs its own embedded model (and the browser tests' streamlit one): llama.cpp's threads on every
    # core in each process would spin against each other. One thread each (embedded.py) keeps them all fast.
    os.environ.setdefault("CAPEL_EMBEDDED_THREADS", "1")

# A failed request is retried after 0.5, 1, 2 s for users; the tests that are about the waits pass their own backoff
# to the guard, the rest (a server stopped on purpose, a 500 scripted three times) need not sit through them.
os.environ.setdefault("CAPEL_RETRY_BACKOFF", "0.01")

# A command leaves its model loaded for the next one (backends/resident.py): a server that outlives the test that
# started it and is shared by the workers' processes. Tests start their own, as before; tests/test_startup.py turns
# it on in a cache folder of its own and stops what it started.
os.environ.setdefault("CAPEL_RESIDENT", "0")

XDIST_GROUPS = {
    "test_storage_postgres.py": "postgres",
    "test_forkserver.py": "warm",  # one warm process for the file's commands
    "test_browser.py": "browser-a",
    **dict.fromkeys(
        (
            "test_browser_layout.py",
            "test_browser_presets.py",
            "test_browser_vendors.py",
            "test_batch_browser.py",
        ),
        "browser-b",
    ),
}
"""Tests that share a costly session fixture run in one pytest-xdist worker: the PostgreSQL ones (one throwaway
cluster), the commands started warm (one warm process), and the browser walks in two halves of about equal time.
Each worker that gets a walk starts its own `streamlit run` and chromium (about 5 s of CPU), and that streamlit its
own embedded model for the walks on it: in two workers, not three, and two walks at once, not three (three streamlit
servers, three chromiums and the workers' models on 2 cores made every walk take twice its time). The third worker
runs the rest meanwhile."""


SLOW_FIRST = ("model", "browser")
"""Markers of the tests that take seconds each, run first. pytest-xdist's `loadgroup` hands each worker the next
test in collection order as it runs dry: a 20 s model test collected last (test_presets_embedded.py sorts late)
kept one worker busy while the others had finished. Started first, the long tests overlap the short ones."""


def _slowness(item: pytest.Item) -> float:
    """Model tests, then browser walks, then the other groups (each one work unit: the word-list grammars took 40 s
    on the last worker when scheduled at the end), then the rest."""
    slow = next((i for i, mark in enumerate(SLOW_FIRST) if item.get_closest_marker(mark)), len(SLOW_FIRST))
    return slow if slow < len(SLOW_FIRST) or not item.get_closest_marker("xdist_group") else len(SLOW_FIRST) - 0.5


QUICK = frozenset(
    [
        "test_verdict.py",
        "test_metrics.py",
        "test_counting.py",
        "test_counting_chars.py",
        "test_counting_platforms.py",
        "test_units.py",
        "test_modes.py",
        "test_prompts.py",
        "test_quality.py",
        "test_quality_rules.py",
        "test_layers.py",
        "test_shape.py",
        "test_docs.py",
        "test_redact.py",
        "test_ui_state.py",
        "test_export.py",
        "test_variants.py",
        "test_render.py",
        "test_runs.py",
        "test_service.py",
        "test_words_back.py",
        "test_providers.py",
        "test_backends.py",
        "test_grammar_syntaxes.py",
        "test_batch_input.py",
        "test_storage_faults.py",
        "test_storage_upgrade.py",
    ]
)
"""The quick selection a developer runs while editing (`pytest -m quick`, under a minute on 2 cores): the core's
tables (counting, verdict, modes, prompts, quality rules, grammar syntaxes), the layers and shape checks, the
generated documents, storage faults and upgrades, exports. No model, no browser, no page. CI runs everything."""


@pytest.hookimpl(tryfirst=True)  # before `-m` selects: `-m "not model"` leaves out every test on the model
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in QUICK and not item.get_closest_marker("model"):
            item.add_marker(pytest.mark.quick)
        if "embedded" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("model"):
            item.add_marker(pytest.mark.model)  # runs the model, marked or not: started first with the others
        group = XDIST_GROUPS.get(item.path.name)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
        name_the_group(config, item)  # what pytest-xdist 3.8 no longer manages on pytest 9.2
    items.sort(key=_slowness)  # stable: the same order on every worker, files in order within each kind


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


@pytest.fixture
def scripted_model() -> Iterator[ScriptedBackend]:
    """The in-process scripted model that `get_backend("scripted")` returns: give it replies with `.reply(...)`,
    read what was sent in `.requests`. For tests that are not about a wire format (no server, no port)."""
    with staged(ScriptedBackend()) as model:
        yield model


@pytest.fixture(scope="session")
def embedded() -> Backend:
    """The embedded SmolLM2-135M behind llama.cpp's server (started once per test process; it must run)."""
    return get_backend("embedded")


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`streamlit run app.py` for the browser tests, started once per session with its own SQLite database."""
    from tests.test_browser import streamlit_server

    with streamlit_server(tmp_path_factory.mktemp("streamlit")) as server:
        yield server


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """Debian's chromium under playwright, launched once per session (each test opens its own context)."""
    from tests.test_browser import launched_chromium

    with launched_chromium() as browser:
        yield browser


APP_PATH = Path(__file__).resolve().parent.parent / "app.py"


@pytest.fixture
def app_test() -> AppTest:
    """A fresh AppTest of app.py (first run done): a new visitor on Write, embedded model, empty database."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP_PATH), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def variants_box(at: AppTest):
    """Write's Variants box, found by its label: it is keyed by its default until the writer sets a number
    (write._variant_settings)."""
    [box] = [n for n in at.number_input if n.label == "Variants"]
    return box


@pytest.fixture
def hub(tmp_path: Path, monkeypatch) -> Iterator[ScriptedHub]:
    """The scripted Hugging Face Hub on 127.0.0.1 (HF_ENDPOINT), with a models folder of the test's own."""
    server = ScriptedHub().start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("CAPEL_MODELS_DIR", str(tmp_path / "models"))
    yield server
    server.stop()

"""Keys typed in the sidebar stay, per provider, for the session (never in the database), and once two vendors'
keys are set Compare's "One model per vendor" lines them up and runs them, here against scripted vendors that
check bodies as the real ones do."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.backends import registry
from capel_ui.storage import get_engine, list_runs
from tests.scripted_server import ScriptedServer, answer, countdown, ok
from tests.scripted_vendors import VENDORS

ENVS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY",
        "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY")  # fmt: skip
OPENAI_KEY, CLAUDE_KEY = "sk-typed-openai-0001", "sk-ant-typed-0002"


@pytest.fixture
def keyless(monkeypatch) -> None:
    """No key but the ones typed: none in the environment, none in secrets files."""
    for env in ENVS:
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setattr(registry, "secrets_files", lambda: ())


def type_key(at: AppTest, provider: str, key: str) -> None:
    at.selectbox(key="provider").set_value(provider).run()
    at.text_input(key=f"key_{provider}").input(key).run()


def test_keys_typed_for_two_providers_both_stay_across_switches(app_test: AppTest, keyless) -> None:
    type_key(app_test, "openai", OPENAI_KEY)
    type_key(app_test, "anthropic", CLAUDE_KEY)
    app_test.selectbox(key="provider").set_value("gemini").run()
    app_test.selectbox(key="provider").set_value("openai").run()
    assert app_test.text_input(key="key_openai").value == OPENAI_KEY
    app_test.selectbox(key="provider").set_value("anthropic").run()
    assert app_test.text_input(key="key_anthropic").value == CLAUDE_KEY
    assert not app_test.exception


def test_one_model_per_vendor_appears_once_two_keys_are_typed(app_test: AppTest, keyless) -> None:
    def offered(at: AppTest) -> bool:
        at.switch_page("app_pages/compare.py").run()
        return any(b.label == "One model per vendor" for b in at.button)

    type_key(app_test, "openai", OPENAI_KEY)
    assert not offered(app_test)
    type_key(app_test, "anthropic", CLAUDE_KEY)
    assert offered(app_test)


def vendor_answer(body: dict) -> object:
    """gpt-4.1's exact column through its JSON-schema pattern, every other column a CAPEL countdown of 3."""
    if "response_format" in body:
        return ok(json.dumps({"text": "Harbour lights blink."}))
    return ok(countdown(3))


def test_one_model_per_vendor_runs_the_typed_vendors_side_by_side(
    app_test: AppTest, keyless, monkeypatch, scripted: ScriptedServer
) -> None:
    claude = ScriptedServer().start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", scripted.url)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        scripted.as_vendor(VENDORS["openai"]).script(then=answer(vendor_answer))
        claude.as_vendor(VENDORS["anthropic"]).script(then=answer(vendor_answer))
        type_key(app_test, "openai", OPENAI_KEY)
        type_key(app_test, "anthropic", CLAUDE_KEY)
        at = app_test.switch_page("app_pages/compare.py").run()
        next(b for b in at.button if b.label == "One model per vendor").click().run()
        lineup = at.multiselect(key="c_models").value
        assert lineup[0].provider == "embedded"
        assert {m.provider for m in lineup} == {"embedded", "openai", "anthropic"}
        at.multiselect(key="c_models").set_value(lineup[1:]).run()  # the vendors only (the embedded model is slow)
        at.text_area(key="c_instruction").input("Write about a harbour at night.")
        at.number_input(key="c_target").set_value(3).run()
        next(b for b in at.button if b.label == "Run comparison").click().run()
        assert not at.exception, at.exception
        assert not at.error, [e.value for e in at.error]
        runs = list_runs(get_engine())
        assert sorted((r.backend, r.mode, r.verified) for r in runs) == [
            ("anthropic", "capel", True),
            ("openai", "exact", True),
        ]
        assert [r.key for r in scripted.chat_requests] == [OPENAI_KEY]
        assert [r.key for r in claude.chat_requests] == [CLAUDE_KEY]
        database = Path(os.environ["DATABASE_URL"].removeprefix("sqlite:///")).read_bytes()
        assert OPENAI_KEY.encode() not in database and CLAUDE_KEY.encode() not in database
    finally:
        claude.stop()

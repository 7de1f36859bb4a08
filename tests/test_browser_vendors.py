"""Three vendors side by side in the browser: OpenAI (key from the environment), Anthropic and Gemini (keys typed
in the sidebar, which stay across provider switches), each a scripted vendor that checks bodies as the real one
does; Compare's "One model per vendor" lines them up beside the embedded model, and they run side by side. Screenshots:
test-artifacts/vendors-*.png."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from capel_ui.storage import get_engine, list_runs
from tests.scripted_server import ScriptedServer, answer, countdown, ok
from tests.scripted_vendors import VENDORS
from tests.test_browser import (
    FAKE_KEY,
    MODEL_TIMEOUT,
    PAGE_TIMEOUT,
    VIEWPORT,
    a_bookmarked_page_opened_first_has_the_app_navigation_and_sidebar,
    go_to,
    pick,
    screenshot,
    set_number,
    settle,
    streamlit_server,
)

pytestmark = pytest.mark.browser
CLAUDE_KEY, GEMINI_KEY = "sk-ant-typed-browser-0002", "gm-typed-browser-0003"
EMBEDDED = "SmolLM2-135M (embedded)"
LINED_UP = ("gpt-4.1 (OpenAI)", "claude-sonnet-5-5 (Anthropic (Claude))", "gemini-3.8-flash (Google (Gemini))")


def vendor_answer(body: dict) -> object:
    """gpt-4.1's exact column through its JSON-schema pattern, every other column a CAPEL countdown of 3."""
    if "response_format" in body:
        return ok(json.dumps({"text": "Harbour lights blink."}))
    return ok(countdown(3))


@pytest.fixture
def vendors(monkeypatch, tmp_path, chromium):
    servers = {name: ScriptedServer().start() for name in ("openai", "anthropic", "gemini")}
    for name, server in servers.items():
        server.as_vendor(VENDORS[name]).script(then=answer(vendor_answer))
        monkeypatch.setenv(f"{name.upper()}_BASE_URL", server.url)
    for env in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "DEEPSEEK_API_KEY",
                "OPENROUTER_API_KEY"):  # fmt: skip
        monkeypatch.delenv(env, raising=False)
    try:
        with streamlit_server(tmp_path) as app:
            context = chromium.new_context(viewport=VIEWPORT)
            context.set_default_timeout(PAGE_TIMEOUT)
            yield app, context.new_page(), servers
            context.close()
    finally:
        for server in servers.values():
            server.stop()


def type_key(page, provider_label: str, key: str) -> None:
    pick(page, "Provider", provider_label)
    box = page.get_by_label("API key", exact=True)
    box.fill(key)
    box.press("Enter")
    settle(page)


def test_one_model_per_vendor_runs_three_scripted_vendors_side_by_side(vendors) -> None:
    """Its server is fresh: the first page opened is a bookmarked History, which must have the app's navigation and
    sidebar (test_browser.py's check, run here on this server rather than on one started for it alone)."""
    app, page, servers = vendors
    a_bookmarked_page_opened_first_has_the_app_navigation_and_sidebar(page, app.url)
    go_to(page, "Write")  # from the bookmarked History, as a writer would (opening the app anew took 5 s of CPU)
    type_key(page, "Anthropic (Claude)", CLAUDE_KEY)
    type_key(page, "Google (Gemini)", GEMINI_KEY)
    pick(page, "Provider", "Anthropic (Claude)")
    expect(page.get_by_label("API key", exact=True)).to_have_value(CLAUDE_KEY)  # still there after a switch
    screenshot(page, "vendors-keys-kept")
    go_to(page, "Compare")
    page.get_by_label("Instruction", exact=True).fill("Write about a harbour at night.")
    set_number(page, "Target length", 3)
    page.get_by_role("button", name="One model per vendor").click()
    settle(page)
    models = page.get_by_test_id("stMultiSelect").filter(has_text="Models")
    for name in (EMBEDDED, *LINED_UP):  # the embedded model beside the first model of each vendor
        expect(models.get_by_label(f"Remove {name}", exact=True)).to_have_count(1)
    screenshot(page, "vendors-lineup")
    # The vendors run side by side without the embedded model: its column on this fresh server loaded and ran the
    # model (10 s of CPU); Compare's embedded columns are test_browser.py's and test_browser_layout.py's.
    models.get_by_label(f"Remove {EMBEDDED}", exact=True).click()
    settle(page)
    page.get_by_role("button", name="Run comparison").click()
    page.get_by_text(re.compile(r"^exactly 3 English words.* · 3 column")).wait_for(timeout=MODEL_TIMEOUT)
    settle(page)
    screenshot(page, "vendors-side-by-side")
    main = page.get_by_test_id("stMain")
    for name in LINED_UP:
        expect(main.get_by_text(name).first).to_be_visible()
    assert [r.key for r in servers["openai"].chat_requests] == [FAKE_KEY]
    assert [r.key for r in servers["anthropic"].chat_requests] == [CLAUDE_KEY]
    assert [r.key for r in servers["gemini"].chat_requests] == [GEMINI_KEY]
    runs = list_runs(get_engine(app.database_url), origin="compare")
    assert {(r.backend, r.verified) for r in runs if r.backend != "embedded"} == {
        ("openai", True),
        ("anthropic", True),
        ("gemini", True),
    }
    database = app.database_url.removeprefix("sqlite:///")
    with open(database, "rb") as f:
        stored = f.read()
    assert CLAUDE_KEY.encode() not in stored and GEMINI_KEY.encode() not in stored

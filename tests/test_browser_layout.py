"""Layout at the sizes writers use (issue 21): Compare with five columns on a 1280×720 screen, History's table and
filters, and the Write page on a phone (390×844). Screenshots go to test-artifacts/.

Uses the server, browser and page fixtures of test_browser.py (the session's one server and database) and the
scripted OpenAI-compatible server beside the embedded model (three-word texts: a few seconds of model time).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.scripted_server import ok
from tests.test_browser import (  # noqa: F401 (fixtures)
    MODEL_TIMEOUT,
    PAGE_TIMEOUT,
    Server,
    browser,
    go_to,
    open_app,
    screenshot,
    server,
    set_number,
    settle,
    small_page,
    use_scripted_server,
)

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
CUT = """els => els.filter(e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)
                  .map(e => e.innerText)"""
"""The texts among `els` that do not fit their box (shown cut, or as "U." for "Use this")."""


@pytest.fixture
def phone(browser, server: Server):
    """A new visitor on a phone-sized screen."""
    context = browser.new_context(viewport=PHONE, accept_downloads=True, is_mobile=True, has_touch=True)
    context.set_default_timeout(PAGE_TIMEOUT)
    p = context.new_page()
    yield p
    context.close()


def test_five_compare_columns_keep_their_figures_and_buttons_whole_at_1280_px(small_page, server, scripted) -> None:
    page = small_page
    open_app(page, server.url)
    use_scripted_server(page, scripted.url)
    scripted.script(then=ok("<1> Hi. <0>"))
    go_to(page, "Compare")
    page.get_by_label("Instruction", exact=True).fill("Say hi.")
    set_number(page, "Target length", 1)  # one word: the embedded model's columns take a second or two
    page.get_by_role("combobox", name=re.compile("^Models")).click()
    page.get_by_role("option", name="SmolLM2-135M (embedded)").click()
    page.keyboard.press("Escape")
    settle(page)
    page.get_by_role("button", name="Run comparison").click()  # 2 models × Baseline, CAPEL, Exact; one skipped
    page.get_by_text(re.compile(r"^exactly 1 English word.* · 5 column")).wait_for(timeout=MODEL_TIMEOUT)
    settle(page)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_role("button", name="Use this")).to_have_count(5)
    main.get_by_role("button", name="Use this").last.scroll_into_view_if_needed()
    screenshot(page, "compare-five-columns-1280")
    buttons = main.locator("button").filter(has_text=re.compile(r"^(Use this|\.txt|Copy)$"))
    assert buttons.evaluate_all(CUT) == []
    metrics = main.get_by_test_id("stMetricValue")
    assert metrics.evaluate_all(CUT) == []  # "2.1 s", never "2…"
    boxes = [box for b in buttons.all() if (box := b.bounding_box())]
    assert len(boxes) >= 10  # .txt and Use this in each column (Copy draws in its own frame)
    for i, a in enumerate(boxes):  # no button sits on another (Copy under the download icon)
        for b in boxes[i + 1 :]:
            apart = a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
            assert apart or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"]


def test_history_shows_the_text_in_view_and_keeps_its_filters(small_page, server) -> None:
    page = small_page
    open_app(page, server.url, "/history", heading="History")
    page.get_by_label("Search text", exact=True).fill("three")
    page.get_by_label("Search text", exact=True).press("Enter")
    settle(page)
    go_to(page, "Write")
    go_to(page, "History")
    expect(page.get_by_label("Search text", exact=True)).to_have_value("three")
    screenshot(page, "history-1280")  # the table is canvas-drawn: test_app.py checks its column order


def test_write_on_a_phone_puts_generate_within_the_first_two_screens(phone, server) -> None:
    open_app(phone, server.url)
    phone.get_by_role("button", name="Generate", exact=True).wait_for()
    settle(phone)
    screenshot(phone, "write-phone")
    generate = phone.get_by_role("button", name="Generate", exact=True)
    box = generate.bounding_box()
    assert box is not None and box["y"] < 2 * PHONE["height"], box


def test_write_at_1280_by_720_shows_generate_without_scrolling(small_page, server) -> None:
    open_app(small_page, server.url)
    generate = small_page.get_by_role("button", name="Generate", exact=True)
    screenshot(small_page, "write-1280")
    box = generate.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 720, box  # whole, not an edge

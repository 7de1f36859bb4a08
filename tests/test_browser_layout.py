"""Layout at the sizes writers use (issue 21): Compare with five columns on a 1280×720 screen, the Write page on
1280×720 and on a phone (390×844): the form, a result and three variants (History's filters at 1280×720 are the
end of test_browser.py's writer's day). On the 1280×720 page of the form, History's Delete closes the run it
deleted and Write's target is as the writer left it after a visit to Compare. Screenshots go to test-artifacts/
(`whole_page` for a page taller than the screen).

Uses the server, browser and page fixtures of test_browser.py (the session's one server and database) and the
scripted OpenAI-compatible server beside the embedded model (three-word texts: a few seconds of model time).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from capel_ui.presets import PRESETS
from capel_ui.storage import get_engine, get_run
from tests.saved_runs import save_parsed_run
from tests.scripted_server import ok
from tests.test_browser import (  # noqa: F401 (fixtures)
    MODEL_TIMEOUT,
    PAGE_TIMEOUT,
    VARIANTS,
    Server,
    as_countdown,
    browser,
    find_in_history,
    go_to,
    hand_out_anyway,
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
PRESET_EXAMPLE = {p.name: p.example for p in PRESETS}
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
    texts = main.locator(".capel-text").count()  # a column with no text (the embedded CAPEL column's countdown
    assert texts >= 3  # may hold markers only) has no actions; the scripted columns and Exact always have a text
    hand_out_anyway(page)  # a junk text waits for the writer's say-so
    expect(main.get_by_role("button", name="Use this")).to_have_count(texts)
    main.get_by_role("button", name="Use this").last.scroll_into_view_if_needed()
    screenshot(page, "compare-five-columns-1280")
    buttons = main.locator("button").filter(has_text=re.compile(r"^(Use this|\.txt|Copy)$"))
    assert buttons.evaluate_all(CUT) == []
    metrics = main.get_by_test_id("stMetricValue")
    assert metrics.evaluate_all(CUT) == []  # "2.1 s", never "2…"
    boxes = [box for b in buttons.all() if (box := b.bounding_box())]
    assert len(boxes) >= 2 * texts  # .txt and Use this in each column with a text (Copy draws in its own frame)
    for i, a in enumerate(boxes):  # no button sits on another (Copy under the download icon)
        for b in boxes[i + 1 :]:
            apart = a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
            assert apart or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"]


def main_height(page) -> int:
    """How tall the page is: the app scrolls inside its main area, so the body is only as tall as the window."""
    return page.get_by_test_id("stMain").evaluate("e => e.scrollHeight")


def whole_page(page, name: str) -> None:
    """A screenshot of the whole page, the window made as tall as the page for a moment."""
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": main_height(page)})
    settle(page)
    screenshot(page, name)
    page.set_viewport_size(size)
    settle(page)


def preset_rows(page) -> float:
    """How many rows of pills the quick presets take: their height under the label, in pills."""
    group = page.get_by_test_id("stButtonGroup").filter(has_text=PRESETS[0].name)
    box, label = group.bounding_box(), group.get_by_test_id("stWidgetLabel").bounding_box()
    pill = group.locator("button").first.bounding_box()
    assert box and label and pill
    return (box["height"] - label["height"]) / pill["height"]


def phone_shows_the_presets_in_one_row_and_generate_on_the_first_screen(phone) -> None:
    """The Write form on a phone, as opened (before any run): the first part of the phone walk below."""
    phone.get_by_role("button", name="Generate", exact=True).wait_for()
    settle(phone)
    screenshot(phone, "write-phone")
    assert preset_rows(phone) < 1.5  # seven rows before: half the first screen
    generate = phone.get_by_role("button", name="Generate", exact=True)
    box = generate.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["height"], box  # whole, without scrolling

    last = phone.get_by_text(PRESETS[-1].name, exact=True)  # off the screen's edge: the row scrolls sideways
    last.scroll_into_view_if_needed()
    last.click()
    settle(phone)
    expect(phone.get_by_label("Target length", exact=True)).to_have_value(str(PRESETS[-1].number))
    screenshot(phone, "write-phone-last-preset")


def use_scripted_server_on_a_phone(page, url: str) -> None:
    """Open the sidebar (a phone hides it), point it at the scripted server, and close it again."""
    page.get_by_test_id("stExpandSidebarButton").click()
    use_scripted_server(page, url)
    page.get_by_test_id("stSidebarCollapseButton").click()
    settle(page)


RESULT_CEILING = 2100
"""px: the Write page with one run's result on a phone was 2,486 tall before it was made compact, 1,865 after."""
VARIANTS_CEILING = 2750
"""px: with three variants 3,804 before, 2,453 after."""


def test_write_on_a_phone_shows_the_presets_in_one_row_then_a_compact_result_and_three_variants_in_reach(
    phone, server, scripted
) -> None:
    """One phone walk (a page opened for each part took 10 s of chromium and streamlit): the form as opened, then a
    result and three variants."""
    open_app(phone, server.url)
    phone_shows_the_presets_in_one_row_and_generate_on_the_first_screen(phone)
    first = phone.get_by_text(PRESETS[0].name, exact=True)  # back to English words, exactly: the result's target
    first.scroll_into_view_if_needed()
    first.click()
    settle(phone)
    use_scripted_server_on_a_phone(phone, scripted.url)
    phone.get_by_label("Instruction", exact=True).fill("Write a headline for a seaside pub called The Whaler's Rest.")
    set_number(phone, "Target length", 12)
    set_number(phone, "Variants", 1)
    scripted.script(ok(as_countdown(VARIANTS[1])))
    phone.get_by_role("button", name="Generate", exact=True).click()
    phone.get_by_text("✓ exact · verified · 12/12 English words").wait_for()
    settle(phone)
    whole_page(phone, "write-phone-result")
    assert main_height(phone) <= RESULT_CEILING

    main = phone.get_by_test_id("stMain")
    downloads = main.get_by_role("button", name=re.compile(r"^Download \.(txt|md|json)$"))
    expect(downloads).to_have_count(3)
    tops = {round(b["y"]) for d in downloads.all() if (b := d.bounding_box())}
    assert len(tops) == 1, tops  # one row, not three full-width ones
    assert downloads.evaluate_all(CUT) == []  # each label whole
    copy, badge = (
        main.get_by_role("button", name="Copy", exact=True).bounding_box(),
        main.get_by_text("✓ exact · verified · 12/12 English words").bounding_box(),
    )
    assert copy and badge and copy["y"] < badge["y"] + badge["height"]  # Copy beside the verdict, not a row below
    with phone.expect_download() as download_info:
        downloads.last.click()
    assert download_info.value.suggested_filename.endswith(".json")

    set_number(phone, "Variants", 3)
    scripted.script(*(ok(as_countdown(t)) for t in VARIANTS))
    phone.get_by_role("button", name="Generate", exact=True).click()
    phone.get_by_text("3 variants, best first").wait_for()
    settle(phone)
    expect(phone.get_by_text("3 variants, best first")).to_be_in_viewport()  # scrolled to, below the form
    whole_page(phone, "write-phone-variants")
    assert main_height(phone) <= VARIANTS_CEILING
    expect(phone.get_by_text(re.compile(r"^#\d · score \d"))).to_have_count(3)
    expect(phone.get_by_text("Swipe for more →")).to_be_visible()  # the cards scroll sideways, and say so
    last = phone.get_by_role("button", name="Pick this one").last  # the third card, swiped to
    last.scroll_into_view_if_needed()
    last.click()
    settle(phone)
    expect(phone.locator(".capel-text").last).to_have_text(VARIANTS[0])  # the loop, ranked last, now picked
    screenshot(phone, "write-phone-variants-picked")


def test_at_1280_by_720_write_keeps_generate_in_view_then_history_deletes_a_run_and_writes_target_is_kept(
    small_page, server
) -> None:
    """One walk on 1280×720 (a page opened for each part took chromium and streamlit about 5 s of CPU): Write as
    opened and with three presets, then History's Delete, then Write's target across a visit to Compare."""
    open_app(small_page, server.url)
    write_at_1280_by_720_shows_generate_and_every_preset_and_keeps_generate_in_view_with_a_limit_a_unit_or_chinese(
        small_page
    )
    go_to(small_page, "History")
    deleting_a_run_closes_it_and_opens_no_other(small_page, server)
    go_to(small_page, "Write")
    writes_target_is_kept_across_a_visit_to_compare(small_page)


def write_at_1280_by_720_shows_generate_and_every_preset_and_keeps_generate_in_view_with_a_limit_a_unit_or_chinese(
    small_page,
) -> None:
    """On a 1280×720 screen, as opened, Generate and every preset are in view; then no CAPEL note under Mode pushes
    Generate below the fold (why CAPEL is not offered is the box's tooltip): three presets picked in turn on the
    same page (a page of its own for each took 6 s)."""
    generate = small_page.get_by_role("button", name="Generate", exact=True)
    generate.wait_for()
    settle(small_page)
    screenshot(small_page, "write-1280")
    box = generate.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 720, box  # whole, not an edge
    for preset in PRESETS:  # wrapped into rows as they fit: none hides in a row that scrolls
        expect(small_page.get_by_text(preset.name, exact=True)).to_be_in_viewport(ratio=1)

    for preset in ("SMS · 1 segment", "Weibo blurb · ≤ 140 字", "Google Ads headline · ≤ 30"):
        small_page.get_by_text(preset, exact=True).click()
        settle(small_page)
        expect(small_page.get_by_label("Instruction", exact=True)).to_have_value(PRESET_EXAMPLE[preset])
        generate = small_page.get_by_role("button", name="Generate", exact=True)
        box = generate.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 720, (preset, box)


def deleting_a_run_closes_it_and_opens_no_other(page, server: Server) -> None:
    """History's Delete closes the run it deleted, so a second click never lands on the next run's Delete (moved
    here from test_browser_kept.py, where it opened a page of its own). History is open."""
    engine = get_engine(server.database_url)
    older = save_parsed_run(engine, "<3> One <2> two <1> three <0>", 3, instruction="delete check")
    newer = save_parsed_run(engine, "<3> Four <2> five <1> six <0>", 3, instruction="delete check")
    find_in_history(page, "delete check", 2, newer)
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("button", name="Yes, delete").click()
    page.get_by_text(f"Run {newer} deleted.").wait_for()
    settle(page)
    page.get_by_text("1 run(s)", exact=True).wait_for()
    expect(page.get_by_role("heading", name=f"Run {older}")).to_have_count(0)  # the next run is not opened
    expect(page.get_by_role("button", name="Delete")).to_have_count(0)
    assert get_run(engine, newer) is None and get_run(engine, older) is not None


def writes_target_is_kept_across_a_visit_to_compare(page) -> None:
    """Write's target is as the writer left it after a visit to Compare (moved here from test_browser_kept.py).
    Write is open."""
    set_number(page, "Target length", 40)
    go_to(page, "Compare")
    go_to(page, "Write")
    expect(page.get_by_label("Target length", exact=True)).to_have_value("40")

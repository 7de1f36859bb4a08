"""The Batch page in chromium: upload a CSV, see what each row asks, write it, watch it finish, download it; on a
1280×720 screen and on a 390×844 phone (screenshots in test-artifacts/)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.scripted_server import ok
from tests.test_browser import PAGE_TIMEOUT, go_to, open_app, screenshot, settle, use_scripted_server

pytestmark = pytest.mark.browser

ROWS = (  # r1 says its mode: a word limit on a model without a grammar would be CAPEL's room countdown by default
    "id,instruction,target,unit,mode,shop\n"
    "r1,Write a headline for a seaside bookshop,at most 10,en_words,baseline,north\n"
    "r2,Write a slogan for a bakery,at most 40,chars,,south\n"
    "r3,Write a tagline for a bike shop,5,en_words,,east\n"
)


SCREENS = ({"width": 1280, "height": 720}, {"width": 390, "height": 844})


def test_a_writer_uploads_a_csv_writes_it_and_downloads_the_texts_on_a_screen_and_on_a_phone(
    chromium, app_server, scripted, tmp_path: Path
) -> None:
    """One walk (a page opened for each size took chromium and streamlit about 8 s of CPU): a batch on 1280×720,
    then the window made phone-sized and a second batch of its own."""
    scripted.script(then=ok(["Sea", " wind", " salt", " light."], delay=0.05))
    context = chromium.new_context(viewport=SCREENS[0], accept_downloads=True)
    context.set_default_timeout(PAGE_TIMEOUT)
    page = context.new_page()
    try:
        open_app(page, app_server.url)
        use_scripted_server(page, scripted.url)
        go_to(page, "Batch")
        for screen in SCREENS:
            page.set_viewport_size(screen)
            settle(page)
            write_a_batch(page, tmp_path, screen)
    finally:
        context.close()


def write_a_batch(page, tmp_path: Path, screen: dict[str, int]) -> None:
    collapse = page.get_by_test_id("stSidebarCollapseButton")
    if screen["width"] < 640 and collapse.is_visible():  # a phone: the sidebar out of the way
        collapse.click()
        settle(page)
    src = tmp_path / f"shop-{screen['width']}.csv"
    lines = ROWS.splitlines()
    own = [lines[0] + ",screen"] + [line + f",{screen['width']}" for line in lines[1:]]  # a batch of its own
    src.write_text("\n".join(own) + "\n", encoding="utf-8")
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(src))
    settle(page)
    expect(page.get_by_text("3 rows → 3 texts")).to_be_visible()
    screenshot(page, f"batch-preview-{screen['width']}")
    write = page.get_by_role("button", name="Write 3 texts")
    write.click()
    done = page.get_by_role("heading", name="2 of 3 verified")
    try:
        done.wait_for(timeout=20_000)
    except PlaywrightTimeout:  # under a loaded suite a click once went untaken: the button still there, no batch
        screenshot(page, f"batch-not-started-{screen['width']}")
        if write.is_visible() and page.get_by_role("button", name="Stop", exact=True).count() == 0:
            write.click()
    done.wait_for(timeout=120_000)  # r3 asks CAPEL's markers, which the scripted model does not write
    settle(page)
    expect(page.get_by_role("button", name="Stop", exact=True)).to_have_count(0)
    expect(page.get_by_role("button", name=re.compile("^Write"))).to_have_count(0)  # nothing left to write
    page.get_by_test_id("stDataFrame").last.scroll_into_view_if_needed()
    screenshot(page, f"batch-done-{screen['width']}")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV", exact=True).click()
    data = Path(info.value.path()).read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(data)))
    assert [r["id"] for r in rows] == ["r1", "r2", "r3"]
    assert [r["shop"] for r in rows] == ["north", "south", "east"]
    assert [r["text"] for r in rows][:2] == ["Sea wind salt light.", "Sea wind salt light."]
    assert [r["verified"] for r in rows] == ["true", "true", "false"]
    assert [r["screen"] for r in rows] == [str(screen["width"])] * 3

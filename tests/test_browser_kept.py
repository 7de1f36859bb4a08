"""In the browser (a real `streamlit run` and chromium): History's Delete closes the run it deleted, so a second
click never lands on the next run's Delete; Write's target is as the writer left it after a visit to Compare.
Uses the server, browser and page fixtures of test_browser.py (the session's one server and database)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from capel_ui.storage import get_engine, get_run
from tests.saved_runs import save_parsed_run
from tests.test_browser import (  # noqa: F401 (fixtures)
    Server,
    browser,
    go_to,
    open_history_run,
    page,
    select_first_row,
    server,
    set_number,
    settle,
)

pytestmark = pytest.mark.browser


def test_deleting_a_run_closes_it_and_writes_target_is_kept_across_a_visit_to_compare(
    page,  # noqa: F811
    server: Server,  # noqa: F811
) -> None:
    """One walk (a page opened for each took chromium and streamlit about 4 s of CPU): History's Delete, then Write's
    target across a visit to Compare."""
    deleting_a_run_closes_it_and_opens_no_other(page, server)
    go_to(page, "Write")
    writes_target_is_kept_across_a_visit_to_compare(page)


def deleting_a_run_closes_it_and_opens_no_other(page, server: Server) -> None:  # noqa: F811
    engine = get_engine(server.database_url)
    older = save_parsed_run(engine, "<3> One <2> two <1> three <0>", 3, instruction="delete check")
    newer = save_parsed_run(engine, "<3> Four <2> five <1> six <0>", 3, instruction="delete check")
    open_history_run(page, server.url, "delete check", 2, newer)
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("button", name="Yes, delete").click()
    page.get_by_text(f"Run {newer} deleted.").wait_for()
    settle(page)
    page.get_by_text("1 run(s)", exact=True).wait_for()
    expect(page.get_by_role("heading", name=f"Run {older}")).to_have_count(0)  # the next run is not opened
    expect(page.get_by_role("button", name="Delete")).to_have_count(0)
    assert get_run(engine, newer) is None and get_run(engine, older) is not None


def writes_target_is_kept_across_a_visit_to_compare(page) -> None:  # noqa: F811
    """Write is open."""
    set_number(page, "Target length", 40)
    go_to(page, "Compare")
    go_to(page, "Write")
    expect(page.get_by_label("Target length", exact=True)).to_have_value("40")

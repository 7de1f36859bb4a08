"""The app in a real browser: Debian's chromium driven by playwright against `streamlit run` on 127.0.0.1.

No browser is ever downloaded: playwright launches /usr/lib/chromium/chromium (`bash scripts/setup.sh --test`
installs it). One server per test session, its database shared by every browser test (test_browser_layout.py and
test_browser_presets.py too, in whatever order they run: a test finds its own runs by searching History); each test
opens a fresh browser context.
Screenshots of every page land in test-artifacts/ (git-ignored) at the repo root.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect, sync_playwright

from capel_ui.counting import count
from capel_ui.parser import check_output
from capel_ui.presets import PRESET_BY_KEY
from capel_ui.storage import get_engine, get_run, list_runs, update_run
from capel_ui.ui.views import HAND_OUT_ANYWAY
from capel_ui.variants import run_rank_key
from capel_ui.vocab import unit_label
from tests.saved_runs import save_parsed_run
from tests.scripted_server import MODEL, countdown, html_page, ok, stall_after

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/lib/chromium/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
VIEWPORT = {"width": 1400, "height": 2000}  # tall instead of full_page: the app scrolls inside its own container
MODEL_TIMEOUT = 240_000  # ms; the embedded model is shared with other test runs on this machine
PAGE_TIMEOUT = 60_000
FAKE_KEY = "sk-test-capel-browser-0000-must-never-appear"  # set in the server's environment: it must not leak


@dataclass(frozen=True)
class Server:
    url: str
    database_url: str
    log: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(folder: Path) -> Iterator[Server]:
    """`streamlit run app.py` from the repo root, its database in `folder`; stopped (and reaped) at the end."""
    port = _free_port()
    database_url = f"sqlite:///{folder / 'capel.db'}"
    log = folder / "streamlit.log"
    env = {**os.environ, "DATABASE_URL": database_url, "OPENAI_API_KEY": FAKE_KEY, "PYTHONUNBUFFERED": "1"}
    command = [
        str(Path(sys.executable).parent / "streamlit"),
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--server.fileWatcherType",
        "none",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not come up on {url}:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.3)
        yield Server(url, database_url, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def server(app_server: Server) -> Server:
    """The session's `streamlit run` (tests/conftest.py's `app_server`): its database is shared by the tests."""
    return app_server


@pytest.fixture
def browser(chromium):
    """The session's headless chromium (tests/conftest.py's `chromium`)."""
    return chromium


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """Debian's chromium under playwright, closed at the end."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `bash scripts/setup.sh --test` to install Debian's chromium.")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A new visitor: a fresh browser context (its own Streamlit session), downloads allowed."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(PAGE_TIMEOUT)
    p = context.new_page()
    yield p
    context.close()


def open_app(page, url: str, path: str = "/", heading: str = "Write") -> None:
    page.goto(url + path)
    page.get_by_role("heading", name=heading, exact=True).wait_for()
    settle(page)


def go_to(page, name: str) -> None:
    """Click a page in the sidebar navigation and wait for its title."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()
    page.get_by_role("heading", name=name, exact=True).wait_for()
    settle(page)


QUIET_MS = 200
"""How long the app must stay idle, once the server has answered everything the page sent."""
UNANSWERED_MS = 800
"""How long it must stay idle while a message the page sent has had no answer yet (the rerun it asked for may not
have started: the server answers a rerun within a few ms on a quiet machine, later on a loaded one)."""
SETTLED = f"""() => new Promise(done => {{
    const w = window;
    if (!w.__capelWire) {{  // when the page last sent a message and last heard from the server
        w.__capelWire = {{sent: 0, heard: 0}};
        const send = WebSocket.prototype.send;
        WebSocket.prototype.send = function (data) {{
            w.__capelWire.sent = performance.now();
            if (!this.__capelHeard) {{
                this.__capelHeard = true;
                this.addEventListener("message", () => {{ w.__capelWire.heard = performance.now(); }});
            }}
            return send.call(this, data);
        }};
    }}
    let since = performance.now();
    const tick = () => {{
        const now = performance.now(), wire = w.__capelWire;
        if (!document.querySelector("{IDLE}")) since = now;
        const quiet = now - Math.max(since, wire.heard);
        if (quiet >= (wire.heard >= wire.sent ? {QUIET_MS} : {UNANSWERED_MS})) done(true); else setTimeout(tick, 50);
    }};
    tick();
}})"""


def settle(page) -> None:
    """Wait until the app has been idle for a moment: the rerun a widget asks for can start a frame after the event,
    so an idle state seen at once may be the one before it (and its reply can then overwrite what the test typed).
    The page's WebSocket is watched (from the first settle on): once the server has answered the last message the
    page sent, 200 ms of quiet are enough; a message still unanswered keeps the wait going for 800 ms."""
    page.wait_for_function(SETTLED)


def set_number(page, label: str, value: int, tries: int = 3) -> None:
    """Type a number and press Enter. A rerun still under way when the box was filled redraws it with its old
    value (a loaded machine): type it again, as a user would."""
    box = page.get_by_label(label, exact=True)
    for _ in range(tries):
        before = box.input_value()
        box.fill(str(value))
        box.press("Enter")
        settle(page)
        if box.input_value() != before or before == str(value):  # taken (or clamped to the box's limit)
            return


def pick(page, label: str, option: str, tries: int = 3) -> None:
    """Choose an option of a st.selectbox by its visible label. A rerun that arrives late (a loaded machine) redraws
    the box and closes its list under the click: open it again, as a user would."""
    for attempt in range(tries):
        box = page.get_by_role("combobox", name=label, exact=True)
        box.scroll_into_view_if_needed()  # clicked while the page scrolls to it, the box takes focus but stays shut
        box.click()
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=10_000)
            break
        except PlaywrightTimeoutError:
            if attempt == tries - 1:
                raise
            page.keyboard.press("Escape")
            settle(page)
    settle(page)


def select_first_row(page) -> None:
    """Tick the row marker of the first data row of the (canvas-drawn) History table."""
    grid = page.get_by_test_id("stDataFrame")
    grid.get_by_test_id("data-grid-canvas").wait_for()
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 15, box["y"] + 35 + 17)  # below the 35px header row, in the marker column


def open_history_run(page, url: str, search_for: str, runs: int, run_id: int) -> None:
    """Open the app on History, search `search_for` and open the first row: run `run_id` (`find_in_history`)."""
    open_app(page, url)
    go_to(page, "History")
    find_in_history(page, search_for, runs, run_id)


def find_in_history(page, search_for: str, runs: int, run_id: int) -> None:
    """On History: search `search_for` (the session's database holds other tests' runs too), wait for `runs` rows
    and open the first: run `run_id`. A row ticked before stays ticked across a search, so the new first row may
    have opened by itself: it is ticked only when it has not (a second click would untick it)."""
    search = page.get_by_label("Search text", exact=True)
    search.fill(search_for)
    search.press("Enter")
    page.get_by_text(f"{runs} run(s)", exact=True).wait_for()
    settle(page)
    heading = page.get_by_role("heading", name=f"Run {run_id}", exact=True)
    if not heading.count():
        select_first_row(page)
    heading.wait_for()
    settle(page)


def hand_out_anyway(page) -> None:
    """Tick every "Copy or download it anyway" where the page holds a text it reads as junk back (issue 31; one on
    Write, one per such Compare column): the downloads and the rest of the run show only then."""
    for box in page.get_by_text(HAND_OUT_ANYWAY, exact=True).all():
        box.click()
        settle(page)


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_a_new_user_writes_a_verified_25_word_text_finds_it_in_history_then_picks_the_second_of_three_variants(
    page, server: Server, scripted
) -> None:
    """One walk (a page opened for each part took chromium and streamlit about 5 s of CPU): a new visitor's first
    text on the embedded model, downloaded and found in History; then, back on Write and on the scripted server,
    three variants ranked, the second picked and downloaded."""
    open_app(page, server.url)
    new_user_writes_a_verified_25_word_text_downloads_it_and_finds_it_in_history(page)
    go_to(page, "Write")
    use_scripted_server(page, scripted.url)
    writer_gets_three_ranked_variants_picks_the_second_and_downloads_the_pick(page, server, scripted)


def new_user_writes_a_verified_25_word_text_downloads_it_and_finds_it_in_history(page) -> None:
    """The first part of the walk above: Write as a new visitor opens it, the embedded model."""
    page.get_by_label("Instruction", exact=True).fill(
        "Write a headline about a seaside town that rebuilt its old lighthouse."
    )
    set_number(page, "Target length", 25)
    assert page.get_by_role("combobox", name="Mode", exact=True).input_value() == "Exact (guaranteed)"
    expect(page.get_by_label("Variants", exact=True)).to_have_value("3")  # the default for a short text
    set_number(page, "Variants", 1)
    expect(page.get_by_label("Variants", exact=True)).to_have_value("1")

    page.get_by_role("button", name="Generate", exact=True).click()
    page.get_by_text("✓ exact · verified · 25/25 English words").wait_for(timeout=MODEL_TIMEOUT)
    settle(page)
    screenshot(page, "write-verified")
    hand_out_anyway(page)  # a 135M model's headline may read as junk: the page asks before handing it out

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download .json").click()
    download = download_info.value
    assert download.suggested_filename.endswith(".json")
    content = Path(download.path()).read_text(encoding="utf-8")
    exported = json.loads(content)
    text = exported["text"]
    assert count(text, "en_words") == 25
    assert exported["verified"] is True
    assert (exported["target"], exported["count"], exported["unit"]) == (25, 25, "en_words")
    assert (exported["model"], exported["mode"], exported["status"]) == ("embedded", "exact", "complete")
    assert exported["sha256"] == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert not [k for k in exported if "key" in k.lower()]
    assert FAKE_KEY not in content and "Bearer" not in content
    assert page.locator(".capel-text").inner_text().strip() == text

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download .txt").click()
    assert Path(download_info.value.path()).read_text(encoding="utf-8") == text + "\n"

    go_to(page, "History")
    search = page.get_by_label("Search text", exact=True)  # the session's database holds other tests' runs too
    search.fill("seaside town that rebuilt its old lighthouse")
    search.press("Enter")
    settle(page)
    page.get_by_text("1 run(s)", exact=True).wait_for()
    select_first_row(page)
    page.get_by_role("heading", name=f"Run {exported['run_id']}").wait_for()
    settle(page)
    page.get_by_text("✓ exact · verified · 25/25 English words").wait_for()
    assert page.locator(".capel-text").inner_text().strip() == text
    assert FAKE_KEY not in page.content()
    screenshot(page, "history-run")


VARIANTS = (  # 12 words each, in the order the scripted server hands them out (the runs race for them)
    "Rest rest rest, the whaler rest, the whaler rest, the whaler rest.",  # a loop: junk, ranked last
    "The Whaler's Rest serves fresh local fish beside the quiet harbour tonight.",
    "Come in from the cold: ale, chowder and a seat by the",  # a dangling ending
)


def as_countdown(text: str, per_chunk: int = 1) -> list[str]:
    """`text` as a CAPEL countdown, `<N>word … <1>word<0>`, `per_chunk` markers and their words per chunk."""
    words = text.split()
    parts = [f"<{len(words) - i}>{w} " for i, w in enumerate(words)] + ["<0>"]
    return ["".join(parts[i : i + per_chunk]) for i in range(0, len(parts), per_chunk)]


def writer_gets_three_ranked_variants_picks_the_second_and_downloads_the_pick(page, server, scripted) -> None:
    """The second part of the walk above: Write open on the scripted server."""
    page.get_by_label("Instruction", exact=True).fill("Write a headline for a seaside pub called The Whaler's Rest.")
    set_number(page, "Target length", 12)
    set_number(page, "Variants", 3)
    # About 3 s each, seen as they stream: three markers a chunk (each chunk is a redraw in the browser)
    scripted.script(*(ok(as_countdown(t, per_chunk=3), delay=0.7) for t in VARIANTS))
    page.get_by_role("button", name="Generate", exact=True).click()
    page.get_by_text(re.compile(r"^3 variants · .* s of at most 600 s$")).wait_for()  # elapsed, and the limit
    expect(page.locator(".capel-live").nth(2)).to_contain_text(re.compile(r"[A-Za-z]{2}"))  # each one's words so far
    screenshot(page, "write-variants-streaming")
    page.get_by_text("3 variants, best first").wait_for()
    settle(page)
    screenshot(page, "write-variants")

    engine = get_engine(server.database_url)
    variants = [r for r in list_runs(engine) if r.origin == "variant"]  # the server's database is shared by the tests
    runs = [r for r in variants if r.group_id == max(variants, key=lambda r: r.id).group_id]  # this test's group
    assert len(runs) == 3 and len({r.group_id for r in runs}) == 1 and all(r.verified for r in runs)
    assert sorted(r.text for r in runs) == sorted(VARIANTS)
    expect(page.get_by_text(re.compile(r"^#\d · score \d"))).to_have_count(3)
    expect(page.get_by_role("button", name="Pick this one")).to_have_count(2)

    ranked = sorted(runs, key=run_rank_key, reverse=True)
    assert ranked[0].text == VARIANTS[1] and ranked[-1].text == VARIANTS[0]  # the loop is never best
    page.get_by_text(re.compile(rf"^Run {ranked[0].id} · variant")).wait_for()  # the best is picked at first
    assert page.locator(".capel-text").first.inner_text().strip() == VARIANTS[1]
    page.get_by_role("button", name="Pick this one").first.click()  # the second-ranked variant
    page.get_by_text(re.compile(rf"^Run {ranked[1].id} · variant")).wait_for()
    settle(page)
    expect(page.get_by_role("button", name="Pick this one")).to_have_count(2)
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download .json").click()
    exported = json.loads(Path(download_info.value.path()).read_text(encoding="utf-8"))
    assert exported["run_id"] == ranked[1].id and exported["text"] == ranked[1].text
    assert count(exported["text"], "en_words") == 12


def stop_ends_a_long_capel_run_and_keeps_it_in_history_as_cancelled(page, server, scripted) -> None:
    """Part of the writer's day below (Write open on the scripted server)."""
    page.get_by_label("Instruction", exact=True).fill("Write a long story about a lighthouse keeper and a storm.")
    set_number(page, "Target length", 300)
    pick(page, "Mode", "CAPEL")  # the default on this model (checked first in the day); the day's last run was Baseline
    expect(page.get_by_role("combobox", name="Mode", exact=True)).to_have_value("CAPEL")
    scripted.script(stall_after(countdown(300)[:20], seconds=300))  # a model counting down, then slow to go on

    page.get_by_role("button", name="Generate", exact=True).click()
    page.get_by_text(re.compile(r"English words left of 300")).wait_for()
    page.get_by_text(re.compile(r" · CAPEL · \d+ s of at most 600 s$")).wait_for()  # elapsed beside the limit
    page.get_by_role("button", name="Stop", exact=True).click()
    page.get_by_text("Stopped. What arrived is kept in History.").wait_for()
    settle(page)

    engine = get_engine(server.database_url)
    [run] = [r for r in list_runs(engine) if r.target == 300]
    assert (run.status, run.mode) == ("cancelled", "capel")
    assert run.text and run.count < 300  # what arrived before the Stop is kept
    expect(page.get_by_text("This run is cancelled")).to_have_count(1)  # the page says it is not verified
    assert page.get_by_text("✓ exact").count() == 0


def test_every_page_opens_and_history_shows_hostile_output_and_a_url_in_a_failure_as_text(page, server: Server) -> None:
    """One walk (a page opened for each part took chromium and streamlit about 5 s of CPU): every page opens and is
    captured; then two saved runs opened one after the other in History: a model's tags and markers shown as
    text, then a failure's URL that is no link."""
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_app(page, server.url)
    every_page_opens_in_the_browser_and_is_captured(page)
    go_to(page, "History")
    hostile_model_output_shows_as_text(page, server)
    assert dialogs == []
    a_url_in_a_servers_failure_text_is_not_a_link(page, server)
    assert dialogs == []


def hostile_model_output_shows_as_text(page, server: Server) -> None:
    raw = "<3> <script>alert(1)</script> <2> <img src=x onerror=alert(1)> <2> hi <0>"
    result = check_output(raw, 3)
    run_id = save_parsed_run(get_engine(server.database_url), raw, 3, instruction="hostile output check")

    find_in_history(page, "hostile output check", 1, run_id)  # History is open
    hand_out_anyway(page)  # tags and markers read as junk: tick the box so Copy's hidden copy is checked too

    assert page.locator(".capel-text").inner_text().strip() == result.text  # the tags are visible, as text
    assert "<img src=x onerror=alert(1)>" in page.locator(".capel-raw").first.inner_text()
    assert page.locator("img[src='x']").count() == 0
    assert page.locator(".capel-text script, .capel-raw script").count() == 0
    assert page.locator(".capel-raw mark.err").count() >= 2
    assert get_run(get_engine(server.database_url), run_id) is not None


def a_url_in_a_servers_failure_text_is_not_a_link(page, server: Server) -> None:
    """Streamlit links a bare URL, `www.` or e-mail address it finds in an error box's text even with its `:`
    escaped; the failure is shown as written and nothing in it can be clicked."""
    engine = get_engine(server.database_url)
    run_id = save_parsed_run(engine, "<1> a <0>", 1, instruction="failure with a url")
    said = "Upstream said: log in at http://evil.example/login or www.evil.example, or mail root@evil.example"
    update_run(engine, run_id, failure=said, status="partial")

    find_in_history(page, "failure with a url", 1, run_id)  # History is open, another run's row ticked

    box = page.locator("[data-testid='stAlertContentError']").first
    assert box.inner_text().strip() == said
    assert box.locator("a").count() == 0


def every_page_opens_in_the_browser_and_is_captured(page) -> None:
    """The first part of the walk above: Write is open."""
    for name in ("Write", "Compare", "History", "Benchmark", "Models"):
        if name != "Write":
            go_to(page, name)
        assert page.get_by_test_id("stException").count() == 0, name
        screenshot(page, f"page-{name.lower()}")
        assert (ARTIFACTS / f"page-{name.lower()}.png").stat().st_size > 10_000, name


def a_bookmarked_page_opened_first_has_the_app_navigation_and_sidebar(page, url: str) -> None:
    """On a fresh server (its first visitor), History opened by its address has the app's navigation and sidebar.
    Run by test_browser_vendors.py, whose own fresh server it shares (a server of its own took 10-20 s)."""
    open_app(page, url, "/history", heading="History")
    nav = page.get_by_test_id("stSidebarNav")
    for name in ("Write", "History"):
        expect(nav.get_by_role("link", name=name, exact=True)).to_have_count(1, timeout=10_000)
    expect(page.get_by_role("combobox", name="Provider", exact=True)).to_have_count(1, timeout=10_000)


# ----- issue 14: the writer's day, against a scripted OpenAI-compatible server ------------------------------

SMALL_SCREEN = {"width": 1280, "height": 720}


@pytest.fixture
def small_page(browser, server: Server):
    """A new visitor on a 1280×720 screen, allowed to use the clipboard."""
    context = browser.new_context(viewport=SMALL_SCREEN, accept_downloads=True)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    context.set_default_timeout(PAGE_TIMEOUT)
    p = context.new_page()
    yield p
    context.close()


def use_scripted_server(page, url: str) -> None:
    """Pick the OpenAI-compatible provider in the sidebar and point it at the scripted server. On Write, wait until
    Variants shows this model's default (1: not a local model), so the next step acts on the page as redrawn."""
    pick(page, "Provider", "OpenAI-compatible server")
    for label, value in (("Base URL", url), ("Model id", MODEL)):
        box = page.get_by_label(label, exact=True)
        box.fill(value)
        box.press("Enter")
        settle(page)
    variants = page.get_by_label("Variants", exact=True)
    if variants.count():
        expect(variants).to_have_value("1")


def test_a_writers_day_on_a_small_screen_target_to_copy_a_stop_and_failures(small_page, server, scripted) -> None:
    """One walk on 1280×720 against the scripted server (a page opened for each part took chromium and streamlit 5
    to 10 s of CPU): the writer kept informed from target to Copy, a long CAPEL run stopped and kept, a broken
    countdown repaired live, then failures and a stop before the first token (it leaves the server's URL broken),
    and History's filters kept."""
    page = small_page
    open_app(page, server.url)
    use_scripted_server(page, scripted.url)
    write_on_a_small_screen_keeps_the_writer_informed_from_target_to_copy(page, scripted)
    stop_ends_a_long_capel_run_and_keeps_it_in_history_as_cancelled(page, server, scripted)
    a_broken_countdown_is_repaired_live_and_the_run_lists_its_calls(page, scripted)
    failures_and_a_stop_before_the_first_token(page, server, scripted)
    history_keeps_its_filters_across_a_visit_to_write(page)


def history_keeps_its_filters_across_a_visit_to_write(page) -> None:
    """The end of the writer's day (moved here from test_browser_layout.py, where it opened a page of its own)."""
    go_to(page, "History")
    page.get_by_label("Search text", exact=True).fill("three")
    page.get_by_label("Search text", exact=True).press("Enter")
    settle(page)
    go_to(page, "Write")
    go_to(page, "History")
    expect(page.get_by_label("Search text", exact=True)).to_have_value("three")
    screenshot(page, "history-1280")  # the table is canvas-drawn: test_app.py checks its column order


def write_on_a_small_screen_keeps_the_writer_informed_from_target_to_copy(page, scripted) -> None:
    expect(page.get_by_text("needs a model that takes a grammar")).to_be_visible()  # the mode switch is said
    assert page.get_by_role("combobox", name="Mode", exact=True).input_value() == "CAPEL"

    set_number(page, "Target length", 100000)
    expect(page.get_by_label("Target length", exact=True)).to_have_value("10000")  # shown is what is used
    expect(page.get_by_text("The target must be from 1 to 10,000; 10,000 is used.")).to_be_visible()
    set_number(page, "Target length", 3)
    pick(page, "Mode", "Baseline")
    page.get_by_label("Instruction", exact=True).fill("Count to three.")

    scripted.script(ok("One two three."))
    page.get_by_role("button", name="Generate", exact=True).click()
    page.get_by_text("✓ exact · verified · 3/3 English words").wait_for()
    settle(page)
    expect(page.get_by_text("✓ exact · verified · 3/3 English words")).to_be_in_viewport()  # scrolled to the result
    expect(page.get_by_text("3 English words · 14 characters")).to_be_visible()
    page.get_by_role("button", name="Copy", exact=True).click()
    expect(page.get_by_role("button", name="Copied ✓")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == "One two three."

    page.get_by_text("Options", exact=True).click()
    set_number(page, "Seed", 7)
    words = [f"w{i} " for i in range(30)]  # over the target for about 3 s, five words a chunk (a redraw each)
    scripted.script(ok(["".join(words[i : i + 5]) for i in range(0, 30, 5)], delay=0.5))
    page.get_by_role("button", name="Generate", exact=True).click()
    page.get_by_text(re.compile(r"over by \d+ · \d+ of 3 English words")).first.wait_for()
    expect(page.locator(".capel-count")).to_be_in_viewport()  # the live part is in view on 1280×720
    assert page.locator(".capel-text").count() == 0  # the previous (verified) result is gone while it streams
    screenshot(page, "write-small-screen-streaming")
    page.get_by_text("off by +27 · 30/3 English words").wait_for()
    settle(page)
    expect(page.get_by_text("off by +27 · 30/3 English words")).to_be_in_viewport()
    body = scripted.last_body
    assert body["seed"] == 7 and body["max_tokens"] >= 3


def failures_and_a_stop_before_the_first_token(page, server, scripted) -> None:
    """The last part of the writer's day above."""
    pick(page, "Mode", "Baseline")
    set_number(page, "Target length", 5)
    page.get_by_label("Instruction", exact=True).fill("Describe a storm.")

    scripted.script(stall_after([], seconds=300))  # the server holds the first token back for 5 minutes
    page.get_by_role("button", name="Generate", exact=True).click()
    # the run is live (its line drawn) before the Stop: a click during Generate's own rerun was once not taken
    page.get_by_text(re.compile(r" · Baseline · \d+ s of at most \d+ s$")).wait_for()
    page.get_by_role("button", name="Stop", exact=True).click()
    page.get_by_text("Stopped. What arrived is kept in History.").wait_for(timeout=30_000)
    settle(page)
    [run] = [r for r in list_runs(get_engine(server.database_url)) if r.instruction == "Describe a storm."]
    assert run.status == "cancelled"

    scripted.script(html_page())
    page.get_by_role("button", name="Generate", exact=True).click()
    page.get_by_text(re.compile("did not answer as an OpenAI-compatible API")).wait_for()
    settle(page)
    expect(page.get_by_text("failed · no text arrived")).to_be_visible()
    assert page.get_by_role("button", name=re.compile("Download")).count() == 0
    assert page.get_by_text(re.compile("marker error")).count() == 0
    screenshot(page, "write-failed")

    url_box = page.get_by_label("Base URL", exact=True)
    url_box.fill("localhost:8000/v1")
    url_box.press("Enter")
    settle(page)
    expect(page.get_by_text(re.compile("must start with http:// or https://")).first).to_be_visible()


def test_compare_columns_can_be_copied_downloaded_and_used_and_history_reruns_the_same_inputs(
    page, server, scripted
) -> None:
    open_app(page, server.url)
    use_scripted_server(page, scripted.url)
    page.get_by_label("Instruction", exact=True).fill("Count to three, please.")
    page.get_by_label("Instruction", exact=True).press("Tab")
    page.wait_for_timeout(500)  # let the edit reach the server before the page switch
    settle(page)
    go_to(page, "Compare")
    expect(page.get_by_label("Instruction", exact=True)).to_have_value("Count to three, please.")
    set_number(page, "Target length", 3)

    scripted.script(then=ok("<3> One <2> two <1> three <0>", delay=0.05))
    page.get_by_role("button", name="Run comparison").click()
    page.get_by_text(re.compile(r"^exactly 3 English words · 2 column")).wait_for()
    settle(page)
    main = page.get_by_test_id("stMain")
    assert main.locator("strong", has_text="OpenAI-compatible server").count() == 0  # no leftover live header
    expect(main.get_by_role("button", name="Copy", exact=True)).to_have_count(2)
    expect(main.get_by_role("button", name="Use this")).to_have_count(2)
    with page.expect_download() as download_info:
        main.get_by_role("button", name=".txt").last.click()
    assert Path(download_info.value.path()).read_text(encoding="utf-8") == "One two three\n"
    settle(page)  # the download's rerun: a screenshot during it shows its elements half replaced
    screenshot(page, "compare-columns")

    main.get_by_role("button", name="Use this").last.click()  # the CAPEL column
    page.get_by_role("heading", name="Write", exact=True).wait_for()
    page.get_by_text("✓ exact · verified · 3/3 English words").wait_for()

    go_to(page, "History")
    select_first_row(page)
    page.get_by_role("button", name="Re-run on Write").click()
    page.get_by_role("heading", name="Write", exact=True).wait_for()
    settle(page)
    expect(page.get_by_label("Instruction", exact=True)).to_have_value("Count to three, please.")
    expect(page.get_by_label("Target length", exact=True)).to_have_value("3")
    expect(page.locator(".capel-text")).to_have_count(0)  # no other run's result under the pre-filled form


def test_compare_takes_writes_character_limit_offers_capel_and_shows_each_verdict_in_its_terms(
    page, server: Server
) -> None:
    preset = PRESET_BY_KEY["ads-headline"]
    open_app(page, server.url)
    page.get_by_text(preset.name, exact=True).click()
    settle(page)
    settle(page)
    go_to(page, "Compare")
    expect(page.get_by_label("Instruction", exact=True)).to_have_value(preset.example)
    expect(page.get_by_role("combobox", name="Counting unit", exact=True)).to_have_value(unit_label(preset.unit))
    page.get_by_role("combobox", name=re.compile("^Modes")).click()  # not a default column on a local model
    # offered under a character limit (the markers show the characters left), labelled for this model (issue 31)
    expect(page.get_by_role("option", name="CAPEL · rarely followed by this model", exact=True)).to_be_visible()
    page.keyboard.press("Escape")
    settle(page)
    expect(page.get_by_text(re.compile(r"^Skipped \("))).to_have_count(0)

    page.get_by_role("button", name="Run comparison").click()  # Baseline and Exact, the default columns
    header = re.compile(r"^at most 30 characters by Google Ads' count · 2 column")
    page.get_by_text(header).wait_for(timeout=MODEL_TIMEOUT)
    settle(page)
    expect(page.get_by_text(re.compile(r"^✓ \d+/30 characters by Google Ads' count$")).first).to_be_visible()
    page.get_by_test_id("stPlotlyChart").locator(".main-svg").first.wait_for()
    screenshot(page, "compare-limit")
    runs = [r for r in list_runs(get_engine(server.database_url), origin="compare") if r.unit == preset.unit]
    assert sorted((r.mode, r.unit, r.target_kind, r.target) for r in runs) == [
        ("baseline", "google_ads_chars", "at_most", 30),
        ("exact", "google_ads_chars", "at_most", 30),
    ]


def a_broken_countdown_is_repaired_live_and_the_run_lists_its_calls(page, scripted) -> None:
    """Part of the writer's day above (Write open on the scripted server)."""
    broken = countdown(6, wrong="skip", at=4)  # <6> <5> <4>, then <2>: the skip
    scripted.script(ok(broken), ok(["<3>tide", "<2>foam", "<1>sand", "<0>"], delay=0.5))  # the repair seen for 2 s
    asked = len(scripted.chat_requests)
    page.get_by_label("Instruction", exact=True).fill("Write about the sea.")
    set_number(page, "Target length", 6)
    expect(page.get_by_role("combobox", name="Mode", exact=True)).to_have_value("CAPEL")  # no grammar here

    page.get_by_role("button", name="Generate", exact=True).click()
    page.get_by_text(re.compile(r"repairing from <3> \(call 2 of 3\)")).wait_for(timeout=PAGE_TIMEOUT)
    screenshot(page, "write-repairing")
    page.get_by_text("✓ exact · verified · 6/6 English words").wait_for(timeout=PAGE_TIMEOUT)
    settle(page)
    page.get_by_text(re.compile(r"2 call\(s\) · 1 first: Skipped marker · 2 from <3>: right")).wait_for()
    assert page.locator(".capel-text").inner_text().strip() == "sea wind salt tide foam sand"
    screenshot(page, "write-repaired")
    second = scripted.chat_requests[asked + 1].body["messages"][0]["content"]
    assert "<6>sea<5>wind<4>salt" in second and "start with the marker <3>" in second

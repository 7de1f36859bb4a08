"""A preset end to end in a real browser (Debian's chromium, `streamlit run`, the embedded model in its
guaranteed mode), and the edit box: edit a result with its count and verdict, save it as an edit, send it back.
One preset runs here (an ad headline: at most 30 characters); every preset runs on the model in-process in
test_presets_embedded.py, and X's weighted count and Chinese are drawn in tests/test_app_targets.py.

Uses the server, browser and page fixtures of test_browser.py (the session's one server and database).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from capel_ui.counting import count
from capel_ui.presets import PRESETS, Preset
from capel_ui.runs import target_of, verdict_of
from capel_ui.storage import get_engine, list_runs
from capel_ui.vocab import HAND_EDIT_MODEL, unit_label
from tests.test_browser import (  # noqa: F401 (fixtures)
    MODEL_TIMEOUT,
    Server,
    browser,
    open_app,
    page,
    screenshot,
    server,
    set_number,
    settle,
)

pytestmark = pytest.mark.browser
BROWSER_PRESET = "ads-headline"
"""The preset run end to end through the page; test_presets_embedded.py runs every other one on the same model."""


def verified_badge(p: Preset) -> re.Pattern[str]:
    """The words of the green badge a verified run of this preset shows."""
    label = re.escape(unit_label(p.unit))
    if p.kind == "exactly":
        return re.compile(rf"^✓ exact · verified · {p.number}/{p.number} {label}$")
    return re.compile(rf"^✓ \d+/{p.number} {label}$")


def run_preset(page, server: Server, p: Preset) -> None:  # noqa: F811
    open_app(page, server.url)
    page.get_by_text(p.name, exact=True).click()
    settle(page)
    expect(page.get_by_label("Instruction", exact=True)).to_have_value(p.example)
    expect(page.get_by_role("combobox", name="Mode", exact=True)).to_have_value("Exact (guaranteed)")
    settle(page)
    set_number(page, "Variants", 1)  # one text to edit (three by default: three times the model's time)
    page.get_by_role("button", name="Generate", exact=True).click()
    page.get_by_text(verified_badge(p)).first.wait_for(timeout=MODEL_TIMEOUT)
    settle(page)
    screenshot(page, f"preset-{p.key}")


def test_a_preset_gives_a_verified_text_the_writer_edits_with_a_live_count_saves_and_sends_back(
    page,  # noqa: F811
    server: Server,  # noqa: F811
) -> None:
    preset = next(p for p in PRESETS if p.key == BROWSER_PRESET)
    run_preset(page, server, preset)
    engine = get_engine(server.database_url)
    model_run = max(list_runs(engine), key=lambda r: r.id)
    run = model_run
    assert (run.unit, run.target_kind, run.target, run.mode) == (preset.unit, preset.kind, preset.number, "exact")
    assert model_run.origin == "write"  # one variant asked: a plain Write run
    assert verdict_of(model_run).verified
    n = count(model_run.text, preset.unit)
    assert target_of(model_run).within(n) and n == model_run.count
    assert model_run.text.rstrip()[-1] in ".!?。！？"  # ends at a sentence end
    assert model_run.text in [t.strip() for t in page.locator(".capel-text").all_inner_texts()]

    page.get_by_text("Edit this text", exact=True).click()
    box = page.get_by_label("Your edit", exact=True)
    too_long = "This edited headline is far too long for an ad."
    box.fill("")
    box.press_sequentially(too_long, delay=10)  # typed, no Enter, no click outside: the count follows
    over = f"Your edit: over by {len(too_long) - 30} · {len(too_long)}/30 {unit_label(preset.unit)}"
    page.get_by_text(over, exact=True).wait_for()
    box.fill("")
    box.press_sequentially("Books by the sea, shipped.", delay=10)
    page.get_by_text(f"Your edit: ✓ 26/30 {unit_label(preset.unit)}", exact=True).wait_for()
    screenshot(page, "edit-live-count")

    page.get_by_role("button", name="Save as a new run", exact=True).click()
    page.get_by_text(re.compile(r"^Run \d+ · edit · Edited by hand · en")).wait_for()  # once, not beside the model
    settle(page)
    screenshot(page, "edit-saved")
    edit = max(list_runs(engine), key=lambda r: r.id)
    assert edit.id != model_run.id
    assert (edit.origin, edit.model, edit.mode, edit.raw) == ("edit", HAND_EDIT_MODEL, "edit", "")
    assert (edit.text, edit.count, edit.unit, edit.target_kind, edit.target) == (
        "Books by the sea, shipped.",
        26,
        preset.unit,
        "at_most",
        30,
    )
    assert edit.verified
    page.get_by_text(f"✓ 26/30 {unit_label(preset.unit)}", exact=True).first.wait_for()

    send = page.get_by_role("button", name="Rewrite this text to length", exact=True)
    if not send.is_visible():
        page.get_by_text("Edit this text", exact=True).click()
    send.click()
    settle(page)
    expect(page.get_by_label("Your text", exact=True)).to_have_value("Books by the sea, shipped.")
    screenshot(page, "edit-sent-back")

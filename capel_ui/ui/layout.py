"""The page-wide CSS, in one place: the room above a page's title, and a compact Write page on a phone.

Streamlit stacks every row of columns below 640 px and wraps pills into as many rows as they need, so on a
390 px phone the presets filled half the first screen, Generate was below it, and a result's three downloads
took three full-width rows. The rules below keep on one line there what reads as one line; a screen wider than
`NARROW` gets Streamlit's own layout. The pages mark what a rule applies to with a keyed container
(`st.container(key=hook(PRESETS, …))`), which Streamlit gives the class `st-key-<key>`. (The styling of model
output is render.py's `STYLE`.)
"""

from __future__ import annotations

import streamlit as st

NARROW = 640
"""Screens up to this many CSS pixels wide are phones: the width below which Streamlit stacks columns."""

PRESETS = "capel-presets"
"""The quick-preset pills: one row that scrolls sideways on a phone (seven rows pushed Generate off its screen)."""


def hook(name: str, *parts: object) -> str:
    """A container key the CSS below finds by `name`; `parts` make it unique on the page (a run, a prefix)."""
    return "-".join([name, *(str(p) for p in parts)])


def _phone_rules() -> str:
    """The rules for a screen up to `NARROW` wide, each with why."""
    pills = f"[class*='st-key-{PRESETS}'] [data-testid='stButtonGroup'] > div:has(> button)"
    rules = {
        # Presets: one row, each pill whole, the row scrolls sideways (a thin bar for a mouse; a finger swipes).
        pills: "flex-wrap:nowrap;overflow-x:auto;overscroll-behavior-x:contain;scrollbar-width:thin",
        f"{pills} > button": "flex:0 0 auto",
    }
    return "".join(f"{selector}{{{style}}}" for selector, style in rules.items())


PAGE_STYLE = (
    "<style>"
    # Streamlit's default 6rem above every page's title would push Write's Generate below a 1280×720 screen.
    "[data-testid='stMainBlockContainer']{padding-top:2.5rem}"
    f"@media (max-width:{NARROW}px){{{_phone_rules()}}}"
    "</style>"
)


def page_style() -> None:
    """Add the page-wide CSS (app.py, on every page run, before the page draws)."""
    st.html(PAGE_STYLE)

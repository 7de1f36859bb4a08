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
TARGET = "capel-target"
"""Exactly / at most and the target length: side by side on a phone, as the phrase they make ("at most 280")."""
RANGE = "capel-range"
"""Between: the kind on its line, From and To side by side on the next."""
VERDICT = "capel-verdict"
"""A result's badge and lengths with Copy beside them, not on a line of its own."""
DOWNLOADS = "capel-downloads"
"""A result's three downloads in one row (three full-width rows on a phone)."""
VARIANTS = "capel-variants"
"""The variants, best first: on a phone a row of cards to swipe through instead of three screens of them."""
SWIPE = "capel-swipe"
"""The "swipe for more" hint over the variant cards: shown on a phone only, where the cards scroll sideways."""
FILTERS = "capel-filters"
"""History's five filters: two to a line on a phone (five full-width rows filled its first screen)."""
FIGURES = "capel-figures"
"""A Compare column's count and time: side by side on a phone, as on a desktop."""


def hook(name: str, *parts: object) -> str:
    """A container key the CSS below finds by `name`; `parts` make it unique on the page (a run, a prefix)."""
    return "-".join([name, *(str(p) for p in parts)])


ROW = "[data-testid='stHorizontalBlock']"
COLUMN = f"{ROW} > [data-testid='stColumn']"
EMPTY = ":not(:has([data-testid='stElementContainer']))"
"""A column with nothing in it."""


def _within(names: str | tuple[str, ...], selector: str) -> str:
    """`selector` in the containers keyed `hook(name, …)` for each of `names`: their own row of columns, not a
    row nested in it (the badge's row inside the verdict's)."""
    names = (names,) if isinstance(names, str) else names
    return ", ".join(f"[class*='st-key-{name}'] > [data-testid='stLayoutWrapper'] > {selector}" for name in names)


def _phone_rules() -> str:
    """The rules for a screen up to `NARROW` wide, each with why."""
    pills = f"[class*='st-key-{PRESETS}'] [data-testid='stButtonGroup'] > div:has(> button)"
    rules = {
        # Presets: one row, each pill whole, the row scrolls sideways (a thin bar for a mouse; a finger swipes).
        pills: "flex-wrap:nowrap;overflow-x:auto;overscroll-behavior-x:contain;scrollbar-width:thin",
        f"{pills} > button": "flex:0 0 auto",
        # Target: the kind as wide as its three buttons, the number in the rest of the line.
        _within((TARGET, RANGE), COLUMN): "min-width:0;flex:1 1 5.5rem",
        _within((TARGET, RANGE), f"{COLUMN}:first-child"): "flex:0 0 auto;width:auto",
        _within(RANGE, f"{COLUMN}:not(:first-child)"): "flex:1 1 40%",
        # Verdict: Copy at the end of the badge's line.
        _within(VERDICT, ROW): "flex-wrap:nowrap",
        _within(VERDICT, COLUMN): "min-width:0;flex:1 1 0",
        _within(VERDICT, f"{COLUMN}:last-child"): "flex:0 0 auto;width:auto",
        # Downloads: three buttons in one row (their icons dropped), a label on two lines if it must.
        _within(DOWNLOADS, ROW): "flex-wrap:nowrap;gap:.5rem",
        _within(DOWNLOADS, COLUMN): "min-width:0;flex:1 1 0",
        f"[class*='st-key-{DOWNLOADS}'] button": "padding:.25rem .4rem;min-height:2.5rem",
        f"[class*='st-key-{DOWNLOADS}'] button span:has(> [data-testid='stIconMaterial'])": "display:none",
        f"[class*='st-key-{DOWNLOADS}'] button [data-testid='stMarkdownContainer'] *": "white-space:normal",
        # Variants: cards side by side, swiped through, the next one peeking in at the edge.
        _within(VARIANTS, ROW): "flex-wrap:nowrap;overflow-x:auto;scroll-snap-type:x mandatory;"
        "overscroll-behavior-x:contain",
        _within(VARIANTS, COLUMN): "min-width:82%;flex:0 0 82%;scroll-snap-align:start",
        f"[class*='st-key-{SWIPE}']": "display:block",  # and a word that they do: "Swipe for more →"
        # History's filters two to a line; a Compare column's count and time side by side.
        _within(FILTERS, ROW): "flex-wrap:wrap;gap:.5rem 1rem",
        _within(FILTERS, COLUMN): "min-width:0;flex:1 1 40%",
        _within(FIGURES, ROW): "flex-wrap:nowrap",
        _within(FIGURES, COLUMN): "min-width:0;flex:1 1 0",
        # A column with nothing in it (a spacer; Stop's slot until a run starts) only adds a gap to the stack.
        f"{COLUMN}{EMPTY}": "display:none",
        # Streamlit's 10rem below the last element is a fifth of a phone's screen of nothing.
        "[data-testid='stMainBlockContainer']": "padding-bottom:4rem",
    }
    return "".join(f"{selector}{{{style}}}" for selector, style in rules.items())


PAGE_STYLE = (
    "<style>"
    # Streamlit's default 6rem above every page's title would push Write's Generate below a 1280×720 screen.
    "[data-testid='stMainBlockContainer']{padding-top:2.5rem}"
    f"[class*='st-key-{SWIPE}']{{display:none}}"  # a wide screen shows every variant side by side
    f"@media (max-width:{NARROW}px){{{_phone_rules()}}}"
    "</style>"
)


def page_style() -> None:
    """Add the page-wide CSS (app.py, on every page run, before the page draws)."""
    st.html(PAGE_STYLE)

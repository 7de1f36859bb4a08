"""Every key the pages keep in `st.session_state`, named once, and the hand-offs between pages.

Widgets take their key as a string (`key=W.INSTRUCTION`), so the values here are the strings the AppTests and
browser tests address. A page never writes another page's keys directly and never imports another page's
module: it calls a hand-off here ("open this run on Write", "use this column", "send this edit back").
"""

from __future__ import annotations

from typing import Any, Final

import streamlit as st

from ..prompts import rewrite_source
from ..storage import RunRecord
from .target_form import TARGET_FIELDS


class W:
    """The Write page's keys (prefix `w_` for the target form's fields)."""

    PREFIX: Final = "w_"
    INSTRUCTION: Final = "w_instruction"
    SOURCE: Final = "w_source"
    REWRITE: Final = "w_rewrite"
    MODE: Final = "w_mode"
    MODE_WANTED: Final = "w_mode_wanted"
    """The mode the writer picked; kept apart from the widget so a model without a grammar never overwrites it."""
    PRESET: Final = "w_preset"
    KIND: Final = "w_kind"
    TARGET: Final = "w_target"
    CODE: Final = "w_code"
    FALLBACK: Final = "w_fallback"
    VARIANTS: Final = "w_variants"
    VARIANTS_SET: Final = "w_variants_set"
    """Set once the writer chose a number of variants; until then it follows the target and the model."""
    STOP: Final = "w_stop"
    LIVE: Final = "w_live"
    RESULT: Final = "w_result"
    """The result area, scrolled into view when a run has just ended."""
    RUN_ID: Final = "w_run_id"
    """The run the result area shows (the picked variant, or the only run)."""
    GROUP: Final = "w_group"
    """The variant group of the last request, when it asked for several."""
    SEND_BACK: Final = "w_send_back"
    """An edited text handed back to be rewritten (applied before the widgets are drawn)."""


class C:
    """The Compare page's keys (prefix `c_` for the target form's fields)."""

    PREFIX: Final = "c_"
    INSTRUCTION: Final = "c_instruction"
    KIND: Final = "c_kind"
    ID: Final = "c_id"
    """The comparison shown below the form."""
    LIVE: Final = "c_live"
    RESULT: Final = "c_result"
    """The live columns and the comparison's top, scrolled into view when a comparison starts and ends."""
    CARRIED: Final = "c_carried"
    """The instruction last taken from Write, so a newer one replaces it but a typed one stays."""
    CARRIED_TARGET: Final = "c_carried_target"
    OWN_TARGET: Final = "c_target_kept"
    """Compare's own target fields, restored when Write's did not change since they were last taken."""
    MODELS: Final = "c_models"
    MODES: Final = "c_modes"
    BEST_MODE: Final = "c_best_mode"
    """Set by "One model per vendor": each model runs once, in Exact where guaranteed, else CAPEL."""


class H:
    """The History page's keys: its filters, kept when the writer leaves the page and comes back (`FILTERS`)."""

    MODEL: Final = "h_model"
    MODE: Final = "h_mode"
    ORIGIN: Final = "h_origin"
    LANG: Final = "h_lang"
    DATES: Final = "h_dates"
    SEARCH: Final = "h_search"
    VERIFIED: Final = "h_verified"
    FILTERS: Final = (MODEL, MODE, ORIGIN, LANG, DATES, SEARCH, VERIFIED)
    TABLE: Final = "h_table"


class B:
    """The Benchmark page's keys."""

    SELECTED: Final = "b_selected"
    """The benchmark runs selected in the table (a finished run selects itself)."""


SHARED_INSTRUCTION: Final = "instruction_shared"
"""The last instruction typed on Write, kept outside widget state (which a page switch clears) for Compare."""
SHARED_TARGET: Final = "target_shared"
"""Write's target fields (`target_form.target_settings`), kept outside widget state for Compare to start from."""
PREFILL: Final = "prefill"
"""Inputs handed to Write by another page, applied (and dropped) before Write draws its widgets."""

WRITE_PAGE: Final = "app_pages/write.py"


def keep(key: str) -> None:
    """Keep a widget's value across runs that do not draw it: Streamlit drops the state of a keyed widget a run
    leaves out (the instruction while rewriting, the pasted text while not), so it is copied aside and put back."""
    aside = f"_kept_{key}"
    if key in st.session_state:
        st.session_state[aside] = st.session_state[key]
    elif aside in st.session_state:
        st.session_state[key] = st.session_state[aside]


def get(key: str, default: Any = None) -> Any:
    """A kept value, or `default`."""
    return st.session_state.get(key, default)


def put(key: str, value: Any) -> None:
    st.session_state[key] = value


def drop(key: str) -> Any:
    """Remove a kept value and return it (None when absent)."""
    return st.session_state.pop(key, None)


def has(key: str) -> bool:
    return key in st.session_state


# ----- hand-offs ---------------------------------------------------------------------------------------------


def prefill_for(run: Any) -> dict[str, Any]:
    """The Write inputs that re-run `run` as it was asked: a rewrite run comes back as a rewrite of its text."""
    fields = {"lang": run.lang, "unit": run.unit, "target": run.target, "mode": run.mode, "code": bool(run.code)}
    fields |= {"kind": run.target_kind, "low": run.target_low or run.target}
    source = rewrite_source(run.instruction or "")
    if source is None:
        return {**fields, "instruction": run.instruction, "rewrite": False}
    return {**fields, "source": source, "rewrite": True}


def open_on_write(run: RunRecord) -> None:
    """History's Re-run: Write opens with the run's inputs (a rewrite as a rewrite) and no result yet."""
    put(PREFILL, prefill_for(run))
    st.switch_page(WRITE_PAGE)


def use_column(run: RunRecord) -> None:
    """Compare's “Use this”: Write opens with the column's inputs and its text as the result."""
    put(PREFILL, {**prefill_for(run), "run_id": run.id})
    st.switch_page(WRITE_PAGE)


def take_prefill() -> None:
    """On Write, before its widgets are drawn: apply inputs another page handed over, and show the run it named
    (or none: the result shown before belongs to another run)."""
    prefill = drop(PREFILL)
    if not prefill:
        return
    run_id = prefill.pop("run_id", None)
    for field, value in prefill.items():
        put(W.PREFIX + field, value)
    put(W.MODE_WANTED, prefill.get("mode"))
    put(W.PRESET, None)
    drop(W.RUN_ID)
    if run_id is not None:
        put(W.RUN_ID, run_id)


def send_back(text: str) -> None:
    """The edit box's “rewrite to length”: the edited text becomes Write's text to rewrite on the next run."""
    put(W.SEND_BACK, text)


def take_send_back() -> None:
    """On Write, before its widgets are drawn: an edited text sent back becomes the text to rewrite."""
    text = drop(W.SEND_BACK)
    if text is not None:
        put(W.REWRITE, True)
        put(W.SOURCE, text)


def share_from_write(instruction: str | None, target: dict[str, Any] | None) -> None:
    """Write keeps its instruction and target fields outside widget state, for Compare to start from."""
    if instruction is not None:
        put(SHARED_INSTRUCTION, instruction)
    if target is not None:
        put(SHARED_TARGET, target)


def write_instruction() -> str:
    """Write's instruction: its own box when the page switch came with its last edit, else its copy."""
    return get(W.INSTRUCTION) or get(SHARED_INSTRUCTION, "")


def write_target() -> dict[str, Any]:
    """Write's target fields: its widgets when the switch came with their last edit, else its copy."""
    shared = get(SHARED_TARGET) or {}
    return {field: get(W.PREFIX + field, shared.get(field)) for field in TARGET_FIELDS}

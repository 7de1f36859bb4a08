"""The target a writer asks for, drawn the same way on Write and Compare: quick presets, language, counting unit
and exactly / at most / between.

Each page keeps its own session keys under a prefix (`w_` on Write, `c_` on Compare): `{prefix}preset`, `lang`,
`unit`, `kind`, `target` and `low`. History's Re-run and the tests set Write's keys by these names.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ..presets import EXAMPLES, PRESET_BY_NAME, PRESETS
from ..verdict import Target
from ..vocab import (
    LANG_LABELS,
    MAX_TARGET,
    TARGET_KIND_LABELS,
    TARGET_KINDS,
    Lang,
    TargetKind,
    Unit,
    unit_label,
    units_for,
)
from . import layout
from .views import target_box

TARGET_FIELDS = ("lang", "unit", "kind", "target", "low")
"""The session keys (after the prefix) that together say what length is asked for."""


def set_target_defaults(prefix: str, number: int) -> None:
    """Exactly `number` in the first language's own unit until the writer says otherwise; a range, once picked,
    starts a fifth below the number."""
    defaults = {"target": number, "lang": "en", "kind": "exactly", "low": max(1, number * 4 // 5)}
    for field, value in defaults.items():
        st.session_state.setdefault(prefix + field, value)


def target_settings(prefix: str) -> dict[str, Any]:
    """The page's language, unit and target fields as they stand, for another page to start from."""
    return {field: st.session_state.get(prefix + field) for field in TARGET_FIELDS}


def preset_pills(prefix: str) -> None:
    """A platform's limit in one click (capel_ui.presets): it sets the fields, and the instruction if empty."""
    names = [p.name for p in PRESETS]
    with st.container(key=layout.hook(layout.PRESETS, prefix)):
        st.pills("Quick presets", names, key=f"{prefix}preset", on_change=_apply_preset, args=(prefix,))


def _apply_preset(prefix: str) -> None:
    """A preset sets language, unit, target kind and number, and its template when the instruction is empty (or
    still another preset's template)."""
    preset = PRESET_BY_NAME.get(st.session_state.get(f"{prefix}preset") or "")
    if not preset:
        return
    target = preset.target
    values = {"lang": preset.lang, "unit": preset.unit, "kind": target.kind, "target": target.high, "low": target.low}
    for field, value in values.items():
        st.session_state[prefix + field] = value
    current = st.session_state.get(f"{prefix}instruction", "").strip()
    if not current or current in EXAMPLES:
        st.session_state[f"{prefix}instruction"] = preset.example


def lang_radio(where: Any, prefix: str, default: int) -> Lang:
    """English or Chinese (the unit is picked beside it: the language's name only, not its unit again); switching
    away from a preset's language drops the preset."""
    return where.radio(
        "Language",
        ["en", "zh"],
        format_func=LANG_LABELS.get,
        horizontal=True,
        key=f"{prefix}lang",
        on_change=_lang_changed,
        args=(prefix, default),
    )


def _lang_changed(prefix: str, default: int) -> None:
    """A preset belongs to its language: switching away drops its pill, its target and its example text."""
    preset = PRESET_BY_NAME.get(st.session_state.get(f"{prefix}preset") or "")
    if not preset or preset.lang == st.session_state.get(f"{prefix}lang"):
        return
    st.session_state[f"{prefix}preset"] = None
    if st.session_state.get(f"{prefix}target") == preset.number:
        st.session_state[f"{prefix}target"] = default
        st.session_state[f"{prefix}kind"] = "exactly"
    if st.session_state.get(f"{prefix}instruction", "").strip() == preset.example:
        st.session_state[f"{prefix}instruction"] = ""


def unit_picker(where: Any, prefix: str, lang: Lang) -> Unit:
    """The counting unit, among the language's own; a unit of the other language falls back to the first."""
    units = list(units_for(lang))
    if st.session_state.get(f"{prefix}unit") not in units:
        st.session_state[f"{prefix}unit"] = units[0]
    return where.selectbox("Counting unit", units, format_func=unit_label, key=f"{prefix}unit")


def target_inputs(where: Any, prefix: str, default: int) -> Target | None:
    """Exactly N, at most N, or between A and B; None (with the reason shown) for an impossible range."""
    shape = layout.RANGE if st.session_state.get(f"{prefix}kind") == "range" else layout.TARGET
    row = where.container(key=layout.hook(shape, prefix))  # on a phone: the kind and its number side by side
    c = row.columns([2.2, 1, 1, 1.8], vertical_alignment="bottom")  # room for all three kinds
    kind: TargetKind = c[0].segmented_control(
        "Target", TARGET_KINDS, format_func=TARGET_KIND_LABELS.get, key=f"{prefix}kind", required=True
    )
    if kind == "range":
        low = c[1].number_input("From", min_value=1, max_value=MAX_TARGET, step=1, key=f"{prefix}low")
        high = c[2].number_input("To", min_value=1, max_value=MAX_TARGET, step=1, key=f"{prefix}target")
        if low > high:
            st.error("The range goes from the smaller number to the larger: make “From” at most “To”.")
            return None
        return Target.between(int(low), int(high))
    return Target.of(kind, target_box(c[1], f"{prefix}target", default, note_where=row))

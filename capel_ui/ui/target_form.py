"""The target a writer asks for, drawn the same way on Write and Compare: quick presets, language, counting unit
and exactly / at most / between.

Each page keeps its own keys under a prefix (`w_` on Write, `c_` on Compare), named in `state.TargetKeys`:
`{prefix}preset`, `lang`, `unit`, `kind`, `target` and `low`.
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
from . import layout, state
from .state import TargetKeys
from .views import target_box


def set_target_defaults(keys: TargetKeys, number: int) -> None:
    """Exactly `number` in the first language's own unit until the writer says otherwise; a range, once picked,
    starts a fifth below the number."""
    state.setdefault(keys.target, number)
    state.setdefault(keys.lang, "en")
    state.setdefault(keys.kind, "exactly")
    state.setdefault(keys.low, max(1, number * 4 // 5))


def preset_pills(keys: TargetKeys) -> None:
    """A platform's limit in one click (capel_ui.presets): it sets the fields, and the instruction if empty."""
    names = [p.name for p in PRESETS]
    with st.container(key=layout.hook(layout.PRESETS, keys.prefix)):
        st.pills("Quick presets", names, key=keys.preset, on_change=_apply_preset, args=(keys,))


def _apply_preset(keys: TargetKeys) -> None:
    """A preset sets language, unit, target kind and number, and its template when the instruction is empty (or
    still another preset's template)."""
    preset = PRESET_BY_NAME.get(state.get(keys.preset) or "")
    if not preset:
        return
    target = preset.target
    state.put(keys.lang, preset.lang)
    state.put(keys.unit, preset.unit)
    state.put(keys.kind, target.kind)
    state.put(keys.target, target.high)
    state.put(keys.low, target.low)
    current = state.get(keys.instruction).strip()
    if not current or current in EXAMPLES:
        state.put(keys.instruction, preset.example)


def lang_radio(where: Any, keys: TargetKeys, default: int) -> Lang:
    """English or Chinese (the unit is picked beside it: the language's name only, not its unit again); switching
    away from a preset's language drops the preset."""
    return where.radio(
        "Language",
        ["en", "zh"],
        format_func=LANG_LABELS.get,
        horizontal=True,
        key=keys.lang,
        on_change=_lang_changed,
        args=(keys, default),
    )


def _lang_changed(keys: TargetKeys, default: int) -> None:
    """A preset belongs to its language: switching away drops its pill, its target and its example text."""
    preset = PRESET_BY_NAME.get(state.get(keys.preset) or "")
    if not preset or preset.lang == state.get(keys.lang):
        return
    state.put(keys.preset, None)
    if state.get(keys.target) == preset.number:
        state.put(keys.target, default)
        state.put(keys.kind, "exactly")
    if state.get(keys.instruction).strip() == preset.example:
        state.put(keys.instruction, "")


def unit_picker(where: Any, keys: TargetKeys, lang: Lang) -> Unit:
    """The counting unit, among the language's own; a unit of the other language falls back to the first."""
    units = list(units_for(lang))
    if state.get(keys.unit) not in units:
        state.put(keys.unit, units[0])
    return where.selectbox("Counting unit", units, format_func=unit_label, key=keys.unit)


def target_inputs(where: Any, keys: TargetKeys, default: int) -> Target | None:
    """Exactly N, at most N, or between A and B; None (with the reason shown) for an impossible range."""
    shape = layout.RANGE if state.get(keys.kind) == "range" else layout.TARGET
    row = where.container(key=layout.hook(shape, keys.prefix))  # on a phone: the kind and its number side by side
    c = row.columns([2.2, 1, 1, 1.8], vertical_alignment="bottom")  # room for all three kinds
    kind: TargetKind = c[0].segmented_control(
        "Target", TARGET_KINDS, format_func=TARGET_KIND_LABELS.get, key=keys.kind, required=True
    )
    if kind == "range":
        low = c[1].number_input("From", min_value=1, max_value=MAX_TARGET, step=1, key=keys.low)
        high = c[2].number_input("To", min_value=1, max_value=MAX_TARGET, step=1, key=keys.target)
        if low > high:
            st.error("The range goes from the smaller number to the larger: make “From” at most “To”.")
            return None
        return Target.between(int(low), int(high))
    return Target.of(kind, target_box(c[1], keys.target, default, note_where=row))

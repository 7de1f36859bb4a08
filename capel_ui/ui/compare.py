"""The Compare page: one instruction and target (unit, exactly / at most / between, as on Write), several
(model, mode) columns run side by side.

Columns run concurrently in worker threads that only generate and save (never touch `st`); the script
thread paints their live state. All runs of one comparison share a comparison id in History.
"""

from __future__ import annotations

import uuid
from functools import partial

import plotly.graph_objects as go
import streamlit as st
from sqlalchemy.engine import Engine
from streamlit.delta_generator import DeltaGenerator

from ..backends import EMBEDDED, BackendError, ModelChoice
from ..export import export_name, export_txt
from ..history import marker_spans, run_score
from ..request import Request
from ..runs import assessment_of, target_of, verdict_of
from ..service import RunHandle, modes_for, start, together
from ..storage import RunRecord, list_runs
from ..verdict import Target
from ..vocab import MODE_LABELS, MODES, Lang, Mode, TargetKind, Unit, mode_label, unit_label
from . import resources, state
from .layout import DOWNLOADS, FIGURES, hook
from .render import clean_text_html, countdown_html, highlight_raw, plain_markdown, scroll_into_view_html
from .state import C
from .target_form import (
    lang_radio,
    preset_pills,
    set_target_defaults,
    target_inputs,
    unit_picker,
)
from .views import (
    HAND_OUT_ANYWAY,
    SCORE_HELP,
    Slot,
    copy_button,
    lengths,
    mode_choice,
    mode_title,
    quality_notes,
    verdict_badges,
    wait_saved,
)

MAX_COLUMNS = 8
PER_ROW = 3
"""Columns side by side; more wrap to the next row (at 1280 px a fourth would cut the time, badges and buttons)."""
Column = tuple[ModelChoice, Mode]
DEFAULT_TARGET = 40
_COUNT_HELP = "Beside the count: how many units it lies outside the target (0 within it)."


def _model_options(current: ModelChoice) -> list[ModelChoice]:
    """The embedded model, the sidebar's model, the models pulled to this machine, and the vendors' API models
    wherever a key is at hand."""
    options = [EMBEDDED]
    if current not in options:
        options.append(current)
    options += [c for c in resources.pulled_models() if c not in options]
    options += [c for c in resources.keyed_api_models() if c not in options]
    return options


def charts(run: RunRecord) -> bool:
    """A column belongs on the chart only with a count to show: a failed call has none (it was plotted as -25)."""
    return verdict_of(run).status != "failed" and bool(run.text.strip())


def comparison_chart(runs: list[RunRecord]) -> go.Figure:
    """One bar per column against the comparison's target: for exactly N the deviation (count − N, a marker on
    every bar so an exact column, a bar of height 0, shows); for a limit or a range the count itself, the
    allowed band shaded and its upper bound drawn as a line."""
    target = target_of(runs[0])
    exact = target.kind == "exactly"
    values = [(r.count or 0) - r.target if exact else (r.count or 0) for r in runs]
    texts = [(f"{v:+d}" if v else "0 (exact)") if exact else str(v) for v in values]
    fig = _bars(runs, values, texts, "deviation %{y:+d}" if exact else "count %{y}")
    label = unit_label(runs[0].unit)
    if exact:
        fig.update_layout(title="Deviation from the target (count − target)")
        fig.add_hline(y=0, line_color="#495057")
        return fig
    fig.update_layout(title=f"Count against the target ({target.describe(runs[0].unit)})")
    low = target.low if target.kind == "range" else 0
    fig.add_hrect(y0=low, y1=target.high, fillcolor="#2b8a3e", opacity=0.12, line_width=0, layer="below")
    fig.add_hline(y=target.high, line_dash="dash", line_color="#495057", annotation_text=f"{target.label} {label}")
    return fig


def _bars(runs: list[RunRecord], values: list[int], texts: list[str], hover: str) -> go.Figure:
    """Bars coloured by the verdict (green verified, red not), with a marker on each bar's value."""
    labels = [f"{r.model}<br>{mode_title(r)}" for r in runs]
    colors = ["#2b8a3e" if verdict_of(r).verified else "#c92a2a" for r in runs]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=values,
            marker_color=colors,
            text=texts,
            textposition="outside",
            hovertemplate=f"%{{x}}<br>{hover}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=values,
            mode="markers",
            marker={"symbol": "diamond", "size": 13, "color": colors, "line": {"width": 1, "color": "#212529"}},
            hoverinfo="skip",
            name="count",
        )
    )
    fig.update_layout(
        yaxis_title=unit_label(runs[0].unit),
        height=360,
        margin={"t": 50, "b": 40, "l": 40, "r": 20},
        showlegend=False,
    )
    return fig


def render() -> None:
    st.title("Compare")
    st.caption("Baseline beside CAPEL beside Exact for one model, or one mode across models.")
    current = resources.model_choice()
    _carry_instruction()
    _carry_target()
    set_target_defaults(C.FORM, DEFAULT_TARGET)
    preset_pills(C.FORM)
    instruction = st.text_area(
        "Instruction",
        key=C.INSTRUCTION,
        height=80,
        placeholder="e.g. Write a product description for a hand-made ceramic mug.",
    )
    c = st.columns([1.2, 1.5, 2])
    lang = lang_radio(c[0], C.FORM, DEFAULT_TARGET)
    unit = unit_picker(c[1], C.FORM, lang)
    models = _pick_models(st.container(), current)  # the page's width: four model names stay whole
    target = target_inputs(st.container(), C.FORM, DEFAULT_TARGET)
    state.put(C.OWN_TARGET, C.FORM.settings())
    modes: list[Mode] = st.multiselect(
        "Modes",
        MODES,
        default=_default_modes(current),
        format_func=mode_choice(current.model),
        key=C.MODES,
        on_change=lambda: state.put(C.BEST_MODE, False),
    )
    kind: TargetKind = state.get(C.KIND)
    usable = _usable_columns([(m, mode) for m in models for mode in modes], lang, unit, kind)
    if state.get(C.BEST_MODE):  # one column per model: its first usable mode (Exact before CAPEL)
        usable = [col for i, col in enumerate(usable) if col[0] not in [m for m, _ in usable[:i]]]
    if len(usable) > MAX_COLUMNS:
        st.warning(f"{len(usable)} columns; only the first {MAX_COLUMNS} run.")
        usable = usable[:MAX_COLUMNS]

    b = st.columns([1.5, 1, 3.5])  # room for the label at 1280 px
    run = b[0].button(
        "Run comparison",
        type="primary",
        icon=":material/play_arrow:",
        width="stretch",
        disabled=not usable or target is None,
    )
    ran = bool(run and target is not None)
    if ran:
        _run(instruction, target, lang, unit, usable, b[1])
    cid = state.get(C.ID)
    if cid:
        _show(resources.engine(), cid, scroll=ran)


def _default_modes(current: ModelChoice) -> list[Mode]:
    """Columns that can succeed on the sidebar's model: a local model (the embedded 135M) rarely follows CAPEL's
    countdown, and under the countdown-visible grammar it loops ("the drag the drag the drag…": benchmarks/
    quality.py), so it starts with its own answer beside Exact; elsewhere CAPEL is the point of the comparison (the
    same rule as Write's default mode)."""
    if current.spec.local:
        return ["baseline", "exact"]
    return ["baseline", "capel", "exact"]


def _pick_models(where: DeltaGenerator, current: ModelChoice) -> list[ModelChoice]:
    """The models to compare (the sidebar's by default), and how to get more when only one is at hand."""
    options = _model_options(current)
    lineup = _one_per_vendor(options)
    if len(lineup) > 2:
        where.button(
            "One model per vendor",
            icon=":material/view_column:",
            on_click=_line_up,
            args=(lineup,),
            help="The embedded model beside the first model of every provider whose key is set, each in Exact "
            "where it is guaranteed and in CAPEL otherwise.",
        )
    models = where.multiselect("Models", options, default=[current], format_func=lambda m: m.label, key=C.MODELS)
    if len(options) == 1:
        where.caption(
            "More models: type an API key in the sidebar (OpenAI, Anthropic, Google, xAI, Mistral, DeepSeek or "
            "OpenRouter), or pick “OpenAI-compatible server” there and give its base URL; they appear here."
        )
    return models


def _one_per_vendor(options: list[ModelChoice]) -> list[ModelChoice]:
    """The local model, then the first model of each provider among `options` (GPT vs Claude vs Gemini…)."""
    seen: dict[str, ModelChoice] = {}
    for choice in options:
        seen.setdefault(choice.provider, choice)
    return list(seen.values())


def _line_up(lineup: list[ModelChoice]) -> None:
    """Put one model per vendor side by side, Exact where it is guaranteed, CAPEL where it is not (a callback:
    it runs before the widgets it sets are drawn)."""
    state.put(C.MODELS, lineup)
    state.put(C.MODES, ["exact", "capel"])
    state.put(C.BEST_MODE, True)


def _usable_columns(columns: list[Column], lang: Lang, unit: Unit, kind: TargetKind) -> list[Column]:
    """The columns whose mode can serve this model, unit and target kind; the others are named with the
    reason, one caption per reason."""
    # The service's one rule for each model (a compatible server's probe decides for it).
    found = {m: modes_for(m.capabilities, lang, unit, kind, probed=resources.grammar_probe(m)) for m, _ in columns}
    skipped: dict[str, list[str]] = {}
    usable = []
    for m, mode in columns:
        reason = found[m].skipped.get(mode)
        if reason is None:
            usable.append((m, mode))
        else:
            skipped.setdefault(reason, []).append(f"{m.label} · {MODE_LABELS[mode]}")
    for reason, names in skipped.items():
        st.caption(f"Skipped ({reason}): " + ", ".join(names))
    return usable


def _run(
    instruction: str,
    target: Target,
    lang: Lang,
    unit: Unit,
    columns: list[Column],
    stop_slot: st.delta_generator.DeltaGenerator,
) -> None:
    engine = resources.engine()
    temperature = resources.temperature()
    handles: list[RunHandle] = []
    problems: list[str] = []
    cid = uuid.uuid4().hex[:12]
    for choice, mode in columns:
        request = Request.of(target, instruction, lang=lang, mode=mode, unit=unit, temperature=temperature)
        build = partial(resources.build_backend, choice)
        try:
            handles.append(start(request, build, engine, origin="compare", comparison_id=cid))
        except (ValueError, BackendError) as exc:
            problems.append(f"{choice.label} · {MODE_LABELS[mode]}: {exc}")
    for p in problems:
        st.error(p)
    if not handles:
        return
    columns_run = together(handles)
    lives = columns_run.lives
    state.put(C.ID, cid)
    stop_slot = stop_slot.empty()
    stop_slot.button("Stop", icon=":material/stop:", width="stretch", key=C.STOP)
    area = st.empty()  # the live columns, headers included, go once the runs end: no leftover header row
    live_area = area.container(key=C.LIVE)
    live_area.html(scroll_into_view_html(C.LIVE), unsafe_allow_javascript=True)  # below the form on 1280×720
    cols = live_area.columns(len(lives))
    slots = []
    for col, live in zip(cols, lives, strict=True):
        with col:
            view = live.view()
            st.markdown(f"**{view.label}**  \n{mode_label(view.mode)}")
            slots.append((Slot(), Slot(), Slot()))

    def paint() -> None:
        for live, (count_slot, phase_slot, raw_slot) in zip(lives, slots, strict=True):
            view = live.view()
            left = target.high - view.units_done
            count_slot.draw("html", countdown_html(left, target.high, view.unit_label, drafting=view.drafting))
            phase = view.phase if view.phase in ("repairing", "choosing an ending", "saving") else " "
            phase_slot.draw("caption", phase)
            raw_slot.draw("html", highlight_raw(view.raw[-1500:], []))

    columns_run.run_together(paint)  # Stop, a rerun or a closed tab cancels every column, keeping what arrived
    area.empty()
    stop_slot.empty()
    for live in lives:  # a column the database refused to the end is not in History: its text, to copy now
        if live.save_error:
            view = live.view()
            st.error(
                f"{view.label} · {mode_label(view.mode)}: this run {live.save_error}. "
                "Its text is below; copy it now, History does not have it."
            )
            st.code(live.outcome.text, language=None, wrap_lines=True)


def _show(engine: Engine, cid: str, scroll: bool = False) -> None:
    """The comparison's columns, texts first, then the deviation chart; scrolled into view when just run."""
    runs = list_runs(engine, comparison_id=cid)
    if any(r.status == "running" for r in runs):  # a Stop click: wait for the columns to save what arrived
        for r in runs:
            wait_saved(r.id)
        runs = list_runs(engine, comparison_id=cid)
    runs = sorted(runs, key=lambda r: r.id)
    if not runs:
        return
    st.divider()
    top = st.container(key=C.RESULT)
    if scroll:
        top.html(scroll_into_view_html(C.RESULT), unsafe_allow_javascript=True)
    asked = target_of(runs[0]).describe(runs[0].unit)
    top.caption(f"{asked} · {len(runs)} column(s)", help=f"Comparison {cid}: its runs share this id in History.")
    per_row = min(len(runs), PER_ROW)
    for first in range(0, len(runs), per_row):
        for col, r in zip(st.columns(per_row), runs[first : first + per_row], strict=False):
            with col:
                _column(r)
    charted = [r for r in runs if charts(r)]
    if charted:
        st.plotly_chart(comparison_chart(charted), width="stretch", key=f"chart-{cid}")
    if len(charted) < len(runs):
        st.caption("Not on the chart: the columns where no text arrived (they have no count to show).")


def _column(r: RunRecord) -> None:
    """One column: model and mode, verdict, count, time, score, text, actions, raw output."""
    st.markdown(f"**{r.model}**  \n{mode_title(r)}")
    verdict_badges(verdict_of(r), r)
    m = st.container(key=hook(FIGURES, r.id)).columns(2)
    shown = r.count if r.count is not None else "–"
    m[0].metric("Count", shown, delta=verdict_of(r).deviation, delta_color="off", help=_COUNT_HELP)
    m[1].metric("Time", f"{r.seconds:.1f} s" if r.seconds is not None else "–")
    score = run_score(r)
    st.metric("Score", f"{score:g}" if score is not None else "–", help=SCORE_HELP)
    st.caption(_facts(r))
    if r.failure:
        st.error(plain_markdown(r.failure))
    if r.text.strip():
        st.caption(lengths(r))
        st.html(clean_text_html(r.text))
        quality_notes(r)
        if not assessment_of(r).junk or st.checkbox(HAND_OUT_ANYWAY, key=f"c{r.id}-anyway"):
            _column_actions(r)  # junk is handed out, or taken to Write, only once the writer says so
    with st.expander("Raw output"):
        st.html(highlight_raw(r.raw, r.errors, markers=marker_spans(r)))


def _facts(r: RunRecord) -> str:
    """Tokens, and only what is worth saying besides: repair calls, marker errors, a run that did not complete
    ("1 call(s) · 0 marker error(s) · complete" under every column said nothing)."""
    calls, errors = len(r.attempts), len(r.errors)
    parts = [f"{r.completion_tokens} tokens written" if r.completion_tokens else "tokens not reported"]
    if calls > 1:
        parts.append(f"{calls} calls (repaired)")
    if errors:
        parts.append(f"{errors} marker error{'s' if errors > 1 else ''}")
    if r.status != "complete":
        parts.append(r.status)
    return " · ".join(parts)


def _column_actions(r: RunRecord) -> None:
    """Copy, download and “Use on Write” for one column's text."""
    a = st.container(key=hook(DOWNLOADS, "c", r.id)).columns(3)  # one row on a phone too
    with a[0]:
        copy_button(r.text, f"c{r.id}")
    a[1].download_button(
        ".txt",
        export_txt(r),
        export_name(r, "txt"),
        "text/plain",
        key=f"c{r.id}-txt",
        icon=":material/download:",
        on_click="ignore",
    )
    if a[2].button("Use this", key=f"c{r.id}-use", help="Open this text on the Write page as its result."):
        state.use_column(r)


def _carry_target() -> None:
    """Arriving on Compare (a page switch drops its widgets), take Write's language, unit and target if they
    changed since last taken, so a writer compares models on the limit they were writing to; else restore
    Compare's own. Write's widgets when the switch came with their last edit (Write did not run since), else
    its copy."""
    if state.has(C.KIND):  # still on Compare: its own widgets hold
        return
    write = state.write_target()
    if write != state.get(C.CARRIED_TARGET):
        state.put(C.CARRIED_TARGET, write)
        taken = write
    else:
        taken = state.get(C.OWN_TARGET) or {}
    for field, value in taken.items():
        if value is not None:
            state.put(C.FORM.field(field), value)


def _carry_instruction() -> None:
    """Bring the Write page's instruction over, unless the writer typed another one here."""
    shared = state.write_instruction()
    if not shared or shared == state.get(C.CARRIED):
        return
    current = state.get(C.INSTRUCTION)
    if not current.strip() or current == state.get(C.CARRIED):
        state.put(C.INSTRUCTION, shared)
        state.put(C.CARRIED, shared)

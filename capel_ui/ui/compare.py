"""The Compare page: one instruction and target, several (model, mode) columns run side by side.

Columns run concurrently in worker threads that only generate and save (never touch `st`); the script
thread paints their live state. All runs of one comparison share a comparison id in History.
"""

from __future__ import annotations

import uuid

import plotly.graph_objects as go
import streamlit as st
from sqlalchemy.engine import Engine

from ..backends import EMBEDDED, PROVIDERS, BackendError, ModelChoice
from ..export import export_name, export_txt
from ..generation import Generation, Request, validate_request
from ..history import marker_spans, run_score
from ..runs import LiveRun, run_together, verdict_of
from ..storage import RunRecord, list_runs
from ..vocab import DEFAULT_UNIT, MODE_LABELS, MODES, Lang, Mode, available_modes, mode_label, unit_label
from . import resources
from .render import clean_text_html, countdown_html, highlight_raw
from .views import SCORE_HELP, copy_button, lengths, quality_notes, target_box, wait_saved
from .write import SHARED_INSTRUCTION

CARRIED = "c_carried"

MAX_COLUMNS = 8


def _model_options(current: ModelChoice) -> list[ModelChoice]:
    """The embedded model, the sidebar's model, and the paper's API models wherever a key is at hand."""
    options = [EMBEDDED]
    if current not in options:
        options.append(current)
    for provider in ("openai", "deepseek"):
        if resources.api_key(provider):  # type: ignore[arg-type]
            for model in PROVIDERS[provider].models:  # type: ignore[index]
                c = ModelChoice(provider, model)  # type: ignore[arg-type]
                if c not in options:
                    options.append(c)
    return options


def deviation_chart(runs: list[RunRecord]) -> go.Figure:
    """One bar per column, and a marker on every bar's value, so an exact column (a bar of height 0) shows."""
    labels = [f"{r.model}<br>{mode_label(r.mode)}" for r in runs]
    devs = [(r.count or 0) - r.target for r in runs]
    colors = ["#2b8a3e" if verdict_of(r).verified else "#c92a2a" for r in runs]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=devs,
            marker_color=colors,
            text=[f"{d:+d}" if d else "0 (exact)" for d in devs],
            textposition="outside",
            hovertemplate="%{x}<br>deviation %{y:+d}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=devs,
            mode="markers",
            marker={"symbol": "diamond", "size": 13, "color": colors, "line": {"width": 1, "color": "#212529"}},
            hoverinfo="skip",
            name="deviation",
        )
    )
    fig.update_layout(
        title="Deviation from the target (count − target)",
        yaxis_title="units",
        height=360,
        margin={"t": 50, "b": 40, "l": 40, "r": 20},
        showlegend=False,
    )
    fig.add_hline(y=0, line_color="#495057")
    return fig


def render() -> None:
    st.title("Compare")
    st.caption("Baseline beside CAPEL beside Exact for one model, or one mode across models.")
    current = resources.model_choice()
    _carry_instruction()
    instruction = st.text_area(
        "Instruction",
        key="c_instruction",
        height=80,
        placeholder="e.g. Write a product description for a hand-made ceramic mug.",
    )
    c = st.columns([1, 1, 3])
    lang: Lang = c[0].radio(
        "Language", ["en", "zh"], key="c_lang", format_func={"en": "English words", "zh": "Chinese characters"}.get
    )
    target = target_box(c[1], "c_target", 40)
    options = _model_options(current)
    models = c[2].multiselect("Models", options, default=[current], format_func=lambda m: m.label, key="c_models")
    if len(options) == 1:
        c[2].caption(
            "More models: type an OpenAI or DeepSeek API key in the sidebar, or pick “OpenAI-compatible server” "
            "there and give its base URL; they appear here."
        )
    modes: list[Mode] = st.multiselect(
        "Modes", MODES, default=["baseline", "capel", "exact"], format_func=MODE_LABELS.get, key="c_modes"
    )
    unit = DEFAULT_UNIT[lang]
    columns = [(m, mode) for m in models for mode in modes]
    grammar = {m: resources.takes_grammar(m) for m in models}  # a compatible server's probe decides for it
    usable = [(m, mode) for m, mode in columns if mode in available_modes(grammar[m], lang, unit)]
    skipped = [col for col in columns if col not in usable]
    if skipped:
        st.caption(
            "Skipped (the model takes no grammar, or its server ignored one when asked): "
            + ", ".join(f"{m.label} · {MODE_LABELS[d]}" for m, d in skipped)
        )
    if len(usable) > MAX_COLUMNS:
        st.warning(f"{len(usable)} columns; only the first {MAX_COLUMNS} run.")
        usable = usable[:MAX_COLUMNS]

    b = st.columns([1, 1, 4])
    run = b[0].button(
        "Run comparison", type="primary", icon=":material/play_arrow:", width="stretch", disabled=not usable
    )
    if run:
        _run(instruction, int(target), lang, unit, usable, b[1])
    cid = st.session_state.get("c_id")
    if cid:
        _show(resources.engine(), cid)


def _run(
    instruction: str,
    target: int,
    lang: Lang,
    unit: str,
    columns: list[tuple[ModelChoice, Mode]],
    stop_slot: st.delta_generator.DeltaGenerator,
) -> None:
    engine = resources.engine()
    temperature = resources.temperature()
    lives: list[LiveRun] = []
    problems: list[str] = []
    cid = uuid.uuid4().hex[:12]
    for choice, mode in columns:
        request = Request(
            instruction=instruction,
            target=target,
            lang=lang,
            mode=mode,
            unit=unit,  # type: ignore[arg-type]
            temperature=temperature,
        )
        try:
            validate_request(request)
            gen = Generation(resources.build_backend(choice), request)
        except (ValueError, BackendError) as exc:
            problems.append(f"{choice.label} · {MODE_LABELS[mode]}: {exc}")
            continue
        lives.append(LiveRun(gen, engine, origin="compare", comparison_id=cid))
    for p in problems:
        st.error(p)
    if not lives:
        return
    st.session_state["c_id"] = cid
    stop_slot = stop_slot.empty()
    stop_slot.button("Stop", icon=":material/stop:", width="stretch", key="c_stop")
    area = st.empty()  # the live columns, headers included, go once the runs end: no leftover header row
    cols = area.container().columns(len(lives))
    slots = []
    for col, live in zip(cols, lives, strict=True):
        with col:
            st.markdown(f"**{live.gen.backend.label}**  \n{mode_label(live.gen.mode)}")
            slots.append((st.empty(), st.empty()))

    def paint() -> None:
        for live, (count_ph, raw_ph) in zip(lives, slots, strict=True):
            gen = live.gen
            left = target - gen.units_done
            count_ph.html(countdown_html(left, target, unit_label(gen.request.count_unit), drafting=gen.in_draft))
            raw_ph.html(highlight_raw(gen.raw[-1500:], []))

    run_together(lives, paint)  # Stop, a rerun or a closed tab cancels every column, keeping what arrived
    area.empty()
    stop_slot.empty()


def _show(engine: Engine, cid: str) -> None:
    runs = list_runs(engine, comparison_id=cid)
    if any(r.status == "running" for r in runs):  # a Stop click: wait for the columns to save what arrived
        for r in runs:
            wait_saved(r.id)
        runs = list_runs(engine, comparison_id=cid)
    runs = sorted(runs, key=lambda r: r.id)
    if not runs:
        return
    st.divider()
    st.caption(f"Comparison {cid} · {runs[0].target} {unit_label(runs[0].unit)} · {len(runs)} column(s)")
    st.plotly_chart(deviation_chart(runs), width="stretch", key=f"chart-{cid}")
    cols = st.columns(len(runs))
    for col, r in zip(cols, runs, strict=True):
        with col:
            st.markdown(f"**{r.model}**  \n{mode_label(r.mode)}")
            verdict = verdict_of(r)
            st.badge(verdict.headline(r.unit), color=verdict.tone)
            m = st.columns(2)
            m[0].metric(
                "Count", r.count if r.count is not None else "–", delta=(r.count or 0) - r.target, delta_color="off"
            )
            m[1].metric("Time", f"{r.seconds:.1f} s" if r.seconds is not None else "–")
            score = run_score(r)
            st.metric("Score", f"{score:g}" if score is not None else "–", help=SCORE_HELP)
            calls = f"{max(len(r.attempts), 1)} call(s) · "
            st.caption(f"{calls}{r.completion_tokens or '–'} tokens · {len(r.errors)} marker error(s) · {r.status}")
            if r.failure:
                st.error(r.failure)
            if r.text.strip():
                st.caption(lengths(r))
                st.html(clean_text_html(r.text))
                quality_notes(r)
                _column_actions(r)
            with st.expander("Raw output"):
                st.html(highlight_raw(r.raw, r.errors, markers=marker_spans(r)))


def _column_actions(r: RunRecord) -> None:
    """Copy, download and “Use on Write” for one column's text."""
    a = st.columns(3)
    with a[0]:
        copy_button(r.text, f"c{r.id}")
    a[1].download_button(
        ".txt", export_txt(r), export_name(r, "txt"), "text/plain", key=f"c{r.id}-txt", icon=":material/download:"
    )
    if a[2].button("Use this", key=f"c{r.id}-use", help="Open this text on the Write page as its result."):
        st.session_state["w_run_id"] = r.id
        st.switch_page("app_pages/write.py")


def _carry_instruction() -> None:
    """Bring the Write page's instruction over, unless the writer typed another one here."""
    # Write's own box, when its last edit came with this page switch (Write did not run since), else its copy.
    shared = st.session_state.get("w_instruction") or st.session_state.get(SHARED_INSTRUCTION, "")
    if not shared or shared == st.session_state.get(CARRIED):
        return
    current = st.session_state.get("c_instruction", "")
    if not current.strip() or current == st.session_state.get(CARRIED):
        st.session_state["c_instruction"] = shared
        st.session_state[CARRIED] = shared

"""The Write page: an instruction and a target in, verified text out, the countdown visible as it streams."""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ..backends import Backend, BackendError, ModelChoice
from ..backends import fallback as fallback_for
from ..counting import count, count_detail
from ..generation import Request, default_max_tokens
from ..history import run_score, run_warnings
from ..prompts import REWRITE
from ..quality import junk
from ..repair import REPAIR_MODES
from ..runs import verdict_of
from ..service import RunHandle, start
from ..storage import get_run, list_runs
from ..variants import ranked_runs
from ..verdict import Target
from ..vocab import (
    DEFAULT_MAX_CALLS,
    DEFAULT_STALL_LIMIT,
    DEFAULT_TIME_LIMIT,
    DEFAULT_VARIANTS,
    MARKER_LIMITS,
    MARKER_MODES,
    MAX_CALLS,
    MAX_VARIANTS,
    MODE_LABELS,
    SHORT_TEXT,
    Lang,
    Mode,
    TargetKind,
    Unit,
    available_modes,
    grammar_units,
    markers_can_count,
    mode_label,
    unit_label,
)
from . import resources, state
from .layout import VARIANTS, hook
from .render import clean_text_html, live_variant_html, scroll_into_view_html
from .state import W
from .target_form import lang_radio, preset_pills, set_target_defaults, target_inputs, target_settings, unit_picker
from .views import edit_box, elapsed, quality_notes, render_run, stream_live, verdict_badges, wait_saved

DEFAULT_TARGET = 25


def _live_count(where: Any, text: str, unit: Unit, target: Target | None) -> None:
    """How long the pasted text is in the chosen unit, beside what it should become: 60 English words → 30."""
    if not text.strip():
        return
    arrow = f" → {target.label}" if target else ""
    detail = count_detail(text, unit)
    where.caption(f"{count(text, unit)} {unit_label(unit)}{arrow}" + (f" · {detail}" if detail else ""))


def _mode_picked() -> None:
    state.put(W.MODE_WANTED, state.get(W.MODE))


def _settle_mode(
    modes: list[Mode], default: Mode, choice: Any, lang: Lang, unit: Unit, kind: TargetKind = "exactly"
) -> str | None:
    """Show the writer's own mode when it can run here; otherwise use CAPEL for now and say why (the writer's
    pick comes back once the model or the unit allows it). Returns that notice, if any."""
    wanted = state.get(W.MODE_WANTED) or default
    state.put(W.MODE_WANTED, wanted)
    if wanted in modes:
        state.put(W.MODE, wanted)
        return None
    if state.get(W.MODE) not in modes:
        state.put(W.MODE, "capel" if "capel" in modes else modes[0])
    used = mode_label(state.get(W.MODE))
    if wanted in MARKER_MODES and not markers_can_count(lang, unit, kind):
        return f"{MARKER_LIMITS}: {used} is used for now."
    if not choice.capabilities.grammar:
        return (
            f"{mode_label(wanted)} needs a model that takes a grammar, and {choice.label} does not: {used} is used "
            f"for now. {mode_label(wanted)} comes back when you pick the embedded model, a GGUF file, or a server "
            "that takes a grammar."
        )
    units = " or ".join(unit_label(u) for u in grammar_units(lang))
    return (
        f"{mode_label(wanted)} cannot guarantee a count in {unit_label(unit)}: {used} is used for now. "
        f"{mode_label(wanted)} comes back when you count in {units}."
    )


def render() -> None:
    st.title("Write")
    st.caption("Text of an exact length: the model counts down as it writes, and every count is checked.")
    state.take_prefill()
    state.take_send_back()
    set_target_defaults(W.PREFIX, DEFAULT_TARGET)
    state.keep(W.INSTRUCTION)  # turning "Rewrite my own text" on and off loses neither text
    state.keep(W.SOURCE)
    for key, value in ((W.FALLBACK, True), (W.INSTRUCTION, "")):
        st.session_state.setdefault(key, value)
    choice = resources.model_choice()

    preset_pills(W.PREFIX)
    rewrite = st.toggle("Rewrite my own text to length", key=W.REWRITE)
    source = instruction = ""
    source_count = None
    if rewrite:  # the pasted text is the instruction: the typed one is hidden, not shown greyed out and stale
        source = st.text_area("Your text", key=W.SOURCE, height=140, placeholder="Paste the text to rewrite…")
        st.caption(
            "Shorter in Exact mode on a local model: whole sentences and clauses of your own text go, the facts stay. "
            "Beside the verdict: the facts it kept (names, numbers, dates) and lost, and its words not yours."
        )
        source_count = st.empty()
    else:
        instruction = st.text_area(
            "Instruction",
            key=W.INSTRUCTION,
            height=90,
            placeholder="What should the model write? e.g. Write a headline about a lighthouse.",
        )
        state.share_from_write(instruction, None)
    c = st.columns([1.2, 1.5, 2])
    lang = lang_radio(c[0], W.PREFIX, DEFAULT_TARGET)
    unit = unit_picker(c[1], W.PREFIX, lang)
    kind: TargetKind = state.get(W.KIND) or "exactly"
    target_row = st.container()
    probed = resources.grammar_probe(choice)  # a compatible server's grammar field: honoured or not
    grammar_ok = resources.takes_grammar(choice, probed)
    modes = available_modes(grammar_ok, lang, unit, kind)
    default_mode: Mode = "exact" if "exact" in modes and choice.spec.local else "capel"
    switched = _settle_mode(modes, default_mode, choice, lang, unit, kind)
    if switched and probed is not None and not probed.honoured:
        used = mode_label(state.get(W.MODE))
        switched = f"The guaranteed modes are off on this server (see below the mode), so {used} is used for now."
    mode: Mode = c[2].selectbox("Mode", modes, format_func=MODE_LABELS.get, key=W.MODE, on_change=_mode_picked)
    if switched:
        st.info(switched, icon=":material/swap_horiz:")
    if probed is not None:
        c[2].caption(probed.label)
    elif not switched and choice.capabilities.grammar is False:
        c[2].caption(
            "Exact modes need a model that takes a grammar (embedded, GGUF, GPT-5 family, llama.cpp, vLLM, "
            "SGLang, Ollama, LM Studio)."
        )
    if not switched and not markers_can_count(lang, unit, kind):
        c[2].caption(MARKER_LIMITS + ".")
    countable = markers_can_count(lang, unit, kind) and not rewrite
    instead = fallback_for(choice.model, mode, choice.capabilities, countable) if state.get(W.FALLBACK) else None
    if instead is not None:  # said where the mode is picked; the option to force it is in Options
        c[2].caption(f"{choice.label} {instead.reason}: it writes {MODE_LABELS[instead.mode]} instead (see Options).")
    target_spec = target_inputs(target_row, W.PREFIX, DEFAULT_TARGET)
    _offer_a_pull(choice, lang, target_spec.high if target_spec else None)
    state.share_from_write(None, target_settings(W.PREFIX))
    if source_count is not None:  # the pasted text's length is the writer's starting point; an instruction's is not
        _live_count(source_count, source, unit, target_spec)
    target = target_spec.high if target_spec else int(state.get(W.TARGET))

    actions = st.container()  # Generate sits above the Options, drawn after them (it needs their values)
    with st.expander("Options"):
        code = st.checkbox("Code-aware (a whole code line counts as one unit)", key=W.CODE)
        fallback = st.checkbox(
            "Fall back for models known to misread the countdown",
            key=W.FALLBACK,
            help="The paper saw o4-mini and gpt-4o-mini misread the countdown (§4.3): CAPEL gives them the baseline "
            "instruction. The embedded model is too small to write under countdown markers: the guaranteed "
            "countdown writes it as Exact (guaranteed), with the same count. The GPT-5 family writes Exact under the "
            "countdown grammar, so it sees how many words are left and plans its last sentence.",
        )
        max_tokens, seed, time_limit = _limits(int(target), lang, mode, unit)
        max_calls = st.number_input(
            "Repair tries",
            min_value=1,
            max_value=MAX_CALLS,
            value=1 if choice.capabilities.grammar else DEFAULT_MAX_CALLS,
            key=f"w_max_calls_{choice.capabilities.grammar}",
            disabled=mode not in REPAIR_MODES,
            help="A CAPEL countdown that goes wrong keeps its verified part and the model continues from the next "
            "marker, up to this many calls in all; 1 turns repair off. On by default for models without a grammar.",
        )

    b = actions.columns([1, 1, 1, 2.2], vertical_alignment="bottom")  # one row: in view at 1280×720 with the form
    k, judge = _variant_settings(int(target), choice, b[2], b[3])
    go = b[0].button("Generate", type="primary", icon=":material/edit:", width="stretch")
    live = st.container(key=W.LIVE)
    result = st.empty()  # drawn over at once: a new run never streams above the previous run's result
    if go:
        if rewrite and not source.strip():
            st.error("Paste the text to rewrite, or turn off “Rewrite my own text”.")
            return
        if target_spec is None:
            return
        text = REWRITE[lang].format(text=source.strip()) if rewrite else instruction
        request = Request.of(
            target_spec,
            text,
            lang=lang,
            mode=mode,
            unit=unit,
            code=code,
            temperature=resources.temperature(),
            max_tokens=max_tokens,
            seed=seed,
            time_limit=time_limit,
            allow_fallback=fallback,
            max_calls=int(max_calls),
        )
        try:
            handle = start(
                request,
                lambda: resources.build_backend(choice),
                resources.engine(),
                origin="write",
                variants=k,
                judge=lambda: _build_judge(judge),
                instruction=text,
            )
        except (ValueError, BackendError) as exc:
            st.error(str(exc))
            return
        if k > 1:
            _run_variants(handle, b[1], live)
            _show_result(result, scroll=True)
            return
        state.drop(W.GROUP)
        state.put(W.RUN_ID, handle.live.run_id)
        stop_slot = b[1].empty()
        stop_slot.button("Stop", icon=":material/stop:", width="stretch", key=W.STOP)
        with live:
            st.html(scroll_into_view_html(W.LIVE), unsafe_allow_javascript=True)  # the countdown in view
            if handle.notice:
                st.info(handle.notice)
            stream_live(handle.live)
        stop_slot.empty()
        if handle.live.save_error:
            _show_unsaved(handle.live.save_error, handle.live.outcome.text)
            return
        _judge_single(handle)
    _show_result(result, scroll=go)


LONG_FOR_EMBEDDED = 300
"""Words beyond which the embedded 135M model loses the thread: the page suggests a larger local model."""


def _offer_a_pull(choice: ModelChoice, lang: Lang, target: int | None) -> None:
    """When the embedded model cannot serve the request well (Chinese; a long text), say so and offer the pull."""
    if choice.provider != "embedded":
        return
    if lang not in choice.spec.languages:
        why, pick = "The embedded SmolLM2 does not write Chinese (an exact count, but not prose)", "qwen2.5-1.5b"
    elif target is not None and target > LONG_FOR_EMBEDDED:
        why, pick = f"The embedded SmolLM2 loses the thread beyond about {LONG_FOR_EMBEDDED} words", "smollm2-1.7b"
    else:
        return
    st.warning(f"{why}: pull **{pick}** (about 1 GB, once) and pick it in the sidebar.", icon=":material/download:")
    st.page_link("app_pages/models.py", label=f"Pull {pick} on the Models page", icon=":material/download:")


def _show_unsaved(error: str, text: str) -> None:
    """A run the database refused to the end: its text, to copy now (History does not have it)."""
    st.error(f"This run {error}. Its text is below; copy it now, History does not have it.")
    st.code(text, language=None, wrap_lines=True)


def _show_result(result: DeltaGenerator, scroll: bool = False) -> None:
    """The variants of the last request (if several), then the picked (or only) run in full; scrolled into view
    when it has just been written (below the form, it is off a 1280×720 screen)."""
    run_id = state.get(W.RUN_ID)
    if run_id is None:
        return
    wait_saved(run_id)
    run = get_run(resources.engine(), run_id)
    if run is None:
        state.drop(W.RUN_ID)
        return
    with result.container(key=W.RESULT):
        if scroll:
            st.html(scroll_into_view_html(W.RESULT), unsafe_allow_javascript=True)
        _show_variants()
        if run.status == "cancelled":
            st.info("Stopped. What arrived is kept in History.")
        render_run(run, key=f"w{run.id}")
        edit_box(run, resources.engine(), key=f"w{run.id}", on_saved=_show_run, on_send=_send_back)


def _show_run(run_id: int) -> None:
    state.put(W.RUN_ID, run_id)


def _send_back(text: str) -> None:
    state.send_back(text)


def _limits(target: int, lang: Lang, mode: Mode, unit: Unit) -> tuple[int | None, int | None, float | None]:
    """Output limit, seed and time limit; empty means the default, and the default is shown in the box. The boxes
    have no bounds (a bounded box keeps showing an out-of-range number while using another): the request's own
    check refuses a limit below 1 with a message on Generate."""
    auto = default_max_tokens(Request(instruction="-", target=target, lang=lang, mode=mode, unit=unit))
    o = st.columns(3)
    max_tokens = o[0].number_input(
        "Output limit (max tokens)",
        value=None,
        step=64,
        key="w_max_tokens",
        placeholder=f"automatic: {auto}",
        help=f"Empty: {auto} tokens, from the target and mode. The model stops here even if the text is unfinished.",
    )
    seed = o[1].number_input(
        "Seed",
        value=None,
        step=1,
        key="w_seed",
        placeholder="none (varies)",
        help="The same seed, model and settings give the same text where the server supports it.",
    )
    time_limit = o[2].number_input(
        "Time limit (seconds)",
        value=DEFAULT_TIME_LIMIT,
        step=10.0,
        key="w_time_limit",
        placeholder="none",
        help=(
            "Stop the run after this long, keeping what arrived (clear it for no limit). A run is also stopped "
            f"when no new text comes for {DEFAULT_STALL_LIMIT:g} s."
        ),
    )
    return (
        int(max_tokens) if max_tokens is not None else None,
        int(seed) if seed is not None else None,
        float(time_limit) if time_limit is not None else None,
    )


# ----- variants and the judge (issue 12) ------------------------------------------------------------------------


def _judge_options(current: ModelChoice) -> list[ModelChoice]:
    """Models that can judge: the API models a key is at hand for, and the sidebar's own server if it has a URL."""
    options = resources.keyed_api_models()
    if current.spec.takes_base_url and current.base_url and current not in options:
        options.append(current)
    return options


def _variant_settings(
    target: int, choice: ModelChoice, where_k: DeltaGenerator, where_judge: DeltaGenerator
) -> tuple[int, ModelChoice | None]:
    """How many candidates to write (default 3 for a short text) and the judge, if the writer has one.

    Until the writer sets it the box follows the target and the model, and it is keyed by its default: a box
    written to anew on each change could send its old number back with the next rerun as if typed (a page not yet
    redrawn), and a paid API would then be asked three times unasked. Once set, `W.VARIANTS` holds the number."""
    local = choice.spec.local  # free to run K times; a paid API is not tripled unasked
    default = DEFAULT_VARIANTS if target <= SHORT_TEXT and local else 1
    key = W.VARIANTS if state.get(W.VARIANTS_SET) else f"{W.VARIANTS}_default_{default}"
    if state.get(key) is None:
        state.put(key, default)
    k = where_k.number_input(
        "Variants",
        min_value=1,
        max_value=MAX_VARIANTS,
        step=1,
        key=key,
        on_change=_variants_set,
        args=(key,),
        help=f"Write several candidates at once, ranked by score; pick the one you want (default "
        f"{DEFAULT_VARIANTS} for texts up to {SHORT_TEXT} units on a local model, else 1).",
    )
    judges = _judge_options(choice)
    judge = None
    if judges:  # with no judge at hand nothing asks for one
        judge = where_judge.selectbox(
            "Judge model (optional)",
            [None, *judges],
            format_func=lambda m: "No judge (offline score)" if m is None else m.label,
            key="w_judge",
            help="Rates each text 1-10 with FastChat's single-v1 prompt; the rating ranks the variants.",
        )
    return int(k), judge


def _variants_set(key: str) -> None:
    """The writer chose a number: it stays, under `W.VARIANTS`, whatever the target and model."""
    state.put(W.VARIANTS, state.get(key))
    state.put(W.VARIANTS_SET, True)


def _build_judge(judge: ModelChoice | None) -> Backend | None:
    if judge is None:
        return None
    try:
        return resources.build_backend(judge)
    except BackendError as exc:
        st.warning(f"The judge is not available: {exc}")
        return None


def _judge_single(handle: RunHandle) -> None:
    if handle.judge is not None:
        with st.spinner(f"{handle.judge.label} is rating the text…"):
            handle.result()


def _run_variants(handle: RunHandle, stop_col: DeltaGenerator, area: DeltaGenerator) -> None:
    """Write K candidates at once, painting each one's countdown; then judge them if a judge is configured."""
    lives, request = handle.lives, handle.request
    state.put(W.GROUP, handle.group_id)
    state.put(W.RUN_ID, lives[0].run_id)
    stop_slot = stop_col.empty()
    stop_slot.button("Stop", icon=":material/stop:", width="stretch", key=W.STOP)
    with area:
        st.html(scroll_into_view_html(W.LIVE), unsafe_allow_javascript=True)  # the countdowns in view
        status = st.empty()
        slots = [col.empty() for col in st.columns(len(lives))]
    label = unit_label(request.count_unit)

    def paint() -> None:
        gen = lives[0].gen
        status.caption(f"{len(lives)} variants · {gen.backend.label} · {mode_label(gen.mode)} · {elapsed(gen)}")
        for live, slot in zip(lives, slots, strict=True):
            done = live.gen.units_done
            slot.html(live_variant_html(request.target - done, request.target, label, live.gen.live_text()))

    handle.run_together(paint)
    for slot in (status, *slots):
        slot.empty()
    stop_slot.empty()
    with area:  # a variant the database refused to the end is in no group History shows: its text, to copy now
        for live in lives:
            if live.save_error:
                _show_unsaved(live.save_error, live.outcome.text)
    with st.spinner("Scoring the variants…"):
        ranked = handle.result()
    state.put(W.RUN_ID, ranked[0].run_id)  # the best one is picked until the writer picks another


def _show_variants() -> None:
    """The group's candidates side by side, best first, with scores; the picked one is shown in full below."""
    group_id = state.get(W.GROUP)
    if not group_id:
        return
    engine = resources.engine()
    runs = list_runs(engine, group_id=group_id)
    for r in runs:
        wait_saved(r.id)
    runs = list_runs(engine, group_id=group_id)
    if not runs:
        return
    runs = ranked_runs(runs)  # best first; a rewrite's identical variants once
    picked = state.get(W.RUN_ID)
    st.subheader(f"{len(runs)} variants, best first")
    cards = st.container(key=hook(VARIANTS, group_id)).columns(len(runs))
    for i, (col, r) in enumerate(zip(cards, runs, strict=True), 1):
        with col:
            score = run_score(r)
            st.markdown(f"**#{i}** · score **{score:g}**" if score is not None else f"**#{i}** · no score")
            verdict_badges(verdict_of(r), r)
            st.html(clean_text_html(r.text))
            quality_notes(r)
            if r.id == picked:
                st.button("Picked", key=f"w_pick{r.id}", disabled=True, icon=":material/check:", width="stretch")
            elif st.button("Pick this one", key=f"w_pick{r.id}", width="stretch"):
                state.put(W.RUN_ID, r.id)
                st.rerun()
    st.divider()
    if all(junk(run_warnings(r)) for r in runs):
        st.warning(
            "Every variant goes round in circles, is a list of numbers or is not real text in this language: none "
            "is worth keeping. Run again, or change the instruction or the model.",
            icon=":material/report:",
        )
    st.caption("The picked variant (its badge, copy and exports):")

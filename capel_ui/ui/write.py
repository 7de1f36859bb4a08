"""The Write page: an instruction and a target in, verified text out, the countdown visible as it streams."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ..backends import Backend, BackendError, ModelChoice, uses_fallback
from ..counting import count, count_detail
from ..generation import Generation, Request, default_max_tokens, validate_request
from ..history import run_score
from ..judge import judge_run
from ..repair import REPAIR_MODES
from ..runs import LiveRun, run_together, verdict_of
from ..storage import get_run, list_runs
from ..variants import finish, rank_key, start_variants
from ..verdict import Target
from ..vocab import (
    DEFAULT_MAX_CALLS,
    DEFAULT_VARIANTS,
    GRAMMAR_UNITS,
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
    markers_can_count,
    mode_label,
    unit_label,
)
from . import resources
from .render import clean_text_html, countdown_html, scroll_into_view_html
from .target_form import lang_radio, preset_pills, set_target_defaults, target_inputs, target_settings, unit_picker
from .views import badge, edit_box, quality_notes, render_run, stream_live, wait_saved

DEFAULT_TARGET = 25
WANTED_MODE = "w_mode_wanted"
"""The mode the writer picked; kept apart from the widget so a model without a grammar never overwrites it."""
SHARED_INSTRUCTION = "instruction_shared"
"""The last instruction typed on Write, kept outside widget state (which a page switch clears) for Compare."""

SHARED_TARGET = "target_shared"
"""Write's language, unit and target fields (`target_form.target_settings`), kept outside widget state for
Compare to start from."""
REWRITE = {
    "en": "Rewrite the following text, keeping its meaning and tone:\n\n{text}",
    "zh": "改写下面这段文字，保留原意和语气：\n\n{text}",
}


def _apply_send_back() -> None:
    """An edited text sent back from the edit box becomes the text to rewrite."""
    text = st.session_state.pop("w_send_back", None)
    if text is not None:
        st.session_state["w_rewrite"] = True
        st.session_state["w_source"] = text


def _live_count(where: Any, text: str, unit: Unit, target: Target | None) -> None:
    """How long the instruction or pasted text is in the chosen unit, beside what it should become: 60 words → 30."""
    if not text.strip():
        return
    arrow = f" → {target.label}" if target else ""
    detail = count_detail(text, unit)
    where.caption(f"{count(text, unit)} {unit_label(unit)}{arrow}" + (f" · {detail}" if detail else ""))


def rewrite_source(instruction: str) -> str | None:
    """The pasted text of a rewrite run's instruction (as `REWRITE` built it), or None for a plain instruction."""
    for template in REWRITE.values():
        head = template.split("{text}")[0]
        if instruction.startswith(head) and len(instruction) > len(head):
            return instruction[len(head) :]
    return None


def prefill_for(run: Any) -> dict[str, Any]:
    """The Write inputs that re-run `run` as it was asked: a rewrite run comes back as a rewrite of its text."""
    fields = {"lang": run.lang, "unit": run.unit, "target": run.target, "mode": run.mode, "code": bool(run.code)}
    fields |= {"kind": run.target_kind, "low": run.target_low or run.target}
    source = rewrite_source(run.instruction or "")
    if source is None:
        return {**fields, "instruction": run.instruction, "rewrite": False}
    return {**fields, "source": source, "rewrite": True}


def _apply_prefill() -> None:
    """History's Re-run hands over a run's settings; apply them before the widgets are drawn, and drop the
    result shown before (it belongs to another run)."""
    prefill = st.session_state.pop("prefill", None)
    if not prefill:
        return
    for key, value in prefill.items():
        st.session_state[f"w_{key}"] = value
    st.session_state[WANTED_MODE] = prefill.get("mode")
    st.session_state["w_preset"] = None
    st.session_state.pop("w_run_id", None)


def _mode_picked() -> None:
    st.session_state[WANTED_MODE] = st.session_state.get("w_mode")


def _settle_mode(
    modes: list[Mode], default: Mode, choice: Any, lang: Lang, unit: Unit, kind: TargetKind = "exactly"
) -> str | None:
    """Show the writer's own mode when it can run here; otherwise use CAPEL for now and say why (the writer's
    pick comes back once the model or the unit allows it). Returns that notice, if any."""
    wanted = st.session_state.get(WANTED_MODE) or default
    st.session_state[WANTED_MODE] = wanted
    if wanted in modes:
        st.session_state["w_mode"] = wanted
        return None
    if st.session_state.get("w_mode") not in modes:
        st.session_state["w_mode"] = "capel" if "capel" in modes else modes[0]
    used = mode_label(st.session_state["w_mode"])
    if wanted in MARKER_MODES and not markers_can_count(lang, unit, kind):
        return f"{MARKER_LIMITS}: {used} is used for now."
    if not choice.capabilities.grammar:
        return (
            f"{mode_label(wanted)} needs a model that takes a grammar, and {choice.label} does not: {used} is used "
            f"for now. {mode_label(wanted)} comes back when you pick the embedded model, a GGUF file, or a server "
            "that takes a grammar."
        )
    units = " or ".join(unit_label(u) for u in GRAMMAR_UNITS[lang])
    return (
        f"{mode_label(wanted)} cannot guarantee a count in {unit_label(unit)}: {used} is used for now. "
        f"{mode_label(wanted)} comes back when you count in {units}."
    )


def render() -> None:
    st.title("Write")
    st.caption("Text of an exact length: the model counts down as it writes, and every count is checked.")
    _apply_prefill()
    _apply_send_back()
    set_target_defaults("w_", DEFAULT_TARGET)
    for key, value in (("w_fallback", True), ("w_instruction", "")):
        st.session_state.setdefault(key, value)
    choice = resources.model_choice()

    preset_pills("w_")
    rewrite = st.toggle("Rewrite my own text to length", key="w_rewrite")
    source = instruction = ""
    source_count = None
    if rewrite:  # the pasted text is the instruction: the typed one is hidden, not shown greyed out and stale
        source = st.text_area("Your text", key="w_source", height=140, placeholder="Paste the text to rewrite…")
        source_count = st.empty()
    else:
        instruction = st.text_area(
            "Instruction",
            key="w_instruction",
            height=90,
            placeholder="What should the model write? e.g. Write a headline about a lighthouse.",
        )
        st.session_state[SHARED_INSTRUCTION] = instruction
    live_count = st.empty()
    c = st.columns([1.2, 1.5, 2])
    lang = lang_radio(c[0], "w_", DEFAULT_TARGET)
    unit = unit_picker(c[1], "w_", lang)
    kind: TargetKind = st.session_state.get("w_kind") or "exactly"
    target_row = st.container()
    probed = resources.grammar_probe(choice)  # a compatible server's grammar field: honoured or not
    grammar_ok = resources.takes_grammar(choice, probed)
    modes = available_modes(grammar_ok, lang, unit, kind)
    default_mode: Mode = "exact" if "exact" in modes and choice.spec.local else "capel"
    switched = _settle_mode(modes, default_mode, choice, lang, unit, kind)
    if switched and probed is not None and not probed.honoured:
        used = mode_label(st.session_state["w_mode"])
        switched = f"The guaranteed modes are off on this server (see below the mode), so {used} is used for now."
    mode: Mode = c[2].selectbox("Mode", modes, format_func=MODE_LABELS.get, key="w_mode", on_change=_mode_picked)
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
    target_spec = target_inputs(target_row, "w_", DEFAULT_TARGET)
    st.session_state[SHARED_TARGET] = target_settings("w_")
    _live_count(source_count if source_count is not None else live_count, source or instruction, unit, target_spec)
    target = target_spec.high if target_spec else int(st.session_state["w_target"])

    with st.expander("Options"):
        code = st.checkbox("Code-aware (a whole code line counts as one unit)", key="w_code")
        fallback = st.checkbox(
            "Fall back to the baseline for models known to misread the countdown",
            key="w_fallback",
            help="The paper saw o4-mini and gpt-4o-mini misread the countdown (§4.3).",
        )
        if uses_fallback(choice.model) and mode in ("capel", "draft-capel") and fallback:
            st.info(f"{choice.model} will get the baseline instruction instead of the countdown.")
        max_tokens, seed, time_limit = _limits(int(target), lang, mode, unit)
        max_calls = st.number_input(
            "Max calls (repair)",
            min_value=1,
            max_value=MAX_CALLS,
            value=1 if choice.capabilities.grammar else DEFAULT_MAX_CALLS,
            key=f"w_max_calls_{choice.capabilities.grammar}",
            disabled=mode not in REPAIR_MODES,
            help="A CAPEL countdown that goes wrong keeps its verified part and the model continues from the next "
            "marker, up to this many calls in all; 1 turns repair off. On by default for models without a grammar.",
        )
    if lang not in choice.spec.languages:
        st.info(
            "SmolLM2 does not write Chinese: Exact mode still gives the right number of characters, not good "
            "prose. Use a Chinese-capable model (e.g. a Qwen GGUF or an API) for real text."
        )

    k, judge = _variant_settings(int(target), choice)
    b = st.columns([1, 1, 4])
    go = b[0].button("Generate", type="primary", icon=":material/edit:", width="stretch")
    live = st.container(key="w_live")
    result = st.empty()  # drawn over at once: a new run never streams above the previous run's result
    if go:
        if rewrite and not source.strip():
            st.error("Paste the text to rewrite, or turn off “Rewrite my own text”.")
            return
        if target_spec is None:
            return
        text = REWRITE[lang].format(text=source.strip()) if rewrite else instruction
        request = Request(
            instruction=text,
            target=target_spec.high,
            target_kind=target_spec.kind,
            target_low=target_spec.low,
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
            validate_request(request)
            backend = resources.build_backend(choice)
            gen = Generation(backend, request)
        except (ValueError, BackendError) as exc:
            st.error(str(exc))
            return
        if k > 1:
            _run_variants(backend, request, k, judge, b[1], live)
            _show_result(result)
            return
        st.session_state.pop("w_group", None)
        live_run = LiveRun(gen, resources.engine(), origin="write", instruction=text)
        run_id = live_run.run_id
        st.session_state["w_run_id"] = run_id
        stop_slot = b[1].empty()
        stop_slot.button("Stop", icon=":material/stop:", width="stretch", key="w_stop")
        with live:
            st.html(scroll_into_view_html("w_live"), unsafe_allow_javascript=True)  # the countdown in view
            if gen.notice:
                st.info(gen.notice)
            stream_live(live_run)
        stop_slot.empty()
        _judge_single(judge, live_run)
    _show_result(result)


def _show_result(result: st.delta_generator.DeltaGenerator) -> None:
    """The variants of the last request (if several), then the picked (or only) run in full."""
    run_id = st.session_state.get("w_run_id")
    if run_id is None:
        return
    wait_saved(run_id)
    run = get_run(resources.engine(), run_id)
    if run is None:
        st.session_state.pop("w_run_id", None)
        return
    with result.container():
        _show_variants()
        if run.status == "cancelled":
            st.info("Stopped. What arrived is kept in History.")
        render_run(run, key=f"w{run.id}")
        edit_box(run, resources.engine(), key=f"w{run.id}", on_saved=_show_run, on_send=_send_back)


def _show_run(run_id: int) -> None:
    st.session_state["w_run_id"] = run_id


def _send_back(text: str) -> None:
    st.session_state["w_send_back"] = text


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
        value=None,
        step=10,
        key="w_time_limit",
        placeholder="none",
        help="Stop the run after this long, keeping what arrived.",
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


def _variant_settings(target: int, choice: ModelChoice) -> tuple[int, ModelChoice | None]:
    """How many candidates to write (default 3 for a short text) and the judge, if the writer has one."""
    if not st.session_state.get("w_variants_set"):  # follows the target and model until the writer sets it
        local = choice.spec.local  # free to run K times; a paid API is not tripled unasked
        st.session_state["w_variants"] = DEFAULT_VARIANTS if target <= SHORT_TEXT and local else 1
    c = st.columns([1, 3])
    k = c[0].number_input(
        "Variants",
        min_value=1,
        max_value=MAX_VARIANTS,
        step=1,
        key="w_variants",
        on_change=_variants_set,
        help=f"Write several candidates at once, ranked by score; pick the one you want (default "
        f"{DEFAULT_VARIANTS} for texts up to {SHORT_TEXT} units on a local model, else 1).",
    )
    judges = _judge_options(choice)
    judge = None
    if judges:  # with no judge at hand nothing asks for one
        judge = c[1].selectbox(
            "Judge model (optional)",
            [None, *judges],
            format_func=lambda m: "No judge (offline score)" if m is None else m.label,
            key="w_judge",
            help="Rates each text 1-10 with FastChat's single-v1 prompt; the rating ranks the variants.",
        )
    return int(k), judge


def _variants_set() -> None:
    st.session_state["w_variants_set"] = True


def _build_judge(judge: ModelChoice | None) -> Backend | None:
    if judge is None:
        return None
    try:
        return resources.build_backend(judge)
    except BackendError as exc:
        st.warning(f"The judge is not available: {exc}")
        return None


def _judge_single(judge: ModelChoice | None, live_run: LiveRun) -> None:
    backend = _build_judge(judge)
    outcome = live_run.outcome
    if backend is not None and outcome.text.strip():
        with st.spinner(f"{backend.label} is rating the text…"):
            judge_run(live_run.engine, live_run.run_id, backend, outcome.request.instruction, outcome.text)


def _run_variants(
    backend: Backend,
    request: Request,
    k: int,
    judge: ModelChoice | None,
    stop_col: st.delta_generator.DeltaGenerator,
    area: st.delta_generator.DeltaGenerator,
) -> None:
    """Write K candidates at once, painting each one's countdown; then judge them if a judge is configured."""
    group_id, lives = start_variants(backend, request, resources.engine(), k)
    st.session_state["w_group"] = group_id
    st.session_state["w_run_id"] = lives[0].run_id
    stop_slot = stop_col.empty()
    stop_slot.button("Stop", icon=":material/stop:", width="stretch", key="w_stop")
    with area:
        slots = [col.empty() for col in st.columns(len(lives))]
    label = unit_label(request.count_unit)

    def paint() -> None:
        for live, slot in zip(lives, slots, strict=True):
            slot.html(countdown_html(request.target - live.gen.units_done, request.target, label))

    run_together(lives, paint)
    for slot in slots:
        slot.empty()
    stop_slot.empty()
    judge_backend = _build_judge(judge)
    with st.spinner("Scoring the variants…"):
        ranked = finish(lives, resources.engine(), judge_backend)
    st.session_state["w_run_id"] = ranked[0].run_id  # the best one is picked until the writer picks another


def _show_variants() -> None:
    """The group's candidates side by side, best first, with scores; the picked one is shown in full below."""
    group_id = st.session_state.get("w_group")
    if not group_id:
        return
    engine = resources.engine()
    runs = list_runs(engine, group_id=group_id)
    for r in runs:
        wait_saved(r.id)
    runs = list_runs(engine, group_id=group_id)
    if not runs:
        return
    runs.sort(key=lambda r: rank_key(verdict_of(r).verified, r.judge_score, r.score, r.fluency), reverse=True)
    picked = st.session_state.get("w_run_id")
    st.subheader(f"{len(runs)} variants, best first")
    for i, (col, r) in enumerate(zip(st.columns(len(runs)), runs, strict=True), 1):
        with col:
            score = run_score(r)
            st.markdown(f"**#{i}** · score **{score:g}**" if score is not None else f"**#{i}** · no score")
            badge(verdict_of(r), r.unit)
            st.html(clean_text_html(r.text))
            quality_notes(r)
            if r.id == picked:
                st.button("Picked", key=f"w_pick{r.id}", disabled=True, icon=":material/check:", width="stretch")
            elif st.button("Pick this one", key=f"w_pick{r.id}", width="stretch"):
                st.session_state["w_run_id"] = r.id
                st.rerun()
    st.divider()
    st.caption("The picked variant (its badge, copy and exports):")

"""The Write page: an instruction and a target in, verified text out, the countdown visible as it streams."""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ..backends import Backend, BackendError, ModelChoice, ProbeResult
from ..backends import fallback as fallback_for
from ..counting import count, count_detail
from ..history import run_score
from ..prompts import REWRITE
from ..quality import all_junk
from ..repair import REPAIR_MODES
from ..request import Request, default_max_tokens
from ..runs import assessment_of, put_words_back, verdict_of
from ..service import RunHandle, modes_for, start
from ..storage import RunRecord, get_run, list_runs
from ..variants import ranked_runs
from ..verdict import Target
from ..vocab import (
    DEFAULT_MAX_CALLS,
    DEFAULT_STALL_LIMIT,
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
    grammar_units,
    markers_can_count,
    mode_label,
    unit_label,
)
from . import resources, state
from .layout import SWIPE, VARIANTS, hook
from .render import clean_text_html, live_variant_html, scroll_into_view_html
from .state import Key, W, WriteForm
from .target_form import lang_radio, preset_pills, set_target_defaults, target_inputs, unit_picker
from .views import (
    Slot,
    edit_box,
    live_line,
    mode_choice,
    quality_notes,
    render_run,
    stream_live,
    verdict_badges,
    wait_saved,
)

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
    modes: list[Mode],
    default: Mode,
    choice: ModelChoice,
    form: tuple[Lang, Unit, TargetKind],
    guarantee: tuple[str | None, ProbeResult | None],
) -> str | None:
    """Show the writer's own mode when it can run here; otherwise use this model's `default` for now (the service's
    one rule) and say why (the writer's pick comes back once the model or the unit allows it). `guarantee`: why the
    guaranteed modes are off for this model (None where they are on) and the server's probe, if it was probed.
    Returns the notice, if any."""
    lang, unit, kind = form
    why_not, probed = guarantee
    wanted = state.get(W.MODE_WANTED) or default
    state.put(W.MODE_WANTED, wanted)
    if wanted in modes:
        state.put(W.MODE, wanted)
        return None
    state.put(W.MODE, default)  # for now: this model's default for this target (`service.modes_for`)
    used = mode_label(state.get(W.MODE))
    if wanted in MARKER_MODES and not markers_can_count(lang, unit, kind):
        return f"{MARKER_LIMITS}: {used} is used for now."
    if why_not is not None and probed is not None:  # a server whose probe saw its grammar ignored
        return f"The guaranteed modes are off for {choice.label} (see below the mode), so {used} is used for now."
    if why_not is not None:
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
    """The page: the form, then (on Generate) the run streaming under it, then the result."""
    st.title("Write")
    st.caption("Text of an exact length: the model counts down as it writes, and every count is checked.")
    _take_handoffs()
    choice = resources.model_choice()
    form, go, stop_col = _form(choice)
    live = st.container(key=W.LIVE)
    result = st.empty()  # drawn over at once: a new run never streams above the previous run's result
    if go and not _generate(form, choice, stop_col, live):
        return
    _show_result(result, scroll=go)


def _take_handoffs() -> None:
    """Before any widget is drawn: what another page handed over, the form's defaults, and the kept texts."""
    state.take_prefill()
    state.take_send_back()
    for key in W.KEPT:  # before the defaults: a visit to Compare or History loses nothing the writer set
        state.keep(key)
    set_target_defaults(W.FORM, DEFAULT_TARGET)
    state.keep(W.INSTRUCTION)  # turning "Rewrite my own text" on and off loses neither text
    state.keep(W.SOURCE)
    state.setdefault(W.FALLBACK)
    state.setdefault(W.INSTRUCTION)


def _form(choice: ModelChoice) -> tuple[WriteForm, bool, DeltaGenerator]:
    """Draw the form and read it, in one place: the writer's inputs as one record, whether Generate was clicked,
    and the column where Stop goes while a run streams."""
    preset_pills(W.FORM)
    rewrite, instruction, source, source_count = _text_box()
    c = st.columns([1.2, 1.5, 2])
    lang = lang_radio(c[0], W.FORM, DEFAULT_TARGET)
    unit = unit_picker(c[1], W.FORM, lang)
    kind = state.get(W.KIND) or "exactly"
    target_row = st.container()
    mode, guaranteed = _mode_picker(c[2], choice, (lang, unit, kind), rewrite)
    _fallback_note(c[2], choice, mode, markers_can_count(lang, unit, kind) and not rewrite)
    target = target_inputs(target_row, W.FORM, DEFAULT_TARGET)
    state.share_from_write(None, W.FORM.settings())
    if source_count is not None:  # the pasted text's length is the writer's starting point; an instruction's is not
        _live_count(source_count, source, unit, target)
    number = target.high if target else int(state.get(W.TARGET) or DEFAULT_TARGET)
    actions = st.container()  # Generate sits above the Options, drawn after them (it needs their values)
    with st.container():  # under Generate, not above it: the note kept Generate off a 1280×720 screen (issue 31)
        _offer_a_pull(choice, lang, target.high if target else None)
    with st.expander("Options"):
        code, fallback, limits, max_calls = _options(number, lang, mode, unit, guaranteed)
    b = actions.columns([1, 1, 1, 2.2], vertical_alignment="bottom")  # one row: in view at 1280×720 with the form
    variants, judge = _variant_settings(number, choice, b[2], b[3])
    go = b[0].button("Generate", type="primary", icon=":material/edit:", width="stretch")
    max_tokens, seed, time_limit = limits
    form = WriteForm(
        rewrite=rewrite, instruction=instruction, source=source, lang=lang, unit=unit, kind=kind, target=target,
        mode=mode, code=code, fallback=fallback, max_tokens=max_tokens, seed=seed, time_limit=time_limit,
        max_calls=max_calls, variants=variants, judge=judge,
    )  # fmt: skip
    return form, go, b[1]


def _text_box() -> tuple[bool, str, str, DeltaGenerator | None]:
    """The instruction, or (rewriting) the pasted text and a slot for its length: whether the writer rewrites,
    the instruction, the text to rewrite, and that slot."""
    rewrite = st.toggle("Rewrite my own text to length", key=W.REWRITE)
    if rewrite:  # the pasted text is the instruction: the typed one is hidden, not shown greyed out and stale
        source = st.text_area("Your text", key=W.SOURCE, height=140, placeholder="Paste the text to rewrite…")
        st.caption(
            "Shorter in Exact mode on a local model: whole sentences and clauses of your own text go, the facts stay. "
            "Beside the verdict: the facts it kept (names, numbers, dates) and lost, and its words not yours."
        )
        return True, "", source, st.empty()
    instruction = st.text_area(
        "Instruction",
        key=W.INSTRUCTION,
        height=90,
        placeholder="What should the model write? e.g. Write a headline about a lighthouse.",
    )
    state.share_from_write(instruction, None)
    return False, instruction, "", None


def _mode_picker(
    where: DeltaGenerator, choice: ModelChoice, form: tuple[Lang, Unit, TargetKind], rewrite: bool
) -> tuple[Mode, bool]:
    """The mode box, offering what this model can run and starting on its default (the service's one rule,
    `service.modes_for`), with why the writer's own pick is not used for now; the mode, and whether the guaranteed
    modes are on."""
    lang, unit, kind = form
    probed = resources.grammar_probe(choice)  # a compatible server's grammar field: honoured or not
    found = modes_for(choice.capabilities, lang, unit, kind, rewrite=rewrite, probed=probed)
    why_not, modes = found.why_not, list(found.modes)
    switched = _settle_mode(modes, found.default, choice, form, (why_not, probed))
    countable = markers_can_count(lang, unit, kind)
    mode: Mode = where.selectbox(
        "Mode",
        modes,
        format_func=mode_choice(choice.model),
        key=W.MODE,
        on_change=_mode_picked,
        help=None if countable else MARKER_LIMITS + ".",  # why CAPEL is not offered: a tooltip, not a note
    )
    if switched:
        st.info(switched, icon=":material/swap_horiz:")
    if probed is not None:
        where.caption(probed.label)
    elif not switched and why_not is not None:
        where.caption(
            "Exact modes need a model that takes a grammar (embedded, GGUF, GPT-5 family, llama.cpp, vLLM, "
            "SGLang, Ollama, LM Studio)."
        )
    return mode, why_not is None


def _fallback_note(where: DeltaGenerator, choice: ModelChoice, mode: Mode, countable: bool) -> None:
    """Said where the mode is picked: the model writes another mode instead (the option to force it is in
    Options)."""
    instead = fallback_for(choice.model, mode, choice.capabilities, countable) if state.get(W.FALLBACK) else None
    if instead is not None:
        where.caption(f"{choice.label} {instead.reason}: it writes {MODE_LABELS[instead.mode]} instead (see Options).")


def _options(
    target: int, lang: Lang, mode: Mode, unit: Unit, guaranteed: bool
) -> tuple[bool, bool, tuple[int | None, int | None, float | None], int]:
    """The Options expander: code-aware, the fallback, the limits and the repair tries."""
    code = st.checkbox("Code-aware (a whole code line counts as one unit)", key=W.CODE)
    fallback = st.checkbox(
        "Fall back for models known to misread the countdown",
        key=W.FALLBACK,
        help="The paper saw o4-mini and gpt-4o-mini misread the countdown (§4.3): CAPEL gives them the baseline "
        "instruction. The embedded model is too small to write under countdown markers: the guaranteed "
        "countdown writes it as Exact (guaranteed), with the same count. The GPT-5 family writes Exact under the "
        "countdown grammar, so it sees how many words are left and plans its last sentence.",
    )
    limits = _limits(target, lang, mode, unit)
    max_calls = st.number_input(
        "Repair tries",
        min_value=1,
        max_value=MAX_CALLS,
        value=1 if guaranteed else DEFAULT_MAX_CALLS,
        key=W.max_calls(guaranteed),
        disabled=mode not in REPAIR_MODES,
        help="A CAPEL countdown that goes wrong keeps its verified part and the model continues from the next "
        "marker, up to this many calls in all; 1 turns repair off. On by default for models without a grammar.",
    )
    return code, fallback, limits, int(max_calls)


def _request(form: WriteForm, target: Target) -> Request:
    """What the form asks the model for (a rewrite wraps the pasted text in the rewrite prompt)."""
    text = REWRITE[form.lang].format(text=form.source.strip()) if form.rewrite else form.instruction
    return Request.of(
        target,
        text,
        lang=form.lang,
        mode=form.mode,
        unit=form.unit,
        code=form.code,
        temperature=resources.temperature(),
        max_tokens=form.max_tokens,
        seed=form.seed,
        time_limit=form.time_limit,
        allow_fallback=form.fallback,
        max_calls=form.max_calls,
    )


def _generate(form: WriteForm, choice: ModelChoice, stop_col: DeltaGenerator, live: DeltaGenerator) -> bool:
    """Start the run (or the variants) the form asks for and stream it; whether its result can be shown (not when
    the form was incomplete, the start refused, or the run could not be saved)."""
    if form.missing:
        st.error(form.missing)
        return False
    if form.target is None:
        return False
    request = _request(form, form.target)
    try:
        handle = start(
            request,
            lambda: resources.build_backend(choice),
            resources.engine(),
            origin="write",
            variants=form.variants,
            judge=lambda: _build_judge(form.judge),
            instruction=request.instruction,
        )
    except (ValueError, BackendError) as exc:
        st.error(str(exc))
        return False
    if form.variants > 1:
        _run_variants(handle, stop_col, live)
        return True
    return _run_single(handle, stop_col, live)


def _run_single(handle: RunHandle, stop_col: DeltaGenerator, live: DeltaGenerator) -> bool:
    """Stream one run under the form, Stop beside Generate; then the judge's rating, if one was picked. False when
    the database refused the run (its text is shown to copy instead)."""
    state.drop(W.GROUP)
    state.put(W.RUN_ID, handle.live.run_id)
    stop_slot = stop_col.empty()
    stop_slot.button("Stop", icon=":material/stop:", width="stretch", key=W.STOP)
    with live:
        st.html(scroll_into_view_html(W.LIVE), unsafe_allow_javascript=True)  # the countdown in view
        if handle.notice:
            st.info(handle.notice)
        stream_live(handle.live)
    stop_slot.empty()
    state.put(W.RUN_ID, handle.live.run_id)  # a first save the database held back (runs.FIRST_SAVE_WAIT) has its id now
    if handle.live.save_error:
        _show_unsaved(handle.live.save_error, handle.live.outcome.text)
        return False
    _judge_single(handle)
    return True


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
        render_run(run, key=f"w{run.id}", put_back=_put_back)
        edit_box(run, resources.engine(), key=f"w{run.id}", on_saved=_show_run, on_send=_send_back)


def _show_run(run_id: int) -> None:
    state.put(W.RUN_ID, run_id)


def _put_back(run: RunRecord) -> None:
    """Show the model's whole text, saved as a new run (`runs.put_words_back`), in place of the run it came from."""
    restored = put_words_back(resources.engine(), run)
    if restored is not None:
        _show_run(restored)


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
        key=W.MAX_TOKENS,
        placeholder=f"automatic: {auto}",
        help=f"Empty: {auto} tokens, from the target and mode. The model stops here even if the text is unfinished.",
    )
    seed = o[1].number_input(
        "Seed",
        value=None,
        step=1,
        key=W.SEED,
        placeholder="none (varies)",
        help="The same seed, model and settings give the same text where the server supports it.",
    )
    state.setdefault(W.TIME_LIMIT)  # its default set here, not as `value`: a kept value put back draws no warning
    time_limit = o[2].number_input(
        "Time limit (seconds)",
        value=None,
        step=10.0,
        key=W.TIME_LIMIT,
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
    key = W.VARIANTS if state.get(W.VARIANTS_SET) else W.variants_default(default)
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
            key=W.JUDGE,
            help="Rates each text 1-10 with FastChat's single-v1 prompt; the rating ranks the variants.",
        )
    return int(k), judge


def _variants_set(key: Key[int | None]) -> None:
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
    lives = handle.lives
    state.put(W.GROUP, handle.group_id)
    state.put(W.RUN_ID, lives[0].run_id)
    stop_slot = stop_col.empty()
    stop_slot.button("Stop", icon=":material/stop:", width="stretch", key=W.STOP)
    with area:
        st.html(scroll_into_view_html(W.LIVE), unsafe_allow_javascript=True)  # the countdowns in view
        status = Slot()
        slots = [Slot(col) for col in st.columns(len(lives))]

    def paint() -> None:
        views = [live.view() for live in lives]
        status.draw("caption", f"{len(lives)} variants · {live_line(views[0])}")
        for view, slot in zip(views, slots, strict=True):
            high = view.target.high
            slot.draw("html", live_variant_html(high - view.units_done, high, view.unit_label, view.text))

    handle.run_together(paint)
    for slot in (status, *slots):
        slot.clear()
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
    runs = [r for r in list_runs(engine, group_id=group_id) if r.origin != "edit"]  # a hand edit is no variant
    if not runs:
        return
    picked = state.get(W.RUN_ID)
    runs = ranked_runs(runs, picked)  # best first; identical variants once (the picked one among them)
    st.subheader(f"{len(runs)} variants, best first")
    if len(runs) > 1:  # on a phone the cards scroll sideways, the next one peeking in: say so
        st.container(key=hook(SWIPE, group_id)).caption("Swipe for more →")
    cards = st.container(key=hook(VARIANTS, group_id)).columns(len(runs))
    for i, (col, r) in enumerate(zip(cards, runs, strict=True), 1):
        with col:
            score = run_score(r)
            st.markdown(f"**#{i}** · score **{score:g}**" if score is not None else f"**#{i}** · no score")
            verdict_badges(verdict_of(r), r)
            st.html(clean_text_html(r.text))
            quality_notes(r)
            if r.id == picked:
                st.button("Picked", key=W.pick(r.id), disabled=True, icon=":material/check:", width="stretch")
            elif st.button("Pick this one", key=W.pick(r.id), width="stretch"):
                state.put(W.RUN_ID, r.id)
                st.rerun()
    st.divider()
    if all(assessment_of(r).junk for r in runs):
        st.warning(all_junk(assessment_of(r).junk_kind for r in runs), icon=":material/report:")
    st.caption("The picked variant (its badge, copy and exports):")

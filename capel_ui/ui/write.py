"""The Write page: an instruction and a target in, verified text out, the countdown visible as it streams."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ..backends import BackendError, uses_fallback
from ..generation import Generation, Request, validate_request
from ..runs import LiveRun
from ..storage import get_run
from ..vocab import MAX_TARGET, MODE_LABELS, UNIT_LABELS, UNITS_FOR, Lang, Mode, Unit, available_modes
from . import resources
from .views import render_run, stream_live, wait_saved

PRESETS: dict[str, dict[str, Any]] = {
    "Headline · 10 words": {
        "lang": "en",
        "target": 10,
        "unit": "en_words",
        "example": "Write a headline for an article about a seaside town that rebuilt its old lighthouse.",
    },
    "Tweet-length post · 40 words": {
        "lang": "en",
        "target": 40,
        "unit": "en_words",
        "example": "Write a social media post announcing that our bakery now sells sourdough on Saturdays.",
    },
    "Abstract · 50 words": {
        "lang": "en",
        "target": 50,
        "unit": "en_words",
        "example": "Write an abstract for a study showing that countdown prompts help language models "
        "hit exact lengths.",
    },
    "Chinese blurb · 100 字": {
        "lang": "zh",
        "target": 100,
        "unit": "zh_chars",
        "example": "为一家开在海边的小书店写一段宣传文字。",
    },
}
LANG_LABELS: dict[Lang, str] = {"en": "English words", "zh": "Chinese characters"}
REWRITE = {
    "en": "Rewrite the following text, keeping its meaning and tone:\n\n{text}",
    "zh": "改写下面这段文字，保留原意和语气：\n\n{text}",
}


def _apply_preset() -> None:
    name = st.session_state.get("w_preset")
    preset = PRESETS.get(name or "")
    if not preset:
        return
    st.session_state["w_lang"] = preset["lang"]
    st.session_state["w_unit"] = preset["unit"]
    st.session_state["w_target"] = preset["target"]
    current = st.session_state.get("w_instruction", "").strip()
    examples = {p["example"] for p in PRESETS.values()}
    if not current or current in examples:
        st.session_state["w_instruction"] = preset["example"]


def _apply_prefill() -> None:
    """History's Re-run hands over a run's settings; apply them before the widgets are drawn."""
    prefill = st.session_state.pop("prefill", None)
    if not prefill:
        return
    for key, value in prefill.items():
        st.session_state[f"w_{key}"] = value
    st.session_state["w_rewrite"] = False


def render() -> None:
    st.title("Write")
    st.caption("Text of an exact length: the model counts down as it writes, and every count is checked.")
    _apply_prefill()
    for key, value in (("w_target", 25), ("w_lang", "en"), ("w_fallback", True), ("w_instruction", "")):
        st.session_state.setdefault(key, value)
    choice = resources.model_choice()

    st.pills("Quick presets", list(PRESETS), key="w_preset", on_change=_apply_preset)
    rewrite = st.toggle("Rewrite my own text to length", key="w_rewrite")
    if rewrite:
        source = st.text_area("Your text", key="w_source", height=140, placeholder="Paste the text to rewrite…")
    instruction = st.text_area(
        "Instruction",
        key="w_instruction",
        height=90,
        disabled=rewrite,
        placeholder="What should the model write? e.g. Write a headline about a lighthouse.",
    )
    c = st.columns([1.2, 1.2, 0.9, 1.7])
    lang: Lang = c[0].radio("Language", ["en", "zh"], format_func=LANG_LABELS.get, key="w_lang")
    units = list(UNITS_FOR[lang])
    if st.session_state.get("w_unit") not in units:
        st.session_state["w_unit"] = units[0]
    unit: Unit = c[1].selectbox("Counting unit", units, format_func=UNIT_LABELS.get, key="w_unit")
    target = c[2].number_input("Target length", min_value=1, max_value=MAX_TARGET, step=1, key="w_target")
    modes = available_modes(choice.capabilities.grammar, lang, unit)
    default_mode: Mode = "exact" if choice.provider == "embedded" else "capel"
    if st.session_state.get("w_mode") not in modes:
        st.session_state["w_mode"] = default_mode if default_mode in modes else "capel"
    mode: Mode = c[3].selectbox("Mode", modes, format_func=MODE_LABELS.get, key="w_mode")
    if choice.capabilities.grammar is False:
        c[3].caption("Exact modes need a model that takes a grammar (embedded, GGUF, llama.cpp, vLLM).")

    with st.expander("Options"):
        code = st.checkbox("Code-aware (a whole code line counts as one unit)", key="w_code")
        fallback = st.checkbox(
            "Fall back to the baseline for models known to misread the countdown",
            key="w_fallback",
            help="The paper saw o4-mini and gpt-4o-mini misread the countdown (§4.3).",
        )
        if uses_fallback(choice.model) and mode in ("capel", "draft-capel") and fallback:
            st.info(f"{choice.model} will get the baseline instruction instead of the countdown.")
    if lang == "zh" and choice.provider == "embedded":
        st.info(
            "SmolLM2 does not write Chinese: Exact mode still gives the right number of characters, not good "
            "prose. Use a Chinese-capable model (e.g. a Qwen GGUF or an API) for real text."
        )

    b = st.columns([1, 1, 4])
    go = b[0].button("Generate", type="primary", icon=":material/edit:", width="stretch")
    live = st.container()
    if go:
        text = REWRITE[lang].format(text=source.strip()) if rewrite and source.strip() else instruction
        if rewrite and not source.strip():
            st.error("Paste the text to rewrite, or turn off “Rewrite my own text”.")
            return
        request = Request(
            instruction=text,
            target=int(target),
            lang=lang,
            mode=mode,
            unit=unit,
            code=code,
            temperature=resources.temperature(),
            allow_fallback=fallback,
        )
        try:
            validate_request(request)
            backend = resources.build_backend(choice)
            gen = Generation(backend, request)
        except (ValueError, BackendError) as exc:
            st.error(str(exc))
            return
        live_run = LiveRun(gen, resources.engine(), origin="write", instruction=text)
        run_id = live_run.run_id
        st.session_state["w_run_id"] = run_id
        stop_slot = b[1].empty()
        stop_slot.button("Stop", icon=":material/stop:", width="stretch", key="w_stop")
        if gen.notice:
            live.info(gen.notice)
        with live:
            stream_live(live_run)
        stop_slot.empty()
    run_id = st.session_state.get("w_run_id")
    if run_id is not None:
        wait_saved(run_id)
        run = get_run(resources.engine(), run_id)
        if run is None:
            st.session_state.pop("w_run_id", None)
            return
        if run.status == "cancelled":
            st.info("Stopped. What arrived is kept in History.")
        render_run(run, key=f"w{run.id}")

"""Views shared by pages: a saved run as the writer sees it, and the live stream of a generation.

A run is saved as it starts, updated while it streams, and finished in a `finally`, so a Stop click, a
rerun or a closed tab (all of which interrupt the script) still leave everything that arrived in History.
"""

from __future__ import annotations

import threading
import time

import streamlit as st
from sqlalchemy.engine import Engine

from ..export import export_json, export_md, export_name, export_txt, is_verified
from ..generation import Generation, Outcome
from ..storage import RunRecord, create_run, update_run
from ..vocab import MODE_LABELS, UNIT_LABELS
from .render import clean_text_html, countdown_html, error_rows, highlight_raw
from .settings import ModelChoice

UI_INTERVAL = 0.12  # seconds between screen updates while streaming
SAVE_INTERVAL = 1.0  # seconds between saves of the partial output

# Runs this process is streaming, with an event set once their final state is saved. A Stop click reruns
# the page while the interrupted script may still be unwinding; `settle()` lets the new run wait for it.
_live: dict[int, tuple[Generation, threading.Event]] = {}


def track(run_id: int, gen: Generation) -> threading.Event:
    """Register a run this process streams; set the returned event once its final state is saved."""
    saved = threading.Event()
    _live[run_id] = (gen, saved)
    return saved


def untrack(run_id: int) -> None:
    entry = _live.pop(run_id, None)
    if entry is not None:
        entry[1].set()


def settle(run_id: int, timeout: float = 120.0) -> None:
    """If `run_id` is still streaming here, stop it and wait (bounded) until its final state is saved.

    The stream only notices the cancel when its next chunk arrives; before the first one (the model still reading
    the prompt, on a busy machine) that can take many seconds, so say what is happening while waiting.
    """
    entry = _live.get(run_id)
    if entry is not None:
        gen, saved = entry
        gen.cancel()
        if not saved.wait(0.5):
            with st.spinner("Stopping: waiting for the model to hand back what it has written…"):
                saved.wait(timeout)


def badge(run: RunRecord | Outcome) -> None:
    """✓ exact (verified), or how far off and why; the same words everywhere."""
    count = run.count or 0
    unit = UNIT_LABELS.get(run.request.count_unit if isinstance(run, Outcome) else run.unit, "units")  # type: ignore[call-overload]
    target = run.target
    verified = run.verified if isinstance(run, Outcome) else is_verified(run)
    if verified:
        st.badge(f"✓ exact · verified · {count}/{target} {unit}", color="green")
        return
    status = run.status
    parts = []
    if count == target:
        parts.append(f"{count}/{target} {unit}: exact count")
    else:
        parts.append(f"off by {count - target:+d} · {count}/{target} {unit}")
    if run.errors:
        parts.append(f"{len(run.errors)} marker error(s)")
    if status != "complete":
        parts.append(status)
    st.badge(" · ".join(parts), color="orange" if count == target else "red")


def start_record(
    engine: Engine, gen: Generation, choice: ModelChoice, instruction: str, comparison_id: str | None = None
) -> int:
    """Save the run as it starts (status running)."""
    req = gen.request
    return create_run(
        engine,
        instruction=instruction,
        prompt=gen.prompt,
        raw="",
        text="",
        model=gen.backend.model,
        backend=choice.provider,
        base_url=gen.backend.base_url if choice.provider not in ("embedded", "gguf") else None,
        mode=gen.mode,
        lang=req.lang,
        unit=req.count_unit,
        target=req.target,
        temperature=req.temperature,
        code=req.code,
        comparison_id=comparison_id,
    )


def stream_live(gen: Generation, engine: Engine, run_id: int) -> Outcome:
    """Stream into the page: big countdown, progress, raw output with markers dimmed and errors flagged live."""
    req = gen.request
    unit_label = UNIT_LABELS[req.count_unit]
    top = st.columns([1, 3], vertical_alignment="center")
    count_ph = top[0].empty()
    with top[1]:
        progress_ph = st.empty()
        status_ph = st.empty()
    raw_ph = st.empty()
    errors_ph = st.empty()
    last_ui = last_save = 0.0

    def paint() -> None:
        done = gen.units_done
        count_ph.html(countdown_html(gen.remaining, req.target, unit_label, drafting=gen.in_draft))
        progress_ph.progress(min(done / req.target, 1.0), text=f"{done} of {req.target} {unit_label}")
        status_ph.caption(f"{gen.backend.label} · {MODE_LABELS[gen.mode]} · {time.monotonic() - gen.started:.1f} s")
        raw = gen.raw
        errors = gen.errors
        raw_ph.html(highlight_raw(raw, errors, gen.parser.draft_span if gen.parser else None))
        if errors:
            errors_ph.warning(f"{len(errors)} marker error(s) so far: " + ", ".join(sorted({e.type for e in errors})))

    track(run_id, gen)
    stream = gen.stream()
    try:
        paint()
        for _ in stream:
            now = time.monotonic()
            if now - last_ui >= UI_INTERVAL:
                paint()
                last_ui = now
            if now - last_save >= SAVE_INTERVAL:
                update_run(engine, run_id, raw=gen.raw, status="running")
                last_save = now
    finally:
        stream.close()  # on Stop / rerun / closed tab this marks the run cancelled, keeping the text
        gen.abandon()  # covers an interruption before the first chunk, when close() runs nothing
        outcome = gen.outcome()
        try:
            update_run(engine, run_id, **outcome.record())
        finally:
            untrack(run_id)
    for ph in (count_ph, progress_ph, status_ph, raw_ph, errors_ph):
        ph.empty()
    return outcome


def render_run(run: RunRecord, *, key: str, show_prompt: bool = True) -> None:
    """A saved run as the Write page shows it: verdict, clean text, copy/export, raw with errors, numbers."""
    badge(run)
    if run.failure:
        st.error(run.failure)
    if run.status in ("partial", "cancelled", "running"):
        st.caption(f"This run is **{run.status}**: it shows what arrived; it is not verified.")
    st.html(clean_text_html(run.text))
    with st.expander("Copy the text"):
        st.code(run.text, language=None, wrap_lines=True)
    exports = (
        ("txt", export_txt, "text/plain"),
        ("md", export_md, "text/markdown"),
        ("json", export_json, "application/json"),
    )
    for col, (ext, build, mime) in zip(st.columns(len(exports)), exports, strict=True):
        col.download_button(
            f"Download .{ext}",
            build(run),
            export_name(run, ext),
            mime,
            key=f"{key}-{ext}",
            icon=":material/download:",
            width="stretch",
        )
    m = st.columns(4)
    m[0].metric("Time", f"{run.seconds:.1f} s" if run.seconds is not None else "–")
    m[1].metric("Completion tokens", run.completion_tokens if run.completion_tokens is not None else "–")
    rate = (run.completion_tokens / run.seconds) if run.completion_tokens and run.seconds else None
    m[2].metric("Tokens/s", f"{rate:.0f}" if rate else "–")
    per_unit = (run.completion_tokens / run.count) if run.completion_tokens and run.count else None
    m[3].metric("Tokens per unit", f"{per_unit:.1f}" if per_unit else "–")
    with st.expander(f"Raw output · {len(run.errors)} marker error(s)", expanded=bool(run.errors)):
        st.html(highlight_raw(run.raw, run.errors))
        if run.errors:
            st.dataframe(error_rows(run.raw, run.errors), hide_index=True, width="stretch")
        if run.draft:
            st.caption("Draft (discarded, not counted):")
            st.text(run.draft)
    if show_prompt:
        with st.expander("Prompt sent"):
            st.code(run.prompt, language=None, wrap_lines=True)
    st.caption(
        f"Run {run.id} · {run.model} · {MODE_LABELS.get(run.mode, run.mode)} · "  # type: ignore[call-overload]
        f"{run.lang} · {run.created_at:%Y-%m-%d %H:%M:%S} UTC"
    )

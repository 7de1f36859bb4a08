"""Views shared by pages: a saved run as the writer sees it, and the live stream of a generation.

The run lifecycle (create, save while streaming, close) is `capel_ui.runs.LiveRun`; this module only draws
what it yields. A Stop click, a rerun or a closed tab interrupt the script; the LiveRun still saves what arrived.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import streamlit as st
from sqlalchemy import Engine
from streamlit.delta_generator import DeltaGenerator

from ..backends import COUNTDOWN_FALLBACK, MARKERS_TOO_HARD
from ..counting import count, count_detail, refusal
from ..ending import ending_help, ends_naturally
from ..export import export_json, export_md, export_name, export_txt
from ..history import marker_spans, score_line, set_aside
from ..outcome import Outcome, left_out
from ..quality import NOT_TO_PUBLISH, ONE_JUNK
from ..repair import calls_line
from ..rewrite import saved_faithfulness
from ..runs import LiveRun, assessment_of, save_edit, settle, target_of, verdict_of
from ..runview import RunView
from ..storage import RunRecord
from ..verdict import Verdict, decide, live_state
from ..vocab import MAX_TARGET, made_by, mode_label, units_phrase
from . import state
from .layout import DOWNLOADS, VERDICT, hook
from .live_text import live_text_area
from .render import (
    clean_text_html,
    copy_button_html,
    countdown_html,
    error_rows,
    highlight_raw,
    plain_markdown,
    written_html,
)
from .state import Key, note_key

UI_INTERVAL = 0.12  # seconds between screen updates while streaming
HAND_OUT_ANYWAY = "Copy or download it anyway"
"""The box a writer ticks to have Copy, the downloads (and Compare's "Use this") hand out a text read as junk."""
SCORE_HELP = (
    "0-10. Offline: how smoothly the text reads to the model that wrote it, minus points for unknown or glued "
    "words, a loop, a number list, a dangling ending and a last sentence the model would not have ended on. "
    "With a judge model configured: the judge's 1-10 rating (FastChat single-v1)."
)


COUNTDOWN_MODES = ("capel", "draft-capel")
"""The modes whose text is only as good as the model's counting: on a model known not to follow the countdown they
say so where they are picked."""


def misreads_countdown(model: str) -> bool:
    """The registry's word on `model`: the paper saw it misread the countdown (it falls back to the baseline), or it
    is too small to write under countdown markers (the embedded 135M copies the example or loops)."""
    return model in COUNTDOWN_FALLBACK or model in MARKERS_TOO_HARD


def mode_choice(model: str) -> Callable[[str], str]:
    """The mode picker's labels for `model`: "CAPEL · rarely followed by this model" where it misreads the
    countdown, the plain label elsewhere."""
    warn = misreads_countdown(model)
    return lambda mode: (
        f"{mode_label(mode)} · rarely followed by this model"
        if warn and mode in COUNTDOWN_MODES
        else (mode_label(mode))
    )


_FORCED = re.compile(r"to force (.+?)\.?$")


def mode_title(run: RunRecord) -> str:
    """The mode that ran, and the one asked for when a fallback wrote another ("Exact (guaranteed) · asked Exact
    countdown (guaranteed)"): two columns must not both read "Exact (guaranteed)" with nothing to tell them apart."""
    ran = mode_label(run.mode)
    asked = _FORCED.search(run.notice or "")
    if asked and asked.group(1) != ran:
        return f"{ran} · asked {asked.group(1)}"
    return ran


def wait_saved(run_id: int, timeout: float = 120.0) -> None:
    """If this process still streams `run_id`, stop it and wait (bounded) until its final state is saved.

    The stream only notices the cancel when its next chunk arrives; before the first one (the model still reading
    the prompt, on a busy machine) that can take many seconds, so say what is happening while waiting.
    """
    if not settle(run_id, 0.5):
        with st.spinner("Stopping: waiting for the model to hand back what it has written…"):
            settle(run_id, timeout)


def _clamp_target(key: Key[int | None], default: int) -> None:
    """Keep the box and the value used the same: a target outside 1..MAX_TARGET is set to the nearest bound, and
    the page says so (a bounded Streamlit box would keep showing the typed number while using the last valid one)."""
    value = state.get(key)
    if value is None:
        state.put(key, default)
        state.put(note_key(key), f"The target cannot be empty; {default} is used.")
        return
    used = min(max(int(value), 1), MAX_TARGET)
    if used != value:
        state.put(key, used)
        state.put(note_key(key), f"The target must be from 1 to {MAX_TARGET:,}; {used:,} is used.")


def target_box(
    where: DeltaGenerator, key: Key[int | None], default: int, note_where: DeltaGenerator | None = None
) -> int:
    """The target length box (Write and Compare): what it shows is what is used, from 1 to MAX_TARGET. A number
    set to a bound is said under the box, or in `note_where` (under the whole row: one line, not four)."""
    state.setdefault(key, default)
    where.number_input("Target length", step=1, key=key, on_change=_clamp_target, args=(key, default))
    note = state.drop(note_key(key))
    if note:
        (note_where or where).caption(note)
    return int(state.get(key) or default)


def badge(verdict: Verdict, unit: str) -> None:
    """✓ exact (verified), or how far off and why; the words come from the one verdict."""
    st.badge(verdict.headline(unit), color=verdict.tone)


def ending_mark(said: str | None, end_probability: float | None) -> None:
    """Beside the verdict: the ending as the run's assessment says it ("ends naturally", or "cut off" as a warning:
    the badge still says only the count, so a cut ending is never hidden behind its green). Nothing when unknown."""
    if said is None:
        return
    style = "blue-background" if ends_naturally(end_probability) else "orange-background"
    icon = "" if ends_naturally(end_probability) else ":material/warning: "
    st.markdown(f":{style}[{icon}{said}]", help=ending_help(end_probability), width="content")


def verdict_badges(verdict: Verdict, run: RunRecord) -> None:
    """The verdict badge and, beside it, the ending as the run's assessment says it: for a text no writer would keep,
    "not a text to publish" ("ends naturally" beside a number list read as praise of it)."""
    found = assessment_of(run)
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        badge(verdict, run.unit)
        if found.junk:
            st.markdown(f":orange-background[:material/report: {NOT_TO_PUBLISH}]", help=ONE_JUNK, width="content")
        else:
            ending_mark(found.ending, run.end_probability)


def copy_button(text: str, key: str) -> None:
    """One click copies the text (no hover, no expander)."""
    st.html(copy_button_html(text, key), unsafe_allow_javascript=True, width="content")


def lengths(run: RunRecord) -> str:
    """The unit count and the character count, side by side, as a writer checks a limit; for a rewrite, how much
    of the writer's text it kept (rewrite.faithfulness)."""
    shown = units_phrase(run.count or 0, run.unit)
    if run.unit != "chars":
        shown += f" · {units_phrase(count(run.text, 'chars'), 'chars')}"
    found = saved_faithfulness(run)
    return f"{shown} · {found.describe()}" if found is not None else shown


def verdict_line(run: RunRecord, key: str) -> Verdict:
    """The badge, the lengths and a one-click Copy beside them (Copy only when there is text to copy)."""
    verdict = verdict_of(run)
    top = st.container(key=hook(VERDICT, key)).columns([5, 1], vertical_alignment="center")
    with top[0]:
        verdict_badges(verdict, run)
        if verdict.status != "failed":
            st.caption(lengths(run))
    if run.text.strip() and not assessment_of(run).junk:  # junk: Copy waits for the writer's say-so (render_run)
        with top[1]:
            copy_button(run.text, key)
    return verdict


class Slot:
    """A placeholder that is drawn again only when what it shows has changed.

    A live run paints 8 times a second; every draw is a message to the browser and a redraw there, even when the
    model had not written a word since (it may read its prompt for seconds before the first one)."""

    def __init__(self, where: DeltaGenerator | None = None) -> None:
        self._placeholder = where.empty() if where is not None else st.empty()
        self._shown: tuple | None = None

    def draw(self, kind: Literal["html", "caption", "progress", "warning"], *args: Any, **kwargs: Any) -> None:
        """`placeholder.<kind>(*args, **kwargs)`, unless the same was drawn last."""
        shown = (kind, args, tuple(sorted(kwargs.items())))
        if shown != self._shown:
            getattr(self._placeholder, kind)(*args, **kwargs)
            self._shown = shown

    def clear(self) -> None:
        self._placeholder.empty()
        self._shown = None


def elapsed(view: RunView) -> str:
    """Whole seconds so far and the time limit that will stop the run (what arrived is kept): "12 s of at most
    600 s". Whole seconds: the line is drawn again once a second, not at each paint."""
    so_far = f"{time.monotonic() - view.started:.0f} s"
    limit = view.time_limit
    return so_far if limit is None else f"{so_far} of at most {limit:g} s"


def live_line(view: RunView) -> str:
    """The line under a live countdown: model, mode, time, and what the run is doing when it is not just writing
    ("choosing an ending", "saving"; a repair says itself in the note)."""
    said = view.phase == "saving" or (view.phase == "choosing an ending" and not view.note)
    phase = f" · {view.phase}" if said else ""
    return f"{view.label} · {mode_label(view.mode)} · {elapsed(view)}{view.note}{phase}"


def stream_live(live: LiveRun) -> Outcome:
    """Stream into the page: big countdown, progress, raw output with markers dimmed and errors flagged live."""
    top = st.columns([1, 3], vertical_alignment="center")
    count_slot = Slot(top[0])
    progress_slot, status_slot = Slot(top[1]), Slot(top[1])
    raw_slot, errors_slot = Slot(), Slot()

    def paint() -> None:
        view = live.view()
        high, done = view.target.high, view.units_done
        count_slot.draw("html", countdown_html(high - done, high, view.unit_label, drafting=view.drafting))
        progress_slot.draw("progress", min(done / high, 1.0), text=live_state(done, view.target, view.unit))
        status_slot.draw("caption", live_line(view))
        errors = list(view.errors)
        raw_slot.draw("html", highlight_raw(view.raw, errors, view.draft_span, view.marker_spans))
        if errors:
            kinds = ", ".join(sorted({e.type for e in errors}))
            errors_slot.draw("warning", f"{len(errors)} marker error(s) so far: {kinds}")

    # The run streams in a worker thread and this (script) thread paints: a Stop click interrupts the script at
    # its next paint even while the model has not sent a token, and cancelling aborts the request at once.
    worker = threading.Thread(target=live.run, name="write-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            paint()
            worker.join(UI_INTERVAL)
    finally:
        if worker.is_alive():  # Stop, a rerun or a closed tab: the worker saves what arrived as cancelled
            live.cancel()
    for slot in (count_slot, progress_slot, status_slot, raw_slot, errors_slot):
        slot.clear()
    return live.outcome


def render_run(
    run: RunRecord, *, key: str, show_prompt: bool = True, put_back: Callable[[RunRecord], None] | None = None
) -> None:
    """A saved run as the Write page shows it: verdict, clean text, copy/export, raw with errors, numbers; with
    `put_back` (the page's save of the model's whole text, `runs.put_words_back`), "Put the words back" under a
    text that left out words the model wrote."""
    verdict = verdict_line(run, key)
    if run.failure:
        st.error(plain_markdown(run.failure))
    if verdict.status == "failed":  # nothing arrived: the failure and what to do, no text, no downloads
        _footer(run, show_prompt)
        return
    if verdict.status in ("partial", "cancelled", "running", "interrupted"):
        st.caption(f"This run is **{verdict.status}**: it shows what arrived; it is not verified.")
    if run.notice:  # e.g. the baseline fallback, or the output tokens a reasoning model spent thinking
        st.caption(plain_markdown(run.notice))  # it may quote the model's words: text, never Markdown
    if not run.text.strip():
        st.info("No text arrived before the run stopped, so there is nothing to copy or download.")
        _footer(run, show_prompt)
        return
    st.html(clean_text_html(run.text))
    quality_notes(run)
    if put_back is not None:
        words_back(run, key, put_back)
    if assessment_of(run).junk:  # Copy and the downloads ask before handing out a text no writer would keep
        st.warning(ONE_JUNK, icon=":material/report:")
        if not st.checkbox(HAND_OUT_ANYWAY, key=f"{key}-anyway"):
            _footer(run, show_prompt)
            return
        copy_button(run.text, f"{key}-anyway-copy")
    exports = (
        ("txt", export_txt, "text/plain"),
        ("md", export_md, "text/markdown"),
        ("json", export_json, "application/json"),
    )
    row = st.container(key=hook(DOWNLOADS, key)).columns(len(exports))
    for col, (ext, build, mime) in zip(row, exports, strict=True):
        col.download_button(
            f"Download .{ext}",
            build(run),
            export_name(run, ext),
            mime,
            key=f"{key}-{ext}",
            icon=":material/download:",
            on_click="ignore",
            width="stretch",
        )
    line, help_ = _cost_line(run)
    if len(run.attempts) > 1:  # what each repair call did; one call is the run the page already describes
        line += f" · {calls_line(run.attempts)}"
    st.caption(line, help=help_)
    apart = left_out(run.written, run.text)
    cut = " · words left out" if apart is not None else ""
    with st.expander(f"Raw output · {len(run.errors)} marker error(s){cut}", expanded=bool(run.errors)):
        if apart is not None:
            st.caption("Everything the model wrote; the struck words are left out of the text:")
            st.html(written_html(apart.shared, apart.dropped, apart.added))
            st.caption("The raw output of the text:")
        st.html(highlight_raw(run.raw, run.errors, markers=marker_spans(run)))
        if run.errors:
            st.dataframe(error_rows(run.raw, run.errors), hide_index=True, width="stretch")
        if run.draft:
            st.caption("Draft (discarded, not counted):")
            st.text(run.draft)
        for title, text in set_aside(run.planned_ending):  # kept with the run, as its notice says
            st.caption(f"{title} (kept with the run):")
            st.text(text)
    _footer(run, show_prompt)


def words_back(run: RunRecord, key: str, put_back: Callable[[RunRecord], None]) -> None:
    """Under a text that left out words the model wrote (a limit's cut at a sentence end, an ending written again):
    the whole text with the left-out words struck, what it would count, and one click to make it the writer's text.
    The page saves it as a new run, the one way an edit is saved; over the limit it says so in its badge."""
    apart = left_out(run.written, run.text)
    if apart is None or not run.written or run.status != "complete":
        return
    whole = run.written.strip()
    verdict = decide("complete", count(whole, run.unit), target_of(run), 0, refusal(whole, run.unit))  # type: ignore[arg-type]
    with st.container(border=True, key=f"{key}-words-back"):
        n = len(apart.words.split())
        said = verdict.headline(run.unit).removeprefix("✓ ")  # not the badge's words: the text's own verdict is that
        st.markdown(f"**{n} word(s) the model wrote are left out** · put back: :{verdict.tone}[{said}]")
        st.html(written_html(apart.shared, apart.dropped, apart.added))
        if st.button(
            "Put the words back",
            key=f"{key}-put-back",
            icon=":material/undo:",
            help="Make the model's whole text your text, saved as a new run as an edit is (it may be over the limit).",
        ):
            put_back(run)
            st.rerun(scope="app")


def _cost_line(run: RunRecord) -> tuple[str, str]:
    """Time and tokens in one line a writer reads ("4.9 s · 25 tokens written, 5 a second"), the per-unit cost of
    the countdown markers in its tooltip (four big metrics took a phone's whole screen)."""
    seconds = f"{run.seconds:.1f} s" if run.seconds is not None else "time unknown"
    tokens = run.completion_tokens
    if not tokens:
        return seconds, "The server did not say how many tokens it wrote."
    rate = f", {tokens / run.seconds:.0f} a second" if run.seconds else ""
    per_unit = f" {tokens / run.count:.1f} tokens for each unit counted." if run.count else ""
    help_ = "Tokens: what the model wrote, in its own pieces (what an API bills as completion tokens)." + per_unit
    return f"{seconds} · {tokens} tokens written{rate}", help_


def _footer(run: RunRecord, show_prompt: bool) -> None:
    if show_prompt:
        with st.expander("Prompt sent"):
            st.code(run.prompt, language=None, wrap_lines=True)
    st.caption(
        f"Run {run.id} · {run.origin} · {made_by(run.model, run.mode)} · "
        f"{run.lang} · {run.created_at:%Y-%m-%d %H:%M:%S} UTC"
    )


def quality_notes(run: RunRecord) -> None:
    """The run's score line (what it means, in words) and its warnings: a model that does not write the language,
    non-words, glued words, loops, a number list, a dangling ending, and a last sentence cut off."""
    line = score_line(run)
    if line:
        st.caption(line)
    notes = assessment_of(run).notes
    if notes:
        st.warning("  \n".join(notes), icon=":material/spellcheck:")


def edit_box(
    run: RunRecord, engine: Engine, *, key: str, on_saved: Callable[[int], None], on_send: Callable[[str], None]
) -> None:
    """Edit a run's text in place, its count and verdict redrawn in the run's unit as the writer types.

    Saving makes a new run of origin `edit` (`runs.save_edit`), never model output; "Rewrite this text to
    length" hands the edited text back to the Write page as the text to rewrite."""
    if run.status != "complete" or not run.text:
        return
    # Drawn only while the writer edits: a collapsed box would still put a second verdict line on the page.
    if st.toggle("Edit this text", key=f"{key}-editing"):
        with st.container(border=True):
            _edit_fragment(run, engine, key, on_saved, on_send)


@st.fragment
def _edit_fragment(
    run: RunRecord, engine: Engine, key: str, on_saved: Callable[[int], None], on_send: Callable[[str], None]
) -> None:
    """The edit box alone reruns as the writer edits, not the whole page."""
    text = live_text_area("Your edit", run.text, key=f"{key}-edit")
    verdict = decide("complete", count(text, run.unit), target_of(run), 0, refusal(text, run.unit))  # type: ignore[arg-type]
    # The verdict's own words (no model text in them), named as the edit's so they never read as the run's badge.
    st.markdown(f":{verdict.tone}[**Your edit: {verdict.headline(run.unit)}**]")
    detail = count_detail(text, run.unit)  # type: ignore[arg-type]
    if detail:
        st.caption(detail)
    c = st.columns(2)
    if c[0].button("Save as a new run", key=f"{key}-save-edit", icon=":material/save:", width="stretch"):
        if not text.strip():
            st.error("The edit is empty; write something to save, or leave the text as it is.")
            return
        on_saved(save_edit(engine, run, text))
        st.rerun(scope="app")
    if c[1].button("Rewrite this text to length", key=f"{key}-send-edit", icon=":material/replay:", width="stretch"):
        on_send(text)
        st.rerun(scope="app")

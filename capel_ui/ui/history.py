"""The History page: every run, filterable and searchable; open one to see, re-run, export or delete it."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import streamlit as st
from sqlalchemy import Engine

from ..history import history_rows
from ..runs import put_words_back
from ..storage import RunRecord, delete_run, distinct_values, get_run, list_runs, runs_to_csv
from ..vocab import LANG_LABELS, ORIGINS, mode_label
from . import resources, state
from .layout import FILTERS, hook
from .state import H
from .views import SCORE_HELP, render_run

ALL = "All"
COLUMNS = (
    *("id", "text", "verified", "target", "count", "ending", "score"),
    *("mode", "model", "status", "origin", "created"),
)
"""History's table, the text second; the rest in order of what a writer looks for."""


def render() -> None:
    st.title("History")
    engine = resources.engine()
    for key in H.FILTERS:  # a visit to another page drops widget state: the filters come back as they were
        state.keep(key)
    deleted = state.drop(H.DELETED)
    if deleted is not None:
        st.success(f"Run {deleted} deleted.", icon=":material/delete:")
    search = st.text_input("Search text", key=H.SEARCH, placeholder="words in the instruction or text")
    f = st.container(key=hook(FILTERS)).columns([1.4, 1.4, 1, 1, 1.4])
    model = f[0].selectbox("Model", [ALL, *distinct_values(engine, "model")], key=H.MODEL)
    mode = f[1].selectbox("Mode", [ALL, *distinct_values(engine, "mode")], key=H.MODE, format_func=_mode_name)
    origin = f[2].selectbox("Origin", [ALL, *ORIGINS], key=H.ORIGIN, help="Where the run was started.")
    lang = f[3].selectbox("Language", [ALL, "en", "zh"], key=H.LANG, format_func=_lang_name)
    dates = f[4].date_input("Dates", value=(), key=H.DATES, help="Pick a start and an end day.")
    verified_only = st.checkbox(
        "Verified only",
        key=H.VERIFIED,
        help="Complete, within its target (exactly, at most, range), no marker error.",
    )

    since = until = None
    if isinstance(dates, tuple | list) and dates:
        since = datetime.combine(dates[0], time.min, tzinfo=UTC)
        until = datetime.combine(dates[-1], time.min, tzinfo=UTC) + timedelta(days=1)
    runs = list_runs(
        engine,
        model=None if model == ALL else model,
        mode=None if mode == ALL else mode,
        lang=None if lang == ALL else lang,
        origin=None if origin == ALL else origin,
        verified_only=verified_only,
        since=since,
        until=until,
        search=search.strip() or None,
    )
    top = st.columns([3, 1])
    top[0].caption(f"{len(runs)} run(s)")
    top[1].download_button(
        "Export table as CSV",
        runs_to_csv(runs),
        "capel-history.csv",
        "text/csv",
        icon=":material/download:",
        on_click="ignore",
        width="stretch",
        disabled=not runs,
    )
    if not runs:
        st.info("No runs match. Runs from Write, Compare and the CLI appear here.")
        return
    rows = history_rows(runs)
    picked = st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key=H.table_key(),
        column_order=COLUMNS,  # the text second; up to the score in view at 1280 px without scrolling sideways
        column_config={
            "id": st.column_config.NumberColumn("Run", width=56),
            "text": st.column_config.TextColumn("Text", width=360),
            "verified": st.column_config.TextColumn("✓", width=40, help="Verified: the count is proven."),
            "target": st.column_config.TextColumn("Target"),
            "count": st.column_config.NumberColumn("Count"),
            "ending": st.column_config.TextColumn("Ending"),
            "mode": st.column_config.TextColumn("Mode", width="medium"),
            "score": st.column_config.NumberColumn("Score", help=SCORE_HELP, format="%.1f", width="small"),
        },
    )
    selected = picked.selection.rows if picked and picked.selection else []
    if selected:
        state.drop(H.RESTORED)
    run_id = runs[selected[0]].id if selected else state.get(H.RESTORED)
    run = get_run(engine, run_id) if run_id is not None else None
    if run is None:
        st.caption("Select a row to open the run.")
        return
    if not selected:  # the run "Put the words back" just saved
        st.success(f"Saved as run {run.id}, the top row: the words the model wrote put back.", icon=":material/undo:")
    st.divider()
    st.subheader(f"Run {run.id}")
    with st.expander("Instruction", expanded=True):
        st.text(run.instruction)
    render_run(run, key=f"h{run.id}", put_back=lambda parent: _put_back(engine, parent))
    a = st.columns([1.4, 1, 3])  # "Re-run on Write" whole at 1280 px
    if a[0].button("Re-run on Write", icon=":material/replay:", width="stretch", key=f"rerun{run.id}"):
        state.open_on_write(run)  # the same inputs, a rewrite as a rewrite
    with a[1].popover("Delete", icon=":material/delete:", width="stretch"):
        st.write("Delete this run for good?")
        st.button("Yes, delete", type="primary", key=f"del{run.id}", on_click=_delete, args=(engine, run.id))


def _delete(engine: Engine, run_id: int) -> None:
    """Delete the run and close its detail: the table is drawn anew with no row selected (a kept selection would
    open the next run, its Delete button where the writer just clicked), and the page says which run went."""
    delete_run(engine, run_id)
    state.put(H.TABLES, state.get(H.TABLES) + 1)
    state.put(H.DELETED, run_id)


def _put_back(engine: Engine, parent: RunRecord) -> None:
    """Save the model's whole text as a new run (`runs.put_words_back`) and open it below a table drawn anew (the
    selected row would now point at another run)."""
    restored = put_words_back(engine, parent)
    if restored is not None:
        state.put(H.TABLES, state.get(H.TABLES) + 1)
        state.put(H.RESTORED, restored)


def _lang_name(lang: str) -> str:
    return lang if lang == ALL else LANG_LABELS.get(lang, lang)  # type: ignore[call-overload]


def _mode_name(mode: str) -> str:
    return mode if mode == ALL else mode_label(mode)

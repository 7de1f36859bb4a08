"""The History page: every run, filterable and searchable; open one to see, re-run, export or delete it."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import streamlit as st

from ..history import history_rows
from ..storage import delete_run, distinct_values, get_run, list_runs, runs_to_csv
from ..vocab import ORIGINS, mode_label
from . import resources, state
from .views import SCORE_HELP, render_run

ALL = "All"


def render() -> None:
    st.title("History")
    engine = resources.engine()
    f = st.columns([1.3, 1.1, 0.9, 0.8, 1.4, 1.6])
    model = f[0].selectbox("Model", [ALL, *distinct_values(engine, "model")], key="h_model")
    mode = f[1].selectbox("Mode", [ALL, *distinct_values(engine, "mode")], key="h_mode", format_func=_mode_name)
    origin = f[2].selectbox("Origin", [ALL, *ORIGINS], key="h_origin", help="Where the run was started.")
    lang = f[3].selectbox("Language", [ALL, "en", "zh"], key="h_lang")
    dates = f[4].date_input("Dates", value=(), key="h_dates", help="Pick a start and an end day.")
    search = f[5].text_input("Search text", key="h_search", placeholder="words in the instruction or text")
    verified_only = st.checkbox(
        "Verified only",
        key="h_verified",
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
        key="h_table",
        column_config={
            "id": st.column_config.NumberColumn("Run", width="small"),
            "score": st.column_config.NumberColumn("Score", help=SCORE_HELP, format="%.1f"),
        },
    )
    selected = picked.selection.rows if picked and picked.selection else []
    if not selected:
        st.caption("Select a row to open the run.")
        return
    run = get_run(engine, runs[selected[0]].id)
    if run is None:
        return
    st.divider()
    st.subheader(f"Run {run.id}")
    with st.expander("Instruction", expanded=True):
        st.text(run.instruction)
    render_run(run, key=f"h{run.id}")
    a = st.columns([1, 1, 4])
    if a[0].button("Re-run on Write", icon=":material/replay:", width="stretch", key=f"rerun{run.id}"):
        state.open_on_write(run)  # the same inputs, a rewrite as a rewrite
    with a[1].popover("Delete", icon=":material/delete:", width="stretch"):
        st.write("Delete this run for good?")
        if st.button("Yes, delete", type="primary", key=f"del{run.id}"):
            delete_run(engine, run.id)
            st.toast(f"Run {run.id} deleted.")
            st.rerun()


def _mode_name(mode: str) -> str:
    return mode if mode == ALL else mode_label(mode)

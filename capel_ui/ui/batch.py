"""The Batch page: upload a spreadsheet (or a pack's facts), see what each row will ask, write them all with a
progress bar and Stop, and download the result as CSV or XLSX. Rows appear as they finish.

The page is a view of `capel_ui.batch`: the batch is planned from the upload and its options each time the page
draws, and what the database already holds for it (same file, same options: the same batch id) is shown as done,
so a stopped or crashed batch started again writes only what is left.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import pandas as pd
import streamlit as st

from ..backends import Backend, BackendError, get_backend
from ..batch.lock import Busy
from ..batch.packs import DEFAULT_POSTS, MAX_POSTS, PACKS
from ..batch.rows import INPUT_COLUMNS, OUTPUT_COLUMNS, Options, asks
from ..batch.runner import Batch
from ..batch.table import XLSX_MIME, Table, TableError, csv_bytes, excel_note, read_table, xlsx_bytes
from ..vocab import MODE_LABELS, MODES
from . import resources, state
from .state import Key

EXAMPLE = (
    "id,instruction,target,unit,category\n"
    "mug,Write a product description for a hand-made ceramic mug,30,en_words,kitchen\n"
    "shop,Write a Google Ads headline for a seaside bookshop,≤ 30,chars,ads\n"
    "scarf,Write a tagline for a wool scarf knitted in the Highlands,8-10,en_words,clothes\n"
)
AUTO = "auto"


class BT:
    """The Batch page's keys."""

    UPLOAD: Final = Key[Any]("bt_upload", None)
    PACK: Final = Key[str | None]("bt_pack", None)
    POSTS: Final = Key[int]("bt_posts", DEFAULT_POSTS)
    MODE: Final = Key[str]("bt_mode", AUTO)
    STOP: Final = Key[bool]("bt_stop", False)
    FAILED: Final = Key[dict[str, dict[str, str]]]("bt_failed", {})
    """Per batch id, the texts that failed before their run was saved (the model could not start, a refused
    request): kept for the page's next draw, since the database has no run to say it."""
    EXAMPLE: Final = Key[bool]("bt_example", False)
    """Set by "Try the example": the example spreadsheet stands in for an upload."""


def render() -> None:
    st.title("Batch")
    st.caption(
        "A spreadsheet of exact-length texts: one row per text (an instruction or a text to rewrite, and a "
        "target), or a platform's set of texts per row of facts. Every text is saved; a stopped batch started "
        "again with the same file writes only what is left."
    )
    name, data = _input()
    if data is None:
        _help()
        return
    try:
        table = read_table(data, name)
    except TableError as exc:  # one line naming the line and what is wrong: nothing is written
        st.error(str(exc), icon=":material/table_view:")
        return
    if table.account():
        st.caption(f"{name}: {table.account()}.")
    options = _options()
    choice = resources.model_choice()
    try:
        batch = Batch(table, data, options, resources.engine(), backend_for=lambda model: _backend(choice, model))
    except TableError as exc:  # more texts than one batch writes
        st.error(f"{name}: {exc}", icon=":material/table_view:")
        return
    batch.keep_errors(state.get(BT.FAILED).get(batch.id, {}))
    _preview(batch, name)
    left = len(batch.pending)
    if left:
        b = st.columns([1.6, 1, 3])
        label = f"Write {left} text{'s' * (left != 1)}" if batch.resumed == 0 else f"Write the {left} left"
        if b[0].button(label, type="primary", icon=":material/play_arrow:", width="stretch"):
            _run(batch, b[1])
    _results(batch, name)


def _input() -> tuple[str, bytes | None]:
    upload = st.file_uploader("Spreadsheet (.csv or .xlsx)", type=["csv", "xlsx"], key=BT.UPLOAD)
    if upload is not None:
        state.drop(BT.EXAMPLE)
        return upload.name, upload.getvalue()
    if state.get(BT.EXAMPLE):
        return "example.csv", EXAMPLE.encode()
    return "", None


def _help() -> None:
    st.button("Try the example", icon=":material/table_view:", on_click=state.put, args=(BT.EXAMPLE, True))
    st.markdown(
        "**Columns** (first row, any case): `instruction` (what to write) or `source` (a text to rewrite), and "
        "`target`: `50` (exactly), `≤ 30` or `at most 30`, `10-12` (between). Optional: `unit` (`en_words`, "
        "`chars`, `x_weighted`, `sms`…), `kind`, `mode`, `model`, `variants`, `lang`, `id`. Any other column is "
        "kept as it is. With a **pack**, each row's `product` and `facts` (or `instruction`) become the "
        "platform's set of texts."
    )
    st.download_button(
        "Download the example",
        EXAMPLE.encode("utf-8-sig"),
        "batch-example.csv",
        "text/csv",
        icon=":material/download:",
        on_click="ignore",
    )
    st.dataframe(pd.read_csv(_example_io()), hide_index=True)


def _example_io() -> Any:
    import io

    return io.StringIO(EXAMPLE)


def _options() -> Options:
    c = st.columns([2, 1.4, 1])
    keys = [None, *PACKS]
    pack = c[0].selectbox(
        "Pack",
        keys,
        format_func=lambda k: "None: one text per row" if k is None else f"{PACKS[k].title} ({PACKS[k].summary})",
        key=BT.PACK,
    )
    mode = c[1].selectbox(
        "Mode",
        [AUTO, *MODES],
        format_func=lambda m: "Row's own, else the best" if m == AUTO else MODE_LABELS[m],
        key=BT.MODE,
        help="For rows without a mode column: Exact (guaranteed) where the model takes a grammar, else CAPEL "
        "where it can count the target, else Baseline.",
    )
    posts = DEFAULT_POSTS
    if pack == "x-thread":
        posts = int(c[2].number_input("Posts", 1, MAX_POSTS, DEFAULT_POSTS, key=BT.POSTS))
    choice = resources.model_choice()
    return Options(
        model=choice.model,
        mode=None if mode == AUTO else mode,
        pack=pack,
        posts=posts,
        base_url=choice.base_url,
        grammar_field=choice.grammar_field,
    )


def _backend(choice: Any, model: str) -> Backend:
    """The sidebar's model (with this session's key), or a model a row names."""
    if model == choice.model:
        return resources.build_backend(choice)
    return get_backend(model)


def _preview(batch: Batch, name: str) -> None:
    p = batch.progress
    rows = []
    for job in batch.jobs:
        r = batch.results.get(job.key)
        status = "✓ done" if r is not None and r.done else "✗ " + (r.error or "") if r is not None else "to write"
        rows.append({"row": job.key, "status": status, "asks": asks(job)})
    st.caption(
        f"{name}: {len(batch.table.rows)} rows → {p.total} texts"
        + (f" · {batch.resumed} written already" if batch.resumed else "")
        + (f" · {p.failed} with an error" if p.failed else "")
        + f" · {resources.model_choice().label} · batch {batch.id}"
    )
    unknown = [h for h in batch.table.header if h.strip().lower() not in INPUT_COLUMNS]
    if unknown:
        st.caption("Kept as they are: " + ", ".join(unknown))
    with st.expander("What each row will ask", expanded=p.done == 0):
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", height=min(38 + 35 * len(rows), 320))


def _run(batch: Batch, stop_slot: Any) -> None:
    stop_slot.button("Stop", icon=":material/stop:", width="stretch", key=BT.STOP)
    bar = st.empty()
    table = st.empty()
    p = batch.progress

    def tick() -> None:
        left = p.left_seconds
        text = (
            f"{p.done} of {p.total} done · {p.verified} verified · {p.failed} failed · {_clock(p.elapsed)} elapsed"
            + (f" · about {_clock(left)} left" if left else "")
        )
        bar.progress(p.done / p.total if p.total else 1.0, text=text)
        rows = batch.output_rows(only_finished=True)
        if rows:
            table.dataframe(_frame(batch, rows), hide_index=True, width="stretch")

    try:
        batch.run(tick)
    except BackendError as exc:
        st.error(exc.message)
        return
    except Busy as exc:  # the same batch runs in another tab or a `batch` command: it would write every row twice
        st.error(str(exc), icon=":material/lock:")
        return
    finally:
        state.put(BT.FAILED, {**state.get(BT.FAILED), batch.id: batch.unsaved_errors()})
    st.rerun()  # drawn again from the database: the preview's statuses, the results and the downloads


def _clock(seconds: float | None) -> str:
    s = int(seconds or 0)
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


def _frame(batch: Batch, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The result rows as the page shows them: the row's id, slot and the texts first."""
    first = ["id", "slot", "verified", "text", "error", "count", "asked", "ending", "score", "warnings"]  # a phone
    # shows the first two or three: which row, whether it is verified, its text
    cols = [c for c in first if c in batch.header()] + [c for c in batch.header() if c not in first]
    frame = pd.DataFrame(rows, columns=cols)
    if "slot" in frame and not frame["slot"].astype(bool).any():
        frame = frame.drop(columns="slot")
    return frame


def _results(batch: Batch, name: str) -> None:
    if not any(r.run_id for r in batch.results.values()):
        return
    st.divider()
    p = batch.progress
    st.subheader(f"{p.verified} of {p.total} verified")
    if p.failed:
        st.caption(f"{p.failed} with an error (see the error column); write the rest again with the button above.")
    header, rows = batch.header(), batch.output_rows()
    st.dataframe(_frame(batch, rows), hide_index=True, width="stretch", column_config=_columns())
    stem = Path(name).stem or "batch"
    d = st.columns([1, 1, 3])
    d[0].download_button(
        "Download CSV",
        csv_bytes(header, rows, OUTPUT_COLUMNS),
        f"{stem}-texts.csv",
        "text/csv",
        icon=":material/download:",
        on_click="ignore",
        width="stretch",
    )
    d[1].download_button(
        "Download XLSX",
        xlsx_bytes(header, rows),
        f"{stem}-texts.xlsx",
        XLSX_MIME,
        icon=":material/download:",
        on_click="ignore",
        width="stretch",
    )
    if note := excel_note(header, rows):
        d[2].caption(note)


def _columns() -> dict[str, Any]:
    return {
        "text": st.column_config.TextColumn("text", width="large"),
        "verified": st.column_config.CheckboxColumn("verified"),
        "score": st.column_config.NumberColumn("score", format="%.1f"),
    }


__all__ = ["BT", "Table", "render"]

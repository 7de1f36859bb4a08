"""The Benchmark page: run a suite with a progress bar, browse past runs, chart one or several side by side.

The runner blocks and uses its own worker threads, so it runs in a background thread; the script thread
only paints progress. A Stop click (or a closed tab) sets the runner's stop flag; finished results stay.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any

import streamlit as st

from ..backends import BackendError
from ..bench import charts, report
from ..bench.runner import BenchConfig, list_runs, parse_modes, run_bench, run_results
from ..bench.suites import CONTROL_SUITES, SUITES, parse_lengths
from ..storage import PROJECT_ROOT
from ..vocab import (
    BENCH_CONTROL_LABELS,
    BENCH_CONTROL_MEETS,
    BENCH_CONTROLS,
    MARKER_MODES,
    MAX_CALLS,
    MODE_LABELS,
    MODES,
    mode_label,
)
from . import resources, state
from .state import B

DEFAULT_LENGTHS = {"rtg": "16,64", "lifebench": "16,32", "mtbench": "50", "custom": ""}
SUITE_LABELS = {
    "rtg": "Random text generation",
    "lifebench": "LIFEBench",
    "mtbench": "MT-Bench with word budgets",
    "custom": "Your own file",
}
SUITE_PAGE_HELP = {
    "rtg": "The paper's Random Text Generation (§4.3): a coherent passage of exactly N words (English) or "
    "characters (Chinese) on free topics. Target lengths below; left empty, they are drawn from 1–1000 with the seed.",
    "lifebench": "LIFEBench's tasks (30 English, 30 Chinese), scored with LIFEBench's own counter and the "
    "Length Score of the control picked (equal to, at most, at least N). Targets from 16, 32, 64, 128, 256, "
    "512, 1024, 2048, 4096, 8192 (empty: 16, 32, 64, 128).",
    "mtbench": "MT-Bench's 80 first turns with fixed word budgets (empty: 50, 120, 250); not MT-Bench-LI, "
    "whose target lengths are not public.",
    "custom": "Upload a CSV or JSONL file with the columns instruction, lang (en or zh) and target, and "
    "optionally id and temperature.",
}
"""What each suite is, for the page (the command line's help names its own flags)."""

METRIC_COLUMNS: dict[str, tuple[str, int, float]] = {
    "em": ("Exact match %", 1, 100.0),
    "within": ("Within control %", 1, 100.0),
    "mae": ("MAE", 1, 1.0),
    "mald": ("MALD", 3, 1.0),
    "ld": ("LD", 3, 1.0),
    "ls": ("LS", 1, 1.0),
    "valid": ("Valid %", 1, 100.0),
    "tokens_per_unit": ("Tokens per unit", 1, 1.0),
    "seconds": ("Seconds per sample", 1, 1.0),
}
"""Metric key → (column label, decimals, scale): fractions are shown as percentages."""


def suite_label(suite: str) -> str:
    return SUITE_LABELS.get(suite, suite)


def control_label(control: str | None) -> str:
    """`At most (≤ N)`: the control and what `within` means under it (rows stored before controls are Equal-To)."""
    name = control or "equal"
    if name not in BENCH_CONTROLS:
        return name
    return f"{BENCH_CONTROL_LABELS[name]} ({BENCH_CONTROL_MEETS[name]})"  # type: ignore[index]


def metric_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Aggregated rows as a reader expects them: named columns, modes by label, metrics rounded."""
    table = []
    for r in rows:
        line: dict[str, Any] = {
            "Model": r["model"],
            "Control": control_label(r.get("control")),
            "Mode": mode_label(r["mode"]),
            "Language": r["lang"],
            "Target": "all" if r["target"] is None else str(r["target"]),
            "Scored": r["n"],
            "Samples": r["samples"],
        }
        for key, (label, digits, scale) in METRIC_COLUMNS.items():
            value = r.get(key)
            line[label] = None if value is None else round(value * scale, digits)
        line["Errors"] = report.format_errors(r.get("errors") or {})
        table.append(line)
    return table


def _upload_path(upload: Any) -> str:
    """Keep an uploaded custom suite on disk under data/uploads, named by its content hash."""
    data = upload.getvalue()
    folder = PROJECT_ROOT / "data" / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(data).hexdigest()[:16]}{Path(upload.name).suffix.lower()}"
    path.write_bytes(data)
    return str(path)


def _run_form() -> None:
    choice = resources.model_choice()
    st.subheader("Run a suite")
    st.caption(f"Model: **{choice.label}** (change it in the sidebar).")
    c = st.columns([1.2, 2.4, 1.2])
    suite = c[0].selectbox("Suite", SUITES, key=B.SUITE, format_func=suite_label)
    c[0].caption(SUITE_PAGE_HELP.get(suite, ""))
    control = "equal"
    if suite in CONTROL_SUITES:
        control = c[0].selectbox(
            "Control",
            BENCH_CONTROLS,
            key=B.CONTROL,
            format_func=control_label,
            help="LIFEBench's control methods: the prompt asks for exactly, at most or at least N, and the Length "
            "Score is that control's. At most and at least run the Baseline and Exact modes (markers count to "
            "exactly N). Each control is a separate run.",
        )
    grammar = resources.takes_grammar(choice, resources.grammar_probe(choice))
    default_modes = ["baseline", "exact"] if grammar else ["baseline", "capel"]
    if control != "equal":
        default_modes = [m for m in default_modes if m not in MARKER_MODES]
    modes = c[1].multiselect("Modes", MODES, default=default_modes, format_func=MODE_LABELS.get, key=B.modes(control))
    lengths = c[2].text_input(
        "Target lengths",
        value=DEFAULT_LENGTHS[suite],
        key=B.lengths(suite),
        help="Comma-separated, e.g. 16,64; empty for the suite's default.",
    )
    d = st.columns(5)
    limit = d[0].number_input("Items (limit)", min_value=1, max_value=10_000, value=5, key=B.LIMIT)
    seed = d[1].number_input("Seed", min_value=0, value=0, key=B.SEED)
    lang = d[2].selectbox("Language", ["both", "en", "zh"], key=B.LANG)
    concurrency = d[3].number_input("Concurrency", min_value=1, max_value=8, value=2, key=B.CONCURRENCY)
    max_calls = d[4].number_input(
        "Max calls (repair)",
        min_value=1,
        max_value=MAX_CALLS,
        value=1,
        key=B.MAX_CALLS,
        help="CAPEL samples that go wrong are repaired from their verified prefix, up to this many calls; "
        "1 measures one call, as the paper does. A different value is a separate run.",
    )
    upload = None
    if suite == "custom":
        upload = st.file_uploader(
            "CSV or JSONL with instruction, lang, target (and optional id)", type=["csv", "jsonl"], key=B.UPLOAD
        )
    b = st.columns([1.5, 1, 3.5])  # room for the label at 1280 px
    if not b[0].button("Run benchmark", type="primary", icon=":material/play_arrow:", width="stretch"):
        return
    try:
        config = BenchConfig(
            suite=suite,
            model=choice.model,
            base_url=choice.base_url,
            modes=parse_modes(modes),
            lengths=parse_lengths(lengths),
            limit=int(limit),
            seed=int(seed),
            lang=None if lang == "both" else lang,
            concurrency=int(concurrency),
            file=_upload_path(upload) if upload is not None else None,
            grammar_field=choice.grammar_field,
            max_calls=int(max_calls),
            control=control,
        )
        if suite == "custom" and config.file is None:
            raise ValueError("upload a CSV or JSONL file for the custom suite")
        backend = resources.build_backend(choice)
    except (ValueError, BackendError) as exc:
        st.error(str(exc))
        return
    stop_slot = b[1].empty()
    stop_slot.button("Stop", icon=":material/stop:", width="stretch", key=B.STOP)
    _run(config, backend)
    stop_slot.empty()


def _run(config: BenchConfig, backend: Any) -> None:
    engine = resources.engine()
    shared: dict[str, Any] = {"done": 0, "total": 0, "eta": None, "outcome": None, "error": None}
    stop = threading.Event()

    def progress(done: int, total: int, eta: float | None) -> None:
        shared.update(done=done, total=total, eta=eta)

    def work() -> None:
        try:
            shared["outcome"] = run_bench(config, backend=backend, engine=engine, progress=progress, stop=stop)
        except Exception as exc:  # shown to the user; per-sample failures are stored by the runner itself
            shared["error"] = exc

    thread = threading.Thread(target=work, name="bench", daemon=True)
    bar = st.progress(0.0, text="Starting…")
    thread.start()
    try:
        while thread.is_alive():
            total = shared["total"] or 1
            eta = shared["eta"]
            eta_text = f" · about {eta:.0f} s left" if eta is not None else ""
            done = f"{shared['done']} of {shared['total']} samples{eta_text}"
            bar.progress(min(shared["done"] / total, 1.0), text=done)
            time.sleep(0.3)
    finally:
        stop.set()  # harmless when finished; on Stop / rerun / closed tab it ends the run, keeping results
    bar.empty()
    if shared["error"] is not None:
        st.error(str(shared["error"]))
        return
    outcome = shared["outcome"]
    if outcome is not None:
        state.put(B.SELECTED, [outcome.bench_run_id])
        failed = f", {outcome.failed} failed (see the error counts)" if outcome.failed else ""
        st.success(
            f"Bench run {outcome.bench_run_id} {outcome.status}: {outcome.generated} new, "
            f"{outcome.skipped} resumed{failed}, {outcome.seconds:.0f} s."
        )


def _past_runs() -> list[int]:
    st.subheader("Past runs")
    runs = list_runs(resources.engine())
    if not runs:
        st.info("No benchmark runs yet. Run a suite above, or `python -m capel_ui bench …` from a terminal.")
        return []
    rows = [
        {
            "id": r.id,
            "created": r.created_at.strftime("%Y-%m-%d %H:%M"),
            "suite": suite_label(r.suite),
            "control": control_label(r.control),
            "model": r.model,
            "modes": ", ".join(mode_label(m) for m in str(r.modes).split(",") if m),
            "lengths": r.lengths,
            "limit": r.limit,
            "seed": r.seed,
            "status": r.status,
            "results": r.result_count,
        }
        for r in runs
    ]
    preselected = set(state.get(B.SELECTED))
    picked = st.dataframe(
        rows, hide_index=True, width="stretch", on_select="rerun", selection_mode="multi-row", key=B.TABLE
    )
    chosen = [runs[i].id for i in (picked.selection.rows if picked and picked.selection else [])]
    if not chosen and preselected:
        chosen = [r.id for r in runs if r.id in preselected]
    if not chosen:
        chosen = [runs[0].id]
        st.caption("Showing the newest run; select rows to chart one or several runs together.")
    return chosen


def _charts(ids: list[int]) -> None:
    records = run_results(resources.engine(), ids)
    rows = report.aggregate(records)
    if not rows:
        st.info("These runs have no results yet.")
        return
    st.caption(f"Runs {', '.join(map(str, ids))} · {len(records)} samples")
    per_target = report.per_target(rows)
    st.dataframe(metric_table(report.overall(rows) + per_target), hide_index=True, width="stretch")
    figs = {
        "mald-em": charts.mald_em_figure(per_target),
        "ls-heatmap": charts.ls_heatmap(per_target),
        "errors": charts.error_figure(rows),
    }
    left, right = st.columns(2)
    with left:
        st.plotly_chart(figs["mald-em"], width="stretch", key=f"mald-{ids}")
    with right:
        st.plotly_chart(figs["ls-heatmap"], width="stretch", key=f"ls-{ids}")
    st.plotly_chart(figs["errors"], width="stretch", key=f"err-{ids}")
    st.caption("Each chart's toolbar saves it as PNG (camera icon); the buttons below save the data and charts.")
    stem = "capel-bench-" + "-".join(map(str, ids))
    files = [("Results CSV", charts.results_csv(rows), f"{stem}.csv", "text/csv")]
    files += [
        (f"{name} chart (HTML)", charts.figure_html(fig), f"{stem}-{name}.html", "text/html")
        for name, fig in figs.items()
    ]
    for col, (label, data, name, mime) in zip(st.columns(len(files)), files, strict=True):
        col.download_button(label, data, name, mime, icon=":material/download:", on_click="ignore", width="stretch")


def render() -> None:
    st.title("Benchmark")
    st.caption(
        "The paper's measurements on any model: Exact Match, MAE, MALD, LIFEBench Length Deviation and "
        "Length Score, and where each mode breaks."
    )
    _run_form()
    st.divider()
    ids = _past_runs()
    if ids:
        _charts(ids)

"""Charts and exports are built from aggregated rows: one line per (model, mode), the LS grid, the taxonomy."""

from __future__ import annotations

import csv
import io
from typing import Any

import plotly.graph_objects as go
import pytest

from capel_ui.bench.charts import error_figure, figure_html, ls_heatmap, mald_em_figure, results_csv
from capel_ui.bench.report import aggregate


def rec(
    target: int,
    count: int | None,
    mode: str,
    *,
    model: str = "m",
    lang: str = "en",
    status: str = "ok",
    errors: tuple[str, ...] = (),
) -> dict[str, Any]:
    return {
        "model": model,
        "mode": mode,
        "lang": lang,
        "target": target,
        "status": status,
        "count": count,
        "errors": [{"type": e} for e in errors],
        "completion_tokens": None,
        "seconds": 1.0,
    }


RECORDS = [
    rec(16, 16, "exact"),
    rec(64, 64, "exact"),
    rec(16, 20, "baseline"),
    rec(64, 32, "baseline"),
    rec(16, 15, "capel", errors=("skip",)),
    rec(64, None, "capel", status="error"),
    rec(16, 16, "exact", model="big"),
]
ROWS = aggregate(RECORDS)


def lines(fig: go.Figure, col: int) -> dict[str, tuple[list, list]]:
    """The lines of one panel of `mald_em_figure` (1: MALD, 2: EM), by name: (targets, values)."""
    axis = "x" if col == 1 else f"x{col}"
    return {t.name: (list(t.x), list(t.y)) for t in fig.data if t.xaxis == axis}


def test_mald_panel_has_one_line_per_model_and_mode_over_the_targets() -> None:
    mald = lines(mald_em_figure(ROWS), 1)
    assert set(mald) == {"big · Exact (guaranteed)", "m · CAPEL", "m · Baseline", "m · Exact (guaranteed)"}
    assert mald["m · Baseline"] == ([16, 64], [pytest.approx(0.25), pytest.approx(0.5)])
    assert mald["m · Exact (guaranteed)"] == ([16, 64], [0.0, 0.0])
    assert mald["m · CAPEL"][1][1] is None  # target 64 had no scored sample: a gap, not a zero


def test_em_panel_plots_fractions_on_a_0_to_1_axis() -> None:
    fig = mald_em_figure(ROWS)
    assert lines(fig, 2)["m · Exact (guaranteed)"] == ([16, 64], [1.0, 1.0])
    assert tuple(fig.layout.yaxis2.range) == (0, 1.05)


def test_x_axes_turn_logarithmic_only_over_a_wide_range() -> None:
    narrow = mald_em_figure(aggregate([rec(16, 16, "exact"), rec(64, 64, "exact")]))
    wide = mald_em_figure(aggregate([rec(16, 16, "exact"), rec(1024, 1000, "exact")]))
    assert (narrow.layout.xaxis.type, narrow.layout.xaxis2.type) == ("linear", "linear")
    assert (wide.layout.xaxis.type, wide.layout.xaxis2.type) == ("log", "log")


def test_mald_and_em_side_by_side_share_one_legend() -> None:
    fig = mald_em_figure(ROWS)
    assert len(fig.data) == 8
    assert sum(1 for t in fig.data if t.showlegend) == 4


def test_ls_heatmap_has_model_mode_rows_and_target_columns() -> None:
    fig = ls_heatmap(ROWS)
    heat = fig.data[0]
    assert isinstance(heat, go.Heatmap)
    assert list(heat.x) == ["16", "64"]
    names = list(heat.y)
    assert names == ["big · Exact (guaranteed)", "m · CAPEL", "m · Baseline", "m · Exact (guaranteed)"]
    z = {name: list(row) for name, row in zip(names, heat.z, strict=True)}
    assert z["m · Exact (guaranteed)"] == [100.0, 100.0]
    assert z["big · Exact (guaranteed)"] == [100.0, None]  # never run at 64
    # baseline: 20 for 16 is LD +0.25 -> 100·e^-0.5 = 60.65; 32 for 64 is LD -0.5 -> 100·e^-2.5 = 8.21
    assert z["m · Baseline"] == [pytest.approx(60.653, abs=1e-3), pytest.approx(8.208, abs=1e-3)]


def test_error_figure_groups_error_types_by_mode() -> None:
    fig = error_figure(ROWS)
    assert fig.layout.barmode == "group"
    bars = {t.name: dict(zip(t.x, t.y, strict=True)) for t in fig.data}
    assert bars["m · CAPEL"] == {"skip": 1, "backend": 1}
    assert bars["m · Baseline"] == {"skip": 0, "backend": 0}


def test_language_joins_the_series_name_when_both_are_present() -> None:
    rows = aggregate([rec(16, 16, "exact", lang="en"), rec(16, 16, "exact", lang="zh")])
    assert list(lines(mald_em_figure(rows), 1)) == ["Exact (guaranteed) · en", "Exact (guaranteed) · zh"]


def test_results_csv_has_a_header_and_one_line_per_row() -> None:
    text = results_csv(ROWS)
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(table) == len(ROWS)
    capel_all = next(r for r in table if r["mode"] == "capel" and r["target"] == "all")
    assert capel_all["errors"] == "skip:1 backend:1"
    assert capel_all["n"] == "1" and capel_all["samples"] == "2"
    assert next(r for r in table if r["mode"] == "capel" and r["target"] == "64")["em"] == ""


def test_figure_html_is_a_standalone_page_with_plotly_inlined() -> None:
    html = figure_html(mald_em_figure(ROWS))
    assert html.lstrip().lower().startswith(("<html", "<!doctype html>"))
    assert "<script src=" not in html  # plotly.js is inside the page, not fetched
    assert "Plotly.newPlot" in html


def test_each_series_has_one_colour_in_both_panels_and_no_trace_is_left_uncoloured() -> None:
    fig = mald_em_figure(ROWS)
    colours: dict[str, set[str]] = {}
    for t in fig.data:
        assert t.line.color and t.marker.color == t.line.color, t.name
        colours.setdefault(t.name, set()).add(t.line.color)
    assert all(len(c) == 1 for c in colours.values())  # the EM point has its MALD line's (and legend's) colour
    assert len({next(iter(c)) for c in colours.values()}) == len(colours)  # and each series its own


def test_a_single_target_length_is_drawn_as_bars_on_a_category_axis_not_a_line() -> None:
    fig = mald_em_figure(aggregate([rec(16, 16, "exact"), rec(16, 20, "baseline")]))
    assert {t.type for t in fig.data} == {"bar"}
    assert {tuple(t.x) for t in fig.data} == {("16",)}
    assert (fig.layout.xaxis.type, fig.layout.xaxis2.type, fig.layout.barmode) == ("category", "category", "group")
    bars = {t.name: t.marker.color for t in fig.data}
    assert len(set(bars.values())) == 2

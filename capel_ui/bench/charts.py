"""Plotly figures of aggregated benchmark rows (from `report.aggregate`), plus CSV/HTML export.

Pure functions: rows in, a Figure or a string out. The same functions serve the CLI, the docs and the
Streamlit page, so a chart there is the chart here.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from ..vocab import BENCH_CONTROL_LABELS, MODE_LABELS
from .report import ERROR_ORDER, ROW_KEYS, Row, format_errors, overall, per_target


def _controls(rows: Iterable[Row]) -> set[str]:
    return {str(r.get("control") or "equal") for r in rows}


def _shows_control(rows: Iterable[Row]) -> bool:
    """Name the control in legends unless every row is Equal-To (the only track before controls existed)."""
    return _controls(rows) != {"equal"}


def _series_name(row: Row, langs: set[str], models: set[str], control: bool = False) -> str:
    """`model · control · mode · lang`, leaving out what every row shares (fewer words in the legend)."""
    parts = []
    if len(models) > 1:
        parts.append(str(row["model"]))
    if control:
        name = str(row.get("control") or "equal")
        parts.append(BENCH_CONTROL_LABELS.get(name, name))  # type: ignore[call-overload]
    parts.append(MODE_LABELS.get(row["mode"], row["mode"]))  # type: ignore[call-overload]
    if len(langs) > 1:
        parts.append(str(row["lang"]))
    return " · ".join(parts)


def _series(rows: Sequence[Row]) -> dict[str, list[Row]]:
    """Per-target rows grouped into one line each, in the order the rows come (report order)."""
    data = per_target(rows)
    langs = {str(r["lang"]) for r in data}
    models = {str(r["model"]) for r in data}
    control = _shows_control(data)
    out: dict[str, list[Row]] = {}
    for r in data:
        out.setdefault(_series_name(r, langs, models, control), []).append(r)
    return out


PALETTE: tuple[str, ...] = tuple(qualitative.Plotly)


def series_colors(names: Iterable[str]) -> dict[str, str]:
    """One colour per series, the same in every panel and figure that draws it (the legend names one colour)."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def _log_x(rows: Iterable[Row]) -> bool:
    targets = [r["target"] for r in rows if r["target"]]
    return bool(targets) and max(targets) / min(targets) >= 8


def _add_lines(fig: go.Figure, rows: Sequence[Row], metric: str, *, col: int, legend: bool = True) -> None:
    """One line per series over the targets; with a single target, one bar per series (a line needs two)."""
    all_series = _series(rows)
    colors = series_colors(all_series)
    single = len({r["target"] for s in all_series.values() for r in s}) == 1
    for name, series in all_series.items():
        series = sorted(series, key=lambda r: r["target"])
        common: dict = {
            "name": name,
            "legendgroup": name,
            "showlegend": legend,
            "customdata": [[r["n"], r["samples"]] for r in series],
            "hovertemplate": f"{name}<br>target %{{x}}<br>{metric.upper()} %{{y:.3f}}"
            "<br>n %{customdata[0]} of %{customdata[1]}<extra></extra>",
        }
        x = [r["target"] for r in series]
        y = [r[metric] for r in series]
        if single:
            trace = go.Bar(x=[str(t) for t in x], y=y, marker_color=colors[name], **common)
        else:
            trace = go.Scatter(
                x=x, y=y, mode="lines+markers", line={"color": colors[name]}, marker={"color": colors[name]}, **common
            )
        fig.add_trace(trace, row=1, col=col)


HIT_TITLE = "Meets the control ↑ (= N · ≤ N · ≥ N)"
"""The right panel's title once an at-most or at-least row is drawn: it plots `within`, not exact match."""


def mald_em_figure(rows: Sequence[Row]) -> go.Figure:
    """MALD and the share meeting the target side by side, sharing the legend: two views of length compliance.

    The right panel plots `within`, which is exact match for Equal-To rows and is titled so; with an at-most or
    at-least row among them it says what it is instead.
    """
    controls = _shows_control(per_target(rows))
    fig = make_subplots(rows=1, cols=2, subplot_titles=("MALD ↓", HIT_TITLE if controls else "Exact match ↑"))
    _add_lines(fig, rows, "mald", col=1)
    _add_lines(fig, rows, "within", col=2, legend=False)
    targets = {r["target"] for r in per_target(rows)}
    log = _log_x(per_target(rows))
    axis = "category" if len(targets) == 1 else "log" if log else "linear"
    for col in (1, 2):
        fig.update_xaxes(title_text="Target length", type=axis, row=1, col=col)
    if len(targets) == 1:
        fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="MALD", row=1, col=1)
    fig.update_yaxes(title_text="within" if controls else "EM", range=[0, 1.05], row=1, col=2)
    fig.update_layout(template="plotly_white", legend_title="model · mode")
    return fig


def ls_heatmap(rows: Sequence[Row]) -> go.Figure:
    """LIFEBench Length Score by (model, mode[, lang]) rows and target-length columns: the paper's LS figure."""
    series = _series(rows)
    targets = sorted({r["target"] for s in series.values() for r in s})
    names = list(series)
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    for name in names:
        by_target = {r["target"]: r for r in series[name]}
        line = [by_target[t]["ls"] if t in by_target else None for t in targets]
        z.append(line)
        text.append(["" if v is None or math.isnan(v) else f"{v:.0f}" for v in line])
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[str(t) for t in targets],
            y=names,
            text=text,
            texttemplate="%{text}",
            zmin=0,
            zmax=100,
            colorscale="Viridis",
            colorbar={"title": "LS"},
            hovertemplate="%{y}<br>target %{x}<br>LS %{z:.1f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="Length Score (LIFEBench, higher is better)",
        xaxis_title="Target length (words/characters)",
        xaxis_type="category",
        yaxis_autorange="reversed",
        template="plotly_white",
    )
    return fig


def error_figure(rows: Sequence[Row]) -> go.Figure:
    """The error taxonomy: samples per error type, one bar per (model, mode[, lang]), from the overall rows."""
    totals = overall(rows)
    langs = {str(r["lang"]) for r in totals}
    models = {str(r["model"]) for r in totals}
    control = _shows_control(totals)
    present = {k for r in totals for k in r["errors"]}
    kinds = [k for k in ERROR_ORDER if k in present] + sorted(present - set(ERROR_ORDER))
    fig = go.Figure()
    colors = series_colors(_series(rows))
    for r in totals:
        name = _series_name(r, langs, models, control)
        fig.add_trace(
            go.Bar(
                x=kinds,
                y=[r["errors"].get(k, 0) for k in kinds],
                name=name,
                marker_color=colors.get(name),
                hovertemplate=f"{name}<br>%{{x}}: %{{y}} of {r['samples']} samples<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title="Error taxonomy (samples showing each error; backend = failed requests)",
        xaxis_title="error type",
        yaxis_title="samples",
        legend_title="model · mode",
        template="plotly_white",
    )
    if not kinds:
        fig.add_annotation(text="no errors", showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return fig


def results_csv(rows: Iterable[Row]) -> str:
    """The aggregated rows as CSV (target `all` for overall rows; errors as `type:count` pairs)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(ROW_KEYS)
    for r in rows:
        out = []
        for key in ROW_KEYS:
            value = r.get(key)
            if key == "target" and value is None:
                value = "all"
            elif key == "errors":
                value = format_errors(value or {})
            elif value is None:
                value = ""
            out.append(value)
        writer.writerow(out)
    return buf.getvalue()


def figure_html(fig: go.Figure) -> str:
    """A standalone HTML page of the figure with plotly.js inlined, so it opens offline."""
    return fig.to_html(include_plotlyjs=True, full_html=True)

"""Aggregation of benchmark results into the paper's tables: pure functions over result records.

A record is anything with the fields of a stored result (a `BenchResultRecord` or a plain dict):
model, control, mode, lang, target, status, count, errors, completion_tokens, seconds, score, fluency (a record
without `control` is an Equal-To one). Only status 'ok' samples are scored (`n`); failed samples are never dropped
silently: they are counted under errors['backend']. `em` is always count == target; `within` is the share that
meets the row's control (= N, ≤ N or ≥ N), the figure an at-most or at-least run is judged by.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..metrics import exact_match, lifebench_scores, mae, mald, within
from ..vocab import BENCH_CONTROLS, ERROR_TYPES, MODES, BenchControl

Row = dict[str, Any]
GroupKey = tuple[str, BenchControl, str, str]
"""(model, control, mode, lang): what one block of rows shares."""

ROW_KEYS: tuple[str, ...] = (
    "model",
    "control",
    "mode",
    "lang",
    "target",
    "n",
    "samples",
    "em",
    "within",
    "mae",
    "mald",
    "ld",
    "ls",
    "valid",
    "errors",
    "tokens_per_unit",
    "seconds",
    "score",
    "fluency",
    "calls",
    "tokens_per_exact",
)
"""Keys of every aggregated row. `target` is None in the overall row of a (model, control, mode, lang)."""

BACKEND_ERROR = "backend"
ERROR_ORDER: tuple[str, ...] = (*ERROR_TYPES, BACKEND_ERROR)


def _get(record: Any, name: str) -> Any:
    if isinstance(record, Mapping):
        return record.get(name)
    return getattr(record, name, None)


def _mode_rank(mode: str) -> int:
    return MODES.index(mode) if mode in MODES else len(MODES)  # type: ignore[arg-type]


def _control(record: Any) -> BenchControl:
    """A record's control; results stored before controls existed are Equal-To."""
    value = _get(record, "control") or "equal"
    return value if value in BENCH_CONTROLS else "equal"


def _control_rank(control: str) -> int:
    return BENCH_CONTROLS.index(control) if control in BENCH_CONTROLS else len(BENCH_CONTROLS)  # type: ignore[arg-type]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _clean(x: float | None) -> float | None:
    """NaN (no sample kept by LIFEBench's filter) becomes None, so rows are valid JSON."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def error_counts(records: Iterable[Any]) -> dict[str, int]:
    """Samples showing each marker error type (a sample counts once per type), plus failed samples."""
    counts: dict[str, int] = defaultdict(int)
    for r in records:
        if _get(r, "status") != "ok":
            counts[BACKEND_ERROR] += 1
            continue
        for kind in {str(e.get("type")) for e in (_get(r, "errors") or []) if isinstance(e, Mapping)}:
            counts[kind] += 1
    order = {k: i for i, k in enumerate(ERROR_ORDER)}
    return {k: counts[k] for k in sorted(counts, key=lambda k: (order.get(k, len(order)), k))}


def _row(key: GroupKey, target: int | None, records: Sequence[Any]) -> Row:
    model, control, mode, lang = key
    ok = [r for r in records if _get(r, "status") == "ok" and _get(r, "count") is not None]
    pairs = [(int(_get(r, "target")), int(_get(r, "count"))) for r in ok]
    lb = lifebench_scores(pairs, control)
    tokens = [(_get(r, "completion_tokens"), _get(r, "count")) for r in ok]
    tok_sum = sum(t for t, c in tokens if t and c)
    unit_sum = sum(c for t, c in tokens if t and c)
    secs = [float(_get(r, "seconds")) for r in ok if _get(r, "seconds") is not None]
    valid = [not (_get(r, "errors") or []) for r in ok]
    return {
        "model": model,
        "control": control,
        "mode": mode,
        "lang": lang,
        "target": target,
        "n": len(ok),
        "samples": len(records),
        "em": exact_match(pairs) if pairs else None,
        "within": within(pairs, control) if pairs else None,
        "mae": mae(pairs) if pairs else None,
        "mald": mald(pairs) if pairs else None,
        "ld": _clean(lb.ld),
        "ls": _clean(lb.ls),
        "valid": sum(valid) / len(valid) if valid else None,
        "errors": error_counts(records),
        "tokens_per_unit": tok_sum / unit_sum if unit_sum else None,
        "seconds": _mean(secs),
        "score": _mean([float(s) for r in ok if (s := _get(r, "score")) is not None]),
        "fluency": _mean([float(f) for r in ok if (f := _get(r, "fluency")) is not None]),
        **_repair_columns(ok, pairs),
    }


def _repair_columns(ok: Sequence[Any], pairs: Sequence[tuple[int, int]]) -> Row:
    """Mean model calls per scored sample (1 for a sample stored before repair existed) and completion tokens
    spent, over every scored sample, per text that hit its target exactly (what one exact text costs)."""
    calls = [int(_get(r, "calls") or 1) for r in ok]
    tokens = [_get(r, "completion_tokens") for r in ok]
    exact = sum(1 for target, n in pairs if target == n)
    known = all(t is not None for t in tokens)
    return {
        "calls": _mean(calls),
        "tokens_per_exact": sum(tokens) / exact if exact and known and tokens else None,
    }


def aggregate(records: Iterable[Any]) -> list[Row]:
    """One row per (model, control, mode, lang, target), then an overall row (target None) per the rest.

    Per-target rows: EM/within/MAE/MALD over the scored samples, LD = mean |LD|, LS = mean of the control's LS
    (samples counted <= 1 dropped, as LIFEBench does). Overall rows: EM/within/MAE/MALD pooled over every scored
    sample; LD/LS by LIFEBench's aggregation (per target, then the mean over targets). Metrics with no scored
    sample are None.
    """
    groups: dict[GroupKey, dict[int, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        key = (str(_get(r, "model")), _control(r), str(_get(r, "mode")), str(_get(r, "lang")))
        groups[key][int(_get(r, "target"))].append(r)
    rows: list[Row] = []
    for key in sorted(groups, key=lambda k: (k[0], _control_rank(k[1]), _mode_rank(k[2]), k[2], k[3])):
        by_target = groups[key]
        everything: list[Any] = []
        for target in sorted(by_target):
            rows.append(_row(key, target, by_target[target]))
            everything.extend(by_target[target])
        rows.append(_row(key, None, everything))
    return rows


def per_target(rows: Iterable[Row]) -> list[Row]:
    """The per-target rows only (what the charts plot against length)."""
    return [r for r in rows if r["target"] is not None]


def overall(rows: Iterable[Row]) -> list[Row]:
    """The overall row of each (model, mode, lang)."""
    return [r for r in rows if r["target"] is None]


# ----- text table -------------------------------------------------------------------------------------------


def _fmt(value: Any, spec: str, none: str = "—") -> str:
    return none if value is None else format(value, spec)


def format_errors(errors: Mapping[str, int]) -> str:
    """`skip:3 early_stop:1 backend:2`, or `-` when there were none."""
    return " ".join(f"{k}:{v}" for k, v in errors.items()) or "-"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def format_table(rows: Sequence[Row]) -> str:
    """The CLI's table: one block per model and control and mode, a line per language and target, then `all`.

    `within` is the share meeting the row's `control` (= N, ≤ N, ≥ N); EM stays count == target throughout.
    """
    header = (
        f"{'control':<8} {'mode':<16} {'lang':<4} {'target':>6} {'n':>4} {'EM':>6} {'within':>6} {'MAE':>8} "
        f"{'MALD':>6} {'LD':>6} {'LS':>6} {'tok/unit':>8} {'sec':>6} {'calls':>5} {'tok/exact':>9} {'score':>5}  errors"
    )
    lines: list[str] = []
    model = None
    for r in rows:
        if r["model"] != model:
            model = r["model"]
            if lines:
                lines.append("")
            lines += [f"model {model}", header, "-" * len(header)]
        mode = r["mode"]
        target = "all" if r["target"] is None else str(r["target"])
        n = f"{r['n']}" if r["n"] == r["samples"] else f"{r['n']}/{r['samples']}"
        control = r.get("control") or "equal"
        lines.append(
            f"{control:<8} {mode:<16} {r['lang']:<4} {target:>6} {n:>4} {_pct(r['em']):>6} {_pct(r.get('within')):>6} "
            f"{_fmt(r['mae'], '.1f'):>8} "
            f"{_fmt(r['mald'], '.3f'):>6} {_fmt(r['ld'], '.3f'):>6} {_fmt(r['ls'], '.1f'):>6} "
            f"{_fmt(r['tokens_per_unit'], '.2f'):>8} {_fmt(r['seconds'], '.1f'):>6} {_fmt(r['calls'], '.2f'):>5} "
            f"{_fmt(r['tokens_per_exact'], '.1f'):>9} {_fmt(r['score'], '.1f'):>5}  {format_errors(r['errors'])}"
        )
        if r["target"] is None:
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def json_rows(rows: Iterable[Row]) -> list[Row]:
    """Rows ready for json.dumps: floats rounded to 4 places (6 for MALD/LD), nothing else changed."""
    out = []
    for r in rows:
        row = dict(r)
        for key in ("em", "within", "mae", "ls", "valid", "tokens_per_unit", "seconds", "calls", "tokens_per_exact"):
            if row[key] is not None:
                row[key] = round(row[key], 4)
        for key in ("mald", "ld"):
            if row[key] is not None:
                row[key] = round(row[key], 6)
        out.append(row)
    return out

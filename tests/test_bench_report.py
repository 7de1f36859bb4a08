"""Benchmark aggregation against tables worked out by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from capel_ui.bench.report import aggregate, error_counts, format_table, json_rows, overall, per_target


def rec(
    target: int,
    count: int | None,
    *,
    status: str = "ok",
    mode: str = "capel",
    lang: str = "en",
    model: str = "m",
    errors: tuple[str, ...] = (),
    tokens: int | None = None,
    seconds: float | None = None,
) -> dict[str, Any]:
    """A stored result as the repository returns it (only the fields aggregation reads)."""
    return {
        "model": model,
        "mode": mode,
        "lang": lang,
        "target": target,
        "status": status,
        "count": count,
        "errors": [{"type": e, "start": 0, "end": 0, "message": e} for e in errors],
        "completion_tokens": tokens,
        "seconds": seconds,
    }


RECORDS = [
    # capel, en, target 10: counts 10, 8, 12 scored; one failed request.
    rec(10, 10, tokens=20, seconds=1.0),
    rec(10, 8, errors=("skip", "skip"), tokens=16, seconds=2.0),
    rec(10, 12, errors=("early_stop",), tokens=24, seconds=3.0),
    rec(10, None, status="error", seconds=0.5),
    # capel, en, target 20: counts 20 and 1 (LIFEBench drops the 1 from LD/LS); one without token usage.
    rec(20, 20, tokens=30, seconds=4.0),
    rec(20, 1, seconds=6.0),
    # baseline, en, target 10: every request failed.
    rec(10, None, status="error", mode="baseline"),
]


def by_key(rows: list[dict[str, Any]]) -> dict[tuple[str, str, int | None], dict[str, Any]]:
    return {(r["mode"], r["lang"], r["target"]): r for r in rows}


def test_per_target_row_matches_the_hand_computed_figures() -> None:
    row = by_key(aggregate(RECORDS))[("capel", "en", 10)]
    assert row["n"] == 3 and row["samples"] == 4
    assert row["em"] == pytest.approx(1 / 3)  # only 10 == 10
    assert row["mae"] == pytest.approx(4 / 3)  # (0 + 2 + 2) / 3
    assert row["mald"] == pytest.approx(0.4 / 3)  # (0 + 0.2 + 0.2) / 3
    assert row["ld"] == pytest.approx(0.4 / 3)  # mean |LD|, same values
    # LS: 100 (exact), 100·e^(5·-0.2) = 36.788 (short), 100·e^(-2·0.2) = 67.032 (long) -> mean 67.940
    assert row["ls"] == pytest.approx((100 + 100 * math.exp(-1) + 100 * math.exp(-0.4)) / 3)
    assert row["ls"] == pytest.approx(67.940, abs=1e-3)
    assert row["valid"] == pytest.approx(1 / 3)
    assert row["errors"] == {"skip": 1, "early_stop": 1, "backend": 1}  # samples, not occurrences
    assert row["tokens_per_unit"] == pytest.approx(60 / 30)  # (20 + 16 + 24) tokens / (10 + 8 + 12) words
    assert row["seconds"] == pytest.approx(2.0)  # failed requests do not count toward the time


def test_lifebench_filter_drops_counts_of_one_from_ld_and_ls_only() -> None:
    row = by_key(aggregate(RECORDS))[("capel", "en", 20)]
    assert row["n"] == 2
    assert row["em"] == pytest.approx(0.5)
    assert row["mae"] == pytest.approx(9.5)  # (0 + 19) / 2
    assert row["mald"] == pytest.approx(0.475)  # (0 + 19/20) / 2
    assert row["ld"] == pytest.approx(0.0)  # only the exact 20 is kept
    assert row["ls"] == pytest.approx(100.0)
    assert row["tokens_per_unit"] == pytest.approx(1.5)  # 30 / 20; the sample without usage is left out
    assert row["seconds"] == pytest.approx(5.0)


def test_overall_row_pools_em_mae_mald_and_averages_ld_ls_over_targets() -> None:
    row = by_key(aggregate(RECORDS))[("capel", "en", None)]
    assert row["n"] == 5 and row["samples"] == 6
    assert row["em"] == pytest.approx(2 / 5)
    assert row["mae"] == pytest.approx(23 / 5)  # 0 + 2 + 2 + 0 + 19
    assert row["mald"] == pytest.approx(1.35 / 5)  # 0 + .2 + .2 + 0 + .95
    assert row["ld"] == pytest.approx((0.4 / 3 + 0) / 2)  # LIFEBench: per target, then the mean
    assert row["ls"] == pytest.approx((67.9400 + 100) / 2, abs=1e-3)
    assert row["errors"] == {"skip": 1, "early_stop": 1, "backend": 1}
    assert row["tokens_per_unit"] == pytest.approx(90 / 50)
    assert row["seconds"] == pytest.approx(16 / 5)


def test_a_group_where_every_request_failed_has_no_scores_but_counts_the_failures() -> None:
    row = by_key(aggregate(RECORDS))[("baseline", "en", 10)]
    assert row["n"] == 0 and row["samples"] == 1
    assert row["em"] is None and row["mald"] is None and row["ld"] is None and row["ls"] is None
    assert row["errors"] == {"backend": 1}


def test_rows_come_in_mode_order_targets_ascending_then_overall() -> None:
    rows = aggregate(RECORDS)
    assert [(r["mode"], r["target"]) for r in rows] == [
        ("capel", 10),
        ("capel", 20),
        ("capel", None),
        ("baseline", 10),
        ("baseline", None),
    ]
    assert len(per_target(rows)) == 3 and len(overall(rows)) == 2


def test_languages_and_models_are_separate_groups() -> None:
    rows = aggregate([rec(10, 10, lang="en"), rec(10, 5, lang="zh"), rec(10, 10, model="other")])
    keys = [(r["model"], r["lang"], r["target"]) for r in rows]
    assert keys == [
        ("m", "en", 10),
        ("m", "en", None),
        ("m", "zh", 10),
        ("m", "zh", None),
        ("other", "en", 10),
        ("other", "en", None),
    ]


def test_error_counts_list_types_in_taxonomy_order() -> None:
    counts = error_counts([rec(5, 5, errors=("missing_end", "preamble")), rec(5, None, status="error")])
    assert list(counts) == ["preamble", "missing_end", "backend"]


def test_records_may_be_objects_with_attributes() -> None:
    class Record:
        def __init__(self, **fields: Any) -> None:
            self.__dict__.update(fields)

    rows = aggregate([Record(**rec(4, 4)), Record(**rec(4, 2))])
    assert rows[0]["em"] == pytest.approx(0.5)


def test_json_rows_have_the_documented_keys_and_serialise() -> None:
    rows = json_rows(aggregate(RECORDS))
    text = json.dumps(rows)
    assert "NaN" not in text
    for key in ("model", "mode", "lang", "target", "n", "em", "mae", "mald", "ld", "ls", "errors", "seconds"):
        assert key in rows[0]
    assert rows[0]["em"] == 0.3333


def test_table_shows_each_mode_and_target_with_error_counts() -> None:
    table = format_table(aggregate(RECORDS))
    lines = table.splitlines()
    assert lines[0] == "model m"
    capel_10 = next(line for line in lines if line.startswith("equal    capel") and " 10 " in line)
    assert "3/4" in capel_10 and "33.3%" in capel_10 and "skip:1 early_stop:1 backend:1" in capel_10
    assert any(line.startswith("equal    capel") and " all " in line for line in lines)
    failed = next(line for line in lines if line.startswith("equal    baseline") and " 10 " in line)
    assert "0/1" in failed and "backend:1" in failed and "—" in failed

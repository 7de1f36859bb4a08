"""Length-compliance metrics against values worked out by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import math

import pytest

from capel_ui.metrics import (
    exact_match,
    length_deviation,
    length_score,
    lifebench_scores,
    mae,
    mald,
)

# (target, count) pairs used by the EM / MAE / MALD tests.
TABLE = [(5, 5), (5, 4), (10, 10), (3, 6)]


# ----- EM, MAE, MALD (§4.2) -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        # 2 of 4 outputs hit the target: (5,5) and (10,10) -> 2/4
        pytest.param(TABLE, 0.5, id="half_exact"),
        pytest.param([(7, 7), (1, 1)], 1.0, id="all_exact"),
        pytest.param([(7, 6), (1, 2)], 0.0, id="none_exact"),
        # 1 of 3 -> 1/3
        pytest.param([(4, 4), (4, 3), (4, 5)], 1 / 3, id="one_of_three"),
        pytest.param([], 0.0, id="no_outputs"),
    ],
)
def test_exact_match_is_the_fraction_of_outputs_on_target(pairs: list[tuple[int, int]], expected: float) -> None:
    assert exact_match(pairs) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        # |5-5| + |4-5| + |10-10| + |6-3| = 0 + 1 + 0 + 3 = 4; 4 / 4 = 1.0
        pytest.param(TABLE, 1.0, id="table"),
        # |90-100| + |130-100| = 10 + 30 = 40; 40 / 2 = 20
        pytest.param([(100, 90), (100, 130)], 20.0, id="short_and_long_both_count_positive"),
        pytest.param([(3, 3)], 0.0, id="exact_is_zero"),
        pytest.param([], 0.0, id="no_outputs"),
    ],
)
def test_mae_is_the_mean_absolute_error_in_units(pairs: list[tuple[int, int]], expected: float) -> None:
    assert mae(pairs) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        # 0/5 + 1/5 + 0/10 + 3/3 = 0 + 0.2 + 0 + 1.0 = 1.2; 1.2 / 4 = 0.3
        pytest.param(TABLE, 0.3, id="table"),
        # the same 10-unit miss: 10/10 = 1.0 and 10/1000 = 0.01; (1.0 + 0.01) / 2 = 0.505
        pytest.param([(10, 20), (1000, 990)], 0.505, id="normalised_by_target"),
        pytest.param([], 0.0, id="no_outputs"),
    ],
)
def test_mald_is_the_mean_error_relative_to_target(pairs: list[tuple[int, int]], expected: float) -> None:
    assert mald(pairs) == pytest.approx(expected)


# ----- LIFEBench Length Deviation and Length Score --------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "count", "expected"),
    [
        pytest.param(10, 10, 0.0, id="exact_is_zero"),
        pytest.param(10, 8, -0.2, id="short_is_negative"),  # (8 - 10) / 10
        pytest.param(10, 12, 0.2, id="long_is_positive"),  # (12 - 10) / 10
        pytest.param(16, 0, -1.0, id="empty_is_minus_one"),  # (0 - 16) / 16
        pytest.param(4, 10, 1.5, id="fraction_not_percent"),  # (10 - 4) / 4 = 1.5, not 150
    ],
)
def test_length_deviation_is_a_signed_fraction(target: int, count: int, expected: float) -> None:
    assert length_deviation(target, count) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("target", "count", "expected"),
    [
        pytest.param(10, 10, 100.0, id="exact_scores_100"),
        # LD = -0.2: 100 * e^(5 * -0.2) = 100 * e^-1 = 36.7879...
        pytest.param(10, 8, 100 * math.exp(-1.0), id="short_uses_e_to_5_ld"),
        # LD = +0.2: 100 * e^(-2 * 0.2) = 100 * e^-0.4 = 67.0320...
        pytest.param(10, 12, 100 * math.exp(-0.4), id="long_uses_e_to_minus_2_ld"),
        # LD = -0.5: 100 * e^-2.5 = 8.2085...
        pytest.param(10, 5, 8.2085, id="half_length"),
        # LD = +1.0: 100 * e^-2 = 13.5335...
        pytest.param(10, 20, 13.5335, id="double_length"),
        # LD = 1/16 = 0.0625: 100 * e^-0.125 = 88.2497...; a percent LD (6.25) would give ~0.0004
        pytest.param(16, 17, 88.2497, id="one_over_on_sixteen_is_not_near_zero"),
    ],
)
def test_length_score(target: int, count: int, expected: float) -> None:
    assert length_score(target, count) == pytest.approx(expected, abs=1e-4)


def test_length_score_punishes_short_more_than_long_by_the_same_amount() -> None:
    # 100e^-1 = 36.8 for 2 short versus 100e^-0.4 = 67.0 for 2 long
    assert length_score(10, 8) < length_score(10, 12)


# ----- LIFEBench aggregation ---------------------------------------------------------------------------------


def test_lifebench_averages_per_target_then_over_targets() -> None:
    pairs = [(10, 10), (10, 8), (100, 100), (10, 1), (10, 0)]
    score = lifebench_scores(pairs)
    # (10, 1) and (10, 0) have counts <= 1: dropped.
    assert score.dropped == 2
    # target 10: |LD| = 0 and 0.2 -> mean 0.1; LS = 100 and 100e^-1 = 36.788 -> mean 68.394
    # target 100: |LD| = 0, LS = 100
    assert score.per_length[10] == pytest.approx((0.1, (100 + 100 * math.exp(-1)) / 2, 2))
    assert score.per_length[100] == pytest.approx((0.0, 100.0, 1))
    # over targets: LD = (0.1 + 0) / 2 = 0.05; LS = (68.394 + 100) / 2 = 84.197
    assert score.ld == pytest.approx(0.05)
    assert score.ls == pytest.approx((100 + 100 * math.exp(-1)) / 4 + 50)
    # a flat mean would differ: LD (0 + 0.2 + 0) / 3 = 0.0667; LS (100 + 36.788 + 100) / 3 = 78.929
    assert score.ld != pytest.approx(0.2 / 3)
    assert score.ls != pytest.approx((200 + 100 * math.exp(-1)) / 3)


def test_lifebench_ld_is_absolute_so_short_and_long_do_not_cancel() -> None:
    # |LD| 0.5 and 0.5 -> 0.5 (a signed mean would be 0)
    assert lifebench_scores([(10, 5), (10, 15)]).ld == pytest.approx(0.5)


def test_lifebench_with_every_output_dropped_is_nan() -> None:
    score = lifebench_scores([(16, 0), (32, 1)])
    assert math.isnan(score.ld) and math.isnan(score.ls)
    assert score.per_length == {} and score.dropped == 2


def test_lifebench_keeps_a_count_of_two() -> None:
    # 2 > 1 is kept: LD = (2 - 16) / 16 = -0.875, |LD| = 0.875
    assert lifebench_scores([(16, 2)]).ld == pytest.approx(0.875)


# ----- invalid targets -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [0, -1], ids=["zero", "negative"])
@pytest.mark.parametrize(
    "metric",
    [
        pytest.param(lambda t: exact_match([(5, 5), (t, 3)]), id="exact_match"),
        pytest.param(lambda t: mae([(t, 3)]), id="mae"),
        pytest.param(lambda t: mald([(t, 3)]), id="mald"),
        pytest.param(lambda t: length_deviation(t, 3), id="length_deviation"),
        pytest.param(lambda t: length_score(t, 3), id="length_score"),
        pytest.param(lambda t: lifebench_scores([(t, 3)]), id="lifebench_scores"),
    ],
)
def test_non_positive_target_is_rejected(metric, target: int) -> None:
    with pytest.raises(ValueError, match="target must be positive"):
        metric(target)

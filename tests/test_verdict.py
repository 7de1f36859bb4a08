"""The one verdict: when a text may be called verified, and the words every surface shows for it."""

from __future__ import annotations

import pytest

from capel_ui.verdict import decide, live_state

VERIFIED_CASES = [
    # status, count, target, errors, verified
    ("complete", 12, 12, 0, True),
    ("complete", 13, 12, 0, False),
    ("complete", 11, 12, 0, False),
    ("complete", 12, 12, 1, False),
    ("partial", 12, 12, 0, False),
    ("cancelled", 12, 12, 0, False),
    ("running", 12, 12, 0, False),
    ("interrupted", 12, 12, 0, False),
    ("failed", 0, 12, 0, False),
    ("complete", None, 12, 0, False),
]


@pytest.mark.parametrize(("status", "count", "target", "errors", "verified"), VERIFIED_CASES)
def test_only_a_complete_exact_run_without_marker_errors_is_verified(status, count, target, errors, verified):
    assert decide(status, count, target, errors).verified is verified


def test_errors_may_be_given_as_the_list_of_marker_errors():
    assert decide("complete", 3, 3, [{"type": "skip"}]).errors == 1


HEADLINES = [
    (("complete", 12, 12, 0), "✓ exact · verified · 12/12 English words"),
    (("complete", 15, 12, 0), "off by +3 · 15/12 English words"),
    (("complete", 9, 12, 2), "off by -3 · 9/12 English words · 2 marker error(s)"),
    (("complete", 12, 12, 1), "not verified · 12/12 English words · 1 marker error(s)"),
    (("partial", 12, 12, 1), "partial · not verified · 12 of 12 English words arrived · 1 marker error(s)"),
    (("cancelled", 4, 12, 0), "cancelled · not verified · 4 of 12 English words arrived"),
    (("interrupted", 4, 12, 0), "interrupted · not verified · 4 of 12 English words arrived"),
    (("failed", 0, 12, 0), "failed · no text arrived"),
]


@pytest.mark.parametrize(("args", "headline"), HEADLINES)
def test_the_headline_says_verified_or_exactly_why_not(args, headline):
    assert decide(*args).headline("en_words") == headline


def test_a_partial_run_never_says_exact_count():
    assert "exact" not in decide("partial", 12, 12, 1).headline("en_words")


def test_a_failed_run_mentions_no_count_or_marker_errors():
    assert "marker" not in decide("failed", 0, 12, 1).headline("en_words")


def test_the_headline_names_chinese_characters():
    assert decide("complete", 100, 100, 0).headline("zh_chars").endswith("100/100 Chinese characters")


@pytest.mark.parametrize(
    ("done", "target", "expected"),
    [
        (0, 12, "12 of 12 English words left"),
        (5, 12, "7 of 12 English words left"),
        (12, 12, "0 of 12 English words left"),
        (35, 12, "over by 23 · 35 of 12 English words"),
    ],
)
def test_the_live_state_counts_down_then_says_how_far_over(done, target, expected):
    assert live_state(done, target, "en_words") == expected


@pytest.mark.parametrize(
    ("status", "count", "tone"),
    [("complete", 12, "green"), ("complete", 13, "red"), ("partial", 12, "gray"), ("failed", 0, "red")],
)
def test_the_badge_colour_follows_the_verdict(status, count, tone):
    assert decide(status, count, 12, 0).tone == tone

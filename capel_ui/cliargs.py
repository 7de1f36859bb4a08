"""Argument checks shared by `python -m capel_ui` and its `bench` command: one line saying what is accepted."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def bounded(name: str, low: float, high: float | None = None, kind: type = int) -> Callable[[str], float]:
    """An argparse `type` that takes a `kind` (int or float) from `low` to `high` (no upper bound if None)."""
    what = "a whole number" if kind is int else "a number"
    bound = f"from {low} to {high}" if high is not None else f"at least {low}"

    def parse(value: str) -> float:
        try:
            n = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {what} {bound}, got {value!r}") from None
        if not math.isfinite(n):  # nan passes every comparison, inf is no limit: both are refused here
            raise argparse.ArgumentTypeError(f"{name} must be a finite number {bound}, got {value!r}")
        if n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(f"{name} must be {bound}, got {n}")
        return n

    parse.__name__ = name  # argparse names the type in its messages
    return parse


def limit_or_none(parse: Callable[[str], float]) -> Callable[[str], float | None]:
    """`parse`, or None for `none` (no limit at all): how the CLI turns a default limit off."""

    def parse_or_none(value: str) -> float | None:
        return None if value.strip().lower() in ("none", "off") else parse(value)

    parse_or_none.__name__ = parse.__name__
    return parse_or_none

"""`python -m capel_ui bench` (being built)."""

from __future__ import annotations

import argparse
from typing import Any


def add_bench_parser(sub: Any) -> argparse.ArgumentParser:
    return sub.add_parser("bench", help="run a benchmark suite")

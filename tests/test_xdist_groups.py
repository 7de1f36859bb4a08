"""The suite's own scheduling: tests in one `xdist_group` run in one pytest-xdist worker (tests/xdist_groups.py names
the group in the node id, which pytest 9.2's node ids had silently stopped carrying for pytest-xdist 3.8)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TINY = """
import time
import pytest

@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("i", range(4))
def test_grouped(i):
    time.sleep(0.05)

@pytest.mark.parametrize("i", range(4))
def test_free(i):
    time.sleep(0.05)
"""


def test_the_tests_of_one_group_run_in_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_tiny.py").write_text(TINY, encoding="utf-8")
    args = ["-p", "tests.xdist_groups", "-p", "no:cacheprovider", "-v", "-n", "2", "--dist", "loadgroup"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "--rootdir", str(tmp_path), str(tmp_path / "test_tiny.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = re.findall(r"\[(gw\d)\] .*PASSED .*::(test_\w+\[\d\])(@\w+)?", done.stdout)
    assert len(ran) == 8, done.stdout
    grouped = [(worker, suffix) for worker, _, suffix in ran if _.startswith("test_grouped")]
    assert [suffix for _, suffix in grouped] == ["@shared"] * 4, done.stdout
    assert len({worker for worker, _ in grouped}) == 1, done.stdout

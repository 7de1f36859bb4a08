"""The suite's own scheduling: a test in an `xdist_group` carries the group at the end of its node id, by which
pytest-xdist's controller sends a group to one worker (tests/xdist_groups.py puts it there: pytest 9.2's node ids
had silently stopped carrying it for pytest-xdist 3.8). One worker is enough to see the id."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TINY = """
import pytest

@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("i", range(4))
def test_grouped(i):
    pass

@pytest.mark.parametrize("i", range(4))
def test_free(i):
    pass
"""


def test_the_tests_of_one_group_run_in_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_tiny.py").write_text(TINY, encoding="utf-8")
    args = ["-p", "tests.xdist_groups", "-v", "-n", "1", "--dist", "loadgroup"]
    args += ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio"]  # 4 s to 1.4 s
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
    suffixes = {name: suffix for _, name, suffix in ran}
    assert [suffixes[f"test_grouped[{i}]"] for i in range(4)] == ["@shared"] * 4, done.stdout
    assert [suffixes[f"test_free[{i}]"] for i in range(4)] == [""] * 4, done.stdout  # no group, no suffix

"""`count`, `check` and `prompt` start fast: they never load the model client, the X parser or the database
(a regression took `count` from 0.2 s to 1.3 s). The time itself is in benchmarks/cli_speed.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli_process import ROOT

HEAVY = ("openai", "twitter_text", "sqlalchemy")

PROBE = """
import io, sys
from capel_ui.cli import main
sys.stdin = io.TextIOWrapper(io.BytesIO("<2>Hello <1>world<0>".encode()))
main(sys.argv[1:], stdout=io.StringIO())
print(",".join(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["count", "--unit", "en_words"],
        ["count", "--unit", "x_weighted"],
        ["check", "--target", "2"],
        ["prompt", "--target", "3", "Hi"],
    ],
    ids=["count", "count_x_weighted", "check", "prompt"],
)
def test_a_command_without_a_model_or_the_database_loads_neither(argv: list[str]) -> None:
    code = PROBE.format(heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


HELP_PROBE = """
import sys
from capel_ui.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write(",".join(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("command", ["count", "check", "prompt"])
def test_a_commands_help_loads_neither_the_model_client_nor_the_database(command: str) -> None:
    # `count --help` took 1.2 s: argparse leaves by SystemExit, and reaching the `except` that names StorageError
    # imported the database (SQLAlchemy) to show a page of help.
    code = HELP_PROBE.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code, command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert "usage:" in done.stdout and done.stderr == "", done.stderr

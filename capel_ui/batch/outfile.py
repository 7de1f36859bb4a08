"""The `batch` command's output file: written as rows finish and once at the end, each time whole and atomically, so
a batch killed mid-way leaves a file with every row it finished, and never half a file.

A write that fails (a full disk, a folder made read-only meanwhile) does not stop the batch: its texts are saved
runs, and the next write tries again. If the last write fails, `failure` says so in one line and where the texts are:
in History, run again to write the file (nothing is written twice); or, for texts the database could not keep
either, printed on standard output as CSV, so no finished text is lost.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path
from typing import TextIO

from .rows import OUTPUT_COLUMNS
from .runner import Batch
from .table import TableError, csv_bytes, excel_note, format_of, write_table

WRITE_EVERY = 5.0
"""Seconds at least between writes while rows finish (and ten times what the last write took: an XLSX of 100,000
rows takes seconds to build, so it is rewritten rarely)."""


def same_file(a: Path, b: Path) -> bool:
    """Whether `a` and `b` name one file (a link, `./`, another spelling of the same path)."""
    try:
        return a.resolve() == b.resolve() or (b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def check_target(source: Path, target: Path) -> None:
    """TableError when the output would replace the input (its rows would be lost to the texts)."""
    if same_file(source, target):
        raise TableError(
            f"--out {target} is the input file: the output would replace your rows; give another --out "
            "(by default the input's name with -texts)"
        )


class OutputFile:
    """The batch's output at `path`: `maybe_write()` as rows finish (throttled), `write()` at the end."""

    def __init__(self, path: Path, batch: Batch) -> None:
        self.path, self.batch = path, batch
        self.error: OSError | None = None
        self.excel_note = ""  # the cells the last XLSX written cut at Excel's limit (`table.excel_note`)
        self._at, self._took, self._rows = float("-inf"), 0.0, 0  # the first finished row is written at once

    def maybe_write(self) -> None:
        """Write the file if rows finished since the last write and that was long enough ago."""
        finished = len(self.batch.finished)
        if finished != self._rows and time.monotonic() - self._at >= max(WRITE_EVERY, 10 * self._took):
            self.write()

    def write(self) -> bool:
        """Write every row now (a row not written yet says so in its error cell); False if the file system refused."""
        started = time.monotonic()
        self._rows = len(self.batch.finished)
        header, rows = self.batch.header(), self.batch.output_rows()
        try:
            write_table(self.path, header, rows, neutralised=OUTPUT_COLUMNS)
        except OSError as exc:
            self.error = exc
            return False
        finally:
            self._at = time.monotonic()
            self._took = self._at - started
        self.error = None
        self.excel_note = excel_note(header, rows) if format_of(self.path) == "xlsx" else ""
        return True

    def failure(self, out: TextIO) -> str:
        """The one line for a last write that failed, saying where the texts are; texts the database could not keep
        either are printed to `out` as CSV first."""
        exc = self.error
        said = f"cannot write {self.path}: {getattr(exc, 'strerror', None) or exc}"
        fix = "free some space" if getattr(exc, "errno", None) == errno.ENOSPC else "give another --out"
        unsaved = sum(1 for r in self.batch.results.values() if not r.saved and r.text)
        if unsaved:
            out.write(csv_bytes(self.batch.header(), self.batch.output_rows(), OUTPUT_COLUMNS).decode("utf-8-sig"))
            out.flush()
            return (
                f"{said}, and {unsaved} texts could not be saved to the database either: every row is printed above "
                f"as CSV (keep it); {fix} and run the same command again"
            )
        saved = sum(1 for r in self.batch.results.values() if r.run_id is not None)
        return (
            f"{said}; the {saved} texts written are saved in History (batch {self.batch.id}): {fix} and run the "
            "same command again to write the file (no text is written twice)"
        )

"""A spreadsheet in and out: CSV (any of `,` `;` tab, UTF-8 with or without a BOM) and XLSX (openpyxl).

A table is its header (the column names as written, in order) and its rows (one dict each, every value a string;
an empty cell is ""). Writing is atomic: the file is written beside the target and moved over it with
`os.replace`, so a crash leaves the old output or the new one, never half of one. A CSV cell a spreadsheet would
run as a formula is neutralised with History's rule (`storage.repo._cell`: a leading '); an XLSX cell is always
stored as text or a number, never as a formula, so its text stays as written.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..storage.repo import _cell as csv_cell

FORMATS = ("csv", "xlsx")
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_XLSX_MAGIC = b"PK\x03\x04"


class TableError(ValueError):
    """A file that cannot be read as a table: one line saying what was wrong and what is accepted."""


@dataclass
class Table:
    header: list[str]
    rows: list[dict[str, str]] = field(default_factory=list)


def format_of(name: str | os.PathLike[str]) -> str:
    """`csv` or `xlsx` from a file name; TableError for anything else."""
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    raise TableError(f"{Path(name).name}: give a .csv or .xlsx file")


def read_table(data: bytes, name: str) -> Table:
    """The table in `data`, read by the format its `name` says (an .xlsx by its content too)."""
    fmt = format_of(name)
    if fmt == "xlsx" or data.startswith(_XLSX_MAGIC):
        return _read_xlsx(data, name)
    return _read_csv(data, name)


def read_file(path: str | os.PathLike[str]) -> tuple[Table, bytes]:
    """The table in the file at `path`, and its bytes (the batch id hashes them)."""
    format_of(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TableError(f"cannot read {path}: {exc.strerror or exc}") from None
    return read_table(data, str(path)), data


def _header(cells: Sequence[Any], name: str) -> list[str]:
    header = [_text(c).strip() for c in cells]
    while header and not header[-1]:
        header.pop()
    if not any(header):
        raise TableError(f"{name}: the first row must name the columns (instruction or source, and target)")
    seen: dict[str, int] = {}
    for i, h in enumerate(header):  # a blank or repeated name still gets a column of its own
        h = h or f"column {i + 1}"
        seen[h.lower()] = seen.get(h.lower(), 0) + 1
        header[i] = h if seen[h.lower()] == 1 else f"{h} ({seen[h.lower()]})"
    return header


def _rows(header: list[str], lines: Sequence[Sequence[Any]]) -> list[dict[str, str]]:
    rows = []
    for line in lines:
        values = [_text(c) for c in line]
        if not any(v.strip() for v in values):
            continue  # a blank line is not a row
        values += [""] * (len(header) - len(values))
        rows.append(dict(zip(header, values, strict=False)))
    return rows


def _text(value: Any) -> str:
    """A cell as text: a whole float as an integer (XLSX stores 50 as 50.0), a date as ISO, None as ""."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def _read_csv(data: bytes, name: str) -> Table:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TableError(f"{name} is not UTF-8 text; save it as CSV UTF-8 (or as .xlsx)") from None
    first = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=first.count) if first else ","
    lines = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    if not lines:
        raise TableError(f"{name} is empty; the first row must name the columns (instruction or source, target)")
    header = _header(lines[0], name)
    return Table(header, _rows(header, lines[1:]))


def _read_xlsx(data: bytes, name: str) -> Table:
    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zipfile, KeyError, InvalidFileException… for a damaged file
        raise TableError(f"{name} is not a readable .xlsx workbook ({type(exc).__name__}); save it again") from None
    try:
        sheet = book.worksheets[0]
        lines = [list(r) for r in sheet.iter_rows(values_only=True)]
    finally:
        book.close()
    if not lines:
        raise TableError(f"{name}'s first sheet is empty; its first row must name the columns")
    header = _header(lines[0], name)
    return Table(header, _rows(header, lines[1:]))


# ----- writing ------------------------------------------------------------------------------------------


def csv_bytes(header: Sequence[str], rows: Sequence[dict[str, Any]]) -> bytes:
    """RFC 4180 CSV with a BOM (Excel reads it as UTF-8), formula-like cells neutralised."""
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\r\n")
    out.writerow([csv_cell("header", h) for h in header])
    out.writerows([csv_cell(h, row.get(h)) for h in header] for row in rows)
    return buffer.getvalue().encode("utf-8-sig")


def xlsx_bytes(header: Sequence[str], rows: Sequence[dict[str, Any]], sheet: str = "texts") -> bytes:
    """One sheet, the header bold and frozen; text cells are text (never formulas), numbers and booleans typed."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    book = Workbook()
    ws = book.active
    ws.title = sheet
    for col, h in enumerate(header, 1):
        _put(ws.cell(row=1, column=col), h).font = Font(bold=True)
    for r, row in enumerate(rows, 2):
        for col, h in enumerate(header, 1):
            cell = _put(ws.cell(row=r, column=col), row.get(h))
            if h == "text":
                cell.alignment = Alignment(wrap_text=True, vertical="top")
    ws.freeze_panes = "A2"
    for col, h in enumerate(header, 1):
        width = 60 if h in ("text", "instruction", "source", "warnings", "error") else max(10, min(len(h) + 4, 30))
        ws.column_dimensions[ws.cell(row=1, column=col).column_letter].width = width
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _put(cell: Any, value: Any) -> Any:
    """Set a cell without letting openpyxl read a text starting with '=' as a formula."""
    if value is None or value == "":
        return cell
    if isinstance(value, (bool, int, float)):
        cell.value = value
        return cell
    text = "".join(ch for ch in str(value) if ch in "\t\n\r" or ord(ch) >= 32)  # XML 1.0 refuses control chars
    cell.value = text
    cell.data_type = "s"  # a string, even "=HYPERLINK(...)": shown, never run
    return cell


def table_bytes(fmt: str, header: Sequence[str], rows: Sequence[dict[str, Any]]) -> bytes:
    return xlsx_bytes(header, rows) if fmt == "xlsx" else csv_bytes(header, rows)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and `os.replace`: all or nothing."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_table(path: str | os.PathLike[str], header: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    """The table as CSV or XLSX (by `path`'s suffix), written atomically."""
    write_atomic(path, table_bytes(format_of(path), header, rows))

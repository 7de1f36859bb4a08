"""A spreadsheet in and out: CSV (any of `,` `;` tab, UTF-8 with or without a BOM) and XLSX (openpyxl).

A table is its header (the column names as written, in order) and its rows (one dict each, every value a string;
an empty cell is ""), with the file lines each row came from.

Reading is strict, because a hand-edited file is where a quote is left open: a CSV is refused, in one line that
names the line and what is wrong, for a quote never closed (it would swallow the rest of the file), text after a
closing quote, a NUL byte, a row with fewer cells than the header names or a filled cell outside the named columns
(an XLSX too), a cell over `MAX_CELL` characters, no header or no row under it. A quoted cell may hold line breaks;
`Table.account` then says which lines made one row, so the rows read and the lines of the file always agree.

Bounded: a file over `MAX_INPUT_BYTES`, or with more than `MAX_ROWS` rows, is refused in one line (a batch of
100,000 rows is read in seconds); an .xlsx is checked before it is inflated (`_check_zip`: not a zip, a zip bomb).

Writing is atomic: the file is written beside the target and moved over it with `os.replace`, so a crash leaves
the old output or the new one, never half of one. The writer's columns come back as they were; only the app's
cells are neutralised for spreadsheets (see `csv_bytes`); an XLSX cell is never a formula (see `xlsx_bytes`).
"""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
import zipfile
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..storage.repo import _cell as csv_cell

FORMATS = ("csv", "xlsx")
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_XLSX_MAGIC = b"PK\x03\x04"
MAX_CELL = 2_000_000
"""Characters one cell may hold: about 300,000 English words, so a whole book to rewrite is read; a longer cell
is refused in one line. The csv module's own limit (131,072) is raised to it."""
csv.field_size_limit(max(csv.field_size_limit(), MAX_CELL))
TOO_LONG = f"a cell is over the {MAX_CELL:,} characters (about 300,000 words) a cell may hold; shorten it"
EXCEL_CELL = 32_767
"""Characters an Excel cell holds. openpyxl cuts a longer text there without a word, so `xlsx_bytes` cuts it itself
and says so in the cell (`EXCEL_CUT`), and a batch whose input holds such a cell is refused an XLSX output before any
text is written (`Table.over_excel`): a book to rewrite comes back whole only in CSV."""
EXCEL_CUT = " [cut here: an Excel cell holds 32,767 characters; the CSV holds the whole text]"
MAX_ROWS = 100_000
"""Rows a batch reads: read and planned in seconds and about 300 MB; a longer file is refused in one line."""
MAX_INPUT_BYTES = 256 * 2**20
"""The largest input file read (256 MiB: 100,000 rows of 2,500 characters each)."""
XLSX_MAX_INFLATED = 512 * 2**20
"""What an .xlsx's parts may hold, inflated, in all, as its zip declares them (zipfile never inflates a part past
what it declares)."""
XLSX_MAX_RATIO = 100
"""How many times its compressed size a part over `XLSX_RATIO_FROM` may inflate to: a real sheet 5-20 times (100,000
identical rows: 14), a zip bomb a thousand times."""
XLSX_RATIO_FROM = 2**20
XLSX_MAX_PARTS = 10_000
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what ends a line for the csv reader (newline="")


class TableError(ValueError):
    """A file that cannot be read as a table: one line saying what was wrong and what is accepted."""


@dataclass
class Table:
    header: list[str]
    rows: list[dict[str, str]] = field(default_factory=list)
    lines: list[tuple[int, int]] = field(default_factory=list)
    """The first and last file line of each row (a CSV row whose quoted cell holds line breaks spans several; an
    XLSX row is one sheet row)."""
    blank: int = 0
    """Blank lines (or sheet rows) under the header, skipped."""
    unit: str = "line"
    """What the file counts in: `line` (CSV) or `row` (XLSX sheet rows), as `account` and the errors name them."""

    def over_excel(self) -> str:
        """Where the first cell too long for an Excel cell is, as the file names it ("line 2, source: 250,000
        characters", and how many more), or "" where every cell fits."""
        found = _over_excel(self.header, self.rows)
        if not found:
            return ""
        i, column, size = found[0]
        more = f" (and {_n(len(found) - 1, 'more cell')})" if len(found) > 1 else ""
        line = self.lines[i][0] if i < len(self.lines) else i + 2
        return f"{self.unit} {line}, {column}: {size:,} characters{more}"

    def account(self) -> str:
        """How the file's lines under the header became rows, when that is not one line per row ("" when it is):
        which rows span several lines, and how many blank lines were skipped."""
        spans = [(i, a, b) for i, (a, b) in enumerate(self.lines, 1) if b > a]
        if not spans and not self.blank:
            return ""
        total = sum(b - a + 1 for a, b in self.lines) + self.blank
        said = [f"{_n(total, self.unit)} under the header hold {_n(len(self.rows), 'row')}"]
        if spans:
            shown = ", ".join(f"row {i} is {self.unit}s {a}-{b}" for i, a, b in spans[:3])
            more = f" and {len(spans) - 3} more" if len(spans) > 3 else ""
            said.append(f"{shown}{more} (a quoted cell with line breaks)")
        if self.blank:
            said.append(f"{_n(self.blank, 'blank ' + self.unit)} skipped")
        return "; ".join(said)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def format_of(name: str | os.PathLike[str]) -> str:
    """`csv` or `xlsx` from a file name; TableError for anything else."""
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    raise TableError(f"{Path(name).name}: give a .csv or .xlsx file")


def read_table(data: bytes, name: str) -> Table:
    """The table in `data`, read by the format its `name` says (an .xlsx by its content too)."""
    fmt = format_of(name)
    if len(data) > MAX_INPUT_BYTES:
        raise TableError(_too_big(name, len(data)))
    if fmt == "xlsx" or data.startswith(_XLSX_MAGIC):
        return _read_xlsx(data, name)
    return _read_csv(data, name)


def read_file(path: str | os.PathLike[str]) -> tuple[Table, bytes]:
    """The table in the file at `path`, and its bytes (the batch id hashes them)."""
    format_of(path)
    try:
        if (size := Path(path).stat().st_size) > MAX_INPUT_BYTES:
            raise TableError(_too_big(str(path), size))
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TableError(f"cannot read {path}: {exc.strerror or exc}") from None
    return read_table(data, str(path)), data


def _too_big(name: str, size: int) -> str:
    return f"{name} is {size / 2**20:,.0f} MiB, over the {MAX_INPUT_BYTES // 2**20} MiB a batch reads; split the file"


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


def _table(header: list[str], records: Iterator[tuple[int, int, list[str]]], name: str, unit: str) -> Table:
    """The rows under `header` from `records` (first line, last line, cells), each checked: every named column has
    its cell, no filled cell lies outside them, none is over `MAX_CELL`. A blank record is skipped and counted."""
    table = Table(header, unit=unit)
    for first, last, values in records:
        if not any(v.strip() for v in values):
            table.blank += last - first + 1
            continue
        where = f"{name} {unit} {first}"
        if len(table.rows) == MAX_ROWS:
            raise TableError(f"{where} is row {MAX_ROWS + 1:,}, past the {MAX_ROWS:,} a batch reads; split the file")
        _check_cells(values, header, where, unit)
        table.rows.append(dict(zip(header, values, strict=False)))
        table.lines.append((first, last))
    if not table.rows:
        raise TableError(f"{name} has no rows under its header; add one row per text")
    return table


def _check_cells(values: list[str], header: list[str], where: str, unit: str) -> None:
    named = f"the header names {len(header)} ({', '.join(header)})"
    if len(values) < len(header):
        raise TableError(
            f"{where} has {len(values)} cells where {named}: a separator missing, or a quote left open? "
            "Every row needs a cell per column, even an empty one"
        )
    stray = next((i for i, v in enumerate(values[len(header) :], len(header)) if v.strip()), None)
    if stray is not None:
        lost = " ".join(values[stray].split())[:40]
        if unit == "line":
            raise TableError(
                f"{where} has {len(values)} cells where {named}: cell {stray + 1} ({lost!r}) would be lost; quote a "
                'cell that holds the separator ("a, b"), or name that column in the header'
            )
        raise TableError(
            f"{where}: column {_column_letter(stray)} ({lost!r}) has no name in the header, which names "
            f"{len(header)} ({', '.join(header)}); name that column, or clear it"
        )
    if any(len(v) > MAX_CELL for v in values):
        raise TableError(f"{where}: {TOO_LONG}")


def _column_letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index + 1)


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
    if not text.strip():
        raise TableError(f"{name} is empty; the first row must name the columns (instruction or source, target)")
    nul = text.find("\0")
    if nul >= 0:
        raise TableError(
            f"{name} line {_line_at(text, nul)} holds a NUL byte, which no text CSV has (a UTF-16 or binary file?); "
            "save it as CSV UTF-8 (or as .xlsx)"
        )
    first = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=first.count) if first else ","
    records = _csv_records(text, delimiter, name)
    _, _, cells = next(records)
    return _table(_header(cells, name), records, name, "line")


def _line_at(text: str, index: int) -> int:
    return len(_LINE_BREAK.findall(text, 0, index)) + 1


def _csv_records(text: str, delimiter: str, name: str) -> Iterator[tuple[int, int, list[str]]]:
    """Each record of `text` with its first and last line; a TableError naming the lines for a quote left open
    or text after a closing quote (the reader is strict: a lenient one reads both as something else, silently)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    last = 0
    while True:
        first = last + 1
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise TableError(_csv_fault(name, first, reader.line_num, str(exc))) from None
        last = reader.line_num
        yield first, last, values


def _csv_fault(name: str, first: int, last: int, error: str) -> str:
    """The csv module's error in words, with the lines it concerns."""
    lines = f"line {first}" if last <= first else f"lines {first}-{last}"
    if "unexpected end of data" in error:
        return (
            f"{name} line {first}: a quote opens a cell and is never closed, so the rest of the file would be one "
            'cell; close it, or write a quote inside a cell as ""'
        )
    if "expected after" in error:
        left_open = f" (a quote left open on line {first}?)" if last > first else ""
        return (
            f"{name} {lines}: text follows a cell's closing quote{left_open}; a cell that starts with a quote must "
            'end with one, and a quote inside it is written ""'
        )
    if "field larger than field limit" in error:
        return f"{name} {lines}: {TOO_LONG}"
    return f"{name} {lines} is not valid CSV ({error})"


def _read_xlsx(data: bytes, name: str) -> Table:
    from openpyxl import load_workbook

    _check_zip(data, name)
    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zipfile, KeyError, InvalidFileException… for a damaged file
        raise TableError(_unreadable(name, exc)) from None
    try:
        lines = ([_text(c) for c in r] for r in book.worksheets[0].iter_rows(values_only=True))  # read as needed
        first = next(lines, None)
        if first is None:
            raise TableError(f"{name}'s first sheet is empty; its first row must name the columns")
        return _table(_header(first, name), ((n, n, cells) for n, cells in enumerate(lines, 2)), name, "row")
    except TableError:
        raise
    except Exception as exc:  # a sheet damaged past its first rows
        raise TableError(_unreadable(name, exc)) from None
    finally:
        book.close()


def _unreadable(name: str, exc: Exception) -> str:
    return f"{name} is not a readable .xlsx workbook ({type(exc).__name__}); save it again"


def _check_zip(data: bytes, name: str) -> None:
    """Refuse an .xlsx before any part of it is inflated: not a zip at all, too many parts, or parts that would
    inflate past `XLSX_MAX_INFLATED` in all or `XLSX_MAX_RATIO` times their size (a zip bomb), as the zip declares
    them (zipfile stops a part at its declared size)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError):
        raise TableError(
            f"{name} is not an .xlsx workbook: an .xlsx is a zip archive and this file is not one (a CSV or an old "
            ".xls renamed?); save it as .xlsx or .csv"
        ) from None
    if len(parts) > XLSX_MAX_PARTS:
        raise TableError(f"{name} holds {len(parts):,} parts, over the {XLSX_MAX_PARTS:,} of any workbook; refused")
    inflated = sum(p.file_size for p in parts)
    if inflated > XLSX_MAX_INFLATED:
        raise TableError(
            f"{name} would inflate to {inflated / 2**20:,.0f} MiB, over the {XLSX_MAX_INFLATED // 2**20} MiB a "
            "batch reads (a zip bomb?); refused before inflating it"
        )
    for p in parts:
        ratio = p.file_size / max(p.compress_size, 1)
        if p.file_size > XLSX_RATIO_FROM and ratio > XLSX_MAX_RATIO:
            raise TableError(
                f"{name}: its part {p.filename} would inflate {ratio:,.0f} times, to {p.file_size / 2**20:,.0f} MiB "
                f"(a sheet inflates 5-20 times; a zip bomb?); refused before inflating it"
            )


# ----- writing ------------------------------------------------------------------------------------------


def csv_bytes(
    header: Sequence[str], rows: Sequence[dict[str, Any]], neutralised: Collection[str] | None = None
) -> bytes:
    """RFC 4180 CSV with a BOM (Excel reads it as UTF-8).

    The rule: a cell of a column in `neutralised` (the app's own: model output, notes, errors) that a spreadsheet
    would run as a formula (it starts with = + - @, a tab, a carriage return or NUL, after any spaces or line breaks)
    gets a leading ' (History's rule, `storage.repo._cell`); numbers stay numbers. Every other column is the
    writer's, carried through: its name and cells come back exactly as they were read (`-5` stays `-5`,
    `=SUM(A1)` stays `=SUM(A1)`: the writer's own file held them). None neutralises every column."""

    def ours(column: str) -> bool:
        return neutralised is None or column in neutralised

    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\r\n")
    out.writerow([csv_cell("header", h) if ours(h) else h for h in header])
    out.writerows([csv_cell(h, row.get(h)) if ours(h) else _as_read(row.get(h)) for h in header] for row in rows)
    return buffer.getvalue().encode("utf-8-sig")


def _as_read(value: Any) -> str:
    return "" if value is None else str(value)


def xlsx_bytes(header: Sequence[str], rows: Sequence[dict[str, Any]], sheet: str = "texts") -> bytes:
    """One sheet, the header bold and frozen; numbers and booleans typed, and every text cell, the writer's and
    the app's alike, a string cell with its text as written, never a formula: `=SUM(A1)` is shown, never run.

    A writer's cell comes back with the text it was read as (an XLSX number or date as its text, `-5`,
    `2026-05-01T00:00:00`, in a text cell), less the control characters XML cannot hold (all but tab and
    line breaks)."""
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
    if len(text) > EXCEL_CELL:  # cut where Excel must, and said in the cell, not silently by openpyxl
        text = text[: EXCEL_CELL - len(EXCEL_CUT)] + EXCEL_CUT
    cell.value = text
    cell.data_type = "s"  # a string, even "=HYPERLINK(...)": shown, never run
    return cell


def excel_note(header: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """What the Batch page and the command say of an XLSX of `rows` that cuts cells at Excel's limit (`EXCEL_CELL`),
    naming the first as a writer finds it; "" where every cell fits."""
    cuts = _over_excel(header, rows)
    if not cuts:
        return ""
    i, column, size = cuts[0]
    return (
        f"The XLSX cuts {_n(len(cuts), 'cell')} at Excel's {EXCEL_CELL:,} characters (row {i + 1}, {column}: "
        f"{size:,} characters{', …' if len(cuts) > 1 else ''}); the CSV keeps every text whole."
    )


def _over_excel(header: Sequence[str], rows: Sequence[dict[str, Any]]) -> list[tuple[int, str, int]]:
    """(row index, column, characters) of each cell in `header`'s columns longer than an Excel cell holds."""
    return [
        (i, h, len(v))
        for i, row in enumerate(rows)
        for h in header
        if isinstance(v := row.get(h), str) and len(v) > EXCEL_CELL
    ]


def table_bytes(
    fmt: str, header: Sequence[str], rows: Sequence[dict[str, Any]], neutralised: Collection[str] | None = None
) -> bytes:
    """The table as `fmt`; `neutralised`: the app's columns (see `csv_bytes`)."""
    return xlsx_bytes(header, rows) if fmt == "xlsx" else csv_bytes(header, rows, neutralised)


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


def write_table(
    path: str | os.PathLike[str],
    header: Sequence[str],
    rows: Sequence[dict[str, Any]],
    neutralised: Collection[str] | None = None,
) -> None:
    """The table as CSV or XLSX (by `path`'s suffix), written atomically; `neutralised`: see `csv_bytes`."""
    write_atomic(path, table_bytes(format_of(path), header, rows, neutralised))

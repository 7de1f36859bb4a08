"""`python -m capel_ui batch INPUT --out OUTPUT`: a spreadsheet of exact-length texts, resumable.

Exit codes: 0 every text verified, 1 some not (their rows say why), 2 bad input (one line), 3 the model or the
database failed for every text, 130 interrupted (what finished is saved and in the output; run the same command
again to finish).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..cliargs import bounded
from ..vocab import GRAMMAR_FIELDS, LANGS, MODES
from .packs import DEFAULT_POSTS, MAX_POSTS, PACKS

if TYPE_CHECKING:  # the runner imports the backends and the database: only once a batch runs
    from .outfile import OutputFile
    from .runner import Batch
    from .table import Table

EXIT_OK, EXIT_MISS, EXIT_USAGE, EXIT_BACKEND, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

EPILOG = (
    "input columns (any case; a .csv or .xlsx, first row the names):\n"
    "  instruction or source   what to write, or a text to rewrite to length (one of them)\n"
    "  target                  50 (exactly), ≤ 30 or 'at most 30', 10-12 (between); not needed with --pack\n"
    "  unit, kind, mode, model, variants, lang, id   optional; kind: exactly / at most / between\n"
    "  product, facts          a pack row's facts (or instruction); posts: an x-thread row's number of posts\n"
    "any other column is carried through untouched.\n\n"
    "output: the input's columns, then slot (a variant or a pack's text), asked, text, count, verified, ending,\n"
    "score, warnings, run_id and error; one row per text.\n\n"
    "packs:\n" + "\n".join(f"  {p.key:<17} {p.summary}" for p in PACKS.values()) + "\n\n"
    "Every text is a saved run of one batch (the input's content and options): the same command run again skips what "
    "is complete.\nExit codes: 0 all verified, 1 some not, 2 bad input, 3 the model or database failed, "
    "130 interrupted."
)


def add_batch_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `batch` on the main CLI's subparsers; the handler is `cmd_batch`."""
    p = sub.add_parser(
        "batch",
        help="write a spreadsheet of exact-length texts (CSV or XLSX in and out), resumable, with platform packs",
        description="One text per row (or a pack's set per row), each a saved run; run again to resume.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", help="a .csv or .xlsx file")
    p.add_argument("--out", help="the output .csv or .xlsx (default: INPUT's name with -texts, same format)")
    p.add_argument("--pack", choices=list(PACKS), help="each row's facts become this platform's set of texts")
    p.add_argument(
        "--posts",
        type=bounded("posts", 1, MAX_POSTS),
        default=DEFAULT_POSTS,
        help=f"posts per x-thread (default {DEFAULT_POSTS}; a row's posts column wins)",
    )
    p.add_argument("--model", default="embedded", help="embedded (default), a .gguf path, or a model id")
    p.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1")
    p.add_argument("--grammar-field", choices=GRAMMAR_FIELDS, help="how that server takes a grammar")
    p.add_argument(
        "--mode",
        choices=MODES,
        help="for rows without a mode column (default: exact where the model takes a grammar, else capel where it "
        "can count the target, else baseline)",
    )
    p.add_argument("--lang", choices=LANGS, default="en", help="for rows without a lang column")
    p.add_argument(
        "--concurrency",
        type=bounded("concurrency", 1, 32),
        help="texts written at once (default: the embedded server's 4 slots, 4 on a hosted API)",
    )
    p.set_defaults(handler=cmd_batch)
    return p


def default_out(path: str) -> Path:
    p = Path(path)
    return p.with_name(f"{p.stem}-texts{p.suffix.lower()}")


def cmd_batch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .lock import Busy, held, lock_beside
    from .outfile import check_target
    from .table import EXCEL_CELL, TableError, format_of, read_file

    try:  # the whole file is read and checked before any text is written
        table, data = read_file(args.input)
        target = Path(args.out) if args.out else default_out(args.input)
        if format_of(target) == "xlsx" and (cell := table.over_excel()):
            raise TableError(
                f"{args.input} {cell}: an Excel cell holds {EXCEL_CELL:,}, so the XLSX would cut it; write the "
                f"output as CSV (--out {target.with_suffix('.csv')})"
            )
        check_target(Path(args.input), target)
    except TableError as exc:
        err.write(f"capel_ui: error: {exc}\n")
        return EXIT_USAGE
    with contextlib.ExitStack() as stack:
        try:  # the lock beside the output proves its folder writable, before any text is written
            stack.enter_context(held(lock_beside(target), str(target)))
        except Busy as exc:
            err.write(f"capel_ui: error: {exc}\n")
            return EXIT_USAGE
        except OSError as exc:
            err.write(f"capel_ui: error: cannot write {target}: {exc.strerror or exc}; give another --out\n")
            return EXIT_USAGE
        return _write(args, table, data, target, out, err)


def _write(args: argparse.Namespace, table: Table, data: bytes, target: Path, out: TextIO, err: TextIO) -> int:
    """Run the batch into `target` (its lock held): one line to start, one per text, one to end."""
    from ..interrupts import FirstStops
    from ..runs import store
    from .lock import Busy
    from .outfile import OutputFile
    from .rows import Options
    from .runner import Batch
    from .table import TableError

    options = Options(
        model=args.model,
        mode=args.mode,
        pack=args.pack,
        posts=args.posts,
        lang=args.lang,
        base_url=args.base_url,
        grammar_field=args.grammar_field,
    )
    try:
        batch = Batch(table, data, options, store(), concurrency=args.concurrency)
    except TableError as exc:  # more texts than a batch writes
        err.write(f"capel_ui: error: {args.input}: {exc}\n")
        return EXIT_USAGE
    output = OutputFile(target, batch)
    tick = _ticker(batch, output, args.input, err)
    interrupted = False
    with FirstStops(batch.hurry) as stops:
        try:
            batch.run(tick)
        except KeyboardInterrupt:  # the first Ctrl-C or SIGTERM: the runs stopped, each saved what arrived
            interrupted = True
            batch.cancel()
        except Busy as exc:
            err.write(f"capel_ui: error: {exc}\n")
            return EXIT_USAGE
        finally:
            stops.disarm()  # the last lines and the file are not cut short: a signal from now on is only counted
        tick()
        written = output.write()
    return _ending(batch, output, written, interrupted, out, err)


def _ticker(batch: Batch, output: OutputFile, name: str, err: TextIO) -> Callable[[], None]:
    """What the command prints while the batch runs (its first line once the batch is under way, then a line per
    text as it finishes), writing the output file as rows finish."""
    p = batch.progress
    shown: list[str] = []
    before, todo, started = p.done, len(batch.pending), False

    def tick() -> None:
        nonlocal started
        if not started:  # the batch is under way (its lock held): its first line
            started = True
            err.write(
                f"batch {batch.id}: {len(batch.table.rows)} rows, {p.total} texts"
                + (f", {batch.resumed} complete from before" if batch.resumed else "")
                + (f", {batch.bad_rows} bad rows" if batch.bad_rows else "")
                + f"; writing {todo}\n"
            )
            if batch.table.account():
                err.write(f"{name}: {batch.table.account()}\n")
        output.maybe_write()  # before the lines: a text said done is in the file once the first is written
        for key in batch.finished[len(shown) :]:
            shown.append(key)
            r = batch.results[key]
            what = r.verdict or (f"error: {r.error}" if r.error else r.status or "")
            secs = f" · {r.seconds:.1f} s" if r.seconds is not None else ""
            err.write(f"[{min(before + len(shown), p.total)}/{p.total}] {key}: {what}{secs}\n")
        err.flush()

    return tick


def _ending(batch: Batch, output: OutputFile, written: bool, interrupted: bool, out: TextIO, err: TextIO) -> int:
    """The last line (the file written, or why not and where the texts are) and the exit code."""
    if not written:
        err.write(f"capel_ui: error: {output.failure(out)}\n")
        return EXIT_BACKEND
    said = f"{batch.summary()} · {batch.progress.elapsed:.0f} s · wrote {output.path}"
    if output.excel_note:  # a text the model wrote past an Excel cell (its input was checked)
        err.write(f"warning: {output.excel_note}\n")
    if interrupted:
        err.write(f"interrupted: {said}; run the same command again to finish the rest\n")
        return EXIT_INTERRUPTED
    err.write(f"{said}\n")
    results = list(batch.results.values())
    if results and all(r.verified and not r.error for r in results):
        return EXIT_OK
    ran = [r for r in results if r.status is not None and r.run_id is not None]
    if not ran and any(r.error for r in results) and any(j.request for j in batch.jobs):
        return EXIT_BACKEND
    return EXIT_MISS

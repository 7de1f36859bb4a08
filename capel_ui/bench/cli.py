"""`python -m capel_ui bench`: run a suite on a model, store every sample, print the paper's table.

Exit codes: 0 the run finished (some samples may have failed: they are in the table under `backend`),
2 bad input (one line saying what is accepted), 3 every sample failed or the backend could not be built,
130 interrupted (finished samples are kept; run the same command again to resume).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any, TextIO

from ..cliargs import bounded
from ..vocab import BENCH_CONTROL_LABELS, BENCH_CONTROLS, FAILURES, GRAMMAR_FIELDS, LANGS, MAX_CALLS, MAX_TARGET, MODES
from .suites import CONTROL_SUITES, SUITE_HELP, SUITES, parse_lengths

if TYPE_CHECKING:
    from .runner import BenchConfig, BenchOutcome

EXIT_OK, EXIT_USAGE, EXIT_BACKEND, EXIT_INTERRUPTED = 0, 2, 3, 130

EPILOG = (
    "suites:\n"
    + "\n".join(f"  {name:<10} {text}" for name, text in SUITE_HELP.items())
    + (
        "\n\nExit codes: 0 finished (failed samples are counted under errors 'backend'), 2 bad input, "
        "3 every sample failed, 130 interrupted (re-run the same command to resume)."
    )
)


def add_bench_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `bench` on the main CLI's subparsers; the handler is `cmd_bench`."""
    p = sub.add_parser(
        "bench",
        help="run a benchmark suite (rtg, lifebench, mtbench, custom) and print EM/MAE/MALD/LD/LS",
        description="Run every (item, target, mode) of a suite, store each result as it completes, print the "
        "table. Running the same command again resumes and skips what is stored.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--suite", required=True, help=f"one of {', '.join(SUITES)}")
    p.add_argument("--model", default="embedded", help="embedded (default), a .gguf path, or a model id")
    p.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    p.add_argument(
        "--grammar-field",
        choices=GRAMMAR_FIELDS,
        help="how a compatible server takes a grammar (needed for the exact modes there)",
    )
    p.add_argument("--modes", default="baseline,capel", help=f"comma-separated, from {', '.join(MODES)}")
    p.add_argument(
        "--control",
        choices=BENCH_CONTROLS,
        default="equal",
        help="LIFEBench's control method: equal (default), at_most or at_least N; the prompt says it and LS scores "
        f"it (at_most/at_least: baseline and exact modes; suites {', '.join(CONTROL_SUITES)}); a separate run",
    )
    p.add_argument(
        "--lengths",
        help=f"comma-separated targets in 1..{MAX_TARGET} (lifebench: 16,32,...,8192; default per suite)",
    )
    p.add_argument("--limit", type=bounded("limit", 1), help="only the first K prompts (with --seed: a seeded sample)")
    p.add_argument("--seed", type=int, help="sampling seed for --limit and rtg lengths; also sent to the model")
    p.add_argument("--lang", choices=LANGS, help="only the prompts in this language")
    p.add_argument(
        "--concurrency", type=bounded("concurrency", 1), default=1, help="requests in flight (default 1, at most 32)"
    )
    p.add_argument(
        "--max-calls",
        type=bounded("max calls", 1, MAX_CALLS),
        help="repair: calls a capel/draft-capel sample may take (default 1, no repair); a separate run",
    )
    p.add_argument("--file", help="the CSV or JSONL for --suite custom (instruction, lang, target[, id])")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(handler=cmd_bench)
    return p


class ProgressLine:
    """A one-line progress bar with ETA on stderr: redrawn in place on a terminal, a line now and then if not."""

    def __init__(self, err: TextIO, width: int = 24, every: float = 30.0) -> None:
        self.err = err
        self.live = bool(getattr(err, "isatty", lambda: False)())
        self.width = width
        self.every = every
        self._last_line = 0.0
        self._last_pct = -1

    def __call__(self, done: int, total: int, eta: float | None) -> None:
        frac = done / total if total else 1.0
        filled = int(frac * self.width)
        bar = "█" * filled + "░" * (self.width - filled)
        left = "" if eta is None else f" · ETA {_duration(eta)}"
        line = f"bench {bar} {done}/{total} ({frac:.0%}){left}"
        if self.live:
            self.err.write(f"\r\x1b[K{line}")
            self.err.flush()
            return
        now = time.monotonic()
        pct = int(frac * 10)
        if done == total or pct != self._last_pct or now - self._last_line >= self.every:
            self.err.write(line + "\n")
            self._last_line, self._last_pct = now, pct

    def close(self) -> None:
        if self.live:
            self.err.write("\r\x1b[K")
            self.err.flush()


def _duration(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _summary(config: BenchConfig, out: BenchOutcome) -> str:
    suite = out.suite
    lengths = ",".join(map(str, suite.lengths)) or "per item"
    resumed = f", {out.skipped} resumed" if out.skipped else ""
    control = "" if config.control == "equal" else f" · {BENCH_CONTROL_LABELS[config.control].lower()} N"
    return (
        f"{config.suite}{control} · {config.model} · {suite.sources} prompts × lengths {lengths} × {len(config.modes)} "
        f"mode(s) = {out.total} samples (bench run {out.bench_run_id}, {out.status}{resumed}; "
        f"{out.generated} generated in {_duration(out.seconds)}, {out.failed} failed)"
    )


def cmd_bench(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Parse, run with a progress line, print the table or JSON; see the module doc for exit codes."""
    # Imported here: the model client and the database are not needed to print `--help` or run `count`.
    from ..backends import BackendError
    from .report import aggregate, format_table, json_rows
    from .runner import BenchConfig, parse_modes, run_bench, run_results

    try:
        config = BenchConfig(
            suite=args.suite,
            model=args.model,
            base_url=args.base_url,
            modes=parse_modes(args.modes),
            lengths=parse_lengths(args.lengths),
            limit=args.limit,
            seed=args.seed,
            lang=args.lang,
            file=args.file,
            concurrency=args.concurrency,
            grammar_field=args.grammar_field,
            max_calls=args.max_calls,
            control=args.control,
        )
    except ValueError as exc:
        err.write(f"capel_ui: error: {exc}\n")
        return EXIT_USAGE
    bar = ProgressLine(err)
    try:
        outcome = run_bench(config, progress=bar)
    except ValueError as exc:
        bar.close()
        err.write(f"capel_ui: error: {exc}\n")
        return EXIT_USAGE
    except BackendError as exc:
        bar.close()
        err.write(f"capel_ui: error: {exc.message}\n")
        return EXIT_USAGE if FAILURES[exc.kind].bad_input else EXIT_BACKEND
    except KeyboardInterrupt:  # before the first sample (loading the model, say); nothing to keep
        bar.close()
        err.write("interrupted before the run started\n")
        return EXIT_INTERRUPTED
    bar.close()
    interrupted = outcome.status == "interrupted"
    records = run_results(None, [outcome.bench_run_id])
    rows = aggregate(records)
    ok = sum(1 for r in records if r.status == "ok")
    if args.json:
        payload = {
            "bench_run_id": outcome.bench_run_id,
            "key": outcome.key,
            "suite": config.suite,
            "model": config.model,
            "control": config.control,
            "modes": list(config.modes),
            "lengths": list(outcome.suite.lengths),
            "status": outcome.status,
            "samples": outcome.total,
            "stored": len(records),
            "failed": sum(1 for r in records if r.status != "ok"),
            "results": json_rows(rows),
        }
        out.write(json.dumps(payload, ensure_ascii=False) + "\n")
    else:
        out.write(_summary(config, outcome) + "\n\n")
        out.write(format_table(rows))
        out.write(
            "\nEM = exact match (count = target); within = samples meeting the control (equal: = N, at_most: ≤ N, "
            "at_least: ≥ N); MALD = mean |count−target|/target; LD, LS = LIFEBench's Length Deviation (mean |LD|) "
            "and Length Score (the control's own LS; counts ≤ 1 dropped; `all` averages over targets); "
            "n = samples scored (of those run); calls = model calls per sample (repair); "
            "tok/exact = completion tokens per exact text; "
            "errors = samples showing each marker error, backend = failed requests.\n"
        )
    if interrupted:
        stored = f"{len(records)} of {outcome.total} samples are stored"
        err.write(f"interrupted: {stored}; run the same command to resume\n")
        return EXIT_INTERRUPTED
    if records and ok == 0:
        first = next((r.error_message for r in records if r.error_message), "")
        err.write(f"capel_ui: error: every sample failed; first error: {first}\n")
        return EXIT_BACKEND
    return EXIT_OK

"""`python -m capel_ui`: prompt, count, check, generate, bench.

Exit codes are a contract: 0 exact and valid, 1 not, 2 bad input (one line saying what was wrong and what
is accepted), 3 the backend failed (with what to do), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from .counting import count
from .parser import check_output
from .prompts import build_prompt
from .vocab import DEFAULT_UNIT, LANGS, MAX_TARGET, MODES, UNITS

EXIT_OK, EXIT_MISS, EXIT_USAGE, EXIT_BACKEND, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    """Bad input: printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not argparse's usage block
        raise UsageError(message)


def _target(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"target must be a whole number from 1 to {MAX_TARGET}, got {value!r}"
        ) from None
    if not 1 <= n <= MAX_TARGET:
        raise argparse.ArgumentTypeError(f"target must be from 1 to {MAX_TARGET}, got {n}")
    return n


def _temperature(value: str) -> float:
    try:
        t = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"temperature must be a number from 0 to 2, got {value!r}") from None
    if not 0 <= t <= 2:
        raise argparse.ArgumentTypeError(f"temperature must be from 0 to 2, got {t}")
    return t


def read_input(source: str | None, stdin: TextIO) -> str:
    """Read FILE or `-` (stdin) as UTF-8, turning every failure into a one-line usage error."""
    if source in (None, "-"):
        data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
        name = "standard input"
    else:
        try:
            with open(source, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise UsageError(
                f"cannot read {source}: {exc.strerror or exc}; give a readable UTF-8 text file or -"
            ) from None
        name = source
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{name} is not UTF-8 text; give a UTF-8 text file or -") from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m capel_ui", description="CAPEL Studio: text of an exact length from a language model.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    pr = sub.add_parser("prompt", help="print the prompt for an instruction")
    pr.add_argument("--lang", choices=LANGS, default="en")
    pr.add_argument("--target", type=_target, required=True)
    pr.add_argument("--mode", choices=MODES, default="capel")
    pr.add_argument("--code", action="store_true", help="add the code-aware rule (a code line is one token)")
    pr.add_argument("instruction")

    co = sub.add_parser("count", help="count the length of a text")
    co.add_argument("--unit", choices=UNITS, default="en_words")
    co.add_argument("file", nargs="?", default="-")

    ch = sub.add_parser("check", help="validate a raw CAPEL output and print JSON")
    ch.add_argument("--lang", choices=LANGS, default="en")
    ch.add_argument("--target", type=_target, required=True)
    ch.add_argument("--unit", choices=UNITS)
    ch.add_argument("--draft", action="store_true", help="the output starts with a <draft>…</draft> to discard")
    ch.add_argument("--code", action="store_true", help="a code line after a marker counts as one unit")
    ch.add_argument("file", nargs="?", default="-")

    ge = sub.add_parser("generate", help="write text of an exact length with a model")
    ge.add_argument("--model", default="embedded", help="embedded (default), a .gguf path, or a model id")
    ge.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1")
    ge.add_argument(
        "--grammar-field",
        choices=("grammar", "guided_grammar", "structured_outputs"),
        help="how the server takes a grammar (exact modes on a compatible server)",
    )
    ge.add_argument("--lang", choices=LANGS, default="en")
    ge.add_argument("--target", type=_target, required=True)
    ge.add_argument("--unit", choices=UNITS)
    ge.add_argument("--mode", choices=MODES, default="capel")
    ge.add_argument("--code", action="store_true")
    ge.add_argument("--temperature", type=_temperature)
    ge.add_argument("--max-tokens", type=int)
    ge.add_argument("--seed", type=int)
    ge.add_argument("--no-fallback", action="store_true", help="use CAPEL even on models known to misread it")
    ge.add_argument("--json", action="store_true", help="print one JSON object instead of the text")
    ge.add_argument("instruction", help="what to write, or - to read it from standard input")

    from .bench.cli import add_bench_parser

    add_bench_parser(sub)
    return p


def cmd_prompt(args: argparse.Namespace, out: TextIO) -> int:
    out.write(build_prompt(args.instruction, args.lang, args.target, args.mode, code=args.code) + "\n")
    return EXIT_OK


def cmd_count(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    out.write(f"{count(read_input(args.file, stdin), args.unit)}\n")
    return EXIT_OK


def cmd_check(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    raw = read_input(args.file, stdin)
    unit = args.unit or DEFAULT_UNIT[args.lang]
    result = check_output(raw, args.target, args.lang, unit, draft=args.draft, code=args.code)
    out.write(json.dumps(result.as_dict(), ensure_ascii=False) + "\n")
    return EXIT_OK if result.exact and result.valid else EXIT_MISS


def cmd_generate(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    from .backends import BackendError, get_backend
    from .generation import Generation, Request, validate_request

    instruction = read_input("-", stdin) if args.instruction == "-" else args.instruction
    request = Request(
        instruction=instruction,
        target=args.target,
        lang=args.lang,
        mode=args.mode,
        unit=args.unit,
        code=args.code,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        seed=args.seed,
        allow_fallback=not args.no_fallback,
    )
    try:
        validate_request(request)  # bad input is reported before any model is loaded or called
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        backend = get_backend(args.model, base_url=args.base_url, grammar_field=args.grammar_field)
    except BackendError as exc:
        err.write(f"capel_ui: error: {exc.message}\n")
        return EXIT_USAGE if exc.kind in ("bad_request", "not_found") else EXIT_BACKEND
    try:
        gen = Generation(backend, request)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if gen.notice:
        err.write(f"note: {gen.notice}\n")
    live = err.isatty()
    unit_name = request.count_unit.replace("_", " ")
    printed = ""
    try:
        for chunk in gen.stream():
            if not args.json:
                if gen.parser is None:
                    out.write(chunk)
                else:
                    text = gen.parser.text_so_far()
                    out.write(text[len(printed) :])
                    printed = text
                out.flush()
            if live:
                state = "drafting…" if gen.in_draft else f"{gen.remaining} of {request.target} {unit_name} left"
                errs = f" · {len(gen.errors)} marker error(s)" if gen.errors else ""
                err.write(f"\r\x1b[K⏳ {state}{errs}")
                err.flush()
    except KeyboardInterrupt:
        gen.cancel()
        outcome = gen.outcome()
        if live:
            err.write("\r\x1b[K")
        err.write(f"\ninterrupted: kept {outcome.count} {unit_name} that arrived\n")
        if args.json:
            out.write(json.dumps(outcome.as_json(), ensure_ascii=False) + "\n")
        return EXIT_INTERRUPTED
    outcome = gen.outcome()
    if live:
        err.write("\r\x1b[K")
    if args.json:
        out.write(json.dumps(outcome.as_json(), ensure_ascii=False) + "\n")
    else:
        if gen.parser is not None:
            out.write(outcome.text[len(printed) :] if outcome.text.startswith(printed) else "\n" + outcome.text)
        out.write("\n")
    mark = "✓ exact" if outcome.exact else f"off by {outcome.deviation:+d}"
    errs = f", {len(outcome.errors)} marker error(s)" if outcome.errors else ""
    tokens = f" · {outcome.completion_tokens} tokens" if outcome.completion_tokens else ""
    err.write(f"{outcome.count}/{request.target} {unit_name} {mark}{errs} · {outcome.seconds:.1f} s{tokens}\n")
    if outcome.failure:
        err.write(f"capel_ui: error: {outcome.failure}\n")
        return EXIT_MISS if outcome.failure_kind == "length" else EXIT_BACKEND
    return EXIT_OK if outcome.verified else EXIT_MISS


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    try:
        args = build_parser().parse_args(argv)
        if args.command == "prompt":
            return cmd_prompt(args, stdout)
        if args.command == "count":
            return cmd_count(args, stdout, stdin)
        if args.command == "check":
            return cmd_check(args, stdout, stdin)
        if args.command == "generate":
            return cmd_generate(args, stdout, stderr, stdin)
        return args.handler(args, stdout, stderr)
    except UsageError as exc:
        stderr.write(f"capel_ui: error: {exc}\n")
        return EXIT_USAGE
    except ValueError as exc:
        stderr.write(f"capel_ui: error: {exc}\n")
        return EXIT_USAGE

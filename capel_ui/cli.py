"""`python -m capel_ui`: prompt, count, check, generate, history, bench, models, batch.

Exit codes are a contract (named in `vocab`): 0 verified, 1 not, 2 bad input (one line saying what was wrong
and what is accepted), 3 the model, server or database failed (with what to do), 130 interrupted. They come from
what the CLI checked itself (`UsageError`) and from the failure table (`vocab.FAILURES`), never from an exception's
class: a `ValueError` raised deep inside is not the writer's bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from .cliargs import bounded, limit_or_none
from .counting import count, count_detail
from .interrupts import FirstStops, cut_short
from .parser import check_output
from .presets import PRESET_BY_KEY, preset
from .prompts import build_prompt
from .verdict import Target, live_state
from .vocab import (
    AUTO,
    DEFAULT_MAX_CALLS,
    DEFAULT_STALL_LIMIT,
    DEFAULT_TIME_LIMIT,
    DEFAULT_UNIT,
    EXIT_BACKEND,
    EXIT_INTERRUPTED,
    EXIT_MISS,
    EXIT_OK,
    EXIT_USAGE,
    FAILURES,
    GRAMMAR_FIELDS,
    LANGS,
    MAX_CALLS,
    MAX_TARGET,
    MAX_VARIANTS,
    MODES,
    ORIGINS,
    UNITS,
    Lang,
    TargetKind,
    is_answer,
    unit_label,
)

if TYPE_CHECKING:  # the backends (the openai client) and storage (SQLAlchemy) load only in the commands that use
    # them, so `count` and `check` start fast (benchmarks/cli_speed.py)

    from sqlalchemy import Engine

    from .assessment import Assessment
    from .backends import Backend
    from .request import Request
    from .runs import LiveRun
    from .service import RunHandle
    from .variants import Candidate


class UsageError(Exception):
    """Bad input: printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not argparse's usage block
        raise UsageError(message)


_target = bounded("target", 1, MAX_TARGET)
_positive = bounded("number", 1)
_temperature = bounded("temperature", 0, 2, kind=float)
_seconds = limit_or_none(bounded("time limit", 1, 86_400, kind=float))
_stall_seconds = limit_or_none(bounded("stall limit", 1, 86_400, kind=float))

_max_calls = bounded("max calls", 1, MAX_CALLS)


def read_input(source: str | None, stdin: TextIO) -> str:
    """Read FILE or `-` (stdin) as UTF-8, turning every failure into a one-line usage error."""
    if source in (None, "-"):
        closed = "standard input is closed (as under cron); give a file instead of -, or pipe the text in"
        if stdin is None or stdin.closed:  # `0<&-`: Python sets sys.stdin to None
            raise UsageError(closed)
        try:
            data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
        except OSError:  # a descriptor that cannot be read (closed under us, a directory)
            raise UsageError(closed) from None
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
    pr.add_argument("--lang", choices=LANGS, default="en", help="the language of the prompt")
    pr.add_argument("--target", type=_target, required=True, help="exactly N units")
    pr.add_argument("--mode", choices=MODES, default="capel", help="the mode whose prompt to print")
    pr.add_argument("--code", action="store_true", help="add the code-aware rule (a code line is one token)")
    pr.add_argument("instruction", help="what to write")

    co = sub.add_parser("count", help="count the length of a text")
    co.add_argument("--unit", choices=UNITS, default="en_words", help="the counting unit (docs/units.md)")
    co.add_argument("file", nargs="?", default="-", help="a UTF-8 text file, or - for standard input")

    ch = sub.add_parser("check", help="validate a raw CAPEL output and print JSON")
    ch.add_argument("--lang", choices=LANGS, default="en", help="the language of the output")
    ch_kinds = ch.add_mutually_exclusive_group(required=True)
    ch_kinds.add_argument("--target", type=_target, help="exactly N units: the countdown runs to <1> before <0>")
    ch_kinds.add_argument("--at-most", type=_target, metavar="N", help="at most N: <0> may close at any unit")
    ch_kinds.add_argument("--range", metavar="A-B", help="between A and B: <0> may close from the A-th unit on")
    ch.add_argument("--unit", choices=UNITS, help="the counting unit (default: the language's own)")
    ch.add_argument("--draft", action="store_true", help="the output starts with a <draft>…</draft> to discard")
    ch.add_argument("--code", action="store_true", help="a code line after a marker counts as one unit")
    ch.add_argument("file", nargs="?", default="-", help="the raw output, a UTF-8 file, or - for standard input")

    ge = sub.add_parser("generate", help="write text of an exact length with a model")
    ge.add_argument("--model", default="embedded", help="embedded (default), a .gguf path, or a model id")
    ge.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1")
    ge.add_argument(
        "--grammar-field",
        choices=GRAMMAR_FIELDS,
        help="how the server takes a grammar (exact modes on a compatible server): llama.cpp grammar, vLLM "
        "structured_outputs or guided_grammar, SGLang ebnf, Ollama/LM Studio json_schema, Responses API custom_tool",
    )
    ge.add_argument("--lang", choices=LANGS, help="default en, or the preset's")
    kinds = ge.add_mutually_exclusive_group()
    kinds.add_argument("--target", type=_target, help="exactly N units")
    kinds.add_argument("--at-most", type=_target, metavar="N", help="at most N units (a platform limit)")
    kinds.add_argument("--range", metavar="A-B", help="between A and B units, e.g. 10-12")
    ge.add_argument("--preset", choices=list(PRESET_BY_KEY), help="a platform's unit and limit (e.g. x-post, sms)")
    ge.add_argument("--unit", choices=UNITS, help="the counting unit (default: the preset's, else the language's)")
    ge.add_argument(
        "--mode",
        choices=(AUTO, *MODES),
        default=AUTO,
        help="default auto: the guaranteed count (exact) where the model takes a grammar, else CAPEL with repair",
    )
    ge.add_argument("--code", action="store_true", help="add the code-aware rule (a code line is one unit)")
    ge.add_argument("--temperature", type=_temperature, help="0 to 2 (default: the model's own)")
    ge.add_argument("--max-tokens", type=_positive, help="output limit in tokens (default: from the target)")
    ge.add_argument(
        "--time-limit",
        type=_seconds,
        metavar="SECONDS",
        default=DEFAULT_TIME_LIMIT,
        help=f"stop after this many seconds, keeping what arrived (default {DEFAULT_TIME_LIMIT:g}; none: no limit)",
    )
    ge.add_argument(
        "--stall-limit",
        type=_stall_seconds,
        metavar="SECONDS",
        default=DEFAULT_STALL_LIMIT,
        help=f"stop when no new text came for this many seconds (default {DEFAULT_STALL_LIMIT:g}; none: no limit)",
    )
    ge.add_argument("--seed", type=int, help="a sampling seed, sent where the model takes one")
    ge.add_argument(
        "--no-fallback",
        action="store_true",
        help="use the mode asked for as it is: CAPEL even on models known to misread the countdown (o4-mini), "
        "exact-countdown even on the embedded model, plain exact (no countdown grammar) on the GPT-5 family",
    )
    ge.add_argument(
        "--max-calls",
        type=_max_calls,
        help=f"calls a capel/draft-capel run may take to repair a broken countdown (1 = no repair; default "
        f"{DEFAULT_MAX_CALLS} on models without a grammar, 1 on models with one)",
    )
    ge.add_argument(
        "--ask-more",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="exact mode on llama.cpp: where the model wanted to end before N, ask it for more content from there "
        "instead of keeping the padding the count forced; kept only where it reads better (default: on)",
    )
    ge.add_argument("--json", action="store_true", help="print one JSON object instead of the text")
    ge.add_argument("--no-save", action="store_true", help="do not keep this run in History")
    ge.add_argument(
        "--variants",
        type=bounded("variants", 1, MAX_VARIANTS),
        default=1,
        metavar="K",
        help=f"write K candidates at once (1-{MAX_VARIANTS}), saved as one group and ranked by score",
    )
    ge.add_argument("--judge", metavar="MODEL", help="rate each text 1-10 with this model (FastChat single-v1)")
    ge.add_argument("--judge-base-url", metavar="URL", help="the judge's OpenAI-compatible server, if not its own")
    ge.add_argument(
        "--rewrite",
        metavar="FILE",
        help="rewrite your own text (a UTF-8 file, or - for standard input) to the target instead of following an "
        "instruction; in exact mode on the embedded model a shorter text keeps only your own words",
    )
    ge.add_argument("instruction", nargs="?", default="", help="what to write, or - to read it from standard input")

    hi = sub.add_parser("history", help="list saved runs, show one, or export them as CSV")
    hi.add_argument("--model", help="runs of this model only")
    hi.add_argument("--mode", choices=MODES, help="runs of this mode only")
    hi.add_argument("--origin", choices=ORIGINS, help="runs started here only (write, cli, batch…)")
    hi.add_argument("--lang", choices=LANGS, help="runs in this language only")
    hi.add_argument("--verified", action="store_true", help="verified runs only")
    hi.add_argument("--search", help="words in the instruction or text")
    hi.add_argument("--limit", type=_positive, default=20, help="newest N runs (default 20)")
    hi.add_argument("--csv", metavar="FILE", help="write every matching run as CSV to FILE (- for standard output)")
    hi.add_argument("--json", action="store_true", help="one JSON object per run")
    hs = hi.add_subparsers(dest="history_command", parser_class=_Parser)
    show = hs.add_parser("show", help="print one run")
    show.add_argument("run_id", type=_positive, help="the run's number (History's Run column)")
    show.add_argument("--json", action="store_true", dest="show_json", help="one JSON object")
    hs.add_parser(
        "reassess",
        help="judge every saved run again with today's quality rules (runs saved before judgements were stored are "
        "judged once by themselves)",
    )

    from .batch.cli import add_batch_parser
    from .bench.cli import add_bench_parser
    from .doctor import add_doctor_parser
    from .models_cli import add_models_parser

    add_bench_parser(sub)
    add_models_parser(sub)
    add_doctor_parser(sub)
    add_batch_parser(sub)
    return p


def cmd_prompt(args: argparse.Namespace, out: TextIO) -> int:
    out.write(build_prompt(args.instruction, args.lang, args.target, args.mode, code=args.code) + "\n")
    return EXIT_OK


def cmd_count(args: argparse.Namespace, out: TextIO, stdin: TextIO, err: TextIO) -> int:
    """The count on stdout; what a number does not say (an SMS's encoding and segments) on stderr."""
    text = read_input(args.file, stdin)
    out.write(f"{count(text, args.unit)}\n")
    detail = count_detail(text, args.unit)
    if detail:
        err.write(detail + "\n")
    return EXIT_OK


def cmd_check(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    raw = read_input(args.file, stdin)
    unit = args.unit or DEFAULT_UNIT[args.lang]
    target = _target_of(args)
    assert target is not None  # argparse requires one of the three
    result = check_output(raw, target, args.lang, unit, draft=args.draft, code=args.code)
    out.write(json.dumps(result.as_dict(), ensure_ascii=False) + "\n")
    return EXIT_OK if result.verified else EXIT_MISS


def _target_of(args: argparse.Namespace) -> Target | None:
    """The one target flag given (--target, --at-most or --range), or None."""
    if args.target is not None:
        return Target.exactly(args.target)
    if args.at_most is not None:
        return Target.at_most(args.at_most)
    if args.range is not None:
        try:
            return Target.parse_range(args.range)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return None


def _request(args: argparse.Namespace, stdin: TextIO) -> Request:
    from .request import Request

    instruction = read_input("-", stdin) if args.instruction == "-" else args.instruction
    chosen = preset(args.preset) if args.preset else None
    if args.rewrite is not None:
        instruction = _rewrite_instruction(args, instruction, stdin, args.lang or (chosen.lang if chosen else "en"))
    target = _target_of(args) or (chosen.target if chosen else None)
    if target is None:
        raise UsageError("give one of --target N (exactly), --at-most N or --range A-B, or a --preset")
    lang = args.lang or (chosen.lang if chosen else "en")
    unit = args.unit or (chosen.unit if chosen and lang == chosen.lang else None)
    if chosen and not instruction.strip():
        instruction = chosen.example
    return Request.of(  # checked by `service.start` before any model is loaded or called
        target,
        instruction,
        lang=lang,
        mode=_best_mode(args, lang, unit or DEFAULT_UNIT[lang], target.kind) if args.mode == AUTO else args.mode,
        unit=unit,
        code=args.code,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        seed=args.seed,
        allow_fallback=not args.no_fallback,
        ask_more=args.ask_more,
        time_limit=args.time_limit,
        stall_limit=args.stall_limit,
        max_calls=args.max_calls,
    )


def _best_mode(args: argparse.Namespace, lang: Lang, unit: str, kind: TargetKind) -> str:
    """`--mode auto`: the default the service's one rule gives this model and target (`service.modes_for_model`),
    known from its provider's declaration before any model is built."""
    from .service import modes_for_model

    rewrite = args.rewrite is not None
    found = modes_for_model(
        args.model, lang, unit, kind, base_url=args.base_url, grammar_field=args.grammar_field, rewrite=rewrite
    )
    return found.default


def _rewrite_instruction(args: argparse.Namespace, instruction: str, stdin: TextIO, lang: str) -> str:
    """`--rewrite FILE`: the text to rewrite, as the instruction a rewrite run is saved with (History shows and re-runs
    it as a rewrite)."""
    from .prompts import REWRITE

    if instruction.strip():
        raise UsageError("give either an instruction or --rewrite FILE (the text to rewrite), not both")
    source = read_input(args.rewrite, stdin).strip()
    if not source:
        raise UsageError(f"the text to rewrite ({args.rewrite}) is empty; give a file with the text, or -")
    return REWRITE[lang].format(text=source)


class _Printer:
    """Streams the clean text to stdout (unless --json) and a one-line live countdown to a terminal's stderr."""

    def __init__(self, live: LiveRun, out: TextIO, err: TextIO, quiet: bool) -> None:
        self.run, self.out, self.err, self.quiet = live, out, err, quiet
        self.live = err.isatty()
        self.printed = ""

    def chunk(self, chunk: str) -> None:
        view = self.run.view()
        if not self.quiet:  # only text that stays: a repair, a planned ending or a limit may still change the end
            text = view.settled[len(self.printed) :]
            self.out.write(text)
            self.printed += text
            self.out.flush()
        if self.live:
            state = "drafting…" if view.drafting else live_state(view.units_done, view.target, view.unit)
            errs = f" · {len(view.errors)} marker error(s)" if view.errors else ""
            errs += view.note
            self.err.write(f"\r\x1b[K⏳ {state}{errs}")
            self.err.flush()

    def finish(self, text: str) -> None:
        """Print what the stream did not: the rest of the clean text, or all of it if it changed at the end."""
        if self.live:
            self.err.write("\r\x1b[K")
        if self.quiet:
            return
        self.out.write(_rest(self.printed, text) + "\n")


def _rest(printed: str, text: str) -> str:
    """What is left to print of the final `text` after `printed` went out (the final text is stripped, and a
    Ctrl-C can land between a chunk being kept and printed); all of it, on a new line, if it changed."""
    shown = printed.lstrip()
    if text.startswith(shown):
        return text[len(shown) :]
    if text.startswith(shown.rstrip()):
        return text[len(shown.rstrip()) :].lstrip()
    return "\n" + text if shown.strip() else text


def cmd_generate(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    from .backends import BackendError, get_backend
    from .service import start

    request = _request(args, stdin)
    _size_local_server(request, args)
    try:
        handle = start(
            request,
            lambda: get_backend(args.model, base_url=args.base_url, grammar_field=args.grammar_field),
            None if args.no_save else _engine,
            origin="cli",
            variants=args.variants,
            judge=lambda: _judge_backend(args),  # built before any generation, so a bad name fails fast
        )
    except BackendError as exc:  # worded and redacted by the backend's guard
        err.write(f"capel_ui: error: {exc.message}\n")
        return EXIT_USAGE if FAILURES[exc.kind].bad_input else EXIT_BACKEND
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if handle.notice:
        err.write(f"note: {handle.notice}\n")
    with _stops(handle.lives):  # from here a second Ctrl-C or SIGTERM cannot cut a save short
        if args.variants > 1:
            return _generate_variants(handle, args, out, err)
        return _generate_one(handle, args, out, err)


def _stops(lives: Sequence[LiveRun]) -> FirstStops:
    """Ctrl-C and SIGTERM for the whole of a `generate`: the first stops the runs; once a run is stopping or saving
    (it reads only `Generation.status`, which leaves `running` just before the final save starts) a further one is
    only counted, and asks the runs not to try the save again once the try under way is over (`LiveRun.hurry`). The
    command exits (130) once the save is done, or says the text it printed is the only copy."""

    def hurry() -> None:
        for live in lives:
            live.hurry()

    return FirstStops(hurry, saving=lambda: any(not live.streaming for live in lives))


def _size_local_server(request: Request, args: argparse.Namespace) -> None:
    """A local model's llama.cpp server with what this command needs: a slot for each variant (four where a text
    under a limit writes its rival closings at once) and the context its prompt and answer take. The file's resident
    server where the request fits it (backends/resident.py: the model stays loaded between commands), else one of
    this process sized so (not a page's 4 × 8k, whose KV cache took most of a second to allocate). A judge keeps a
    page's size (it reads the text too)."""
    from .backends import resident
    from .backends.embedded import ServerSize, context_for, size_servers
    from .planned import CLOSINGS
    from .request import default_max_tokens

    if args.judge:
        return
    slots = args.variants if request.target_kind == "exactly" else max(args.variants, 1 + CLOSINGS)
    try:
        prompt = build_prompt(request.instruction, request.lang, request.target, request.mode, code=request.code)
    except ValueError:  # a request `start` refuses, in its own words
        return
    budget = request.max_tokens or default_max_tokens(request)
    size_servers(ServerSize(slots, context_for(len(prompt), budget)), find=resident.attach)


def _generate_one(handle: RunHandle, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    live = handle.live
    printer = _Printer(live, out, err, quiet=args.json)
    stream = handle.stream()
    try:
        for chunk in stream:
            printer.chunk(chunk)
    except KeyboardInterrupt:  # the first Ctrl-C or SIGTERM; any further one is only counted (`_stops`)
        live.cancel()
        stream.close()  # saves the run as cancelled, with the text that arrived (already, if the stream was inside)
        return _report(live, args, printer, err, interrupted=True)
    [best] = handle.result()
    if handle.judge is not None and best.outcome.text.strip():
        rating = best.judge_score
        err.write(f"judge {handle.judge.label}: {rating if rating is not None else 'no rating'}\n")
    return _report(live, args, printer, err, interrupted=False)


def _judge_backend(args: argparse.Namespace) -> Backend | None:
    """The judge model named by --judge, or None."""
    from .backends import get_backend

    if not args.judge:
        return None
    return get_backend(args.judge, base_url=args.judge_base_url)


def _generate_variants(handle: RunHandle, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """K candidates at once: all printed best first (or listed in --json), each saved as a run of one group."""
    lives, request, group_id = handle.lives, handle.request, handle.group_id

    def tick() -> None:
        if err.isatty():
            err.write("\r\x1b[K⏳ " + " · ".join(f"{lv.view().units_done}/{request.target}" for lv in lives))
            err.flush()

    try:
        handle.run_together(tick)
    except KeyboardInterrupt:
        for lv in lives:
            lv.closed.wait(10)
        err.write(f"\ninterrupted: the {len(lives)} variants keep what arrived (group {group_id})\n")
        return EXIT_INTERRUPTED
    if err.isatty():
        err.write("\r\x1b[K")
    ranked = handle.result()
    if args.json:
        doc = {"group_id": group_id, "variants": [c.as_json(i + 1) for i, c in enumerate(ranked)]}
        out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    else:
        for i, c in enumerate(ranked, 1):
            out.write(f"--- variant {i} of {len(ranked)}{_variant_line(c)}\n{c.outcome.text}\n")
    best = ranked[0].outcome
    unsaved = [lv.save_error for lv in lives if lv.save_error]
    saved = f" · saved as group {group_id}" if handle.engine is not None and not unsaved else ""
    mode = _mode_said(args, request.mode)
    err.write(f"best of {len(ranked)}:{_variant_line(ranked[0])[2:]}{mode}{saved}\n")
    if all(c.junk for c in ranked):
        from .quality import all_junk

        err.write(f"warning: {all_junk(c.assessment.junk_kind for c in ranked)}\n")
    if unsaved:
        err.write(f"capel_ui: error: {len(unsaved)} of the {len(lives)} variants {unsaved[0]}; their text is above\n")
        return EXIT_BACKEND
    return EXIT_OK if best.verified else EXIT_MISS


def _mode_said(args: argparse.Namespace, mode: str) -> str:
    """ " · mode: exact (auto)" when the CLI chose the mode, else nothing (the writer knows what they asked for)."""
    return f" · mode: {mode} (auto)" if args.mode == AUTO else ""


def _variant_line(c: Candidate) -> str:
    parts = [f" · run {c.run_id}" if c.run_id is not None else ""]
    # What the score means, as History's score line says it: "not a text to publish" for junk, never a bare number.
    parts.append(f" · score {c.score:.1f}: {c.explanation}" if c.score is not None else "")
    parts.append(f" · judge {c.judge_score:g}" if c.judge_score is not None else "")
    parts.append(f" · {c.outcome.verdict.headline(c.outcome.request.count_unit)}")
    parts.append(f" · written {c.copies} times" if c.copies > 1 else "")  # identical variants are one (`collapse`)
    return "".join(parts)  # " · run 3 · score 6.2: ends naturally, reads smoothly · ✓ exact · verified · 12/12 …"


def _report(live: LiveRun, args: argparse.Namespace, printer: _Printer, err: TextIO, *, interrupted: bool) -> int:
    """Print the outcome (text or JSON) and its verdict line; return the exit code it earns."""
    from .assessment import Assessment
    from .quality import ONE_JUNK

    outcome = live.outcome
    unit = unit_label(outcome.request.count_unit)
    found = outcome.assessment or Assessment()  # the one judgement of the text, as every surface shows it
    ending = found.ending
    if args.json:
        doc = {**outcome.as_json(), **_quality_json(found), "run_id": live.run_id}
        if live.save_error:
            doc["save_error"] = live.save_error
        printer.out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    else:
        printer.finish(outcome.text)
    if live.save_error:  # the text is above (or in the JSON); History does not have it
        err.write(f"{outcome.verdict.headline(outcome.request.count_unit)}\n")
        err.write(f"capel_ui: error: this run {live.save_error}; the text printed above is the only copy\n")
        return EXIT_BACKEND
    if interrupted:
        err.write(f"interrupted: kept {outcome.count} {unit} that arrived{_saved(live)}\n")
        return EXIT_INTERRUPTED
    tokens = f" · {outcome.completion_tokens} tokens" if outcome.completion_tokens else ""
    headline = outcome.verdict.headline(outcome.request.count_unit)
    most = live.view().max_calls
    calls = f" · {outcome.calls} of {most} calls" if most > 1 else ""
    said = f" · {ending}" if ending else ""
    mode = _mode_said(args, outcome.request.mode)
    err.write(f"{headline}{said}{mode} · {outcome.seconds:.1f} s{tokens}{calls}{_saved(live)}\n")
    for note in found.notes:
        err.write(f"warning: {note}\n")
    if found.junk:
        err.write(f"warning: {ONE_JUNK}\n")
    if outcome.faithfulness is not None:
        route = live.view().rewrite_route  # which route ran, said whatever the mode
        err.write(f"rewrite{f' ({route})' if route else ''}: {outcome.faithfulness.describe()}\n")
    if outcome.notice and (outcome.calls > 1 or outcome.left_out is not None):  # a repair, or words left out
        err.write(f"note: {outcome.notice}\n")
    if outcome.failure:
        err.write(f"capel_ui: error: {outcome.failure}\n")
        return EXIT_MISS if is_answer(outcome.failure_kind) else EXIT_BACKEND
    return EXIT_OK if outcome.verified else EXIT_MISS


def _quality_json(found: Assessment) -> dict[str, object]:
    """`score`, `ending` and `warnings` of the text's assessment, for `generate --json` (the same as a variant's)."""
    return {"score": found.score, "ending": found.ending, "warnings": found.messages}


def _saved(live: LiveRun) -> str:
    return f" · saved as run {live.run_id}" if live.run_id is not None else ""


def _engine() -> Engine:
    """The History database, migrated, its old runs judged once; a broken one is a failure that names the file
    (StorageError)."""
    from .runs import store

    return store()


def cmd_history(args: argparse.Namespace, out: TextIO) -> int:
    from .history import history_table, run_json, show_run
    from .storage import get_run, list_runs, runs_to_csv

    engine = _engine()
    if args.history_command == "reassess":
        from .runs import assess_saved

        out.write(f"judged {assess_saved(engine, every=True)} run(s) again with today's rules\n")
        return EXIT_OK
    if args.history_command == "show":
        run = get_run(engine, args.run_id)
        if run is None:
            raise UsageError(f"no run {args.run_id}; `python -m capel_ui history` lists the saved runs")
        out.write(json.dumps(run_json(run), ensure_ascii=False) + "\n" if args.show_json else show_run(run))
        return EXIT_OK
    runs = list_runs(
        engine,
        model=args.model,
        mode=args.mode,
        origin=args.origin,
        lang=args.lang,
        verified_only=args.verified,
        search=args.search,
        limit=None if args.csv else args.limit,
    )
    if args.csv:
        data = runs_to_csv(runs)
        if args.csv == "-":
            out.write(data)
        else:
            try:
                Path(args.csv).write_text(data, encoding="utf-8-sig", newline="")
            except OSError as exc:
                raise UsageError(f"cannot write {args.csv}: {exc.strerror or exc}") from None
        return EXIT_OK
    if args.json:
        out.writelines(json.dumps(run_json(r), ensure_ascii=False) + "\n" for r in runs)
    else:
        out.write(history_table(runs))
    return EXIT_OK


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
            return cmd_count(args, stdout, stdin, stderr)
        if args.command == "check":
            return cmd_check(args, stdout, stdin)
        if args.command == "generate":
            return cmd_generate(args, stdout, stderr, stdin)
        if args.command == "history":
            return cmd_history(args, stdout)
        return args.handler(args, stdout, stderr)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM outside a run (a run says what it kept itself); first, so a
        # signal that cut an import short is never followed by the half-imported module of the clauses below
        stderr.write("capel_ui: interrupted\n")
        return EXIT_INTERRUPTED
    except SystemExit:  # argparse's --help and usage lines: before the clauses below, which import the database
        raise
    except UsageError as exc:
        stderr.write(f"capel_ui: error: {_redact(str(exc))}\n")
        return EXIT_USAGE
    except _storage_error() as exc:
        stderr.write(f"capel_ui: error: {_redact(str(exc))}\n")
        return EXIT_BACKEND
    except _database_fault() as exc:  # refused under a command that keeps nothing unsaved (bench, history)
        from .storage import database_fault

        stderr.write(f"capel_ui: error: {_redact(str(database_fault(exc)))}\n")
        return EXIT_BACKEND
    except Exception as exc:  # a bug of ours: one line, and the traceback only when asked for
        if cut_short(exc):  # an interrupt Python wrapped (a class being made when it came)
            stderr.write("capel_ui: interrupted\n")
            return EXIT_INTERRUPTED
        if os.environ.get("CAPEL_DEBUG"):
            raise
        stderr.write(f"capel_ui: error: unexpected {type(exc).__name__}: {_redact(str(exc))} ({UNEXPECTED_HINT})\n")
        return EXIT_BACKEND


UNEXPECTED_HINT = "this is a bug in CAPEL Studio; run again with CAPEL_DEBUG=1 for the traceback, and report it"


def _redact(message: str) -> str:
    """An error line without URL credentials (a --base-url or DATABASE_URL with a password in it)."""
    from .redact import redact

    return redact(message)


def _database_fault() -> type[Exception]:
    """An error the database raised (not a bug of ours), imported only once an exception reaches that `except`
    (see `_storage_error`)."""
    from sqlalchemy.exc import DBAPIError

    return DBAPIError


def _storage_error() -> type[Exception]:
    """StorageError, imported only once an exception reaches that `except` (Python evaluates it then): storage
    loads SQLAlchemy, which `count`, `check` and `prompt` never need."""
    from .storage import StorageError

    return StorageError

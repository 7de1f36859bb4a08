"""Every grammar the app can send, for every target 1..N (default 500), checked with LLGuidance (the engine behind
OpenAI's grammar tools): it compiles, admits a text of exactly N units and refuses N-1 and N+1. Prints the time
per form.

The unit tests (tests/test_grammar_syntaxes.py) sample targets; this walks all of them (a few minutes on 2 cores):

    .venv/bin/python benchmarks/grammars.py            # 1..500
    .venv/bin/python benchmarks/grammars.py --max 100
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capel_ui.grammar import countdown_rules, exact_rules
from tests.llg import accepts

FORMS = ("gbnf", "lark", "regex", "json_schema")


def text(mode: str, lang: str, n: int) -> str:
    """A plain text of `n` units the mode's grammar admits ("" for none)."""
    if n == 0:
        return ""
    units = ["w"] * (n - 1) + ["end."] if lang == "en" else ["字"] * (n - 1) + ["完。"]
    if mode == "exact":
        return (" " if lang == "en" else "").join(units)
    return "".join(f"<{n - i}>{u}" for i, u in enumerate(units)) + "<0>"


def check(n: int, seconds: dict[str, float]) -> list[str]:
    """The failures for target `n` (empty when every form of every grammar is right)."""
    failures = []
    for mode, build in (("exact", exact_rules), ("exact-countdown", countdown_rules)):
        for lang in ("en", "zh"):
            grammar = build(lang, n)  # type: ignore[arg-type]
            for form in FORMS:
                started = time.monotonic()
                source = json.dumps(grammar.json_schema()) if form == "json_schema" else grammar.render(form)  # type: ignore[arg-type]
                wire = (lambda s: json.dumps(s, ensure_ascii=False)) if form == "json_schema" else (lambda s: s)
                if not accepts(form, source, wire(text(mode, lang, n))):  # type: ignore[arg-type]
                    failures.append(f"{mode} {lang} {form} N={n}: refuses N units")
                for other in (n - 1, n + 1):
                    if accepts(form, source, wire(text(mode, lang, other))):  # type: ignore[arg-type]
                        failures.append(f"{mode} {lang} {form} N={n}: admits {other} units")
                seconds[form] = seconds.get(form, 0.0) + time.monotonic() - started
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=500, help="the largest target to check (default 500)")
    args = parser.parse_args()
    seconds: dict[str, float] = {}
    failures = [f for n in range(1, args.max + 1) for f in check(n, seconds)]
    for form, total in seconds.items():
        print(f"{form:12s} {total:7.1f} s for {args.max * 4} grammars ({1000 * total / (args.max * 4):.1f} ms each)")
    print("\n".join(failures) or f"all {args.max * 16} grammars compile and admit exactly N units")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

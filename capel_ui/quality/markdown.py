"""The rules table as a reader sees it (docs/quality.md is generated from `rules_markdown`)."""

from __future__ import annotations

import re

from .kinds import Kind
from .record import Context, Rule
from .rules import RULES

_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")


def _md(text: str) -> str:
    """`text` shown as itself in a Markdown table cell: marks escaped, on one line."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _example(rule: Rule, flagged: bool) -> str:
    """The rule's first text that it flags (or leaves alone), with what it was written for."""
    c: Context = rule.examples(flagged)[0]
    given = [f"asked: “{_md(c.own_text)}”"] if c.own_text else []
    given += [c.lang] if c.lang != "en" else []
    given += ["with the provider's note"] if c.language_note else []
    return f"“{_md(c.text)}”" + (f" ({'; '.join(given)})" if given else "")


def _penalty(kind: Kind) -> str:
    """The points a kind costs: once a text, or per share of its words."""
    if kind.word_penalty:
        return f"{kind.word_penalty:g} × share of words"
    return f"{kind.penalty:g}" if kind.penalty else "0"


def rules_markdown() -> str:
    """Every rule as a Markdown table: its kind, what it flags, the points it costs, whether it makes a text junk, and
    one text it flags and one a writer wrote that it leaves alone."""
    lines = [
        "| Kind | What it flags | Points off | Junk | Flags, e.g. | Leaves alone, e.g. |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rule in RULES:
        cells = (
            rule.kind.name,
            _md(rule.about),
            _penalty(rule.kind),
            "yes" if rule.kind.junk else "no",
            _example(rule, True),
            _example(rule, False),
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"

"""The package's import layers, lowest first: a module may import its own layer and the layers below it, never one
above. Pure data, so that the rule and its documentation cannot drift apart: tests/test_layers.py enforces it and
scripts/docs.py prints it as the layer table of docs/architecture.md. A new module goes into one layer here (then
run `.venv/bin/python scripts/docs.py` to refresh that table)."""

from __future__ import annotations

from typing import NamedTuple


class Layer(NamedTuple):
    name: str
    modules: tuple[str, ...]
    """Module names or package prefixes (`capel_ui.backends` holds every module under it); the longest match wins."""
    holds: str
    """What a reader finds there, in one line."""


LAYERS: tuple[Layer, ...] = (
    Layer(
        "words",
        (
            "capel_ui",
            "capel_ui.vocab",
            "capel_ui.redact",
            "capel_ui.cliargs",
            "capel_ui.interrupts",
            "capel_ui.layers",
            "capel_ui.keep",
        ),
        "the names every module shares (languages, units, modes, statuses, exit codes), key masking, argument checks",
    ),
    Layer(
        "text",
        (
            "capel_ui.prompts",
            "capel_ui.verdict",
            "capel_ui.expr",
            "capel_ui.lexicon",
            "capel_ui.counting",
            "capel_ui.grammar",
            "capel_ui.parser",
            "capel_ui.ending",
            "capel_ui.quality",
            "capel_ui.assessment",
            "capel_ui.rewrite",
            "capel_ui.clauses",
            "capel_ui.clauses_zh",
            "capel_ui.facts",
            "capel_ui.metrics",
            "capel_ui.presets",
            "capel_ui.local_models",
            "capel_ui.runview",
            "capel_ui.storage",
        ),
        "what a text is, without a model: counting, prompts, the marker parser, the verdict, grammars, word lists, "
        "endings, quality, rewriting, facts, metrics, presets, the database",
    ),
    Layer("backends", ("capel_ui.backends",), "talking to models: one Backend interface, one module per provider"),
    Layer("request", ("capel_ui.request",), "what the writer asked for (Request), its checks and its output budget"),
    Layer(
        "run parts",
        (
            "capel_ui.repair",
            "capel_ui.call",
            "capel_ui.plan",
            "capel_ui.limits",
            "capel_ui.planned",
            "capel_ui.outcome",
            "capel_ui.judge",
        ),
        "the pieces of one run: its plan, calls, stops, repair, ending planner, outcome and judge",
    ),
    Layer("run", ("capel_ui.generation",), "one run (Generation): its calls and their stream, prompt to verdict"),
    Layer(
        "runs",
        ("capel_ui.runs", "capel_ui.history", "capel_ui.export", "capel_ui.variants"),
        "runs as saved and read: the lifecycle, History, exports, variants",
    ),
    Layer("service", ("capel_ui.service",), "the one way every surface starts a run"),
    Layer(
        "surfaces",
        (
            "capel_ui.cli",
            "capel_ui.__main__",
            "capel_ui.command",
            "capel_ui.forkserver",
            "capel_ui.models_cli",
            "capel_ui.doctor",
            "capel_ui.bench",
            "capel_ui.batch",
            "capel_ui.ui",
        ),
        "what people use: the commands of `python -m capel_ui` and the Streamlit pages (`ui/`, the only streamlit "
        "importer)",
    ),
)

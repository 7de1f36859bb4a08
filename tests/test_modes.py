"""One rule for the modes a model can run and the default among them (`service.modes_for`), as the CLI, a rewrite, a
batch row, Write and Compare all take it."""

from __future__ import annotations

import pytest

from capel_ui.backends import Capabilities, ProbeResult
from capel_ui.service import modes_for, modes_for_model

LLAMA = Capabilities(grammar_field="grammar")
STRICT_JSON = Capabilities(grammar_field="json_schema", json_object=True)
NONE = Capabilities()


@pytest.mark.parametrize(
    ("caps", "unit", "kind", "rewrite", "default"),
    [
        (LLAMA, "en_words", "exactly", False, "exact"),
        (LLAMA, "en_words", "at_most", False, "exact"),
        (STRICT_JSON, "en_words", "exactly", False, "exact"),  # a hosted model with a grammar: the guarantee too
        (NONE, "en_words", "exactly", False, "capel"),
        (NONE, "en_words", "at_most", False, "capel"),  # the room countdown
        (NONE, "chars", "at_most", False, "baseline"),  # the room in characters: offered, never the default
        (LLAMA, "en_words", "at_most", True, "exact"),  # a rewrite on llama.cpp keeps whole clauses of the writer's
        (STRICT_JSON, "en_words", "at_most", True, "baseline"),  # elsewhere the plain rewrite prompt
        (NONE, "en_words", "at_most", True, "baseline"),
    ],
)
def test_the_default_mode_is_the_best_this_model_can_do(
    caps: Capabilities, unit: str, kind: str, rewrite: bool, default: str
) -> None:
    found = modes_for(caps, "en", unit, kind, rewrite=rewrite)  # type: ignore[arg-type]
    assert found.default == default
    assert found.default in found.modes


def test_a_model_without_a_grammar_is_offered_no_guaranteed_mode_and_told_why() -> None:
    found = modes_for(NONE, "en", "en_words", "exactly")
    assert "exact" not in found.modes and "capel" in found.modes
    assert found.why_not and "grammar" in found.why_not
    assert found.skipped["exact"]


def test_a_server_whose_probe_saw_its_grammar_ignored_gets_no_guaranteed_mode() -> None:
    ignored = ProbeResult(False, "Not guaranteed: this server ignored the grammar.", True)
    found = modes_for(LLAMA, "en", "en_words", "exactly", probed=ignored)
    assert "exact" not in found.modes and found.default == "capel"
    assert found.why_not == ignored.reason


@pytest.mark.parametrize(
    ("model", "base_url", "field", "rewrite", "default"),
    [
        ("embedded", None, None, False, "exact"),
        ("embedded", None, None, True, "exact"),
        ("/m/qwen.gguf", None, None, True, "exact"),
        ("x", "http://127.0.0.1:9/v1", "grammar", True, "exact"),
        ("gpt-5", None, None, True, "baseline"),
        ("no-such-model", None, None, False, "capel"),  # one the registry cannot place takes no grammar
    ],
)
def test_a_model_named_on_the_command_line_or_in_a_row_gets_the_same_rule(
    model: str, base_url: str | None, field: str | None, rewrite: bool, default: str
) -> None:
    found = modes_for_model(model, "en", "en_words", "at_most", base_url=base_url, grammar_field=field, rewrite=rewrite)
    assert found.default == default

"""The one way to start a run (`capel_ui.service`): every surface's bad input, refused mode, variants group and
judge go through it, so they behave the same on the CLI, the bench and the pages (the in-process scripted model,
real SQLite files; the grammar probe, which reads what a server did with a grammar field, on the scripted server
on 127.0.0.1)."""

from __future__ import annotations

import io
import os
from typing import Any

import pytest

from capel_ui.backends import Backend, ScriptedBackend, get_backend
from capel_ui.bench.runner import BenchConfig, run_bench
from capel_ui.cli import main
from capel_ui.generation import Request
from capel_ui.service import start, together
from capel_ui.storage import get_engine, get_run, list_runs
from capel_ui.verdict import Target
from capel_ui.vocab import MARKER_LIMITS
from tests.scripted_server import MODEL, ScriptedServer, honour_grammar, ok

GOOD = "Lighthouses guide ships home."


def engine():
    return get_engine(os.environ["DATABASE_URL"])


def scripted_backend() -> Backend:
    """The staged in-process scripted model, inside the guard every provider gets."""
    return get_backend("scripted")


def server_backend(scripted: ScriptedServer, grammar_field: str | None = None) -> Backend:
    return get_backend(MODEL, provider="compatible", base_url=scripted.url, grammar_field=grammar_field)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), stdin=io.StringIO(), stdout=out, stderr=err), out.getvalue(), err.getvalue()


def never_built() -> Backend:
    raise AssertionError("the model was built for a request that was bad input")


@pytest.mark.parametrize(
    ("target", "fields"),
    [
        (Target.exactly(12), {}),
        (Target.at_most(280), {"unit": "chars", "mode": "exact"}),
        (Target.between(10, 12), {"mode": "baseline"}),
    ],
)
def test_a_request_carries_its_target_whole(target: Target, fields: dict[str, Any]) -> None:
    request = Request.of(target, "Write.", **fields)
    assert request.target_spec == target and request.instruction == "Write."
    assert {k: getattr(request, k) for k in fields} == fields


# ----- bad input: one message, on every surface, before any model is built ------------------------------------


@pytest.mark.parametrize(
    ("argv", "request_fields", "message"),
    [
        (["--target", "5", " "], {"target": Target.exactly(5), "instruction": " "}, "the instruction is empty"),
        (
            ["--target", "5", "--unit", "chars", "--mode", "capel", "Sea"],
            {"target": Target.exactly(5), "instruction": "Sea", "unit": "chars"},
            MARKER_LIMITS,
        ),
        (
            ["--target", "5", "--mode", "exact", "--lang", "zh", "--unit", "zh_words", "海"],
            {"target": Target.exactly(5), "instruction": "海", "mode": "exact", "lang": "zh", "unit": "zh_words"},
            "exact mode guarantees",
        ),
    ],
    ids=["empty_instruction", "markers_on_characters", "unguaranteed_unit"],
)
def test_bad_input_is_the_same_message_on_the_cli_and_the_service_and_nothing_starts(
    scripted_model: ScriptedBackend, argv: list[str], request_fields: dict[str, Any], message: str
) -> None:
    fields = dict(request_fields)
    request = Request.of(fields.pop("target"), fields.pop("instruction"), mode=fields.pop("mode", "capel"), **fields)
    with pytest.raises(ValueError) as bad:
        start(request, never_built, engine(), origin="write")
    assert message in str(bad.value)
    code, out, err = cli("generate", "--model", "scripted", *argv)
    assert (code, out, err) == (2, "", f"capel_ui: error: {bad.value}\n")
    assert scripted_model.requests == [] and list_runs(engine()) == []


def test_a_mode_the_model_cannot_serve_is_refused_alike_by_the_cli_the_service_and_the_bench(
    scripted_model: ScriptedBackend,
) -> None:
    request = Request("Sea", 5, mode="exact")
    with pytest.raises(ValueError, match="does not take a grammar") as refused:
        start(request, scripted_backend(), engine(), origin="compare")
    code, _, err = cli("generate", "--model", "scripted", "--mode", "exact", "--target", "5", "Sea")
    assert (code, err) == (2, f"capel_ui: error: {refused.value}\n")
    config = BenchConfig(suite="mtbench", model="scripted", modes=("exact",), lengths=(5,), limit=1)
    with pytest.raises(ValueError, match="does not take a grammar"):
        run_bench(config, backend=scripted_backend(), engine=engine())
    assert scripted_model.requests == [] and list_runs(engine()) == []


# ----- a guaranteed mode refused by the probe's answer, the same way everywhere ---------------------------------


def test_a_server_that_ignored_its_grammar_is_refused_with_one_message_on_every_surface_after_one_probe(
    scripted: ScriptedServer,
) -> None:
    scripted.script(honour_grammar(("grammar",)))  # llama.cpp-like: silently ignores `ebnf`
    with pytest.raises(ValueError, match="ignored the `ebnf` grammar") as refused:
        start(Request("Sea", 5, mode="exact"), server_backend(scripted, "ebnf"), engine(), origin="write")
    line = f"capel_ui: error: {refused.value}\n"
    server = ["--model", MODEL, "--base-url", scripted.url, "--grammar-field", "ebnf"]
    assert cli("generate", *server, "--mode", "exact", "--target", "5", "Sea") == (2, "", line)
    bench = ["bench", "--suite", "mtbench", *server, "--modes", "exact", "--lengths", "5", "--limit", "1"]
    assert cli(*bench) == (2, "", line)
    assert len(scripted.chat_requests) == 1  # the probe, asked once; no run started
    assert list_runs(engine()) == []


def test_a_countdown_mode_on_that_server_is_not_probed_and_runs(scripted: ScriptedServer) -> None:
    scripted.script(ok(["<2>Sea", "<1>wind", "<0>"]))
    handle = start(Request("Sea", 2, mode="capel"), server_backend(scripted, "ebnf"), engine(), origin="write")
    assert handle.run().verified and len(scripted.chat_requests) == 1


# ----- runs, variants and the judge ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "origin", "comparison_id", "origins"),
    [(1, "write", None, {"write"}), (1, "compare", "c1", {"compare"}), (3, "cli", None, {"variant"})],
)
def test_k_runs_are_saved_as_one_group_and_one_run_as_itself(
    scripted_model: ScriptedBackend, k: int, origin: str, comparison_id: str | None, origins: set[str]
) -> None:
    scripted_model.reply(GOOD)
    request = Request("Describe a lighthouse", 4, mode="baseline")
    handle = start(request, scripted_backend(), engine(), origin=origin, variants=k, comparison_id=comparison_id)  # type: ignore[arg-type]
    assert [r.status for r in list_runs(engine())] == ["running"] * k  # saved as they start
    handle.run_together()
    runs = list_runs(engine())
    assert len(runs) == k and {r.origin for r in runs} == origins and {r.status for r in runs} == {"complete"}
    assert {r.group_id for r in runs} == {handle.group_id} and (handle.group_id is None) == (k == 1)
    assert {r.comparison_id for r in runs} == {comparison_id}
    assert [c.run_id for c in handle.result()] != [] and all(c.score is not None for c in handle.result())


@pytest.mark.parametrize("k", [1, 2])
def test_the_judge_rates_each_run_once_and_the_rating_is_stored(scripted_model: ScriptedBackend, k: int) -> None:
    scripted_model.reply(GOOD, "Lighthouses guide ships safely.")  # two texts: identical variants are one choice
    judge = ScriptedBackend("Vivid. Rating: [[8]]", model="judge-model", label="Judge model")
    handle = start(
        Request("Describe a lighthouse", 4, mode="baseline"), scripted_backend(), engine, origin="cli",
        variants=k, judge=lambda: judge,
    )  # fmt: skip
    handle.run_together()
    assert [c.judge_score for c in handle.result()] == [8.0] * k
    handle.result()  # asked again: the ratings are not asked for twice
    assert len(judge.requests) == k and len(scripted_model.requests) == k
    for c in handle.result():
        run = get_run(engine(), c.run_id)
        assert (run.judge_score, run.judge_model) == (8.0, judge.label)


def test_a_run_with_no_text_is_not_judged_and_no_save_keeps_nothing(scripted_model: ScriptedBackend) -> None:
    scripted_model.reply([])
    judge = ScriptedBackend("Rating: [[8]]", model="judge-model", label="Judge model")
    handle = start(Request("Sea", 4, mode="baseline"), scripted_backend(), None, origin="cli", judge=judge)
    handle.run()
    [best] = handle.result()
    assert best.judge_score is None and best.run_id is None and len(scripted_model.requests) == 1
    assert judge.requests == []
    assert list_runs(engine()) == []


def test_columns_started_apart_run_together_under_one_comparison(scripted_model: ScriptedBackend) -> None:
    scripted_model.reply(GOOD)
    backend = scripted_backend()
    handles = [
        start(Request("Describe a lighthouse", 4, mode=mode), backend, engine(), origin="compare", comparison_id="c9")
        for mode in ("baseline", "capel")
    ]
    columns = together(handles)
    assert len(columns.run_together()) == 2
    assert sorted(r.mode for r in list_runs(engine(), comparison_id="c9")) == ["baseline", "capel"]


def test_write_runs_a_guaranteed_mode_through_the_service_on_the_probes_cached_answer(app_test, scripted) -> None:
    scripted.script(honour_grammar(("grammar",)), ok(["Waves ", "fold ", "over ", "old ", "stones."]))
    at = app_test
    at.selectbox(key="provider").set_value("compatible").run()
    at.text_input(key="compat_url").input(scripted.url)
    at.text_input(key="compat_model").input(MODEL)
    at.selectbox(key="compat_grammar").set_value("grammar").run()
    at.text_area(key="w_instruction").input("Write about the sea.")
    at.number_input(key="w_target").set_value(5)
    at.selectbox(key="w_mode").set_value("exact")
    [go] = [b for b in at.button if b.label == "Generate"]
    go.click()
    at.run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert len(scripted.chat_requests) == 2  # the page's probe, then the run: the service asked no second probe
    [run] = list_runs(engine())
    assert (run.origin, run.mode, run.text, run.verified) == ("write", "exact", "Waves fold over old stones.", True)

"""The benchmark runner and `bench` CLI against real backends: the embedded model, a closed port, a scripted server.

The database is a SQLite file in the test's folder (conftest sets DATABASE_URL).
"""

from __future__ import annotations

import io
import json
import re
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from capel_ui import storage
from capel_ui.backends import (
    Backend,
    Capabilities,
    Options,
    ScriptedBackend,
    Turn,
    get_backend,
    staged,
)
from capel_ui.bench.cli import ProgressLine
from capel_ui.bench.runner import (
    STOP_GRACE,
    BenchConfig,
    bench_key,
    list_runs,
    load_rows,
    parse_modes,
    run_bench,
    run_results,
)
from capel_ui.bench.suites import load_suite
from capel_ui.cli import main
from capel_ui.prompts import Message
from tests.scripted_server import ScriptedServer, hang, honour_grammar, ok


def closed_port_backend() -> Backend:
    """A compatible backend pointed at a 127.0.0.1 port nobody listens on (no retries, to stay quick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return get_backend("nobody", provider="compatible", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)


@pytest.fixture
def engine():
    return storage.get_engine()


EXACT = BenchConfig(suite="lifebench", model="embedded", modes=("exact",), lengths=(16,), limit=2)


# ----- settings --------------------------------------------------------------------------------------------------


def test_modes_parse_in_the_apps_order_and_unknown_ones_are_named() -> None:
    assert parse_modes("exact,baseline") == ("baseline", "exact")
    with pytest.raises(ValueError, match=r"unknown mode.*fast.*use one or more of capel"):
        parse_modes("baseline,fast")


def test_run_key_is_stable_for_the_same_command_and_differs_otherwise() -> None:
    suite = load_suite("lifebench", lengths=[16], limit=2)
    same = BenchConfig(suite="lifebench", modes=("exact", "baseline"), lengths=(16,), limit=2)
    reordered = BenchConfig(suite="lifebench", modes=("baseline", "exact"), lengths=(16,), limit=2)
    other_seed = BenchConfig(suite="lifebench", modes=("baseline", "exact"), lengths=(16,), limit=2, seed=3)
    assert bench_key(same, suite) == bench_key(reordered, suite)
    assert bench_key(same, suite) != bench_key(other_seed, suite)
    assert len(bench_key(same, suite)) == 64
    default = BenchConfig(suite="lifebench", modes=("exact",))
    explicit = BenchConfig(suite="lifebench", modes=("exact",), lengths=(16, 32, 64, 128))
    assert bench_key(default, load_suite("lifebench")) == bench_key(explicit, load_suite("lifebench"))


def test_exact_modes_on_a_backend_without_grammar_are_refused_before_any_sample(engine) -> None:
    config = BenchConfig(suite="lifebench", model="nobody", modes=("exact",), lengths=(16,), limit=1)
    with pytest.raises(ValueError, match="does not take a grammar"):
        run_bench(config, backend=closed_port_backend(), engine=engine)
    assert storage.list_bench_runs(engine) == []


# ----- failures are recorded -------------------------------------------------------------------------------------


def test_an_unreachable_backend_is_an_error_row_per_sample_never_dropped(engine) -> None:
    config = BenchConfig(suite="lifebench", model="nobody", modes=("baseline", "capel"), lengths=(16,), limit=2)
    out = run_bench(config, backend=closed_port_backend(), engine=engine)
    assert (out.status, out.total, out.generated, out.failed) == ("complete", 4, 4, 4)
    records = run_results(engine, [out.bench_run_id])
    assert len(records) == 4
    assert {r.status for r in records} == {"error"}
    assert all("unreachable: Could not connect to http://127.0.0.1:" in (r.error_message or "") for r in records)


def test_a_stream_cut_half_way_is_an_error_that_keeps_its_text(engine, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply(Turn(("One two three",), fail="cut"), "Four five six seven.")
    backend = get_backend("scripted", max_retries=0)
    config = BenchConfig(suite="mtbench", model="scripted", modes=("baseline",), lengths=(4,), limit=2)
    out = run_bench(config, backend=backend, engine=engine)
    first, second = run_results(engine, [out.bench_run_id])
    assert first.status == "error" and first.error_message.startswith("cut: ") and first.text == "One two three"
    assert second.status == "ok" and second.count == 4 and second.exact


def test_stopping_keeps_finished_results_and_marks_the_run_interrupted(engine, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply("a b c.")
    backend = get_backend("scripted", max_retries=0)
    config = BenchConfig(suite="mtbench", model="scripted", modes=("baseline",), lengths=(3,), limit=4)
    stop = threading.Event()

    def progress(done: int, total: int, eta: float | None) -> None:
        if done >= 1:
            stop.set()

    out = run_bench(config, backend=backend, engine=engine, progress=progress, stop=stop)
    assert (out.status, out.generated) == ("interrupted", 1)
    assert storage.get_bench_run(engine, out.bench_run_id).status == "interrupted"
    resumed = run_bench(config, backend=backend, engine=engine)
    assert resumed.bench_run_id == out.bench_run_id
    assert (resumed.status, resumed.skipped, resumed.generated) == ("complete", 1, 3)


def test_ctrl_c_keeps_finished_results_and_marks_the_run_interrupted(engine, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply("a b c.")
    backend = get_backend("scripted", max_retries=0)
    config = BenchConfig(suite="mtbench", model="scripted", modes=("baseline",), lengths=(3,), limit=3)

    def progress(done: int, total: int, eta: float | None) -> None:
        if done >= 1:
            raise KeyboardInterrupt  # where Ctrl-C lands: the main thread, between samples

    out = run_bench(config, backend=backend, engine=engine, progress=progress)
    assert out.status == "interrupted"
    assert len(run_results(engine, [out.bench_run_id])) == 1
    assert storage.get_bench_run(engine, out.bench_run_id).status == "interrupted"


# ----- the real embedded model ---------------------------------------------------------------------------------


def sixteen_units(messages: Sequence[Message], options: Options) -> str:
    """16 English words or 16 Chinese characters, as the sample's language asks (a model that always obeys)."""
    asked = messages[-1]["content"]
    return "春" * 16 + "。" if re.search(r"[\u4e00-\u9fff]", asked) else " ".join(["word"] * 16) + "."


def test_results_are_saved_and_a_second_run_generates_nothing(engine) -> None:
    backend = ScriptedBackend(sixteen_units, capabilities=Capabilities(grammar_field="grammar"))
    seen: list[tuple[int, int]] = []
    first = run_bench(EXACT, backend=backend, engine=engine, progress=lambda d, t, eta: seen.append((d, t)))
    assert (first.status, first.total, first.generated, len(backend.requests)) == ("complete", 2, 2, 2)
    assert all(options.grammar is not None for _, options in backend.requests)
    assert seen[0] == (0, 2) and seen[-1] == (2, 2)
    records = run_results(engine, [first.bench_run_id])
    assert [(r.item_id, r.lang, r.target, r.mode, r.status) for r in records] == [
        ("1", "en", 16, "exact", "ok"),
        ("2", "zh", 16, "exact", "ok"),
    ]
    assert all(r.count == 16 and r.exact and r.text and r.completion_tokens for r in records)
    run = storage.get_bench_run(engine, first.bench_run_id)
    assert (run.suite, run.model, run.modes, run.lengths, run.limit, run.status) == (
        "lifebench",
        "embedded",
        "exact",
        "16",
        2,
        "complete",
    )

    second = run_bench(EXACT, backend=backend, engine=engine)
    assert len(backend.requests) == 2  # nothing generated again
    assert (second.bench_run_id, second.skipped, second.generated) == (first.bench_run_id, 2, 0)
    assert len(run_results(engine, [first.bench_run_id])) == 2


def test_two_requests_are_in_flight_with_concurrency_two(engine) -> None:
    both_in_flight = threading.Barrier(2, timeout=10)  # breaks (and the samples fail) if only one is ever in flight

    def answer(messages: Sequence[Message], options: Options) -> str:
        both_in_flight.wait()
        return sixteen_units(messages, options)

    backend = ScriptedBackend(answer, capabilities=Capabilities(grammar_field="grammar"))
    config = BenchConfig(suite="lifebench", model="embedded", modes=("exact",), lengths=(16,), limit=2, concurrency=2)
    out = run_bench(config, backend=backend, engine=engine)
    assert (out.status, out.generated, len(backend.requests)) == ("complete", 2, 2)
    assert all(r.status == "ok" and r.count == 16 for r in run_results(engine, [out.bench_run_id]))


@pytest.mark.model
def test_a_prompt_too_long_for_the_model_is_one_error_among_scored_samples(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    rows = [
        {"id": "short", "instruction": "Describe a quiet morning.", "lang": "en", "target": 16},
        {"id": "huge", "instruction": "word " * 40000, "lang": "en", "target": 16},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    argv = ["bench", "--suite", "custom", "--file", str(path), "--modes", "exact", "--json"]
    code = main(argv, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    payload = json.loads(out.getvalue())
    (row,) = [r for r in payload["results"] if r["target"] == 16]
    assert (row["n"], row["samples"], row["em"], row["errors"]) == (1, 2, 1.0, {"backend": 1})
    records = run_results(None, [payload["bench_run_id"]])
    huge = next(r for r in records if r.item_id == "huge")
    assert huge.status == "error" and huge.error_message.startswith("context: ")


# ----- the CLI -------------------------------------------------------------------------------------------------


def test_cli_json_prints_one_object_whose_results_are_the_documented_rows() -> None:
    out, err = io.StringIO(), io.StringIO()
    model = ScriptedBackend(sixteen_units, capabilities=Capabilities(grammar_field="grammar"))
    argv = [
        "bench",
        "--suite",
        "lifebench",
        "--model",
        "scripted",
        "--modes",
        "exact",
        "--lengths",
        "16",
        "--limit",
        "2",
        "--json",
    ]
    with staged(model):
        assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
    payload = json.loads(out.getvalue())
    assert payload["status"] == "complete" and payload["samples"] == 2 and payload["stored"] == 2
    rows = payload["results"]
    assert [(r["mode"], r["lang"], r["target"]) for r in rows] == [
        ("exact", "en", 16),
        ("exact", "en", None),
        ("exact", "zh", 16),
        ("exact", "zh", None),
    ]
    keys = {"model", "mode", "lang", "target", "n", "em", "mae", "mald", "ld", "ls", "errors", "seconds"}
    for row in rows:
        assert keys <= set(row)
        assert (row["model"], row["n"], row["em"], row["mald"], row["ld"], row["ls"], row["errors"]) == (
            "scripted",
            1,
            1.0,
            0.0,
            0.0,
            100.0,
            {},
        )
    assert "bench" in err.getvalue()  # the progress line went to stderr, not into the JSON


def test_cli_exits_3_with_the_table_when_every_sample_failed() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out, err = io.StringIO(), io.StringIO()
    argv = [
        "bench",
        "--suite",
        "mtbench",
        "--model",
        "nobody",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--modes",
        "baseline",
        "--lengths",
        "50",
        "--limit",
        "2",
        "--concurrency",
        "2",
    ]
    assert main(argv, stdout=out, stderr=err) == 3
    table = out.getvalue()
    assert "baseline" in table and "0/2" in table and "backend:2" in table
    assert "every sample failed" in err.getvalue() and "Could not connect" in err.getvalue()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--suite", "alpaca"], "unknown suite 'alpaca'; use one of rtg, lifebench, mtbench, custom"),
        (["--suite", "lifebench", "--modes", "fast"], "unknown mode(s) fast"),
        (["--suite", "lifebench", "--lengths", "50"], "LIFEBench uses the targets 16, 32"),
        (["--suite", "rtg", "--lengths", "0,20"], "lengths must be from 1 to 10000"),
        (["--suite", "rtg", "--concurrency", "0"], "concurrency must be at least 1"),
        (["--suite", "rtg", "--concurrency", "99"], "concurrency must be from 1 to 32"),
        (["--suite", "custom"], "needs --file"),
        (["--suite", "lifebench", "--limit", "0"], "limit must be at least 1"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(argv: list[str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["bench", *argv], stdout=out, stderr=err) == 2
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert out.getvalue() == ""


def test_rows_of_several_runs_pool_by_model_or_stay_apart_per_run(engine, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply("a b c.")
    backend = get_backend("scripted", max_retries=0)
    one = run_bench(
        BenchConfig(suite="mtbench", model="scripted", modes=("baseline",), lengths=(3,), limit=1),
        backend=backend,
        engine=engine,
    )
    two = run_bench(
        BenchConfig(suite="mtbench", model="scripted", modes=("baseline",), lengths=(3,), limit=2),
        backend=backend,
        engine=engine,
    )
    pooled = load_rows([one.bench_run_id, two.bench_run_id], engine)
    assert [(r["model"], r["target"], r["n"]) for r in pooled] == [("scripted", 3, 3), ("scripted", None, 3)]
    apart = load_rows([one.bench_run_id, two.bench_run_id], engine, per_run=True)
    assert [(r["model"], r["target"], r["n"], r["em"]) for r in apart] == [
        (f"scripted #{one.bench_run_id} mtbench", 3, 1, 1.0),
        (f"scripted #{one.bench_run_id} mtbench", None, 1, 1.0),
        (f"scripted #{two.bench_run_id} mtbench", 3, 2, 1.0),
        (f"scripted #{two.bench_run_id} mtbench", None, 2, 1.0),
    ]
    listed = list_runs(engine)
    assert [r.id for r in listed] == [two.bench_run_id, one.bench_run_id]
    assert [r.result_count for r in listed] == [2, 1]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_redraws_one_line_on_a_terminal() -> None:
    err = Terminal()
    bar = ProgressLine(err)
    bar(0, 4, None)
    bar(1, 4, 90.0)
    bar.close()
    text = err.getvalue()
    assert "\n" not in text
    assert text.count("\r\x1b[K") == 3
    assert "1/4 (25%) · ETA 1m30s" in text


def test_progress_prints_occasional_lines_when_not_a_terminal() -> None:
    err = io.StringIO()
    bar = ProgressLine(err)
    for done in range(101):
        bar(done, 100, 5.0)
    lines = err.getvalue().splitlines()
    assert 10 <= len(lines) <= 12  # one per tenth, not one per sample
    assert "\r" not in err.getvalue()
    assert lines[-1].startswith("bench ") and "100/100 (100%)" in lines[-1]


def test_a_stop_does_not_wait_out_a_request_that_sends_nothing(engine, scripted: ScriptedServer) -> None:
    scripted.script(ok("a b c."), hang(60.0))
    backend = get_backend("scripted", provider="compatible", base_url=scripted.url, max_retries=0)
    config = BenchConfig(suite="mtbench", model="scripted", modes=("baseline",), lengths=(3,), limit=3, concurrency=2)
    stop = threading.Event()

    def progress(done: int, total: int, eta: float | None) -> None:
        if done >= 1:
            stop.set()

    started = time.monotonic()
    out = run_bench(config, backend=backend, engine=engine, progress=progress, stop=stop)
    assert time.monotonic() - started < STOP_GRACE + 5
    assert (out.status, out.generated) == ("interrupted", 1)
    assert len(run_results(engine, [out.bench_run_id])) == 1


def test_an_answer_cut_at_the_output_limit_is_scored_with_a_note(engine, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply(Turn(("One two three four five",), finish_reason="length"))
    backend = get_backend("scripted", max_retries=0)
    config = BenchConfig(suite="mtbench", model="scripted", modes=("baseline",), lengths=(3,), limit=1)
    out = run_bench(config, backend=backend, engine=engine)
    (record,) = run_results(engine, [out.bench_run_id])
    assert (record.status, record.count, record.exact) == ("ok", 5, False)
    assert record.error_message.startswith("length: ")
    (row, _) = load_rows([out.bench_run_id], engine)
    assert (row["n"], row["mae"], row["errors"]) == (1, 2.0, {})


def test_cli_refuses_a_guaranteed_mode_on_a_server_that_ignored_its_grammar_field(scripted: ScriptedServer) -> None:
    scripted.script(honour_grammar(("grammar",)))  # llama.cpp-like: silently ignores `ebnf`
    argv = ["bench", "--suite", "mtbench", "--model", "m", "--base-url", scripted.url, "--grammar-field", "ebnf"]
    out, err = io.StringIO(), io.StringIO()
    assert main([*argv, "--modes", "baseline,exact", "--lengths", "5", "--limit", "1"], stdout=out, stderr=err) == 2
    assert "ignored the `ebnf` grammar" in err.getvalue() and out.getvalue() == ""
    assert len(scripted.chat_requests) == 1  # the probe; no sample ran

"""LIFEBench's three control methods (equal to, at most, at least) through the benchmark: the prompt's words, the
target each sample is generated for, the score, the table and charts, storage, resume and the CLI.

Real backends only: the scripted server (a stand-in vendor) and, where marked, the embedded model.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import pytest

from capel_ui import storage
from capel_ui.backends import Capabilities, Options, ScriptedBackend, get_backend
from capel_ui.bench.charts import HIT_TITLE, ls_heatmap, mald_em_figure
from capel_ui.bench.report import aggregate, format_table
from capel_ui.bench.runner import BenchConfig, bench_key, check_modes, request_for, run_bench, run_results, target_for
from capel_ui.bench.suites import fill_lifebench, load_suite
from capel_ui.cli import main
from capel_ui.generation import Generation
from capel_ui.metrics import at_least_score, at_most_score, length_score, lifebench_scores, meets, within
from capel_ui.prompts import Message
from capel_ui.verdict import Target
from capel_ui.vocab import BenchControl
from tests.llg import accepts


@pytest.fixture
def engine():
    return storage.get_engine()


def words(n: int) -> str:
    """A reply of n words (LIFEBench's counter counts each `w` once)."""
    return " ".join(["w"] * n) + "."


# ----- the prompt ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("control", "lang", "said"),
    [
        ("equal", "en", "must be equal to 16 words"),
        ("at_most", "en", "must be at most 16 words"),
        ("at_least", "en", "must be at least 16 words"),
        ("equal", "zh", "必须等于 16字"),
        ("at_most", "zh", "必须至多有 16字"),
        ("at_least", "zh", "必须至少有 16字"),
    ],
)
def test_lifebench_prompt_says_the_control_in_lifebenchs_own_words(control: BenchControl, lang: str, said: str) -> None:
    suite = load_suite("lifebench", lengths=[16], limit=2, control=control)
    item = next(i for i in suite.items if i.lang == lang)
    assert said in item.instruction
    assert "{word_count" not in item.instruction


@pytest.mark.parametrize(
    ("control", "lang", "filled"),
    [("equal", "en", "equal to 8"), ("at_most", "cn", "至多有 8"), ("at_least", "cn", "至少有 8")],
)
def test_fill_lifebench_replaces_both_placeholders(control: BenchControl, lang: str, filled: str) -> None:
    assert fill_lifebench("{word_count_type} {word_count} {kept}", lang, 8, control) == f"{filled} {{kept}}"


@pytest.mark.parametrize(
    ("suite", "control", "message"),
    [
        ("lifebench", "at_most_ish", "unknown control 'at_most_ish'; use one of equal, at_most, at_least"),
        ("rtg", "at_most", "the rtg suite asks for exactly N in its own words"),
    ],
)
def test_a_control_the_suite_cannot_ask_for_is_refused(suite: str, control: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_suite(suite, lengths=[16], limit=1, control=control)  # type: ignore[arg-type]


# ----- the target each sample is generated for -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("control", "n", "target"),
    [
        ("equal", 16, Target.exactly(16)),
        ("at_most", 16, Target.at_most(16)),
        ("at_least", 16, Target.between(16, 32)),
        ("at_least", 8192, Target.between(8192, 10_000)),  # the cap stops at the app's largest target
    ],
)
def test_each_control_generates_for_its_target(control: BenchControl, n: int, target: Target) -> None:
    assert target_for(control, n) == target


@pytest.mark.parametrize(
    ("control", "mode", "suffix"),
    [
        ("at_most", "baseline", "Please answer the instruction in at most 16 words."),
        ("at_least", "baseline", "Please answer the instruction in 16 to 32 words."),
        ("at_most", "exact", "Please answer the instruction in at most 16 words."),
    ],
)
def test_the_appended_instruction_states_the_controls_bound(
    control: BenchControl, mode: str, suffix: str, embedded
) -> None:
    suite = load_suite("lifebench", lengths=[16], limit=1, control=control)
    gen = Generation(embedded, request_for(suite.items[0], mode, suite, None, control=control))  # type: ignore[arg-type]
    assert gen.prompt.endswith(suffix)


@pytest.mark.parametrize("control", ["at_most", "at_least"])
def test_marker_modes_are_refused_for_a_bound_before_any_sample(control: BenchControl) -> None:
    suite = load_suite("lifebench", lengths=[16], limit=1, control=control)
    with pytest.raises(ValueError, match=r"capel cannot run the at (most|least) control.*use baseline or exact"):
        check_modes(suite, ("baseline", "capel"), None, control)


# ----- scoring ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("control", "count", "meets_it"),
    [
        ("equal", 16, True),
        ("equal", 15, False),
        ("at_most", 10, True),
        ("at_most", 16, True),
        ("at_most", 17, False),
        ("at_least", 40, True),
        ("at_least", 16, True),
        ("at_least", 15, False),
    ],
)
def test_a_count_meets_its_control(control: BenchControl, count: int, meets_it: bool) -> None:
    assert meets(control, 16, count) is meets_it


@pytest.mark.parametrize(
    ("control", "ls"),
    [
        # counts 8 (LD -0.5) and 24 (LD +0.5) for 16
        ("equal", (length_score(16, 8) + length_score(16, 24)) / 2),
        ("at_most", (100.0 + at_most_score(16, 24)) / 2),  # 8 is within the limit
        ("at_least", (at_least_score(16, 8) + 100.0) / 2),  # 24 reaches it
    ],
)
def test_length_score_is_the_controls_own_and_ld_is_the_same_for_all(control: BenchControl, ls: float) -> None:
    score = lifebench_scores([(16, 8), (16, 24)], control)
    assert score.ls == pytest.approx(ls)
    assert score.ld == pytest.approx(0.5)  # LIFEBench's LD is mean |LD| under every control


def test_within_is_the_share_meeting_the_control() -> None:
    pairs = [(16, 8), (16, 16), (16, 24)]
    assert (within(pairs, "equal"), within(pairs, "at_most"), within(pairs, "at_least")) == pytest.approx(
        (1 / 3, 2 / 3, 2 / 3)
    )


def rec(count: int, control: str | None, mode: str = "baseline") -> dict[str, Any]:
    row = {"model": "m", "mode": mode, "lang": "en", "target": 16, "status": "ok", "count": count, "errors": []}
    return row if control is None else {**row, "control": control}


def test_rows_keep_controls_apart_and_score_each_its_own_way() -> None:
    records = [rec(8, None), rec(24, None), rec(8, "at_most"), rec(24, "at_most"), rec(24, "at_least")]
    rows = {(r["control"], r["target"]): r for r in aggregate(records)}
    order = [(c, t) for c in ("equal", "at_most", "at_least") for t in (16, None)]
    assert list(rows) == order
    equal, at_most, at_least = rows[("equal", 16)], rows[("at_most", 16)], rows[("at_least", 16)]
    assert (equal["em"], equal["within"]) == (0.0, 0.0)
    assert equal["ls"] == pytest.approx((length_score(16, 8) + length_score(16, 24)) / 2)
    assert (at_most["em"], at_most["within"]) == (0.0, 0.5)  # EM stays count == target; within is ≤ 16
    assert at_most["ls"] == pytest.approx((100 + at_most_score(16, 24)) / 2)
    assert (at_least["within"], at_least["ls"]) == (1.0, 100.0)


def test_the_table_names_each_rows_control_and_a_within_column() -> None:
    table = format_table(aggregate([rec(8, "at_most"), rec(24, "at_most")]))
    header = table.splitlines()[1]
    assert header.split()[:2] == ["control", "mode"] and "within" in header.split()
    line = next(x for x in table.splitlines() if x.startswith("at_most  baseline") and " 16 " in x)
    assert "0.0%  50.0%" in line  # EM 0 (nothing hit 16 exactly), within 50% (8 is within the limit)


def test_charts_name_the_control_and_plot_within_once_a_bound_is_drawn() -> None:
    rows = aggregate([rec(8, None), rec(8, "at_most")])
    fig = mald_em_figure(rows)
    names = sorted({t.name for t in fig.data})
    assert names == ["At most · Baseline", "Equal to · Baseline"]
    assert fig.layout.annotations[1].text == HIT_TITLE
    hit = {t.name: list(t.y) for t in fig.data if t.xaxis == "x2"}
    assert hit == {"Equal to · Baseline": [0.0], "At most · Baseline": [1.0]}
    assert list(ls_heatmap(rows).data[0].y) == ["Equal to · Baseline", "At most · Baseline"]


def test_charts_of_equal_to_runs_alone_keep_their_names_and_exact_match_title() -> None:
    fig = mald_em_figure(aggregate([rec(16, None)]))
    assert {t.name for t in fig.data} == {"Baseline"}
    assert fig.layout.annotations[1].text == "Exact match ↑"


# ----- runs, storage and resume ----------------------------------------------------------------------------------


def lifebench(control: BenchControl, **kw: Any) -> BenchConfig:
    return BenchConfig(
        suite="lifebench", model="scripted", modes=("baseline",), lengths=(16,), limit=1, control=control, **kw
    )


def test_the_run_key_differs_per_control_and_equal_keeps_the_key_runs_had_before() -> None:
    suite = load_suite("lifebench", lengths=[16], limit=1)
    keys = {c: bench_key(lifebench(c), suite) for c in ("equal", "at_most", "at_least")}
    assert len(set(keys.values())) == 3
    assert keys["equal"] == bench_key(BenchConfig(suite="lifebench", model="scripted", modes=("baseline",),
                                                   lengths=(16,), limit=1), suite)  # fmt: skip


def test_an_at_most_run_is_scored_with_the_at_most_score_and_stored_with_its_control(
    engine, scripted_model: ScriptedBackend
) -> None:
    scripted_model.reply(words(10))
    backend = get_backend("scripted", max_retries=0)
    out = run_bench(lifebench("at_most"), backend=backend, engine=engine)
    assert "must be at most 16 words" in scripted_model.requests[-1][0][-1]["content"]
    assert storage.get_bench_run(engine, out.bench_run_id).control == "at_most"
    (record,) = run_results(engine, [out.bench_run_id])
    assert (record.control, record.target, record.count, record.exact) == ("at_most", 16, 10, True)
    row = aggregate([record])[0]
    assert (row["control"], row["em"], row["within"], row["ls"]) == ("at_most", 0.0, 1.0, 100.0)
    assert length_score(16, 10) < 30  # what the same text would have scored on the Equal-To track


def test_an_at_least_sample_is_stored_against_n_not_its_cap(engine, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply(words(40))  # past the 16-32 range asked for, still at least 16
    backend = get_backend("scripted", max_retries=0)
    out = run_bench(lifebench("at_least"), backend=backend, engine=engine)
    assert scripted_model.requests[-1][0][-1]["content"].endswith("in 16 to 32 words.")
    (record,) = run_results(engine, [out.bench_run_id])
    assert (record.control, record.target, record.count, record.exact) == ("at_least", 16, 40, False)
    row = aggregate([record])[0]
    assert (row["within"], row["ls"]) == (1.0, 100.0)


def test_each_control_is_its_own_run_and_resuming_one_never_mixes_them(engine, scripted_model: ScriptedBackend) -> None:
    scripted_model.reply(words(10), words(20))
    backend = get_backend("scripted", max_retries=0)
    at_most = run_bench(lifebench("at_most"), backend=backend, engine=engine)
    equal = run_bench(lifebench("equal"), backend=backend, engine=engine)
    assert equal.bench_run_id != at_most.bench_run_id and equal.generated == 1  # nothing taken from the other
    again = run_bench(lifebench("at_most"), backend=backend, engine=engine)
    assert (again.bench_run_id, again.skipped, again.generated) == (at_most.bench_run_id, 1, 0)
    assert len(scripted_model.requests) == 2
    records = run_results(engine, [at_most.bench_run_id, equal.bench_run_id])
    stored = {r.bench_run_id: (r.control, r.count) for r in records}
    assert stored == {at_most.bench_run_id: ("at_most", 10), equal.bench_run_id: ("equal", 20)}


def test_cli_runs_the_at_most_track_and_reports_its_control(scripted_model: ScriptedBackend) -> None:
    scripted_model.reply(words(12))
    out, err = io.StringIO(), io.StringIO()
    argv = ["bench", "--suite", "lifebench", "--model", "scripted", "--modes", "baseline"]
    argv += ["--lengths", "16", "--limit", "1", "--control", "at_most", "--json"]
    assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
    payload = json.loads(out.getvalue())
    assert payload["control"] == "at_most"
    assert [(r["control"], r["target"], r["em"], r["within"], r["ls"]) for r in payload["results"]] == [
        ("at_most", 16, 0.0, 1.0, 100.0),
        ("at_most", None, 0.0, 1.0, 100.0),
    ]


def test_cli_table_names_the_control_in_its_summary(scripted_model: ScriptedBackend) -> None:
    scripted_model.reply(words(20))
    out, err = io.StringIO(), io.StringIO()
    argv = ["bench", "--suite", "lifebench", "--model", "scripted", "--modes", "baseline"]
    argv += ["--lengths", "16", "--limit", "1", "--control", "at_least"]
    assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
    text = out.getvalue()
    assert text.startswith("lifebench · at least N · scripted")
    assert any(line.startswith("at_least baseline") for line in text.splitlines())
    assert "within = samples meeting the control" in text


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--control", "at_most", "--modes", "baseline,capel"], "capel cannot run the at most control"),
        (["--control", "most"], "argument --control: invalid choice: 'most'"),
    ],
)
def test_cli_refuses_a_control_it_cannot_run_with_one_line(extra: list[str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = ["bench", "--suite", "lifebench", "--lengths", "16", "--limit", "1", *extra]
    code = _exit_code(argv, out, err)
    assert code == 2 and message in err.getvalue() and out.getvalue() == ""


def _exit_code(argv: list[str], out: io.StringIO, err: io.StringIO) -> int:
    """main's exit code, whether it returns it or argparse exits with it."""
    try:
        return main(argv, stdout=out, stderr=err)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_the_exact_mode_sends_an_at_most_grammar_and_scores_a_run_within_the_limit(engine) -> None:
    def twelve(messages: Sequence[Message], options: Options) -> str:
        return "春" * 12 + "。" if "字" in messages[-1]["content"] else " ".join(["word"] * 12) + "."

    model = ScriptedBackend(twelve, capabilities=Capabilities(grammar_field="grammar"))
    config = BenchConfig(
        suite="lifebench", model="embedded", modes=("exact",), lengths=(16,), limit=2, control="at_most"
    )
    out = run_bench(config, backend=model, engine=engine)
    records = run_results(engine, [out.bench_run_id])
    assert [(r.lang, r.control, r.target, r.status) for r in records] == [
        ("en", "at_most", 16, "ok"),
        ("zh", "at_most", 16, "ok"),
    ]
    gbnf = model.requests[0][1].grammar  # the English sample's grammar (GBNF text): at most 16 words
    assert isinstance(gbnf, str)
    assert accepts("gbnf", gbnf, "One two three.") and not accepts("gbnf", gbnf, " ".join(["word"] * 17) + ".")
    assert all(r.count == 12 and r.exact for r in records)
    assert all(row["within"] == 1.0 and row["ls"] == 100.0 for row in aggregate(records))

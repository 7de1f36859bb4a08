"""Variants, scores and the judge, end to end: on the in-process scripted model, and against a real HTTP server
speaking OpenAI's wire format for what is sent (logprobs asked for or not, the judge's own base URL)."""

from __future__ import annotations

import io
import json
import math
import os

import pytest

from capel_ui.backends import Capabilities, Turn, get_backend
from capel_ui.cli import main
from capel_ui.generation import Generation, Request, generate
from capel_ui.judge import judge_messages, judge_run, parse_rating
from capel_ui.quality import on_point
from capel_ui.runs import LiveRun
from capel_ui.service import start
from capel_ui.storage import get_engine, get_run, list_runs
from capel_ui.variants import rank_key, ranked_runs, variant_requests
from tests.scripted_server import MODEL, ok, status

GOOD = "Lighthouses guide ships home."
GLUED = "Lighthouses guide shipshome safely."  # four words, one glued
SHORT = "Lighthouses guide ships."
SAFELY = "Lighthouses guide ships safely."  # another four-word text (identical variants are one)


def engine():
    return get_engine(os.environ["DATABASE_URL"])


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), stdin=io.StringIO(), stdout=out, stderr=err), out.getvalue(), err.getvalue()


# ----- fluency from the server's logprobs --------------------------------------------------------------------


def test_token_logprobs_are_asked_for_and_become_the_runs_fluency(scripted) -> None:
    scripted.script(ok(["Lighthouses ", "guide ", "ships ", "home."], logprobs=[math.log(0.5)] * 4))
    backend = get_backend(MODEL, provider="openai", base_url=scripted.url, api_key="sk-test")
    live = LiveRun(Generation(backend, Request("Describe a lighthouse", 4, mode="baseline")), engine(), origin="cli")
    outcome = live.run()
    assert scripted.last_body["logprobs"] is True
    assert outcome.fluency == pytest.approx(0.5)
    run = get_run(engine(), live.run_id)
    assert run.fluency == pytest.approx(0.5) and run.score == pytest.approx(10 * math.sqrt(0.5), abs=0.01)


def test_a_server_without_logprobs_is_not_asked_and_the_score_still_saves(scripted) -> None:
    scripted.script(ok(GOOD))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url)
    outcome = generate(backend, Request("Describe a lighthouse", 4, mode="baseline"))
    assert "logprobs" not in scripted.last_body
    assert outcome.fluency is None


# ----- variants --------------------------------------------------------------------------------------------


def test_variants_are_k_runs_of_one_group_ranked_verified_first_then_by_score(scripted_model) -> None:
    scripted_model.reply(GLUED, SHORT, GOOD)
    backend = get_backend("scripted")
    handle = start(Request("Describe a lighthouse", 4, mode="baseline"), backend, engine(), origin="cli", variants=3)
    handle.run_together()
    group_id, ranked = handle.group_id, handle.result()

    assert len(scripted_model.requests) == 3
    runs = list_runs(engine(), group_id=group_id)
    assert len(runs) == 3 and {r.origin for r in runs} == {"variant"}
    assert [c.outcome.text for c in ranked] == [GOOD, GLUED, SHORT]  # clean > glued > off target
    assert [c.outcome.verified for c in ranked] == [True, True, False]
    assert ranked[0].score > ranked[1].score


def test_variant_seeds_differ_so_the_candidates_differ() -> None:
    reqs = variant_requests(Request("x", 3, seed=7), 3)
    assert [r.seed for r in reqs] == [7, 8, 9]
    assert [r.seed for r in variant_requests(Request("x", 3), 2)] == [None, None]
    with pytest.raises(ValueError, match="variants must be 1 to 8"):
        variant_requests(Request("x", 3), 9)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((True, None, 1.0, 0.1), (False, None, 9.0, 0.9)),  # verified beats any score
        ((True, 8.0, 1.0, 0.1), (True, 7.0, 9.0, 0.9)),  # the judge's rating beats the offline score
        ((True, None, 6.0, 0.1), (True, None, 5.0, 0.9)),
        ((True, None, 5.0, 0.5), (True, None, 5.0, 0.4)),  # fluency breaks a tie
    ],
)
def test_rank_key_orders_candidates(a, b) -> None:
    assert rank_key(*a) > rank_key(*b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (dict(score=2.0), dict(score=9.0, junk=True)),  # junk after any other, whatever its score
        (dict(verified=False, score=2.0), dict(score=9.0, junk=True)),  # even after a text off by one
        (dict(score=5.0, end_probability=0.7), dict(score=5.0, end_probability=0.1)),  # then the ending
        (dict(score=5.0, end_probability=0.1), dict(score=5.0)),  # a known ending above none
        # baseline texts: the closest to the target first, whatever the score ("off by -8" before "off by -19")
        (dict(verified=False, score=2.0, deviation=-8), dict(verified=False, score=9.0, deviation=-19)),
        (dict(verified=False, score=2.0, deviation=3), dict(verified=False, score=9.0, deviation=-4)),
        (dict(verified=False, score=2.0, deviation=-8), dict(verified=False, score=9.0, deviation=-2, junk=True)),
    ],
)
def test_junk_ranks_last_and_the_ending_breaks_a_tie(a, b) -> None:
    def key(verified: bool = True, score: float | None = None, **kw):
        return rank_key(verified, None, score, 0.3, **kw)

    assert key(**a) > key(**b)


LOOP = "Lighthouses glow, lighthouses glow, lighthouses glow."  # six words: fluent to a model, junk to a writer
LIST = "Lighthouses: 1. 2. 3. 4. 5."


def test_copy_never_defaults_to_a_loop_or_a_number_list(scripted_model) -> None:
    """The best-ranked variant is what Write picks (badge, Copy, downloads): never junk while a text exists."""
    scripted_model.reply(
        Turn(tuple(w + " " for w in LOOP.split()), logprobs=(-0.01,) * 6),
        Turn(tuple(w + " " for w in LIST.split()), logprobs=(-0.01,) * 6),
        Turn(("Lighthouses ", "guide ", "ships ", "home ", "at ", "night."), logprobs=(-1.5,) * 6),
    )
    scripted_model.capabilities = Capabilities(logprobs=True)
    handle = start(Request("Describe a lighthouse", 6, mode="baseline"), get_backend("scripted"), engine(),
                   origin="cli", variants=3)  # fmt: skip
    handle.run_together()
    ranked = handle.result()
    assert ranked[0].outcome.text == "Lighthouses guide ships home at night."
    assert [c.junk for c in ranked] == [False, True, True]
    assert ranked[1].score < ranked[0].score or ranked[1].outcome.fluency > ranked[0].outcome.fluency
    assert ranked[1].explanation.startswith(("goes round in circles", "a list of numbers"))


OFF_POINT = "I'm here to help with whatever you need. Please tell me what's going on."
ON_POINT = "Your appointment is scheduled for tomorrow at 3:30 pm."
REMINDER = "Remind a patient of a dental appointment on Tuesday at 3:30 pm with Dr. Patel."


def test_a_variant_that_answers_the_request_ranks_above_a_smoother_one_that_does_not(scripted_model) -> None:
    # Walked on the embedded model: "I'm here to help…" (score 6.2) was put first, above the reminder (5.63).
    scripted_model.reply(
        Turn(tuple(w + " " for w in OFF_POINT.split()), logprobs=(-0.01,) * 13),
        Turn(tuple(w + " " for w in ON_POINT.split()), logprobs=(-1.5,) * 9),
    )
    scripted_model.capabilities = Capabilities(logprobs=True)
    request = Request(REMINDER, 30, mode="baseline", target_kind="at_most")
    handle = start(request, get_backend("scripted"), engine(), origin="cli", variants=2)
    handle.run_together()
    ranked = handle.result()
    assert [c.outcome.text for c in ranked] == [ON_POINT, OFF_POINT]
    assert ranked[1].score > ranked[0].score  # it read more smoothly, and still ranks second
    cards = ranked_runs(list_runs(engine()))  # the Write page's cards, from the saved runs
    assert [r.text for r in cards] == [ON_POINT, OFF_POINT]


@pytest.mark.parametrize(
    ("texts", "instruction", "expected"),
    [
        ([OFF_POINT, ON_POINT, "I'm here to help with your dental appointment!"], REMINDER, [False, True, True]),
        (
            ["Duncan, the capital of France is Paris.", "Ladies and gentlemen, I'm here to help."],
            "What is the capital of France?",
            [True, False],
        ),
        (["A poem.", "Another poem."], "Write a poem.", [True, True]),  # none keeps a word: nothing to tell apart
    ],
)
def test_on_point_asks_for_half_the_request_words_the_best_variant_keeps(texts, instruction, expected) -> None:
    assert on_point(texts, instruction) == expected


def test_cli_variants_json_lists_each_variant_with_text_count_verdict_and_score(scripted_model) -> None:
    scripted_model.reply(GOOD, GLUED)
    code, out, err = cli(
        "generate", "--model", "scripted", "--mode", "baseline", "--target", "4",
        "--variants", "2", "--json", "Describe a lighthouse",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    first, second = doc["variants"]
    assert (first["rank"], first["text"], first["count"], first["verified"]) == (1, GOOD, 4, True)
    assert first["verdict"] == "✓ exact · verified · 4/4 English words"
    assert second["text"] == GLUED and second["warnings"] == ["“shipshome” looks like two words glued together"]
    assert first["score"] > second["score"]
    assert {r.group_id for r in list_runs(engine())} == {doc["group_id"]}
    assert "best of 2: run" in err


def test_cli_variants_prints_every_candidate_best_first(scripted_model) -> None:
    scripted_model.reply(SHORT, GOOD)
    code, out, _ = cli(
        "generate", "--model", "scripted", "--mode", "baseline", "--target", "4",
        "--variants", "2", "Describe a lighthouse",
    )  # fmt: skip
    assert code == 0
    assert out.index(GOOD) < out.index(SHORT)
    assert out.startswith("--- variant 1 of 2 · run")


@pytest.mark.parametrize("k", ["0", "9", "two"])
def test_cli_variants_out_of_range_is_bad_input(scripted_model, k: str) -> None:
    code, _, err = cli("generate", "--model", "scripted", "--variants", k, "--target", "3", "x")
    assert code == 2 and "variants" in err and scripted_model.requests == []


# ----- the judge -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "rating"),
    [
        ("Helpful and vivid. Rating: [[8]]", 8.0),
        ("Rating: [[7.5]]", 7.5),
        ("I'd say [6]", 6.0),
        ("[[3]] at first, then [[9]]", 9.0),
        ("Rating: [[11]]", None),
        ("no rating here", None),
    ],
)
def test_parse_rating_reads_fastchats_format(reply: str, rating: float | None) -> None:
    assert parse_rating(reply) == rating


def test_the_judge_gets_fastchats_single_v1_prompt() -> None:
    system, user = judge_messages("Describe a lighthouse", GOOD)
    assert system == {"role": "system", "content": "You are a helpful assistant."}
    assert "rate the response on a scale of 1 to 10" in user["content"]
    assert "[Question]\nDescribe a lighthouse" in user["content"]
    assert f"[The Start of Assistant's Answer]\n{GOOD}\n[The End of Assistant's Answer]" in user["content"]


def test_a_configured_judge_rates_each_variant_and_the_rating_is_stored(scripted) -> None:
    scripted.script(ok(GOOD), ok(SAFELY), ok("Fine. Rating: [[4]]"), ok("Good. Rating: [[9]]"))
    code, out, err = cli(
        "generate", "--model", MODEL, "--base-url", scripted.url, "--mode", "baseline", "--target", "4",
        "--variants", "2", "--judge", "judge-model", "--judge-base-url", scripted.url, "--json",
        "Describe a lighthouse",
    )  # fmt: skip
    assert code == 0, err
    judged = [r for r in scripted.chat_requests if r.body["model"] == "judge-model"]
    assert len(judged) == 2 and judged[0].body["temperature"] == 0.0
    doc = json.loads(out)
    assert [v["judge_score"] for v in doc["variants"]] == [9.0, 4.0]  # ranked by the judge
    runs = {r.id: r for r in list_runs(engine())}
    assert runs[doc["variants"][0]["run_id"]].judge_score == 9.0
    assert runs[doc["variants"][0]["run_id"]].judge_model == "judge-model (OpenAI-compatible server)"


def test_a_failing_judge_stores_nothing_and_the_run_stands(scripted) -> None:
    down = status(500, "judge down", {"retry-after": "0"})  # retried at once: the test need not wait
    scripted.script(ok(GOOD), down, then=down)
    code, _, err = cli(
        "generate", "--model", MODEL, "--base-url", scripted.url, "--mode", "baseline", "--target", "4",
        "--judge", "judge-model", "--judge-base-url", scripted.url, "Describe a lighthouse",
    )  # fmt: skip
    assert code == 0
    assert "judge judge-model (OpenAI-compatible server): no rating" in err
    [run] = list_runs(engine())
    assert run.verified and run.judge_score is None


def test_without_a_judge_nothing_is_asked(scripted_model) -> None:
    scripted_model.reply(GOOD)
    code, _, _ = cli("generate", "--model", "scripted", "--mode", "baseline", "--target", "4", "Describe")
    assert code == 0 and len(scripted_model.requests) == 1


def test_judge_run_without_a_saved_run_returns_the_rating(scripted_model) -> None:
    scripted_model.reply("Rating: [[6]]")
    backend = get_backend("scripted")
    assert judge_run(None, None, backend, "Describe a lighthouse", GOOD) == 6.0


def test_cli_variants_with_no_save_keep_nothing(scripted_model) -> None:
    scripted_model.reply(GOOD, SAFELY)
    code, out, _ = cli(
        "generate", "--model", "scripted", "--mode", "baseline", "--target", "4",
        "--variants", "2", "--no-save", "--json", "Describe a lighthouse",
    )  # fmt: skip
    assert code == 0
    assert [v["run_id"] for v in json.loads(out)["variants"]] == [None, None]
    assert list_runs(engine()) == []


def test_generate_json_carries_fluency_score_and_warnings(scripted_model) -> None:
    scripted_model.reply(GLUED)
    code, out, _ = cli("generate", "--model", "scripted", "--mode", "baseline", "--target", "4", "--json", "x")
    doc = json.loads(out)
    assert code == 0 and doc["fluency"] is None  # this model was not asked for logprobs
    assert doc["score"] == 0.0 and doc["warnings"] == ["“shipshome” looks like two words glued together"]


def test_identical_variants_are_one_choice_and_say_how_often_they_were_written(scripted_model) -> None:
    scripted_model.reply(GOOD, GOOD, SHORT)
    code, out, err = cli(
        "generate", "--model", "scripted", "--mode", "baseline", "--target", "4", "--variants", "3",
        "Describe a lighthouse",
    )  # fmt: skip
    assert code == 0, err
    assert out.count("--- variant") == 2 and "variant 1 of 2" in out
    assert "written 2 times" in err and "best of 2" in err
    cards = ranked_runs(list_runs(engine()))  # the Write page's cards: the same text once
    assert [r.text for r in cards] == [GOOD, SHORT]


def test_the_writers_pick_stands_for_its_identical_variants(scripted_model) -> None:
    scripted_model.reply(GOOD, GOOD)
    code, _, err = cli(
        "generate", "--model", "scripted", "--mode", "baseline", "--target", "4", "--variants", "2",
        "Describe a lighthouse",
    )  # fmt: skip
    assert code == 0, err
    first, second = sorted(list_runs(engine()), key=lambda r: r.id)
    assert [r.id for r in ranked_runs([first, second], picked=second.id)] == [second.id]


def test_cli_variants_say_what_each_score_means_and_call_junk_not_a_text_to_publish(scripted_model) -> None:
    scripted_model.reply("Sure! Ships sail home.", GOOD)
    code, out, err = cli(
        "generate", "--model", "scripted", "--mode", "baseline", "--target", "4",
        "--variants", "2", "Describe a lighthouse",
    )  # fmt: skip
    assert code == 0, err
    junk_line = next(line for line in out.splitlines() if line.startswith("--- variant 2 of 2"))
    assert "talks about itself: not a text to publish" in junk_line
    assert out.index(GOOD) < out.index("Sure! Ships")

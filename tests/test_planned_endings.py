"""Planned endings (issue 19): on llama.cpp a guaranteed text's last units are chosen among candidate endings by
the model's own P(end), and a text under a limit ends at the last natural sentence end inside it."""

from __future__ import annotations

import io
import re
import threading

import pytest

from capel_ui.backends import Turn
from capel_ui.backends.base import DEFAULT_CAPABILITIES
from capel_ui.backends.providers.common import LLAMA_CPP
from capel_ui.backends.providers.scripted import ScriptedBackend
from capel_ui.cli import main
from capel_ui.ending import NATURAL, best_ending, natural_cut, plan_size, sentence_ends
from capel_ui.generation import Generation, Request, generate
from capel_ui.grammar import ending_rules

INSTRUCTION = "Describe a traditional Italian pizza."
OWN = "The traditional Italian pizza is a classic dish made with a widespread."  # 12 words, cut off
HEAD = "The traditional Italian pizza is a classic dish made"  # its first 9: plan_size(12) plans the last 3
RIVAL = " with crisp crust."


def llama(*replies, ending=None) -> ScriptedBackend:
    """A scripted model that declares what llama.cpp can do: a grammar, a prefill, the ending score."""
    return ScriptedBackend(*replies, capabilities=LLAMA_CPP, ending=ending)


def by_prefill(own: str, rival: str | Turn):
    """The run's own call writes `own`; a rival ending (asked with a prefill) writes `rival`."""
    return lambda messages, options: rival if options.prefill is not None else own


def natural_after(*endings: str):
    """P(end) 0.9 after a text that ends with one of `endings`, else 0.05."""
    return lambda text: 0.9 if text.endswith(endings) else 0.05


def test_an_exact_text_keeps_the_candidate_ending_the_model_would_end_on() -> None:
    model = llama(by_prefill(OWN, RIVAL), ending=natural_after("crisp crust."))
    out = generate(model, Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == HEAD + RIVAL and out.verified and out.count == 12
    assert out.end_probability == 0.9
    plan = out.planned_ending
    assert plan["units"] == 3 and [c["chosen"] for c in plan["candidates"]] == [False, True]
    assert plan["candidates"][0]["text"] == OWN and plan["candidates"][0]["own"]


def test_a_rival_ending_continues_the_text_so_far_with_a_grammar_for_exactly_the_units_left() -> None:
    model = llama(by_prefill(OWN, RIVAL), ending=0.5)
    generate(model, Request(INSTRUCTION, 12, mode="exact"))
    (_, first), *rivals = model.requests
    assert first.prefill is None and [r.prefill for _, r in rivals] == [HEAD]
    for _, rival in rivals:  # exactly 3 words, the last closing a sentence; the plain word rule (checked after)
        assert rival.grammar == ending_rules("exact", "en", 12, 3)
        assert rival.grammar.render().startswith('root ::= (" " word){2} " " wend')


def test_the_runs_own_ending_stays_when_the_model_would_end_there_most() -> None:
    model = llama(by_prefill(OWN, RIVAL), ending=natural_after("widespread."))
    out = generate(model, Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == OWN and out.end_probability == 0.9
    assert [c["chosen"] for c in out.planned_ending["candidates"]] == [True, False]


def test_a_rival_ending_with_a_flaw_the_own_lacks_is_not_kept_however_likely_its_end() -> None:
    model = llama(by_prefill(OWN, " crust crust crust."), ending=natural_after("crust."))
    out = generate(model, Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == OWN


def test_the_ending_score_is_asked_once_per_candidate_and_reused_for_the_run() -> None:
    model = llama(by_prefill(OWN, RIVAL), ending=natural_after("crisp crust."))
    generate(model, Request(INSTRUCTION, 12, mode="exact"))
    assert sorted(text for _, text in model.endings_asked) == sorted([OWN, HEAD + RIVAL])


def test_a_failed_rival_leaves_the_runs_own_ending() -> None:
    model = llama(by_prefill(OWN, Turn((" with",), fail="server")), ending=0.1)
    out = generate(model, Request(INSTRUCTION, 12, mode="exact"))
    assert out.status == "complete" and out.text == OWN and out.verified
    assert len(out.planned_ending["candidates"]) == 1  # the rivals failed: the run's own is the one left


def test_a_countdown_plans_its_ending_from_the_marker_of_the_units_left() -> None:
    own = "<6>Fresh<5>bread<4>every<3>day<2>for<1>the.<0>"  # plan_size(6) plans the last 3 units
    model = llama(by_prefill(own, "<3>from<2>our<1>ovens.<0>"), ending=natural_after("ovens."))
    out = generate(model, Request("Write a bakery slogan.", 6, mode="exact-countdown"))
    assert model.requests[1][1].prefill == "<6>Fresh<5>bread<4>every"
    assert out.text == "Fresh bread every from our ovens." and out.verified and not out.errors


def test_a_text_no_longer_than_the_ending_is_candidates_from_the_start() -> None:
    model = llama("Pizza is round.", "Bake it hot.", ending=natural_after("hot."))  # the run's own, then a rival
    out = generate(model, Request(INSTRUCTION, 3, mode="exact"))
    assert model.requests[1][1].prefill is None  # nothing before the ending
    assert out.text == "Bake it hot." and out.verified


@pytest.mark.parametrize(
    ("capabilities", "plan"),
    [(DEFAULT_CAPABILITIES, True), (LLAMA_CPP.__class__(grammar_field="grammar", prefill="assistant"), True)],
)
def test_no_ending_is_planned_where_the_server_cannot_score_endings(capabilities, plan) -> None:
    model = ScriptedBackend(OWN, capabilities=capabilities)
    mode = "baseline" if not capabilities.grammar else "exact"
    out = generate(model, Request(INSTRUCTION, 12, mode=mode, plan_ending=plan))
    assert len(model.requests) == 1 and out.planned_ending is None


def test_a_run_asked_not_to_plan_writes_one_ending() -> None:
    model = llama(by_prefill(OWN, RIVAL), ending=0.9)
    out = generate(model, Request(INSTRUCTION, 12, mode="exact", plan_ending=False))
    assert len(model.requests) == 1 and out.text == OWN and out.planned_ending is None


def test_the_live_view_keeps_the_text_and_says_that_endings_are_being_written() -> None:
    gate = threading.Event()

    def reply(messages, options):
        if options.prefill is None:
            return OWN
        gate.wait(5)
        return RIVAL

    gen = Generation(llama(reply, ending=natural_after("crisp crust.")), Request(INSTRUCTION, 12, mode="exact"))
    seen = []
    for _ in gen.stream():
        seen.append((gen.raw, gen.live_note()))
        if gen.raw.strip() == OWN:
            gate.set()
    assert any("writing 1 more ending(s) of the last 3 English words" in note for _, note in seen)
    assert seen[-1][0] == OWN  # the live text is the run's own ending until the choice
    assert gen.outcome().text == HEAD + RIVAL and gen.live_note() == ""


def test_a_stop_while_rivals_are_written_keeps_the_text_and_ends_them() -> None:
    def reply(messages, options):
        return Turn(tuple(RIVAL.split(" ")), delay=2.0) if options.prefill else OWN

    model = llama(reply, ending=0.9)
    gen = Generation(model, Request(INSTRUCTION, 12, mode="exact"))
    for _ in gen.stream():
        if gen.raw.strip() == OWN:
            gen.cancel()
    out = gen.outcome()
    assert out.status == "cancelled" and out.text == OWN and out.seconds < 2.0


# ----- at most / between: the text ends at a natural sentence end inside the limit ---------------------------

POST = "Fresh sourdough every Saturday. Come early, it sells out. Our ovens open at."


def test_an_at_most_text_ends_at_the_last_sentence_end_the_model_would_end_on() -> None:
    model = llama(POST, ending=natural_after("Saturday.", "sells out."))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", target_kind="at_most"))
    assert out.text == "Fresh sourdough every Saturday. Come early, it sells out."
    assert out.verified and out.end_probability == 0.9
    assert "natural sentence end" in out.notice and "4 word(s)" in out.notice


def test_a_character_limit_ends_naturally_too() -> None:
    model = llama(POST, ending=natural_after("Saturday."))
    out = generate(model, Request(INSTRUCTION, 280, mode="exact", target_kind="at_most", unit="x_weighted"))
    assert out.text == "Fresh sourdough every Saturday." and out.verified


def test_a_range_never_ends_below_its_lower_bound() -> None:
    model = llama(POST, ending=natural_after("Saturday.", "sells out."))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", target_kind="range", target_low=8))
    assert out.text == "Fresh sourdough every Saturday. Come early, it sells out."  # 4 words is below 8
    assert out.verified


def test_where_no_sentence_end_would_end_the_text_the_most_likely_is_kept() -> None:
    model = llama(POST, ending=lambda text: {"Saturday.": 0.1, "out.": 0.3}.get(text.rsplit(" ", 1)[-1], 0.2))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", target_kind="at_most"))
    assert out.text.endswith("sells out.") and out.end_probability == 0.3


def test_a_text_that_leaves_room_may_gain_the_closing_sentence_the_model_would_end_on() -> None:
    model = llama(by_prefill("Fresh bread every Saturday.", " Come early!"), ending=natural_after("Come early!"))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", target_kind="at_most"))
    assert out.text == "Fresh bread every Saturday. Come early!" and out.verified and out.end_probability == 0.9
    rivals = [options for _, options in model.requests if options.prefill is not None]
    assert len(rivals) == 3 and {o.prefill for o in rivals} == {"Fresh bread every Saturday."}
    closing = rivals[0].grammar.render()
    assert closing.startswith('root ::= (" " word){0,11} " " wend')  # a short closing: at most 12 words


def test_a_text_that_filled_the_limit_gets_its_closing_after_its_last_sentence_end_with_room() -> None:
    own = "Fresh bread every Saturday. Come early, it sells out fast."  # 10 of 10 words
    model = llama(by_prefill(own, " Come early!"), ending=natural_after("Come early!"))
    out = generate(model, Request(INSTRUCTION, 10, mode="exact", target_kind="at_most"))
    assert {o.prefill for _, o in model.requests[1:]} == {"Fresh bread every Saturday."}
    assert out.text == "Fresh bread every Saturday. Come early!" and out.verified


@pytest.mark.parametrize(
    "closing",
    [
        " Come early, " + "very " * 20 + "early!",
        " Come and buy the.",
        " Come early for sourdouhg.",
        " " + "Fresh " * 12,
    ],
    ids=["past the limit", "dangling", "non-word", "cut at its cap"],
)
def test_a_closing_sentence_a_writer_would_not_keep_is_not_added(closing) -> None:
    model = llama(by_prefill("Fresh bread every Saturday.", closing), ending=0.9)
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", target_kind="at_most"))
    assert out.text == "Fresh bread every Saturday."


def test_the_live_view_says_when_a_text_under_a_limit_is_choosing_its_end() -> None:
    notes, gens = [], []

    def reply(messages, options):
        if options.prefill is None:
            return "Fresh bread every Saturday."
        notes.append(gens[0].live_note())
        return " Come early!"

    gens.append(Generation(llama(reply, ending=0.9), Request(INSTRUCTION, 20, mode="exact", target_kind="at_most")))
    gens[0].run()
    assert notes and all("choosing where the text ends most naturally" in n for n in notes)
    assert gens[0].live_note() == ""


def test_a_limit_is_not_cut_without_the_ending_score() -> None:
    model = ScriptedBackend(POST, capabilities=LLAMA_CPP.__class__(grammar_field="grammar", prefill="assistant"))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", target_kind="at_most"))
    assert out.text == POST and out.planned_ending is None


# ----- the rules -------------------------------------------------------------------------------------------------


def test_sentence_ends_are_stops_before_a_space_or_the_end() -> None:
    assert sentence_ends('It is 3.5 cm. Yes! "Done." Ok') == [13, 18, 26]


def test_the_ending_kept_is_the_likeliest_end_then_the_most_fluent() -> None:
    assert best_ending([(0.2, 0.9), (0.8, 0.1), (0.8, 0.3)]) == 2
    assert best_ending([(None, 0.9), (0.0, 0.1)]) == 1


def test_a_limit_ends_at_the_last_natural_sentence_end_else_the_likeliest() -> None:
    assert natural_cut([0.9, 0.6, 0.1]) == 1
    assert natural_cut([0.2, 0.3, 0.1]) == 1


@pytest.mark.parametrize("target", [1, 3, 6, 12, 40, 80, 500])
def test_a_planned_ending_is_short_and_has_at_least_one_rival(target) -> None:
    units, candidates = plan_size(target)
    assert 1 <= units <= min(target, 6) and 2 <= candidates <= 4


# ----- the embedded model, end to end ------------------------------------------------------------------------------


def test_the_embedded_model_plans_an_exact_ending_and_keeps_the_count(embedded) -> None:
    out = generate(embedded, Request("Describe a lighthouse.", 9, mode="exact", seed=3))
    assert out.verified and out.count == 9
    plan = out.planned_ending
    assert plan is not None and len(plan["candidates"]) >= 2
    chosen = [c for c in plan["candidates"] if c["chosen"]]
    assert [c["text"] for c in chosen] == [out.text]
    assert out.end_probability == max(c["end_probability"] for c in plan["candidates"])


def test_the_embedded_model_ends_an_at_most_text_inside_the_limit_at_a_sentence_end(embedded) -> None:
    request = Request("Describe a lighthouse.", 120, mode="exact", target_kind="at_most", unit="chars", seed=5)
    out = generate(embedded, request)
    assert out.verified and out.count <= 120 and out.text[-1] in ".!?"
    assert out.end_probability is not None


def test_a_full_stop_the_model_would_not_have_written_there_makes_its_ending_cut_off() -> None:
    own_chunks = (*re.findall(r"\s*\S+", OWN[:-1]), ".")  # the forced stop is a token of its own
    own = Turn(own_chunks, logprobs=(*[-0.5] * (len(own_chunks) - 1), -12.0))
    rival = Turn((" with", " crisp", " crust", "."), logprobs=(-0.5, -0.5, -0.5, -0.3))
    model = llama(by_prefill(own, rival), ending=0.9)  # P(end) alone cannot tell them apart
    out = generate(model, Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == HEAD + RIVAL and out.end_probability == 0.9
    [own_candidate] = [c for c in out.planned_ending["candidates"] if c["own"]]
    assert own_candidate["end_probability"] < NATURAL  # "…a widespread." is cut off, whatever P(end) says


def test_the_cli_prints_the_kept_ending_once_not_the_one_it_replaced(scripted_model: ScriptedBackend) -> None:
    scripted_model.capabilities = LLAMA_CPP
    scripted_model.ending = natural_after("crisp crust.")
    scripted_model.reply(by_prefill(OWN, RIVAL))
    out, err = io.StringIO(), io.StringIO()
    argv = ["generate", "--model", "scripted", "--mode", "exact", "--target", "12", INSTRUCTION]
    assert main(argv, stdin=io.StringIO(), stdout=out, stderr=err) == 0, err.getvalue()
    assert out.getvalue() == HEAD + RIVAL + "\n"  # `generate > file` gets the text once: the one kept


@pytest.mark.parametrize(
    ("lang", "instruction", "kind", "low"),
    [
        ("en", "Describe a traditional Italian pizza.", "at_most", None),
        ("en", "Describe a traditional Italian pizza.", "range", 20),
        ("zh", "介绍一下北京。", "at_most", None),
    ],
)
def test_a_word_limit_on_the_embedded_model_is_kept_by_its_word_list_grammar(embedded, lang, instruction, kind, low):
    # LLGuidance gave up on a word list whose last word was a terminal of its own ("too many expressions
    # constructed") and llama.cpp then wrote with no grammar: "at most 30 words" came back with 35.
    request = Request(instruction, 30, lang=lang, mode="exact", target_kind=kind, target_low=low, seed=7)
    out = generate(embedded, request)
    assert out.verified and out.count <= 30, (out.count, out.text)

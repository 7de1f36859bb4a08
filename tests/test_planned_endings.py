"""Planned endings (issue 19): on llama.cpp an exact text whose last sentence reads cut off gets its last words
searched again for ones the model would end a phrase on, and a text under a limit ends at the last natural sentence
end inside it."""

from __future__ import annotations

import io
import math
import time

import pytest

from capel_ui.backends import Turn
from capel_ui.backends.base import DEFAULT_CAPABILITIES
from capel_ui.backends.embedded import start_server, stops_on
from capel_ui.backends.providers.common import LLAMA_CPP
from capel_ui.backends.providers.scripted import ScriptedBackend
from capel_ui.cli import main
from capel_ui.ending import NATURAL, natural_cut, search_ending, sentence_ends
from capel_ui.generation import Generation, Request, generate
from capel_ui.quality import repeated_sentences
from capel_ui.storage import get_engine, list_runs

INSTRUCTION = "Describe a traditional Italian pizza."
OWN = "The traditional Italian pizza is a classic dish made with a widespread."  # 12 words, cut off
HEAD = "The traditional Italian pizza is a classic dish made"  # its first 9: the search writes the last 3 again
FOUND = " with crisp crust."
NEXT = {  # what the scripted model would write next after each text (log-probabilities)
    HEAD: [(" with", -0.1), (" from", -3.0)],
    HEAD + " with": [(" crisp", -0.3), (" the", -0.6)],
    HEAD + " with crisp": [(" crust", -0.2)],
    HEAD + " with crisp crust": [(".", -0.5), (",", -2.0), (" and", -2.5)],
    HEAD + " with the": [(" oven", -0.2)],
    HEAD + " with the oven": [(" and", -0.1)],
}


def llama(*replies, ending=None, next_tokens=None) -> ScriptedBackend:
    """A scripted model that declares what llama.cpp can do: a grammar, a prefill, the ending score, next tokens."""
    return ScriptedBackend(*replies, capabilities=LLAMA_CPP, ending=ending, next_tokens=next_tokens)


def by_prefill(own: str, rival: str | Turn):
    """The run's own call writes `own`; a call that continues a text (with a prefill) writes `rival`."""
    return lambda messages, options: rival if options.prefill is not None else own


def natural_after(*endings: str):
    """An ending score of 0.9 for a text that ends with one of `endings`, else 0.005 (cut off)."""
    return lambda text: 0.9 if text.endswith(endings) else 0.005


def asked(table: dict[str, list[tuple[str, float]]], log: list[str] | None = None):
    """Next tokens from `table` (none for any other text), each question kept in `log`."""

    def next_tokens(text: str):
        if log is not None:
            log.append(text)
        return table.get(text)

    return next_tokens


def test_an_exact_text_cut_off_gets_last_words_the_model_would_end_a_phrase_on() -> None:
    model = llama(OWN, ending=natural_after("crust."), next_tokens=asked(NEXT))
    out = generate(model, Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == HEAD + FOUND and out.verified and out.count == 12
    assert out.end_probability == pytest.approx(math.exp(-0.5) + math.exp(-2.0), abs=1e-4)  # a stop or a comma next
    plan = out.planned_ending
    assert plan["own"] == {"text": OWN, "end_probability": 0.005} and plan["chosen"] == HEAD + FOUND


HEADLINES = [  # (own text, the words kept, the model's next tokens after them, the text a writer gets)
    pytest.param(
        "Hello, welcome toxin!",
        "Hello,",
        {"Hello,": [(" welcome", -0.1)], "Hello, welcome": [(" aboard", -0.2)]},
        "Hello, welcome aboard.",
        id="3 words: the last 2 written again",
    ),
    pytest.param("Tokyo nothin.", "Tokyo", {"Tokyo": [(" rises", -0.1)]}, "Tokyo rises.", id="2 words: the last one"),
]


@pytest.mark.parametrize(("own", "kept", "table", "text"), HEADLINES)
def test_a_headline_too_short_for_a_3_word_search_has_all_but_its_first_word_searched(own, kept, table, text) -> None:
    table, log = {**table, text.removesuffix("."): [(".", -0.1)]}, []
    model = llama(own, ending=natural_after(text), next_tokens=asked(table, log))
    out = generate(model, Request("Say hi.", len(text.split()), mode="exact"))
    assert (out.text, out.verified, out.planned_ending["chosen"], log[0]) == (text, True, text, kept)


def test_the_search_starts_from_the_text_without_its_last_three_words() -> None:
    log: list[str] = []
    generate(llama(OWN, ending=0.005, next_tokens=asked(NEXT, log)), Request(INSTRUCTION, 12, mode="exact"))
    assert log[0] == HEAD and all(text.startswith(HEAD) for text in log)


def test_the_runs_own_ending_stays_when_it_ends_naturally_and_nothing_is_searched() -> None:
    log: list[str] = []
    model = llama(OWN, ending=natural_after("widespread."), next_tokens=asked(NEXT, log))
    out = generate(model, Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == OWN and out.end_probability == 0.9 and log == []


def test_an_ending_the_model_would_not_end_on_is_never_taken() -> None:
    table = {k: v for k, v in NEXT.items() if "crisp" not in k} | {HEAD + " with": [(" the", -0.1)]}
    out = generate(llama(OWN, ending=0.005, next_tokens=asked(table)), Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == OWN and out.end_probability == 0.005  # "… with the oven and": no phrase ends there


def test_a_found_ending_with_a_flaw_the_own_lacks_is_not_taken() -> None:
    table = {HEAD: [(" crust", -0.1)], HEAD + " crust": [(" crust", -0.1)], HEAD + " crust crust": [(" crust", -0.1)]}
    table[HEAD + " crust crust crust"] = [(".", -0.1)]
    out = generate(llama(OWN, ending=0.005, next_tokens=asked(table)), Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == OWN  # "… made crust crust crust." goes round in circles


def test_a_longer_search_never_asks_again_what_a_shorter_one_asked() -> None:
    head6 = "The traditional Italian pizza is a"
    table = {
        head6: [(" classic", -0.1)],
        head6 + " classic": [(" dish", -0.1)],
        head6 + " classic dish": [(" made", -0.1)],
    }
    table |= {HEAD: [(" with", -0.1)], HEAD + " with": [(" the", -0.1)], HEAD + " with the": [(" oven", -0.1)]}
    table[HEAD + " with the oven"] = [(" and", -0.1)]  # no phrase ends: the 3-word search finds nothing, then 6
    log: list[str] = []
    generate(llama(OWN, ending=0.005, next_tokens=asked(table, log)), Request(INSTRUCTION, 12, mode="exact"))
    assert log.count(HEAD + " with the oven") == 1 and log.count(head6) == 1  # the 6-word search passed both


def test_the_search_asks_its_questions_one_at_a_time() -> None:
    waiting, most = [0], [0]

    def next_tokens(text: str):
        waiting[0] += 1
        most[0] = max(most[0], waiting[0])
        time.sleep(0.02)  # a server's answer takes a while: questions asked at once would overlap here
        waiting[0] -= 1
        return NEXT.get(text)

    out = generate(llama(OWN, ending=0.005, next_tokens=next_tokens), Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == HEAD + FOUND and most[0] == 1  # each finds the server's slot holding the text it follows


def test_a_search_that_finds_nothing_stops_after_its_most_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    from capel_ui import planned

    monkeypatch.setattr(planned, "QUESTIONS_MOST", 20)  # below the 76 this 12-word search would ask in all
    log: list[str] = []

    def next_tokens(text: str):  # words for ever, and never a phrase end: every path is worth asking about
        log.append(text)
        return [(" and", -0.1), (" more", -0.2), (" bread", -0.3)]

    out = generate(llama(OWN, ending=0.005, next_tokens=next_tokens), Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == OWN and len(log) == 20  # the text's own ending kept, the wait bounded


def test_paths_that_share_all_but_their_last_word_are_asked_one_after_another() -> None:
    log: list[str] = []
    table = {HEAD: [(" with", -0.1), (" from", -0.2), (" in", -0.3)]}
    table |= {HEAD + w: [(" a", -0.1), (" the", -0.2)] for w in (" with", " from", " in")}
    generate(llama(OWN, ending=0.005, next_tokens=asked(table, log)), Request(INSTRUCTION, 12, mode="exact"))
    step = [text for text in log if text.count(" ") == HEAD.count(" ") + 2]  # the step after "with"/"from"/"in"
    assert len(step) == 4 and step == sorted(step)  # siblings next to each other: the server's slot holds the rest


@pytest.mark.parametrize(
    ("word", "why"), [(" the", "dangling"), (" crustz", "not a listed word")], ids=["dangling", "non-word"]
)
def test_the_search_never_ends_on_a_word_the_grammar_would_not(word, why) -> None:
    table = dict(NEXT) | {HEAD + " with crisp": [(word, -0.01)], HEAD + " with crisp" + word: [(".", -0.01)]}
    table.pop(HEAD + " with crisp crust")
    out = generate(llama(OWN, ending=0.005, next_tokens=asked(table)), Request(INSTRUCTION, 12, mode="exact"))
    assert out.text == OWN, why


def test_a_countdown_gets_its_markers_written_for_the_new_words() -> None:
    own = "<6>Fresh<5>bread<4>every<3>day<2>for<1>the.<0>"
    table = {
        "Fresh bread every": [(" morning", -0.1)],
        "Fresh bread every morning": [(" for", -0.1)],
        "Fresh bread every morning for": [(" everyone", -0.1)],
        "Fresh bread every morning for everyone": [(".", -0.1)],
    }
    model = llama(own, ending=0.005, next_tokens=asked(table))
    out = generate(model, Request("Write a bakery slogan.", 6, mode="exact-countdown"))
    assert out.raw == "<6>Fresh<5>bread<4>every<3>morning<2>for<1>everyone.<0>"
    assert out.text == "Fresh bread every morning for everyone." and out.verified and not out.errors


@pytest.mark.parametrize(
    "capabilities", [DEFAULT_CAPABILITIES, LLAMA_CPP.__class__(grammar_field="grammar", prefill="assistant")]
)
def test_no_ending_is_searched_where_the_server_cannot_score_endings(capabilities) -> None:
    model = ScriptedBackend(OWN, capabilities=capabilities, next_tokens=asked(NEXT))
    mode = "baseline" if not capabilities.grammar else "exact"
    out = generate(model, Request(INSTRUCTION, 12, mode=mode))
    assert len(model.requests) == 1 and out.planned_ending is None and out.text == OWN


def test_a_run_asked_not_to_plan_keeps_its_own_ending() -> None:
    log: list[str] = []
    model = llama(OWN, ending=0.005, next_tokens=asked(NEXT, log))
    out = generate(model, Request(INSTRUCTION, 12, mode="exact", plan_ending=False))
    assert out.text == OWN and out.planned_ending is None and log == []


def test_the_live_view_says_the_ending_is_being_searched_and_keeps_the_text() -> None:
    notes, gens = [], []

    def next_tokens(text: str):
        notes.append((gens[0].live_note(), gens[0].outcome().text))
        return NEXT.get(text)

    gens.append(Generation(llama(OWN, ending=0.005, next_tokens=next_tokens), Request(INSTRUCTION, 12, mode="exact")))
    gens[0].run()
    assert notes and all(" · choosing an ending: 1 of 3 tries" in n for n, _ in notes)  # its progress, said
    assert all(text == OWN for _, text in notes)  # the live text is the run's own until an ending is found
    assert gens[0].outcome().text == HEAD + FOUND and gens[0].live_note() == ""


def test_a_stop_during_the_search_keeps_the_runs_own_text_at_once() -> None:
    gens: list[Generation] = []

    def next_tokens(text: str):
        gens[0].cancel()  # the writer presses Stop while the ending is searched
        return NEXT.get(text)

    gens.append(Generation(llama(OWN, ending=0.005, next_tokens=next_tokens), Request(INSTRUCTION, 12, mode="exact")))
    out = gens[0].run()
    assert out.text == OWN and out.planned_ending["searched"] == []


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
    model = llama(POST, ending=lambda text: {"Saturday.": 0.001, "out.": 0.003}.get(text.rsplit(" ", 1)[-1], 0.002))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", target_kind="at_most"))
    assert out.text.endswith("sells out.") and out.end_probability == 0.003


def test_a_text_that_leaves_room_may_gain_the_closing_sentence_the_model_would_end_on() -> None:
    model = llama(by_prefill("Fresh bread every Saturday.", " Come early!"), ending=natural_after("Come early!"))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", target_kind="at_most"))
    assert out.text == "Fresh bread every Saturday. Come early!" and out.verified and out.end_probability == 0.9
    rivals = [options for _, options in model.requests if options.prefill is not None]
    assert len(rivals) == 3 and {o.prefill for o in rivals} == {"Fresh bread every Saturday."}
    closing = rivals[0].grammar.render()
    assert closing.startswith('root ::= (" " word){0,11} " " wend')  # a short closing: at most 12 words


def test_a_text_under_a_limit_that_ends_naturally_gains_no_closing_sentence() -> None:
    # "Your bakery now sells sourdough on Saturdays." came back as "… Saturdays. 280 characters max."
    model = llama(by_prefill("Fresh bread every Saturday.", " 280 characters max."), ending=0.9)
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", target_kind="at_most"))
    assert out.text == "Fresh bread every Saturday." and len(model.requests) == 1


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

    model = llama(reply, ending=natural_after("Come early!"))  # its own ending reads cut off: closings are written
    gens.append(Generation(model, Request(INSTRUCTION, 20, mode="exact", target_kind="at_most")))
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


def test_a_limit_ends_at_the_last_natural_sentence_end_else_the_likeliest() -> None:
    assert natural_cut([0.9, 0.6, NATURAL / 2]) == 1
    assert natural_cut([0.002, 0.003, 0.001]) == 1


# ----- the embedded model, end to end ------------------------------------------------------------------------------


def test_the_embedded_model_searches_a_cut_off_ending_for_a_natural_one_and_keeps_the_count(embedded) -> None:
    # Seeds 3, 7 and 10 end "… a classic dish made with San Maroon!" or the like on their own, and the search finds
    # "… with fresh ingredients.". What a seed writes, and what the model answers the search, can change with what
    # the server's slots held before (llama.cpp reuses a cached prompt; a busy machine batches differently), so the
    # seeds are tried until one whose own ending is cut off had it replaced; every one keeps the count.
    replaced = []
    for seed in (7, 3, 10, 2, 5, 11):
        out = generate(embedded, Request(INSTRUCTION, 12, mode="exact", seed=seed))
        assert out.verified and out.count == 12
        plan = out.planned_ending
        if plan["own"]["end_probability"] < NATURAL and "chosen" in plan:
            replaced.append((plan, out))
            break
    assert replaced, "no cut-off ending was replaced by a natural one"
    [(plan, out)] = replaced
    assert plan["own"]["end_probability"] < NATURAL <= out.end_probability, plan
    assert plan["chosen"] == out.text != plan["own"]["text"]


def test_the_embedded_model_ends_an_at_most_text_inside_the_limit_at_a_sentence_end(embedded) -> None:
    request = Request("Describe a lighthouse.", 120, mode="exact", target_kind="at_most", unit="chars", seed=5)
    out = generate(embedded, request)
    assert out.verified and out.count <= 120 and out.text[-1] in ".!?"
    assert out.end_probability is not None


def test_the_cli_prints_the_kept_ending_once_not_the_one_it_replaced(scripted_model: ScriptedBackend) -> None:
    scripted_model.capabilities = LLAMA_CPP
    scripted_model.ending = natural_after("crisp crust.")
    scripted_model.alternatives = asked(NEXT)
    scripted_model.reply(OWN)
    out, err = io.StringIO(), io.StringIO()
    argv = ["generate", "--model", "scripted", "--mode", "exact", "--target", "12", INSTRUCTION]
    assert main(argv, stdin=io.StringIO(), stdout=out, stderr=err) == 0, err.getvalue()
    assert out.getvalue() == HEAD + FOUND + "\n"  # `generate > file` gets the text once: the one kept


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


def test_under_a_word_limit_the_embedded_model_stops_where_its_answer_ends(embedded) -> None:
    # LLGuidance lets llama.cpp stop only on a token the grammar names: without the model's end token (and with
    # "Paris." lexed as a word that goes on) every answer ran on to the limit: "The capital of France is Paris.
    # Please make it a little more concise. I'll leave it at that. …" (30 of at most 30). Two of three seeds must
    # end on their own: a seeded answer was not the same in every whole run of the suite (once, seed 1 wrote
    # "Elaborate on the answer, …" to the limit; alone it ends early in every run), and a 135M model's answer may
    # run long; without the end token none of the three ends early.
    written = []
    for seed in (1, 2, 3):
        request = Request("What is the capital of France?", 30, mode="exact", target_kind="at_most", seed=seed)
        out = generate(embedded, request)
        assert out.verified, out.text
        written.append(out.written or out.text)  # everything the model wrote, before any planned cut
    assert sum(len(text.split()) < 30 for text in written) >= 2, written  # ended on its own end token


def test_the_embedded_models_end_token_is_read_from_its_server_and_named_in_its_grammars(embedded) -> None:
    assert embedded.capabilities.end_token == "<|im_end|>"


def test_an_end_token_the_tokenizer_does_not_know_is_never_named(embedded) -> None:
    # llama.cpp drops a grammar that names an unknown token and writes freely: the guarantee would be gone.
    handle = start_server()
    assert not stops_on(handle.base_url, handle.api_key, "<|nonexistent|>")


# ----- no padding (issue 31): where the model wanted to end before N, it is asked for more content ----------------
SHORT = "Pizza is a flatbread from Naples. It has tomato, mozzarella and basil."  # 12 words: the model's own end
PADDED = SHORT + " The end. The end. The end. The end."  # 20 words: what the grammar forced after it
MORE = " A wood oven bakes it in ninety seconds."  # 8 more words, a new point
GOES_ON = {"Pizza is a flatbread from Naples.": [(" It", -0.1)]}  # P(end) 0 after the first sentence
WANTS_TO_END = {**GOES_ON, SHORT: [("", math.log(0.9)), (" The", math.log(0.05))]}  # 0.9 after the second


def test_an_exact_answer_the_model_wanted_to_end_early_is_asked_for_more_content_not_padded() -> None:
    model = llama(by_prefill(PADDED, MORE), ending=0.9, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", ask_more=True))
    _, (more, options) = model.requests
    assert out.text == SHORT + MORE and out.verified and out.count == 20
    assert options.prefill == SHORT and more[0]["content"].startswith(INSTRUCTION) and "detailed" in more[0]["content"]


def test_an_answer_for_more_that_reads_natural_and_clean_spares_the_padded_texts_search() -> None:
    # No padded text's ending can outweigh it (the gate keeps an answer at least half as sure): its search is skipped.
    model = llama(by_prefill(PADDED, MORE), ending=0.9, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact"))
    assert out.text == SHORT + MORE and out.planned_ending["more"]["kept"]
    assert PADDED not in [text for _, text in model.endings_asked]


def test_an_answer_for_more_that_reads_cut_off_is_still_weighed_against_the_padded_text() -> None:
    model = llama(by_prefill(PADDED, " A wood oven bakes it in ninety"), ending=natural_after("The end."))
    model.alternatives = asked(WANTS_TO_END)
    out = generate(model, Request(INSTRUCTION, 20, mode="exact"))
    assert PADDED in [text for _, text in model.endings_asked] and out.text == PADDED


def test_an_exact_answer_the_model_wanted_to_end_early_is_asked_for_more_by_default() -> None:
    model = llama(by_prefill(PADDED, MORE), ending=0.9, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact"))
    assert len(model.requests) == 2 and out.text == SHORT + MORE


def test_with_the_call_for_more_turned_off_an_early_end_is_one_call_as_written() -> None:
    model = llama(by_prefill(PADDED, MORE), ending=0.9, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", ask_more=False))
    assert len(model.requests) == 1 and out.text == PADDED


def test_the_padded_text_is_kept_with_the_plan_and_nothing_the_model_wrote_is_lost() -> None:
    model = llama(by_prefill(PADDED, MORE), ending=0.9, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", ask_more=True))
    assert out.planned_ending["more"] == {"ended_at": 12, "asked": 8, "written": PADDED, "kept": True}


NUMBER_LIST = " 1. Dough. 2. Sauce. 3. Cheese. 4. Basil."  # 8 more words: a number list the padding was not
CUT_OFF = " A wood oven bakes it in ninety of."  # 8 more words, ending on a dangling word
PLAIN_PAD = SHORT + " It is a dish loved all over Italy."  # 20 words padded with no quality warning
GATE = [  # the padded text, what the call for more wrote, its ending score, and which text stands
    pytest.param(PADDED, MORE, 0.9, SHORT + MORE, id="a new point that ends naturally is kept"),
    pytest.param(PADDED, NUMBER_LIST, 0.9, PADDED, id="a number list loses to the padded text"),
    pytest.param(PADDED, MORE, 0.005, PADDED, id="an ending that reads cut off loses to the padded text"),
    pytest.param(PADDED, CUT_OFF, 0.9, PADDED, id="a dangling last word loses to the padded text"),
    pytest.param(PLAIN_PAD, MORE, 0.3, PLAIN_PAD, id="an ending less than half as sure as a clean padded one loses"),
    pytest.param(PLAIN_PAD, MORE, 0.5, SHORT + MORE, id="an ending at least half as sure as the padded one is kept"),
    pytest.param(PADDED, MORE, 0.3, SHORT + MORE, id="a clean answer beats padding in circles however sure it ends"),
]


@pytest.mark.parametrize(("padded", "more", "score", "kept"), GATE)
def test_a_call_for_more_content_is_kept_only_where_it_reads_better_than_the_padding(
    padded: str, more: str, score: float, kept: str
) -> None:
    ending = lambda text: score if text.strip() == (SHORT + more).strip() else 0.9  # noqa: E731
    model = llama(by_prefill(padded, more), ending=ending, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", ask_more=True))
    assert (out.text, out.verified, out.count) == (kept, True, 20)


def test_the_answer_for_more_that_was_not_kept_stays_with_the_run() -> None:
    model = llama(by_prefill(PADDED, NUMBER_LIST), ending=0.9, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", ask_more=True))
    more = out.planned_ending["more"]
    assert (more["kept"], more["answer"]) == (False, SHORT + NUMBER_LIST)


def test_the_call_that_asks_for_more_must_write_exactly_the_room_left() -> None:
    model = llama(by_prefill(PADDED, MORE), ending=0.9, next_tokens=asked(WANTS_TO_END))
    generate(model, Request(INSTRUCTION, 20, mode="exact", ask_more=True))
    _, (_, options) = model.requests
    assert '(" " WORD){7}' in options.grammar or "{7}" in options.grammar  # 7 words, then the last: 8 more


def test_an_exact_answer_the_model_never_wanted_to_end_early_takes_one_call() -> None:
    model = llama(by_prefill(PADDED, MORE), ending=0.9, next_tokens=asked({**GOES_ON, SHORT: [(" The", -0.1)]}))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", ask_more=True))
    assert len(model.requests) == 1 and out.text == PADDED and "more" not in (out.planned_ending or {})


def test_no_more_content_is_asked_where_the_run_does_not_plan_its_ending() -> None:
    model = llama(by_prefill(PADDED, MORE), ending=0.9, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", plan_ending=False, ask_more=True))
    assert len(model.requests) == 1 and out.text == PADDED


def test_the_search_stops_at_the_step_that_finds_its_first_natural_ending() -> None:
    table = {  # "H a x" ends naturally at the third step; "H bee y", likelier, is only reached at the fourth
        "H": [(" a", -0.1), (" b", -0.01)],
        "H a": [(" x", -0.1)],
        "H b": [("ee", -0.01)],
        "H a x": [(".", -0.01)],
        "H bee": [(" y", -0.01)],
        "H bee y": [(".", -0.01)],
    }
    asked_first: list[str] = []
    asked_all: list[str] = []
    ask = lambda log: lambda texts: [asked(table, log)(t) for t in texts]  # noqa: E731
    found = search_ending("H", 0, 2, ask(asked_first), "en", lambda unit: True, first=True)
    search_ending("H", 0, 2, ask(asked_all), "en", lambda unit: True)
    assert [e.text for e in found] == ["H a x."] and "H bee y" not in asked_first and "H bee y" in asked_all


def test_a_stream_prints_no_padding_the_call_for_more_replaces() -> None:
    padded = SHORT + " The end." * 9  # 30 words: the search may write the last 10 again, the call for more the 18
    model = llama(by_prefill(padded, MORE), ending=0.9, next_tokens=asked(WANTS_TO_END))
    run = Generation(model, Request(INSTRUCTION, 30, mode="exact", ask_more=True))
    settled = [run.settled_text() for _ in run.stream()]
    text = run.outcome().text
    assert text.startswith(SHORT + MORE) and "Pizza is a flatbread from Naples." in settled
    assert all(text.startswith(s) for s in settled)  # what a stream printed stays


def test_while_the_call_for_more_writes_a_stream_prints_the_answer_up_to_where_the_model_wanted_to_end() -> None:
    padded = SHORT + " The end." * 9  # 30 words; the model wanted to end after SHORT (12 words), the search 10
    model = llama(
        by_prefill(padded, Turn(tuple(" " + w for w in MORE.split()), delay=0.01)),
        ending=0.9,
        next_tokens=asked(WANTS_TO_END),
    )
    run = Generation(model, Request(INSTRUCTION, 30, mode="exact", ask_more=True))
    while_more = [run.settled_text() for _ in run.stream() if len(run.calls) == 2]
    assert while_more and set(while_more) == {SHORT}  # both sentences, not the first alone, from its first chunk on


@pytest.mark.model
def test_the_embedded_model_that_wanted_to_stop_early_goes_on_from_its_own_answer_and_keeps_the_count(embedded) -> None:
    out = generate(embedded, Request("What is the capital of France?", 40, mode="exact", seed=3, ask_more=True))
    more = out.planned_ending["more"]  # it wanted to end after "…is Paris." (P(end) 0.7): asked for more content
    kept = more["written"].split()[: more["ended_at"]]
    assert out.verified and out.count == 40 and out.text.split()[: more["ended_at"]] == kept
    assert more["ended_at"] + more["asked"] == 40 and not repeated_sentences(out.text)


@pytest.mark.parametrize(
    ("flag", "printed"),
    [("--ask-more", SHORT + MORE), ("--no-ask-more", PADDED), (None, SHORT + MORE)],
    ids=["asked", "turned off", "the default asks"],
)
def test_generate_asks_for_more_content_where_the_model_wanted_to_end_unless_turned_off(
    scripted_model, flag, printed
) -> None:
    scripted_model.capabilities = LLAMA_CPP
    scripted_model.ending = lambda text: 0.9
    scripted_model.alternatives = asked(WANTS_TO_END)
    scripted_model.reply(by_prefill(PADDED, MORE))
    argv = ["generate", "--model", "scripted", "--mode", "exact", "--target", "20", *filter(None, [flag]), INSTRUCTION]
    out = io.StringIO()
    main(argv, stdin=io.StringIO(), stdout=out, stderr=io.StringIO())
    assert out.getvalue().strip() == printed


def test_a_limited_text_whose_ending_could_not_be_scored_is_kept_whole_not_cut_to_a_scored_sentence() -> None:
    reply = "Your appointment is on Tuesday at 3:30 pm. Please call us to confirm."
    busy = lambda text: None if text.endswith("confirm.") else 0.9  # noqa: E731  (the whole text's score timed out)
    request = Request("Remind a patient.", 160, mode="exact", target_kind="at_most", unit="sms")
    assert generate(llama(reply, ending=busy), request).text == reply


@pytest.mark.parametrize("fail", ["cut", "server", "timeout"])
def test_a_call_for_more_that_breaks_leaves_the_first_text_complete_and_verified(fail) -> None:
    model = llama(by_prefill(PADDED, Turn((" A wood",), fail=fail)), ending=0.9, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", ask_more=True))
    assert (out.status, out.verified, out.text) == ("complete", True, PADDED)


def test_the_notice_says_why_the_first_text_stands_when_the_call_for_more_broke() -> None:
    model = llama(by_prefill(PADDED, Turn((" A wood",), fail="cut")), ending=0.9, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact", ask_more=True))
    assert "asking it for 8 more failed (the stream broke off" in out.notice and out.planned_ending["more"]["answer"]


def test_a_stop_while_asking_for_more_leaves_the_first_text_complete_and_verified() -> None:
    slow = Turn(tuple(f" w{i}" for i in range(8)), delay=0.05)
    model = llama(by_prefill(PADDED, slow), ending=0.9, next_tokens=asked(WANTS_TO_END))
    run = Generation(model, Request(INSTRUCTION, 20, mode="exact"))
    for _ in run.stream():
        if len(run.calls) == 2 and "w2" in run.raw:
            run.cancel()
    out = run.outcome()
    assert (out.status, out.verified, out.text) == ("complete", True, PADDED) and "was stopped" in out.notice


def test_what_a_broken_call_for_more_wrote_stays_with_the_run_whatever_the_padded_texts_ending() -> None:
    broken = Turn((" A wood",), fail="cut")  # the padded text's ending reads cut off: it is planned, not compared
    model = llama(by_prefill(PADDED, broken), ending=0.005, next_tokens=asked(WANTS_TO_END))
    out = generate(model, Request(INSTRUCTION, 20, mode="exact"))
    assert out.planned_ending["more"]["answer"] == SHORT + " A wood"


def test_a_stream_prints_nothing_of_an_answer_for_more_the_padded_text_beats() -> None:
    padded = SHORT + " It is baked in a wood oven. The crust is thin and crisp. Many eat it by hand."  # 30 words
    answer = " A wood oven bakes it in ninety seconds and the cheese melts slowly into the red sauce."  # 18 more
    ending = lambda text: 0.3 if answer.strip()[:20] in text else 0.9  # noqa: E731  (the answer reads less sure)
    model = llama(by_prefill(padded, answer), ending=ending, next_tokens=asked(WANTS_TO_END))
    run = Generation(model, Request(INSTRUCTION, 30, mode="exact", ask_more=True))
    settled = [run.settled_text() for _ in run.stream()]
    assert run.outcome().text == padded and run.planned_ending["more"]["kept"] is False
    assert all(padded.startswith(s) for s in settled)  # what a stream printed stays


def test_the_padded_first_text_is_saved_with_the_run_and_history_shows_it(scripted_model: ScriptedBackend) -> None:
    # The notice says "its first text, padded to the count, is kept with the run": the saved run has it too.
    scripted_model.capabilities, scripted_model.ending = LLAMA_CPP, 0.9
    scripted_model.alternatives = asked(WANTS_TO_END)
    scripted_model.reply(by_prefill(PADDED, MORE))
    err = io.StringIO()
    argv = ["generate", "--model", "scripted", "--mode", "exact", "--target", "20", INSTRUCTION]
    assert main(argv, stdin=io.StringIO(), stdout=io.StringIO(), stderr=err) == 0, err.getvalue()
    (run,) = list_runs(get_engine())
    shown = io.StringIO()
    assert main(["history", "show", str(run.id)], stdin=io.StringIO(), stdout=shown, stderr=err) == 0
    assert run.text == SHORT + MORE and f"padded to the count after 12 words:\n{PADDED}\n" in shown.getvalue()

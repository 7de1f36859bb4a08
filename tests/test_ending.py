"""The ending score: asked of the model after every complete run, stored with it, shown in plain words; and the
ending search that plans an exact text's last words."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from capel_ui.backends import Turn, get_backend
from capel_ui.ending import (
    CUT_CAP,
    NATURAL,
    adjusted,
    ending_words,
    ends_naturally,
    last_words_cut,
    natural_share,
    phrase_end_share,
    score_from_tokens,
    search_ending,
    split_ending,
)
from capel_ui.generation import Generation, Request
from capel_ui.history import history_rows, show_run
from capel_ui.runs import LiveRun
from capel_ui.storage import get_engine, get_run

TEXT = "Lighthouses guide ships home."


def engine():
    return get_engine(os.environ["DATABASE_URL"])


def saved(scripted_model, ending, reply=TEXT, *, target: int = 4):
    """A run of the scripted model that says `ending` of any text, saved; its row."""
    scripted_model.ending = ending
    scripted_model.reply(reply)
    request = Request("Describe a lighthouse.", target, mode="baseline")
    live = LiveRun(Generation(get_backend("scripted"), request), engine(), origin="cli")
    live.run()
    return get_run(engine(), live.run_id)


@pytest.mark.parametrize(
    ("p", "words"),
    [(None, None), (0.0, "cut off"), (0.009, "cut off"), (NATURAL, "ends naturally"), (1.0, "ends naturally")],
)
def test_an_ending_is_natural_from_a_one_in_a_hundred_chance_of_a_phrase_end(p, words) -> None:
    assert ending_words(p) == words


def test_the_natural_share_counts_only_scored_texts() -> None:
    assert natural_share([0.9, 0.001, None, 0.5]) == pytest.approx(2 / 3)
    assert natural_share([None]) is None


@pytest.mark.parametrize(("p", "words"), [(0.8, "ends naturally"), (0.005, "cut off")])
def test_the_ending_score_is_asked_after_the_run_stored_and_said_in_plain_words(scripted_model, p, words) -> None:
    run = saved(scripted_model, p)
    assert run.end_probability == p
    [(messages, text)] = scripted_model.endings_asked
    assert text == TEXT  # the clean text, as the model's answer ...
    assert messages[-1]["content"].startswith("Describe a lighthouse.")  # ... to the instruction with its length
    assert "in exactly 4 words" in messages[-1]["content"]
    assert history_rows([run])[0]["ending"] == words


def test_a_cut_off_ending_costs_points_and_says_so_in_history(scripted_model) -> None:
    natural = saved(scripted_model, 0.9)
    cut = saved(scripted_model, 0.0)
    assert natural.score - cut.score == pytest.approx(3.0)
    shown = show_run(cut)
    assert "ending: The model would have gone on with the last sentence (ending score 0.00" in shown
    assert "score" in shown and "last sentence cut off" in shown


def test_a_server_that_cannot_say_leaves_the_ending_unknown(scripted_model) -> None:
    run = saved(scripted_model, None)
    assert run.end_probability is None and history_rows([run])[0]["ending"] == ""
    assert "ending:" not in show_run(run)


def test_a_run_that_did_not_complete_is_not_scored(scripted_model) -> None:
    run = saved(scripted_model, 0.9, Turn(("Lighthouses ", "guide"), fail="cut"))
    assert run.status == "partial" and run.end_probability is None
    assert scripted_model.endings_asked == []


def test_write_shows_a_cut_off_ending_beside_the_verdict_as_a_warning(app_test, scripted_model) -> None:
    run = saved(scripted_model, 0.002)
    app_test.session_state["w_run_id"] = run.id
    app_test.run()
    assert not app_test.exception, app_test.exception
    marks = [m.value for m in app_test.markdown]
    assert [m for m in marks if "-badge[" in m] == [":green-badge[✓ exact · verified · 4/4 English words]"]
    assert ":orange-background[:material/warning: cut off]" in marks  # the count's badge stays the count's
    assert any("would have gone on" in w.value for w in app_test.warning)


@pytest.mark.model
def test_the_embedded_model_scores_a_finished_answer_above_a_cut_one(embedded) -> None:
    """The real model: a finished sentence ends naturally; one closed inside a phrase, or on a word bent to fit, does
    not (endings read and labelled by hand in benchmarks/ending_labels.py)."""
    messages = [
        {"role": "user", "content": "Describe a traditional Italian pizza.\n\nPlease answer in exactly 12 words."}
    ]
    head = "The traditional Italian pizza is a classic dish made with"
    finished = embedded.ending_score(messages, head + " fresh ingredients.")
    cut = embedded.ending_score(messages, head + " San Maroon!")
    bent = embedded.ending_score(messages, head + " fresh withholding.")
    assert None not in (finished, cut, bent)
    assert finished >= NATURAL > max(cut, bent)


@pytest.mark.model
@pytest.mark.parametrize(
    ("instruction", "text"),
    [
        ("Give tips for sleeping better.", "Here's a 12 word explanation: 1. Make sure to sleep properly."),
        ("Give tips for sleeping better.", "Sleep well and wake up ready for winter."),
        ("Give advice on preparing for a job interview.", "Be ready to talk about yourself."),
    ],
    ids=["lone_space_then_pieces", "lone_space_winter", "shorter_first_token"],
)
def test_a_last_word_the_model_writes_as_one_token_is_scored_as_that_token(embedded, instruction, text) -> None:
    """Forced by a grammar, " properly." was written " ", "pro", "per", "ly" (7e-10) and " yourself." " your",
    "self" (9e-6): pieces the model never writes. Scored from the tokenizer's own first token, the finished
    sentences end naturally."""
    messages = [{"role": "user", "content": f"{instruction}\n\nPlease answer in exactly 12 words."}]
    assert embedded.ending_score(messages, text) >= NATURAL


@pytest.mark.model
def test_ending_scores_asked_four_at_once_are_the_scores_asked_one_at_a_time(embedded) -> None:
    """The embedded server's four slots batch the requests together: the same scores, up to batching's rounding."""
    messages = [
        {"role": "user", "content": "Describe a traditional Italian pizza.\n\nPlease answer in exactly 12 words."}
    ]
    head = "The traditional Italian pizza is a classic dish made with"
    texts = [head + end for end in (" fresh ingredients.", " San Maroon!", " a crispy crust.", " tomato and.")]
    alone = [embedded.ending_score(messages, t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda t: embedded.ending_score(messages, t), texts))
    assert None not in alone + together
    assert together == pytest.approx(alone, abs=0.05)


# ----- the score, from the tokens a server wrote -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("Fresh bread every day.", ("Fresh bread every", " day", ".")),
        ('He said "go home."', ('He said "go', " home", '."')),
        ("Stay ahead", ("Stay", " ahead", "")),
        ("北京很好。", ("北京很", "好", "。")),
        ("Hello.", None),
        ("Ends on a dash —", None),
    ],
    ids=["stop", "quote", "no_stop", "chinese", "one_word", "no_word_last"],
)
def test_a_text_splits_before_its_last_unit(text, parts) -> None:
    assert split_ending(text) == parts


@pytest.mark.parametrize(
    ("alternatives", "share"),
    [
        ([(".", math.log(0.5)), (",", math.log(0.2)), (" and", math.log(0.3))], 0.7),
        ([("。", math.log(0.4)), ("的", math.log(0.6))], 0.4),
        ([(" and", -0.1)], 0.0),
        (None, 0.0),
        ([(".", 0.0), ("!", 0.0)], 1.0),
    ],
    ids=["stop_and_comma", "chinese_stop", "no_punctuation", "nothing_listed", "capped_at_one"],
)
def test_the_phrase_end_share_adds_the_punctuation_the_model_would_write_next(alternatives, share) -> None:
    assert phrase_end_share(alternatives) == pytest.approx(share)


@pytest.mark.parametrize(
    ("tokens", "score"),
    [
        ([(" crust", -0.4, []), (".", -0.2, [(".", math.log(0.6)), (",", math.log(0.3))])], 0.9),
        ([(" with", -1.0, []), ("holding", -9.0, []), (".", -0.1, [(".", math.log(0.5))])], math.exp(-9.0) * 0.5),
        ([(" crust", -0.4, []), (".", -3.0, [(" and", -0.1)])], math.exp(-3.0)),
        ([(" crust", -0.4, [])], None),
        ([(" cr", -0.4, []), ("ust.", -0.5, [])], math.exp(-0.5)),
    ],
    ids=["natural", "word_bent_to_fit", "stop_below_the_listed_ones", "nothing_after_the_word", "stop_in_last_token"],
)
def test_the_ending_score_is_the_rest_of_the_last_word_times_a_phrase_end_next(tokens, score) -> None:
    got = score_from_tokens(tokens, " crust" if tokens[0][0] != " with" else " withholding")
    assert got == score if score is None else got == pytest.approx(score)


def test_where_the_words_first_token_was_sent_every_forced_token_of_the_word_counts() -> None:
    tokens = [("holding", -9.0, []), (".", -0.1, [(".", math.log(0.5))])]
    assert score_from_tokens(tokens, "holding", first_written=True) == pytest.approx(math.exp(-9.0) * 0.5)
    assert score_from_tokens([(".", -0.1, [(".", math.log(0.5))])], "", first_written=True) == pytest.approx(0.5)


# ----- the search ----------------------------------------------------------------------------------------------

LIST = {"fresh", "bread", "every", "day", "for", "you", "the", "warm", "loaf", "crust", "crusty", "and"}


def table_ask(table):
    return lambda texts: [table.get(t) for t in texts]


def search(table, head="Fresh bread every", done=3, target=5, width=4):
    return search_ending(head, done, target, table_ask(table), "en", lambda w: w.lower() in LIST, width=width)


def test_the_search_finds_the_likeliest_words_after_which_a_phrase_ends() -> None:
    table = {
        "Fresh bread every": [(" day", -0.1), (" warm", -1.0)],
        "Fresh bread every day": [(" for", -0.2), (" and", -0.5)],
        "Fresh bread every day for": [(" you", -0.1), (" the", -0.3)],
        "Fresh bread every day for you": [(".", -0.1)],
        "Fresh bread every day for the": [(".", -0.1)],  # dangling: never an ending
        "Fresh bread every day and": [(" warm", -0.1)],
        "Fresh bread every day and warm": [(" and", -0.1)],  # no phrase ends
    }
    [best, *_] = search(table, target=6)
    assert best.text == "Fresh bread every day for you." and best.natural
    assert best.score == pytest.approx(math.exp(-0.1), abs=1e-4) and best.logprob == pytest.approx(-0.4)


def test_the_search_writes_exactly_the_units_left() -> None:
    table = {"Fresh bread every": [(" day", -0.1)], "Fresh bread every day": [(".", -0.1), (" for", -0.2)]}
    table["Fresh bread every day for"] = [(" you", -0.1)]
    table["Fresh bread every day for you"] = [(".", -0.1)]
    assert [e.text for e in search(table, target=6)] == ["Fresh bread every day for you."]  # not 4 words


def test_a_word_the_model_splits_in_tokens_is_one_unit_and_its_rest_counts() -> None:
    table = {"Fresh bread every": [(" day", -0.1)], "Fresh bread every day": [(" cr", -0.2)]}
    table["Fresh bread every day cr"] = [("usty", -0.7)]
    table["Fresh bread every day crusty"] = [(".", math.log(0.5))]
    [best] = search(table)
    assert best.text == "Fresh bread every day crusty." and best.score == pytest.approx(math.exp(-0.7) * 0.5, abs=1e-4)


@pytest.mark.parametrize(
    ("last", "why"),
    [(" loafz", "not in the word list"), (" the", "dangling")],
)
def test_the_search_ends_only_on_a_word_the_grammar_could_end_on(last, why) -> None:
    table = {"Fresh bread every": [(" day", -0.1)], "Fresh bread every day": [(last, -0.1)]}
    table["Fresh bread every day" + last] = [(".", -0.1)]
    assert search(table) == [], why


def test_a_list_cut_short_is_no_ending() -> None:
    table = {"Fresh bread every": [(" day", -0.1)], "Fresh bread every day": [(",", -0.1)]}
    table["Fresh bread every day,"] = [(" loaf", -0.1)]
    table["Fresh bread every day, loaf"] = [(".", -0.1)]
    assert search(table) == []  # "…every day, loaf." reads as a list cut short


def test_the_search_keeps_width_paths_at_each_step() -> None:
    asked: list[int] = []
    table = {"Fresh bread every": [(f" {w}", -0.1 * i) for i, w in enumerate(["day", "warm", "fresh", "loaf", "and"])]}

    def ask(texts):
        asked.append(len(texts))
        return [table.get(t) for t in texts]

    search_ending("Fresh bread every", 3, 5, ask, "en", lambda w: w.lower() in LIST, width=2)
    assert asked[0] == 1 and max(asked) <= 2


def logged_search(table, log, **kwargs):
    """The search with `table`'s answers, every question it asks kept in `log`."""

    def ask(texts):
        log.extend(texts)
        return [table.get(t) for t in texts]

    return search_ending("Fresh bread every", 3, 5, ask, "en", lambda w: w.lower() in LIST, **kwargs)


ENDS_ON_LOAF = {  # "…every day loaf." ends naturally at the first step that has 5 words, beside a path still short
    "Fresh bread every": [(" day", -0.1), (",", -0.5)],
    "Fresh bread every,": [(" day", -0.1)],
    "Fresh bread every day": [(" loaf", -0.1), (" crust", -0.5), (" warm", -3.0)],
    "Fresh bread every day loaf": [(".", -0.1)],
    "Fresh bread every day crust": [(".", -0.1)],
    "Fresh bread every day warm": [(".", -0.1)],
}


def test_a_step_that_finds_a_natural_ending_asks_nothing_about_paths_still_short() -> None:
    log: list[str] = []
    [best, *_] = logged_search(ENDS_ON_LOAF, log, first=True)
    assert best.text == "Fresh bread every day loaf." and best.natural
    assert "Fresh bread every, day" not in log  # one word short: its next tokens would never be used


def test_once_a_natural_ending_is_found_no_less_likely_last_word_is_asked() -> None:
    log: list[str] = []
    [best] = logged_search(ENDS_ON_LOAF, log, first=True)
    assert best.text == "Fresh bread every day loaf."
    assert "Fresh bread every day crust" not in log  # less likely than the ending found: it could not win


def test_an_ending_the_caller_would_not_keep_does_not_end_the_search() -> None:
    log: list[str] = []
    found = logged_search(ENDS_ON_LOAF, log, first=True, keep=lambda t: "loaf" not in t)
    assert "Fresh bread every day crust" in log  # "…day loaf." would not be kept: the next likeliest is asked
    assert [e.text for e in found] == ["Fresh bread every day loaf.", "Fresh bread every day crust."]


@pytest.mark.parametrize(
    ("last", "asked"),
    [
        (" the", False),  # "…every day the": no rest of "the" ends a sentence
        (", loaf", False),  # "…every day, loaf": a list cut short, whatever follows
        (" A", True),  # a capital may start a longer word: " A" then "wa" then "its" is "Awaits"
    ],
)
def test_a_path_that_can_never_end_the_search_is_not_asked(last, asked) -> None:
    log: list[str] = []
    table = {"Fresh bread every": [(" day", -0.1)], "Fresh bread every day": [(",", -0.2), (last, -0.1)]}
    table["Fresh bread every day,"] = [(" loaf", -0.1)]
    logged_search(table, log, first=True)
    assert ("Fresh bread every day" + last in log) is asked


def test_the_search_writes_chinese_characters() -> None:
    table = {"北京": [("很", -0.1)], "北京很": [("好", -0.1)], "北京很好": [("。", -0.1)]}
    [best] = search_ending("北京", 2, 4, table_ask(table), "zh", lambda ch: True)
    assert best.text == "北京很好。" and best.natural


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("Each candle is poured by hand and ready to enjoy fresh.", True),  # issue 31's misses
        ("Our house roast is a rich, bold coffee with a blend of sweet.", True),
        ("This slim wallet is cut from full-grain leather and features a durable.", True),
        ("It is a unique and luxurious.", True),
        ("Each candle is.", True),
        ("Here's how: 1. Make sure to sleep properly. 2.", True),  # a numbered list cut at its next number
        ("We open at 9.", False),
        ("The bread is warm and fresh.", False),  # after a linking verb a describing word ends a sentence
        ("It keeps your coffee warm.", False),
        ("Made with fresh ingredients.", False),
        ("Sleep better than you ever have.", False),
        ("Take it as it is.", False),
        ("Come early if you can.", False),
        ("Each candle is poured by hand and ready to stay fresh.", False),
        ("It gives them the energy they need to grow and thrive.", False),  # a verb, and the words after "and"
        ("Each loaf is ready to enjoy warm and fresh.", True),
        ("It raises the risk of chronic diseases. When we are under stress.", True),  # a clause with no sentence
        ("Call us first. If you need a table for six.", True),
        ("When in doubt, ask the staff.", False),  # the clause has its sentence after the comma
        ("If so, call us today.", False),
        ("Come by when you are in town.", False),
        ("Stay until the sun sets.", False),
    ],
)
def test_the_last_words_say_when_a_sentence_is_not_over(text: str, cut: bool) -> None:
    assert last_words_cut(text) is cut


@pytest.mark.parametrize(
    ("p", "text", "expected"),
    [
        (0.6, "…features a durable.", CUT_CAP),  # the model's confidence does not make it whole
        (0.002, "…features a durable.", 0.002),  # a lower score stays as it is (the order among cut endings)
        (0.6, "…built to last.", 0.6),
        (None, "…features a durable.", None),  # no model, no score
    ],
)
def test_the_ending_score_is_the_models_read_with_the_last_words(p, text: str, expected) -> None:
    assert adjusted(p, text) == expected
    assert ends_naturally(adjusted(p, text)) is (None if p is None else expected >= NATURAL)


def test_the_search_reads_a_found_endings_last_words_as_any_texts() -> None:
    table = {  # "…When we rest." likeliest, but a clause alone; "…We all rest." is plainly over
        "It harms.": [(" When", -0.01), (" We", -2.0)],
        "It harms. When": [(" we", -0.01)],
        "It harms. When we": [(" rest", -0.01)],
        "It harms. When we rest": [(".", -0.01)],
        "It harms. We": [(" all", -0.01)],
        "It harms. We all": [(" rest", -0.01)],
        "It harms. We all rest": [(".", -0.01)],
    }
    found = search_ending("It harms.", 2, 5, table_ask(table), "en", lambda w: True)
    assert [e.text for e in found if e.natural] == ["It harms. We all rest."]

"""Rewrite to length: shortening as selection of the writer's own words, no preamble ever counted, faithfulness.

The selection grammar is checked offline with LLGuidance (random walks through it: every text it admits is N of
the writer's words in their order), the routes and the prompt with the in-process scripted model, the CLI against
a scripted OpenAI-compatible server, and one run on the real embedded model.
"""

from __future__ import annotations

import io
import json
import random
import re

import llguidance
import pytest
from llguidance.gbnf_to_lark import gbnf_to_lark

from capel_ui.backends import Capabilities, get_backend
from capel_ui.backends.providers.scripted import ScriptedBackend
from capel_ui.cli import main
from capel_ui.counting import count
from capel_ui.generation import Request, generate
from capel_ui.grammar import exact_rules, starting_with
from capel_ui.prompts import REWRITE, rewrite_source
from capel_ui.rewrite import (
    MAX_SELECTION_WORDS,
    faithfulness,
    first_word,
    route,
    selection_rules,
    source_words,
    strip_preamble,
)
from capel_ui.service import start
from capel_ui.storage import create_run, get_engine, get_run
from capel_ui.verdict import Target
from capel_ui.vocab import PROJECT_ROOT
from tests.llg import _tokenizer, accepts, compiled
from tests.scripted_server import MODEL, honour_grammar, ok

PARAGRAPHS = [
    json.loads(line)["text"]
    for line in (PROJECT_ROOT / "capel_ui/bench/data/rewrite/paragraphs.jsonl").read_text().splitlines()
]
COUNCIL = (
    "The city council voted on Tuesday to expand the bike lane network, after months of debate. "
    "The plan adds twelve miles of protected lanes downtown, and it will be finished by next spring. "
    "Residents who opposed it said that parking would suffer, but the mayor promised new garages."
)
LLAMA = Capabilities(grammar_field="grammar")


def run_cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def rewrite(text: str) -> str:
    return REWRITE["en"].format(text=text)


def walk(gbnf: str, seed: int) -> str:
    """A random text the grammar admits: at each byte, any byte it allows (the end when it allows that)."""
    rng = random.Random(seed)
    matcher = llguidance.LLMatcher(_tokenizer(), compiled("lark", gbnf_to_lark(gbnf)), log_level=0)
    out = b""
    while True:
        allowed = [t for t, ok_ in enumerate(matcher.compute_logit_bias()) if ok_]
        choice = rng.choice(allowed)
        if choice == 256:
            return out.decode()
        assert matcher.consume_token(choice)
        out += bytes([choice])


def in_order(text: str, source: str) -> bool:
    """Whether every word of `text` is a word of `source`, in the source's order (case aside)."""
    words = [w.core.lower() for w in source_words(source)]
    at = 0
    for word in re.findall(r"\S+", text):
        core = word.strip(".,;:!?").lower()
        while at < len(words) and words[at] != core:
            at += 1
        if at == len(words):
            return False
        at += 1
    return True


# ----- the selection grammar ----------------------------------------------------------------------------------


@pytest.mark.parametrize("share", [0.5, 0.75, 0.9])
@pytest.mark.parametrize("source", [COUNCIL, *PARAGRAPHS[:4]], ids=["council", "p1", "p2", "p3", "p4"])
def test_every_text_the_selection_admits_is_n_of_the_writers_words_in_order(source: str, share: float) -> None:
    n = round(count(source, "en_words") * share)
    grammar = selection_rules(source, n, n)
    for seed in range(3):
        text = walk(grammar, seed)
        assert count(text, "en_words") == n, text
        assert in_order(text, source), text
        assert text[-1] in ".!?" and faithfulness(source, text).new == 0


def test_a_range_selection_keeps_a_count_within_it() -> None:
    grammar = selection_rules(COUNCIL, 20, 24)
    counts = {count(walk(grammar, seed), "en_words") for seed in range(6)}
    assert counts <= set(range(20, 25))


@pytest.mark.parametrize("share", [0.25, 0.5, 0.9])
def test_the_selection_grammar_stays_linear_in_the_texts_length(share: float) -> None:
    """40 to 60 rules a word whatever the target: the count is kept near an even spread, not all O(M·N) states."""
    source = " ".join(PARAGRAPHS)  # about 700 words: all O(M·N) states would be 2 to 8 times the bound
    words = count(source, "en_words")
    grammar = selection_rules(source, round(words * share), round(words * share))
    assert grammar.count("\n") < 80 * words


@pytest.mark.parametrize(
    ("text", "cores"),
    [
        ("“Hello,” she said.", ["Hello", "she", "said"]),
        ("Mr. Smith met Dr. Jones. They talked.", ["Mr", "Smith", "met", "Dr", "Jones", "They", "talked"]),
        ("Rain — then sun!", ["Rain", "then", "sun"]),
        ("It costs $5 (or 3,000 yen).", ["It", "costs", "$5", "or", "3,000", "yen"]),
    ],
)
def test_source_words_are_the_counted_words_without_the_punctuation_around_them(text: str, cores: list[str]) -> None:
    assert [w.core for w in source_words(text)] == cores
    assert len(cores) == count(text, "en_words")


def test_abbreviations_do_not_end_a_sentence_and_a_sentence_keeps_its_own_stop() -> None:
    words = source_words("Mr. Smith met Dr. Jones! Did they talk?")
    assert [w.sentence for w in words] == [0, 0, 0, 0, 0, 1, 1, 1]
    assert {w.stop for w in words[:5]} == {"!"} and {w.stop for w in words[5:]} == {"?"}


# ----- which route a rewrite takes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "mode", "unit", "llama", "selection"),
    [
        (Target.exactly(20), "exact", "en_words", True, True),
        (Target.at_most(25), "exact", "en_words", True, True),
        (Target.between(18, 22), "exact", "en_words", True, True),
        (Target.exactly(60), "exact", "en_words", True, False),  # longer: the model writes it
        (Target.exactly(20), "baseline", "en_words", True, False),
        (Target.exactly(20), "capel", "en_words", True, False),
        (Target.exactly(20), "exact", "en_words", False, False),  # a grammar, but not llama.cpp's
        (Target.at_most(100), "exact", "chars", True, False),
    ],
)
def test_shortening_is_selection_only_where_it_is_guaranteed(target, mode, unit, llama, selection) -> None:
    assert route(COUNCIL, mode, "en", unit, target, llama).selection is selection


def test_a_text_too_long_to_select_from_is_rewritten_and_the_run_says_why() -> None:
    long_text = "Waves fold over old stones. " * (MAX_SELECTION_WORDS // 5 + 1)
    chosen = route(long_text, "exact", "en", "en_words", Target.exactly(50), True)
    assert not chosen.selection and str(MAX_SELECTION_WORDS) in (chosen.note or "")


def test_a_selection_rewrite_sends_the_selection_grammar_and_a_prompt_to_delete_words() -> None:
    model = ScriptedBackend("The city council voted on Tuesday.", capabilities=LLAMA)
    outcome = generate(model, Request.of(Target.exactly(6), rewrite(COUNCIL), mode="exact"))
    [(messages, options)] = model.requests
    assert "by deleting the least important words" in messages[0]["content"]
    assert isinstance(options.grammar, str) and '"garages"' in options.grammar
    assert "lex ::=" not in options.grammar  # the writer's words, and no word list
    assert outcome.verified and outcome.faithfulness is not None and outcome.faithfulness.new == 0


def test_a_longer_rewrite_gets_the_rewrite_prompt_and_the_usual_grammar() -> None:
    model = ScriptedBackend("x", capabilities=LLAMA)
    generate(model, Request.of(Target.exactly(80), rewrite(COUNCIL), mode="exact"))
    [(messages, options)] = model.requests
    assert messages[0]["content"].startswith("Rewrite the text below in exactly 80 words")
    assert "no introduction" in messages[0]["content"] and "lex ::=" in options.grammar  # the word list
    assert options.grammar.startswith('root ::= "The " (word " "){78} wend')  # it starts as the text does


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
def test_a_rewrite_that_starts_as_the_writers_text_still_counts_exactly(syntax: str) -> None:
    grammar = starting_with(exact_rules("en", 6), *first_word(COUNCIL)).render(syntax)
    text = "The council at long last voted."
    assert count(text, "en_words") == 6
    kind = "lark" if syntax == "lark" else "gbnf"
    lark = grammar if kind == "lark" else gbnf_to_lark(grammar)
    assert accepts("lark", lark, text)
    assert not accepts("lark", lark, "Here is the council voting today.")
    assert not accepts("lark", lark, "The council voted.")
    assert not accepts("lark", lark, "The: council at long last voted.")
    assert first_word("Second, to have the best schools") == ("Second", ",")


# ----- no preamble, no commentary ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        (
            "Here is the revised text with edits to keep the original meaning and tone: The council voted.",
            "The council voted.",
        ),
        ("Here is the shorter version:\nThe council voted.", "The council voted."),
        ('Sure! Here\'s a rewrite:\n\n"The council voted."', "The council voted."),
        ("Rewritten text (6 words):\nThe council voted.", "The council voted."),
        ("Revised version: The council voted.", "The council voted."),
        ("The council voted.\n\nNote: I removed the date.", "The council voted."),
        ("The council voted: twelve miles.", "The council voted: twelve miles."),
        ("The revised text aims to convey the plan.", "The revised text aims to convey the plan."),
    ],
)
def test_what_a_model_says_around_its_rewrite_is_cut(reply: str, text: str) -> None:
    assert strip_preamble(reply, COUNCIL) == text


def test_the_writers_own_colon_and_label_are_never_cut() -> None:
    source = "Revised budget: twelve miles of lanes. This leads to the plan: lanes downtown."
    assert strip_preamble("Revised budget: twelve miles of lanes.", source) == "Revised budget: twelve miles of lanes."
    assert strip_preamble("This leads to the plan:\nlanes downtown.", source).startswith("This leads")


def test_a_preamble_in_a_free_rewrite_is_not_counted(scripted_model: ScriptedBackend) -> None:
    scripted_model.reply("Here is the rewritten text:\nThe city council voted on Tuesday.")
    request = Request.of(Target.exactly(6), rewrite(COUNCIL), mode="baseline")
    handle = start(request, lambda: get_backend("scripted"), get_engine(), origin="write")
    outcome = handle.run()
    assert outcome.text == "The city council voted on Tuesday." and outcome.verified
    saved = get_run(get_engine(), handle.live.run_id)
    assert rewrite_source(saved.instruction) == COUNCIL  # saved as a rewrite: History re-runs it as one
    assert (saved.source_kept, saved.source_new) == (outcome.faithfulness.kept, outcome.faithfulness.new)
    assert saved.source_new == 0 and 0 < saved.source_kept < 0.5


@pytest.mark.parametrize(
    "reply",
    [
        "Sure, I will follow the format. Here is a rewritten version:\n\nThe city council voted on Tuesday.",
        "<6>Here<5>is<4>the<3>rewritten<2>text:<1>The<0>",
    ],
)
def test_a_preamble_in_a_capel_rewrite_is_not_counted_either(reply: str) -> None:
    model = ScriptedBackend(reply)
    outcome = generate(model, Request.of(Target.exactly(6), rewrite(COUNCIL), mode="capel", max_calls=1))
    assert not outcome.text.lower().startswith(("sure", "here"))
    assert outcome.count == count(outcome.text, "en_words")


def test_a_run_that_is_no_rewrite_has_no_faithfulness(scripted_model: ScriptedBackend) -> None:
    scripted_model.reply("Waves fold over old stones.")
    handle = start(
        Request.of(Target.exactly(5), "Describe the sea", mode="baseline"),
        lambda: get_backend("scripted"),
        get_engine(),
        origin="cli",
    )
    handle.run()
    saved = get_run(get_engine(), handle.live.run_id)
    assert saved.source_kept is None and saved.source_new is None


# ----- faithfulness -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept", "new"),
    [
        ("The city council voted to expand the bike lane network.", 7 / 29, 0.0),  # 29 content words
        ("Here is the text: the council voted.", 2 / 29, 3 / 7),  # here, is, text
        ("", 0.0, 0.0),
        (COUNCIL, 1.0, 0.0),
        ("THE CITY COUNCIL'S vote.", 2 / 29, 1 / 4),  # vote (the source says voted)
    ],
)
def test_faithfulness_is_content_words_kept_and_words_not_in_the_source(text: str, kept: float, new: float) -> None:
    found = faithfulness(COUNCIL, text)
    assert (found.kept, found.new) == (round(kept, 4), round(new, 4))
    assert found.describe().startswith("keeps ") and found.describe().endswith(
        f"{found.new:.0%} words not in your text"
    )


def test_chinese_faithfulness_compares_han_characters() -> None:
    found = faithfulness("市议会投票扩建自行车道。", "议会投票。", "zh")
    assert found.new == 0 and 0 < found.kept < 1


# ----- the CLI ---------------------------------------------------------------------------------------------------


def test_generate_rewrite_reads_the_text_and_saves_a_selection_rewrite(scripted, tmp_path) -> None:
    source = tmp_path / "para.txt"
    source.write_text(COUNCIL, encoding="utf-8")
    scripted.script(honour_grammar(("grammar",)), ok(["The city council ", "voted on Tuesday."]))
    argv = ["--model", MODEL, "--base-url", scripted.url, "--grammar-field", "grammar", "--mode", "exact"]
    code, out, err = run_cli("generate", *argv, "--target", "6", "--rewrite", str(source))
    assert code == 0, err
    assert out.strip() == "The city council voted on Tuesday."
    assert "rewrite (shortened by selecting your own words" in err and "0% words not in your text" in err
    sent = scripted.chat_requests[-1].body
    assert '"garages"' in sent["grammar"] and "by deleting" in sent["messages"][-1]["content"]


def test_generate_rewrite_from_standard_input_with_a_limit_prints_faithfulness_in_json(scripted_model) -> None:
    scripted_model.reply(["Here is the text:\n", "The council voted on Tuesday."])
    argv = ["--model", "scripted", "--mode", "baseline", "--at-most", "10", "--json"]
    code, out, _ = run_cli("generate", *argv, "--rewrite", "-", stdin=COUNCIL)
    doc = json.loads(out)
    assert code == 0 and doc["text"] == "The council voted on Tuesday." and doc["target_kind"] == "at_most"
    assert doc["source_new"] == 0 and doc["source_kept"] > 0


@pytest.mark.parametrize(
    ("argv", "stdin", "words"),
    [
        (["--target", "5", "--rewrite", "-", "Describe a lighthouse"], COUNCIL, "not both"),
        (["--target", "5", "--rewrite", "-"], "   \n", "is empty"),
        (["--target", "5", "--rewrite", "/no/such/file.txt"], "", "cannot read"),
    ],
)
def test_generate_rewrite_refuses_bad_input_in_one_line(argv: list[str], stdin: str, words: str) -> None:
    code, out, err = run_cli("generate", *argv, stdin=stdin)
    assert code == 2 and out == "" and words in err and err.count("\n") == 1


# ----- the real embedded model ------------------------------------------------------------------------------------


@pytest.mark.model
def test_shortening_on_the_embedded_model_keeps_only_the_writers_words(embedded) -> None:
    source = PARAGRAPHS[0]
    n = count(source, "en_words") // 2
    outcome = generate(embedded, Request.of(Target.exactly(n), rewrite(source), mode="exact", temperature=0.0))
    assert outcome.verified and outcome.count == n
    assert outcome.faithfulness.new == 0 and in_order(outcome.text, source)
    assert outcome.text.split()[0] in {w.capitalised for w in source_words(source)}  # no preamble


# ----- the Write page -----------------------------------------------------------------------------------------


def test_a_rewrites_result_shows_its_faithfulness_beside_the_verdict(app_test) -> None:
    text = "The city council voted on Tuesday."
    found = faithfulness(COUNCIL, text)
    run_id = create_run(
        get_engine(),
        origin="write",
        instruction=rewrite(COUNCIL),
        prompt="p",
        raw=text,
        text=text,
        model="embedded",
        backend="embedded",
        mode="exact",
        lang="en",
        unit="en_words",
        target=6,
        count=6,
        exact=True,
        valid=True,
        verified=True,
        errors=[],
        status="complete",
        source_kept=found.kept,
        source_new=found.new,
    )
    app_test.session_state["w_run_id"] = run_id
    app_test.run()
    assert not app_test.exception, app_test.exception
    captions = [c.value for c in app_test.caption]
    assert f"6 English words · 34 characters · {found.describe()}" in captions
    lost = "lost 'The city council voted to expand the bike lane network.', 'twelve miles'"
    assert found.describe() == f"keeps 1 of 3 facts: {lost} · 0% words not in your text"  # the main clause, 2 more

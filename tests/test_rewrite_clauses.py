"""Rewrite to length that keeps the facts (issue 32): the facts of a text and which a rewrite kept (facts.py), the
parts of a sentence that may be dropped and how a text reads without them (clauses.py), the route that shortens
by whole parts and the grammar of its few best texts (rewrite.py), lengthening refused on the embedded model, the
default mode of a rewrite, variants ranked by facts and collapsed, the facts stored with the run; and one
shortening on the real embedded model.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from llguidance.gbnf_to_lark import gbnf_to_lark

from capel_ui import clauses, clauses_zh, facts
from capel_ui.backends import Capabilities
from capel_ui.backends.providers.scripted import ScriptedBackend
from capel_ui.counting import count
from capel_ui.generation import Request, generate, validate_request
from capel_ui.prompts import REWRITE
from capel_ui.rewrite import (
    faithfulness,
    faithfulness_fields,
    lengthening_refusal,
    main_clause,
    route,
    saved_faithfulness,
)
from capel_ui.storage import create_run, get_engine, get_run
from capel_ui.variants import Candidate, collapse, rank
from capel_ui.verdict import Target
from capel_ui.vocab import PROJECT_ROOT
from tests.llg import accepts
from tests.scripted_server import MODEL, honour_grammar, ok
from tests.test_rewrite import run_cli

NEWS = (
    "The Millbrook Town Council voted 5 to 2 on Tuesday to replace the Elm Street bridge, which has been closed to "
    "trucks since a safety inspection in March found corroded steel beams. The $3.4 million project will be paid "
    "for mostly by a state grant, with the town covering about $600,000 from its reserve fund. Mayor Linda Okafor "
    "said construction will begin in June and should take about 14 months, during which a temporary one-lane "
    "crossing will carry cars. Councilman Dave Reyes, who voted against the plan, argued that the town should have "
    "waited for a second federal grant. Public Works Director Sam Ortiz told residents that the old bridge, built "
    "in 1962, was never designed for modern loads. Local businesses on the east side of the river have complained "
    "about lost customers and asked the council for signs and extra parking."
)
LLAMA = Capabilities(grammar_field="grammar")
DATA = PROJECT_ROOT / "capel_ui/bench/data/rewrite"
ALL = [
    json.loads(line)["text"]
    for name in ("paragraphs.jsonl", "own.jsonl")
    for line in (DATA / name).read_text(encoding="utf-8").splitlines()
]


def rewrite(text: str) -> str:
    return REWRITE["en"].format(text=text)


def units_of(sentence: str) -> list[tuple[str, str]]:
    [s] = clauses.sentences(sentence)
    return [(u.kind, " ".join(s.tokens[u.start : u.end])) for u in s.units]


def drop(sentence: str, *parts: str) -> str:
    """The sentence with the named droppable parts dropped (each must be one of its units)."""
    [s] = clauses.sentences(sentence)
    spans = {" ".join(s.tokens[u.start : u.end]): u for u in s.units}
    mask = frozenset(i for p in parts for i in range(spans[p].start, spans[p].end))
    return clauses.render([s], [mask])


# ----- facts ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            NEWS,
            [
                "Millbrook Town Council",
                "5 to 2",
                "Tuesday",
                "Elm Street",
                "March",
                "$3.4 million",
                "$600,000",
                "Mayor Linda Okafor",
                "June",
                "14 months",
                "Councilman Dave Reyes",
                "Public Works Director Sam Ortiz",
                "in 1962",
            ],
        ),
        ("Just 500 of these teachers have been certified since 1995.", ["500", "since 1995"]),
        ("We may win. The First Lady spoke in May.", ["First Lady", "May"]),  # "may" the verb is no date
        ("It costs $89 and holds 1.7 litres. Scientists agree.", ["$89", "1.7 litres"]),  # "Scientists" opens only
        (
            "The Aria K2 kettle boils in four minutes, made by Brightwell Appliances in Leeds.",
            ["Aria K2", "four minutes", "Brightwell Appliances", "Leeds"],
        ),
        ("Nothing here is a fact.", []),
    ],
)
def test_the_facts_of_a_text_are_its_names_numbers_money_and_dates(text: str, found: list[str]) -> None:
    assert [f.text for f in facts.extract(text)] == found


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (NEWS, "keeps 14 of 14 facts"),
        (
            "The Millbrook Town Council voted 5 to 2 on Tuesday to replace the Elm Street bridge. Mayor Linda Okafor "
            "said construction will begin in June and should take about 14 months.",
            "keeps 8 of 14 facts: lost 'March', '$3.4 million', '$600,000' and 3 more",
        ),
        ("The council voted. A state grant of $9 million pays.", "keeps 0 of 14 facts: lost"),
    ],
)
def test_a_rewrite_says_how_many_facts_it_kept_and_names_those_it_lost(text: str, shown: str) -> None:
    assert facts.check(NEWS, text, main_clause(NEWS)).describe().startswith(shown)


def test_facts_a_rewrite_has_that_the_source_has_not_are_invented() -> None:
    found = facts.check(NEWS, "The Millbrook Town Council voted. Governor Ann Lee gave $5 million in 2025.")
    assert found.invented == ("Governor Ann Lee", "$5 million", "in 2025")
    assert "adds 3 not in your text: 'Governor Ann Lee', '$5 million', 'in 2025'" in found.describe()


def test_the_main_clause_of_the_first_sentence_is_a_fact() -> None:
    assert main_clause(NEWS) == "The Millbrook Town Council voted 5 to 2 to replace the Elm Street bridge."
    kept = "The Millbrook Town Council voted 5 to 2 on Tuesday to replace the Elm Street bridge."
    assert main_clause(NEWS) not in facts.check(NEWS, kept, main_clause(NEWS)).lost
    assert main_clause(NEWS) in facts.check(NEWS, "The council voted 5 to 2.", main_clause(NEWS)).lost


# ----- the parts a sentence may lose ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "offered", "never"),
    [
        (
            "The council voted on Tuesday to replace the bridge, which has been closed to trucks since a safety "
            "inspection in March found corroded steel beams.",
            [
                (
                    "relative",
                    "which has been closed to trucks since a safety inspection in March found corroded steel beams.",
                )
            ],
            ["since a safety inspection", "in March found corroded steel beams."],  # no phrase before a verb
        ),
        (
            "Councilman Dave Reyes, who voted against the plan, argued that the town should have waited.",
            [("relative", "who voted against the plan,"), ("that", "that")],
            ["Dave Reyes,", "argued that the town should have waited."],  # the main verb after a relative
        ),
        (
            "With four years of growth, we have won back the basic strength of our economy.",
            [("opening", "With four years of growth,"), ("adjective", "basic")],
            [],
        ),
        (
            "For twenty years the building stood empty, and its roof had collapsed by 2019.",
            [],
            ["For twenty years the building stood empty,"],  # a clause, not an opening phrase
        ),
        (
            "The new promise of the global economy, the information age, unimagined new work, all these are ours.",
            [("adjective", "new")],
            ["the information age,", "unimagined new work,"],  # list items: dropping one leaves "economy, all"
        ),
        (
            "We should quickly and fairly remove those few who don't measure up, and we should challenge more of "
            "our finest young people.",
            [("adverb", "quickly and fairly"), ("clause", "and we should challenge more of our finest young people.")],
            ["quickly", "fairly"],
        ),
        (
            "Just 500 of these teachers have been certified since 1995.",
            [("phrase", "since 1995.")],
            [],
        ),
        (
            "The gates open at 10 a.m. and the last concert starts at 9 p.m. on the main stage.",
            [("phrase", "on the main stage.")],
            ["gates"],  # a noun before its verb is no adjective
        ),
        ("The point is at an all-time high.", [], ["at an all-time high."]),  # a copula's complement stays
        (
            "Their right to choose will foster competition and innovation that can make public schools better.",
            [("relative", "that can make public schools better.")],
            [],
        ),
        (
            "Residents who opposed it said that parking would suffer.",
            [],
            ["who opposed it said that parking would suffer."],
        ),
        ("Good tests will show us who needs help.", [], ["who needs help."]),  # what they show
        (
            "The station now opens every weekend, with a cafe in the old ticket hall and workshop space for "
            "painters, potters and radio clubs.",
            [
                (
                    "adverbial",
                    "with a cafe in the old ticket hall and workshop space for painters, potters and radio clubs.",
                )
            ],
            ["with a cafe in the old ticket hall and workshop space for painters,"],  # the comma is the list's
        ),
        (
            "The festival returns on Saturday, June 14, with three stages of music.",
            [("appositive", "June 14,")],
            ["on Saturday,"],  # "returns, June 14, with": the date is about Saturday
        ),
    ],
)
def test_only_whole_parts_of_a_sentence_may_be_dropped(sentence: str, offered: list, never: list[str]) -> None:
    found = units_of(sentence)
    for part in offered:
        assert part in found
    assert not [text for _, text in found if text in never]


@pytest.mark.parametrize(
    ("sentence", "parts", "reads"),
    [
        (
            "Councilman Dave Reyes, who voted against the plan, argued that the town should have waited.",
            ["who voted against the plan,"],
            "Councilman Dave Reyes argued that the town should have waited.",
        ),
        (
            "Mayor Linda Okafor said construction will take 14 months, during which a crossing will carry cars.",
            ["during which a crossing will carry cars."],
            "Mayor Linda Okafor said construction will take 14 months.",
        ),
        (
            "With four years of growth, we have won back the strength of our economy.",
            ["With four years of growth,"],
            "We have won back the strength of our economy.",
        ),
        (
            "The last concert starts at 9 p.m. on the main stage.",
            ["on the main stage."],
            "The last concert starts at 9 p.m.",
        ),
        ("But now we must rise to the moment.", ["But", "now"], "We must rise to the moment."),
    ],
)
def test_a_sentence_without_a_part_keeps_its_commas_stop_and_capital_right(sentence, parts, reads) -> None:
    assert drop(sentence, *parts) == reads


# ----- shortening by whole parts ----------------------------------------------------------------------------------


def _sentences_are_whole(text: str, source: str) -> bool:
    """Each sentence of `text` is a sentence of `source` with whole droppable parts dropped: it holds the source
    sentence's main clause, in order."""
    cores = [s.core for s in clauses.sentences(source, relaxed=True)]
    for sent in clauses.sentences(text):
        words = facts.words_of(" ".join(sent.tokens))
        if not any(_in_order(facts.words_of(core), words) for core in cores):
            return False
    return True


def _in_order(want: list[str], have: list[str]) -> bool:
    it = iter(have)
    return all(w in it for w in want)


def test_shortening_to_half_and_three_quarters_keeps_whole_clauses_and_most_facts() -> None:
    shares, missed = [], 0
    for share in (0.5, 0.75):
        for source in ALL:
            n = round(count(source, "en_words") * share)
            choices = clauses.shorten(source, n, n) or clauses.shorten(source, n, n, relaxed=True)
            for choice in choices:
                assert count(choice.text, "en_words") == n
                assert faithfulness(source, choice.text).new == 0
                assert _sentences_are_whole(choice.text, source), choice.text
            if choices:
                shares.append(facts.check(source, choices[0].text, main_clause(source)).share)
            missed += not choices
    assert missed <= 2  # an exact count no choice of whole parts reaches goes to selection (1 of 26 today)
    assert sum(shares) / len(shares) >= 0.85  # 0.88 today


def test_the_best_choice_looks_at_the_whole_text_not_the_first_words() -> None:
    [best, *_] = clauses.shorten(NEWS, 106, 106)
    assert "$3.4 million" in best.text and "in 1962" in best.text and "Councilman Dave Reyes" in best.text
    assert "Local businesses" not in best.text  # the last sentence, without a fact, goes first


def test_a_short_rewrite_on_llama_cpp_takes_the_whole_clause_route_and_its_grammar_admits_only_its_texts() -> None:
    chosen = route(NEWS, "exact", "en", "en_words", Target.exactly(71), True)
    assert chosen.kind == "clauses" and 1 <= len(chosen.choices) <= 4 and chosen.selection
    lark = gbnf_to_lark(chosen.grammar)
    for text in chosen.choices:
        assert accepts("lark", lark, text)
    assert not accepts("lark", lark, chosen.choices[0][:-1])
    assert not accepts("lark", lark, "Here is the text: " + chosen.choices[0])
    assert "whole sentences, clauses and phrases" in (chosen.note or "")


def test_a_length_no_choice_of_whole_parts_reaches_falls_back_to_selection_and_says_so() -> None:
    source = ALL[2]  # clinton-standards: 84 words, and no choice of its whole parts has 63 (62 and 64 have)
    chosen = route(source, "exact", "en", "en_words", Target.exactly(63), True)
    assert chosen.kind == "selection" and "No choice of whole sentences" in (chosen.note or "")


def test_a_clause_rewrite_writes_one_of_the_chosen_texts_and_counts_it() -> None:
    chosen = route(NEWS, "exact", "en", "en_words", Target.exactly(71), True)
    model = ScriptedBackend(chosen.choices[0], capabilities=LLAMA)
    outcome = generate(model, Request.of(Target.exactly(71), rewrite(NEWS), mode="exact"))
    [(_, options)] = model.requests
    assert options.grammar == chosen.grammar
    assert outcome.verified and outcome.faithfulness is not None and outcome.faithfulness.facts is not None
    assert outcome.faithfulness.facts.share >= 0.75 and outcome.faithfulness.new == 0


# ----- lengthening, the default route ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "target", "refused"),
    [
        ("embedded", Target.exactly(180), True),
        ("embedded", Target.at_most(300), False),  # may be as short as 1: no lengthening asked
        ("embedded", Target.exactly(70), False),
        ("gpt-4.1-mini", Target.exactly(180), False),  # a model that can lengthen is measured instead
    ],
)
def test_the_embedded_model_refuses_to_lengthen_and_says_what_works(model: str, target: Target, refused: bool):
    why = lengthening_refusal(rewrite(NEWS), "en_words", target, model)
    assert (why is not None) is refused
    if why:
        assert "cannot make your text longer faithfully" in why and "pull" in why and "hosted" in why


def test_a_lengthening_on_the_embedded_model_fails_before_any_call() -> None:
    backend = SimpleNamespace(model="embedded", capabilities=LLAMA, label="Embedded model")
    with pytest.raises(ValueError, match="cannot make your text longer faithfully"):
        validate_request(Request.of(Target.exactly(180), rewrite(NEWS), mode="exact"), backend)


# ----- variants, storage ----------------------------------------------------------------------------------------


def _candidate(text: str, score: float) -> Candidate:
    outcome = generate(
        ScriptedBackend(text, capabilities=LLAMA), Request.of(Target.at_most(140), rewrite(NEWS), mode="baseline")
    )
    return Candidate(outcome, None, score)


def test_rewrite_variants_rank_by_facts_kept_and_the_same_text_is_one() -> None:
    fewer = "The council voted. Local businesses on the east side of the river have complained."
    more = "The Millbrook Town Council voted 5 to 2 on Tuesday to replace the Elm Street bridge."
    ranked = rank([_candidate(fewer, 9.0), _candidate(more, 1.0), _candidate(more, 0.3)])
    assert [c.outcome.text for c in ranked] == [more, fewer] and ranked[0].copies == 2
    assert collapse(["a b", "a  b", "c"], str) == ["a b", "c"]


def test_a_rewrites_facts_are_stored_with_the_run_and_read_back() -> None:
    text = "The Millbrook Town Council voted 5 to 2 on Tuesday to replace the Elm Street bridge."
    found = faithfulness(NEWS, text)
    fields = faithfulness_fields(found)
    run_id = create_run(
        get_engine(), origin="write", instruction=rewrite(NEWS), prompt="p", raw=text, text=text, model="embedded",
        backend="embedded", mode="exact", lang="en", unit="en_words", target=16, count=16, exact=True, valid=True,
        verified=True, errors=[], status="complete", **fields,
    )  # fmt: skip
    run = get_run(get_engine(), run_id)
    assert json.loads(run.source_facts)["total"] == 14
    assert saved_faithfulness(run) == found
    assert saved_faithfulness(run).describe().startswith("keeps 5 of 14 facts: lost 'March', '$3.4 million'")


# ----- the real embedded model ------------------------------------------------------------------------------------


@pytest.mark.model
def test_shortening_on_the_embedded_model_keeps_whole_clauses_and_the_facts(embedded) -> None:
    n = round(count(NEWS, "en_words") * 0.5)
    request = Request.of(Target.exactly(n), rewrite(NEWS), mode="exact", temperature=0.0)
    chosen = route(NEWS, "exact", "en", "en_words", request.target_spec, True)
    outcome = generate(embedded, request)
    assert outcome.verified and outcome.count == n and outcome.text in chosen.choices
    best = max(facts.check(NEWS, text, main_clause(NEWS)).kept for text in chosen.choices)
    assert outcome.faithfulness.new == 0 and outcome.faithfulness.facts.kept == best >= 11  # of 14, at 71 words
    assert _sentences_are_whole(outcome.text, NEWS)


# ----- Chinese ------------------------------------------------------------------------------------------------------

ZH = (
    "阿什比谷的老火车站于1998年关闭，上周五经过三年的修复，重新开放为社区艺术中心，耗资210万美元。二十年来，这座建筑"
    "一直空置，到2019年屋顶已经部分坍塌，当时一群居民成立了阿什比车站信托基金来拯救它。信托基金的大部分资金来自国家遗产"
    "补助，其余来自600多名当地捐赠者。车站现在每个周末开放，旧售票大厅里有一家咖啡馆，还有供画家和陶艺家使用的工作室。"
    "信托基金主席普丽娅·纳塔拉詹说，他们希望明年春天增加一个小型铁路博物馆。"
)


def test_chinese_facts_are_jiebas_names_and_the_numbers_with_their_measure_words() -> None:
    assert clauses_zh.facts(ZH)[:6] == ["1998年", "三年", "210万美元", "二十年", "2019年", "600多名"]


@pytest.mark.parametrize("share", [0.5, 0.75])
def test_chinese_shortens_by_whole_clauses_on_llama_cpp_and_keeps_most_facts(share: float) -> None:
    n = round(count(ZH, "zh_chars") * share)
    chosen = route(ZH, "exact", "zh", "zh_chars", Target.exactly(n), True)
    assert chosen.kind == "clauses" and chosen.choices
    for text in chosen.choices:
        assert count(text, "zh_chars") == n and "，。" not in text
        assert faithfulness(ZH, text, "zh").new == 0 and faithfulness(ZH, text, "zh").facts.share >= 0.8
    assert "信托基金主席普丽娅·纳塔拉詹说，他们希望" in chosen.choices[0]  # what was said stays with 说


def test_generate_rewrite_without_a_mode_takes_the_whole_clause_route_and_says_so(scripted, tmp_path) -> None:
    source = tmp_path / "news.txt"
    source.write_text(NEWS, encoding="utf-8")
    chosen = route(NEWS, "exact", "en", "en_words", Target.exactly(71), True)
    scripted.script(honour_grammar(("grammar",)), ok([chosen.choices[0]]))
    argv = ["--model", MODEL, "--base-url", scripted.url, "--grammar-field", "grammar", "--target", "71"]
    code, out, err = run_cli("generate", *argv, "--rewrite", str(source))
    assert code == 0, err
    assert out.strip() == chosen.choices[0]
    assert "rewrite (shortened by whole sentences, clauses and phrases of your own text" in err
    assert "keeps " in err and " facts" in err
    assert scripted.chat_requests[-1].body["grammar"] == chosen.grammar

"""Quality checks a writer sees as warnings: non-words, glued words, a dangling ending, fluency, the score."""

from __future__ import annotations

import math

import pytest

from capel_ui.quality import (
    ALL_JUNK,
    QualityWarning,
    all_junk,
    blanks,
    dangling_end,
    explain,
    fluency,
    glued,
    junk,
    loops,
    nonword_rate,
    nonwords,
    notes,
    number_list,
    offline_score,
    talks_about_itself,
    warnings,
    words,
)


@pytest.mark.parametrize(
    ("text", "own", "expected"),
    [
        ("The rich flavors of traditional dough!", "", []),
        ("…rich flavors of traditionaldough!", "", ["traditionaldough"]),
        ("It promotes a positiveMindset.", "", ["positiveMindset"]),
        ("The Whaler'sRestOurM.", "", ["Whaler'sRestOurM"]),
        ("Mozzarella di bulbele and Parmiglie.", "", ["bulbele", "Parmiglie"]),
        ("Welcome to Zyxco's new café.", "Write for Zyxco", []),  # the writer's own name, accents, possessive
        ("Open 24/7 since 1999, well-known.", "", []),
        ("“Curly quotes” don’t hide words.", "", []),
        ("", "", []),
    ],
)
def test_nonwords_are_the_words_wordfreq_never_saw(text: str, own: str, expected: list[str]) -> None:
    assert nonwords(text, "en", own) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("by reducing thesigns.", ["thesigns"]),
        ("the reminds ofthe.", ["ofthe"]),  # a web typo wordfreq knows is still glued
        ("into another theater", []),
        ("a positiveMindset", ["positiveMindset"]),
    ],
)
def test_glued_words_are_flagged_even_when_wordfreq_knows_them(text: str, expected: list[str]) -> None:
    assert glued(text) == expected


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("The challenge is the.", "en", "the"),
        ("Stories of pride and", "en", "and"),
        ("A walk by the sea.", "en", None),
        ("Let me do it.", "en", None),
        ("", "en", None),
        ("我们喜欢海边的。", "zh", "的"),
        ("我们喜欢海边。", "zh", None),
        ("海边的书店开门了。", "zh", None),  # 了 ends a great many sentences
        ("海边的 Whaler's Rest of", "zh", "of"),
        ("Packin'ABikeRepaireter: The B.", "en", "B"),  # a word cut at a 30-character limit
        ("We always have a Plan B.", "en", None),
        ("Take your vitamin C.", "en", None),
    ],
)
def test_a_dangling_ending_is_a_function_word_last(text: str, lang: str, expected: str | None) -> None:
    assert dangling_end(text, lang) == expected  # type: ignore[arg-type]


def test_chinese_text_is_checked_character_by_character() -> None:
    assert words("灯塔 AI", "zh") == ["灯", "塔", "AI"]
    assert nonwords("灯塔很美", "zh") == []
    assert nonword_rate("", "zh") == 0.0


def test_warnings_list_each_problem_once_in_reading_order_with_a_message() -> None:
    found = warnings("A thesigns and thesigns with bulbele and", "en")
    assert found == [
        QualityWarning("glued", "thesigns"),
        QualityWarning("nonword", "bulbele"),
        QualityWarning("dangling", "and"),
    ]
    assert [w.message for w in found] == [
        "“thesigns” looks like two words glued together",
        "“bulbele” is not a known word",
        "the text ends on “and”, mid-sentence",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the the the the best", ["the"]),
        ("Girls, Girls, girls and you? you? you?", ["Girls", "you"]),
        ("very, very good", []),
        ("好好好", ["好"]),
    ],
)
def test_a_word_three_times_in_a_row_is_a_loop(text: str, expected: list[str]) -> None:
    assert [w.word for w in warnings(text, "zh" if "好" in text else "en") if w.kind == "repeat"] == expected


@pytest.mark.parametrize(
    ("logprobs", "expected"),
    [([], None), (None, None), ([0.0, 0.0], 1.0), ([math.log(0.5)] * 3, 0.5), ([math.log(0.25), 0.0], 0.5)],
)
def test_fluency_is_the_geometric_mean_token_probability(logprobs, expected) -> None:
    got = fluency(logprobs)
    assert got == expected if expected is None else got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("flu", "found", "n", "expected"),
    [
        (1.0, [], 10, 10.0),
        (0.25, [], 10, 5.0),
        (None, [], 10, 5.0),  # no logprobs from the server: the middle of the scale
        (0.25, [QualityWarning("nonword", "x")], 10, 3.0),
        (0.25, [QualityWarning("dangling", "the")], 10, 3.0),
        (0.25, [QualityWarning("repeat", "the"), QualityWarning("loop", "a b")], 10, 1.0),  # a loop once, 4
        (0.25, [QualityWarning("numbers", "1., 2., 3.")], 10, 1.0),
        (0.01, [QualityWarning("glued", "x")] * 5, 5, 0.0),  # never below 0
    ],
)
def test_offline_score_is_fluency_minus_bad_words_loops_lists_and_a_dangling_end(flu, found, n, expected) -> None:
    assert offline_score(flu, found, n) == expected


@pytest.mark.parametrize(
    ("end", "expected"),
    [(None, 5.0), (0.9, 5.0), (0.01, 5.0), (0.005, 3.5), (0.0, 2.0)],  # 3 points off for an ending the model
)  # would never end a phrase on, fewer towards NATURAL (0.01), none from there or when the server cannot say
def test_a_cut_off_ending_costs_up_to_three_points(end, expected) -> None:
    assert offline_score(0.25, [], 10, end) == expected


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("enforcement de lame, enforcement de lame, enforcement de lame.", "en", ["enforcement de lame"]),
        ("Pizza of the week: the pizza of the week is the Pizza of the Week.", "en", ["Pizza of the week"]),
        ("arugula, arugula with arugula, and arugula with fresh basil on top.", "en", ["arugula"]),
        ("go team go team go team!", "en", ["go team"]),  # two words, three times back to back
        ("Très bien, très bien, très bien dit-il.", "en", ["Très bien"]),  # any script, case ignored
        ("我们喜欢海边我们喜欢海边我们喜欢海边。", "zh", ["我们喜欢海边"]),  # Han characters, no spaces
        ("very good, very good indeed.", "en", []),  # an echo, not a loop
        ("One of the best, one of the most loved, one of the greats.", "en", []),  # small words only
        ("Bake the dough, top the dough and serve the dough hot.", "en", []),  # short text, fewer than ten words
        ("我们喜欢海边，也喜欢山。", "zh", []),
        ("", "en", []),
    ],
)
def test_a_phrase_that_comes_back_again_and_again_is_a_loop(text: str, lang: str, expected: list[str]) -> None:
    assert loops(text, lang) == expected  # type: ignore[arg-type]


PUB = "Write 80 words about a seaside pub called The Whaler's Rest."
NAMED = (
    "The Whaler's Rest is a beloved pub on the coast. The Whaler's Rest is not just a pub but a warm welcome. "
    "Locals agree the Whaler's Rest is the place to be."
)


@pytest.mark.parametrize(
    ("text", "own", "expected"),
    [
        (NAMED, PUB, []),  # the instruction's own name, three times in a long text: how a writer writes
        (NAMED, "", ["The Whaler's Rest is"]),  # a name nobody asked for, three times: round in circles
        ("Fresh and local, Fresh and local, the Whaler's Rest.", PUB, ["Fresh and local"]),  # back to back still
        ("A Spice of the Sea. Rest at A Spice of the Sea and the A Spice of the Sea.", PUB, ["A Spice of the Sea"]),
    ],
)
def test_the_instructions_own_name_coming_back_is_not_a_loop(text: str, own: str, expected: list[str]) -> None:
    assert loops(text, "en", own) == expected


@pytest.mark.parametrize(
    ("text", "own", "expected"),
    [
        ("The 50 words: 1. Stone: 1. Ware: 2. Dish: 41. 42.", "", "1., 2., 41., …"),
        ("Tips 1) rest 2) eat 3) walk more.", "", "1., 2., 3."),
        ("12 34 56 78 and 90 more.", "", "12, 34, 56, …"),  # numbers a third of the text
        ("Examples: 2.1.1 A learner must adapt. 1.2.1 1.2.2 1.2.3 It is hard.", "", "2.1.1, 1.2.1, 1.2.2, …"),
        ("Costs fell from 1.6 to 2.5 and then 3.4 million over the years since the plan began.", "", None),
        ("Version 3.11.7 of the tool runs on the server at 10.0.0.1 today.", "", None),
        ("This humble pot holds 350.", "", None),
        ("Open 24/7 since 1999, at 3:30 pm on 5 May.", "", None),
        ("Steps: 1. Mix. 2. Bake. 3. Serve.", "List three steps to bake bread.", None),  # asked for a list
        ("第一步：1. 和面。2. 发酵。3. 烤。", "", "1., 2., 3."),
        ("A picnic for all, in 80 words. 1.1.1 2.1.1 3.", "", "1.1.1, 2.1.1, 3."),  # in the order written
        ("Share a tweet with: 1.1.2261, 2.3.21, 3.1.1, 2.1.1, 5.4.21, and send it.", "", "2.3.21, 3.1.1, 2.1.1, …"),
        ("The market opens on 12.05.2024, 13.05.2024 and 14.05.2024 from nine until late.", "", None),
        ("Here it is: 1.11:15, 2.2:34, 3.3:34, 4.4:28, 5.6:34.", "", "1.11:15, 2.2:34, 3.3:34, …"),  # no doubled commas
        (  # a run of numbers at the end of a longer text
            "I'll offer you a special treat to make the occasion even more special. The invitation to your picnic is "
            "here: 1.11,234, 18.40,10, 250,118,12, 18.21,15, 295.5,20.",
            "",
            "1.11,234, 18.40,10, 250,118,12, …",
        ),
        ("The first primes are 2, 3, 5, 7, 11 and 13, and every one of them is odd but the first.", "", None),
        ("", "", None),
    ],
)
def test_a_number_list_is_flagged_unless_the_writer_asked_for_a_list(text: str, own: str, expected) -> None:
    assert number_list(text, own) == expected


def test_loops_and_number_lists_are_warnings_and_make_a_text_junk() -> None:
    looped = warnings("enforcement de lame, enforcement de lame, and more.")
    listed = warnings("The words: 1. Stone 2. Ware 3. Dish 4. Pot.")
    assert [w.kind for w in looped] == ["loop"] and junk(looped)
    assert looped[0].message == "“enforcement de lame” comes back again and again: the text is going round in circles"
    assert [w.kind for w in listed] == ["numbers"] and junk(listed)
    assert not junk(warnings("A walk by the sea at dawn."))


def test_a_text_going_round_in_circles_says_so_once_naming_every_word_and_phrase_it_repeats() -> None:
    circling = warnings("Rest rest rest, the whaler rest, the whaler rest, the whaler rest.")
    assert [w.kind for w in circling] == ["repeat", "loop"]  # overlapping phrases of one loop are one phrase
    assert notes(circling) == [
        "“Rest” and “rest the whaler” come back again and again: the text is going round in circles"
    ]
    mixed = warnings("The shipshome sails, enforcement de lame, enforcement de lame, and the")
    assert notes(mixed) == [  # one loop keeps its own words; the others stay in reading order
        "“shipshome” looks like two words glued together",
        "“enforcement de lame” comes back again and again: the text is going round in circles",
        "the text ends on “the”, mid-sentence",
    ]


@pytest.mark.parametrize(
    ("flu", "found", "end", "expected"),
    [
        (0.4, [], 0.8, "ends naturally, reads smoothly"),
        (0.2, [], 0.001, "last sentence cut off, reads stiffly in places"),
        (
            0.05,
            [QualityWarning("loop", "a b"), QualityWarning("nonword", "x")],
            None,
            "goes round in circles, 1 unknown or glued word: not a text to publish",  # junk: no word on how it reads
        ),
        (
            None,
            [QualityWarning("numbers", "1."), QualityWarning("dangling", "the")],
            None,
            "a list of numbers, not prose, ends mid-sentence: not a text to publish",
        ),
        (None, [], None, "no problems found"),
    ],
)
def test_the_score_is_explained_in_a_writers_words(flu, found, end, expected) -> None:
    assert explain(flu, found, end) == expected


def test_history_lists_the_score_and_show_prints_score_and_warnings(tmp_path) -> None:
    from capel_ui.assessment import assess
    from capel_ui.history import history_table, show_run
    from capel_ui.storage import create_run, get_engine, get_run, update_run

    engine = get_engine(f"sqlite:///{tmp_path / 'h.db'}")
    fields = {"origin": "cli", "model": "m", "backend": "compatible", "mode": "exact", "lang": "en"}
    run_id = create_run(engine, **fields, unit="en_words", target=4, instruction="Describe Zyxco")
    text = "Zyxco makes thesigns and"
    judged = {**assess(text, "en", "Describe Zyxco", fluency=0.4).as_json(), "score": 3.25}  # as the run saved it
    update_run(engine, run_id, status="complete", text=text, count=4, score=3.25, fluency=0.4, assessment=judged)
    run = get_run(engine, run_id)
    assert "score" in history_table([run]).splitlines()[0] and "3.25" in history_table([run])
    shown = show_run(run)
    assert "score 3.25: 1 unknown or glued word, ends mid-sentence, reads smoothly" in shown
    assert "warning: “thesigns” looks like two words glued together" in shown
    assert "warning: the text ends on “and”, mid-sentence" in shown
    assert "Zyxco" not in "".join(line for line in shown.splitlines() if line.startswith("warning"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Here's a possible sentence that describes the bakery: The bakery now sells",
            "Here's a possible sentence that describes the bakery:",
        ),
        ("Here's a possible X post: 280x: 1000 x 10", "Here's a possible X post:"),
        (
            "Here is a short blurb for the bakery. Fresh sourdough every Saturday.",
            "Here is a short blurb for the bakery.",
        ),
        ("Sure! Our bakery sells sourdough.", "Sure!"),
        ("Certainly, here is the text you asked for.", "Certainly,"),
        ("Headline: Fresh bread on Saturdays", "Headline:"),
        ("40 words: The bakery opens at nine.", "40 words:"),
        (
            "The product description for a hand-made ceramic mug is: A beautiful, hand-crafted mug.",
            "The product description for a hand-made ceramic mug is:",
        ),
        ("以下是一段介绍北京的文案：北京是中国的首都。", "以下是一段介绍北京的文案："),
        ("好的！北京是中国的首都。", "好的！"),
        # its own length named anywhere
        ("A simple way to put this: 12 words: Learn a new language.", "12 words:"),
        ("In just 80 words, the Whaler's Rest is the ultimate destination.", "In just 80 words"),
        ("北京是首都。30个字：很好。", "30个字："),
        # a writer's own openings stay
        ("Here is where the magic happens. Come in.", None),
        ("Here is our new sourdough, baked fresh.", None),
        ("Here are three reasons to visit us: bread, coffee and cake.", None),
        ("Here is the word on the street: bread.", None),
        ("Absolutely fresh bread every day.", None),
        ("Of course the bread is fresh.", None),
        ("Surely you know our bakery.", None),
        ("北京是中国的首都。这是一座城市：古老而年轻。", None),
        ("Open 24 hours, 7 days a week.", None),
        ("A 3-word slogan wins.", None),
        ("The title of the book is: War and Peace.", None),
        ("The story of our bakery is simple: bread, every day.", None),
        # naming what it is, as a sentence's end (walked: ranked first of three X posts)
        ("The library hosts a free coding workshop on Saturday, and it is an X post.", "it is an X post"),
        ("This is a tweet!", "This is a tweet"),
        ("It is the headline act of the night.", None),
        ("This is a post-war building.", None),
        # a chat reply unsure of the task or handing it back (walked: the best of three SMS and ads)
        ("Please respond with: Reminder: My car service is on Friday.", "Please respond with:"),
        (
            "I'm not sure what to do here, I'll just remove the extra text.",
            "I'm not sure what to do here, I'll just remove the extra…",
        ),
        ("Please add your own sentence, in your own words.", "add your own sentence, in your own words"),
        ("Answer with: yes.", "Answer with:"),
        # read in benchmarks/presets_read.py's best-ranked variants: what the model is, or what the text is
        ("This is an X post about a new café that opens at 6 am.", "This is an X post about"),
        ("I'll send it tomorrow. It is just a text message.", "It is just a text message"),
        ("This is a Google Ads product description.", "This is a Google Ads product description"),
        ("As a data analysis AI, I'm Dr. Jameson Thompson.", "As a data analysis AI, I'm Dr"),
        ("Dear Hugging Face, I hope this message finds you well.", "Hugging Face"),
        ("This is a post for everyone who loves coffee.", None),
        ("Teachers now plan lessons with ChatGPT and other AI tools.", None),  # a post about AI may name them
        (
            "Awesome! Here's a revised version of the instructions: 10:10pm today.",
            "Here's a revised version of the instructions:",
        ),
        ("Great! Our bakery now opens at six.", None),
        ("Reply YES to confirm your booking.", None),
        ("We're not sure what the weather will do, so bring a coat.", None),
    ],
)
def test_a_text_that_talks_about_itself_is_flagged_by_what_it_says(text: str, expected: str | None) -> None:
    assert talks_about_itself(text) == expected


def test_a_length_the_writer_named_in_the_instruction_is_not_the_text_talking_about_itself() -> None:
    assert talks_about_itself("Our 50 words: we study bread.", "Summarise in 50 words") is None


def test_a_text_that_introduces_itself_is_junk_and_ranks_below_the_plain_text() -> None:
    meta = warnings("Here's a possible X post: our bakery sells fresh sourdough on Saturdays.")
    plain = warnings("Our bakery sells fresh sourdough on Saturdays.")
    assert junk(meta) and not junk(plain)
    assert offline_score(0.3, meta, 12) < offline_score(0.3, plain, 7)
    assert explain(0.3, meta).startswith("talks about itself")


# ----- issue 31: checks that missed, checks that cried wolf, and no praise for junk ---------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("X Post: Please provide the details of the event so I can write it.", "meta"),
        ("Here's a sample abstract: 5: The study measures sleep in teenagers.", "meta"),
        ("The product description is: 12: A steel bottle that keeps water cold.", "meta"),
        ("Great news for everyone. Please provide the details so I can help you.", "meta"),
        (
            "The Whaler's Rest is a premium pub by the sea. Come in. The Whaler's Rest is a premium pub by the sea.",
            "loop",
        ),
        ("We are a dedicated and dedicated team of bakers.", "doubled"),
        ("New Same What Same Same Now", "loop"),
        ("Fresh Bread Daily Best Prices Portland Bakery Open Sundays Great Taste", "salad"),
    ],
)
def test_checks_that_missed_now_catch(text: str, kind: str) -> None:
    assert kind in {w.kind for w in warnings(text)}


@pytest.mark.parametrize(
    "text",
    [
        "The recipe was reworked for the new menu.",
        "Our Haircare line is gentle on every scalp.",
        "A woodfired oven bakes every pizza.",
        "A lifelong love of waterproof skincare.",
        "Please provide feedback on our menu at the counter.",
        "Here is where we meet every Sunday.",
        "Bike Repair Portland: A New Era for riders.",
        "Thank you. Thank you.",  # a short sentence said twice is style
        "It had had its day, and that that was so.",
    ],
)
def test_plain_texts_raise_no_alarm(text: str) -> None:
    assert warnings(text) == []


REMINDER = "Remind a patient of a dental appointment on Tuesday at 3:30 pm with Dr. Patel."
ADVERTISE = "Advertise a family-run bike repair shop in Portland."
GARAGE = "Remind a customer that their car service is on Friday at 9:15 am at Hill Garage."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I'll remind the customer that the service is at 9:15pm. You can check it now.",
            "I'll remind the customer that the service is at 9:15pm",
        ),
        ("I will remind them.", "I will remind them"),
        ("Your car service is on Friday at 9:15 am at Hill Garage. We'll remind you again.", None),
        ("I'll see you on Friday at 9:15 am at Hill Garage.", None),
    ],
)
def test_a_text_that_says_what_the_model_will_do_with_the_request_talks_about_itself(text: str, expected) -> None:
    assert talks_about_itself(text, GARAGE) == expected


@pytest.mark.parametrize(
    ("text", "instruction", "echo"),
    [
        (REMINDER, REMINDER, True),  # walked: ranked first at "score 8.96: reads smoothly"
        ("The task: Detail how you can remind a patient of a dental appointment.", REMINDER, True),
        ("Hi! This is a reminder of your dental appointment on Tuesday at 3:30 pm with Dr. Patel.", REMINDER, False),
        ("The capital of France is Paris.", "What is the capital of France?", False),
        ("Describe a traditional Italian pizza. It is round.", "Describe a traditional Italian pizza.", True),
        (
            "Rewrite the following text, keeping its meaning and tone: fine.",
            "Rewrite the following text, keeping its meaning and tone:\n\nFine.",
            False,
        ),
        ("Advertise a dog.", "Advertise a dog grooming salon in Bristol.", True),  # walked: best of three ads
        ("Dog grooming in Bristol.", "Dog grooming in Bristol: write an ad headline.", False),
        ("Bristol.", "Advertise a dog grooming salon in Bristol.", False),
        ("Advertise a family business in Portland with a bike repair shop.", ADVERTISE, True),  # read: ranked first
        ("Advertise with us and reach thousands of readers.", "Advertise a newspaper's ad space.", False),
        ("Write to us today for a free sample!", "Write an ad for a tea shop.", False),
    ],
    ids=[
        "the_request_given_back",
        "the_request_inside_a_sentence",
        "its_facts_are_the_answer",
        "a_short_question",
        "a_description_opened_with_the_request",
        "a_rewrite_is_the_writers_own",
        "a_short_text_that_is_the_requests_opening",
        "the_writers_subject_written_as_a_headline",
        "one_word_of_the_request",
        "the_order_given_back_with_a_word_changed",
        "an_ad_that_asks_to_advertise",
        "an_ad_that_asks_to_write",
    ],
)
def test_a_text_that_repeats_the_request_is_junk_but_its_facts_are_not(text: str, instruction: str, echo: bool) -> None:
    assert junk(warnings(text, "en", instruction)) is echo


@pytest.mark.parametrize(
    "text",
    [
        "approve a 10. 11. 12. 13. 14. 205.",
        "New Same What Same Same Now",
        "enforcement de lame, enforcement de lame, enforcement de lame and more.",
        "Here's a possible X post: Join us for a picnic in the park.",
    ],
)
def test_junk_is_never_praised(text: str) -> None:
    found = warnings(text)
    said = explain(0.9, found, 0.9)
    assert junk(found)
    assert "reads smoothly" not in said and "no problems found" not in said and "ends naturally" not in said
    assert said.endswith("not a text to publish")


def test_a_loop_is_named_once_not_as_fifteen_overlapping_phrases() -> None:
    text = " ".join(["the bread of the sea rises slowly"] * 6) + "."
    assert len(loops(text)) == 1
    assert len(notes(warnings(text))) <= 2


# ----- a template's blank left to fill in ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "own", "expected"),
    [
        ("Dear [Guest's Name], your room is ready.", "", ["[Guest's Name]"]),
        ("Hi {first_name}, your order ships today.", "", ["{first_name}"]),
        ("尊敬的【客户姓名】，您的订单已发货。", "", ["【客户姓名】"]),
        ("Call [Phone] or visit [Phone] today.", "", ["[Phone]"]),  # each blank once
        ("Dear [Name], welcome aboard.", "Write a welcome note that starts 'Dear [Name],'", []),  # the writer's own
        ("Read [the guide](https://example.com) first.", "", []),  # a Markdown link
        ("As shown before [1], sleep matters.", "", []),  # a citation: no letter
        ("He said […] and left.", "", []),
        ("Your table for four is booked.", "", []),
    ],
)
def test_a_blank_left_to_fill_in_is_found_unless_the_writer_wrote_it(text: str, own: str, expected) -> None:
    assert blanks(text, own) == expected


def test_a_text_with_a_blank_says_so_costs_three_points_and_is_not_junk() -> None:
    found = warnings("Dear [Guest's Name], your room is ready.")
    assert [w.message for w in found] == ["“[Guest's Name]” is a blank to fill in: the count changes when you fill it"]
    assert not junk(found)
    assert offline_score(0.25, found, 7) == offline_score(0.25, [], 7) - 3.0
    assert explain(0.4, found, 0.8) == "a blank to fill in, ends naturally, reads smoothly"


def test_a_maker_the_instruction_names_is_the_subject_not_the_model_talking_about_itself() -> None:
    instruction = "Write a headline: Hugging Face opens a London office."
    assert talks_about_itself("Hugging Face opens an office in London.", instruction) is None


@pytest.mark.parametrize(
    ("text", "instruction", "expected"),
    [
        (
            "The abstract for a study on how countdown prompts help models includes an assertion.",
            "Write an abstract for a study showing that countdown prompts help language models hit exact lengths.",
            "The abstract for a study on how countdown…",
        ),  # read: ranked first, "ends naturally, reads smoothly"
        (
            "This post is about our new sourdough.",
            "Write a social media post about our sourdough.",
            "This post is about our new sourdough",
        ),
        ("The post office on Main Street reopens on Monday.", "Write a social media post about the post office.", None),
        (
            "The study of sleep shows that teenagers who sleep more score higher.",
            "Write an abstract for a study of sleep.",
            None,
        ),
    ],
)
def test_a_text_that_opens_on_what_it_was_asked_to_be_describes_it_instead(
    text: str, instruction: str, expected
) -> None:
    assert talks_about_itself(text, instruction) == expected


@pytest.mark.parametrize(
    ("kinds", "said"),
    [
        (["meta", "meta", "meta"], "Every variant talks about itself: none is worth keeping."),
        (["meta", "loop", "meta"], "Every variant goes round in circles or talks about itself: none is worth keeping."),
        (["section", "numbers"], "Every variant is a list of numbers or opens as a numbered section: none is worth"),
    ],
    ids=["one_way", "two_ways_in_the_kinds_order", "the_new_kind"],
)
def test_every_variant_junk_names_the_ways_its_variants_are_junk(kinds, said) -> None:
    assert all_junk(kinds).startswith(said)


def test_every_variant_junk_names_every_way_where_none_is_known() -> None:
    assert all_junk([None, None]) == ALL_JUNK and "talks about itself" in ALL_JUNK and "numbered section" in ALL_JUNK

"""Issue 31 point 2: nothing the model wrote is lost. A limit's cut at a sentence end and an exact ending written again
keep the model's whole text with the run (`written`), the notice and `history show` say the left-out words, and
"Put the words back" saves the whole text as a new run the one way an edit is saved, judged in the run's unit.

The model is the in-process scripted one, declaring what llama.cpp can do (the ending score), so the cut is fixed."""

from __future__ import annotations

import io
import json
import os

import pytest

from capel_ui.backends import ScriptedBackend, get_backend
from capel_ui.backends.providers.common import LLAMA_CPP
from capel_ui.cli import main
from capel_ui.counting import count
from capel_ui.export import export_json
from capel_ui.generation import Generation, Request, generate
from capel_ui.outcome import left_out
from capel_ui.runs import LiveRun, put_words_back, verdict_of
from capel_ui.storage import RunRecord, create_run, get_engine, get_run
from capel_ui.ui.render import written_html
from tests.test_planned_endings import (
    FOUND,
    HEAD,
    INSTRUCTION,
    NEXT,
    OWN,
    asked,
    by_prefill,
    llama,
    natural_after,
)

SMS = "Write a text message reminding a patient of a dental appointment on Tuesday at 3:30 pm with Dr. Patel."
KEPT = "Your dental appointment is on Tuesday at 3:30 pm."
TAIL = "Reply YES to confirm. We also offer whi."
REPLY = f"{KEPT} {TAIL}"


def engine():
    return get_engine(os.environ["DATABASE_URL"])


def sms_run(model: ScriptedBackend, reply: str = REPLY) -> RunRecord:
    """The SMS reminder under "at most 160", run and saved as Write saves it; only `KEPT` ends naturally."""
    model.capabilities = LLAMA_CPP
    model.ending = natural_after("3:30 pm.")
    model.reply(reply)
    request = Request(SMS, 160, mode="exact", target_kind="at_most", unit="sms")
    live = LiveRun(Generation(get_backend("scripted"), request), engine(), origin="write")
    live.run()
    assert live.run_id is not None
    run = get_run(engine(), live.run_id)
    assert run is not None
    return run


def history_show(*args: str) -> str:
    out = io.StringIO()
    assert main(["history", "show", *args], stdout=out, stderr=io.StringIO()) == 0
    return out.getvalue()


def test_a_limits_cut_saves_every_word_the_model_wrote_with_the_run(scripted_model: ScriptedBackend) -> None:
    run = sms_run(scripted_model)
    assert run.text == KEPT
    assert run.written == REPLY  # the raw view's whole text: the cut words kept
    assert f"left out: “{TAIL}”" in (run.notice or "")


def test_a_run_that_kept_all_the_model_wrote_has_nothing_to_put_back(scripted_model: ScriptedBackend) -> None:
    run = sms_run(scripted_model, reply=KEPT)
    assert run.text == KEPT and run.written is None
    assert put_words_back(engine(), run) is None


def test_an_exact_ending_written_again_keeps_the_models_own_ending() -> None:
    out = generate(
        llama(OWN, ending=natural_after("crust."), next_tokens=asked(NEXT)), Request(INSTRUCTION, 12, mode="exact")
    )
    assert out.text == HEAD + FOUND
    assert out.written == OWN
    apart = out.left_out
    assert apart is not None and (apart.words, apart.added) == ("a widespread.", "crisp crust.")


def test_a_closing_written_in_place_of_the_models_ending_says_the_words_it_left_out() -> None:
    own = "Fresh bread every Saturday. Our loaves sell out fast."  # its ending reads cut off: a closing is written
    model = llama(by_prefill(own, " Come early!"), ending=natural_after("Come early!"))
    out = generate(model, Request(INSTRUCTION, 10, mode="exact", target_kind="at_most"))
    assert (out.text, out.written) == ("Fresh bread every Saturday. Come early!", own)
    assert "in place of its own ending; left out: “Our loaves sell out fast.” (5 word(s)" in (out.notice or "")


def test_put_words_back_saves_the_whole_text_as_an_edit_counted_in_the_runs_unit(
    scripted_model: ScriptedBackend,
) -> None:
    parent = sms_run(scripted_model)
    restored = get_run(engine(), put_words_back(engine(), parent) or 0)
    assert restored is not None and restored.id != parent.id
    assert (restored.origin, restored.text, restored.unit) == ("edit", REPLY, "sms")
    assert restored.count == count(REPLY, "sms") == 90
    assert verdict_of(restored).headline("sms") == "✓ 90/160 SMS characters"
    assert f"Run {parent.id}'s text with the words it left out put back" in (restored.notice or "")


def test_words_put_back_over_the_limit_are_judged_over_it() -> None:
    whole = "Bike Repair Portland: A New Era of Fast Fixes."  # 46 characters, the limit 30
    parent_id = create_run(
        engine(), origin="write", status="complete", model="embedded", backend="embedded", mode="exact", lang="en",
        unit="chars", target=30, target_kind="at_most", instruction="Write an ad headline.",
        text="Bike Repair Portland.", raw="Bike Repair Portland.", written=whole, count=21, exact=True, valid=True,
    )  # fmt: skip
    parent = get_run(engine(), parent_id)
    assert parent is not None
    restored = get_run(engine(), put_words_back(engine(), parent) or 0)
    assert restored is not None and restored.text == whole
    verdict = verdict_of(restored)
    assert not verdict.verified and verdict.headline("chars") == "over by 16 · 46/30 characters"


def test_history_show_says_the_left_out_words_and_prints_the_whole_text(scripted_model: ScriptedBackend) -> None:
    run = sms_run(scripted_model)
    shown = history_show(str(run.id))
    assert f"left out: “{TAIL}” (8 word(s) the model wrote; its whole text is below)" in shown
    assert shown.rstrip().endswith(f"The model's whole text (the words above put back):\n{REPLY}")


def test_history_show_json_has_the_whole_text_and_the_left_out_words(scripted_model: ScriptedBackend) -> None:
    run = sms_run(scripted_model)
    data = json.loads(history_show(str(run.id), "--json"))
    assert (data["written"], data["left_out"], data["text"]) == (REPLY, TAIL, KEPT)


@pytest.mark.parametrize(
    ("written", "text", "parts"),
    [
        ("Bike Repair Portland: A New E.", "Bike Repair Portland.", ("Bike Repair Portland", ": A New E.", ".")),
        ("The shop opens at nine daily.", "The shop opens at noon.", ("The shop opens at ", "nine daily.", "noon.")),
        (REPLY, KEPT, (KEPT, f" {TAIL}", "")),
    ],
)
def test_the_text_parts_from_the_whole_at_a_word_start_never_inside_a_word(written, text, parts) -> None:
    apart = left_out(written, text)
    assert apart is not None and (apart.shared, apart.dropped, apart.added) == parts


def test_the_whole_text_is_shown_struck_as_text_never_html() -> None:
    apart = left_out("Fine words. <img src=x onerror=alert(1)> ok.", "Fine words.")
    assert apart is not None
    shown = written_html(apart.shared, apart.dropped, apart.added)
    assert '<del class="out" title="left out of the text"> &lt;img src=x onerror=alert(1)&gt; ok.</del>' in shown
    assert "<img" not in shown


def test_generate_says_the_words_a_limit_left_out(scripted_model: ScriptedBackend) -> None:
    scripted_model.capabilities = LLAMA_CPP
    scripted_model.ending = natural_after("3:30 pm.")
    scripted_model.reply(REPLY)
    err = io.StringIO()
    argv = ["generate", "--model", "scripted", "--mode", "exact", "--at-most", "160", "--unit", "sms", SMS]
    main(argv, stdin=io.StringIO(), stdout=io.StringIO(), stderr=err)
    assert f"left out: “{TAIL}”" in err.getvalue()


def test_the_json_export_carries_the_whole_text_and_the_left_out_words(scripted_model: ScriptedBackend) -> None:
    data = json.loads(export_json(sms_run(scripted_model)))
    assert (data["text"], data["written"], data["left_out"]) == (KEPT, REPLY, TAIL)


def test_the_json_export_of_a_text_that_kept_all_has_no_left_out_words(scripted_model: ScriptedBackend) -> None:
    assert "left_out" not in json.loads(export_json(sms_run(scripted_model, reply=KEPT)))


def test_history_show_names_a_run_with_its_words_put_back_edited_by_hand_once(scripted_model: ScriptedBackend) -> None:
    restored = put_words_back(engine(), sms_run(scripted_model))
    shown = history_show(str(restored))
    assert "Edited by hand ·" in shown and "(edited by hand)" not in shown, shown


@pytest.mark.parametrize(
    ("written", "text", "shown"),
    [
        ("A Seaside Bookshop: Haunted!", "A Seaside Bookshop.", "Bookshop<del"),  # a stop in their place: no gap
        ("Reminder: A dental patient is.", "Recommended by Dr. Patel.", "is.</del> <ins"),  # written anew: apart
    ],
)
def test_the_struck_words_and_the_text_in_their_place_read_apart_only_where_they_are_two_texts(
    written, text, shown
) -> None:
    apart = left_out(written, text)
    assert apart is not None and shown in written_html(apart.shared, apart.dropped, apart.added)

"""Issue 31 point 2 on the pages (AppTest, the in-process scripted model, a real SQLite file): a text a limit cut at a
sentence end shows the words it left out, struck, and "Put the words back" on Write and on History makes the model's
whole text the writer's new text, with its own verdict, saved as a new run that History lists."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from capel_ui.backends import ScriptedBackend
from capel_ui.backends.providers.common import LLAMA_CPP
from tests.test_app import badges, captions, saved_runs
from tests.test_app_targets import pick_preset
from tests.test_db_faults import click, on_scripted_model
from tests.test_planned_endings import natural_after
from tests.test_words_back import KEPT, REPLY, SMS, TAIL


def sms_on_write(model: ScriptedBackend, at: AppTest) -> AppTest:
    """The SMS preset (at most 160 SMS characters) run on Write; the model's text ends naturally only at `KEPT`."""
    model.capabilities = LLAMA_CPP
    model.ending = natural_after("3:30 pm.")
    model.reply(REPLY)
    on_scripted_model(at)
    pick_preset(at, "sms")
    at.text_area(key="w_instruction").input(SMS)
    return click(at, "Generate")


def shown_texts(at: AppTest) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def test_write_puts_the_left_out_words_back_as_a_new_run_with_its_verdict(
    scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    at = sms_on_write(scripted_model, app_test)
    [cut] = saved_runs()
    assert badges(at) == [":green-badge[✓ 49/160 SMS characters]"]
    assert any("8 word(s) the model wrote are left out" in m.value for m in at.markdown)
    assert f'<del class="out" title="left out of the text"> {TAIL}</del>' in shown_texts(at)

    click(at, "Put the words back")

    restored, parent = saved_runs()  # newest first
    assert (parent.id, restored.origin, restored.text) == (cut.id, "edit", REPLY)
    assert badges(at) == [":green-badge[✓ 90/160 SMS characters]"]
    assert any(c.startswith(f"Run {restored.id} · edit") for c in captions(at))
    assert f'<div class="capel-text">{REPLY}</div>' in shown_texts(at)
    assert not [b for b in at.button if b.label == "Put the words back"]  # the whole text left nothing out


def test_history_puts_the_left_out_words_back_and_opens_the_new_run(
    scripted_model: ScriptedBackend, app_test: AppTest
) -> None:
    at = sms_on_write(scripted_model, app_test)
    at.switch_page("app_pages/history.py").run()
    at.session_state["h_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert f'<div class="capel-text">{KEPT}</div>' in shown_texts(at)

    click(at, "Put the words back")

    restored, _ = saved_runs()
    assert [s.value for s in at.success] == [
        f"Saved as run {restored.id}, the top row: the words the model wrote put back."
    ]
    assert [s.value for s in at.main.subheader] == [f"Run {restored.id}"]
    assert badges(at) == [":green-badge[✓ 90/160 SMS characters]"]
    assert f'<div class="capel-text">{REPLY}</div>' in shown_texts(at)
    assert list(at.dataframe[0].value["id"]) == [restored.id, restored.id - 1]

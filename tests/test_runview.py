"""The read-only view of a live run (runview.py): what the pages and the CLI draw, read without reaching in."""

from __future__ import annotations

from capel_ui.generation import Generation, Request
from capel_ui.runs import LiveRun


def test_a_finished_countdown_run_shows_its_clean_text_count_and_markers(scripted_model) -> None:
    scripted_model.reply("<3>One<2>two<1>three<0>")
    live = LiveRun(Generation(scripted_model, Request("Count.", 3)), None, origin="cli")
    live.run()
    view = live.view()
    assert (view.text, view.units_done, view.remaining, view.phase, len(view.marker_spans)) == (
        "One two three",
        3,
        0,
        "done",
        4,
    )


def test_a_run_not_yet_started_is_writing_with_nothing_done(scripted_model) -> None:
    scripted_model.reply("<2>a<1>b<0>")
    view = LiveRun(Generation(scripted_model, Request("Count.", 2)), None, origin="cli").view()
    assert (view.phase, view.units_done, view.text, view.errors) == ("writing", 0, "", ())


def test_a_wrong_marker_is_in_the_view_as_an_error(scripted_model) -> None:
    scripted_model.reply("<3>One<1>two<0>")
    live = LiveRun(Generation(scripted_model, Request("Count.", 3, max_calls=1)), None, origin="cli")
    live.run()
    assert live.view().errors

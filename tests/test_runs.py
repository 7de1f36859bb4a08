"""The run lifecycle: every run is saved as it starts, while it streams, and with its final state and verdict,
whatever ends it. Real SQLite file, the in-process scripted model (a closed port for an unreachable server)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from capel_ui.backends import Turn, get_backend
from capel_ui.generation import Generation, Request
from capel_ui.runs import LiveRun, display_status, live_run, settle, verdict_of
from capel_ui.storage import get_engine, get_run, list_runs
from capel_ui.vocab import STALE_AFTER
from tests.scripted_server import MODEL, closed_port_url


@pytest.fixture
def engine():
    return get_engine()


def start(
    server_url: str | None, engine, *, target: int = 3, mode: str = "baseline", origin: str = "cli", **kw
) -> LiveRun:
    """A run on the scripted server at `server_url`, or (None) on the in-process scripted model."""
    if server_url is None:
        backend = get_backend("scripted", max_retries=0)
    else:
        backend = get_backend(MODEL, provider="compatible", base_url=server_url, max_retries=0)
    gen = Generation(backend, Request("Describe a lighthouse", target, mode=mode))
    return LiveRun(gen, engine, origin=origin, **kw)


def ticking(step: float = 10.0):
    """A clock that jumps `step` seconds per reading, so every chunk is past the save interval."""
    counter = itertools.count()
    return lambda: next(counter) * step


def test_a_run_is_saved_as_running_before_any_text_arrives(scripted_model, engine):
    scripted_model.reply("One two three.")
    live = start(None, engine, origin="compare", comparison_id="c1")
    row = get_run(engine, live.run_id)
    assert (row.status, row.origin, row.comparison_id, row.text) == ("running", "compare", "c1", "")
    live.run()


def test_a_finished_run_is_saved_complete_and_verified(scripted_model, engine):
    scripted_model.reply(["One two ", "three."])
    live = start(None, engine)
    live.run()
    row = get_run(engine, live.run_id)
    assert (row.status, row.text, row.count, row.verified) == ("complete", "One two three.", 3, True)


def test_a_finished_run_keeps_its_tokens_and_timings(scripted_model, engine):
    scripted_model.reply(["One ", "two ", "three."])  # the scripted model counts a token per chunk
    live = start(None, engine)
    live.run()
    row = get_run(engine, live.run_id)
    [(messages, _)] = scripted_model.requests
    prompt_tokens = sum(len(m["content"].split()) for m in messages)  # what the scripted model reports
    assert (row.prompt_tokens, row.completion_tokens, row.finish_reason) == (prompt_tokens, 3, "stop")
    assert row.seconds is not None and row.seconds >= 0


def test_an_off_target_run_is_complete_but_not_verified(scripted_model, engine):
    scripted_model.reply("One two three four.")
    live = start(None, engine)
    live.run()
    row = get_run(engine, live.run_id)
    assert (row.status, row.count, row.verified) == ("complete", 4, False)


def test_text_is_saved_while_it_streams(scripted_model, engine):
    scripted_model.reply(Turn(("One ", "two ", "three."), delay=0.05))
    live = start(None, engine, clock=ticking())
    seen = []
    for _ in live.stream():
        seen.append(get_run(engine, live.run_id))
        if len(seen) == 2:
            break
    assert (seen[1].status, seen[1].text) == ("running", "One two")


def test_a_stream_cut_in_the_middle_is_saved_partial_with_its_text(scripted_model, engine):
    scripted_model.reply(Turn(("One two ", "three."), fail="cut"))
    live = start(None, engine)
    live.run()
    row = get_run(engine, live.run_id)
    assert (row.status, row.text, row.verified) == ("partial", "One two three.", False)
    assert row.failure and row.failure_kind == "cut"


def test_an_unreachable_server_is_saved_failed_with_what_to_do(engine):
    live = start(closed_port_url(), engine)
    live.run()
    row = get_run(engine, live.run_id)
    assert (row.status, row.text, row.verified, row.failure_kind) == ("failed", "", False, "unreachable")


def test_a_cancelled_run_keeps_the_text_that_arrived(scripted_model, engine):
    scripted_model.reply(Turn(("One ", "two ", "three ", "four."), delay=0.05))
    live = start(None, engine, target=4)
    stream = live.stream()
    next(stream)
    live.cancel()
    for _ in stream:
        pass
    row = get_run(engine, live.run_id)
    assert (row.status, row.verified) == ("cancelled", False) and row.text.startswith("One")


def test_a_stream_abandoned_by_its_reader_is_saved_cancelled(scripted_model, engine):
    scripted_model.reply(Turn(("One ", "two ", "three."), delay=0.05))
    live = start(None, engine)
    stream = live.stream()
    next(stream)
    stream.close()  # a Stop click, a closed tab or Ctrl-C
    assert get_run(engine, live.run_id).status == "cancelled"


def test_a_run_without_a_database_is_not_saved(scripted_model, engine):
    scripted_model.reply("One two three.")
    live = start(None, None)
    outcome = live.run()
    assert live.run_id is None and outcome.verified and list_runs(engine) == []


def test_settle_returns_once_the_final_state_is_saved(scripted_model, engine):
    scripted_model.reply(Turn(("One ", "two ", "three."), delay=0.05))
    live = start(None, engine)
    stream = live.stream()
    next(stream)
    assert live_run(live.run_id) is live
    stream.close()
    assert settle(live.run_id, 1.0) and live_run(live.run_id) is None


def test_the_saved_verdict_matches_the_live_one(scripted_model, engine):
    scripted_model.reply(["One two three."])
    live = start(None, engine)
    outcome = live.run()
    assert verdict_of(get_run(engine, live.run_id)) == outcome.verdict


# ----- stale runs ----------------------------------------------------------------------------------------


def _stale_row(engine, seconds_ago: float):
    from capel_ui.storage import create_run

    run_id = create_run(
        engine,
        origin="cli",
        instruction="x",
        prompt="x",
        model="m",
        backend="compatible",
        mode="baseline",
        lang="en",
        unit="en_words",
        target=3,
        text="One two",
        verified=False,
    )
    row = get_run(engine, run_id)
    return row, row.updated_at + timedelta(seconds=seconds_ago)


def test_a_running_row_nobody_saves_any_more_shows_as_interrupted(engine):
    row, later = _stale_row(engine, STALE_AFTER + 1)
    assert display_status(row, later) == "interrupted"


def test_a_recently_saved_running_row_shows_as_running(engine):
    row, later = _stale_row(engine, 5)
    assert display_status(row, later) == "running"


def test_an_interrupted_row_keeps_its_text_and_is_not_verified(engine):
    row, later = _stale_row(engine, STALE_AFTER + 1)
    verdict = verdict_of(row, later)
    assert (verdict.status, verdict.verified, row.text) == ("interrupted", False, "One two")


def test_a_finished_row_is_never_shown_as_interrupted(scripted_model, engine):
    scripted_model.reply(["One two three."])
    live = start(None, engine)
    live.run()
    row = get_run(engine, live.run_id)
    assert display_status(row, datetime.now(UTC) + timedelta(days=1)) == "complete"

"""Default deadlines: a run ends however the server behaves, with a message that states the limit."""

from __future__ import annotations

import io

import pytest

from capel_ui.cli import build_parser, main
from capel_ui.storage import get_engine, list_runs
from capel_ui.vocab import DEFAULT_STALL_LIMIT, DEFAULT_TIME_LIMIT, EXIT_BACKEND, EXIT_MISS
from tests.scripted_server import MODEL, ScriptedServer, endless, keep_alive


def generate(url: str, *flags: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["generate", "--model", MODEL, "--base-url", url, "--mode", "baseline", "--target", "20", *flags, "Hi."]
    return main(argv, stdout=out, stderr=err), out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("flags", "limits"),
    [
        ((), (DEFAULT_TIME_LIMIT, DEFAULT_STALL_LIMIT)),
        (("--time-limit", "none", "--stall-limit", "off"), (None, None)),
        (("--time-limit", "30", "--stall-limit", "5"), (30.0, 5.0)),
    ],
)
def test_generate_has_both_limits_by_default_and_none_turns_one_off(flags, limits) -> None:
    args = build_parser().parse_args(["generate", "--target", "3", *flags, "Hi."])
    assert (args.time_limit, args.stall_limit) == limits


def test_a_server_sending_only_keep_alive_comments_is_stopped_at_the_stall_limit(scripted: ScriptedServer) -> None:
    scripted.script(keep_alive(["Two words "]))
    code, out, err = generate(scripted.url, "--stall-limit", "1")
    assert code == EXIT_BACKEND and out.strip() == "Two words"
    assert "No new text for 1 s (the stall limit), so the run was stopped" in err
    [run] = list_runs(get_engine())
    assert (run.status, run.failure_kind, run.text) == ("partial", "stalled", "Two words")


def test_a_trickle_of_letters_is_stopped_at_the_time_limit(scripted: ScriptedServer) -> None:
    scripted.script(endless("a", delay=0.3))
    code, _, err = generate(scripted.url, "--time-limit", "1")
    assert code == EXIT_MISS and "Stopped at the time limit of 1 s" in err


def test_the_write_page_offers_the_default_time_limit(app_test) -> None:
    assert app_test.number_input(key="w_time_limit").value == DEFAULT_TIME_LIMIT

"""No key and no URL credential reaches a message, the database or an export, whatever the server sends back."""

from __future__ import annotations

import io

import pytest

from capel_ui.cli import main
from capel_ui.storage import get_engine, list_runs, runs_to_csv
from tests.scripted_server import ScriptedServer, closed_port_url, status

KEY = "sk-capel-test-8d2f6a1b9c"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def everything_kept() -> str:
    """Every saved run as its CSV and JSON-ready fields: what History shows and exports."""
    runs = list_runs(get_engine())
    return runs_to_csv(runs) + repr([r.failure for r in runs])


def test_a_password_and_a_key_in_the_base_url_never_show(monkeypatch) -> None:
    url = closed_port_url().replace("http://", "http://me:hunter2@") + "?api-key=sekrit-token-77"
    code, _, err = cli("generate", "--model", "m", "--base-url", url, "--mode", "baseline", "--target", "3", "Hi.")
    assert code == 3 and "Could not connect to http://me:***@127.0.0.1:" in err
    for secret in ("hunter2", "sekrit-token-77"):
        assert secret not in err and secret not in everything_kept()


@pytest.mark.parametrize(
    "echo",
    [
        f"bad request; you sent Authorization: Bearer {KEY}",
        f'{{"headers": {{"authorization": "Bearer {KEY}"}}}}',
        f"key {KEY} is not valid for this model",
    ],
)
def test_a_server_that_echoes_the_key_in_its_error_gets_it_masked(monkeypatch, scripted: ScriptedServer, echo) -> None:
    monkeypatch.setenv("CAPEL_API_KEY", KEY)
    scripted.script(status(400, echo))
    code, _, err = cli(
        "generate", "--model", "m", "--base-url", scripted.url, "--mode", "baseline", "--target", "3", "Hi."
    )
    assert code == 3 and "rejected the request (400)" in err and "***" in err
    assert KEY not in err and KEY not in everything_kept()
    assert scripted.requests[0].key == KEY  # the key itself was sent as it is

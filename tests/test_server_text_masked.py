"""Issue 47: every string that came from a server is masked before it is shown. A vendor on 127.0.0.1 echoes the
key it was sent in an answer (in pieces, as a model writes it), a model id, an error body and a response header;
`doctor` and `models list` (real CLI processes), the Write page's grammar probe and the Models page (AppTest) never
show the key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.redact import MASK
from tests.scripted_hub import ScriptedHub
from tests.scripted_server import MODEL

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-proj-echo-0123456789abcdefghijklmnop"
PIECES = [KEY[:5], KEY[5:17], KEY[17:]]  # a model writes the key a few characters at a time
ECHOES = ("answer", "model id", "error body", "header")


class EchoingVendor:
    """An OpenAI-compatible vendor that echoes the key it was sent, in the one way `echo` names: `answer` (the
    text streamed, chat and Responses alike, is the key in pieces), `model id` (its /models lists the key),
    `error body` (every request refused, 401, the key in the message) or `header` (each answer's content type
    and `x-request-id` are the key)."""

    def __init__(self, echo: str) -> None:
        self.echo = echo
        vendor = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                vendor.answer(self, models=True)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                vendor.answer(self, models=False, responses=self.path.rstrip("/").endswith("/responses"), body=body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, h: BaseHTTPRequestHandler, *, models: bool, responses: bool = False, body: Any = None) -> None:
        if self.echo == "error body":
            message = f"Incorrect API key provided: {KEY}. You can find your API key at https://example.invalid."
            self._send(h, 401, "application/json", json.dumps({"error": {"message": message, "type": "auth"}}))
        elif models:
            ids = [KEY, "gpt-4.1"] if self.echo == "model id" else ["gpt-4.1"]
            data = {"object": "list", "data": [{"id": i, "object": "model", "owned_by": "x"} for i in ids]}
            self._send(h, 200, self._type("application/json"), json.dumps(data))
        else:
            pieces = PIECES if self.echo == "answer" else ["OK"]
            events = _responses_events(pieces, body) if responses else _chat_events(pieces)
            self._send(h, 200, self._type("text/event-stream"), "".join(f"data: {json.dumps(e)}\n\n" for e in events))

    def _type(self, usual: str) -> str:
        return KEY if self.echo == "header" else usual

    def _send(self, h: BaseHTTPRequestHandler, code: int, kind: str, text: str) -> None:
        data = text.encode()
        h.send_response(code)
        h.send_header("content-type", kind)
        h.send_header("x-request-id", KEY if self.echo == "header" else "req-1")
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)


def _chat_events(pieces: list[str]) -> list[Any]:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": MODEL}
    events: list[Any] = [{**chunk, "choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    return [*events, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]


def _responses_events(pieces: list[str], body: Any) -> list[Any]:
    tool = bool((body or {}).get("tools"))
    kind = "response.custom_tool_call_input.delta" if tool else "response.output_text.delta"
    head = {"type": kind, "item_id": "x", "output_index": 0}
    return [{**head, "sequence_number": i, "delta": p} for i, p in enumerate(pieces)]


@pytest.fixture(params=ECHOES)
def vendor(request: pytest.FixtureRequest) -> Iterator[EchoingVendor]:
    server = EchoingVendor(request.param)
    yield server
    server.stop()


def cli(vendor: EchoingVendor, *argv: str) -> tuple[int, str]:
    """`python -m capel_ui ARGV` as a real process with the OpenAI key and the vendor's address: exit code and
    everything it printed."""
    env = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": vendor.url, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-m", "capel_ui", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    return done.returncode, done.stdout + done.stderr


# ----- the terminal ---------------------------------------------------------------------------------------------


def test_doctor_never_prints_a_key_the_vendor_echoes(vendor: EchoingVendor) -> None:
    _, said = cli(vendor, "doctor", "--provider", "openai", "--model", "gpt-4.1")
    assert KEY not in said and KEY[5:] not in said, said
    assert "streaming" in said and "unexpected" not in said, said
    if vendor.echo == "answer":
        assert f"answered '{MASK}'" in said, said


def test_models_list_never_prints_a_key_the_vendor_echoes(vendor: EchoingVendor) -> None:
    code, said = cli(vendor, "models", "list", "--provider", "openai")
    assert KEY not in said and KEY[5:] not in said, said
    assert "unexpected" not in said, said
    if vendor.echo == "model id":
        assert code == 0 and said.splitlines()[0].split()[0] == MASK, said


# ----- the pages --------------------------------------------------------------------------------------------


def page_text(at: AppTest) -> str:
    shown = [e.value for e in (*at.markdown, *at.caption, *at.info, *at.error, *at.warning, *at.success)]
    return "\n".join(str(s) for s in shown) + "\n".join(str(e.value) for e in at.exception)


def test_the_write_pages_grammar_probe_never_shows_a_key_the_server_echoes(
    app_test: AppTest, vendor: EchoingVendor, monkeypatch
) -> None:
    monkeypatch.setenv("CAPEL_API_KEY", KEY)
    at = app_test
    at.selectbox(key="provider").set_value("compatible").run()
    at.text_input(key="compat_url").input(vendor.url)
    at.text_input(key="compat_model").input(MODEL)
    at.selectbox(key="compat_grammar").set_value("grammar").run()
    shown = page_text(at)
    assert "Not guaranteed" in shown, shown  # the probe asked the server and quotes what it said
    assert KEY not in shown and KEY[5:] not in shown, shown


def test_the_models_page_never_shows_a_hub_mirrors_password(tmp_path: Path, hub: ScriptedHub, monkeypatch) -> None:
    """A private Hub mirror reached with `user:token@` in HF_ENDPOINT: a failed pull says where it asked, masked."""
    token = "hf_mirror_0123456789abcdefghij"
    monkeypatch.setenv("HF_ENDPOINT", hub.url.replace("http://", f"http://writer:{token}@"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/models.py").run()
    [pull, *_] = [b for b in at.button if b.label == "Pull"]
    pull.click().run()
    shown = page_text(at)
    assert at.error and "answered 404" in shown, shown  # the mirror has no such file
    assert token not in shown and f"writer:{MASK}@" in shown, shown

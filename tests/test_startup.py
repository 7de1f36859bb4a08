"""A command that answers at once: what does not change between processes is kept on disk, and a command's own
llama.cpp server is started with what its request needs.

wordfreq's English list (0.5-0.8 s to load) is read from a table kept in the cache folder, a GGUF file's end token
(a generation to find) is kept there too, and `generate` starts the embedded server with one slot and the context its
request takes instead of a page's 4 × 8k. The times themselves are in the report of issue 45 (machine-dependent);
these tests hold what a user would notice: the same answers, without the work.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from capel_ui import lexicon
from capel_ui.backends.embedded import LEAST_CONTEXT, MOST_CONTEXT, EndTokens, context_for
from tests.cli_process import ROOT
from tests.scripted_server import MODEL, ScriptedServer, ok


@pytest.fixture(scope="session")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder of this session's own, with wordfreq's English table built in it (as a first run would)."""
    folder = tmp_path_factory.mktemp("capel-cache")
    build = "from capel_ui.lexicon import english_table; assert english_table() is not None"
    env = {**os.environ, "CAPEL_CACHE_DIR": str(folder)}
    subprocess.run([sys.executable, "-c", build], cwd=ROOT, env=env, check=True, timeout=300)
    return folder


@pytest.fixture
def this_cache(cache: Path, monkeypatch: pytest.MonkeyPatch):
    """This process reads the session's cache folder for one test."""
    monkeypatch.setenv("CAPEL_CACHE_DIR", str(cache))
    lexicon.english_table.cache_clear()
    lexicon._zipf.cache_clear()
    yield cache
    lexicon.english_table.cache_clear()
    lexicon._zipf.cache_clear()


PROBE = """
import io, sys
from capel_ui.cli import main
code = main(sys.argv[1:], stdout=io.StringIO(), stderr=sys.stderr)
print(code, ",".join(m for m in ("wordfreq", "langcodes", "sqlalchemy") if m in sys.modules))
print(sum(name.startswith("openai.types.") for name in sys.modules), file=sys.stderr)
"""


def test_generate_judges_its_text_without_loading_wordfreq(cache: Path) -> None:
    """The quality check's word lookups read the table: the process never loads wordfreq (nor langcodes under it);
    a command that keeps nothing (`--no-save`) never loads SQLAlchemy; and of the `openai` client's ~470 type
    modules it loads those a chat completion uses (backends/sdk.py)."""
    with ScriptedServer() as server:
        server.script(ok(["Hello there, ", "my lovely ", "friend."]))
        argv = ["generate", "--model", MODEL, "--base-url", server.url, "--mode", "baseline", "--target", "5"]
        env = {**os.environ, "CAPEL_CACHE_DIR": str(cache)}
        done = subprocess.run(
            [sys.executable, "-c", PROBE, *argv, "--no-save", "Say hi."],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.stdout.split() == ["0"], done.stderr
    assert int(done.stderr.split()[-1]) < 150, done.stderr


SDK_NAMES = """
import sys
if sys.argv[1] == "deferred":
    import capel_ui.backends  # noqa: F401 - defers openai's types (backends/sdk.py)
import openai
from openai.types.chat import ChatCompletionChunk  # noqa: F401 - a submodule first, its package's names later
for name in ("openai.types", "openai.types.chat", "openai.types.responses", "openai.types.shared"):
    module = sys.modules.get(name) or __import__(name, fromlist=["_"])
    print(name, sorted((n, repr(getattr(module, n))) for n in dir(module) if not n.startswith("_")))
star: dict = {}
exec("from openai.types.beta import *", star)
print(sorted(n for n in star if not n.startswith("_")))
"""


def test_openais_types_are_the_same_when_they_load_as_used() -> None:
    """Every public name of `openai.types` and the subpackages a run uses is what a plain `import openai` gives."""

    def names(how: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", SDK_NAMES, how], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    deferred, plain = names("deferred"), names("plain")
    assert deferred == plain
    assert "ResponseFormatJSONSchema" in plain and "ChatCompletionChunk" in plain


SDK_THREADS = """
from concurrent.futures import ThreadPoolExecutor
import capel_ui.backends  # noqa: F401
import openai.types.responses as responses
with ThreadPoolExecutor(8) as pool:
    found = list(pool.map(lambda _: getattr(responses, "Response"), range(8)))
print(len({id(cls) for cls in found}), found[0].__module__)
"""


def test_threads_asking_a_package_for_a_type_at_once_all_get_it() -> None:
    """Eight threads asking a package that has not loaded its names yet all wait for the one load, none fails."""
    done = subprocess.run([sys.executable, "-c", SDK_THREADS], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["1", "openai.types.responses.response"], done.stderr


WORDS = (
    *("hello", "Hello", "HELLO", "the", "don't", "o'clock", "Whaler", "recharge", "qzxvbw", "l'heure", "xyz'abc"),
    *("don’t", "café", "3", "1999", "well-known", "Portland"),
)


@pytest.mark.parametrize("word", WORDS)
def test_a_word_has_the_frequency_wordfreq_gives_it(this_cache: Path, word: str) -> None:
    """From the table (ASCII words, whole apostrophe words) or from wordfreq (the rest), the same Zipf value:
    "l'heure" is two tokens to wordfreq and "xyz'abc" is not listed, so both are asked of wordfreq itself."""
    from wordfreq import zipf_frequency

    assert lexicon.zipf(word) == zipf_frequency(word, "en")


def test_a_gguf_files_end_token_is_kept_for_the_next_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAPEL_CACHE_DIR", str(tmp_path / "cache"))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF one")
    assert not EndTokens.of(gguf).known()
    EndTokens.of(gguf).keep("<|im_end|>")
    assert (EndTokens.of(gguf).known(), EndTokens.of(gguf).token()) == (True, "<|im_end|>")
    gguf.write_bytes(b"GGUF two, another model")  # another file at the same path: found again
    assert not EndTokens.of(gguf).known()
    EndTokens.of(gguf).keep(None)  # no usable end token is an answer too
    assert (EndTokens.of(gguf).known(), EndTokens.of(gguf).token()) == (True, None)


def test_a_cache_folder_that_cannot_be_written_keeps_nothing_and_fails_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("CAPEL_CACHE_DIR", str(blocked))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    EndTokens.of(gguf).keep("<|im_end|>")
    assert not EndTokens.of(gguf).known()


@pytest.mark.parametrize(
    ("prompt_chars", "max_tokens", "context"),
    [
        (67, 88, LEAST_CONTEXT),  # "Say hi." in exactly 3 words: the least a slot gets
        (1_300, 1_200, 4096),  # 120 words of CAPEL's countdown
        (120, 2_464, 4096),  # 300 words of exact
        (300_000, 400, MOST_CONTEXT),  # a rewrite of a long text: a slot's most, as before
    ],
)
def test_a_commands_server_gets_the_context_its_request_takes(prompt_chars: int, max_tokens: int, context: int) -> None:
    assert context_for(prompt_chars, max_tokens) == context


SERVER_PROBE = """
import io, json, sys
from capel_ui.cli import main
from capel_ui.backends.base import server_slots
from capel_ui.backends.embedded import start_server
code = main(["generate", "--no-save", "--target", "3", "Say hi."], stdout=io.StringIO(), stderr=sys.stderr)
print(json.dumps({"code": code, "slots": server_slots(start_server().base_url)}))
"""


@pytest.mark.model
def test_generate_starts_a_one_slot_server_and_keeps_its_end_token(tmp_path: Path) -> None:
    env = {**os.environ, "CAPEL_CACHE_DIR": str(tmp_path)}
    env.pop("CAPEL_EMBEDDED_PARALLEL", None)
    env["CAPEL_RESIDENT"] = "0"  # a server of its own (the resident one: below)
    done = subprocess.run(
        [sys.executable, "-c", SERVER_PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert json.loads(done.stdout.splitlines()[-1]) == {"code": 0, "slots": 1}, done.stderr
    kept = json.loads((tmp_path / "end-tokens.json").read_text())
    assert list(kept.values()) == ["<|im_end|>"]
    assert "SmolLM2-135M-Instruct" in next(iter(kept))


# ----- the model stays loaded between commands (backends/resident.py) ----------------------------------------------

RESIDENT_PROBE = """
import io, json, sys
from capel_ui.cli import main
code = main(["generate", "--no-save", "--target", "3", "Say hi."], stdout=io.StringIO(), stderr=sys.stderr)
print(json.dumps({"code": code, "model_loaded_here": "xllamacpp" in sys.modules}))
"""


@pytest.fixture
def resident_cache(cache: Path, monkeypatch: pytest.MonkeyPatch):
    """The session's cache folder, with commands leaving their model loaded there; what they leave is stopped after."""
    from capel_ui.backends import resident

    monkeypatch.setenv("CAPEL_CACHE_DIR", str(cache))
    yield cache
    for place, record in resident.running():
        resident.stop(place, record)


def _command(cache: Path, script: str = RESIDENT_PROBE, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A process with commands' resident servers on (the suite turns them off), sized by nothing of its own."""
    environment = {**os.environ, "CAPEL_CACHE_DIR": str(cache), "CAPEL_RESIDENT": "1", **env}
    for name in ("CAPEL_EMBEDDED_PARALLEL", "CAPEL_EMBEDDED_CTX"):
        environment.pop(name, None)
    return subprocess.run(
        [sys.executable, "-c", script, *argv], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300
    )


def _probe(cache: Path, **env: str) -> dict:
    done = _command(cache, **env)
    return json.loads(done.stdout.splitlines()[-1]) if done.stdout.strip() else {"stderr": done.stderr}


def _record(cache: Path) -> dict:
    (found,) = (cache / "servers").glob("*.json")
    return json.loads(found.read_text())


CLI = "import sys; from capel_ui.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.model
def test_a_second_command_finds_the_model_loaded_and_stop_unloads_it(resident_cache: Path) -> None:
    from capel_ui.keep import alive as _alive

    secret = {"OPENAI_API_KEY": "sk-not-for-the-resident-server"}
    one_thread = {"CAPEL_EMBEDDED_THREADS": "1"}  # the command's threads are the server's, not a server of its own
    assert _probe(resident_cache, **secret, **one_thread) == {"code": 0, "model_loaded_here": False}
    first = _record(resident_cache)
    assert first["threads"] == 1
    assert b"sk-not-for-the-resident-server" not in Path(f"/proc/{first['pid']}/environ").read_bytes()
    assert _probe(resident_cache, **one_thread) == {"code": 0, "model_loaded_here": False}
    assert _record(resident_cache)["pid"] == first["pid"] and _alive(first["pid"])
    folder = resident_cache / "servers"
    assert (folder.stat().st_mode & 0o777, next(folder.glob("*.json")).stat().st_mode & 0o777) == (0o700, 0o600)
    with open(next(folder.glob("*.users")), "a") as users:  # a command still using it, as `Place.use` holds it
        fcntl.flock(users, fcntl.LOCK_SH)
        two_threads = _probe(resident_cache, CAPEL_EMBEDDED_THREADS="2")  # loads its own: never stops it under us
    assert two_threads == {"code": 0, "model_loaded_here": True}
    assert _record(resident_cache)["pid"] == first["pid"] and _alive(first["pid"])
    listed = _command(resident_cache, CLI, "models", "running")
    assert "SmolLM2-135M-Instruct" in listed.stdout and str(first["pid"]) in listed.stdout
    assert "4 slots x 2048 tokens, 1 thread " in listed.stdout
    assert first["api_key"] not in listed.stdout + listed.stderr
    stopped = _command(resident_cache, CLI, "models", "stop")
    assert stopped.stderr == "1 model server stopped.\n" and not _alive(first["pid"])
    assert not list(folder.glob("*.json"))


@pytest.mark.model
def test_a_record_whose_server_is_gone_is_replaced_and_the_new_one_stops_after_its_keep_alive(
    resident_cache: Path,
) -> None:
    import time

    from capel_ui.backends.embedded import smollm2_path
    from capel_ui.backends.resident import Place, Record, _key
    from capel_ui.keep import alive as _alive

    dead = subprocess.Popen(["true"])
    dead.wait()
    place = Place.of(smollm2_path())
    place.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    place.write(Record(dead.pid, "http://127.0.0.1:9/v1", "old-key", _key(smollm2_path()) or "", 4, 2048))
    assert _probe(resident_cache, CAPEL_KEEP_ALIVE="3") == {"code": 0, "model_loaded_here": False}
    pid = _record(resident_cache)["pid"]
    assert pid != dead.pid
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pid) and not list((resident_cache / "servers").glob("*.json"))


THREADED = [  # a resident server's threads (0: a record from before they were kept), and the command's
    pytest.param(2, "2", True, id="the same threads: used"),
    pytest.param(2, "1", False, id="a command asking for one thread: replaced"),
    pytest.param(0, "2", False, id="a record that does not say its threads: replaced"),
]


@pytest.mark.parametrize(("kept", "asked", "used"), THREADED)
def test_a_resident_server_is_used_only_by_a_command_that_asks_for_its_threads(
    monkeypatch: pytest.MonkeyPatch, kept: int, asked: str, used: bool
) -> None:
    from capel_ui.backends.embedded import ServerSize
    from capel_ui.backends.resident import Record

    monkeypatch.setenv("CAPEL_EMBEDDED_THREADS", asked)
    record = Record(1, "http://127.0.0.1:9/v1", "key", "model|build", 4, 2048, kept)
    assert record.fits(ServerSize(1, 2048)) is used


@pytest.mark.parametrize(
    ("setting", "need"),
    [
        ({"CAPEL_RESIDENT": "0"}, (1, 2048)),  # turned off
        ({}, (1, 4096)),  # a request bigger than a resident server's slot: a server of its own, sized for it
        ({}, (5, 2048)),  # more texts at once than it has slots
    ],
)
def test_a_command_starts_its_own_server_where_a_resident_one_would_not_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: dict[str, str], need: tuple[int, int]
) -> None:
    from capel_ui.backends.embedded import ServerSize, smollm2_path
    from capel_ui.backends.resident import attach

    monkeypatch.setenv("CAPEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CAPEL_RESIDENT", setting.get("CAPEL_RESIDENT", "1"))
    assert attach(smollm2_path(), ServerSize(*need)) is None
    assert not (tmp_path / "servers").exists()  # nothing started, nothing recorded

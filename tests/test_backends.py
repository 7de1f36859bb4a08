"""Remote backends against a scripted vendor: what the user sees when a service fails, and what is sent."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import openai
import pytest

from capel_ui.backends import (
    EMBEDDED,
    BackendError,
    CancelToken,
    Capabilities,
    Guarded,
    ModelChoice,
    OpenAICompatBackend,
    Options,
    Usage,
    get_backend,
    resolve_key,
)
from capel_ui.backends.registry import secrets_files
from capel_ui.generation import Generation, Request, generate
from capel_ui.grammar import countdown_grammar, exact_grammar, lexicon_rules
from capel_ui.runs import final_fields
from tests.scripted_server import (
    MODEL,
    closed_port_url,
    context_error,
    cut_after,
    empty,
    hang,
    ok,
    stall_after,
    status,
    stream_error,
)

MESSAGES = [{"role": "user", "content": "Say hello."}]
NO_WAIT = {"retry-after": "0"}


GUARD_SETTINGS = ("max_retries", "backoff", "wait_budget")


def guarded(url: str, *, sleeps: list[float] | None = None, api_key: str | None = "sk-test", **kw) -> Guarded:
    """The chat backend at `url` inside the retry guard, whose backoff sleeps are recorded instead of slept."""
    guard = {k: kw.pop(k) for k in GUARD_SETTINGS if k in kw}
    inner = OpenAICompatBackend(MODEL, base_url=url, api_key=api_key, **kw)
    return Guarded(inner, sleep=(sleeps.append if sleeps is not None else lambda s: None), **guard)


def backend_for(server, *, sleeps: list[float] | None = None, **kw) -> Guarded:
    """A backend on the scripted server whose backoff sleeps are recorded instead of slept."""
    return guarded(server.url, sleeps=sleeps, **kw)


def failure_of(backend, options: Options | None = None) -> BackendError:
    with pytest.raises(BackendError) as info:
        list(backend.stream(MESSAGES, options or Options()))
    return info.value


def text_of(items: list) -> str:
    return "".join(i for i in items if isinstance(i, str))


# ----- a healthy stream ---------------------------------------------------------------------------------


def test_stream_yields_text_chunks_then_the_usage_the_service_reported(scripted):
    scripted.script(ok(["Hello", ", ", "world."], usage=(21, 3)))
    items = list(backend_for(scripted).stream(MESSAGES, Options(max_tokens=10)))
    assert items[:-1] == ["Hello", ", ", "world."]
    usage = items[-1]
    assert isinstance(usage, Usage)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.finish_reason) == (21, 3, "stop")
    assert usage.first_token_seconds is not None and usage.seconds >= usage.first_token_seconds
    body = scripted.last_body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == MESSAGES and body["max_tokens"] == 10


def test_generation_keeps_token_counts_and_verifies_an_exact_answer(scripted):
    scripted.script(ok(["Lighthouses guide ", "ships home."], usage=(30, 5)))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url)
    outcome = generate(backend, Request("Describe a lighthouse", 4, mode="baseline"))
    assert outcome.status == "complete" and outcome.verified
    assert outcome.text == "Lighthouses guide ships home."
    assert (outcome.prompt_tokens, outcome.completion_tokens) == (30, 5)


def test_the_stand_in_answers_model_lists_and_non_streaming_calls_like_a_vendor(scripted):
    client = openai.OpenAI(base_url=scripted.url, api_key="sk-test", max_retries=0)
    assert [m.id for m in client.models.list()] == [MODEL]
    scripted.script(ok(["Hi ", "there."], usage=(4, 2)))
    reply = client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert reply.choices[0].message.content == "Hi there."
    assert reply.usage.completion_tokens == 2


# ----- failures before any text: kinds and messages -------------------------------------------------------


def test_connection_refused_is_unreachable_and_names_the_url():
    url = closed_port_url()
    backend = guarded(url, api_key=None, max_retries=1)
    error = failure_of(backend)
    assert error.kind == "unreachable"
    assert url in error.message
    assert "is the server running" in error.message


@pytest.mark.parametrize("code", [401, 403])
def test_refused_key_is_auth_and_says_how_to_give_one(scripted, code):
    scripted.script(status(code, "Incorrect API key provided"))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, api_key="sk-wrong")
    error = failure_of(backend)
    assert (error.kind, error.status) == ("auth", code)
    assert "CAPEL_API_KEY" in error.message and "key" in error.message
    assert len(scripted.chat_requests) == 1, "a refused key is not retried"


@pytest.mark.parametrize(
    ("behaviour", "kind", "words"),
    [
        pytest.param(context_error(), "context", "prompt alone (9000 tokens) is too long", id="400_context_length"),
        pytest.param(
            status(400, "'messages' must be a list"), "bad_request", "'messages' must be a list", id="400_other"
        ),
        pytest.param(status(404, "The model does not exist"), "not_found", "check the model id", id="404"),
        pytest.param(status(422, "unprocessable"), "bad_request", "(422): unprocessable", id="422_validation"),
    ],
)
def test_client_errors_are_classified_without_retrying(scripted, behaviour, kind, words):
    scripted.script(behaviour)
    error = failure_of(backend_for(scripted))
    assert error.kind == kind
    assert words in error.message
    assert len(scripted.chat_requests) == 1


def test_timeout_when_the_server_never_answers(scripted):
    scripted.script(hang(10))
    error = failure_of(backend_for(scripted), Options(timeout=0.5))
    assert error.kind == "timeout"
    assert "did not answer in time" in error.message
    assert len(scripted.chat_requests) == 1, "a timeout is not retried"


def test_the_backend_timeout_applies_to_generations(scripted):
    scripted.script(hang(10))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, timeout=0.5)
    outcome = generate(backend, Request("Describe a lighthouse", 5, mode="baseline"))
    assert outcome.status == "failed" and outcome.failure_kind == "timeout"
    assert outcome.seconds < 5


# ----- retries ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [429, 500, 503])
def test_retryable_statuses_are_retried_then_succeed(scripted, code):
    scripted.script(status(code, headers=NO_WAIT), status(code, headers=NO_WAIT), ok("Recovered."))
    items = list(backend_for(scripted).stream(MESSAGES, Options()))
    assert text_of(items) == "Recovered."
    assert len(scripted.chat_requests) == 3


def test_backoff_grows_between_attempts_without_retry_after(scripted):
    sleeps: list[float] = []
    scripted.script(status(429), status(429), status(429), ok("Finally."))
    items = list(backend_for(scripted, sleeps=sleeps, backoff=0.5).stream(MESSAGES, Options()))
    assert text_of(items) == "Finally."
    assert len(sleeps) == 3
    assert 0.5 <= sleeps[0] < sleeps[1] < sleeps[2] <= 0.5 * 4 * 1.25


def test_retry_after_header_sets_the_wait(scripted):
    sleeps: list[float] = []
    scripted.script(status(429, headers={"retry-after": "2"}), ok("Done."))
    list(backend_for(scripted, sleeps=sleeps).stream(MESSAGES, Options()))
    assert sleeps == [2.0]


@pytest.mark.parametrize(
    ("code", "kind", "words"),
    [(429, "rate_limit", "rate-limiting"), (500, "server", "server error"), (503, "server", "server error")],
)
def test_persistent_retryable_failure_gives_up_after_bounded_attempts(scripted, code, kind, words):
    sleeps: list[float] = []
    scripted.script(then=status(code))
    error = failure_of(backend_for(scripted, sleeps=sleeps, max_retries=3))
    assert (error.kind, error.status) == (kind, code)
    assert words in error.message and "tried 4 times" in error.message
    assert len(scripted.chat_requests) == 4
    assert len(sleeps) == 3


def test_get_backend_takes_the_sleep_its_retries_use(scripted, monkeypatch):
    monkeypatch.delenv("CAPEL_RETRY_BACKOFF")  # the users' default (the suite shortens it)
    sleeps: list[float] = []
    scripted.script(status(503), status(429, headers={"retry-after": "4"}), ok("Back."))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, sleep=sleeps.append)
    assert text_of(list(backend.stream(MESSAGES, Options()))) == "Back."
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 0.625 and sleeps[1] == 4.0


@pytest.mark.parametrize(("setting", "first"), [("2", 2.0), ("0", 0.0), ("soon", 0.5), ("-1", 0.0)])
def test_capel_retry_backoff_sets_the_first_wait(scripted, monkeypatch, setting: str, first: float):
    monkeypatch.setenv("CAPEL_RETRY_BACKOFF", setting)
    sleeps: list[float] = []
    scripted.script(status(503), ok("Back."))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, sleep=sleeps.append)
    assert text_of(list(backend.stream(MESSAGES, Options()))) == "Back."
    assert len(sleeps) == 1 and first <= sleeps[0] <= first * 1.25


def test_a_stop_during_a_retry_after_wait_ends_the_run_at_once_without_another_attempt(scripted):
    """A 429 asking to wait 20 s, then Stop after 0.3 s: the run ends within a second, saying why, and the server
    is not asked again (before, the Stop waited out the 20 s)."""
    scripted.script(status(429, headers={"retry-after": "20"}), ok("Too late."))
    inner = OpenAICompatBackend(MODEL, base_url=scripted.url, api_key="sk-test")
    cancel = CancelToken()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    error = failure_of(Guarded(inner), Options(cancel=cancel))
    assert time.monotonic() - started < 3
    assert error.kind == "rate_limit" and len(scripted.chat_requests) == 1


@pytest.mark.parametrize(
    ("code", "retry_after", "kind", "words"),
    [
        (429, "120", "rate_limit", "rate-limiting requests (429) and asks to wait 2 min"),
        (429, "3600", "rate_limit", "asks to wait 60 min"),
        (503, "45", "server", "unavailable (503) and asks to wait 45 s"),
    ],
)
def test_a_retry_after_beyond_the_wait_budget_stops_at_once_saying_how_long(scripted, code, retry_after, kind, words):
    sleeps: list[float] = []
    scripted.script(status(code, headers={"retry-after": retry_after}), ok("Too late."))
    error = failure_of(backend_for(scripted, sleeps=sleeps))
    assert (error.kind, error.status) == (kind, code)
    assert words in error.message and "try again after that" in error.message
    assert sleeps == [] and len(scripted.chat_requests) == 1


def test_a_retry_after_given_as_a_date_counts_too(scripted):
    from email.utils import format_datetime

    in_an_hour = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    scripted.script(status(429, headers={"retry-after": in_an_hour}), ok("Too late."))
    error = failure_of(backend_for(scripted))
    assert error.kind == "rate_limit" and ("asks to wait 60 min" in error.message or "59 min" in error.message)
    assert len(scripted.chat_requests) == 1


def test_the_waits_of_one_request_add_up_to_at_most_the_budget(scripted):
    sleeps: list[float] = []
    scripted.script(status(429, headers={"retry-after": "20"}), status(429, headers={"retry-after": "20"}), ok("x"))
    error = failure_of(backend_for(scripted, sleeps=sleeps, wait_budget=30.0))
    assert sleeps == [20.0], "the second 20 s wait would pass the 30 s budget"
    assert "asks to wait 20 s" in error.message and "tried 2 times" in error.message
    assert len(scripted.chat_requests) == 2


def test_unreachable_server_is_retried_with_backoff_then_reported():
    sleeps: list[float] = []
    backend = guarded(closed_port_url(), api_key=None, max_retries=2, sleeps=sleeps)
    error = failure_of(backend)
    assert error.kind == "unreachable" and "tried 3 times" in error.message
    assert len(sleeps) == 2


# ----- failures after text arrived: the text is kept ---------------------------------------------------------

ARRIVED = ["The lamp ", "turned ", "all night"]


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        pytest.param(cut_after(ARRIVED), "cut", id="socket_closed_mid_body"),
        pytest.param(ok(ARRIVED, finish_reason=None), "cut", id="done_without_finish_reason"),
        pytest.param(stream_error(ARRIVED), "server", id="error_event_mid_stream"),  # the server's own error
        pytest.param(stall_after(ARRIVED, 10), "cut", id="stalled_mid_stream"),
    ],
)
def test_a_stream_broken_after_text_is_partial_and_keeps_the_text(scripted, behaviour, kind):
    scripted.script(behaviour)
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, timeout=1.0)
    gen = Generation(backend, Request("Describe a lighthouse", 20, mode="baseline"))
    chunks = list(gen.stream())
    outcome = gen.outcome()
    assert chunks == ARRIVED
    assert outcome.status == "partial"
    assert outcome.raw == "".join(ARRIVED) and outcome.text == "The lamp turned all night"
    assert outcome.count == 5
    assert outcome.failure_kind == kind and "arrived" in outcome.failure and "kept" in outcome.failure
    assert not outcome.verified
    assert len(scripted.chat_requests) == 1, "a stream that already gave text is never retried"


def test_a_cut_countdown_keeps_its_clean_text_and_is_not_verified(scripted):
    scripted.script(cut_after(["<5>Hello,", "<4>world!", "<3>How's"]))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url)
    outcome = generate(backend, Request("Greet me", 5, mode="capel"))
    assert outcome.status == "partial"
    assert outcome.text == "Hello, world! How's"
    assert outcome.countdown_end == 3
    assert not outcome.verified


@pytest.mark.parametrize("finish", ["stop", "length"])
def test_a_stream_with_no_text_fails_as_empty(scripted, finish):
    scripted.script(empty(finish))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url)
    outcome = generate(backend, Request("Describe a lighthouse", 5, mode="baseline"))
    assert outcome.status == "failed"
    assert outcome.failure_kind == "empty" and "returned no text" in outcome.failure
    assert outcome.raw == "" and not outcome.verified


def test_a_failure_before_text_fails_the_generation_with_the_message(scripted):
    scripted.script(status(401, "bad key"))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, api_key="sk-wrong")
    outcome = generate(backend, Request("Describe a lighthouse", 5, mode="baseline"))
    assert outcome.status == "failed" and outcome.failure_kind == "auth"
    assert "CAPEL_API_KEY" in outcome.failure


# ----- what is sent: grammar field, reasoning models, keys --------------------------------------------------


@pytest.mark.parametrize(
    ("grammar_field", "where"),
    [
        ("grammar", lambda body: body["grammar"]),
        ("guided_grammar", lambda body: body["guided_grammar"]),
        ("structured_outputs", lambda body: body["structured_outputs"]["grammar"]),
    ],
)
@pytest.mark.parametrize(("mode", "build"), [("exact", exact_grammar), ("exact-countdown", countdown_grammar)])
def test_the_grammar_goes_in_the_servers_field(scripted, grammar_field, where, mode, build):
    reply = "One two three." if mode == "exact" else "<3>One<2>two<1>three.<0>"
    scripted.script(ok(reply))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, grammar_field=grammar_field)
    outcome = generate(backend, Request("Count to three", 3, mode=mode))
    body = scripted.last_body
    # llama.cpp's GBNF field gets the word-list rules; other servers keep the plain word rule
    rules = lexicon_rules("en", "Count to three") if grammar_field == "grammar" else None
    assert where(body) == build("en", 3, words=rules)
    other_fields = {"grammar", "guided_grammar", "structured_outputs"} - {grammar_field}
    assert not other_fields & body.keys()
    assert outcome.verified and outcome.text == "One two three."


def test_no_grammar_is_sent_outside_the_exact_modes(scripted):
    scripted.script(ok("One two three."))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, grammar_field="grammar")
    generate(backend, Request("Count to three", 3, mode="baseline"))
    assert "grammar" not in scripted.last_body


@pytest.mark.parametrize(
    ("lang", "mode", "reply", "tokens_per_unit"),
    [
        # SmolLM2 spent up to ~3.6 tokens per Chinese character (3 bytes, plus punctuation) under the grammar.
        ("zh", "exact", "灯塔。", 6),
        ("en", "exact", "Lighthouse.", 3),
        ("zh", "exact-countdown", "<1>灯。<0>", 6 + 3),
    ],
)
def test_the_default_output_budget_leaves_room_for_every_unit(scripted, lang, mode, reply, tokens_per_unit):
    target = 241
    scripted.script(ok(reply))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, grammar_field="grammar")
    generate(backend, Request("Describe a lighthouse", target, lang=lang, mode=mode))
    assert scripted.last_body["max_tokens"] >= target * tokens_per_unit


@pytest.mark.parametrize("mode", ["exact", "exact-countdown"])
def test_a_backend_without_grammar_refuses_exact_modes_before_calling(scripted, mode):
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url)
    with pytest.raises(ValueError, match="does not take a grammar"):
        Generation(backend, Request("Count to three", 3, mode=mode))
    assert scripted.requests == []


def test_the_backend_itself_refuses_a_grammar_it_cannot_send(scripted):
    backend = backend_for(scripted, capabilities=Capabilities())
    error = failure_of(backend, Options(grammar='root ::= "x"'))
    assert error.kind == "bad_request" and "does not take a grammar" in error.message
    assert scripted.requests == []


@pytest.mark.parametrize(
    ("provider", "model", "budget_field", "sends_temperature"),
    [
        ("openai", "o4-mini", "max_completion_tokens", False),
        ("openai", "o3", "max_completion_tokens", False),
        ("openai", "gpt-4.1", "max_completion_tokens", True),  # max_tokens is deprecated at OpenAI (issue 33)
        ("deepseek", "deepseek-reasoner", "max_tokens", False),
        ("deepseek", "deepseek-chat", "max_tokens", True),
    ],
)
def test_model_parameters_follow_the_models_capabilities(scripted, provider, model, budget_field, sends_temperature):
    scripted.script(ok("One two three."))
    backend = get_backend(model, provider=provider, base_url=scripted.url, api_key="sk-test")
    seed = None if provider == "deepseek" else 3  # DeepSeek documents no seed: refused before sending (issue 33)
    generate(
        backend, Request("Count to three", 3, mode="baseline", temperature=0.7, top_p=0.9, max_tokens=50, seed=seed)
    )
    body = scripted.last_body
    assert body["model"] == model
    assert body[budget_field] == 50
    assert {"max_tokens", "max_completion_tokens"} - {budget_field} & body.keys() == set()
    if sends_temperature:
        assert (body["temperature"], body["top_p"]) == (0.7, 0.9)
    else:
        assert "temperature" not in body and "top_p" not in body
    assert body.get("seed") == seed


@pytest.mark.parametrize(
    ("choice", "label"),
    [
        (ModelChoice("openai", "gpt-4.1"), "gpt-4.1 (OpenAI)"),
        (ModelChoice("deepseek", "deepseek-chat"), "deepseek-chat (DeepSeek)"),
        (ModelChoice("compatible", "qwen3:8b"), "qwen3:8b (OpenAI-compatible server)"),
    ],
)
def test_a_model_choice_and_its_backend_carry_one_label(scripted, choice, label):
    backend = get_backend(choice.model, provider=choice.provider, base_url=scripted.url, api_key="sk-test")
    assert choice.label == backend.label == label
    assert backend.provider == choice.provider and backend.capabilities == choice.capabilities


def test_the_embedded_choice_is_labelled_as_the_app_shows_it():
    assert (EMBEDDED.label, EMBEDDED.capabilities.grammar) == ("SmolLM2-135M (embedded)", True)
    assert ModelChoice("gguf", "/models/qwen2.5-7b.Q4.gguf").label == "qwen2.5-7b.Q4.gguf"


def test_models_that_misread_the_countdown_get_the_baseline_instruction_with_a_notice(scripted):
    scripted.script(ok("One two three."), ok("<3>One<2>two<1>three.<0>"))
    backend = get_backend("o4-mini", provider="openai", base_url=scripted.url, api_key="sk-test")
    fallback = generate(backend, Request("Count to three", 3, mode="capel"))
    assert fallback.mode == "baseline" and "baseline" in fallback.notice
    assert "<3>" not in scripted.last_body["messages"][-1]["content"]
    forced = generate(backend, Request("Count to three", 3, mode="capel", allow_fallback=False))
    assert forced.mode == "capel" and forced.notice is None
    assert "<3>" in scripted.last_body["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("provider", "model", "env"),
    [("openai", "gpt-4.1", "OPENAI_API_KEY"), ("deepseek", "deepseek-chat", "DEEPSEEK_API_KEY")],
)
def test_a_missing_key_is_an_auth_error_saying_where_to_put_one(monkeypatch, provider, model, env):
    monkeypatch.delenv(env, raising=False)
    with pytest.raises(BackendError) as info:
        get_backend(model, provider=provider)
    assert info.value.kind == "auth"
    assert f"set {env} in the environment or in .streamlit/secrets.toml, or type a key" in info.value.message


def test_the_key_from_the_environment_is_sent_as_a_bearer_token(scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    scripted.script(ok("Hi."))
    list(get_backend("gpt-4.1", provider="openai", base_url=scripted.url).stream(MESSAGES, Options()))
    assert scripted.chat_requests[-1].key == "sk-from-env"


def test_a_typed_key_wins_over_the_environment(scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    scripted.script(ok("Hi."))
    backend = get_backend("gpt-4.1", provider="openai", base_url=scripted.url, api_key="sk-typed")
    list(backend.stream(MESSAGES, Options()))
    assert scripted.chat_requests[-1].key == "sk-typed"


def test_a_key_in_secrets_toml_wins_over_the_environment_and_a_typed_key_over_both(scripted, secrets, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    secrets.project.write_text('OPENAI_API_KEY = "sk-from-secrets"\n')
    scripted.script(ok("Hi."), ok("Hi."))
    list(get_backend("gpt-4.1", provider="openai", base_url=scripted.url).stream(MESSAGES, Options()))
    assert scripted.chat_requests[-1].key == "sk-from-secrets"
    list(
        get_backend("gpt-4.1", provider="openai", base_url=scripted.url, api_key="sk-typed").stream(MESSAGES, Options())
    )
    assert scripted.chat_requests[-1].key == "sk-typed"


def test_resolve_key_says_where_the_key_came_from(secrets, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-env")
    assert resolve_key("deepseek").origin == "DEEPSEEK_API_KEY from the environment"
    secrets.home.write_text('DEEPSEEK_API_KEY = "sk-home"\n')
    key = resolve_key("deepseek")
    assert (key.value, key.source, key.path) == ("sk-home", "secrets", secrets.home)
    secrets.project.write_text('DEEPSEEK_API_KEY = "sk-project"\n')
    key = resolve_key("deepseek")
    assert (key.value, key.path) == ("sk-project", secrets.project), "the project's file wins, as in Streamlit"
    assert key.origin == f"DEEPSEEK_API_KEY from secrets.toml ({secrets.project})"
    assert resolve_key("deepseek", "  sk-typed ").value == "sk-typed"
    assert resolve_key("deepseek", "   ").value == "sk-project", "a blank typed key is no key"


def test_providers_without_a_key_never_read_the_secrets(secrets):
    secrets.project.write_text("this is [not toml")
    assert resolve_key("embedded") is None and resolve_key("gguf") is None


def test_secrets_are_read_where_streamlit_reads_them_the_projects_last():
    home, project = secrets_files()
    assert home == Path.home() / ".streamlit" / "secrets.toml"
    assert project == Path(__file__).resolve().parent.parent / ".streamlit" / "secrets.toml"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('OPENAI_API_KEY = "sk-live-SECRET-1\nother = 1', "is not valid TOML at line 1"),
        ("OPENAI_API_KEY = sk-live-SECRET-2\n", "is not valid TOML at line 1"),
        ("OPENAI_API_KEY = 12345\n", "must be a quoted string"),
    ],
)
def test_a_broken_secrets_file_is_a_clear_error_that_never_quotes_it(secrets, content, words):
    secrets.project.write_text(content)
    with pytest.raises(BackendError) as info:
        get_backend("gpt-4.1", provider="openai")
    assert info.value.kind == "auth"
    assert str(secrets.project) in info.value.message and words in info.value.message
    assert "SECRET" not in info.value.message and "12345" not in info.value.message


def test_a_resolved_key_never_shows_its_value(secrets):
    secrets.project.write_text('OPENAI_API_KEY = "sk-live-SECRET-3"\n')
    key = resolve_key("openai")
    assert key is not None and key.value == "sk-live-SECRET-3"
    assert "SECRET" not in repr(key) and "SECRET" not in key.origin


def test_the_key_never_shows_in_repr_or_failure_messages(scripted):
    secret = "sk-live-SECRET-0123456789"
    scripted.script(status(401, "Incorrect API key provided"))
    backend = get_backend("gpt-4.1", provider="openai", base_url=scripted.url, api_key=secret)
    outcome = generate(backend, Request("Say hi", 2, mode="baseline"))
    assert scripted.chat_requests[-1].key == secret
    assert "SECRET" not in repr(backend)
    assert "SECRET" not in str(outcome.as_json()) and "SECRET" not in str(final_fields(outcome))


# ----- the output budget -----------------------------------------------------------------------------------------


def test_an_output_cut_at_the_token_limit_is_partial_and_says_to_raise_the_limit(scripted) -> None:
    scripted.script(ok(["One two ", "three"], finish_reason="length"))
    outcome = generate(backend_for(scripted), Request("Write.", 3, mode="baseline"))
    assert (outcome.status, outcome.failure_kind, outcome.text) == ("partial", "length", "One two three")
    assert "Raise the output limit" in (outcome.failure or "")


def test_an_output_cut_at_the_token_limit_is_never_verified_even_when_the_count_matches(scripted) -> None:
    scripted.script(ok(["One two three."], finish_reason="length"))
    outcome = generate(backend_for(scripted), Request("Write.", 3, mode="baseline"))
    assert (outcome.exact, outcome.verified) == (True, False)


def test_a_benchmark_scores_an_output_cut_at_the_token_limit_and_notes_it(scripted) -> None:
    from capel_ui.bench.runner import run_sample

    scripted.script(ok(["One two three four five."], finish_reason="length"))
    row = run_sample(backend_for(scripted), Request("Write.", 3, mode="baseline"))
    assert row is not None
    assert (row["status"], row["count"], row["error_message"].split(":")[0]) == ("ok", 5, "length")


@pytest.mark.parametrize(
    ("provider", "sent"),
    [("compatible", False), ("openai", True)],
    ids=["a_compatible_server_gets_no_openai_account", "openai_gets_its_account"],
)
def test_openai_org_and_project_ids_are_sent_to_openai_only(scripted, monkeypatch, provider, sent) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    scripted.script(ok(["Hi."]))
    backend = get_backend(MODEL, provider=provider, base_url=scripted.url)
    generate(backend, Request("Say hi", 1, mode="baseline"))
    [request] = scripted.chat_requests
    headers = request.headers
    assert ("openai-organization" in headers, "openai-project" in headers) == (sent, sent)

"""Providers declared in one place each: a provider this module declares is reached like a built-in one (the
registry, `provider_of`/`--model`, the sidebar's list), and the guard around every backend retries and words
the failures of the in-process scripted model as it does a service's."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from capel_ui.backends import (
    PROVIDERS,
    BackendError,
    Capabilities,
    Options,
    ProviderSpec,
    ScriptedBackend,
    Turn,
    Usage,
    get_backend,
    provider_of,
    register,
    spec_of,
    visible,
)
from capel_ui.cli import main
from capel_ui.grammar import countdown_grammar

MESSAGES = [{"role": "user", "content": "Say hello."}]

TOY = ProviderSpec(
    "toy",
    "Toy vendor",
    lambda args: ScriptedBackend("One two three.", model=args.model, label=args.label),
    key_env="TOY_API_KEY",
    keyed=True,
    model_input="list",
    models=("toy-1", "toy-2"),
    prefixes=("toy-",),
    note="A vendor declared in a test module.",
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderSpec]:
    """The toy provider registered (as a provider module would be) for one test, with its key set."""
    monkeypatch.setenv("TOY_API_KEY", "toy-key")
    register(TOY)
    yield TOY
    PROVIDERS.pop(TOY.name)


def text_of(items: list) -> str:
    return "".join(i for i in items if isinstance(i, str))


# ----- a provider is one declaration --------------------------------------------------------------------------


def test_a_provider_declared_in_a_test_is_built_by_get_backend(toy) -> None:
    backend = get_backend("toy-2", provider="toy")
    assert (backend.provider, backend.model, backend.label) == ("toy", "toy-2", "toy-2 (Toy vendor)")
    assert text_of(list(backend.stream(MESSAGES, Options()))) == "One two three."


@pytest.mark.parametrize(("model", "provider"), [("toy-1", "toy"), ("toy-9", "toy"), ("gpt-4.1", "openai")])
def test_provider_of_knows_a_declared_providers_model_ids(toy, model: str, provider: str) -> None:
    assert provider_of(model) == provider


def test_a_keyed_provider_without_its_key_says_where_to_put_one(toy, monkeypatch) -> None:
    monkeypatch.delenv("TOY_API_KEY")
    with pytest.raises(BackendError) as info:
        get_backend("toy-1")
    assert info.value.kind == "auth" and "TOY_API_KEY" in info.value.message


def test_cli_model_reaches_a_declared_provider(toy) -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = ["generate", "--model", "toy-1", "--mode", "baseline", "--target", "3", "--no-save", "Count"]
    code = main(argv, stdin=io.StringIO(), stdout=out, stderr=err)
    assert code == 0 and out.getvalue().strip() == "One two three." and "verified" in err.getvalue()


def test_the_sidebar_offers_a_declared_provider_with_its_models_and_never_the_scripted_one(toy, app_test) -> None:
    app_test.run()
    picker = app_test.selectbox(key="provider")
    assert "Toy vendor" in picker.options and spec_of("scripted").label not in picker.options
    picker.set_value("toy").run()
    assert not app_test.exception, app_test.exception
    assert app_test.selectbox(key="model_toy").options == ["toy-1", "toy-2", "other…"]


def test_an_unknown_provider_is_an_error_naming_the_known_ones() -> None:
    with pytest.raises(BackendError) as info:
        spec_of("nobody")
    assert info.value.kind == "bad_request" and "embedded" in info.value.message
    assert "scripted" not in info.value.message and "scripted" not in [s.name for s in visible()]


# ----- the in-process scripted model ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "chunks"),
    [
        ("One two three.", ["One", " two", " three."]),
        (["<2>Hel", "lo <1>world<0>"], ["<2>Hel", "lo <1>world<0>"]),
        (
            lambda messages, options: f"{len(messages)} message, {options.max_tokens} tokens",
            ["1", " message,", " 7", " tokens"],
        ),
    ],
)
def test_the_scripted_model_streams_its_reply_in_chunks(scripted_model, reply, chunks) -> None:
    scripted_model.reply(reply)
    items = list(get_backend("scripted").stream(MESSAGES, Options(max_tokens=7)))
    assert items[:-1] == chunks and isinstance(items[-1], Usage)


def test_the_scripted_model_records_every_request(scripted_model) -> None:
    scripted_model.reply("First.", "Second.")
    backend = get_backend("scripted")
    texts = [text_of(list(backend.stream(MESSAGES, Options(seed=n)))) for n in (1, 2, 3)]
    assert texts == ["First.", "Second.", "Second."]  # the last reply repeats
    assert [(m, o.seed) for m, o in scripted_model.requests] == [(MESSAGES, 1), (MESSAGES, 2), (MESSAGES, 3)]


@pytest.mark.parametrize(
    ("caps", "options", "refused"),
    [
        (Capabilities(), Options(grammar=countdown_grammar("en", 3)), "does not take a grammar"),
        (Capabilities(), Options(prefill="<3>One"), "cannot continue a partial answer"),
        (Capabilities(grammar_field="grammar", prefill="assistant"), Options(prefill="<3>One"), None),
    ],
)
def test_the_scripted_model_takes_what_its_capabilities_say(caps, options, refused) -> None:
    backend = ScriptedBackend("Hi.", capabilities=caps)
    if refused is None:
        assert text_of(list(backend.stream(MESSAGES, options))) == "Hi."
    else:
        with pytest.raises(BackendError, match=refused):
            list(backend.stream(MESSAGES, options))


def test_the_scripted_model_returns_logprobs_only_when_it_declares_them() -> None:
    with_lp = ScriptedBackend(Turn(("a", "b"), logprobs=(-0.5, -1.0)), capabilities=Capabilities(logprobs=True))
    assert list(with_lp.stream(MESSAGES, Options(logprobs=True)))[-1].logprobs == (-0.5, -1.0)
    assert list(ScriptedBackend("a b").stream(MESSAGES, Options(logprobs=True)))[-1].logprobs == ()


# ----- the guard around every backend ------------------------------------------------------------------------


def test_a_retryable_failure_before_text_is_retried_then_answered(scripted_model) -> None:
    scripted_model.reply(Turn(fail="server"), Turn(fail="rate_limit"), "At last.")
    sleeps: list[float] = []
    backend = get_backend("scripted", sleep=sleeps.append)
    assert text_of(list(backend.stream(MESSAGES, Options()))) == "At last."
    assert len(scripted_model.requests) == 3 and len(sleeps) == 2


@pytest.mark.parametrize(
    ("turn", "kind", "words", "attempts"),
    [
        (Turn(fail="server"), "server", "server error (500) (tried 3 times)", 3),
        (Turn(fail="rate_limit", retry_after=600), "rate_limit", "asks to wait 10 min", 1),
        (Turn(fail="auth"), "auth", "refused the API key (401)", 1),
        (
            Turn(fail="context", detail="maximum context length is 100; messages resulted in 300"),
            "context",
            "(300 tokens)",
            1,
        ),
        (Turn(("Half ",), fail="server"), "server", "server error (500);", 1),  # text arrived: never retried
        (Turn(("Half ",), fail="cut"), "cut", "cut after 5 characters", 1),
    ],
)
def test_failures_are_worded_and_retried_by_the_guard_whatever_the_backend(scripted_model, turn, kind, words, attempts):
    scripted_model.reply(turn)
    backend = get_backend("scripted", max_retries=2, sleep=lambda s: None)
    with pytest.raises(BackendError) as info:
        list(backend.stream(MESSAGES, Options()))
    assert info.value.kind == kind and words in info.value.message
    assert len(scripted_model.requests) == attempts

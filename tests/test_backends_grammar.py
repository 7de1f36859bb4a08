"""The guarantee on every engine that takes a grammar: OpenAI's grammar tools (Responses API), SGLang, Ollama /
LM Studio (JSON schema), and the probe that says whether a compatible server honours a grammar.

Every remote path runs against tests/scripted_server.py (real HTTP on 127.0.0.1, the vendors' wire formats)
and asserts the requests it sent.
"""

from __future__ import annotations

import io
import json
import random

import pytest

from capel_ui.backends import (
    Backend,
    Capabilities,
    OpenAICompatBackend,
    OpenAIResponsesBackend,
    capabilities_for,
    fallback,
    get_backend,
)
from capel_ui.backends.jsonstring import JsonStringReader
from capel_ui.backends.openai_responses import REASONING_ROOM, TOOL_NAME
from capel_ui.backends.probe import PROBE_ANSWER, probe
from capel_ui.cli import main
from capel_ui.counting import count
from capel_ui.generation import Generation, Request, default_max_tokens, generate
from capel_ui.grammar import char_grammar, char_room_grammar, countdown_grammar, exact_grammar, grammar_text
from tests.gbnf import sample
from tests.llg import accepts
from tests.scripted_server import MODEL, hang, honour_grammar, ok, stall_after, status
from tests.stopping import stop_after_first_chunk, stop_while_waiting


def words(n: int, seed: int = 1) -> str:
    """A text of exactly `n` English words the exact grammar admits."""
    return sample(exact_grammar("en", n), random.Random(seed))


def chunks_of(s: str, size: int = 7) -> list[str]:
    return [s[i : i + size] for i in range(0, len(s), size)]


def gpt5(server, model: str = "gpt-5-mini") -> Backend:
    backend = get_backend(model, provider="openai", base_url=server.url, api_key="sk-test")
    assert isinstance(backend.inner, OpenAIResponsesBackend)
    return backend


# ----- the registry ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "field", "reasoning", "temperature", "effort"),
    [
        ("gpt-5-mini", "custom_tool", True, False, "minimal"),
        ("gpt-5", "custom_tool", True, False, "minimal"),
        ("gpt-5-nano-2025-08-07", "custom_tool", True, False, "minimal"),  # a dated snapshot: its family's
        ("gpt-5.1", "custom_tool", True, False, "none"),
        ("gpt-5.4-mini", "custom_tool", True, False, "none"),
        ("gpt-4.1", "json_schema", False, True, None),  # a strict JSON-schema pattern (issue 20)
        ("gpt-5.6-terra", "custom_tool", True, False, "none"),
        ("o4-mini", None, True, False, None),
        ("gpt-7-preview", None, False, True, None),  # any id typed still works, with plain chat capabilities
    ],
)
def test_openai_models_say_what_they_take(model, field, reasoning, temperature, effort):
    caps = capabilities_for("openai", model)
    assert (caps.grammar_field, caps.reasoning, not caps.ignores_temperature) == (field, reasoning, temperature)
    assert caps.reasoning_effort == effort


@pytest.mark.parametrize(("model", "reasoning"), [("deepseek-chat", False), ("deepseek-reasoner", True)])
def test_deepseek_models_take_no_grammar(model, reasoning):
    caps = capabilities_for("deepseek", model)
    assert (caps.grammar, caps.reasoning) == (False, reasoning)


def test_the_registry_picks_the_responses_api_for_grammar_tools_and_chat_for_the_rest(scripted):
    assert isinstance(gpt5(scripted).inner, OpenAIResponsesBackend)
    chat = get_backend("gpt-4.1", provider="openai", base_url=scripted.url, api_key="sk-test")
    assert type(chat.inner) is OpenAICompatBackend


def test_openai_base_url_is_honoured_as_the_openai_client_honours_it(scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted.url)
    scripted.script(ok(words(3)))
    backend = get_backend("gpt-5-mini")
    assert backend.base_url == scripted.url
    outcome = generate(backend, Request("Say it", 3, mode="exact", allow_fallback=False))
    assert outcome.verified
    assert scripted.responses_requests[-1].key == "sk-env"


def test_without_openai_base_url_the_backend_names_openais_api(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    backend = get_backend("gpt-5-mini", api_key="sk-test")
    assert backend.base_url == "https://api.openai.com/v1"


# ----- OpenAI: a forced grammar tool through the Responses API ---------------------------------------------


@pytest.mark.parametrize(
    ("lang", "mode", "target", "make"),
    [
        ("en", "exact", 37, exact_grammar),
        ("en", "exact-countdown", 12, countdown_grammar),
        ("zh", "exact", 20, exact_grammar),
        ("zh", "exact-countdown", 9, countdown_grammar),
    ],
)
def test_exact_modes_on_gpt5_send_a_forced_lark_tool_and_verify_the_streamed_input(scripted, lang, mode, target, make):
    text = sample(make(lang, target), random.Random(target))
    scripted.script(ok(chunks_of(text), usage=(40, 90), reasoning_tokens=12))
    request = Request("Describe a lighthouse", target, lang=lang, mode=mode, allow_fallback=False)  # plain exact
    gen = Generation(gpt5(scripted), request)
    live = []
    for _ in gen.stream():
        live.append(gen.view().remaining)
    outcome = gen.outcome()
    assert outcome.verified and outcome.count == target and outcome.status == "complete"
    assert live[-1] == 0 and live[0] > 0  # the countdown ran while the tool input streamed
    body = scripted.responses_requests[-1].body
    (tool,) = body["tools"]
    assert tool["type"] == "custom" and tool["name"] == TOOL_NAME
    assert tool["format"] == {"type": "grammar", "syntax": "lark", "definition": make(lang, target, "lark")}
    assert body["tool_choice"] == {"type": "custom", "name": TOOL_NAME}
    assert body["stream"] is True and body["reasoning"] == {"effort": "minimal"}
    assert "temperature" not in body and "top_p" not in body  # reasoning models take none
    assert body["max_output_tokens"] == default_max_tokens(outcome.request) + REASONING_ROOM
    assert body["input"][-1]["role"] == "user" and str(target) in body["input"][-1]["content"]
    assert (outcome.prompt_tokens, outcome.completion_tokens) == (40, 102)
    assert "12 output tokens on reasoning" in outcome.notice


@pytest.mark.parametrize(
    ("lang", "text"),
    [("en", "A lighthouse keeps its watch at dawn."), ("zh", "灯塔在黎明时闪着光。")],
)
def test_a_character_limit_on_gpt5_goes_as_the_lark_form_of_its_grammar_and_is_verified(scripted, lang, text):
    scripted.script(ok(chunks_of(text)))
    request = Request(  # plain exact: by default the countdown of the characters left (the test below)
        "Describe a lighthouse", 60, lang=lang, mode="exact", unit="chars", target_kind="at_most", allow_fallback=False
    )
    outcome = generate(gpt5(scripted), request)
    assert outcome.verified and outcome.count == count(text, "chars") <= 60
    (tool,) = scripted.responses_requests[-1].body["tools"]
    lark = tool["format"]["definition"]
    assert tool["format"]["syntax"] == "lark" and lark == grammar_text(char_grammar(lang, 1, 60), "lark")
    assert accepts("lark", lark, text) and not accepts("lark", lark, text + " " + text)


def test_exact_under_an_english_character_limit_on_gpt5_writes_under_the_characters_left(scripted):
    # Issue 31, point 3: the ad headline's room, visible to the model as the markers it must write.
    raw = "<30>Bike<25>repair<18>in<15>Portland.<0>"
    scripted.script(ok(chunks_of(raw)))
    request = Request("Ad headline", 30, mode="exact", unit="chars", target_kind="at_most")
    gen = Generation(gpt5(scripted), request)
    outcome = gen.run()
    lark = scripted.responses_requests[0].body["tools"][0]["format"]["definition"]
    assert (gen.mode, lark) == ("exact-countdown", grammar_text(char_room_grammar("en", 1, 30), "lark"))
    assert accepts("lark", lark, raw) and (outcome.text, outcome.count, outcome.verified) == (
        "Bike repair in Portland.",
        24,
        True,
    )


def test_a_temperature_set_by_the_user_is_not_sent_to_a_reasoning_model(scripted):
    scripted.script(ok(words(4)))
    generate(gpt5(scripted), Request("x", 4, mode="exact", temperature=0.3, top_p=0.5))
    body = scripted.responses_requests[-1].body
    assert "temperature" not in body and "top_p" not in body


def test_modes_without_a_grammar_stream_plain_text_from_the_responses_api(scripted):
    scripted.script(ok(["<3>One<2>two<1>three.<0>"]))
    outcome = generate(gpt5(scripted), Request("x", 3, mode="capel"))
    assert outcome.verified
    body = scripted.responses_requests[-1].body
    assert "tools" not in body and "tool_choice" not in body


def test_a_model_that_refuses_custom_tools_gets_a_clear_message(scripted):
    message = "Invalid value: 'custom'. Supported values are: 'function' for tools with this model."
    scripted.script(status(400, message))
    outcome = generate(gpt5(scripted, "gpt-5-nano"), Request("x", 5, mode="exact"))
    assert outcome.status == "failed" and outcome.failure_kind == "bad_request"
    assert "does not take grammar-constrained custom tools" in outcome.failure
    assert "non-exact mode" in outcome.failure


def test_a_grammar_the_server_cannot_compile_gets_a_clear_message(scripted):
    scripted.script(status(400, "Invalid grammar: lark grammar failed to compile: rule too large"))
    outcome = generate(gpt5(scripted), Request("x", 5, mode="exact"))
    assert outcome.status == "failed"
    assert "could not compile the length grammar" in outcome.failure


@pytest.mark.parametrize(
    ("model", "refusal", "efforts"),
    [
        pytest.param(
            "gpt-5-mini",
            "Unsupported value: 'reasoning.effort' does not support 'minimal' with this model.",
            ["minimal", "low"],
            id="next_one_up",
        ),
        pytest.param(
            "gpt-5.1",
            "Unsupported value: 'reasoning.effort' does not support 'none' with this model. Supported values are: "
            "'minimal', 'low', 'medium', and 'high'.",
            ["none", "minimal"],
            id="smallest_listed",
        ),
        pytest.param(
            "gpt-5",
            "Unsupported value: 'reasoning.effort' does not support 'minimal' with this model. Supported values are: "
            "'none', 'low', 'medium', and 'high'.",
            ["minimal", "none"],
            id="smaller_listed",
        ),
    ],
)
def test_a_refused_reasoning_effort_is_retried_with_the_smallest_the_model_takes(scripted, model, refusal, efforts):
    scripted.script(status(400, refusal), ok(words(5)))
    outcome = generate(gpt5(scripted, model), Request("x", 5, mode="exact", allow_fallback=False))
    assert outcome.verified
    assert [r.body["reasoning"]["effort"] for r in scripted.responses_requests] == efforts


def test_an_effort_is_never_asked_twice(scripted):
    says = "Unsupported value: 'reasoning.effort' does not support '{}' with this model. Supported values are: '{}'."
    scripted.script(status(400, says.format("minimal", "none")), status(400, says.format("none", "minimal")))
    outcome = generate(gpt5(scripted), Request("x", 5, mode="exact"))
    assert outcome.status == "failed"
    assert [r.body["reasoning"]["effort"] for r in scripted.responses_requests] == ["minimal", "none"]


def test_a_refusal_of_every_effort_ends_with_the_servers_message(scripted):
    refusal = "Unsupported value: 'reasoning.effort' does not support 'high' with this model."
    scripted.script(status(400, refusal), then=status(400, refusal))
    outcome = generate(gpt5(scripted), Request("x", 5, mode="exact"))
    assert outcome.status == "failed" and "rejected the request (400)" in outcome.failure
    assert len(scripted.responses_requests) == 4  # minimal, low, medium, high: no higher one to try


def test_reasoning_that_spends_the_whole_budget_leaves_a_failed_run_that_says_so(scripted):
    scripted.script(ok([], usage=(30, 0), finish_reason="length", reasoning_tokens=2400))
    outcome = generate(gpt5(scripted), Request("x", 40, mode="exact", max_tokens=100))
    assert outcome.status == "failed" and outcome.failure_kind == "length" and not outcome.verified
    assert "output limit (2400 tokens)" in outcome.failure and "2400 of them on reasoning" in outcome.failure
    assert "Raise the output limit" in outcome.failure


def test_reasoning_cut_at_the_limit_mid_text_is_saved_partial(scripted):
    scripted.script(ok(chunks_of(words(20)[:60]), finish_reason="length", reasoning_tokens=900))
    outcome = generate(gpt5(scripted), Request("x", 40, mode="exact"))
    assert outcome.status == "partial" and not outcome.verified
    assert outcome.raw and "900 of them on reasoning" in outcome.failure


def test_a_tool_call_cut_mid_stream_keeps_the_text(scripted):
    from tests.scripted_server import cut_after

    scripted.script(cut_after(["Some words ", "arrived"]))
    outcome = generate(gpt5(scripted), Request("x", 5, mode="exact"))
    assert outcome.status == "partial" and outcome.failure_kind == "cut"
    assert outcome.raw == "Some words arrived"


def test_an_error_event_mid_stream_is_a_clear_failure(scripted):
    from tests.scripted_server import stream_error

    scripted.script(stream_error(["Half "], "The server had an error"))
    outcome = generate(gpt5(scripted), Request("x", 5, mode="exact"))
    assert outcome.status == "partial" and "The server had an error" in outcome.failure


@pytest.mark.parametrize(
    "behaviour",
    [pytest.param(stall_after([], seconds=300), id="before_the_first_token"), pytest.param(hang(300), id="no_answer")],
)
def test_stop_aborts_a_responses_request_at_once(scripted, behaviour):
    scripted.script(behaviour)
    gen = Generation(gpt5(scripted), Request("x", 5, mode="exact"))
    worker = stop_while_waiting(gen, lambda: scripted.responses_requests)
    assert not worker.is_alive(), "the request still waits"
    assert (gen.outcome().status, gen.outcome().failure) == ("cancelled", None)
    assert len(scripted.responses_requests) == 1, "an aborted request is not retried"


def test_stop_mid_tool_input_keeps_the_text(scripted):
    scripted.script(stall_after(["One two ", "three "], seconds=300))
    out = stop_after_first_chunk(Generation(gpt5(scripted), Request("x", 9, mode="exact")))
    assert (out.status, out.failure) == ("cancelled", None) and out.text.startswith("One two")


# ----- exact on GPT-5: the countdown-visible grammar, so the model plans its last sentence -------------------


def test_exact_on_gpt5_writes_under_the_countdown_grammar_and_gives_clean_text_saying_so(scripted):
    text = sample(countdown_grammar("en", 12), random.Random(3))
    scripted.script(ok(chunks_of(text)))
    gen = Generation(gpt5(scripted), Request("Describe a lighthouse", 12, mode="exact"))
    outcome = gen.run()
    body = scripted.responses_requests[0].body
    assert body["tools"][0]["format"]["definition"] == countdown_grammar("en", 12, "lark")
    assert outcome.verified and outcome.count == 12 and "<" not in outcome.text
    assert gen.notice and "plans its last sentence when it sees the countdown" in gen.notice
    assert "--no-fallback" in gen.notice  # how to force plain exact


def test_exact_under_a_word_limit_on_gpt5_writes_under_the_room_countdown(scripted):
    # Issue 31, point 3: the model plans toward the limit; the markers show the room left, `<0>` may close early.
    scripted.script(ok(chunks_of("<12>The<11>lighthouse<10>stands.<0>")))
    gen = Generation(gpt5(scripted), Request("Describe a lighthouse", 12, mode="exact", target_kind="at_most"))
    outcome = gen.run()
    body = scripted.responses_requests[0].body
    assert body["tools"][0]["format"]["definition"] == countdown_grammar("en", 12, "lark", low=1)
    assert (outcome.text, outcome.count, outcome.verified) == ("The lighthouse stands.", 3, True)


@pytest.mark.parametrize(
    ("request_", "why"),
    [
        (Request("x", 12, mode="exact", allow_fallback=False), "the writer forced plain exact"),
        (Request("x", 60, mode="exact", unit="chars"), "markers cannot count exactly N characters"),
    ],
)
def test_exact_on_gpt5_stays_plain_where_the_countdown_cannot_serve(scripted, request_, why):
    gen = Generation(gpt5(scripted), request_)
    assert gen.mode == "exact", why


def test_exact_stays_plain_where_the_ending_is_searched_or_the_model_does_not_plan_by_markers() -> None:
    planner = Capabilities(grammar_field="custom_tool", plans_by_countdown=True)
    assert fallback("gpt-5", "exact", planner, markers_count=True).mode == "exact-countdown"
    assert fallback("embedded", "exact", Capabilities(grammar_field="grammar", end_probability=True), True) is None
    assert fallback("some-model", "exact", Capabilities(grammar_field="grammar"), markers_count=True) is None


# ----- the CLI, as a user runs it --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "lang", "target", "make", "flags"),
    [
        ("exact", "en", 37, exact_grammar, ["--no-fallback"]),
        ("exact-countdown", "en", 37, countdown_grammar, []),
        ("exact", "zh", 30, exact_grammar, ["--no-fallback"]),
    ],
)
def test_cli_generate_on_gpt5_takes_the_grammar_tool_route(scripted, monkeypatch, mode, lang, target, make, flags):
    """`generate` in this process (its start-up and exit codes are test_cli_startup.py's and test_cli.py's): the
    key and base URL from the environment, as a user sets them."""
    text = sample(make(lang, target), random.Random(5))
    scripted.script(ok(chunks_of(text), reasoning_tokens=8))
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted.url)
    argv = ["generate", "--model", "gpt-5-mini", "--mode", mode, "--lang", lang, "--target", str(target), *flags]
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--json", "Describe a lighthouse"], stdin=io.StringIO(), stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    result = json.loads(out.getvalue())
    assert result["verified"] is True and result["count"] == target and result["mode"] == mode
    assert count(result["text"], "en_words" if lang == "en" else "zh_chars") == target
    (request,) = scripted.responses_requests
    body = request.body
    assert body["model"] == "gpt-5-mini" and request.key == "x"
    assert body["tool_choice"] == {"type": "custom", "name": TOOL_NAME}
    assert body["tools"][0]["format"]["definition"] == make(lang, target, "lark")
    assert not scripted.chat_requests


# ----- chat-completions engines: SGLang, Ollama / LM Studio -------------------------------------------------


def test_sglang_takes_the_grammar_as_ebnf_in_the_body(scripted):
    scripted.script(ok(words(6)))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, grammar_field="ebnf")
    assert generate(backend, Request("x", 6, mode="exact")).verified
    body = scripted.last_body
    assert body["ebnf"] == exact_grammar("en", 6) and "grammar" not in body and "response_format" not in body


def test_ollama_takes_a_json_schema_whose_pattern_fixes_the_count_and_the_string_is_decoded_live(scripted):
    encoded = json.dumps("Itself is fine now: caf\u00e9s close early.", ensure_ascii=True)
    scripted.script(ok(["  ", *[encoded[i : i + 3] for i in range(0, len(encoded), 3)]]))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, grammar_field="json_schema")
    gen = Generation(backend, Request("x", 7, mode="exact"))
    seen = [gen.raw for _ in gen.stream()]
    outcome = gen.outcome()
    assert outcome.raw == "Itself is fine now: caf\u00e9s close early." and outcome.verified
    assert all("\\" not in s and '"' not in s for s in seen)  # never an escape or a quote on screen
    fmt = scripted.last_body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["type"] == "string"
    assert fmt["json_schema"]["schema"]["pattern"] == "^(" + exact_grammar("en", 7, "regex") + ")$"


def test_a_server_that_ignores_the_grammar_never_yields_a_verified_run(scripted):
    scripted.script(ok("Sure! Here is a short text for you."))
    backend = get_backend(MODEL, provider="compatible", base_url=scripted.url, grammar_field="ebnf")
    outcome = generate(backend, Request("x", 5, mode="exact"))
    assert outcome.status == "complete" and not outcome.verified and outcome.count != 5


@pytest.mark.parametrize(
    ("chunks", "decoded"),
    [
        (['"Hello"'], "Hello"),
        (['  "He', 'llo"  '], "Hello"),
        (['"a\\', '"b"'], 'a"b'),
        (['"caf\\u00', "e9", '"'], "caf\u00e9"),
        (['"\\ud83d', "\\ude00", '!"'], "\U0001f600!"),
        (['"line\\nbreak\\t\\\\"'], "line\nbreak\t\\"),
        (['"done" trailing'], "done"),
        (["Plain text, ", "no quotes."], "Plain text, no quotes."),  # a server that ignored the schema
        (['"\u4f60\u597d\u3002"'], "\u4f60\u597d\u3002"),
    ],
)
def test_json_string_reader_decodes_split_escapes(chunks, decoded):
    reader = JsonStringReader()
    assert "".join(reader.feed(c) for c in chunks) == decoded


# ----- the probe --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["grammar", "ebnf", "structured_outputs", "guided_grammar", "json_schema"])
def test_the_probe_says_guaranteed_where_the_server_honours_the_field(scripted, field):
    scripted.script(honour_grammar((field,)))
    result = probe(scripted.url, MODEL, field)
    assert result.honoured and "Guaranteed on this server" in result.label
    (request,) = scripted.chat_requests
    assert request.body["max_tokens"] == 16 and request.body["temperature"] == 0.0


def test_the_probe_reaches_a_responses_api_gateway_through_a_forced_grammar_tool(scripted):
    scripted.script(honour_grammar(("custom_tool",)))
    result = probe(scripted.url, "gpt-5-mini", "custom_tool")
    assert result.honoured, result.reason
    (request,) = scripted.responses_requests
    assert request.body["tool_choice"] == {"type": "custom", "name": TOOL_NAME}
    assert request.body["tools"][0]["format"]["definition"] == f'start: "{PROBE_ANSWER}"\n'
    assert request.body["reasoning"] == {"effort": "minimal"}  # gpt-5-mini behind a gateway is still gpt-5-mini
    assert request.body["max_output_tokens"] == 16 + REASONING_ROOM


def test_the_probe_sends_a_grammar_that_admits_one_short_answer(scripted):
    scripted.script(honour_grammar(("grammar",)))
    probe(scripted.url, MODEL, "grammar")
    assert scripted.last_body["grammar"] == f'root ::= "{PROBE_ANSWER}"\n'


def test_the_probe_says_why_not_where_the_server_ignores_the_field(scripted):
    scripted.script(honour_grammar(("grammar",)))  # llama.cpp: knows `grammar`, not `ebnf`
    result = probe(scripted.url, MODEL, "ebnf")
    assert not result.honoured
    assert "ignored the `ebnf` grammar" in result.label and "Hello!" in result.label


def test_the_probe_says_why_not_when_the_server_rejects_the_field(scripted):
    scripted.script(status(400, "unknown field: structured_outputs"))
    result = probe(scripted.url, MODEL, "structured_outputs")
    assert not result.honoured and "rejected the request (400)" in result.label


def test_the_probe_is_asked_once_per_url_model_and_field(scripted):
    scripted.script(honour_grammar(("grammar",)), then=status(500))
    assert probe(scripted.url, MODEL, "grammar").honoured
    assert probe(scripted.url + "/", MODEL, "grammar").honoured  # the same URL
    assert len(scripted.chat_requests) == 1
    assert not probe(scripted.url, "other-model", "grammar").honoured  # another model is asked again
    assert len(scripted.chat_requests) == 2

"""The Write page shows, next to the mode picker, whether an OpenAI-compatible server honours its grammar field,
and offers the guaranteed modes only where the probe says so; a GPT-5-family model runs them through OpenAI's
grammar tool and the page says when reasoning tokens were spent (AppTest, scripted server on 127.0.0.1)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from capel_ui.vocab import MODE_LABELS
from tests.scripted_server import MODEL, honour_grammar


def pick_server(at: AppTest, url: str, field: str) -> AppTest:
    at.selectbox(key="provider").set_value("compatible").run()
    at.text_input(key="compat_url").input(url)
    at.text_input(key="compat_model").input(MODEL)
    at.selectbox(key="compat_grammar").set_value(field).run()
    assert not at.exception, at.exception
    return at


def test_a_server_that_honours_the_grammar_is_labelled_guaranteed_and_offers_exact(app_test: AppTest, scripted):
    scripted.script(honour_grammar(("grammar",)))
    at = pick_server(app_test, scripted.url, "grammar")
    assert any("Guaranteed on this server" in c.value for c in at.caption)
    assert {MODE_LABELS["exact"], MODE_LABELS["exact-countdown"]} <= set(at.selectbox(key="w_mode").options)
    assert len(scripted.chat_requests) == 1  # asked once; reruns use the cached answer
    at.run()
    assert len(scripted.chat_requests) == 1


def test_a_server_that_ignores_the_grammar_says_why_and_offers_no_guaranteed_mode(app_test: AppTest, scripted):
    scripted.script(honour_grammar(("grammar",)))  # knows `grammar`, silently ignores `ebnf`
    at = pick_server(app_test, scripted.url, "ebnf")
    [label] = [c.value for c in at.caption if "Not guaranteed" in c.value]
    assert "ignored the `ebnf` grammar" in label
    modes = at.selectbox(key="w_mode").options
    assert MODE_LABELS["exact"] not in modes and MODE_LABELS["exact-countdown"] not in modes
    assert MODE_LABELS["capel"] in modes


def test_compare_skips_the_guaranteed_columns_of_a_server_that_ignores_the_grammar(app_test: AppTest, scripted):
    scripted.script(honour_grammar(("grammar",)))
    at = pick_server(app_test, scripted.url, "ebnf")
    at.switch_page("app_pages/compare.py").run()
    at.multiselect(key="c_modes").set_value(["capel", "exact"]).run()
    assert not at.exception, at.exception
    [skipped] = [c.value for c in at.caption if c.value.startswith("Skipped")]
    assert "ignored" in skipped and f"{MODE_LABELS['exact']}" in skipped and "CAPEL" not in skipped
    assert len(scripted.chat_requests) == 1  # the Write page's probe, not asked again


def test_write_runs_exact_on_gpt5_through_the_grammar_tool_and_says_reasoning_tokens_were_spent(
    app_test: AppTest, scripted, monkeypatch
):
    import random

    from capel_ui.grammar import exact_grammar
    from tests.gbnf import sample
    from tests.scripted_server import ok

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted.url)
    text = sample(exact_grammar("en", 12), random.Random(2))
    scripted.script(ok([text[:20], text[20:]], reasoning_tokens=64))
    at = app_test
    at.selectbox(key="provider").set_value("openai").run()
    at.selectbox(key="model_openai").set_value("gpt-5-mini").run()
    assert MODE_LABELS["exact"] in at.selectbox(key="w_mode").options  # the registry says: grammar tools
    at.text_area(key="w_instruction").input("Write about a lighthouse.")
    at.number_input(key="w_target").set_value(12)
    at.selectbox(key="w_mode").set_value("exact")
    [go] = [b for b in at.button if b.label == "Generate"]
    go.click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("64 output tokens on reasoning" in c.value for c in at.caption)
    [badge] = [m.value for m in at.markdown if "-badge[" in m.value]
    assert "verified" in badge and "12" in badge
    body = scripted.responses_requests[-1].body
    assert body["tool_choice"] == {"type": "custom", "name": "write_text"} and "temperature" not in body

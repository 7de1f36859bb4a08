"""The guarantee on every hosted vendor that can hold it, and why not on the others (issue 46).

xAI documents a strict JSON-schema `pattern` it enforces, but reports of 400s disagree, so its route is probe-gated:
the guaranteed modes run through it, as on gpt-4.1, only once a probe with the writer's key passed (cached per
address, model and key hash, never the key). Here against a scripted xAI that enforces the pattern as its page
documents and refuses what it refuses (tests/pattern_vendors.py), one that ignores it, and one that refuses every
pattern; `doctor` says which. The vendors with no route (Anthropic, Gemini, Mistral, OpenRouter unless pinned to
OpenAI) say why not, on the page and in the CLI, and offer CAPEL and the baseline."""

from __future__ import annotations

import importlib.metadata
import io
import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.backends import Options, Usage, get_backend, registry, spec_of
from capel_ui.backends.dialect import REGEX_CONSTRUCTS
from capel_ui.backends.probe import _cache as probe_cache
from capel_ui.backends.probe import clear_cache, vendor_probe
from capel_ui.backends.providers.xai import PATTERN, PATTERN_MAX_CHARS
from capel_ui.cli import main
from capel_ui.counting import count
from capel_ui.grammar import countdown_rules, exact_rules
from capel_ui.service import modes_for_model
from capel_ui.vocab import EXIT_OK, MODE_LABELS, PROJECT_ROOT
from tests.pattern_vendors import (
    REFUSED_PATTERN,
    ignores,
    request_pattern,
    writes,
    xai_enforcing,
    xai_refusing_pattern,
    xai_unsupported,
)
from tests.scripted_server import ScriptedServer, countdown, ok
from tests.scripted_vendors import VENDORS

KEY = "xai-key-for-tests-0001"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def grok(monkeypatch, scripted: ScriptedServer) -> ScriptedServer:
    """xAI's address moved to the scripted server, checking bodies as xAI does (patterns included)."""
    monkeypatch.setenv("XAI_API_KEY", KEY)
    monkeypatch.setenv("XAI_BASE_URL", scripted.url)
    monkeypatch.setattr(registry, "secrets_files", lambda: ())
    return scripted.as_vendor(xai_enforcing)


# ----- the guaranteed route through xAI's enforced pattern --------------------------------------------------------

KINDS = [
    # flags, the count that must hold
    (("--target", "12"), lambda n: n == 12),
    (("--at-most", "30"), lambda n: 1 <= n <= 30),
    (("--range", "8-10"), lambda n: 8 <= n <= 10),
]


@pytest.mark.parametrize(("flags", "holds"), KINDS, ids=["exact", "at_most", "between"])
def test_xai_writes_exact_at_most_and_between_through_its_pattern_once_the_probe_passed(grok, flags, holds) -> None:
    grok.script(then=writes())
    code, out, err = cli("generate", "--model", "grok-4.6", "--mode", "exact", *flags, "--json", "Write about the sea.")
    assert code == EXIT_OK, err
    result = json.loads(out)
    assert holds(result["count"]) and result["count"] == count(result["text"], "en_words") and result["verified"]
    probe_body, run_body = (r.body for r in grok.chat_requests)  # the probe first, then the run: nothing else
    assert request_pattern(probe_body) == ("^(<7> ok\\.)$", True)
    pattern, in_object = request_pattern(run_body)
    assert in_object and run_body["response_format"]["json_schema"]["strict"] is True
    assert re.fullmatch(pattern, result["text"])  # the vendor held the text to the pattern the app sent


def test_the_pattern_is_decoded_as_it_streams_so_the_countdown_stays_live(grok) -> None:
    grok.script(then=writes())
    backend = get_backend("grok-4.6", provider="xai")
    chunks = [c for c in backend.stream([{"role": "user", "content": "Sea."}], Options(grammar=exact_rules("en", 12)))]
    text = [c for c in chunks if isinstance(c, str)]
    assert len(text) > 5 and isinstance(chunks[-1], Usage)
    assert not any('"' in c or "{" in c for c in text)  # text, never the JSON around it
    assert count("".join(text), "en_words") == 12


REFUSED = [c for c in REGEX_CONSTRUCTS if c.name in PATTERN.refused]


@pytest.mark.parametrize("construct", REFUSED, ids=[c.name for c in REFUSED])
def test_what_xai_refuses_in_a_pattern_is_refused_before_sending_as_xai_would_refuse_it(construct) -> None:
    assert xai_unsupported(f"^({construct.example})$")  # the scripted xAI answers it with its 400
    why = PATTERN.why_not(f"^(a{construct.example})$", "grok-4.6 (xAI (Grok))")
    assert why is not None and construct.name in why and "\n" not in why and "nothing was sent" in why


@pytest.mark.parametrize("grammar", [exact_rules("en", 5_000), countdown_rules("en", 12, low=1)], ids=["exact", "cd"])
def test_the_apps_own_patterns_are_in_xais_subset(grammar) -> None:
    pattern = grammar.json_schema()["pattern"]
    assert xai_unsupported(pattern) == [] and PATTERN.why_not(pattern, "grok") is None


def test_a_pattern_over_the_size_chosen_for_xai_is_refused_in_one_line_before_the_run_is_sent(grok) -> None:
    grok.script(then=writes())
    code, _, err = cli("generate", "--model", "grok-4.6", "--mode", "exact-countdown", "--at-most", "40", "Sea.")
    [said] = [line for line in err.splitlines() if line.startswith("capel_ui: error:")]
    assert code != EXIT_OK and f"more than the {PATTERN_MAX_CHARS:,}" in said and "xAI documents no size" in said
    assert len(grok.chat_requests) == 1  # only the probe went out


# ----- the gate: a probe with the writer's key, cached per key, model and address ---------------------------------


def test_auto_runs_exact_where_the_probe_passed_and_capel_where_xai_ignored_the_pattern(grok) -> None:
    grok.script(then=writes())
    assert modes_for_model("grok-4.6", "en", "en_words").default == "exact"
    clear_cache()
    grok.script(then=ignores("Hello there."))
    found = modes_for_model("grok-4.6", "en", "en_words")
    assert found.default == "capel" and "exact" not in found.modes
    assert "ignored its JSON-schema `pattern`" in (found.why_not or "")


def test_exact_on_a_key_whose_probe_failed_is_refused_with_the_probes_words(grok) -> None:
    grok.as_vendor(xai_refusing_pattern).script(then=ok(countdown(3)))
    code, _, err = cli("generate", "--model", "grok-4.6", "--mode", "exact", "--target", "3", "Sea.")
    assert code != EXIT_OK and REFUSED_PATTERN in err and "Not guaranteed on this key and model" in err, err
    assert len(grok.chat_requests) == 1 and KEY not in err


def test_the_probe_is_asked_once_per_key_and_the_key_is_never_kept(grok) -> None:
    grok.script(then=writes())
    assert vendor_probe("xai", "grok-4.6").honoured and vendor_probe("xai", "grok-4.6").honoured
    assert vendor_probe("xai", "grok-4.6", api_key="xai-another-key-0002").honoured
    assert [r.key for r in grok.chat_requests] == [KEY, "xai-another-key-0002"]
    assert KEY not in repr(probe_cache) and "another" not in repr(probe_cache)


# ----- doctor: the guarantee said, against an enforcing, an ignoring and a refusing xAI ---------------------------

DOCTOR = [
    # the scripted xAI, what it answers, the guarantee line's mark, words in it
    (xai_enforcing, writes(), "yes", "Guaranteed on this key and model"),
    (VENDORS["xai"], ignores("OK"), "no", "ignored its JSON-schema `pattern` (it answered 'OK')"),
    (xai_refusing_pattern, writes(), "no", REFUSED_PATTERN),
]


@pytest.mark.parametrize(("vendor", "answers", "mark", "said"), DOCTOR, ids=["enforces", "ignores", "refuses"])
def test_doctor_says_whether_the_guarantee_holds_on_this_key_and_model(grok, vendor, answers, mark, said) -> None:
    grok.as_vendor(vendor).script(then=answers)
    code, out, err = cli("doctor", "--provider", "xai", "--model", "grok-4.6")
    assert code == EXIT_OK, err
    print(out)  # the report quotes it
    rows = {line[:22].strip(): line[22:] for line in out.splitlines()}
    assert rows["guarantee"].split()[0] == mark and said in rows["guarantee"], out
    assert rows["JSON-schema pattern"].split()[0] == mark and KEY not in out + err


# ----- the vendors with no route: why not, and what works -----------------------------------------------------------

NO_ROUTE = [
    # provider, model, words of its declared reason
    ("anthropic", "claude-sonnet-4-5", "ignores `response_format`"),
    ("gemini", "gemini-2.5-flash", "`pattern` is not among the keywords"),
    ("mistral", "mistral-small-latest", "document no `pattern`"),
    ("openrouter", "openrouter:anthropic/claude-sonnet-4.5", "not one that enforces `pattern`"),
]
ENVS = {p: (f"{p.upper()}_API_KEY", f"{p.upper()}_BASE_URL") for p, *_ in NO_ROUTE}


@pytest.mark.parametrize(("provider", "model", "why"), NO_ROUTE, ids=[n[0] for n in NO_ROUTE])
def test_the_cli_says_why_a_vendor_has_no_guarantee_and_runs_what_works(
    monkeypatch, scripted: ScriptedServer, provider, model, why
) -> None:
    key_env, url_env = ENVS[provider]
    monkeypatch.setenv(key_env, "k-123456")
    monkeypatch.setenv(url_env, scripted.url)
    scripted.as_vendor(VENDORS[provider]).script(then=ok(countdown(3)))
    code, out, _ = cli("doctor", "--provider", provider, "--model", model)
    guarantee = next(line for line in out.splitlines() if line.startswith("guarantee"))
    assert guarantee.split()[1] == "no" and why in guarantee and "CAPEL (with repair) and baseline" in guarantee
    code, _, err = cli("generate", "--model", model, "--mode", "exact", "--target", "3", "Sea.")
    assert code != EXIT_OK and "does not take a grammar" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli("generate", "--model", model, "--target", "3", "Sea.")  # auto: what works here
    assert code == EXIT_OK and "mode: capel (auto)" in err, err


def pick(at: AppTest, provider: str, model: str, key: str) -> AppTest:
    at.selectbox(key="provider").set_value(provider).run()
    at.text_input(key=f"key_{provider}").input(key).run()
    at.selectbox(key=f"model_{provider}").set_value(model).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(("provider", "model", "why"), NO_ROUTE, ids=[n[0] for n in NO_ROUTE])
def test_the_write_page_says_why_a_vendor_has_no_guarantee_and_offers_capel_and_baseline(
    app_test: AppTest, monkeypatch, scripted: ScriptedServer, provider, model, why
) -> None:
    monkeypatch.setenv(ENVS[provider][1], scripted.url)
    at = pick(app_test, provider, model, "k-123456")
    [said] = [c.value for c in at.caption if c.value.startswith("Not guaranteed on")]
    assert why in said and "CAPEL (with repair) and baseline run here" in said
    modes = at.selectbox(key="w_mode").options
    assert MODE_LABELS["exact"] not in modes and {MODE_LABELS["capel"], MODE_LABELS["baseline"]} <= set(modes)
    assert scripted.requests == []  # a declared reason: nothing asked


PAGE = [(writes(), "Guaranteed on this key and model", True), (ignores("Hello."), "Not guaranteed on this key", False)]


@pytest.mark.parametrize(("answers", "said", "offered"), PAGE, ids=["enforces", "ignores"])
def test_the_write_page_offers_xais_guaranteed_modes_only_once_the_probe_passed(
    app_test: AppTest, monkeypatch, grok, answers, said, offered
) -> None:
    monkeypatch.delenv("XAI_API_KEY")
    grok.script(then=answers)
    at = pick(app_test, "xai", "grok-4.6", KEY)
    assert any(said in c.value for c in at.caption), [c.value for c in at.caption]
    assert (MODE_LABELS["exact"] in at.selectbox(key="w_mode").options) is offered
    assert MODE_LABELS["capel"] in at.selectbox(key="w_mode").options
    at.run()
    assert [r.key for r in grok.chat_requests] == [KEY]  # asked once, with the typed key; reruns use the cache
    at.switch_page("app_pages/compare.py").run()
    at.multiselect(key="c_modes").set_value(["capel", "exact"]).run()
    assert not at.exception, at.exception
    skipped = [c.value for c in at.caption if c.value.startswith("Skipped")]
    assert bool(skipped) is not offered and len(grok.chat_requests) == 1


# ----- OpenRouter pinned to OpenAI, Mistral's budgets, the openai pin ----------------------------------------------


def test_an_openrouter_route_pinned_to_openai_runs_exact_once_its_probe_passed(monkeypatch, scripted) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-123456")
    monkeypatch.setenv("OPENROUTER_BASE_URL", scripted.url)
    scripted.as_vendor(VENDORS["openrouter"]).script(then=writes())
    code, out, err = cli("generate", "--model", "openrouter:openai/gpt-4.1", "--target", "7", "--json", "Sea.")
    assert code == EXIT_OK and json.loads(out)["count"] == 7 and "mode: exact (auto)" in err, err
    assert all(r.body["provider"] == {"only": ["openai"], "require_parameters": True} for r in scripted.chat_requests)
    assert spec_of("openrouter").capabilities("openrouter:google/gemini-2.5-flash").grammar_field is None


MISTRAL = [
    # model, context declared, reasoning_effort sent
    ("mistral-large-latest", 256_000, None),
    ("mistral-medium-latest", 256_000, "none"),
    ("mistral-small-latest", 256_000, "none"),
    ("magistral-small-latest", 128_000, None),
]


@pytest.mark.parametrize(("model", "context", "effort"), MISTRAL, ids=[m[0] for m in MISTRAL])
def test_mistral_context_and_reasoning_are_as_documented(monkeypatch, scripted, model, context, effort) -> None:
    assert spec_of("mistral").capabilities(model).context_tokens == context
    monkeypatch.setenv("MISTRAL_API_KEY", "mk-123456")
    monkeypatch.setenv("MISTRAL_BASE_URL", scripted.url)
    scripted.as_vendor(VENDORS["mistral"]).script(ok("Three short words."))
    code, _, err = cli("generate", "--model", model, "--mode", "baseline", "--target", "3", "Hi.")
    assert code == EXIT_OK, err
    assert scripted.last_body.get("reasoning_effort") == effort  # "none": no thinking chunk spends the budget


def test_the_openai_pin_is_the_version_installed_and_the_one_the_code_cites() -> None:
    [pin] = re.findall(r"^openai==(\S+)$", (PROJECT_ROOT / "requirements.txt").read_text(), re.MULTILINE)
    assert importlib.metadata.version("openai") == pin
    for path in ("capel_ui/backends/providers/openai.py", "capel_ui/backends/dialect.py"):
        cited = set(re.findall(r"openai(?:`? SDK)? (\d+\.\d+\.\d+)", (PROJECT_ROOT / path).read_text()))
        assert cited == {pin}, path

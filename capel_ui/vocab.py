"""The one place that names CAPEL Studio's vocabulary: languages, units, modes and what they imply, run
statuses and origins, marker error types, failure kinds and exit codes.

Everything else imports these names; nothing re-declares them. Adding a mode, unit or status starts here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The folder that holds the capel_ui package (the repository root)."""

MAX_TARGET = 10_000
"""The largest target length the app accepts, in any unit."""

DEFAULT_MAX_CALLS = 3
"""Model calls a CAPEL run may take on a model without a grammar: the first, then repairs (see repair.py)."""
MAX_CALLS = 10
"""The largest bound on calls the app accepts; 1 turns repair off."""

# --- languages and counting units -------------------------------------------------------------------

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = get_args(Lang)
LANG_LABELS: dict[Lang, str] = {"en": "English", "zh": "Chinese"}

Unit = str
"""A counting unit's name: a key of `UNIT_SPECS` (adding a unit is its spec here and its counter in counting.py)."""

GrammarKind = Literal["words", "chars"]
"""Which guaranteed grammar promises a unit: the word grammar (one English word, or one Han character, per grammar
unit) or the character grammar (plain ASCII prose in English: no URL, no emoji, GSM-7 only; Han characters and
Chinese punctuation in Chinese), every character of which counts exactly one."""
GRAMMAR_KINDS: tuple[GrammarKind, ...] = get_args(GrammarKind)


@dataclass(frozen=True)
class UnitSpec:
    """What a counting unit is: its label, the languages it is offered for (and whose own unit it is), the
    languages in which a CAPEL countdown (one word or one Chinese character per marker) can be judged in it,
    which grammar, per language, makes the guaranteed modes promise a count in it, and the noun a prompt states a
    length in, per language (`noun`: "characters (it is an X post)"; `unit_noun`). `room`: the languages in which,
    under a limit or a range, a countdown can show the room left in this unit (one marker per word, its value the
    characters still allowed: `<30>Bike<25>repair`), though it cannot count the unit one marker at a time. `counter`
    names its counting function in counting.py (`counting.counter_of`): a function, looked up from this record, not
    a second table."""

    label: str
    langs: tuple[Lang, ...]
    default_for: tuple[Lang, ...] = ()
    markers: tuple[Lang, ...] = ()
    grammar: Mapping[Lang, GrammarKind] = field(default_factory=dict)
    expert: bool = False  # a benchmark's own counter: the CLI and the Benchmark page have it, a writer's pickers not
    noun: Mapping[Lang, str] = field(default_factory=dict)
    counter: str = ""  # the name of its function in counting.py ("count_en_words")
    adds_up: bool = False
    """Whether a text cut just after a whitespace counts as its two parts do: a stream's count then costs its new text
    alone (`counting.RunningCount`), not the whole text at each chunk."""
    room: tuple[Lang, ...] = ()  # under a limit or a range, markers can count down the room left in this unit


_EN_WORDS = {"en": "words"}
_ZH_CHARS = {"zh": "个字"}
_ALL_CHARS = {"en": "characters (spaces and punctuation count)", "zh": "个字（标点符号也算）"}
UNIT_SPECS: dict[Unit, UnitSpec] = {
    "en_words": UnitSpec(
        "English words",
        ("en",),
        default_for=("en",),
        markers=("en",),
        grammar={"en": "words"},
        noun=_EN_WORDS,
        counter="count_en_words",
        adds_up=True,
    ),
    "zh_chars": UnitSpec(
        "Chinese characters",
        ("zh",),
        default_for=("zh",),
        markers=("zh",),
        grammar={"zh": "words"},
        noun=_ZH_CHARS,
        counter="count_zh_chars",
        adds_up=True,
    ),
    "zh_all": UnitSpec(
        "字 (all characters)",
        ("zh",),
        grammar={"zh": "chars"},
        noun={"zh": _ALL_CHARS["zh"]},
        counter="count_zh_all",
        adds_up=True,
        room=("zh",),
    ),
    "zh_words": UnitSpec(
        "Chinese words (jieba)", ("zh",), markers=("zh",), noun={"zh": "个词"}, counter="count_zh_words", adds_up=True
    ),
    "chars": UnitSpec(
        "characters",
        ("en", "zh"),
        grammar={"en": "chars", "zh": "chars"},
        noun=_ALL_CHARS,
        counter="count_chars",
        room=("en", "zh"),
    ),
    "x_weighted": UnitSpec(
        "X weighted characters",
        ("en",),
        grammar={"en": "chars"},
        noun={"en": "characters (it is an X post)"},
        counter="count_x_weighted",
        room=("en",),
    ),
    "sms": UnitSpec(
        "SMS characters",
        ("en",),
        grammar={"en": "chars"},
        noun={"en": "characters (it is one text message)"},
        counter="count_sms",
        room=("en",),
    ),
    "google_ads_chars": UnitSpec(
        "characters by Google Ads' count",
        ("en", "zh"),
        grammar={"en": "chars", "zh": "chars"},
        noun={
            "en": "characters by Google Ads' count (a Chinese, Japanese or Korean character counts 2)",
            "zh": "个字符（按 Google Ads 计：每个汉字或全角标点算 2 个）",
        },
        counter="count_google_ads_chars",
        room=("en",),
    ),
    "lifebench": UnitSpec(
        "LIFEBench counter",
        ("en", "zh"),
        markers=("en", "zh"),
        grammar={"en": "words", "zh": "words"},
        expert=True,
        noun={**_EN_WORDS, **_ZH_CHARS},
        counter="count_lifebench",
        adds_up=True,
    ),
}
"""Every counting unit, in the order the pages offer them (a language's own unit first)."""
UNITS: tuple[Unit, ...] = tuple(UNIT_SPECS)
DEFAULT_UNIT: dict[Lang, Unit] = {lang: u for u, s in UNIT_SPECS.items() for lang in s.default_for}


def units_for(lang: Lang, expert: bool = False) -> tuple[Unit, ...]:
    """The units offered for `lang`, its own unit first; a benchmark's own counter only with `expert`."""
    return tuple(u for u, s in UNIT_SPECS.items() if lang in s.langs and (expert or not s.expert))


def grammar_kind(lang: Lang, unit: Unit) -> GrammarKind | None:
    """Which grammar guarantees a count in `unit` for `lang`; None when none can (or the unit is unknown)."""
    spec = UNIT_SPECS.get(unit)
    return spec.grammar.get(lang) if spec else None


def grammar_units(lang: Lang, kind: GrammarKind | None = None) -> tuple[Unit, ...]:
    """The units a grammar (of `kind`, or any: word grammar's first) guarantees for `lang`."""
    kinds = GRAMMAR_KINDS if kind is None else (kind,)
    return tuple(u for k in kinds for u in UNIT_SPECS if grammar_kind(lang, u) == k)


def _or(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def grammar_units_text() -> str:
    """The units the guaranteed modes promise, per language, for an error message: "en_words or chars (English)
    and zh_chars (Chinese)"."""
    return " and ".join(f"{_or(grammar_units(lang))} ({LANG_LABELS[lang]})" for lang in LANGS if grammar_units(lang))


# --- targets ----------------------------------------------------------------------------------------

TargetKind = Literal["exactly", "at_most", "range"]
TARGET_KINDS: tuple[TargetKind, ...] = get_args(TargetKind)
TARGET_KIND_LABELS: dict[TargetKind, str] = {"exactly": "Exactly", "at_most": "At most", "range": "Between"}
MARKER_LIMITS = (
    "CAPEL (markers) counts down one word or one Chinese character per marker, so it takes a target in English "
    "words or Chinese characters (under a limit the markers show the room left); in characters, 字 with punctuation, "
    "X's count or SMS characters it shows the room left under a limit or range only: for exactly N of them use "
    "Exact (guaranteed) or Baseline"
)
"""Said wherever a writer asks a marker mode for something it cannot count."""


def unit_noun(unit: Unit, lang: Lang) -> str:
    """The noun a prompt states a length in (`UnitSpec.noun`); a unit that names none for `lang` is called by its
    label, never silently "words"."""
    spec = UNIT_SPECS[unit]
    return spec.noun.get(lang) or spec.label


def unit_label(unit: str) -> str:
    """A unit's label for people; an unknown (old or foreign) unit name is shown as it is."""
    spec = UNIT_SPECS.get(unit)
    return spec.label if spec else unit


def units_phrase(n: int, unit: str) -> str:
    """`n` and the unit's label, one in the singular ("1 English word", "12 English words", "1 character")."""
    label = unit_label(unit)
    if n == 1 and label.endswith("s"):
        label = label[:-1]
    return f"{n} {label}"


# --- modes ------------------------------------------------------------------------------------------

Mode = Literal["capel", "draft-capel", "baseline", "exact", "exact-countdown"]
MODES: tuple[Mode, ...] = get_args(Mode)


@dataclass(frozen=True)
class ModeSpec:
    """What a mode is: its label, whether its count is guaranteed, whether it needs a grammar or uses markers."""

    label: str
    guaranteed: bool
    needs_grammar: bool
    uses_markers: bool


MODE_SPECS: dict[Mode, ModeSpec] = {
    "capel": ModeSpec("CAPEL", guaranteed=False, needs_grammar=False, uses_markers=True),
    "draft-capel": ModeSpec("Draft→CAPEL", guaranteed=False, needs_grammar=False, uses_markers=True),
    "baseline": ModeSpec("Baseline", guaranteed=False, needs_grammar=False, uses_markers=False),
    "exact": ModeSpec("Exact (guaranteed)", guaranteed=True, needs_grammar=True, uses_markers=False),
    "exact-countdown": ModeSpec("Exact countdown (guaranteed)", guaranteed=True, needs_grammar=True, uses_markers=True),
}
MODE_LABELS: dict[Mode, str] = {m: s.label for m, s in MODE_SPECS.items()}
GRAMMAR_MODES: frozenset[Mode] = frozenset(m for m, s in MODE_SPECS.items() if s.needs_grammar)
MARKER_MODES: frozenset[Mode] = frozenset(m for m, s in MODE_SPECS.items() if s.uses_markers)


HAND_EDIT = "edit"
"""The `mode` (and `backend`) of a run a writer edited by hand: no model wrote it, whatever the row it came from."""
HAND_EDIT_MODEL = "(edited by hand)"
"""The `model` of such a run, so History, exports and filters never present it as model output."""


def mode_label(mode: str) -> str:
    """A mode's label for people; an unknown (old) mode name is shown as it is."""
    if mode == HAND_EDIT:
        return "Edited by hand"
    return MODE_LABELS.get(mode, mode)  # type: ignore[call-overload]


def made_by(model: str, mode: str) -> str:
    """Who wrote a run's text, for a run's footer: "embedded · Exact (guaranteed)", or "Edited by hand" (never the
    "(edited by hand)" model name beside it)."""
    return mode_label(mode) if mode == HAND_EDIT else f"{model} · {mode_label(mode)}"


def markers_can_count(lang: Lang, unit: Unit, kind: TargetKind = "exactly") -> bool:
    """Whether a CAPEL countdown can aim at this target: a word or Chinese-character unit (exactly N counts down to
    `<0>`; under a limit or a range the markers show the room left and `<0>` may come at a sentence end), or a
    character unit under a limit or a range (`counts_room`)."""
    spec = UNIT_SPECS.get(unit)
    if kind not in TARGET_KINDS or spec is None:
        return False
    return lang in spec.markers or (kind != "exactly" and lang in spec.room)


def counts_room(lang: Lang, unit: Unit) -> bool:
    """Whether a countdown in `unit` steps by the room each word takes (characters) rather than one per marker."""
    spec = UNIT_SPECS.get(unit)
    return spec is not None and lang in spec.room and lang not in spec.markers


NO_GRAMMAR = "the model takes no grammar, or its server ignored one when asked"
MARKERS_UNITS_ONLY = "CAPEL's markers count English words, Chinese characters, or the characters left under a limit"


def why_unavailable(mode: Mode, grammar: bool, lang: Lang, unit: Unit, kind: TargetKind = "exactly") -> str | None:
    """Why `mode` cannot run for this model (`grammar`: it takes one), language, unit and target kind, in a
    clause a page can show beside the skipped mode; None when it can run."""
    spec = MODE_SPECS[mode]
    if spec.needs_grammar and not grammar:
        return NO_GRAMMAR
    if spec.needs_grammar and grammar_kind(lang, unit) is None:
        return f"no grammar can promise a count in {unit_label(unit)}"
    if spec.uses_markers and not markers_can_count(lang, unit, kind):
        return MARKERS_UNITS_ONLY
    return None


AUTO = "auto"
"""The CLI's default mode: this model's default for this target (`service.modes_for`), said in the verdict line."""


def unguided_mode(lang: Lang, unit: Unit, kind: TargetKind = "exactly") -> Mode:
    """The default where no grammar guides the model: CAPEL (repaired, `Request.max_calls`) where the model keeps the
    count one marker per unit, else the plain instruction. A room counted in characters (`counts_room`) is offered,
    never the default: there the model would add up every word's characters itself, untried on a model that can."""
    if markers_can_count(lang, unit, kind) and not counts_room(lang, unit):
        return "capel"
    return "baseline"


# --- servers ----------------------------------------------------------------------------------------

GrammarField = Literal["grammar", "guided_grammar", "structured_outputs", "ebnf", "json_schema", "custom_tool"]
"""How a service takes a grammar. On chat completions: `grammar` (llama.cpp server), `guided_grammar` (older
vLLM), `structured_outputs` (vLLM), `ebnf` (SGLang), `json_schema` (`response_format` with a JSON schema whose
string `pattern` fixes the count: Ollama, LM Studio). `custom_tool`: OpenAI's Responses API with a forced custom
tool whose input is constrained by a Lark grammar (GPT-5 family)."""
GRAMMAR_FIELDS: tuple[GrammarField, ...] = get_args(GrammarField)
"""(Named here, not in backends/, so the CLI can offer `--grammar-field` without loading a model client.)"""


# --- runs -------------------------------------------------------------------------------------------

Status = Literal["running", "complete", "partial", "failed", "cancelled", "interrupted"]
"""`interrupted`: its process was killed before the run closed, and whoever found it left `running` closed it so
(a batch run again closes its killed runs before it writes them anew: `batch.runner`)."""
STATUSES: tuple[Status, ...] = get_args(Status)
FINAL_STATUSES: frozenset[Status] = frozenset({"complete", "partial", "failed", "cancelled", "interrupted"})

Phase = Literal["writing", "drafting", "repairing", "choosing an ending", "saving", "done"]
"""What a live run is doing now, as the pages and the CLI say it (`runview.RunView.phase`)."""
PHASES: tuple[Phase, ...] = get_args(Phase)

DisplayStatus = Literal["running", "complete", "partial", "failed", "cancelled", "interrupted"]
"""A status as shown: a `running` row nobody has saved for `STALE_AFTER` seconds is shown as interrupted."""

STALE_AFTER = 180.0
"""Seconds without a save after which a running row cannot be alive: a live run saves at least every few
seconds while text arrives, and no request waits longer than the backend timeout (120 s) for its first token."""

MAX_VARIANTS = 8
"""The most candidates one request may ask for (`--variants`, the Write page)."""
DEFAULT_VARIANTS = 3
"""Candidates the Write page offers by default for a short text (up to `SHORT_TEXT` units) on a local model."""
SHORT_TEXT = 100

Origin = Literal["write", "compare", "cli", "edit", "variant", "repair", "unknown", "batch"]
ORIGINS: tuple[Origin, ...] = get_args(Origin)

BenchRunStatus = Literal["running", "complete", "interrupted"]
BENCH_RUN_STATUSES: tuple[BenchRunStatus, ...] = get_args(BenchRunStatus)
BenchResultStatus = Literal["ok", "error"]
BENCH_RESULT_STATUSES: tuple[BenchResultStatus, ...] = get_args(BenchResultStatus)

BenchControl = Literal["equal", "at_most", "at_least"]
"""LIFEBench's three control methods: write exactly, at most, or at least N units. A benchmark run has one."""
BENCH_CONTROLS: tuple[BenchControl, ...] = get_args(BenchControl)
BENCH_CONTROL_LABELS: dict[BenchControl, str] = {"equal": "Equal to", "at_most": "At most", "at_least": "At least"}
BENCH_CONTROL_MEETS: dict[BenchControl, str] = {"equal": "= N", "at_most": "≤ N", "at_least": "≥ N"}
"""What a sample must do to count as `within` under each control (for equal, within is exact match)."""
AT_LEAST_CAP = 2
"""An at-least sample is generated as the range N to AT_LEAST_CAP·N (at most MAX_TARGET): see bench.runner."""

# --- marker errors and failures ---------------------------------------------------------------------

ErrorType = Literal[
    "preamble",
    "wrong_start",
    "skip",
    "repeat",
    "bare_marker",
    "extra_units",
    "malformed_marker",
    "early_stop",
    "missing_end",
    "trailing_text",
    "duplicate_end",
    "wrong_room",
]
ERROR_TYPES: tuple[ErrorType, ...] = get_args(ErrorType)
ERROR_LABELS: dict[ErrorType, str] = {
    "preamble": "Text before the first marker",
    "wrong_start": "Countdown does not start at the target",
    "skip": "Skipped marker",
    "repeat": "Repeated or rising marker",
    "bare_marker": "Marker with no unit",
    "extra_units": "More than one unit for a marker",
    "malformed_marker": "Malformed marker",
    "early_stop": "Stopped early",
    "missing_end": "Missing <0>",
    "trailing_text": "Text after <0>",
    "duplicate_end": "Second <0>",
    "wrong_room": "Room miscounted",
}

FailureKind = Literal[
    "unreachable",
    "timeout",
    "auth",
    "rate_limit",
    "server",
    "context",
    "not_found",
    "bad_request",
    "cut",
    "empty",
    "length",
    "not_openai",
    "overrun",
    "deadline",
    "stalled",
]
"""Why a run failed or was stopped. `not_openai`: the server answered, but not as an OpenAI-compatible API
(an HTML page, or a stream line that is not JSON); `overrun`: stopped far past the target (the model was not
counting down); `deadline`: stopped at the time limit (the writer's, or the default); `stalled`: no new text for
the stall limit (a server that keeps the connection open without writing)."""
FAILURE_KINDS: tuple[FailureKind, ...] = get_args(FailureKind)


@dataclass(frozen=True)
class FailureSpec:
    """What one failure kind means, read by every surface (CLI exit code, benchmark status, repair, retries).

    `answer`: the text that arrived is the model's own answer, stopped by a limit: the benchmark scores it and
    the CLI exits 1 (not verified); otherwise it is an error (benchmark status `error`, CLI exit 3).
    `retry`: transient: the same request sent again may well succeed (what a retry wrapper retries).
    `resume`: the run may go on with another call from its verified countdown prefix (repair.py).
    `bad_input`: what the writer typed is at fault (a model or address that does not exist, a request the server
    refuses): exit 2 (bad input) when it stops a command before any run, rather than 3.
    `worded`: a fault a service reports before its stream starts, worded by the guard (backends/guard.py).
    `lasting`: a grammar probe that failed so has a settled answer (asked again it fails the same way), unlike a
    server that was down or busy (backends/probe.py).
    """

    meaning: str
    answer: bool = False
    retry: bool = False
    resume: bool = False
    bad_input: bool = False
    worded: bool = False
    lasting: bool = False


FAILURES: dict[FailureKind, FailureSpec] = {
    "unreachable": FailureSpec("the server could not be reached", retry=True, worded=True),
    # not retried: the wait was already spent once, and a writer is better told at once
    "timeout": FailureSpec("the server did not answer in time", worded=True),
    "auth": FailureSpec("the key is missing or was refused", worded=True, lasting=True),
    "rate_limit": FailureSpec("the provider asked to wait (429) or the quota is spent", retry=True, worded=True),
    "server": FailureSpec(
        "the server failed (5xx)", retry=True, worded=True
    ),  # retried only for a 5xx status (guard.py)
    "context": FailureSpec("the request does not fit the model's context window", worded=True, lasting=True),
    "not_found": FailureSpec("no such model or address", bad_input=True, worded=True, lasting=True),
    "bad_request": FailureSpec("the server refused the request as sent", bad_input=True, worded=True, lasting=True),
    "cut": FailureSpec("the stream broke off after text had arrived"),
    "empty": FailureSpec("the model returned no text", lasting=True),
    "length": FailureSpec("the output limit ran out before the model finished", answer=True, resume=True),
    "not_openai": FailureSpec("the server answered, but not as an OpenAI-compatible API"),
    "overrun": FailureSpec("stopped far past the target: the model was not counting down", answer=True),
    # The writer's own time limit stopped the model's answer: like the output limit, the text is the answer,
    # partial and never verified (CLI exit 1, scored by the benchmark), not an error of the server.
    "deadline": FailureSpec("stopped at the time limit the writer set", answer=True),
    # The server kept the connection open (keep-alive comments, a stuck queue) without writing: its error.
    "stalled": FailureSpec("no new text arrived for the stall limit: the server stopped writing"),
}

DEFAULT_TIME_LIMIT = 600.0
"""Seconds a run may take in all unless the writer sets another limit (or none): a server that writes one
letter every few tenths of a second would otherwise keep a writer waiting for half an hour."""
DEFAULT_STALL_LIMIT = 120.0
"""Seconds without a new piece of text after which a run is stopped: a server sending only keep-alive comments
would otherwise keep a run waiting for ever (every byte resets the read timeout). Long enough for a slow first
token (a long prompt on a CPU, a reasoning model thinking)."""
"""Every failure kind, declared once (a test checks each `FailureKind` has its spec)."""


def is_answer(failure_kind: FailureKind | None) -> bool:
    """Whether a finished run's text is the model's answer (judged and scored) rather than an error."""
    return failure_kind is None or FAILURES[failure_kind].answer


# --- exit codes of `python -m capel_ui` -------------------------------------------------------------

EXIT_OK = 0
"""Verified: the text has exactly the target length and no marker error."""
EXIT_MISS = 1
"""Not verified (off target, marker errors, or stopped by a limit: `FailureSpec.answer`)."""
EXIT_USAGE = 2
"""Bad input: one line says what was wrong and what is accepted."""
EXIT_BACKEND = 3
"""The model, server or database failed; the message says what to do."""
EXIT_INTERRUPTED = 130
"""Ctrl-C: what arrived is kept."""

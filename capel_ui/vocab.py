"""The one place that names CAPEL Studio's vocabulary: languages, units, modes and what they imply, run
statuses and origins, marker error types, failure kinds and exit codes.

Everything else imports these names; nothing re-declares them. Adding a mode, unit or status starts here.
"""

from __future__ import annotations

from dataclasses import dataclass
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

Unit = Literal["en_words", "zh_chars", "zh_words", "lifebench", "chars", "x_weighted", "sms", "zh_all"]
UNITS: tuple[Unit, ...] = get_args(Unit)
UNIT_LABELS: dict[Unit, str] = {
    "en_words": "English words",
    "zh_chars": "Chinese characters",
    "zh_words": "Chinese words (jieba)",
    "lifebench": "LIFEBench counter",
    "chars": "characters",
    "x_weighted": "X weighted characters",
    "sms": "SMS characters",
    "zh_all": "字 (all characters)",
}
DEFAULT_UNIT: dict[Lang, Unit] = {"en": "en_words", "zh": "zh_chars"}
UNITS_FOR: dict[Lang, tuple[Unit, ...]] = {
    "en": ("en_words", "chars", "x_weighted", "sms", "lifebench"),
    "zh": ("zh_chars", "zh_all", "zh_words", "chars", "lifebench"),
}
WORD_GRAMMAR_UNITS: dict[Lang, tuple[Unit, ...]] = {"en": ("en_words", "lifebench"), "zh": ("zh_chars", "lifebench")}
"""Units in which the word (or Han character) grammars make every grammar unit count exactly one."""
CHAR_GRAMMAR_UNITS: dict[Lang, tuple[Unit, ...]] = {"en": ("chars", "x_weighted", "sms"), "zh": ("zh_all", "chars")}
"""Units in which the character grammars make every character they admit count exactly one (plain ASCII prose
in English: no URL, no emoji, GSM-7 only; Han characters and Chinese punctuation in Chinese)."""
GRAMMAR_UNITS: dict[Lang, tuple[Unit, ...]] = {
    lang: WORD_GRAMMAR_UNITS[lang] + CHAR_GRAMMAR_UNITS[lang] for lang in ("en", "zh")
}
"""Units in which the guaranteed modes can promise the count."""
MARKER_UNITS: dict[Lang, tuple[Unit, ...]] = {
    "en": ("en_words", "lifebench"),
    "zh": ("zh_chars", "zh_words", "lifebench"),
}
"""Units a CAPEL countdown (one word, or one Chinese character, per marker) can be judged in."""

# --- targets ----------------------------------------------------------------------------------------

TargetKind = Literal["exactly", "at_most", "range"]
TARGET_KINDS: tuple[TargetKind, ...] = get_args(TargetKind)
TARGET_KIND_LABELS: dict[TargetKind, str] = {"exactly": "Exactly", "at_most": "At most", "range": "Between"}
MARKER_LIMITS = (
    "CAPEL (markers) counts down one word or one Chinese character per marker, so it takes an exact target in "
    "English words or Chinese characters; for character limits, “at most” and ranges use Exact (guaranteed) "
    "or Baseline"
)
"""Said wherever a writer asks a marker mode for something it cannot count."""


def unit_label(unit: str) -> str:
    """A unit's label for people; an unknown (old or foreign) unit name is shown as it is."""
    return UNIT_LABELS.get(unit, unit)  # type: ignore[call-overload]


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


def markers_can_count(lang: Lang, unit: Unit, kind: TargetKind = "exactly") -> bool:
    """Whether a CAPEL countdown can aim at this target: exactly N, in a word or Chinese-character unit."""
    return kind == "exactly" and unit in MARKER_UNITS.get(lang, ())


NO_GRAMMAR = "the model takes no grammar, or its server ignored one when asked"
MARKERS_EXACT_ONLY = "CAPEL's markers count exactly N English words or Chinese characters only"


def why_unavailable(mode: Mode, grammar: bool, lang: Lang, unit: Unit, kind: TargetKind = "exactly") -> str | None:
    """Why `mode` cannot run for this model (`grammar`: it takes one), language, unit and target kind, in a
    clause a page can show beside the skipped mode; None when it can run."""
    spec = MODE_SPECS[mode]
    if spec.needs_grammar and not grammar:
        return NO_GRAMMAR
    if spec.needs_grammar and unit not in GRAMMAR_UNITS.get(lang, ()):
        return f"no grammar can promise a count in {unit_label(unit)}"
    if spec.uses_markers and not markers_can_count(lang, unit, kind):
        return MARKERS_EXACT_ONLY
    return None


def available_modes(grammar: bool, lang: Lang, unit: Unit, kind: TargetKind = "exactly") -> list[Mode]:
    """The modes a model can run for this language, unit and target kind: guaranteed ones only where a grammar
    can promise it, marker ones only where a countdown can count it."""
    return [m for m in MODES if why_unavailable(m, grammar, lang, unit, kind) is None]


# --- runs -------------------------------------------------------------------------------------------

Status = Literal["running", "complete", "partial", "failed", "cancelled"]
STATUSES: tuple[Status, ...] = get_args(Status)
FINAL_STATUSES: frozenset[Status] = frozenset({"complete", "partial", "failed", "cancelled"})

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

Origin = Literal["write", "compare", "cli", "edit", "variant", "repair", "unknown"]
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
]
"""Why a run failed or was stopped. `not_openai`: the server answered, but not as an OpenAI-compatible API
(an HTML page, or a stream line that is not JSON); `overrun`: stopped far past the target (the model was not
counting down); `deadline`: stopped at the time limit the writer set."""
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
    """

    meaning: str
    answer: bool = False
    retry: bool = False
    resume: bool = False
    bad_input: bool = False


FAILURES: dict[FailureKind, FailureSpec] = {
    "unreachable": FailureSpec("the server could not be reached", retry=True),
    "timeout": FailureSpec("the server did not answer in time", retry=True),
    "auth": FailureSpec("the key is missing or was refused"),
    "rate_limit": FailureSpec("the provider asked to wait (429) or the quota is spent", retry=True),
    "server": FailureSpec("the server failed (5xx)", retry=True),
    "context": FailureSpec("the request does not fit the model's context window"),
    "not_found": FailureSpec("no such model or address", bad_input=True),
    "bad_request": FailureSpec("the server refused the request as sent", bad_input=True),
    "cut": FailureSpec("the stream broke off after text had arrived"),
    "empty": FailureSpec("the model returned no text"),
    "length": FailureSpec("the output limit ran out before the model finished", answer=True, resume=True),
    "not_openai": FailureSpec("the server answered, but not as an OpenAI-compatible API"),
    "overrun": FailureSpec("stopped far past the target: the model was not counting down", answer=True),
    # The writer's own time limit stopped the model's answer: like the output limit, the text is the answer,
    # partial and never verified (CLI exit 1, scored by the benchmark), not an error of the server.
    "deadline": FailureSpec("stopped at the time limit the writer set", answer=True),
}
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

"""What the writer asked for and its budget: the request, its checks, its output limit and its overrun bound.

A low module: the plan, the limits, the outcome and the run read it; nothing here imports them back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .backends.base import Capabilities
from .backends.dialect import PATTERN_MAX_WORDS
from .backends.providers.spec import grammar_offer
from .counting import count
from .grammar import supports
from .prompts import validate_target
from .verdict import Target
from .vocab import (
    DEFAULT_STALL_LIMIT,
    DEFAULT_TIME_LIMIT,
    DEFAULT_UNIT,
    GRAMMAR_MODES,
    LANGS,
    MARKER_LIMITS,
    MARKER_MODES,
    MAX_CALLS,
    MODES,
    Lang,
    Mode,
    TargetKind,
    Unit,
    grammar_kind,
    grammar_units_text,
    markers_can_count,
    unit_label,
)

if TYPE_CHECKING:
    from .backends import Backend

OVERRUN_CHARS_PER_UNIT = 50
"""Characters per unit beyond which a reply is worthless however it counts (one endless 'word' of 5 MB)."""


@dataclass(frozen=True)
class Request:
    """What the writer asked for. `unit` defaults to the language's own unit.

    `target` is the number the countdown and the grammar are built for (N of exactly N or at most N, B of a
    range A-B); `target_kind` and `target_low` complete the target (see `target_spec`).
    """

    instruction: str
    target: int
    lang: Lang = "en"
    mode: Mode = "capel"
    unit: Unit | None = None
    code: bool = False
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    allow_fallback: bool = True
    time_limit: float | None = DEFAULT_TIME_LIMIT  # seconds for the whole run (None: none); what arrived is kept
    stall_limit: float | None = DEFAULT_STALL_LIMIT  # seconds without new text before the run is stopped (None: none)
    word_list: bool = True  # guaranteed modes on llama.cpp draw words from a word list (grammar.lexicon_rules)
    max_calls: int | None = None  # repair bound (see repair.py); None: 3 on models without a grammar, else 1
    target_kind: TargetKind = "exactly"
    target_low: int | None = None
    plan_ending: bool = True  # llama.cpp: choose the last units among candidate endings / end at a natural stop
    ask_more: bool = True  # exact, planned: where the model wanted to end before N, ask for more content from
    # there instead of keeping the padding (issue 31 point 4); that text stands only where it reads better than the
    # padded one (planned.EndingPlanner.more_reads_better)

    @classmethod
    def of(cls, target: Target, instruction: str, **fields: Any) -> Request:
        """The request for `target` (exactly / at most / between): the one place a Target becomes a request."""
        high, kind, low = target.high, target.kind, target.low
        return cls(instruction=instruction, target=high, target_kind=kind, target_low=low, **fields)

    @property
    def count_unit(self) -> Unit:
        return self.unit or DEFAULT_UNIT[self.lang]

    @property
    def target_spec(self) -> Target:
        """The whole target, exactly / at most / between (ValueError for an impossible one)."""
        return Target.of(self.target_kind, self.target, self.target_low)

    @property
    def plain(self) -> bool:
        """Exactly N in the language's word or Chinese-character unit: what the original prompts state."""
        return self.target_kind == "exactly" and grammar_kind(self.lang, self.count_unit) == "words"


def validate_request(request: Request, backend: Backend | None = None) -> None:
    """Raise ValueError with what is accepted, before any model is called."""
    validate_target(request.target)
    request.target_spec  # noqa: B018 (raises ValueError for an impossible kind or range)
    if request.lang not in LANGS:
        raise ValueError(f"unknown language {request.lang!r}; use one of {', '.join(LANGS)}")
    if request.mode not in MODES:
        raise ValueError(f"unknown mode {request.mode!r}; use one of {', '.join(MODES)}")
    count("", request.count_unit)  # unknown unit -> ValueError naming the units
    if not request.instruction.strip():
        raise ValueError("the instruction is empty; say what to write")
    if not any(ch.isalnum() for ch in request.instruction):  # emoji or punctuation only: nothing to write about
        raise ValueError("the instruction has no words (only emoji or punctuation); say in words what to write")
    if request.max_tokens is not None and request.max_tokens < 1:
        raise ValueError(f"the output limit must be at least 1 token, got {request.max_tokens}")
    if request.time_limit is not None and request.time_limit <= 0:
        raise ValueError(f"the time limit must be more than 0 seconds, got {request.time_limit:g}")
    if request.stall_limit is not None and request.stall_limit <= 0:
        raise ValueError(f"the stall limit must be more than 0 seconds, got {request.stall_limit:g}")
    if request.max_calls is not None and not 1 <= request.max_calls <= MAX_CALLS:
        raise ValueError(f"max calls must be from 1 (no repair) to {MAX_CALLS}, got {request.max_calls}")
    if request.mode in MARKER_MODES and not markers_can_count(request.lang, request.count_unit, request.target_kind):
        raise ValueError(MARKER_LIMITS)
    if backend is not None:  # rewrite.py: the embedded model cannot lengthen a text without inventing
        from .rewrite import lengthening_refusal

        if why := lengthening_refusal(request.instruction, request.count_unit, request.target_spec, backend.model):
            raise ValueError(why)
    if request.mode in GRAMMAR_MODES:
        if not supports(request.lang, request.count_unit):
            raise ValueError(f"{request.mode} mode guarantees {grammar_units_text()}, not {request.count_unit}")
        if grammar_kind(request.lang, request.count_unit) == "chars" and request.target < 2:
            raise ValueError("a character target in exact mode must allow at least 2 characters (a word and its stop)")
        if backend is not None and not backend.capabilities.grammar:
            raise ValueError(
                f"{backend.label} does not take a grammar, so {request.mode} mode is not available; "
                f"use {grammar_offer()}"
            )
    if backend is not None:
        check_model_limit(request, backend.capabilities, backend.label)


def default_max_tokens(request: Request) -> int:
    """A generous output budget: small tokenizers split `<123>` into single digits, so markers are costly."""
    n = request.target
    if grammar_kind(request.lang, request.count_unit) == "chars":
        # A character limit: at worst one token per character (English), three per Han character or mark; a
        # countdown of the characters left adds a marker per word (a word and its space take 2 characters or more).
        budget = n * (1 if request.lang == "en" else 3) + 64
        if request.mode in MARKER_MODES:
            budget += (n // 2 + 1) * (3 + len(str(n))) + (n if request.mode == "draft-capel" else 0)
        return budget
    # Byte-level tokenizers (SmolLM2's) can spend 3 tokens on a Han character and 3 more on the punctuation after
    # it; a budget that runs out cuts a guaranteed-length answer short.
    per_unit = 3 if request.lang == "en" else 6
    if request.mode in GRAMMAR_MODES and request.lang == "en":
        per_unit = 8  # a grammar word may be 16 characters: leave room for the worst the grammar admits
    if request.mode in MARKER_MODES:
        per_unit += 3 + len(str(n))
    budget = n * per_unit + 64
    if request.mode == "draft-capel":
        budget += n * 3
    return budget


def check_model_limit(request: Request, caps: Capabilities, label: str) -> None:
    """A ValueError, before any call, for a target the model cannot hold: its output budget (`default_max_tokens`)
    over the model's output limit (or its context), or a JSON-schema pattern longer than LLGuidance compiles; the
    sentence says the largest target that fits. An output limit the writer set is capped instead (dialect.shape)."""
    most = caps.max_output_tokens or caps.context_tokens
    pattern = caps.grammar_field == "json_schema" and request.mode in GRAMMAR_MODES and request.plain
    fits_budget = most is None or request.max_tokens is not None or default_max_tokens(request) <= most
    fits_pattern = not pattern or request.target <= PATTERN_MAX_WORDS
    if fits_budget and fits_pattern:
        return
    unit = unit_label(request.count_unit)
    largest = request.target
    if most is not None and request.max_tokens is None:
        largest = _largest(request, most)
    if pattern:
        largest = min(largest, PATTERN_MAX_WORDS)
    why = []
    if not fits_budget:
        what = "output tokens in one answer" if caps.max_output_tokens else "tokens of context"
        why.append(
            f"{label} writes at most {most:,} {what}, and {request.mode} at {request.target:,} {unit} may need "
            f"{default_max_tokens(request):,}"
        )
    if not fits_pattern:
        why.append(
            f"the length pattern compiles in LLGuidance (OpenAI's engine) up to about {PATTERN_MAX_WORDS:,} {unit}"
        )
    raise ValueError(
        f"{'; '.join(why)}. The largest target that fits is {largest:,} {unit}: lower the target, or pick a model "
        "with a larger limit."
    )


def _largest(request: Request, most: int) -> int:
    """The largest target whose output budget fits in `most` tokens (0 if none does)."""
    low, high = 0, request.target
    while low < high:
        mid = (low + high + 1) // 2
        if default_max_tokens(replace(request, target=mid, target_low=None)) <= most:
            low = mid
        else:
            high = mid - 1
    return low


def overrun_limit(request: Request, mode: Mode) -> int:
    """Units past which a stream is clearly worthless and is stopped: twice the target and some (three times
    with a draft first), a bound no answer that tries to hit the target comes near."""
    return (3 if mode == "draft-capel" else 2) * request.target + 50

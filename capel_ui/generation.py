"""One run, end to end: prompt → backend stream(s) → validator → outcome.

The CLI, the Write and Compare pages and the benchmark runner all go through `Generation`, the one run
object, so a run is prompted, validated, timed and classified (complete / partial / failed / cancelled) the
same way everywhere. A run holds its list of calls (`Call`: one request and its stream); repair (repair.py) is
its policy for starting the next call, so a one-call run and a repaired run are the same object and their
outcome is built in one place. Whatever text arrived is kept, whatever went wrong.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .backends import Backend, BackendError, CancelToken, Options, Usage, fallback, language_note
from .counting import count, refusal
from .ending import SEARCH_UNITS
from .grammar import (
    Grammar,
    grammar_for,
    lexicon_rules,
    starting_with,
    supports,
    target_grammar,
    with_word_list,
)
from .parser import MarkerError, MarkerParser, ParseResult, check_fields
from .planned import CLOSINGS, HAN, WORD, EndingPlanner, total
from .prompts import Message, build_messages, rewrite_source, validate_target
from .quality import fluency
from .repair import ReplyFilter, continuation_messages, max_calls_for, verified, worthless
from .rewrite import Faithfulness, faithfulness, faithfulness_fields, first_word, lengthening_refusal, strip_preamble
from .rewrite import plan as plan_rewrite
from .runview import RunView
from .verdict import Target, Verdict, judge
from .vocab import (
    DEFAULT_STALL_LIMIT,
    DEFAULT_TIME_LIMIT,
    DEFAULT_UNIT,
    FAILURES,
    GRAMMAR_MODES,
    LANGS,
    MARKER_LIMITS,
    MARKER_MODES,
    MAX_CALLS,
    MODES,
    FailureKind,
    Lang,
    Mode,
    Phase,
    Status,
    TargetKind,
    Unit,
    grammar_kind,
    grammar_units_text,
    markers_can_count,
    unit_label,
)

OVERRUN_CHARS_PER_UNIT = 50
"""Characters per unit beyond which a reply is worthless however it counts (one endless 'word' of 5 MB)."""
_MARKER_TEXT = re.compile(r"<\s*\d[\d\s]*>")


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
    spec, unit = request.target_spec, request.count_unit
    if backend is not None and (why := lengthening_refusal(request.instruction, unit, spec, backend.model)):
        raise ValueError(why)  # rewrite.py: the embedded model cannot lengthen a text without inventing
    if request.mode in GRAMMAR_MODES:
        if not supports(request.lang, request.count_unit):
            raise ValueError(f"{request.mode} mode guarantees {grammar_units_text()}, not {request.count_unit}")
        if grammar_kind(request.lang, request.count_unit) == "chars" and request.target < 2:
            raise ValueError("a character target in exact mode must allow at least 2 characters (a word and its stop)")
        if backend is not None and not backend.capabilities.grammar:
            raise ValueError(
                f"{backend.label} does not take a grammar, so {request.mode} mode is not available; "
                "use the embedded model, a GGUF file, a GPT-5, GPT-4.1 or GPT-4o model, or a server that takes a "
                "grammar (--grammar-field)"
            )


def default_max_tokens(request: Request) -> int:
    """A generous output budget: small tokenizers split `<123>` into single digits, so markers are costly."""
    n = request.target
    if grammar_kind(request.lang, request.count_unit) == "chars":
        # A character limit: at worst one token per character (English), three per Han character or mark.
        return n * (1 if request.lang == "en" else 3) + 64
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


def overrun_limit(request: Request, mode: Mode) -> int:
    """Units past which a stream is clearly worthless and is stopped: twice the target and some (three times
    with a draft first), a bound no answer that tries to hit the target comes near."""
    return (3 if mode == "draft-capel" else 2) * request.target + 50


@dataclass
class Outcome:
    """Everything a run produced; `verified` is the only state in which text may be labelled verified."""

    request: Request
    model: str
    label: str
    base_url: str | None
    mode: Mode
    prompt: str
    raw: str
    text: str
    count: int
    errors: list[MarkerError]
    countdown_end: int | None
    status: Status
    draft: str | None = None
    notice: str | None = None
    failure: str | None = None
    failure_kind: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0
    first_token_seconds: float | None = None
    finish_reason: str | None = None
    fluency: float | None = None  # geometric mean token probability (quality.fluency), when the server gave logprobs
    attempts: list[dict[str, Any]] = field(default_factory=list)  # one per call of a run that may repair
    end_probability: float | None = None  # P(end) after the text (ending.py), where the server can say
    planned_ending: dict[str, Any] | None = None  # the candidate endings a planned run chose from (`Generation`)
    foreign: bool = False  # the model does not write the request's language (ProviderSpec.languages): no score

    @property
    def faithfulness(self) -> Faithfulness | None:
        """How much of the writer's text a rewrite kept (rewrite.faithfulness); None for a run that is no rewrite."""
        source = rewrite_source(self.request.instruction)
        return None if source is None else faithfulness(source, self.text, self.request.lang)

    @property
    def calls(self) -> int:
        """Model calls this outcome took: 1 unless it was repaired."""
        return max(len(self.attempts), 1)

    @property
    def target(self) -> int:
        return self.request.target

    @property
    def verdict(self) -> Verdict:
        return judge(
            self.status,
            self.count,
            self.request.target_spec,
            self.errors,
            refusal(self.text, self.request.count_unit),
        )

    @property
    def exact(self) -> bool:
        return self.verdict.exact_count

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def verified(self) -> bool:
        return self.verdict.verified

    @property
    def deviation(self) -> int:
        return self.verdict.deviation

    @property
    def tokens_per_unit(self) -> float | None:
        if not self.completion_tokens or not self.count:
            return None
        return self.completion_tokens / self.count

    def check_dict(self) -> dict[str, Any]:
        """The fields of `capel_ui check`."""
        return check_fields(self.verdict, self.countdown_end, self.errors, self.text)

    def as_json(self) -> dict[str, Any]:
        """What `capel_ui generate --json` prints."""
        return {
            **self.check_dict(),
            "model": self.model,
            "mode": self.mode,
            "raw": self.raw,
            "seconds": round(self.seconds, 3),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "status": self.status,
            "unit": self.request.count_unit,
            "lang": self.request.lang,
            "failure": self.failure,
            "notice": self.notice,
            "fluency": self.fluency,
            "end_probability": self.end_probability,
            "planned_ending": self.planned_ending,
            "calls": self.calls,
            "attempts": self.attempts,
            **faithfulness_json(self.faithfulness),
        }


@dataclass
class Call:
    """One call of a run: one request to the model, its stream, and what became of it.

    `parts` is the text the run reads: the prefix kept from the calls before, then what this call's reply
    passed on (`reader`); `reply` is what the model sent, word for word, and `reader.dropped` what was not read.
    """

    number: int
    messages: list[Message]
    options: Options
    parser: MarkerParser | None
    reader: ReplyFilter
    resumed_from: int | None = None  # the marker a repair call continued from; None on the first call
    started: float = field(default_factory=time.monotonic)
    parts: list[str] = field(default_factory=list)
    reply: list[str] = field(default_factory=list)
    chunks: int = 0
    usage: Usage | None = None
    failure: BackendError | None = None
    halted: BackendError | None = None  # our own stop (overrun, deadline): its reason is the failure
    stopped: str | None = None  # why the run stopped this call to start the next (repair.worthless)
    status: Status = "running"
    first_token: float | None = None
    ended: float | None = None
    result: ParseResult | None = None  # the parser's, once the call has ended
    next_check: int = 0  # the raw length at which the overrun check counts again

    @property
    def cancel(self) -> CancelToken:
        return self.options.cancel  # type: ignore[return-value]  (every call gets its own token)

    @property
    def estimated(self) -> bool:
        """A stream the run closed early gets no usage from the server: its chunks stand in for its tokens."""
        return self.stopped is not None and (self.usage is None or self.usage.completion_tokens is None)

    @property
    def completion_tokens(self) -> int | None:
        return self.chunks if self.estimated else self.usage.completion_tokens if self.usage else None

    @property
    def prompt_tokens(self) -> int | None:
        return self.usage.prompt_tokens if self.usage else None


@dataclass
class Generation:
    """A run: one or more calls to the model (`calls`), streamed as one answer. Iterate `stream()` for text
    chunks; read the live countdown between chunks; `outcome()` is the result so far, final once it ended.

    Every run has the same shape: a run that may repair (`max_calls` > 1, see repair.py) starts another call
    from the verified countdown prefix when one goes wrong; a run that may not simply has one call. Live state
    (`raw`, `units_done`, `errors`, `parser`) is the current call's: the kept prefix plus what it has written.
    `cancel()` may be called from any thread; the stream stops at the next chunk and keeps what arrived. Once the
    calls are done, its `planner` (planned.py) says how the text should end, and the run applies it.
    """

    backend: Backend
    request: Request
    mode: Mode = field(init=False)
    notice: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        validate_request(self.request, self.backend)
        req = self.request
        self.mode = req.mode
        countable = (
            markers_can_count(req.lang, req.count_unit, req.target_kind) and rewrite_source(req.instruction) is None
        )
        instead = (
            fallback(self.backend.model, req.mode, self.backend.capabilities, countable) if req.allow_fallback else None
        )
        if instead is not None:
            self.mode = instead.mode
            self.notice = instead.notice(self.backend.label, req.mode)
        self.language_note = language_note(self.backend.provider, req.lang)
        if self.language_note:
            self.notice = " ".join(n for n in (self.notice, self.language_note) if n)
        self.max_calls = max_calls_for(req, self.backend, self.mode)
        llama = self.backend.capabilities.grammar_field == "grammar"
        self.rewrite = plan_rewrite(req.instruction, self.mode, req.lang, req.count_unit, req.target_spec, llama)
        if self.rewrite is not None and self.rewrite.note:
            self.notice = " ".join(filter(None, (self.notice, self.rewrite.note)))
        self._lock = threading.Lock()  # the stream may run in a worker thread while the UI reads live state
        self._count_cache: tuple[int, int] = (0, 0)
        self._stopping = threading.Event()  # the user's Stop: no further call
        self._expired = threading.Event()  # the time limit passed: no further call
        self._final: Outcome | None = None
        self._ended: float | None = None  # when the run ended, its ending chosen and scored (`_finish`)
        self._attempts: list[dict[str, Any]] = []
        self._end_probability: float | None = None
        self._plan: dict[str, Any] | None = None  # what a planned ending weighed (Outcome.planned_ending)
        self._cut_tail: str | None = None  # what a bounded run left out after the sentence it ended at
        self._settled_at: int | None = None  # where a planned run's clean text stops being settled (`settled_text`)
        self.plan_units = self._plan_units()
        self.status: Status = "running"
        self.started = time.monotonic()
        self._last_text = self.started
        limit = None if req.plain else (req.count_unit, req.target_kind, req.target_spec.low)
        selection = self.rewrite is not None and self.rewrite.selection
        self.messages = build_messages(
            req.instruction, req.lang, req.target, self.mode, code=req.code, limit=limit, selection=selection
        )
        self._grammar_sent = self._grammar()  # each backend sends it in its server's syntax
        self.calls: list[Call] = []
        self.planner = EndingPlanner(
            self.backend,
            req,
            self.mode,
            self.ending_messages,
            self._clean,
            self._halted,
            self._rival_grammar,
        )
        self._add_call()

    def _plan_units(self) -> int:
        """Units at the end of an exact text that its ending search may write again (`_search_ending`); 0 for no
        search: only exactly N words (or Chinese characters) in a guaranteed mode, on a server that continues an
        answer and scores endings (llama.cpp), and not a rewrite."""
        req, caps = self.request, self.backend.capabilities
        llama = caps.grammar_field == "grammar" and caps.prefill is not None and caps.end_probability
        if not (req.plan_ending and llama and self.mode in GRAMMAR_MODES and self.rewrite is None):
            return 0
        if req.target_kind != "exactly" or grammar_kind(req.lang, req.count_unit) != "words" or req.target < 2:
            return 0
        return min(req.target - 1, max(SEARCH_UNITS))

    @property
    def bounded_plan(self) -> bool:
        """Whether the run ends at the last natural sentence end inside its limit or range (`_end_naturally`)."""
        req, caps = self.request, self.backend.capabilities
        return (
            req.plan_ending
            and caps.end_probability
            and self.mode == "exact"
            and req.target_kind != "exactly"
            and self.rewrite is None
        )

    def _grammar(self) -> Grammar | str | None:
        """The guaranteed modes' grammar; on llama.cpp its words come from a word list (no glued words)."""
        req = self.request
        if self.rewrite is not None and self.rewrite.grammar is not None:
            return self.rewrite.grammar  # the writer's own words, nothing else (rewrite.py)
        grammar: Grammar | str | None = grammar_for(self.mode, req.lang, req.target)
        if self.mode == "exact":  # any target kind and unit; a character limit is GBNF text (Lark by conversion)
            spec = req.target_spec
            grammar = target_grammar(req.lang, req.count_unit, spec.low, spec.high)
            if self.rewrite is not None and isinstance(grammar, Grammar) and req.lang == "en":
                grammar = starting_with(grammar, *first_word(self.rewrite.source))  # no room for a preamble
        return self._word_list(grammar)

    def _word_list(self, grammar: Grammar | str | None) -> Grammar | str | None:
        """`grammar` with its words drawn from the word list, on llama.cpp (unless the request turned it off)."""
        req = self.request
        caps = self.backend.capabilities
        if isinstance(grammar, Grammar) and req.word_list and caps.grammar_field == "grammar":
            syntax = "lark" if caps.llguidance else "gbnf"  # LLGuidance checks a token against the list faster
            return with_word_list(grammar, lexicon_rules(req.lang, req.instruction, syntax), syntax)
        return grammar

    def _rival_grammar(self, grammar: Grammar | str) -> Grammar | str:
        """A rival ending's grammar: the word list where LLGuidance checks it cheaply, else the plain word rule (the
        GBNF list costs a rival twice the time; a rival with a non-word, a glued or a dangling word is never kept:
        `_choose_ending` keeps the ending with the fewest quality warnings)."""
        if self.backend.capabilities.llguidance:
            return self._word_list(grammar) or grammar
        return grammar

    def _add_call(self, kept: str = "", resumed_from: int | None = None, countdown: str = "") -> None:
        """Start the next call: the first from the prompt; a repair call from the `kept` prefix, as a prefill
        where the server continues one, else quoted in the user message (repair.py)."""
        req, number = self.request, len(self.calls) + 1
        seed = req.seed + number - 1 if req.seed is not None else None  # the same seed would write the same again
        options = Options(
            temperature=req.temperature,
            top_p=req.top_p,
            max_tokens=req.max_tokens or default_max_tokens(req),
            grammar=self._grammar_sent,
            seed=seed,
            cancel=CancelToken(),
            logprobs=True,
        )
        messages = self.messages
        if kept and self.backend.capabilities.prefill:
            options = dataclasses.replace(options, prefill=kept)
        elif kept:
            messages = continuation_messages(req, self.prompt, kept, resumed_from or 0)
        parser = None
        if self.mode in MARKER_MODES:
            parser = MarkerParser(req.target, req.lang, req.count_unit, draft=self.mode == "draft-capel", code=req.code)
            parser.feed(kept)  # the continuation is parsed, counted and verified as one answer with the kept part
        reader = ReplyFilter(from_marker=bool(kept), echo=countdown)
        call = Call(number, messages, options, parser, reader, resumed_from, parts=[kept] if kept else [])
        with self._lock:
            self.calls.append(call)
        if self._stopping.is_set():
            call.cancel.set()
        if self._expired.is_set():
            self._deadline()

    @property
    def current(self) -> Call:
        return self.calls[-1]

    @property
    def options(self) -> Options:
        """The first call's options (a repair call's differ only in prefill, seed and cancel token)."""
        return self.calls[0].options

    @property
    def prompt(self) -> str:
        return self.messages[-1]["content"]

    @property
    def ending_messages(self) -> list[Message]:
        """The question a text's ending is scored against (ending.py): the instruction with its length, as the
        baseline states it, whatever the mode sent (a countdown's markers are not in the clean text)."""
        req = self.request
        limit = None if req.plain else (req.count_unit, req.target_kind, req.target_spec.low)
        return build_messages(req.instruction, req.lang, req.target, "baseline", code=req.code, limit=limit)

    # ----- live state ---------------------------------------------------------------------------------
    @property
    def raw(self) -> str:
        with self._lock:
            parts = self.current.parts
            if len(parts) > 1:
                parts[:] = ["".join(parts)]
            return parts[0] if parts else ""

    @property
    def parser(self) -> MarkerParser | None:
        return self.current.parser

    @property
    def units_done(self) -> int:
        parser = self.parser
        if parser is not None:
            with self._lock:
                return parser.units_done
        raw = self.raw
        if self._count_cache[0] != len(raw):
            self._count_cache = (len(raw), count(raw, self.request.count_unit))
        return self._count_cache[1]

    @property
    def remaining(self) -> int:
        """Units left, as the big countdown shows it (never negative; see `units_done` for overshoot)."""
        return max(self.request.target - self.units_done, 0)

    @property
    def errors(self) -> list[MarkerError]:
        parser = self.parser
        if parser is None:
            return []
        with self._lock:
            return parser.errors

    @property
    def in_draft(self) -> bool:
        parser = self.parser
        return parser is not None and parser.in_draft

    @property
    def first_token(self) -> float | None:
        return self.calls[0].first_token

    @property
    def repairing_from(self) -> int | None:
        """The marker the current call continues from; None on the first call."""
        return self.current.resumed_from

    @property
    def attempts(self) -> list[dict[str, Any]]:
        """What each finished call did, as stored with the run (kept only by a run that may repair)."""
        return list(self._attempts)

    def live_text(self) -> str:
        """The clean text so far as it stands now (a repair or a planned ending may still change its end)."""
        parser = self.parser
        if parser is None:
            return self.raw
        with self._lock:
            return parser.text_so_far()

    def settled_text(self) -> str:
        """The clean text that stays whatever comes next (what a stream to a file may print at once): on a run that
        may repair only the verified prefix (a later call may replace the rest); on a planned run all but its last
        `plan_units` units (the ending search may write them again); under a limit nothing (the run may end at an
        earlier sentence); else all units so far."""
        if self.bounded_plan:
            return ""
        parser = self.parser
        if parser is None:
            text = self.raw
        else:
            with self._lock:
                text = parser.verified_text() if self.max_calls > 1 else parser.text_so_far()
        if self.plan_units and self.units_done >= self.request.target - self.plan_units:
            if self._settled_at is None:  # found once: the text before it no longer changes
                units = list((HAN if self.request.lang == "zh" else WORD).finditer(text))
                kept = self.request.target - self.plan_units
                self._settled_at = units[kept].start() if len(units) > kept else None
            if self._settled_at is not None:
                text = text[: self._settled_at]
        return text

    def live_note(self) -> str:
        """` · repairing from <k> (call 2 of 3)` while a repair call streams, ` · its last sentence reads cut off:
        …` while an exact text's ending is searched, else "": the live line's suffix."""
        call = self.current
        if self._final is None and self.planner.closing:
            return f" · writing {CLOSINGS} closing sentences and choosing where the text ends most naturally"
        if self._final is None and self.planner.searching:
            unit = unit_label(self.request.count_unit)
            return f" · its last sentence reads cut off: looking for last {unit} the model would end on"
        if call.resumed_from is None:
            return ""
        return f" · repairing from <{call.resumed_from}> (call {call.number} of {self.max_calls})"

    def view(self, *, saving: bool = False) -> RunView:
        """What a surface draws of this run now (runview.py): the one way pages and the CLI read a live run."""
        parser, call = self.parser, self.current
        with self._lock:
            errors = tuple(parser.errors) if parser else ()
            spans = tuple(parser.marker_spans) if parser else ()
            draft_span = parser.draft_span if parser else None
        return RunView(
            label=self.backend.label,
            model=self.backend.model,
            mode=self.mode,
            lang=self.request.lang,
            unit=self.request.count_unit,
            target=self.request.target_spec,
            units_done=self.units_done,
            raw=self.raw,
            text=self.live_text(),
            settled=self.settled_text(),
            errors=errors,
            marker_spans=spans,
            draft_span=draft_span,
            phase=self._phase(saving),
            note=self.live_note(),
            call=call.number,
            max_calls=self.max_calls,
            started=self.started,
            time_limit=self.request.time_limit,
            notice=self.notice,
        )

    def _phase(self, saving: bool) -> Phase:
        if self._final is not None:
            return "saving" if saving else "done"
        if self.planner.closing or self.planner.searching:
            return "choosing an ending"
        if self.current.resumed_from is not None:
            return "repairing"
        return "drafting" if self.in_draft else "writing"

    def cancel(self) -> None:
        """Stop the stream now (safe from any thread): the request is aborted, also before the first token."""
        self._stopping.set()
        self.current.cancel.set()

    def abandon(self) -> None:
        """Called by the thread that owns the stream when it stops iterating: a run that never finished,
        or never even started, is recorded as cancelled rather than left running."""
        self.cancel()
        self._finish()

    def _halt(self, kind: FailureKind, message: str) -> None:
        """Stop the current call on our own account, keeping what arrived and saying why (`overrun`, `deadline`)."""
        call = self.current
        if not call.cancel.is_set():
            call.halted = BackendError(kind, message)
            call.cancel.set()

    def _past_limit(self, call: Call) -> bool:
        """Whether the text is far past the target (see `overrun_limit`); counts again only once the raw text
        has grown by a tenth, so a long stream costs linear time."""
        limit = overrun_limit(self.request, self.mode)
        raw = self.raw
        if len(raw) > limit * OVERRUN_CHARS_PER_UNIT:
            return True
        if len(raw) < call.next_check:
            return False
        call.next_check = int(len(raw) * 1.1) + 64
        done = count(_MARKER_TEXT.sub(" ", raw), self.request.count_unit)
        return max(done, self.units_done) > limit

    def _overrun(self) -> None:
        req, raw = self.request, self.raw
        n, unit = count(_MARKER_TEXT.sub(" ", raw), req.count_unit), unit_label(req.count_unit)
        if n > req.target:
            what = f"Stopped at {n} {unit}, far past the target of {req.target}: the model was not counting down."
        else:  # the size guard, not the count: a few endless "words" (one 5 MB word, say)
            cap = overrun_limit(req, self.mode) * OVERRUN_CHARS_PER_UNIT
            ran = "a single word" if n <= 1 else f"its {n} {unit}"
            what = (
                f"Stopped after {len(raw):,} characters: {ran} ran past {cap:,} characters, far more than "
                f"{req.target} {unit} take."
            )
        self._halt("overrun", f"{what} {self._what_is_kept().capitalize()}; try again, or use an Exact mode.")

    def _what_is_kept(self) -> str:
        """What a stop leaves: the text that arrived, or nothing (a message must not promise text that never came)."""
        return "the text that arrived is kept" if self.raw.strip() else "no text had arrived"

    def _deadline(self) -> None:
        self._expired.set()
        limit = self.request.time_limit
        default = "default " if limit == DEFAULT_TIME_LIMIT else ""
        self._halt(
            "deadline",
            f"Stopped at the {default}time limit of {limit:g} s; {self._what_is_kept()}. "
            "Raise the time limit (Options, or --time-limit) to let it finish.",
        )

    def _watch_stall(self, done: threading.Event) -> None:
        """Stop the current call once no text has come for `stall_limit` seconds (a server that keeps the
        connection open with keep-alive comments resets every read timeout, so only this notices)."""
        limit = self.request.stall_limit
        assert limit is not None
        while not done.wait(min(1.0, limit / 4)):
            if time.monotonic() - self._last_text > limit:
                self._expired.set()
                new, kept = "new text" if self.raw.strip() else "text", self._what_is_kept()
                self._halt(
                    "stalled",
                    f"No {new} for {limit:g} s (the stall limit), so the run was stopped; {kept}. "
                    "The server may be overloaded: try again, or raise the stall limit (--stall-limit).",
                )
                return

    # ----- running --------------------------------------------------------------------------------------
    def stream(self) -> Iterator[str]:
        """Yield text chunks of every call in turn as they arrive. Never raises BackendError: a failure is kept
        on its call; the outcome is built however the loop ends. The time limit is for the whole run."""
        timer, done = None, threading.Event()
        if self.request.time_limit is not None:
            timer = threading.Timer(self.request.time_limit - (time.monotonic() - self.started), self._deadline)
            timer.daemon = True
            timer.start()
        if self.request.stall_limit is not None:
            threading.Thread(target=self._watch_stall, args=(done,), daemon=True, name="stall-limit").start()
        try:
            while True:
                yield from self._stream_call(self.current)
                if not self._next_call():
                    break
            self._search_ending()
            self._end_naturally()
            self._score_ending()
        finally:
            done.set()
            if timer is not None:
                timer.cancel()
            self._finish()

    def run(self) -> Outcome:
        """Consume the whole stream (no live display) and return the outcome."""
        for _ in self.stream():
            pass
        return self.outcome()

    def _stream_call(self, call: Call) -> Iterator[str]:
        """One call's chunks; the call ends (and keeps its failure) however the loop ends."""
        inner = self.backend.stream(call.messages, call.options)
        last = call.number >= self.max_calls
        cancelled = False
        self._last_text = time.monotonic()  # the stall limit counts from each call's start
        try:
            for item in inner:
                if isinstance(item, Usage):
                    call.usage = item
                    text = call.reader.flush()
                else:
                    if call.cancel.is_set():
                        cancelled = True
                        break
                    call.chunks += 1
                    self._last_text = time.monotonic()
                    call.reply.append(item)
                    text = call.reader.feed(item)
                if not text:
                    continue
                self._take(call, text)
                yield text
                if not last and (reason := worthless(call.parser, self.raw)):
                    call.stopped, cancelled = reason, True  # the rest is paid for but thrown away: stop it
                    break
                if self._past_limit(call):
                    self._overrun()
                    break
        except BackendError as exc:
            call.failure = exc
        except BaseException:  # closed early, Ctrl-C, or an unexpected error: the run did not complete
            cancelled = True
            raise
        finally:
            inner.close()  # stopping a call closes its HTTP response
            call.reader.flush()
            self._end_call(call, cancelled or call.cancel.is_set())

    def _halted(self) -> bool:
        """Stopped by the writer or out of time: nothing more is asked of the model."""
        return self._stopping.is_set() or self._expired.is_set()

    def _clean(self, raw: str) -> str:
        """The clean text of `raw` (a countdown's markers removed)."""
        return _parse(raw, self.request, self.mode).text if self.mode in MARKER_MODES else raw.strip()

    # ----- the ending, planned once the calls are done (planned.py decides, the run applies) ------------
    def _score_ending(self) -> None:
        """The ending score of a complete text (ending.py); nothing for a stopped, cut or failed run."""
        if self._halted():
            return
        done = self._outcome(final=True)
        if done.status == "complete":
            self._end_probability = self.planner.score(done.text)

    def _search_ending(self) -> None:
        """An exact text whose own ending reads cut off gets it written again where the model would end a phrase
        (`EndingPlanner.search`); nothing changes if no natural ending is found."""
        call = self.current
        if not self.plan_units or call.status != "complete" or self._halted():
            return
        planned = self.planner.search(self.raw, self.plan_units)
        self._plan = planned.plan
        if planned.raw is not None:
            self._replace(call, planned.raw)

    def _end_naturally(self) -> None:
        """A text under a limit or in a range ends at the last sentence end the model would end on
        (`EndingPlanner.end_naturally`); what was left out is said in the notice."""
        call = self.current
        if not self.bounded_plan or self._halted() or call.status != "complete" or call.parser is not None:
            return
        planned = self.planner.end_naturally(self.raw, call.messages, call.options)
        if planned is None:
            return
        self._plan = planned.plan
        if call.usage is not None:  # the rival closings' tokens are the run's too
            tokens = total((call.usage.completion_tokens, planned.extra_tokens))
            call.usage = dataclasses.replace(call.usage, completion_tokens=tokens)
        if planned.raw is not None:
            self._replace(call, planned.raw)
            self._cut_tail = planned.cut_tail

    def _replace(self, call: Call, raw: str) -> None:
        """Make `raw` the call's whole reply, parsed afresh (a planned ending replaced the model's own)."""
        with self._lock:
            call.parts[:] = [raw]
            if call.parser is not None:
                call.parser = _parser(self.request, self.mode)
                call.parser.feed(raw)
                call.result = call.parser.close()

    def _take(self, call: Call, text: str) -> None:
        if call.first_token is None:
            call.first_token = time.monotonic() - call.started
        with self._lock:
            call.parts.append(text)
            if call.parser is not None:
                call.parser.feed(text)

    def _end_call(self, call: Call, cancelled: bool) -> None:
        call.ended = time.monotonic()
        if call.halted is not None:  # our own stop: its reason, not the aborted connection, is the failure
            call.failure, cancelled = call.halted, False
        elif cancelled:  # a Stop, or the run's own stop before a repair: an error from the abort is no failure
            call.failure = None
        usage = call.usage
        if call.failure is None and not cancelled and usage and usage.finish_reason == "length":
            # Cut off by the output budget: the text is not finished, so it is partial, never verified.
            call.failure = BackendError(
                "length",
                f"The model stopped at the output limit ({_limit(usage, call.options)} tokens) before finishing"
                f"{_reasoning_part(usage)}; the text that arrived is kept. Raise the output limit (Options, or "
                "--max-tokens) and run again.",
            )
        if call.failure is not None:
            call.status = "partial" if self.raw.strip() else "failed"
        else:
            call.status = "cancelled" if cancelled else "complete"
        if call.parser is not None:
            with self._lock:
                call.result = call.parser.close()
        if self.max_calls > 1:
            self._attempts.append(self._attempt(call))

    def _next_call(self) -> bool:
        """Start the next call if this one went wrong and another is allowed; False when the run is over."""
        call = self.current
        if self._halted() or (call.status == "cancelled" and not call.stopped):
            return False
        if call.failure is not None and not FAILURES[call.failure.kind].resume:
            return False  # a cut, a 429 or a timeout: keep what is verified, say what happened
        ver = verified(call.parser)
        if ver is None or ver.complete or call.number >= self.max_calls:
            return False
        raw = self.raw
        self._add_call(ver.kept(raw), ver.next_marker, raw[ver.start : ver.end])
        return True

    def _attempt(self, call: Call) -> dict[str, Any]:
        """What one call did, as stored with the run: where it resumed, what was wrong, tokens and time."""
        ver = verified(call.parser)
        wrong = ver.error if ver is not None else None
        return {
            "call": call.number,
            "resumed_from": call.resumed_from,
            "kept_units": self._kept_units(call),
            "prefill": bool(call.options.prefill),
            "reply": "".join(call.reply),
            "dropped": call.reader.dropped if call.reader.dropped.strip() else None,
            "verified_units": ver.units if ver is not None else None,
            "wrong": {"type": wrong.type, "message": wrong.message} if wrong else None,
            "stopped": call.stopped,
            "status": "stopped" if call.stopped else call.status,
            "failure": call.failure.message if call.failure else None,
            "failure_kind": call.failure.kind if call.failure else None,
            "prompt_tokens": call.prompt_tokens,
            "completion_tokens": call.completion_tokens,
            "tokens_estimated": call.estimated,
            "chunks": call.chunks,
            "seconds": round((call.ended or time.monotonic()) - call.started, 3),
            "finish_reason": call.usage.finish_reason if call.usage else None,
        }

    def _kept_units(self, call: Call) -> int:
        """Units a call started with, verified by the calls before it."""
        return self.request.target - call.resumed_from if call.resumed_from is not None else 0

    # ----- the result: built here, and only here --------------------------------------------------------
    def _finish(self) -> None:
        """End the run once: the current call (if it never ran) is recorded cancelled; the outcome is final."""
        if self._final is not None:
            return
        call = self.current
        if call.status == "running":
            self._end_call(call, cancelled=True)
        self._ended = time.monotonic()  # after the ending search and the scores: the time the writer waited
        self._final = self._outcome(final=True)
        self.status = self._final.status

    def outcome(self) -> Outcome:
        """The result so far (final once the stream has ended)."""
        return self._final if self._final is not None else self._outcome(final=False)

    def _outcome(self, *, final: bool) -> Outcome:
        """The one place an outcome is built: live (as if the output ended now) or final, of every run."""
        req, call = self.request, self.current
        raw, status, cut = self._kept(call) if final else (self.raw, "running", False)
        text, n, errors, end, draft = self._read(call, raw, reuse=final and not cut)
        if status == "failed":  # no text arrived: nothing to count, so no marker errors either
            errors, draft = [], None
        usage = call.usage
        outcome = Outcome(
            request=req,
            model=self.backend.model,
            label=self.backend.label,
            base_url=self.backend.base_url,
            mode=self.mode,
            prompt=self.prompt,
            raw=raw,
            text=text,
            count=n,
            errors=errors,
            countdown_end=end,
            status=status,
            draft=draft,
            notice=self.notice,
            failure=self._failure(call),
            failure_kind=call.failure.kind if call.failure else None,
            prompt_tokens=total(c.prompt_tokens for c in self.calls),
            completion_tokens=total(c.completion_tokens for c in self.calls),
            seconds=(self._ended or call.ended or time.monotonic()) - self.started,
            first_token_seconds=self.first_token,
            finish_reason=usage.finish_reason if usage else None,
            fluency=fluency(usage.logprobs) if usage else None,
            attempts=self.attempts,
            end_probability=self._end_probability if final else None,
            planned_ending=self._plan if final else None,
            foreign=self.language_note is not None,
        )
        if final:
            outcome.notice = self._notice(status, outcome.verified, cut)
        return outcome

    def _kept(self, call: Call) -> tuple[str, Status, bool]:
        """(raw, status, cut) of the ended run: a run that may repair keeps only its verified countdown."""
        raw, status = self.raw, call.status
        ver = verified(call.parser) if self.max_calls > 1 else None
        if ver is None or not ver.complete:
            return raw, status, False
        if status == "cancelled" and call.stopped and not self._stopping.is_set():
            status = "complete"  # we stopped it at overshoot after a right <0>
        kept = ver.kept(raw)  # no preamble, nothing after <0>
        return kept, status, kept.strip() != raw.strip()

    def _read(self, call: Call, raw: str, *, reuse: bool) -> tuple[str, int, list[MarkerError], int | None, str | None]:
        """(text, count, errors, countdown end, draft) of `raw`: the call's own parse when it ended and `raw` is
        what it parsed, else `raw` parsed afresh."""
        if call.parser is None:
            text = self._plain_text(raw)
            return text, count(text, self.request.count_unit), [], None, None
        result = call.result if reuse and call.result is not None else _parse(raw, self.request, self.mode)
        text, n = result.text, result.count
        if self.rewrite is not None and (plain := self._plain_text(text)) != text.strip():
            text, n = plain, count(plain, self.request.count_unit)  # a preamble the model wrote as part of it
        return text, n, list(result.errors), result.countdown_end, result.draft

    def _plain_text(self, raw: str) -> str:
        """The text of a reply without markers; a free rewrite's without what the model said around it."""
        if self.rewrite is None or self.rewrite.selection:
            return raw.strip()
        return strip_preamble(raw, self.rewrite.source)

    def _notice(self, status: Status, verified_now: bool, cut: bool) -> str | None:
        parts = [self.notice] if self.notice else []
        reasoning = total(c.usage.reasoning_tokens if c.usage else None for c in self.calls)
        if reasoning:
            parts.append(f"{self.backend.model} spent {reasoning} output tokens on reasoning.")
        calls = len(self.calls)
        repairs = [c for c in self.calls[1:] if c.resumed_from is not None]
        if repairs:
            starts = ", ".join(f"<{c.resumed_from}>" if self._kept_units(c) else "the start" for c in repairs)
            parts.append(f"Repaired: {calls} calls; the countdown was continued from {starts}.")
        if self._cut_tail and status == "complete":
            words = len(self._cut_tail.split())
            parts.append(
                f"Ended at the last natural sentence end inside the limit; the {words} word(s) after it were left out."
            )
        if cut:
            parts.append("Text outside the countdown (before its first marker or after <0>) was cut.")
        if self.max_calls > 1 and status != "cancelled" and not verified_now and calls >= self.max_calls:
            parts.append(f"Still not verified after {calls} calls, the most allowed; every call is kept with the run.")
        return " ".join(parts) or None

    def _failure(self, call: Call) -> str | None:
        if call.failure is None or call.resumed_from is None:
            return call.failure.message if call.failure else None
        kept = self._kept_units(call)
        return (
            f"Repair call {call.number} of {self.max_calls} (from <{call.resumed_from}>) failed: "
            f"{call.failure.message} The {kept} verified unit(s) before it are kept."
        )


def faithfulness_json(found: Faithfulness | None) -> dict[str, Any]:
    """A rewrite's faithfulness as stored with the run (rewrite.faithfulness_fields), nothing for any other run."""
    return faithfulness_fields(found)


def _limit(usage: Usage, options: Options) -> int | None:
    """The output limit that was reached: a reasoning model's budget (and its count) includes its reasoning, so
    it spent more than the text's `max_tokens`."""
    return max(usage.completion_tokens or 0, options.max_tokens or 0) or None


def _reasoning_part(usage: Usage) -> str:
    """`, 812 of them on reasoning`: why a reasoning model ran out of budget with little text."""
    return f", {usage.reasoning_tokens} of them on reasoning" if usage.reasoning_tokens else ""


def _parser(req: Request, mode: Mode) -> MarkerParser:
    return MarkerParser(req.target, req.lang, req.count_unit, draft=mode == "draft-capel", code=req.code)


def _parse(raw: str, req: Request, mode: Mode) -> ParseResult:
    """`raw` parsed as a whole: the live result as if the output ended now, or a repaired run's cut text."""
    probe = _parser(req, mode)
    probe.feed(raw)
    return probe.close()


def _fluency(usage: Usage | None) -> float | None:
    return fluency(usage.logprobs) if usage is not None else None


def generate(backend: Backend, request: Request) -> Outcome:
    """Run one request to the end (benchmarks, tests); the same path the app streams through."""
    return Generation(backend, request).run()

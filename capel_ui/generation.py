"""One generation, end to end: prompt → backend stream → validator → outcome.

The CLI, the Write and Compare pages and the benchmark runner all go through `Generation`, so a run is
prompted, validated, timed and classified (complete / partial / failed / cancelled) the same way
everywhere. Whatever text arrived is kept, whatever went wrong.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .backends import Backend, BackendError, CancelToken, Options, Usage, uses_fallback
from .counting import count
from .grammar import Grammar, grammar_for, lexicon_rules, supports, target_grammar, with_word_list
from .parser import MarkerError, MarkerParser, check_fields
from .prompts import build_messages, validate_target
from .quality import fluency
from .verdict import Target, Verdict, judge
from .vocab import (
    DEFAULT_UNIT,
    GRAMMAR_MODES,
    LANGS,
    MARKER_LIMITS,
    MARKER_MODES,
    MAX_CALLS,
    MODES,
    Lang,
    Mode,
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
    time_limit: float | None = None  # seconds for the whole run; what arrived by then is kept
    word_list: bool = True  # guaranteed modes on llama.cpp draw words from a word list (grammar.lexicon_rules)
    max_calls: int | None = None  # repair bound (see repair.py); None: 3 on models without a grammar, else 1
    target_kind: TargetKind = "exactly"
    target_low: int | None = None

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
    if request.max_tokens is not None and request.max_tokens < 1:
        raise ValueError(f"the output limit must be at least 1 token, got {request.max_tokens}")
    if request.time_limit is not None and request.time_limit <= 0:
        raise ValueError(f"the time limit must be more than 0 seconds, got {request.time_limit:g}")
    if request.max_calls is not None and not 1 <= request.max_calls <= MAX_CALLS:
        raise ValueError(f"max calls must be from 1 (no repair) to {MAX_CALLS}, got {request.max_calls}")
    if request.mode in MARKER_MODES and not markers_can_count(request.lang, request.count_unit, request.target_kind):
        raise ValueError(MARKER_LIMITS)
    if request.mode in GRAMMAR_MODES:
        if not supports(request.lang, request.count_unit):
            raise ValueError(f"{request.mode} mode guarantees {grammar_units_text()}, not {request.count_unit}")
        if grammar_kind(request.lang, request.count_unit) == "chars" and request.target < 2:
            raise ValueError("a character target in exact mode must allow at least 2 characters (a word and its stop)")
        if backend is not None and not backend.capabilities.grammar:
            raise ValueError(
                f"{backend.label} does not take a grammar, so {request.mode} mode is not available; "
                "use the embedded model, a GGUF file, a GPT-5-family model, or a server that takes a grammar "
                "(--grammar-field)"
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
    attempts: list[dict[str, Any]] = field(default_factory=list)  # one per call of a repaired run (repair.py)

    @property
    def calls(self) -> int:
        """Model calls this outcome took: 1 unless it was repaired."""
        return max(len(self.attempts), 1)

    @property
    def target(self) -> int:
        return self.request.target

    @property
    def verdict(self) -> Verdict:
        return judge(self.status, self.count, self.request.target_spec, self.errors)

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
            "calls": self.calls,
            "attempts": self.attempts,
        }


@dataclass
class Generation:
    """A run in progress: iterate `stream()` for text chunks; read the live countdown between chunks.

    `cancel()` may be called from any thread; the stream stops at the next chunk and keeps what arrived.
    """

    backend: Backend
    request: Request
    mode: Mode = field(init=False)
    notice: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        validate_request(self.request, self.backend)
        req = self.request
        self.mode = req.mode
        if req.mode in ("capel", "draft-capel") and req.allow_fallback and uses_fallback(self.backend.model):
            self.mode = "baseline"
            self.notice = (
                f"{self.backend.model} is known to misread the countdown (paper §4.3), so the baseline instruction "
                "was used; turn off the fallback to force CAPEL."
            )
        self._cancel = CancelToken()  # the user's Stop, or our own stop (`_stopped`); aborts the request
        self._stopped: BackendError | None = None  # why the run stopped itself: far past the target, time limit
        self._next_check = 0  # the raw length at which the overrun check counts again
        limit = None if req.plain else (req.count_unit, req.target_kind, req.target_spec.low)
        self.messages = build_messages(req.instruction, req.lang, req.target, self.mode, code=req.code, limit=limit)
        grammar = self._grammar()  # each backend sends it in its server's syntax
        self.options = Options(
            temperature=req.temperature,
            top_p=req.top_p,
            max_tokens=req.max_tokens or default_max_tokens(req),
            grammar=grammar,
            seed=req.seed,
            cancel=self._cancel,
            logprobs=True,
        )
        self.parser: MarkerParser | None = None
        if self.mode in MARKER_MODES:
            self.parser = MarkerParser(
                req.target, req.lang, req.count_unit, draft=self.mode == "draft-capel", code=req.code
            )
        self._parts: list[str] = []
        self._lock = threading.Lock()  # the stream may run in a worker thread while the UI reads live state
        self._count_cache: tuple[int, int] = (0, 0)
        self.status: Status = "running"
        self.usage: Usage | None = None
        self.failure: BackendError | None = None
        self.started = time.monotonic()
        self.first_token: float | None = None
        self.ended: float | None = None
        self._outcome: Outcome | None = None

    def _grammar(self) -> Grammar | str | None:
        """The guaranteed modes' grammar; on llama.cpp its words come from a word list (no glued words)."""
        req = self.request
        grammar: Grammar | str | None = grammar_for(self.mode, req.lang, req.target)
        if self.mode == "exact":  # any target kind and unit; a character limit is GBNF text (Lark by conversion)
            spec = req.target_spec
            grammar = target_grammar(req.lang, req.count_unit, spec.low, spec.high)
        if isinstance(grammar, Grammar) and req.word_list and self.backend.capabilities.grammar_field == "grammar":
            return with_word_list(grammar, lexicon_rules(req.lang, req.instruction))
        return grammar

    @property
    def prompt(self) -> str:
        return self.messages[-1]["content"]

    # ----- live state ---------------------------------------------------------------------------------
    @property
    def raw(self) -> str:
        with self._lock:
            if len(self._parts) > 1:
                self._parts = ["".join(self._parts)]
            return self._parts[0] if self._parts else ""

    @property
    def units_done(self) -> int:
        if self.parser is not None:
            with self._lock:
                return self.parser.units_done
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
        if self.parser is None:
            return []
        with self._lock:
            return self.parser.errors

    @property
    def in_draft(self) -> bool:
        return self.parser is not None and self.parser.in_draft

    def cancel(self) -> None:
        """Stop the stream now (safe from any thread): the request is aborted, also before the first token."""
        self._cancel.set()

    def _stop(self, kind: str, message: str) -> None:
        """Stop the run on our own account, keeping what arrived and saying why (`overrun`, `deadline`)."""
        if not self._cancel.is_set():
            self._stopped = BackendError(kind, message)  # type: ignore[arg-type]
            self._cancel.set()

    def _past_limit(self) -> bool:
        """Whether the text is far past the target (see `overrun_limit`); counts again only once the raw text
        has grown by a tenth, so a long stream costs linear time."""
        limit = overrun_limit(self.request, self.mode)
        raw = self.raw
        if len(raw) > limit * OVERRUN_CHARS_PER_UNIT:
            return True
        if len(raw) < self._next_check:
            return False
        self._next_check = int(len(raw) * 1.1) + 64
        done = count(_MARKER_TEXT.sub(" ", raw), self.request.count_unit)
        return max(done, self.units_done) > limit

    def _overrun(self) -> None:
        req = self.request
        n = count(_MARKER_TEXT.sub(" ", self.raw), req.count_unit)
        self._stop(
            "overrun",
            f"Stopped at {n} {unit_label(req.count_unit)}, far past the target of {req.target}: the model was not "
            "counting down. The text that arrived is kept; try again, or use an Exact mode.",
        )

    def _deadline(self) -> None:
        self._stop(
            "deadline",
            f"Stopped at the time limit of {self.request.time_limit:g} s; the text that arrived is kept. "
            "Raise the time limit (Options, or --time-limit) to let it finish.",
        )

    def abandon(self) -> None:
        """Called by the thread that owns the stream when it stops iterating: a run that never finished,
        or never even started, is recorded as cancelled rather than left running."""
        self._cancel.set()
        if self.status == "running":
            self._finish(cancelled=True)

    def preload(self, raw: str) -> None:
        """Start from output an earlier call wrote and a repair kept: this call's output continues it, and the
        two are parsed, counted and verified as one answer."""
        with self._lock:
            self._parts = [raw] if raw else []
            if self.parser is not None:
                self.parser.feed(raw)

    # ----- running --------------------------------------------------------------------------------------
    def stream(self) -> Iterator[str]:
        """Yield text chunks as they arrive. Never raises BackendError: a failure is kept on `failure`."""
        inner = self.backend.stream(self.messages, self.options)
        cancelled = False
        timer = None
        if self.request.time_limit is not None:
            timer = threading.Timer(self.request.time_limit - (time.monotonic() - self.started), self._deadline)
            timer.daemon = True
            timer.start()
        try:
            for item in inner:
                if isinstance(item, Usage):
                    self.usage = item
                    continue
                if self._cancel.is_set():
                    cancelled = True
                    break
                if self.first_token is None:
                    self.first_token = time.monotonic() - self.started
                with self._lock:
                    self._parts.append(item)
                    if self.parser is not None:
                        self.parser.feed(item)
                yield item
                if self._past_limit():
                    self._overrun()
                    break
        except BackendError as exc:
            self.failure = exc
        except BaseException:  # closed early, Ctrl-C, or an unexpected error: the run did not complete
            cancelled = True
            raise
        finally:
            if timer is not None:
                timer.cancel()
            inner.close()
            self._finish(cancelled or self._cancel.is_set())

    def run(self) -> Outcome:
        """Consume the whole stream (no live display) and return the outcome."""
        for _ in self.stream():
            pass
        return self.outcome()

    def _finish(self, cancelled: bool) -> None:
        self.ended = time.monotonic()
        if self._stopped is not None:  # our own stop: its reason, not the aborted connection, is the failure
            self.failure, cancelled = self._stopped, False
        elif cancelled:  # the user's Stop: an error from the aborted request is not a failure
            self.failure = None
        if self.failure is None and not cancelled and self.usage and self.usage.finish_reason == "length":
            # Cut off by the output budget: the text is not finished, so it is partial, never verified.
            self.failure = BackendError(
                "length",
                f"The model stopped at the output limit ({_limit(self.usage, self.options)} tokens) before finishing"
                f"{_reasoning_part(self.usage)}; the text that arrived is kept. Raise the output limit (Options, or "
                "--max-tokens) and run again.",
            )
        if self.usage and self.usage.reasoning_tokens:
            spent = f"{self.backend.model} spent {self.usage.reasoning_tokens} output tokens on reasoning."
            self.notice = f"{self.notice} {spent}" if self.notice else spent
        if self.failure is not None:
            self.status = "partial" if self.raw.strip() else "failed"
        elif cancelled:
            self.status = "cancelled"
        else:
            self.status = "complete"

    def outcome(self) -> Outcome:
        """The result so far (final once the stream has ended)."""
        if self._outcome is not None:
            return self._outcome
        req = self.request
        raw = self.raw
        draft = None
        if self.parser is not None:
            result = self.parser.close() if self.status != "running" else _peek(raw, req, self.mode)
            text, n, errors, end, draft = (
                result.text,
                result.count,
                list(result.errors),
                result.countdown_end,
                result.draft,
            )
        else:
            text = raw.strip()
            n, errors, end = count(text, req.count_unit), [], None
        if self.status == "failed":  # no text arrived: nothing to count, so no marker errors either
            errors, draft = [], None
        usage = self.usage
        seconds = (self.ended or time.monotonic()) - self.started
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
            status=self.status,
            draft=draft,
            notice=self.notice,
            failure=self.failure.message if self.failure else None,
            failure_kind=self.failure.kind if self.failure else None,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            seconds=seconds,
            first_token_seconds=self.first_token,
            finish_reason=usage.finish_reason if usage else None,
            fluency=fluency(usage.logprobs) if usage else None,
        )
        if self.status != "running":
            self._outcome = outcome
        return outcome


def _limit(usage: Usage, options: Options) -> int | None:
    """The output limit that was reached: a reasoning model's budget (and its count) includes its reasoning, so
    it spent more than the text's `max_tokens`."""
    return max(usage.completion_tokens or 0, options.max_tokens or 0) or None


def _reasoning_part(usage: Usage) -> str:
    """`, 812 of them on reasoning`: why a reasoning model ran out of budget with little text."""
    return f", {usage.reasoning_tokens} of them on reasoning" if usage.reasoning_tokens else ""


def _peek(raw: str, req: Request, mode: Mode) -> Any:
    """The result as if the output ended now, without closing the live parser."""
    probe = MarkerParser(req.target, req.lang, req.count_unit, draft=mode == "draft-capel", code=req.code)
    probe.feed(raw)
    return probe.close()


def generate(backend: Backend, request: Request) -> Outcome:
    """Run one request to the end (benchmarks, tests); the same path the app streams through."""
    return Generation(backend, request).run()

"""One run, end to end: prompt → backend stream(s) → validator → outcome.

The CLI, the Write and Compare pages and the benchmark runner all go through `Generation`, the one run
object, so a run is prompted, validated, timed and classified (complete / partial / failed / cancelled) the
same way everywhere. A run holds its list of calls (`Call`: one request and its stream); repair (repair.py) is
its policy for starting the next call, so a one-call run and a repaired run are the same object and their
outcome is built in one place. Whatever text arrived is kept, whatever went wrong.

The run's jobs live in modules named for them: the request and its budget (request.py), what is sent and by which
route (plan.py), the stops (limits.py), the outcome and its wording (outcome.py), the ending (planned.py). This
module keeps the calls and their stream, and applies the ending planner's decision.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .backends import Backend, BackendError, CancelToken, Options, Usage
from .call import Call
from .counting import RunningCount, count
from .ending import NOT_SCORED
from .grammar import AnyGrammar
from .limits import Limits
from .outcome import Outcome, attempt, build, faithfulness_json, length_failure
from .parser import MarkerError, MarkerParser
from .plan import RunPlan
from .planned import CLOSINGS, HAN, WORD, EndingPlanner, Planned, total
from .prompts import Message
from .quality import LIST_WATCH, SENTENCE_STOP, list_start, number_list
from .redact import SecretMasker
from .repair import ReplyFilter, continuation_messages, verified, worthless
from .request import OVERRUN_CHARS_PER_UNIT, Request, default_max_tokens, overrun_limit, validate_request
from .runview import RunView
from .vocab import FAILURES, Mode, Phase, Status, Unit

FIRST_STOP = re.compile(r"[.!?。！？]")
"""A text's first stop: no sentence (`ending.sentence_ends`) ends before it, nor may a call asking for more."""
_DIGIT = re.compile(r"\d")
NEAR_END = 40
"""Characters from the end of a streaming text a number must be in for its list watch to look (a section heading
is one only once the capitalised word after its number has come: "1.1.1133 Tips")."""
TURNED_TO_LIST = "it turned into a list of numbers nobody asked for"
"""Why a run stopped its first call (`Call.stopped`) to write the rest again (`RunPlan.drops_lists`)."""

__all__ = [
    "OVERRUN_CHARS_PER_UNIT",
    "Call",
    "Generation",
    "Outcome",
    "Request",
    "default_max_tokens",
    "faithfulness_json",
    "generate",
    "overrun_limit",
    "validate_request",
]


@dataclass
class ListWatch:
    """Whether a run's first call turned into a number list or a numbered section nobody asked for
    (`RunPlan.drops_lists`, `quality.list_start`), where, and what the call wrote (`listed`, kept with the plan)."""

    plan: RunPlan
    at: int | None = None
    listed: dict[str, Any] | None = None
    watching: bool = False  # the text has had `LIST_WATCH` words: from then on asked with a number near its end

    def turned(self, call_number: int, raw: str) -> bool:
        """Whether the first call's text so far (`raw`) has just turned into a list (`at`: where it began). Asked
        once the text has `LIST_WATCH` words (a heading it opened with), then only with a number near its end (a
        list is one from a number on), so a long text costs linear time."""
        if not self.plan.drops_lists or call_number != 1:
            return False
        starts = not self.watching and len(raw.split()) >= LIST_WATCH
        if not starts and not (self.watching and _DIGIT.search(raw, max(0, len(raw) - NEAR_END))):
            return False
        self.watching = True
        self.at = list_start(raw, self.plan.request.instruction)
        return self.at is not None

    def again(self, raw: str, unit: Unit) -> str:
        """The text the rest is written again from: up to the last sentence before the list, or nothing where it
        began in the first sentence. What the call wrote is kept in `listed`."""
        at = self.at or 0
        kept = _up_to_stop(raw, at)
        self.listed = {"list": number_list(raw[at:]) or raw[at:][:40], "kept": count(kept, unit), "written": raw}
        return kept

    @property
    def kept(self) -> int:
        """The units the rest is written again after."""
        return self.listed["kept"] if self.listed else 0


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
        self.plan = plan = RunPlan.of(self.backend, self.request)  # ValueError for a request it cannot run
        self.mode, self.notice, self.max_calls = plan.mode, plan.notice, plan.max_calls
        self.messages, self.prompt, self.plan_units = plan.messages, plan.prompt, plan.plan_units
        self._lock = threading.Lock()  # the stream may run in a worker thread while the UI reads live state
        self.secrets = tuple(getattr(self.backend, "secrets", ()) or ())  # the key in use (guard.py): calls mask it
        self._count = RunningCount(self.request.count_unit)  # a long free answer costs linear time, not quadratic
        self._final: Outcome | None = None
        self.ended: float | None = None  # when the run ended, its ending chosen and scored (`_finish`)
        self.attempts: list[dict[str, Any]] = []  # what each finished call did (kept by a run that may repair)
        self.end_probability: float | None = None
        self.planned_ending: dict[str, Any] | None = None  # what a planned ending weighed (Outcome.planned_ending)
        self.cut_tail: str | None = None  # what a bounded run left out after the sentence it ended at
        self.more: dict[str, Any] | None = None  # where the model ended an exact answer before N, and what was asked
        self.lists = ListWatch(self.plan)  # where the first call turned into a list nobody asked for, if it did
        self._more_from = ""  # the text a call for more goes on from (`_before_more`)
        self._settled_at: int | None = None  # where a planned run's clean text stops being settled (`settled_text`)
        self.status: Status = "running"
        self.started = time.monotonic()
        self.limits = Limits(self.request, self.mode, self)
        self.calls: list[Call] = []
        self.planner = EndingPlanner(self.backend, plan, self.limits.halted)
        self._add_call()

    def _add_call(
        self,
        kept: str = "",
        resumed_from: int | None = None,
        countdown: str = "",
        goes_on: tuple[list[Message], AnyGrammar | None] | None = None,
    ) -> None:
        """Start the next call: the first from the prompt; a repair call from the `kept` prefix, as a prefill
        where the server continues one, else quoted in the user message (repair.py); a call that goes on from `kept`
        (its prefill) with other messages and grammar (`goes_on`: the call for more content, or the rest of a text
        that turned into a list written again), read as it comes."""
        req, number = self.request, len(self.calls) + 1
        seed = req.seed + number - 1 if req.seed is not None else None  # the same seed would write the same again
        options = Options(
            temperature=req.temperature,
            top_p=req.top_p,
            max_tokens=req.max_tokens or default_max_tokens(req),
            grammar=goes_on[1] if goes_on else self.plan.grammar,  # each backend sends it in its server's syntax
            seed=seed,
            cancel=CancelToken(),
            logprobs=True,
        )
        messages = goes_on[0] if goes_on else self.messages
        if kept and (self.backend.capabilities.prefill or goes_on):
            options = dataclasses.replace(options, prefill=kept)
        elif kept:
            messages = continuation_messages(req, self.prompt, kept, resumed_from or 0)
        parser = None if goes_on else self.plan.parser()
        if parser is not None:
            parser.feed(kept)  # the continuation is parsed, counted and verified as one answer with the kept part
        reader = ReplyFilter(from_marker=bool(kept) and not goes_on, echo=countdown)
        call = Call(
            number,
            messages,
            options,
            parser,
            reader,
            SecretMasker(self.secrets),
            resumed_from,
            parts=[kept] if kept else [],
        )
        with self._lock:
            self.calls.append(call)
        if self.limits.stopping.is_set():
            call.cancel.set()
        if self.limits.expired.is_set():
            self.limits.deadline()

    @property
    def current(self) -> Call:
        return self.calls[-1]

    @property
    def stopped_by_writer(self) -> bool:
        """The writer pressed Stop (outcome.py: a run we stopped ourselves after a right <0> is complete)."""
        return self.limits.stopping.is_set()

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
        return self._count(self.raw)

    @property
    def errors(self) -> list[MarkerError]:
        parser = self.parser
        if parser is None:
            return []
        with self._lock:
            return parser.errors

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
        `plan_units` units (the ending search may write them again), and while its first call may still be padded
        (`RunPlan.fills`) or the padded text may still beat the answer for more, nothing after what both begin with
        (`_before_more`); while a first call may still turn into a list, nothing after its last stop before a
        number (`_before_list`); under a limit nothing (the run may end at an earlier sentence); else all units so
        far."""
        if self.plan.bounded:
            return ""
        parser = self.parser
        if parser is None:
            text = self.raw
        else:
            with self._lock:
                text = parser.verified_text() if self.max_calls > 1 else parser.text_so_far()
        if self.plan.drops_lists and len(self.calls) == 1:  # what a list that may still begin leaves standing
            text = _before_list(text)
        if self.plan.fills:  # an exact run that may ask for more: its second call may be that one
            text = _before_more(text, self._more_from)
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
            done, of = self.planner.tries
            tries = f": {done} of {of} tries" if of else ""
            return f" · choosing an ending{tries} (its last sentence reads cut off)"
        if self.lists.listed is not None and self._final is None and call.number == 2:
            return f" · {TURNED_TO_LIST}: writing it again from word {self.lists.kept + 1}"
        if self.more is not None and self._final is None and call.number == 2:
            return f" · the answer wanted to end at {self.more['ended_at']} words: asking for {self.more['asked']} more"
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
        phase: Phase
        if self._final is not None:
            phase = "saving" if saving else "done"
        elif self.planner.closing or self.planner.searching:
            phase = "choosing an ending"
        elif call.resumed_from is not None:
            phase = "repairing"
        else:
            phase = "drafting" if (parser := self.parser) is not None and parser.in_draft else "writing"
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
            phase=phase,
            note=self.live_note(),
            call=call.number,
            max_calls=self.max_calls,
            started=self.started,
            time_limit=self.request.time_limit,
            notice=self.notice,
            rewrite_route=self.plan.rewrite.described if self.plan.rewrite else None,
        )

    def cancel(self) -> None:
        """Stop the stream now (safe from any thread): the request is aborted, also before the first token."""
        self.limits.stopping.set()
        self.current.cancel.set()

    def abandon(self) -> None:
        """Called by the thread that owns the stream when it stops iterating: a run that never finished,
        or never even started, is recorded as cancelled rather than left running."""
        self.cancel()
        self._finish()

    # ----- running --------------------------------------------------------------------------------------
    def stream(self) -> Iterator[str]:
        """Yield text chunks of every call in turn as they arrive. Never raises BackendError: a failure is kept
        on its call; the outcome is built however the loop ends. The time limit is for the whole run."""
        end_limits = self.limits.start(self.started)
        try:
            while True:
                yield from self._stream_call(self.current)
                if not self._next_call():
                    break
            self._plan_ending()
        finally:
            end_limits()
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
        self.limits.last_text = time.monotonic()  # the stall limit counts from each call's start
        try:
            for item in inner:
                if isinstance(item, Usage):
                    call.usage = item
                    text = call.release() + call.reader.flush()
                else:
                    if call.cancel.is_set():
                        cancelled = True
                        if rest := call.release():
                            self._take(call, rest)  # what arrived before the Stop, held back as a key's start
                        break
                    call.chunks += 1
                    self.limits.last_text = time.monotonic()
                    text = call.read(call.masker.feed(item))
                if not text:
                    continue
                self._take(call, text)
                yield text
                if not last and (reason := worthless(call.parser, self.raw)):
                    call.stopped, cancelled = reason, True  # the rest is paid for but thrown away: stop it
                    break
                if self.lists.turned(call.number, self.raw):
                    call.stopped, cancelled = TURNED_TO_LIST, True  # written again from before it (`ListWatch.again`)
                    break
                if self.limits.past_limit(call, self.units_done):
                    self.limits.overrun()
                    break
        except BackendError as exc:
            call.failure = exc
            if rest := call.release():
                self._take(call, rest)  # a cut stream keeps all that arrived
        except BaseException:  # closed early, Ctrl-C, or an unexpected error: the run did not complete
            cancelled = True
            raise
        finally:
            inner.close()  # stopping a call closes its HTTP response
            call.reader.flush()
            self._end_call(call, cancelled or call.cancel.is_set())

    # ----- the ending, planned once the calls are done (planned.py decides, the run applies) ------------
    def _plan_ending(self) -> None:
        """An exact text whose own ending reads cut off gets it written again where the model would end a phrase
        (`EndingPlanner.search`); a text under a limit or in a range ends at the last sentence end the model would
        end on (`EndingPlanner.end_naturally`; what was left out is said in the notice); then a complete text gets
        its ending score. Nothing changes for a stopped, cut or failed run, or where no better ending is found.
        Where a call asked for more content (`_ask_more`), the padded first text is planned too, and the answer for
        more stands only if it reads better (`EndingPlanner.more_reads_better`); else it is kept aside."""
        call, halted = self.current, self.limits.halted
        planned: Planned | None = None
        began = time.monotonic()
        if self.plan_units and call.status == "complete" and not halted():
            tries, found = [self.raw], [self.planner.search(self.raw, self.plan_units)]
            # the padded first text too, while the answer for more stands (not after it broke or was stopped) and
            # unless it stands whatever the padded text reads like (no second search: issue 31's speed)
            if self.more and self.more["kept"] and not self.planner.more_stands_alone(found[0].raw or self.raw):
                tries.append(self.more["written"])
                found.append(self.planner.search(self.more["written"], self.plan_units))
            texts = [p.raw or raw for p, raw in zip(found, tries, strict=True)]
            pick = 0 if len(texts) == 1 or self.planner.more_reads_better(texts[1], texts[0]) else 1
            if pick and self.more is not None:  # the padded text stands; the answer for more stays with the run
                self.more.update(kept=False, answer=tries[0])
            planned = found[pick]
            self.planned_ending = planned.plan
            if texts[pick] != self.raw:
                self._replace(call, texts[pick])
        if self.plan.bounded and not halted() and call.status == "complete" and call.parser is None:
            planned = self.planner.end_naturally(self.raw, call.messages, call.options)
            if planned is not None:
                self.planned_ending = planned.plan
                if call.usage is not None:  # the rival closings' tokens are the run's too
                    tokens = total((call.usage.completion_tokens, planned.extra_tokens))
                    call.usage = dataclasses.replace(call.usage, completion_tokens=tokens)
                if planned.raw is not None:
                    self._replace(call, planned.raw)
                    self.cut_tail = planned.cut_tail
        if self.more is not None:  # what the model wrote before it was asked for more is kept with the plan
            self.planned_ending = {**(self.planned_ending or {}), "more": self.more}
        if self.lists.listed is not None:  # and what it wrote before it turned into a list
            self.planned_ending = {**(self.planned_ending or {}), "list": self.lists.listed}
        if not halted() and (done := build(self, final=True)).status == "complete":
            self.end_probability = self.planner.score(done.text)
            if done.text.strip() in self.planner.unanswered:  # said beside the verdict, not left without a label
                self.planned_ending = {**(self.planned_ending or {}), "not_scored": NOT_SCORED}
        if self.planned_ending is not None:  # the wait a plan added to the run's own calls (benchmarks/quality.py)
            self.planned_ending["seconds"] = round(time.monotonic() - began, 3)

    def _replace(self, call: Call, raw: str) -> None:
        """Make `raw` the call's whole reply, parsed afresh (a planned ending replaced the model's own)."""
        with self._lock:
            call.parts[:] = [raw]
            if call.parser is not None:
                call.parser = self.plan.parser()
                assert call.parser is not None
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
            call.failure = length_failure(usage, call.options)  # cut off by the output budget: partial
        if call.failure is not None:
            call.status = "partial" if self.raw.strip() else "failed"
        else:
            call.status = "cancelled" if cancelled else "complete"
        if call.parser is not None:
            with self._lock:
                call.result = call.parser.close()
        if self.max_calls > 1:
            self.attempts.append(attempt(self.request, call))

    def _next_call(self) -> bool:
        """Start the next call if this one went wrong and another is allowed, or if the model ended an exact answer
        before N (`_ask_more`); False when the run is over."""
        call = self.current
        if self.more is not None and (call.failure is not None or call.status == "cancelled"):
            # the call for more broke or was stopped: the first text, complete and verified, stands
            if call.failure is not None:
                self.more["failure"] = FAILURES[call.failure.kind].meaning
            self.more.update(kept=False, answer=self.raw, stopped=call.failure is None)
            with self._lock:
                self.calls.pop()
            return False
        if self.limits.halted() or (call.status == "cancelled" and not call.stopped):
            return False
        if call.stopped == TURNED_TO_LIST:  # the rest written again, with no number (`ListWatch`)
            kept = self.lists.again(self.raw, self.request.count_unit)
            self._settled_at = None  # found again in the new text
            self._add_call(kept, goes_on=(self.messages, self.plan.rest(self.lists.kept, numbers=False)))
            return True
        if self._ask_more(call):
            return True
        if call.failure is not None and not FAILURES[call.failure.kind].resume:
            return False  # a cut, a 429 or a timeout: keep what is verified, say what happened
        ver = verified(call.parser)
        if ver is None or ver.complete or call.number >= self.max_calls:
            return False
        raw = self.raw
        self._add_call(ver.kept(raw), ver.next_marker, raw[ver.start : ver.end])
        return True

    def _ask_more(self, call: Call) -> bool:
        """Where the model wanted to end an exact answer before N (`EndingPlanner.wanted_end`; `RunPlan.fills`), a
        second call goes on from that sentence end asking for new content for the room left, under a grammar of
        exactly that many units: the run plans for N instead of keeping the padding the grammar forced ("The end.",
        a sentence again). The first call's whole text is kept with the plan. False where nothing was padded."""
        if not self.plan.fills or call.number != 1 or call.status != "complete":
            return False
        raw = self.raw.strip()
        if count(raw, self.request.count_unit) != self.request.target or (at := self.planner.wanted_end(raw)) is None:
            return False
        kept = raw[:at]
        done = count(kept, self.request.count_unit)
        messages, grammar = self.plan.more(done)
        self.more = {"ended_at": done, "asked": self.request.target - done, "written": raw, "kept": True}
        self._more_from = kept
        self._add_call(kept, goes_on=(messages, grammar))
        return True

    # ----- the result: built in outcome.py, once final here ---------------------------------------------
    def _finish(self) -> None:
        """End the run once: the current call (if it never ran) is recorded cancelled; the outcome is final."""
        if self._final is not None:
            return
        call = self.current
        if call.status == "running":
            self._end_call(call, cancelled=True)
        self.ended = time.monotonic()  # after the ending search and the scores: the time the writer waited
        self._final = build(self, final=True)
        self.status = self._final.status

    def outcome(self) -> Outcome:
        """The result so far (final once the stream has ended)."""
        return self._final if self._final is not None else build(self, final=False)


def _before_list(text: str) -> str:
    """What stays of a text whatever list it turns into (`ListWatch.again` goes on from the last stop before
    the list, which begins at a number): the text up to its last such stop before its first digit."""
    digit = _DIGIT.search(text)
    return _up_to_stop(text, digit.start() if digit else len(text))


def _up_to_stop(text: str, before: int) -> str:
    """`text` up to its last stop before index `before` that a call may go on from (`quality.SENTENCE_STOP`), or ""."""
    stops = [m.end() for m in SENTENCE_STOP.finditer(text, 0, before)]
    return text[: stops[-1]] if stops else ""


def _before_more(text: str, more_from: str) -> str:
    """What stays of a filled exact text whatever a call for more does: while the first call streams, a call for more
    may go on from any sentence end, so only the first sentence; once one goes on from the wanted end (`more_from`),
    the text up to there, which the answer for more, the padded text and the first call's text all begin with."""
    if more_from and text.startswith(more_from):
        return more_from
    first_stop = FIRST_STOP.search(text)
    return text[: first_stop.end()] if first_stop else ""


def generate(backend: Backend, request: Request) -> Outcome:
    """Run one request to the end (benchmarks, tests); the same path the app streams through."""
    return Generation(backend, request).run()

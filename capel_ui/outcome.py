"""A run's outcome and its wording: built once, here, from the run's calls, live or final.

`build` is the one place an `Outcome` is built (the run asks for it while it streams and once when it ends);
`attempt` is what one call did, as stored with a run that may repair. The words a run says about itself (its
notice, a repair call's failure, the output limit reached) are written here too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .assessment import Assessment, assess
from .backends import Backend, BackendError, Options, Usage
from .backends.base import total
from .call import Call
from .counting import count, refusal
from .parser import MarkerError, check_fields
from .plan import RunPlan
from .prompts import rewrite_source
from .quality import fluency
from .redact import KEY_NOTICE, REPLACEMENT
from .repair import verified
from .request import Request
from .rewrite import Faithfulness, faithfulness, faithfulness_fields
from .verdict import Verdict, decide
from .vocab import Mode, Status


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
    planned_ending: dict[str, Any] | None = None  # the candidate endings a planned run chose from (planned.py)
    written: str | None = None  # the model's whole text where `text` keeps less or other of it (`whole_text`)
    assessment: Assessment | None = None  # the one judgement of the finished text (`assessment.assess`); None live

    @property
    def left_out(self) -> LeftOut | None:
        """Where the text parts from what the model wrote (a planned cut or ending); None where it kept it all."""
        return left_out(self.written, self.text)

    @property
    def faithfulness(self) -> Faithfulness | None:
        """How much of the writer's text a rewrite kept (rewrite.faithfulness); None for a run that is no rewrite.
        A finished run's is its assessment's."""
        if self.assessment is not None:
            return self.assessment.faithfulness
        source = rewrite_source(self.request.instruction)
        return None if source is None else faithfulness(source, self.text, self.request.lang)

    @property
    def score(self) -> float | None:
        """The offline 0-10 score of the finished text (its assessment's); None live, without text, or foreign."""
        return self.assessment.score if self.assessment is not None else None

    @property
    def calls(self) -> int:
        """Model calls this outcome took: 1 unless it was repaired."""
        return max(len(self.attempts), 1)

    @property
    def target(self) -> int:
        return self.request.target

    @property
    def verdict(self) -> Verdict:
        return decide(
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
            "written": self.written,
            "left_out": self.left_out.words if self.left_out else None,
            "calls": self.calls,
            "attempts": self.attempts,
            **faithfulness_json(self.faithfulness),
        }


class RunRecord(Protocol):
    """What an outcome is built from: a run (`generation.Generation`) as it stands."""

    @property
    def backend(self) -> Backend: ...
    @property
    def plan(self) -> RunPlan: ...
    @property
    def calls(self) -> Sequence[Call]: ...
    @property
    def raw(self) -> str: ...
    @property
    def started(self) -> float: ...
    @property
    def ended(self) -> float | None: ...
    @property
    def attempts(self) -> list[dict[str, Any]]: ...
    @property
    def end_probability(self) -> float | None: ...
    @property
    def planned_ending(self) -> dict[str, Any] | None: ...
    @property
    def cut_tail(self) -> str | None: ...
    @property
    def stopped_by_writer(self) -> bool: ...


def build(run: RunRecord, *, final: bool) -> Outcome:
    """The one place an outcome is built: live (as if the output ended now) or final, of every run."""
    plan, call = run.plan, run.calls[-1]
    raw, status, cut = _kept(run, call) if final else (run.raw, "running", False)
    text, n, errors, end, draft = _read(plan, call, raw, reuse=final and not cut)
    if status == "failed":  # no text arrived: nothing to count, so no marker errors either
        errors, draft = [], None
    usage = call.usage
    outcome = Outcome(
        request=plan.request,
        model=run.backend.model,
        label=run.backend.label,
        base_url=run.backend.base_url,
        mode=plan.mode,
        prompt=plan.prompt,
        raw=raw,
        text=text,
        count=n,
        errors=errors,
        countdown_end=end,
        status=status,
        draft=draft,
        notice=plan.notice,
        failure=_failure(plan, call),
        failure_kind=call.failure.kind if call.failure else None,
        prompt_tokens=total(c.prompt_tokens for c in run.calls),
        completion_tokens=total(c.completion_tokens for c in run.calls),
        seconds=(run.ended or call.ended or time.monotonic()) - run.started,
        first_token_seconds=run.calls[0].first_token,
        finish_reason=usage.finish_reason if usage else None,
        fluency=fluency(usage.logprobs) if usage else None,
        attempts=list(run.attempts),
        end_probability=run.end_probability if final else None,
        planned_ending=run.planned_ending if final else None,
        written=whole_text(plan, run.planned_ending, text) if final else None,
    )
    if final:
        outcome.notice = _notice(run, status, outcome.verified, cut, outcome.left_out)
        outcome.assessment = _assessed(outcome, plan.language_note)
    return outcome


def _assessed(outcome: Outcome, language_note: str | None) -> Assessment:
    """The finished text judged once, as every surface will show it."""
    req = outcome.request
    return assess(
        outcome.text,
        req.lang,
        req.instruction,
        fluency=outcome.fluency,
        end_probability=outcome.end_probability,
        language_note=language_note,
        unscored=(outcome.planned_ending or {}).get("not_scored"),
    )


def whole_text(plan: RunPlan, planned: dict[str, Any] | None, text: str) -> str | None:
    """The model's whole text, as clean as `text`, where a planned ending kept less or other of it: a limit's cut
    (`written`, the text before the cut) or an exact ending written again (`own`, when one was `chosen`). None where
    the text is all it wrote: nothing it wrote is lost, and "Put the words back" restores this."""
    planned = planned or {}
    if planned.get("written") is not None:
        whole = plan.plain_text(str(planned["written"]))
    elif planned.get("chosen"):
        whole = str(planned.get("own", {}).get("text") or "").strip()
    else:
        return None
    return whole if whole and whole != text.strip() else None


@dataclass(frozen=True)
class LeftOut:
    """A text beside the model's whole text: the start they share, the model's words the text leaves out after it,
    and what the text has in their place (a sentence's closing stop, an ending written again)."""

    shared: str
    dropped: str
    added: str

    @property
    def words(self) -> str:
        """The left-out words as a writer quotes them: "A New E.", not ": A New E."."""
        return self.dropped.lstrip(".!?,;:。！？，；： ").strip()


def left_out(written: str | None, text: str) -> LeftOut | None:
    """Where `text` parts from the model's whole text `written`, at a word's start (never inside a word); None where
    nothing was written apart or nothing was left out."""
    whole, text = (written or "").strip(), text.strip()
    if not whole or whole == text:
        return None
    pairs = zip(whole, text, strict=False)  # the shorter one ends the shared start
    at = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(whole), len(text)))
    if at and whole[at - 1].isalnum() and _word_goes_on(whole, text, at):
        while at and not whole[at - 1].isspace():
            at -= 1  # "…opens at nin|e" against "…opens at noon": part at "nine", not inside it
    found = LeftOut(whole[:at], whole[at:], text[at:])
    return found if found.words else None


def _word_goes_on(whole: str, text: str, at: int) -> bool:
    """Whether the word before `at` goes on in either text (so they part inside it)."""
    return any(at < len(t) and t[at].isalnum() for t in (whole, text))


def _kept(run: RunRecord, call: Call) -> tuple[str, Status, bool]:
    """(raw, status, cut) of the ended run: a run that may repair keeps only its verified countdown."""
    raw, status = run.raw, call.status
    ver = verified(call.parser) if run.plan.max_calls > 1 else None
    if ver is None or not ver.complete:
        return raw, status, False
    if status == "cancelled" and call.stopped and not run.stopped_by_writer:
        status = "complete"  # we stopped it at overshoot after a right <0>
    kept = ver.kept(raw)  # no preamble, nothing after <0>
    return kept, status, kept.strip() != raw.strip()


def _read(
    plan: RunPlan, call: Call, raw: str, *, reuse: bool
) -> tuple[str, int, list[MarkerError], int | None, str | None]:
    """(text, count, errors, countdown end, draft) of `raw`: the call's own parse when it ended and `raw` is
    what it parsed, else `raw` parsed afresh."""
    unit = plan.request.count_unit
    if call.parser is None:
        text = plan.plain_text(raw)
        return text, count(text, unit), [], None, None
    result = call.result if reuse and call.result is not None else plan.parse(raw)
    text, n = result.text, result.count
    if plan.rewrite is not None and (plain := plan.plain_text(text)) != text.strip():
        text, n = plain, count(plain, unit)  # a preamble the model wrote as part of it
    return text, n, list(result.errors), result.countdown_end, result.draft


def _list_notice(listed: dict[str, Any]) -> str:
    """Where the first call turned into a list nobody asked for (generation.ListWatch)."""
    kept = listed["kept"]
    where = f"from word {kept + 1}" if kept else "from the start"
    return (
        f"It turned into a list of numbers nobody asked for (“{listed['list']}”), so it was written again {where} "
        "on another seed (the first text is kept with the run)."
    )


def _more_notice(more: dict[str, Any]) -> str:
    """What became of the call for more content (generation.Generation._ask_more): kept, or why not."""
    ended, asked = more["ended_at"], more["asked"]
    if more.get("kept"):
        return (
            f"The model wanted to end after {ended} words; asked for more content, it wrote the other {asked} "
            "(its first text, padded to the count, is kept with the run)."
        )
    failure = more.get("failure")
    why = "was stopped" if more.get("stopped") else f"failed ({failure})" if failure else "read no better"
    return (
        f"The model wanted to end after {ended} words; asking it for {asked} more {why}, so its first text stands "
        "(the other answer is kept with the run)."
    )


def _notice(run: RunRecord, status: Status, verified_now: bool, cut: bool, apart: LeftOut | None) -> str | None:
    plan, all_calls = run.plan, run.calls
    parts = [plan.notice] if plan.notice else []
    reasoning = total(c.usage.reasoning_tokens if c.usage else None for c in all_calls)
    if reasoning:
        parts.append(f"{run.backend.model} spent {reasoning} output tokens on reasoning.")
    calls = len(all_calls)
    repairs = [c for c in all_calls[1:] if c.resumed_from is not None]
    if repairs:
        starts = ", ".join(f"<{c.resumed_from}>" if kept_units(plan.request, c) else "the start" for c in repairs)
        parts.append(f"Repaired: {calls} calls; the countdown was continued from {starts}.")
    if run.cut_tail and status == "complete":
        words = len(run.cut_tail.split())
        parts.append(
            f"Ended at “{_tail(run.raw)}”, the last natural sentence end inside the limit; left out: "
            f"“{run.cut_tail}” ({words} word(s), kept with the run)."
        )
    elif apart is not None and status == "complete" and apart.words == (run.planned_ending or {}).get("written"):
        parts.append(
            "Written again from the start: nothing the model first wrote ended on a whole word; its first text: "
            f"“{apart.words}” (kept with the run)."
        )
    elif apart is not None and status == "complete" and run.plan.bounded:  # a closing written in place of the tail
        parts.append(
            f"Ended with a closing the model wrote in place of its own ending; left out: “{apart.words}” "
            f"({len(apart.words.split())} word(s), kept with the run)."
        )
    searched = run.planned_ending or {}
    if searched.get("list"):  # said whatever became of the second call
        parts.append(_list_notice(searched["list"]))
    if searched.get("more") and status == "complete":
        parts.append(_more_notice(searched["more"]))
    if searched.get("chosen") and status == "complete":
        own = searched.get("own", {}).get("text", "")
        parts.append(
            f"The ending was written again to end naturally; the model's own: “{_tail(own)}” (kept with the run)."
        )
    if searched.get("not_scored") and status == "complete":  # the server timed out: said, not left unlabelled
        parts.append(f"The {searched['not_scored']}.")
    if any(c.masker.masked for c in all_calls):
        parts.append(KEY_NOTICE)
    if cut:
        parts.append("Text outside the countdown (before its first marker or after <0>) was cut.")
    invalid = sum("".join(c.reply).count(REPLACEMENT) for c in all_calls)  # backends/guard.py put them there
    if invalid:
        parts.append(
            f"The server sent {invalid} character(s) that are not valid Unicode (a lone surrogate escape or broken "
            "bytes); each is shown as \ufffd."
        )
    if plan.max_calls > 1 and status != "cancelled" and not verified_now and calls >= plan.max_calls:
        parts.append(f"Still not verified after {calls} calls, the most allowed; every call is kept with the run.")
    return " ".join(parts) or None


def _tail(text: str, most: int = 60) -> str:
    """The end of `text`, at most `most` characters from a word start, with "…" where it was longer."""
    text = text.strip()
    if len(text) <= most:
        return text
    cut = text[-most:]
    return "…" + cut[cut.find(" ") + 1 :] if " " in cut else "…" + cut


def _failure(plan: RunPlan, call: Call) -> str | None:
    if call.failure is None or call.resumed_from is None:
        return call.failure.message if call.failure else None
    kept = kept_units(plan.request, call)
    return (
        f"Repair call {call.number} of {plan.max_calls} (from <{call.resumed_from}>) failed: "
        f"{call.failure.message} The {kept} verified unit(s) before it are kept."
    )


def kept_units(request: Request, call: Call) -> int:
    """Units a call started with, verified by the calls before it."""
    return request.target - call.resumed_from if call.resumed_from is not None else 0


def attempt(request: Request, call: Call) -> dict[str, Any]:
    """What one call did, as stored with the run: where it resumed, what was wrong, tokens and time."""
    ver = verified(call.parser)
    wrong = ver.error if ver is not None else None
    return {
        "call": call.number,
        "resumed_from": call.resumed_from,
        "kept_units": kept_units(request, call),
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


def length_failure(usage: Usage, options: Options) -> BackendError:
    """A call cut off by the output budget: the text is not finished, so it is partial, never verified."""
    return BackendError(
        "length",
        f"The model stopped at the output limit ({_limit(usage, options)} tokens) before finishing"
        f"{_reasoning_part(usage)}; the text that arrived is kept. Raise the output limit (Options, or "
        "--max-tokens) and run again.",
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

"""The run lifecycle, the one path every surface takes: create the row, stream, save as it goes, close.

Write, Compare, the CLI, variants and the benchmark wrap their `Generation` (one run, however many calls) in a
`LiveRun`:
the row is created as the run starts (status `running`), saved at most every `SAVE_INTERVAL` seconds while
text arrives (so a killed process leaves the text of its last save), and saved once more with the final
status, verdict, timings and tokens in a `finally`, so a Stop click, a closed tab or Ctrl-C keep what
arrived. Pages and the CLI only draw what a LiveRun yields.

The database may fail under a run (a lock another process holds, a full disk, a read-only file): the text
never waits on it. The row is created in the background (`FIRST_SAVE_WAIT`): a locked database does not hold the
first words back while SQLite waits out its busy timeout. A failed first or progress save is logged and the
stream goes on; the final save is tried again (`save_retries`), creating the row then if it never could be; if it
still fails, `save_error` says where and why, and the surface shows the text with that message (the CLI exits 3).
A command that is stopping (a Ctrl-C: `hurry`) tries the final save once, so a database another program keeps
locked holds it one busy timeout (5 s), not the half minute of every retry.

A batch's row is two saves: created with its batch id and row key in the same INSERT (`batch=`), and closed; no
progress saves (`save_interval=None`: a killed batch writes the row again, so a half text is worth nothing to it).
Its row is created in the worker's own thread before the first call: no words of it are drawn as they arrive, so a
locked database holds back nothing anyone sees (one busy timeout at most, then the final save creates it), and a
thread started and joined a row cost the batch more than its INSERT (the handover waits for the interpreter lock).

What is saved is valid UTF-8 (`valid_text`) and never holds the key the run was sent with: a server that writes
the key into its answer gets it masked in the saved text (so in History and every export), and the notice says so.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from .assessment import Assessment, assess
from .backends import language_note, spec_of
from .counting import count, refusal
from .generation import Generation
from .outcome import Outcome, faithfulness_json, left_out
from .redact import KEY_NOTICE, mask_secrets, redact, valid_text
from .request import Request
from .rewrite import saved_faithfulness
from .runview import RunView
from .verdict import Target, Verdict, decide
from .vocab import HAND_EDIT, HAND_EDIT_MODEL, STALE_AFTER, DisplayStatus, Lang, Origin

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from .storage import RunRecord


def _db() -> Any:
    """The storage module, imported when a run is first saved or read: a command that keeps nothing (`--no-save`)
    never loads SQLAlchemy (a third of a second of its start)."""
    from . import storage

    return storage


SAVE_INTERVAL = 1.0
"""Seconds between saves of a streaming run: often enough to lose little, rarely enough to cost nothing."""

FIRST_SAVE_WAIT = 1.0
"""Seconds a new run waits for its row before streaming: the usual insert takes milliseconds (so the row exists
when the page or CLI asks for its id); on a locked database it goes on in the background and the stream starts."""


log = logging.getLogger(__name__)


def _reason(exc: BaseException) -> str:
    """The database's own words, on one line (`database is locked`, `attempt to write a readonly database`)."""
    from sqlalchemy.exc import DBAPIError  # loaded already: a database said this

    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    return (str(cause).strip().splitlines() or [type(cause).__name__])[0]


class LiveRun:
    """One generation tied to its saved row (or to no row, when `engine` is None: `--no-save`).

    `stream()` yields text chunks; `cancel()` is safe from any thread; `closed` is set once the final
    state is saved, so another thread can wait for it (`settle`). `save_error` is set when the run could not
    be saved at all (the database failed every try). `batch` (its id, the row's key) is written in the INSERT that
    creates the row; `save_interval` None: no saves while it streams.
    """

    save_retries: tuple[float, ...] = (0.5, 2.0, 5.0)
    """Seconds to wait before each further try of the final save (each try also waits out SQLite's busy
    timeout): a lock held by another process for up to about half a minute does not cost the run. A command that
    is stopping gets none of them (`hurry`)."""

    def __init__(
        self,
        gen: Generation,
        engine: Engine | None,
        *,
        origin: Origin,
        instruction: str | None = None,
        comparison_id: str | None = None,
        group_id: str | None = None,
        batch: tuple[str, str] | None = None,
        save_interval: float | None = SAVE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.gen = gen
        self.engine = engine
        self.closed = threading.Event()
        self._clock = clock
        self._last_save = clock()
        self.run_id: int | None = None
        self.save_error: str | None = None
        self._hurried = False  # the command is stopping: one try of the final save (`hurry`)
        self._secrets = gen.secrets
        self.save_interval = save_interval
        self._start = self._cleaned(self._start_fields(origin, instruction, comparison_id, group_id))
        if batch is not None:
            self._start |= {"batch_id": batch[0], "batch_row": batch[1]}
        self._creating: threading.Thread | None = None
        if engine is not None and batch is not None:
            self._create(engine)  # nothing is drawn as a batch row streams: no first words to hold back (docstring)
        elif engine is not None:
            self._creating = threading.Thread(target=self._create, args=(engine,), name="create-run", daemon=True)
            self._creating.start()
            self._creating.join(FIRST_SAVE_WAIT)

    def _create(self, engine: Engine) -> None:
        """Create the row (status `running`); on failure the run goes on and its final save tries again."""
        try:
            run_id = _db().create_run(engine, **self._start)
        except _db().WRITE_FAULTS as exc:
            log.info("could not save the new run to %s: %s", _db().database_label(engine), _reason(exc))
        else:
            _LIVE[run_id] = self
            self.run_id = run_id

    def _created(self) -> bool:
        """Whether the first save is over (done or failed), so the row's id is settled."""
        return self._creating is None or not self._creating.is_alive()

    def _cleaned(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`fields` as they may be saved: every text valid UTF-8, the key in use masked in the model's text (the
        run masks it as it streams, `Generation._read`; this is the last net before the database)."""
        out = {k: valid_text(v) if isinstance(v, str) else v for k, v in fields.items()}
        masked = False
        for name in ("raw", "text", "draft", "written"):
            value = out.get(name)
            if isinstance(value, str) and self._secrets:
                out[name] = mask_secrets(value, self._secrets)
                masked = masked or out[name] != value
        if out.get("assessment") and self._secrets:  # a warning may quote a word of the text
            out["assessment"] = json.loads(mask_secrets(json.dumps(out["assessment"]), self._secrets))
        if masked and "notice" in out and KEY_NOTICE not in (out["notice"] or ""):  # the run masks it first
            out["notice"] = " ".join(filter(None, (out["notice"], KEY_NOTICE)))
        return out

    def _save_final(self, engine: Engine) -> None:
        """Save the final state, trying again after each of `save_retries`; set `save_error` if it never could."""
        if self._creating is not None:
            self._creating.join()  # a first save still waiting on a lock: its row, or none, before this one
        fields, reason = self._cleaned(final_fields(self.gen.outcome())), ""
        for wait in (0.0, *self.save_retries):
            if self._hurried_in(wait):
                busy = f"{_db().database_label(engine)}, which stayed busy ({reason})"
                self.save_error = f"was not saved to {busy}: the command was stopping, so it did not wait longer"
                return
            try:
                if self.run_id is None:
                    self.run_id = _db().create_run(engine, **{**self._start, **fields})
                else:
                    _db().update_run(engine, self.run_id, **fields)
                return
            except _db().WRITE_FAULTS as exc:
                reason = _reason(exc)
                log.info("could not save run %s: %s", self.run_id, reason)
        self.save_error = f"could not be saved to {_db().database_label(engine)} ({reason})"

    def hurry(self) -> None:
        """The command is stopping (a Ctrl-C, a SIGTERM): the final save is tried once (the try under way, or the
        first), never again, so a database another program keeps locked holds the command one busy timeout, and the
        surface shows the text with `save_error`. Safe from a signal handler: it sets a flag and takes no lock."""
        self._hurried = True

    def _hurried_in(self, wait: float) -> bool:
        """Wait `wait` seconds before the next try of the final save, unless `hurry` asks not to."""
        end = time.monotonic() + wait
        while not self._hurried and time.monotonic() < end:
            time.sleep(min(0.05, end - time.monotonic()))
        return self._hurried and wait > 0

    def _start_fields(
        self, origin: Origin, instruction: str | None, comparison_id: str | None, group_id: str | None
    ) -> dict[str, Any]:
        gen, req = self.gen, self.gen.request
        backend = gen.backend
        return {
            "origin": origin,
            "instruction": req.instruction if instruction is None else instruction,
            "prompt": gen.prompt,
            "model": backend.model,
            "backend": backend.provider,
            "base_url": None if spec_of(backend.provider).local else backend.base_url,
            "mode": gen.mode,
            "lang": req.lang,
            "unit": req.count_unit,
            "target": req.target,
            "target_kind": req.target_kind,
            "target_low": req.target_spec.low,
            "temperature": req.temperature,
            "code": req.code,
            "notice": gen.notice,
            "comparison_id": comparison_id,
            "group_id": group_id,
            "verified": False,
        }

    # ----- streaming ------------------------------------------------------------------------------------
    def stream(self) -> Iterator[str]:
        """Yield text chunks as they arrive; the final state is saved however the loop ends."""
        inner = self.gen.stream()
        try:
            for chunk in inner:
                # Save before handing the chunk on: whoever sees a chunk can also find it in the database.
                if self.save_interval is not None and self._clock() - self._last_save >= self.save_interval:
                    self._save_progress()
                yield chunk
        finally:
            inner.close()  # a Stop, rerun, closed tab or Ctrl-C: the generation records itself cancelled
            self.gen.abandon()  # also when interrupted before the first chunk, when close() runs nothing
            self.close()

    def run(self) -> Outcome:
        """Stream to the end without drawing anything (Compare columns, benchmarks, `--json`)."""
        for _ in self.stream():
            pass
        return self.outcome

    def view(self) -> RunView:
        """The run as it stands now, for the pages and the CLI to draw (runview.py); `saving` once its stream ended
        and its final save is under way."""
        return self.gen.view(saving=not self.closed.is_set())

    @property
    def request(self) -> Request:
        return self.gen.request

    @property
    def streaming(self) -> bool:
        """Whether the run is still streaming (not yet ending or saving). Takes no lock, so a signal handler may
        ask it while the main thread holds the run's lock."""
        return self.gen.status == "running"

    def cancel(self) -> None:
        self.gen.cancel()

    @property
    def outcome(self) -> Outcome:
        return self.gen.outcome()

    def _save_progress(self) -> None:
        self._last_save = self._clock()
        if self.run_id is None or self.engine is None or not self._created():
            return
        now = self.gen.outcome()  # the text and count as if the output ended here
        fields = self._cleaned({"raw": now.raw, "text": now.text, "count": now.count, "errors": now.errors})
        try:
            _db().update_run(self.engine, self.run_id, **fields)
        except _db().WRITE_FAULTS as exc:  # the stream goes on; the final save tries again
            log.info("could not save run %s's progress: %s", self.run_id, _reason(exc))

    def close(self) -> None:
        """Save the final state once (idempotent), then release anyone waiting in `settle`."""
        if self.closed.is_set():
            return
        try:
            if self.engine is not None:
                self._save_final(self.engine)
        finally:
            if self.run_id is not None:
                _LIVE.pop(self.run_id, None)
            self.closed.set()


def final_fields(outcome: Outcome) -> dict[str, Any]:
    """The columns a finished run is saved with, its verdict included (decided by `verdict.decide`)."""
    return {
        "status": outcome.status,
        "raw": outcome.raw,
        "text": outcome.text,
        "written": outcome.written,  # the model's whole text where the text keeps less of it: nothing is lost
        "draft": outcome.draft,
        "count": outcome.count,
        "exact": outcome.exact,
        "valid": outcome.valid,
        "verified": outcome.verified,
        "errors": outcome.errors,
        "prompt_tokens": outcome.prompt_tokens,
        "completion_tokens": outcome.completion_tokens,
        "seconds": outcome.seconds,
        "first_token_seconds": outcome.first_token_seconds,
        "failure": redact(outcome.failure) if outcome.failure else outcome.failure,  # the guard masked the key
        "failure_kind": outcome.failure_kind,
        "finish_reason": outcome.finish_reason,
        "notice": outcome.notice,
        "mode": outcome.mode,
        **assessment_fields(outcome),
        **faithfulness_json(outcome.faithfulness),
        "attempts": outcome.attempts,
        "planned_ending": outcome.planned_ending,  # the texts set aside too: "kept with the run" holds
    }


def assessment_fields(outcome: Outcome) -> dict[str, Any]:
    """Fluency, the ending score, and the finished text's one judgement (`assessment.assess`, made when the outcome
    was built) with its score in its own column (History sorts by it); none for a run that has not finished."""
    found = outcome.assessment
    return {
        "fluency": outcome.fluency,
        "end_probability": outcome.end_probability,
        "score": found.score if found is not None else None,
        "assessment": found.as_json() if found is not None else None,
    }


def save_edit(engine: Engine, parent: RunRecord, text: str, notice: str | None = None) -> int:
    """Save a writer's edit of `parent` as a new complete run of origin `edit`, counted and judged like any run
    against the parent's unit and target. No model call made it: model, backend and mode say so and raw is empty;
    `notice` says what the edit was where it is not typed by hand (`put_words_back`)."""
    target = target_of(parent)
    n = count(text, parent.unit)  # type: ignore[arg-type]
    found = assess(text, parent.lang, parent.instruction, scored=False)  # type: ignore[arg-type]
    verdict = decide("complete", n, target, 0, refusal(text, parent.unit))
    return _db().create_run(
        engine,
        origin="edit",
        status="complete",
        instruction=parent.instruction,
        prompt="",
        model=HAND_EDIT_MODEL,
        backend=HAND_EDIT,
        mode=HAND_EDIT,
        lang=parent.lang,
        unit=parent.unit,
        target=target.high,
        target_kind=target.kind,
        target_low=target.low,
        raw="",
        text=text,
        count=n,
        exact=verdict.within,
        valid=True,
        verified=verdict.verified,
        errors=[],
        seconds=None,
        notice=notice or f"Edited by hand from run {parent.id}; no model wrote this text.",
        group_id=parent.group_id,
        assessment=found.as_json(),
    )


def put_words_back(engine: Engine, parent: RunRecord) -> int | None:
    """Make the model's whole text (`written`: the words a planned cut or ending left out put back) the writer's new
    text, saved the one way an edit is (`save_edit`): counted and judged in the parent's unit, over its limit as it
    may be. None where the parent left nothing out."""
    apart = left_out(parent.written, parent.text)
    if apart is None or parent.written is None:
        return None
    notice = (
        f"Run {parent.id}'s text with the words it left out put back (“{apart.words}”): the whole text "
        f"{parent.model} wrote, as it wrote it."
    )
    return save_edit(engine, parent, parent.written.strip(), notice)


# ----- runs streaming in this process ---------------------------------------------------------------------

_LIVE: dict[int, LiveRun] = {}


def live_run(run_id: int) -> LiveRun | None:
    """The LiveRun streaming `run_id` in this process, if any."""
    return _LIVE.get(run_id)


def settle(run_id: int, timeout: float) -> bool:
    """Stop `run_id` if this process streams it and wait (bounded) until its final state is saved.

    A Stop click reruns the page while the interrupted script may still be unwinding; the new script waits
    here so it shows the saved run, not a half-written one. True when nothing is left streaming.
    """
    live = _LIVE.get(run_id)
    if live is None:
        return True
    live.cancel()
    return live.closed.wait(timeout)


# ----- reading saved runs -----------------------------------------------------------------------------------


def display_status(run: RunRecord, now: datetime | None = None) -> DisplayStatus:
    """The status to show: a `running` row that nobody has saved for STALE_AFTER seconds was interrupted
    (its process was killed or lost power) and keeps the text of its last save."""
    if run.status != "running" or run.id in _LIVE:
        return run.status  # type: ignore[return-value]
    now = now or datetime.now(UTC)
    return "interrupted" if (now - run.updated_at).total_seconds() > STALE_AFTER else "running"


def close_interrupted(engine: Engine, run_ids: Iterable[int], why: str) -> None:
    """Close runs a killed process left `running` as `interrupted`, `why` their failure; each keeps the text of its
    last save. A run streaming in this process is left alone. Only its owner may close a run: the caller knows no
    other process streams these (a batch holds its lock)."""
    for run_id in run_ids:
        if run_id not in _LIVE:
            _db().update_run(engine, run_id, status="interrupted", failure=why)


def verdict_of(run: RunRecord, now: datetime | None = None) -> Verdict:
    """The verdict of a saved row: the same `judge` that set its `verified` column when it closed."""
    return decide(display_status(run, now), run.count, target_of(run), run.errors, refusal(run.text, run.unit))


def assessment_of(run: RunRecord) -> Assessment:
    """A saved run's one judgement, as stored when it closed. A run saved before judgements were stored, or still
    running, is judged as it stands (`judge_saved`; `assess_saved` stores that once for every old run)."""
    if run.assessment is not None:
        return Assessment.from_json(run.assessment, saved_faithfulness(run))
    return judge_saved(run)


def judge_saved(run: RunRecord) -> Assessment:
    """Judge a saved run's text as `assess` judges a finished one (a text no model wrote gets no score)."""
    edit = run.backend == HAND_EDIT
    note = None if edit else language_note(run.backend, cast(Lang, run.lang))
    return _judged(run.text or "", run.lang, run.instruction or "", run.fluency, run.end_probability, note, not edit)


@functools.lru_cache(maxsize=4096)
def _judged(
    text: str, lang: str, instruction: str, fluency: float | None, end: float | None, note: str | None, scored: bool
) -> Assessment:
    """`assess`, once per text: a page asks for a run's judgement several times a rerun (badge, notes, score line,
    rank) and History for every row, and a run still streaming, or saved before judgements were stored on a database
    this process could not write, has none stored (~2.5 ms for a 60-word text)."""
    lang_ = cast(Lang, lang)
    return assess(text, lang_, instruction, fluency=fluency, end_probability=end, language_note=note, scored=scored)


def assess_saved(engine: Engine, *, every: bool = False) -> int:
    """Judge, once, every finished run saved before judgements were stored (`every`: all of them again, on purpose,
    with today's rules) and store the judgement with its score; how many runs were judged."""
    done, after = 0, 0
    while batch := _db().unassessed_runs(engine, every=every, after=after):
        for run in batch:
            found = judge_saved(run)
            _db().update_run(engine, run.id, score=found.score, assessment=found.as_json())
        done, after = done + len(batch), batch[-1].id
    return done


_JUDGED: set[str] = set()
_judging = threading.Lock()


def store(url: str | None = None) -> Engine:
    """The runs database at `url` (the configured one by default), migrated, and its runs saved before judgements
    were stored judged once, the first time this process opens it (`assess_saved`): every surface opens it here."""
    engine = _db().get_engine(url)
    with _judging:
        if engine.url.render_as_string() not in _JUDGED:
            try:
                assess_saved(engine)
            except _db().WRITE_FAULTS as exc:  # read-only or locked: each old run is judged as it is read instead
                log.warning("old runs not judged yet (%s): they are judged as they are read", _reason(exc))
            _JUDGED.add(engine.url.render_as_string())
    return engine


def target_of(run: RunRecord) -> Target:
    """The target a saved run was asked for (rows from before targets had kinds are exactly N)."""
    return Target.of(run.target_kind, run.target, run.target_low)


# ----- several runs at once (Compare columns, variants) ----------------------------------------------------


def run_together(lives: list[LiveRun], tick: Callable[[], None] | None = None, interval: float = 0.2) -> list[Outcome]:
    """Run `lives` concurrently in worker threads that only generate and save; call `tick` (the caller's
    painting, on the calling thread) every `interval` seconds until all are done. If the caller is interrupted
    (Stop, rerun, Ctrl-C) every run is cancelled and keeps what arrived."""
    pool = ThreadPoolExecutor(max_workers=max(len(lives), 1), thread_name_prefix="runs")
    futures = [pool.submit(live.run) for live in lives]
    try:
        while True:
            if tick is not None:
                tick()
            if all(f.done() for f in futures):
                break
            time.sleep(interval)
    finally:
        if not all(f.done() for f in futures):
            for live in lives:
                live.cancel()
        pool.shutdown(wait=False)
    return [live.outcome for live in lives]

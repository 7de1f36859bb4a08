"""The resumable runner: every job of a batch as a saved run (origin `batch`, one batch id, its row key), run
concurrently within the backend's limits, distinct where a pack says so, and the output built from what is saved.

Resume: a batch's id is its input's content hash and options (`rows.batch_id`); each job's run is created with the
id and the job's key (`runs.batch_id`, `runs.batch_row`) in one INSERT and closed in one UPDATE. Started again, a
batch reads the runs saved under its id, keeps the complete ones and runs only the rest (a failed or cancelled one,
or one a killed process left `running`: closed as `interrupted` first, so History says so at once), so nothing is
written twice. One process runs a batch at a time (`lock.batch_lock`): a second is refused, naming the first. The
output is built from the saved runs, one row per job.

Concurrency: one worker per slot the backend serves at once (the embedded llama.cpp server's parallel slots; a
hosted provider gets `concurrency` requests at once, its 429s waited out by the guard around every backend).

Distinct texts: a pack's headlines (or a thread's posts) that come out the same (ignoring case, spaces and
punctuation) are written again with another seed, up to `DISTINCT_TRIES` times; one still the same says so in its
`error` cell.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select

from ..assessment import Assessment
from ..backends import Backend, BackendError
from ..outcome import Outcome
from ..runs import LiveRun, assessment_of, close_interrupted, verdict_of
from ..service import start
from ..storage import RunRecord
from ..storage.schema import Run
from .lock import batch_lock, held
from .models import Models
from .rows import OUTPUT_COLUMNS, Job, Options, batch_id, plan
from .table import Table

DISTINCT_TRIES = 3
"""Times a duplicate text is written again (with another seed) before it is reported."""
DONE_STATUS = "complete"
SETTLE_SECONDS = 15.0
"""How long a stopped batch waits for its cancelled runs to save what arrived."""
POLL_SECONDS = 0.02
"""How often the main thread looks whether a round's workers are done (`_wait_for`)."""
STOPPED = "stopped before it finished: run the same batch again to write it"
INTERRUPTED = "interrupted: its batch's process was killed before this text was done; the batch run again wrote it anew"
NOT_RUN = "not written yet: run the same batch again to finish it"


@dataclass
class Result:
    """What the output shows for one job (from its saved run)."""

    text: str = ""
    count: int | None = None
    verified: bool | None = None
    ending: str | None = None
    score: float | None = None
    warnings: str = ""
    run_id: int | None = None
    error: str | None = None
    status: str | None = None
    seconds: float | None = None
    tokens: int | None = None
    junk: bool = False  # a text no writer would keep (a loop, a number list: quality.junk)
    resumed: bool = False  # found complete in the database, not written by this session
    saved: bool = True  # False: the database could not keep its run (the output holds the only copy)
    verdict: str = ""  # the badge's words: "✓ 27/30 characters", "off by +3 · 53/50 English words"

    @property
    def done(self) -> bool:
        return self.status == DONE_STATUS

    def cells(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "count": self.count,
            "verified": self.verified,
            "ending": self.ending or "",
            "score": None if self.score is None else round(self.score, 1),
            "warnings": self.warnings,
            "run_id": self.run_id,
            "error": self.error or "",
        }


def row_quality(saved: RunRecord | Outcome) -> dict[str, Any]:
    """A row's quality cells (its ending label, score, warnings and junk) as its text's one judgement says them: the
    saved run's, or the outcome's for a run this batch has just written."""
    found = (saved.assessment or Assessment()) if isinstance(saved, Outcome) else assessment_of(saved)
    return {"ending": found.ending or "", "score": found.score, "warnings": "; ".join(found.notes), "junk": found.junk}


def _failure(status: str, failure: str | None) -> str | None:
    """A row's error cell for a run that ended `status`."""
    if status in ("cancelled", "running", "interrupted"):
        return STOPPED
    if status != DONE_STATUS:
        return failure or f"the run ended {status}"
    return None


def result_of(run: RunRecord, *, resumed: bool = False) -> Result:
    """A saved run as the output shows it: verified by the one verdict, warnings as the pages word them."""
    return Result(
        **row_quality(run),
        text=run.text or "",
        count=run.count,
        verified=verdict_of(run).verified,
        run_id=run.id,
        error=_failure(run.status, run.failure),
        status=run.status,
        seconds=run.seconds,
        tokens=run.completion_tokens,
        resumed=resumed,
        verdict=verdict_of(run).headline(run.unit),
    )


def live_result(live: LiveRun) -> Result:
    """A run this batch has just written, from its outcome: what its final save wrote (not read back: a SELECT a
    row saved), or, where the database could not keep it, the text with the reason (the output holds it)."""
    outcome = live.outcome
    return Result(
        **row_quality(outcome),
        text=outcome.text,
        count=outcome.count,
        verified=outcome.verified,
        run_id=live.run_id,
        error=live.save_error or _failure(outcome.status, outcome.failure),
        status=outcome.status,
        seconds=outcome.seconds,
        tokens=outcome.completion_tokens,
        verdict=outcome.verdict.headline(outcome.request.count_unit),
        saved=live.run_id is not None and not live.save_error,
    )


def left_running(engine: Engine, bid: str) -> list[int]:
    """The runs of batch `bid` still `running` in the database (a killed process's, or one streaming now)."""
    query = select(Run.id).where(Run.batch_id == bid, Run.status == "running")
    with engine.connect() as conn:
        return list(conn.scalars(query))


def saved_runs(engine: Engine, bid: str) -> list[RunRecord]:
    """Every run saved under batch `bid`, oldest first."""
    columns = list(Run.__table__.columns)  # type: ignore[attr-defined]
    query = select(*columns).where(Run.batch_id == bid).order_by(Run.id)
    with engine.connect() as conn:
        return [RunRecord(**row._mapping) for row in conn.execute(query)]


def _same_text(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


def job_seed(bid: str, key: str, attempt: int) -> int:
    """A seed of its own for every job and try: reproducible, and different for a text written again."""
    return int.from_bytes(hashlib.sha256(f"{bid}|{key}|{attempt}".encode()).digest()[:4], "big") % 2_000_000_000


@dataclass
class Progress:
    total: int
    done: int = 0
    verified: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)
    run_here: int = 0  # jobs finished by this session (the rate the estimate uses)
    to_run: int = 0  # jobs this session had to run

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def left_seconds(self) -> float | None:
        remaining = self.to_run - self.run_here
        if self.run_here == 0 or remaining <= 0:
            return None if remaining > 0 else 0.0
        return self.elapsed / self.run_here * remaining


@dataclass
class Output:
    """The output table of a batch: the input's own columns, then the result's, one row per job in the input's
    order (a job not run yet says so in its error cell)."""

    table: Table
    jobs: list[Job]

    def header(self) -> list[str]:
        added = [c for c in OUTPUT_COLUMNS if c != "slot" or any(j.slot for j in self.jobs)]
        return [h for h in self.table.header if h.strip().lower() not in added] + added

    def rows(self, results: dict[str, Result], only_finished: bool = False) -> list[dict[str, Any]]:
        """One row per job (only those with a result, `only_finished`): the row's own columns, then the result's."""
        rows = []
        for job in self.jobs:
            result = results.get(job.key)
            if result is None and only_finished:
                continue
            cells = result.cells() if result is not None else {**Result().cells(), "error": NOT_RUN}
            source = self.table.rows[job.row]
            row = {h: v for h, v in source.items() if h.strip().lower() not in OUTPUT_COLUMNS}
            row |= {"slot": job.slot or "", "asked": job.asked, **cells}
            rows.append(row)
        return rows


class Workers:
    """Runs a batch's jobs on a thread pool, a round at a time, one worker per slot the backends serve: each job a
    run created with its batch id and row key (one INSERT) and closed (one UPDATE), its result handed to `finish`.
    `cancel()` (any thread) stops every live run, keeping what arrived; `hurry()` (a Ctrl-C) has each run try its
    final save once (`LiveRun.hurry`)."""

    def __init__(
        self,
        bid: str,
        engine: Engine,
        models: Models,
        seed: Callable[[Job], int],
        finish: Callable[[Job, Result], None],
    ) -> None:
        self.bid, self.engine, self.models = bid, engine, models
        self._seed, self._finish = seed, finish
        self._cancel = threading.Event()
        self._hurried = False
        self._lives: list[LiveRun] = []
        self._lock = threading.Lock()
        self.used = 0  # workers in the last round

    def cancel(self) -> None:
        self._cancel.set()
        with self._lock:
            lives = list(self._lives)
        for live in lives:
            live.cancel()

    def hurry(self) -> None:
        """The command is stopping: every run, and any started from now, tries its final save once. Takes no lock, so
        a signal handler may call it (`_one` adds a run before it reads the flag; this sets it before it reads the
        runs: no run misses it)."""
        self._hurried = True
        for live in tuple(self._lives):
            live.hurry()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def round(self, jobs: list[Job], tick: Callable[[], None] | None, interval: float) -> None:
        """Run `jobs`, as many at once as there are workers (threads that take the next job until none is left: no
        object per job waits in a queue, so 100,000 jobs cost nothing before they run), calling `tick` on this
        thread until all are done."""
        if not jobs:
            return
        workers = self.used = self.models.workers((j.model for j in jobs), len(jobs))
        queue, taking, faults = iter(jobs), threading.Lock(), []
        working = [workers]

        def work() -> None:
            try:
                while not self.cancelled and (job := self._next(queue, taking)) is not None:
                    self._one(job)
            except BaseException as exc:  # a bug: the round stops and raises it, not swallowed
                faults.append(exc)
                self.cancel()
            finally:
                with taking:
                    working[0] -= 1

        for i in range(workers):
            threading.Thread(target=work, name=f"batch-{i}").start()
        try:
            _wait_for(lambda: not working[0], None, tick, interval)
        finally:
            if working[0]:  # Stop, Ctrl-C, a closed tab: every run keeps what arrived
                self.cancel()
                _wait_for(lambda: not working[0], SETTLE_SECONDS)  # the stopped runs save what arrived
        if faults:
            raise faults[0]

    @staticmethod
    def _next(queue: Iterator[Job], taking: threading.Lock) -> Job | None:
        with taking:
            return next(queue, None)

    def _one(self, job: Job) -> None:
        if self.cancelled or job.request is None:
            return
        try:
            backend = self.models.backend(job.model)
            request = dataclasses.replace(job.request, seed=self._seed(job))
            live = start(request, backend, self.engine, **self._saved_as(job)).live  # checked as every run is
        except BackendError as exc:
            self._finish(job, Result(error=exc.message, status="failed"))
            return
        except ValueError as exc:
            self._finish(job, Result(error=str(exc), status="failed"))
            return
        with self._lock:
            self._lives.append(live)
        try:
            if self._hurried:
                live.hurry()
            if self.cancelled:
                live.cancel()
            live.run()
        finally:
            with self._lock:
                self._lives.remove(live)
        self._finish(job, live_result(live))

    def _saved_as(self, job: Job) -> dict[str, Any]:
        """How a job's run is saved: origin `batch`, its batch id and row key in the INSERT that creates it, and no
        progress saves (a killed batch writes the row again: two saves a row, not one a second)."""
        return {"origin": "batch", "batch": (self.bid, job.key), "save_interval": None}


class Batch:
    """One batch: the table, its options, the jobs planned from them, and their results as they finish.

    `run(tick)` runs what is not complete yet (`Workers`, on the backends of `Models`), then writes again what a
    distinct group or a pack needs; `tick` is called on the calling thread while the jobs run (the page paints,
    the CLI prints); `cancel()` (any thread) stops every run, keeping what arrived, and `hurry()` (a signal handler)
    has each try its final save once. Started again, the batch reads what the database holds for it (`_load`); the
    output has one row per job (`output_rows`).
    """

    def __init__(
        self,
        table: Table,
        data: bytes,
        options: Options,
        engine: Engine,
        *,
        concurrency: int | None = None,
        backend_for: Callable[[str], Backend] | None = None,
    ) -> None:
        self.table, self.options, self.engine = table, options, engine
        self.id = batch_id(data, options)
        self.models = Models(
            options.model, options.base_url, options.grammar_field, concurrency=concurrency, backend_for=backend_for
        )
        self._workers = Workers(self.id, engine, self.models, self._next_seed, self._finish)
        self._lock = threading.Lock()
        self.jobs: list[Job] = plan(table, options, self.models.capabilities)
        self._output = Output(table, self.jobs)
        self.results: dict[str, Result] = {}
        self._attempts: dict[str, int] = {}
        self.progress = Progress(total=len(self.jobs))
        self.finished: list[str] = []  # keys in the order they finished in this session (the page shows them)
        self._load()

    def backend(self, model: str) -> Backend:
        """The model's backend, built once per batch (benchmarks start it before the clock runs)."""
        return self.models.backend(model)

    @property
    def workers_used(self) -> int:
        """Runs at once in the last round."""
        return self._workers.used

    # ----- resume --------------------------------------------------------------------------------------------
    def _load(self) -> None:
        """What the database already holds for this batch: the latest complete run of each key, and how many tries
        each key had (a text written again gets a seed of its own)."""
        keys = {j.key for j in self.jobs}
        for run in saved_runs(self.engine, self.id):
            if run.batch_row not in keys:
                continue
            self._attempts[run.batch_row] = self._attempts.get(run.batch_row, 0) + 1
            if run.status == DONE_STATUS:
                self.results[run.batch_row] = result_of(run, resumed=True)
        for job in self.jobs:
            if job.request is None:
                self.results[job.key] = Result(error=job.error, status="failed")
        self._mark_duplicates()
        self._count()

    def _count(self) -> None:
        p = self.progress
        p.done = p.verified = p.failed = 0
        for r in self.results.values():
            self._tally(r, 1)

    def _tally(self, r: Result | None, sign: int) -> None:
        """Count `r` in the progress (`sign` 1) or take it out (-1): a finished text is counted as it comes, not by
        counting them all again (100,000 rows)."""
        if r is None or r.status is None:
            return
        p = self.progress
        p.done += sign
        p.verified += sign * bool(r.verified)
        p.failed += sign * bool(not r.done or r.error)  # a duplicate left is not a success

    def unsaved_errors(self) -> dict[str, str]:
        """The texts that failed before a run was saved (no run to find them by on the next draw)."""
        return {k: r.error for k, r in self.results.items() if r.run_id is None and r.error and not r.resumed}

    def keep_errors(self, errors: dict[str, str]) -> None:
        """Show `errors` (from `unsaved_errors` of an earlier draw) for the texts the database has nothing for."""
        for job in self.jobs:
            if job.key in errors and job.key not in self.results and job.request is not None:
                self.results[job.key] = Result(error=errors[job.key], status="failed")
        self._count()

    @property
    def resumed(self) -> int:
        """Texts found complete in the database from an earlier run of this batch."""
        return sum(1 for r in self.results.values() if r.resumed)

    @property
    def bad_rows(self) -> int:
        return sum(1 for j in self.jobs if j.request is None)

    @property
    def pending(self) -> list[Job]:
        return [j for j in self.jobs if j.request is not None and not self._complete(j.key)]

    def _complete(self, key: str) -> bool:
        r = self.results.get(key)
        return r is not None and r.done

    # ----- running -------------------------------------------------------------------------------------------
    def cancel(self) -> None:
        self._workers.cancel()

    def hurry(self) -> None:
        """Every run tries its final save once (`LiveRun.hurry`); takes no lock (safe from a signal handler)."""
        self._workers.hurry()

    def run(self, tick: Callable[[], None] | None = None, interval: float = 0.2) -> None:
        """Run every job not complete yet, then write again the duplicates of a distinct group (bounded), holding
        the batch's lock (`lock.Busy` naming the process that runs it already)."""
        database = self.engine.url.render_as_string(hide_password=True)
        with held(batch_lock(self.id, database), f"batch {self.id} (this input with these options)"):
            self._close_killed()
            self._run(tick, interval)

    def _close_killed(self) -> None:
        """Close the runs of this batch a killed process left `running` as `interrupted` (none streams here, and the
        lock says no other process runs the batch): History says so at once, and their rows are written anew."""
        close_interrupted(self.engine, left_running(self.engine, self.id), INTERRUPTED)

    def _run(self, tick: Callable[[], None] | None, interval: float) -> None:
        todo = self.pending
        self.progress.to_run = len(todo)
        self.progress.started = time.monotonic()
        self._workers.round(todo, tick, interval)
        for _ in range(DISTINCT_TRIES):
            again = [j for j in self._again() if self._attempts.get(j.key, 0) <= DISTINCT_TRIES]
            if not again or self._workers.cancelled:
                break
            self.progress.to_run += len(again)
            self._workers.round(again, tick, interval)
        self._mark_duplicates()
        self._count()
        if tick is not None:
            tick()

    def _next_seed(self, job: Job) -> int:
        """The seed of `job`'s next try, counted: a text written again gets a seed of its own."""
        attempt = self._attempts.get(job.key, 0)
        self._attempts[job.key] = attempt + 1
        return job_seed(self.id, job.key, attempt)

    def _finish(self, job: Job, result: Result) -> None:
        with self._lock:
            self._tally(self.results.get(job.key), -1)
            self.results[job.key] = result
            self._tally(result, 1)
            self.finished.append(job.key)
            self.progress.run_here += 1

    # ----- distinct ------------------------------------------------------------------------------------------
    def _mark_duplicates(self) -> None:
        """A text still the same as an earlier one of its group says so in its error cell."""
        for job, first in self._duplicate_pairs():
            tries = self._attempts.get(job.key, 1)
            self.results[job.key].error = f"the same text as {first.slot} after {tries} tries"

    def _duplicate_pairs(self) -> list[tuple[Job, Job]]:
        """(job, the earlier job of its group with the same text) for every duplicate of a distinct group."""
        seen: dict[tuple[str, str], Job] = {}
        pairs = []
        for job in self.jobs:
            r = self.results.get(job.key)
            if job.group is None or r is None or not r.done or not r.text.strip():
                continue
            same = (job.group, _same_text(r.text))
            if same in seen:
                pairs.append((job, seen[same]))
            else:
                seen[same] = job
        return pairs

    def _again(self) -> list[Job]:
        """The texts to write again: a duplicate in its group, or a pack's text no writer would keep (a loop, a
        number list), which another seed usually fixes."""
        again = {job.key: job for job, _ in self._duplicate_pairs()}
        for job in self.jobs:
            r = self.results.get(job.key)
            if job.pack and r is not None and r.done and r.junk:
                again.setdefault(job.key, job)
        return [j for j in self.jobs if j.key in again]

    # ----- output ---------------------------------------------------------------------------------------------
    def header(self) -> list[str]:
        return self._output.header()

    def output_rows(self, only_finished: bool = False) -> list[dict[str, Any]]:
        """One output row per job, in the input's order (`Output`)."""
        return self._output.rows(self.results, only_finished)

    def summary(self) -> str:
        p = self.progress
        resumed = sum(1 for r in self.results.values() if r.resumed)
        again = f" ({resumed} found complete from before)" if resumed else ""
        return f"{p.done} of {p.total} texts written{again}: {p.verified} verified, {p.failed} failed"


def _wait_for(
    done: Callable[[], bool],
    seconds: float | None,
    tick: Callable[[], None] | None = None,
    interval: float = 1.0,
) -> None:
    """Wait until `done()` (at most `seconds`; None: no bound), calling `tick` every `interval`. The main thread
    sleeps rather than waits on a lock: a Ctrl-C raised in it while it took or gave back an Event's lock left that
    lock held, so the wait for the stopped runs and the workers' last word hung on it for good (seen once in the
    suite, `test_ctrl_c_writes_what_is_done_…`); `time.sleep` holds nothing a signal can leave behind."""
    now = time.monotonic()
    deadline = None if seconds is None else now + seconds
    next_tick = now + interval
    while not done() and (deadline is None or time.monotonic() < deadline):
        time.sleep(POLL_SECONDS)
        if tick is not None and time.monotonic() >= next_tick:
            tick()
            next_tick = time.monotonic() + interval

"""The resumable runner: every job of a batch as a saved run (origin `batch`, one batch id, its row key), run
concurrently within the backend's limits, distinct where a pack says so, and the output built from what is saved.

Resume: a batch's id is its input's content hash and options (`rows.batch_id`); each job's run carries the id and
the job's key (`runs.batch_id`, `runs.batch_row`). Started again, a batch reads the runs saved under its id, keeps
the complete ones and runs only the rest (a run left `running` by a killed process, a failed or cancelled one), so
nothing is written twice. The output is built from the saved runs, one row per job, and written atomically.

Concurrency: one worker per slot the backend serves at once (the embedded llama.cpp server's parallel slots; a
hosted provider gets `concurrency` requests at once, its 429s waited out by the guard around every backend).

Distinct texts: a pack's headlines (or a thread's posts) that come out the same (ignoring case, spaces and
punctuation) are written again with another seed, up to `DISTINCT_TRIES` times; one still the same says so in its
`error` cell.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select

from ..backends import Backend, BackendError, capabilities_for, get_backend, provider_of, spec_of
from ..history import ending_label, run_warnings
from ..outcome import Outcome
from ..quality import ending_said, junk, notes
from ..runs import verdict_of
from ..service import RunHandle, start
from ..storage import RunRecord, get_run, update_run
from ..storage.schema import Run
from .rows import OUTPUT_COLUMNS, Job, Options, batch_id, plan
from .table import Table

DISTINCT_TRIES = 3
"""Times a duplicate text is written again (with another seed) before it is reported."""
DONE_STATUS = "complete"
SETTLE_SECONDS = 15.0
"""How long a stopped batch waits for its cancelled runs to save what arrived."""
STOPPED = "stopped before it finished: run the same batch again to write it"
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


def result_of(run: RunRecord, *, resumed: bool = False) -> Result:
    """A saved run as the output shows it: verified by the one verdict, warnings as the pages word them."""
    failure = None
    if run.status in ("cancelled", "running"):
        failure = STOPPED
    elif run.status != DONE_STATUS:
        failure = run.failure or f"the run ended {run.status}"
    return Result(
        text=run.text or "",
        count=run.count,
        verified=verdict_of(run).verified,
        ending=ending_label(run),
        score=run.score,
        warnings="; ".join(notes(found := run_warnings(run))),
        junk=junk(found),
        run_id=run.id,
        error=failure,
        status=run.status,
        seconds=run.seconds,
        tokens=run.completion_tokens,
        resumed=resumed,
        verdict=verdict_of(run).headline(run.unit),
    )


def _outcome_result(outcome: Outcome, run_id: int | None, save_error: str | None) -> Result:
    """A run the database could not keep: its outcome as it is, with the save error (the text is in the output)."""
    from ..quality import warnings
    from ..runs import quality_fields

    found = warnings(outcome.text, outcome.request.lang, outcome.request.instruction)
    return Result(
        text=outcome.text,
        count=outcome.count,
        verified=outcome.verified,
        ending=ending_said(outcome.end_probability, found),
        score=quality_fields(outcome)["score"],
        warnings="; ".join(notes(found)),
        run_id=run_id,
        error=save_error or outcome.failure,
        status=outcome.status,
        seconds=outcome.seconds,
        tokens=outcome.completion_tokens,
        verdict=outcome.verdict.headline(outcome.request.count_unit),
    )


def saved_runs(engine: Engine, bid: str) -> list[RunRecord]:
    """Every run saved under batch `bid`, oldest first."""
    columns = list(Run.__table__.columns)  # type: ignore[attr-defined]
    query = select(*columns).where(Run.batch_id == bid).order_by(Run.id)
    with engine.connect() as conn:
        return [RunRecord(**row._mapping) for row in conn.execute(query)]


def _same_text(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


def _seed(bid: str, key: str, attempt: int) -> int:
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


class Batch:
    """One batch: the table, its options, the jobs planned from them, and their results as they finish.

    `run(tick)` runs what is not complete yet; `tick` is called on the calling thread while the jobs run (the page
    paints, the CLI prints); `cancel()` (any thread) stops every run, keeping what arrived.
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
        self.concurrency = concurrency
        self._backend_for = backend_for or self._build
        self._backends: dict[str, Backend | BackendError] = {}
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._handles: list[RunHandle] = []
        self.jobs: list[Job] = plan(table, options, self._grammar)
        self.results: dict[str, Result] = {}
        self._attempts: dict[str, int] = {}
        self.progress = Progress(total=len(self.jobs))
        self.workers_used = 0  # runs at once in the last round
        self.finished: list[str] = []  # keys in the order they finished in this session (the page shows them)
        self._load()

    # ----- models --------------------------------------------------------------------------------------------
    def _build(self, model: str) -> Backend:
        o = self.options
        return get_backend(model, base_url=o.base_url if model == o.model else None, grammar_field=o.grammar_field)

    def backend(self, model: str) -> Backend:
        """The model's backend, built once per batch (BackendError, cached, for one that cannot be built)."""
        with self._lock:
            found = self._backends.get(model)
            if found is None:
                try:
                    found = self._backend_for(model)
                except BackendError as exc:
                    found = exc
                self._backends[model] = found
        if isinstance(found, BackendError):
            raise found
        return found

    def _grammar(self, model: str) -> bool:
        """Whether `model` takes a grammar (decides a row's default mode), as declared: no model is started."""
        try:
            if model in self._backends and isinstance(self._backends[model], Backend):
                return self._backends[model].capabilities.grammar  # type: ignore[union-attr]
            provider = provider_of(model, self.options.base_url)
            return capabilities_for(provider, model, self.options.grammar_field).grammar
        except BackendError:
            return False

    def slots_for(self, backend: Backend) -> int:
        """Runs one backend serves at once: the embedded server's parallel slots, else `concurrency` (4)."""
        if self.concurrency:
            return self.concurrency
        if spec_of(backend.provider).local:
            return int(os.environ.get("CAPEL_EMBEDDED_PARALLEL", "4"))
        return 4

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
        finished = [r for r in self.results.values() if r.status is not None]
        p.done = len(finished)
        p.verified = sum(1 for r in finished if r.verified)
        p.failed = sum(1 for r in finished if not r.done or r.error)  # a duplicate left is not a success

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
        self._cancel.set()
        with self._lock:
            handles = list(self._handles)
        for h in handles:
            h.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def run(self, tick: Callable[[], None] | None = None, interval: float = 0.2) -> None:
        """Run every job not complete yet, then write again the duplicates of a distinct group (bounded)."""
        todo = self.pending
        self.progress.to_run = len(todo)
        self.progress.started = time.monotonic()
        self._round(todo, tick, interval)
        for _ in range(DISTINCT_TRIES):
            again = [j for j in self._again() if self._attempts.get(j.key, 0) <= DISTINCT_TRIES]
            if not again or self.cancelled:
                break
            self.progress.to_run += len(again)
            self._round(again, tick, interval)
        self._mark_duplicates()
        self._count()
        if tick is not None:
            tick()

    def _mark_duplicates(self) -> None:
        """A text still the same as an earlier one of its group says so in its error cell."""
        for job, first in self._duplicate_pairs():
            tries = self._attempts.get(job.key, 1)
            self.results[job.key].error = f"the same text as {first.slot} after {tries} tries"

    def _round(self, jobs: list[Job], tick: Callable[[], None] | None, interval: float) -> None:
        if not jobs:
            return
        workers = self.workers_used = self._workers(jobs)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="batch")
        futures: list[Future[None]] = [pool.submit(self._one, job) for job in jobs]
        try:
            while not all(f.done() for f in futures):
                if tick is not None:
                    tick()
                time.sleep(interval)
            for f in futures:
                f.result()  # a bug in a worker is raised here, not swallowed
        finally:
            if not all(f.done() for f in futures):  # Stop, Ctrl-C, a closed tab: every run keeps what arrived
                self.cancel()
                pool.shutdown(wait=False, cancel_futures=True)
                # the stopped runs save what arrived; a job never started is cancelled, and `wait` never counts a
                # future cancelled by `shutdown` as done, so waiting on it would always take the whole timeout
                wait([f for f in futures if not f.cancelled()], timeout=SETTLE_SECONDS)
            pool.shutdown(wait=False)

    def _workers(self, jobs: list[Job]) -> int:
        slots = 1
        for model in {j.model for j in jobs}:
            with contextlib.suppress(BackendError):  # its jobs fail on their own, each with the reason
                slots = max(slots, self.slots_for(self.backend(model)))
        return max(1, min(slots, len(jobs)))

    def _one(self, job: Job) -> None:
        if self.cancelled or job.request is None:
            return
        try:
            backend = self.backend(job.model)
        except BackendError as exc:
            self._finish(job, Result(error=exc.message, status="failed"))
            return
        attempt = self._attempts.get(job.key, 0)
        self._attempts[job.key] = attempt + 1
        request = dataclasses.replace(job.request, seed=_seed(self.id, job.key, attempt))
        try:
            handle = start(request, backend, self.engine, origin="batch")
        except (ValueError, BackendError) as exc:
            self._finish(job, Result(error=str(exc), status="failed"))
            return
        live = handle.live
        tagged = self._tag(live.run_id, job)
        with self._lock:
            self._handles.append(handle)
        try:
            if self.cancelled:
                handle.cancel()
            handle.run()
        finally:
            with self._lock:
                self._handles.remove(handle)
        if not tagged:
            self._tag(live.run_id, job)
        run = get_run(self.engine, live.run_id) if live.run_id is not None and not live.save_error else None
        result = result_of(run) if run is not None else _outcome_result(live.outcome, live.run_id, live.save_error)
        self._finish(job, result)

    def _tag(self, run_id: int | None, job: Job) -> bool:
        if run_id is None:
            return False
        try:
            update_run(self.engine, run_id, batch_id=self.id, batch_row=job.key)
        except Exception:  # the final save tags it again; the run itself goes on
            return False
        return True

    def _finish(self, job: Job, result: Result) -> None:
        with self._lock:
            self.results[job.key] = result
            self.finished.append(job.key)
            self.progress.run_here += 1
            self._count()

    # ----- distinct ------------------------------------------------------------------------------------------
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
    @property
    def has_slots(self) -> bool:
        return any(j.slot for j in self.jobs)

    def header(self) -> list[str]:
        added = [c for c in OUTPUT_COLUMNS if c != "slot" or self.has_slots]
        return [h for h in self.table.header if h.strip().lower() not in added] + added

    def output_rows(self, only_finished: bool = False) -> list[dict[str, Any]]:
        """One output row per job, in the input's order: the row's own columns, then the result's."""
        rows = []
        for job in self.jobs:
            result = self.results.get(job.key)
            if result is None and only_finished:
                continue
            cells = result.cells() if result is not None else {**Result().cells(), "error": NOT_RUN}
            source = self.table.rows[job.row]
            row = {h: v for h, v in source.items() if h.strip().lower() not in OUTPUT_COLUMNS}
            row |= {"slot": job.slot or "", "asked": job.asked, **cells}
            rows.append(row)
        return rows

    def summary(self) -> str:
        p = self.progress
        resumed = sum(1 for r in self.results.values() if r.resumed)
        again = f" ({resumed} found complete from before)" if resumed else ""
        return f"{p.done} of {p.total} texts written{again}: {p.verified} verified, {p.failed} failed"

"""The benchmark runner: every (item, target, mode) started as the app starts a run (`service.start`).

Each result is written to the database the moment it completes, keyed by (item, target, mode) inside a
bench run whose key is a hash of the command's settings; running the same command again therefore
resumes where it stopped and generates nothing already stored. A failure is a stored result with status
'error' and its message, never a dropped sample. Stopping (a stop event, or Ctrl-C) stops submitting,
cancels what is in flight, keeps everything finished and marks the run 'interrupted'.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from .. import storage
from ..backends import Backend, get_backend
from ..request import Request
from ..runs import LiveRun
from ..service import check, check_guaranteed, start
from ..verdict import Target
from ..vocab import (
    AT_LEAST_CAP,
    BENCH_CONTROL_LABELS,
    MARKER_MODES,
    MAX_TARGET,
    MODES,
    BenchControl,
    Lang,
    Mode,
    is_answer,
)
from .report import Row, aggregate
from .suites import Item, Suite, load_suite

Progress = Callable[[int, int, float | None], None]
"""progress(done, total, eta_seconds): done counts stored results (resumed ones included)."""

MAX_CONCURRENCY = 32
STOP_GRACE = 5.0  # seconds a stop waits for in-flight samples to end before leaving them behind


@dataclass(frozen=True)
class BenchConfig:
    """What a `bench` command asks for; everything that decides the items is part of the run key."""

    suite: str
    model: str = "embedded"
    base_url: str | None = None
    modes: tuple[Mode, ...] = ("baseline", "capel")
    lengths: tuple[int, ...] = ()  # () = the suite's default
    limit: int | None = None
    seed: int | None = None
    lang: Lang | None = None  # only this language's items
    file: str | None = None  # the custom suite's CSV/JSONL
    concurrency: int = 1
    grammar_field: str | None = None
    max_calls: int | None = None  # repair: calls a capel/draft-capel sample may take (None or 1: one call)
    control: BenchControl = "equal"  # LIFEBench's control method: what the prompt asks and how LS scores it


@dataclass
class BenchOutcome:
    """How a call to `run_bench` ended. `status` is the bench run's: complete or interrupted."""

    bench_run_id: int
    key: str
    status: str
    total: int
    skipped: int  # already stored before this call (resumed)
    generated: int  # stored by this call
    failed: int  # of those, status 'error'
    seconds: float
    suite: Suite = field(repr=False)


def parse_modes(text: str | Sequence[str]) -> tuple[Mode, ...]:
    """`baseline,exact` -> ('baseline', 'exact') in the app's mode order; ValueError names the modes."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    wanted = {p.strip() for p in parts if p.strip()}
    if not wanted:
        raise ValueError(f"give at least one mode: {', '.join(MODES)}")
    unknown = sorted(wanted - set(MODES))
    if unknown:
        raise ValueError(f"unknown mode(s) {', '.join(unknown)}; use one or more of {', '.join(MODES)}")
    return tuple(m for m in MODES if m in wanted)


def bench_key(config: BenchConfig, suite: Suite) -> str:
    """sha256 of what decides the samples: suite, model, base URL, modes, lengths, limit, seed (+ lang, file).

    Lengths are the resolved ones, so `--lengths 16,32,64,128` and the lifebench default are the same run.
    """
    payload = {
        "suite": config.suite,
        "model": config.model,
        "base_url": storage.clean_base_url(config.base_url.rstrip("/")) if config.base_url else None,
        "modes": list(parse_modes(config.modes)),
        "lengths": list(suite.lengths),
        "limit": config.limit,
        "seed": config.seed,
    }
    if config.lang:
        payload["lang"] = config.lang
    if config.max_calls and config.max_calls > 1:
        payload["max_calls"] = config.max_calls
    if config.control != "equal":  # absent for equal, so runs stored before controls existed still resume
        payload["control"] = config.control
    if suite.fingerprint:
        payload["file_sha256"] = suite.fingerprint
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def plan(suite: Suite, modes: Sequence[Mode]) -> list[tuple[Item, Mode]]:
    """Every sample of a run, in running order (the suite's order, modes interleaved)."""
    return [(item, mode) for item in suite.items for mode in modes]


def target_for(control: BenchControl, n: int) -> Target:
    """The target a sample of this control is generated for (its score is always against N itself).

    At most N is the core's at-most target (the exact mode's at-most grammar, a within-limit verdict). The core
    has no at-least kind, and a generation needs an end (a finite grammar, a token budget), so at least N is the
    range N to AT_LEAST_CAP·N: its prompt asks for "N to 2N" (inside LIFEBench's "at least N"), the exact mode
    builds the range grammar, and LIFEBench's At-Least score gives 100 to every count from N up whatever the cap.
    An exactly-N generation scored as at-least would instead be the Equal-To track under another name.
    """
    if control == "at_most":
        return Target.at_most(n)
    if control == "at_least":
        return Target.between(n, max(n, min(AT_LEAST_CAP * n, MAX_TARGET)))
    return Target.exactly(n)


def request_for(
    item: Item,
    mode: Mode,
    suite: Suite,
    seed: int | None,
    max_calls: int | None = None,
    control: BenchControl = "equal",
) -> Request:
    """The request the app would send; no fallback, so the mode measured is the mode asked for, and one call
    unless the benchmark asks for repair (`max_calls`)."""
    return Request.of(
        target_for(control, item.target),
        item.instruction,
        lang=item.lang,
        mode=mode,
        unit=suite.unit_for(item.lang),
        temperature=item.temperature,
        seed=seed,
        allow_fallback=False,
        max_calls=max_calls or 1,
        time_limit=None,  # a long sample on a slow model is measured, not cut (the stall limit still holds)
    )


def check_modes(suite: Suite, modes: Sequence[Mode], backend: Backend | None, control: BenchControl = "equal") -> None:
    """Reject a mode the backend, unit or control cannot do before any sample runs (one ValueError, not N): the
    checks every run passes (`service.check`), the probe's answer asked once for all samples."""
    markers = [m for m in modes if m in MARKER_MODES]
    if control != "equal" and markers:
        raise ValueError(
            f"{', '.join(markers)} cannot run the {BENCH_CONTROL_LABELS[control].lower()} control: CAPEL's markers "
            "count down to exactly N; use baseline or exact"
        )
    for lang in sorted({i.lang for i in suite.items}):
        item = next(i for i in suite.items if i.lang == lang)
        for mode in modes:
            check(request_for(item, mode, suite, None, control=control), backend, probe=False)
    if backend is not None:
        check_guaranteed(backend, modes)  # a compatible server that ignored its grammar when asked


class _InFlight:
    """Runs currently streaming, so a stop can cancel them from the main thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[int, LiveRun] = {}  # by id()
        self.stopping = threading.Event()

    def add(self, live: LiveRun) -> None:
        with self._lock:
            self._runs[id(live)] = live
        if self.stopping.is_set():
            live.cancel()

    def remove(self, live: LiveRun) -> None:
        with self._lock:
            self._runs.pop(id(live), None)

    def cancel_all(self) -> None:
        self.stopping.set()
        with self._lock:
            for live in self._runs.values():
                live.cancel()


def run_sample(backend: Backend, request: Request, inflight: _InFlight | None = None) -> dict[str, Any] | None:
    """One sample as the fields of a stored result; None if it was cancelled (so a resume redoes it).

    It starts like any run (`service.start`), saving nothing (the benchmark stores its own result) and not asking
    the probe again (`check_modes` did, once). Any failure becomes status 'error' with its message: a backend
    that cannot be reached, a stream cut half-way (partial), or an unexpected exception.
    """
    started = time.monotonic()
    base = {"item_id": "", "lang": request.lang, "target": request.target, "mode": request.mode}
    try:
        live = start(request, backend, None, origin="unknown", probe=False).live
        if inflight is not None:
            inflight.add(live)
        try:
            outcome = live.run()
        finally:
            if inflight is not None:
                inflight.remove(live)
    except Exception as exc:  # never drop a sample: an unexpected failure is a recorded error too
        return {
            **base,
            "status": "error",
            "error_message": f"{type(exc).__name__}: {exc}",
            "seconds": time.monotonic() - started,
        }
    stopped = inflight is not None and inflight.stopping.is_set()
    if outcome.status == "cancelled" or (stopped and outcome.status != "complete"):
        return None  # we stopped it (a dropped connection then looks like a failure): a resume redoes it
    # An output stopped by a limit (output tokens, far past the target, time) is still the model's answer:
    # scored, with a note (as the paper scores whatever a model wrote within the vendor's maximum).
    failed = not is_answer(outcome.failure_kind)
    message = None
    if outcome.failure:
        kind = f"{outcome.failure_kind}: " if outcome.failure_kind else ""
        message = f"{kind}{outcome.failure or outcome.status}"
    return {
        **base,
        "status": "error" if failed else "ok",
        "count": outcome.count,
        "exact": outcome.exact,
        "valid": outcome.valid,
        "errors": [e.as_dict() for e in outcome.errors],
        "error_message": message,
        "prompt_tokens": outcome.prompt_tokens,
        "completion_tokens": outcome.completion_tokens,
        "seconds": outcome.seconds,
        "raw": outcome.raw,
        "text": outcome.text,
        "fluency": outcome.fluency,
        "end_probability": outcome.end_probability,
        "score": outcome.score,
        "calls": outcome.calls,
    }


def _weight(item: Item) -> float:
    """Rough cost of a sample (tokens grow with the target), so the ETA does not lie after short ones."""
    return item.target + 32.0


def run_bench(
    config: BenchConfig,
    *,
    suite: Suite | None = None,
    backend: Backend | None = None,
    engine: Engine | None = None,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> BenchOutcome:
    """Run (or resume) a benchmark; blocks until done, stopped (`stop` set) or interrupted (Ctrl-C).

    Raises ValueError for bad settings (suite, lengths, a mode the backend cannot do) and BackendError if
    the backend cannot even be built (a missing key); every per-sample failure is stored instead.
    """
    if not 1 <= config.concurrency <= MAX_CONCURRENCY:
        raise ValueError(f"concurrency must be from 1 to {MAX_CONCURRENCY}, got {config.concurrency}")
    modes = parse_modes(config.modes)
    if suite is None:
        suite = load_suite(
            config.suite,
            lengths=config.lengths,
            limit=config.limit,
            seed=config.seed,
            lang=config.lang,
            file=config.file,
            control=config.control,
        )
    check_modes(suite, modes, None, config.control)
    if backend is None:
        backend = get_backend(config.model, base_url=config.base_url, grammar_field=config.grammar_field)
    check_modes(suite, modes, backend, config.control)
    engine = engine or storage.get_engine()
    key = bench_key(config, suite)
    run = storage.get_or_create_bench_run(
        engine,
        key,
        suite=config.suite,
        model=config.model,
        base_url=config.base_url,
        modes=list(modes),
        lengths=list(suite.lengths),
        limit=config.limit,
        seed=config.seed,
        control=config.control,
        status="running",
    )
    if run.status != "running":
        storage.set_bench_run_status(engine, run.id, "running")
    done = storage.done_keys(engine, run.id)
    samples = plan(suite, modes)
    todo = [(item, mode) for item, mode in samples if (item.item_id, item.target, mode) not in done]
    total = len(samples)
    skipped = total - len(todo)
    started = time.monotonic()
    state: dict[str, float] = {"generated": 0, "failed": 0, "done_weight": 0.0}
    left_weight = sum(_weight(item) for item, _ in todo)
    if progress:
        progress(skipped, total, None)

    inflight = _InFlight()
    stop = stop or threading.Event()

    def work(item: Item, mode: Mode) -> str | None:
        """Generate and store one sample; its status ('ok'/'error'), or None if cancelled (not stored)."""
        request = request_for(item, mode, suite, config.seed, config.max_calls, config.control)
        fields = run_sample(backend, request, inflight)
        if fields is None:
            return None
        # Stored against N itself (an at-least request's target is its cap), with the control it is scored by.
        fields.update(item_id=item.item_id, target=item.target, model=config.model, control=config.control)
        storage.add_bench_result(engine, run.id, **fields)
        return str(fields["status"])

    def finished(item: Item, status: str | None) -> None:
        nonlocal left_weight
        if status is None:
            return
        state["generated"] += 1
        state["failed"] += status == "error"
        state["done_weight"] += _weight(item)
        left_weight -= _weight(item)
        if progress:
            elapsed = time.monotonic() - started
            eta = elapsed / state["done_weight"] * max(left_weight, 0.0)
            progress(skipped + int(state["generated"]), total, eta)

    pending: dict[Future[str | None], Item] = {}
    queue = iter(todo)
    stopped_at: float | None = None
    pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="bench")
    try:
        try:
            while True:
                while not stop.is_set() and len(pending) < config.concurrency:
                    nxt = next(queue, None)
                    if nxt is None:
                        break
                    pending[pool.submit(work, *nxt)] = nxt[0]
                if not pending:
                    break
                done_now, _ = wait(list(pending), timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in done_now:
                    finished(pending.pop(fut), fut.result())
                if stop.is_set():
                    inflight.cancel_all()
                    stopped_at = stopped_at or time.monotonic()
                    if time.monotonic() - stopped_at > STOP_GRACE:
                        break  # a cancelled stream stops at its next chunk; do not wait out a slow prefill
        except KeyboardInterrupt:
            stop.set()
            inflight.cancel_all()
            try:
                for fut in wait(list(pending), timeout=STOP_GRACE).done:
                    if fut.exception() is None:
                        finished(pending.pop(fut), fut.result())
            except KeyboardInterrupt:  # a second Ctrl-C: leave the cancelled stragglers behind
                pass
    except BaseException:
        storage.set_bench_run_status(engine, run.id, "interrupted")
        raise
    finally:
        # Stragglers were cancelled: they end at their next chunk and store nothing.
        pool.shutdown(wait=not stop.is_set(), cancel_futures=True)
    complete = skipped + state["generated"] == total  # a stop after the last sample changes nothing
    status = "complete" if complete else "interrupted"
    storage.set_bench_run_status(engine, run.id, status)
    return BenchOutcome(
        bench_run_id=run.id,
        key=key,
        status=status,
        total=total,
        skipped=skipped,
        generated=int(state["generated"]),
        failed=int(state["failed"]),
        seconds=time.monotonic() - started,
        suite=suite,
    )


def run_results(engine: Engine | None, bench_run_ids: Sequence[int]) -> list[Any]:
    """The stored results of one or more bench runs (records to pass to `report.aggregate`)."""
    return storage.bench_results(engine or storage.get_engine(), list(bench_run_ids))


def load_rows(bench_run_ids: Sequence[int], engine: Engine | None = None, *, per_run: bool = False) -> list[Row]:
    """Aggregated rows of one or more runs, ready for the charts and `results_csv`.

    Results of the same model, mode, language and target are pooled across runs; with `per_run` each run
    stays apart, its model shown as `model #id suite` (to compare two runs of one model side by side).
    """
    engine = engine or storage.get_engine()
    records: list[Any] = storage.bench_results(engine, list(bench_run_ids))
    if per_run:
        runs = {r.id: r for r in storage.list_bench_runs(engine) if r.id in set(bench_run_ids)}
        records = [
            {**dataclasses.asdict(r), "model": f"{r.model} #{r.bench_run_id} {runs[r.bench_run_id].suite}"}
            for r in records
        ]
    return aggregate(records)


def list_runs(engine: Engine | None = None) -> list[Any]:
    """Every bench run, newest first (id, suite, model, modes, lengths, status, result_count, ...)."""
    return storage.list_bench_runs(engine or storage.get_engine())

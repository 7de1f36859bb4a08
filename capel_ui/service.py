"""The one way to start a run: check the request, build its model, refuse what the model cannot guarantee, start
the live run(s), then score, judge and rank them.

The CLI's `generate`, the Write and Compare pages, variants and the benchmark runner all start runs here, so a
request is checked (a ValueError saying what is accepted, before any model is built), a guaranteed mode is
refused on a server whose probe saw it ignore its grammar, and every run is saved, scored and judged the same
way. A surface gathers inputs, calls `start`, and draws what the `RunHandle` yields.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from sqlalchemy import Engine

from .backends import Backend, why_refused
from .generation import Generation
from .judge import judge_run
from .outcome import Outcome
from .request import Request, validate_request
from .runs import LiveRun, quality_fields, run_together
from .variants import Candidate, rank, variant_requests
from .vocab import Mode, Origin

T = TypeVar("T")
Model = Backend | Callable[[], Backend]
"""A backend already built, or how to build one (the registry's `get_backend`, the pages' cached
`resources.build_backend`): built only once the request is known to be good."""
Judge = Backend | Callable[[], Backend | None] | None
"""The judge, or how to build it (None from the builder: no judge after all), or no judge."""
Store = Engine | Callable[[], Engine] | None
"""Where runs are saved (or how to open it, once the checks passed); None keeps nothing (`--no-save`, bench)."""


def check_guaranteed(backend: Backend, modes: Iterable[Mode]) -> None:
    """Refuse the guaranteed modes among `modes` on a server whose probe saw it ignore or reject its grammar field
    (ValueError with the probe's reason): the one "is a guaranteed mode available" check every run passes."""
    refused = why_refused(backend, modes)
    if refused:
        raise ValueError(refused)


def check(request: Request, backend: Backend | None = None, *, probe: bool = True) -> None:
    """Every check a request passes before it runs (ValueError saying what is accepted): its own fields, then
    what `backend` takes and, unless `probe` is off (the caller checked these modes already), the probe's answer."""
    validate_request(request, backend)
    if backend is not None and probe:
        check_guaranteed(backend, [request.mode])


def _built(thing: T | Callable[[], T]) -> T:
    """`thing`, or what its builder builds: only once the checks before it have passed."""
    return thing() if callable(thing) else thing


def start(
    request: Request,
    model: Model,
    engine: Store,
    *,
    origin: Origin,
    variants: int = 1,
    judge: Judge = None,
    instruction: str | None = None,
    comparison_id: str | None = None,
    probe: bool = True,
) -> RunHandle:
    """Check `request`, build the model and the judge, and start one run, or K variants saved as one group (origin
    `variant`); each row is saved as `running` at once. Raises ValueError for bad input (before any model is
    built) or a mode the model cannot serve, BackendError when the model or the judge cannot be built."""
    check(request)
    requests = variant_requests(request, variants)
    backend = _built(model)
    check(request, backend, probe=probe)
    judge_backend = _built(judge)
    store = _built(engine)
    group_id = uuid.uuid4().hex[:12] if variants > 1 else None
    lives = [
        LiveRun(
            Generation(backend, req),
            store,
            origin="variant" if group_id else origin,
            instruction=instruction,
            comparison_id=comparison_id,
            group_id=group_id,
        )
        for req in requests
    ]
    return RunHandle(lives, store, judge_backend, group_id)


@dataclass
class RunHandle:
    """The started run(s): stream one (`stream`), or run several while painting (`run_together`); `lives` to
    draw their live state; `result()` once they ended, scored, judged and ranked."""

    lives: list[LiveRun]
    engine: Engine | None
    judge: Backend | None = None
    group_id: str | None = None
    _result: list[Candidate] | None = field(default=None, repr=False)

    @property
    def live(self) -> LiveRun:
        """The run (the first, for variants)."""
        return self.lives[0]

    @property
    def request(self) -> Request:
        return self.live.request

    @property
    def notice(self) -> str | None:
        """What the run changed on the writer's behalf (the baseline for a model known to misread CAPEL)."""
        return self.live.view().notice

    def stream(self) -> Iterator[str]:
        """The one run's text chunks as they arrive; its final state is saved however the loop ends."""
        return self.live.stream()

    def run(self) -> Outcome:
        """The one run to its end, drawing nothing."""
        return self.live.run()

    def run_together(self, tick: Callable[[], None] | None = None) -> list[Outcome]:
        """Every run at once in worker threads, `tick` (the caller's painting) on this thread until all end."""
        return run_together(self.lives, tick)

    def cancel(self) -> None:
        for live in self.lives:
            live.cancel()

    def result(self) -> list[Candidate]:
        """The finished runs best first: each scored (`runs.quality_fields`) and, with a judge, rated once and the
        rating stored with its run (`judge.judge_run`)."""
        if self._result is None:
            self._result = rank([self._candidate(live) for live in self.lives])
        return self._result

    def _candidate(self, live: LiveRun) -> Candidate:
        o = live.outcome
        cand = Candidate(o, live.run_id, quality_fields(o)["score"])
        if self.judge is not None and o.text.strip():
            cand.judge_score = judge_run(self.engine, live.run_id, self.judge, o.request.instruction, o.text)
        return cand


def together(handles: list[RunHandle]) -> RunHandle:
    """Several started runs as one handle, to run side by side (Compare's columns)."""
    return RunHandle([live for h in handles for live in h.lives], handles[0].engine if handles else None)

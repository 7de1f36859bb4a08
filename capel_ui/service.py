"""The one way to start a run: check the request, build its model, refuse what the model cannot guarantee, start
the live run(s), then score, judge and rank them.

The CLI's `generate`, the Write and Compare pages, variants, a batch's rows and the benchmark runner all start runs
here, so a request is checked (a ValueError saying what is accepted, before any model is built), a guaranteed mode
is refused on a server whose probe saw it ignore its grammar, and every run is saved, scored and judged the same
way. A surface gathers inputs, calls `start`, and draws what the `RunHandle` yields.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from .backends import (
    Backend,
    BackendError,
    Capabilities,
    ProbeResult,
    capabilities_for,
    provider_of,
    spec_of,
    why_not_guaranteed,
    why_refused,
)
from .backends.probe import vendor_probe
from .generation import Generation
from .judge import judge_run
from .outcome import Outcome
from .request import Request, validate_request
from .runs import SAVE_INTERVAL, LiveRun, run_together
from .variants import Candidate, rank, variant_requests
from .vocab import GRAMMAR_MODES, Lang, Mode, Origin, TargetKind, Unit, grammar_kind, unguided_mode, why_unavailable
from .vocab import MODES as ALL_MODES

if TYPE_CHECKING:  # SQLAlchemy is loaded where a run is saved, not by a command that keeps nothing
    from sqlalchemy import Engine

T = TypeVar("T")
Model = Backend | Callable[[], Backend]
"""A backend already built, or how to build one (the registry's `get_backend`, the pages' cached
`resources.build_backend`): built only once the request is known to be good."""
Judge = Backend | Callable[[], Backend | None] | None
"""The judge, or how to build it (None from the builder: no judge after all), or no judge."""
Store: TypeAlias = "Engine | Callable[[], Engine] | None"
"""Where runs are saved (or how to open it, once the checks passed); None keeps nothing (`--no-save`, bench)."""


NO_PATTERN_FORM = "a character limit's grammar has no JSON-schema `pattern` form, so a pattern route cannot promise it"


@dataclass(frozen=True)
class ModeChoice:
    """The modes a model can run for one target, the one that runs when the writer names none, and why each other
    mode cannot (`why_not` for the guaranteed ones: no grammar, or a server whose probe saw it ignore one)."""

    modes: tuple[Mode, ...]
    default: Mode
    skipped: dict[Mode, str] = field(default_factory=dict)
    why_not: str | None = None

    @property
    def guaranteed(self) -> bool:
        """Whether the guaranteed modes are on for this model."""
        return self.why_not is None


def modes_for(
    caps: Capabilities,
    lang: Lang,
    unit: Unit,
    kind: TargetKind = "exactly",
    *,
    rewrite: bool = False,
    probed: ProbeResult | None = None,
) -> ModeChoice:
    """The one rule for the modes a model can run and the default among them, used by the CLI, rewrite, batch, Write
    and Compare. The default is the guaranteed count (`exact`) wherever a grammar can promise it; else CAPEL where
    the model keeps the count one marker per unit, else the plain instruction (`vocab.unguided_mode`). A rewrite
    runs `exact` only where the model takes a llama.cpp grammar (it then keeps whole clauses of the writer's own
    text), else the plain rewrite prompt (no markers to misread)."""
    why_not = why_not_guaranteed(caps.grammar, probed)
    reasons = {m: why_unavailable(m, why_not is None, lang, unit, kind) for m in ALL_MODES}
    if caps.grammar_field == "json_schema" and grammar_kind(lang, unit) == "chars":  # GBNF only: no pattern form
        reasons.update({m: NO_PATTERN_FORM for m in GRAMMAR_MODES if reasons[m] is None})
    modes = tuple(m for m, reason in reasons.items() if reason is None)
    skipped = {m: reason for m, reason in reasons.items() if reason is not None}
    return ModeChoice(modes, _default(modes, caps, (lang, unit, kind), rewrite), skipped, why_not)


def _default(modes: tuple[Mode, ...], caps: Capabilities, form: tuple[Lang, Unit, TargetKind], rewrite: bool) -> Mode:
    if rewrite:
        return "exact" if caps.takes_gbnf and "exact" in modes else "baseline"
    if "exact" in modes:
        return "exact"
    unguided = unguided_mode(*form)
    return unguided if unguided in modes or not modes else modes[0]


def modes_for_model(
    model: str,
    lang: Lang,
    unit: Unit,
    kind: TargetKind = "exactly",
    *,
    base_url: str | None = None,
    grammar_field: str | None = None,
    rewrite: bool = False,
) -> ModeChoice:
    """`modes_for` a model named on the command line or in a batch row, from its provider's declaration before any
    model is built (and, for a probe-gated vendor such as xAI, its probe with the key at hand: one tiny request,
    cached); a model the registry cannot place takes no grammar (`start` then says what is wrong with it)."""
    try:
        provider = provider_of(model, base_url)
        caps = capabilities_for(provider, model, grammar_field)
    except BackendError:
        return modes_for(Capabilities(), lang, unit, kind, rewrite=rewrite)
    probed = vendor_probe(provider, model, base_url=base_url) if spec_of(provider).keyed else None  # xAI's gate
    return modes_for(caps, lang, unit, kind, rewrite=rewrite, probed=probed)


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
    batch: tuple[str, str] | None = None,
    save_interval: float | None = SAVE_INTERVAL,
) -> RunHandle:
    """Check `request`, build the model and the judge, and start one run, or K variants saved as one group (origin
    `variant`); each row is saved as `running` at once (a batch's row with its batch id and row key, `batch`, and
    no progress saves where `save_interval` is None). Raises ValueError for bad input (before any model is built) or
    a mode the model cannot serve, BackendError when the model or the judge cannot be built."""
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
            batch=batch,
            save_interval=save_interval,
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
        """The finished runs best first: each scored by its assessment and, with a judge, rated once and the
        rating stored with its run (`judge.judge_run`)."""
        if self._result is None:
            self._result = rank([self._candidate(live) for live in self.lives])
        return self._result

    def _candidate(self, live: LiveRun) -> Candidate:
        o = live.outcome
        cand = Candidate(o, live.run_id, o.score)
        if self.judge is not None and o.text.strip():
            cand.judge_score = judge_run(self.engine, live.run_id, self.judge, o.request.instruction, o.text)
        return cand


def together(handles: list[RunHandle]) -> RunHandle:
    """Several started runs as one handle, to run side by side (Compare's columns)."""
    return RunHandle([live for h in handles for live in h.lives], handles[0].engine if handles else None)

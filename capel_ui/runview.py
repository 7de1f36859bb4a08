"""The one read-only view of a live run: what the pages and the CLI draw while it streams.

A surface never reaches into a run's parser, calls or backend: it asks the run (`LiveRun.view()`) for a
`RunView`, a frozen snapshot taken under the run's lock, and draws it. Nothing here imports the run, so the
view sits below everything that builds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .parser import MarkerError
from .verdict import Target
from .vocab import Lang, Mode, Phase, Unit, unit_label


@dataclass(frozen=True)
class RunView:
    """A live run as it stands now. `text` is the clean text so far (its end may still change); `settled` only
    what stays whatever comes next (what a stream to a file may print at once)."""

    label: str  # the model as the pages name it ("SmolLM2-135M (embedded)")
    model: str
    mode: Mode
    lang: Lang
    unit: Unit
    target: Target
    units_done: int
    raw: str
    text: str
    settled: str
    errors: tuple[MarkerError, ...]
    marker_spans: tuple[tuple[int, int], ...]
    draft_span: tuple[int, int] | None
    phase: Phase
    note: str  # the live line's suffix: " · repairing from <12> (call 2 of 3)", "" when there is nothing to add
    call: int  # the call now streaming (1 unless repaired)
    max_calls: int
    started: float  # time.monotonic() when the run started
    time_limit: float | None
    notice: str | None  # what the run changed on the writer's behalf (a fallback mode, a language note)
    rewrite_route: str | None = None  # a rewrite's route as the writer reads it (rewrite.Route.described); else None

    @property
    def remaining(self) -> int:
        """Units left, as the big countdown shows it (never negative)."""
        return max(self.target.high - self.units_done, 0)

    @property
    def unit_label(self) -> str:
        return unit_label(self.unit)

    @property
    def drafting(self) -> bool:
        return self.phase == "drafting"

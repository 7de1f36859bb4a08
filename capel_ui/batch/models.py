"""A batch's models: each model's backend built once per batch, and how many runs it serves at once.

A batch may name several models (a `model` column); every row of one model shares its backend, and a model whose
backend cannot be built fails each of its rows with the same reason, asked once.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..backends import (
    Backend,
    BackendError,
    Capabilities,
    capabilities_for,
    get_backend,
    provider_of,
    spec_of,
    why_not_guaranteed,
)
from ..backends.probe import vendor_probe

DEFAULT_SLOTS = 4
"""Runs at once where nothing says otherwise: a hosted provider's 429s are waited out by the guard."""


class Models:
    """The backends of a batch's models, built on first use (`backend_for`, or `get_backend`: the batch's own
    `model` at `base_url`, any other model a row names at its provider's), and the workers its jobs get: one per
    slot the busiest backend serves at once, `concurrency` where given."""

    def __init__(
        self,
        model: str,
        base_url: str | None,
        grammar_field: str | None,
        *,
        concurrency: int | None = None,
        backend_for: Callable[[str], Backend] | None = None,
    ) -> None:
        self.model, self.base_url, self.grammar_field = model, base_url, grammar_field
        self.concurrency = concurrency
        self._backend_for = backend_for or self._build
        self._backends: dict[str, Backend | BackendError] = {}
        self._lock = threading.Lock()

    def _build(self, model: str) -> Backend:
        base_url = self.base_url if model == self.model else None
        return get_backend(model, base_url=base_url, grammar_field=self.grammar_field)

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

    def capabilities(self, model: str) -> Capabilities:
        """What `model` takes (decides a row's default mode), as declared and, on a probe-gated vendor (xAI), as its
        probe with this key proved (a grammar it did not prove is none: the row runs CAPEL, not a refusal). No model
        is started; a model the registry cannot place takes nothing (`backend` then says what is wrong with it)."""
        built = self._backends.get(model)
        if isinstance(built, Backend):
            return built.capabilities
        try:
            provider = provider_of(model, self.base_url)
            caps = capabilities_for(provider, model, self.grammar_field)
        except BackendError:
            return Capabilities()
        probed = vendor_probe(provider, model, base_url=self.base_url) if spec_of(provider).keyed else None
        return caps if why_not_guaranteed(caps.grammar, probed) is None else replace(caps, grammar_field=None)

    def slots_for(self, backend: Backend) -> int:
        """Runs one backend serves at once: the embedded server's parallel slots, else `concurrency` (4)."""
        if self.concurrency:
            return self.concurrency
        if spec_of(backend.provider).local:
            return int(os.environ.get("CAPEL_EMBEDDED_PARALLEL", str(DEFAULT_SLOTS)))
        return DEFAULT_SLOTS

    def workers(self, models: Iterable[str], jobs: int) -> int:
        """Workers for `jobs` jobs of `models`: the most slots any of their backends serves, at most one a job."""
        slots = 1
        for model in set(models):
            with contextlib.suppress(BackendError):  # its jobs fail on their own, each with the reason
                slots = max(slots, self.slots_for(self.backend(model)))
        return max(1, min(slots, jobs))

"""Model backends: one interface (`Backend.stream`), one module per provider (`providers/`), and one guard
(`guard.Guarded`) around every backend `get_backend` builds for retries, Stop and the words of a failure.

The names below are imported from their modules when first asked for (PEP 562), not with the package: a process
that needs one module (a resident model server needs `embedded`) does not load every provider and the `openai`
client's types (most of a second)."""

from __future__ import annotations

import importlib
from typing import Any

from .sdk import defer_types

defer_types()  # before any module of the package imports `openai`: its types load as they are used (sdk.py)

_FROM = {
    "base": (
        "GRAMMAR_FIELDS",
        "Backend",
        "BackendError",
        "CancelToken",
        "Capabilities",
        "FailureKind",
        "Fault",
        "GrammarField",
        "Options",
        "Usage",
    ),
    "embedded": ("ServerHandle", "smollm2_path", "start_server"),
    "guard": ("Guarded",),
    "openai_compat": ("OpenAICompatBackend",),
    "openai_responses": ("OpenAIResponsesBackend",),
    # not `probe` itself: the module of that name would stand for it once imported (`backends.probe.probe`)
    "probe": ("ProbeResult", "needs_probe", "why_not_guaranteed", "why_refused"),
    "providers": ("BackendArgs", "language_note", "register", "spec_of", "visible"),
    "providers.scripted": ("ScriptedBackend", "Turn", "staged"),
    "registry": (
        "COUNTDOWN_FALLBACK",
        "EMBEDDED",
        "EMBEDDED_MODEL",
        "MARKERS_TOO_HARD",
        "PROVIDERS",
        "ApiKey",
        "Fallback",
        "KeySource",
        "ModelChoice",
        "Provider",
        "ProviderSpec",
        "capabilities_for",
        "fallback",
        "get_backend",
        "key_help",
        "model_label",
        "provider_of",
        "resolve_key",
        "secrets_files",
    ),
}
_MODULE_OF = {name: module for module, names in _FROM.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    """A name of the package, imported from its module the first time it is asked for, then kept."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

"""Model backends: one interface (`Backend.stream`), reached through the `openai` client."""

from .base import Backend, BackendError, Capabilities, FailureKind, GrammarField, Options, Usage
from .embedded import ServerHandle, smollm2_path, start_server
from .openai_compat import OpenAICompatBackend
from .registry import (
    COUNTDOWN_FALLBACK,
    EMBEDDED_MODEL,
    PROVIDERS,
    Provider,
    ProviderSpec,
    capabilities_for,
    get_backend,
    provider_of,
    resolve_key,
    uses_fallback,
)

__all__ = [
    "COUNTDOWN_FALLBACK",
    "EMBEDDED_MODEL",
    "PROVIDERS",
    "Backend",
    "BackendError",
    "Capabilities",
    "FailureKind",
    "GrammarField",
    "OpenAICompatBackend",
    "Options",
    "Provider",
    "ProviderSpec",
    "ServerHandle",
    "Usage",
    "capabilities_for",
    "get_backend",
    "provider_of",
    "resolve_key",
    "smollm2_path",
    "start_server",
    "uses_fallback",
]

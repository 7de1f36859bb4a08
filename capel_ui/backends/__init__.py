"""Model backends: one interface (`Backend.stream`), one module per provider (`providers/`), and one guard
(`guard.Guarded`) around every backend `get_backend` builds for retries, Stop and the words of a failure."""

from .base import (
    GRAMMAR_FIELDS,
    Backend,
    BackendError,
    CancelToken,
    Capabilities,
    FailureKind,
    Fault,
    GrammarField,
    Options,
    Usage,
)
from .embedded import ServerHandle, smollm2_path, start_server
from .guard import Guarded
from .openai_compat import OpenAICompatBackend
from .openai_responses import OpenAIResponsesBackend
from .probe import ProbeResult, needs_probe, probe, refusal
from .providers import BackendArgs, language_note, register, spec_of, visible
from .providers.scripted import ScriptedBackend, Turn, staged
from .registry import (
    COUNTDOWN_FALLBACK,
    EMBEDDED,
    EMBEDDED_MODEL,
    PROVIDERS,
    ApiKey,
    KeySource,
    ModelChoice,
    Provider,
    ProviderSpec,
    capabilities_for,
    get_backend,
    key_help,
    model_label,
    provider_of,
    resolve_key,
    secrets_files,
    uses_fallback,
)

__all__ = [
    "COUNTDOWN_FALLBACK",
    "EMBEDDED",
    "EMBEDDED_MODEL",
    "GRAMMAR_FIELDS",
    "PROVIDERS",
    "ApiKey",
    "Backend",
    "BackendArgs",
    "BackendError",
    "CancelToken",
    "Capabilities",
    "FailureKind",
    "Fault",
    "GrammarField",
    "Guarded",
    "KeySource",
    "ModelChoice",
    "OpenAICompatBackend",
    "OpenAIResponsesBackend",
    "Options",
    "ProbeResult",
    "Provider",
    "ProviderSpec",
    "ScriptedBackend",
    "ServerHandle",
    "Turn",
    "Usage",
    "capabilities_for",
    "get_backend",
    "key_help",
    "language_note",
    "model_label",
    "needs_probe",
    "probe",
    "provider_of",
    "refusal",
    "register",
    "resolve_key",
    "secrets_files",
    "smollm2_path",
    "spec_of",
    "staged",
    "start_server",
    "uses_fallback",
    "visible",
]

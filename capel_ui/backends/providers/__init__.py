"""Every provider, one module each, registered here in the sidebar's order.

A new provider is one module here declaring its `ProviderSpec`, plus its name in the list below; a test can
register a provider of its own with `register(...)` without touching any module.
"""

from . import (
    anthropic,
    compatible,
    deepseek,
    embedded,
    gemini,
    gguf,
    local,
    mistral,
    openai,
    openrouter,
    scripted,
    xai,
)
from .spec import (
    PROVIDERS,
    BackendArgs,
    ModelInput,
    ProviderSpec,
    language_note,
    register,
    spec_of,
    visible,
)

for _module in (
    embedded,
    local,
    gguf,
    openai,
    anthropic,
    gemini,
    xai,
    mistral,
    deepseek,
    openrouter,
    compatible,
    scripted,
):
    register(_module.SPEC)

__all__ = [
    "PROVIDERS",
    "BackendArgs",
    "ModelInput",
    "ProviderSpec",
    "language_note",
    "register",
    "spec_of",
    "visible",
]

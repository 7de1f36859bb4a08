"""Any GGUF file on this machine, served in-process by llama.cpp."""

from __future__ import annotations

from pathlib import Path

from .common import IN_PROCESS_LLAMA_CPP, llama_cpp
from .spec import ProviderSpec

SPEC = ProviderSpec(
    "gguf",
    "Local GGUF file",
    lambda args: llama_cpp(args, args.model),
    local=True,
    model_input="file",
    default_caps=IN_PROCESS_LLAMA_CPP,
    owns=lambda model: model.endswith(".gguf"),
    model_label=lambda model: Path(model).name,
    note="Any .gguf file on this machine, served in-process by llama.cpp (e.g. a Qwen model for Chinese).",
)

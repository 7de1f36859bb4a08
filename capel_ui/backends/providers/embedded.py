"""The embedded SmolLM2-135M: offline, in-process llama.cpp, the default model."""

from __future__ import annotations

from .common import IN_PROCESS_LLAMA_CPP, llama_cpp
from .spec import ProviderSpec

EMBEDDED_MODEL = "embedded"

SPEC = ProviderSpec(
    "embedded",
    "Embedded (SmolLM2-135M, offline)",
    lambda args: llama_cpp(args, None),
    local=True,
    model_input="fixed",
    models=(EMBEDDED_MODEL,),
    default_caps=IN_PROCESS_LLAMA_CPP,
    owns=lambda model: model == EMBEDDED_MODEL,
    model_label=lambda model: "SmolLM2-135M (embedded)",
    languages=("en",),
    note="A 135M model: fast and offline, guaranteed modes work; it does not write Chinese and rarely "
    "follows the countdown on its own.",
)

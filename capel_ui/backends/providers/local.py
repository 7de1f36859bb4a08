"""Models pulled with `python -m capel_ui models pull NAME` (or the Models page), served in-process by llama.cpp
exactly as the embedded model is: the guaranteed modes included."""

from __future__ import annotations

from ... import local_models
from ..base import Backend, BackendError
from .common import IN_PROCESS_LLAMA_CPP, llama_cpp
from .spec import BackendArgs, ProviderSpec


def _build(args: BackendArgs) -> Backend:
    path = local_models.path_of(args.model)
    if path is None:
        raise BackendError(
            "not_found",
            f"{args.model} is not pulled yet (or its download did not finish): run "
            f"`python -m capel_ui models pull {args.model}`, or pull it on the Models page.",
        )
    return llama_cpp(args, path)


def _label(model: str) -> str:
    item = local_models.BY_NAME.get(model)
    return f"{model} (local, {', '.join(item.languages)})" if item else f"{model} (local)"


SPEC = ProviderSpec(
    "local",
    "Pulled local model",
    _build,
    local=True,
    model_input="list",
    list_models=lambda: tuple(local_models.installed()),
    default_caps=IN_PROCESS_LLAMA_CPP,
    owns=lambda model: model in local_models.BY_NAME,
    model_label=_label,
    note="A model of the catalogue pulled to this machine (Models page), served in-process by llama.cpp.",
)

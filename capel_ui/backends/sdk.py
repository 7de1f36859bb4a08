"""The `openai` package, imported without defining every type of every endpoint up front.

`import openai` runs `from . import types`, and the `__init__` of `openai.types` and of its subpackages import the
pydantic models of all of OpenAI's endpoints (responses, evals, graders, vector stores…): about a second on 2
cores, more than half of a command that writes three words on the embedded model (issue 45). A chat completion
needs a few dozen of them. `defer_types()` has each package under `openai.types` start empty: a submodule is
imported when it is named, as Python does for any package, and the package's own `__init__` runs, once and in
full, the first time one of its other names is asked for. Nothing of the SDK is changed or copied: the same
modules run, later, and only when used. `capel_ui.backends` calls it before any of its modules imports `openai`;
where `openai` was imported already, nothing changes.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

PACKAGE = "openai.types"


def defer_types() -> bool:
    """Have the packages under `openai.types` load as they are used; True if they will (or already do)."""
    if any(isinstance(finder, _DeferredPackages) for finder in sys.meta_path):
        return True
    if PACKAGE in sys.modules:
        return False
    sys.meta_path.insert(0, _DeferredPackages())
    return True


class _DeferredPackages(importlib.abc.MetaPathFinder):
    """Finds `openai.types` and its subpackages as Python would, and has each start empty (`_DeferredInit`)."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != PACKAGE and not name.startswith(PACKAGE + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.submodule_search_locations is None or spec.loader is None:
            return spec  # a plain module (or none): imported as usual
        spec.loader = _DeferredInit(spec.loader)
        return spec


class _DeferredInit(importlib.abc.Loader):
    """A package's loader that runs its `__init__` (with the package's own loader) on the first name asked of it
    that is not a submodule; until then the package holds only what Python puts in every package and the
    submodules imported so far. A lock per package: a second thread asking waits for the first's `__init__`."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        loader, lock, state = self._loader, threading.RLock(), {"ran": False}
        folders = list(module.__path__)

        def run_init() -> None:
            with lock:
                if not state["ran"]:
                    state["ran"] = True  # before: the `__init__` may ask the package for a name it has not set yet
                    loader.exec_module(module)

        def __getattr__(name: str) -> Any:
            if name == "__all__":  # `from package import *`: every name, so the `__init__` first
                run_init()
                if name in module.__dict__:
                    return module.__dict__[name]
            if name.startswith("__"):
                raise AttributeError(name)
            if _is_submodule(folders, name):
                return importlib.import_module(f"{module.__name__}.{name}")
            run_init()
            try:
                return module.__dict__[name]
            except KeyError:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None

        def __dir__() -> list[str]:
            run_init()
            return sorted(module.__dict__)

        module.__dict__.update(__getattr__=__getattr__, __dir__=__dir__)


def _is_submodule(folders: list[str], name: str) -> bool:
    """Whether `name` is a module or package in one of the package's folders."""
    return importlib.machinery.PathFinder.find_spec(name, folders) is not None

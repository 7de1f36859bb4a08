"""The `openai` package, imported without defining every type of every endpoint up front.

`import openai` runs `from . import types`, and the `__init__` of `openai.types` and of its subpackages import the
pydantic models of all of OpenAI's endpoints (responses, evals, graders, vector stores…): about a second on 2
cores, more than half of a command that writes three words on the embedded model (issue 45). A chat completion
needs a few dozen of them. `defer_types()` has each package under `openai.types` start empty: a submodule is
imported when it is named, as Python does for any package, and a name its `__init__` takes from a submodule
(every statement of those files is a `from .module import Name as Name`) is imported from there the first time it
is asked for. Only Python's own imports run, each under its own module lock, so threads asking at once wait as they
would for any import and never on a lock of ours. Nothing of the SDK is changed or copied. `capel_ui.backends`
calls it before any of its modules imports `openai`; where `openai` was imported already, nothing changes, and a
package whose `__init__` does anything else is imported whole, as usual.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from pathlib import Path
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
    """Finds `openai.types` and its subpackages as Python would, and has each start empty (`_DeferredInit`) where
    its `__init__` only names what its submodules define."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != PACKAGE and not name.startswith(PACKAGE + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.submodule_search_locations is None or not spec.origin:
            return spec  # a plain module (or none): imported as usual
        names = _names_of(Path(spec.origin))
        if names is not None:
            spec.loader = _DeferredInit(names)
        return spec


class _DeferredInit(importlib.abc.Loader):
    """A package's loader that leaves its `__init__` unrun: each name it would have set comes from its submodule
    on first use (`names`: name → (submodule, attribute; None for the submodule itself))."""

    def __init__(self, names: dict[str, tuple[str, str | None]]) -> None:
        self._names = names

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        names, package = self._names, module.__name__

        def every_name() -> None:  # what the `__init__` would have set, all of it
            for each in names:
                __getattr__(each)

        def __getattr__(name: str) -> Any:
            if name == "__all__":  # `from package import *`: every name first, then Python takes them all
                every_name()
                raise AttributeError(name)
            if name in names:
                submodule, attribute = names[name]
                found = importlib.import_module(submodule if submodule == "__future__" else f"{package}.{submodule}")
                value = found if attribute is None else getattr(found, attribute)
                module.__dict__[name] = value
                return value
            if not name.startswith("__") and _is_submodule(module.__path__, name):
                return importlib.import_module(f"{package}.{name}")
            raise AttributeError(f"module {package!r} has no attribute {name!r}")

        def __dir__() -> list[str]:
            every_name()
            return sorted(module.__dict__)

        module.__dict__.update(__getattr__=__getattr__, __dir__=__dir__)


def _names_of(init: Path) -> dict[str, tuple[str, str | None]] | None:
    """What a package's `__init__` names, by where each comes from; None where it does more than `from .x import
    Y as Y` (or `from . import x`), a docstring and `from __future__`: such a package is imported whole."""
    try:
        tree = ast.parse(init.read_bytes(), str(init))
    except (OSError, SyntaxError, ValueError):
        return None
    names: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        if not isinstance(node, ast.ImportFrom):
            return None
        if node.module == "__future__" and node.level == 0:  # it binds its feature's name too
            names.update({alias.asname or alias.name: ("__future__", alias.name) for alias in node.names})
            continue
        if node.level != 1 or any(alias.name == "*" for alias in node.names):
            return None
        for alias in node.names:
            where = (node.module, alias.name) if node.module else (alias.name, None)
            names[alias.asname or alias.name] = where
    return names


def _is_submodule(folders: Sequence[str], name: str) -> bool:
    """Whether `name` is a module or package in one of the package's folders."""
    return importlib.machinery.PathFinder.find_spec(name, list(folders)) is not None

"""The package's import graph: no circles, no arrow from a lower layer to a higher one, streamlit only in the pages.

Every module of capel_ui is parsed (not imported) with `ast`, so every import counts: at the top, inside a function
(the CLI's lazy imports) and under `if TYPE_CHECKING:` (a type-only arrow is still an arrow a reader follows).
"""

from __future__ import annotations

import ast
import graphlib
from functools import cache
from pathlib import Path

import pytest

from capel_ui.layers import LAYERS  # the layers, lowest first: data shared with docs/architecture.md

ROOT = Path(__file__).resolve().parent.parent / "capel_ui"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def import_nodes(source: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """Every import statement of a module's source, anywhere in it. Parsed once per text: the checks below and the
    copies of the package in test_the_check_fails_on_a_bad_import read the same files again (14 s a run before)."""
    return tuple(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import | ast.ImportFrom))


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The package's modules `path` imports anywhere in it (a `from .x import y` names `x.y` when `y` is a module)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in import_nodes(path.read_text(encoding="utf-8")):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of the package and the package's modules it imports."""
    paths = {module_name(p, root): p for p in root.rglob("*.py")}
    known = set(paths)
    return {name: {t for t in imports(p, name, known) if t in known and t != name} for name, p in paths.items()}


def third_party(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module and the top-level names of what it imports from outside the package."""
    out: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        found = set()
        for node in import_nodes(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
        out[module_name(path, root)] = found
    return out


def layer_of(module: str) -> int:
    """The index of the layer that holds `module` (the longest matching prefix wins)."""
    best, where = -1, -1
    for i, layer in enumerate(LAYERS):
        for prefix in layer.modules:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, where = len(prefix), i
    if where < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in capel_ui/layers.py")
    return where


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """A circle of imports, as a list of modules, or [] when there is none."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return []


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import that points from a lower layer to a higher one."""
    return sorted(
        f"{m} ({LAYERS[layer_of(m)].name}) imports {t} ({LAYERS[layer_of(t)].name})"
        for m, targets in graph.items()
        for t in targets
        if layer_of(t) > layer_of(m)
    )


def test_there_is_no_circle_of_imports() -> None:
    assert cycles(import_graph()) == []


def test_no_import_points_from_a_lower_layer_to_a_higher_one() -> None:
    assert upward(import_graph()) == []


def test_every_module_is_in_a_layer() -> None:
    for module in import_graph():
        layer_of(module)


def test_only_the_pages_import_streamlit() -> None:
    outside = sorted(
        m for m, names in third_party().items() if "streamlit" in names and not m.startswith("capel_ui.ui")
    )
    assert outside == []


def test_the_graph_sees_type_only_and_lazy_imports() -> None:
    graph = import_graph()
    assert "capel_ui.backends" in graph["capel_ui.repair"]  # only under `if TYPE_CHECKING:`
    assert "capel_ui.request" in graph["capel_ui.cli"]  # only inside a function


@pytest.mark.parametrize(
    ("module", "bad"),
    [
        ("capel_ui.ending", "from .backends import Backend"),  # a text module naming a backend: upward
        ("capel_ui.repair", "from .generation import Request"),  # the old circle, type-only
        ("capel_ui.vocab", "import streamlit as st"),
    ],
)
def test_the_check_fails_on_a_bad_import(tmp_path: Path, module: str, bad: str) -> None:
    """The checks can fail: a copy of the package with one bad import added to `module` is caught."""
    copy = tmp_path / "capel_ui"
    for path in ROOT.rglob("*.py"):
        target = copy / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    path = copy.joinpath(*module.split(".")[1:]).with_suffix(".py")
    path.write_text(path.read_text(encoding="utf-8") + f"\nif False:\n    {bad}\n", encoding="utf-8")
    graph = import_graph(copy)
    found = upward(graph) + cycles(graph)
    found += [m for m, names in third_party(copy).items() if "streamlit" in names and not m.startswith("capel_ui.ui")]
    assert any(module in line for line in found)

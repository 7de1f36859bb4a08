"""The package's classes stay small enough to read: none in capel_ui/ defines more than `MOST_METHODS` methods.

A class that grows past it does more than one job (`Batch` once held its job list, backend cache, slots, resume,
retries and output rows; `MarkerParser` scanning, checking and the text built): split it by job, as those were.
Parsed with `ast`, not imported: every function defined in a class body counts, properties and dunders included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "capel_ui"
MOST_METHODS = 25


def methods(cls: ast.ClassDef) -> int:
    """Functions defined in the class body (nested classes count on their own)."""
    return sum(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) for node in cls.body)


def too_big(root: Path = ROOT) -> list[str]:
    """Every class of the package over `MOST_METHODS` methods, as "path:Class (n methods)"."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and methods(node) > MOST_METHODS:
                found.append(f"{path.relative_to(root.parent)}:{node.name} ({methods(node)} methods)")
    return found


def test_no_class_has_more_than_25_methods() -> None:
    assert too_big() == []


@pytest.mark.parametrize(("n", "caught"), [(MOST_METHODS, False), (MOST_METHODS + 1, True)])
def test_the_check_names_a_class_of_26_methods(tmp_path: Path, n: int, caught: bool) -> None:
    """The check can fail: a made-up class of 26 methods (one a property, one async) is named; one of 25 is not."""
    body = "".join(f"    def m{i}(self) -> int:\n        return {i}\n" for i in range(n - 2))
    body += "    @property\n    def p(self) -> int:\n        return 0\n    async def a(self) -> None:\n        pass\n"
    package = tmp_path / "capel_ui"
    package.mkdir()
    (package / "big.py").write_text(f"class Big:\n{body}", encoding="utf-8")
    assert too_big(package) == (["capel_ui/big.py:Big (26 methods)"] if caught else [])

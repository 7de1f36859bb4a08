"""Page state is named once (capel_ui/ui/state.py): no page reaches into another page's module or keys."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

UI = Path(__file__).resolve().parent.parent / "capel_ui" / "ui"
PAGES = ("write", "compare", "history", "benchmark")


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:  # `from .x import y`: a module of capel_ui/ui
            found |= {node.module or ""} | {f"{node.module or ''}.{a.name}".lstrip(".") for a in node.names}
    return found


@pytest.mark.parametrize("page", PAGES)
def test_a_page_imports_no_other_pages_module(page: str) -> None:
    others = {p for p in PAGES if p != page}
    assert not {m for m in _imported_modules(UI / f"{page}.py") if m.split(".")[-1] in others}


@pytest.mark.parametrize("page", PAGES)
def test_a_page_spells_no_session_key_of_its_own(page: str) -> None:
    text = (UI / f"{page}.py").read_text(encoding="utf-8")
    assert not re.findall(r"session_state\[\s*[\"']", text)

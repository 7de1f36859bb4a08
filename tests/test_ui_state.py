"""Page state is named once (capel_ui/ui/state.py): no page reaches into another page's module or keys."""

from __future__ import annotations

import ast
import pickle
import re
import time
from pathlib import Path

import pytest

from capel_ui.backends import EMBEDDED
from capel_ui.runview import RunView
from capel_ui.ui import state
from capel_ui.ui.state import C, Key, S, TargetKeys, W, WriteForm
from capel_ui.ui.views import live_line
from capel_ui.ui.write import _request
from capel_ui.verdict import Target

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


ROOT = UI.parent.parent


def _python_files() -> list[Path]:
    return [*(ROOT / "capel_ui").rglob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"]


def test_session_state_is_touched_only_in_state_py() -> None:
    touching = [p.relative_to(ROOT) for p in _python_files() if "session_state" in p.read_text(encoding="utf-8")]
    assert touching == [Path("capel_ui/ui/state.py")]


def test_no_page_reaches_into_a_runs_layers() -> None:
    """Pages draw a live run from `LiveRun.view()`, never from its Generation, parser or backend."""
    reaching = [p.name for p in UI.glob("*.py") if re.search(r"\.gen\b", p.read_text(encoding="utf-8"))]
    assert not reaching


def test_no_page_has_a_second_rule_for_the_guaranteed_modes() -> None:
    """Which modes a model can run is `backends.why_not_guaranteed`, called once, in `resources.not_guaranteed`."""
    calls = {p.name for p in UI.glob("*.py") if "capabilities.grammar" in p.read_text(encoding="utf-8")}
    assert calls == {"resources.py"}


# ----- typed keys ----------------------------------------------------------------------------------------------


def test_a_key_is_its_widget_string_with_a_default() -> None:
    assert W.FALLBACK == "w_fallback" and W.FALLBACK.name == "w_fallback" and W.FALLBACK.default is True
    assert W.MODE.default is None and S.MODEL_CHOICE.default == EMBEDDED
    assert type(W.FALLBACK.name) is str  # what Streamlit stores: the plain string the tests address
    assert W.max_calls(False) == "w_max_calls_False" and S.api_key("deepseek") == "key_deepseek"
    copied = pickle.loads(pickle.dumps(W.TIME_LIMIT))
    assert (copied, copied.default, type(copied)) == ("w_time_limit", 600.0, Key)


def test_get_reads_the_default_until_put_and_drop_clears_it() -> None:
    key = Key[int | None]("test_only_key", 7)
    try:
        assert state.get(key) == 7 and not state.has(key)
        state.put(key, 3)
        assert state.get(key) == 3 and state.has(key)
        assert state.setdefault(key, 9) == 3
        assert state.drop(key) == 3 and state.get(key) == 7
    finally:
        state.drop(key)


def test_target_keys_name_each_pages_fields() -> None:
    assert (W.FORM.lang, W.FORM.kind, W.FORM.target, W.FORM.low) == ("w_lang", "w_kind", "w_target", "w_low")
    assert TargetKeys.of("c_") == C.FORM and C.INSTRUCTION == "c_instruction" and W.KIND is W.FORM.kind
    assert W.FORM.field("unit", "words") == "w_unit" and W.FORM.field("unit", "words").default == "words"


def _form(**fields: object) -> WriteForm:
    base: dict[str, object] = dict(
        rewrite=False, instruction="Write a headline.", source="", lang="en", unit="words", kind="exactly",
        target=Target.of("exactly", 12), mode="exact", code=False, fallback=True, max_tokens=None, seed=4,
        time_limit=60.0, max_calls=1, variants=1, judge=None,
    )  # fmt: skip
    return WriteForm(**{**base, **fields})  # type: ignore[arg-type]


def test_the_write_form_becomes_the_request() -> None:
    form = _form()
    assert form.missing is None
    request = _request(form, Target.of("exactly", 12))
    assert (request.instruction, request.target, request.mode, request.seed) == ("Write a headline.", 12, "exact", 4)
    assert (request.time_limit, request.max_calls, request.allow_fallback) == (60.0, 1, True)


def test_a_rewrite_form_asks_for_its_pasted_text() -> None:
    assert _form(rewrite=True, source="  ").missing == "Paste the text to rewrite, or turn off “Rewrite my own text”."
    request = _request(_form(rewrite=True, source=" My own text here. "), Target.of("exactly", 3))
    assert "My own text here." in request.instruction and request.instruction != "My own text here."


def _view(phase: str, note: str = "") -> RunView:
    return RunView(
        label="SmolLM2-135M (embedded)", model="m", mode="exact", lang="en", unit="words",
        target=Target.of("exactly", 10), units_done=4, raw="", text="", settled="", errors=(), marker_spans=(),
        draft_span=None, phase=phase, note=note, call=1, max_calls=1, started=time.monotonic(), time_limit=600.0,
        notice=None,
    )  # type: ignore[arg-type]  # fmt: skip


@pytest.mark.parametrize(
    ("phase", "note", "said"),
    [
        ("writing", "", ""),
        ("saving", "", " · saving"),
        ("choosing an ending", "", " · choosing an ending"),
        ("choosing an ending", " · its last sentence reads cut off: …", " · its last sentence reads cut off: …"),
    ],
)
def test_the_live_line_says_the_phase_where_the_note_does_not(phase: str, note: str, said: str) -> None:
    line = live_line(_view(phase, note))
    assert line.startswith("SmolLM2-135M (embedded) · Exact") and " s of at most 600 s" in line
    assert line.endswith(" s" + said)

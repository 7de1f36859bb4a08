"""Every key the pages keep in `st.session_state`, named and typed once, and the hand-offs between pages.

This is the only module that touches `st.session_state`. A key is a `Key[T]`: its name, the value read when it
was never set (`default`) and, as its type parameter, what it holds, so `get(W.MODE)` is a `Mode | None` and
`put(W.RUN_ID, "x")` is a type error. A `Key` is also the string Streamlit knows it by, so a widget takes it as
its key as it stands (`key=W.INSTRUCTION`), and the AppTests and browser tests address the same strings.

A page never writes another page's keys directly and never imports another page's module: it calls a hand-off
here ("open this run on Write", "use this column", "send this edit back").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Final, Generic, TypeVar

import streamlit as st

from ..backends import EMBEDDED, ModelChoice, Provider
from ..prompts import rewrite_source
from ..storage import RunRecord
from ..verdict import Target
from ..vocab import DEFAULT_TIME_LIMIT, Lang, Mode, TargetKind, Unit

T = TypeVar("T")


class Key(str, Generic[T]):
    """A session-state key: the string Streamlit stores it under, with the value `get` reads when it is unset."""

    default: T

    def __new__(cls, name: str, default: T) -> Key[T]:
        key = super().__new__(cls, name)
        key.default = default
        return key

    @property
    def name(self) -> str:
        return str.__str__(self)

    def __reduce__(self) -> tuple[type[Key[T]], tuple[str, T]]:  # a copy or a pickle keeps the default
        return (type(self), (self.name, self.default))


def get(key: Key[T]) -> T:
    """The value kept under `key`, or its default when it was never set (a widget's value once it is drawn)."""
    return st.session_state.get(key.name, key.default)


def put(key: Key[T], value: T) -> None:
    st.session_state[key.name] = value


def setdefault(key: Key[T], value: T | None = None) -> T:
    """Set `key` (to `value`, else its default) unless it is set; its value either way."""
    return st.session_state.setdefault(key.name, key.default if value is None else value)


def drop(key: Key[T]) -> T | None:
    """Remove a kept value and return it (None when absent)."""
    return st.session_state.pop(key.name, None)


def has(key: Key[Any]) -> bool:
    return key.name in st.session_state


def keep(key: Key[Any]) -> None:
    """Keep a widget's value across runs that do not draw it: Streamlit drops the state of a keyed widget a run
    leaves out (the instruction while rewriting, the pasted text while not), so it is copied aside and put back."""
    aside = f"_kept_{key.name}"
    if key.name in st.session_state:
        st.session_state[aside] = st.session_state[key.name]
    elif aside in st.session_state:
        st.session_state[key.name] = st.session_state[aside]


# ----- the target form, drawn alike on Write (`w_`) and Compare (`c_`) ------------------------------------------

TARGET_FIELDS: Final = ("lang", "unit", "kind", "target", "low")
"""The fields (after the page's prefix) that together say what length is asked for."""


@dataclass(frozen=True)
class TargetKeys:
    """One page's target-form keys, `{prefix}lang` and so on (History's Re-run and the tests set Write's by
    these names)."""

    prefix: str
    preset: Key[str | None]
    lang: Key[Lang]
    unit: Key[Unit | None]
    kind: Key[TargetKind]
    target: Key[int | None]
    low: Key[int]
    instruction: Key[str]

    @classmethod
    def of(cls, prefix: str) -> TargetKeys:
        return cls(
            prefix,
            preset=Key(f"{prefix}preset", None),
            lang=Key(f"{prefix}lang", "en"),
            unit=Key(f"{prefix}unit", None),
            kind=Key(f"{prefix}kind", "exactly"),
            target=Key(f"{prefix}target", None),
            low=Key(f"{prefix}low", 1),
            instruction=Key(f"{prefix}instruction", ""),
        )

    def field(self, name: str, default: Any = None) -> Key[Any]:
        """The key of a field handed over by name (a prefill, another page's target fields)."""
        return Key(self.prefix + name, default)

    def settings(self) -> dict[str, Any]:
        """The language, unit and target fields as they stand, for another page to start from."""
        return {name: get(self.field(name)) for name in TARGET_FIELDS}


def note_key(key: Key[Any]) -> Key[str | None]:
    """Where a box's one-time note (a number set to a bound) waits until the box is drawn again."""
    return Key(f"{key}_note", None)


# ----- each page's keys ------------------------------------------------------------------------------------------


class W:
    """The Write page's keys (prefix `w_` for the target form's fields)."""

    PREFIX: Final = "w_"
    FORM: Final = TargetKeys.of(PREFIX)
    INSTRUCTION: Final = FORM.instruction
    PRESET: Final = FORM.preset
    KIND: Final = FORM.kind
    TARGET: Final = FORM.target
    SOURCE: Final = Key[str]("w_source", "")
    REWRITE: Final = Key[bool]("w_rewrite", False)
    MODE: Final = Key[Mode | None]("w_mode", None)
    MODE_WANTED: Final = Key[Mode | None]("w_mode_wanted", None)
    """The mode the writer picked; kept apart from the widget so a model without a grammar never overwrites it."""
    CODE: Final = Key[bool]("w_code", False)
    FALLBACK: Final = Key[bool]("w_fallback", True)
    MAX_TOKENS: Final = Key[int | None]("w_max_tokens", None)
    SEED: Final = Key[int | None]("w_seed", None)
    TIME_LIMIT: Final = Key[float | None]("w_time_limit", DEFAULT_TIME_LIMIT)
    VARIANTS: Final = Key[int | None]("w_variants", None)
    VARIANTS_SET: Final = Key[bool]("w_variants_set", False)
    """Set once the writer chose a number of variants; until then it follows the target and the model."""
    JUDGE: Final = Key[ModelChoice | None]("w_judge", None)
    STOP: Final = Key[bool]("w_stop", False)
    LIVE: Final = "w_live"
    RESULT: Final = "w_result"
    """The result area, scrolled into view when a run has just ended (a container's key, not a value)."""
    RUN_ID: Final = Key[int | None]("w_run_id", None)
    """The run the result area shows (the picked variant, or the only run)."""
    GROUP: Final = Key[str | None]("w_group", None)
    """The variant group of the last request, when it asked for several."""
    SEND_BACK: Final = Key[str | None]("w_send_back", None)
    """An edited text handed back to be rewritten (applied before the widgets are drawn)."""

    KEPT: Final[tuple[Key[Any], ...]] = (
        FORM.lang, FORM.unit, FORM.kind, FORM.target, FORM.low, REWRITE, MODE, CODE, FALLBACK, MAX_TOKENS, SEED,
        TIME_LIMIT, VARIANTS, JUDGE,
    )  # fmt: skip
    """The form's widgets whose values are kept for the session (`keep`): a visit to another page drops the state
    of widgets it does not draw, and Write would come back with a target of 25."""

    @staticmethod
    def max_calls(takes_grammar: bool | None) -> Key[int]:
        """The repair box, one per kind of model: its default (1 with a grammar, else 3) shows when the model
        changes kind."""
        return Key(f"w_max_calls_{takes_grammar}", 1)

    @staticmethod
    def variants_default(default: int) -> Key[int | None]:
        """The variants box while the writer has not set it, keyed by the default it follows."""
        return Key(f"w_variants_default_{default}", None)

    @staticmethod
    def pick(run_id: int) -> Key[bool]:
        return Key(f"w_pick{run_id}", False)


@dataclass(frozen=True)
class WriteForm:
    """Write's form as the writer left it, read in one place (`write._form`): what a run is asked for."""

    rewrite: bool
    instruction: str
    source: str
    lang: Lang
    unit: Unit
    kind: TargetKind
    target: Target | None
    """None for an impossible range (the form says why)."""
    mode: Mode
    code: bool
    fallback: bool
    max_tokens: int | None
    seed: int | None
    time_limit: float | None
    max_calls: int
    variants: int
    judge: ModelChoice | None

    @property
    def missing(self) -> str | None:
        """What Generate cannot go without, said to the writer; None when the form can run."""
        if self.rewrite and not self.source.strip():
            return "Paste the text to rewrite, or turn off “Rewrite my own text”."
        return None


class C:
    """The Compare page's keys (prefix `c_` for the target form's fields)."""

    PREFIX: Final = "c_"
    FORM: Final = TargetKeys.of(PREFIX)
    INSTRUCTION: Final = FORM.instruction
    KIND: Final = FORM.kind
    ID: Final = Key[str | None]("c_id", None)
    """The comparison shown below the form."""
    LIVE: Final = "c_live"
    RESULT: Final = "c_result"
    """The live columns and the comparison's top, scrolled into view when a comparison starts and ends."""
    STOP: Final = Key[bool]("c_stop", False)
    CARRIED: Final = Key[str | None]("c_carried", None)
    """The instruction last taken from Write, so a newer one replaces it but a typed one stays."""
    CARRIED_TARGET: Final = Key[dict[str, Any] | None]("c_carried_target", None)
    OWN_TARGET: Final = Key[dict[str, Any] | None]("c_target_kept", None)
    """Compare's own target fields, restored when Write's did not change since they were last taken."""
    MODELS: Final = Key[list[ModelChoice]]("c_models", [])
    MODES: Final = Key[list[Mode]]("c_modes", [])
    BEST_MODE: Final = Key[bool]("c_best_mode", False)
    """Set by "One model per vendor": each model runs once, in Exact where guaranteed, else CAPEL."""


class H:
    """The History page's keys: its filters, kept when the writer leaves the page and comes back (`FILTERS`)."""

    MODEL: Final = Key[str]("h_model", "All")
    MODE: Final = Key[str]("h_mode", "All")
    ORIGIN: Final = Key[str]("h_origin", "All")
    LANG: Final = Key[str]("h_lang", "All")
    DATES: Final = Key[tuple[date, ...]]("h_dates", ())
    SEARCH: Final = Key[str]("h_search", "")
    VERIFIED: Final = Key[bool]("h_verified", False)
    FILTERS: Final = (MODEL, MODE, ORIGIN, LANG, DATES, SEARCH, VERIFIED)
    TABLE: Final = "h_table"
    TABLES: Final = Key[int]("h_tables", 0)
    """How many times the table was drawn anew: a deletion draws a new table (`table_key`), with no row selected,
    so the run below the deleted one never opens under the cursor that just clicked Delete."""
    DELETED: Final = Key[int | None]("h_deleted", None)
    """The run just deleted, said once where its detail was."""
    RESTORED: Final = Key[int | None]("h_restored", None)
    """The run "Put the words back" just saved: open below a table drawn anew until the writer selects a row."""

    @staticmethod
    def table_key() -> str:
        """The table's key: `TABLE` until a run is deleted, then a new one per deletion (a fresh selection)."""
        n = get(H.TABLES)
        return H.TABLE if n == 0 else f"{H.TABLE}_{n}"


class B:
    """The Benchmark page's keys."""

    SELECTED: Final = Key[list[int]]("b_selected", [])
    """The benchmark runs selected in the table (a finished run selects itself)."""
    SUITE: Final = Key[str | None]("b_suite", None)
    CONTROL: Final = Key[str]("b_control", "equal")
    LIMIT: Final = Key[int]("b_limit", 5)
    SEED: Final = Key[int]("b_seed", 0)
    LANG: Final = Key[str]("b_lang", "both")
    CONCURRENCY: Final = Key[int]("b_conc", 2)
    MAX_CALLS: Final = Key[int]("b_max_calls", 1)
    UPLOAD: Final = Key[Any]("b_upload", None)
    STOP: Final = Key[bool]("b_stop", False)
    TABLE: Final = "b_table"

    @staticmethod
    def modes(control: str) -> Key[list[Mode]]:
        """The modes picked for a control: the markers' selection stays with "equal"."""
        return Key("b_modes" if control == "equal" else f"b_modes_{control}", [])

    @staticmethod
    def lengths(suite: str) -> Key[str]:
        return Key(f"b_lengths_{suite}", "")


class S:
    """The sidebar's keys: the model, its key, the temperature and the database, for every page to use."""

    MODEL_CHOICE: Final = Key[ModelChoice]("model_choice", EMBEDDED)
    DB_URL: Final = Key[str | None]("db_url", None)
    """The database URL typed in the sidebar (it opened), else None for DATABASE_URL or data/capel.db."""
    TEMPERATURE_DEFAULT: Final = Key[bool]("temperature_default", True)
    TEMPERATURE_VALUE: Final = Key[float | None]("temperature_value", None)
    PROVIDER: Final = Key[Provider | None]("provider", None)
    BASE_URL: Final = Key[str]("compat_url", "")
    COMPAT_MODEL: Final = Key[str]("compat_model", "")
    """A server's model id, kept across the compatible providers."""
    GRAMMAR_FIELD: Final = Key[str]("compat_grammar", "none")
    DB_URL_INPUT: Final = Key[str]("db_url_input", "")
    """The database box as typed; `DB_URL` once it opened."""

    @staticmethod
    def gguf_path(provider: Provider) -> Key[str]:
        return Key(f"{provider}_path", "")

    @staticmethod
    def model(provider: Provider) -> Key[str | None]:
        return Key(f"model_{provider}", None)

    @staticmethod
    def custom_model(provider: Provider) -> Key[str]:
        return Key(f"custom_{provider}", "")

    @staticmethod
    def api_key(provider: Provider) -> Key[str | None]:
        """The sidebar's password box for `provider`: kept for the session, never saved."""
        return Key(f"key_{provider}", None)

    @staticmethod
    def typed_key(provider: Provider) -> Key[str | None]:
        """The key typed for `provider`, kept for the session while its box is not drawn (Streamlit drops a widget's
        state once a run leaves it out, so switching provider would empty the box): never saved."""
        return Key(f"typed_key_{provider}", None)


SHARED_INSTRUCTION: Final = Key[str]("instruction_shared", "")
"""The last instruction typed on Write, kept outside widget state (which a page switch clears) for Compare."""
SHARED_TARGET: Final = Key[dict[str, Any] | None]("target_shared", None)
"""Write's target fields (`TargetKeys.settings`), kept outside widget state for Compare to start from."""
PREFILL: Final = Key[dict[str, Any] | None]("prefill", None)
"""Inputs handed to Write by another page, applied (and dropped) before Write draws its widgets."""

WRITE_PAGE: Final = "app_pages/write.py"


# ----- hand-offs ---------------------------------------------------------------------------------------------


def prefill_for(run: Any) -> dict[str, Any]:
    """The Write inputs that re-run `run` as it was asked: a rewrite run comes back as a rewrite of its text."""
    fields = {"lang": run.lang, "unit": run.unit, "target": run.target, "mode": run.mode, "code": bool(run.code)}
    fields |= {"kind": run.target_kind, "low": run.target_low or run.target}
    source = rewrite_source(run.instruction or "")
    if source is None:
        return {**fields, "instruction": run.instruction, "rewrite": False}
    return {**fields, "source": source, "rewrite": True}


def open_on_write(run: RunRecord) -> None:
    """History's Re-run: Write opens with the run's inputs (a rewrite as a rewrite) and no result yet."""
    put(PREFILL, prefill_for(run))
    st.switch_page(WRITE_PAGE)


def use_column(run: RunRecord) -> None:
    """Compare's “Use this”: Write opens with the column's inputs and its text as the result."""
    put(PREFILL, {**prefill_for(run), "run_id": run.id})
    st.switch_page(WRITE_PAGE)


def take_prefill() -> None:
    """On Write, before its widgets are drawn: apply inputs another page handed over, and show the run it named
    (or none: the result shown before belongs to another run)."""
    prefill = drop(PREFILL)
    if not prefill:
        return
    run_id = prefill.pop("run_id", None)
    for field, value in prefill.items():
        put(W.FORM.field(field), value)
    put(W.MODE_WANTED, prefill.get("mode"))
    put(W.PRESET, None)
    drop(W.RUN_ID)
    if run_id is not None:
        put(W.RUN_ID, run_id)


def send_back(text: str) -> None:
    """The edit box's “rewrite to length”: the edited text becomes Write's text to rewrite on the next run."""
    put(W.SEND_BACK, text)


def take_send_back() -> None:
    """On Write, before its widgets are drawn: an edited text sent back becomes the text to rewrite."""
    text = drop(W.SEND_BACK)
    if text is not None:
        put(W.REWRITE, True)
        put(W.SOURCE, text)


def share_from_write(instruction: str | None, target: dict[str, Any] | None) -> None:
    """Write keeps its instruction and target fields outside widget state, for Compare to start from."""
    if instruction is not None:
        put(SHARED_INSTRUCTION, instruction)
    if target is not None:
        put(SHARED_TARGET, target)


def write_instruction() -> str:
    """Write's instruction: its own box when the page switch came with its last edit, else its copy."""
    return get(W.INSTRUCTION) or get(SHARED_INSTRUCTION)


def write_target() -> dict[str, Any]:
    """Write's target fields: its widgets when the switch came with their last edit, else its copy."""
    shared = get(SHARED_TARGET) or {}
    return {field: get(W.FORM.field(field, shared.get(field))) for field in TARGET_FIELDS}

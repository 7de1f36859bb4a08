"""Rows → the texts to write: each row's columns read into one request per text (a job), or into the error
that row gets; the batch id and the key of each job, so a batch run again finds what it wrote.

A row asks for one text (`instruction` or `source`, and `target`), K texts (`variants`), or a pack's set (the
row's facts under `--pack`). Every other column is carried through to the output untouched.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..backends import Capabilities
from ..prompts import REWRITE
from ..request import Request
from ..service import modes_for
from ..verdict import Target
from ..vocab import (
    DEFAULT_UNIT,
    LANGS,
    MAX_TARGET,
    MAX_VARIANTS,
    MODES,
    UNITS,
    Lang,
    Mode,
    unit_label,
)
from .packs import DEFAULT_POSTS, MAX_POSTS, pack
from .table import MAX_ROWS, Table, TableError

INPUT_COLUMNS = (
    "instruction",
    "source",
    "target",
    "unit",
    "kind",
    "mode",
    "model",
    "variants",
    "id",
    "lang",
    "facts",
    "product",
    "posts",
)
"""The columns a batch reads (any case); every other column is carried through untouched."""
OUTPUT_COLUMNS = ("slot", "asked", "text", "count", "verified", "ending", "score", "warnings", "run_id", "error")
"""What the output adds after the input's columns (`slot` only when a row gives several texts)."""
MAX_TEXTS = MAX_ROWS
"""Texts one batch writes (rows × each row's variants or pack): a longer batch is refused in one line."""

ModeFor = Callable[[str, str, str, str, bool], Mode]
"""The mode a row runs in unless it says: (model, lang, unit, target kind, rewrite) → mode."""

KIND_WORDS = {
    "exactly": "exactly",
    "exact": "exactly",
    "=": "exactly",
    "at most": "at_most",
    "at_most": "at_most",
    "at-most": "at_most",
    "max": "at_most",
    "maximum": "at_most",
    "up to": "at_most",
    "≤": "at_most",
    "<=": "at_most",
    "between": "range",
    "range": "range",
}
_AT_MOST = re.compile(r"^\s*(?:≤|<=|<|at\s*most|max(?:imum)?|up\s*to)\s*(\d+)\s*$", re.IGNORECASE)
_RANGE = re.compile(r"^\s*(?:between\s+)?(\d+)\s*(?:-|–|—|to|and)\s*(\d+)\s*$", re.IGNORECASE)
_NUMBER = re.compile(r"^\s*(?:exactly\s+|=\s*)?(\d+)(?:\.0+)?\s*$", re.IGNORECASE)
MODE_WORDS = {m: m for m in MODES} | {"guaranteed": "exact", "exact (guaranteed)": "exact", "countdown": "capel"}


@dataclass(frozen=True)
class Options:
    """What the whole batch is asked (the CLI's flags, the page's pickers); part of the batch id."""

    model: str = "embedded"
    mode: Mode | None = None  # None: exact where the model takes a grammar, else CAPEL where it counts, else baseline
    pack: str | None = None
    posts: int = DEFAULT_POSTS
    lang: Lang = "en"
    base_url: str | None = None
    grammar_field: str | None = None

    def fingerprint(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


def batch_id(data: bytes, options: Options) -> str:
    """The batch's id: its input's content and options, hashed, so the same input run again is the same batch."""
    digest = hashlib.sha256(data + b"\0" + options.fingerprint().encode()).hexdigest()
    return f"b{digest[:15]}"


@dataclass
class Job:
    """One text to write: the row it belongs to, its key in the batch, what it asks, and its request (or the
    error its row gets instead)."""

    row: int  # index into the table's rows
    key: str  # unique in the batch: "3", "3 · variant 2", "sku-12 · headline 7"
    slot: str | None
    asked: str
    model: str
    request: Request | None = None
    error: str | None = None
    group: str | None = None  # texts that must differ from each other (a pack's headlines and descriptions)
    pack: bool = False  # a pack's text: written again (bounded) when it is junk
    extra: dict[str, str] = field(default_factory=dict)


def column_map(header: list[str]) -> dict[str, str]:
    """The batch's own column names → the header's spelling of them (`Instruction`, ` TARGET `)."""
    found: dict[str, str] = {}
    for h in header:
        name = h.strip().lower()
        if name in INPUT_COLUMNS and name not in found:
            found[name] = h
    return found


@functools.lru_cache(maxsize=4096)  # a batch's rows mostly ask the same few targets
def parse_target(text: str, kind: str = "") -> Target:
    """`50`, `≤ 30`, `at most 30`, `10-12`, `between 10 and 12`, with an optional kind column (exactly / at most /
    between) that says how to read a bare number or a range; ValueError saying what is accepted."""
    text, kind_word = text.strip(), kind.strip().lower().replace("_", " ")
    if kind_word and kind_word not in KIND_WORDS and kind_word.replace(" ", "_") not in KIND_WORDS:
        raise ValueError(f"kind {kind!r} is not one of: exactly, at most, between")
    k = KIND_WORDS.get(kind_word) or KIND_WORDS.get(kind_word.replace(" ", "_"))
    accepted = "a whole number (50), at most N (≤ 30) or a range (10-12)"
    if not text:
        raise ValueError(f"no target: give {accepted}")
    if m := _RANGE.match(text):
        if k not in (None, "range"):
            raise ValueError(f"target {text!r} is a range but kind says {kind.strip()}")
        low, high = int(m.group(1)), int(m.group(2))
        if low > high:
            raise ValueError(f"a range goes from the smaller number to the larger, got {text!r}")
        return _checked(Target.between, low, high)
    if m := _AT_MOST.match(text):
        if k not in (None, "at_most"):
            raise ValueError(f"target {text!r} is a limit but kind says {kind.strip()}")
        return _checked(Target.at_most, int(m.group(1)))
    if m := _NUMBER.match(text):
        n = int(m.group(1))
        if k == "range":
            raise ValueError(f"kind between needs a range like 10-12, got {text!r}")
        return _checked(Target.at_most if k == "at_most" else Target.exactly, n)
    raise ValueError(f"target {text!r} is not {accepted}")


def _checked(make: Callable[..., Target], *numbers: int) -> Target:
    if any(n < 1 or n > MAX_TARGET for n in numbers):
        raise ValueError(f"a target runs from 1 to {MAX_TARGET}, got {'-'.join(map(str, numbers))}")
    return make(*numbers)


def default_mode(caps: Capabilities, lang: Lang, unit: str, kind: str, *, rewrite: bool = False) -> Mode:
    """The mode a row runs in unless it says: the service's one rule for this model (`service.modes_for`)."""
    return modes_for(caps, lang, unit, kind, rewrite=rewrite).default  # type: ignore[arg-type]


def plan(table: Table, options: Options, caps: Callable[[str], Capabilities]) -> list[Job]:
    """Every job of the batch, in the table's order (a bad row: one job holding its error). `caps(model)` says
    what a model takes (for the default mode, decided once per model and kind of row). TableError past `MAX_TEXTS`."""
    cols = column_map(table.header)
    jobs: list[Job] = []
    keys: dict[str, int] = {}

    @functools.cache
    def mode_for(model: str, lang: str, unit: str, kind: str, rewrite: bool) -> Mode:
        return default_mode(caps(model), lang, unit, kind, rewrite=rewrite)  # type: ignore[arg-type]

    for i, row in enumerate(table.rows):
        cell = lambda name, row=row: row.get(cols[name], "").strip() if name in cols else ""  # noqa: E731
        row_key = cell("id") or str(i + 1)
        if row_key in keys:
            jobs.append(_bad(i, row_key + f" (row {i + 1})", options, f"id {row_key!r} repeats row {keys[row_key]}"))
            continue
        keys[row_key] = i + 1
        try:
            jobs.extend(_row_jobs(i, row_key, cell, options, mode_for))
        except ValueError as exc:
            jobs.append(_bad(i, row_key, options, str(exc)))
    if len(jobs) > MAX_TEXTS:  # rows are at most MAX_ROWS, each a few texts: planned before it is refused
        raise TableError(f"the batch asks for {len(jobs):,} texts, past the {MAX_TEXTS:,} a batch writes; split it")
    return jobs


def _bad(i: int, key: str, options: Options, error: str) -> Job:
    return Job(i, key, None, "", options.model, error=error)


def _row_jobs(i: int, key: str, cell: Callable[[str], str], options: Options, mode_for: ModeFor) -> list[Job]:
    lang = (cell("lang") or options.lang).lower()
    if lang not in LANGS:
        raise ValueError(f"lang {lang!r} is not one of {', '.join(LANGS)}")
    model = cell("model") or options.model
    mode_word = cell("mode").lower()
    if mode_word and mode_word not in MODE_WORDS:
        raise ValueError(f"mode {cell('mode')!r} is not one of {', '.join(MODES)}")
    mode = MODE_WORDS.get(mode_word) or options.mode
    if options.pack:
        return _pack_jobs(i, key, cell, options, lang, model, mode, mode_for)  # type: ignore[arg-type]
    instruction, source = cell("instruction"), cell("source")
    if instruction and source:
        raise ValueError("give instruction or source (a text to rewrite), not both")
    if not instruction and not source:
        raise ValueError("no instruction (what to write) and no source (a text to rewrite)")
    if source:
        instruction = REWRITE[lang].format(text=source)  # type: ignore[index]
    target = parse_target(cell("target"), cell("kind"))
    unit = cell("unit") or DEFAULT_UNIT[lang]  # type: ignore[index]
    if unit not in UNITS:
        raise ValueError(f"unit {unit!r} is not one of {', '.join(UNITS)}")
    variants = _whole(cell("variants") or "1", "variants", 1, MAX_VARIANTS)
    mode = mode or mode_for(model, lang, unit, target.kind, bool(source))
    request = Request.of(target, instruction, lang=lang, mode=mode, unit=unit)
    asked = target.describe(unit)
    if variants == 1:
        return [Job(i, key, None, asked, model, request)]
    return [Job(i, f"{key} · variant {v}", f"variant {v}", asked, model, request) for v in range(1, variants + 1)]


def _pack_jobs(
    i: int,
    key: str,
    cell: Callable[[str], str],
    options: Options,
    lang: str,
    model: str,
    mode: Mode | None,
    mode_for: ModeFor,
) -> list[Job]:
    chosen = pack(options.pack or "")
    product, facts, instruction = cell("product"), cell("facts"), cell("instruction")
    about = ": ".join(p for p in (product, facts) if p) or instruction
    if not about:
        raise ValueError(f"no facts for the {chosen.key} pack: give a product, facts or instruction column")
    posts = _whole(cell("posts") or str(options.posts), "posts", 1, MAX_POSTS)
    jobs = []
    for slot in chosen.slots(posts):
        slot_mode = mode or mode_for(model, lang, slot.unit, slot.target.kind, False)
        request = Request.of(slot.target, slot.instruction(about), lang=lang, mode=slot_mode, unit=slot.unit)
        group = f"{key} · {slot.distinct}" if slot.distinct else None
        asked = slot.target.describe(slot.unit)
        jobs.append(Job(i, f"{key} · {slot.name}", slot.name, asked, model, request, group=group, pack=True))
    return jobs


def _whole(text: str, name: str, low: int, high: int) -> int:
    try:
        n = int(float(text))
    except ValueError:
        raise ValueError(f"{name} must be a whole number from {low} to {high}, got {text!r}") from None
    if not low <= n <= high:
        raise ValueError(f"{name} must be from {low} to {high}, got {n}")
    return n


def asks(job: Job) -> str:
    """What a job will ask, in a line for the preview: `exact · at most 30 characters · Write a Google…`."""
    if job.request is None:
        return f"error: {job.error}"
    r = job.request
    return f"{r.mode} · {r.target_spec.describe(r.count_unit)} · {r.instruction[:80]}"


__all__ = ["OUTPUT_COLUMNS", "Job", "Options", "asks", "batch_id", "parse_target", "plan", "unit_label"]

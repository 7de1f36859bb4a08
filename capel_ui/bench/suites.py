"""Benchmark suites: what to ask, in which language, at which target, at which temperature.

A suite only provides the *instruction*; the runner appends the mode's length suffix through the normal
prompt builder, so a benchmark prompt is exactly what the app would send. The public data ships inside the
package (`capel_ui/bench/data/`, each licence beside its files; sources in its README), so a clone of the
project runs every suite on its own, offline.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from ..vocab import BENCH_CONTROLS, DEFAULT_UNIT, MAX_TARGET, BenchControl, Lang, Unit

DATA_DIR = Path(__file__).resolve().parent / "data"
LIFEBENCH_FILE = DATA_DIR / "lifebench" / "data_lite.jsonl"
MTBENCH_FILE = DATA_DIR / "mtbench" / "mt_bench_question.jsonl"

T = TypeVar("T")

SUITES: tuple[str, ...] = ("rtg", "lifebench", "mtbench", "custom")

SUITE_HELP: dict[str, str] = {
    "rtg": "Random Text Generation (paper §4.3): a coherent passage of exactly N words (en) or characters (zh) "
    "on free topics; N from --lengths, else sampled in 1..1000 with --seed",
    "lifebench": "LIFEBench (data_lite: 30 en + 30 cn tasks), scored with LIFEBench's own counter and, per "
    "--control, its Equal-To, At-Most or At-Least score; targets from 16, 32, 64, 128, 256, 512, 1024, 2048, "
    "4096, 8192 (default 16,32,64,128)",
    "mtbench": "MT-Bench with fixed word budgets (the 80 first turns, FastChat's temperature per category; "
    "default budgets 50,120,250) — not MT-Bench-LI, whose target lengths are not public",
    "custom": "your own CSV or JSONL (--file) with columns instruction, lang (en/zh), target and optionally id "
    "and temperature",
}

LIFEBENCH_WORDS: dict[BenchControl, dict[str, str]] = {
    "equal": {"en": "equal to", "cn": "等于"},
    "at_most": {"en": "at most", "cn": "至多有"},
    "at_least": {"en": "at least", "cn": "至少有"},
}
"""What replaces `{word_count_type}` in LIFEBench's tasks, by control and data language: LIFEBench's own
words (`exp/exp_request.py`, `lang_adapt_dict`; English tasks take the control method's name as it is)."""
CONTROL_SUITES: tuple[str, ...] = ("lifebench", "mtbench", "custom")
"""Suites whose instruction leaves the length to the appended suffix, so any control can be asked; rtg's own
instruction says "exactly N"."""

LIFEBENCH_LENGTHS: tuple[int, ...] = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
DEFAULT_LENGTHS: dict[str, tuple[int, ...]] = {
    "lifebench": (16, 32, 64, 128),
    "mtbench": (50, 120, 250),
    "rtg": (),  # () = one N per topic, sampled in 1..1000
}
RTG_RANGE = (1, 1000)
RTG_TEMPERATURE = 0.7  # the paper's setting for every non-OpenAI model (§4.3)

# FastChat's llm_judge temperatures (common.py `temperature_config`), as the data README lists them.
MTBENCH_TEMPERATURES: dict[str, float] = {
    "writing": 0.7,
    "roleplay": 0.7,
    "extraction": 0.0,
    "math": 0.0,
    "coding": 0.0,
    "reasoning": 0.0,
    "stem": 0.1,
    "humanities": 0.1,
}

# Free topics for Random Text Generation, each written natively in both languages.
RTG_TOPICS: tuple[tuple[str, str], ...] = (
    ("the first snowfall of winter", "冬天的第一场雪"),
    ("a walk through an old city market", "漫步老城集市"),
    ("why people keep diaries", "人们为什么写日记"),
    ("the life of a honeybee", "一只蜜蜂的一生"),
    ("learning to ride a bicycle", "学骑自行车"),
    ("a journey on a night train", "夜行列车上的旅程"),
    ("the history of tea", "茶的历史"),
    ("a rainy afternoon in a library", "图书馆里的雨天午后"),
    ("how bridges are built", "桥是怎样建成的"),
    ("the smell of fresh bread in the morning", "清晨新鲜面包的香味"),
    ("a day in the life of a lighthouse keeper", "灯塔看守人的一天"),
    ("the sounds of a forest at night", "夜晚森林里的声音"),
    ("moving to a new city", "搬到一座陌生的城市"),
    ("an old photograph found in a drawer", "抽屉里找到的一张旧照片"),
    ("the four seasons in a mountain village", "山村的四季"),
    ("why the sea is salty", "海水为什么是咸的"),
    ("a friendship between two neighbours", "两位邻居之间的友谊"),
    ("the first day at a new school", "在新学校的第一天"),
    ("a kite festival by the sea", "海边的风筝节"),
    ("the invention of paper", "纸的发明"),
)


@dataclass(frozen=True)
class Item:
    """One prompt at one target: the unit of work the runner crosses with the modes."""

    item_id: str
    lang: Lang
    instruction: str
    target: int
    temperature: float | None = None
    category: str = ""


@dataclass(frozen=True)
class Suite:
    """A loaded suite: its items (already crossed with the targets) and how it counts length."""

    name: str
    items: tuple[Item, ...]
    lengths: tuple[int, ...]  # the targets used; () when each item carries its own (rtg sampled, custom)
    counter: Unit | None = None  # None: each language's own unit (en_words / zh_chars)
    fingerprint: str = ""  # what else identifies the items (the custom file's content hash)
    sources: int = 0  # prompts before crossing with the targets
    notes: tuple[str, ...] = field(default=())

    def unit_for(self, lang: Lang) -> Unit:
        """The unit results are scored in: LIFEBench's counter for lifebench, else the language's unit."""
        return self.counter or DEFAULT_UNIT[lang]


# ----- lengths ----------------------------------------------------------------------------------------------


def parse_lengths(text: str | None) -> tuple[int, ...]:
    """`16,32,64` -> (16, 32, 64), sorted and without repeats; ValueError says what is accepted."""
    if text is None or not text.strip():
        return ()
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        try:
            n = int(part)
        except ValueError:
            raise ValueError(
                f"lengths must be whole numbers from 1 to {MAX_TARGET} separated by commas, got {part!r}"
            ) from None
        out.add(n)
    return check_lengths_range(sorted(out))


def check_lengths_range(lengths: Iterable[int]) -> tuple[int, ...]:
    """Every target within what the app can honour (1..MAX_TARGET)."""
    values = tuple(sorted(set(lengths)))
    bad = [n for n in values if not 1 <= n <= MAX_TARGET]
    if bad:
        raise ValueError(f"lengths must be from 1 to {MAX_TARGET}, got {', '.join(map(str, bad))}")
    return values


def resolve_lengths(suite: str, lengths: Sequence[int] | None) -> tuple[int, ...]:
    """The targets a suite will use: the given ones (checked for the suite) or its defaults."""
    given = check_lengths_range(lengths or ())
    if suite == "custom":
        if given:
            raise ValueError("--lengths does not apply to the custom suite: each row of the file gives its target")
        return ()
    if suite == "lifebench" and given:
        bad = [n for n in given if n not in LIFEBENCH_LENGTHS]
        if bad:
            raise ValueError(
                f"LIFEBench uses the targets {', '.join(map(str, LIFEBENCH_LENGTHS))}; "
                f"{', '.join(map(str, bad))} is not one of them"
            )
    return given or DEFAULT_LENGTHS.get(suite, ())


# ----- selection --------------------------------------------------------------------------------------------


def select(sources: Sequence[T], limit: int | None, seed: int | None) -> list[T]:
    """The first `limit` sources, or with a seed a seeded sample of them (kept in file order)."""
    if limit is None or limit >= len(sources):
        return list(sources)
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    if seed is None:
        return list(sources[:limit])
    picked = sorted(random.Random(seed).sample(range(len(sources)), limit))
    return [sources[i] for i in picked]


def _filter_lang(sources: list[dict], lang: Lang | None) -> list[dict]:
    return [s for s in sources if lang is None or s["lang"] == lang]


def _cross(sources: Iterable[dict], lengths: Sequence[int]) -> tuple[Item, ...]:
    """Each source at each target, shortest targets first (early results cover every prompt)."""
    srcs = list(sources)
    return tuple(
        Item(s["id"], s["lang"], s["make"](n), n, s.get("temperature"), s.get("category", ""))
        for n in lengths
        for s in srcs
    )


def _read_jsonl(path: Path) -> list[dict]:
    try:
        with path.open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
    except FileNotFoundError:
        raise ValueError(
            f"the suite data is missing: {path} (it ships in capel_ui/bench/data/; restore it from git)"
        ) from None


# ----- the suites -------------------------------------------------------------------------------------------


def _words(n: int) -> str:
    return "word" if n == 1 else "words"


def rtg_instruction(topic: tuple[str, str], lang: Lang, n: int) -> str:
    """The Random Text Generation request: a coherent passage of exactly n units on a free topic."""
    en, zh = topic
    if lang == "zh":
        return f"请以“{zh}”为题，写一段连贯的文字，正好{n}个字。"
    return f"Write a coherent passage about {en}, exactly {n} {_words(n)} long."


def load_rtg(lengths: Sequence[int], limit: int | None, seed: int | None, lang: Lang | None) -> Suite:
    """Topics interleaved en/zh; without lengths each topic gets one N in 1..1000 drawn with the seed."""
    rng = random.Random(0 if seed is None else seed)
    sources: list[dict] = []
    for i, topic in enumerate(RTG_TOPICS, start=1):
        for code in ("en", "zh"):
            sampled = rng.randint(*RTG_RANGE)  # drawn for every topic, so N never depends on --limit or --lang
            sources.append(
                {
                    "id": f"{code}-{i:02d}",
                    "lang": code,
                    "temperature": RTG_TEMPERATURE,
                    "n": sampled,
                    "make": lambda n, topic=topic, code=code: rtg_instruction(topic, code, n),
                }
            )
    chosen = select(_filter_lang(sources, lang), limit, seed)
    if lengths:
        items = _cross(chosen, lengths)
    else:
        items = tuple(
            Item(s["id"], s["lang"], s["make"](s["n"]), s["n"], s["temperature"])
            for s in sorted(chosen, key=lambda s: s["n"])
        )
    return Suite("rtg", items, tuple(lengths), sources=len(chosen))


def fill_lifebench(task: str, lang: str, target: int, control: BenchControl = "equal") -> str:
    """Fill LIFEBench's two placeholders (plain replace: some articles contain other {braces})."""
    kind = LIFEBENCH_WORDS[control]["cn" if lang == "cn" else "en"]
    return task.replace("{word_count_type}", kind).replace("{word_count}", str(target))


def load_lifebench(
    lengths: Sequence[int], limit: int | None, seed: int | None, lang: Lang | None, control: BenchControl = "equal"
) -> Suite:
    """LIFEBench on data_lite.jsonl, worded for `control`; `cn` becomes zh; counted with LIFEBench's counter."""
    sources = []
    for row in _read_jsonl(LIFEBENCH_FILE):
        code = row["lang"]
        sources.append(
            {
                "id": str(row["id"]),
                "lang": "zh" if code == "cn" else "en",
                "category": f"{row['category']}/{row['type']}",
                "temperature": None,
                "make": lambda n, task=row["task"], code=code: fill_lifebench(task, code, n, control),
            }
        )
    chosen = select(_filter_lang(sources, lang), limit, seed)
    return Suite("lifebench", _cross(chosen, lengths), tuple(lengths), counter="lifebench", sources=len(chosen))


def load_mtbench(lengths: Sequence[int], limit: int | None, seed: int | None, lang: Lang | None) -> Suite:
    """The 80 MT-Bench first turns at fixed word budgets; temperature by FastChat's category table."""
    sources = []
    for row in _read_jsonl(MTBENCH_FILE):
        category = row["category"]
        sources.append(
            {
                "id": str(row["question_id"]),
                "lang": "en",
                "category": category,
                "temperature": MTBENCH_TEMPERATURES.get(category, 0.7),
                "make": lambda n, q=row["turns"][0]: q,
            }
        )
    chosen = select(_filter_lang(sources, lang), limit, seed)
    return Suite("mtbench", _cross(chosen, lengths), tuple(lengths), sources=len(chosen))


CUSTOM_COLUMNS = ("instruction", "lang", "target")


def parse_custom(data: str | bytes, name: str = "the file") -> list[Item]:
    """Rows of a CSV or JSONL file (JSONL if `name` ends .jsonl/.json or the text starts with `{`)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError(f"{name} is not UTF-8 text; give a UTF-8 CSV or JSONL file") from None
    data = data.lstrip("\ufeff")
    is_json = name.lower().endswith((".jsonl", ".json")) or data.lstrip().startswith("{")
    rows: list[tuple[int, dict]] = []
    if is_json:
        for lineno, line in enumerate(data.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{name} line {lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                need = ", ".join(CUSTOM_COLUMNS)
                raise ValueError(f"{name} line {lineno}: each line must be a JSON object with {need}")
            rows.append((lineno, obj))
        where = "line"
    else:
        reader = csv.DictReader(io.StringIO(data))
        header = [h.strip() for h in reader.fieldnames or []]
        missing = [c for c in CUSTOM_COLUMNS if c not in header]
        if missing:
            raise ValueError(
                f"{name} lacks column(s) {', '.join(missing)}; the header must have instruction, lang, target "
                "(id and temperature are optional)"
            )
        rows = [(i, {(k or "").strip(): v for k, v in r.items()}) for i, r in enumerate(reader, start=2)]
        where = "row"
    if not rows:
        raise ValueError(f"{name} has no rows; give at least one instruction, lang, target")
    items: list[Item] = []
    seen: set[str] = set()
    for n, (lineno, row) in enumerate(rows, start=1):
        items.append(_custom_item(row, n, f"{name} {where} {lineno}", seen))
    return items


def _custom_item(row: dict, n: int, where: str, seen: set[str]) -> Item:
    missing = [c for c in CUSTOM_COLUMNS if row.get(c) in (None, "")]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    instruction = str(row["instruction"])
    if not instruction.strip():
        raise ValueError(f"{where}: the instruction is empty")
    lang = str(row["lang"]).strip().lower()
    lang = {"cn": "zh", "chinese": "zh", "english": "en"}.get(lang, lang)
    if lang not in ("en", "zh"):
        raise ValueError(f"{where}: lang must be en or zh, got {row['lang']!r}")
    raw_target = row["target"]
    try:
        if isinstance(raw_target, bool):
            raise ValueError
        target = int(str(raw_target).strip())
    except ValueError:
        raise ValueError(f"{where}: target must be a whole number from 1 to {MAX_TARGET}, got {raw_target!r}") from None
    if not 1 <= target <= MAX_TARGET:
        raise ValueError(f"{where}: target must be from 1 to {MAX_TARGET}, got {target}")
    temperature: float | None = None
    if row.get("temperature") not in (None, ""):
        try:
            temperature = float(row["temperature"])
        except (TypeError, ValueError):
            raise ValueError(f"{where}: temperature must be a number from 0 to 2, got {row['temperature']!r}") from None
        if not 0 <= temperature <= 2:
            raise ValueError(f"{where}: temperature must be from 0 to 2, got {temperature}")
    item_id = str(row.get("id") or "").strip() or str(n)
    if item_id in seen:
        raise ValueError(f"{where}: id {item_id!r} appears twice; ids must be unique")
    seen.add(item_id)
    return Item(item_id, lang, instruction, target, temperature)  # type: ignore[arg-type]


def load_custom(path: str | Path | None, limit: int | None, seed: int | None, lang: Lang | None) -> Suite:
    """A user's CSV/JSONL; the content hash joins the run key, so another file never resumes this one."""
    if not path:
        raise ValueError("the custom suite needs --file PATH (a CSV or JSONL with instruction, lang, target)")
    p = Path(path).expanduser()
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}; give a readable CSV or JSONL file") from None
    items = parse_custom(data, p.name)
    picked = tuple(select([i for i in items if lang is None or i.lang == lang], limit, seed))
    return Suite("custom", picked, (), fingerprint=hashlib.sha256(data).hexdigest(), sources=len(picked))


def check_control(suite: str, control: str) -> BenchControl:
    """The control, if it is one and the suite can ask for it; ValueError saying what is accepted."""
    if control not in BENCH_CONTROLS:
        raise ValueError(f"unknown control {control!r}; use one of {', '.join(BENCH_CONTROLS)}")
    if control != "equal" and suite not in CONTROL_SUITES:
        suites = ", ".join(CONTROL_SUITES)
        raise ValueError(f"the {suite} suite asks for exactly N in its own words; --control is for {suites}")
    return control  # type: ignore[return-value]


def load_suite(
    name: str,
    *,
    lengths: Sequence[int] | None = None,
    limit: int | None = None,
    seed: int | None = None,
    lang: Lang | None = None,
    file: str | Path | None = None,
    control: BenchControl = "equal",
) -> Suite:
    """Load a suite by name; ValueError (with what is accepted) for a bad name, length, limit, file or control."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; use one of {', '.join(SUITES)}")
    check_control(name, control)
    if lang is not None and lang not in ("en", "zh"):
        raise ValueError(f"unknown language {lang!r}; use en or zh")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    resolved = resolve_lengths(name, lengths)
    if name == "custom":
        suite = load_custom(file, limit, seed, lang)
    elif file:
        raise ValueError(f"--file is for the custom suite only, not {name}")
    elif name == "rtg":
        suite = load_rtg(resolved, limit, seed, lang)
    elif name == "lifebench":
        suite = load_lifebench(resolved, limit, seed, lang, control)
    else:
        suite = load_mtbench(resolved, limit, seed, lang)
    if not suite.items:
        raise ValueError(f"the {name} suite has no items for language {lang}; try the other language")
    return suite

"""Prompt builders: the user's instruction plus a length suffix, as OpenAI-style chat messages.

The English CAPEL suffix follows §3.2 of the paper word for word where it can; the Chinese one
(not published) keeps the same four parts: format, counting rules, a correct example, typical errors.
"""

from __future__ import annotations

from typing import TypedDict

from .vocab import DEFAULT_UNIT, MAX_TARGET, MODES, Lang, Mode, TargetKind, Unit, counts_room, unit_noun

DRAFT_OPEN = "<draft>"
DRAFT_CLOSE = "</draft>"


class Message(TypedDict):
    role: str
    content: str


CAPEL_EN = """\
Required output format
1. For each integer k from {target_length} down to 1:
   - Print the marker <k>.
   - Immediately append one English token: letters with optional leading/trailing punctuation \
(comma, period, apostrophe, hyphen, digits, ...). No spaces inside this token.
2. After the word paired with <1>, write <0> and stop generating.
3. Markers and punctuation are not counted toward the {target_length}-word total; only the English words \
themselves count.
4. If you risk running short, do not end with dozens of bare markers. Add fresh, meaningful prose; line \
breaks or repeated filler do not qualify.{code_rule}

Word-count and ordering rules
- Produce exactly {target_length} markers (<{target_length}> ... <1>) and exactly {target_length} words.
- The numbers inside successive markers must decrease by 1: no skips or repeats.
- Two markers may never appear back-to-back without an intervening word.
- No extra text is allowed after <0> (not even a newline).

Correct example (N = 5)
<5>Hello,<4>world!<3>How's<2>everything?<1>Great.<0>

Typical errors to avoid
- Early stop: ending before <1> or omitting <0>
  <5>Quick<4>demo<3>ends<0>
- Duplicate markers: e.g. two <0>s
  <5>Wrong<4>marker<3>again<2>here<1>now<0><0>
- Markers-only tail: long stretch of bare markers
  <7>Starts<6>well<5>then<4>stop.<3><2><1><0>"""

CAPEL_EN_ROOM = """\
Required output format
1. Count down the room you have: for each word you write, first print the marker <k>, where k starts at \
{target_length} and goes down by 1 for each word.
   - Immediately append one English token: letters with optional leading/trailing punctuation \
(comma, period, apostrophe, hyphen, digits, ...). No spaces inside this token.
2. When your answer is complete, right after a word that ends a sentence, write <0> and stop generating. The \
markers show how much room is left: plan your last sentence so that it ends before the room runs out. After the \
word paired with <1> you must write <0>.{least}
3. Markers and punctuation are not counted toward the {target_length}-word limit; only the English words \
themselves count.{code_rule}

Word-count and ordering rules
- At most {target_length} markers (<{target_length}> ... ) and at most {target_length} words.
- The numbers inside successive markers must decrease by 1: no skips or repeats.
- Two markers may never appear back-to-back without an intervening word.
- No extra text is allowed after <0> (not even a newline).

Correct example (at most 8 words)
<8>Hello,<7>world!<6>How's<5>everything?<0>

Typical errors to avoid
- Stopping in the middle of a sentence:
  <8>The<7>answer<6>is<0>
- Duplicate markers: e.g. two <0>s
  <8>Wrong<7>marker<6>again.<0><0>
- Markers-only tail: long stretch of bare markers
  <8>Starts<7>well.<6><5><4><0>"""
"""CAPEL under a limit or a range (the paper's suffix for exactly N, its counting rules kept): the markers count down
the room left, and `<0>` closes the text at a sentence end of the model's choosing (parser.MarkerParser)."""

ROOM_LEAST_EN = " Write at least {low} words: do not write <0> before the word paired with <{last}>."

CAPEL_EN_CHAR_ROOM = """\
Required output format
1. Count down the room you have, in characters: before each word you write, print the marker <k>, where k is \
the number of characters still allowed. The first marker is <{target_length}>; each next marker is the one \
before it, less the characters of the word in between and 1 for the space after that word.
   - Immediately append one English word with its punctuation (comma, period, apostrophe, hyphen, digits, ...). \
No spaces inside it: the marker stands for the space between two words.
2. When your answer is complete, right after a word that ends a sentence, write <0> and stop generating. The \
markers show how much room is left: plan your last sentence so that it ends before the room runs out; a word \
longer than the room left does not fit.{least}
3. Markers are not counted toward the limit of {target_length} {noun}; the words, their punctuation and one space \
between two words count.{code_rule}

Counting rules
- Each marker is the marker before it less the length of the word between them and 1: <30>Hello,<23> (6 + 1).
- Two markers may never appear back-to-back without an intervening word.
- No extra text is allowed after <0> (not even a newline).

Correct example (at most 30 characters)
<30>Hello,<23>world!<16>How<12>are<8>you?<0>

Typical errors to avoid
- Stopping in the middle of a sentence:
  <30>The<26>answer<19>is<0>
- Counting words instead of characters:
  <30>Hello,<29>world!<28>How<27>are<26>you?<0>
- Duplicate markers: e.g. two <0>s
  <30>Hello,<23>world!<0><0>"""
"""CAPEL under a limit or a range in characters (`vocab.counts_room`): one marker per word, its value the characters
still allowed, the space before the word paid for by the marker (parser.MarkerParser)."""

ROOM_LEAST_CHARS = " Write at least {low} characters: do not write <0> while more than {rest} are left."

CAPEL_ZH_CHAR_ROOM = """\
输出格式要求
1. 倒数剩余的字数（标点符号也算）：每写一个汉字之前，先输出标记 <k>，k 是还能写的字数。第一个标记是 <{target_length}>；\
之后每个标记等于前一个标记减去中间那个汉字和它后面的标点的字数。
   - 紧接着输出恰好一个汉字。标点符号（，。！？、：；等）可以紧跟在这个汉字后面，也要计数。标记与汉字之间不要加空格。
2. 回答完整时，在一个结束句子的汉字（后面带。！？）之后输出 <0>，然后立即停止生成。标记显示还剩多少字：请安排好最后一句，\
在字数用完之前结束。{least}
3. 标记不计入 {target_length} {noun}的上限；汉字和标点符号都计数。{code_rule}

计数规则
- 每个标记等于前一个标记减去中间的字数：<6>好，<4>（“好，”是 2 个字）。
- 两个标记之间必须有一个汉字，不能紧挨着出现。
- <0> 之后不允许有任何内容（包括换行）。

正确示例（最多 10 个字，标点符号也算）
<10>今<9>天<8>天<7>气<6>好，<4>我<3>们<2>去。<0>

常见错误（请避免）
- 句子没写完就结束：
  <10>今<9>天<8>的<0>
- 只数汉字，不数标点：
  <10>今<9>天<8>天<7>气<6>好，<5>我<4>们<3>去。<0>
- 重复标记：例如出现两个 <0>
  <10>我<9>们<8>去。<0><0>"""
"""CAPEL under a limit in 字 counted with punctuation (`vocab.counts_room`): one marker per Han character, its value
the characters still allowed, punctuation included."""

ROOM_LEAST_ZH_CHARS = "至少写 {low} 个字：还剩超过 {rest} 个字时不要输出 <0>。"

CAPEL_ZH_ROOM = """\
输出格式要求
1. 倒数剩余的字数：每写一个汉字之前，先输出标记 <k>，k 从 {target_length} 开始，每写一个字减 1。
   - 紧接着输出恰好一个汉字。标点符号（，。！？、：；“”等）可以紧跟在这个汉字后面，但不算字数。标记与汉字之间不要加空格。
2. 回答完整时，在一个结束句子的汉字（后面带。！？）之后输出 <0>，然后立即停止生成。标记显示还剩多少字：请安排好最后一句，在字数用完之前结束。与 <1> 配对的汉字之后必须输出 <0>。{least}
3. 标记和标点符号都不计入 {target_length} 字的上限，只有汉字本身计数。{code_rule}

字数与顺序规则
- 最多 {target_length} 个标记（<{target_length}> …），最多 {target_length} 个汉字。
- 相邻标记中的数字必须每次减 1：不能跳号，也不能重复。
- 两个标记之间必须有一个汉字，不能紧挨着出现。
- <0> 之后不允许有任何内容（包括换行）。

正确示例（最多 8 个字）
<8>今<7>天<6>天<5>气<4>好。<0>

常见错误（请避免）
- 句子没写完就结束：
  <8>今<7>天<6>的<0>
- 重复标记：例如出现两个 <0>
  <8>我<7>们<6>去。<0><0>
- 结尾只有空标记：
  <8>开<7>始。<6><5><4><0>"""

ROOM_LEAST_ZH = "至少写 {low} 个字：在与 <{last}> 配对的汉字之前不要输出 <0>。"

CODE_RULE_EN = (
    "\n5. For code sections, a token may include a trailing \\n to represent a line break "
    "(i.e., a complete code line counts as one token)."
)

CAPEL_ZH = """\
输出格式要求
1. 对从 {target_length} 递减到 1 的每个整数 k：
   - 先输出标记 <k>。
   - 紧接着输出恰好一个汉字。标点符号（，。！？、：；“”等）可以紧跟在这个汉字后面，但不算字数。标记与汉字之间不要加空格。
2. 在与 <1> 配对的汉字之后，输出 <0>，然后立即停止生成。
3. 标记和标点符号都不计入 {target_length} 字的总数，只有汉字本身计数。
4. 如果担心字数不够，不要在结尾输出一长串没有汉字的空标记；请继续写新的、有意义的内容，换行或重复的填充字不算。{code_rule}

字数与顺序规则
- 恰好输出 {target_length} 个标记（<{target_length}> … <1>），并且恰好 {target_length} 个汉字。
- 相邻标记中的数字必须每次减 1：不能跳号，也不能重复。
- 两个标记之间必须有一个汉字，不能紧挨着出现。
- <0> 之后不允许有任何内容（包括换行）。

正确示例（N = 5）
<5>今<4>天<3>天<2>气<1>好。<0>

正确示例（N = 7）
<7>春<6>风<5>又<4>绿<3>江<2>南<1>岸。<0>

常见错误（请避免）
- 提前结束：没有写到 <1> 就停止，或者漏掉 <0>
  <5>今<4>天<3>好<0>
- 重复标记：例如出现两个 <0>
  <5>我<4>们<3>去<2>学<1>校<0><0>
- 结尾只有空标记：一长串标记后面没有汉字
  <7>开<6>始<5>不<4>错<3><2><1><0>"""

CODE_RULE_ZH = "\n5. 对于代码部分，一个标记后可以跟一整行代码并以换行结尾（即一整行代码计为一个单位）。"

BASELINE = {
    "en": "Please answer the instruction in exactly {target_length} words.",
    "zh": "请用正好{target_length}个字回答上述指令。",
}

# The guaranteed mode states the target plainly (so the model can plan its ending); the grammar does the rest.
EXACT = BASELINE

MORE: dict[Lang, str] = {
    "en": "{instruction} Give a detailed answer, with examples.",
    "zh": "{instruction}请详细回答，并举例说明。",
}
"""The request of a call that goes on with an exact answer the model wanted to end before N (`more_messages`): asked
for more content, not for more words. No count and no "continue" in it: SmolLM2-135M wrote such a request back into
the text ("Please add 30 more words…", "You have 80 words left."); the grammar keeps the count."""


def more_messages(instruction: str, lang: Lang) -> list[Message]:
    """The request of a call that goes on with an exact answer the model wanted to end before N: the answer so far
    is the prefill; this asks for more content (`MORE`)."""
    return [{"role": "user", "content": MORE[lang].format(instruction=instruction.strip())}]


DRAFT_EN = """\
Answer in two parts, in this single response.
Part 1: write a free draft of your answer between {open} and {close}. The draft is discarded; use it to \
get the content right.
Part 2: right after {close}, rewrite the draft so that it has {length} {noun}, following the \
countdown format below. Start the countdown immediately after {close}.

"""

DRAFT_ZH = """\
请在同一个回答中分两部分完成。
第一部分：在 {open} 和 {close} 之间自由写一份草稿。草稿会被丢弃，只用来想清楚内容。
第二部分：紧接在 {close} 之后，按照下面的倒计时格式把草稿改写成{length} 个字。{close} 之后立即开始倒计时。

"""


# How the baseline and exact modes state a limit in a unit other than plain words, or a bound other than
# "exactly" (the plain case keeps BASELINE's wording above); the unit's noun is its own (`vocab.unit_noun`).
LIMIT_PHRASE: dict[Lang, dict[TargetKind, str]] = {
    "en": {
        "exactly": "Please answer the instruction in exactly {high} {noun}.",
        "at_most": "Please answer the instruction in at most {high} {noun}.",
        "range": "Please answer the instruction in {low} to {high} {noun}.",
    },
    "zh": {
        "exactly": "请用正好{high}{noun}回答上述指令。",
        "at_most": "请用不超过{high}{noun}回答上述指令。",
        "range": "请用{low}到{high}{noun}回答上述指令。",
    },
}


def limit_suffix(lang: Lang, unit: Unit, kind: TargetKind, low: int, high: int) -> str:
    """The baseline/exact instruction for any target kind and unit, e.g. "in at most 280 characters"."""
    noun = unit_noun(unit, lang)
    return LIMIT_PHRASE[lang][kind].format(low=low, high=high, noun=noun)


def validate_target(target: int) -> int:
    """Reject targets the app cannot honour, with a message that says what is accepted."""
    if isinstance(target, bool) or not isinstance(target, int):
        raise ValueError(f"target must be a whole number from 1 to {MAX_TARGET}, got {target!r}")
    if not 1 <= target <= MAX_TARGET:
        raise ValueError(f"target must be from 1 to {MAX_TARGET}, got {target}")
    return target


def capel_suffix(
    lang: Lang, target: int, *, code: bool = False, low: int | None = None, unit: Unit | None = None
) -> str:
    """The countdown suffix S_N for `lang`, with the code-aware rule when `code` is set; with `low` (a limit: 1, a
    range: its least) the room countdown, where `<0>` may come at any sentence end from the least on (in
    characters for a `unit` whose room is counted in them, `vocab.counts_room`)."""
    validate_target(target)
    if lang not in ("en", "zh"):
        raise ValueError(f"unknown language {lang!r}; use en or zh")
    code_rule = (CODE_RULE_EN if lang == "en" else CODE_RULE_ZH) if code else ""
    if low is None:
        return (CAPEL_EN if lang == "en" else CAPEL_ZH).format(target_length=target, code_rule=code_rule)
    if unit is not None and counts_room(lang, unit):
        least_text, room_text = (
            (ROOM_LEAST_CHARS, CAPEL_EN_CHAR_ROOM) if lang == "en" else (ROOM_LEAST_ZH_CHARS, CAPEL_ZH_CHAR_ROOM)
        )
        least = least_text.format(low=low, rest=target - low) if low > 1 else ""
        noun = unit_noun(unit, lang)
        return room_text.format(target_length=target, code_rule=code_rule, least=least, noun=noun)
    least = (ROOM_LEAST_EN if lang == "en" else ROOM_LEAST_ZH).format(low=low, last=target - low + 1)
    room = CAPEL_EN_ROOM if lang == "en" else CAPEL_ZH_ROOM
    return room.format(target_length=target, code_rule=code_rule, least=least if low > 1 else "")


def suffix(
    lang: Lang, target: int, mode: Mode, *, code: bool = False, low: int | None = None, unit: Unit | None = None
) -> str:
    """The text appended to the instruction for `mode` (`low`: a limit's or a range's least, for the countdown;
    `unit`: what it is counted in, for a countdown of the room in characters)."""
    validate_target(target)
    if lang not in ("en", "zh"):
        raise ValueError(f"unknown language {lang!r}; use en or zh")
    if mode in ("capel", "exact-countdown"):
        return capel_suffix(lang, target, code=code, low=low, unit=unit)
    if mode == "draft-capel":
        intro = DRAFT_EN if lang == "en" else DRAFT_ZH
        length = (
            (f"exactly {target}" if lang == "en" else f"恰好 {target}") if low is None else _room(lang, low, target)
        )
        noun = "characters" if low is not None and unit is not None and counts_room(lang, unit) else "words"
        return intro.format(open=DRAFT_OPEN, close=DRAFT_CLOSE, length=length, noun=noun) + capel_suffix(
            lang, target, code=code, low=low, unit=unit
        )
    if mode == "baseline":
        return BASELINE[lang].format(target_length=target)
    if mode == "exact":
        return EXACT[lang].format(target_length=target)
    raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")


def _room(lang: Lang, low: int, high: int) -> str:
    """A limit or a range in a Draft→CAPEL intro: "at most 30", "20 to 30"."""
    if lang == "en":
        return f"at most {high}" if low <= 1 else f"{low} to {high}"
    return f"最多 {high}" if low <= 1 else f"{low} 到 {high}"


def build_prompt(
    instruction: str,
    lang: Lang,
    target: int,
    mode: Mode = "capel",
    *,
    code: bool = False,
    low: int | None = None,
    unit: Unit | None = None,
) -> str:
    """The full user prompt: the instruction, a blank line, the suffix."""
    return f"{instruction.strip()}\n\n{suffix(lang, target, mode, code=code, low=low, unit=unit)}"


def build_messages(
    instruction: str,
    lang: Lang,
    target: int,
    mode: Mode = "capel",
    *,
    code: bool = False,
    limit: tuple[Unit, TargetKind, int] | None = None,
    selection: bool = False,
) -> list[Message]:
    """The prompt as chat messages, ready for an OpenAI-style API. `limit` (unit, kind, low) states a target
    other than exactly N words / Chinese characters, for the modes without markers. A rewrite (an instruction
    `REWRITE` built) in those modes gets the rewrite task instead (`rewrite_task`; `selection`: by deleting words)."""
    source = rewrite_source(instruction) if mode in ("baseline", "exact") else None
    if source is not None:
        unit, kind, low = limit if limit is not None else (None, "exactly", target)
        return [{"role": "user", "content": rewrite_task(source, lang, unit, kind, low, target, selection=selection)}]
    if limit is not None and mode in ("baseline", "exact"):
        unit, kind, low = limit
        content = f"{instruction.strip()}\n\n{limit_suffix(lang, unit, kind, low, target)}"
        return [{"role": "user", "content": content}]
    room = limit[2] if limit is not None and limit[1] != "exactly" else None  # a countdown of the room left
    unit = limit[0] if limit is not None else None
    content = build_prompt(instruction, lang, target, mode, code=code, low=room, unit=unit)
    return [{"role": "user", "content": content}]


REWRITE: dict[str, str] = {
    "en": "Rewrite the following text, keeping its meaning and tone:\n\n{text}",
    "zh": "改写下面这段文字，保留原意和语气：\n\n{text}",
}
"""Write's "Rewrite my own text to length": the pasted text becomes this instruction."""


def rewrite_source(instruction: str) -> str | None:
    """The pasted text of a rewrite run's instruction (as `REWRITE` built it), or None for a plain instruction."""
    for template in REWRITE.values():
        head = template.split("{text}")[0]
        if instruction.startswith(head) and len(instruction) > len(head):
            return instruction[len(head) :]
    return None


REWRITE_TASK: dict[str, str] = {
    "en": "Rewrite the text below in {length}, keeping its meaning and tone. Write only the rewritten text: no "
    "title, no introduction, no comment.\n\nText:\n{text}",
    "zh": "把下面这段文字改写成{length}，保留原意和语气。只写改写后的文字，不要标题、开场白或说明。\n\n原文：\n{text}",
}
"""A rewrite in the modes without markers: the target stated plainly, and no room for a preamble."""
SELECT_TASK = (
    "Shorten the text below to {length} by deleting the least important words. Keep the other words exactly as "
    "they are, in the same order. Write only the shortened text.\n\nText:\n{text}"
)
"""A rewrite by selection (rewrite.py): the grammar admits only the writer's own words; the prompt says why."""

_LENGTH: dict[str, dict[TargetKind, str]] = {
    "en": {"exactly": "exactly {high} {noun}", "at_most": "at most {high} {noun}", "range": "{low} to {high} {noun}"},
    "zh": {"exactly": "正好{high}{noun}", "at_most": "不超过{high}{noun}", "range": "{low}到{high}{noun}"},
}


def rewrite_task(
    source: str, lang: Lang, unit: Unit | None, kind: TargetKind, low: int, high: int, *, selection: bool = False
) -> str:
    """The user message of a rewrite of `source` to the target (unit None: the language's own words/characters)."""
    noun = unit_noun(unit or DEFAULT_UNIT[lang], lang)
    length = _LENGTH[lang][kind].format(low=low, high=high, noun=noun)
    template = SELECT_TASK if selection and lang == "en" else REWRITE_TASK[lang]
    return template.format(length=length, text=source.strip())

"""Length counters: one function per counting unit, so every part of the app counts the same way.

Each counter is pure and total (any string in, a non-negative int out). The parser, the grammar
generator, the metrics and the UI all call `count(text, unit)`; nothing else counts length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache

from .vocab import DEFAULT_UNIT, UNITS, Lang, Unit

# Every CJK Unified Ideographs block (base, Ext A-I), the compatibility ideographs, and the two
# Han-script signs a writer counts as characters: 々 (iteration mark) and 〇 (ideographic zero).
HAN_RANGES = (
    "\u3005\u3007"
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\uf900-\ufaff"
    "\U00020000-\U0002a6df"
    "\U0002a700-\U0002ebef"
    "\U0002ebf0-\U0002ee5f"
    "\U0002f800-\U0002fa1f"
    "\U00030000-\U000323af"
)
HAN = re.compile(f"[{HAN_RANGES}]")

# A letter or digit in any script ([^\W_] is \w without the underscore).
_ALNUM = re.compile(r"[^\W_]")
_TOKEN = re.compile(r"\S+")
# In Chinese text a run of non-Han letters/digits is one unit; inner . , ' ’ - keep it whole (3.14, don't).
_NON_HAN_ALNUM = f"[^\\W_{HAN_RANGES}]"
_ZH_UNIT = re.compile(f"[{HAN_RANGES}]|{_NON_HAN_ALNUM}+(?:[.,'’\\-]{_NON_HAN_ALNUM}+)*")
_LIFEBENCH_HAN = re.compile(r"[\u4e00-\u9fff]")
_LIFEBENCH_WORD = re.compile(r"\b[a-zA-Z0-9'-]+\b")
_WHITESPACE = re.compile(r"\s+")


def count_en_words(text: str) -> int:
    """Words as a word processor counts them: whitespace-separated runs holding a letter or digit."""
    return sum(1 for m in _TOKEN.finditer(text) if _ALNUM.search(m.group()))


def count_zh_chars(text: str) -> int:
    """Han characters count 1 each, a run of other letters/digits counts 1, punctuation counts 0."""
    return sum(1 for _ in _ZH_UNIT.finditer(text))


@cache
def _jieba():
    """Load jieba once, lazily: its dictionary takes about a second to read."""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def count_zh_words(text: str) -> int:
    """Chinese words by jieba segmentation; tokens without a letter, digit or Han character are dropped."""
    return sum(1 for tok in _jieba().lcut(text) if _ALNUM.search(tok))


def count_lifebench(text: str) -> int:
    """LIFEBench's official counter (exp/cache.py `count_words`), kept exactly for benchmark parity."""
    text = _WHITESPACE.sub(" ", text).strip()
    return len(_LIFEBENCH_HAN.findall(text)) + len(_LIFEBENCH_WORD.findall(text))


COUNTERS: dict[Unit, Callable[[str], int]] = {
    "en_words": count_en_words,
    "zh_chars": count_zh_chars,
    "zh_words": count_zh_words,
    "lifebench": count_lifebench,
}


def count(text: str, unit: Unit) -> int:
    """Count `text` in `unit`; raises ValueError naming the accepted units for an unknown one."""
    try:
        counter = COUNTERS[unit]
    except KeyError:
        raise ValueError(f"unknown unit {unit!r}; use one of {', '.join(UNITS)}") from None
    return counter(text)


def count_characters(text: str) -> int:
    """Characters as an editor's character count shows them (not a counting unit): code points after NFC, so
    an accented letter typed as two code points counts once. Shown beside every result's unit count."""
    return len(unicodedata.normalize("NFC", text))


def marker_unit(lang: Lang) -> Unit:
    """The unit one countdown marker pays for: a word in English, a character in Chinese."""
    return DEFAULT_UNIT[lang]

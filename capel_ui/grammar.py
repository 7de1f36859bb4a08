"""GBNF grammars for the guaranteed modes: every string they admit counts to exactly N.

`exact` admits N words (English: one space between words, the last word ending a sentence) or N Chinese
characters (punctuation allowed after any of them). `exact-countdown` forces the CAPEL markers, one unit
after each. The unit rules are chosen so that en_words and lifebench (English), and zh_chars and lifebench
(Chinese), all count each unit as exactly one.
"""

from __future__ import annotations

from .prompts import validate_target
from .vocab import GRAMMAR_UNITS, Lang, Unit

# An English word: starts and ends with a letter or digit, may hold ' or - inside, then optional punctuation.
# At most 16 characters: a small model otherwise pads words into long hyphen chains and runs out of tokens.
_EN_RULES = r"""
word ::= wcore [,;:.!?]?
wend ::= wcore [.!?]
wcore ::= [A-Za-z0-9] ([A-Za-z0-9'-]{0,14} [A-Za-z0-9])?
"""

# A Chinese unit: one CJK ideograph (base block: what models write), optionally followed by punctuation.
_ZH_RULES = r"""
word ::= han [，、；：。！？]?
wend ::= han [。！？]
han ::= [一-鿿]
"""


def supports(lang: Lang, unit: Unit) -> bool:
    """Whether the guaranteed modes can promise an exact count in `unit` for `lang`."""
    return unit in GRAMMAR_UNITS.get(lang, ())


def _rules(lang: Lang) -> str:
    if lang == "en":
        return _EN_RULES
    if lang == "zh":
        return _ZH_RULES
    raise ValueError(f"unknown language {lang!r}; use en or zh")


def exact_grammar(lang: Lang, target: int, rules: str | None = None) -> str:
    """Exactly `target` units of plain prose, the last one closing a sentence.

    `rules` replaces the plain `word`/`wend` rules (e.g. `lexicon_rules`, real words for llama.cpp)."""
    validate_target(target)
    sep = ' " "' if lang == "en" else ""
    body = f"(word{sep}){{{target - 1}}} wend" if target > 1 else "wend"
    return f"root ::= {body}\n{(rules or _rules(lang)).strip()}\n"


def countdown_grammar(lang: Lang, target: int, rules: str | None = None) -> str:
    """The CAPEL countdown with markers forced: `<N>` unit `<N-1>` unit ... `<1>` unit `<0>`."""
    validate_target(target)
    steps = " ".join(f'"<{k}>" word' for k in range(target, 1, -1))
    body = f'{steps} "<1>" wend "<0>"' if steps else '"<1>" wend "<0>"'
    return f"root ::= {body}\n{(rules or _rules(lang)).strip()}\n"


def lexicon_rules(lang: Lang, own_text: str = "") -> str:
    """Word-list `word`/`wend` rules (llama.cpp GBNF only; about a megabyte, built once per process).

    English: wordfreq's frequent words, numbers, and the words of `own_text` (the instruction or draft: names,
    brands) the list lacks; the last word never a dangling "of"/"the". Chinese: a real character list.
    """
    from .lexicon import chinese_lexicon_rules, english_lexicon_rules, instruction_words

    if lang == "en":
        return english_lexicon_rules(instruction_words(own_text))
    if lang == "zh":
        return chinese_lexicon_rules()
    raise ValueError(f"unknown language {lang!r}; use en or zh")

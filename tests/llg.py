"""LLGuidance (the grammar engine behind OpenAI's grammar tools, and one of vLLM's and SGLang's) driven offline.

A byte-level tokenizer (one token per byte, plus an end token) lets it match plain strings with no model:
`accepts(kind, text, s)` says whether the grammar `text` admits exactly `s`.
"""

from __future__ import annotations

from functools import cache
from typing import ClassVar, Literal

import llguidance

Kind = Literal["gbnf", "lark", "regex", "json_schema"]


class _ByteTokenizer:
    tokens: ClassVar[list[bytes]] = [bytes([i]) for i in range(256)] + [b"<eos>"]
    eos_token_id = 256
    bos_token_id = None
    special_token_ids: ClassVar[list[int]] = [256]

    def __call__(self, data: bytes) -> list[int]:
        return list(data)


@cache
def _tokenizer() -> llguidance.LLTokenizer:
    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))


@cache
def _built(kind: Kind, text: str) -> tuple[str, llguidance.LLMatcher]:
    """The grammar in LLGuidance's own form and a matcher at its start, or AssertionError with the engine's message.

    The matcher is the check: it compiles the grammar as `LLMatcher.validate_grammar` does (a matcher whose grammar
    does not compile is in its error state, with the same message), so the grammar is compiled once, not twice
    (0.3 s of CPU each time for the English word list)."""
    grammar = llguidance.LLMatcher.grammar_from_lark(text) if kind == "lark" else llguidance.grammar_from(kind, text)
    matcher = llguidance.LLMatcher(_tokenizer(), grammar, log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    return grammar, matcher


def compiled(kind: Kind, text: str) -> str:
    """The grammar in LLGuidance's own form; raises AssertionError with the engine's message if it does not compile."""
    return _built(kind, text)[0]


def _fresh_matcher(kind: Kind, text: str) -> llguidance.LLMatcher:
    """A matcher at the grammar's start, kept to be copied: building one reads the whole grammar again (half a
    second for the English word list), a copy takes microseconds."""
    return _built(kind, text)[1]


def accepts(kind: Kind, text: str, s: str) -> bool:
    """Whether the grammar admits exactly `s` (all of it, and then may stop)."""
    matcher = _fresh_matcher(kind, text).deep_copy()
    return bool(matcher.consume_tokens(list(s.encode()))) and matcher.is_accepting() and not matcher.is_error()

"""What a run sends and by which route, decided once from the backend's capabilities and the request.

`RunPlan.of(backend, request)` settles the mode (a fallback route where the model cannot run the one asked for),
the notice that says so, how many calls it may take (repair.py), a rewrite's route (rewrite.py), the messages, the
grammar in the form the server takes (a word list on llama.cpp) and whether its ending is planned (planned.py).
The run (`generation.Generation`) streams what the plan says; nothing here calls the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from .backends import Backend, Capabilities, fallback, language_note
from .ending import SEARCH_UNITS
from .grammar import (
    AnyGrammar,
    Grammar,
    Rep,
    Seq,
    closing_rules,
    grammar_for,
    lexicon_rules,
    starting_with,
    target_grammar,
    with_word_list,
)
from .parser import MarkerParser, ParseResult
from .prompts import Message, build_messages, more_messages, rewrite_source
from .quality import LIST_WATCH
from .repair import max_calls_for
from .request import Request, validate_request
from .rewrite import Route, first_word, strip_preamble
from .rewrite import plan as plan_rewrite
from .vocab import GRAMMAR_MODES, MARKER_MODES, Mode, grammar_kind, markers_can_count


@dataclass(frozen=True)
class RunPlan:
    """What one run sends: its mode (the one asked for, or its fallback), messages and grammar; how many calls it may
    take; a rewrite's route; the units an exact text's ending search may write again (`plan_units`, 0: none) and
    whether a text under a limit ends at its most natural sentence end (`bounded`); whether an exact text the model
    wanted to end before N goes on from there in a call that asks for more content (`fills`); whether an exact text
    that turns into a number list nobody asked for is written again from the sentence before it (`drops_lists`)."""

    request: Request
    capabilities: Capabilities
    mode: Mode
    notice: str | None
    language_note: str | None
    max_calls: int
    rewrite: Route | None
    messages: list[Message]
    ending_messages: list[Message]
    grammar: AnyGrammar | None
    plan_units: int
    bounded: bool
    fills: bool = False
    drops_lists: bool = False

    @classmethod
    def of(cls, backend: Backend, req: Request) -> RunPlan:
        """The plan of `req` on `backend` (ValueError, before any call, for a request it cannot run)."""
        validate_request(req, backend)
        caps = backend.capabilities
        mode, notice = req.mode, None
        countable = (
            markers_can_count(req.lang, req.count_unit, req.target_kind) and rewrite_source(req.instruction) is None
        )
        instead = fallback(backend.model, req.mode, caps, countable) if req.allow_fallback else None
        if instead is not None:
            mode = instead.mode
            notice = instead.notice(backend.label, req.mode)
        foreign = language_note(backend.provider, req.lang)
        if foreign:
            notice = " ".join(n for n in (notice, foreign) if n)
        rewrite = plan_rewrite(req.instruction, mode, req.lang, req.count_unit, req.target_spec, caps.takes_gbnf)
        if rewrite is not None and rewrite.note:
            notice = " ".join(filter(None, (notice, rewrite.note)))
        limit = None if req.plain else (req.count_unit, req.target_kind, req.target_spec.low)
        selection = rewrite is not None and rewrite.selection
        messages = build_messages(
            req.instruction, req.lang, req.target, mode, code=req.code, limit=limit, selection=selection
        )
        # The question a text's ending is scored against (ending.py): the instruction with its length, as the
        # baseline states it, whatever the mode sent (a countdown's markers are not in the clean text).
        ending_messages = build_messages(req.instruction, req.lang, req.target, "baseline", code=req.code, limit=limit)
        plan_units = _plan_units(req, caps, mode, rewrite)
        goes_on = bool(plan_units and mode == "exact" and caps.prefill is not None)
        fills = goes_on and req.ask_more and req.target > 2
        # a list is caught from LIST_WATCH words on; on the same seed at temperature 0 it would come back word for word
        drops_lists = goes_on and req.target > LIST_WATCH and req.temperature != 0
        return cls(
            request=req,
            capabilities=caps,
            mode=mode,
            notice=notice,
            language_note=foreign,
            max_calls=max_calls_for(req, backend, mode),
            rewrite=rewrite,
            messages=messages,
            ending_messages=ending_messages,
            grammar=_grammar(req, caps, mode, rewrite),
            plan_units=plan_units,
            bounded=bool(
                req.plan_ending
                and caps.end_probability
                and mode == "exact"
                and req.target_kind != "exactly"
                and rewrite is None
            ),
            fills=fills,
            drops_lists=drops_lists,
        )

    @property
    def prompt(self) -> str:
        return self.messages[-1]["content"]

    def parser(self) -> MarkerParser | None:
        """A fresh countdown parser for one call, None for a mode without markers."""
        return self._marker_parser() if self.mode in MARKER_MODES else None

    def parse(self, raw: str) -> ParseResult:
        """`raw` parsed as a whole: the live result as if the output ended now, or a repaired run's cut text."""
        probe = self._marker_parser()
        probe.feed(raw)
        return probe.close()

    def _marker_parser(self) -> MarkerParser:
        req = self.request
        draft = self.mode == "draft-capel"
        return MarkerParser(req.target_spec, req.lang, req.count_unit, draft=draft, code=req.code)

    def clean(self, raw: str) -> str:
        """The clean text of `raw` (a countdown's markers removed)."""
        return self.parse(raw).text if self.mode in MARKER_MODES else raw.strip()

    def plain_text(self, raw: str) -> str:
        """The text of a reply without markers; a free rewrite's without what the model said around it."""
        if self.rewrite is None or self.rewrite.selection:
            return raw.strip()
        return strip_preamble(raw, self.rewrite.source)

    def more(self, done: int) -> tuple[list[Message], AnyGrammar | None]:
        """The messages and grammar of the call that goes on with an exact answer the model wanted to end at `done`
        of N units (`fills`): asked for more content (`prompts.MORE`), the rest of the units (`rest`)."""
        return more_messages(self.request.instruction, self.request.lang), self.rest(done)

    def rest(self, done: int, numbers: bool = True) -> AnyGrammar | None:
        """The grammar of a call that goes on from the first `done` of N units (the prefill): exactly the units
        left, each after its space (all N from the start where `done` is 0), from the word list where the server
        takes one; with no number where `numbers` is False (the rest of a text that turned into a list of them)."""
        req = self.request
        if not done:
            whole = target_grammar(req.lang, req.count_unit, req.target_spec.low, req.target_spec.high)
            return _word_list(req, self.capabilities, whole, numbers)
        room = req.target - done
        grammar = closing_rules(req.lang, req.count_unit, room)
        if room > 1 and isinstance(grammar, Grammar) and isinstance(grammar.start, Seq):  # room-1 words, then the last
            words, last = grammar.start.items
            assert isinstance(words, Rep)
            grammar = Grammar(Seq((Rep(words.item, room - 1, room - 1), last)), grammar.rules)
        return _word_list(req, self.capabilities, grammar, numbers)

    def rival_grammar(self, grammar: AnyGrammar) -> AnyGrammar:
        """A rival ending's grammar: the word list where LLGuidance checks it cheaply, else the plain word rule (the
        GBNF list costs a rival twice the time; a rival with a non-word, a glued or a dangling word is never kept:
        the planner keeps the ending with the fewest quality warnings)."""
        if self.capabilities.llguidance:
            return _word_list(self.request, self.capabilities, grammar) or grammar
        return grammar


def _plan_units(req: Request, caps: Capabilities, mode: Mode, rewrite: Route | None) -> int:
    """Units at the end of an exact text that its ending search may write again; 0 for no search: only exactly N
    words (or Chinese characters) in a guaranteed mode, on a server that continues an answer and scores endings
    (llama.cpp), and not a rewrite."""
    if not (req.plan_ending and caps.plans_endings and mode in GRAMMAR_MODES and rewrite is None):
        return 0
    if req.target_kind != "exactly" or grammar_kind(req.lang, req.count_unit) != "words" or req.target < 2:
        return 0
    return min(req.target - 1, max(SEARCH_UNITS))


def _grammar(req: Request, caps: Capabilities, mode: Mode, rewrite: Route | None) -> AnyGrammar | None:
    """The guaranteed modes' grammar; on llama.cpp its words come from a word list (no glued words)."""
    if rewrite is not None and rewrite.grammar is not None:
        return rewrite.grammar  # the writer's own words, nothing else (rewrite.py)
    grammar: AnyGrammar | None = grammar_for(mode, req.lang, req.target, req.count_unit, req.target_spec.low)
    if mode == "exact":  # any target kind and unit; a character limit is GBNF text (Lark by conversion)
        spec = req.target_spec
        grammar = target_grammar(req.lang, req.count_unit, spec.low, spec.high)
        if rewrite is not None and isinstance(grammar, Grammar) and req.lang == "en":
            grammar = starting_with(grammar, *first_word(rewrite.source))  # no room for a preamble
    return _word_list(req, caps, grammar)


def _word_list(req: Request, caps: Capabilities, grammar: AnyGrammar | None, numbers: bool = True) -> AnyGrammar | None:
    """`grammar` with its words drawn from the word list, on llama.cpp (unless the request turned it off)."""
    syntax = caps.word_list_syntax
    if isinstance(grammar, Grammar) and req.word_list and syntax is not None:
        words = lexicon_rules(req.lang, req.instruction, syntax, req.count_unit, numbers)
        return with_word_list(grammar, words, syntax, caps.end_token)
    return grammar

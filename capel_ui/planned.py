"""A run's ending, planned once its stream has ended: the ending score of its text, an exact text's cut-off ending
searched again, a text under a limit ended at the sentence end the model would end on.

The run (`generation.Generation`) streams its calls; when they are done it asks its `EndingPlanner` what its text
should end as and applies the answer to its current call. The planner only asks the model (next tokens, ending
scores, rival closing sentences) and decides; it never touches the run's calls. The scores and the search are
ending.py's; this module is what a run does with them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .backends import Backend, BackendError, Options, Usage
from .backends.base import Unanswered, gate_of, total
from .counting import count
from .ending import (
    NATURAL,
    SEARCH_UNITS,
    SEARCH_WIDTH,
    Alternatives,
    Ending,
    end_share,
    natural_cut,
    score_ending,
    search_ending,
    sentence_ends,
    split_ending,
)
from .grammar import closing_rules
from .lexicon import DANGLING, begins_known_unit, known_unit
from .plan import RunPlan
from .prompts import Message
from .quality import JUNK_KINDS, content_words, warnings
from .request import Request
from .vocab import MARKER_MODES, grammar_kind

QUESTIONS_MOST = 120
"""The most next-token questions one text's ending search asks, all its sizes together: a bound on the wait (~30 ms a
question on the embedded model), above the 97 the longest search measured asked. At 48 (issue 45) one text in six of
benchmarks/quality.py lost the natural ending a longer search found, so the bound does not cut a search that
finishes. Past it the search keeps what it found."""
CLOSINGS = 3
"""Rival closing sentences a text under a limit gets, where the limit leaves room (`EndingPlanner._closings`)."""
WRITE_ANEW_SEEDS = 1000
"""How far the seeds of a second round of texts written anew lie from the first's (`CLOSINGS` more, only where
none of the first round ends on a whole word either)."""
CLOSING_ROOM = {"words": 3, "chars": 16}
"""The least room (words, or characters) a limit must leave for a rival closing sentence to be worth writing."""
CLOSING_MOST = {"words": 12, "chars": 80}
"""The longest rival closing (words, or characters): a short closing line, not more of the text."""
WANTED_END = 0.5
"""P(end) from which the model wanted its whole answer to end at a sentence end: what an exact text says after it
was written only to reach the count (padding: "The end.", a sentence again)."""
LEAST_MORE = 3
"""The fewest units after a wanted end worth a call that asks for more content (fewer: the ending search mends it)."""
WORD = re.compile(r"\S+")
HAN = re.compile(r"[\u4e00-\u9fff]")
HAN_UNIT = re.compile(r"[\u4e00-\u9fff][^\u4e00-\u9fff<]*")
"""A Han character with what follows it up to the next one or a marker: one unit of a Chinese countdown."""


@dataclass
class Rival:
    """A closing sentence written beside a text's own ending (`EndingPlanner._closings`)."""

    parts: list[str] = field(default_factory=list)
    usage: Usage | None = None
    failure: BackendError | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def chunks(self) -> int:
        return len(self.parts)

    @property
    def finished(self) -> bool:
        """Written to its end: no failure, not cut by the output limit, some text."""
        done = self.usage is not None and self.usage.finish_reason != "length"
        return done and self.failure is None and bool(self.text.strip())


@dataclass
class Planned:
    """What the planner decided: the run's raw text from now on (None: unchanged), what it weighed (stored with the
    run as `planned_ending`), the words a limit left out after the sentence it ended at, and the tokens the rival
    closings cost."""

    raw: str | None
    plan: dict[str, Any]
    cut_tail: str | None = None
    extra_tokens: int | None = None


@dataclass
class WholeEndings:
    """Which candidate endings of a text under a limit a writer could keep: those that end on a whole word (else
    cut back to a clause that closes whole), keeping the request's main point. Read only: the ending scores asked
    so far (`scores`, the planner's) tell a word the grammar cut at the limit."""

    request: Request
    scores: Mapping[str, float | None]

    def ends_whole(self, text: str) -> bool:
        """Whether `text`'s last word stands whole: a word of the word list (or the instruction's own, a number),
        not a lone letter other than "a" or "I" and no dangling "of" or "Dr." ("…: A New E." ends on a cut word)."""
        found = split_ending(text)
        if found is None or self.request.lang != "en":
            return found is not None
        word = found[1].strip()
        if word.lower() in DANGLING or self._cut_at_cap(text):
            return False
        known = known_unit(word, self.request.lang, self.request.instruction)
        return known and (len(word) > 1 or word.lower() in ("a", "i") or word.isdigit())

    def _cut_at_cap(self, text: str) -> bool:
        """Whether a character limit's grammar closed `text` on its last character allowed while the model would
        have gone on (its ending score, asked already, below `NATURAL`): a listed word there is likely a cut one
        ("…a bike repair ap.", "ap" being a word of the list). A last word that begins a longer word or number of the
        instruction is one however sure the model sounds ("…reminder of a 3." for "3:30 pm", scored 0.11)."""
        req = self.request
        if grammar_kind(req.lang, req.count_unit) != "chars" or count(text, req.count_unit) != req.target_spec.high:
            return False
        if _begins_longer(text, req.instruction):
            return True
        score = self.scores.get(text.strip())
        return score is not None and score < NATURAL

    def worth_keeping(self, texts: list[str], raw: str) -> list[str]:
        """The candidate endings a writer could keep: none that ends on a cut word (where any does not; where all
        do, each cut back to its last clause that closes whole: "Bike Repair Portland: A New E." to "Bike Repair
        Portland."), and none that drops the request's main point the longest candidate keeps (the instruction's
        own content words: "Dear Dr. Patel!" loses to the reminder of the appointment)."""
        whole = self.whole(texts) or texts
        point = content_words(self.request.instruction) & content_words(raw)
        if not point:
            return whole
        kept = {t: len(point & content_words(t)) for t in whole}
        most = max(kept.values())
        return [t for t in whole if 2 * kept[t] >= most]

    def whole(self, texts: list[str]) -> list[str]:
        """Those of `texts` that end on a whole word; where none does, each cut back to its clauses that close whole
        ("Bike Repair Portland: A New E." to "Bike Repair Portland."); empty where nothing ends whole."""
        whole = [t for t in texts if self.ends_whole(t)]
        return whole or [c for t in texts for c in self.clauses(t) if self.ends_whole(c)]

    def clauses(self, text: str, drop_words: bool = True) -> list[str]:
        """`text` cut after each pause (, ; :) that leaves at least two words before it, closed with a stop, inside
        the target; where it has none, `text` without its last words up to the last that stands whole ("…shop in!"
        to "…shop.")."""
        spec, unit = self.request.target_spec, self.request.count_unit
        heads = [text[: m.start()].rstrip() for m in re.finditer(r"[,;:](?=\s)", text)]
        if not heads and drop_words:
            words = list(WORD.finditer(text))
            heads = [text[: words[-k].start()].rstrip() for k in range(1, min(3, len(words) - 1) + 1)]
        return [h.rstrip(",;:") + "." for h in heads if len(WORD.findall(h)) >= 2 and spec.within(count(h + ".", unit))]


@dataclass
class EndingPlanner:
    """Scores and plans one run's ending. Its `plan` (plan.py) gives the request, the question an ending is scored
    against (`ending_messages`: the instruction with its length), a raw text's clean text (`clean`) and the grammar a
    rival closing sentence is written under (`rival_grammar`); `halted` says the run was stopped or ran out of time,
    after which nothing more is asked."""

    backend: Backend
    plan: RunPlan
    halted: Callable[[], bool]
    searching: bool = False  # an exact text's ending is being searched
    tries: tuple[int, int] = (0, 0)  # while searching: which try this is, of how many (the live line says it)
    closing: bool = False  # a text under a limit is choosing where it ends
    _scores: dict[str, float | None] = field(default_factory=dict)
    unanswered: set[str] = field(default_factory=set)  # texts whose ending score the server did not answer in time
    _next: dict[str, Alternatives] = field(default_factory=dict)  # next tokens asked, by the text they follow
    _asked: int = 0  # next-token questions the current search asked (`QUESTIONS_MOST`)
    _endings: WholeEndings = field(init=False)  # which candidate endings a writer could keep (reads `_scores`)

    def __post_init__(self) -> None:
        self._endings = WholeEndings(self.plan.request, self._scores)

    @property
    def request(self) -> Request:
        return self.plan.request

    def clean(self, raw: str) -> str:
        return self.plan.clean(raw)

    # ----- the ending score ------------------------------------------------------------------------------------
    def score(self, text: str) -> float | None:
        """The ending score of the clean `text` (ending.py), asked once per text (a search or a limit asked it of
        their candidates already); None where the server cannot say or fails to (a help, never a failure)."""
        key = text.strip()
        if key not in self._scores:
            try:
                self._scores[key] = score_ending(self.backend.ending_score, self.plan.ending_messages, key)
            except BackendError:
                self._scores[key] = None
            except Unanswered:  # asked again and again: the run says its ending was not scored
                self._scores[key] = None
                self.unanswered.add(key)
        return self._scores[key]

    # ----- exactly N: search a cut-off ending again ------------------------------------------------------------
    def search(self, raw: str, units_most: int) -> Planned:
        """An exact text whose own ending is cut off gets its last 3 units, then 6, then 10 (at most `units_most`)
        written again where the model would end a phrase (ending.search_ending); the most likely natural ending
        found is kept, one with no more quality warnings than the text's own. The plan has no `raw` when the text's
        own ending is natural, its score unknown (or it counts wrong), or nothing better was found."""
        req = self.request
        text = self.clean(raw)
        own = self.score(text) if count(text, req.count_unit) == req.target else None
        plan: dict[str, Any] = {"own": {"text": text, "end_probability": own}, "searched": []}
        if own is None or own >= NATURAL:
            return Planned(None, plan)
        self.searching, self._asked = True, 0
        try:
            # One slot of the server for the whole search (its questions follow one another): variants search at
            # once where the server has a slot for each, else one after another, so that each search's many short
            # questions find a slot holding its own text (llama.cpp's prompt cache: 0.02 s a question warm, 0.6 s
            # cold on the embedded model) rather than another variant's.
            with gate_of(self.backend).place(self.halted) as ours:
                return self._search_sizes(raw, text, units_most, plan) if ours else Planned(None, plan)
        finally:
            self.searching = False

    def _search_sizes(self, raw: str, text: str, units_most: int, plan: dict[str, Any]) -> Planned:
        """The search proper: the last 3 units, then 6, then 10, until one finds a natural ending; a text too short
        for 3 (a 2- or 3-word headline) has all it may write again searched at once."""
        sizes = [k for k in SEARCH_UNITS if k <= units_most] or [units_most]
        for i, units in enumerate(sizes, 1):
            self.tries = (i, len(sizes))
            best = self._search_from(text, units, plan)
            if best is not None:
                new_raw = self._written(raw, best, units)
                if new_raw is not None:
                    plan["chosen"] = best.text
                    self._scores[self.clean(new_raw).strip()] = best.score  # found on the way
                return Planned(new_raw, plan)
            if self.halted():
                break
        return Planned(None, plan)

    def _search_from(self, text: str, units: int, plan: dict[str, Any]) -> Ending | None:
        req = self.request
        head = self._without_last(text, units)
        flaws = self.flaws(text)

        def keep(ending: str) -> bool:  # no more quality warnings than the text's own ending
            return self.flaws(ending) <= flaws

        found = search_ending(
            head,
            req.target - units,
            req.target,
            self._ask,
            req.lang,
            self._known_unit,
            first=True,  # stop at the step that finds the first natural ending: the run's wait (benchmarks/quality.py)
            keep=keep,
            begins=lambda unit: begins_known_unit(unit, req.lang, req.instruction),
        )
        plan["searched"] += [{"units": units, "text": e.text, "end_probability": e.score} for e in found[:3]]
        return next((e for e in found if e.natural and keep(e.text)), None)

    def _ask(self, texts: Sequence[str]) -> list[Alternatives | None]:
        """The model's next tokens after each of `texts` (a step of the search); none once halted. Asked one after
        another, not at once: each question then finds a llama.cpp slot that holds the text it follows but for its
        last tokens (on the embedded model, three variants' searches waited 1.6 s a text asked one at a time, 3.9 s
        asked at once, issue 31). A text asked before (a longer search passes the shorter one's paths again) is
        answered from memory. They are asked in the order of their texts, so that paths that share all but their
        last tokens follow one another: the server's slot then holds all of a question's text but its last token or
        two, and works out only those (each further token is most of a question's time on the embedded model). At
        most `QUESTIONS_MOST` a search: past them a text not asked has no answer, and the search ends."""
        for text in sorted(set(texts)):
            if text not in self._next and not self.halted() and self._asked < QUESTIONS_MOST:
                self._asked += 1
                found = self.backend.next_tokens(self.plan.ending_messages, text)
                if found:  # a failure may pass: not kept
                    self._next[text] = found
        return [self._next.get(text) for text in texts]

    def _known_unit(self, unit: str) -> bool:
        """Whether the search may write `unit`: a word of the grammar's word list (or the instruction's own), a
        number, or a listed Chinese character."""
        return known_unit(unit, self.request.lang, self.request.instruction)

    def _without_last(self, text: str, units: int) -> str:
        """`text` without its last `units` units (and the space before them)."""
        found = list((HAN if self.request.lang == "zh" else WORD).finditer(text))
        return text[: found[len(found) - units].start()].rstrip()

    def _written(self, raw: str, ending: Ending, units: int) -> str | None:
        """The raw text with `ending` as its text (a countdown's markers written for its last `units` units); None if
        it does not count to the target."""
        req = self.request
        new_raw = ending.text
        if self.plan.mode in MARKER_MODES:
            at = raw.find(f"<{units}>")
            found = list((HAN_UNIT if req.lang == "zh" else WORD).finditer(ending.text))[-units:]
            if at < 0 or len(found) != units:
                return None
            new_raw = raw[:at] + "".join(f"<{units - i}>{m.group()}" for i, m in enumerate(found)) + "<0>"
        return new_raw if count(self.clean(new_raw), req.count_unit) == req.target else None

    # ----- exactly N: where the model wanted to end before N ---------------------------------------------------
    def wanted_end(self, text: str) -> int | None:
        """The first sentence end of the clean `text`, with at least `LEAST_MORE` units after it, where the model
        wanted its whole answer to end (P(end) >= `WANTED_END`): what follows was written only for the count. Asked
        one sentence end at a time, stopping at the first; None where there is none (or the server cannot say)."""
        unit = self.request.count_unit
        for i in sentence_ends(text):
            if count(text[i:], unit) < LEAST_MORE or self.halted():
                return None
            try:
                p_end = end_share(self.backend.next_tokens(self.plan.ending_messages, text[:i]))
            except BackendError:
                return None
            if p_end is None:
                return None
            if p_end >= WANTED_END:
                return i
        return None

    def more_reads_better(self, padded: str, raw: str) -> bool:
        """Whether the text that went on asking for more content (`raw`) may stand for the padded one the first call
        wrote (`padded`), each with its ending planned: it ends naturally, brings in no kind of junk the padded one
        lacked (a number list, text about itself, word salad) and has no more quality warnings; and either it has
        fewer, or it ends at least half as surely as the padded one ("…to take the time you need to recharge. It's
        all about finding a balance that's perfect." at 0.01 loses to "…You're more than your job, so keep going." at
        0.88). A padded text going round in circles loses to a clean answer however sure its own ending ("…at The
        Whaler's Rest." said twice over at 0.88 against "…that include the finest wines." at 0.43). Ungated, the call
        for more read worse as often as better (docs/results.md)."""
        first, then = self.clean(padded), self.clean(raw)
        score, was_score = self.score(then), self.score(first)
        if score is None or score < NATURAL:
            return False
        lang, own = self.request.lang, self.request.instruction
        was, now = warnings(first, lang, own), warnings(then, lang, own)
        new_junk = {w.kind for w in now if w.kind in JUNK_KINDS} - {w.kind for w in was}
        if new_junk or len(now) > len(was):
            return False
        return len(now) < len(was) or score >= (was_score or 0.0) / 2

    def more_stands_alone(self, raw: str) -> bool:
        """Whether the answer for more (`raw`, its ending planned) stands whatever the padded text reads like: an
        ending score of at least 0.5 (no padded text's half can pass it) and no quality warning at all. Then the
        padded text needs no ending search of its own: `more_reads_better` would keep `raw` anyway."""
        text = self.clean(raw)
        score = self.score(text)
        return score is not None and score >= 0.5 and not warnings(text, self.request.lang, self.request.instruction)

    # ----- at most, a range: end at the sentence end the model would end on -------------------------------------
    def end_naturally(self, raw: str, messages: list[Message], options: Options) -> Planned | None:
        """A text under a limit or in a range ends at the last sentence end the model would end on (inside the
        target), not wherever the limit cut it. The candidates: the text cut after each of its sentence ends, and,
        where the limit leaves room and the text's own ending reads cut off, the whole text with a rival closing
        sentence (`CLOSINGS`, written at once from the text as a prefill, from the call's `messages` and `options`);
        each is scored at once and `natural_cut` picks, shortest first. None when the text does not end on a
        sentence end (nothing to choose)."""
        req = self.request
        raw = raw.strip()
        spec, unit = req.target_spec, req.count_unit
        if raw[-1:] not in ".!?。！？" or not spec.within(count(raw, unit)):
            return None  # no stop at its end, or off target: nothing to choose from
        # The whole text is a candidate even where its last stop ends no sentence ("…: A New E.", "Dear Dr."):
        # `WholeEndings.worth_keeping` cuts it back to a clause that closes whole.
        own = self.score(raw)
        if own is None and self._endings.ends_whole(raw):
            return None  # its ending could not be scored (a busy server timed out): keep all the model wrote
        cuts = [i for i in sentence_ends(raw) if i < len(raw) and spec.within(count(raw[:i], unit))]
        self.closing = True
        try:
            texts = [raw[:i] for i in cuts] + [raw]
            extra = None
            if (own or 0.0) < NATURAL or not self._endings.ends_whole(raw):  # a cut word gets a closing too
                roomy = (
                    t for t in reversed(texts) if self._endings.ends_whole(t) and self._room(t) >= self._least_room
                )
                start = next(roomy, None)
                # and its clauses closed whole: "Your Local Injury Scene: A 72." may end "Your Local Injury Scene."
                clauses = [c for c in self._endings.clauses(raw, drop_words=False) if c not in texts]
                if start is None and not self._endings.whole(texts + clauses):
                    start = ""  # nothing the model wrote ends whole ("Packin'ABikeRepaireter: The B."): write anew
                closed, extra = self._closings(start, messages, options) if start is not None else ([], None)
                if start == "" and not self._endings.whole(closed):  # none of those either: once more, other seeds
                    again, more = self._closings(start, messages, _reseeded(options, WRITE_ANEW_SEEDS))
                    closed, extra = closed + again, total([extra, more])
                texts += closed + clauses
            texts = self._endings.worth_keeping(texts, raw)
            texts.sort(key=len)
            with ThreadPoolExecutor(SEARCH_WIDTH, thread_name_prefix="ending") as pool:
                scores = list(pool.map(self.score, texts))
        finally:
            self.closing = False
        best = natural_cut(scores)
        plan = {
            "written": raw,  # the model's whole text, whatever is kept: nothing it wrote is lost
            "sentence_ends": [
                {"text": t, "end_probability": p, "chosen": i == best, "added": not raw.startswith(t)}
                for i, (t, p) in enumerate(zip(texts, scores, strict=True))
            ],
        }
        chosen = texts[best]
        if chosen == raw:
            return Planned(None, plan, extra_tokens=extra)
        cut_tail = _left_out(raw, chosen)
        if cut_tail:
            plan["left_out"] = cut_tail
        return Planned(chosen, plan, cut_tail, extra)

    def _room(self, text: str) -> int:
        """Units the limit leaves after `text`."""
        return self.request.target_spec.high - count(text, self.request.count_unit)

    @property
    def _least_room(self) -> int:
        return CLOSING_ROOM[grammar_kind(self.request.lang, self.request.count_unit) or "words"]

    def _closings(self, raw: str, messages: list[Message], options: Options) -> tuple[list[str], int | None]:
        """`raw` with each rival closing sentence that finished inside the target, and the tokens they cost: from
        the text's own end, or where it filled the limit, from its last sentence end that leaves room
        (`CLOSING_ROOM`); a closing is short (`CLOSING_MOST`): a long one rambles on. From an empty `raw`, texts
        written anew (where nothing the model wrote ends on a whole word)."""
        req = self.request
        if self.backend.capabilities.prefill is None:
            return [], None
        kind = grammar_kind(req.lang, req.count_unit) or "words"
        if raw:
            room = min(self._room(raw), CLOSING_MOST[kind])
            grammar = self.plan.rival_grammar(closing_rules(req.lang, req.count_unit, room))
        else:  # a whole text again, under the run's own grammar: not a closing (" recommended by Dr. Patel.")
            room, grammar = req.target_spec.high, self.plan.grammar
        seed = options.seed
        each = [
            dataclasses.replace(options, grammar=grammar, prefill=raw, seed=None if seed is None else seed + 100 * i)
            for i in range(1, CLOSINGS + 1)
        ]
        with ThreadPoolExecutor(CLOSINGS, thread_name_prefix="ending") as pool:
            rivals = list(pool.map(lambda o: self._rival(messages, o, raw), each))
        extra = total(r.usage.completion_tokens if r.usage else r.chunks for r in rivals)
        texts = [
            (raw + r.text).strip()
            for r in rivals
            if r.finished and count(r.text, req.count_unit) < room  # the model ended it: not cut at the cap
        ]
        inside = [t for t in dict.fromkeys(texts) if req.target_spec.within(count(t, req.count_unit))]
        flaws = {t: self.flaws(t) for t in inside}
        least = self.flaws(raw) if raw else min(flaws.values(), default=0)  # texts written anew: the fewest flaws
        return [t for t in inside if flaws[t] <= least], extra

    def _rival(self, messages: list[Message], options: Options, before: str) -> Rival:
        """One rival closing, written to its end (or its failure), then its ending score after `before` asked at
        once: the server's slot that wrote it still holds the text, while the others still write."""
        rival = Rival()
        try:
            for item in self.backend.stream(messages, options):
                if isinstance(item, Usage):
                    rival.usage = item
                else:
                    rival.parts.append(item)
        except BackendError as exc:
            rival.failure = exc
        if rival.finished and not (options.cancel and options.cancel.is_set()):
            self.score(self.clean(before + rival.text))
        return rival

    def flaws(self, text: str) -> int:
        """Quality warnings of `text` (a non-word, a glued word, a loop, a dangling last word: quality.warnings)."""
        return len(warnings(text, self.request.lang, self.request.instruction))


def _begins_longer(text: str, instruction: str) -> bool:
    """Whether `text`'s last word is the start of a longer word or number of `instruction` ("3" of "3:30")."""
    words = WORD.findall(text)
    if not words:
        return False
    last = words[-1].strip(".!?,;:\"'").lower()
    given = {w.strip(".!?,;:\"'()").lower() for w in WORD.findall(instruction)}
    return bool(last) and any(w != last and w.startswith(last) for w in given)


def _left_out(raw: str, chosen: str) -> str | None:
    """What `raw` holds that `chosen` does not: the words after the cut (None where `chosen` keeps all of `raw`, or
    adds to it)."""
    if len(chosen) >= len(raw):
        return None
    head = chosen.rstrip(".!?")
    return raw[len(head) :].lstrip(".!?,;: ").strip() or None if raw.startswith(head) else None


def _reseeded(options: Options, by: int) -> Options:
    """`options` with its seed moved `by` (none stays none: the server samples anew each time anyway)."""
    return options if options.seed is None else dataclasses.replace(options, seed=options.seed + by)

"""The ending of a text: does its last sentence end where the model would have let a phrase end? Scored on every run
that can be, said in plain words, and planned on exact texts.

A guaranteed count is met by closing the text at word N whatever the model was saying ("…is scheduled forbes.").
The model itself knows whether a phrase can end after the last word: after "…made with fresh ingredients" it would
put a comma or a stop next, after "…made with San Maroon" it would go on with the word. The **ending score** is
that: the model's probability of writing the rest of the last word as it stands (a word bent to fit, "and" then
"rews", scores near 0) times its probability that punctuation comes next (`PHRASE_ENDS`), asked of the server in
one request where it can say (`Backend.ending_score`: llama.cpp, the embedded model, GGUF files, llama.cpp servers).
A text "ends naturally" from `NATURAL` up, else its last sentence is "cut off".

Why not the model's probability of ending its whole answer there, P(end)? Measured against 123 endings read and
labelled by hand (`benchmarks/ending_labels.py`), P(end) >= 0.5 agreed with the reader on 53 % of them: a 135M model
happily stops after a forced full stop ("…a classic Italian dish named.") and wants to go on after a complete
sentence when it had more to say ("…don't be too hard on yourself.", 0.06). P(end) discounted by the probability of
the stop itself agreed on 72 % (measured once, while it was the score); the ending score on 92 %.

The score also plans the ending (`search_ending`): where an exact text's own ending is cut off, its last
`SEARCH_UNITS` units are searched again, a few paths at a time, token by token from the model's own most likely next
tokens, for N units after which the model would end a phrase (the most likely such words, `Generation`). The words
come from the same word list as the grammar's, the last one never a dangling "the". A text under a limit or in a
range ends at the last sentence end the model would end on (`natural_cut`), not wherever the limit cut it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from .lexicon import DANGLING, ZH_DANGLING
from .prompts import Message
from .vocab import Lang

NATURAL = 0.01
"""Ending score from which a text ends naturally: the model gives at least this chance to a phrase ending there.
Chosen on the `dev` endings only (benchmarks/ending_labels.py, 26 November 2026) as the threshold that keeps the
larger of the two kinds of error smallest there (4 of 56 natural called cut off, 5 of 67 cut called natural; 0.1:
7 and 3, 0.005: 1 and 6); the held-out splits were only measured."""
PHRASE_ENDS = ".,;:!?。，；：！？、"
"""Punctuation that ends a phrase: the model putting one of these next means a phrase can end after the word."""
SEARCH_UNITS = (3, 6, 10)
"""How many last units an exact text's ending search may write again: its last 3, then 6, then 10 where fewer find
no natural ending (a clause that needs more words to close: "…This can have both positive." found nothing in 3 or 6,
and "…and respond by releasing stress hormones such as adrenaline." in 10); a text of 2 or 3 units, all but its
first ("Tokyo is nothin." -> "Tokyo to Mexico.")."""
SEARCH_WIDTH = 4
"""Paths kept at each step of the search (and `LAST_WORDS` times as many with all their units)."""
LAST_WORDS = 2
"""How many times `SEARCH_WIDTH` candidate last words the search tries: each costs one question."""
Alternatives = Sequence[tuple[str, float]]
"""A server's most likely next tokens with their log-probabilities (`Backend.next_tokens`)."""
Ask = Callable[[Sequence[str]], Sequence[Alternatives | None]]
"""The next-token alternatives after each of some texts (the answer so far), asked at once."""
_SENTENCE_END = re.compile(r"[.!?。！？][\"')\]”’）」]*(?=\s|$)|[。！？]")


Score = Callable[[Sequence[Message], str], float | None]
"""The ending score of a text as the answer to some messages, as a model gives it (`Backend.ending_score`)."""


def score_ending(score: Score, messages: Sequence[Message], text: str) -> float | None:
    """The ending score of `text`: the model's (`score`, None where it cannot say or the text is empty), read
    together with the last words (`adjusted`). `messages`: the instruction with its length
    (`plan.RunPlan.ending_messages`)."""
    if not text.strip():
        return None
    return adjusted(score(messages, text.strip()), text.strip())


# ----- what the last words say -------------------------------------------------------------------------------------

_AUXILIARIES = frozenset(
    str.split("is are was were be been being am has have had do does did can could will would shall should may might")
)
_SUBJECTS = frozenset(str.split("i you we they he she it there who that which this as than if what things"))
"""Words after which an auxiliary may end a sentence: "…as it is.", "…if you can.", "…than it ever was"."""
_DETERMINERS = frozenset(
    str.split("a an the this that these those its their our your my his her every each some any no")
)
_OPENS_A_NOUN = _DETERMINERS | frozenset(
    str.split("of with for from in on at by into to about like such as")
)  # "a blend of sweet.", "features a durable."
_LINKING = frozenset(
    str.split(
        "is are was were be been being am stays stay feels feel looks look seems seem remains remain becomes become "
        "keeps keep tastes taste smells smell sounds sound gets get so too very really truly always never"
    )
)  # "The bread is fresh.", "…and it stays warm."
_ADJECTIVE_ENDS = ("ous", "ful", "ive", "able", "ible", "ical", "less", "ish", "est")
_ADJECTIVES = frozenset(
    str.split("""
    fresh sweet warm cool cold hot dark bright soft rich bold light deep pure clean clear smooth crisp new old big
    small great good perfect unique special local natural classic premium real true full quiet calm cozy simple
    durable rustic modern elegant luxurious healthy tasty creamy crunchy golden aromatic vibrant gentle strong
    lightweight comfortable reliable beautiful delicious traditional authentic artisan organic handmade stylish
    practical sustainable eco-friendly versatile spacious friendly welcoming relaxing calming soothing refreshing
    inviting charming peaceful tranquil stunning amazing exceptional high-quality
    """)
)
"""Common describing words that a writer's text seldom ends on after "a", "of" or "with" ("…a blend of sweet.")."""
_LAST_WORDS = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_LIST_CUT_SHORT = re.compile(r",\s*\S+$")
"""A path ending on a list's next item ("…made with flour, yeast"): a list cut short, whatever follows."""
_ENUMERATOR_END = re.compile(r"(?:^|[.!?:]\s+)\d{1,3}[.)]\s*$")
CUT_CAP = NATURAL / 2
"""Where the last words say the sentence is not over, the ending score is at most this (below `NATURAL`, keeping the
order among cut endings)."""


_VERBS_LIKE_ADJECTIVES = frozenset(
    str.split("thrive arrive survive strive derive revive receive deceive perceive conceive achieve believe relieve")
)
"""Verbs with a describing word's ending ("…to grow and thrive." is over)."""


def adjective_like(word: str) -> bool:
    """A describing word by its form or by the short list: "durable", "luxurious", "sweet", "fresh"."""
    low = word.lower()
    if low in _VERBS_LIKE_ADJECTIVES:
        return False
    return low in _ADJECTIVES or (len(low) > 5 and low.endswith(_ADJECTIVE_ENDS))


_TIME_END = re.compile(r"(\S+)\s+[ap]\.m\.[\"')\]”’]*\s*$", re.IGNORECASE)
"""A text ending on "a.m." or "p.m." (group 1: the word before it, a time or not)."""
_TIME_RUN_TOGETHER = re.compile(r"\d(?:am|pm)[.!?]?[\"')\]”’]*\s*$", re.IGNORECASE)
"""A text ending on a time run together ("…before 9am."), whose "am" is no verb."""


_CLAUSE_ALONE = re.compile(
    r"(?:^|[.!?]\s+)(?:when|if|because|although|though|while|since|unless|whenever|whereas|once|until)\s+"
    r"(?:i|you|we|they|he|she|it|there|the|a|an|this|that|these|those|your|our|their|my|his|her|its)\b"
    r"[^,.!?;:]*[.!?][\"')\]”’]*\s*$",
    re.IGNORECASE,
)
"""A last sentence that is only a clause opened by "when", "if", "because"… ("…diseases. When we are under
stress."): its main sentence never comes."""


def last_words_cut(text: str) -> bool:
    """Whether the last words say the sentence is not over, whatever the model's score: it ends on a list's next
    number ("…properly. 2."), on a clause alone ("…. When we are under stress."), on a word that asks
    for another ("…Each candle is.", "…which is then."), or on describing words opened by "a", "of", "with"…
    before the stop with no noun after them ("…features a durable.", "…a blend of sweet.", "…a unique and
    luxurious.") rather than after a linking verb ("The bread is warm and fresh.")."""
    if _ENUMERATOR_END.search(text):
        return True  # "…1. Make sure to sleep properly. 2.": a numbered list cut at its next number
    if _CLAUSE_ALONE.search(text):
        return True  # "…diseases. When we are under stress.": a clause whose sentence never comes
    time = _TIME_END.search(text)
    if time and not any(ch.isdigit() for ch in time.group(1)):
        return True  # "…skilled workers to create a.m.": a time of day with no time before it
    if _TIME_RUN_TOGETHER.search(text):
        return False  # "…before 9am.": a time, not the verb "am"
    found = _LAST_WORDS.findall(text)
    if not found or not re.search(r"[A-Za-z]['’]?[.!?]?[\"')\]”’]*\s*$", text):
        return False
    last, before_last = found[-1].lower(), found[-2].lower() if len(found) > 1 else ""
    if last in DANGLING or (last in _AUXILIARIES and before_last not in _SUBJECTS and before_last != "ever"):
        return True  # "…the.", "…Each candle is."
    i = len(found) - 1
    if not adjective_like(found[i]):
        return False
    while i > 0 and (adjective_like(found[i - 1]) or found[i - 1].lower() in ("and", "or")):
        i -= 1
    while found[i].lower() in ("and", "or"):  # the describing words start after the "and": "grow and thrive"
        i += 1
    before = found[i - 1].lower() if i > 0 else ""
    infinitive = i > 1 and found[i - 2].lower() == "to" and before not in _LINKING  # "…ready to enjoy fresh."
    return (before in _OPENS_A_NOUN and before not in _LINKING) or infinitive


def adjusted(p: float | None, text: str) -> float | None:
    """The model's ending score `p` read with the text's last words: capped below `NATURAL` (`CUT_CAP`) where they
    say the sentence is not over (`last_words_cut`); None stays None (no model, no score)."""
    if p is None:
        return None
    return min(p, CUT_CAP) if last_words_cut(text) else p


_LAST = re.compile(r"(\s*)([A-Za-z0-9][A-Za-z0-9'’-]*|[\u4e00-\u9fff])([.!?。！？]?[\"')\]”’）」]*)$")


def split_ending(text: str) -> tuple[str, str, str] | None:
    """(the text before its last unit, the space and last unit, what follows it: a stop, a closing quote) of a text
    that ends in a word or a Han character (then at most a stop and closing quotes); None for any other text."""
    body = text.rstrip()
    m = _LAST.search(body)
    if not m or not body[: m.start()].strip():
        return None
    return body[: m.start()], m.group(1) + m.group(2), m.group(3)


def score_from_tokens(
    tokens: Sequence[tuple[str, float, Alternatives]], unit: str, *, first_written: bool = False
) -> float | None:
    """The ending score from the tokens a server wrote for `unit` (the last unit with its space, or what is left of
    it) and what followed, each with its log-probability and the alternatives at its place (before any grammar):
    the probability of the unit's tokens after its first (all of them where its first was already in the answer
    so far, `first_written`), times the phrase-ending share of what the model would write right after the unit.
    None when the tokens do not reach past the unit."""
    pos, rest = 0, 0.0
    for i, (token, lp, alternatives) in enumerate(tokens):
        counted = i or first_written
        if pos >= len(unit):
            return math.exp(rest) * phrase_end_share([*alternatives, (token, lp)])
        if pos + len(token) > len(unit) and counted:  # the stop written in one token with the word's end
            return math.exp(rest + lp)
        rest += lp if counted else 0.0
        pos += len(token)
    return None


def phrase_end_share(alternatives: Alternatives | None) -> float:
    """The probability mass of punctuation that ends a phrase among a server's next-token alternatives (a token
    listed twice, as the one written and among the alternatives, counted once)."""
    if not alternatives:
        return 0.0
    ends: dict[str, float] = {}
    for token, lp in alternatives:
        if token.strip()[:1] in PHRASE_ENDS and token.strip():
            ends.setdefault(token, lp)
    return min(sum(math.exp(lp) for lp in ends.values()), 1.0)


END_TOKENS = frozenset({"", "<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<|end|>", "</s>", "<end_of_turn>"})
"""How servers spell the end-of-turn token in log-probabilities: llama.cpp sends it as "" (no text)."""


def end_share(top: Alternatives | None) -> float | None:
    """P(end): the probability mass of end tokens among a server's next-token alternatives (0 when none is listed);
    None with no list. Any backend's `next_tokens` answers it; the planner asks where the model wanted to end."""
    if top is None:
        return None
    ends = [math.exp(lp) for token, lp in top if token in END_TOKENS or token.endswith("end▁of▁sentence｜>")]
    return round(min(sum(ends), 1.0), 4)


def ends_naturally(p: float | None) -> bool | None:
    """True when the model would end a phrase here, False when the last sentence reads as cut off, None when
    unknown."""
    return None if p is None else p >= NATURAL


def ending_words(p: float | None) -> str | None:
    """ "ends naturally" or "cut off", as every surface says it; None when the server gave no score."""
    natural = ends_naturally(p)
    return None if natural is None else "ends naturally" if natural else "cut off"


NOT_SCORED = "ending not scored: the server did not answer in time"
"""What a run says where its server could score its ending but did not answer (each retry timed out or was refused
as busy): the run keeps its text, with no label rather than a wrong one."""


def ending_help(p: float | None) -> str:
    """What the words mean, with the number, for a tooltip or a terminal line."""
    if p is None:
        return "No ending score: this model's server does not give the probabilities it needs."
    if p >= NATURAL:
        return f"The model would let a phrase end after the last word here (ending score {p:.3f})."
    return (
        f"The model would have gone on with the last sentence (ending score {p:.3f}: its probability that a phrase "
        "ends after the last word as written): it reads as cut off. Try another variant, or edit the ending."
    )


def cut_off_note(p: float) -> str:
    """The warning under a text whose last sentence reads as cut off: short enough for a narrow Compare column
    (`ending_help` says what the number is, in a tooltip)."""
    return f"Last sentence cut off: the model would have gone on (ending score {p:.3f}). Try a variant, or edit it."


def natural_share(scores: Sequence[float | None]) -> float | None:
    """The share of scored texts that end naturally (None when none was scored)."""
    known = [p for p in scores if p is not None]
    return sum(p >= NATURAL for p in known) / len(known) if known else None


_GOES_ON = " The end."
"""What `sentence_ends` puts after a text to ask pySBD whether its last stop ends a sentence: a capitalised word, as
a new sentence would start ("Dear Dr." then "The" is still one sentence; "at 9 a.m." then "The" is two)."""


@cache
def _segmenter() -> Any:
    """pySBD's English segmenter (rule-based, passes the "Golden Rules" set): built once, about 20 ms."""
    import pysbd

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def _boundaries(text: str) -> set[int]:
    """Where pySBD ends a sentence of `text` (the index after its last non-space character)."""
    return {span.start + len(span.sent.rstrip()) for span in _segmenter().segment(text)}


def sentence_ends(text: str) -> list[int]:
    """Where a sentence of `text` ends (the index after its stop and any closing quote or bracket), in order. A
    stop ends a sentence only where a sentence segmenter (pySBD) says so too: never after an abbreviation ("Dr.",
    "e.g."), inside a number ("3.5", "3:30") or a name; at the very end of the text only if a new sentence could
    start after it. Chinese stops (no abbreviations) are taken as written."""
    stops = sorted({m.end() for m in _SENTENCE_END.finditer(text)})
    latin = [i for i in stops if text[i - 1 : i] not in "。！？" or not text[i - 1 : i]]
    if not latin:
        return stops
    ends = _boundaries(text.rstrip() + _GOES_ON)
    return [i for i in stops if i not in latin or i in ends]


def _known(p: float | None) -> float:
    return -1.0 if p is None else p


def natural_cut(scores: Sequence[float | None]) -> int:
    """Of the sentence ends of a text, shortest first (`scores`: the ending score of the text cut after each; the
    last is the whole text), the one to end at: the last the model would end on, else the one it would most likely
    end on (the longer of equals). A limit is a ceiling, not a length to fill."""
    natural = [i for i, p in enumerate(scores) if p is not None and p >= NATURAL]
    if natural:
        return natural[-1]
    return max(range(len(scores)), key=lambda i: (_known(scores[i]), i))


# ----- the ending search -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ending:
    """A text the search found: `text` with its stop, its ending `score`, and `logprob`, the model's log-probability
    of the words the search wrote (how likely the model was to write them)."""

    text: str
    score: float
    logprob: float

    @property
    def natural(self) -> bool:
        return self.score >= NATURAL


@dataclass(frozen=True)
class _Path:
    text: str
    logprob: float
    units: int
    rest: float  # log-probability of the current word's tokens after its first (a word bent to fit)
    tokens: int = 0  # tokens the search added (0: the head, the model's own text, taken as it is)


_EN_NEW = re.compile(r" [A-Za-z0-9][A-Za-z0-9'’-]*")
_EN_MORE = re.compile(r"[a-z0-9'’-]+")
_ZH = re.compile(r"[\u4e00-\u9fff]+")


def last_unit(text: str) -> str:
    """The last word or Han character of `text`, if it ends in one (nothing after it: no stop, no comma)."""
    m = _LAST.search(text)
    return m.group(2) if m and not m.group(3) else ""


def search_ending(
    head: str,
    done: int,
    target: int,
    ask: Ask,
    lang: Lang,
    known: Callable[[str], bool],
    *,
    width: int = SEARCH_WIDTH,
    first: bool = False,
    keep: Callable[[str], bool] | None = None,
    begins: Callable[[str], bool] | None = None,
) -> list[Ending]:
    """Texts of exactly `target` units that continue `head` (which holds `done` units) with the model's own most
    likely tokens, each ending where the model would end a phrase: a beam search of `width` paths, best first by
    the model's probability of the words and of a phrase end after them; natural ones first. `ask` gives the next
    tokens after each text; `known(unit)` whether a unit may be written (the grammar's word list); `first`: stop
    at the step that finds the first natural ending (a run's wait, not the likeliest of all) that the caller would
    `keep` (a text with no more flaws than its own: one it would not keep does not stop the search); `begins(unit)`
    whether a unit may still grow into one that may be written (a path whose last word cannot is never asked about:
    "…can have farreaching")."""
    beam = [_Path(head, 0.0, done, 0.0)]
    found: dict[str, Ending] = {}
    kept: dict[str, bool] = {}

    def best_natural() -> float:
        good = [e for e in found.values() if e.natural and (keep is None or kept.setdefault(e.text, keep(e.text)))]
        return max((_joint(e) for e in good), default=-math.inf)

    def step(paths: list[_Path], children: list[_Path]) -> None:
        for path, alternatives in zip(paths, ask([p.text for p in paths]), strict=True):
            if not alternatives:
                continue
            _finish(path, alternatives, target, lang, known, found)
            children += _extend(path, alternatives, target, lang, known)

    for _ in range(2 * (target - done) + 3):  # a word is one or two tokens
        children: list[_Path] = []
        # The paths with all their units first, likeliest first, one at a time: with `first`, the step stops asking
        # once one ends naturally and no path left could beat it (an ending is at most as likely as its words), and
        # the paths still short are never asked (the search ends at this step).
        alive = [p for p in beam if not _stuck(p, begins)]
        for path in [p for p in alive if p.units == target and not _dead(p, lang, known)]:
            if first and path.logprob < best_natural():
                break
            step([path], children)
        best = best_natural()
        if first and best > -math.inf:
            break  # a natural ending found: the run's wait, not the likeliest of all
        step([p for p in alive if p.units < target], children)
        beam = _keep(children, target, width)
        if not beam or max(p.logprob for p in beam) < best:  # a longer path is less likely still: none can beat it
            break
    return sorted(found.values(), key=lambda e: (not e.natural, -_joint(e)))


def _dead(path: _Path, lang: Lang, known: Callable[[str], bool]) -> bool:
    """Whether a path with all its units is not worth a question: it ends on a list cut short ("…flour, yeast"),
    which no rest of its last word can mend, or on a dangling word in small letters ("…made with the"), which the
    model seldom goes on with letters (a capital one often starts a longer word: " A" then "wa" then "its" is
    "Awaits"); a Chinese path at the target has nothing more to write after a dangling character."""
    unit = last_unit(path.text)
    if lang != "en":
        return unit in ZH_DANGLING
    dangling = len(unit) > 1 and unit.islower() and unit in DANGLING
    return dangling or _LIST_CUT_SHORT.search(path.text) is not None


def _stuck(path: _Path, begins: Callable[[str], bool] | None) -> bool:
    """Whether a path's last word, written by the search, can grow into no word that may be written (`begins`):
    "…can have farreaching", a piece glued on where the model wanted "-reaching". No question about it or any path
    after it can end the text."""
    unit = last_unit(path.text)
    return bool(path.tokens and unit and begins is not None and not begins(unit))


def _keep(paths: list[_Path], target: int, width: int) -> list[_Path]:
    """The likeliest `width` paths still short of the target, and `LAST_WORDS` × `width` that have all their units:
    the last word decides whether a phrase ends, and the likeliest last words are seldom the ones that end one."""
    ranked = sorted(paths, key=lambda p: -p.logprob)
    short = [p for p in ranked if p.units < target][:width]
    return short + [p for p in ranked if p.units == target][: LAST_WORDS * width]


def _joint(ending: Ending) -> float:
    """The log-probability of the model writing the ending's words and then ending a phrase."""
    return ending.logprob + math.log(max(ending.score, 1e-12))


def _finish(
    path: _Path, alternatives: Alternatives, target: int, lang: Lang, known: Callable[[str], bool], found: dict
) -> None:
    """Keep `path` as an ending if it has the target's units, its last one may end a sentence and is whole."""
    unit = last_unit(path.text)
    if (
        path.units != target
        or not unit
        or not known(unit)
        or unit.lower() in (DANGLING if lang == "en" else ZH_DANGLING)
    ):
        return
    if lang == "en" and _LIST_CUT_SHORT.search(path.text):
        return  # "…made with flour, yeast." reads as a list cut short
    stop = "." if lang == "en" else "。"
    text = path.text.strip() + stop
    score = adjusted(math.exp(path.rest) * phrase_end_share(alternatives), text) or 0.0  # as any text's last words
    if text not in found or found[text].score < score:
        found[text] = Ending(text, round(score, 4), path.logprob)


def _extend(
    path: _Path, alternatives: Alternatives, target: int, lang: Lang, known: Callable[[str], bool]
) -> list[_Path]:
    """The paths one token longer: a new unit while the target allows, the rest of the current word, a comma."""
    out = []
    unit = last_unit(path.text)
    whole = bool(unit) and known(unit)
    whole = whole or path.tokens == 0
    n = path.tokens + 1
    for token, lp in alternatives:
        text, logprob = path.text + token, path.logprob + lp
        if lang == "zh":
            if _ZH.fullmatch(token) and path.units + len(token) <= target and all(known(ch) for ch in token):
                out.append(_Path(text, logprob, path.units + len(token), 0.0, n))
            elif token in ("，", "、") and unit and path.units < target:
                out.append(_Path(text, logprob, path.units, 0.0, n))
        elif _EN_NEW.fullmatch(token) and path.units < target and (whole or path.text.endswith(",")):
            out.append(_Path(text, logprob, path.units + 1, 0.0, n))
        elif _EN_MORE.fullmatch(token) and path.tokens and path.text[-1:].isalnum():
            out.append(_Path(text, logprob, path.units, path.rest + lp, n))
        elif token == "," and whole and path.units < target:
            out.append(_Path(text, logprob, path.units, 0.0, n))
    return out

"""One judgement of a finished text, made once (`assess`) and kept with its run.

A finished text is judged here and nowhere else: its quality warnings (with the note of a model that does not write
the language), whether a writer would throw it away (junk) and why, the ending as every surface says it, the 0-10
score, the score in a writer's words, the warnings' lines, and for a rewrite how faithful it is. The run stores the
result (`as_json`, column `runs.assessment`); Write, Compare, History, Batch, the CLI, `--json` and every export read
it back (`from_json`) and never judge again, so an old run's score and its warnings come from the same rules.

Comparing rival texts while a run is still choosing (the ending planner) is a comparison, not an assessment: it may
call the rules itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .ending import cut_off_note, ends_naturally
from .prompts import rewrite_source
from .quality import QualityWarning, ending_said, explain, junk, notes, offline_score, warnings, words
from .rewrite import Faithfulness, faithfulness
from .vocab import Lang

RULES_VERSION = 5
"""Bumped when the rules change what they find; stored with each assessment, so a reader can tell an old one (2: the
rules of 29 November 2026, a numbered section and the text answering or introducing itself inside it; 3: the same
afternoon, a word a spelling dictionary lists is not glued, "noon", "soup"; 4: that evening, a text announcing the form
it was asked for, "I'll create a fun invitation", a phrase of eight English words written twice is a loop, section
numbers one after another or an outline's first heading open a section ("1.4.4 1.4.6 Italian pizza: …", "1.1 Stay
focused on goals: …"), and more chat replies; 5: later that evening, an introduction after a lead-in clause, "To add a
pinch of joy to your picnic, here's a sweet invitation to …:", and a form's fields to fill in, "Your Name: …, Your
Location: …", "We can create an invitation…", a last "Here's a possible version of it." and advice on the asked form
after a lead-in clause, "To help the city decorate, the invitation should include…"; `history reassess` judges old runs
again on purpose)."""


@dataclass(frozen=True)
class Assessment:
    """What a finished text is worth to a writer, decided once by `assess`; every surface prints these fields."""

    warnings: tuple[QualityWarning, ...] = ()
    junk: bool = False
    junk_kind: str | None = None  # the first reason it is junk (quality kind: loop, numbers, meta, language…)
    ending: str | None = None  # "ends naturally", "last sentence cut off", "not a text to publish", or unknown
    score: float | None = None  # the offline 0-10 score; None with no text, or in a language the model does not write
    explanation: str = ""  # the score in a writer's words ("reads smoothly, ends naturally")
    notes: tuple[str, ...] = ()  # the warnings as the pages list them, one line each, and a cut-off ending's note
    faithfulness: Faithfulness | None = field(default=None, compare=False)  # a rewrite's; None for any other text
    rules: int = RULES_VERSION

    @property
    def messages(self) -> list[str]:
        """Every warning's own sentence (the JSON's `warnings`)."""
        return [w.message for w in self.warnings]

    def as_json(self) -> dict[str, Any]:
        """As stored with the run (a rewrite's faithfulness has its own columns: `rewrite.faithfulness_fields`)."""
        return {
            "rules": self.rules,
            "warnings": [[w.kind, w.word] for w in self.warnings],
            "junk": self.junk,
            "junk_kind": self.junk_kind,
            "ending": self.ending,
            "score": self.score,
            "explanation": self.explanation,
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], faithful: Faithfulness | None = None) -> Assessment:
        """An assessment as it was stored: read back, not judged again."""
        return cls(
            warnings=tuple(QualityWarning(str(k), str(w)) for k, w in data.get("warnings") or []),
            junk=bool(data.get("junk")),
            junk_kind=data.get("junk_kind"),
            ending=data.get("ending"),
            score=data.get("score"),
            explanation=str(data.get("explanation") or ""),
            notes=tuple(str(n) for n in data.get("notes") or []),
            faithfulness=faithful,
            rules=int(data.get("rules") or 0),
        )


def assess(
    text: str,
    lang: Lang,
    instruction: str,
    *,
    fluency: float | None = None,
    end_probability: float | None = None,
    language_note: str | None = None,
    scored: bool = True,
    unscored: str | None = None,
) -> Assessment:
    """Judge a finished `text` written for `instruction`: the one place the quality rules judge a text. A model that
    does not write `lang` (`language_note`, its provider's sentence) writes no text to publish, whatever it reads
    like, and gets no score; nor does a text no model wrote (`scored` off: the writer's edit). `unscored` is why the
    ending has no score (the server did not answer in time): said as its label, never left blank."""
    source = rewrite_source(instruction)
    faithful = None if source is None else faithfulness(source, text, lang)
    if not text.strip():
        return Assessment(ending=ending_said(end_probability, []) or unscored, faithfulness=faithful)
    found = tuple(warnings(text, lang, instruction, language_note=language_note))
    thrown = junk(found)
    score = (
        None if language_note or not scored else offline_score(fluency, found, len(words(text, lang)), end_probability)
    )
    return Assessment(
        warnings=found,
        junk=thrown,
        junk_kind=_junk_kind(found),
        ending=ending_said(end_probability, found) or unscored,
        score=score,
        explanation=explain(fluency, found, end_probability),
        notes=(*notes(found), *_cut_off(end_probability)),
        faithfulness=faithful,
    )


def _cut_off(end_probability: float | None) -> tuple[str, ...]:
    """The note under a text whose last sentence the model would have gone on from (none where unknown)."""
    if end_probability is None or ends_naturally(end_probability):
        return ()
    return (cut_off_note(end_probability),)


def _junk_kind(found: tuple[QualityWarning, ...]) -> str | None:
    """The kind of the first warning that makes the text junk, or None."""
    return next((w.kind for w in found if junk([w])), None)

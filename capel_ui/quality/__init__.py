"""Quality checks of a finished text, offline and pure: non-words, glued words, loops, number lists, a text that
talks about itself or gives back the request, a dangling ending, fluency, and the score that ranks variants,
explained in a writer's words.

A guaranteed count is worthless if the words are mangled, so every run is checked. The checks are records
(`rules.RULES`, each with the texts it must flag and those it must leave alone); what each kind of warning says and
costs is `kinds.KINDS`; `score` folds them, with the model's own view of the ending (ending.py), into 0–10 so
variants can be ranked when no judge model is configured, and `junk` marks what a writer would never keep.
"""

from __future__ import annotations

from .about_itself import ABOUT_ITSELF_SHOWN
from .circles import (
    LOOP_SPAN,
    LOOP_WINDOW,
    REPEAT_RUN,
    SENTENCE_TWICE,
    doubled,
    loops,
    repeated_sentences,
    repeats,
)
from .echo import ECHO_RUN
from .kinds import CIRCLE_KINDS, JUNK_KINDS, KINDS, PENALTY, Kind, QualityWarning
from .markdown import rules_markdown
from .record import Context, Rule
from .rules import RULES
from .runner import echoes_request, talks_about_itself, warnings
from .score import (
    ALL_JUNK,
    CUT_OFF,
    NOT_TO_PUBLISH,
    ONE_JUNK,
    all_junk,
    ending_penalty,
    ending_said,
    explain,
    flow_words,
    fluency,
    junk,
    notes,
    offline_score,
)
from .shapes import (
    LIST_WATCH,
    NUMBER_LIST_MIN,
    SALAD_WORDS,
    SENTENCE_STOP,
    blanks,
    list_start,
    number_list,
    word_salad,
)
from .words import (
    content_words,
    dangling_end,
    glued,
    is_glued,
    is_word,
    nonword_rate,
    nonwords,
    on_point,
    words,
)

__all__ = [
    "ABOUT_ITSELF_SHOWN",
    "ALL_JUNK",
    "CIRCLE_KINDS",
    "CUT_OFF",
    "ECHO_RUN",
    "JUNK_KINDS",
    "KINDS",
    "LIST_WATCH",
    "LOOP_SPAN",
    "LOOP_WINDOW",
    "NOT_TO_PUBLISH",
    "NUMBER_LIST_MIN",
    "ONE_JUNK",
    "PENALTY",
    "REPEAT_RUN",
    "RULES",
    "SALAD_WORDS",
    "SENTENCE_STOP",
    "SENTENCE_TWICE",
    "Context",
    "Kind",
    "QualityWarning",
    "Rule",
    "all_junk",
    "blanks",
    "content_words",
    "dangling_end",
    "doubled",
    "echoes_request",
    "ending_penalty",
    "ending_said",
    "explain",
    "flow_words",
    "fluency",
    "glued",
    "is_glued",
    "is_word",
    "junk",
    "list_start",
    "loops",
    "nonword_rate",
    "nonwords",
    "notes",
    "number_list",
    "offline_score",
    "on_point",
    "repeated_sentences",
    "repeats",
    "rules_markdown",
    "talks_about_itself",
    "warnings",
    "word_salad",
    "words",
]

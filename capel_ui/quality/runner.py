"""Running the rules table on a text: `warnings` lists what `rules.RULES` find, in the table's order (a kind said
`once` by the first of its rules that finds it; unknown and glued words together, in reading order)."""

from __future__ import annotations

from collections.abc import Sequence

from ..vocab import Lang
from .kinds import ECHO, META, Kind, QualityWarning
from .record import Context, Rule
from .rules import RULES


def _groups(rules: Sequence[Rule]) -> list[list[Rule]]:
    """The rules in order, those next to each other that list their warnings in reading order together."""
    out: list[list[Rule]] = []
    for rule in rules:
        if out and rule.reading_order and out[-1][-1].reading_order:
            out[-1].append(rule)
        else:
            out.append([rule])
    return out


_GROUPS = _groups(RULES)


def check(c: Context) -> list[QualityWarning]:
    """Every rule's warnings for one text, in the table's order."""
    out: list[QualityWarning] = []
    for group in _GROUPS:
        found: list[QualityWarning] = []
        for rule in group:
            if rule.kind.once and any(w.kind == rule.kind.name for w in (*out, *found)):
                continue
            found += [QualityWarning(rule.kind.name, w) for w in rule.detect(c)]
        if len(group) > 1:
            found.sort(key=lambda w: c.places.get(w.word, len(c.places)))
        out += found
    return out


def warnings(
    text: str, lang: Lang = "en", own_text: str = "", *, language_note: str | None = None
) -> list[QualityWarning]:
    """Everything a writer should look at in `text` before publishing it (`RULES`): first, given the provider's
    `language_note`, that its model does not write `lang`; then a request given back, a text talking about itself,
    unknown and glued words in reading order, loops, a word said twice, word salad, a number list, a blank, a dangling
    end. The instruction (`own_text`) excuses its own words, names, lists and blanks."""
    return check(Context(text, lang, own_text, language_note))


def _first(kind: Kind, c: Context) -> str | None:
    return next((hit for rule in RULES if rule.kind is kind for hit in rule.detect(c)), None)


def talks_about_itself(text: str, own_text: str = "") -> str | None:
    """What a text says about itself instead of being the text, as the first of the `META` rules finds it, or None:
    an opening that introduces it ("Here's a possible X post:", "Sure!", "Headline:"), a chat reply, what it is ("…and
    it is an X post."), its maker, what the model will do with the request, or its own length."""
    return _first(META, Context(text, own_text=own_text))


def echoes_request(text: str, own_text: str) -> str | None:
    """The opening of the instruction a text gives back word for word, as the first of the `ECHO` rules finds it, or
    None; never for a rewrite, whose text is the writer's own."""
    return _first(ECHO, Context(text, own_text=own_text))

"""Presets a writer recognises: a platform's limit (unit, target kind, number) and an instruction to start from.

The Write page's quick presets and `generate --preset` read this one table. The limits are the platforms'
published ones as of 2026, each in the platform's own count: an X post 280 weighted characters, an SMS one segment
(160 GSM-7 characters), Google Ads headlines 30 and descriptions 90 characters by Google Ads' count (a double-width
character, as in Chinese, counts 2: `google_ads_chars`), a meta description about 155 characters before search
results cut it, a LinkedIn headline 220 characters, a Weibo-style blurb 140 字 counting every character.
"""

from __future__ import annotations

from dataclasses import dataclass

from .verdict import Target
from .vocab import Lang, TargetKind, Unit


@dataclass(frozen=True)
class Preset:
    """A named target: language, unit, kind and number (and a range's low), plus an instruction template."""

    key: str
    name: str
    lang: Lang
    unit: Unit
    kind: TargetKind
    number: int
    example: str
    low: int | None = None

    @property
    def target(self) -> Target:
        return Target.of(self.kind, self.number, self.low)


PRESETS: tuple[Preset, ...] = (
    Preset(
        "headline",
        "Headline · 10 words",
        "en",
        "en_words",
        "exactly",
        10,
        "Write a headline for an article about a seaside town that rebuilt its old lighthouse.",
    ),
    Preset(
        "tweet-length",
        "Tweet-length post · 40 words",
        "en",
        "en_words",
        "exactly",
        40,
        "Write a social media post announcing that our bakery now sells sourdough on Saturdays.",
    ),
    Preset(
        "abstract",
        "Abstract · 50 words",
        "en",
        "en_words",
        "exactly",
        50,
        "Write an abstract for a study showing that countdown prompts help language models hit exact lengths.",
    ),
    Preset(
        "zh-blurb", "Chinese blurb · 100 字", "zh", "zh_chars", "exactly", 100, "为一家开在海边的小书店写一段宣传文字。"
    ),
    Preset(
        "x-post",
        "X post · ≤ 280",
        "en",
        "x_weighted",
        "at_most",
        280,
        "Write an X post announcing that our bakery now sells sourdough on Saturdays.",
    ),
    Preset(
        "sms",
        "SMS · 1 segment",
        "en",
        "sms",
        "at_most",
        160,
        "Write a text message reminding a customer that their table for two is booked for 7 pm on Friday.",
    ),
    Preset(
        "ads-headline",
        "Google Ads headline · ≤ 30",
        "en",
        "google_ads_chars",
        "at_most",
        30,
        "Write a Google Ads headline for a seaside bookshop.",
    ),
    Preset(
        "ads-description",
        "Google Ads description · ≤ 90",
        "en",
        "google_ads_chars",
        "at_most",
        90,
        "Write a Google Ads description for a seaside bookshop that ships worldwide.",
    ),
    Preset(
        "meta-description",
        "Meta description · ≤ 155",
        "en",
        "chars",
        "at_most",
        155,
        "Write the meta description of a web page about visiting a restored lighthouse.",
    ),
    Preset(
        "linkedin-headline",
        "LinkedIn headline · ≤ 220",
        "en",
        "chars",
        "at_most",
        220,
        "Write a LinkedIn headline for a data engineer who builds streaming pipelines for hospitals.",
    ),
    Preset("weibo", "Weibo blurb · ≤ 140 字", "zh", "zh_all", "at_most", 140, "为一家开在海边的小书店写一条微博。"),
)
PRESET_BY_KEY: dict[str, Preset] = {p.key: p for p in PRESETS}
PRESET_BY_NAME: dict[str, Preset] = {p.name: p for p in PRESETS}
EXAMPLES: frozenset[str] = frozenset(p.example for p in PRESETS)
"""Every preset's instruction template: a template left untouched may be replaced by another preset's."""


def preset(key: str) -> Preset:
    """The preset called `key`; ValueError naming the accepted keys."""
    try:
        return PRESET_BY_KEY[key]
    except KeyError:
        raise ValueError(f"unknown preset {key!r}; use one of {', '.join(PRESET_BY_KEY)}") from None

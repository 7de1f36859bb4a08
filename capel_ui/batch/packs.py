"""Platform packs: one row of facts becomes the set of texts a platform asks for, each in its own unit and limit.

The limits are the platforms' published ones as of 2026, the same as `presets.py` (which the packs read, so one
table holds each limit and its unit), each counted as the platform counts it: Google Ads responsive search ads take
up to 15 headlines of 30 characters and 4 descriptions of 90 by Google Ads' count (a double-width character counts
2, so a Chinese headline holds 15 characters), which the ad mixes, so they must differ; the App Store a
30-character subtitle and a 170-character promotional text; a search result shows about 155 characters of a meta
description; an X post is 280 weighted characters. The verdict says the platform's number ("✓ 28/30 characters by
Google Ads' count"). Not written here: the RSA's two display paths (15 each; the character grammars close a
sentence, not a URL path) and Apple's keyword field (100 bytes, which would need a byte unit).

Each slot gets its own angle in its instruction: a 135M model asked 15 times for "a headline" writes the same one
15 times; asked for one on price, one on quality, one as a question, it writes 15 different ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..presets import PRESET_BY_KEY
from ..verdict import Target
from ..vocab import Unit

HEADLINE_ANGLES = (
    "name the product and its main benefit",
    "stress the price or the value for money",
    "stress the quality",
    "end with a call to action",
    "ask the reader a short question",
    "say who it is for",
    "say what makes it different",
    "stress speed or convenience",
    "promise something the buyer can trust",
    "name one feature",
    "say how the buyer will feel",
    "give a reason to buy today",
    "mention delivery or where to get it",
    "mention an offer",
    "use one strong adjective and the product's name",
)
DESCRIPTION_ANGLES = (
    "give the main benefit, then a call to action",
    "describe two features",
    "say why a buyer can trust it",
    "describe the offer and who it suits",
)
THREAD_ANGLES = ("open with a hook", "give the key facts", "give one detail or example", "end with a call to action")
DEFAULT_POSTS = 3
MAX_POSTS = 10


@dataclass(frozen=True)
class Slot:
    """One text of a pack: its name (`headline 7`), unit, limit and instruction template (`{facts}`)."""

    name: str
    unit: Unit
    target: Target
    template: str
    distinct: str | None = None  # texts of one distinct group (the ad's headlines) must all differ

    def instruction(self, facts: str) -> str:
        return self.template.format(facts=facts.strip())


@dataclass(frozen=True)
class Pack:
    key: str
    title: str
    summary: str

    def slots(self, posts: int = DEFAULT_POSTS) -> list[Slot]:
        return _SLOTS[self.key](posts)


def _limit(preset_key: str) -> tuple[Unit, Target]:
    p = PRESET_BY_KEY[preset_key]
    return p.unit, p.target


def _rsa(_: int) -> list[Slot]:
    hu, ht = _limit("ads-headline")
    du, dt = _limit("ads-description")
    heads = [
        Slot(f"headline {i}", hu, ht, f"Write a Google Ads headline for {{facts}}. Angle: {angle}.", "ad")
        for i, angle in enumerate(HEADLINE_ANGLES, 1)
    ]
    descs = [
        Slot(f"description {i}", du, dt, f"Write a Google Ads description for {{facts}}. {angle.capitalize()}.", "ad")
        for i, angle in enumerate(DESCRIPTION_ANGLES, 1)
    ]
    return heads + descs


def _app_store(_: int) -> list[Slot]:
    return [
        Slot("subtitle", "chars", Target.at_most(30), "Write the App Store subtitle of this app: {facts}."),
        Slot(
            "promo",
            "chars",
            Target.at_most(170),
            "Write the App Store promotional text of this app, about what is new or special: {facts}.",
        ),
    ]


def _meta(_: int) -> list[Slot]:
    unit, target = _limit("meta-description")
    return [Slot("meta description", unit, target, "Write the meta description of a web page about {facts}.")]


def _thread(posts: int) -> list[Slot]:
    unit, target = _limit("x-post")
    slots = []
    for i in range(1, posts + 1):
        angle = THREAD_ANGLES[0] if i == 1 else THREAD_ANGLES[-1] if i == posts else THREAD_ANGLES[1 + (i % 2)]
        template = f"Write post {i} of an X thread of {posts} posts about {{facts}}. This post should {angle}."
        slots.append(Slot(f"post {i}", unit, target, template, "post"))
    return slots


_SLOTS = {"google-ads-rsa": _rsa, "app-store": _app_store, "meta-description": _meta, "x-thread": _thread}
PACKS: dict[str, Pack] = {
    p.key: p
    for p in (
        Pack(
            "google-ads-rsa",
            "Google Ads responsive search ad",
            "15 headlines ≤ 30 and 4 descriptions ≤ 90 by Google Ads' count (CJK counts 2), all different",
        ),
        Pack("app-store", "App Store", "a subtitle ≤ 30 characters and a promotional text ≤ 170"),
        Pack("meta-description", "Meta description", "one meta description ≤ 155 characters"),
        Pack("x-thread", "X thread", f"posts ≤ 280 weighted characters ({DEFAULT_POSTS} by default), all different"),
    )
}


def pack(key: str) -> Pack:
    try:
        return PACKS[key]
    except KeyError:
        raise ValueError(f"unknown pack {key!r}; use one of {', '.join(PACKS)}") from None

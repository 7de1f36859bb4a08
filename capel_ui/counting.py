"""Length counters: one function per counting unit, so every part of the app counts the same way.

Each counter is pure and total (any string in, a non-negative int out). The parser, the grammar
generator, the metrics and the UI all call `count(text, unit)`; nothing else counts length.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from unicodedata import east_asian_width

import gsm0338  # noqa: F401  (registers the "gsm03.38" codec)
import regex

from .vocab import DEFAULT_UNIT, UNIT_SPECS, Lang, Unit

# Every CJK Unified Ideographs block (base, Ext A-I), the compatibility ideographs, and the two
# Han-script signs a writer counts as characters: 々 (iteration mark) and 〇 (ideographic zero).
HAN_RANGES = (
    "\u3005\u3007"
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\uf900-\ufaff"
    "\U00020000-\U0002a6df"
    "\U0002a700-\U0002ebef"
    "\U0002ebf0-\U0002ee5f"
    "\U0002f800-\U0002fa1f"
    "\U00030000-\U000323af"
)
HAN = re.compile(f"[{HAN_RANGES}]")

# A letter or digit in any script ([^\W_] is \w without the underscore).
_ALNUM = re.compile(r"[^\W_]")
_EN_WORD = re.compile(r"(?<!\S)(?=\S*?[^\W_])\S+")  # a whitespace-separated run holding a letter or digit
# In Chinese text a run of non-Han letters/digits is one unit; inner . , ' ’ - keep it whole (3.14, don't).
_NON_HAN_ALNUM = f"[^\\W_{HAN_RANGES}]"
_ZH_UNIT = re.compile(f"[{HAN_RANGES}]|{_NON_HAN_ALNUM}+(?:[.,'’\\-]{_NON_HAN_ALNUM}+)*")
_LIFEBENCH_HAN = re.compile(r"[\u4e00-\u9fff]")
_LIFEBENCH_WORD = re.compile(r"\b[a-zA-Z0-9'-]+\b")
_WHITESPACE = re.compile(r"\s+")
_LAST_SPACE = re.compile(r"\s(?=\S*\Z)")

PIECE = 1000
"""The counters that slow down on a long text (the GSM-7 codec is quadratic in its length, jieba in a long run of
Han characters, twitter-text takes 20 µs a character) count it in pieces of at most this many characters, cut
after a whitespace: a text of a few megabytes, or one huge "word", costs linear time."""


def pieces(text: str, size: int = PIECE) -> Iterator[str]:
    """`text` in consecutive pieces of at most `size` characters, each cut after its last whitespace when it has
    one (a run of `size` characters without whitespace is cut where it reaches `size`). Short texts are one piece."""
    start, n = 0, len(text)
    while start < n:
        end = min(start + size, n)
        if end < n:
            space = _LAST_SPACE.search(text, start, end)
            end = space.end() if space else end
        yield text[start:end]
        start = end


def count_en_words(text: str) -> int:
    """Words as a word processor counts them: whitespace-separated runs holding a letter or digit (one regex
    match per such run: about 3 times faster than testing each run, which `check` does 10,000 times)."""
    return len(_EN_WORD.findall(text))


def count_zh_chars(text: str) -> int:
    """Han characters count 1 each, a run of other letters/digits counts 1, punctuation counts 0."""
    return sum(1 for _ in _ZH_UNIT.finditer(text))


@cache
def _jieba():
    """Load jieba once, lazily: its dictionary takes about a second to read."""
    import jieba

    from .lexicon import quiet_jieba

    quiet_jieba()
    jieba.initialize()
    return jieba


def count_zh_words(text: str) -> int:
    """Chinese words by jieba segmentation; tokens without a letter, digit or Han character are dropped. jieba cuts
    at whitespace itself; a run of more than `PIECE` characters without one is cut there too."""
    cut = _jieba().lcut
    return sum(1 for piece in pieces(text) for tok in cut(piece) if _ALNUM.search(tok))


def count_lifebench(text: str) -> int:
    """LIFEBench's official counter (exp/cache.py `count_words`), kept exactly for benchmark parity."""
    text = _WHITESPACE.sub(" ", text).strip()
    return len(_LIFEBENCH_HAN.findall(text)) + len(_LIFEBENCH_WORD.findall(text))


_GRAPHEME = regex.compile(r"\X")


def count_chars(text: str) -> int:
    """Characters as a person sees them: grapheme clusters (an emoji with a skin tone, a flag, e + a combining
    accent are 1 each), spaces and punctuation included. A CRLF is one cluster, as Unicode says."""
    return sum(1 for _ in _GRAPHEME.finditer(text))


def count_zh_all(text: str) -> int:
    """Every character of a Chinese text, punctuation included (how Chinese forms and platforms count 字);
    whitespace is layout, not a character, and counts 0."""
    return sum(1 for m in _GRAPHEME.finditer(text) if not m.group().isspace())


def count_google_ads_chars(text: str) -> int:
    """Characters as Google Ads counts them against its text limits: a double-width character counts 2, any other 1
    ("30 half-width (15 full-width) characters" for a headline, Google Ads Help). Double-width is Unicode's East Asian
    Width W or F (Chinese, Japanese kana, Korean hangul, full-width forms and punctuation, most emoji), read per
    grapheme cluster as `count_chars` reads characters; half-width katakana and the "ambiguous" … “ ” — count 1."""
    return sum(2 if any(east_asian_width(ch) in "WF" for ch in m.group()) else 1 for m in _GRAPHEME.finditer(text))


# One emoji sequence, whatever its Unicode version (UTS #51's "possible emoji", from regex's own Unicode data): a
# flag, a keycap (1⃣, #️⃣), or pictographs with an optional presentation selector, skin tone or tag run, joined by
# ZWJ. twitter-text's v3 rules weigh every such sequence 2; its emoji list stops at Emoji 12.0, so without this a
# newer one (🧑‍🎨, 🐦‍⬛, 💑🏿) would be weighed code point by code point (4 to 11).
_EMOJI_ELEMENT = (
    r"(?:\p{Regional_Indicator}{2}"
    r"|[0-9#*]\uFE0F?\u20E3"
    r"|\p{Extended_Pictographic}[\uFE0F\p{Emoji_Modifier}]?\p{Emoji_Modifier}?(?:[\U000E0020-\U000E007E]+\U000E007F)?"
    r"|\p{Emoji_Modifier})"
)
_EMOJI_SEQUENCE = regex.compile(f"{_EMOJI_ELEMENT}(?:\u200d{_EMOJI_ELEMENT})*")
_ONE_EMOJI = "\U0001f600"  # an emoji every twitter-text version knows, weighed 2: stands in for a whole sequence

X_REFUSED = {"\ufffe": "U+FFFE", "\ufeff": "U+FEFF (byte order mark)", "\uffff": "U+FFFF"}
"""The characters twitter-text's validation refuses (`invalid_chars`): a text holding one is not a valid X post
whatever its length. Directional marks are valid (its conformance suite's UnicodeDirectionalMarkerCounterTest)."""


def count_x_weighted(text: str) -> int:
    """X's weighted length by X's own rules (twitter-text v3): a URL is 23, CJK characters and any emoji sequence
    are 2, Latin is 1. The parser is imported where it is used, not at the top: it takes a quarter of a second to
    load, and most commands never count in this unit."""
    return sum(_x_weighted_piece(piece) for piece in pieces(text))  # a URL or an emoji holds no whitespace


def _x_weighted_piece(piece: str) -> int:
    if piece.isascii() and "." not in piece and "\r" not in piece:
        return len(piece)  # no URL without a dot, no CRLF: every ASCII character weighs 1, as twitter-text says
    from twitter_text import parse_tweet

    return parse_tweet(_EMOJI_SEQUENCE.sub(_ONE_EMOJI, piece)).weightedLength


def x_refusal(text: str) -> str | None:
    """Why X would refuse `text` as a post whatever its length (a character twitter-text refuses), or None."""
    found = [name for ch, name in X_REFUSED.items() if ch in text]
    if not found:
        return None
    return f"not a valid X post: it holds {' and '.join(found)}, which X refuses"


GSM7_SEGMENT, GSM7_PART = 160, 153
UCS2_SEGMENT, UCS2_PART = 70, 67


@dataclass(frozen=True)
class SmsLength:
    """How a carrier bills a text: its encoding, its length in that encoding's characters, its segments."""

    encoding: str  # "GSM-7" or "UCS-2"
    length: int  # septets (an extension-table character such as € or [ is 2) or UTF-16 code units
    segments: int

    @property
    def per_segment(self) -> int:
        """Characters in one segment of this encoding (fewer per part once the text is split)."""
        return GSM7_SEGMENT if self.encoding == "GSM-7" else UCS2_SEGMENT

    def describe(self) -> str:
        s = "" if self.segments == 1 else "s"
        return f"{self.length} {self.encoding} characters · {self.segments} segment{s} ({self.per_segment} per segment)"


def sms_length(text: str) -> SmsLength:
    """GSM-7 (with its extension table) when every character has a GSM-7 code, else UCS-2, as phones send it. The
    segments are packed as a sending gateway packs them (Twilio's segment calculator is the reference): a character
    is never split between two parts, so an extension-table pair (€ [ ] { } ^ ~ | \\) or an emoji that would
    straddle a boundary starts the next part, and 152 × "a" + "€" + 152 × "b" is 3 segments, not 2."""
    try:  # the codec maps one character at a time, so the pieces' septets add up
        septets = sum(len(piece.encode("gsm03.38")) for piece in pieces(text))
    except UnicodeEncodeError:
        n, single, part, encoding = len(text.encode("utf-16-le")) // 2, UCS2_SEGMENT, UCS2_PART, "UCS-2"
    else:
        n, single, part, encoding = septets, GSM7_SEGMENT, GSM7_PART, "GSM-7"
    segments = 0 if n == 0 else 1 if n <= single else _parts(text, encoding, part, n)
    return SmsLength(encoding, n, segments)


def _parts(text: str, encoding: str, part: int, length: int) -> int:
    """Parts of at most `part` units each, filled in order, a character (a grapheme cluster: an emoji with its
    skin tone or ZWJ sequence, a letter with its accents) never cut between two of them."""
    if encoding == "GSM-7" and length == len(text) and "\r\n" not in text:
        return math.ceil(length / part)  # one septet per character, one character per cluster: nothing to keep whole
    parts, used = 1, 0
    for g in _GRAPHEME.finditer(text):
        size = _sms_units(g.group(), encoding)
        if used + size > part and used:
            parts, used = parts + 1, 0
        used += size
        while used > part:  # a cluster longer than a whole part (a run of combining marks) has to be cut after all
            parts, used = parts + 1, used - part
    return parts


_GSM7_EXTENSION = frozenset("\f^{}\\[~]|€")
"""The GSM 03.38 extension table: each of these takes an escape septet and its own, 2 in all."""


def _sms_units(cluster: str, encoding: str) -> int:
    """A grapheme cluster's length in septets (GSM-7: an extension-table character is 2) or UTF-16 code units
    (a character beyond the Basic Multilingual Plane, such as most emoji, is 2)."""
    if encoding == "GSM-7":
        return len(cluster) + sum(ch in _GSM7_EXTENSION for ch in cluster)
    return len(cluster) + sum(ord(ch) > 0xFFFF for ch in cluster)


def count_sms(text: str) -> int:
    """The SMS length of `text` in its encoding's characters (see `sms_length` for the segments)."""
    return sms_length(text).length


def counter_of(unit: Unit) -> Callable[[str], int]:
    """The counter of `unit`: the function of this module its record names (`vocab.UnitSpec.counter`); ValueError
    naming the accepted units for an unknown one."""
    spec = UNIT_SPECS.get(unit)
    if spec is None:
        raise ValueError(f"unknown unit {unit!r}; use one of {', '.join(UNIT_SPECS)}")
    return globals()[spec.counter]


def count(text: str, unit: Unit) -> int:
    """Count `text` in `unit`; raises ValueError naming the accepted units for an unknown one."""
    return counter_of(unit)(text)


class RunningCount:
    """The count of a text that grows at its end (a stream's), each call costing the text added since the last, not
    the whole: what lies before a whitespace well behind the end is counted once and kept. Only for a unit whose
    counts add up across such a cut (`UnitSpec.adds_up`); any other unit is counted whole each time. A text that is
    not the last one grown (a new call's) is counted from its start."""

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self._adds_up = UNIT_SPECS[unit].adds_up
        self._kept, self._kept_count = "", 0

    def __call__(self, text: str) -> int:
        if not self._adds_up:
            return count(text, self.unit)
        if not text.startswith(self._kept):
            self._kept, self._kept_count = "", 0
        start = len(self._kept)
        if len(text) - start > 2 * PIECE and (space := _LAST_SPACE.search(text, start, len(text) - PIECE)):
            self._kept_count += count(text[start : space.end()], self.unit)
            self._kept, start = text[: space.end()], space.end()
        return self._kept_count + count(text[start:], self.unit)


def count_detail(text: str, unit: Unit) -> str | None:
    """What a bare number does not say, for units that have more to tell (SMS: encoding and segments; X: why it
    would refuse the text)."""
    if unit == "sms":
        return sms_length(text).describe()
    return refusal(text, unit)


def refusal(text: str, unit: Unit) -> str | None:
    """Why the platform a unit counts for would refuse `text` whatever its length (X: a character it refuses), or
    None: such a text is never verified (verdict.decide's `refused`)."""
    return x_refusal(text) if unit == "x_weighted" else None


def marker_unit(lang: Lang) -> Unit:
    """The unit one countdown marker pays for: a word in English, a character in Chinese."""
    return DEFAULT_UNIT[lang]

"""Platform limits counted as the platform counts them (issue 46): Google Ads counts a double-width character
(Chinese, Japanese, Korean, full-width forms) as 2, so a Chinese headline of "30" holds 15 characters. One unit,
`google_ads_chars`, declared once and counted by one counter, is what the Google Ads presets and the
`google-ads-rsa` pack use; the character grammar keeps it (a limit of N such units is N // 2 Chinese characters),
and the verdict says the platform's number."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from capel_ui.backends import Capabilities, ScriptedBackend
from capel_ui.batch.packs import PACKS
from capel_ui.batch.table import read_table
from capel_ui.cli import main
from capel_ui.counting import count
from capel_ui.grammar import closing_rules, target_grammar
from capel_ui.presets import PRESET_BY_KEY
from capel_ui.service import NO_PATTERN_FORM, modes_for
from capel_ui.verdict import Target, decide
from capel_ui.vocab import MARKERS_UNITS_ONLY, unit_label
from tests.gbnf import matches, sample

COUNTS = [
    # text, Google Ads' count (each double-width character 2), what it is
    ("Seaside Books", 13, "ASCII: 1 each"),
    ("海边书店", 8, "Han: 2 each"),
    ("海边书店，好。", 14, "Chinese punctuation is full-width: 2 each"),
    ("カタカナ", 8, "kana"),
    ("한국어", 6, "hangul"),
    ("ＡＢＣ", 6, "full-width Latin"),
    ("ｱｲｳ", 3, "half-width katakana: 1 each"),
    ("Café 海", 7, "mixed"),
    ("", 0, "nothing"),
]


@pytest.mark.parametrize(("text", "n", "what"), COUNTS, ids=[c[2] for c in COUNTS])
def test_google_ads_counts_a_double_width_character_as_two(text: str, n: int, what: str) -> None:
    assert count(text, "google_ads_chars") == n


def test_the_google_ads_presets_and_the_rsa_pack_count_by_google_ads() -> None:
    for key in ("ads-headline", "ads-description"):
        assert PRESET_BY_KEY[key].unit == "google_ads_chars"
    units = {slot.unit for slot in PACKS["google-ads-rsa"].slots()}
    assert units == {"google_ads_chars"}
    verdict = decide("complete", 28, Target.at_most(30), 0)
    assert verdict.headline("google_ads_chars") == "✓ 28/30 characters by Google Ads' count"


LIMITS = [(30, 15), (90, 45), (15, 7)]  # Google's limit, the Chinese characters that fit


@pytest.mark.parametrize(("limit", "han"), LIMITS)
def test_a_chinese_limit_by_google_ads_count_is_a_grammar_of_half_as_many_characters(limit: int, han: int) -> None:
    grammar = target_grammar("zh", "google_ads_chars", 1, limit)
    assert isinstance(grammar, str)
    assert matches(grammar, "海" * (han - 1) + "。") and not matches(grammar, "海" * han + "。")
    rng = random.Random(limit)
    for _ in range(30):
        text = sample(grammar, rng)
        assert count(text, "google_ads_chars") <= limit and count(text, "zh_all") <= han


def test_english_keeps_the_character_grammar_and_a_closing_keeps_the_room_in_google_ads_count() -> None:
    assert target_grammar("en", "google_ads_chars", 1, 30) == target_grammar("en", "chars", 1, 30)
    closing = closing_rules("zh", "google_ads_chars", 10)
    rng = random.Random(3)
    assert all(count(sample(closing, rng), "google_ads_chars") <= 10 for _ in range(20))


def test_an_exact_chinese_count_google_ads_cannot_reach_says_what_it_can() -> None:
    with pytest.raises(ValueError, match="exactly 29 characters by Google Ads' count cannot be written in Chinese"):
        target_grammar("zh", "google_ads_chars", 29, 29)


MODES = [
    # what the model takes, language, the default, why exact is not offered (None: it is)
    (Capabilities(grammar_field="grammar"), "zh", "exact", None),
    (Capabilities(grammar_field="grammar"), "en", "exact", None),
    (Capabilities(), "en", "baseline", "the model takes no grammar"),  # CAPEL shows the room left under a limit
    (Capabilities(), "zh", "baseline", "the model takes no grammar"),
    (Capabilities(grammar_field="json_schema", json_object=True), "en", "baseline", NO_PATTERN_FORM),
]


@pytest.mark.parametrize(("caps", "lang", "default", "why"), MODES)
def test_the_modes_rule_offers_what_can_keep_google_ads_count(caps, lang, default, why) -> None:
    found = modes_for(caps, lang, "google_ads_chars", "at_most")
    skipped = found.skipped.get("exact")
    assert found.default == default and ((skipped is None) if why is None else (why in skipped))
    if lang == "zh":  # no room countdown in Google's count for Chinese
        assert found.skipped["capel"] == MARKERS_UNITS_ONLY


def chinese_ads(seed: int = 11):
    """A model that writes whatever the grammar it is given admits (as llama.cpp does under it)."""
    rng = random.Random(seed)
    return lambda messages, options: sample(options.grammar, rng)


def test_the_rsa_pack_on_a_chinese_product_writes_every_headline_within_googles_30(
    tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    scripted_model.capabilities = Capabilities(grammar_field="grammar")
    scripted_model.reply(chinese_ads())
    src = tmp_path / "zh.csv"
    src.write_text("product,facts,lang\n海边书店,一家开在海边的小书店,zh\n", encoding="utf-8")
    err = io.StringIO()
    code = main(
        ["batch", str(src), "--model", "scripted", "--pack", "google-ads-rsa", "--out", str(tmp_path / "o.csv")],
        stdout=io.StringIO(),
        stderr=err,
    )
    assert code == 0, err.getvalue()
    rows = read_table((tmp_path / "o.csv").read_bytes(), "o.csv").rows
    assert len(rows) == 19
    for row in rows:
        limit = 30 if row["slot"].startswith("headline") else 90
        assert count(row["text"], "google_ads_chars") <= limit and row["verified"] == "true", row
        assert int(row["count"]) == count(row["text"], "google_ads_chars")
        if limit == 30:
            assert count(row["text"], "zh_all") <= 15
    assert {r["asked"] for r in rows} == {f"at most {n} {unit_label('google_ads_chars')}" for n in (30, 90)}
    assert "/30 characters by Google Ads' count" in err.getvalue()  # the verdict says the platform's number

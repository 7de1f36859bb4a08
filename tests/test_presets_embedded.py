"""A preset of each unit and kind on the real embedded model in its guaranteed mode, in this process: the text is
verified, within the preset's limit in its unit, and ends at a sentence end. (The browser runs one more, the ad
headline, end to end through the page: test_browser_presets.py.)

The model is slow (the Chinese presets take a minute each on a loaded 2-core machine), so presets that differ from
one run here only in their number are not run again: every preset is offered in exact mode and validated
(test_targets.py), and its grammar compiles in LLGuidance and admits only texts within its limit
(test_grammar_llguidance_gbnf.py, test_targets.py)."""

from __future__ import annotations

import pytest

from capel_ui.counting import count
from capel_ui.generation import Request, generate
from capel_ui.presets import PRESETS, Preset
from tests.test_browser_presets import BROWSER_PRESET

pytestmark = pytest.mark.model
SAME_PATH_AS = {
    "tweet-length": "headline",
    "abstract": "headline",
    "ads-description": BROWSER_PRESET,
    "linkedin-headline": "meta-description",
}
"""Presets whose unit and kind another preset runs on the model already (Google Ads' count at most: the browser's;
`chars` at most: the meta description's)."""
HERE = [p for p in PRESETS if p.key != BROWSER_PRESET and p.key not in SAME_PATH_AS]
"""One preset of each unit and kind the browser does not run end to end (it runs one, on the same model)."""


def test_each_unit_and_kind_of_the_presets_is_run_once_on_the_model() -> None:
    by_key = {p.key: p for p in PRESETS}
    ran = {(p.unit, p.kind) for p in [*HERE, by_key[BROWSER_PRESET]]}
    assert ran == {(p.unit, p.kind) for p in PRESETS}
    assert all((by_key[k].unit, by_key[k].kind) == (by_key[v].unit, by_key[v].kind) for k, v in SAME_PATH_AS.items())


@pytest.mark.parametrize("preset", HERE, ids=[p.key for p in HERE])
def test_every_preset_gives_a_verified_text_within_its_limit(embedded, preset: Preset) -> None:
    request = Request(
        preset.example, preset.number, lang=preset.lang, mode="exact", unit=preset.unit, target_kind=preset.kind
    )
    outcome = generate(embedded, request)
    n = count(outcome.text, preset.unit)
    assert outcome.verified and outcome.count == n
    assert request.target_spec.within(n)
    assert outcome.text.rstrip()[-1] in ".!?。！？"

"""Every preset on the real embedded model in its guaranteed mode, in this process: the text is verified, within
the preset's limit in its unit, and ends at a sentence end. (The browser runs one more, the ad headline, end to
end through the page: test_browser_presets.py.)"""

from __future__ import annotations

import pytest

from capel_ui.counting import count
from capel_ui.generation import Request, generate
from capel_ui.presets import PRESETS, Preset
from tests.test_browser_presets import BROWSER_PRESET

pytestmark = pytest.mark.model
HERE = [p for p in PRESETS if p.key != BROWSER_PRESET]
"""The presets the browser does not run end to end (it runs one, on the same model)."""


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

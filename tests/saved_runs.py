"""Test helper: save a raw model output as a History run, parsed exactly as the app would."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from capel_ui.assessment import assess
from capel_ui.parser import check_output
from capel_ui.storage import create_run


def save_parsed_run(engine: Engine, raw: str, target: int, *, instruction: str) -> int:
    """A finished CAPEL run whose text, count and errors come from the real parser, judged as the app judges one
    (its score left unknown: no logprobs from a parser)."""
    result = check_output(raw, target)
    judged = assess(result.text, "en", instruction, scored=False)
    return create_run(
        engine,
        instruction=instruction,
        prompt="p",
        raw=raw,
        text=result.text,
        model="embedded",
        backend="embedded",
        mode="capel",
        lang="en",
        unit="en_words",
        target=target,
        count=result.count,
        exact=result.exact,
        valid=result.valid,
        errors=[e.as_dict() for e in result.errors],
        status="complete",
        origin="write",
        verified=result.verified,
        assessment=judged.as_json(),
    )

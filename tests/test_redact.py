"""`redact`: what a message keeps and what it loses before it is shown or saved."""

from __future__ import annotations

import pytest

from capel_ui.redact import redact

KEY = "sk-test-4f8a9b2c7d1e"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"refused {KEY} at once", "refused *** at once"),
        ("Could not connect to http://me:hunter2@127.0.0.1:9/v1", "Could not connect to http://me:***@127.0.0.1:9/v1"),
        ("Could not connect to https://tok3n@example.org/v1", "Could not connect to https://***@example.org/v1"),
        ("at http://h/v1?api-key=abc123&model=x", "at http://h/v1?api-key=***&model=x"),
        ("at http://h/v1?key=abc&sig=def", "at http://h/v1?key=***&sig=***"),
        ('echo: {"Authorization": "Bearer abcdefgh12345"}', 'echo: {"Authorization": "Bearer ***"}'),
        ("x-api-key: zzz999", "x-api-key: ***"),
        ("Proxy-Authorization: Basic dXNlcjpwYXNz", "Proxy-Authorization: Basic ***"),
        ("sent bearer abcdefgh12345 twice", "sent bearer *** twice"),
        ("http://h/v1?model=gpt-4.1&temperature=0", "http://h/v1?model=gpt-4.1&temperature=0"),
        ("The model said: key ideas, tokens, authors.", "The model said: key ideas, tokens, authors."),
        ("中文 http://用户:密码@例子.cn/v1", "中文 http://用户:***@例子.cn/v1"),
    ],
)
def test_redact_masks_secrets_and_keeps_the_rest(text: str, shown: str) -> None:
    assert redact(text, [KEY]) == shown


def test_a_short_placeholder_key_is_not_masked_inside_words() -> None:
    assert redact("none of these", ["none"]) == "none of these"

"""`redact`: what a message keeps and what it loses before it is shown or saved."""

from __future__ import annotations

import pytest

from capel_ui.redact import SecretMasker, redact

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


STREAMED_KEY = "sk-ant-secret-0123456789"


def _streamed(pieces: list[str], secrets: tuple[str, ...] = (STREAMED_KEY,)) -> tuple[str, int]:
    masker = SecretMasker(secrets)
    shown = "".join(masker.feed(p) for p in pieces) + masker.flush()
    return shown, masker.masked


@pytest.mark.parametrize(
    ("pieces", "shown"),
    [
        (["Your key is sk-ant-secret-0123456789."], "Your key is ***."),
        (["Your key is sk", "-ant-", "secret-0123", "456789 and more."], "Your key is *** and more."),
        (["s", "k-ant-secret-0123456789"], "***"),
        (["Thanks", " for asking."], "Thanks for asking."),
        (["It is sk-ant-", "other"], "It is sk-ant-other"),
        (["No key here, ", "only words."], "No key here, only words."),
        (["两把钥匙 sk-ant-secret-", "0123456789 和 ", "sk-ant-secret-0123456789"], "两把钥匙 *** 和 ***"),
    ],
    ids=[
        "whole",
        "split_in_four",
        "split_after_first_char",
        "plain_s_end",
        "a_start_that_is_not_a_key",
        "none",
        "twice_zh",
    ],
)
def test_a_key_split_across_stream_pieces_is_masked_and_nothing_else_changes(pieces: list[str], shown: str) -> None:
    assert _streamed(pieces)[0] == shown


def test_the_masker_counts_each_key_it_masked() -> None:
    assert _streamed(["sk-ant-secret-0123456789 and sk-ant-", "secret-0123456789"])[1] == 2


def test_a_piece_ending_in_a_keys_start_is_held_until_the_next_piece() -> None:
    masker = SecretMasker([STREAMED_KEY])
    assert (masker.feed("Thanks"), masker.flush()) == ("Thank", "s")


def test_without_a_key_in_use_pieces_pass_at_once() -> None:
    assert SecretMasker([None, "none"]).feed("Thanks") == "Thanks"

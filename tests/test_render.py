"""Model output is untrusted: whatever it contains reaches the page as text, never as markup.

The HTML builders in capel_ui.ui.render are checked directly with hostile output (and the real parser's errors
on it), then a saved run holding the same payloads is opened on the Write page through AppTest.
"""

from __future__ import annotations

import html
import os
import re
from html.parser import HTMLParser

import pytest
from streamlit.testing.v1 import AppTest

from capel_ui.parser import check_output
from capel_ui.storage import get_engine, update_run
from capel_ui.ui.render import (
    COPY_SCRIPT,
    clean_text_html,
    copy_button_html,
    countdown_html,
    error_rows,
    highlight_raw,
    plain_markdown,
)
from tests.saved_runs import save_parsed_run

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
HOSTILE_RAW = f"<3> {SCRIPT} <2> {IMG} <2> hi <0>"  # one unit too many for <2>, a repeat, an early stop
ALLOWED_TAGS = {"style", "div", "span", "mark", "button", "textarea"}  # what render.py itself writes


class Page(HTMLParser):
    """What a browser would build from the HTML: the elements, their attributes, and the visible text."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text = ""
        self._in_style = False
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if not self._in_style:
            self.text += data

    def having(self, tag: str, cls: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and cls in (a.get("class") or "").split()]


def assert_inert(markup: str) -> Page:
    """No tag or attribute from the model survives; the payloads are there as escaped text."""
    assert "<script" not in markup and "<img" not in markup
    page = Page(markup)
    assert {t for t, _ in page.tags} <= ALLOWED_TAGS
    assert all(not name.startswith("on") for _, attrs in page.tags for name in attrs)
    return page


def test_raw_output_with_script_and_img_tags_is_shown_as_text() -> None:
    result = check_output(HOSTILE_RAW, 3)
    markup = highlight_raw(HOSTILE_RAW, result.errors)

    page = assert_inert(markup)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markup
    assert "&lt;img src=x onerror=alert(1)&gt;" in markup
    assert page.text.replace("⟂", "") == HOSTILE_RAW  # every character of the output is visible, as written


def test_error_spans_are_marked_with_their_escaped_type_and_message_on_hover() -> None:
    result = check_output(HOSTILE_RAW, 3)
    assert {e.type for e in result.errors} >= {"extra_units", "repeat"}

    page = assert_inert(highlight_raw(HOSTILE_RAW, result.errors))
    marks = page.having("mark", "err")
    titles = [m["title"] for m in marks]
    for error in result.errors:
        if error.end > error.start:
            assert any(f"{error.type}: {error.message}" in (t or "") for t in titles), error
    extra = next(e for e in result.errors if e.type == "extra_units")
    assert any("err-extra_units" in (m["class"] or "") for m in marks)
    assert "<2>" in extra.message  # the message quotes a marker; inside the attribute it is escaped
    assert f'title="extra_units: {extra.message.replace("<", "&lt;").replace(">", "&gt;")}"' in highlight_raw(
        HOSTILE_RAW, [extra]
    )


def test_an_error_message_cannot_break_out_of_its_title_attribute() -> None:
    raw = "<2> one <1> two <0>"
    sneaky = {"type": "skip", "start": 4, "end": 7, "message": '" onmouseover="alert(1)" x="<b>'}
    markup = highlight_raw(raw, [sneaky])

    page = assert_inert(markup)
    [mark] = page.having("mark", "err")
    assert mark["title"] == 'skip: " onmouseover="alert(1)" x="<b>'  # one attribute, holding the whole message
    assert "&quot; onmouseover=&quot;alert(1)&quot;" in markup


def test_markers_are_dimmed_and_the_words_between_them_are_not() -> None:
    raw = "<2> Hello <1> world <0>"
    markup = highlight_raw(raw, markers=check_output(raw, 2).marker_spans)

    dimmed = re.findall(r'<span class="mk">(.*?)</span>', markup)
    assert dimmed == ["&lt;2&gt;", "&lt;1&gt;", "&lt;0&gt;"]
    assert Page(markup).text == "<2> Hello <1> world <0>"


def test_a_zero_width_error_is_shown_as_a_pin_with_its_message() -> None:
    raw = "<3> one <2> two <1> three"
    result = check_output(raw, 3)
    [missing] = [e for e in result.errors if e.type == "missing_end"]
    assert missing.start == missing.end

    page = assert_inert(highlight_raw(raw, result.errors))
    [pin] = page.having("span", "pin")
    assert pin["title"] == f"missing_end: {missing.message}"
    assert "&lt;0&gt;" in highlight_raw(raw, result.errors)  # the message names <0>, escaped
    assert not page.having("mark", "err")  # nothing to highlight: the pin alone marks the spot


def test_clean_text_and_countdown_escape_what_they_show() -> None:
    text = check_output(HOSTILE_RAW, 3).text
    markup = clean_text_html(text)
    page = assert_inert(markup)
    assert "&lt;script&gt;" in markup
    assert page.text == text

    countdown = countdown_html(7, 25, f"{IMG} words")
    page = assert_inert(countdown)
    assert "&lt;img src=x onerror=alert(1)&gt; words left of 25" in countdown
    assert page.text.startswith("7")


def test_error_table_rows_carry_the_offending_text_as_plain_text() -> None:
    """Tables escape by themselves, so rows hold the text as written (escaping here would show &lt; to users)."""
    result = check_output(HOSTILE_RAW, 3)
    rows = error_rows(HOSTILE_RAW, result.errors)

    extra = next(r for r in rows if r["type"] == "extra_units")
    assert IMG in str(extra["text"])
    assert extra["what"] == "More than one unit for a marker"
    assert all("&lt;" not in str(value) for row in rows for value in row.values())


def test_a_saved_run_with_hostile_output_is_shown_escaped_on_the_write_page(app_test: AppTest) -> None:
    run_id = save_parsed_run(get_engine(os.environ["DATABASE_URL"]), HOSTILE_RAW, 3, instruction=f"Say {SCRIPT}")

    app_test.session_state["w_run_id"] = run_id
    app_test.run()
    anyway = [c for c in app_test.checkbox if c.label == "Copy or download it anyway"]
    if anyway:  # the hostile text reads as junk, so its Copy waits behind this box: tick it to check Copy too
        anyway[0].check().run()

    assert not app_test.exception, app_test.exception
    bodies = [h.value for h in app_test.html]
    assert any("capel-text" in b for b in bodies) and any("capel-raw" in b for b in bodies)
    for body in bodies:
        assert_inert(body.replace(COPY_SCRIPT, ""))  # the app's own Copy script is the only script
    # clean text, raw output, and the Copy button's hidden copy of the text
    assert sum("&lt;script&gt;alert(1)&lt;/script&gt;" in b for b in bodies) == 3
    assert any("&lt;img src=x onerror=alert(1)&gt;" in b for b in bodies)
    # The verdict is plain: not verified, with the marker errors counted.
    [verdict] = [m.value for m in app_test.markdown if "-badge[" in m.value]
    assert verdict.startswith(":red-badge[off by +2 · 5/3 English words")
    # The error table lists the errors with the offending text, as text.
    table = app_test.dataframe[0].value
    assert IMG in " ".join(table["text"])


@pytest.mark.parametrize("payload", [SCRIPT, IMG, "</textarea><script>alert(1)</script>"])
def test_the_copy_button_holds_model_text_escaped_in_its_textarea(payload: str) -> None:
    markup = copy_button_html(payload, key="w 7")
    page = assert_inert(markup.replace(COPY_SCRIPT, ""))
    [area] = page.having("textarea", "capel-copy-text")
    [button] = page.having("button", "capel-copy")
    assert button["data-for"] == area["id"] == "capel-copy-w-7"
    assert html.unescape(markup.split("readonly", 1)[1].split(">", 1)[1].rsplit("</textarea>", 1)[0]) == payload


def test_the_countdown_past_the_target_says_over_by() -> None:
    page = Page(countdown_html(-23, 12, "English words"))
    assert "+23" in page.text and "over by 23 · target 12 English words" in page.text


@pytest.mark.parametrize("payload", [SCRIPT, IMG])
def test_payload_alone_as_the_whole_output_is_escaped_everywhere(payload: str) -> None:
    for markup in (
        highlight_raw(payload),
        clean_text_html(payload),
        highlight_raw(
            payload,
            [
                {"type": "preamble", "start": 0, "end": len(payload), "message": payload},
            ],
        ),
    ):
        page = assert_inert(markup)
        assert payload in page.text


HOSTILE_FAILURE = "Session expired. [Log in again](http://evil.example/login) **now** <b>please</b>"


def test_an_error_box_escapes_every_markdown_link_style_and_autolink_in_a_servers_text() -> None:
    box = plain_markdown(HOSTILE_FAILURE)
    assert "](" not in box and "**" not in box and "<b>" not in box
    assert "`http://evil.example/login)`" in box  # a URL in a code span: shown, never linked (test_browser)
    assert box.replace("\\", "").replace("`", "") == HOSTILE_FAILURE  # the same characters, each shown as written


def test_a_saved_runs_failure_text_is_plain_text_on_the_write_page(app_test: AppTest) -> None:
    engine = get_engine(os.environ["DATABASE_URL"])
    run_id = save_parsed_run(engine, "<1> a <0>", 1, instruction="x")
    update_run(engine, run_id, failure=HOSTILE_FAILURE, status="partial")
    app_test.session_state["w_run_id"] = run_id
    app_test.run()

    assert not app_test.exception, app_test.exception
    [error] = [e.value for e in app_test.error]
    assert error == plain_markdown(HOSTILE_FAILURE)  # never Markdown: no clickable link to another site


def test_a_streaming_variant_shows_the_escaped_end_of_its_text_under_its_countdown() -> None:
    from capel_ui.ui.render import LIVE_TAIL, live_variant_html

    shown = live_variant_html(3, 12, "English words", "x" * 1000 + " <b>bold</b> & more")
    assert "3</div>" in shown and "&lt;b&gt;bold&lt;/b&gt; &amp; more" in shown and "<b>" not in shown
    assert shown.count("x") <= LIVE_TAIL

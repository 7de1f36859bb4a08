"""HTML for model output: markers dimmed, error spans highlighted, everything escaped.

Model output is untrusted text. Every character of it that reaches the page passes through
`html.escape` here; pages never build HTML from model text themselves. Pure functions, no streamlit,
so the escaping is tested directly.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from ..vocab import ERROR_LABELS

STYLE = """<style>
.capel-raw{white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
 font-size:.92rem;line-height:1.55;padding:.75rem 1rem;border:1px solid #e3e5df;border-radius:.5rem;background:#fff;
 max-height:28rem;overflow-y:auto}
.capel-raw .mk{color:#9aa3ad;font-size:.8em}
.capel-raw .draft{color:#8a8f98;font-style:italic}
.capel-raw mark.err{background:#ffe1dc;color:inherit;border-bottom:2px solid #d9480f;padding:0 .05em;cursor:help}
.capel-raw .pin{color:#d9480f;font-weight:700;cursor:help}
.capel-text{white-space:pre-wrap;word-break:break-word;font-size:1.08rem;line-height:1.65;padding:.9rem 1.1rem;
 border-left:4px solid #2f5d8a;background:#fff;border-radius:.25rem}
.capel-live{white-space:pre-wrap;word-break:break-word;font-size:.92rem;line-height:1.5;color:#3b4350;
 padding:.4rem .6rem;border-left:3px solid #c9d6e3;max-height:9rem;overflow:hidden}
.capel-raw del.out{color:#8a8f98;text-decoration-color:#8a8f98}
.capel-raw ins.in{text-decoration:none;border-bottom:2px solid #9bbf8a}
.capel-count{text-align:center;padding:.4rem 0}
.capel-count .n{font-size:4.2rem;font-weight:700;line-height:1;color:#2f5d8a;font-variant-numeric:tabular-nums}
.capel-count .lbl{color:#5b6470;font-size:.95rem}
.capel-copy{font:inherit;font-size:.9rem;padding:.3rem .9rem;border:1px solid #c9ccd1;border-radius:.5rem;
 background:#fff;cursor:pointer;min-width:5.5rem}
.capel-copy:hover{border-color:#2f5d8a;color:#2f5d8a}
.capel-copy-text{position:absolute;left:-9999px;width:1px;height:1px;opacity:0}
</style>"""


def escape(text: str) -> str:
    return html.escape(text, quote=True)


def _error_fields(error: Any) -> tuple[str, int, int, str]:
    if isinstance(error, Mapping):
        return str(error["type"]), int(error["start"]), int(error["end"]), str(error["message"])
    return error.type, error.start, error.end, error.message


def highlight_raw(
    raw: str,
    errors: Iterable[Any] = (),
    draft_span: Sequence[int] | None = None,
    markers: Iterable[tuple[int, int]] = (),
) -> str:
    """The raw output as HTML: the parser's markers dimmed, each error span marked with its type and message."""
    errs = [_error_fields(e) for e in errors]
    n = len(raw)
    cuts = {0, n}
    markers = [(min(s, n), min(e, n)) for s, e in markers]
    for s, e in markers:
        cuts.update((s, e))
    for _, s, e, _ in errs:
        cuts.update((min(max(s, 0), n), min(max(e, 0), n)))
    if draft_span:
        cuts.update((min(draft_span[0], n), min(draft_span[1], n)))
    points = sorted(cuts)
    pins: dict[int, list[str]] = {}
    for t, s, e, msg in errs:
        if e <= s:
            pins.setdefault(min(max(s, 0), n), []).append(f"{t}: {msg}")
    marker_starts = dict(markers)
    out: list[str] = ['<div class="capel-raw">']
    in_marker_until = -1
    for a, b in pairwise(points):
        if a in pins:
            out.append(_pin(pins.pop(a)))
        if a in marker_starts:
            in_marker_until = marker_starts[a]
        piece = escape(raw[a:b])
        classes = []
        if a < in_marker_until:
            classes.append("mk")
        if draft_span and draft_span[0] <= a < draft_span[1]:
            classes.append("draft")
        if classes:
            piece = f'<span class="{" ".join(classes)}">{piece}</span>'
        covering = [(t, msg) for t, s, e, msg in errs if s <= a and b <= e and e > s]
        if covering:
            title = escape(" · ".join(f"{t}: {msg}" for t, msg in covering))
            kinds = " ".join(f"err-{t}" for t, _ in covering)
            piece = f'<mark class="err {kinds}" title="{title}">{piece}</mark>'
        out.append(piece)
    for at in sorted(pins):
        out.append(_pin(pins[at]))
    out.append("</div>")
    return STYLE + "".join(out)


def _pin(messages: list[str]) -> str:
    return f'<span class="pin" title="{escape(" · ".join(messages))}">⟂</span>'


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


_AUTOLINKED = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)[^\s`]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)
"""What GitHub-flavoured Markdown links by itself: a URL, a `www.` address, an e-mail address. Streamlit finds them
in the text after escapes are read, so escaping cannot stop them; inside a code span nothing is linked."""


def plain_markdown(text: str) -> str:
    """A server's or model's text for a Markdown element (an error box) shown as the characters it is: every
    character Markdown or Streamlit could read as syntax is escaped, so a hostile body's `[Log in again](url)` or
    `:red[...]` stays text, never a link or a style; a bare URL, `www.` or e-mail address is set in a code span,
    shown as written and never a link."""
    out, last = [], 0
    for found in _AUTOLINKED.finditer(text):
        out += [_MARKDOWN_PUNCTUATION.sub(r"\\\1", text[last : found.start()]), f"`{found.group(0)}`"]
        last = found.end()
    out.append(_MARKDOWN_PUNCTUATION.sub(r"\\\1", text[last:]))
    return "".join(out)


def written_html(shared: str, dropped: str, added: str) -> str:
    """The model's whole text beside the run's, escaped: the words left out dimmed and struck (never lost), and what
    the text has in their place underlined after them."""
    gap = " " if added[:1].isalnum() and dropped and not dropped[-1].isspace() else ""  # a text written anew
    put = f'{gap}<ins class="in" title="in the text instead">{escape(added)}</ins>' if added else ""
    out = f'<del class="out" title="left out of the text">{escape(dropped)}</del>'
    return f'{STYLE}<div class="capel-raw">{escape(shared)}{out}{put}</div>'


def clean_text_html(text: str) -> str:
    """The clean text, escaped, newlines kept."""
    return f'{STYLE}<div class="capel-text">{escape(text) or "&nbsp;"}</div>'


def countdown_html(remaining: int, target: int, unit_label: str, *, drafting: bool = False) -> str:
    """The big countdown: units left to write, or how far past the target the text has gone."""
    if drafting:
        number, label = str(max(remaining, 0)), "drafting first…"
    elif remaining < 0:
        number, label = f"+{-remaining}", f"over by {-remaining} · target {target} {escape(unit_label)}"
    else:
        number, label = str(remaining), f"{escape(unit_label)} left of {target}"
    return f'{STYLE}<div class="capel-count"><div class="n">{number}</div><div class="lbl">{label}</div></div>'


LIVE_TAIL = 280
"""Characters of a streaming variant's text shown under its countdown: its last lines, enough to judge it by."""


def live_variant_html(remaining: int, target: int, unit_label: str, text: str) -> str:
    """A streaming variant: its countdown and the end of its text so far, escaped (untrusted model output)."""
    tail = text if len(text) <= LIVE_TAIL else "…" + text[-LIVE_TAIL:].lstrip()
    return countdown_html(remaining, target, unit_label) + f'<div class="capel-live">{escape(tail) or "&nbsp;"}</div>'


def copy_button_html(text: str, key: str) -> str:
    """A one-click Copy button for `text` (escaped into a hidden textarea, never into the script)."""
    ident = "capel-copy-" + "".join(c if c.isalnum() else "-" for c in key)
    return (
        f'{STYLE}{COPY_SCRIPT}<button type="button" class="capel-copy" data-for="{escape(ident)}">Copy</button>'
        f'<textarea id="{escape(ident)}" class="capel-copy-text" readonly tabindex="-1" aria-hidden="true">'
        f"{escape(text)}</textarea>"
    )


COPY_SCRIPT = """<script>
if (!window.capelCopy) {
  window.capelCopy = true;
  document.addEventListener("click", async (event) => {
    const button = event.target.closest(".capel-copy");
    if (!button) return;
    const source = document.getElementById(button.dataset.for);
    if (!source) return;
    try {
      await navigator.clipboard.writeText(source.value);
    } catch (e) {
      source.select();
      document.execCommand("copy");
    }
    button.textContent = "Copied ✓";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  });
}
</script>"""

SCROLL_SCRIPT = """<script>
// Once what follows the script is drawn too (at once, the page may be too short to bring it to the top).
setTimeout(() => {{
  const area = document.querySelector(".st-key-{key}");
  if (!area) return;
  area.style.scrollMarginTop = "4rem";  // clear of the app's header bar
  area.scrollIntoView({{block: "start", behavior: "instant"}});
}}, 300);
</script>"""


def scroll_into_view_html(key: str) -> str:
    """A script that scrolls the container keyed `key` to the top of the window (the live countdown, a result)."""
    return SCROLL_SCRIPT.format(key="".join(c for c in key if c.isalnum() or c in "-_"))


def error_rows(raw: str, errors: Iterable[Any]) -> list[dict[str, object]]:
    """Rows for an error table: type, label, where, the offending text (plain text: tables escape it)."""
    rows = []
    for t, s, e, msg in (_error_fields(x) for x in errors):
        rows.append(
            {"type": t, "what": ERROR_LABELS.get(t, t), "message": msg, "at": f"{s}–{e}", "text": raw[s:e][:80]}  # type: ignore[call-overload]
        )
    return rows

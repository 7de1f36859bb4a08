"""A text box whose value reaches Python as the writer types (a short pause, not a click outside), so a count
next to it is live. Streamlit's own text_area only commits on Ctrl+Enter or blur.

Built with `st.components.v2` (HTML, CSS and JS inline, no build step). The text, model output included, is set
as the textarea's value, never parsed as HTML.
"""

from __future__ import annotations

import streamlit as st

_HTML = '<label class="capel-live"><span class="capel-live-label"></span><textarea rows="5"></textarea></label>'

_CSS = """
.capel-live { display: flex; flex-direction: column; gap: 0.25rem; font-family: var(--st-font); }
.capel-live-label { font-size: 0.875rem; color: var(--st-text-color); }
.capel-live textarea {
  width: 100%; box-sizing: border-box; resize: vertical; padding: 0.5rem 0.75rem;
  font: inherit; font-size: 1rem; line-height: 1.5; color: var(--st-text-color);
  background: var(--st-secondary-background-color); border: 1px solid transparent;
  border-radius: var(--st-base-radius, 0.5rem);
}
.capel-live textarea:focus { outline: none; border-color: var(--st-primary-color); }
"""

_JS = """
export default function (component) {
  const { parentElement, data, setStateValue } = component;
  const box = parentElement.querySelector("textarea");
  parentElement.querySelector(".capel-live-label").textContent = data.label;
  box.setAttribute("aria-label", data.label);
  box._capelSend = setStateValue;
  if (box.dataset.ready !== "1") {
    box.value = data.text;
    box.dataset.ready = "1";
    let timer;
    box.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => box._capelSend("text", box.value), 150);
    });
  }
}
"""

_live_text = st.components.v2.component("capel_live_text", html=_HTML, css=_CSS, js=_JS)


def live_text_area(label: str, value: str, *, key: str) -> str:
    """A multi-line box starting at `value`; returns what it holds now, updated a moment after each keystroke."""
    result = _live_text(
        key=key, data={"label": label, "text": value}, default={"text": value}, on_text_change=lambda: None
    )
    text = getattr(result, "text", None)
    return value if text is None else str(text)

"""The History page (its logic is in capel_ui.ui.history)."""

from capel_ui.ui.history import render

render()

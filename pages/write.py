"""The Write page (its logic is in capel_ui.ui.write)."""

from capel_ui.ui.write import render

render()

"""The History page, run by app.py's navigation inside its shell (the logic is in capel_ui.ui.history)."""

from capel_ui.ui.history import render

render()

"""The Models page, run by app.py's navigation inside its shell (the logic is in capel_ui.ui.models)."""

from capel_ui.ui.models import render

render()

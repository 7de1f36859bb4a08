"""The Compare page, run by app.py's navigation inside its shell (the logic is in capel_ui.ui.compare)."""

from capel_ui.ui.compare import render

render()

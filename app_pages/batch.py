"""The Batch page, run by app.py's navigation inside its shell (the logic is in capel_ui.ui.batch)."""

from capel_ui.ui.batch import render

render()

"""The Write page, run by app.py's navigation inside its shell (the logic is in capel_ui.ui.write)."""

from capel_ui.ui.write import render

render()

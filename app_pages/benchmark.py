"""The Benchmark page, run by app.py's navigation inside its shell (the logic is in capel_ui.ui.benchmark)."""

from capel_ui.ui.benchmark import render

render()

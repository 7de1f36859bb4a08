"""The Benchmark page (its logic is in capel_ui.ui.benchmark)."""

from capel_ui.ui.benchmark import render
from capel_ui.ui.settings import ensure_shell

ensure_shell()
render()

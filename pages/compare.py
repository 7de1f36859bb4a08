"""The Compare page (its logic is in capel_ui.ui.compare)."""

from capel_ui.ui.compare import render
from capel_ui.ui.settings import ensure_shell

ensure_shell()
render()

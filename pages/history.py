"""The History page (its logic is in capel_ui.ui.history)."""

from capel_ui.ui.history import render
from capel_ui.ui.settings import ensure_shell

ensure_shell()
render()

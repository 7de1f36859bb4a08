"""The Write page (its logic is in capel_ui.ui.write)."""

from capel_ui.ui.settings import ensure_shell
from capel_ui.ui.write import render

ensure_shell()
render()

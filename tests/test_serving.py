"""`streamlit run app.py` as the README gives it serves this machine only: the keys in the server's environment
and its database must not be open to the network by default."""

from __future__ import annotations

import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parent.parent / ".streamlit" / "config.toml"


def test_the_app_listens_on_loopback_only_by_default() -> None:
    assert tomllib.loads(CONFIG.read_text(encoding="utf-8"))["server"]["address"] == "127.0.0.1"

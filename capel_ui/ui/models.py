"""The Models page: the local catalogue, what is pulled, Pull with a progress bar, Remove (the logic is
`capel_ui.local_models`, the same the `models` command runs)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from .. import local_models as lm
from ..redact import redact


def _progress_bar(label: str) -> type:
    """A tqdm stand-in for `huggingface_hub` that draws on this page (it calls update() as bytes arrive)."""
    bar = st.progress(0.0, text=label)

    class PageTqdm:
        def __init__(self, *args: Any, total: float | None = None, initial: float = 0, **kwargs: Any) -> None:
            self.total, self.n = total or 0, initial or 0

        def update(self, n: float = 1) -> None:
            self.n += n
            if self.total:
                done = min(max(self.n / self.total, 0.0), 1.0)
                bar.progress(done, text=f"{label}: {self.n / 1e6:,.0f} of {self.total / 1e6:,.0f} MB")

        def close(self) -> None:
            pass

        def __enter__(self) -> PageTqdm:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def set_description(self, *args: Any, **kwargs: Any) -> None:
            pass

    return PageTqdm


def _pull(name: str) -> None:
    """The pull, through `local_models.pull` (its one guarded path): any failure is its one line in an error box,
    the progress left where it stopped (what arrived is kept: Pull again resumes it)."""
    with st.status(f"Pulling {name}…", expanded=True) as status:
        try:
            model = lm.pull(name, tqdm_class=_progress_bar(name), progress=st.write)
        except lm.ModelError as exc:
            status.update(label=f"The pull of {name} stopped", state="error")
            st.error(redact(str(exc)), icon=":material/cloud_off:")  # an HF_ENDPOINT mirror's password masked
            return
        status.update(label=f"{name} is ready: pick “Pulled local model” in the sidebar.", state="complete")
    st.caption(f"sha256 {model.sha256[:16]}… checked · {model.path}")


def render() -> None:
    st.title("Models")
    st.caption(
        "Models that run on this computer, without a key. Pulled from the Hugging Face Hub, checked, and served "
        f"like the embedded model (guaranteed modes included). Folder: {lm.models_dir()}"
    )
    for row in lm.rows():
        with st.container(border=True):
            left, right = st.columns([4, 1])
            state = "✓ pulled" if row["installed"] else f"{row['size_gb']:.2f} GB"
            left.markdown(f"**{row['name']}** · {state} · writes {row['languages']} · {row['licence']}")
            left.caption(f"{row['about']} ({row['repo']})")
            if row["installed"]:
                if right.button("Remove", key=f"remove_{row['name']}", width="stretch"):
                    lm.remove(row["name"])
                    st.rerun()
            elif right.button("Pull", key=f"pull_{row['name']}", type="primary", width="stretch"):
                _pull(row["name"])

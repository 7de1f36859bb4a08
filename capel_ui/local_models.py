"""Local models a writer can pull: a short catalogue of instruct GGUF models that run on a laptop CPU, downloaded
from the Hugging Face Hub with `huggingface_hub` (resumable, `HF_ENDPOINT` honoured), checked, and served by the
same in-process llama.cpp path as the embedded model (provider `local`, guaranteed modes included).

A model counts as installed only once its file is complete and its sha256 matches the Hub's (the LFS etag), and a
small manifest says so: an interrupted download (its `.incomplete` part kept for the next pull to resume) or a
corrupt one is never offered. Models live in `CAPEL_MODELS_DIR`, else `data/models/` beside the History
database: one folder per model, so `remove` is one folder and nothing hides in a shared cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .vocab import PROJECT_ROOT, Lang

MANIFEST = "capel-model.json"
DISK_MARGIN = 1.05
"""Free space asked for beyond the file's size (the download writes one file; a little room for the rest)."""


class ModelError(Exception):
    """A pull or removal that cannot go on; the message says why and what to do."""


@dataclass(frozen=True)
class CatalogEntry:
    """One model of the catalogue: where it is on the Hub and what a writer should know before pulling it."""

    name: str  # what `--model` and the pickers call it
    repo: str
    filename: str
    size: int  # bytes, for the free-disk check and the list (the Hub's own size is checked after)
    languages: tuple[Lang, ...]
    licence: str
    about: str


CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        "qwen2.5-1.5b",
        "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
        "qwen2.5-1.5b-instruct-q4_k_m.gguf",
        1_117_320_736,
        ("en", "zh"),
        "Apache-2.0",
        "Qwen2.5 1.5B Instruct (Q4_K_M): writes Chinese and English; the pick for Chinese on a laptop.",
    ),
    CatalogEntry(
        "smollm2-1.7b",
        "HuggingFaceTB/SmolLM2-1.7B-Instruct-GGUF",
        "smollm2-1.7b-instruct-q4_k_m.gguf",
        1_055_609_824,
        ("en",),
        "Apache-2.0",
        "SmolLM2 1.7B Instruct (Q4_K_M): the embedded model's big sibling; English paragraphs worth keeping.",
    ),
)
"""Non-gated repositories with permissive licences, chosen for writing quality per GB on a CPU."""

BY_NAME = {entry.name: entry for entry in CATALOG}


def models_dir() -> Path:
    """Where pulled models live: CAPEL_MODELS_DIR, else data/models under the project."""
    return Path(os.environ.get("CAPEL_MODELS_DIR") or PROJECT_ROOT / "data" / "models").expanduser()


def entry(name: str) -> CatalogEntry:
    """The catalogue entry called `name`; ModelError naming the catalogue for any other."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ModelError(f"no model {name!r} in the catalogue; one of {', '.join(BY_NAME)}") from None


@dataclass(frozen=True)
class Installed:
    """A pulled model whose file was checked: what its manifest records."""

    name: str
    repo: str
    filename: str
    sha256: str
    size: int
    path: str


def installed() -> dict[str, Installed]:
    """Every checked model in `models_dir()`, by name (a folder without a valid manifest and file is not one)."""
    found: dict[str, Installed] = {}
    root = models_dir()
    if not root.is_dir():
        return found
    for manifest in sorted(root.glob(f"*/{MANIFEST}")):
        try:
            model = Installed(**json.loads(manifest.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            continue
        path = Path(model.path)
        if path.is_file() and path.stat().st_size == model.size:
            found[model.name] = model
    return found


def path_of(name: str) -> Path | None:
    """The checked GGUF file of a pulled model, or None."""
    model = installed().get(name)
    return Path(model.path) if model else None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_disk(folder: Path, size: int) -> None:
    free = shutil.disk_usage(folder).free
    if free < size * DISK_MARGIN:
        raise ModelError(
            f"not enough free disk for {size / 1e9:.2f} GB in {folder} ({free / 1e9:.2f} GB free); free some "
            "space or set CAPEL_MODELS_DIR to a larger disk"
        )


def _hub_sha256(item: CatalogEntry, endpoint: str | None) -> tuple[str | None, int | None]:
    """The file's sha256 and size as the Hub states them (an LFS file's etag is its sha256)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    meta = get_hf_file_metadata(hf_hub_url(item.repo, item.filename, endpoint=endpoint))
    etag = (meta.etag or "").strip('"')
    return (etag if len(etag) == 64 else None), meta.size


def pull(name: str, *, tqdm_class: Any = None, progress: Callable[[str], None] | None = None) -> Installed:
    """Download `name` (resuming a partial download), check its size and sha256, and record it as installed.

    Raises ModelError for an unknown name, too little disk, a download that failed (what arrived is kept for the
    next pull) or a file whose checksum does not match (it is deleted)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError

    item = entry(name)
    folder = models_dir() / item.name
    folder.mkdir(parents=True, exist_ok=True)
    _check_disk(folder, item.size)
    endpoint = os.environ.get("HF_ENDPOINT") or None
    say = progress or (lambda _: None)
    try:
        expected, size = _hub_sha256(item, endpoint)
        say(f"downloading {item.filename} ({(size or item.size) / 1e9:.2f} GB) from {item.repo}")
        path = Path(
            hf_hub_download(item.repo, item.filename, local_dir=folder, endpoint=endpoint, tqdm_class=tqdm_class)
        )
    except (HfHubHTTPError, OSError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"the download of {name} failed ({reason}); run the same pull again to resume it") from exc
    say("checking its sha256")
    actual = _sha256(path)
    if expected is None or actual != expected:
        path.unlink(missing_ok=True)
        raise ModelError(
            f"{item.filename} does not match the Hub's checksum ({actual[:12]}… is not {str(expected)[:12]}…); "
            "the file was deleted: pull again"
        )
    model = Installed(item.name, item.repo, item.filename, actual, path.stat().st_size, str(path))
    (folder / MANIFEST).write_text(json.dumps(asdict(model), indent=2), encoding="utf-8")
    return model


def remove(name: str) -> bool:
    """Delete a pulled model's folder (its file, manifest and any partial download); True if there was one."""
    entry(name)
    folder = models_dir() / name
    if not folder.exists():
        return False
    shutil.rmtree(folder)
    return True


def rows() -> list[dict[str, Any]]:
    """The catalogue with what is installed, for `models list` and the Models page."""
    have = installed()
    return [
        {
            "name": e.name,
            "installed": e.name in have,
            "size_gb": round(e.size / 1e9, 2),
            "languages": ", ".join(e.languages),
            "licence": e.licence,
            "repo": e.repo,
            "about": e.about,
        }
        for e in CATALOG
    ]

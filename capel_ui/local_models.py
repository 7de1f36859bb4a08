"""Local models a writer can pull: a short catalogue of instruct GGUF models that run on a laptop CPU, downloaded
from the Hugging Face Hub (`huggingface_hub`'s URLs, headers and metadata; our own resumable transfer with a stall
limit; `HF_ENDPOINT` honoured), checked, and served by the same in-process llama.cpp path as the embedded model
(provider `local`, guaranteed modes included).

A model counts as installed only once its file is complete and its sha256 matches the Hub's (the LFS etag), and a
small manifest says so: an interrupted download (its `.part` file kept under a stable name for the next pull to
resume, in this process or another) or a corrupt one is never offered. Every failure of a pull is one line
(`ModelError`) saying what happened and what to do. Models live in `CAPEL_MODELS_DIR`, else `data/models/` beside
the History database: one folder per model, so `remove` is one folder and nothing hides in a shared cache.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .vocab import EXIT_BACKEND, EXIT_INTERRUPTED, EXIT_USAGE, FAILURES, PROJECT_ROOT, FailureKind, Lang

MANIFEST = "capel-model.json"
DISK_MARGIN = 1.05
"""Free space asked for beyond the file's size (the download writes one file; a little room for the rest)."""
DEFAULT_PULL_STALL_LIMIT = 60.0
"""Seconds a pull may go with less than STALL_BYTES arriving (CAPEL_PULL_STALL_LIMIT sets another): a Hub that
sends a byte now and then would otherwise keep a pull waiting for ever (each byte resets the read timeout)."""
STALL_BYTES = 64 * 1024
CUT_RETRIES = 3
"""A connection that broke off after bytes arrived is resumed in the same pull this many times."""


class ModelError(Exception):
    """A pull or removal that cannot go on; the message is one line saying what happened and what to do.

    `kind` is the failure of the Hub or the transfer (vocab.FAILURES: its `bad_input` picks the exit code);
    `bad_input` marks a fault of the writer's own setting (a models folder that cannot hold a model)."""

    def __init__(self, message: str, *, kind: FailureKind | None = None, bad_input: bool = False) -> None:
        super().__init__(message)
        self.kind, self.bad_input = kind, bad_input

    @property
    def exit_code(self) -> int:
        """The CLI's exit code, from the failure table: 2 for the writer's setting, else 3."""
        bad = self.bad_input or (self.kind is not None and FAILURES[self.kind].bad_input)
        return EXIT_USAGE if bad else EXIT_BACKEND


class PullInterrupted(ModelError):
    """Ctrl-C or SIGTERM stopped a pull; what arrived is kept in its partial file for the next pull to resume."""

    @property
    def exit_code(self) -> int:
        return EXIT_INTERRUPTED


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

    meta = get_hf_file_metadata(hf_hub_url(item.repo, item.filename, endpoint=endpoint), timeout=stall_limit())
    etag = (meta.etag or "").strip('"')
    return (etag if len(etag) == 64 else None), meta.size


def stall_limit() -> float:
    """Seconds a pull may go with less than STALL_BYTES arriving before it is stopped (CAPEL_PULL_STALL_LIMIT)."""
    try:
        return max(float(os.environ.get("CAPEL_PULL_STALL_LIMIT") or DEFAULT_PULL_STALL_LIMIT), 0.1)
    except ValueError:
        return DEFAULT_PULL_STALL_LIMIT


def partial_path(folder: Path, filename: str, sha256: str) -> Path:
    """Where a download in progress is kept, under a stable name next to the target: the next pull resumes it.

    The name carries the Hub's checksum, so a part of an older version of the file is never resumed into a new one."""
    return folder / f"{filename}.{sha256[:16]}.part"


def _length(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _prepare(folder: Path) -> None:
    """The model's folder, made and checked writable; ModelError (bad input) naming the setting otherwise."""
    root = models_dir()
    fix = "set CAPEL_MODELS_DIR to a folder you can write to"
    for place in (root, folder):
        if place.is_symlink() and not place.exists():
            raise ModelError(
                f"the models folder {place} is a link to nothing ({os.readlink(place)}); {fix}", bad_input=True
            )
        if place.exists() and not place.is_dir():
            raise ModelError(f"the models folder {place} is a file, not a folder; {fix}", bad_input=True)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".capel-write-check.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise ModelError(f"cannot write to the models folder {folder} ({why}); {fix}", bad_input=True) from None


def _clean_leftovers(folder: Path, keep: Path | None) -> None:
    """Delete what earlier pulls left that no pull can resume: parts of another version, and the random-named
    `.incomplete` files and metadata of `hf_hub_download` (the way pulls were made before)."""
    for stale in folder.glob("*.part"):
        if stale != keep:
            stale.unlink(missing_ok=True)
    shutil.rmtree(folder / ".cache", ignore_errors=True)


@contextmanager
def _one_pull_at_a_time(folder: Path, name: str) -> Iterator[None]:
    """A lock on the model's folder: two pulls of one model never write the same partial file."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory lock; one pull at a time is up to the writer
        yield
        return
    with (folder / ".pull.lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ModelError(f"another pull of {name} is running; wait for it to finish") from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _hub_failure(exc: BaseException, endpoint: str, what: str) -> ModelError:
    """One line for a failure of the Hub or the network: what happened and what to do."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    again = f"run the same pull again{what}"
    if isinstance(exc, OfflineModeIsEnabled):
        return ModelError(f"HF_HUB_OFFLINE is set, so the Hub is not asked; unset it and {again}", kind="unreachable")
    if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout | httpx2.ProxyError):
        return ModelError(
            f"the Hugging Face Hub ({endpoint}) cannot be reached: check the network connection (or HF_ENDPOINT) and "
            f"{again}",
            kind="unreachable",
        )
    if isinstance(exc, httpx2.TimeoutException):
        return ModelError(f"the Hub ({endpoint}) stopped sending for {stall_limit():g} s; {again}", kind="stalled")
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else 0
        kind: FailureKind = (
            "not_found"
            if status == 404
            else "auth"
            if status in (401, 403)
            else "rate_limit"
            if status == 429
            else "server"
        )
        return ModelError(
            f"the Hub ({endpoint}) answered {status or 'an error'}: {FAILURES[kind].meaning}; {again}", kind=kind
        )
    if isinstance(exc, httpx2.TransportError):
        return ModelError(f"the connection to the Hub ({endpoint}) broke off; {again}", kind="cut")
    return ModelError(
        f"the Hub ({endpoint}) answered something unexpected ({type(exc).__name__}); {again}", kind="server"
    )


def _disk_failure(exc: OSError, folder: Path) -> ModelError:
    if exc.errno == errno.ENOSPC:
        return ModelError(f"the disk of {folder} is full; free some space and run the same pull again to resume")
    why = exc.strerror or type(exc).__name__
    return ModelError(
        f"cannot write to the models folder {folder} ({why}); set CAPEL_MODELS_DIR to a folder you can write to",
        bad_input=True,
    )


def _fetch(url: str, part: Path, size: int, tqdm_class: Any, label: str) -> None:
    """Download `url` into `part`, resuming from its length with a Range request; raises StalledError, the
    network's errors and OSError. A server that ignores Range (200) is taken from the start."""
    import httpx2
    from huggingface_hub.utils import build_hf_headers, hf_raise_for_status

    limit = stall_limit()
    have = part.stat().st_size if part.exists() else 0
    if have > size:  # not a prefix of this file: start again
        part.unlink()
        have = 0
    if have == size:
        return
    headers = build_hf_headers()
    if have:
        headers["Range"] = f"bytes={have}-"
    timeout = httpx2.Timeout(limit, connect=min(limit, 10.0))
    with (
        httpx2.Client(follow_redirects=True, timeout=timeout) as client,
        client.stream("GET", url, headers=headers) as r,
    ):
        if r.status_code == 416 and have:  # the part is not a prefix the server recognises: start again
            part.unlink()
            raise httpx2.RemoteProtocolError("the Hub refused to resume; the partial file was restarted")
        hf_raise_for_status(r)
        resumed = r.status_code == 206 and r.headers.get("Content-Range", "").startswith(f"bytes {have}-")
        mode = "ab" if resumed else "wb"
        start = have if resumed else 0
        bar = (tqdm_class or _NoBar)(total=size, initial=start, unit="B", unit_scale=True, desc=label)
        try:
            with part.open(mode) as f:
                window_start, window_bytes = time.monotonic(), 0
                for chunk in r.iter_bytes():
                    f.write(chunk)
                    bar.update(len(chunk))
                    window_bytes += len(chunk)
                    now = time.monotonic()
                    if now - window_start >= limit:
                        if window_bytes < STALL_BYTES:
                            raise StalledError(window_bytes)
                        window_start, window_bytes = now, 0
        finally:
            bar.close()


class StalledError(Exception):
    """Less than STALL_BYTES arrived in the stall limit: a Hub trickling bytes would keep a pull for ever."""


class _NoBar:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def update(self, n: float = 1) -> None:
        pass

    def close(self) -> None:
        pass


def pull(name: str, *, tqdm_class: Any = None, progress: Callable[[str], None] | None = None) -> Installed:
    """Download `name` (resuming what an earlier pull left, in this process or another), check its size and
    sha256, and record it as installed.

    The one guarded path of every pull (CLI and Models page): any failure is a ModelError of one line saying
    what happened and what to do (PullInterrupted for Ctrl-C or SIGTERM); what arrived is kept in the partial
    file (`partial_path`) for the next pull, which resumes it with a Range request. A file whose checksum does not
    match is deleted."""
    item = entry(name)
    folder = models_dir() / item.name
    _prepare(folder)
    endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    say = progress or (lambda _: None)
    with _one_pull_at_a_time(folder, name):
        try:
            _check_disk(folder, item.size)
        except OSError as exc:
            raise _disk_failure(exc, folder) from None
        try:
            expected, size = _hub_sha256(item, endpoint)
        except KeyboardInterrupt:
            raise PullInterrupted(f"the pull of {name} was interrupted before its download began") from None
        except Exception as exc:
            raise _hub_failure(exc, endpoint, "") from None
        if expected is None or not size:
            raise ModelError(
                f"the Hub ({endpoint}) states no checksum or size for {item.filename}; nothing was downloaded",
                kind="server",
            )
        part = partial_path(folder, item.filename, expected)
        _clean_leftovers(folder, keep=part)
        target = folder / item.filename
        from huggingface_hub import hf_hub_url

        url = hf_hub_url(item.repo, item.filename, endpoint=endpoint)
        have = part.stat().st_size if part.exists() else 0
        resuming = f", resuming after {_mb(have)}" if have else ""
        say(f"downloading {item.filename} ({size / 1e9:.2f} GB) from {item.repo}{resuming}")

        def kept() -> str:
            return f"{_mb(_length(part))} of {_mb(size)} are kept"

        attempts = 0
        while True:
            before = _length(part)
            try:
                _fetch(url, part, size, tqdm_class, item.name)
                break
            except KeyboardInterrupt:
                raise PullInterrupted(
                    f"the pull of {name} was interrupted ({kept()}); run the same pull again to resume it"
                ) from None
            except StalledError as exc:
                raise ModelError(
                    f"the Hub ({endpoint}) sent only {exc.args[0]} bytes in {stall_limit():g} s, so the pull was "
                    f"stopped ({kept()}); run the same pull again to resume it",
                    kind="stalled",
                ) from None
            except OSError as exc:
                raise _disk_failure(exc, folder) from None
            except Exception as exc:
                failure = _hub_failure(exc, endpoint, f" to resume it ({kept()})")
                if failure.kind == "cut" and _length(part) > before and attempts < CUT_RETRIES:
                    attempts += 1  # it broke off after bytes arrived: go on from there
                    say(f"the connection broke off after {_mb(_length(part))}; resuming")
                    continue
                raise failure from None
        if part.stat().st_size != size:
            got = part.stat().st_size
            part.unlink(missing_ok=True)
            raise ModelError(
                f"{item.filename} arrived with {got} bytes, not the Hub's {size}; the file was deleted: pull again",
                kind="server",
            )
        say("checking its sha256")
        actual = _sha256(part)
        if actual != expected:
            part.unlink(missing_ok=True)
            raise ModelError(
                f"{item.filename} does not match the Hub's checksum ({actual[:12]}… is not {expected[:12]}…); "
                "the file was deleted: pull again",
                kind="server",
            )
        try:
            os.replace(part, target)
            model = Installed(item.name, item.repo, item.filename, actual, target.stat().st_size, str(target))
            (folder / MANIFEST).write_text(json.dumps(asdict(model), indent=2), encoding="utf-8")
        except OSError as exc:
            raise _disk_failure(exc, folder) from None
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

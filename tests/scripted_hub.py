"""A scripted Hugging Face Hub on 127.0.0.1 for `huggingface_hub` (pointed at it by `HF_ENDPOINT`): it serves
files at `/{repo}/resolve/{revision}/{filename}` with the headers `hf_hub_download` reads (`X-Repo-Commit`,
`X-Linked-Etag` = the file's sha256 as for an LFS file, `X-Linked-Size`, `Content-Length`) and honours `Range`
(resumed downloads). Its faults: cut the first download half way or every one, trickle one byte at a time, refuse
`Range` (answer 200 with the whole file), hold a download half way until the test lets go, state a wrong
checksum; it records every request.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class HubFile:
    data: bytes
    sha256: str = ""  # stated by the Hub; the real one unless a test states another
    cut_first: bool = False  # the first GET stops half way (the connection drops)
    cut_every: bool = False  # every GET stops half way through what it was asked for
    trickle: float = 0.0  # seconds between single bytes (a Hub that never quite stops sending)
    refuse_range: bool = False  # `Range` ignored: 200 and the whole file
    hold: threading.Event | None = None  # the first GET sends half, then waits for this before dropping
    held: threading.Event = field(default_factory=threading.Event)  # set once the held half was sent

    def __post_init__(self) -> None:
        self.sha256 = self.sha256 or hashlib.sha256(self.data).hexdigest()


@dataclass
class ScriptedHub:
    files: dict[str, HubFile] = field(default_factory=dict)  # "repo/filename" -> file
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Range header)

    def serve(self, repo: str, filename: str, data: bytes | Path, **options: object) -> HubFile:
        raw = data.read_bytes() if isinstance(data, Path) else data
        hub_file = HubFile(raw, **options)  # type: ignore[arg-type]
        self.files[f"{repo}/{filename}"] = hub_file
        return hub_file

    def start(self) -> ScriptedHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def do_GET(self) -> None:
                self._answer(body=True)

            def _answer(self, body: bool) -> None:
                hub.requests.append((self.command, self.path, self.headers.get("Range")))
                repo, _, rest = self.path.lstrip("/").partition("/resolve/")
                _, _, filename = rest.partition("/")
                hub_file = hub.files.get(f"{repo}/{filename.split('?')[0]}")
                if hub_file is None:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data, start = hub_file.data, 0
                wanted = self.headers.get("Range")
                if wanted and wanted.startswith("bytes=") and not hub_file.refuse_range:
                    start = int(wanted[6:].split("-")[0] or 0)
                self.send_response(206 if start else 200)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("X-Linked-Etag", f'"{hub_file.sha256}"')
                self.send_header("X-Linked-Size", str(len(data)))
                self.send_header("ETag", f'"{hub_file.sha256}"')
                self.send_header("Accept-Ranges", "bytes")
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                if not body:
                    return
                part = data[start:]
                if hub_file.trickle:
                    with contextlib.suppress(OSError):  # until the client gives up
                        for i in range(len(part)):
                            self.wfile.write(part[i : i + 1])
                            self.wfile.flush()
                            time.sleep(hub_file.trickle)
                    return
                if hub_file.hold is not None and not hub_file.held.is_set():
                    self.wfile.write(part[: len(part) // 2])
                    self.wfile.flush()
                    hub_file.held.set()
                    hub_file.hold.wait(60)
                    self._drop()
                    return
                if hub_file.cut_first or hub_file.cut_every:
                    hub_file.cut_first = False
                    self.wfile.write(part[: len(part) // 2])
                    self.wfile.flush()
                    self._drop()
                    return
                self.wfile.write(part)

            def _drop(self) -> None:
                self.close_connection = True
                with contextlib.suppress(OSError):  # the client went first
                    self.connection.shutdown(2)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

"""Abort a request from another thread, also while it still waits for the server's first byte.

A Stop click (or a time limit) must end a request at once, even when the model is still reading a long prompt
and has sent nothing, not even its headers. A read blocked on a socket wakes when the socket is shut down,
so the HTTP client's connections are made through `TrackingBackend`, which remembers, per thread, the network
stream that thread last read or wrote; `abort(thread)` shuts that one down. Keep-alive connections are still
reused (the stream is tracked on use, not on connect).
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
from collections.abc import Iterable
from functools import cache
from typing import Any

import httpcore2
import httpx2
import openai


def shutdown(sock: socket.socket | None) -> None:
    """Shut a socket down from any thread: the thread blocked reading it wakes at once. A duplicate of the
    descriptor is used, so a TLS socket's own state is left to the thread that owns it."""
    if sock is None:
        return
    try:
        with socket.socket(fileno=os.dup(sock.fileno())) as dup:
            dup.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed: nothing left to abort
        pass


class _Tracked(httpcore2.NetworkStream):
    """A network stream that tells its backend which thread uses it."""

    def __init__(self, inner: httpcore2.NetworkStream, owner: TrackingBackend) -> None:
        self._inner = inner
        self._owner = owner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._owner.using(self)
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._owner.using(self)
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        return _Tracked(self._inner.start_tls(ssl_context, server_hostname, timeout), self._owner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class TrackingBackend(httpcore2.NetworkBackend):
    """httpcore's own sockets, each remembered as the current stream of the thread that last used it."""

    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()
        self._current: dict[int, _Tracked] = {}
        self._lock = threading.Lock()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        stream = _Tracked(self._inner.connect_tcp(host, port, timeout, local_address, socket_options), self)
        self.using(stream)
        return stream

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        stream = _Tracked(self._inner.connect_unix_socket(path, timeout, socket_options), self)
        self.using(stream)
        return stream

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)

    def using(self, stream: _Tracked) -> None:
        with self._lock:
            self._current[threading.get_ident()] = stream

    def abort(self, thread_id: int) -> None:
        """Shut down the connection `thread_id` is using (it raises a connection error in that thread)."""
        with self._lock:
            stream = self._current.get(thread_id)
        if stream is not None:
            shutdown(stream.get_extra_info("socket"))

    def release(self, thread_id: int) -> None:
        """Forget `thread_id`'s stream once its request is over (so a late abort cannot hit its next request)."""
        with self._lock:
            self._current.pop(thread_id, None)


@cache
def _ssl_context() -> ssl.SSLContext:
    """The default TLS context, built once per process: loading the CA bundle takes tens of milliseconds (more on
    a busy machine), and every client verifies servers the same way."""
    return httpx2.create_ssl_context()


def http_client(network: TrackingBackend) -> httpx2.Client:
    """The `openai` client's default HTTP client, its connections made through `network`."""
    transport = httpx2.HTTPTransport(verify=_ssl_context())
    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)  # the openai SDK's defaults
    # httpx builds its pool without a way to pass a network backend; this pool is the one it would build.
    transport._pool = httpcore2.ConnectionPool(
        ssl_context=_ssl_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=network,
    )
    return openai.DefaultHttpxClient(transport=transport)

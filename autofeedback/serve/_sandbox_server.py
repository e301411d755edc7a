"""The sandbox's HTTP side (:mod:`autofeedback.serve._sandbox`): a threading HTTP server
with bounded connections, a reaper for slow clients, a drain on stop, and the request
handler that reads a request (bounded) and writes :meth:`Sandbox.handle`'s answer."""

from __future__ import annotations

import contextlib
import heapq
import json
import socket
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from autofeedback.serve._sandbox_requests import (
    _DRAIN_LIMIT,
    _MAX_SHOWN,
    DEFAULT_ERROR_CODES,
    MAX_BODY_BYTES,
    SeenRequest,
)

if TYPE_CHECKING:
    from autofeedback.serve._sandbox import Sandbox


class _Slot:
    """One of the server's connection slots, released at most once: a ``kill`` that lands
    while the main thread hands a connection to its thread must not release the slot a
    second time (a ``BoundedSemaphore`` then raises, and socketserver swallows the
    interrupt with it, so the sandbox ignored SIGTERM)."""

    def __init__(self, slots: threading.BoundedSemaphore) -> None:
        slots.acquire()
        self._slots = slots
        self._lock = threading.Lock()
        self._held = True

    def release(self) -> None:
        with self._lock:
            if self._held:
                self._held = False
                self._slots.release()


def _cut(text: str, size: int) -> str:
    """``text`` (the start of something ``size`` characters long), marked when cut."""
    return text if size <= _MAX_SHOWN else f"{text[:_MAX_SHOWN]}...({size} characters)"


class _Reaper:
    """One thread that shuts down connections whose request is late: a handler watches
    its connection until the request has arrived, the reaper closes it at the deadline
    (a socket timeout bounds each read, not the whole request)."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._due: list[tuple[float, int, Any]] = []
        self._watched: dict[int, float] = {}
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="sandbox-reaper", daemon=True)
        self._thread.start()

    def watch(self, conn: Any, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        with self._lock:
            self._watched[id(conn)] = deadline
            heapq.heappush(self._due, (deadline, id(conn), conn))
            self._lock.notify()

    def unwatch(self, conn: Any) -> None:
        with self._lock:
            self._watched.pop(id(conn), None)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify()

    def close_waiting(self) -> None:
        """Shut down every connection still waiting for (the rest of) a request: an idle
        keep-alive one included. Those being answered are left to finish."""
        with self._lock:
            due = [(key, conn) for _, key, conn in self._due if key in self._watched]
            self._watched.clear()
            self._due.clear()
        for _, conn in due:
            with contextlib.suppress(OSError):  # already closed
                conn.shutdown(socket.SHUT_RDWR)

    def _run(self) -> None:
        with self._lock:
            while not self._stopped:
                now = time.monotonic()
                while self._due and self._due[0][0] <= now:
                    deadline, key, conn = heapq.heappop(self._due)
                    if self._watched.get(key) == deadline:  # still reading that request
                        del self._watched[key]
                        with contextlib.suppress(OSError):  # already closed
                            conn.shutdown(socket.SHUT_RDWR)
                wait = self._due[0][0] - now if self._due else None
                self._lock.wait(wait)


class _Server(ThreadingHTTPServer):
    """One thread per connection, at most ``slots`` at once: past that, connections wait
    in the listen backlog (long enough for a burst of thousands) instead of each
    getting a thread."""

    daemon_threads = True
    request_queue_size = 4096
    slots: threading.BoundedSemaphore
    reaper: _Reaper

    def drain(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for the connections being served to end."""
        deadline = time.monotonic() + grace
        while self._held and time.monotonic() < deadline:
            time.sleep(0.05)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._held: dict[Any, _Slot] = {}
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        slot = self._held[request] = _Slot(self.slots)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._held.pop(request, None)
            slot.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            slot = self._held.pop(request, None)
            if slot is not None:
                slot.release()


class _IPv6Server(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    sandbox: Sandbox
    server_version = "autofeedback-sandbox"
    sys_version = ""
    timeout = 15
    # http.server's own answers to unparsable requests: JSON too, and nothing echoed
    error_content_type = "application/json"
    error_message_format = '{"error": "bad_http_request", "status": %(code)d}'

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the sandbox logs method, path and status itself; never headers or bodies

    def handle_one_request(self) -> None:
        # the request line, headers and body must all arrive within request_timeout
        reaper = getattr(self.server, "reaper", None)
        if reaper is not None:
            reaper.watch(self.connection, self.sandbox.request_timeout)
        try:
            super().handle_one_request()
        finally:
            if reaper is not None:
                reaper.unwatch(self.connection)

    def _serve(self) -> None:
        method = self.command.upper()
        body: bytes | None = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            length = int(headers.get("content-length", "0") or "0")
        except ValueError:
            length = -1
        if length < 0:
            self._reply(
                400,
                {},
                {
                    self.sandbox.error_key: DEFAULT_ERROR_CODES["invalid_body"][1],
                    "error": "invalid_body",
                    "message": "bad Content-Length header",
                },
                SeenRequest(method, urlsplit(self.path).path, 400, "invalid_body"),
            )
            return
        if length > MAX_BODY_BYTES:
            if length <= _DRAIN_LIMIT:
                remaining = length
                while remaining > 0:
                    chunk = self.rfile.read(min(remaining, 1 << 16))
                    if not chunk:
                        break
                    remaining -= len(chunk)
            self.close_connection = True
        elif length > 0:
            body = self.rfile.read(length)
        reaper = getattr(self.server, "reaper", None)
        if reaper is not None:
            reaper.unwatch(self.connection)  # the request is in: answering is not late
        try:
            status, extra, payload, seen = self.sandbox.handle(
                method, self.path, headers, body, oversize=length > MAX_BODY_BYTES
            )
        except Exception as exc:  # the sandbox must answer, whatever it was sent
            status, extra, seen = 500, {}, SeenRequest(method, "?", 500, "internal_error")
            payload = {"error": "internal_error", "message": type(exc).__name__}
        self._reply(status, extra, payload, seen)

    def _reply(
        self, status: int, extra: Mapping[str, str], payload: Any, seen: SeenRequest
    ) -> None:
        self.sandbox._record(seen)  # before replying, so a client that got it sees it
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command.upper() != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve
    do_HEAD = do_OPTIONS = do_TRACE = _serve

"""What the three servers (``proxy``, ``mcp-proxy``, ``sandbox``) share: one host rule
and one way to stop.

* **Host**: they bind to loopback by default and have no authentication of their own, so
  a non-loopback ``--host`` (``0.0.0.0``, a LAN address) needs ``--allow-remote``, and
  then prints a warning (:func:`check_host`).
* **Stopping**: the first SIGTERM (or Ctrl-C) stops accepting connections, lets
  in-flight requests finish for ``grace`` seconds, then cancels them; a second one ends
  the process at once (:func:`uvicorn_server`; the sandbox does the same by hand).
* **Slow clients**: a request's line and headers must arrive within
  :data:`HEADER_TIMEOUT` seconds of the connection (or of the previous answer on a
  kept-alive one), its body within :data:`BODY_TIMEOUT` seconds of its headers; past
  that the connection is closed. uvicorn has no such bound: a client sending a byte at
  a time held its connection open for good (the sandbox bounds its own the same way).
"""

from __future__ import annotations

import math
import signal
from ipaddress import ip_address
from types import FrameType
from typing import Any

from autofeedback.core._exceptions import ConfigurationError

__all__ = [
    "BODY_TIMEOUT",
    "DEFAULT_GRACE",
    "HEADER_TIMEOUT",
    "check_host",
    "die_on_second_signal",
    "is_loopback",
    "uvicorn_server",
]

#: Seconds in-flight requests get to finish after the first SIGTERM.
DEFAULT_GRACE = 10.0
#: Seconds a request's line and headers may take to arrive.
HEADER_TIMEOUT = 10.0
#: Seconds a request's body may take to arrive, from the end of its headers (32 MB, the
#: proxy's default bound, at about 0.5 MB/s).
BODY_TIMEOUT = 60.0


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost`` counts).

    >>> is_loopback("127.0.0.2"), is_loopback("::1"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool, what: str) -> str | None:
    """The one host rule: ``None`` for a loopback ``host``; for any other, a
    :class:`ConfigurationError` unless ``allow_remote``, and then the warning to print.

    >>> check_host("127.0.0.1", False, "the proxy") is None
    True
    >>> check_host("0.0.0.0", True, "the proxy")[:45]
    'warning: the proxy listens on 0.0.0.0, not on'
    """
    if is_loopback(host):
        return None
    if not allow_remote:
        raise ConfigurationError(
            f"{what} binds to a loopback address (127.0.0.1, ::1, localhost) unless "
            f"--allow-remote is given: it has no authentication of its own, and on "
            f"{host!r} anyone who can reach the port could use it"
        )
    return (
        f"warning: {what} listens on {host}, not on loopback, with no authentication: "
        "anyone who can reach this port can use it (--allow-remote)"
    )


def die_on_second_signal(sig: int) -> None:
    """End the process now with ``sig``'s default action (a second SIGTERM or Ctrl-C
    during a graceful shutdown must not be survivable)."""
    signal.signal(sig, signal.SIG_DFL)
    signal.raise_signal(sig)


def uvicorn_server(
    app: Any,
    host: str,
    port: int,
    *,
    grace: float = DEFAULT_GRACE,
    uds: str | None = None,
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
) -> Any:
    """A ``uvicorn.Server`` for ``app`` that stops within ``grace`` seconds of the first
    SIGTERM or Ctrl-C (in-flight requests are then cancelled) and at once on a second.
    uvicorn itself waits for in-flight requests without a bound and treats a second
    SIGTERM as the first (the proxy survived two with slow upstream calls in flight).
    ``uds``: serve on that Unix socket instead of ``host:port``. A client whose headers
    take longer than ``header_timeout`` seconds, or whose body takes longer than
    ``body_timeout``, is disconnected (:func:`slow_client_protocol`)."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.should_exit:
                die_on_second_signal(sig)
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        uds=uds,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=max(0, math.ceil(grace)),  # whole seconds, as uvicorn takes
        http=slow_client_protocol(header_timeout, body_timeout),
    )
    return Server(config)


def slow_client_protocol(header_timeout: float, body_timeout: float) -> type[Any]:
    """uvicorn's h11 protocol with a deadline on each request's headers and one on its
    body: a connection that misses either is closed (the app, if it was reading the
    body, sees the client disconnect). uvicorn takes a protocol class as ``http=``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class SlowClientBound(H11Protocol):
        _timer: Any = None
        _reading_body = False

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._timer = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _too_slow(self) -> None:
            self._timer = None
            if not self.transport.is_closing():
                self.transport.close()

        def _after(self, before: Any) -> None:
            cycle = self.cycle
            if cycle is not None and cycle is not before:  # a new request's headers are in
                self._reading_body = bool(cycle.more_body)
                if self._reading_body:
                    self._arm(body_timeout)
                else:
                    self._disarm()
            elif self._reading_body and cycle is not None and not cycle.more_body:
                self._reading_body = False  # and its body too
                self._disarm()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm(header_timeout)

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            self._after(before)

        def on_response_complete(self) -> None:
            before = self.cycle
            super().on_response_complete()
            if self.transport.is_closing():
                self._disarm()
            elif self.cycle is before:  # the next request's headers, from now on
                self._reading_body = False
                self._arm(header_timeout)
            else:  # a pipelined request was waiting
                self._after(before)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return SlowClientBound

"""What the three servers (``proxy``, ``mcp-proxy``, ``sandbox``) share: one host rule
and one way to stop.

* **Host**: they bind to loopback by default and have no authentication of their own, so
  a non-loopback ``--host`` (``0.0.0.0``, a LAN address) needs ``--allow-remote``, and
  then prints a warning (:func:`check_host`).
* **Stopping**: the first SIGTERM (or Ctrl-C) stops accepting connections, lets
  in-flight requests finish for ``grace`` seconds, then cancels them; a second one ends
  the process at once (:func:`uvicorn_server`; the sandbox does the same by hand).
"""

from __future__ import annotations

import math
import signal
from ipaddress import ip_address
from types import FrameType
from typing import Any

from autofeedback._exceptions import ConfigurationError

__all__ = ["DEFAULT_GRACE", "check_host", "die_on_second_signal", "is_loopback", "uvicorn_server"]

#: Seconds in-flight requests get to finish after the first SIGTERM.
DEFAULT_GRACE = 10.0


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
    app: Any, host: str, port: int, *, grace: float = DEFAULT_GRACE, uds: str | None = None
) -> Any:
    """A ``uvicorn.Server`` for ``app`` that stops within ``grace`` seconds of the first
    SIGTERM or Ctrl-C (in-flight requests are then cancelled) and at once on a second.
    uvicorn itself waits for in-flight requests without a bound and treats a second
    SIGTERM as the first (the proxy survived two with slow upstream calls in flight).
    ``uds``: serve on that Unix socket instead of ``host:port``."""
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
    )
    return Server(config)

"""Binding a server's port, with one clear error when that is impossible.

The sandbox, ``autofeedback proxy`` and ``autofeedback mcp-proxy --transport
streamable-http`` all bind before they say where they serve: a port that another server
holds is bad input (one ``autofeedback: error:`` line, exit 2), never a "serving on ..."
line followed by a server's own traceback or exit code.
"""

from __future__ import annotations

import errno
import socket

from autofeedback.core._exceptions import ConfigurationError

__all__ = ["cannot_listen", "listen"]


def cannot_listen(host: str, port: int, exc: OSError) -> str:
    """The one-line reason ``host:port`` could not be bound.

    >>> print(cannot_listen("127.0.0.1", 8787, OSError(errno.EADDRINUSE, "in use"))[:54])
    cannot listen on 127.0.0.1:8787: the port is in use (i
    """
    if exc.errno == errno.EADDRINUSE:
        reason = "the port is in use (is another server running there?); choose another with --port"
    elif exc.errno == errno.EACCES:
        reason = "permission denied (ports below 1024 need privileges); choose another with --port"
    else:
        reason = exc.strerror or str(exc)
    return f"cannot listen on {host}:{port}: {reason}"


def listen(host: str, port: int, *, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (for uvicorn's ``sockets=``).

    Raises :class:`ConfigurationError` with :func:`cannot_listen`'s line when the port is
    taken or the address is not this machine's. ``SO_REUSEADDR`` is set as uvicorn sets
    it: a port in TIME_WAIT can be reused, one with a listening server cannot. The
    socket's protocol is TCP by number (``IPPROTO_TCP``, not 0): asyncio turns Nagle's
    algorithm off (``TCP_NODELAY``) only on connections whose protocol says TCP, and with
    it on, every answer on a kept-alive connection waited ~40 ms for the client's
    delayed ACK (headers and body are two writes).

    >>> sock = listen("127.0.0.1", 0)
    >>> sock.getsockname()[0]
    '127.0.0.1'
    >>> try:
    ...     listen("127.0.0.1", sock.getsockname()[1])
    ... except ConfigurationError as exc:
    ...     print(str(exc).split(": ", 1)[1][:18])
    the port is in use
    >>> sock.close()
    """
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as exc:
        raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        raise ConfigurationError(cannot_listen(host, port, exc)) from None
    return sock

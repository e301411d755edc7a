"""Origins: which hosts a request may go to, compared as (scheme, host, port).

A request is allowed only when its origin is one of the spec's servers, the user's base
URL, or an allowlisted origin. User info is stripped before comparing; host names are
compared in one canonical form (lower case, no trailing dot, IDN as punycode, IPv6
literals compressed), and a missing port is the scheme's default (80, 443).

An allowlist entry is either an origin (``"https://api.example.com:8443"``, scheme and
port compared) or a bare host name (``"api.example.com"``: any scheme, any port), or a
``host:port`` (any scheme, that port).

>>> allowed = Origins.of(["http://127.0.0.1:8080"], extra=["example.org"])
>>> [u in allowed for u in ("http://127.0.0.1:8080/x", "http://127.0.0.1:8999/x",
...                         "https://EXAMPLE.org./y", "http://u:pw@127.0.0.1:8080/")]
[True, False, True, True]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from ipaddress import ip_address
from urllib.parse import urlsplit

__all__ = ["Origin", "Origins", "canonical_host", "origin_of"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def canonical_host(host: str) -> str | None:
    """``host`` in the one form hosts are compared in, or ``None`` when it is not a
    usable host name.

    >>> canonical_host("API.Example.COM."), canonical_host("[0:0::1]"), canonical_host("bücher.de")
    ('api.example.com', '::1', 'xn--bcher-kva.de')
    """
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host:
        return None
    try:
        return ip_address(host.split("%", 1)[0]).compressed
    except ValueError:
        pass
    host = host.rstrip(".").lower()
    if not host or any(c in host for c in "/@?#[]\\ \t\r\n"):
        return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    return host


@dataclass(frozen=True, order=True)
class Origin:
    """``(scheme, host, port)``; ``scheme``/``port`` ``None`` match any (a bare
    allowlisted host name)."""

    scheme: str | None
    host: str
    port: int | None

    def matches(self, other: Origin) -> bool:
        return (
            self.host == other.host
            and (self.scheme is None or self.scheme == other.scheme)
            and (self.port is None or self.port == other.port)
        )

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port is None else f":{self.port}"
        return f"{self.scheme}://{host}{port}" if self.scheme else f"{host}{port}"


def without_default_port(netloc: str, scheme: str) -> str:
    """``netloc`` without a port that is its scheme's default: the same server.

    >>> without_default_port("api.example.com:443", "https")
    'api.example.com'
    >>> without_default_port("[::1]:80", "http")
    '[::1]'
    >>> without_default_port("api.example.com:8443", "https")
    'api.example.com:8443'
    """
    host, sep, port = netloc.rpartition(":")
    if sep and port.isdigit() and int(port) == _DEFAULT_PORTS.get(scheme.lower()):
        return host
    return netloc


def origin_of(url: str) -> Origin | None:
    """The origin of an absolute URL, or ``None`` when it has none (relative, broken).

    >>> str(origin_of("https://user:pw@API.example.com/v1"))
    'https://api.example.com:443'
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except (ValueError, AttributeError):
        return None
    scheme = parts.scheme.lower()
    if not scheme or not parts.netloc or parts.hostname is None:
        return None
    host = canonical_host(parts.hostname)
    if host is None:
        return None
    return Origin(scheme, host, port if port is not None else _DEFAULT_PORTS.get(scheme))


def _allow_entry(entry: str) -> Origin | None:
    if "://" in entry:
        return origin_of(entry)
    try:
        parts = urlsplit("//" + entry.strip())
        port = parts.port
    except ValueError:
        return None
    host = canonical_host(parts.hostname or "")
    return None if host is None else Origin(None, host, port)


class Origins:
    """A set of allowed origins; ``url in origins`` says whether a URL may be sent.

    >>> Origins.of(["https://api.example.com"]).allows("https://api.example.com:443/x")
    True
    """

    def __init__(self, origins: Iterable[Origin]) -> None:
        self.origins = tuple(dict.fromkeys(origins))

    @classmethod
    def of(cls, servers: Iterable[str], *, extra: Iterable[str] = ()) -> Origins:
        """The origins of ``servers`` (URLs; relative ones are skipped) and the
        allowlist entries ``extra``."""
        found = [o for o in map(origin_of, servers) if o is not None]
        found += [o for o in map(_allow_entry, extra) if o is not None]
        return cls(found)

    def allows(self, url: str) -> bool:
        target = origin_of(url)
        return target is not None and any(o.matches(target) for o in self.origins)

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self.allows(url)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(str(o) for o in self.origins))

    def __len__(self) -> int:
        return len(self.origins)

    def __bool__(self) -> bool:
        return bool(self.origins)

    def __or__(self, other: Origins) -> Origins:
        return Origins(self.origins + other.origins)

    def __repr__(self) -> str:
        return f"Origins({list(self)})"


def shown_origin(url: str) -> str:
    """What to name in a message about ``url``: its origin, or its host part with user
    info removed when it has no valid origin."""
    found = origin_of(url)
    if found is not None:
        return str(found)
    netloc = url.split("://", 1)[-1].split("/", 1)[0]
    return netloc.rsplit("@", 1)[-1][:200]

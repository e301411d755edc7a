"""Remote ``$ref``s: read only from origins the user allows.

By default a spec is read without the network: a schema ``$ref`` to a URL that is not
one of the JSON Schema meta-schemas (which are bundled) is not followed; that schema is
left unchecked and the load says so (a :class:`~autofeedback.SpecWarning` naming the
reference and why), as for any reference that cannot be read.

:class:`RemoteRefs` lets references reach the origins it allows (allowlist entries, as
:mod:`autofeedback.core._origins` reads them), and may serve a URL prefix from a mirror (the
mirror's origin is allowed by naming it). Each read is bounded: no redirects, a time
limit, a size limit, a number of documents per load. It is given to the catalog
(``ApiCatalog.from_obj(doc, remote_refs=RemoteRefs(allow=[...]))``; else
``AUTOFEEDBACK_REF_ORIGINS`` names the allowed origins), which sets it for the load
through :func:`reading_remote_refs`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from autofeedback.core._origins import Origins, shown_origin

__all__ = [
    "RemoteRefRefused",
    "RemoteRefs",
    "current_remote_refs",
    "reading_remote_refs",
    "shown_ref",
]

#: The most bytes one remote schema document may hold.
MAX_REMOTE_BYTES = 4 * 1024 * 1024


def shown_ref(uri: str) -> str:
    """``uri`` as a message may show it: without user info, query or fragment, which may
    carry a credential.

    >>> shown_ref("https://u:secret@schemas.example.com/a.json?token=x#/defs/b")
    'https://schemas.example.com/a.json'
    """
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return shown_origin(uri)
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class RemoteRefRefused(Exception):
    """Why a remote document was not read (its origin is not allowed, the read failed)."""


@dataclass(frozen=True, init=False)
class RemoteRefs:
    """Where a spec's remote ``$ref``s may be read from.

    ``allow``: allowlist entries (``"https://schemas.example.com"``, a bare host name,
    ``host:port``). ``mirrors``: URL prefixes read from another place
    (``{"https://schemas.example.com/": "http://127.0.0.1:8000/"}``); a mirror's own
    origin is allowed. ``timeout`` (seconds) and ``max_documents`` bound each load.

    >>> refs = RemoteRefs(allow=["schemas.example.com"],
    ...                   mirrors={"http://localhost:1234/": "http://127.0.0.1:8000/"})
    >>> refs.target("https://schemas.example.com/a.json"), refs.target("http://localhost:1234/b")
    ('https://schemas.example.com/a.json', 'http://127.0.0.1:8000/b')
    >>> refs.target("https://evil.example.net/a.json") is None
    True
    """

    allow: tuple[str, ...] = ()
    mirrors: tuple[tuple[str, str], ...] = ()
    timeout: float = 10.0
    max_documents: int = 100
    _origins: Origins = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        allow: Iterable[str] = (),
        mirrors: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        *,
        timeout: float = 10.0,
        max_documents: int = 100,
    ) -> None:
        pairs = tuple(mirrors.items() if isinstance(mirrors, Mapping) else mirrors)
        object.__setattr__(self, "allow", tuple(allow))
        object.__setattr__(self, "mirrors", tuple((str(a), str(b)) for a, b in pairs))
        object.__setattr__(self, "timeout", float(timeout))
        object.__setattr__(self, "max_documents", int(max_documents))
        object.__setattr__(
            self, "_origins", Origins.of([b for _, b in self.mirrors], extra=self.allow)
        )

    @classmethod
    def from_env(cls) -> RemoteRefs | None:
        """The origins ``AUTOFEEDBACK_REF_ORIGINS`` allows (allowlist entries separated by
        commas or spaces), or ``None`` when it is unset or empty: how the CLI, the proxies
        and the audit are told, as ``AUTOFEEDBACK_ALLOW_OUTSIDE_REFS`` tells them about
        files.

        >>> import os; os.environ["AUTOFEEDBACK_REF_ORIGINS"] = "https://a.example, b.example"
        >>> RemoteRefs.from_env().allow
        ('https://a.example', 'b.example')
        >>> del os.environ["AUTOFEEDBACK_REF_ORIGINS"]; RemoteRefs.from_env() is None
        True
        """
        import os

        entries = os.environ.get("AUTOFEEDBACK_REF_ORIGINS", "").replace(",", " ").split()
        return cls(allow=entries) if entries else None

    def target(self, uri: str) -> str | None:
        """The URL that ``uri`` is read from (its mirror, the longest prefix first), or
        ``None`` when its origin is not allowed."""
        for prefix, to in sorted(self.mirrors, key=lambda m: -len(m[0])):
            if uri.startswith(prefix):
                uri = to + uri[len(prefix) :]
                break
        return uri if self._origins.allows(uri) else None

    def read(self, uri: str) -> Any:
        """The JSON document at ``uri``; :class:`RemoteRefRefused` says why not."""
        url = self.target(uri)
        if url is None:
            raise RemoteRefRefused(
                f"remote $ref to {shown_origin(uri)} not read: that origin is not allowed "
                "(allow it with remote_refs=RemoteRefs(allow=[...]))"
            )
        import requests

        try:
            with requests.get(
                url, timeout=self.timeout, allow_redirects=False, stream=True
            ) as response:
                if response.status_code != 200:
                    raise RemoteRefRefused(
                        f"remote $ref {shown_ref(uri)!r} not read: HTTP {response.status_code}"
                    )
                body = b"".join(_limited(response.iter_content(65536), MAX_REMOTE_BYTES, uri))
        except requests.RequestException as exc:
            raise RemoteRefRefused(
                f"remote $ref {shown_ref(uri)!r} not read: {type(exc).__name__}"
            ) from exc
        try:
            return json.loads(body.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise RemoteRefRefused(
                f"remote $ref {shown_ref(uri)!r} is not a JSON document"
            ) from exc


def _limited(chunks: Iterable[bytes], limit: int, uri: str) -> Iterator[bytes]:
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise RemoteRefRefused(
                f"remote $ref {shown_ref(uri)!r} holds more than {limit:,} bytes"
            )
        yield chunk


_CURRENT: ContextVar[RemoteRefs | None] = ContextVar("autofeedback_remote_refs", default=None)


def current_remote_refs() -> RemoteRefs | None:
    """The :class:`RemoteRefs` of the load in progress (``None``: no network)."""
    return _CURRENT.get()


@contextmanager
def reading_remote_refs(refs: RemoteRefs | None) -> Iterator[None]:
    """Loads inside the block may read remote ``$ref``s as ``refs`` allows."""
    token = _CURRENT.set(refs)
    try:
        yield
    finally:
        _CURRENT.reset(token)

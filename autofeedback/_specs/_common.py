"""Small helpers every spec loader shares."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from autofeedback._exceptions import SpecError
from autofeedback._model import Operation

__all__ = [
    "MAX_REF_BYTES",
    "Loaded",
    "join",
    "name_of",
    "read_regular_file",
    "required_names",
    "server_url",
    "text",
]

#: The most bytes one ``$ref``'d file may hold (the biggest real spec: 7 MB).
MAX_REF_BYTES = 64 * 1024 * 1024

#: What every loader returns: the operations and the server URLs.
Loaded = tuple[list[Operation], list[str]]


def join(prefix: str, part: str) -> str:
    """A place in the document for error messages: ``paths./pets.get`` or ``tools[3]``."""
    if part.startswith("["):
        return f"{prefix}{part}"
    return f"{prefix}.{part}" if prefix else part


def text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def required_names(schema: Mapping[str, Any]) -> set[str]:
    required = schema.get("required")
    if isinstance(required, list):
        return {r for r in required if isinstance(r, str)}
    return set()


def name_of(item: Mapping[str, Any], source: str, where: str, what: str) -> str:
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"{what} has no 'name'", source=source, where=where)
    return name.strip()


def server_url(url: str, source: str, where: str) -> str:
    """``url`` when every later stage can split it (``urlsplit`` and its ``port``): a
    server such as ``http://[::1`` is the spec's fault, reported at load, never an error
    on each request checked against it.

    >>> server_url("http://[::1", "spec.yaml", "servers[0].url")
    Traceback (most recent call last):
    ...
    autofeedback._exceptions.SpecError: spec.yaml: servers[0].url: not a valid URL \
'http://[::1' (Invalid IPv6 URL)
    """
    try:
        urlsplit(url).port  # noqa: B018 - the property raises on a port out of range
    except ValueError as exc:
        raise SpecError(f"not a valid URL {url!r} ({exc})", source=source, where=where) from exc
    return url


def read_regular_file(path: Path, limit: int = MAX_REF_BYTES) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes; else
    ``OSError``. Opened without blocking and checked on the open file, so a FIFO never
    hangs the reader and ``/dev/zero`` is never read.

    >>> read_regular_file(Path("/dev/null"))
    Traceback (most recent call last):
    ...
    OSError: /dev/null: not a regular file
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path}: not a regular file")
        if info.st_size > limit:
            raise OSError(f"{path}: larger than {limit:,} bytes")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{path}: larger than {limit:,} bytes")
    return data

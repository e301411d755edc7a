"""Small helpers every spec loader shares."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from autofeedback.core._exceptions import SpecError
from autofeedback.core._model import Operation

__all__ = [
    "MAX_FAULTS_SHOWN",
    "MAX_REF_BYTES",
    "Fault",
    "Loaded",
    "join",
    "name_of",
    "read_regular_file",
    "required_names",
    "server_url",
    "text",
    "unknown_key_names",
    "unknown_keys",
    "warn_faults",
]

#: The most bytes one ``$ref``'d file may hold (the biggest real spec: 7 MB).
MAX_REF_BYTES = 64 * 1024 * 1024

#: What every loader returns: the operations and the server URLs.
Loaded = tuple[list[Operation], list[str]]

#: A fault of a spec that still loads: the place in the document, and what is wrong there.
Fault = tuple[str, str]
#: Spec faults shown one by one; the rest are counted in one more warning.
MAX_FAULTS_SHOWN = 10


def unknown_key_names(obj: Mapping[str, Any], fields: frozenset[str]) -> list[str]:
    """The keys of ``obj`` that are none of its object's ``fields`` and no ``x-``
    extension (see :func:`unknown_keys`).

    >>> unknown_key_names({"operationID": "f", "x-a": 1, "tags": []}, frozenset({"tags"}))
    ['operationID']
    """
    return [
        key
        for key in obj
        if isinstance(key, str) and key not in fields and not key.startswith("x-")
    ]


def unknown_keys(obj: Mapping[str, Any], fields: frozenset[str], where: str) -> list[Fault]:
    """A fault for each key of ``obj`` that is none of its object's ``fields`` and no
    ``x-`` extension: OpenAPI ignores it, so what its author meant by it (``operationID``
    for ``operationId``: the operation loses its name) silently does not happen.

    >>> unknown_keys({"operationID": "f", "x-a": 1}, frozenset({"operationId"}), "paths./a.get")
    [('paths./a.get', "unknown key 'operationID' (did you mean 'operationId'?); it is ignored")]
    """
    import difflib

    out: list[Fault] = []
    for key in unknown_key_names(obj, fields):
        same = [f for f in fields if f.lower() == key.lower()]
        close = same or difflib.get_close_matches(key, sorted(fields), n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        out.append((where, f"unknown key {key!r}{hint}; it is ignored"))
    return out


def warn_faults(source: str, faults: list[Fault]) -> None:
    """One :class:`~autofeedback.SpecWarning` per fault (the first
    :data:`MAX_FAULTS_SHOWN`, then one counting the rest), each naming the place."""
    if not faults:
        return
    import warnings

    from autofeedback.core._exceptions import SpecWarning

    for where, what in faults[:MAX_FAULTS_SHOWN]:
        warnings.warn(SpecWarning(f"{source}: {where}: {what}"), stacklevel=3)
    if len(faults) > MAX_FAULTS_SHOWN:
        rest = len(faults) - MAX_FAULTS_SHOWN
        warnings.warn(SpecWarning(f"{source}: and {rest} more spec faults"), stacklevel=3)


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
    autofeedback.core._exceptions.SpecError: spec.yaml: servers[0].url: not a valid URL \
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

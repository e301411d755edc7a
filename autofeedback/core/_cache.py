"""Where on-disk caches live, and how they are written (one place for every cache:
parsed specs, catalog embeddings, doc indexes), and the key of a value kept in memory by
its content (a request's tool list)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import marshal
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["atomic_write", "content_key", "default_cache_dir"]

_log = logging.getLogger("autofeedback")


def default_cache_dir() -> Path:
    """``$AUTOFEEDBACK_CACHE_DIR`` or ``~/.cache/autofeedback``.

    >>> default_cache_dir().name  # doctest: +SKIP
    'autofeedback'
    """
    env = os.environ.get("AUTOFEEDBACK_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "autofeedback"


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> bool:
    """Write ``path`` through ``write(file)`` atomically (temp file + rename) so a reader
    never sees half a file. A cache that cannot be written only costs speed: errors are
    logged and give ``False``."""
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
        tmp = None
        return True
    except OSError as exc:
        _log.info("cannot write cache %s: %s", path, exc)
        return False
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def content_key(value: Any) -> tuple[str, int]:
    """A key for the JSON-like ``value`` by its content, and the size in bytes of what it
    stands for (what a size-bounded cache counts).

    Equal keys mean equal values, types included (``1``, ``1.0`` and ``True`` differ; so
    does the order of a mapping's keys). Values made of plain ``dict``, ``list``,
    ``str``, numbers, booleans and ``None`` (anything ``json.loads`` gives) are written
    by :mod:`marshal`, which writes each type and value exactly and is several times
    faster than JSON text: a proxy or an audit keys every request's tool list, and on
    clean traffic the key was half of a call's cost. Its format 2 writes no
    back-references, so equal values give equal bytes however their objects are shared,
    and the size counts every repeat. Anything else (a subclass, an object) is keyed by
    its JSON text, sorted, with ``str()`` for what JSON cannot write.

    >>> content_key({"a": [1, 2]}) == content_key({"a": [1, 2]})
    True
    >>> content_key([1]) == content_key([1.0]), content_key([1]) == content_key([True])
    (False, False)
    """
    try:
        data = b"m" + marshal.dumps(value, 2)
    except ValueError:  # not a marshal type, or nested past its depth
        text = json.dumps(value, sort_keys=True, default=str)
        data = b"j" + text.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest(), len(data)

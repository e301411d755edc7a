"""Where on-disk caches live, and how they are written (one place for every cache:
parsed specs, catalog embeddings, doc indexes)."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_write", "default_cache_dir"]

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

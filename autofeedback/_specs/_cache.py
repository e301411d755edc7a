"""Parsed specs cached on disk: a 3 MB YAML spec takes a second to parse, its pickled
operations a few milliseconds to read.

The key is the spec file's content, its resolved path, the ``outside_refs`` choice and
the source code of the loaders and the model (so a new version of autofeedback never
reads an old entry). Every other file the spec's ``$ref``s read is recorded with its
hash and checked on every hit. Entries are read with an unpickler that only rebuilds
the model's own classes, so a cache file can hold nothing else.
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import pickle
from pathlib import Path
from typing import Any

from autofeedback._cache import atomic_write, default_cache_dir
from autofeedback._model import Operation

__all__ = ["SpecCache"]

_log = logging.getLogger("autofeedback")
_ALLOWED = frozenset({"Operation", "Parameter", "Response"})


@functools.cache
def _code_version() -> str:
    """A hash of the code that decides what a loaded spec looks like."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted([*here.glob("*.py"), here.parent / "_model.py"]):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _ModelUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "autofeedback._model" and name in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a spec cache")


class SpecCache:
    """One cache entry: :meth:`get` a loaded spec or :meth:`put` one."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def open(
        cls, cache_dir: Path | bool | None, source: str, data: bytes, outside_refs: bool
    ) -> SpecCache | None:
        if cache_dir is False:
            return None
        folder = default_cache_dir() if cache_dir is None or cache_dir is True else cache_dir
        try:
            where = str(Path(source).resolve())
        except OSError:
            where = source
        key = hashlib.sha256(
            f"{_code_version()}\0{where}\0{outside_refs}\0".encode() + data
        ).hexdigest()[:32]
        return cls(Path(folder) / "specs" / f"{key}.pickle")

    def get(self) -> tuple[list[Operation], list[str]] | None:
        try:
            raw = self.path.read_bytes()
        except OSError:
            return None
        try:
            entry = _ModelUnpickler(io.BytesIO(raw)).load()
            ops, servers, files = entry
            for name, digest in files:
                if _sha(Path(name).read_bytes()) != digest:
                    return None  # a referenced file changed
        except (OSError, pickle.UnpicklingError, ValueError, TypeError, EOFError) as exc:
            _log.info("ignoring unreadable spec cache %s: %s", self.path, exc)
            return None
        if not isinstance(ops, list) or not all(isinstance(op, Operation) for op in ops):
            return None
        return ops, list(servers)

    def put(self, ops: list[Operation], servers: list[str], files: list[Path]) -> None:
        try:
            refs = [(str(p), _sha(p.read_bytes())) for p in files]
        except OSError:
            return
        payload = pickle.dumps((ops, servers, refs), protocol=pickle.HIGHEST_PROTOCOL)
        atomic_write(self.path, lambda fh: fh.write(payload))

"""Parsed specs cached on disk: a 3 MB YAML spec takes a second to parse, its pickled
operations a few milliseconds to read.

The key is the spec file's content, its resolved path, the ``outside_refs`` choice and
the source code of the loaders and the model (so a new version of autofeedback never
reads an old entry). Every other file the spec's ``$ref``s read is recorded with its
hash and checked on every hit. Entries are read with an unpickler that only rebuilds
the model's own classes, so a cache file can hold nothing else.

A cache folder is not trusted either: an entry holds its own key (an entry copied over
another spec's is refused), its shape is checked field by field, its servers must be URLs,
and the files it names are hashed only when they are regular files (never a FIFO or
``/dev/zero``) in the spec's folder (anywhere with ``outside_refs``). Anything else is a
miss: the spec is parsed again.
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autofeedback._specs._common import read_regular_file, server_url
from autofeedback.core._cache import atomic_write, default_cache_dir
from autofeedback.core._model import Operation, Parameter, Response

__all__ = ["SpecCache"]

_log = logging.getLogger("autofeedback")
_ALLOWED = frozenset({"Operation", "Parameter", "Response"})


@functools.cache
def _code_version() -> str:
    """A hash of the code that decides what a loaded spec looks like."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted([*here.glob("*.py"), here.parent / "core" / "_model.py"]):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _ModelUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "autofeedback.core._model" and name in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a spec cache")


class SpecCache:
    """One cache entry: :meth:`get` a loaded spec or :meth:`put` one."""

    def __init__(
        self, path: Path, key: str = "", folder: Path | None = None, outside_refs: bool = False
    ) -> None:
        self.path = path
        self.key = key
        self.folder = folder  # the spec's folder: the only place its $ref'd files may be
        self.outside_refs = outside_refs

    @classmethod
    def open(
        cls, cache_dir: Path | bool | None, source: str, data: bytes, outside_refs: bool
    ) -> SpecCache | None:
        if cache_dir is False:
            return None
        folder = default_cache_dir() if cache_dir is None or cache_dir is True else cache_dir
        try:
            resolved: Path | None = Path(source).resolve()
        except OSError:
            resolved = None
        where = str(resolved) if resolved is not None else source
        key = hashlib.sha256(
            f"{_code_version()}\0{where}\0{outside_refs}\0".encode() + data
        ).hexdigest()[:32]
        spec_folder = resolved.parent if resolved is not None else None
        return cls(Path(folder) / "specs" / f"{key}.pickle", key, spec_folder, outside_refs)

    def get(self) -> tuple[list[Operation], list[str], list[tuple[str, str]]] | None:
        try:
            raw = read_regular_file(self.path)
        except OSError:
            return None
        try:
            entry = _ModelUnpickler(io.BytesIO(raw)).load()
            found = self._checked(entry)
        except Exception as exc:  # a cache entry is untrusted: any fault is a miss
            _log.info("ignoring unreadable spec cache %s: %s", self.path, exc)
            return None
        if found is None:
            _log.info("ignoring spec cache %s: stale or not this spec's entry", self.path)
        return found

    def _checked(
        self, entry: Any
    ) -> tuple[list[Operation], list[str], list[tuple[str, str]]] | None:
        if not (isinstance(entry, tuple) and len(entry) == 5 and entry[0] == self.key):
            return None
        _, ops, servers, files, faults = entry
        if not isinstance(faults, list) or not all(
            isinstance(f, tuple) and len(f) == 2 and all(isinstance(x, str) for x in f)
            for f in faults
        ):
            return None
        if not isinstance(ops, list) or not all(_is_operation(op) for op in ops):
            return None
        if not isinstance(servers, list) or not all(isinstance(s, str) for s in servers):
            return None
        for s in servers:
            server_url(s, "<cache>", "servers")  # SpecError: a miss
        if not isinstance(files, list):
            return None
        for item in files:
            if not (isinstance(item, tuple) and len(item) == 2):
                return None
            name, digest = item
            if not isinstance(name, str) or not isinstance(digest, str):
                return None
            path = Path(name)
            if not self._may_read(path) or _sha(read_regular_file(path)) != digest:
                return None  # a referenced file changed, or the entry names another
        return ops, servers, faults

    def _may_read(self, path: Path) -> bool:
        if not path.is_absolute():
            return False
        if self.outside_refs:
            return True
        return self.folder is not None and path.resolve().is_relative_to(self.folder)

    def put(
        self,
        ops: list[Operation],
        servers: list[str],
        files: list[Path],
        faults: Sequence[tuple[str, str]] = (),
    ) -> None:
        try:
            refs = [(str(p), _sha(read_regular_file(p))) for p in files]
        except OSError:
            return
        entry = (self.key, ops, servers, refs, [tuple(f) for f in faults])
        payload = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        atomic_write(self.path, lambda fh: fh.write(payload))


def _is_str_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_parameter(p: Any) -> bool:
    return (
        type(p) is Parameter
        and isinstance(p.name, str)
        and isinstance(p.location, str)
        and isinstance(p.schema, dict)
        and isinstance(p.required, bool)
        and isinstance(p.description, str)
        and _is_str_or_none(p.style)
        and (p.explode is None or isinstance(p.explode, bool))
    )


def _is_response(r: Any) -> bool:
    return (
        type(r) is Response
        and isinstance(r.status, str)
        and isinstance(r.description, str)
        and (r.schema is None or isinstance(r.schema, dict))
    )


def _is_operation(op: Any) -> bool:
    """The shape the loaders give: the checks read these fields without looking."""
    return (
        type(op) is Operation
        and isinstance(op.name, str)
        and isinstance(op.description, str)
        and _is_str_or_none(op.method)
        and _is_str_or_none(op.path)
        and isinstance(op.parameters, tuple)
        and all(_is_parameter(p) for p in op.parameters)
        and isinstance(op.auth_parameters, tuple)
        and all(_is_parameter(p) for p in op.auth_parameters)
        and isinstance(op.responses, tuple)
        and all(_is_response(r) for r in op.responses)
        and (op.body_schema is None or isinstance(op.body_schema, dict))
        and isinstance(op.body_required, bool)
        and _is_str_or_none(op.body_media)
        and isinstance(op.fixed_query, tuple)
        and all(
            isinstance(q, tuple) and len(q) == 2 and all(isinstance(x, str) for x in q)
            for q in op.fixed_query
        )
        and isinstance(op.source, str)
        and isinstance(op.tags, tuple)
        and all(isinstance(t, str) for t in op.tags)
        and (op.read_only is None or isinstance(op.read_only, bool))
        and (op.destructive is None or isinstance(op.destructive, bool))
        and isinstance(op.unread, tuple)
        and all(isinstance(u, str) for u in op.unread)
    )

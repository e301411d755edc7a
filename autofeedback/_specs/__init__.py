"""Spec loaders: every supported API-doc format into :class:`~autofeedback.Operation` values.

Formats, auto-detected by :func:`load_spec`, one module each:

* ``_openapi3``: OpenAPI 3.0 / 3.1 (JSON or YAML), compositions and form bodies included;
* ``_swagger2``: Swagger 2.0 (the OpenAPI 3 loader with Swagger's places for things);
* ``_functions``: OpenAI tools, bare function lists, one function, ``{"tools": [...]}`` /
  ``{"functions": [...]}``, BFCL functions, MCP tools (``inputSchema``/``outputSchema``);
* ``_apibank``: API-Bank docs (``{"name", "description", "input_parameters", ...}``).

Shared parts: ``_text`` (JSON / YAML / JSON Lines text, alias bombs refused), ``_refs``
(``$ref`` resolution, each reference expanded once), ``_cache`` (parsed specs cached
on disk, keyed by the file's content).

Anything else raises :class:`~autofeedback.SpecError` naming the source and the place.
Real-world specs are often slightly invalid (missing ``in`` defaults, no leading ``/``
on a path, dangling ``required`` names); those load. Only what makes an operation
impossible to describe (no ``name`` on a parameter, a ``$ref`` cycle, a document that is
not a spec at all) or what the loader refuses to read (a URL, a file outside the spec's
folder) is an error. What loads but could not be read (a ``$ref`` whose target is not
there, in the document or in another file; an unknown key such as ``operationID``) is a
:class:`~autofeedback.SpecWarning` naming the place, on every load (a cached spec keeps
its faults), and the place is in :attr:`~autofeedback.Operation.unread` of each
operation whose documentation it is part of.

May import ``core`` only; the catalog (``catalog``) loads specs through it.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autofeedback._specs._apibank import api_bank_optional, api_bank_type
from autofeedback._specs._cache import SpecCache
from autofeedback._specs._common import Fault, Loaded, warn_faults
from autofeedback._specs._functions import load_callables
from autofeedback._specs._openapi3 import OpenApi3Loader
from autofeedback._specs._regexes import drop_invalid_patterns
from autofeedback._specs._swagger2 import SwaggerLoader
from autofeedback._specs._text import bound_depth, parse_json_lines, parse_text
from autofeedback.core._exceptions import SpecError
from autofeedback.core._model import Operation

__all__ = ["api_bank_optional", "api_bank_type", "load_spec", "load_spec_file"]


def load_spec(
    document: Any,
    *,
    source: str,
    base_dir: Path | None = None,
    outside_refs: bool = False,
) -> Loaded:
    """Load an already-parsed spec document (or its JSON/YAML text), detecting the format.

    Returns the operations and the server URLs. ``base_dir`` lets ``$ref`` reach other
    files in that folder (and anywhere with ``outside_refs``).

    >>> ops, servers = load_spec([{"name": "ping", "parameters": {"type": "dict",
    ...     "properties": {"n": {"type": "float"}}, "required": ["n"]}}], source="<tools>")
    >>> ops[0].parameters[0].schema, ops[0].parameters[0].required
    ({'type': 'number'}, True)
    """
    with _gc_paused():
        ops, servers, _, faults = _load(document, source, base_dir, outside_refs)
    warn_faults(source, faults)
    return ops, servers


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """The cycle collector off while a spec loads (or unpickles). A load makes a million
    objects for an 8.6 MB spec and frees none of them, so each full collection it sets
    off walks them all for nothing: two of them were 0.13 s of a 0.6 s load. Reference
    counting still frees what the load drops; a cycle made meanwhile waits for the next
    collection. Nested and concurrent loads leave the collector as the outermost found
    it (only a speed matter if two threads overlap)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _load(
    document: Any,
    source: str,
    base_dir: Path | None,
    outside_refs: bool,
    *,
    bounded: bool = False,
) -> tuple[list[Operation], list[str], list[Path], list[Fault]]:
    """The operations, servers, the other files the spec's ``$ref``s read, and the
    faults found on the way. ``bounded``: ``document`` comes from :func:`parse_text`,
    which bounded its depth already (a walk of a 3 MB spec is 0.1 s)."""
    if isinstance(document, (str, bytes)):
        text = document.decode("utf-8", "replace") if isinstance(document, bytes) else document
        document = parse_text(text, source)
    elif isinstance(document, (dict, list)) and not bounded:
        bound_depth(document, source)  # parsed elsewhere (a log record's tools): same bound
    files: list[Path] = []
    faults: list[Fault] = []
    try:
        ops, servers = _dispatch(document, source, base_dir, outside_refs, files, faults)
    except SpecError:
        raise
    except RecursionError as exc:
        raise SpecError("spec is nested too deeply", source=source) from exc
    except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
        # A safety net: the loaders check shapes where they read them, but a spec is
        # untrusted input and must never surface as a traceback.
        raise SpecError(f"malformed spec ({type(exc).__name__}: {exc})", source=source) from exc
    if not ops:
        raise SpecError("the spec describes no operations", source=source)
    ops = drop_invalid_patterns(_dedupe(ops), source)
    return ops, list(dict.fromkeys(servers)), files, faults


def load_spec_file(
    path: Path, *, outside_refs: bool | None = None, cache_dir: Path | bool | None = None
) -> Loaded:
    """Load a spec file: JSON or YAML (recognised by content), or ``.jsonl`` with one
    API-Bank doc or function per line.

    The loaded operations are cached on disk (``cache_dir``, default
    ``$AUTOFEEDBACK_CACHE_DIR/specs``; ``False`` turns the cache off), keyed by the
    content of the file and of every file its ``$ref``s read: a big spec is read once.

    ``$ref``s may read files in the spec's folder only, unless ``outside_refs`` (default:
    the environment variable ``AUTOFEEDBACK_ALLOW_OUTSIDE_REFS=1``) allows any file.

    >>> ops, servers = load_spec_file(Path("tests/data/specs/swagger.json"))
    >>> [op.name for op in ops], servers[0]
    (['searchBooks', 'addBook', 'POST /books/{isbn}/cover'], 'https://library.example.org/api/v2')
    """
    if outside_refs is None:
        outside_refs = os.environ.get("AUTOFEEDBACK_ALLOW_OUTSIDE_REFS", "") == "1"
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SpecError(f"cannot read the file: {exc.strerror or exc}", source=source) from exc
    cache = SpecCache.open(cache_dir, source, data, outside_refs)
    with _gc_paused():
        hit = cache.get() if cache is not None else None
        if hit is not None:
            ops, servers, faults = hit
        else:
            ops, servers, faults = _load_file(data, Path(path), source, outside_refs, cache)
    warn_faults(source, faults)  # a fault is the spec's, cached or not
    return ops, servers


def _load_file(
    data: bytes, path: Path, source: str, outside_refs: bool, cache: SpecCache | None
) -> tuple[list[Operation], list[str], list[Fault]]:
    """A spec file's operations, servers and faults read from its bytes (and written to
    ``cache``)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(f"not UTF-8 text (byte {exc.start})", source=source) from exc
    bounded = path.suffix.lower() not in (".jsonl", ".ndjson")
    if not bounded:
        document: Any = parse_json_lines(text, source)
    else:
        document = parse_text(text, source)
    ops, servers, files, faults = _load(
        document, source, path.resolve().parent, outside_refs, bounded=bounded
    )
    if cache is not None:
        cache.put(ops, servers, files, faults)
    return ops, servers, faults


def _dispatch(
    document: Any,
    source: str,
    base_dir: Path | None,
    outside_refs: bool,
    files: list[Path],
    faults: list[Fault],
) -> Loaded:
    if isinstance(document, dict):
        if "openapi" in document or "swagger" in document or "paths" in document:
            swagger = "swagger" in document and "openapi" not in document
            kind = SwaggerLoader if swagger else OpenApi3Loader
            loader = kind(document, source, base_dir, outside_refs=outside_refs)
            loaded = loader.load()
            files.extend(loader.resolver.files)
            # a file that could not be read is recorded too: a missing one keeps the load
            # out of the cache (it cannot be hashed), so that putting it back is seen
            files.extend(loader.resolver.unreadable)
            faults.extend(dict.fromkeys(loader.faults))
            return loaded
        for key in ("tools", "functions"):
            if isinstance(document.get(key), list):
                return load_callables(document[key], source, prefix=f"{key}", faults=faults), []
        return load_callables([document], source, prefix="", single=True, faults=faults), []
    if isinstance(document, list):
        if not document:
            raise SpecError("the spec is an empty list", source=source)
        return load_callables(document, source, prefix="", faults=faults), []
    raise SpecError(
        f"not a spec: expected an object or a list, got {type(document).__name__}",
        source=source,
    )


def _dedupe(ops: list[Operation]) -> list[Operation]:
    """Keep the first HTTP operation of each name: later ones would be unreachable by
    name. Tools (function style) are all kept: a name listed twice is the catalog's to
    set aside and say so (:attr:`ApiCatalog.set_aside`), never a silent first-wins."""
    seen: set[str] = set()
    out: list[Operation] = []
    for op in ops:
        if op.method is None and op.path is None:
            out.append(op)
        elif op.name not in seen:
            seen.add(op.name)
            out.append(op)
    return out

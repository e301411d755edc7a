"""``ApiCatalog``: every operation of one or more specs, with the look-ups checks need."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from autofeedback._model import Operation

__all__ = ["ApiCatalog"]

_TEMPLATE_VAR = re.compile(r"\{([^{}/]+)\}")


class ApiCatalog:
    """The APIs a request may call, loaded from one or more specs.

    >>> catalog = ApiCatalog.from_tools([{"name": "get_weather", "description": "Weather",
    ...     "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
    ...                    "required": ["city"]}}])
    >>> catalog.get("get_weather").parameters[0].name
    'city'
    """

    def __init__(
        self,
        operations: Iterable[Operation],
        *,
        servers: Iterable[str] = (),
        source: str = "<memory>",
    ) -> None:
        ops = tuple(operations)
        self.operations: tuple[Operation, ...] = ops
        self.servers: tuple[str, ...] = tuple(dict.fromkeys(servers))
        self.source = source
        self._by_name: dict[str, Operation] = {}
        for op in ops:
            self._by_name.setdefault(op.name, op)
        self._templates = _compile_templates(ops)

    # -- construction -------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> ApiCatalog:
        """Load an OpenAPI 3.x / Swagger 2.0 document (JSON or YAML), an OpenAI/BFCL tool
        list or API-Bank docs from a file. Raises :class:`SpecError` naming the file and
        the place on any problem."""
        from autofeedback._specs import load_spec_file

        ops, servers = load_spec_file(Path(path))
        return cls(ops, servers=servers, source=str(path))

    @classmethod
    def from_obj(cls, document: Any, *, source: str = "<spec>") -> ApiCatalog:
        """Load an already-parsed spec document of any supported format."""
        from autofeedback._specs import load_spec

        ops, servers = load_spec(document, source=source)
        return cls(ops, servers=servers, source=source)

    @classmethod
    def from_tools(cls, tools: Any, *, source: str = "<tools>") -> ApiCatalog:
        """Load an OpenAI tool list, a bare function list or BFCL functions."""
        return cls.from_obj(tools, source=source)

    @classmethod
    def merge(cls, *catalogs: ApiCatalog) -> ApiCatalog:
        """One catalog holding the operations of all; the first wins on a name clash."""
        ops = [op for c in catalogs for op in c.operations]
        servers = [s for c in catalogs for s in c.servers]
        source = "+".join(c.source for c in catalogs)
        return cls(ops, servers=servers, source=source)

    # -- look-ups -------------------------------------------------------------------

    def __iter__(self) -> Iterator[Operation]:
        return iter(self.operations)

    def __len__(self) -> int:
        return len(self.operations)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __repr__(self) -> str:
        return f"<ApiCatalog {self.source!r}: {len(self)} operations>"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def get(self, name: str) -> Operation | None:
        return self._by_name.get(name)

    @cached_property
    def fingerprint(self) -> str:
        """A stable hash of the loaded operations: the key of on-disk caches."""
        payload = json.dumps(
            [asdict(op) for op in self.operations], sort_keys=True, default=repr
        ).encode()
        return hashlib.sha256(payload).hexdigest()[:16]

    @cached_property
    def parameter_owners(self) -> Mapping[str, tuple[Operation, ...]]:
        """Parameter name -> the operations that document it."""
        owners: dict[str, list[Operation]] = {}
        for op in self.operations:
            for p in op.parameters:
                owners.setdefault(p.name, []).append(op)
        return {k: tuple(v) for k, v in owners.items()}

    @cached_property
    def hosts(self) -> frozenset[str]:
        """Host names (``host`` or ``host:port``) of the spec's servers."""
        out: set[str] = set()
        for s in self.servers:
            netloc = urlsplit(s).netloc
            if netloc:
                out.add(netloc.lower())
                out.add(netloc.split("@")[-1].split(":")[0].lower())
        return frozenset(out)

    def relative_path(self, url: str) -> str:
        """The path of ``url`` relative to the spec's server, e.g.
        ``https://api.themoviedb.org/3/movie/550?x=1`` -> ``/movie/550``."""
        path = urlsplit(url).path or "/"
        for server in self.servers:
            prefix = urlsplit(server).path.rstrip("/")
            if prefix and (path == prefix or path.startswith(prefix + "/")):
                return path[len(prefix) :] or "/"
        return path

    def match_path(self, path: str) -> list[tuple[Operation, dict[str, str]]]:
        """Every operation whose path template matches ``path`` (any method), the most
        specific template (most literal characters) first."""
        path = path.rstrip("/") or "/"
        found: list[tuple[int, Operation, dict[str, str]]] = []
        for regex, literal_len, op in self._templates:
            m = regex.fullmatch(path)
            if m:
                found.append((literal_len, op, m.groupdict()))
        found.sort(key=lambda t: -t[0])
        # keep only the most specific template: /movie/latest beats /movie/{id}
        if found:
            best = found[0][0]
            best_path = found[0][1].path
            found = [t for t in found if t[0] == best and t[1].path == best_path]
        return [(op, params) for _, op, params in found]

    def match_http(self, method: str, url: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation serving ``method url`` and the path parameters, or ``None``."""
        path = self.relative_path(url)
        for op, params in self.match_path(path):
            if op.method == method.upper():
                return op, params
        return None


def _compile_templates(ops: Iterable[Operation]) -> list[tuple[_NamedRegex, int, Operation]]:
    out: list[tuple[_NamedRegex, int, Operation]] = []
    for op in ops:
        if not op.is_http:
            continue
        assert op.path is not None
        template = op.path.rstrip("/") or "/"
        names: list[str] = []
        pattern = ""
        pos = 0
        for m in _TEMPLATE_VAR.finditer(template):
            pattern += re.escape(template[pos : m.start()])
            var = m.group(1)
            group = f"p{len(names)}"
            names.append(var)
            pattern += f"(?P<{group}>[^/]+)"
            pos = m.end()
        pattern += re.escape(template[pos:])
        literal_len = len(_TEMPLATE_VAR.sub("", template))
        out.append((_NamedRegex(re.compile(pattern), names), literal_len, op))
    return out


class _NamedRegex:
    """A compiled template whose groups map back to the template's variable names
    (which need not be valid regex group names: ``{movie-id}``)."""

    def __init__(self, regex: re.Pattern[str], names: list[str]) -> None:
        self._regex = regex
        self._names = names

    def fullmatch(self, text: str) -> _Match | None:
        m = self._regex.fullmatch(text)
        return _Match(m, self._names) if m else None


class _Match:
    def __init__(self, m: re.Match[str], names: list[str]) -> None:
        self._m = m
        self._names = names

    def groupdict(self) -> dict[str, str]:
        return {name: self._m.group(f"p{i}") for i, name in enumerate(self._names)}

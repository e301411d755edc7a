"""``ApiCatalog``: every operation of one or more specs, with the look-ups checks need."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import fields, is_dataclass
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

import re2  # type: ignore[import-untyped]

from autofeedback.core._model import Operation

if TYPE_CHECKING:
    from autofeedback._specs._remote import RemoteRefs

__all__ = ["ApiCatalog", "set_aside_tools"]

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
        set_aside: Mapping[str, str] | None = None,
    ) -> None:
        ops = tuple(operations)
        self.operations: tuple[Operation, ...] = ops
        self.servers: tuple[str, ...] = tuple(dict.fromkeys(servers))
        self.source = source
        #: the tool names of the list that are never matched to a call, with why (a
        #: name that looks like another, one listed twice: :mod:`autofeedback.catalog._tool_names`);
        #: their tools are not among :attr:`operations`
        self.set_aside: dict[str, str] = dict(set_aside or {})
        self._by_name: dict[str, Operation] = {}
        for op in ops:
            self._by_name.setdefault(op.name, op)
        self._router = _Router(ops)
        self._last_match: tuple[Any, tuple[Operation, dict[str, str]] | None] | None = None

    # -- construction -------------------------------------------------------------

    @classmethod
    def from_file(
        cls,
        path: str | PathLike[str],
        *,
        outside_refs: bool | None = None,
        remote_refs: RemoteRefs | None = None,
    ) -> ApiCatalog:
        """Load an OpenAPI 3.x / Swagger 2.0 document (JSON or YAML), an OpenAI/BFCL tool
        list or API-Bank docs from a file. Raises :class:`SpecError` naming the file and
        the place on any problem.

        The loaded spec is cached on disk (``$AUTOFEEDBACK_CACHE_DIR/specs``), keyed by the
        content of every file it reads. ``$ref``s stay inside the spec's folder unless
        ``outside_refs`` (or ``AUTOFEEDBACK_ALLOW_OUTSIDE_REFS=1``) allows any file.
        A remote ``$ref`` (a URL) is read only from the origins ``remote_refs`` (or
        ``AUTOFEEDBACK_REF_ORIGINS``) allows; then the spec is not cached (what a URL
        serves may change)."""
        from autofeedback._specs import load_spec_file
        from autofeedback._specs._remote import RemoteRefs, reading_remote_refs

        if remote_refs is None:
            remote_refs = RemoteRefs.from_env()
        with reading_remote_refs(remote_refs):
            ops, servers = load_spec_file(
                Path(path),
                outside_refs=outside_refs,
                cache_dir=False if remote_refs is not None else None,
            )
        kept, aside = set_aside_tools(ops)
        catalog = cls(kept, servers=servers, source=str(path), set_aside=aside)
        _warn_unknown_types(catalog)
        _warn_set_aside(catalog)
        return catalog

    @classmethod
    def from_obj(
        cls, document: Any, *, source: str = "<spec>", remote_refs: RemoteRefs | None = None
    ) -> ApiCatalog:
        """Load an already-parsed spec document of any supported format.

        A schema ``$ref`` to a URL (other than a JSON Schema meta-schema, which is
        bundled) is read only from the origins ``remote_refs`` (or the environment
        variable ``AUTOFEEDBACK_REF_ORIGINS``) allows; by default none, and that schema is
        left unchecked with a :class:`SpecWarning` saying so."""
        from autofeedback._specs import load_spec
        from autofeedback._specs._remote import RemoteRefs, reading_remote_refs

        if remote_refs is None:
            remote_refs = RemoteRefs.from_env()
        with reading_remote_refs(remote_refs):
            ops, servers = load_spec(document, source=source)
        kept, aside = set_aside_tools(ops)
        catalog = cls(kept, servers=servers, source=source, set_aside=aside)
        _warn_unknown_types(catalog)
        _warn_set_aside(catalog)
        return catalog

    @classmethod
    def from_tools(
        cls, tools: Any, *, source: str = "<tools>", remote_refs: RemoteRefs | None = None
    ) -> ApiCatalog:
        """Load an OpenAI tool list, a bare function list, BFCL functions or MCP tools.

        A tool whose name cannot be told from another by eye (letters of two scripts, an
        invisible character, one NFKC changes), and every tool of a name listed twice as
        two different tools, is set aside (:attr:`set_aside`, with a :class:`SpecWarning`):
        never matched to a call, and a call naming it exactly gets a finding.

        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     c = ApiCatalog.from_tools([{"name": n, "description": d, "parameters": {}}
        ...         for n, d in (("read_file", ""), ("ping", "a"), ("ping", "b"))])
        >>> c.names, c.set_aside
        (('read_file',), {'ping': 'is listed 2 times, as different tools'})
        """
        return cls.from_obj(tools, source=source, remote_refs=remote_refs)

    def to_tools(self) -> list[dict[str, Any]]:
        """Every operation as an OpenAI ``tools`` entry (see
        :func:`autofeedback.catalog._schema.to_tools`): what a server's native tool calling
        takes, from an OpenAPI document or any other spec.

        >>> ApiCatalog.from_tools([{"name": "ping", "parameters": {"type": "object",
        ...     "properties": {}}}]).to_tools()[0]["function"]["name"]
        'ping'
        """
        from autofeedback.catalog._schema import to_tools

        return to_tools(self)

    @classmethod
    def merge(cls, *catalogs: ApiCatalog) -> ApiCatalog:
        """One catalog holding the operations of all; the first wins on a name clash."""
        ops = [op for c in catalogs for op in c.operations]
        servers = [s for c in catalogs for s in c.servers]
        source = "+".join(c.source for c in catalogs)
        aside: dict[str, str] = {}
        for c in catalogs:
            for name, why in c.set_aside.items():
                aside.setdefault(name, why)
        return cls(ops, servers=servers, source=source, set_aside=aside)

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
        """A stable hash of the loaded operations: the key of on-disk caches. Schemas
        share objects (each ``$ref`` is expanded once), so each object is hashed once."""
        memo: dict[int, bytes] = {}
        digest = hashlib.sha256()
        for op in self.operations:
            digest.update(_digest(op, memo))
        return digest.hexdigest()[:16]

    @cached_property
    def bounded_patterns(self) -> bool:
        """Whether a schema of the catalog has a ``pattern`` that RE2 cannot run (a
        back-reference, a lookaround): checking a call may then take up to
        :data:`~autofeedback.core._patterns.CHECK_BUDGET` seconds, so servers check such
        calls off their event loop.

        >>> tools = [{"name": "f", "parameters": {"type": "object",
        ...     "properties": {"a": {"type": "string", "pattern": "^(a)\\\\1$"}}}}]
        >>> ApiCatalog.from_tools(tools).bounded_patterns
        True
        """
        from autofeedback.core._patterns import has_bounded

        return any(
            has_bounded([op.body_schema, *(p.schema for p in op.parameters)])
            for op in self.operations
        )

    def twins(self, op: Operation) -> tuple[Operation, ...]:
        """The operations documented on ``op``'s method and path, ``op`` first (Box's
        ``/files/{id}#add_shared_link`` beside ``/files/{id}``); just ``(op,)`` mostly."""
        if not op.is_http:
            return (op,)
        found = self._twins.get((op.method or "", op.path or ""), ())
        return (op, *(o for o in found if o is not op)) if len(found) > 1 else (op,)

    @cached_property
    def _twins(self) -> dict[tuple[str, str], tuple[Operation, ...]]:
        out: dict[tuple[str, str], list[Operation]] = {}
        for op in self.operations:
            if op.is_http:
                out.setdefault((op.method or "", op.path or ""), []).append(op)
        return {k: tuple(v) for k, v in out.items()}

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
        specific template (most literal characters) first.

        >>> catalog = ApiCatalog.from_obj({"openapi": "3.0.0", "paths": {
        ...     "/movie/{id}": {"get": {"operationId": "movie", "responses": {}}},
        ...     "/movie/latest": {"get": {"operationId": "latest", "responses": {}}}}})
        >>> [(op.name, params) for op, params in catalog.match_path("/movie/latest")]
        [('latest', {}), ('movie', {'id': 'latest'})]
        """
        return [(op, params) for _, op, params in self._matches(path)]

    def _matches(self, path: str) -> list[tuple[int, Operation, dict[str, str]]]:
        """The router's matches of ``path``, where a custom method (``/jobs/{job}:cancel``,
        Google's style) is a literal of its template, never the end of a parameter's
        value: ``/jobs/j1:cancel`` is not ``/jobs/{job}`` with ``job = "j1:cancel"`` (a
        ``GET`` of it is a cancel sent with the wrong method, not a read)."""
        found = self._router.match(path)
        verbs = {v for _, op, _ in found for v in _CUSTOM_METHOD.findall(op.path or "")}
        if not verbs:
            return found
        return [
            t
            for t in found
            if not any(value.endswith(verb) for value in t[2].values() for verb in verbs)
        ]

    def match_http(
        self, method: str, url: str, names: Iterable[str] = ()
    ) -> tuple[Operation, dict[str, str]] | None:
        """The operation serving ``method url`` and the path parameters, or ``None``.

        The most specific template that accepts the method wins (``PUT /a/{x}`` serves
        ``PUT /a/b`` although ``GET /a/b`` is documented). Operations documented twice
        for one method and template (``/responses?beta=true`` beside ``/responses``, Box's
        ``/web_links/{id}#add_shared_link``) are told apart by the request: the one whose
        fixed query it carries, then the one documenting most of the parameter ``names``
        it sends (query keys of ``url`` are counted too).
        """
        key = (method, url, tuple(names))
        last = self._last_match  # the scanner asks twice per request: once to plan, once to check
        if last is not None and last[0] == key:
            return last[1]
        found = self._match_http(method, url, key[2])
        self._last_match = (key, found)
        return found

    def _match_http(
        self, method: str, url: str, names: tuple[str, ...]
    ) -> tuple[Operation, dict[str, str]] | None:
        split = urlsplit(url)
        method = method.upper()
        candidates: list[tuple[int, Operation, dict[str, str]]] = [
            t for t in self._matches(self.relative_path(url)) if t[1].method == method
        ]
        if not candidates:
            return None
        best = candidates[0][0]
        tied = [(op, params) for size, op, params in candidates if size == best]
        if len(tied) == 1:
            return tied[0]
        query = parse_qsl(split.query, keep_blank_values=True)
        sent = {k for k, _ in query} | set(names)
        pairs = set(query)

        def fit(entry: tuple[Operation, dict[str, str]]) -> tuple[bool, int, int]:
            op = entry[0]
            fixed = set(op.fixed_query)
            carried = fixed <= pairs
            return (
                carried,
                len(fixed) if carried else 0,
                len(sent & {p.name for p in op.parameters}),
            )

        return max(tied, key=fit)


#: a custom method after a path parameter: ``{job}:cancel`` -> ``:cancel``
_CUSTOM_METHOD = re.compile(r"\}(:[A-Za-z][A-Za-z0-9_]*)(?=/|$)")


def _digest(value: Any, memo: dict[int, bytes]) -> bytes:
    """A content hash of JSON-like data (and the model's dataclasses), linear in the
    number of distinct objects. Memoised by ``id``: only for objects that outlive the
    call (the catalog's own), never for temporaries whose ids Python reuses."""
    if isinstance(value, (dict, list, tuple)) or is_dataclass(value):
        key = id(value)
        hit = memo.get(key)
        if hit is not None:
            return hit
        h = hashlib.blake2b(digest_size=16)
        if is_dataclass(value) and not isinstance(value, type):
            h.update(type(value).__name__.encode())
            for f in fields(value):
                h.update(f.name.encode())
                h.update(_digest(getattr(value, f.name), memo))
        elif isinstance(value, dict):
            h.update(b"{")
            for k in sorted(value, key=str):
                h.update(_digest(str(k), memo))
                h.update(_digest(value[k], memo))
        elif isinstance(value, (list, tuple)):
            h.update(b"[")
            for item in value:
                h.update(_digest(item, memo))
        out = h.digest()
        memo[key] = out
        return out
    return hashlib.blake2b(repr(value).encode(), digest_size=16).digest()


class _Node:
    """One path segment of the router: literal children, children whose segment holds
    variables (``{id}`` or ``thumbnail.{ext}``), and the operations ending here."""

    __slots__ = ("literal", "ops", "patterns", "variable")

    def __init__(self) -> None:
        self.literal: dict[str, _Node] = {}
        self.variable: dict[str, _Node] = {}
        self.patterns: list[tuple[Any, tuple[str, ...], int, _Node]] = []
        self.ops: list[Operation] = []


class _Router:
    """Path templates compiled into a trie of segments: matching walks the request's
    segments once instead of trying every template's regex (1,500 of them on a big
    spec)."""

    def __init__(self, ops: Iterable[Operation]) -> None:
        self.root = _Node()
        for op in ops:
            if not op.is_http:
                continue
            assert op.path is not None
            node = self.root
            for segment in _segments(op.path):
                if "{" not in segment:
                    node = node.literal.setdefault(segment, _Node())
                    continue
                # one child per segment text: /a/{id} and /a/{name} bind different names
                child = node.variable.get(segment)
                if child is None:
                    regex, names, literal_len = _compile_segment(segment)
                    child = node.variable[segment] = _Node()
                    node.patterns.append((regex, names, literal_len, child))
                node = child
            node.ops.append(op)

    def match(self, path: str) -> list[tuple[int, Operation, dict[str, str]]]:
        """(literal characters matched, operation, path parameters), most specific first."""
        found: list[tuple[int, Operation, dict[str, str]]] = []
        segments = _segments(path)

        def walk(node: _Node, i: int, size: int, params: dict[str, str]) -> None:
            if i == len(segments):
                found.extend((size, op, params) for op in node.ops)
                return
            segment = segments[i]
            child = node.literal.get(segment)
            if child is not None:
                walk(child, i + 1, size + len(segment), params)
            for regex, names, literal_len, child in node.patterns:
                groups = _fullmatch(regex, segment)
                if groups is not None:
                    # the server reads a segment %-decoded: john%40x.com is john@x.com
                    bound = {n: unquote(g) for n, g in zip(names, groups, strict=True)}
                    walk(child, i + 1, size + literal_len, {**params, **bound})

        walk(self.root, 0, 0, {})
        found.sort(key=lambda t: -t[0])
        return found


def _segments(path: str) -> list[str]:
    path = path.strip("/")
    return path.split("/") if path else []


_SURROGATE = re.compile("[\ud800-\udfff]")


def _fullmatch(regex: Any, text: str) -> tuple[str, ...] | None:
    """The groups of an RE2 ``regex`` matching all of ``text``, as slices of ``text``.
    RE2 reads UTF-8, which a lone surrogate (a model's URL may hold one) is not: it is
    matched as U+FFFD, one character for one, so the positions still slice ``text``."""
    safe = text if text.isascii() else _SURROGATE.sub("\ufffd", text)
    m = regex.fullmatch(safe)
    if m is None:
        return None
    return tuple(text[m.start(k) : m.end(k)] for k in range(1, regex.groups + 1))


@functools.lru_cache(maxsize=1024)
def _compile_segment(segment: str) -> tuple[Any, tuple[str, ...], int]:
    """A segment with variables as a regex on RE2, the linear-time engine: with Python's
    backtracking ``re``, ``{a}-{b}-{c}.json`` against a 1.6 KB segment of dashes took 9 s
    (cubic in its length). RE2 binds the groups as ``re`` would (leftmost, greedy).
    Cached, as ``re.compile`` caches: checkers build one-operation catalogs per step."""
    names: list[str] = []
    pattern = ""
    pos = 0
    for m in _TEMPLATE_VAR.finditer(segment):
        pattern += re.escape(segment[pos : m.start()])
        names.append(m.group(1))
        pattern += "([^/]+)"
        pos = m.end()
    pattern += re.escape(segment[pos:])
    return re2.compile(pattern), tuple(names), len(_TEMPLATE_VAR.sub("", segment))


#: JSON Schema's types, Swagger 2.0's ``file``; anything else checks nothing
_SCHEMA_TYPES = frozenset(
    {"string", "integer", "number", "boolean", "array", "object", "null", "file"}
)
_SUBSCHEMAS = ("items", "additionalProperties", "not", "contains", "propertyNames")
_SCHEMA_LISTS = ("allOf", "oneOf", "anyOf", "prefixItems")
_NESTING = frozenset({"properties", *_SUBSCHEMAS, *_SCHEMA_LISTS})


def unknown_types(catalog: ApiCatalog) -> list[tuple[str, str]]:
    """``(type, where)`` for every schema type of the catalog's parameters that JSON
    Schema does not know (``integr``), in document order.

    >>> from autofeedback.core._model import Parameter
    >>> op = Operation("getA", parameters=(Parameter("n", "query", {"type": "integr"}),))
    >>> unknown_types(ApiCatalog([op]))
    [('integr', 'getA query.n')]
    """
    found: list[tuple[str, str]] = []
    seen: set[int] = set()

    def walk(schema: Any, where: str, depth: int) -> None:
        # ``type(...) is dict`` first: a loaded schema is made of dicts, and the ABC check
        # of ``Mapping`` was a third of this walk, which every catalog load makes
        if not (type(schema) is dict or isinstance(schema, Mapping)):
            return
        if depth > 12 or id(schema) in seen:
            return
        seen.add(id(schema))  # $refs are shared objects: each is walked once
        kind = schema.get("type")
        if kind is not None:
            kinds = kind if isinstance(kind, list) else [kind]
            found.extend((str(k), where) for k in kinds if k not in _SCHEMA_TYPES)
        if _NESTING.isdisjoint(schema):
            return  # a leaf (most schemas): nothing below it to look up
        props = schema.get("properties")
        if props and (type(props) is dict or isinstance(props, Mapping)):
            for name, sub in props.items():
                walk(sub, f"{where}.{name}", depth + 1)
        for key in _SUBSCHEMAS:
            sub = schema.get(key)
            if sub is not None:
                walk(sub, f"{where}[]" if key == "items" else where, depth + 1)
        for key in _SCHEMA_LISTS:
            subs = schema.get(key)
            if isinstance(subs, list):
                for sub in subs:
                    walk(sub, where, depth + 1)

    for op in catalog.operations:
        for p in op.parameters:
            walk(p.schema, f"{op.name} {p.location}.{p.name}", 0)
    return found


def set_aside_tools(ops: Iterable[Operation]) -> tuple[list[Operation], dict[str, str]]:
    """The operations of one list without the tools never matched to a call, and why
    each is: a tool whose name passes for another, every tool of a name listed twice
    with two definitions. A tool listed twice as the same definition is one tool (kept
    once, as before). Function style only: an HTTP operation is called by its method and
    path."""
    from autofeedback.catalog._tool_names import set_aside

    kept: list[Operation] = []
    tools: dict[str, list[Operation]] = {}
    for op in ops:
        if op.method is None and op.path is None:
            same = tools.setdefault(op.name, [])
            if any(op == other for other in same):
                continue  # the same tool again
            same.append(op)
        kept.append(op)
    aside = set_aside(op.name for same in tools.values() for op in same)
    if not aside:
        return kept, {}
    return [op for op in kept if op.name not in aside or op.path is not None], aside


def _warn_set_aside(catalog: ApiCatalog) -> None:
    """One :class:`SpecWarning` per load naming the tools set aside: a tools list that
    holds them may be built to take a call meant for another tool."""
    if not catalog.set_aside:
        return
    import warnings

    from autofeedback.core._exceptions import SpecWarning

    shown = "; ".join(f"{n!a} {why}" for n, why in list(catalog.set_aside.items())[:5])
    more = f" and {len(catalog.set_aside) - 5} more" if len(catalog.set_aside) > 5 else ""
    warnings.warn(
        SpecWarning(
            f"{catalog.source}: tool names set aside, never matched to a call: {shown}{more}"
        ),
        stacklevel=3,
    )


def _warn_unknown_types(catalog: ApiCatalog) -> None:
    """One :class:`SpecWarning` per load naming the unknown types (a typo such as
    ``integr`` would otherwise leave those values unchecked without a word)."""
    found = unknown_types(catalog)
    if not found:
        return
    import warnings

    from autofeedback.core._exceptions import SpecWarning

    kind, where = found[0]
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    known = ", ".join(sorted(_SCHEMA_TYPES - {"file"}))
    warnings.warn(
        SpecWarning(
            f"{catalog.source}: unknown schema type {kind!r} at {where}{more}; values there "
            f"are not type-checked (JSON Schema types: {known})"
        ),
        stacklevel=3,
    )

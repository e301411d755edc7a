"""The data-flow graph of a catalog: for each parameter, the operations whose responses
produce its value, ranked.

Inferred the way RESTler infers producer/consumer pairs (its compiler's
``Dependencies.fs``): by names and types. A response field named like the parameter
produces it (``token`` <- ``GetUserToken`` -> ``token``); a parameter ``<resource>_id``
(or ``id`` in ``/playlists/{id}``) is produced by an ``id`` field that belongs to that
resource: inside a container named after it (``artists[].id``) or in the response of an
operation whose path or name is about it (``GET /search/person`` -> ``results[].id``).
An operation that itself takes the parameter only echoes it (``GET /movie/{movie_id}``
-> ``id``) and is never its producer; the ids an operation on a collection returns
(``GET /me/playlists`` -> ``items[].id``) are that collection's, not another resource's.
Where a spec declares OpenAPI ``links``, those win. A user's overrides
(:func:`load_overrides`) replace what was inferred.

Ranking, best first: override (2.0) > link (1.0) > same field name (0.8 for an
identifier: ``*_id``, ``token``, ``uri``, ``key``...; 0.5 for a description such as
``name``) > ``<resource>_id`` <- ``id`` of that resource (0.7 container or path, 0.6
path mentions it, 0.5 tags or description do) > ``context_uri`` <- ``uri`` (0.3) > an
``id`` of some other container (0.2, listed only when little else is); small deductions
for a deeper path, a scalar type that differs (a string id for an integer parameter) and
a producer that needs ids itself, a large one (0.2) for a destructive producer (a
``DELETE``, ``cancelOrder``: never the call to suggest for learning an id), small bonuses
for a search, a list to pick from and a field inside the consumer's own resource. Types
are checked: a list or an object never produces a scalar; a list parameter takes an
element path (``ids`` <- ``albums[].id``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_name import destructive
from autofeedback.core._exceptions import ConfigurationError, SpecError
from autofeedback.core._model import Operation, Parameter
from autofeedback.flow._paths import (
    Step,
    format_path,
    iter_paths,
    parse_path,
    schema_at,
    schema_types,
)

__all__ = ["FlowGraph", "Producer", "load_overrides", "success_response"]

SCORES: Mapping[str, float] = {
    "override": 2.0,
    "link": 1.0,
    "name": 0.8,
    "resource": 0.7,
    "suffix": 0.3,
    "weak": 0.2,
}
#: containers that hold a list of the operation's own items, not another resource
_GENERIC = frozenset(
    {
        "item",
        "items",
        "results",
        "result",
        "data",
        "list",
        "entries",
        "values",
        "content",
        "records",
        "hits",
        "edges",
        "nodes",
        "node",
        "response",
        "body",
        "value",
        "objects",
        "elements",
    }
)
#: words that make a parameter an identifier (a value one operation hands to another)
_IDENTIFYING = frozenset(
    {
        "id",
        "ids",
        "key",
        "token",
        "uri",
        "url",
        "href",
        "uuid",
        "guid",
        "slug",
        "number",
        "code",
        "cursor",
        "etag",
        "hash",
        "handle",
    }
)
_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
_CONTAINERS = frozenset({"array", "object"})
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Producer:
    """One operation whose response produces a parameter's value.

    ``path`` is the response path (``"results[].id"``), ``schema`` the JSON Schema of
    the value there (``{}`` when unknown), ``via`` why (``"override"``, ``"link"``,
    ``"name"``, ``"resource"``, ``"weak"``), ``score`` how sure (higher is better).
    """

    operation: str
    path: str
    schema: Mapping[str, Any] = field(default_factory=dict, compare=False)
    via: str = "name"
    score: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "path": self.path,
            "via": self.via,
            "score": round(self.score, 3),
            "schema": dict(self.schema),
        }

    def __str__(self) -> str:
        return f"{self.operation} -> {self.path} ({self.via}, {self.score:.2f})"


def _words(name: str) -> list[str]:
    """``personId``/``person_id``/``PersonID`` -> ``["person", "id"]``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return _WORD.findall(spaced.lower())


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "sis")):
        return word[:-1]
    return word


def _norm(name: str) -> str:
    return "_".join(_words(name))


def _resource(words: Sequence[str]) -> str:
    """The resource words name, singular: ``["episode", "groups"]`` -> ``episode_group``."""
    if not words:
        return ""
    return "_".join([*words[:-1], _singular(words[-1])])


def success_response(op: Operation) -> Mapping[str, Any] | None:
    """The schema of ``op``'s success response: the lowest documented 2xx, else ``2XX``,
    else ``default``; ``None`` when none documents a schema."""
    by_status = {r.status.upper(): r for r in op.responses}
    order = sorted(s for s in by_status if len(s) == 3 and s.startswith("2") and s.isdigit())
    for status in (*order, "2XX", "DEFAULT"):
        r = by_status.get(status)
        if r is not None and r.schema is not None:
            return r.schema
    return None


@dataclass
class _Field:
    """One documented response position of a producer, with what ranking reads of it
    worked out once (a big spec has thousands of ``id`` fields)."""

    op: Operation
    steps: tuple[Step, ...]
    schema: Mapping[str, Any]
    container: str | None  # the resource of the nearest non-generic enclosing name
    path: str = ""
    types: frozenset[str] = frozenset()
    depth: int = 0  # named steps
    in_list: bool = False

    def __post_init__(self) -> None:
        self.path = format_path(self.steps)
        self.types = schema_types(self.schema)
        self.depth = sum(1 for s in self.steps if s != "[]" and not isinstance(s, int))
        self.in_list = "[]" in self.steps


@dataclass
class _OpFacts:
    op: Operation
    schema: Mapping[str, Any] | None
    param_names: frozenset[str]
    last: str  # last literal path segment / name word, as a resource
    collection: bool  # that last word is plural: the response lists those (``/me/playlists``)
    literals: frozenset[str]  # every literal segment / name word, as a resource
    mentions: frozenset[str]  # words of tags and description, as resources
    needs_ids: int  # required parameters that are identifiers themselves


def _facts(op: Operation) -> _OpFacts:
    if op.is_http and op.path:
        segments = [s for s in op.path.strip("/").split("/") if s and "{" not in s]
        words_lists = [_words(s) for s in segments]
    else:
        name_words = [w for w in _words(op.name) if w not in _METHODS]
        params = {w for p in op.parameters for w in _words(p.name)}
        words_lists = [[w] for w in name_words if w not in params and w != "id"]
    literals = frozenset(_resource(w) for w in words_lists if w)
    last = _resource(words_lists[-1]) if words_lists and words_lists[-1] else ""
    collection = bool(last) and words_lists[-1][-1] != _singular(words_lists[-1][-1])
    text = " ".join([*op.tags, op.description[:300]]).lower()
    mentions = frozenset(_singular(w) for w in _WORD.findall(text))
    needs = sum(1 for p in op.parameters if p.required and _words(p.name)[-1:] == ["id"])
    return _OpFacts(
        op=op,
        schema=success_response(op),
        param_names=frozenset(_norm(p.name) for p in op.parameters),
        last=last,
        collection=collection,
        literals=literals,
        mentions=mentions,
        needs_ids=needs,
    )


def _container(steps: Sequence[Step]) -> str | None:
    for step in reversed(steps[:-1]):
        if isinstance(step, int) or step == "[]":
            continue
        words = _words(step)
        if _norm(step) in _GENERIC or not words:
            continue
        return _resource(words)
    return None


def _is_container(types: frozenset[str]) -> bool:
    return bool(types) and types <= _CONTAINERS | {"null"} and bool(types & _CONTAINERS)


class FlowGraph:
    """Producers of every parameter of a catalog.

    >>> catalog = ApiCatalog.from_tools([
    ...     {"name": "GetUserToken", "parameters": {"type": "object", "properties": {
    ...         "username": {"type": "string"}}},
    ...      "outputSchema": {"type": "object", "properties": {"token": {"type": "string"}}}},
    ...     {"name": "DeleteAccount", "parameters": {"type": "object", "properties": {
    ...         "token": {"type": "string"}}}}])
    >>> FlowGraph.from_catalog(catalog).producers("DeleteAccount", "token")[0].operation
    'GetUserToken'
    """

    def __init__(
        self,
        catalog: ApiCatalog,
        overrides: Mapping[str, Mapping[str, str | None]] | None = None,
    ) -> None:
        self.catalog = catalog
        self._facts = {op.name: _facts(op) for op in catalog.operations}
        self._by_leaf: dict[str, list[_Field]] = {}
        #: ``id`` fields by the resource their container names (None: the response's own)
        self._ids: dict[str | None, list[_Field]] = {}
        for facts in self._facts.values():
            if facts.schema is None:
                continue
            for steps, sub in iter_paths(facts.schema):
                leaf = steps[-1]
                if isinstance(leaf, int) or leaf == "[]":
                    continue
                entry = _Field(facts.op, steps, sub, _container(steps))
                self._by_leaf.setdefault(_norm(leaf), []).append(entry)
                if _norm(leaf) == "id":
                    self._ids.setdefault(entry.container, []).append(entry)
        self._links = self._read_links()
        self._overrides = self._read_overrides(overrides or {})
        self._cache: dict[tuple[str, str], list[Producer]] = {}

    @classmethod
    def from_catalog(
        cls,
        catalog: ApiCatalog,
        overrides: Mapping[str, Mapping[str, str | None]] | None = None,
    ) -> FlowGraph:
        """The graph of ``catalog``; ``overrides`` maps ``{operation: {parameter:
        "PRODUCER_OP:path" | None}}`` (``None``: no producer, the user supplies it)."""
        return cls(catalog, overrides)

    # -- look-ups -----------------------------------------------------------------

    def operation(self, name: str) -> Operation | None:
        """The operation called ``name``, or written ``"METHOD /path"``."""
        op = self.catalog.get(name)
        if op is not None:
            return op
        method, _, path = name.strip().partition(" ")
        for candidate in self.catalog.operations:
            if candidate.method == method.upper() and candidate.path == path.strip():
                return candidate
        return None

    def response_schema(self, operation: str) -> Mapping[str, Any] | None:
        """The success (2xx, else ``default``) response schema of ``operation``."""
        op = self.operation(operation)
        return None if op is None else self._facts[op.name].schema

    def user_supplied(self, operation: str, parameter: str) -> bool:
        """Whether an override says no operation produces this parameter (``null``)."""
        op = self.operation(operation)
        return op is not None and self._overrides.get((op.name, parameter), ()) is None

    def producers(self, operation: str, parameter: str) -> list[Producer]:
        """The operations whose responses produce ``parameter`` of ``operation``, best
        first (at most three paths per producer); ``[]`` if none."""
        op = self.operation(operation)
        if op is None:
            return []
        key = (op.name, parameter)
        hit = self._cache.get(key)
        if hit is None:
            param = op.parameter(parameter)
            hit = self._infer(op, param) if param is not None else []
            self._cache[key] = hit
        return list(hit)

    def consumers(self, operation: str) -> list[tuple[str, str, Producer]]:
        """The (consumer operation, parameter, producer) pairs ``operation`` feeds, the
        surest first."""
        op = self.operation(operation)
        if op is None:
            return []
        out: list[tuple[str, str, Producer]] = []
        for consumer in self.catalog.operations:
            for p in consumer.parameters:
                for prod in self.producers(consumer.name, p.name):
                    if prod.operation == op.name:
                        out.append((consumer.name, p.name, prod))
                        break
        out.sort(key=lambda t: -t[2].score)
        return out

    def as_dict(self, operations: Iterable[str] | None = None) -> dict[str, Any]:
        """``{operation: {parameter: [producer, ...]}}`` as JSON-ready data."""
        names = list(operations) if operations is not None else list(self.catalog.names)
        out: dict[str, Any] = {}
        for name in names:
            op = self.operation(name)
            if op is None:
                continue
            out[op.name] = {
                p.name: {
                    "required": p.required,
                    "user_supplied": self.user_supplied(op.name, p.name),
                    "producers": [x.as_dict() for x in self.producers(op.name, p.name)],
                }
                for p in op.parameters
            }
        return out

    # -- inference ----------------------------------------------------------------

    def _infer(self, op: Operation, param: Parameter) -> list[Producer]:
        key = (op.name, param.name)
        if key in self._overrides:
            fixed = self._overrides[key]
            return [] if fixed is None else [fixed]
        found = list(self._links.get(key, ()))
        found.extend(self._by_names(op, param))
        found.sort(key=lambda p: (-p.score, p.operation, len(p.path), p.path))
        out: list[Producer] = []
        per_op: dict[str, int] = {}
        seen: set[tuple[str, str]] = set()
        for prod in found:
            if (prod.operation, prod.path) in seen or per_op.get(prod.operation, 0) >= 3:
                continue
            seen.add((prod.operation, prod.path))
            per_op[prod.operation] = per_op.get(prod.operation, 0) + 1
            out.append(prod)
        return out

    def _by_names(self, op: Operation, param: Parameter) -> Iterable[Producer]:
        words = _words(param.name)
        if not words:
            return
        norm = "_".join(words)
        p_types = schema_types(param.schema)
        names = {norm, _resource(words)}
        resource: str | None = None
        if words[-1] in ("id", "ids") and len(words) > 1:
            resource = _resource(words[:-1])
        elif words in (["id"], ["ids"]):
            resource = self._resource_of_bare_id(op, param.name)
        bare_id = words in (["id"], ["ids"])
        # a same-named field is a sure source of an identifier, a guess for a description
        name_score = SCORES["name"] if _IDENTIFYING & set(words) else 0.5
        for name in sorted(names) if not bare_id else ():
            for f in self._by_leaf.get(name, ()):
                prod = self._candidate(op, param, norm, p_types, f, "name", name_score)
                if prod is not None:
                    yield prod
        last = _resource(words[-1:])
        if len(words) > 1 and last in _IDENTIFYING and last != "id":
            # ``context_uri`` <- ``uri``: a field named like the parameter's last word
            for f in self._by_leaf.get(last, ()):
                prod = self._candidate(op, param, norm, p_types, f, "suffix", SCORES["suffix"])
                if prod is not None:
                    yield prod
        if resource is None:
            return
        found = 0
        for f in self._ids.get(resource, ()):
            prod = self._candidate(op, param, norm, p_types, f, "resource", SCORES["resource"])
            if prod is not None:
                found += 1
                yield prod
        for f in self._ids.get(None, ()):
            facts = self._facts[f.op.name]
            if facts.last == resource:
                via, score = "resource", SCORES["resource"]
            elif facts.collection:
                via, score = "weak", SCORES["weak"]  # ids of what the path lists, not ours
            elif resource in facts.literals:
                via, score = "resource", 0.6
            elif resource in facts.mentions or resource.split("_")[-1] in facts.mentions:
                via, score = "resource", 0.5
            else:
                via, score = "weak", SCORES["weak"]
            prod = self._candidate(op, param, norm, p_types, f, via, score)
            if prod is not None:
                found += via != "weak"
                yield prod
        if found >= 3:
            return  # ids of other things are only worth listing when little else is
        for container, fields in self._ids.items():
            if container is None or container == resource:
                continue
            for f in fields:
                prod = self._candidate(op, param, norm, p_types, f, "weak", SCORES["weak"])
                if prod is not None:
                    yield prod

    def _resource_of_bare_id(self, op: Operation, name: str) -> str | None:
        """``id`` in ``/albums/{id}`` (or ``GET_albums__id_``) is an album's id."""
        if op.is_http and op.path:
            segments = op.path.strip("/").split("/")
            for i, seg in enumerate(segments):
                if seg == "{" + name + "}" and i > 0 and "{" not in segments[i - 1]:
                    return _resource(_words(segments[i - 1]))
        else:
            words = [w for w in _words(op.name) if w not in _METHODS]
            if "id" in words:
                i = words.index("id")
                if i > 0:
                    return _resource(words[i - 1 : i])
        # ``ids`` in the query of ``PUT /me/albums``: the ids of the path's resource
        return self._facts[op.name].last or None

    def _candidate(
        self,
        op: Operation,
        param: Parameter,
        norm: str,
        p_types: frozenset[str],
        f: _Field,
        via: str,
        score: float,
    ) -> Producer | None:
        facts = self._facts[f.op.name]
        if f.op.name == op.name or norm in facts.param_names:
            return None  # itself, or an operation that takes the value only echoes it
        f_types = f.types
        if _is_container(f_types) and not (p_types & _CONTAINERS):
            return None  # a list or an object is not a scalar's value
        if "array" in p_types and not f.in_list and f_types and "array" not in f_types:
            score -= 0.1  # a list parameter is best fed from a list's elements
        scalar_p = p_types - _CONTAINERS - {"null"}
        scalar_f = f_types - _CONTAINERS - {"null"}
        if scalar_p and scalar_f and not (scalar_p & scalar_f):
            numeric = {"integer", "number"}
            if not (scalar_p <= numeric and scalar_f <= numeric):
                score -= 0.05
        score -= 0.01 * f.depth
        if via == "resource" and f.in_list:
            score += 0.01  # a list of them (a search, a listing) is where one picks one
        score -= 0.03 * facts.needs_ids
        if "search" in facts.literals:
            score += 0.02  # a search is how a name the user gave becomes an id
        if via in ("name", "suffix") and f.container == self._facts[op.name].last:
            score += 0.05  # `uris` of POST /playlists/{id}/tracks: a track's uri
        if destructive(f.op):
            score -= 0.2  # nobody should cancel an order to learn a book's id
        return Producer(f.op.name, f.path, f.schema, via, round(score, 4))

    # -- links and overrides --------------------------------------------------------

    def _read_links(self) -> dict[tuple[str, str], list[Producer]]:
        out: dict[tuple[str, str], list[Producer]] = {}
        for op in self.catalog.operations:
            schema = self._facts[op.name].schema or {}
            for resp in op.responses:
                if not resp.status.startswith("2") and resp.status != "default":
                    continue
                body = resp.schema or schema
                for link in resp.links.values():
                    target = self._link_target(link)
                    params = link.get("parameters")
                    if target is None or not isinstance(params, Mapping):
                        continue
                    for pname, expr in params.items():
                        steps = _body_pointer(expr)
                        if steps is None:
                            continue
                        pname = str(pname).split(".", 1)[-1] if "." in str(pname) else str(pname)
                        at = schema_at(body, steps)
                        prod = Producer(
                            op.name, format_path(steps), at or {}, "link", SCORES["link"]
                        )
                        out.setdefault((target.name, pname), []).append(prod)
        return out

    def _link_target(self, link: Mapping[str, Any]) -> Operation | None:
        if isinstance(link.get("operationId"), str):
            return self.catalog.get(link["operationId"])
        ref = link.get("operationRef")
        if isinstance(ref, str) and "#/paths/" in ref:
            pointer = ref.split("#/paths/", 1)[1]
            path, _, method = pointer.rpartition("/")
            path = path.replace("~1", "/").replace("~0", "~")
            for op in self.catalog.operations:
                if op.path == path and (op.method or "").lower() == method.lower():
                    return op
        return None

    def _read_overrides(
        self, overrides: Mapping[str, Mapping[str, str | None]]
    ) -> dict[tuple[str, str], Producer | None]:
        if not isinstance(overrides, Mapping):
            raise ConfigurationError("overrides must map operations to {parameter: producer}")
        out: dict[tuple[str, str], Producer | None] = {}
        for op_name, params in overrides.items():
            op = self.operation(str(op_name))
            if op is None:
                raise ConfigurationError(f"overrides: unknown operation {op_name!r}")
            if not isinstance(params, Mapping):
                raise ConfigurationError(
                    f"overrides: {op_name!r} must map parameters to 'PRODUCER_OP:path' or null"
                )
            for pname, value in params.items():
                if op.parameter(str(pname)) is None:
                    raise ConfigurationError(f"overrides: {op.name!r} has no parameter {pname!r}")
                if value is None:
                    out[(op.name, str(pname))] = None
                    continue
                if not isinstance(value, str) or ":" not in value:
                    raise ConfigurationError(
                        f"overrides: {op.name}.{pname} must be 'PRODUCER_OP:path' or null, "
                        f"got {value!r}"
                    )
                prod_name, _, path = value.rpartition(":")
                producer = self.operation(prod_name)
                if producer is None:
                    raise ConfigurationError(
                        f"overrides: {op.name}.{pname}: unknown producer operation {prod_name!r}"
                    )
                steps = parse_path(path)
                body = self._facts[producer.name].schema
                at = schema_at(body, steps) if body is not None else None
                out[(op.name, str(pname))] = Producer(
                    producer.name, format_path(steps), at or {}, "override", SCORES["override"]
                )
        return out


def _body_pointer(expr: Any) -> list[Step] | None:
    """``$response.body#/results/0/id`` -> ``["results", "[]", "id"]``; ``None`` for
    anything but a response body (headers, the request, constants)."""
    if not isinstance(expr, str):
        return None
    text = expr.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if not text.startswith("$response.body"):
        return None
    _, _, pointer = text.partition("#")
    steps: list[Step] = []
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        steps.append("[]" if part.isdigit() else part)
    return steps


def load_overrides(path: str | Path) -> dict[str, dict[str, str | None]]:
    """Read an overrides file (JSON or YAML): ``{"OPERATION": {"param":
    "PRODUCER_OP:path" | null}}``. Raises :class:`ConfigurationError` naming the file
    when it cannot be read or has another shape.

    >>> import json, tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
    ...     json.dump({"GET /person/{person_id}": {"person_id": "GET /search/person:results[].id",
    ...                                            "language": None}}, fh)
    >>> load_overrides(fh.name)["GET /person/{person_id}"]
    {'person_id': 'GET /search/person:results[].id', 'language': None}
    """
    from autofeedback._specs._text import parse_text

    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{path}: cannot read the overrides file: {exc}") from exc
    try:
        data = parse_text(text, str(path))
    except SpecError as exc:
        raise ConfigurationError(f"{path}: not JSON or YAML: {exc.reason}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ConfigurationError(
            f'{path}: expected {{"OPERATION": {{"param": "PRODUCER_OP:path" or null}}}}'
        )
    out: dict[str, dict[str, str | None]] = {}
    for op_name, params in data.items():
        inner: dict[str, str | None] = {}
        for pname, value in params.items():
            if value is not None and not isinstance(value, str):
                raise ConfigurationError(
                    f"{path}: {op_name}.{pname} must be 'PRODUCER_OP:path' or null, got {value!r}"
                )
            inner[str(pname)] = value
        out[str(op_name)] = inner
    return out

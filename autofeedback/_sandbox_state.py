"""What the sandbox remembers between calls: the resources of one session.

The sandbox (:mod:`autofeedback._sandbox`) validates a request; this module answers a
valid one the way the real API would, consistently across the calls of one session:

* **ids**: a path parameter is an id when it is named ``id``, ``<x>_id`` / ``<x>Id``, or
  follows a plural collection segment (``/users/{username}``); its *kind* is ``x``, the
  singular of that collection, or the previous segment (``/artists/{id}`` -> ``artist``).
* **ids in responses**: every answer is walked for ``id`` fields (and fields named like
  an id parameter, ``movie_id``), each tagged with the kind of the object holding it: its
  ``type`` / ``media_type`` when that names a kind (Spotify's ``"type": "artist"``), else
  the nearest enclosing key that names one (``"artists": {"items": [...]}``), else, for
  the top-level object and the items of a top-level list, the kind the operation's path
  names (``/search/movie`` -> ``movie``). Ids of no known kind are accepted as any kind.
* **known ids**: those the spec's own examples show, those any earlier answer issued,
  and those created (a ``POST`` whose answer carries an id); ``DELETE`` forgets one. A
  detail endpoint (``GET /movie/{movie_id}``) answers 200 for a known id, with that id
  and the fields an earlier answer showed for it (a search result's ``title``), and the
  documented 404 for any other. Only ids of a kind some operation hands out (a search,
  a list, a create) are checked: an airport code or a year that no operation lists can
  only come from the caller's own knowledge, so any value is taken as given.
* **bodies**: the operation's documented example, else generated from its response
  schema by :func:`generate`: deterministic for a seed and the request, types, formats,
  enums and required fields respected, arrays and depth bounded.

Bounded: at most ``max_resources`` remembered ids (least recently used forgotten first),
snapshots of at most 4 KiB each, generated bodies of at most 2,000 values.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema.validators import validator_for

from autofeedback._exceptions import ConfigurationError
from autofeedback._model import Operation, Response
from autofeedback._openapi import _FORMAT_SAMPLES, sanitize_schema
from autofeedback.checks._names import id_stem

__all__ = ["IdParam", "NotFound", "SessionState", "generate", "id_params", "singular"]

#: Largest documented example used as a body; a larger one is generated instead.
MAX_EXAMPLE_BYTES = 1 << 20
_SNAPSHOT_BYTES = 4096
_MAX_ITEMS = 20
_MAX_DEPTH = 8
_MAX_NODES = 2000
_WALK_NODES = 20_000
_VAR = re.compile(r"^\{([^{}/]+)\}$")
_LIST_KEYS = frozenset({"results", "items", "data", "content", "records", "entries"})
_KIND_FIELDS = ("type", "media_type", "object", "kind")


_IRREGULAR = {
    "people": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "alias": "alias",
    "aliases": "alias",
    "status": "status",
    "series": "series",
    "news": "news",
    "indices": "index",
    "analyses": "analysis",
}


def singular(word: str) -> str:
    """``"companies"`` -> ``"company"``, ``"artists"`` -> ``"artist"``; lower-case.

    >>> singular("Categories"), singular("people"), singular("email_aliases")
    ('category', 'person', 'email_alias')
    """
    w = word.lower().replace("-", "_")
    head, _, last = w.rpartition("_")
    if last in _IRREGULAR:
        return (head + "_" if head else "") + _IRREGULAR[last]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


@dataclass(frozen=True)
class IdParam:
    """A path parameter that names a resource: ``movie_id`` of kind ``movie``."""

    name: str
    kind: str | None
    #: whether it is the last segment of the path (a detail endpoint)
    last: bool


@dataclass(frozen=True)
class NotFound:
    """A valid request naming an id the session does not know."""

    parameter: str
    kind: str | None
    value: str

    @property
    def message(self) -> str:
        what = self.kind or "resource"
        return f"no {what} has {self.parameter} '{self.value}'"


def id_params(op: Operation) -> tuple[IdParam, ...]:
    """The id path parameters of ``op``, in path order.

    >>> id_params(Operation("x", method="GET", path="/artists/{id}/albums"))
    (IdParam(name='id', kind='artist', last=False),)
    """
    if op.path is None:
        return ()
    segments = [s for s in op.path.split("?", 1)[0].strip("/").split("/") if s]
    out: list[IdParam] = []
    for i, seg in enumerate(segments):
        m = _VAR.match(seg)
        if m is None:
            continue
        name = m.group(1)
        prev = segments[i - 1] if i > 0 and _VAR.match(segments[i - 1]) is None else None
        kind: str | None
        stem = id_stem(name)
        if name.lower() in ("id", "uuid"):
            kind = singular(prev) if prev else None
        elif stem is not None:
            kind = singular(stem)
        elif prev is not None and singular(prev) != prev.lower().replace("-", "_"):
            kind = singular(prev)  # /users/{username}: what follows a plural collection
        else:
            continue  # /tv/{tv_id}/season/{season_number}: a number, not an id
        out.append(IdParam(name, kind, i == len(segments) - 1))
    return tuple(out)


def _path_kinds(op: Operation, kinds: frozenset[str]) -> list[str]:
    """Kinds the literal segments of ``op``'s path name, last first
    (``/person/{person_id}/movie_credits`` -> ``["movie", "person"]``)."""
    if op.path is None:
        return []
    out: list[str] = []
    for seg in reversed(op.path.split("?", 1)[0].strip("/").split("/")):
        if not seg or _VAR.match(seg):
            continue
        for word in reversed(re.split(r"[_\-]", seg)):
            if singular(word) in kinds:
                out.append(singular(word))
    return out


def _key_kind(key: str, kinds: frozenset[str]) -> str | None:
    for word in reversed(re.split(r"[_\-]", key)):
        if singular(word) in kinds:
            return singular(word)
    return None


def _is_id_value(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, str) and 0 < len(value) <= 200
    )


@dataclass(frozen=True)
class _Issued:
    kind: str | None
    value: str
    obj: Mapping[str, Any] | None


class SessionState:
    """The resources one sandbox session knows; thread-safe, bounded, resettable.

    >>> catalog = ApiCatalog.from_file("specs/examples/bookshop.yaml")  # doctest: +SKIP
    >>> state = SessionState(catalog.operations, seed=0)  # doctest: +SKIP
    >>> state.answer(catalog.get("getBook"), {"bookId": "7"}, [], None)[0]  # doctest: +SKIP
    200
    """

    def __init__(
        self, operations: tuple[Operation, ...], *, seed: int = 0, max_resources: int = 10_000
    ) -> None:
        if max_resources < 1:
            raise ConfigurationError("max_resources must be >= 1")
        self.seed = seed
        self.max_resources = max_resources
        self._ops = operations
        self._ids = {op.name: id_params(op) for op in operations}
        self.kinds = frozenset(p.kind for ps in self._ids.values() for p in ps if p.kind)
        # fields that carry an id of a known kind besides "id": the parameter names
        self._id_fields: dict[str, str] = {
            p.name: p.kind
            for ps in self._ids.values()
            for p in ps
            if p.kind and p.name.lower() not in ("id", "uuid")
        }
        self._examples = {op.name: self._example(op) for op in operations}
        #: the kinds whose ids are checked: those some operation hands out (a search, a
        #: list, a create). An id of another kind can only come from the caller's own
        #: knowledge (a year, a country code), so any value is accepted for it.
        self.checked_kinds = self._issued_kinds()
        self._lock = threading.RLock()
        self._known: OrderedDict[tuple[str | None, str], Mapping[str, Any] | None] = OrderedDict()
        self._by_value: dict[str, int] = {}
        self._deleted: OrderedDict[tuple[str | None, str], None] = OrderedDict()
        self._created = 0
        self.reset()

    # -- state -------------------------------------------------------------------

    def reset(self) -> None:
        """Forget every issued, created and deleted id; keep those the spec's examples
        show, as at the start of a session."""
        with self._lock:
            self._known.clear()
            self._by_value.clear()
            self._deleted.clear()
            self._created = 0
            for op in self._ops:
                example = self._examples[op.name]
                if example is not None:
                    self._harvest(op, example)
                for p in op.parameters:
                    ip = next((i for i in self._ids[op.name] if i.name == p.name), None)
                    if ip is None or p.location != "path":
                        continue
                    for key in ("example", "default"):
                        if _is_id_value(p.schema.get(key)):
                            self._remember(ip.kind, str(p.schema[key]), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._known)

    def known(self, kind: str | None, value: str) -> bool:
        """Whether a request may name ``value`` as an id of ``kind``."""
        with self._lock:
            if (kind, value) in self._deleted:
                return False
            if (kind, value) in self._known or (None, value) in self._known:
                return True
            return kind is None and value in self._by_value

    def _remember(self, kind: str | None, value: str, obj: Mapping[str, Any] | None) -> None:
        key = (kind, value)
        present = key in self._known
        old = self._known.pop(key) if present else None
        if not present:
            self._by_value[value] = self._by_value.get(value, 0) + 1
        snapshot = _snapshot(obj) if obj is not None else old
        self._known[key] = snapshot
        self._deleted.pop(key, None)
        while len(self._known) > self.max_resources:
            (_, gone), _ = self._known.popitem(last=False)
            left = self._by_value.get(gone, 1) - 1
            if left > 0:
                self._by_value[gone] = left
            else:
                self._by_value.pop(gone, None)

    def _forget(self, kind: str | None, value: str) -> None:
        if (kind, value) in self._known:
            del self._known[(kind, value)]
            left = self._by_value.get(value, 1) - 1
            if left > 0:
                self._by_value[value] = left
            else:
                self._by_value.pop(value, None)
        self._deleted[(kind, value)] = None
        while len(self._deleted) > self.max_resources:
            self._deleted.popitem(last=False)

    # -- answering ---------------------------------------------------------------

    def answer(
        self,
        op: Operation,
        path_vars: Mapping[str, str],
        query: list[tuple[str, str]],
        body: Any,
    ) -> tuple[int, Any] | NotFound:
        """The success answer to a valid request, or :class:`NotFound`.

        ``body`` is the parsed JSON request body (``None`` when there is none)."""
        method = (op.method or "POST").upper()
        ids = [p for p in self._ids[op.name] if p.name in path_vars]
        with self._lock:
            for p in ids:
                if p.kind not in self.checked_kinds:
                    self._remember(p.kind, path_vars[p.name], None)
                elif not self.known(p.kind, path_vars[p.name]):
                    return NotFound(p.name, p.kind, path_vars[p.name])
            status, response = _success_response(op)
            rng = random.Random(
                f"{self.seed}|{op.name}|{sorted(path_vars.items())}|{sorted(query)}"
            )
            payload = self._body(op, response, rng)
            detail = bool(ids) and ids[-1].last
            # POST /orders/{id}/cancel answers the order; POST /playlists/{id}/tracks does not
            action = bool(ids) and not detail and method != "GET" and not _creates(op, ids)
            target = ids[-1] if detail or action else None
            if isinstance(payload, dict) and target is not None:
                self._fill(payload, target, path_vars[target.name])
            elif isinstance(payload, dict) and ids and method == "GET":
                # GET /movie/{movie_id}/keywords answers {"id": <that movie>, ...}: the
                # answer is the resource its last id names (see _answer_kinds)
                _own_id(payload, ids[-1], path_vars[ids[-1].name])
            if isinstance(payload, dict) and isinstance(body, Mapping) and method != "GET":
                _overlay(payload, body, only_present=True)
            created = None
            if method == "POST" and _creates(op, ids) and isinstance(payload, dict):
                created = self._create(op, payload)
            if isinstance(payload, dict) and target is not None and method in ("PUT", "PATCH"):
                self._remember(target.kind, path_vars[target.name], payload)
            self._harvest(op, payload, created=created)
            if method == "DELETE" and detail and target is not None:
                self._forget(target.kind, path_vars[target.name])
            if status == 204:
                return status, None
            return status, payload

    def _body(self, op: Operation, response: Response | None, rng: random.Random) -> Any:
        example = self._examples[op.name]
        if example is not None:
            return json.loads(json.dumps(example))  # a fresh copy to fill in
        if response is not None and response.schema is not None:
            return generate(sanitize_schema(response.schema), rng)
        return {"ok": True, "operation": op.name}

    def _fill(self, payload: dict[str, Any], target: IdParam, value: str) -> None:
        """Make a detail answer describe the resource asked for: its id, and the fields
        an earlier answer showed for it."""
        _own_id(payload, target, value)
        snapshot = self._known.get((target.kind, value)) or self._known.get((None, value))
        if snapshot:
            _overlay(payload, snapshot, only_present=False)

    def _create(self, op: Operation, payload: dict[str, Any]) -> tuple[str | None, str] | None:
        """Give a created resource a fresh id; ``(kind, id)`` or ``None`` if it has none."""
        kind, field = self._created_kind(op, payload)
        if field is None:
            return None
        template = payload[field]
        for attempt in range(1000):
            rng = random.Random(f"{self.seed}|create|{kind}|{self._created}|{attempt}")
            fresh = _fresh_id(template, rng)
            if not self.known(kind, str(fresh)):
                break
        self._created += 1
        payload[field] = fresh
        self._remember(kind, str(fresh), payload)
        return kind, str(fresh)

    def _created_kind(
        self, op: Operation, payload: dict[str, Any]
    ) -> tuple[str | None, str | None]:
        """The kind a POST to ``op`` creates and the field holding the new id, if any."""
        kinds = _path_kinds(op, self.kinds)
        kind = _object_kind(payload, self.kinds) or (kinds[0] if kinds else None)
        if kind is None and op.path:
            literal = [s for s in op.path.strip("/").split("/") if s and not _VAR.match(s)]
            kind = singular(literal[-1]) if literal else None
        field = "id" if "id" in payload else (f"{kind}_id" if f"{kind}_id" in payload else None)
        if field is None or not _is_id_value(payload[field]):
            return kind, None
        return kind, field

    # -- issuing ids -------------------------------------------------------------

    def _issued_kinds(self) -> frozenset[str]:
        """The kinds some operation hands out ids of, besides echoing the id it was asked
        for: what a search, a list or a create answers (example, else generated)."""
        out: set[str] = set()
        for op in self._ops:
            ids = self._ids[op.name]
            body = self._examples[op.name]
            if body is None:
                _, response = _success_response(op)
                if response is None or not response.schema:
                    continue
                schema = sanitize_schema(response.schema)
                body = generate(schema, random.Random(self.seed), max_nodes=400)
            creates = (op.method or "").upper() == "POST" and _creates(op, list(ids))
            if creates and isinstance(body, dict):
                kind, field = self._created_kind(op, body)
                if kind is not None and field is not None:
                    out.add(kind)
            own = {p.kind for p in ids}
            root, items = self._answer_kinds(op)
            for issued in _walk(body, self.kinds, self._id_fields, root, items):
                # the `id` of an object of that kind; a field that merely shares the
                # parameter's name (countryCode) may hold a value the world knows
                if issued.obj is not None and issued.kind is not None and issued.kind not in own:
                    out.add(issued.kind)
        return frozenset(out)

    def _answer_kinds(self, op: Operation) -> tuple[str | None, str | None]:
        """The kind an answer of ``op`` is, and the kind of the items of its list: the
        answer itself is the resource its last id names (GET /movie/{movie_id},
        /person/{person_id}/movie_credits), the items what its path names last
        (/search/movie, /users/{user_id}/playlists)."""
        ids = self._ids[op.name]
        root = ids[-1].kind if ids else None
        path_kinds = _path_kinds(op, self.kinds)
        items = path_kinds[0] if path_kinds and not (ids and ids[-1].last) else None
        return root, items

    def _harvest(
        self,
        op: Operation,
        payload: Any,
        *,
        created: tuple[str | None, str] | None = None,
    ) -> None:
        root, items = self._answer_kinds(op)
        if created is not None:
            root = created[0]
        for issued in _walk(payload, self.kinds, self._id_fields, root, items):
            if created is not None and issued.value == created[1] and issued.kind == created[0]:
                continue
            self._remember(issued.kind, issued.value, issued.obj)

    def _example(self, op: Operation) -> Any:
        _, response = _success_response(op)
        if response is None or response.example is None:
            return None
        try:
            if len(json.dumps(response.example)) > MAX_EXAMPLE_BYTES:
                return None
        except (TypeError, ValueError):
            return None
        return response.example


def _own_id(payload: dict[str, Any], target: IdParam, value: str) -> None:
    """Set the answer's own id (``id``, or a field named as the parameter) to ``value``."""
    for key in ("id", target.name):
        if key in payload:
            payload[key] = _typed(value, payload[key])


def _creates(op: Operation, ids: list[IdParam]) -> bool:
    """Whether a POST to ``op`` creates a resource: it goes to a collection (``/orders``,
    ``/users/{user_id}/playlists``), not to an action on one (``/orders/{id}/cancel``)."""
    if op.path is None:
        return False
    segments = [s for s in op.path.split("?", 1)[0].strip("/").split("/") if s]
    if not segments or _VAR.match(segments[-1]):
        return False
    return not ids or singular(segments[-1]) != segments[-1].lower().replace("-", "_")


def _success_response(op: Operation) -> tuple[int, Response | None]:
    ok = [r for r in op.responses if r.status.startswith("2")]
    response = ok[0] if ok else None
    status = int(response.status) if response and response.status.isdigit() else 200
    return status, response


def _object_kind(obj: Mapping[str, Any], kinds: frozenset[str]) -> str | None:
    for key in _KIND_FIELDS:
        value = obj.get(key)
        if isinstance(value, str) and singular(value) in kinds:
            return singular(value)
    return None


def _walk(
    payload: Any,
    kinds: frozenset[str],
    id_fields: Mapping[str, str],
    root: str | None,
    items: str | None,
) -> Iterator[_Issued]:
    """Every id an answer carries, with the kind of the object holding it: ``root`` for
    the answer itself, ``items`` for the items of its top-level list."""
    # (node, nearest enclosing key naming a kind, kind it has by its place in the answer)
    top = items if isinstance(payload, list) else root
    stack: list[tuple[Any, str | None, str | None]] = [(payload, None, top)]
    seen = 0
    while stack and seen < _WALK_NODES:
        node, enclosing, context = stack.pop()
        seen += 1
        if isinstance(node, list):
            stack.extend((item, enclosing, context) for item in reversed(node))
            continue
        if not isinstance(node, dict):
            continue
        if node is payload and context is not None:
            kind: str | None = context  # what was asked for: /credit/{credit_id} is a credit
        else:
            kind = _object_kind(node, kinds) or enclosing or context
        if "id" in node and _is_id_value(node["id"]):
            yield _Issued(kind, str(node["id"]), node)
        for key, value in node.items():
            if not isinstance(key, str):
                continue
            field_kind = id_fields.get(key) or (
                singular(key[:-3]) if key.endswith("_id") and singular(key[:-3]) in kinds else None
            )
            if field_kind is not None and _is_id_value(value):
                yield _Issued(field_kind, str(value), None)
            if isinstance(value, dict | list):
                inner = _key_kind(key, kinds) or enclosing
                # the items of a top-level list ("results": [...]) are what the path names
                inner_context = items if key in _LIST_KEYS and node is payload else None
                stack.append((value, inner, inner_context))


def _snapshot(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The scalar fields of ``obj``, at most :data:`_SNAPSHOT_BYTES` of them."""
    out: dict[str, Any] = {}
    size = 0
    for key, value in obj.items():
        if isinstance(value, dict | list):
            continue
        size += len(str(key)) + len(str(value)) + 4
        if size > _SNAPSHOT_BYTES:
            break
        out[key] = value
    return out


def _overlay(payload: dict[str, Any], values: Mapping[str, Any], *, only_present: bool) -> None:
    """Copy scalar ``values`` into ``payload`` where the types agree."""
    for key, value in values.items():
        if isinstance(value, dict | list) and only_present is False:
            continue
        if key not in payload:
            continue
        old = payload[key]
        if old is None or value is None or type(old) is type(value):
            payload[key] = value
        elif isinstance(old, float) and isinstance(value, int) and not isinstance(value, bool):
            payload[key] = float(value)


def _typed(value: str, like: Any) -> Any:
    """The path's text as the type the body uses for it (``"550"`` -> ``550``)."""
    if isinstance(like, int) and not isinstance(like, bool):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def _fresh_id(template: Any, rng: random.Random) -> Any:
    """An id shaped like ``template``: ``ORD-123456`` -> ``ORD-804417``."""
    if isinstance(template, int):
        return rng.randint(100_000, 999_999)
    text = str(template)
    digits = sum(c.isdigit() for c in text)
    out = []
    for c in text:
        if c.isdigit():
            out.append(str(rng.randint(0, 9)))
        elif digits >= 4 or not c.isascii() or not c.isalpha():
            out.append(c)  # keep the prefix and separators of "ORD-123456"
        elif c.isupper():
            out.append(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
        else:
            out.append(rng.choice("abcdefghijklmnopqrstuvwxyz"))
    fresh = "".join(out)
    if fresh == text or not any(c.isalnum() for c in text):
        fresh = f"{text}-{rng.randint(1000, 9999)}"
    return fresh


# -- generating bodies ------------------------------------------------------------------


def generate(
    schema: Mapping[str, Any],
    rng: random.Random,
    *,
    max_depth: int = _MAX_DEPTH,
    max_items: int = 3,
    max_nodes: int = _MAX_NODES,
) -> Any:
    """A value that conforms to a *sanitized* ``schema``, drawn from ``rng``.

    Enums and bounds are respected, ``id`` fields get distinct ids, arrays hold up to
    ``max_items`` items (``minItems`` is honoured up to 20), objects below ``max_depth``
    keep only required fields, and at most ``max_nodes`` values are made.

    >>> generate({"type": "object", "properties": {"n": {"type": "integer",
    ...     "minimum": 3, "maximum": 3}}, "required": ["n"]}, random.Random(0))
    {'n': 3}
    """
    budget = [max_nodes]
    return _gen(schema, rng, 0, max_depth, max_items, budget, "")


def _gen(
    schema: Mapping[str, Any],
    rng: random.Random,
    depth: int,
    max_depth: int,
    max_items: int,
    budget: list[int],
    name: str,
) -> Any:
    budget[0] -= 1
    if budget[0] < -_MAX_NODES:
        return None  # far past the budget (a required, recursive, wide schema): stop here
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    options = schema.get("oneOf")
    if isinstance(options, list) and options:
        return _one_of(options, rng, depth, max_depth, max_items, budget, name)
    options = schema.get("anyOf")
    if isinstance(options, list) and options:
        return _gen(options[0], rng, depth + 1, max_depth, max_items, budget, name)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            if not isinstance(part, Mapping):
                continue
            for k, v in part.items():
                if k == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **v}
                elif k == "required":
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *v]))
                else:
                    merged.setdefault(k, v)
        return _gen(merged, rng, depth, max_depth, max_items, budget, name)
    types = schema.get("type")
    kind = types[0] if isinstance(types, list) and types else types
    if isinstance(types, list) and kind == "null" and len(types) > 1:
        kind = types[1]
    if kind is None:
        if "properties" in schema:
            kind = "object"
        elif "items" in schema:
            kind = "array"
        elif "example" in schema:
            return schema["example"]
        else:
            kind = "string"
    if "example" in schema and kind not in ("object", "array"):
        if _is_id_name(name) and _is_id_value(schema["example"]):
            return _fresh_id(schema["example"], rng)  # distinct ids of the documented shape
        return schema["example"]
    if kind == "null":
        return None
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        return _gen_number(schema, kind, rng, name)
    if kind == "string":
        return _gen_string(schema, rng, name)
    if kind == "array":
        count = rng.randint(1, max_items)
        low = schema.get("minItems")
        if isinstance(low, int) and low > count:
            count = min(low, _MAX_ITEMS)
        high = schema.get("maxItems")
        if isinstance(high, int):
            count = min(count, high)
        if depth >= max_depth:
            count = min(low, _MAX_ITEMS) if isinstance(low, int) else 0
        if budget[0] <= 0:
            count = 0
        item = schema.get("items")
        if not isinstance(item, Mapping):
            item = {}
        return [
            _gen(item, rng, depth + 1, max_depth, max_items, budget, name) for _ in range(count)
        ]
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    out: dict[str, Any] = {}
    for prop, sub in props.items():
        deep = depth >= max_depth or budget[0] <= 0
        if deep and (prop not in required or depth >= max_depth * 2):
            continue  # below the limit only what is required, so recursive schemas end
        if isinstance(sub, Mapping):
            out[prop] = _gen(sub, rng, depth + 1, max_depth, max_items, budget, prop)
    for prop in required - set(out):
        if isinstance(prop, str) and prop not in props:
            out[prop] = "string"  # required but undocumented: any value will do
    return out


def _one_of(
    options: list[Any],
    rng: random.Random,
    depth: int,
    max_depth: int,
    max_items: int,
    budget: list[int],
    name: str,
) -> Any:
    """A value valid under exactly one option, as ``oneOf`` asks: ``oneOf: [integer,
    number]`` needs a number with a fraction."""
    value: Any = None
    for option in options[:4]:
        if not isinstance(option, Mapping):
            continue
        value = _gen(option, rng, depth + 1, max_depth, max_items, budget, name)
        others = [o for o in options if o is not option and isinstance(o, Mapping)]
        try:
            if not any(validator_for(o)(o).is_valid(value) for o in others):
                return value
        except Exception:  # a schema jsonschema cannot read: the value will have to do
            return value
    return value


def _is_id_name(name: str) -> bool:
    return name.lower() == "id" or name.endswith(("_id", "Id"))


def _gen_number(schema: Mapping[str, Any], kind: str, rng: random.Random, name: str) -> Any:
    low = schema.get("minimum")
    high = schema.get("maximum")
    step = 1 if kind == "integer" else 0.5
    if isinstance(schema.get("exclusiveMinimum"), int | float):
        low = schema["exclusiveMinimum"] + step
    if isinstance(schema.get("exclusiveMaximum"), int | float):
        high = schema["exclusiveMaximum"] - step
    is_id = _is_id_name(name)
    default_high = 999_999 if is_id else 100
    lo = low if isinstance(low, int | float) else (1 if high is None or high >= 1 else high - 100)
    hi = high if isinstance(high, int | float) else max(lo, default_high if lo < 100 else lo * 2)
    if kind == "integer":
        lo_i, hi_i = int(-(-lo // 1)), int(hi // 1)
        value: float = rng.randint(lo_i, hi_i) if lo_i <= hi_i else lo_i
    else:
        value = round(rng.uniform(lo, hi), 2) if lo <= hi else lo
    multiple = schema.get("multipleOf")
    if isinstance(multiple, int | float) and multiple > 0:
        value = multiple * max(1, round(value / multiple))
    if kind == "integer":
        return int(value)
    return float(value)


# a description that states the one value a string takes, as Spotify's do
_STATED_VALUE = re.compile(r'^[^"`]*:\s*["`]([\w-]{1,64})["`]\.?\s*$')
_WORDS = ("alpha", "bravo", "cedar", "delta", "ember", "fjord", "grove", "harbor", "indigo")


def _gen_string(schema: Mapping[str, Any], rng: random.Random, name: str) -> str:
    fmt = schema.get("format")
    stated = _STATED_VALUE.match(str(schema.get("description", "")))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        sample = _from_pattern(pattern, rng)
        if sample is not None:
            return sample
    if isinstance(fmt, str) and fmt in _FORMAT_SAMPLES:
        text = _FORMAT_SAMPLES[fmt]
    elif isinstance(schema.get("default"), str):
        text = schema["default"]
    elif stated is not None:
        text = stated.group(1)  # 'The object type: "playlist"' states the one value
    elif _is_id_name(name):
        text = "".join(rng.choice("0123456789abcdefghijklmnopqrstuvwxyz") for _ in range(12))
    else:
        text = f"{rng.choice(_WORDS)} {rng.randint(1, 999)}"
    min_len = schema.get("minLength")
    max_len = schema.get("maxLength")
    if isinstance(min_len, int) and len(text) < min_len:
        text += "x" * min(min_len - len(text), 10_000)
    if isinstance(max_len, int) and len(text) > max_len:
        text = text[: max(max_len, 0)]
    return text


_CLASSES = {
    "d": "0123456789",
    "w": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    "s": " ",
}
_QUANTIFIER = re.compile(r"\{(\d{1,4})(,(\d{0,4}))?\}|[?*+]")


def _from_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string matching ``pattern`` when it is a plain sequence of literals, classes
    (``[A-Z0-9]``, ``\\d``, ``\\w``) and counts (``{7}``, ``{2,4}``, ``+``): what id and
    code patterns are (``^tt[0-9]{7}``, ``^ORD-[0-9]{6}$``). ``None`` for anything else
    (groups, alternation, negated classes), so the caller falls back to the docs."""
    text = pattern[1:] if pattern.startswith("^") else pattern
    if text.endswith("$") and not text.endswith("\\$"):
        text = text[:-1]
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in "()|^$":
            return None
        if c == "\\":
            if i + 1 >= len(text):
                return None
            nxt = text[i + 1]
            choices = _CLASSES.get(nxt, nxt if not nxt.isalnum() else None)
            if choices is None:
                return None
            i += 2
        elif c == "[":
            end = text.find("]", i + 1)
            if end < 0 or text[i + 1 : i + 2] == "^":
                return None
            choices = _class_chars(text[i + 1 : end])
            if not choices:
                return None
            i = end + 1
        elif c == ".":
            choices, i = "x", i + 1
        elif c in "?*+{":
            return None
        else:
            choices, i = c, i + 1
        low, high = 1, 1
        m = _QUANTIFIER.match(text, i)
        if m is not None:
            if m.group(0) == "?":
                low, high = 0, 1
            elif m.group(0) == "*":
                low, high = 0, 3
            elif m.group(0) == "+":
                low, high = 1, 3
            else:
                low = int(m.group(1))
                high = low if m.group(2) is None else int(m.group(3) or low + 3)
            i = m.end()
        if high < low or low > 256:
            return None
        out.extend(rng.choice(choices) for _ in range(rng.randint(low, min(high, low + 3))))
    return "".join(out)


def _class_chars(body: str) -> str:
    chars: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            chars.extend(_CLASSES.get(body[i + 1], body[i + 1]))
            i += 2
        elif i + 2 < len(body) and body[i + 1] == "-" and ord(body[i]) <= ord(body[i + 2]):
            chars.extend(
                chr(x) for x in range(ord(body[i]), min(ord(body[i + 2]), ord(body[i]) + 256) + 1)
            )
            i += 3
        else:
            chars.append(body[i])
            i += 1
    return "".join(dict.fromkeys(chars))

"""What the sandbox remembers between calls: the resources of one session.

The sandbox (:mod:`autofeedback.serve._sandbox`) validates a request; this module answers a
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
* **collections** (:mod:`autofeedback.serve._sandbox_store`): a path with a detail below it
  that is listed or created is one :class:`Store` of whole records per parent. Its list
  pages through the store (the paging the spec documents), its detail reads a record,
  a create adds one with a fresh id of the documented shape, an update or replace
  changes one in place, a delete removes it for good. Every answer shows the record's
  value in each field it shares with it, and the record keeps what an answer showed
  first, so lists and details agree field by field. A record's value is one that every
  answer showing the field allows (the create answer's ``role: [member, none]`` and the
  detail's ``[owner, member, none]``: ``member`` or ``none``), so no answer has to show
  another; only where the spec leaves no such value (or the caller sent one an answer
  does not allow) does that answer show a value of its own. A store starts with the list's
  example items, then :data:`SEED_RECORDS` generated ones, drawn from the seed and the
  store alone.
* **documented state errors** (:mod:`autofeedback.serve._sandbox_refusals`): what the spec's
  error responses say the server refuses for what it remembers: a create whose unique
  field another record holds (``already exists``), an operation on a resource in a
  state its docs refuse (``already shipped``, ``a cancelled order``), a create past a
  documented quota. Each is answered as :class:`Refused`, with the documented response.
  A new record starts in its status field's first (or default) state, and an action
  (``POST /orders/{id}/cancel``) leaves its resource in the state it names.
* **bodies**: the operation's documented example, else generated from its response
  schema by :func:`generate` (:mod:`autofeedback.serve._sandbox_values`): deterministic for a
  seed and the request, every value valid under its schema, arrays and depth bounded.

Bounded: at most ``max_resources`` remembered ids and records (least recently used
forgotten first), 64 MiB of records, 4,096 stores, snapshots of at most 4 KiB each,
generated bodies of at most 2,000 values.
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

from autofeedback.catalog._schema import sanitize_schema
from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._model import Operation, Response
from autofeedback.serve._sandbox_refusals import (
    StateRule,
    action_verb,
    participle_of,
    state_rules,
    status_fields,
)
from autofeedback.serve._sandbox_store import (
    Collection,
    IdParam,
    Paging,
    Store,
    find_collections,
    id_params,
    normal_template,
    props_of,
    singular,
)
from autofeedback.serve._sandbox_values import (
    agreeable,
    fits,
    fresh_id,
    generate,
    merged,
    without_marked,
)

__all__ = [
    "IdParam",
    "NotFound",
    "Refused",
    "SessionState",
    "StateRule",
    "generate",
    "id_params",
    "singular",
]

#: Largest documented example used as a body; a larger one is generated instead.
MAX_EXAMPLE_BYTES = 1 << 20
_SNAPSHOT_BYTES = 4096
_WALK_NODES = 20_000
_VAR = re.compile(r"^\{([^{}/]+)\}$")
_VARS = re.compile(r"\{[^{}/]+\}")
#: records a store starts with, generated (after the list's documented example items)
SEED_RECORDS = 12
#: most items one list answer shows when the spec documents no paging
MAX_LIST = 100
#: bytes of records all stores together keep (the oldest are forgotten first)
_MAX_RECORD_BYTES = 64 << 20
_MAX_RECORD = 64 << 10
_MAX_STORES = 4096
_MAX_PAGE = 1000
_LIST_KEYS = frozenset({"results", "items", "data", "content", "records", "entries"})
_KIND_FIELDS = ("type", "media_type", "object", "kind")


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


#: the sandbox's error kind for each kind of documented state error
REFUSAL_KINDS = {"duplicate": "conflict", "state": "invalid_state", "quota": "quota_exceeded"}


@dataclass(frozen=True)
class Refused:
    """A valid request the spec documents a state error for (:class:`StateRule`):
    ``message`` says why, ``location`` and ``parameter`` which part of the request."""

    rule: StateRule
    message: str
    location: tuple[str, ...] = ()
    parameter: str | None = None

    @property
    def kind(self) -> str:
        return REFUSAL_KINDS[self.rule.kind]


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
        # sanitized once: a schema of thousands of nodes is not re-read per request
        self._schemas: dict[str, dict[str, Any] | None] = {}
        for op in operations:
            _, response = _success_response(op)
            raw = response.schema if response is not None else None
            # what an answer never shows (a writeOnly password) is never made up for one
            self._schemas[op.name] = (
                sanitize_schema(raw, drop="writeOnly") if raw is not None else None
            )
        self.collections, self._roles, self.notes = find_collections(
            operations, self._schemas, self._examples
        )
        self._rules = self._state_rules()
        # each operation's path parameters in path order: a store's parents are the first ones
        self._path_vars = {
            op.name: [v.strip("{}") for v in _VARS.findall(op.path.split("?", 1)[0])]
            if op.path
            else []
            for op in operations
        }
        #: the kinds whose ids are checked: those some operation hands out (a search, a
        #: list, a create). An id of another kind can only come from the caller's own
        #: knowledge (a year, a country code), so any value is accepted for it.
        self.checked_kinds = self._issued_kinds() | {c.kind for c in self.collections.values()}
        self._lock = threading.RLock()
        self._known: OrderedDict[tuple[str | None, str], Mapping[str, Any] | None] = OrderedDict()
        self._by_value: dict[str, int] = {}
        self._deleted: OrderedDict[tuple[str | None, str], None] = OrderedDict()
        self._created = 0
        self._stores: OrderedDict[tuple[str, tuple[str, ...]], Store] = OrderedDict()
        # every record of every store, oldest first, with its size: the bound
        self._records: OrderedDict[tuple[tuple[str, tuple[str, ...]], str], int] = OrderedDict()
        self._record_bytes = 0
        # which store holds an id of a kind: ids are unique within a kind
        self._owner: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}
        # per schema object (each kept alive by the entry): its properties, whether an
        # item of it can be read straight from a record; per list: its envelope schema
        self._props_cache: dict[int, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        self._plain: dict[int, tuple[Mapping[str, Any], bool]] = {}
        self._envelopes: dict[str, dict[str, Any]] = {}
        # per collection: each field's schema in every answer that shows a record
        self._views: dict[
            tuple[str, bool], tuple[dict[str, tuple[Mapping[str, Any], ...]], frozenset[str]]
        ] = {}
        # per (collection, created, field): a value every answer allows, drawn from the
        # seed alone ((False, None): the spec leaves none), the fallback for a record
        self._agreed: dict[tuple[str, bool, str], tuple[bool, Any]] = {}
        # per record: (field, schema id) -> (value, schema, whether the value fits)
        self._checked: dict[tuple[Any, str], dict[tuple[str, int], tuple[Any, Any, bool]]] = {}
        # the state an action left a resource in that no store holds: (kind, id) -> fields
        self._marks: OrderedDict[tuple[str | None, str], dict[str, str]] = OrderedDict()
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
            self._stores.clear()
            self._marks.clear()
            self._checked.clear()
            self._records.clear()
            self._record_bytes = 0
            self._owner.clear()
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
    ) -> tuple[int, Any] | NotFound | Refused:
        """The success answer to a valid request, :class:`NotFound` or :class:`Refused`.

        ``body`` is the parsed JSON request body (``None`` when there is none)."""
        method = (op.method or "POST").upper()
        ids = [p for p in self._ids[op.name] if p.name in path_vars]
        with self._lock:
            for p in ids:
                value = path_vars[p.name]
                store = self._store_of(op, p.name, path_vars)
                if store is not None:
                    if not self._holds(store, value):
                        return NotFound(p.name, p.kind, value)
                elif p.kind not in self.checked_kinds:
                    self._remember(p.kind, value, None)
                elif not self.known(p.kind, value):
                    return NotFound(p.name, p.kind, value)
            refused = self._refused_state(op, ids, path_vars)
            if refused is not None:
                return refused
            role = self._roles.get(op.name)
            if role is not None:
                return self._answer_from_store(op, role[0], role[1], path_vars, query, body)
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
            if ids:
                changed = self._act(op, ids[-1], path_vars)
                if isinstance(payload, dict):  # the answer shows the state it left
                    payload.update({k: v for k, v in changed.items() if k in payload})
            if status == 204:
                return status, None
            return status, payload

    def _body(self, op: Operation, response: Response | None, rng: random.Random) -> Any:
        example = self._examples[op.name]
        if example is not None:
            return json.loads(json.dumps(example))  # a fresh copy to fill in
        schema = self._schemas.get(op.name)
        if schema is not None:
            return generate(schema, rng)
        return {"ok": True, "operation": op.name}

    # -- collections: one store each -------------------------------------------------

    def _store_of(self, op: Operation, param: str, path_vars: Mapping[str, str]) -> Store | None:
        """The store the path parameter ``param`` of ``op`` names an item of, if the path
        up to it is a collection (``/calendars/{calendar_id}``: the calendars)."""
        if op.path is None:
            return None
        segments = [s for s in op.path.split("?", 1)[0].strip("/").split("/") if s]
        token = "{" + param + "}"
        if token not in segments:
            return None
        at = segments.index(token)
        collection = self.collections.get(normal_template("/" + "/".join(segments[:at])))
        if collection is None:
            return None
        names = self._path_vars[op.name][: collection.parents]
        return self._store(collection, tuple(path_vars.get(n, "") for n in names))

    def _store(self, collection: Collection, parents: tuple[str, ...]) -> Store:
        key = (collection.template, parents)
        store = self._stores.get(key)
        if store is not None:
            self._stores.move_to_end(key)
            return store
        store = self._stores[key] = Store(collection, key)
        while len(self._stores) > _MAX_STORES:
            _, gone = self._stores.popitem(last=False)
            for rid in list(gone.records):
                self._drop(gone, rid)
        self._seed_store(store)
        return store

    def _seed_store(self, store: Store) -> None:
        """The records a store starts with: the list's documented example items, then
        generated ones, each drawn from the seed and the store alone (not from what was
        asked before), so a session is the same whatever order it reads its stores in."""
        collection = store.collection
        for item in collection.seed_items:
            shown = str(item[collection.id_field])
            if (collection.kind, shown) not in self._owner:
                record = json.loads(json.dumps(item))
                rng = random.Random(f"{self.seed}|record|{store.key}|{shown}")
                self._conform(collection, record, rng, created=False)  # a bad example
                self._add(store, shown, record)
        for i in range(SEED_RECORDS - len(store.records)):
            rid = self._new_id(store, f"{self.seed}|seed|{store.key}|{i}")
            if rid is None:
                break
            rng = random.Random(f"{self.seed}|record|{store.key}|{rid}")
            self._add(store, rid, self._new_record(store, rid, {}, rng))

    def _holds(self, store: Store, value: str) -> bool:
        """Whether ``store`` has an item ``value``; one that another answer issued (a
        search, an example) joins it, one deleted stays gone."""
        if value in store.records:
            return True
        collection = store.collection
        if value in store.deleted or (collection.kind, value) in self._owner:
            return False
        if not self.known(collection.kind, value):
            return False
        snapshot = self._known.get((collection.kind, value)) or self._known.get((None, value))
        rng = random.Random(f"{self.seed}|record|{store.key}|{value}")
        record = self._new_record(store, value, {}, rng)
        for key, field_value in (snapshot or {}).items():
            # what the answer that issued it showed, where every answer of the record may
            if key != collection.id_field and self._agrees(collection, key, field_value, False):
                record[key] = field_value
        self._add(store, value, record)
        return True

    def _new_id(self, store: Store, key: str) -> str | None:
        """A fresh id for ``store``'s kind, of the documented shape, that no store, no
        earlier answer and no delete has used; ``None`` if the id space is spent."""
        collection = store.collection
        for attempt in range(50):
            rng = random.Random(f"{key}|{attempt}")
            text = str(fresh_id(collection.id_schema, rng))
            if (
                (collection.kind, text) not in self._owner
                and text not in store.deleted
                and not self.known(collection.kind, text)
            ):
                return text
        return None

    def _new_record(
        self,
        store: Store,
        rid: str,
        fields: Mapping[str, Any],
        rng: random.Random,
        *,
        created: bool = False,
    ) -> dict[str, Any]:
        """A whole item: generated from the record schema, the parents' ids in the
        fields named after them (an event's ``calendar_id``), ``fields`` as sent."""
        collection = store.collection
        record = generate(collection.record_schema, rng)
        record = record if isinstance(record, dict) else {}
        props = props_of(collection.record_schema)
        given = set(fields)
        for name, value in zip(collection.parent_fields, store.key[1], strict=False):
            sub = props.get(name)
            if sub is not None:
                typed = _as_schema(value, sub)
                if fits(sub, typed):
                    record[name] = typed
                    given.add(name)
        self._conform(collection, record, rng, created=created, keep=given)
        record.update(fields)
        record[collection.id_field] = _as_schema(rid, collection.id_schema)
        return record

    def _fields(
        self, collection: Collection, created: bool
    ) -> tuple[dict[str, tuple[Mapping[str, Any], ...]], frozenset[str]]:
        """Each field a record of ``collection`` may show, with its schema in every
        answer that shows it (the list's items, the detail's, the update's and, for a
        record a create made, the create's), and the fields some answer always lists
        (not only in a ``oneOf`` option: a record holds those whatever it is)."""
        hit = self._views.get((collection.template, created))
        if hit is not None:
            return hit
        roles = ("create", "read", "update", "replace") if created else ("read", "update")
        views: list[Mapping[str, Any] | None] = [collection.item_schema]
        for name, (role, owner) in self._roles.items():
            if owner is collection and role in roles:
                views.append(self._schemas.get(name))
        if len(views) == 1:
            views.append(collection.record_schema)  # no detail: what the records are made of
        subs: dict[str, list[Mapping[str, Any]]] = {}
        plain: set[str] = set()
        seen: set[int] = set()
        for view in views:
            if not isinstance(view, Mapping) or id(view) in seen:
                continue
            seen.add(id(view))
            for name, sub in self._props(view).items():
                if isinstance(sub, Mapping) and sub not in subs.get(name, ()):
                    subs.setdefault(name, []).append(sub)
            own = merged(view).get("properties")
            plain.update(own if isinstance(own, Mapping) else ())
        hit = ({k: tuple(v) for k, v in subs.items()}, frozenset(plain))
        self._views[(collection.template, created)] = hit
        return hit

    def _agrees(self, collection: Collection, name: str, value: Any, created: bool) -> bool:
        """Whether every answer that shows ``name`` of a ``collection`` record (one a
        create made: ``created``) allows ``value``."""
        subs = self._fields(collection, created)[0].get(name, ())
        return all(fits(sub, value) for sub in subs)

    def _conform(
        self,
        collection: Collection,
        record: dict[str, Any],
        rng: random.Random,
        *,
        created: bool,
        keep: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        """Give each field of ``record`` (and each field an answer always lists) a value
        every answer showing it allows, where the spec leaves one: one record, shown the
        same by every answer. ``keep`` names fields left as they are (what was sent);
        ``created``: a create made the record, so its answer shows it too."""
        subs, plain = self._fields(collection, created)
        for name, schemas in subs.items():
            if name in keep or name == collection.id_field:
                continue
            if name not in record and name not in plain:
                continue  # only in a oneOf option the record did not take
            if name in record and all(fits(s, record[name]) for s in schemas):
                continue
            key = (collection.template, created, name)
            agreed = self._agreed.get(key)
            if agreed is None:
                agreed = agreeable(list(schemas), random.Random(f"{self.seed}|agree|{key}"))
                self._agreed[key] = agreed
            if not agreed[0]:
                continue  # the spec allows no value in every answer: each shows its own
            found, value = agreeable(list(schemas), rng, tries=1)
            record[name] = value if found else json.loads(json.dumps(agreed[1]))

    def _add(self, store: Store, rid: str, record: dict[str, Any]) -> None:
        size = _size(record)
        if size > _MAX_RECORD:
            record = _snapshot(record)
            size = _size(record)
        self._drop(store, rid)
        store.records[rid] = record
        kind = store.collection.kind
        for issued in _walk(record, self.kinds, self._id_fields, kind, None):
            if issued.value != rid or issued.kind != kind:  # other kinds' ids it names
                self._remember(issued.kind, issued.value, issued.obj)
        self._records[(store.key, rid)] = size
        self._record_bytes += size
        self._owner[(store.collection.kind, rid)] = store.key
        self._evict()

    def _resize(self, store: Store, rid: str) -> None:
        """Count a changed record's new size; it keeps its place in the list."""
        record = store.records[rid]
        size = _size(record)
        if size > _MAX_RECORD:
            record = store.records[rid] = _snapshot(record)
            size = _size(record)
        self._record_bytes += size - self._records.pop((store.key, rid), 0)
        self._records[(store.key, rid)] = size  # the most recently used: forgotten last
        self._evict()

    def _evict(self) -> None:
        while len(self._records) > self.max_resources or self._record_bytes > _MAX_RECORD_BYTES:
            key, old = next(iter(self._records))
            gone = self._stores.get(key)
            if gone is None:
                self._record_bytes -= self._records.pop((key, old))
            else:
                self._drop(gone, old)

    def _drop(self, store: Store, rid: str) -> None:
        """Forget a record (the bound: it is not deleted, only no longer known)."""
        store.records.pop(rid, None)
        self._checked.pop((store.key, rid), None)
        size = self._records.pop((store.key, rid), None)
        if size is not None:
            self._record_bytes -= size
        if self._owner.get((store.collection.kind, rid)) == store.key:
            del self._owner[(store.collection.kind, rid)]

    def _delete(self, store: Store, rid: str) -> None:
        self._drop(store, rid)
        store.deleted[rid] = None
        while len(store.deleted) > self.max_resources:
            store.deleted.pop(next(iter(store.deleted)))
        self._forget(store.collection.kind, rid)

    def _props(self, schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
        """:func:`props_of`, once per (long-lived, cached) schema object."""
        if schema is None:
            return {}
        hit = self._props_cache.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        props = props_of(schema)
        if len(self._props_cache) < 20_000:
            self._props_cache[id(schema)] = (schema, props)
        return props

    def _item(self, schema: Mapping[str, Any], store: Store, rid: str, key: str) -> Any:
        """An item of ``schema`` showing record ``rid``; straight from the record once it
        holds every field the schema has (the common case: it learned them when first
        shown), else generated around it from ``key``'s seed."""
        record = store.records[rid]
        plain = self._plain.get(id(schema))
        if plain is None or plain[0] is not schema:
            flat = merged(schema)
            is_plain = not any(k in flat for k in ("oneOf", "anyOf"))
            plain = (schema, is_plain and bool(flat.get("properties")))
            if len(self._plain) < 20_000:
                self._plain[id(schema)] = plain
        props = self._props(schema)
        if plain[1] and all(k in record for k in props):
            # what each field was found to be, kept with the record (and dropped with it):
            # a list shows the same records against the same schemas on every call
            checked = self._checked.setdefault((store.key, rid), {})
            ok = True
            for name, sub in props.items():
                value = record[name]
                hit = checked.get((name, id(sub)))
                if hit is None or hit[0] is not value or hit[1] is not sub:
                    hit = checked[(name, id(sub))] = (value, sub, fits(sub, value))
                ok = ok and hit[2]
            if ok:
                return {k: record[k] for k in props}
        return self._project(schema, generate(schema, random.Random(key)), record)

    def _project(
        self, schema: Mapping[str, Any] | None, filler: Any, record: dict[str, Any]
    ) -> Any:
        """``filler`` (an answer of ``schema``, generated or the documented example)
        showing ``record``: every field they share takes the record's value, and the
        record keeps what the answer showed first, so every answer agrees with it."""
        if not isinstance(filler, dict):
            return filler
        props = self._props(schema)
        for key, value in record.items():
            if (key in props or key in filler) and fits(props.get(key), value):
                filler[key] = value
        for key, value in filler.items():
            record.setdefault(key, value)
        return filler

    def _answer_from_store(
        self,
        op: Operation,
        role: str,
        collection: Collection,
        path_vars: Mapping[str, str],
        query: list[tuple[str, str]],
        body: Any,
    ) -> tuple[int, Any] | Refused:
        status, response = _success_response(op)
        rng = random.Random(f"{self.seed}|{op.name}|{sorted(path_vars.items())}|{sorted(query)}")
        names = self._path_vars[op.name]
        store = self._store(
            collection, tuple(path_vars.get(n, "") for n in names[: collection.parents])
        )
        schema = self._schemas.get(op.name)
        sent = without_marked(body, op.body_schema) if isinstance(body, Mapping) else {}
        fields = {k: v for k, v in sent.items() if isinstance(k, str) and k != collection.id_field}
        payload: Any
        if role == "list":
            payload = self._list(op, store, query, rng)
        elif role == "create":
            # documented state errors of a create (issue 38): a unique field another
            # record holds (the documented 409), a quota the session has spent
            refused = self._refused_create(op, store, fields)
            if refused is not None:
                return refused
            rid = self._new_id(store, f"{self.seed}|create|{store.key}|{store.created}")
            store.created += 1
            payload = self._body(op, response, rng)
            if rid is not None:
                record = self._new_record(store, rid, fields, rng, created=True)
                for name, states in status_fields(collection.record_schema).items():
                    # a new resource starts in its first documented state (its default)
                    # that every answer showing it allows
                    sub = props_of(collection.record_schema).get(name)
                    first = sub.get("default") if isinstance(sub, Mapping) else None
                    shared = [v for v in states if self._agrees(collection, name, v, True)]
                    if name not in fields and shared:
                        record[name] = first if first in shared else shared[0]
                self._add(store, rid, record)
                payload = self._project(schema, payload, record)
                self._project(
                    collection.record_schema, generate(collection.record_schema, rng), record
                )
        else:
            rid = (
                path_vars.get(names[collection.parents], "")
                if len(names) > collection.parents
                else ""
            )
            record = store.records.get(rid, {})
            payload = self._body(op, response, rng)
            if role == "delete":
                self._delete(store, rid)
                if isinstance(payload, dict):
                    _own_id(payload, IdParam(collection.param, collection.kind, True), rid)
                    if isinstance(payload.get("deleted"), bool):
                        payload["deleted"] = True
                return (status, None) if status == 204 else (status, payload)
            if role in ("update", "replace"):
                refused = self._refused_create(op, store, fields, rid=rid)
                if refused is not None:
                    return refused
                if role == "replace":
                    keep = (collection.id_field, *collection.parent_fields)
                    for key in [k for k in record if k not in keep]:
                        del record[key]
                record.update(fields)
                # what a replace left out: values every answer allows, as at a create
                self._conform(collection, record, rng, created=False, keep=set(record))
                self._resize(store, rid)
                self._project(
                    collection.record_schema, generate(collection.record_schema, rng), record
                )
            if role in ("read", "update", "replace"):
                payload = self._project(schema, payload, record)
        if role == "list" and isinstance(payload, dict) and collection.list_at:
            # the items' ids were taken when each record was added; the rest is small
            rest = {k: v for k, v in payload.items() if k != collection.list_at[0]}
            self._harvest(op, rest)
        elif role != "list":
            self._harvest(op, payload)
        if status == 204:
            return status, None
        return status, payload

    def _envelope(self, op: Operation, collection: Collection, rng: random.Random) -> Any:
        """A list answer around its items: the example, else generated from the schema
        less the items (made from the store instead)."""
        if self._examples[op.name] is not None or not collection.list_at:
            return self._body(op, _success_response(op)[1], rng)
        schema = self._schemas.get(op.name) or {}
        hit = self._envelopes.get(op.name)
        if hit is None:
            flat = merged(schema)
            props = {k: v for k, v in (flat.get("properties") or {}).items()}
            props.pop(collection.list_at[0], None)
            hit = self._envelopes[op.name] = {**flat, "properties": props}
        return generate(hit, rng)

    def _list(
        self, op: Operation, store: Store, query: list[tuple[str, str]], rng: random.Random
    ) -> Any:
        """One page of ``store`` in the list's answer, the paging fields filled in."""
        collection = store.collection
        paging = collection.paging
        asked = dict(query)
        ids = list(store.records)
        size = MAX_LIST if paging.style == "all" else paging.default_size
        if paging.size is not None and _is_int(asked.get(paging.size)):
            size = int(asked[paging.size])
        size = max(0, min(size, _MAX_PAGE))
        start = 0
        page = paging.first_page
        if paging.style == "page" and paging.page is not None and _is_int(asked.get(paging.page)):
            page = int(asked[paging.page])
            start = max(0, page - paging.first_page) * size
        elif paging.style == "offset" and paging.offset and _is_int(asked.get(paging.offset)):
            start = int(asked[paging.offset])
        elif paging.style == "token" and paging.cursor and paging.cursor in asked:
            token = asked[paging.cursor]
            start = int(token) if _is_int(token) else len(ids)  # a token never issued: no page
        elif paging.style == "after" and paging.cursor and paging.cursor in asked:
            after = asked[paging.cursor]
            start = ids.index(after) + 1 if after in ids else len(ids)
        array = _array_schema(self._schemas.get(op.name), collection.list_at)
        if isinstance(array.get("maxItems"), int):
            size = min(size, array["maxItems"])
        shown = ids[start : start + size]
        more = start + size < len(ids)
        schema = collection.item_schema or {}
        items = [
            self._item(schema, store, rid, f"{self.seed}|item|{store.key}|{rid}|{op.name}")
            for rid in shown
        ]
        if collection.list_at in ((), None):
            return items
        envelope = self._envelope(op, collection, rng)
        if not isinstance(envelope, dict):
            envelope = {}
        envelope[collection.list_at[0]] = items
        if paging.style == "page":
            following: Any = page + 1
        elif paging.style in ("offset", "token"):
            following = start + size
        elif paging.style == "after":
            following = shown[-1] if shown else None
        else:
            following = None
        values = {
            "total": len(ids),
            "page": page,
            "pages": -(-len(ids) // size) if size else 0,
            "size": size,
            "offset": start,
            "more": more,
            "next": str(following) if more and following is not None else None,
            "first": shown[0] if shown else None,
            "last": shown[-1] if shown else None,
        }
        _fill_paging(envelope, self._schemas.get(op.name), values, paging)
        return envelope

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
            fresh = fresh_id(self._field_schema(op, field), rng, example=template)
            if not self.known(kind, str(fresh)):
                break
        self._created += 1
        payload[field] = fresh
        self._remember(kind, str(fresh), payload)
        return kind, str(fresh)

    def _field_schema(self, op: Operation, name: str) -> Mapping[str, Any]:
        sub = props_of(self._schemas.get(op.name)).get(name)
        return sub if isinstance(sub, Mapping) else {}

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

    # -- documented state errors -------------------------------------------------

    def _resource_of(self, op: Operation) -> Collection | None:
        """The collection whose item ``op`` acts on (``/orders/{id}/cancel``: the
        orders), or that it creates into."""
        role = self._roles.get(op.name)
        if role is not None:
            return role[1]
        ids = self._ids[op.name]
        if not ids or op.path is None:
            return None
        segments = [s for s in op.path.split("?", 1)[0].strip("/").split("/") if s]
        token = "{" + ids[-1].name + "}"
        if token not in segments:
            return None
        return self.collections.get(
            normal_template("/" + "/".join(segments[: segments.index(token)]))
        )

    def _state_rules(self) -> dict[str, tuple[StateRule, ...]]:
        """Each operation's documented state errors (see
        :mod:`autofeedback.serve._sandbox_refusals`)."""
        verbs: dict[str, list[str]] = {}  # collection template -> its actions' verbs
        for op in self._ops:
            verb, where = action_verb(op), self._resource_of(op)
            if verb is not None and where is not None:
                verbs.setdefault(where.template, []).append(verb)
        out: dict[str, tuple[StateRule, ...]] = {}
        for op in self._ops:
            if not op.error_responses:
                continue
            where = self._resource_of(op)
            schema = where.record_schema if where is not None else self._schemas.get(op.name)
            states = dict(status_fields(schema))
            for name, values in states.items():
                if not values and where is not None:
                    # no enum: the states the spec's actions leave it in
                    made = [
                        v + s for v in verbs.get(where.template, ()) for s in ("ed", "led", "d")
                    ]
                    states[name] = tuple(made)
            body = props_of(op.body_schema)
            fields = {
                k: str(v.get("description") or "") if isinstance(v, Mapping) else ""
                for k, v in body.items()
            } or {p.name: p.description for p in op.parameters if p.location == "argument"}
            role = self._roles.get(op.name)
            creates = role is not None and role[0] == "create"
            rules = state_rules(op, body_fields=fields, states=states, creates=creates)
            if rules:
                out[op.name] = rules
        return out

    def _refused_state(
        self, op: Operation, ids: list[IdParam], path_vars: Mapping[str, str]
    ) -> Refused | None:
        """A documented state error for the resource ``op`` acts on, if it is in a state
        the docs say ``op`` refuses."""
        rules = [r for r in self._rules.get(op.name, ()) if r.kind == "state"]
        if not rules or not ids:
            return None
        target = ids[-1]
        rid = path_vars.get(target.name, "")
        state = self._state_of(op, target, path_vars)
        for rule in rules:
            for field in rule.fields:
                if state.get(field) in rule.states:
                    what = target.kind or "resource"
                    return Refused(
                        rule,
                        f"the {what} '{rid}' is {state[field]}: {rule.text}",
                        ("path", target.name),
                        target.name,
                    )
        return None

    def _state_of(
        self, op: Operation, target: IdParam, path_vars: Mapping[str, str]
    ) -> dict[str, Any]:
        rid = path_vars.get(target.name, "")
        store = self._store_of(op, target.name, path_vars)
        state: dict[str, Any] = {}
        if store is not None and rid in store.records:
            record = store.records[rid]
            state.update({k: v for k, v in record.items() if isinstance(v, str)})
        state.update(self._marks.get((target.kind, rid), {}))
        return state

    def _act(self, op: Operation, target: IdParam, path_vars: Mapping[str, str]) -> dict[str, str]:
        """An action that succeeded leaves its resource in the state it names
        (``cancel`` -> ``cancelled``), where the resource documents that state; the
        fields it changed."""
        verb = action_verb(op)
        where = self._resource_of(op)
        changed: dict[str, str] = {}
        if verb is None or where is None:
            return changed
        rid = path_vars.get(target.name, "")
        store = self._store_of(op, target.name, path_vars)
        for field, states in status_fields(where.record_schema).items():
            state = participle_of(verb, states or (verb + "ed", verb + "led", verb + "d"))
            if state is None:
                continue
            changed[field] = state
            if store is not None and rid in store.records:
                store.records[rid][field] = state
            else:
                self._marks.setdefault((target.kind, rid), {})[field] = state
                self._marks.move_to_end((target.kind, rid))
                while len(self._marks) > self.max_resources:
                    self._marks.popitem(last=False)
        return changed

    def _refused_create(
        self, op: Operation, store: Store, fields: Mapping[str, Any], *, rid: str | None = None
    ) -> Refused | None:
        """A create (or an update of ``rid``) that gives a unique field a value another
        record of ``store`` holds, or a create past the documented quota."""
        for rule in self._rules.get(op.name, ()):
            quota = rule.kind == "quota" and rid is None and rule.limit is not None
            if quota and store.created >= (rule.limit or 0):
                return Refused(
                    rule, f"this session has already created {store.created}: {rule.text}"
                )
            if rule.kind != "duplicate":
                continue
            for field in rule.fields:
                value = fields.get(field)
                if value is None or isinstance(value, dict | list):
                    continue
                for other, record in store.records.items():
                    if other != rid and record.get(field) == value:
                        where = store.collection.kind
                        return Refused(
                            rule,
                            f"the {where} '{other}' already has {field} {value!r}: {rule.text}",
                            ("body", field),
                            field,
                        )
        return None

    # -- issuing ids -------------------------------------------------------------

    def _issued_kinds(self) -> frozenset[str]:
        """The kinds some operation hands out ids of, besides echoing the id it was asked
        for: what a search, a list or a create answers (example, else generated)."""
        out: set[str] = set()
        for op in self._ops:
            ids = self._ids[op.name]
            body = self._examples[op.name]
            if body is None:
                schema = self._schemas[op.name]
                if not schema:
                    continue
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


_PAGING_FIELDS: dict[str, tuple[str, ...]] = {
    "total": (
        "total",
        "total_count",
        "total_results",
        "total_items",
        "total_entries",
        "total_size",
        "total_elements",
    ),
    "page": ("page", "page_number", "current_page", "page_index"),
    "pages": ("total_pages", "page_count", "num_pages"),
    "size": ("page_size", "per_page", "limit", "size"),
    "offset": ("offset", "skip", "start"),
    "more": ("has_more", "has_next", "more"),
    "next": (
        "next_cursor",
        "next_page_token",
        "next_token",
        "next_marker",
        "next",
        "next_page",
        "cursor",
        "continuation_token",
    ),
    "prev": ("prev_marker", "previous", "prev", "prev_cursor", "previous_cursor", "prev_page"),
    "first": ("first_id",),
    "last": ("last_id",),
}
_FIELD_ROLE = {name: role for role, names in _PAGING_FIELDS.items() for name in names}


def _fill_paging(
    envelope: dict[str, Any],
    schema: Mapping[str, Any] | None,
    values: Mapping[str, Any],
    paging: Paging,
) -> None:
    """Set the paging fields a list answer documents (``total``, ``next_cursor``,
    ``has_more``, ``first_id``...) to what the page shows, where the value fits."""
    props = props_of(schema)
    required = set(schema.get("required") or ()) if isinstance(schema, Mapping) else set()
    for key in props:
        role = _FIELD_ROLE.get(re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower())
        if role is None or (role == "page" and paging.style != "page"):
            continue
        value = values.get(role)
        sub = props.get(key)
        candidates = [value]
        if isinstance(value, str) and _is_int(value):
            candidates.append(int(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            candidates.append(str(value))
        for candidate in candidates:
            if fits(sub, candidate):
                envelope[key] = candidate
                break
        else:
            if value is None and key not in required:
                envelope.pop(key, None)


def _array_schema(
    schema: Mapping[str, Any] | None, at: tuple[str, ...] | None
) -> Mapping[str, Any]:
    if not isinstance(schema, Mapping) or at is None:
        return {}
    if not at:
        return schema
    sub = props_of(schema).get(at[0])
    return sub if isinstance(sub, Mapping) else {}


def _is_int(text: Any) -> bool:
    return isinstance(text, str) and text.lstrip("-").isdigit() and len(text) < 19


def _as_schema(value: str, schema: Mapping[str, Any]) -> Any:
    """A path's text as the type ``schema`` gives it (``"42"`` -> ``42``)."""
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    if ("integer" in types or "number" in types) and _is_int(value):
        return int(value)
    return value


def _size(record: Mapping[str, Any]) -> int:
    try:
        return len(json.dumps(record, default=str))
    except (TypeError, ValueError):
        return _MAX_RECORD


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

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
  example items, then :data:`~autofeedback.serve._sandbox_collections.SEED_RECORDS`
  generated ones, drawn from the seed and the store alone. The collections are kept in
  :mod:`autofeedback.serve._sandbox_collections`, the pieces of an answer (ids' kinds,
  paging fields, snapshots) in :mod:`autofeedback.serve._sandbox_answers`.
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
from collections.abc import Mapping
from typing import Any

from autofeedback.catalog._schema import sanitize_schema
from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._model import Operation, Response
from autofeedback.serve._sandbox_answers import (
    NotFound,
    Refused,
    _creates,
    _is_id_value,
    _overlay,
    _own_id,
    _path_kinds,
    _snapshot,
    _success_response,
    _walk,
)
from autofeedback.serve._sandbox_collections import (
    _Collections,
)
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
    Store,
    find_collections,
    id_params,
    normal_template,
    props_of,
    singular,
)
from autofeedback.serve._sandbox_values import (
    generate,
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
_VARS = re.compile(r"\{[^{}/]+\}")


class SessionState(_Collections):
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

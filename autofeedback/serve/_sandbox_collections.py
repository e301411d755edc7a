"""The sandbox's collections (see :mod:`autofeedback.serve._sandbox_state`, whose
docstring says how they behave): the part of a session that keeps one
:class:`~autofeedback.serve._sandbox_store.Store` of whole records per collection and
parent, and answers lists, details, creates, updates and deletes from it."""

from __future__ import annotations

import json
import random
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from autofeedback.core._model import Operation, Response
from autofeedback.serve._sandbox_answers import (
    _MAX_RECORD,
    _VAR,
    Refused,
    _array_schema,
    _as_schema,
    _fill_paging,
    _is_id_value,
    _is_int,
    _object_kind,
    _overlay,
    _own_id,
    _path_kinds,
    _size,
    _snapshot,
    _success_response,
    _walk,
)
from autofeedback.serve._sandbox_refusals import (
    status_fields,
)
from autofeedback.serve._sandbox_store import (
    Collection,
    IdParam,
    Store,
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

#: records a store starts with, generated (after the list's documented example items)
SEED_RECORDS = 12
#: most items one list answer shows when the spec documents no paging
MAX_LIST = 100
#: bytes of records all stores together keep (the oldest are forgotten first)
_MAX_RECORD_BYTES = 64 << 20


_MAX_STORES = 4096
_MAX_PAGE = 1000


class _Collections:
    """The collections part of :class:`~autofeedback.serve._sandbox_state.SessionState`:
    one :class:`Store` of whole records per collection and parent, seeded, paged,
    created in, updated and deleted, every answer showing a record agreeing with it. A
    part of that one class (its state is the session's, under its lock), kept in a
    module of its own; the attributes below are set by ``SessionState.__init__``."""

    seed: int
    max_resources: int
    kinds: frozenset[str]
    collections: dict[str, Collection]
    _id_fields: dict[str, str]
    _examples: dict[str, Any]
    _schemas: dict[str, dict[str, Any] | None]
    _roles: dict[str, tuple[str, Collection]]
    _path_vars: dict[str, list[str]]
    _known: OrderedDict[tuple[str | None, str], Mapping[str, Any] | None]
    _created: int
    _stores: OrderedDict[tuple[str, tuple[str, ...]], Store]
    _records: OrderedDict[tuple[tuple[str, tuple[str, ...]], str], int]
    _record_bytes: int
    _owner: dict[tuple[str, str], tuple[str, tuple[str, ...]]]
    _props_cache: dict[int, tuple[Mapping[str, Any], Mapping[str, Any]]]
    _plain: dict[int, tuple[Mapping[str, Any], bool]]
    _envelopes: dict[str, dict[str, Any]]
    _views: dict[tuple[str, bool], tuple[dict[str, tuple[Mapping[str, Any], ...]], frozenset[str]]]
    _agreed: dict[tuple[str, bool, str], tuple[bool, Any]]
    _checked: dict[tuple[Any, str], dict[tuple[str, int], tuple[Any, Any, bool]]]

    if TYPE_CHECKING:  # SessionState's own, which these methods call

        def known(self, kind: str | None, value: str) -> bool: ...
        def _remember(
            self, kind: str | None, value: str, obj: Mapping[str, Any] | None
        ) -> None: ...
        def _forget(self, kind: str | None, value: str) -> None: ...
        def _body(self, op: Operation, response: Response | None, rng: random.Random) -> Any: ...
        def _harvest(
            self,
            op: Operation,
            payload: Any,
            *,
            created: tuple[str | None, str] | None = None,
        ) -> None: ...
        def _refused_create(
            self,
            op: Operation,
            store: Store,
            fields: Mapping[str, Any],
            *,
            rid: str | None = None,
        ) -> Refused | None: ...

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

"""The collections a spec documents, and one store of records per collection.

A *collection* is a path whose items have a detail path below it: ``GET /calendars``
lists what ``GET /calendars/{calendar_id}`` reads, ``POST /calendars`` adds to it,
``PATCH``/``PUT``/``POST /calendars/{calendar_id}`` change an item and ``DELETE``
removes it. :func:`find_collections` finds them in a spec; the sandbox keeps one
:class:`Store` per collection (per parent, for a nested one: the events of each
calendar are a store of their own), and every operation that names the collection
reads and writes that store, so lists, details, creates, updates and deletes agree.

A list is linked to its detail by an id field its items share with the detail path
(``id``, or the parameter's own name): a spec whose list items have none gives the
sandbox no way to tell which item a detail is, and :func:`find_collections` says so
in its notes. A list that needs a query (``GET /books?query=``, Spotify's
``GET /artists?ids=``) is a search, not a page of the store, and is answered as before.

How a list pages is read from its query parameters: ``page`` with ``page_size`` /
``per_page`` / ``limit``, ``offset`` with ``limit``, a cursor (``cursor``, ``marker``,
``page_token``: the next page's position) or an ``after`` / ``starting_after`` id, or
``limit`` alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from autofeedback.checks._names import id_stem
from autofeedback.core._model import Operation
from autofeedback.serve._sandbox_values import merged

__all__ = [
    "Collection",
    "IdParam",
    "Paging",
    "Store",
    "find_collections",
    "id_params",
    "list_location",
    "normal_template",
    "props_of",
    "singular",
]

_VAR = re.compile(r"\{[^{}/]+\}")
_LIST_KEYS = frozenset({"results", "items", "data", "content", "records", "entries", "values"})
_PAGE = ("page", "page_number", "pagenumber", "page_no", "pageno", "page_index", "pageindex")
_SIZE = (
    "page_size",
    "pagesize",
    "per_page",
    "perpage",
    "limit",
    "size",
    "page_limit",
    "max_results",
    "maxresults",
    "count",
)
_OFFSET = ("offset", "skip", "start", "start_index", "startindex")
_AFTER = ("after", "starting_after", "startingafter", "after_id", "since_id")
_TOKEN = (
    "cursor",
    "page_token",
    "pagetoken",
    "next_token",
    "nexttoken",
    "marker",
    "continuation_token",
    "continuationtoken",
    "page_cursor",
)
_DEFAULT_SIZE = 20
_ID_VAR = re.compile(r"^\{([^{}/]+)\}$")

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
        m = _ID_VAR.match(seg)
        if m is None:
            continue
        name = m.group(1)
        prev = segments[i - 1] if i > 0 and _ID_VAR.match(segments[i - 1]) is None else None
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


def normal_template(path: str) -> str:
    """``/calendars/{calendar_id}/events`` -> ``/calendars/{}/events``."""
    return _VAR.sub("{}", path.split("?", 1)[0].rstrip("/") or "/")


def props_of(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The properties an object of ``schema`` may have: its own, its ``allOf`` parts'
    and those of each ``oneOf``/``anyOf`` option (the first definition of a name wins)."""
    if not isinstance(schema, Mapping):
        return {}
    flat = merged(schema)
    out: dict[str, Any] = {}
    own = flat.get("properties")
    if isinstance(own, Mapping):
        out.update(own)
    for key in ("oneOf", "anyOf"):
        for option in flat.get(key) or ():
            if isinstance(option, Mapping):
                for name, sub in props_of(option).items():
                    out.setdefault(name, sub)
    return out


@dataclass(frozen=True)
class Paging:
    """How a list pages: ``style`` is ``page``, ``offset``, ``token`` (an opaque cursor:
    the next position), ``after`` (the last id seen), ``limit`` (one page from the
    start) or ``all``; the other fields name the query parameters."""

    style: str
    page: str | None = None
    size: str | None = None
    offset: str | None = None
    cursor: str | None = None
    default_size: int = _DEFAULT_SIZE
    max_size: int | None = None
    first_page: int = 1


@dataclass(frozen=True)
class Collection:
    """One collection of the spec: ``template`` (normalized, ``/calendars/{}/events``)
    holds items of ``kind``, each named by the detail path parameter ``param``."""

    template: str
    kind: str
    param: str
    #: how many path parameters the template itself has (the parents: a calendar's id)
    parents: int
    #: the field of an item that holds its id (``id``, ``event_id``)
    id_field: str
    id_schema: Mapping[str, Any]
    #: the schema of a whole item (the detail's answer, else the create's or the list's)
    record_schema: Mapping[str, Any]
    list_op: str | None = None
    #: where the array is in the list's answer (``("events",)``; ``()``: the answer itself)
    list_at: tuple[str, ...] | None = None
    item_schema: Mapping[str, Any] | None = None
    paging: Paging = field(default_factory=lambda: Paging("all"))
    #: the items of the list's documented example: the first records of the store
    seed_items: tuple[Mapping[str, Any], ...] = ()
    #: names of the parents' path parameters, as fields an item may carry
    parent_fields: tuple[str, ...] = ()


@dataclass
class Store:
    """The records of one collection (for one parent), in the order they were added."""

    collection: Collection
    key: tuple[str, tuple[str, ...]]
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ids removed by a DELETE: never listed, read or handed out again in this session
    deleted: dict[str, None] = field(default_factory=dict)
    created: int = 0


def _strip(path: str) -> list[str]:
    return [s for s in path.split("?", 1)[0].strip("/").split("/") if s]


def _is_var(segment: str) -> bool:
    return bool(_VAR.fullmatch(segment))


def _object_like(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    flat = merged(schema)
    return flat.get("type") == "object" or bool(props_of(flat))


def list_location(
    schema: Mapping[str, Any] | None, kind: str, segment: str
) -> tuple[tuple[str, ...], Mapping[str, Any]] | None:
    """Where the items are in a list answer of ``schema``: ``((), item)`` for an array,
    ``(("events",), item)`` for an envelope; ``None`` when it holds no list of objects."""
    if not isinstance(schema, Mapping):
        return None
    flat = merged(schema)
    if flat.get("type") == "array" or ("items" in flat and "properties" not in flat):
        item = flat.get("items")
        return ((), item) if isinstance(item, Mapping) and _object_like(item) else None
    props = flat.get("properties")
    if not isinstance(props, Mapping):
        return None
    candidates = [
        (key, sub["items"])
        for key, sub in props.items()
        if isinstance(sub, Mapping)
        and (merged(sub).get("type") == "array" or "items" in sub)
        and _object_like(merged(sub).get("items"))
    ]
    for key, item in candidates:
        if key in _LIST_KEYS or singular(key) == kind or key == segment:
            return (key,), item
    if len(candidates) == 1:
        return (candidates[0][0],), candidates[0][1]
    return None


def _paging(op: Operation) -> Paging:
    query = {p.name.lower().replace("-", "_"): p for p in op.parameters if p.location == "query"}

    def first(names: tuple[str, ...]) -> str | None:
        return next((query[n].name for n in names if n in query), None)

    page, size, offset = first(_PAGE), first(_SIZE), first(_OFFSET)
    after, token = first(_AFTER), first(_TOKEN)
    default, maximum, first_page = _DEFAULT_SIZE, None, 1
    if size is not None:
        schema = next(p.schema for p in op.parameters if p.name == size)
        if isinstance(schema.get("default"), int) and schema["default"] > 0:
            default = schema["default"]
        if isinstance(schema.get("maximum"), int | float):
            maximum = int(schema["maximum"])
            default = min(default, maximum)
        if isinstance(schema.get("minimum"), int | float) and schema["minimum"] > default:
            default = int(schema["minimum"])
    if page is not None:
        schema = next(p.schema for p in op.parameters if p.name == page)
        if schema.get("minimum") == 0 or schema.get("default") == 0:
            first_page = 0
        return Paging(
            "page",
            page=page,
            size=size,
            default_size=default,
            max_size=maximum,
            first_page=first_page,
        )
    if offset is not None:
        return Paging("offset", size=size, offset=offset, default_size=default, max_size=maximum)
    if token is not None:
        return Paging("token", size=size, cursor=token, default_size=default, max_size=maximum)
    if after is not None:
        return Paging("after", size=size, cursor=after, default_size=default, max_size=maximum)
    if size is not None:
        return Paging("limit", size=size, default_size=default, max_size=maximum)
    return Paging("all")


def _id_field(props: Mapping[str, Any], param: str) -> str | None:
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", param).lower()
    camel = re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), snake)
    for name in (param, "id", snake, camel, "uuid"):
        if name in props:
            return name
    return None


def find_collections(
    operations: tuple[Operation, ...],
    schemas: Mapping[str, Mapping[str, Any] | None],
    examples: Mapping[str, Any],
) -> tuple[dict[str, Collection], dict[str, tuple[str, Collection]], tuple[str, ...]]:
    """The spec's collections by normalized template, each operation's role in one
    (``list``, ``create``, ``read``, ``update``, ``replace``, ``delete``), and the notes
    on lists that cannot be linked to their detail.

    ``schemas`` are the sanitized success response schemas by operation name,
    ``examples`` the documented success examples."""
    by_route: dict[tuple[str, str], Operation] = {}
    for op in operations:
        if op.is_http and op.path is not None and not op.fixed_query:
            by_route.setdefault((op.method.upper(), normal_template(op.path)), op)  # type: ignore[union-attr]
    details: dict[str, list[Operation]] = {}
    for op in by_route.values():
        segments = _strip(op.path or "")
        if len(segments) < 2 or not _is_var(segments[-1]) or _is_var(segments[-2]):
            continue
        ids = id_params(op)
        if not ids or not ids[-1].last or ids[-1].kind is None:
            continue
        details.setdefault(normal_template("/" + "/".join(segments[:-1])), []).append(op)
    collections: dict[str, Collection] = {}
    roles: dict[str, tuple[str, Collection]] = {}
    notes: list[str] = []
    for parent, ops in details.items():
        reader = next((o for o in ops if (o.method or "").upper() == "GET"), ops[0])
        last = id_params(reader)[-1]
        kind, param = last.kind or "", last.name
        lister = by_route.get(("GET", parent))
        creator = by_route.get(("POST", parent))
        if lister is not None and any(
            p.required and p.location in ("query", "body") for p in lister.parameters
        ):
            lister = None  # a search (GET /books?query=): not a page of the store
        segment = _strip(parent)[-1]
        located = None
        if lister is not None:
            located = list_location(schemas.get(lister.name), kind, segment)
            if located is None:
                lister = None
        if lister is None and creator is None:
            continue
        record_schema = schemas.get(reader.name) if reader.method == "GET" else None
        if not _object_like(record_schema) and creator is not None:
            record_schema = schemas.get(creator.name)
        if not _object_like(record_schema) and located is not None:
            record_schema = located[1]
        if not _object_like(record_schema):
            continue
        item_schema = located[1] if located is not None else None
        id_field = _id_field(props_of(item_schema if item_schema else record_schema), param)
        if id_field is None:
            if lister is not None:
                notes.append(
                    f"GET {lister.path} lists {kind} items with no field that "
                    f"{reader.method} {reader.path} takes ('id' or '{param}'): the sandbox "
                    f"cannot link a listed {kind} to its detail, so it answers them apart"
                )
            continue
        path_param = reader.parameter(param, "path")
        id_schema = dict(path_param.schema) if path_param is not None else {}
        field_schema = props_of(record_schema).get(id_field)
        # the path says "string", the resource says "uuid": the more exact one
        if (
            isinstance(field_schema, Mapping)
            and not any(k in id_schema for k in ("pattern", "format", "enum"))
            and (field_schema.get("type") == id_schema.get("type") or not id_schema.get("type"))
        ):
            id_schema = {**id_schema, **field_schema}
        seed_items: tuple[Mapping[str, Any], ...] = ()
        example = examples.get(lister.name) if lister is not None else None
        if example is not None and located is not None and "{}" not in parent:
            items = example
            for key in located[0]:
                items = items.get(key) if isinstance(items, Mapping) else None
            if isinstance(items, list):
                seed_items = tuple(i for i in items if isinstance(i, Mapping) and id_field in i)
        parents = [n.strip("{}") for n in _strip(reader.path or "")[:-1] if _is_var(n)]
        collection = Collection(
            template=parent,
            kind=kind,
            param=param,
            parents=parent.count("{}"),
            id_field=id_field,
            id_schema=id_schema,
            record_schema=record_schema,  # type: ignore[arg-type]
            list_op=lister.name if lister is not None else None,
            list_at=located[0] if located is not None else None,
            item_schema=item_schema,
            paging=_paging(lister) if lister is not None else Paging("all"),
            seed_items=seed_items,
            parent_fields=tuple(parents),
        )
        collections[parent] = collection
        if lister is not None:
            roles[lister.name] = ("list", collection)
        if creator is not None:
            roles[creator.name] = ("create", collection)
        for op in ops:
            method = (op.method or "").upper()
            role = {"GET": "read", "PATCH": "update", "POST": "update", "PUT": "replace"}
            roles[op.name] = (
                role.get(method, "delete" if method == "DELETE" else "other"),
                collection,
            )
    return collections, roles, tuple(notes)

"""Property test of the sandbox's promises (issue 36): on every spec with collections
(the shared Box and OpenAI specs, the examples, and generated specs with uuid, pattern
and integer ids), a random walk of list / create / read / update / delete keeps

* lists: no id twice, a stable order, every page style the spec documents, and exactly
  the items created and not deleted since;
* details: 200 for every listed or created id, the same fields the list and the create
  answer showed, the fields an update sent; 404 after a delete, in the list and the
  detail alike;
* every answer valid against the spec's own response schema, by openapi-core (the peer
  to agree with; its own limits, such as a discriminator mapping to a schema name that
  does not exist, are counted apart, never as a pass).

Where the spec itself makes a promise impossible, the walk counts the case by its reason
and goes on: two answers that allow no common value for a field (each shows a value the
other's schema refuses), or a request that sends a value an answer does not allow.

Hypothesis drives the walk (a ``RuleBasedStateMachine`` per spec), bounded so the file
runs in well under two minutes on two cores.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from openapi_core import Config, OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse
from openapi_core.templating.responses.exceptions import ResponseNotFound

from autofeedback import ApiCatalog, Operation
from autofeedback.catalog._openapi import request_media
from autofeedback.catalog._schema import sample_value, sanitize_schema
from autofeedback.serve._sandbox import Sandbox
from autofeedback.serve._sandbox_store import Collection, props_of
from autofeedback.serve._sandbox_values import fits, generate

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("AUTOFEEDBACK_SHARED_DATA", ROOT.parent / "shared" / "data"))
UNRESOLVED = re.compile(r"reference '[^']*' could not be resolved")
# CI walks the same paths every run (a red build names a bug, not a draw); set
# AUTOFEEDBACK_EXPLORE=1 to draw new walks, as a search for bugs
RUNS = settings(
    derandomize=not os.environ.get("AUTOFEEDBACK_EXPLORE"),
    database=None,
    max_examples=5,
    stateful_step_count=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


# -- generated specs: ids as uuid, pattern and integer; each page style ---------------------


def crud_spec(
    id_schema: dict[str, Any], list_parameters: list[dict[str, Any]], envelope: dict[str, Any]
) -> dict[str, Any]:
    """A spec of one collection, ``/things``, with ids of ``id_schema`` and a list
    that pages by ``list_parameters``, its answer ``envelope`` plus ``items``."""
    fields: dict[str, Any] = {
        "id": id_schema,
        "name": {"type": "string", "minLength": 1, "maxLength": 30},
        "size": {"type": "integer", "minimum": 1, "maximum": 9},
        "colour": {"type": "string", "enum": ["red", "green"]},
        "made": {"type": "string", "format": "date-time"},
        "owner": {"type": "string", "format": "email"},
    }
    thing = {"type": "object", "required": ["id", "name", "size"], "properties": fields}
    new = {
        "type": "object",
        "additionalProperties": False,
        "required": ["name"],
        "properties": {k: fields[k] for k in ("name", "size", "colour")},
    }
    one = {"description": "a thing", "content": {"application/json": {"schema": thing}}}
    missing = {
        "description": "no such thing",
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": {"message": {"type": "string"}}}
            }
        },
    }
    listing = {
        "type": "object",
        "required": ["items", *envelope],
        "properties": {"items": {"type": "array", "items": thing}, **envelope},
    }
    body = {"required": True, "content": {"application/json": {"schema": new}}}
    id_param = {"name": "thing_id", "in": "path", "required": True, "schema": id_schema}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Things", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9/v1"}],
        "paths": {
            "/things": {
                "get": {
                    "operationId": "listThings",
                    "parameters": list_parameters,
                    "responses": {
                        "200": {
                            "description": "things",
                            "content": {"application/json": {"schema": listing}},
                        }
                    },
                },
                "post": {
                    "operationId": "createThing",
                    "requestBody": body,
                    "responses": {"201": one},
                },
            },
            "/things/{thing_id}": {
                "parameters": [id_param],
                "get": {"operationId": "getThing", "responses": {"200": one, "404": missing}},
                "patch": {
                    "operationId": "updateThing",
                    "requestBody": body,
                    "responses": {"200": one, "404": missing},
                },
                "delete": {
                    "operationId": "deleteThing",
                    "responses": {"204": {"description": "gone"}, "404": missing},
                },
            },
        },
    }


def _int(name: str, maximum: int = 50) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": maximum},
    }


GENERATED = {
    "uuid ids, page/page_size": crud_spec(
        {"type": "string", "format": "uuid"},
        [_int("page", 10_000), _int("page_size")],
        {"page": {"type": "integer"}, "total": {"type": "integer"}},
    ),
    "pattern ids, offset/limit": crud_spec(
        {"type": "string", "pattern": "^th-[0-9a-f]{8}$"},
        [
            {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}},
            _int("limit"),
        ],
        {"total_count": {"type": "integer"}, "limit": {"type": "integer"}},
    ),
    "integer ids, after/has_more": crud_spec(
        {"type": "integer", "minimum": 1, "maximum": 1_000_000},
        [{"name": "after", "in": "query", "schema": {"type": "string"}}, _int("limit")],
        {
            "has_more": {"type": "boolean"},
            "first_id": {"type": "string", "nullable": True},
            "last_id": {"type": "string", "nullable": True},
        },
    ),
    "short ids, cursor": crud_spec(
        {"type": "string", "minLength": 4, "maxLength": 12, "example": "TH-0001"},
        [{"name": "cursor", "in": "query", "schema": {"type": "string"}}, _int("limit")],
        {"next_cursor": {"type": "string", "nullable": True}},
    ),
}


# -- the specs ----------------------------------------------------------------------------


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return json.loads(text)


def _cases() -> Iterator[Any]:
    for name in ("calendar.yaml", "bookshop.yaml"):
        yield pytest.param(("file", ROOT / "specs" / "examples" / name), id=name)
    for name in (
        "specs/box.json",
        "specs/openai.yaml",
        "restbench/tmdb_oas.json",
        "restbench/spotify_oas.json",
    ):
        yield pytest.param(("shared", SHARED / name), id=Path(name).name)
    for name in GENERATED:
        yield pytest.param(("generated", name), id=name)


@dataclass
class Spec:
    """A spec served by the sandbox, with openapi-core over the same document."""

    name: str
    document: dict[str, Any]
    catalog: ApiCatalog
    openapi: OpenAPI
    #: what openapi-core could not decide (its own limits), by operation
    undecided: dict[str, int] = field(default_factory=dict)
    #: promises the spec makes impossible (answers that share no value), by reason
    faults: dict[str, int] = field(default_factory=dict)
    checked: int = 0


_SPECS: dict[str, Spec] = {}


def _spec(case: tuple[str, Any]) -> Spec:
    where, what = case
    key = str(what)
    if key in _SPECS:
        return _SPECS[key]
    if where == "generated":
        document = GENERATED[what]
        catalog = ApiCatalog.from_obj(document, source=what)
    else:
        if not what.exists():
            pytest.skip(
                f"shared data not found at {what} (set AUTOFEEDBACK_SHARED_DATA to the shared "
                "data folder)"
            )
        document = _load(what)
        catalog = ApiCatalog.from_file(what)
    openapi = OpenAPI.from_dict(document, config=Config(spec_validator_cls=None))  # type: ignore[arg-type]
    _SPECS[key] = Spec(key, document, catalog, openapi)
    return _SPECS[key]


# -- the walk -------------------------------------------------------------------------------


def _sent(op: Operation, body: Any) -> dict[str, Any]:
    """``requests``' keyword for ``body`` in the media type ``op`` documents: JSON, a form,
    or the parts of an upload (each field's text: JSON for what is not a string)."""
    media = request_media(op)
    if media == "application/json" or not isinstance(body, dict):
        return {"json": body}
    text = {k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()}
    if media == "application/x-www-form-urlencoded":
        return {"data": text}
    return {"files": {k: (None, v) for k, v in text.items()}}


class _Walk(RuleBasedStateMachine):
    """List, create, read, update and delete over every collection of one spec."""

    spec: Spec
    sandbox: Sandbox
    collections: list[Collection]

    def __init__(self) -> None:
        super().__init__()
        self.http = requests.Session()
        #: store key -> the ids the list must show, in order (None: not listed yet)
        self.model: dict[tuple[str, tuple[str, ...]], list[str] | None] = {}
        #: store key -> id -> the fields the last list showed for it
        self.shown: dict[tuple[str, tuple[str, ...]], dict[str, dict[str, Any]]] = {}
        self.deleted: dict[tuple[str, tuple[str, ...]], set[str]] = {}
        self.parents: dict[str, tuple[str, ...]] = {}

    @initialize()
    def fresh_session(self) -> None:
        self.sandbox.reset()

    def teardown(self) -> None:
        self.http.close()

    # -- talking to the sandbox ------------------------------------------------------

    def ops(self, collection: Collection) -> dict[str, Operation]:
        out: dict[str, Operation] = {}
        for name, (role, owner) in self.sandbox._state._roles.items():
            op = self.spec.catalog.get(name)
            if owner is collection and op is not None:
                out[role] = op
        return out

    def call(
        self,
        op: Operation,
        values: Mapping[str, str],
        query: dict[str, Any] | None = None,
        body: Any = None,
        *,
        drop: str = "readOnly",
    ) -> requests.Response:
        """Send ``op`` with these path values; required inputs from the docs."""
        path = op.path or "/"
        for name, value in values.items():
            path = path.replace("{" + name + "}", quote(value, safe=""))
        params = dict(query or {})
        headers: dict[str, str] = {}
        for p in op.parameters:
            if p.required and p.location == "query" and p.name not in params:
                params[p.name] = sample_value(sanitize_schema(p.schema))
            elif p.required and p.location == "header":
                headers[p.name] = str(sample_value(sanitize_schema(p.schema)))
        if body is None and op.body_schema is not None and op.body_required:
            body = generate(sanitize_schema(op.body_schema, drop=drop), random.Random(0))
        r = self.http.request(
            (op.method or "GET").upper(),
            self.sandbox.url + path,
            params=params,
            headers=headers,
            timeout=30,
            **_sent(op, body),
        )
        self.validate(op, path, params, body, headers, r)
        return r

    def validate(
        self,
        op: Operation,
        path: str,
        params: Mapping[str, Any],
        body: Any,
        headers: Mapping[str, str],
        r: requests.Response,
    ) -> None:
        """openapi-core's response validation against the spec's own document."""
        base = _server(self.spec.document, op)
        request = requests.Request(
            (op.method or "GET").upper(), base + path, params=params, headers=headers,
            **_sent(op, body),
        ).prepare()  # fmt: skip
        try:
            self.spec.openapi.validate_response(
                RequestsOpenAPIRequest(request), RequestsOpenAPIResponse(r)
            )
        except ResponseNotFound:
            assert r.status_code == 404, f"{op.name}: undocumented status {r.status_code}"
            return  # a 404 the operation does not document (the sandbox's own not_found)
        except Exception as exc:
            errors = _leaf_errors(exc)
            if _undecided(exc):
                self.spec.undecided[op.name] = self.spec.undecided.get(op.name, 0) + 1
                return
            raise AssertionError(
                f"{op.method} {path} ({op.name}) answered {r.status_code}, invalid by "
                f"openapi-core: {type(exc).__name__}: {'; '.join(errors)[:1500] or exc}\n"
                f"{r.text[:1500]}"
            ) from None
        self.spec.checked += 1

    def store(
        self, collection: Collection, data: Any
    ) -> tuple[tuple[str, ...], dict[str, str]] | None:
        """A parent for a nested collection (one listed or created in the parent
        collection), and the path values naming it; ``None`` when there is none."""
        if not collection.parents:
            return (), {}
        upper = next(
            (
                c
                for c in self.collections
                if c.parents == 0 and collection.template.startswith(c.template + "/{}/")
            ),
            None,
        )
        if upper is None or collection.parents != 1:
            return None
        ids = self.ids_of(upper, (), {})
        if not ids:
            return None
        parent = data.draw(st.sampled_from(ids), label="parent")
        op = next(iter(self.ops(collection).values()))
        names = re.findall(r"\{([^{}]+)\}", op.path or "")
        return (parent,), {names[0]: parent}

    def ids_of(
        self, collection: Collection, parents: tuple[str, ...], values: Mapping[str, str]
    ) -> list[str]:
        key = (collection.template, parents)
        if self.model.get(key) is None:
            self.list_all(collection, parents, values)
        return list(self.model.get(key) or [])

    def list_all(
        self,
        collection: Collection,
        parents: tuple[str, ...],
        values: Mapping[str, str],
        size: int = 3,
    ) -> list[str] | None:
        """Every id the list shows, page by page: none twice, as the model says."""
        lister = self.ops(collection).get("list")
        key = (collection.template, parents)
        if lister is None:
            return self.model.setdefault(key, [])
        paging = collection.paging
        query: dict[str, Any] = {}
        if paging.size is not None:
            query[paging.size] = size
        seen: list[str] = []
        shown: dict[str, dict[str, Any]] = {}
        for _ in range(200):
            r = self.call(lister, values, query)
            assert r.status_code == 200, (lister.name, r.status_code, r.text[:500])
            items: Any = r.json()
            for step in collection.list_at or ():
                items = items[step]
            assert isinstance(items, list)
            for item in items:
                rid = str(item[collection.id_field])
                seen.append(rid)
                shown[rid] = item
            if paging.style == "page":
                if not items:
                    break
                query[paging.page or "page"] = (
                    query.get(paging.page or "page", paging.first_page) + 1
                )
            elif paging.style == "offset":
                if not items:
                    break
                query[paging.offset or "offset"] = len(seen)
            elif paging.style in ("token", "after"):
                nxt = _next(r.json(), paging.style, items, collection.id_field)
                if nxt is None:
                    break
                query[paging.cursor or "cursor"] = nxt
            else:
                break
        assert len(seen) == len(set(seen)), f"{lister.name}: an id twice in the list: {seen}"
        expected = self.model.get(key)
        if expected is not None and (paging.style != "all" or len(expected) <= 100):
            assert seen == expected, f"{lister.name}: listed {seen}, expected {expected}"
        self.model[key] = seen
        self.shown[key] = shown
        return seen

    def apart(
        self,
        name: str,
        one: Any,
        other: Any,
        one_props: Mapping[str, Any],
        other_props: Mapping[str, Any],
    ) -> bool:
        """Whether two answers' values of ``name`` differ because their schemas share no
        value (a spec fault): each value is one the other answer's schema refuses."""
        return not fits(other_props.get(name), one) and not fits(one_props.get(name), other)

    def fault(self, reason: str) -> None:
        self.spec.faults[reason] = self.spec.faults.get(reason, 0) + 1

    # -- rules -----------------------------------------------------------------------

    def pick(self, data: Any) -> Collection:
        templates = sorted(c.template for c in self.collections)
        template = data.draw(st.sampled_from(templates), label="collection")
        return next(c for c in self.collections if c.template == template)

    @rule(data=st.data())
    def list_pages(self, data: Any) -> None:
        collection = self.pick(data)
        where = self.store(collection, data)
        if where is None:
            return
        parents, values = where
        size = data.draw(st.sampled_from([1, 2, 5, 50]), label="page size")
        self.list_all(collection, parents, values, size)

    @rule(data=st.data())
    def read(self, data: Any) -> None:
        collection = self.pick(data)
        reader = self.ops(collection).get("read")
        where = self.store(collection, data)
        if reader is None or where is None:
            return
        parents, values = where
        ids = self.ids_of(collection, parents, values)
        if not ids:
            return
        rid = data.draw(st.sampled_from(ids), label="id")
        r = self.call(reader, {**values, collection.param: rid})
        assert r.status_code == 200, (reader.name, rid, r.status_code, r.text[:300])
        detail = r.json()
        assert str(detail.get(collection.id_field)) == rid
        listed = self.shown.get((collection.template, parents), {}).get(rid)
        props = props_of(self.sandbox._state._schemas.get(reader.name))
        items = props_of(collection.item_schema)
        for name, value in (listed or {}).items():
            # the same value, unless the two schemas share none (OpenAI lists
            # "organization.certificate" objects its detail calls "certificate")
            if name in detail and detail[name] != value:
                apart = self.apart(name, value, detail[name], items, props)
                assert apart, f"{reader.name} {rid}: {name} {detail[name]!r} != listed {value!r}"
                self.fault(f"{lister_of(collection)} and {reader.name} share no {name}")

    @rule(data=st.data())
    def create(self, data: Any) -> None:
        collection = self.pick(data)
        creator = self.ops(collection).get("create")
        where = self.store(collection, data)
        if creator is None or where is None:
            return
        parents, values = where
        key = (collection.template, parents)
        before = self.ids_of(collection, parents, values)
        body = None
        if creator.body_schema is not None:
            schema = sanitize_schema(creator.body_schema, drop="readOnly")
            body = generate(schema, random.Random(data.draw(st.integers(0, 99), label="body")))
        r = self.call(creator, values, body=body)
        if r.status_code == 400:
            return  # the made-up body broke the docs (the request checks are tested elsewhere)
        if r.status_code == 409 and _refused_as(r) == "conflict":
            # a documented duplicate (Box: "a policy with this templateKey already exists"):
            # the made-up body took a value a record holds; nothing was created
            self.model[key] = before
            return
        assert 200 <= r.status_code < 300, (creator.name, r.status_code, r.text[:300])
        answer = r.json() if r.content else None
        if not isinstance(answer, dict) or collection.id_field not in answer:
            self.model[key] = None  # the new id is not shown: the next list learns it
            return
        rid = str(answer[collection.id_field])
        assert rid not in before and rid not in self.deleted.get(key, set())
        self.model[key] = [*before, rid]
        reader = self.ops(collection).get("read")
        if reader is None:
            return
        again = self.call(reader, {**values, collection.param: rid})
        assert again.status_code == 200, (reader.name, rid, again.text[:300])
        detail = again.json()
        shown = props_of(self.sandbox._state._schemas.get(creator.name))
        props = props_of(self.sandbox._state._schemas.get(reader.name))
        for name, value in answer.items():
            if name not in detail or detail[name] == value:
                continue
            sent = body.get(name, _NOTHING) if isinstance(body, dict) else _NOTHING
            if sent is not _NOTHING and not (
                fits(shown.get(name), sent) and fits(props.get(name), sent)
            ):
                # the request may send what an answer may not show: it keeps what was sent
                self.fault(f"{creator.name} takes a {name} an answer does not allow")
                continue
            apart = self.apart(name, value, detail[name], shown, props)
            assert apart, f"{creator.name} showed {name}={value!r}, {reader.name} {detail[name]!r}"
            self.fault(f"{creator.name} and {reader.name} share no {name}")

    @rule(data=st.data())
    def update(self, data: Any) -> None:
        collection = self.pick(data)
        ops = self.ops(collection)
        changer = ops.get("update") or ops.get("replace")
        where = self.store(collection, data)
        if changer is None or where is None:
            return
        parents, values = where
        ids = self.ids_of(collection, parents, values)
        if not ids:
            return
        rid = data.draw(st.sampled_from(ids), label="id")
        body = None
        if changer.body_schema is not None:
            schema = sanitize_schema(changer.body_schema, drop="readOnly")
            body = generate(schema, random.Random(data.draw(st.integers(0, 99), label="body")))
        r = self.call(changer, {**values, collection.param: rid}, body=body)
        if r.status_code == 400:
            return
        assert 200 <= r.status_code < 300, (changer.name, rid, r.status_code, r.text[:300])
        self.shown.get((collection.template, parents), {}).pop(rid, None)
        reader = ops.get("read")
        if reader is None or not isinstance(body, dict):
            return
        detail = self.call(reader, {**values, collection.param: rid}).json()
        props = props_of(self.sandbox._state._schemas.get(reader.name))
        for name, value in body.items():
            if (
                name in detail
                and name != collection.id_field
                and not isinstance(value, dict | list)
                and fits(props.get(name), value)
            ):
                assert detail[name] == value, (
                    f"{changer.name} sent {name}={value!r}, {reader.name} shows {detail[name]!r}"
                )

    @rule(data=st.data())
    def delete(self, data: Any) -> None:
        collection = self.pick(data)
        ops = self.ops(collection)
        deleter = ops.get("delete")
        where = self.store(collection, data)
        if deleter is None or where is None:
            return
        parents, values = where
        key = (collection.template, parents)
        ids = self.ids_of(collection, parents, values)
        if not ids:
            return
        rid = data.draw(st.sampled_from(ids), label="id")
        r = self.call(deleter, {**values, collection.param: rid})
        assert 200 <= r.status_code < 300, (deleter.name, rid, r.status_code, r.text[:300])
        self.model[key] = [i for i in ids if i != rid]
        self.deleted.setdefault(key, set()).add(rid)
        if "read" in ops:
            assert self.call(ops["read"], {**values, collection.param: rid}).status_code == 404
        assert self.call(deleter, {**values, collection.param: rid}).status_code == 404

    @invariant()
    def deleted_ids_are_not_listed(self) -> None:
        for key, gone in self.deleted.items():
            assert not gone & set(self.model.get(key) or ()), key


_NOTHING = object()


def _refused_as(response: Any) -> str | None:
    """The kind of a sandbox refusal (``conflict`` for a documented duplicate)."""
    try:
        errors = response.json().get("errors")
        return errors[0].get("kind") if isinstance(errors, list) and errors else None
    except (ValueError, AttributeError):
        return None


def lister_of(collection: Collection) -> str:
    return collection.list_op or "the list"


def _next(body: Any, style: str, items: list[Any], id_field: str) -> str | None:
    if style == "after":
        if isinstance(body, dict) and body.get("has_more") is False:
            return None
        return str(items[-1][id_field]) if items else None
    if isinstance(body, dict):
        for key in ("next_cursor", "next_marker", "next_page_token", "next"):
            if key in body:
                return None if body[key] in (None, "") else str(body[key])
    return None


def _server(document: Mapping[str, Any], op: Operation) -> str:
    item = document.get("paths", {}).get(op.path, {})
    found = (item.get((op.method or "get").lower()) or {}).get("servers") or item.get("servers")
    servers = found or document.get("servers") or [{"url": "http://127.0.0.1"}]
    return str(servers[0]["url"]).rstrip("/")


def _schema_errors(exc: BaseException) -> list[Any]:
    cause: BaseException | None = exc
    while cause is not None and not hasattr(cause, "schema_errors"):
        cause = cause.__cause__
    return list(getattr(cause, "schema_errors", ()))


def _undecided(exc: BaseException) -> bool:
    """Whether openapi-core could not decide: every error it found rests on a reference
    it could not resolve (an ``anyOf`` or ``oneOf`` one of whose branches could not be
    evaluated is undecided whatever its other branches say)."""

    def undecided(error: Any, depth: int = 0) -> bool:
        if UNRESOLVED.search(str(error.message)):
            return True
        if not error.context or depth > 20:
            return False
        parts = [undecided(sub, depth + 1) for sub in error.context]
        return any(parts) if error.validator in ("anyOf", "oneOf") else all(parts)

    errors = _schema_errors(exc)
    return bool(errors) and all(undecided(e) for e in errors)


def _leaf_errors(exc: BaseException) -> list[str]:
    cause: BaseException | None = exc
    while cause is not None and not hasattr(cause, "schema_errors"):
        cause = cause.__cause__
    if cause is None:
        return [str(exc)[:500]]
    out: list[str] = []

    def leaves(error: Any, depth: int = 0) -> None:
        if error.context and depth < 20:
            for sub in error.context:
                leaves(sub, depth + 1)
        else:
            message = str(error.message)
            if len(message) > 300:  # the instance's repr comes first, the reason last
                message = f"{message[:150]} ... {message[-150:]}"
            out.append(f"{list(error.absolute_path)}: {message}")

    for error in getattr(cause, "schema_errors", ()):
        leaves(error)
    return out


@pytest.mark.parametrize("case", list(_cases()))
def test_a_random_walk_keeps_every_promise(case: tuple[str, Any]) -> None:
    spec = _spec(case)
    with Sandbox(spec.catalog, seed=0) as sandbox:
        collections = list(sandbox._state.collections.values())
        if not collections:
            pytest.skip(f"{Path(spec.name).name}: no collection (a list or create with a detail)")
        walk = type(
            "Walk", (_Walk,), {"spec": spec, "sandbox": sandbox, "collections": collections}
        )
        run_state_machine_as_test(walk, settings=RUNS)
    undecided = sum(spec.undecided.values())
    print(
        f"{Path(spec.name).name}: {len(collections)} collections, {spec.checked} answers valid "
        f"by openapi-core, {undecided} it could not decide ({sorted(spec.undecided)}), "
        f"{sum(spec.faults.values())} promises the spec makes impossible ({sorted(spec.faults)})"
    )
    assert spec.checked > 0

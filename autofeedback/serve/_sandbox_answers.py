"""The pieces of a sandbox session's answers (see :mod:`autofeedback.serve._sandbox_state`):
what a valid request that cannot be answered gets (:class:`NotFound`, :class:`Refused`),
the kinds of ids and where they sit in a request or an answer, the paging fields an
answer fills, and a record's size, snapshot and overlay."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from autofeedback.core._model import Operation, Response
from autofeedback.serve._sandbox_refusals import (
    StateRule,
)
from autofeedback.serve._sandbox_store import (
    IdParam,
    Paging,
    props_of,
    singular,
)
from autofeedback.serve._sandbox_values import (
    fits,
)

_SNAPSHOT_BYTES = 4096
_WALK_NODES = 20_000
_VAR = re.compile(r"^\{([^{}/]+)\}$")
_MAX_RECORD = 64 << 10
_LIST_KEYS = frozenset({"results", "items", "data", "content", "records", "entries"})
_KIND_FIELDS = ("type", "media_type", "object", "kind")


@dataclass(frozen=True)
class _Issued:
    kind: str | None
    value: str
    obj: Mapping[str, Any] | None


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

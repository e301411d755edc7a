"""Paths into a response schema: ``results[].id``, ``tracks.items[].uri``.

A path is a sequence of steps: a property name, an array index (``0``) or ``"[]"``
(any element). Its text form joins names with dots and writes elements as ``[]`` or
``[0]``. Compositions (``allOf``/``oneOf``/``anyOf``) are looked through: a property any
branch documents is documented.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = [
    "Step",
    "closest_path",
    "format_path",
    "iter_paths",
    "parse_path",
    "schema_at",
    "schema_types",
]

#: One step of a path: a property name, an index, or ``"[]"`` for any element.
Step = str | int

_COMPOSITIONS = ("allOf", "oneOf", "anyOf")
_STEP = re.compile(r"\[(\d*)\]|\.?([^.\[\]]+)")
#: how deep a response is walked when listing its paths, and how many are listed:
#: bounds the work on recursive or huge schemas (Box's 1.7 MB spec)
MAX_DEPTH = 7
MAX_PATHS = 4000


def parse_path(text: str) -> list[Step]:
    """The steps of a path written as text.

    >>> parse_path("results[0].id"), parse_path("tracks.items[].uri")
    (['results', 0, 'id'], ['tracks', 'items', '[]', 'uri'])
    """
    steps: list[Step] = []
    for m in _STEP.finditer(text.strip()):
        index, name = m.group(1), m.group(2)
        if name is not None:
            steps.append(name)
        else:
            steps.append(int(index) if index else "[]")
    return steps


def format_path(steps: Sequence[Step]) -> str:
    """The text form of a path.

    >>> format_path(["results", "[]", "id"]), format_path(["[]", "name"])
    ('results[].id', '[].name')
    """
    out = ""
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step == "[]":
            out += "[]"
        else:
            out += f".{step}" if out else step
    return out


def _branches(schema: Mapping[str, Any], depth: int = 0) -> Iterator[Mapping[str, Any]]:
    """``schema`` and every composition branch under it."""
    yield schema
    if depth > 8:
        return
    for key in _COMPOSITIONS:
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                if isinstance(branch, Mapping):
                    yield from _branches(branch, depth + 1)


def _properties(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for branch in _branches(schema):
        props = branch.get("properties")
        if isinstance(props, Mapping):
            for name, sub in props.items():
                out.setdefault(str(name), sub if isinstance(sub, Mapping) else {})
    return out


def _items(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The schema of an element; ``{}`` (anything) for an array documented without
    ``items`` (or with ``items: true``), ``None`` when ``schema`` documents no array."""
    for branch in _branches(schema):
        items = branch.get("items")
        if isinstance(items, Mapping):
            return items
        prefix = branch.get("prefixItems")
        if isinstance(prefix, list) and prefix and isinstance(prefix[0], Mapping):
            return prefix[0]
        if items is True or (items is None and prefix is None and _says(branch, "array")):
            return {}  # an open array: its elements may be anything
    return None


def _says(schema: Mapping[str, Any], kind: str) -> bool:
    t = schema.get("type")
    return t == kind or (isinstance(t, list) and kind in t)


def _open_object(schema: Mapping[str, Any]) -> bool:
    """An object documented without any field (``{"type": "object"}``): whatever it
    holds is undocumented, not absent, unless ``additionalProperties: false`` closes it."""
    branches = list(_branches(schema))
    return (
        any(_says(b, "object") for b in branches)
        and not _properties(schema)
        and not any(b.get("patternProperties") for b in branches)
        and not any(b.get("additionalProperties") is False for b in branches)
    )


def schema_types(schema: Mapping[str, Any]) -> frozenset[str]:
    """The JSON types a schema allows, read through compositions; empty when any.

    >>> sorted(schema_types({"anyOf": [{"type": "integer"}, {"type": "null"}]}))
    ['integer', 'null']
    """
    out: set[str] = set()
    for branch in _branches(schema):
        t = branch.get("type")
        if isinstance(t, str):
            out.add(t)
        elif isinstance(t, list):
            out.update(x for x in t if isinstance(x, str))
        elif "properties" in branch:
            out.add("object")
        elif "items" in branch or "prefixItems" in branch:
            out.add("array")
    return frozenset(out)


def _is_open(schema: Mapping[str, Any]) -> bool:
    """A schema that says nothing about its value's shape (``{}``, a GraphQL ``JSON``
    scalar): any path below it may exist."""
    return not schema_types(schema) and not _properties(schema) and _items(schema) is None


def _as_steps(path: Sequence[Step] | str) -> list[Step]:
    return parse_path(path) if isinstance(path, str) else list(path)


def schema_at(schema: Mapping[str, Any], path: Sequence[Step] | str) -> Mapping[str, Any] | None:
    """The schema of the value at ``path`` in a response documented by ``schema``;
    ``None`` when the schema does not document that path. Below a schema that says
    nothing (``{}``), an array without ``items`` or an object without fields, every path
    is possible and its schema is ``{}``.

    >>> s = {"type": "object", "properties": {"results": {"type": "array",
    ...      "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}}}
    >>> schema_at(s, ["results", 0, "id"]), schema_at(s, "results[].id"), schema_at(s, "result")
    ({'type': 'integer'}, {'type': 'integer'}, None)
    >>> schema_at({"type": "object", "properties": {"movies": {"type": "array"}}}, "movies[0].id")
    {}
    """
    here: Mapping[str, Any] = schema
    for step in _as_steps(path):
        if _is_open(here):
            return {}
        if isinstance(step, int) or step == "[]":
            items = _items(here)
            if items is None:
                return None
            here = items
            continue
        props = _properties(here)
        if step in props:
            here = props[step]
            continue
        extra = next(
            (
                b["additionalProperties"]
                for b in _branches(here)
                if isinstance(b.get("additionalProperties"), Mapping)
            ),
            None,
        )
        if extra is None:
            return {} if _open_object(here) else None
        here = extra
    return here


def closest_path(schema: Mapping[str, Any], path: Sequence[Step] | str) -> str | None:
    """The documented path nearest to ``path``: each name that the schema lacks is
    replaced by the closest documented one (rapidfuzz), a missing ``[]`` is added where
    the schema has an array and an index where it has none is dropped. ``None`` when
    some step has no close match.

    >>> s = {"type": "object", "properties": {"results": {"type": "array",
    ...      "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}}}
    >>> closest_path(s, "result[0].id"), closest_path(s, ["results", "id"])
    ('results[].id', 'results[].id')
    """
    here: Mapping[str, Any] = schema
    out: list[Step] = []
    steps = _as_steps(path)
    for i, step in enumerate(steps):
        if _is_open(here):
            out.extend("[]" if isinstance(s, int) else s for s in steps[i:])
            return format_path(out)
        items = _items(here)
        if isinstance(step, int) or step == "[]":
            if items is not None:
                out.append("[]")
                here = items
            continue  # an index into something that is not a list: drop it
        props = _properties(here)
        if not props and items is not None:
            out.append("[]")  # `r.results.id` where results is a list
            here = items
            props = _properties(here)
        if step in props:
            out.append(step)
            here = props[step]
            continue
        from rapidfuzz import fuzz, process  # a step that misses: rarely needed

        best = process.extractOne(step, list(props), scorer=fuzz.ratio, score_cutoff=60)
        if best is None:
            return None
        out.append(best[0])
        here = props[best[0]]
    return format_path(out)


def iter_paths(
    schema: Mapping[str, Any], *, max_depth: int = MAX_DEPTH, limit: int = MAX_PATHS
) -> Iterator[tuple[tuple[Step, ...], Mapping[str, Any]]]:
    """Every documented path below ``schema`` (arrays as ``"[]"``) with its schema,
    breadth first, so the shallow paths of a huge schema come before the limit.

    >>> s = {"type": "object", "properties": {"results": {"type": "array",
    ...      "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}}}
    >>> [format_path(p) for p, _ in iter_paths(s)]
    ['results', 'results[]', 'results[].id']
    """
    queue: list[tuple[tuple[Step, ...], Mapping[str, Any], frozenset[int]]] = [
        ((), schema, frozenset())
    ]
    count = 0
    while queue:
        nxt: list[tuple[tuple[Step, ...], Mapping[str, Any], frozenset[int]]] = []
        for steps, here, seen in queue:
            if len(steps) >= max_depth or id(here) in seen:
                continue
            inner = seen | {id(here)}
            # a property named "[]" cannot be told from an element step: left out
            children: list[tuple[Step, Mapping[str, Any]]] = [
                (k, v) for k, v in _properties(here).items() if k != "[]"
            ]
            items = _items(here)
            if items is not None:
                children.append(("[]", items))
            for step, sub in children:
                path = (*steps, step)
                yield path, sub
                count += 1
                if count >= limit:
                    return
                nxt.append((path, sub, inner))
        queue = nxt

"""Object-valued query parameters sent in pieces, put back together so that their value
is checked: ``filter[status]=open&filter[min]=3`` (``style: deepObject``, and the
PHP/Rails brackets), or ``status=open&min=3`` for an object serialised ``style: form,
explode: true`` (the default), whose properties become query keys.

Before, each piece was taken as "a property of an object sent in the query string" and
left at that: ``filter[status]=open`` against ``enum: [active, done]`` was clean."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from autofeedback.checks._check_values import deserialize
from autofeedback.core._model import Operation, Parameter
from autofeedback.core._resolve import Arg

#: ``name[key]``: one level (nested brackets are no OpenAPI serialisation)
_PIECE = re.compile(r"([^\[\]]+)\[([^\[\]]+)\]")


def _object_schema(p: Parameter) -> Mapping[str, Any] | None:
    schema = p.schema if isinstance(p.schema, Mapping) else {}
    types = schema.get("type")
    if types == "object" or (types is None and isinstance(schema.get("properties"), Mapping)):
        return schema
    return None


def fold_object_queries(op: Operation, args: list[Arg]) -> list[Arg]:
    """``args`` with the pieces of each object-valued query parameter of ``op`` replaced by
    one argument holding the object (at the first piece's place), each property read as
    its schema's type. A piece is one only where ``op`` documents no parameter of its
    literal name (``page[size]`` documented as is stays as is), its parameter is an object
    and was not sent whole as well.

    >>> p = Parameter("filter", "query", schema={"type": "object", "properties": {
    ...     "min": {"type": "integer"}}}, style="deepObject")
    >>> op = Operation("list", "", method="GET", path="/x", parameters=(p,))
    >>> [(a.name, a.value) for a in fold_object_queries(op, [Arg("filter[min]", "query",
    ...     "3", raw=True), Arg("filter[q]", "query", "x", raw=True)])]
    [('filter', {'min': 3, 'q': 'x'})]
    """
    queries = [p for p in op.parameters if p.location == "query"]
    if not any(_object_schema(p) is not None for p in queries):
        return args
    literal = {p.name for p in op.parameters}
    sent = {a.name for a in args if a.location == "query"}
    carriers: dict[str, Parameter] = {}  # a form-exploded object's property -> its parameter
    for p in queries:
        schema = _object_schema(p)
        if schema is None or p.explode is False or (p.style or "form") != "form":
            continue
        for key in schema.get("properties") or ():
            carriers.setdefault(str(key), p)
    objects = {p.name: p for p in queries if _object_schema(p) is not None}
    pieces: dict[str, dict[str, Any]] = {}
    out: list[Arg] = []
    for arg in args:
        owner = key = None
        if arg.location == "query" and arg.name not in literal:
            m = _PIECE.fullmatch(arg.name)
            if m is not None and m.group(1) in objects:
                owner, key = objects[m.group(1)], m.group(2)
            elif m is None and arg.name in carriers:
                owner, key = carriers[arg.name], arg.name
        if owner is None or owner.name in sent:
            out.append(arg)
            continue
        value = pieces.get(owner.name)
        if value is None:
            value = pieces[owner.name] = {}
            out.append(Arg(owner.name, "query", value))
        props = (_object_schema(owner) or {}).get("properties") or {}
        schema = props.get(key) if isinstance(props, Mapping) else None
        read = deserialize(arg.value, schema) if isinstance(schema, Mapping) else arg.value
        value.setdefault(key, read)
    return out

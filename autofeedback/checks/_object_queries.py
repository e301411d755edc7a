"""Object- and array-valued parameters sent in pieces, put back together so that their
value is checked:

* in the query, ``filter[status]=open&filter[min]=3`` (``style: deepObject``, and the
  PHP/Rails brackets), ``ids[]=1&ids[]=2``, or ``status=open&min=3`` for an object
  serialised ``style: form, explode: true`` (the default), whose properties become keys;
* in a form body (``application/x-www-form-urlencoded``, as payment APIs take it),
  ``metadata[order_id]=6735``, ``expand[]=customer``, ``items[0][price]=p_1``.

Before, a query piece was taken as "a property of an object sent in the query string"
and left at that (``filter[status]=open`` against ``enum: [active, done]`` was clean),
and a form body's bracketed field was an unknown parameter (E3)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from autofeedback.checks._check_values import deserialize
from autofeedback.core._model import Operation, Parameter
from autofeedback.core._resolve import Arg

#: ``name[key]...``: the name, then its brackets
_PIECE = re.compile(r"([^\[\]]+)((?:\[[^\[\]]*\])+)")
_KEY = re.compile(r"\[([^\[\]]*)\]")
#: the most brackets a piece may have
_MAX_DEPTH = 32


class _Conflict(Exception):
    """Pieces that do not make one value (``a[b]=1&a[b][c]=2``): left as they came."""


def _kind(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    types = schema.get("type")
    if isinstance(types, list):  # ``["object", "null"]``: OpenAPI 3.1's, or 3.0's nullable
        kinds = {t for t in types if t in ("object", "array")}
        return str(kinds.pop()) if len(kinds) == 1 else None
    if types in ("object", "array"):
        return str(types)
    if types is None and isinstance(schema.get("properties"), Mapping):
        return "object"
    return None


def fold_object_queries(op: Operation, args: list[Arg]) -> list[Arg]:
    """``args`` with the pieces of each object- or array-valued query parameter of ``op``
    (and of each such field of a form body) replaced by one argument holding the value
    (at the first piece's place), each leaf read as its schema's type. A piece is one
    only where ``op`` documents no parameter of its literal name (``page[size]``
    documented as is stays as is), and its parameter was not sent whole as well.

    >>> p = Parameter("filter", "query", schema={"type": "object", "properties": {
    ...     "min": {"type": "integer"}}}, style="deepObject")
    >>> op = Operation("list", "", method="GET", path="/x", parameters=(p,))
    >>> [(a.name, a.value) for a in fold_object_queries(op, [Arg("filter[min]", "query",
    ...     "3", raw=True), Arg("filter[q]", "query", "x", raw=True)])]
    [('filter', {'min': 3, 'q': 'x'})]
    """
    owners: dict[tuple[str, str], Parameter] = {}
    for p in op.parameters:
        if p.location in ("query", "body") and _kind(p.schema) is not None:
            owners.setdefault((p.name, p.location), p)
    if not owners:
        return args
    literal = {p.name for p in op.parameters}
    sent = {(a.name, a.location) for a in args}
    carriers: dict[str, Parameter] = {}  # a form-exploded object's property -> its parameter
    for (_, location), p in owners.items():
        if location != "query" or p.explode is False or (p.style or "form") != "form":
            continue
        if _kind(p.schema) == "object":
            for key in p.schema.get("properties") or ():
                carriers.setdefault(str(key), p)
    trees: dict[tuple[str, str], Any] = {}
    pieces: dict[tuple[str, str], list[Arg]] = {}
    out: list[Arg | tuple[str, str]] = []
    for arg in args:
        owner, path = _owner(arg, owners, carriers, literal)
        if owner is None or (owner.name, arg.location) in sent:
            out.append(arg)
            continue
        key = (owner.name, arg.location)
        if key not in trees:
            trees[key] = {}
            out.append(key)
        pieces.setdefault(key, []).append(arg)
        try:
            _put(trees[key], path, arg.value)
        except _Conflict:
            trees[key] = None  # these pieces stay as they came
    folded: list[Arg] = []
    for item in out:
        if isinstance(item, Arg):
            folded.append(item)
            continue
        owner = owners[item]
        tree = trees[item]
        if tree is None:
            folded.extend(pieces[item])
            continue
        try:
            value = _lists(tree)
        except _Conflict:
            folded.extend(pieces[item])
            continue
        folded.append(Arg(owner.name, owner.location, _typed(value, owner.schema)))
    return folded


def _owner(
    arg: Arg,
    owners: Mapping[tuple[str, str], Parameter],
    carriers: Mapping[str, Parameter],
    literal: set[str],
) -> tuple[Parameter | None, list[str]]:
    """The parameter ``arg`` is a piece of, and the keys below it."""
    if arg.name in literal or not (arg.location == "query" or (arg.location == "body" and arg.raw)):
        return None, []  # a JSON body's key is what it says, brackets and all
    m = _PIECE.fullmatch(arg.name)
    if m is not None:
        owner = owners.get((m.group(1), arg.location))
        path = _KEY.findall(m.group(2)) if owner is not None else []
        # deeper than any schema is checked: left as it came (E3), never a recursion
        return (owner, path) if 0 < len(path) <= _MAX_DEPTH else (None, [])
    if arg.location == "query" and arg.name in carriers:
        return carriers[arg.name], [arg.name]
    return None, []


def _put(tree: dict[str, Any], path: list[str], value: Any) -> None:
    """Set ``value`` at ``path`` in ``tree`` (``""``: the next item of a list)."""
    node = tree
    for i, key in enumerate(path):
        last = i == len(path) - 1
        if key == "":
            if not last:
                raise _Conflict  # ``a[][b]``: which item is meant is not said
            items = node.setdefault("\x00append", [])
            if not isinstance(items, list):
                raise _Conflict
            items.extend(value if isinstance(value, list) else [value])
            return
        if last:
            if key in node:
                raise _Conflict
            node[key] = value
            return
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise _Conflict
        node = child


def _lists(node: Any) -> Any:
    """The tree with ``a[]`` lists and ``a[0]``, ``a[1]`` indexes as lists."""
    if not isinstance(node, dict):
        return node
    if set(node) == {"\x00append"}:
        return [_lists(v) for v in node["\x00append"]]
    if "\x00append" in node:
        raise _Conflict
    if node and all(k.isdigit() and len(k) <= 9 for k in node):  # items in index order
        return [_lists(node[k]) for k in sorted(node, key=int)]
    return {k: _lists(v) for k, v in node.items()}


def _typed(value: Any, schema: Any, depth: int = 0) -> Any:
    """``value``'s text leaves read as the types ``schema`` documents for them."""
    if not isinstance(schema, Mapping) or depth > 32:
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        extra = schema.get("additionalProperties")
        return {
            k: _typed(v, props.get(k, extra if isinstance(extra, Mapping) else {}), depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        items = schema.get("items")
        if _kind(schema) != "array":
            return value
        return [_typed(v, items, depth + 1) for v in value]
    if isinstance(value, str):
        return deserialize(value, schema)
    return value

"""Older JSON Schema drafts, read as draft 2020-12 (the dialect every check speaks).

A tool's schema names its draft in ``$schema`` (draft 2020-12 when it names none). The
keywords whose meaning changed are rewritten to the 2020-12 keywords that mean the same:

* ``items: [...]`` (a tuple) and ``additionalItems`` -> ``prefixItems`` and ``items``;
* ``dependencies`` -> ``dependentRequired`` (name lists) and ``dependentSchemas``;
* draft 4's boolean ``exclusiveMaximum``/``exclusiveMinimum`` -> the numeric keywords;
* up to draft 7, keywords beside a ``$ref`` are ignored, so they are dropped;
* up to draft 7, a ``$id`` (draft 4: ``id``) that is a fragment (``"#foo"``) is an
  ``$anchor``.

The first three have only one meaning whatever the draft (2020-12 allows neither a list
``items``, nor ``dependencies``, nor a boolean bound), so they are rewritten in a schema
that names no draft too.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["draft_of", "upgrade", "upgrade_node"]

_DRAFTS = {
    "draft-04": 4,
    "draft-06": 6,
    "draft-07": 7,
    "draft/2019-09": 2019,
    "draft/2020-12": 2020,
}
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_ONE = (
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "items",
    "additionalItems",
)
_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_DATA = frozenset({"enum", "const", "default", "examples", "example"})
_MAX_DEPTH = 200
_TUPLE_REF = re.compile(r"/items/(\d+)(?=/|$)")


def draft_of(schema: Any) -> int:
    """The draft a schema's ``$schema`` names (4, 6, 7, 2019, 2020; 2020 by default).

    >>> draft_of({"$schema": "http://json-schema.org/draft-04/schema#"})
    4
    """
    uri = schema.get("$schema") if isinstance(schema, dict) else None
    if isinstance(uri, str):
        for key, draft in _DRAFTS.items():
            if key in uri:
                return draft
    return 2020


def upgrade(schema: Any, draft: int = 2020, depth: int = 0) -> Any:
    """``schema`` (of ``draft``) in draft 2020-12 terms; the input is not changed.

    >>> upgrade({"items": [{"type": "integer"}], "additionalItems": False}, 7)
    {'prefixItems': [{'type': 'integer'}], 'items': False}
    >>> upgrade({"maximum": 3, "exclusiveMaximum": True}, 4)
    {'exclusiveMaximum': 3}
    """
    if depth > _MAX_DEPTH:
        return schema
    if isinstance(schema, list):
        return [upgrade(s, draft, depth + 1) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if draft <= 7 and isinstance(schema.get("$ref"), str):
        # siblings of $ref are ignored up to draft 7; definitions stay reachable
        schema = {k: v for k, v in schema.items() if k in ("$ref", "definitions", "$defs")}
    out: dict[str, Any] = {}
    tuple_items = isinstance(schema.get("items"), list)
    for key, value in schema.items():
        if key in _DATA:
            out[key] = value
        elif (key == "$id" or (key == "id" and draft == 4)) and isinstance(value, str):
            out.update(_identifier(value, draft))
        elif key == "$ref" and isinstance(value, str):
            out[key] = _TUPLE_REF.sub(r"/prefixItems/\1", value)
        elif key == "items" and tuple_items:
            out["prefixItems"] = upgrade(value, draft, depth + 1)
        elif key == "additionalItems":
            if tuple_items:  # beside a single items schema it means nothing
                out["items"] = upgrade(value, draft, depth + 1)
        elif key == "dependencies" and isinstance(value, dict):
            for name, dep in value.items():
                if isinstance(dep, list):
                    out.setdefault("dependentRequired", {})[name] = dep
                else:
                    out.setdefault("dependentSchemas", {})[name] = upgrade(dep, draft, depth + 1)
        elif key in _MAPS and isinstance(value, dict):
            out[key] = {k: upgrade(v, draft, depth + 1) for k, v in value.items()}
        elif key in _ONE or (key in _LISTS and isinstance(value, list)):
            out[key] = upgrade(value, draft, depth + 1)
        else:
            out[key] = value
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = out.get(exclusive)
        if isinstance(flag, bool):
            del out[exclusive]
            if flag and bound in out:
                out[exclusive] = out.pop(bound)
    return out


def _identifier(value: str, draft: int) -> dict[str, str]:
    """A draft's ``$id`` (draft 4's ``id``) as 2020-12 writes it: up to draft 7 a
    fragment names a place (``"#foo"``, 2020-12's ``$anchor``); an empty one means
    nothing.

    >>> _identifier("#foo", 7), _identifier("http://x/y#", 4)
    ({'$anchor': 'foo'}, {'$id': 'http://x/y'})
    """
    if draft > 7 or "#" not in value:
        return {"$id": value}
    base, _, name = value.partition("#")
    out = {"$id": base} if base else {}
    if name and not name.startswith("/"):
        out["$anchor"] = name
    return out


def upgrade_node(schema: dict[str, Any]) -> Any:
    """One schema node upgraded, its subschemas left as they are (already expanded).

    >>> upgrade_node({"dependencies": {"a": ["b"]}})
    {'dependentRequired': {'a': ['b']}}
    """
    return upgrade(schema, 2020, _MAX_DEPTH)

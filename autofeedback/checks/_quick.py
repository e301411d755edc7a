"""Whether a call's arguments certainly fit a plain schema, by one walk over the value:
the first time an operation is called, instead of compiling its validator.

A log of tool calls brings a new tool list with most records; compiling an operation's
validator (jsonschema-rs, 20-40 µs) costs more than walking a small value once (a few
µs), and is only repaid by the second call of the same operation. So the first call is
walked here, and the validator is compiled on the second.

The walk judges only plain schemas: at every place of the schema the value reaches, only
``type``, ``enum`` (of scalars), ``properties``, ``required``, ``additionalProperties``,
``items`` and annotations (``description``, ``title``, ``default``...). Any other keyword
there (a bound, a format, a pattern, a composition, an unknown key) and any value the
validators could read otherwise (``1.0`` for an integer, ``True`` against ``1``, NaN) is
a ``False``. Only a ``True`` is trusted, as in
:func:`~autofeedback.checks._check_values.accepts`: a ``False`` sends the call to the
validator, which says the same or finds the errors; so this never decides a finding."""

from __future__ import annotations

import math
from typing import Any

_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly",
     "$comment"}
)  # fmt: skip
_KEYS = _ANNOTATIONS | {"type", "enum", "properties", "required", "additionalProperties", "items"}
_SCALARS = frozenset({str, int, float, bool, type(None)})
_MAX_DEPTH = 32


def fits(schema: Any, value: Any, depth: int = 0) -> bool:
    """Whether ``value`` certainly fits ``schema`` (``False``: it may not, or the schema
    is not plain where the value reaches; see the module).

    >>> fits({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 2})
    True
    >>> fits({"type": "integer"}, 1.0), fits({"type": "integer", "minimum": 1}, 2)
    (False, False)
    """
    if schema is True:
        return True
    if type(schema) is not dict or depth > _MAX_DEPTH or not schema.keys() <= _KEYS:
        return False
    kind = schema.get("type")
    if kind is not None and not _of_type(value, kind):
        return False
    enum = schema.get("enum")
    if enum is not None and not (
        type(enum) is list
        and type(value) in _SCALARS
        and any(type(e) is type(value) and e == value for e in enum)
    ):
        return False
    if type(value) is dict:
        required = schema.get("required")
        if required is not None and not (
            type(required) is list and all(type(r) is str and r in value for r in required)
        ):
            return False
        props = schema.get("properties")
        if props is None:
            props = {}
        elif type(props) is not dict:
            return False
        extra = schema.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k)
            if sub is None:
                if extra is False:
                    return False
                sub = True if extra is None else extra
            if not fits(sub, v, depth + 1):
                return False
    elif type(value) is list:
        items = schema.get("items", True)
        if not all(fits(items, v, depth + 1) for v in value):
            return False
    return True


_TYPES = {
    "string": lambda v, t: t is str,
    "integer": lambda v, t: t is int,
    "number": lambda v, t: t is int or (t is float and math.isfinite(v)),
    "boolean": lambda v, t: t is bool,
    "object": lambda v, t: t is dict,
    "array": lambda v, t: t is list,
    "null": lambda v, t: v is None,
}


def _of_type(value: Any, kind: Any) -> bool:
    t = type(value)
    if type(kind) is str:
        test = _TYPES.get(kind)
        return test is not None and test(value, t)
    if type(kind) is not list or not kind or len(set(map(str, kind))) != len(kind):
        return False  # not a list of distinct names: a schema the validators judge
    if not all(type(k) is str and k in _TYPES for k in kind):
        return False
    return any(_TYPES[k](value, t) for k in kind)

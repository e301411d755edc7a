"""Lossless type coercions (E4.1): a value whose documented type differs from what the
model wrote, where the written value says exactly one thing in the documented type.

* a number or boolean written as text: ``"3"`` for an integer, ``"2.5"`` for a number,
  ``"true"`` / ``"False"`` for a boolean;
* an object or array written as JSON text (``'{"a": 1}'`` where an object is documented);
* one value where the docs take an array of that type (``5`` for ``[5]``).

Never a lossy one: a fraction for an integer (``2.5`` -> ``2``), an object or array as its
text, a word for a boolean (``"yes"``), text that is no number (``"ten"``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["NOT_COERCIBLE", "coerce"]

#: what :func:`coerce` returns when no lossless coercion exists
NOT_COERCIBLE: Any = object()

_INTEGER = re.compile(r"[+-]?\d{1,300}")
_NUMBER = re.compile(r"[+-]?(?:\d{1,300}(?:\.\d{0,300})?|\.\d{1,300})(?:[eE][+-]?\d{1,4})?")
_BOOLEAN = {"true": True, "false": False}
#: JSON text longer than this is not decoded for a coercion (a bounded cost per value)
_MAX_JSON = 1 << 20


def coerce(value: Any, types: Iterable[str], *, items: Iterable[str] = ()) -> Any:
    """``value`` in the first of ``types`` (JSON Schema type names) it converts to without
    loss, or :data:`NOT_COERCIBLE`. ``items``: the item types of a documented array, for
    one value sent in place of the array.

    >>> coerce("3", ["integer"]), coerce("2.50", ["number"]), coerce("True", ["boolean"])
    (3, 2.5, True)
    >>> coerce('{"a": 1}', ["object"]), coerce(5, ["array"], items=["integer"])
    ({'a': 1}, [5])
    >>> coerce(2.5, ["integer"]) is NOT_COERCIBLE, coerce("ten", ["integer"]) is NOT_COERCIBLE
    (True, True)
    """
    wanted = [t for t in types if isinstance(t, str)]
    for t in wanted:
        out = _one(value, t, tuple(items))
        if out is not NOT_COERCIBLE:
            return out
    return NOT_COERCIBLE


def _one(value: Any, t: str, items: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if t == "integer" and _INTEGER.fullmatch(text):
            return int(text)
        if t == "number" and _NUMBER.fullmatch(text):
            number = float(text)
            if not math.isfinite(number):
                return NOT_COERCIBLE
            if _INTEGER.fullmatch(text):
                return int(text)
            return number
        if t == "boolean" and text.lower() in _BOOLEAN:
            return _BOOLEAN[text.lower()]
        if t in ("object", "array") and text[:1] in "{[" and len(text) <= _MAX_JSON:
            try:
                decoded = json.loads(text)
            except (ValueError, RecursionError):
                return NOT_COERCIBLE
            if t == "object" and isinstance(decoded, dict):
                return decoded
            if t == "array" and isinstance(decoded, list):
                return decoded
    if t == "array" and items and not isinstance(value, (list, dict)):
        if isinstance(value, str) and "," in value:
            return NOT_COERCIBLE  # "a,b" may be one item or two: not certain
        if _fits(value, items):
            return [value]
        inner = coerce(value, items)
        return NOT_COERCIBLE if inner is NOT_COERCIBLE else [inner]
    return NOT_COERCIBLE


def _fits(value: Any, types: Iterable[str]) -> bool:
    """Whether ``value`` already is one of the JSON types."""
    for t in types:
        if t == "string" and isinstance(value, str):
            return True
        if t == "boolean" and isinstance(value, bool):
            return True
        if t == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if t == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if t == "null" and value is None:
            return True
    return False

"""Lossless type coercions (E4.1): a value whose documented type differs from what the
model wrote, where the written value says exactly one thing in the documented type.

Lossless means the text round-trips exactly:

* a number or boolean written as text: ``"3"`` for an integer, ``"2.5"`` for a number,
  ``"true"`` / ``"False"`` for a boolean; only ASCII digits, no sign but ``-``, no
  leading zeros (``"0123"`` is a code, not 123), no spaces, no rounding or underflow
  (``"1e-400"`` is not 0.0), within the documented format (``int32``, ``int64``);
* an object or array written as JSON text (``'{"a": 1}'`` where an object is documented),
  with no key given twice, no ``NaN`` or ``Infinity``, and every number exact;
* one value where the docs take an array of that type (``5`` for ``[5]``).

Never a lossy one: a fraction for an integer (``2.5`` -> ``2``), an object or array as its
text, a word for a boolean (``"yes"``), text that is no number (``"ten"``), full-width or
other non-ASCII digits (``"１２３"``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["NOT_COERCIBLE", "coerce"]

#: what :func:`coerce` returns when no lossless coercion exists
NOT_COERCIBLE: Any = object()

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]{0,299})", re.ASCII)
_NUMBER = re.compile(
    r"-?(?:0|[1-9][0-9]{0,299})(?:\.[0-9]{1,300})?(?:[eE][+-]?[0-9]{1,4})?", re.ASCII
)
_BOOLEAN = {"true": True, "false": False}
#: JSON text longer than this is not decoded for a coercion (a bounded cost per value)
_MAX_JSON = 1 << 20
#: the integer formats' ranges (OpenAPI's ``int32`` and ``int64``)
_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def coerce(
    value: Any,
    types: Iterable[str],
    *,
    items: Iterable[str] = (),
    schema: Mapping[str, Any] | None = None,
) -> Any:
    """``value`` in the first of ``types`` (JSON Schema type names) it converts to without
    loss, or :data:`NOT_COERCIBLE`. ``items``: the item types of a documented array, for
    one value sent in place of the array; ``schema``: the documented schema, whose
    ``format`` bounds an integer.

    >>> coerce("3", ["integer"]), coerce("2.50", ["number"]), coerce("True", ["boolean"])
    (3, 2.5, True)
    >>> coerce('{"a": 1}', ["object"]), coerce(5, ["array"], items=["integer"])
    ({'a': 1}, [5])
    >>> [coerce(v, ["integer"]) is NOT_COERCIBLE for v in (2.5, "ten", "0123", "１２３")]
    [True, True, True, True]
    >>> coerce("1e-400", ["number"]) is NOT_COERCIBLE
    True
    >>> coerce('{"a": 1, "a": 2}', ["object"]) is NOT_COERCIBLE
    True
    >>> coerce("3000000000", ["integer"], schema={"format": "int32"}) is NOT_COERCIBLE
    True
    """
    wanted = [t for t in types if isinstance(t, str)]
    fmt = schema.get("format") if isinstance(schema, Mapping) else None
    for t in wanted:
        out = _one(value, t, tuple(items), fmt if isinstance(fmt, str) else None)
        if out is not NOT_COERCIBLE:
            return out
    return NOT_COERCIBLE


def _exact_float(text: str) -> float | None:
    """``text`` as a float where the float says exactly what the text says (its shortest
    repr is the same number): ``"0.1"`` and ``"2.50"`` are, ``"1e-400"`` (underflow),
    ``"1e400"`` (overflow) and ``"3.14159265358979323846"`` (rounded) are not."""
    number = float(text)
    if not math.isfinite(number):
        return None
    try:
        same = Decimal(repr(number)) == Decimal(text)
    except InvalidOperation:
        return None
    return number if same else None


def _in_format(number: int, fmt: str | None) -> bool:
    low, high = _RANGES.get(fmt or "", (None, None))
    return low is None or high is None or low <= number <= high


def _one(value: Any, t: str, items: tuple[str, ...], fmt: str | None) -> Any:
    if isinstance(value, str):
        text = value
        if t == "integer" and _INTEGER.fullmatch(text) and text != "-0":
            number = int(text)
            return number if _in_format(number, fmt) else NOT_COERCIBLE
        if t == "number" and _NUMBER.fullmatch(text) and text != "-0":
            if _INTEGER.fullmatch(text):
                return int(text)
            exact = _exact_float(text)
            return NOT_COERCIBLE if exact is None else exact
        if t == "boolean" and text.lower() in _BOOLEAN:
            return _BOOLEAN[text.lower()]
        stripped = text.strip()
        if t in ("object", "array") and stripped[:1] in "{[" and len(text) <= _MAX_JSON:
            decoded = _strict_json(text)
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


class _Lossy(ValueError):
    """JSON text that does not say one exact value (a key twice, NaN, a rounded number)."""


def _no_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in pairs:
        if key in out:
            raise _Lossy(f"key {key!r} given twice")
        out[key] = item
    return out


def _no_constant(name: str) -> Any:
    raise _Lossy(f"{name} is no JSON number")


def _exact(text: str) -> float:
    number = _exact_float(text)
    if number is None:
        raise _Lossy(f"{text} is not exact as a number")
    return number


def _strict_json(text: str) -> Any:
    """``text`` decoded as JSON where it says exactly one value, else
    :data:`NOT_COERCIBLE`."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_twice,
            parse_constant=_no_constant,
            parse_float=_exact,
        )
    except (ValueError, RecursionError):
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

"""E4: do the values match the documented types (E4.1) and constraints (E4.2)?

Values taken from a URL, header or form arrive as text; they are deserialized per the
parameter's schema and OpenAPI style first (``?limit=10`` is an integer 10, ``?ids=1,2``
an array), so only a value that cannot be read as the documented type is reported.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError, UnknownType, ValidationError

from autofeedback._findings import Finding
from autofeedback._model import Operation, Parameter
from autofeedback._resolve import Arg

__all__ = ["check_value", "deserialize"]

_INT = re.compile(r"[+-]?\d{1,30}")
_FORMATS = FormatChecker()
_validators: dict[int, tuple[Mapping[str, Any], Draft202012Validator]] = {}
_lock = threading.Lock()
_MAX_PER_PARAM = 3


def _types(schema: Mapping[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


def deserialize(text: Any, schema: Mapping[str, Any], param: Parameter | None = None) -> Any:
    """Read a URL/header value as the schema's type; leave it as it is when it cannot be.

    >>> deserialize("10", {"type": "integer"})
    10
    >>> deserialize("a,b", {"type": "array", "items": {"type": "string"}})
    ['a', 'b']
    """
    if isinstance(text, list):
        if "array" in _types(schema):
            items = schema.get("items", {})
            return [deserialize(t, items if isinstance(items, Mapping) else {}) for t in text]
        return text
    if not isinstance(text, str):
        return text
    for t in _types(schema):
        if t == "integer" and _INT.fullmatch(text.strip()):
            return int(text)
        if t == "number":
            try:
                value = float(text)
            except ValueError:
                continue
            if math.isfinite(value):
                return int(value) if _INT.fullmatch(text.strip()) else value
        if t == "boolean" and text in ("true", "false"):
            return text == "true"
        if t == "null" and text in ("", "null"):
            return None
        if t == "array":
            explode = param.explode if param is not None else None
            parts = [text] if explode else text.split(",")
            items = schema.get("items", {})
            return [deserialize(p, items if isinstance(items, Mapping) else {}) for p in parts]
        if t == "string":
            return text
    return text


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _as_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if value is None or isinstance(value, str) else str(value)


def _validator(schema: Mapping[str, Any]) -> Draft202012Validator:
    key = id(schema)
    with _lock:
        hit = _validators.get(key)
        if hit is not None and hit[0] is schema:
            return hit[1]
        v = Draft202012Validator(schema, format_checker=_FORMATS)
        if len(_validators) > 50_000:
            _validators.clear()
        _validators[key] = (schema, v)
        return v


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_value(op: Operation, arg: Arg, param: Parameter) -> Iterator[Finding]:
    """Type errors first (E4.1), then constraint violations (E4.2), at most three per
    parameter: the model needs the first problem, not a wall of them."""
    schema = param.schema
    if not isinstance(schema, Mapping) or not schema:
        return
    value = arg.value
    # a path/query/header value travels as text whatever the model wrote (500 and "500"
    # reach the server alike), so judge the text as the server will read it
    if param.location in ("path", "query", "header", "cookie") and _scalar(value):
        value = deserialize(_as_text(value), schema, param)
    elif arg.raw:
        value = deserialize(value, schema, param)
    try:
        errors = sorted(
            _validator(schema).iter_errors(value),
            key=lambda e: (e.validator != "type", list(e.absolute_path).__len__()),
        )
    except (SchemaError, UnknownType, RecursionError, ValueError, TypeError):
        return  # a schema the spec got wrong is the spec's problem, not the request's
    doc = param.description.strip()
    for err in errors[:_MAX_PER_PARAM]:
        yield _finding(op, arg, param, value, err, doc)


def _finding(
    op: Operation, arg: Arg, param: Parameter, value: Any, err: ValidationError, doc: str
) -> Finding:
    sub = [str(p) for p in err.absolute_path]
    where = (arg.location, arg.name, *sub)
    got = err.instance
    name = ".".join([arg.name, *sub])
    described = f" ({doc})" if doc else ""
    if err.validator == "type":
        expected = err.validator_value
        wanted = " or ".join(expected) if isinstance(expected, list) else str(expected)
        return Finding(
            "E4.1",
            where,
            got,
            expected=expected,
            operation=op.name,
            doc=doc,
            message=f"{name} must be {_article(wanted)} {wanted}{described}, got "
            f"{_type_name(got)} {_short(got)}",
        )
    kind = str(err.validator)
    expected = err.validator_value
    if kind == "enum":
        allowed = ", ".join(_short(v, 30) for v in list(expected)[:12])  # type: ignore[arg-type]
        message = f"{name} must be one of {allowed}; got {_short(got)}"
        suggestion = None
    elif kind == "format":
        message = f"{name} must be a valid {expected}{described}; got {_short(got)}"
        suggestion = None
    else:
        message = f"{name}: {_short(got)} breaks the documented {kind} {_short(expected, 40)}"
        suggestion = None
    return Finding(
        "E4.2",
        where,
        got,
        expected={kind: expected} if not isinstance(expected, dict) else expected,
        operation=op.name,
        doc=doc,
        message=message,
        suggestion=suggestion,
    )


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"

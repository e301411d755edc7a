"""Spec ``pattern``s that are not regular expressions: dropped at load, with a warning.

A ``pattern: "(("`` cannot be checked at all; kept, it would make every value of that
parameter "uncheckable" and blame the model for the spec. Dropping the keyword (and a
``patternProperties`` entry) keeps the rest of the schema checked; the warning names
the operation and the parameter, so the spec's author can fix it.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any

from autofeedback.core._model import Operation
from autofeedback.core._patterns import InvalidPattern, compile_pattern, is_valid

__all__ = ["InvalidPatternWarning", "drop_invalid_patterns"]

# values, not schemas: a {"pattern": ...} inside an example is data
_DATA_KEYS = frozenset({"enum", "const", "example", "examples", "default"})


class InvalidPatternWarning(UserWarning):
    """A spec ``pattern`` is not a regular expression; the keyword is not checked."""


def drop_invalid_patterns(ops: list[Operation], source: str) -> list[Operation]:
    """``ops`` with every invalid ``pattern`` (and ``patternProperties`` entry) removed,
    one :class:`InvalidPatternWarning` per removal.

    >>> from autofeedback.core._model import Parameter
    >>> op = Operation("f", parameters=(Parameter("a", "argument", {"pattern": "(("}),))
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     drop_invalid_patterns([op], "<tools>")[0].parameters[0].schema
    {}
    """
    out: list[Operation] = []
    seen: dict[int, tuple[Any, int]] = {}  # expanded $refs are shared: each walked once
    for op in ops:
        params = tuple(
            dataclasses.replace(p, schema=_clean(p.schema, source, f"{op.name}: {p.name!r}"))
            if _has_invalid(p.schema, seen=seen)
            else p
            for p in op.parameters
        )
        body = op.body_schema
        if body is not None and _has_invalid(body, seen=seen):
            body = _clean(body, source, f"{op.name}: request body")
        if params != op.parameters or body is not op.body_schema:
            op = dataclasses.replace(op, parameters=params, body_schema=body)
        out.append(op)
    return out


def _has_invalid(
    schema: Any, depth: int = 0, seen: dict[int, tuple[Any, int]] | None = None
) -> bool:
    """Whether ``schema`` holds an invalid pattern within 64 levels of the operation's
    schema. ``seen``: the schemas found clean, with the depth they were walked from; one
    met again as deep or deeper is clean again (its walk would see no more of it)."""
    if depth > 64:
        return False
    if isinstance(schema, list):
        return any(_has_invalid(s, depth + 1, seen) for s in schema)
    if not (type(schema) is dict or isinstance(schema, Mapping)):
        return False
    if seen is not None:
        hit = seen.get(id(schema))
        if hit is not None and hit[0] is schema and hit[1] <= depth:
            return False
    found = _invalid_here(schema, depth, seen)
    if seen is not None and not found:
        seen[id(schema)] = (schema, depth)
    return found


def _invalid_here(
    schema: Mapping[str, Any], depth: int, seen: dict[int, tuple[Any, int]] | None
) -> bool:
    for key, value in schema.items():
        if key == "pattern" and isinstance(value, str) and not is_valid(value):
            return True
        if (
            key == "patternProperties"
            and isinstance(value, Mapping)
            and any(isinstance(k, str) and not is_valid(k) for k in value)
        ):
            return True
        if (
            key not in _DATA_KEYS
            and isinstance(value, (dict, list, Mapping))
            and _has_invalid(value, depth + 1, seen)
        ):
            return True
    return False


def _reason(source: str) -> str:
    try:
        compile_pattern(source)
    except InvalidPattern as exc:
        return str(exc)
    return ""


def _clean(schema: Any, source: str, where: str, depth: int = 0) -> Any:
    if depth > 64:
        return schema
    if isinstance(schema, list):
        return [_clean(s, source, where, depth + 1) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "pattern" and isinstance(value, str) and not is_valid(value):
            _warn(source, where, value)
            continue
        if key == "patternProperties" and isinstance(value, Mapping):
            kept = {}
            for k, v in value.items():
                if isinstance(k, str) and not is_valid(k):
                    _warn(source, where, k)
                else:
                    kept[k] = _clean(v, source, where, depth + 1)
            out[key] = kept
            continue
        out[key] = value if key in _DATA_KEYS else _clean(value, source, where, depth + 1)
    return out


def _warn(source: str, where: str, pattern: str) -> None:
    warnings.warn(
        f"{source}: {where}: pattern {pattern!r} is not a regular expression "
        f"({_reason(pattern)}); it is not checked",
        InvalidPatternWarning,
        stacklevel=2,
    )

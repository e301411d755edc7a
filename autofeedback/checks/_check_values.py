"""E4: do the values match the documented types (E4.1) and constraints (E4.2)?

Values taken from a URL, header or form body arrive as text; they are deserialized per
the parameter's schema and OpenAPI style first (``?limit=10`` is an integer 10,
``?ids=1,2`` an array), so only a value that cannot be read as the documented type is
reported.

Compositions are judged the way their authors mean them: ``oneOf`` accepts a value that
fits any branch (real specs' branches overlap, and a value fitting two is not the
model's mistake), and a value that fits none is reported against the branch it was
meant for (the one its ``discriminator`` names, else the one it misses least), named in
the message.
"""

from __future__ import annotations

import functools
import json
import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from autofeedback._specs._functions import WHOLE_OBJECT_KEYWORDS
from autofeedback.checks import _formats
from autofeedback.checks._branches import branch_errors, misfit
from autofeedback.checks._formats import ASSERTED
from autofeedback.checks._quick import fits
from autofeedback.core._findings import Finding
from autofeedback.core._model import Operation, Parameter
from autofeedback.core._patterns import KEYWORDS as _PATTERN_KEYWORDS
from autofeedback.core._patterns import PatternBudget, is_bounded, matches
from autofeedback.core._resolve import Arg

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = [
    "NOT_CHECKED",
    "accepts",
    "check_body",
    "check_value",
    "composed_body",
    "deserialize",
    "not_checked",
]

#: What the warning for a value left undecided by the bounded matcher says.
NOT_CHECKED = "not checked against the documented pattern"

_INT = re.compile(r"[+-]?\d{1,30}")


@functools.cache
def _validator_class() -> Any:
    """jsonschema's draft 2020-12 validator with ``oneOf`` checked as ``anyOf`` (see the
    module docstring) and the patterns on the linear-time engine
    (:mod:`autofeedback.core._patterns`), never Python's backtracking ``re``. Made on first
    use: a call that passes the compiled fast path (:func:`accepts`) needs no
    python-jsonschema, whose import is most of a short audit's start-up."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    return extend(  # type: ignore[no-untyped-call]
        Draft202012Validator,
        {"oneOf": Draft202012Validator.VALIDATORS["anyOf"], **_PATTERN_KEYWORDS},
    )


#: What validating against a schema the spec got wrong raises besides jsonschema's own
#: errors (:func:`_spec_faults`): what its keywords raise on values of the wrong JSON type
#: (``properties: []``, ``items: 5``: AttributeError) or out of float range
#: (``minimum: 1e400``: OverflowError). The spec's problem, not the request's: such a
#: check reports nothing.
_FAULTS: tuple[type[Exception], ...] = (
    RecursionError,
    ValueError,
    TypeError,
    AttributeError,
    KeyError,
    IndexError,
    ArithmeticError,
)


@functools.cache
def _spec_faults() -> tuple[type[Exception], ...]:
    """:data:`_FAULTS` and jsonschema's ``SchemaError`` and ``UnknownType`` (evaluated in
    an ``except`` clause only once something was raised)."""
    from jsonschema.exceptions import SchemaError, UnknownType

    return (SchemaError, UnknownType, *_FAULTS)


_validators: dict[int, tuple[Any, Any]] = {}
_lock = threading.Lock()
_MAX_PER_PARAM = 3


def _types(schema: Mapping[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


def deserialize(
    text: Any, schema: Mapping[str, Any], param: Parameter | None = None, depth: int = 0
) -> Any:
    """Read a URL/header value as the schema's type; leave it as it is when it cannot be.
    A schema typed only through ``allOf``/``oneOf``/``anyOf`` reads it as the first
    branch that can.

    >>> deserialize("10", {"type": "integer"})
    10
    >>> deserialize("false", {"oneOf": [{"type": "boolean"}]})
    False
    >>> deserialize("a,b", {"type": "array", "items": {"type": "string"}})
    ['a', 'b']
    >>> deserialize('{"id": "0"}', {"type": "object"})
    {'id': '0'}
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
        if t == "object" and text.lstrip()[:1] == "{":
            # an object sent as JSON text: a multipart part's default (OpenAPI 3), a
            # parameter documented with ``content: application/json``
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict):
                return value
        if t == "string":
            return text
    if depth < 8:  # a type given only through a composition: {oneOf: [{$ref: ...boolean}]}
        for key in ("allOf", "oneOf", "anyOf"):
            branches = schema.get(key)
            for branch in branches if isinstance(branches, list) else ():
                if isinstance(branch, Mapping):
                    value = deserialize(text, branch, param, depth + 1)
                    if value is not text:
                        return value
    return text


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _as_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if value is None or isinstance(value, str) else str(value)


def _per_object(store: dict[int, tuple[Any, Any]], obj: Any, build: Callable[[Any], Any]) -> Any:
    """``build(obj)``, made once per live object: keyed by ``id`` and checked by identity
    (an id is reused once its object is gone); the store is emptied past 50,000 entries."""
    key = id(obj)
    with _lock:
        hit = store.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
    value = build(obj)
    with _lock:
        if len(store) > 50_000:
            store.clear()
        store[key] = (obj, value)
    return value


def _validator(schema: Mapping[str, Any]) -> Any:
    return _per_object(
        _validators, schema, lambda s: _validator_class()(s, format_checker=_formats.FORMATS)
    )


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


def check_value(
    op: Operation, arg: Arg, param: Parameter, budget: PatternBudget | None = None
) -> Iterator[Finding]:
    """Type errors first (E4.1), then constraint violations (E4.2), at most three per
    parameter: the model needs the first problem, not a wall of them. ``budget``: the
    call's time for patterns RE2 cannot run (one of its own when not given); a pattern
    left undecided is a warning that says the value was not checked against it."""
    schema = param.schema
    if not isinstance(schema, Mapping) or not schema:
        return
    value = arg.value
    # a path/query/header value travels as text whatever the model wrote (500 and "500"
    # reach the server alike), so judge the text as the server will read it
    if param.location in ("path", "query", "header", "cookie") and _scalar(value):
        value = deserialize(_as_text(value), schema, param)
    elif arg.raw or (param.location == "body" and _form(op) and isinstance(value, str)):
        value = deserialize(value, schema, param)
    elif isinstance(value, str) and _comma_list(schema, param):
        # documented as an array and described as "a comma-separated list": the text
        # form the description itself asks for (Spotify's type="album,track")
        value = deserialize(value, schema)
    budget = budget or PatternBudget.current() or PatternBudget()
    if _value_accepted(schema, value, budget):
        return  # the compiled validator found nothing: the detailed one would not either
    misses = budget.misses
    try:
        with budget:
            found = [branch_errors(e) for e in _validator(schema).iter_errors(value)]
    except _spec_faults():
        return  # a schema the spec got wrong is the spec's problem, not the request's
    errors = sorted(
        (pair for group in found for pair in group),
        key=lambda pair: (pair[0].validator != "type", len(pair[0].absolute_path)),
    )
    doc = param.description.strip()
    for err, branch in errors[:_MAX_PER_PARAM]:
        yield _finding(op, arg, err, doc, branch)
    if budget.misses > misses and not errors:
        # the search just made, this value's own (the budget's record may be full)
        yield _not_checked(op, arg, budget.last[0] if budget.last else None, doc)


def not_checked(finding: Finding) -> bool:
    """Whether ``finding`` says a value was left unchecked against a pattern that the
    bounded matcher could not decide in time (a warning, never an error)."""
    return finding.severity == "warning" and NOT_CHECKED in finding.message


def _not_checked(op: Operation, arg: Arg, pattern: str | None, doc: str) -> Finding:
    """The warning for a value whose ``pattern`` the bounded matcher could not decide:
    it is neither blamed nor reported clean."""
    return Finding(
        "E4.2",
        (arg.location, arg.name),
        arg.value,
        expected={"pattern": pattern},
        operation=op.name,
        doc=doc,
        severity="warning",
        message=f"{arg.name}: {NOT_CHECKED} "
        f"{_short(pattern, 40)}: it needs a backtracking matcher (checked with a bounded "
        "matcher), which ran out of time on this value",
    )


_COMMA_LIST = re.compile(r"comma[- ]?separated|separated by commas", re.IGNORECASE)


def _comma_list(schema: Mapping[str, Any], param: Parameter) -> bool:
    """An array of scalars whose description says its values are comma-separated."""
    if "array" not in _types(schema) or not _COMMA_LIST.search(param.description or ""):
        return False
    items = schema.get("items", {})  # no items schema: any item, so text ones too
    return isinstance(items, Mapping) and not ({"object", "array"} & set(_types(items)))


def _form(op: Operation) -> bool:
    media = (op.body_media or "").lower()
    return media.startswith(("application/x-www-form-urlencoded", "multipart/form-data"))


def _finding(
    op: Operation,
    arg: Arg,
    err: ValidationError,
    doc: str,
    branch: str = "",
    inside: list[str] | None = None,
) -> Finding:
    """The finding of ``err`` in ``arg``'s value (named and located by ``arg``);
    ``inside``: where in the value the error is, when not ``err.absolute_path``."""
    sub = [str(p) for p in err.absolute_path] if inside is None else inside
    where = (arg.location, arg.name, *sub)
    got = err.instance
    name = ".".join([arg.name, *sub])
    if branch:
        name = f"{name} (as {branch})"
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
    elif kind == "format":
        message = f"{name} must be a valid {expected}{described}; got {_short(got)}"
    else:
        message = f"{name}: {_short(got)} breaks the documented {kind} {_short(expected, 40)}"
        if kind == "pattern" and is_bounded(expected):
            message += " (pattern checked with a bounded matcher)"
    return Finding(
        "E4.2",
        where,
        got,
        expected={kind: expected} if not isinstance(expected, dict) else expected,
        operation=op.name,
        doc=doc,
        message=message,
    )


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def composed_body(op: Operation) -> bool:
    """Whether the body's schema chooses between shapes (``oneOf``/``anyOf``, at the top
    or in an ``allOf`` part): then its fields are checked together, against the branch
    the body was meant for, by :func:`check_body`."""
    schema = op.body_schema
    if not isinstance(schema, Mapping):
        return False
    parts = [schema, *(p for p in schema.get("allOf") or [] if isinstance(p, Mapping))]
    return any(isinstance(p.get(k), list) for p in parts for k in ("oneOf", "anyOf"))


def check_body(
    op: Operation, matched: list[tuple[Arg, Parameter]], budget: PatternBudget | None = None
) -> Iterator[Finding]:
    """E4 for the documented body fields of a composed body, validated as one object."""
    schema = op.body_schema
    if not isinstance(schema, Mapping) or not matched:
        return
    form = _form(op)
    body: dict[str, Any] = {}
    for arg, param in matched:
        value = arg.value
        if arg.raw or (form and isinstance(value, str)):
            value = deserialize(value, param.schema, param)
        elif isinstance(value, str) and _comma_list(param.schema, param):
            value = deserialize(value, param.schema)  # as in check_value
        body[param.name] = value
    by_name = {param.name: (arg, param) for arg, param in matched}
    budget = budget or PatternBudget.current() or PatternBudget()
    misses = budget.misses
    try:
        with budget:
            found = [branch_errors(e) for e in _validator(schema).iter_errors(body)]
    except _spec_faults():
        return
    errors = sorted(
        (
            (err, branch)
            for group in found
            for err, branch in group
            # errors of the body itself (a missing or unknown field) are E3's
            if err.absolute_path and err.absolute_path[0] in by_name
        ),
        key=lambda pair: (pair[0].validator != "type", len(pair[0].absolute_path)),
    )
    per_field: dict[str, int] = {}
    for err, branch in errors:
        field = str(err.absolute_path[0])
        if per_field.get(field, 0) >= _MAX_PER_PARAM:
            continue
        per_field[field] = per_field.get(field, 0) + 1
        arg, param = by_name[field]
        inside = [str(p) for p in list(err.absolute_path)[1:]]
        yield _finding(op, arg, err, param.description.strip(), branch, inside)
    if budget.misses > misses and not errors:
        # the field whose value held the text the pattern was left undecided on (the
        # body is validated whole: the budget knows the text, not the field)
        pattern, (arg, param) = _undecided_field(budget, misses, matched, body)
        yield _not_checked(op, arg, pattern, param.description.strip())
    elif found and not errors:
        # the body fits none of its documented shapes, and no field says why: the shape
        # it is nearest misses only what E3 does not report (a field only that shape
        # requires); the body is never clean for it
        unsaid = next(
            (f for group in found for err, branch in group if (f := misfit(op, err, branch))),
            None,
        )
        if unsaid is not None:
            yield unsaid


def _undecided_field(
    budget: PatternBudget,
    misses: int,
    matched: list[tuple[Arg, Parameter]],
    body: Mapping[str, Any],
) -> tuple[str | None, tuple[Arg, Parameter]]:
    """The pattern of the first search left undecided since ``misses`` (those the budget
    recorded, then its last) whose text is (in) a field's value as validated (``body``),
    and that field; the last search's pattern and the first field when none is."""
    searches = list(zip(budget.undecided[misses:], budget.undecided_texts[misses:], strict=True))
    if budget.last is not None:
        searches.append(budget.last)
    for pattern, text in searches:
        for pair in matched:
            if _holds_text(body.get(pair[1].name), text):
                return pattern, pair
    return (budget.last[0] if budget.last else None), matched[0]


def _holds_text(value: Any, text: str, depth: int = 0) -> bool:
    """Whether ``text`` is ``value`` or a string in it (an item, a property's value, or a
    property's name, which ``propertyNames`` and ``patternProperties`` search)."""
    if isinstance(value, str):
        return value == text
    if depth > 32:
        return False
    if isinstance(value, Mapping):
        return text in value or any(_holds_text(v, text, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_text(v, text, depth + 1) for v in value)
    return False


_strict: dict[int, tuple[Any, Any]] = {}
#: per operation, its strict schema (or ``None``), made for its first call
_walked: dict[int, tuple[Any, Any]] = {}
_MISSING = object()


def _stored(store: dict[int, tuple[Any, Any]], obj: Any) -> Any:
    """What :func:`_per_object` keeps for ``obj``, or ``_MISSING`` (nothing is built)."""
    with _lock:
        hit = store.get(id(obj))
    return hit[1] if hit is not None and hit[0] is obj else _MISSING


def accepts(
    op: Operation, arguments: Mapping[str, Any], budget: PatternBudget | None = None
) -> bool:
    """Whether a call's ``arguments`` certainly draw no E3/E4 finding: one validation of
    the whole mapping against the documented parameters (every required one present, no
    other names, every value of its documented type and constraints). Only a ``True`` is
    trusted; ``False`` sends the call through the detailed checks, which say why.

    This is what makes a steady-state audit of well-formed tool calls as fast as a bare
    JSON-Schema validator: most calls in a log are right.
    """
    validator = _stored(_strict, op)
    if validator is _MISSING:
        if _stored(_walked, op) is _MISSING:
            # the first call of an operation: a plain schema is walked (2-5 µs) rather
            # than compiled (20-35 µs, repaid from the second call on; most tool lists
            # of a log are new with each record)
            schema = _per_object(_walked, op, _strict_schema)
            if schema is not None and fits(schema, arguments):
                return True
        # jsonschema-rs compiles in native code (the fastjsonschema this replaced
        # generated Python source whose compile() held the GIL, 0.6 ms a property)
        validator = _per_object(_strict, op, _strict_validator)
    if validator is None:
        return False
    budget = budget or PatternBudget.current() or PatternBudget()
    misses = budget.misses
    try:
        with budget:
            valid = bool(validator.is_valid(arguments))
    except _spec_faults():
        return False
    # a pattern the bounded matcher could not decide: not "clean", the detailed checks
    # say it was not checked
    return valid and budget.misses == misses


#: Keywords jsonschema-rs checks exactly as the detailed path does. A schema with any
#: other keyword (2020-12's prefixItems, $dynamicRef, oneOf, which the detailed path reads
#: as anyOf...) is left to jsonschema, since a compiled validator that read a keyword
#: otherwise could accept what the checks would flag.
_COMPILABLE = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "anyOf",
        "allOf",
        "not",
        "format",
        "description",
        "title",
        "example",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
    }
)


def _compilable(schema: Any, depth: int = 0) -> bool:
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping) or depth > 24:
        return False
    for key, value in schema.items():
        if key.startswith("x-"):
            continue
        if key not in _COMPILABLE:
            return False
        if key == "multipleOf" and (isinstance(value, bool) or not isinstance(value, int)):
            # 0.3 is no multiple of 0.1 for jsonschema (0.3 / 0.1 = 2.9999999999999996),
            # it is for jsonschema-rs: a fraction divisor is left to jsonschema
            return False
        if key == "properties":
            if not isinstance(value, Mapping) or not all(
                _compilable(v, depth + 1) for v in value.values()
            ):
                return False
        elif key in ("items", "additionalProperties", "not"):
            if not _compilable(value, depth + 1):
                return False
        elif key in ("anyOf", "allOf") and (
            not isinstance(value, list) or not all(_compilable(v, depth + 1) for v in value)
        ):
            return False
    return True


#: The most values (objects, lists, scalars) a schema may hold to be compiled: a compiled
#: copy of a 100,000-value enum from one hostile log record is kept per operation. Real
#: tool schemas hold tens of values, big request bodies a few thousand; past this,
#: jsonschema (no compiled copy) validates.
_MAX_COMPILED_VALUES = 20_000


def _small(schema: Any) -> bool:
    """Whether ``schema`` holds at most :data:`_MAX_COMPILED_VALUES` values (walked
    without recursion; stops as soon as it is over)."""
    budget = _MAX_COMPILED_VALUES
    stack = [schema]
    while stack:
        value = stack.pop()
        budget -= 1
        if budget < 0:
            return False
        kind = type(value)
        if kind is str:
            continue  # most values: no ABC check for them
        if kind is dict or (kind is not list and isinstance(value, Mapping)):
            stack.extend(value.values())
        elif kind is list or isinstance(value, (list, tuple)):
            stack.extend(value)
    return True


def _format(name: str) -> Callable[[Any], bool]:
    # the detailed path's format checker, so both paths agree on every format
    light = _formats.light_check(name)
    if light is not None:
        return light  # no python-jsonschema for these
    return lambda value: _formats.FORMATS.conforms(value, name)


_asserted_formats: dict[str, Callable[[Any], bool]] = {}


def _asserted() -> dict[str, Callable[[Any], bool]]:
    """A new dict of the asserted formats' checkers (each compiled validator adds its
    patterns' formats to its own copy); the checkers are made once, not per operation."""
    if not _asserted_formats:
        _asserted_formats.update({name: _format(name) for name in ASSERTED})
    return dict(_asserted_formats)


#: the keywords that judge an object by its field names and their count alone (the
#: values are the fields' own checks')
_OBJECT_KEYWORDS = WHOLE_OBJECT_KEYWORDS


def object_keywords(schema: Any) -> Mapping[str, Any] | None:
    """The whole-object keywords of a body schema (its top level and ``allOf`` parts),
    as one schema; ``None`` when it has none.

    >>> object_keywords({"type": "object", "maxProperties": 2, "properties": {"a": {}}})
    {'maxProperties': 2}
    """
    if not isinstance(schema, Mapping):
        return None
    parts = [schema, *(p for p in schema.get("allOf") or () if isinstance(p, Mapping))]
    kept = [{k: p[k] for k in _OBJECT_KEYWORDS if k in p} for p in parts]
    kept = [k for k in kept if k]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else {"allOf": kept}


def _strict_schema(op: Operation) -> dict[str, Any] | None:
    names = [p.name for p in op.parameters]
    if len(set(names)) != len(names) or composed_body(op) or op.auth_parameters:
        return None  # the detailed checks only: names alone do not say where a value goes
    if object_keywords(op.body_schema) is not None:
        return None  # the body's fields judged as a whole, apart from the other arguments
    return {
        "type": "object",
        "properties": {p.name: dict(p.schema) for p in op.parameters},
        "required": [p.name for p in op.parameters if p.required],
        "additionalProperties": (
            dict(op.extra_arguments) if op.extra_arguments is not None else False
        ),
        **(op.whole_arguments or {}),
    }


def _strict_validator(op: Operation) -> Any:
    walked = _stored(_walked, op)  # made already where the first call was walked
    schema = walked if isinstance(walked, dict) else _strict_schema(op)
    if schema is None:
        return None
    if _compilable(schema) and _small(schema):
        import jsonschema_rs

        # the asserted formats by name, checked on first use: a format whose package is
        # missing is no checker's, and conforms() takes any value for it, as the
        # detailed path does
        formats = _asserted()
        # jsonschema-rs runs `pattern` on its own regex engines: each pattern becomes a
        # custom format checked by the linear-time engine the detailed path uses
        schema = _patterns_as_formats(schema, formats)
        try:
            compiled = jsonschema_rs.validator_for(
                schema, formats=formats, validate_formats=True, ignore_unknown_formats=True
            )
        except _spec_faults():  # jsonschema_rs.ValidationError is a ValueError
            pass
        else:
            return compiled
    try:
        return _validator_class()(schema, format_checker=_formats.FORMATS)
    except _spec_faults():
        return None


_value_validators: dict[int, tuple[Any, Any]] = {}


def _value_accepted(schema: Mapping[str, Any], value: Any, budget: PatternBudget) -> bool:
    """Whether one value certainly draws no E4 finding, by the compiled validator of its
    schema (as :func:`accepts` judges a whole call): the values of a call that failed
    the fast path skip python-jsonschema unless they are wrong themselves (a call missing
    one parameter made the audit import it, 0.2 s, and walk every other value). Only a
    ``True`` is trusted; a pattern left undecided is not one."""
    validator = _per_object(_value_validators, schema, _compiled_value_validator)
    if validator is None:
        return False
    misses = budget.misses
    try:
        with budget:
            valid = bool(validator.is_valid(value))
    except Exception:
        return False
    return valid and budget.misses == misses


def _compiled_value_validator(schema: Mapping[str, Any]) -> Any:
    """jsonschema-rs for ``schema`` when it reads every keyword as the detailed path
    does (:data:`_COMPILABLE`), else ``None``."""
    if not isinstance(schema, dict) or not _compilable(schema) or not _small(schema):
        return None
    import jsonschema_rs

    formats = _asserted()
    try:
        return jsonschema_rs.validator_for(
            _patterns_as_formats(schema, formats),
            formats=formats,
            validate_formats=True,
            ignore_unknown_formats=True,
        )
    except Exception:
        return None


def _pattern_format(source: str) -> Callable[[Any], bool]:
    # a search that decides nothing accepts, as the detailed path does
    return lambda value: matches(source, value) is not False


def _patterns_as_formats(schema: Any, formats: dict[str, Callable[[Any], bool]]) -> Any:
    """``schema`` with every ``pattern`` moved into an ``allOf`` part whose custom
    ``format`` (added to ``formats``) runs the pattern on :mod:`autofeedback.core._patterns`,
    and without the formats that are not asserted (``int32`` say: the detailed checks
    ignore it, a compiled validator must not assert a meaning of its own)."""
    if isinstance(schema, list):
        return [_patterns_as_formats(s, formats) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {k: _patterns_as_formats(v, formats) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not", "anyOf", "allOf"):
            out[key] = _patterns_as_formats(value, formats)
        elif key != "pattern":
            out[key] = value
    if "format" in out and not (isinstance(out["format"], str) and out["format"] in formats):
        del out["format"]  # a format that is not asserted, as in the detailed checks
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        name = f"autofeedback-pattern-{len(formats)}"
        formats[name] = _pattern_format(pattern)
        out["allOf"] = [*out.get("allOf", []), {"format": name}]
    return out

"""Values the sandbox makes up: bodies from a response schema, ids of a documented shape.

Every value is drawn from a :class:`random.Random` the caller seeds, so the same seed
and the same requests give the same answers, and it satisfies its schema:

* **patterns**: a string the pattern matches, from ``rstr`` (``rstr.Rstr(rng).xeger``),
  checked with the linear-time matcher of :mod:`autofeedback.core._patterns` and drawn again
  when a construct ``rstr`` only approximates (a lookahead) breaks it; a pattern that
  gives no match in a few draws falls back to the documented example, if it matches;
* **formats**: a fresh value of the format per draw (``uuid``, ``date-time``, ``date``,
  ``time``, ``email``, ``uri``, ``ipv4``, ``ipv6``, ``hostname``, ``byte``), not one
  sample repeated, so ids of ``format: uuid`` are distinct;
* **ids**: :func:`fresh_id` makes one from the id's own schema (its pattern, format or
  integer range), else in the shape of the documented example (``ORD-123456``);
* enums, ``const``, numeric bounds, ``multipleOf``, lengths and required fields as
  :func:`generate` says; a documented example is used where it satisfies its schema;
* **one value for several schemas**: :func:`agreeable` draws a value that every schema
  of a list allows (a record's ``role`` that the create answer documents as
  ``[member, none]`` and the detail as ``[owner, member, none]``), from :func:`meet`
  (the tighter of each bound, the enum values all list) and checked against each.

Why ``rstr`` and not Hypothesis (``benchmarks/sandbox_values.py``): a value is made
while a request waits, deterministically per seed. ``rstr`` takes a ``Random``;
Hypothesis's ``from_regex`` has no public way to draw one value from a given seed outside
a test (``.example()`` is random and warns), and as a one-example ``@seed``/``@given``
run per value it was 6-13 times slower, its first value starting the engine (1.6 s with
its import), the simplest values first (``evt_000000``). hypothesis-jsonschema 0.23.1
(the latest) fails on every object schema with Hypothesis 6.170 (``'many' object has no
attribute 'more'``), and jsf draws from the global ``random`` module, shared by every
thread. Bodies are therefore built here, and the property tests check
them against the documented schema with openapi-core.
"""

from __future__ import annotations

import base64
import re
import string
import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from random import Random
from typing import Any

import rstr
from jsonschema import Draft202012Validator
from jsonschema.validators import extend, validator_for

from autofeedback.core._patterns import KEYWORDS as PATTERN_KEYWORDS
from autofeedback.core._patterns import matches

__all__ = [
    "agreeable",
    "fits",
    "fresh_id",
    "from_pattern",
    "generate",
    "is_id_name",
    "meet",
    "merged",
    "without_marked",
]

_MAX_ITEMS = 20
_MAX_DEPTH = 8
_MAX_NODES = 2000
#: draws of a pattern before giving up on it (a lookahead rstr only approximates)
_PATTERN_TRIES = 8
#: longest string a pattern may give: ``{100000}`` would be 100 kB per value
_MAX_PATTERN_TEXT = 4096
_WORDS = ("alpha", "bravo", "cedar", "delta", "ember", "fjord", "grove", "harbor", "indigo")
# a description that states the one value a string takes, as Spotify's do
_STATED_VALUE = re.compile(r'^[^"`]*:\s*["`]([\w-]{1,64})["`]\.?\s*$')
_EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
_SPAN = 6 * 365 * 24 * 3600  # dates fall in 2020-2025

# the sandbox's own validation semantics: 2020-12, patterns in linear time
_Validator = extend(Draft202012Validator, PATTERN_KEYWORDS)  # type: ignore[no-untyped-call]
_FORMATS = Draft202012Validator.FORMAT_CHECKER


def without_marked(value: Any, schema: Any, flag: str = "writeOnly", _depth: int = 0) -> Any:
    """``value`` less the properties its (raw) ``schema`` marks ``flag``: a request's
    ``password`` (``writeOnly``) is kept by no record and shown by no answer.

    >>> without_marked({"a": 1, "pw": "x"}, {"properties": {"pw": {"writeOnly": True}}})
    {'a': 1}
    """
    if _depth > _MAX_DEPTH * 4 or not isinstance(schema, Mapping):
        return value
    if isinstance(value, list):
        item = schema.get("items")
        return [without_marked(v, item, flag, _depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    props: dict[str, Any] = {}
    for part in (schema, *(schema.get("allOf") or ()), *(schema.get("oneOf") or ())):
        if isinstance(part, Mapping) and isinstance(part.get("properties"), Mapping):
            for key, sub in part["properties"].items():
                props.setdefault(key, sub)
    for part in schema.get("anyOf") or ():
        if isinstance(part, Mapping) and isinstance(part.get("properties"), Mapping):
            for key, sub in part["properties"].items():
                props.setdefault(key, sub)
    out = {}
    for key, sub_value in value.items():
        sub = props.get(key)
        if isinstance(sub, Mapping) and sub.get(flag) is True:
            continue
        out[key] = without_marked(sub_value, sub, flag, _depth + 1)
    return out


def is_id_name(name: str) -> bool:
    """Whether a field named ``name`` holds an id: ``id``, ``movie_id``, ``bookId``."""
    return name.lower() in ("id", "uuid") or name.endswith(("_id", "Id"))


def fits(schema: Mapping[str, Any] | None, value: Any) -> bool:
    """Whether ``value`` is valid under a *sanitized* ``schema`` (formats checked).

    >>> fits({"type": "string", "format": "uuid"}, "123e4567-e89b-42d3-a456-426614174000")
    True
    >>> fits({"type": "string", "pattern": "^evt_"}, "abc")
    False
    """
    if not schema:
        return True
    try:
        return bool(_validator(schema).is_valid(value))
    except Exception:  # a schema jsonschema cannot read: nothing to hold the value to
        return True


# Validators by schema object: building one costs more than most checks it makes, and
# the sandbox asks about the same (cached, long-lived) sub-schemas on every answer.
# Each entry keeps its schema alive, so an id is never reused while it is cached.
_VALIDATORS: OrderedDict[int, tuple[Mapping[str, Any], Any]] = OrderedDict()
_VALIDATORS_MAX = 4096
_VALIDATORS_LOCK = threading.Lock()


def _validator(schema: Mapping[str, Any]) -> Any:
    key = id(schema)
    with _VALIDATORS_LOCK:
        hit = _VALIDATORS.get(key)
        if hit is not None and hit[0] is schema:
            _VALIDATORS.move_to_end(key)
            return hit[1]
    validator = _Validator(schema, format_checker=_FORMATS)
    with _VALIDATORS_LOCK:
        _VALIDATORS[key] = (schema, validator)
        while len(_VALIDATORS) > _VALIDATORS_MAX:
            _VALIDATORS.popitem(last=False)
    return validator


# -- formats and patterns -------------------------------------------------------------


def _format_value(fmt: str, rng: Random) -> str | None:
    """A fresh value of a string ``format``, or ``None`` for a format not known here."""
    if fmt == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if fmt in ("date-time", "date", "time"):
        moment = _EPOCH + timedelta(seconds=rng.randrange(_SPAN))
        if fmt == "date":
            return moment.date().isoformat()
        if fmt == "time":
            return moment.strftime("%H:%M:%SZ")
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if fmt in ("email", "idn-email"):
        return f"{rng.choice(_WORDS)}.{rng.randint(1, 9999)}@example.com"
    if fmt in ("uri", "url", "iri", "uri-reference", "iri-reference"):
        return f"https://example.com/{rng.choice(_WORDS)}/{rng.randint(1, 99999)}"
    if fmt in ("hostname", "idn-hostname"):
        return f"{rng.choice(_WORDS)}{rng.randint(1, 999)}.example.com"
    if fmt == "ipv4":
        return f"192.0.2.{rng.randint(1, 254)}"  # TEST-NET-1: never a real host
    if fmt == "ipv6":
        return f"2001:db8::{rng.randint(1, 0xFFFF):x}"  # the documentation prefix
    if fmt == "byte":
        return base64.b64encode(rng.randbytes(rng.randint(3, 12))).decode("ascii")
    return None


_NEGATED_CLASS = re.compile(r"\[\^((?:\\.|[^\]\\])(?:\\.|[^\]\\])*)\]")


@lru_cache(maxsize=1024)
def _positive(pattern: str) -> str:
    """``pattern`` with each ``[^...]`` spelled as the printable characters it allows:
    rstr draws from ``set`` order there, which differs between processes, and a seed
    must give the same value in every run."""

    def spell(m: re.Match[str]) -> str:
        try:
            allowed = [c for c in string.printable if re.fullmatch(m.group(0), c)]
        except re.error:
            return m.group(0)
        return "[" + "".join(re.escape(c) for c in allowed) + "]" if allowed else m.group(0)

    return _NEGATED_CLASS.sub(spell, pattern)


def from_pattern(pattern: str, rng: Random) -> str | None:
    """A string that ``pattern`` (a JSON Schema pattern: a search) matches, drawn from
    ``rng``; ``None`` when none turns up (a syntax Python cannot read, a lookahead).

    >>> from_pattern(r"^evt_[a-z0-9]{6}$", Random(0))
    'evt_0cq65z'
    """
    source = _positive(pattern)
    xeger = rstr.Rstr(rng)
    for _ in range(_PATTERN_TRIES):
        try:
            text = xeger.xeger(source)
        except Exception:  # rstr cannot read it (ECMA-only syntax such as \p{L})
            return None
        if len(text) <= _MAX_PATTERN_TEXT and matches(pattern, text) is not False:
            return text
    return None


def _shaped_like(template: Any, rng: Random) -> Any:
    """An id shaped like the example ``template``: ``ORD-123456`` -> ``ORD-804417``."""
    if isinstance(template, int):
        return rng.randint(100_000, 999_999)
    text = str(template)
    digits = sum(c.isdigit() for c in text)
    out = []
    for c in text:
        if c.isdigit():
            out.append(str(rng.randint(0, 9)))
        elif digits >= 4 or not c.isascii() or not c.isalpha():
            out.append(c)  # keep the prefix and separators of "ORD-123456"
        elif c.isupper():
            out.append(rng.choice(string.ascii_uppercase))
        else:
            out.append(rng.choice(string.ascii_lowercase))
    fresh = "".join(out)
    if fresh == text or not any(c.isalnum() for c in text):
        fresh = f"{text}-{rng.randint(1000, 9999)}"
    return fresh


def fresh_id(schema: Mapping[str, Any], rng: Random, *, example: Any = None) -> Any:
    """A new id valid under its *sanitized* ``schema``: from its pattern or format, an
    integer in its range, else shaped like ``example`` (``ORD-123456``), else 12 letters
    and digits. The caller checks it is not taken.

    >>> fresh_id({"type": "string", "format": "uuid"}, Random(0))
    'e3e70682-c209-4cac-a29f-6fbed82c07cd'
    >>> fresh_id({"type": "integer", "minimum": 1, "maximum": 9}, Random(0))
    7
    """
    kind = _type(schema)
    if kind in ("integer", "number"):
        return _gen_number(schema, "integer", rng, "id")
    if kind not in (None, "string"):
        return generate(schema, rng)
    if example is None:
        example = schema.get("example")
    if example is None and isinstance(schema.get("examples"), list) and schema["examples"]:
        example = schema["examples"][0]
    if isinstance(schema.get("pattern"), str):
        text = from_pattern(schema["pattern"], rng)
        if text is not None:
            return text
    fmt = schema.get("format")
    made = _format_value(fmt, rng) if isinstance(fmt, str) else None
    if made is not None:
        return made
    if isinstance(example, str | int) and not isinstance(example, bool):
        shaped = str(_shaped_like(example, rng))
        if fits(schema, shaped):
            return shaped
    text = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(12))
    return _fit_length(schema, text)


# -- bodies ---------------------------------------------------------------------------


def generate(
    schema: Mapping[str, Any],
    rng: Random,
    *,
    max_depth: int = _MAX_DEPTH,
    max_items: int = 3,
    max_nodes: int = _MAX_NODES,
) -> Any:
    """A value that conforms to a *sanitized* ``schema``, drawn from ``rng``.

    Enums and bounds are respected, formats and patterns give fresh values, ``id``
    fields get distinct ids, arrays hold up to ``max_items`` items (``minItems`` is
    honoured up to 20), objects below ``max_depth`` keep only required fields, and at
    most ``max_nodes`` values are made.

    >>> generate({"type": "object", "properties": {"n": {"type": "integer",
    ...     "minimum": 3, "maximum": 3}}, "required": ["n"]}, Random(0))
    {'n': 3}
    """
    budget = [max_nodes]
    return _gen(schema, rng, 0, max_depth, max_items, budget, "")


def _type(schema: Mapping[str, Any]) -> str | None:
    types = schema.get("type")
    kind = types[0] if isinstance(types, list) and types else types
    if isinstance(types, list) and kind == "null" and len(types) > 1:
        kind = types[1]
    return kind if isinstance(kind, str) else None


def merged(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``allOf`` parts folded in (properties and required joined)."""
    out: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema.get("allOf") or ():
        if not isinstance(part, Mapping):
            continue
        part = merged(part) if "allOf" in part else part
        for k, v in part.items():
            if k == "properties" and isinstance(v, Mapping):
                out["properties"] = {**out.get("properties", {}), **v}
            elif k == "required" and isinstance(v, list):
                out["required"] = list(dict.fromkeys([*out.get("required", []), *v]))
            else:
                out.setdefault(k, v)
    return out


_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")


def _types(schema: Mapping[str, Any]) -> list[str] | None:
    """The types ``schema`` allows, an integer being a number too; ``None``: any."""
    kind = schema.get("type")
    if isinstance(kind, str):
        kind = [kind]
    if not isinstance(kind, list):
        return None
    out = [k for k in kind if isinstance(k, str)]
    return [*out, "integer"] if "number" in out and "integer" not in out else out


def meet(schemas: list[Mapping[str, Any]], _depth: int = 0) -> dict[str, Any]:
    """A *sanitized* schema whose values the ``schemas`` all roughly allow: the types
    they share, the enum (or ``const``) values each lists, the tighter of each bound,
    every required name, the properties and items met in turn; otherwise the first
    schema's word. A place to draw from: patterns, formats and ``oneOf`` options are not
    joined, so a value drawn from it is checked against each schema (:func:`agreeable`).

    >>> meet([{"type": "string", "enum": ["member", "none"]},
    ...       {"type": "string", "enum": ["owner", "member", "none"]}])
    {'type': 'string', 'enum': ['member', 'none']}
    >>> meet([{"type": "integer", "minimum": 0}, {"type": "number", "maximum": 9}])
    {'type': 'integer', 'minimum': 0, 'maximum': 9}
    """
    parts = [merged(s) for s in schemas if isinstance(s, Mapping)]
    out: dict[str, Any] = {}
    types: list[str] | None = None
    props: dict[str, list[Mapping[str, Any]]] = {}
    items: list[Mapping[str, Any]] = []
    for part in parts:
        own = _types(part)
        if own is not None:
            types = own if types is None else [t for t in types if t in own]
        listed = [part["const"]] if "const" in part else part.get("enum")
        if isinstance(listed, list):
            # 1 == True in Python: a value is kept only with its own JSON type
            kept = out.get("enum", listed)
            out["enum"] = [v for v in kept if any(_same(v, w) for w in listed)]
        for key, value in part.items():
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if key in _LOWER and number:
                out[key] = max(out.get(key, value), value)
            elif key in _UPPER and number:
                out[key] = min(out.get(key, value), value)
            elif key == "required" and isinstance(value, list):
                out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
            elif key == "properties" and isinstance(value, Mapping):
                for name, sub in value.items():
                    if isinstance(sub, Mapping):
                        props.setdefault(name, []).append(sub)
            elif key == "items" and isinstance(value, Mapping):
                items.append(value)
            elif key not in ("type", "enum", "const"):
                out.setdefault(key, value)
    if types is not None:
        if "integer" in types and "number" in types:
            types.remove("number")  # only an integer is both
        first = [t for t in (_types(parts[0]) or []) if t in types] or types
        if first:
            out["type"] = first[0] if len(first) == 1 else first
        elif parts and "type" in parts[0]:
            out["type"] = parts[0]["type"]  # no type in common: no value will fit all
    if props:
        deep = _depth >= _MAX_DEPTH
        out["properties"] = {
            k: dict(v[0]) if deep or len(v) == 1 else meet(v, _depth + 1) for k, v in props.items()
        }
    if items:
        out["items"] = dict(items[0]) if len(items) == 1 else meet(items, _depth + 1)
    return {"type": out.pop("type"), **out} if "type" in out else out


def _same(a: Any, b: Any) -> bool:
    """``a == b`` as JSON sees it: ``1`` is ``1.0`` but not ``True``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    numbers = isinstance(a, int | float) and isinstance(b, int | float)
    return (numbers or type(a) is type(b)) and bool(a == b)


def agreeable(schemas: list[Mapping[str, Any]], rng: Random, *, tries: int = 3) -> tuple[bool, Any]:
    """``(True, value)``: a value every one of the *sanitized* ``schemas`` allows, drawn
    from ``rng``; ``(False, None)`` when none turns up (the schemas contradict each other:
    ``enum: [member, none]`` and ``enum: [owner]``, or a draw missed a narrow meeting).

    Never ``null``: where null is all the schemas share (``nullable`` beside an ``allOf``
    object, and a string or null), OpenAPI 3.0 readers such as openapi-core take
    ``nullable`` without a ``type`` beside it as not allowing null, so it is no value
    every reader allows.

    >>> agreeable([{"type": "string", "enum": ["member", "none"]},
    ...            {"type": "string", "enum": ["owner", "member"]}], Random(0))
    (True, 'member')
    >>> agreeable([{"const": "a"}, {"enum": ["b"]}], Random(0))
    (False, None)
    """
    subs = [s for s in schemas if isinstance(s, Mapping)]
    joint = meet(subs)
    if "enum" in joint:
        allowed = [v for v in joint["enum"] if v is not None and all(fits(s, v) for s in subs)]
        return (True, rng.choice(allowed)) if allowed else (False, None)
    for _ in range(tries):
        for schema in (joint, *subs):
            value = generate(schema, rng, max_nodes=400)
            if value is not None and all(fits(s, value) for s in subs):
                return True, value
    return False, None


def _gen(
    schema: Mapping[str, Any],
    rng: Random,
    depth: int,
    max_depth: int,
    max_items: int,
    budget: list[int],
    name: str,
) -> Any:
    budget[0] -= 1
    if budget[0] < -_MAX_NODES:
        return None  # far past the budget (a required, recursive, wide schema): stop here
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        # null only when nothing else is allowed: OpenAPI 3.0 readers (openapi-core) take
        # `nullable` beside an `enum` without null as not allowing it
        return rng.choice([v for v in schema["enum"] if v is not None] or schema["enum"])
    options = schema.get("oneOf")
    if isinstance(options, list) and options:
        options = _with_siblings(schema, "oneOf", options)
        return _one_of(options, rng, depth, max_depth, max_items, budget, name)
    options = schema.get("anyOf")
    if isinstance(options, list) and options and isinstance(options[0], Mapping):
        first = _with_siblings(schema, "anyOf", options[:1])[0]
        return _gen(first, rng, depth + 1, max_depth, max_items, budget, name)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        return _gen(merged(schema), rng, depth, max_depth, max_items, budget, name)
    kind = _type(schema)
    if kind is None:
        if "properties" in schema:
            kind = "object"
        elif "items" in schema:
            kind = "array"
        elif "example" in schema:
            return schema["example"]
        else:
            kind = "string"
    if "example" in schema and kind not in ("object", "array"):
        example = schema["example"]
        if is_id_name(name) and isinstance(example, str | int) and not isinstance(example, bool):
            return fresh_id(schema, rng, example=example)  # distinct ids of the documented shape
        if fits(schema, example):
            return example
    if kind == "null":
        return None
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        return _gen_number(schema, kind, rng, name)
    if kind == "string":
        if is_id_name(name) and (schema.get("pattern") or schema.get("format")):
            return fresh_id(schema, rng)
        return _gen_string(schema, rng, name)
    if kind == "array":
        return _gen_array(schema, rng, depth, max_depth, max_items, budget, name)
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    out: dict[str, Any] = {}
    for prop, sub in props.items():
        deep = depth >= max_depth or budget[0] <= 0
        if deep and (prop not in required or depth >= max_depth * 2):
            continue  # below the limit only what is required, so recursive schemas end
        if isinstance(sub, Mapping):
            out[prop] = _gen(sub, rng, depth + 1, max_depth, max_items, budget, prop)
    for prop in required - set(out):
        if isinstance(prop, str) and prop not in props:
            out[prop] = "string"  # required but undocumented: any value will do
    return out


def _gen_array(
    schema: Mapping[str, Any],
    rng: Random,
    depth: int,
    max_depth: int,
    max_items: int,
    budget: list[int],
    name: str,
) -> list[Any]:
    count = rng.randint(1, max_items)
    low = schema.get("minItems")
    if isinstance(low, int) and low > count:
        count = min(low, _MAX_ITEMS)
    high = schema.get("maxItems")
    if isinstance(high, int):
        count = min(count, high)
    if depth >= max_depth:
        count = min(low, _MAX_ITEMS) if isinstance(low, int) else 0
    if budget[0] <= 0:
        count = 0
    item = schema.get("items")
    if not isinstance(item, Mapping):
        item = {}
    out = [_gen(item, rng, depth + 1, max_depth, max_items, budget, name) for _ in range(count)]
    if schema.get("uniqueItems") is True:
        unique: list[Any] = []
        for value in out:
            if value not in unique:
                unique.append(value)
        out = unique if not isinstance(low, int) or len(unique) >= low else out
    return out


_ANNOTATIONS = frozenset({"description", "title", "example", "examples", "default"})


def _with_siblings(schema: Mapping[str, Any], key: str, options: list[Any]) -> list[Any]:
    """The options of ``oneOf``/``anyOf``, each joined with what ``schema`` says beside
    it (``{"type": "object", "properties": ..., "oneOf": [{"required": ["a"]}, ...]}``:
    a value must satisfy both)."""
    siblings = {k: v for k, v in schema.items() if k != key and k not in _ANNOTATIONS}
    if not siblings:
        return options
    return [
        merged({**siblings, "allOf": [option]}) if isinstance(option, Mapping) else option
        for option in options
    ]


def _one_of(
    options: list[Any],
    rng: Random,
    depth: int,
    max_depth: int,
    max_items: int,
    budget: list[int],
    name: str,
) -> Any:
    """A value valid under exactly one option, as ``oneOf`` asks: ``oneOf: [integer,
    number]`` needs a number with a fraction."""
    value: Any = None
    for option in options[:4]:
        if not isinstance(option, Mapping):
            continue
        value = _gen(option, rng, depth + 1, max_depth, max_items, budget, name)
        others = [o for o in options if o is not option and isinstance(o, Mapping)]
        if isinstance(value, dict):
            # oneOf: [{required: [a]}, {required: [b]}] means a or b, not both: leave out
            # what only the other options require
            own = set(merged(option).get("required") or ())
            for other in others:
                for key in merged(other).get("required") or ():
                    if key not in own:
                        value.pop(key, None)
        try:
            if not any(validator_for(o)(o).is_valid(value) for o in others):
                return value
        except Exception:  # a schema jsonschema cannot read: the value will have to do
            return value
    return value


def _gen_number(schema: Mapping[str, Any], kind: str, rng: Random, name: str) -> Any:
    low = schema.get("minimum")
    high = schema.get("maximum")
    step = 1 if kind == "integer" else 0.5
    if isinstance(schema.get("exclusiveMinimum"), int | float):
        low = schema["exclusiveMinimum"] + step
    if isinstance(schema.get("exclusiveMaximum"), int | float):
        high = schema["exclusiveMaximum"] - step
    is_id = is_id_name(name)
    default_high = 999_999 if is_id else 100
    lo = low if isinstance(low, int | float) else (1 if high is None or high >= 1 else high - 100)
    hi = high if isinstance(high, int | float) else max(lo, default_high if lo < 100 else lo * 2)
    if kind == "integer":
        lo_i, hi_i = int(-(-lo // 1)), int(hi // 1)
        value: float = rng.randint(lo_i, hi_i) if lo_i <= hi_i else lo_i
    else:
        value = round(rng.uniform(lo, hi), 2) if lo <= hi else lo
    multiple = schema.get("multipleOf")
    if isinstance(multiple, int | float) and multiple > 0:
        value = multiple * max(1, round(value / multiple))
        if isinstance(high, int | float) and value > high:
            value -= multiple  # rounding up past the maximum
    if kind == "integer":
        return int(value)
    return float(value)


def _gen_string(schema: Mapping[str, Any], rng: Random, name: str) -> str:
    fmt = schema.get("format")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        sample = from_pattern(pattern, rng)
        if sample is not None:
            return sample
    stated = _STATED_VALUE.match(str(schema.get("description", "")))
    made = _format_value(fmt, rng) if isinstance(fmt, str) else None
    if made is not None:
        text = made
    elif isinstance(schema.get("default"), str):
        text = schema["default"]
    elif stated is not None:
        text = stated.group(1)  # 'The object type: "playlist"' states the one value
    elif is_id_name(name):
        text = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(12))
    else:
        text = f"{rng.choice(_WORDS)} {rng.randint(1, 999)}"
    return _fit_length(schema, text)


def _fit_length(schema: Mapping[str, Any], text: str) -> str:
    min_len = schema.get("minLength")
    max_len = schema.get("maxLength")
    if isinstance(min_len, int) and len(text) < min_len:
        text += "x" * min(min_len - len(text), 10_000)
    if isinstance(max_len, int) and len(text) > max_len:
        text = text[: max(max_len, 0)]
    return text

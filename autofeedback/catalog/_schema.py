"""JSON Schemas as every consumer takes them: the sanitizer every exported or served
schema goes through, sample values for a schema, and a catalog's operations as an OpenAI
``tools`` list.

Loaded specs carry what real specs carry: BFCL type names (``dict``, ``float``), OpenAPI
3.0 leftovers (``nullable``, boolean ``exclusiveMinimum``), unresolved ``$ref``, recursive
schemas, invalid regexes; :func:`sanitize_schema` gives a valid JSON Schema 2020-12.

Below both the catalog (:meth:`ApiCatalog.to_tools`) and the OpenAPI export
(``_openapi``), which import it; it imports neither.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import extend

from autofeedback.core._model import Operation, Parameter
from autofeedback.core._patterns import KEYWORDS as _PATTERN_KEYWORDS

__all__ = ["sample_value", "sanitize_schema", "to_tools", "tool_name"]


class Operations(Protocol):
    """What :func:`to_tools` reads: a catalog's operations."""

    @property
    def operations(self) -> Sequence[Operation]: ...


_MAX_SCHEMA_DEPTH = 24

# Type names other spec formats use for JSON Schema's types.
_TYPE_ALIASES: dict[str, str | None] = {
    "string": "string",
    "str": "string",
    "integer": "integer",
    "int": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "object": "object",
    "dict": "object",
    "null": "null",
    "any": None,
}

_SCHEMA_VALUED = ("items", "not", "contains", "propertyNames", "if", "then", "else")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_NON_NEGATIVE_INTS = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_NUMBERS = ("minimum", "maximum")
_STRINGS = ("format", "title", "description")
_ANY = ("default", "example", "const")

_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")
#: OpenAI caps a tool's description; longer ones are cut, never rejected.
_MAX_TOOL_DESCRIPTION = 1024


def tool_name(name: str) -> str:
    """``name`` as a tool name every provider accepts (``^[A-Za-z0-9_-]{1,64}$``).

    >>> tool_name("GET /pets/{petId}")
    'GET__pets__petId_'
    """
    return (_TOOL_NAME.sub("_", name) or "operation")[:64]


def to_tools(catalog: Operations) -> list[dict[str, Any]]:
    """The operations of ``catalog`` as an OpenAI ``tools`` list (Chat Completions form).

    A function's arguments become the tool's parameters as they are; an HTTP operation
    becomes one tool whose parameters are its path, query, header and cookie parameters
    and its JSON body's top-level fields (the spec's credentials left out). Names that
    providers would refuse are rewritten (:func:`tool_name`); the first operation wins
    a clash.

    >>> from autofeedback import ApiCatalog
    >>> catalog = ApiCatalog([Operation("ping", parameters=(
    ...     Parameter("host", "argument", {"type": "string"}, required=True),))])
    >>> to_tools(catalog)[0]["function"]["parameters"]["required"]
    ['host']
    """
    tools: list[dict[str, Any]] = []
    used: set[str] = set()
    for op in catalog.operations:
        name = tool_name(op.name)
        if name in used:
            continue
        used.add(name)
        if op.is_http:
            params = [p for p in op.parameters if p.location != "body"]
            body = op.body_schema
            if body is not None and not isinstance(body.get("properties"), Mapping):
                params.append(Parameter("body", "body", body, required=op.body_required))
            else:
                params.extend(p for p in op.parameters if p.location == "body")
            schema = _object_schema(params, closed=False)
        elif op.body_schema:
            schema = sanitize_schema(op.body_schema)
        else:
            args = [p for p in op.parameters if p.location in ("argument", "body")]
            schema = _object_schema(args, closed=False)
            if op.extra_arguments is not None:  # the arguments it takes beyond those listed
                schema["additionalProperties"] = sanitize_schema(op.extra_arguments) or True
            if op.whole_arguments:  # what it says of them as a whole
                schema.update(sanitize_schema(op.whole_arguments) or {})
        function: dict[str, Any] = {"name": name}
        if op.description:
            function["description"] = op.description[:_MAX_TOOL_DESCRIPTION]
        function["parameters"] = schema
        tools.append({"type": "function", "function": function})
    return tools


def _parameter(p: Parameter, location: str, required: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": p.name, "in": location, "required": required}
    if p.description:
        out["description"] = p.description
    out["schema"] = sanitize_schema(p.schema)
    style = p.style if p.style in _STYLES.get(location, ()) else None
    if style is not None:
        out["style"] = style
    if p.explode is not None:
        out["explode"] = bool(p.explode)
    return out


_STYLES: dict[str, tuple[str, ...]] = {
    "path": ("matrix", "label", "simple"),
    "query": ("form", "spaceDelimited", "pipeDelimited", "deepObject"),
    "header": ("simple",),
    "cookie": ("form",),
}


def _object_schema(params: Iterable[Parameter], closed: bool) -> dict[str, Any]:
    props: dict[str, Any] = {}
    required: list[str] = []
    for p in params:
        if p.name in props:
            continue
        props[p.name] = sanitize_schema(p.schema)
        if p.description and "description" not in props[p.name]:
            props[p.name]["description"] = p.description
        if p.required:
            required.append(p.name)
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    if closed:
        schema["additionalProperties"] = False
    return schema


def _json_safe(value: Any, depth: int = 0) -> bool:
    if depth > _MAX_SCHEMA_DEPTH:
        return False
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list | tuple):
        return all(_json_safe(v, depth + 1) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _json_safe(v, depth + 1) for k, v in value.items())
    return False


# -- schemas -----------------------------------------------------------------------


def sanitize_schema(schema: Any, _depth: int = 0, *, drop: str | None = None) -> dict[str, Any]:
    """A copy of ``schema`` that is valid JSON Schema 2020-12 as OpenAPI 3.1 reads it.

    Unknown keywords, unresolved ``$ref`` and anything below the depth limit (recursive
    schemas) become "any value". ``drop="writeOnly"`` leaves out the properties marked
    so (what a response never shows), ``drop="readOnly"`` those a request never sends.

    >>> sanitize_schema({"type": "dict", "properties": {"n": {"type": "float"}}})
    {'type': 'object', 'properties': {'n': {'type': 'number'}}}
    """
    if not isinstance(schema, Mapping) or _depth > _MAX_SCHEMA_DEPTH:
        return {}
    out: dict[str, Any] = {}
    types = _schema_types(schema.get("type"))
    if types and schema.get("nullable") is True and "null" not in types:
        types.append("null")
    if types:
        out["type"] = types[0] if len(types) == 1 else types
    for key in _STRINGS:
        if isinstance(schema.get(key), str):
            out[key] = schema[key]
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and _valid_regex(pattern):
        out["pattern"] = pattern
    for key in _ANY:
        if key in schema and _json_safe(schema[key]):
            out[key] = schema[key]
    examples = schema.get("examples")
    if isinstance(examples, list) and _json_safe(examples):
        out["examples"] = examples
    enum = schema.get("enum")
    if isinstance(enum, list | tuple) and enum and _json_safe(list(enum)):
        out["enum"] = list(enum)
    for key in _NON_NEGATIVE_INTS:
        value = schema.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out[key] = value
    for key in _NUMBERS:
        value = schema.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = value
    for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = schema.get(key)
        if value is True and bound in out:
            out[key] = out.pop(bound)  # OpenAPI 3.0's boolean form
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = value
    multiple = schema.get("multipleOf")
    if isinstance(multiple, int | float) and not isinstance(multiple, bool) and multiple > 0:
        out["multipleOf"] = multiple
    if isinstance(schema.get("uniqueItems"), bool):
        out["uniqueItems"] = schema["uniqueItems"]
    required = schema.get("required")
    if isinstance(required, list | tuple):
        names = list(dict.fromkeys(r for r in required if isinstance(r, str)))
        if names:
            out["required"] = names
    for key in _SCHEMA_VALUED:
        value = schema.get(key)
        if key == "items" and isinstance(value, list | tuple):
            out["prefixItems"] = [sanitize_schema(v, _depth + 1, drop=drop) for v in value]
        elif isinstance(value, Mapping):
            out[key] = sanitize_schema(value, _depth + 1, drop=drop)
    additional = schema.get("additionalProperties")
    if isinstance(additional, bool):
        out["additionalProperties"] = additional
    elif isinstance(additional, Mapping):
        out["additionalProperties"] = sanitize_schema(additional, _depth + 1, drop=drop)
    for key in _SCHEMA_MAPS:
        value = schema.get(key)
        if isinstance(value, Mapping):
            out[key] = {
                str(k): sanitize_schema(v, _depth + 1, drop=drop)
                for k, v in value.items()
                if (key != "patternProperties" or _valid_regex(str(k)))
                and not (drop and key == "properties" and _marked(v, drop))
            }
            if key == "properties" and len(out[key]) < len(value) and "required" in out:
                out["required"] = [r for r in out["required"] if r in out[key]]
                if not out["required"]:
                    del out["required"]
    for key in _SCHEMA_LISTS:
        value = schema.get(key)
        if isinstance(value, list | tuple) and value:
            out[key] = [sanitize_schema(v, _depth + 1, drop=drop) for v in value]
    _drop_nonconforming_values(out)
    return out


def _marked(schema: Any, flag: str) -> bool:
    return isinstance(schema, Mapping) and schema.get(flag) is True


_SafeValidator = extend(Draft202012Validator, _PATTERN_KEYWORDS)  # type: ignore[no-untyped-call]


def _drop_nonconforming_values(schema: dict[str, Any]) -> None:
    """Coerce or drop ``default``/``example``/``enum``... values the schema rejects
    (``"default": "20"`` on an integer): spec validators refuse such documents."""
    keys = ("default", "example", "examples", "enum", "const")
    if not any(k in schema for k in keys):
        return
    bare = {k: v for k, v in schema.items() if k not in keys}
    try:
        # a spec's own example against its own pattern: on the linear-time engine
        validator = _SafeValidator(bare)

        def fix(value: Any) -> tuple[bool, Any]:
            if validator.is_valid(value):
                return True, value
            coerced = _coerce(value, bare.get("type"))
            if coerced is not value and validator.is_valid(coerced):
                return True, coerced
            return False, None

        for key in ("default", "example", "const"):
            if key in schema:
                ok, fixed = fix(schema[key])
                if ok:
                    schema[key] = fixed
                else:
                    del schema[key]
        for key in ("enum", "examples"):
            if key in schema:
                kept = [fixed for ok, fixed in map(fix, schema[key]) if ok]
                if kept:
                    schema[key] = kept
                else:
                    del schema[key]
    except (SchemaError, RecursionError, re.error, TypeError, ValueError):
        for key in keys:
            schema.pop(key, None)


def _coerce(value: Any, types: Any) -> Any:
    """``"20"`` -> ``20`` and the like, for values a spec wrote as strings."""
    if not isinstance(value, str):
        return value
    kinds = types if isinstance(types, list) else [types]
    text = value.strip()
    try:
        if "integer" in kinds:
            return int(text)
        if "number" in kinds:
            return float(text)
    except ValueError:
        return value
    if "boolean" in kinds and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return value


def _schema_types(value: Any) -> list[str]:
    raw = value if isinstance(value, list | tuple) else [value]
    out: list[str] = []
    for t in raw:
        if not isinstance(t, str):
            continue
        mapped = _TYPE_ALIASES.get(t.strip().lower())
        if mapped is not None and mapped not in out:
            out.append(mapped)
    return out


def _valid_regex(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


# -- sample values -----------------------------------------------------------------

_FORMAT_SAMPLES: dict[str, str] = {
    "date": "2024-01-15",
    "date-time": "2024-01-15T12:00:00Z",
    "time": "12:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com/resource",
    "url": "https://example.com/resource",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "byte": "aGVsbG8=",
}


def sample_value(
    schema: Mapping[str, Any], *, seed: int = 0, max_depth: int = 6, _depth: int = 0
) -> Any:
    """A deterministic value that conforms to a *sanitized* ``schema`` (best effort:
    ``pattern`` and ``not`` are only honoured through a documented example).

    >>> sample_value({"type": "object", "properties": {"n": {"type": "integer",
    ...     "minimum": 3}}, "required": ["n"]})
    {'n': 3}
    """
    rng = random.Random(f"{seed}:{_depth}")
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "pattern" in schema or "not" in schema:
        for key in ("example", "default"):
            if key in schema:
                return schema[key]
        if isinstance(schema.get("examples"), list) and schema["examples"]:
            return schema["examples"][0]
    for key in ("oneOf", "anyOf"):
        if schema.get(key):
            return sample_value(schema[key][0], seed=seed, max_depth=max_depth, _depth=_depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            for k, v in part.items():
                if k == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **v}
                elif k == "required":
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *v]))
                else:
                    merged.setdefault(k, v)
        return sample_value(merged, seed=seed, max_depth=max_depth, _depth=_depth)
    types = schema.get("type")
    kind = types[0] if isinstance(types, list) else types
    if kind is None:
        if "properties" in schema:
            kind = "object"
        elif "items" in schema or "prefixItems" in schema:
            kind = "array"
        else:
            kind = "string"
    if kind == "null":
        return None
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return _sample_number(schema, kind, rng)
    if kind == "string":
        return _sample_string(schema)
    if kind == "array":
        return _sample_array(schema, seed, max_depth, _depth)
    return _sample_object(schema, seed, max_depth, _depth)


def _sample_number(schema: Mapping[str, Any], kind: str, rng: random.Random) -> int | float:
    low = schema.get("minimum")
    high = schema.get("maximum")
    if "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"] + (1 if kind == "integer" else 0.5)
    if "exclusiveMaximum" in schema:
        high = schema["exclusiveMaximum"] - (1 if kind == "integer" else 0.5)
    value: float = rng.randint(1, 10) if low is None else low
    if high is not None and value > high:
        value = high
    multiple = schema.get("multipleOf")
    if multiple:
        value = multiple * max(1, round(value / multiple))
    if kind == "integer":
        return int(value) if float(value).is_integer() else int(value) + 1
    return float(value) if low is not None or high is not None or multiple else value + 0.5


def _sample_string(schema: Mapping[str, Any]) -> str:
    fmt = schema.get("format")
    text = _FORMAT_SAMPLES.get(fmt, "") if isinstance(fmt, str) else ""
    if not text:
        for key in ("example", "default"):
            if isinstance(schema.get(key), str):
                text = schema[key]
                break
        else:
            text = "string"
    min_len = schema.get("minLength", 0)
    max_len = schema.get("maxLength")
    if len(text) < min_len:
        text = text + "x" * (min_len - len(text))
    if max_len is not None and len(text) > max_len:
        text = text[:max_len]
    return text


def _sample_array(schema: Mapping[str, Any], seed: int, max_depth: int, depth: int) -> list[Any]:
    prefix = schema.get("prefixItems")
    if prefix:
        return [sample_value(s, seed=seed, max_depth=max_depth, _depth=depth + 1) for s in prefix]
    count = max(1, schema.get("minItems", 1))
    if "maxItems" in schema:
        count = min(count, schema["maxItems"])
    if depth >= max_depth:
        count = schema.get("minItems", 0)
    item = schema.get("items", {})
    value = sample_value(item, seed=seed, max_depth=max_depth, _depth=depth + 1)
    if schema.get("uniqueItems") and count > 1:
        return [value] + [
            sample_value(item, seed=seed + i, max_depth=max_depth, _depth=depth + 1)
            for i in range(1, count)
        ]
    return [value] * count


def _sample_object(
    schema: Mapping[str, Any], seed: int, max_depth: int, depth: int
) -> dict[str, Any]:
    props: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    for name, sub in props.items():
        # below the depth limit only what is required, so recursive schemas end
        if depth < max_depth or name in required:
            if depth >= max_depth * 2:
                continue
            out[name] = sample_value(sub, seed=seed, max_depth=max_depth, _depth=depth + 1)
    for name in required:
        if name not in out and name not in props:
            out[name] = "string"  # required but undocumented: any value will do
    return out

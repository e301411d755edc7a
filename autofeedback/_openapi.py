"""Export any :class:`ApiCatalog` as an OpenAPI 3.1 document.

HTTP operations keep their path, method, parameters, JSON request body and responses.
Function-style operations (OpenAI tools, BFCL, API-Bank: ``method is None``) become
``POST /{name}`` whose required JSON object body holds their arguments, so that one
HTTP server (:mod:`autofeedback._sandbox`) and one validator (openapi-core) serve
every spec format.

Schemas are copied through a sanitizer, because loaded specs carry what real specs
carry: BFCL type names (``dict``, ``float``), OpenAPI 3.0 leftovers (``nullable``,
boolean ``exclusiveMinimum``), unresolved ``$ref``, recursive schemas, invalid regexes.
The result always passes openapi-core's spec check.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from os import PathLike
from typing import IO, Any
from urllib.parse import quote

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import extend

from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import AutoFeedbackError
from autofeedback._model import Operation, Parameter, Response
from autofeedback._patterns import KEYWORDS as _PATTERN_KEYWORDS

__all__ = ["function_path", "run_openapi_export", "to_openapi", "to_tools"]

_DEFAULT_SERVER = "http://127.0.0.1"
_TEMPLATE_VAR = re.compile(r"\{([^{}/]+)\}")
_STATUS = re.compile(r"^(?:[1-5](?:\d\d|XX)|default)$")
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


def function_path(name: str) -> str:
    """The route a function-style operation is served at: ``POST`` to this path.

    Every character outside RFC 3986's unreserved set is percent-encoded, so names
    with dots, slashes or spaces map to one path segment.

    >>> function_path("math.factorial")
    '/math.factorial'
    >>> function_path("get weather/now")
    '/get%20weather%2Fnow'
    """
    return "/" + quote(name, safe="")


def to_openapi(catalog: ApiCatalog) -> dict[str, Any]:
    """An OpenAPI 3.1 document describing every operation of ``catalog``.

    >>> catalog = ApiCatalog([Operation("ping", parameters=(
    ...     Parameter("host", "argument", {"type": "string"}, required=True),))])
    >>> doc = to_openapi(catalog)
    >>> doc["paths"]["/ping"]["post"]["requestBody"]["content"]["application/json"][
    ...     "schema"]["required"]
    ['host']
    """
    return _export(catalog).document


_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")
#: OpenAI caps a tool's description; longer ones are cut, never rejected.
_MAX_TOOL_DESCRIPTION = 1024


def tool_name(name: str) -> str:
    """``name`` as a tool name every provider accepts (``^[A-Za-z0-9_-]{1,64}$``).

    >>> tool_name("GET /pets/{petId}")
    'GET__pets__petId_'
    """
    return (_TOOL_NAME.sub("_", name) or "operation")[:64]


def to_tools(catalog: ApiCatalog) -> list[dict[str, Any]]:
    """The operations of ``catalog`` as an OpenAI ``tools`` list (Chat Completions form).

    A function's arguments become the tool's parameters as they are; an HTTP operation
    becomes one tool whose parameters are its path, query, header and cookie parameters
    and its JSON body's top-level fields (the spec's credentials left out). Names that
    providers would refuse are rewritten (:func:`tool_name`); the first operation wins
    a clash.

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
        function: dict[str, Any] = {"name": name}
        if op.description:
            function["description"] = op.description[:_MAX_TOOL_DESCRIPTION]
        function["parameters"] = schema
        tools.append({"type": "function", "function": function})
    return tools


def run_openapi_export(
    spec: str | PathLike[str], *, stdout: IO[str], stderr: IO[str], as_yaml: bool = False
) -> int:
    """Print the OpenAPI 3.1 export of any spec file (JSON, or YAML with ``as_yaml``).

    Returns 0, or 2 when the spec cannot be loaded.

    >>> run_openapi_export("specs/examples/bookshop.yaml", stdout=sys.stdout,
    ...                    stderr=sys.stderr)  # doctest: +SKIP
    """
    try:
        catalog = ApiCatalog.from_file(spec)
    except AutoFeedbackError as exc:
        stderr.write(f"error: {exc}\n")
        return 2
    document = to_openapi(catalog)
    if as_yaml:
        stdout.write(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    else:
        stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return 0


@dataclass(frozen=True)
class _Export:
    """The document plus the operation behind each ``(path, method)`` route."""

    document: dict[str, Any]
    routes: dict[tuple[str, str], Operation]


def _export(catalog: ApiCatalog) -> _Export:
    paths: dict[str, dict[str, Any]] = {}
    routes: dict[tuple[str, str], Operation] = {}
    used_ids: set[str] = set()
    for op in catalog.operations:
        if op.is_http:
            assert op.method is not None and op.path is not None
            path = _clean_path(op.path)
            method = op.method.lower()
            if method not in {"get", "put", "post", "delete", "options", "head", "patch", "trace"}:
                continue
            item = _http_operation(op, path)
        else:
            path = function_path(op.name)
            method = "post"
            item = _function_operation(op)
        if method in paths.get(path, {}):
            continue  # two operations on one route: the first wins, as in ApiCatalog
        item["operationId"] = _unique_id(op.name, used_ids)
        paths.setdefault(path, {})[method] = item
        routes[(path, method)] = op
    servers = [{"url": s} for s in catalog.servers if _is_server_url(s)]
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": f"autofeedback export of {catalog.source}", "version": "1.0"},
        "servers": servers or [{"url": _DEFAULT_SERVER}],
        "paths": paths,
    }
    return _Export(document, routes)


def _is_server_url(url: str) -> bool:
    return bool(url) and not any(c.isspace() for c in url)


def _unique_id(name: str, used: set[str]) -> str:
    candidate = name or "operation"
    n = 1
    while candidate in used:
        n += 1
        candidate = f"{name}_{n}"
    used.add(candidate)
    return candidate


def _clean_path(path: str) -> str:
    """A path template OpenAPI accepts: leading slash, no query string or fragment."""
    path = path.split("?", 1)[0].split("#", 1)[0].strip() or "/"
    if not path.startswith("/"):
        path = "/" + path
    return path


def _http_operation(op: Operation, path: str) -> dict[str, Any]:
    template_vars = _TEMPLATE_VAR.findall(path)
    params: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    body_params: list[Parameter] = []
    for p in op.parameters:
        if p.location in ("body", "argument"):
            body_params.append(p)
            continue
        location: str = p.location
        required = p.required
        if location == "path" and p.name not in template_vars:
            # a path parameter the template does not hold cannot travel in the path
            location, required = "query", False
        if (p.name, location) in seen:
            continue
        seen.add((p.name, location))
        params.append(_parameter(p, location, required or location == "path"))
    for var in template_vars:
        if (var, "path") not in seen:
            seen.add((var, "path"))
            params.append(
                {"name": var, "in": "path", "required": True, "schema": {"type": "string"}}
            )
    out: dict[str, Any] = {}
    if op.description:
        out["description"] = op.description
    if op.tags:
        out["tags"] = [str(t) for t in op.tags]
    if params:
        out["parameters"] = params
    body_schema: Mapping[str, Any] | None = op.body_schema
    if body_schema is None and body_params:
        body_schema = _object_schema(body_params, closed=False)
    if body_schema is not None:
        out["requestBody"] = {
            "required": bool(op.body_required),
            "content": {"application/json": {"schema": sanitize_schema(body_schema)}},
        }
    out["responses"] = _responses(op.responses)
    return out


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


def _function_operation(op: Operation) -> dict[str, Any]:
    args = [p for p in op.parameters if p.location in ("argument", "body")]
    out: dict[str, Any] = {}
    if op.description:
        out["description"] = op.description
    if op.tags:
        out["tags"] = [str(t) for t in op.tags]
    # a function takes exactly its documented arguments: unknown ones are errors
    schema = sanitize_schema(op.body_schema) if op.body_schema else _object_schema(args, True)
    out["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
    out["responses"] = _responses(op.responses)
    return out


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


def _responses(responses: Iterable[Response]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in responses:
        status = str(r.status).strip().upper()
        status = "default" if status == "DEFAULT" else status
        if not _STATUS.match(status) or status in out:
            continue
        item: dict[str, Any] = {"description": r.description or ""}
        if r.schema is not None or r.example is not None:
            media: dict[str, Any] = {"schema": sanitize_schema(r.schema or {})}
            if r.example is not None and _json_safe(r.example):
                media["example"] = r.example
            item["content"] = {"application/json": media}
        out[status] = item
    if not any(s.startswith("2") for s in out):
        out["200"] = {"description": "Success"}
    return out


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

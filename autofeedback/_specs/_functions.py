"""Function-style specs: OpenAI tools (``[{"type": "function", "function": {...}}]``),
bare function lists, one function, MCP tools (``{"name", "inputSchema",
"outputSchema"}``), Anthropic tools (``{"name", "input_schema"}``) and BFCL functions,
whose type names (``dict``, ``float``, ``tuple``, ``any``) are mapped to JSON Schema.
API-Bank docs are read by :mod:`autofeedback._specs._apibank`.

What a function returns may sit beside its parameters, as a JSON Schema under the
first of :data:`OUTPUT_KEYS` that holds an object (MCP's ``outputSchema``; ``response``
as BFCL writes it; ``output_schema``, ``returns``); it becomes the operation's ``"200"``
response."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autofeedback._specs._apibank import load_api_bank
from autofeedback._specs._common import Fault, join, name_of, required_names, text
from autofeedback._specs._dialects import draft_of, upgrade
from autofeedback._specs._refs import Resolver
from autofeedback.core._exceptions import SpecError
from autofeedback.core._model import Operation, Parameter, Response

__all__ = ["OUTPUT_KEYS", "WHOLE_OBJECT_KEYWORDS", "load_callables"]

#: Keys beside ``parameters`` that may hold the function's output schema, first wins.
OUTPUT_KEYS = ("outputSchema", "output_schema", "response", "returns")
#: The keywords that judge an object by its field names and their count alone.
WHOLE_OBJECT_KEYWORDS = ("maxProperties", "minProperties", "dependentRequired", "propertyNames")
#: What a function's parameters schema says of its arguments together, beyond each one's
#: own schema: the whole-object keywords and the compositions at its top (``oneOf``
#: branches that each require another argument, ``not``, ``if``/``then``).
_WHOLE_ARGUMENT_KEYWORDS = (
    *WHOLE_OBJECT_KEYWORDS, "oneOf", "anyOf", "allOf", "not", "if", "then", "else",
    "dependentSchemas",
)  # fmt: skip
#: Keys that hold a function's parameter schema (OpenAI, MCP, Anthropic), first wins.
_PARAMETER_KEYS = ("parameters", "inputSchema", "input_schema")


def load_callables(
    items: list[Any],
    source: str,
    *,
    prefix: str,
    single: bool = False,
    faults: list[Fault] | None = None,
) -> list[Operation]:
    """The operations of a list of functions (or API-Bank docs); a ``$ref`` in their
    schemas that points nowhere is added to ``faults`` and to the operation's
    ``unread``."""
    faults = [] if faults is None else faults
    ops: list[Operation] = []
    for i, item in enumerate(items):
        where = prefix if single else join(prefix, f"[{i}]")
        if not isinstance(item, dict):
            raise SpecError(
                f"expected a function or API description, got {type(item).__name__}",
                source=source,
                where=where,
            )
        if item.get("type") == "function" and isinstance(item.get("function"), dict):
            ops.append(_load_function(item["function"], source, join(where, "function"), faults))
        elif "input_parameters" in item or "output_parameters" in item:
            ops.append(load_api_bank(item, source, where))
        elif (
            "parameters" in item
            or "inputSchema" in item  # an MCP tool
            or "input_schema" in item  # an Anthropic tool
            or ("name" in item and ("description" in item or len(item) == 1))
        ):
            ops.append(_load_function(item, source, where, faults))
        else:
            raise SpecError(
                "not a recognised spec: expected an OpenAPI/Swagger document, an OpenAI "
                "tool or function ({name, description, parameters}) or an API-Bank doc "
                "({name, description, input_parameters})",
                source=source,
                where=where,
            )
    return ops


def _load_function(
    fn: Mapping[str, Any], source: str, where: str, faults: list[Fault]
) -> Operation:
    name = name_of(fn, source, where, "function")
    # OpenAI's `parameters`, MCP's `inputSchema`, Anthropic's `input_schema`: the first
    # there (a tool whose schema sits under a key not read would take no parameters, and
    # every argument sent to it would pass unchecked)
    key = next((k for k in _PARAMETER_KEYS if k in fn), "parameters")
    params_schema = fn.get(key)
    if params_schema is None:
        params_schema = {}
    if not isinstance(params_schema, dict):
        raise SpecError(
            f"'{key}' must be a JSON Schema object",
            source=source,
            where=join(where, key),
        )
    resolver: Resolver | None = None
    if plain(params_schema):
        resolved = _bfcl_schema(params_schema)  # what the three steps below give it
    else:
        # the draft its $schema names (2020-12 by default), in the 2020-12 terms checks speak
        params_schema = upgrade(params_schema, draft_of(params_schema))
        # Pydantic-made tools carry $defs and local refs: resolve them against the schema.
        resolver = Resolver(params_schema, source, None)
        resolved = resolver.schema(params_schema, join(where, key), fold_nullable=False)
        resolved = _bfcl_schema(resolved)
    properties = resolved.get("properties") or {}
    if not isinstance(properties, dict):
        raise SpecError(
            "'properties' must be an object",
            source=source,
            where=join(where, f"{key}.properties"),
        )
    required = required_names(resolved)
    # arguments the schema takes beyond those it lists, said outright (absent, the
    # listed ones are the function's: an unlisted one is a wrong name, E3)
    more = resolved.get("additionalProperties")
    extra = {} if more is True else dict(more) if isinstance(more, dict) else None
    # what no one argument's check judges: the arguments' count, the ones one brings with
    # it, what their names may be (checked on the call's whole arguments)
    whole = {k: resolved[k] for k in _WHOLE_ARGUMENT_KEYWORDS if k in resolved} or None
    parameters: list[Parameter] = []
    for pname, pschema in properties.items():
        # a boolean schema: true allows any value, false none
        pschema = dict(pschema) if isinstance(pschema, dict) else _boolean_schema(pschema)
        optional = pschema.pop("optional", None) is True
        parameters.append(
            Parameter(
                name=str(pname),
                location="argument",
                schema=pschema,
                required=pname in required and not optional,
                description=text(pschema.get("description")),
            )
        )
    hints = fn.get("annotations")
    hints = hints if isinstance(hints, Mapping) else {}
    responses, output_resolver = _output(fn, source, where)
    unread: list[str] = []
    for r in (resolver, output_resolver):
        if r is not None:
            unread.extend(r.unread)
            for why, places in r.dangling.items():
                more = f" (and at {len(places) - 1} more places)" if len(places) > 1 else ""
                faults.append((places[0], f"{why}{more}; that schema is not checked"))
    return Operation(
        name=name,
        description=text(fn.get("description")),
        parameters=tuple(parameters),
        responses=responses,
        source=source,
        read_only=_hint(hints, "readOnlyHint"),
        destructive=_hint(hints, "destructiveHint"),
        unread=tuple(dict.fromkeys(unread)),
        extra_arguments=extra,
        whole_arguments=whole,
    )


#: What makes :func:`upgrade` or a :class:`Resolver` do more than copy a schema.
_NOT_PLAIN = frozenset({"$ref", "$dynamicRef", "$id", "$schema", "additionalItems", "dependencies"})


def plain(schema: Any) -> bool:
    """Whether ``schema`` holds nothing :func:`upgrade` rewrites and nothing a
    :class:`Resolver` resolves (no ``$ref``, ``$id`` or ``$schema``, no tuple ``items``,
    ``additionalItems``, ``dependencies`` nor boolean bound, anywhere): both would only
    copy it, so :func:`_bfcl_schema`, which copies it too, gives the loaded schema alone.
    Most tool schemas are plain, and the two copies were a third of loading one (a log
    whose every record brings its own tool list loads one per record). Looked for in
    every mapping of the value, property names and enum values included: a false "not
    plain" only costs the two copies.

    >>> plain({"type": "object", "properties": {"q": {"type": "string"}}})
    True
    >>> plain({"properties": {"a": {"$ref": "#/$defs/A"}}}), plain({"items": [{}]})
    (False, False)
    """
    stack = [schema]
    while stack:
        value = stack.pop()
        if type(value) is dict:
            if not _NOT_PLAIN.isdisjoint(value):
                return False
            if type(value.get("items")) is list:
                return False
            for bound in ("exclusiveMinimum", "exclusiveMaximum"):
                if type(value.get(bound)) is bool:
                    return False
            stack.extend(value.values())
        elif type(value) is list:
            stack.extend(value)
        elif isinstance(value, (dict, list)):
            return False  # a subclass: read the long way
    return True


def _hint(hints: Mapping[str, Any], key: str) -> bool | None:
    """An MCP tool annotation (``readOnlyHint``, ``destructiveHint``) where it is a boolean."""
    value = hints.get(key)
    return value if isinstance(value, bool) else None


def _output(
    fn: Mapping[str, Any], source: str, where: str
) -> tuple[tuple[Response, ...], Resolver | None]:
    """The documented output under the first of :data:`OUTPUT_KEYS` holding an object,
    its local ``$ref``s (Pydantic's ``$defs``) resolved, and the resolver that read it."""
    for key in OUTPUT_KEYS:
        schema = fn.get(key)
        if isinstance(schema, dict) and plain(schema):
            return (Response("200", schema=_bfcl_schema(schema)),), None
        if isinstance(schema, dict):
            resolver = Resolver(schema, source, None)
            resolved = resolver.schema(schema, join(where, key), fold_nullable=False)
            return (Response("200", schema=_bfcl_schema(resolved)),), resolver
    return (), None


def _boolean_schema(schema: Any) -> dict[str, Any]:
    return {"not": {}} if schema is False else {}


#: BFCL / Python type names -> JSON Schema type (``None``: no type constraint).
_TYPE_NAMES: Mapping[str, str | None] = {
    "dict": "object",
    "object": "object",
    "float": "number",
    "number": "number",
    "double": "number",
    "tuple": "array",
    "array": "array",
    "list": "array",
    "any": None,
    "string": "string",
    "str": "string",
    "integer": "integer",
    "int": "integer",
    "boolean": "boolean",
    "bool": "boolean",
    "null": "null",
    "none": "null",
}


def _bfcl_schema(schema: Any) -> Any:
    """Map BFCL/Python type names to JSON Schema, recursively."""
    if isinstance(schema, list):
        return [_bfcl_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            mapped = _map_type(value)
            if mapped is not None:
                out["type"] = mapped
        elif key in ("items", "additionalProperties", "not", "contains", "additionalItems"):
            out[key] = _bfcl_schema(value)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            out[key] = _bfcl_schema(value) if isinstance(value, list) else value
        elif key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(
            value, dict
        ):
            out[key] = {k: _bfcl_schema(v) for k, v in value.items()}
        else:
            out[key] = value
    return out


def _map_type(value: Any) -> Any:
    if isinstance(value, list):
        mapped = [_map_type(v) for v in value]
        if any(m is None for m in mapped):
            return None  # "any" among the alternatives: no constraint
        return list(dict.fromkeys(mapped))
    if isinstance(value, str):
        key = value.strip().lower()
        # a name no table knows (`integr`) stays as written: the catalog then warns that
        # values there are not type-checked, as it does for a spec's (it was dropped
        # without a word, the parameter unconstrained)
        return _TYPE_NAMES.get(key, value)
    return None  # not a type name at all: no constraint

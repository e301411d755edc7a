"""The messages the loop sends the model: the documentation prompt, static feedback
turns and the ReAct-style dynamic feedback turn (action, observation, documentation)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from autofeedback.core._model import Operation

__all__ = [
    "call_schema",
    "describe_operations",
    "initial_messages",
    "system_message",
]

SYSTEM = (
    "You are an assistant that fulfils the user's request by calling exactly one web API.\n"
    "Available APIs:\n{docs}\n\n"
    "Answer with exactly one API request and nothing else, written as\n"
    "<API>ApiName(parameter_name='text value', other_parameter=42)</API>\n"
    "For example, for an API GetWeather with parameters city and days, the request for a "
    "three-day forecast in Paris is <API>GetWeather(city='Paris', days=3)</API>.\n"
    "Use only the API names and parameter names documented above, with values of the "
    "documented types, taken from the user's request."
)

#: The same prompt for a model whose decoding is constrained to JSON calls
#: (:func:`call_schema`): asking for one format and forcing another confuses it.
SYSTEM_JSON = (
    "You are an assistant that fulfils the user's request by calling exactly one web API.\n"
    "Available APIs:\n{docs}\n\n"
    "Answer with exactly one API request and nothing else, written as a JSON object\n"
    '{{"name": "ApiName", "arguments": {{"parameter_name": "text value", '
    '"other_parameter": 42}}}}\n'
    "For example, for an API GetWeather with parameters city and days, the request for a "
    'three-day forecast in Paris is {{"name": "GetWeather", "arguments": {{"city": "Paris", '
    '"days": 3}}}}.\n'
    "Use only the API names and parameter names documented above, with values of the "
    "documented types, taken from the user's request."
)


def _type(schema: Mapping[str, Any]) -> str:
    t = schema.get("type")
    text = "/".join(t) if isinstance(t, list) else str(t or "any")
    if isinstance(schema.get("enum"), list):
        text += " one of " + ", ".join(repr(v) for v in schema["enum"][:10])
    if isinstance(schema.get("format"), str):
        text += f" ({schema['format']})"
    return text


def describe_operations(ops: Iterable[Operation], *, max_chars: int = 12_000) -> str:
    """Compact documentation of ``ops`` for a prompt, cut at ``max_chars``."""
    parts: list[str] = []
    size = 0
    for op in ops:
        lines = [f"- {op.name}: {' '.join(op.description.split())[:300]}"]
        for p in op.parameters:
            req = "required" if p.required else "optional"
            desc = " ".join(p.description.split())[:200]
            lines.append(f"    {p.name} ({_type(p.schema)}, {req}): {desc}")
        block = "\n".join(lines)
        if size + len(block) > max_chars:
            parts.append("- ... (more APIs omitted)")
            break
        parts.append(block)
        size += len(block)
    return "\n".join(parts)


def system_message(ops: Iterable[Operation], *, json_calls: bool = False) -> dict[str, str]:
    """The system turn documenting ``ops``; ``json_calls`` asks for JSON calls."""
    template = SYSTEM_JSON if json_calls else SYSTEM
    return {"role": "system", "content": template.format(docs=describe_operations(ops))}


def initial_messages(
    instruction: str, ops: Iterable[Operation], *, json_calls: bool = False
) -> list[dict[str, str]]:
    return [system_message(ops, json_calls=json_calls), {"role": "user", "content": instruction}]


_JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")


def _grammar_schema(schema: Mapping[str, Any], depth: int = 0) -> dict[str, Any]:
    """The part of a parameter's schema a decoding grammar enforces: JSON types, enums,
    array items and object properties. Formats and patterns are left to the scanner
    (grammar converters support few of them, and a pattern is arbitrary regex)."""
    if depth > 4 or not isinstance(schema, Mapping):
        return {}
    out: dict[str, Any] = {}
    t = schema.get("type")
    if isinstance(t, str) and t in _JSON_TYPES:
        out["type"] = t
    elif isinstance(t, list) and t and all(x in _JSON_TYPES for x in t):
        out["type"] = list(t)
    enum = schema.get("enum")
    scalars = (str, int, float, bool)
    if isinstance(enum, list) and enum and all(isinstance(v, scalars) for v in enum):
        out["enum"] = list(enum)
    branches = [
        b for k in ("anyOf", "oneOf") for b in schema.get(k) or () if isinstance(b, Mapping)
    ]
    if branches and "type" not in out and "enum" not in out:
        out["anyOf"] = [_grammar_schema(b, depth + 1) for b in branches]
    if out.get("type") == "array" and isinstance(schema.get("items"), Mapping):
        out["items"] = _grammar_schema(schema["items"], depth + 1)
    props = schema.get("properties")
    if out.get("type") == "object" and isinstance(props, Mapping) and props:
        out["properties"] = {str(k): _grammar_schema(v, depth + 1) for k, v in props.items()}
    return out


def call_schema(ops: Iterable[Operation]) -> dict[str, Any]:
    """A JSON schema every call to one of ``ops`` satisfies and nothing else does:
    ``{"name": <one of the names>, "arguments": {...}}`` with only documented parameter
    names, the required ones present, values of their documented types. Given to a
    constrained decoder, it makes E1-E3 impossible by construction.

    >>> from autofeedback.core._model import Parameter
    >>> op = Operation("getBook", parameters=(Parameter("bookId", "path", {"type": "integer"},
    ...     required=True),))
    >>> call_schema([op])["anyOf"][0]["properties"]["arguments"]["required"]
    ['bookId']
    """
    branches = []
    for op in ops:
        args: dict[str, Any] = {
            "type": "object",
            "properties": {p.name: _grammar_schema(p.schema) for p in op.parameters},
            "required": [p.name for p in op.parameters if p.required],
            "additionalProperties": False,
        }
        branches.append(
            {
                "type": "object",
                "properties": {"name": {"const": op.name}, "arguments": args},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": branches}

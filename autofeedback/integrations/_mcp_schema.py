"""Check (and repair) the input schemas an MCP server declares at ``tools/list``.

Model providers refuse a whole request when one tool's schema is malformed: an
``array`` without ``items`` (OpenAI, Gemini), a ``type`` that is not a JSON-Schema type
(``"str"``, ``"dict"``), a ``required`` name with no property, an ``inputSchema`` that is
not an object schema at all. A server that the model never saw fail this way breaks the
client's first request, far from its cause.

:func:`check_tool` finds those problems and repairs each one *without changing what the
server accepts*: ``items: {}`` means "any item", exactly what a missing ``items`` means;
``"str"`` becomes ``"string"``; an undefined required property is declared with the empty
schema, so the requirement survives. A schema that cannot be repaired that way (not an
object, or a root ``type`` other than ``object``) is replaced by ``{"type": "object"}``
and calls to that tool are forwarded unchecked. Every repair is reported as a
:class:`SchemaIssue`; nothing here raises on a server's data.

>>> tool, issues = check_tool({"name": "tag", "inputSchema": {"type": "object",
...     "properties": {"tags": {"type": "array"}}}})
>>> tool["inputSchema"]["properties"]["tags"], [i.problem for i in issues]
({'type': 'array', 'items': {}}, ['array without items'])
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["SchemaIssue", "check_tool"]

_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
#: Python / BFCL spellings of JSON-Schema types that servers written by hand use.
_ALIASES: Mapping[str, str] = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "long": "integer",
    "float": "number",
    "double": "number",
    "bool": "boolean",
    "dict": "object",
    "map": "object",
    "list": "array",
    "tuple": "array",
    "none": "null",
}
#: What OpenAI and Anthropic accept as a tool name (Gemini is stricter still).
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MAX_DEPTH = 64


@dataclasses.dataclass(frozen=True)
class SchemaIssue:
    """One problem in a tool's declared schema, and what the proxy did about it.

    >>> SchemaIssue("tag", "inputSchema.properties.tags", "array without items",
    ...             "added items: {}").as_dict()["fix"]
    'added items: {}'
    """

    tool: str
    path: str
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"tool {self.tool!r}: {self.path}: {self.problem}; {self.fix}"

    def as_dict(self) -> dict[str, str]:
        """The JSON form written to the proxy's log."""
        return dataclasses.asdict(self)


def check_tool(tool: Mapping[str, Any]) -> tuple[dict[str, Any], list[SchemaIssue]]:
    """A copy of ``tool`` (an MCP ``tools/list`` entry) with its input schema repaired,
    and the issues found. A tool whose issues include ``unchecked`` in their ``fix`` has
    no usable schema: forward its calls without checking them.

    >>> _, issues = check_tool({"name": "t", "inputSchema": {"properties": {}}})
    >>> str(issues[0])
    "tool 't': inputSchema: no type; set type: object"
    """
    out = dict(tool)
    name = str(tool.get("name", ""))
    issues: list[SchemaIssue] = []
    if not _NAME.match(name):
        issues.append(
            SchemaIssue(
                name,
                "name",
                "name providers reject (allowed: letters, digits, _ and -, at most 64)",
                "passed through (renaming would break the server's own calls)",
            )
        )
    schema = tool.get("inputSchema")
    if not isinstance(schema, Mapping):
        issues.append(
            SchemaIssue(
                name,
                "inputSchema",
                f"not a JSON Schema object ({type(schema).__name__})",
                "replaced by {type: object}; calls forwarded unchecked",
            )
        )
        out["inputSchema"] = {"type": "object"}
        return out, issues
    fixed = copy.deepcopy(dict(schema))
    root_type = fixed.get("type")
    if root_type is None:
        issues.append(SchemaIssue(name, "inputSchema", "no type", "set type: object"))
        fixed["type"] = "object"
    elif root_type != "object" and _ALIASES.get(str(root_type).lower()) != "object":
        issues.append(
            SchemaIssue(
                name,
                "inputSchema.type",
                f"root type {root_type!r}: tool arguments are always an object",
                "replaced by {type: object}; calls forwarded unchecked",
            )
        )
        out["inputSchema"] = {"type": "object"}
        return out, issues
    out["inputSchema"] = _Walker(name, issues).schema(fixed, "inputSchema", 0)
    return out, issues


class _Walker:
    def __init__(self, tool: str, issues: list[SchemaIssue]) -> None:
        self.tool = tool
        self.issues = issues

    def note(self, path: str, problem: str, fix: str) -> None:
        self.issues.append(SchemaIssue(self.tool, path, problem, fix))

    def schema(self, node: Any, path: str, depth: int) -> Any:
        if not isinstance(node, dict) or depth > _MAX_DEPTH:
            return node  # booleans are valid schemas; deeper nesting is left as is
        if "type" in node:
            node = self.type_(node, path)
        types = node.get("type")
        type_set = set(types) if isinstance(types, list) else {types}
        if "array" in type_set and "items" not in node and "prefixItems" not in node:
            self.note(path, "array without items", "added items: {}")
            node["items"] = {}
        props = node.get("properties")
        if props is not None and not isinstance(props, dict):
            self.note(f"{path}.properties", "properties is not an object", "removed")
            del node["properties"]
            props = None
        if "required" in node:
            node = self.required(node, path)
        for key in ("properties", "patternProperties", "$defs", "definitions"):
            sub = node.get(key)
            if isinstance(sub, dict):
                node[key] = {
                    k: self.schema(v, f"{path}.{key}.{k}", depth + 1) for k, v in sub.items()
                }
        for key in ("items", "additionalProperties", "not", "contains"):
            if isinstance(node.get(key), dict):
                node[key] = self.schema(node[key], f"{path}.{key}", depth + 1)
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            if isinstance(node.get(key), list):
                node[key] = [
                    self.schema(v, f"{path}.{key}[{i}]", depth + 1) for i, v in enumerate(node[key])
                ]
        if "enum" in node and (not isinstance(node["enum"], list) or not node["enum"]):
            self.note(f"{path}.enum", "enum is not a non-empty list", "removed")
            del node["enum"]
        return node

    def type_(self, node: dict[str, Any], path: str) -> dict[str, Any]:
        value = node["type"]
        names = value if isinstance(value, list) else [value]
        mapped: list[str] = []
        for v in names:
            if isinstance(v, str) and v in _TYPES:
                mapped.append(v)
            elif isinstance(v, str) and v.strip().lower() in _ALIASES:
                alias = _ALIASES[v.strip().lower()]
                self.note(
                    f"{path}.type", f"type {v!r} is not a JSON-Schema type", f"read as {alias!r}"
                )
                mapped.append(alias)
            else:
                self.note(
                    f"{path}.type",
                    f"type {v!r} is not a JSON-Schema type",
                    "removed (no type constraint)",
                )
                del node["type"]
                return node
        node["type"] = mapped if isinstance(value, list) else mapped[0]
        return node

    def required(self, node: dict[str, Any], path: str) -> dict[str, Any]:
        required = node["required"]
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            self.note(f"{path}.required", "required is not a list of names", "removed")
            del node["required"]
            return node
        props = node.get("properties")
        if props is None:
            if not required:
                return node
            props = node["properties"] = {}
        for r in required:
            if r not in props:
                self.note(
                    f"{path}.required",
                    f"required names {r!r}, which has no property",
                    f"declared {r!r} with the empty schema (any value)",
                )
                props[r] = {}
        return node

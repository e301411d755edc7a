"""Provider tool-call shapes: the JSON each hosted model API returns for a tool call.

Written from each provider's API reference:

* OpenAI Chat Completions: ``message.tool_calls[].function.{name, arguments}`` (read by
  :mod:`autofeedback._parse._json`, which tags the requests ``openai-chat``);
* OpenAI Responses: ``{"type": "function_call", "call_id", "name", "arguments"}`` items,
  alone, as a whole ``output`` list or inside the response object;
* Anthropic Messages: ``{"type": "tool_use", "id", "name", "input"}`` blocks, alone, in a
  message ``{"role": "assistant", "content": [...]}`` or a whole API response
  ``{"type": "message", "content": [...]}``;
* Gemini: ``{"functionCall": {"name", "args", "id"}}`` parts, in ``content.parts`` or a
  whole response's ``candidates[].content.parts``;
* Amazon Bedrock Converse: ``{"toolUse": {"toolUseId", "name", "input"}}`` blocks, in a
  message's ``content`` or a whole response's ``output.message.content``.

:func:`find_tool_calls` only locates the calls (with the shape they came in and their id);
turning one into an :class:`ApiRequest`, or into a finding when it is broken, is the
caller's choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from autofeedback.core._model import RequestFormat, ToolCallShape

__all__ = ["RawToolCall", "find_tool_calls", "kept_upstream", "provider_tools", "shape_format"]

#: Containers followed at most this deep (a response holds a message holds blocks).
_MAX_DEPTH = 6


@dataclass(frozen=True)
class RawToolCall:
    """One provider tool call as found: ``arguments`` as sent (a JSON string for OpenAI,
    an object for the others)."""

    shape: ToolCallShape
    call_id: str | None
    name: Any
    arguments: Any
    block: Mapping[str, Any]


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _block(value: Mapping[str, Any]) -> RawToolCall | None:
    kind = value.get("type")
    if kind == "function_call" and "name" in value:
        call_id = _id(value.get("call_id")) or _id(value.get("id"))
        return RawToolCall(
            "openai-responses", call_id, value.get("name"), value.get("arguments"), value
        )
    if kind == "tool_use" and "name" in value:
        return RawToolCall(
            "anthropic", _id(value.get("id")), value.get("name"), value.get("input"), value
        )
    call = value.get("functionCall")
    if isinstance(call, Mapping):
        return RawToolCall("gemini", _id(call.get("id")), call.get("name"), call.get("args"), value)
    use = value.get("toolUse")
    if isinstance(use, Mapping):
        return RawToolCall(
            "bedrock", _id(use.get("toolUseId")), use.get("name"), use.get("input"), value
        )
    return None


def _blocks(items: Any, depth: int) -> list[RawToolCall] | None:
    """The calls in a list of blocks/items; ``None`` when no item has a known shape."""
    if not isinstance(items, list):
        return None
    found: list[RawToolCall] | None = None
    for item in items:
        got = find_tool_calls(item, _depth=depth + 1)
        if got is not None:
            found = (found or []) + got
    return found


def find_tool_calls(value: Any, *, _depth: int = 0) -> list[RawToolCall] | None:
    """Every Responses / Anthropic / Gemini / Bedrock tool call in a decoded JSON value.

    ``None`` when the value is in none of these shapes; an empty list when it is (an
    Anthropic message, a Gemini candidate...) but holds no tool call.

    >>> [c.shape for c in find_tool_calls({"role": "assistant", "content": [
    ...     {"type": "text", "text": "Checking."},
    ...     {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}]})]
    ['anthropic']
    """
    if _depth > _MAX_DEPTH:
        return None
    if isinstance(value, list):
        return _blocks(value, _depth)
    if not isinstance(value, Mapping):
        return None
    one = _block(value)
    if one is not None:
        return [one]
    if isinstance(value.get("candidates"), list):  # a Gemini response
        out: list[RawToolCall] = []
        for candidate in value["candidates"]:
            content = candidate.get("content") if isinstance(candidate, Mapping) else None
            out.extend(find_tool_calls(content, _depth=_depth + 1) or ())
        return out
    output = value.get("output")
    if isinstance(output, Mapping) and isinstance(output.get("message"), Mapping):
        return find_tool_calls(output["message"], _depth=_depth + 1) or []  # Bedrock
    if isinstance(output, list) and (
        value.get("object") == "response" or _blocks(output, _depth) is not None
    ):
        return _blocks(output, _depth) or []  # an OpenAI Responses response
    for key in ("parts", "content"):  # Gemini content; Anthropic / Bedrock messages
        found = _blocks(value.get(key), _depth)
        if found is not None:
            return found
        if isinstance(value.get(key), list) and value.get("role") in ("assistant", "model"):
            return []
    if value.get("type") == "message" and isinstance(value.get("content"), list):
        return []
    return None


_FORMATS: dict[str, RequestFormat] = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "native",
    "gemini": "native",
    "bedrock": "native",
}


def kept_upstream(request: Mapping[str, Any]) -> bool:
    """Whether a model request leaves its conversation to the provider (the Responses
    API's ``previous_response_id`` or ``conversation``): its input is then only the
    latest items, not the run so far.

    >>> kept_upstream({"input": "and the next?", "previous_response_id": "resp_1"})
    True
    """
    return bool(request.get("previous_response_id") or request.get("conversation"))


def shape_format(shape: ToolCallShape) -> RequestFormat:
    """The :data:`~autofeedback.core._model.RequestFormat` of a call in ``shape``: typed JSON
    arguments either way (``"openai"`` for OpenAI's two APIs, ``"native"`` for the rest).

    >>> shape_format("gemini")
    'native'
    """
    return _FORMATS[shape]


def provider_tools(tools: Any) -> Any:
    """Tool definitions of any provider as OpenAI-style function entries.

    Anthropic ``{"name", "input_schema"}``, OpenAI Responses ``{"type": "function",
    "name", "parameters"}``, Gemini ``{"functionDeclarations": [...]}`` and Bedrock
    ``{"toolSpec": {"name", "inputSchema": {"json": ...}}}`` (or a whole ``toolConfig``)
    become ``{"name", "description", "parameters"}``; anything else is kept as it is, for
    the spec loader to judge.

    >>> provider_tools([{"name": "f", "input_schema": {"type": "object"}}])
    [{'name': 'f', 'parameters': {'type': 'object'}}]
    """
    if isinstance(tools, Mapping) and isinstance(tools.get("tools"), list):
        tools = tools["tools"]  # a Bedrock toolConfig
    if not isinstance(tools, list):
        return tools
    out: list[Any] = []
    for tool in tools:
        if not isinstance(tool, Mapping):
            out.append(tool)
            continue
        declarations = tool.get("functionDeclarations") or tool.get("function_declarations")
        if isinstance(declarations, list):
            for d in declarations:
                entry = _function(d, ("parameters", "parametersJsonSchema"))
                if isinstance(entry, dict):  # "parameters": OpenAPI's subset
                    openapi = d.get("parameters") is not None
                    entry["parameters"] = _gemini_schema(entry["parameters"], openapi)
                out.append(entry)
        elif isinstance(tool.get("toolSpec"), Mapping):
            spec = tool["toolSpec"]
            schema = spec.get("inputSchema")
            schema = schema.get("json") if isinstance(schema, Mapping) else None
            out.append(_function({**spec, "parameters": schema}, ("parameters",)))
        elif "input_schema" in tool and "name" in tool:
            out.append(_function(tool, ("input_schema",)))
        elif tool.get("type") == "function" and "name" in tool and "function" not in tool:
            out.append(_function(tool, ("parameters",)))
        else:
            out.append(tool)
    return out


def _function(tool: Any, schema_keys: tuple[str, ...]) -> Any:
    if not isinstance(tool, Mapping):
        return tool
    entry: dict[str, Any] = {"name": tool.get("name")}
    if tool.get("description"):
        entry["description"] = tool["description"]
    schema = next((tool[k] for k in schema_keys if tool.get(k) is not None), None)
    entry["parameters"] = schema if schema is not None else {"type": "object", "properties": {}}
    return entry


def _gemini_schema(schema: Any, openapi: bool, depth: int = 0) -> Any:
    """A Gemini declaration's schema in JSON Schema's terms: ``"STRING"`` is ``"string"``;
    and in ``parameters`` (OpenAPI 3.0's schema subset, ``openapi``), ``nullable: true``
    lets ``null`` in, as :func:`autofeedback._specs._refs.normalise_openapi_schema` folds
    it for a spec (a null for a nullable parameter was an E4.1).

    >>> _gemini_schema({"type": "INTEGER", "nullable": True, "enum": [1, 2]}, True)
    {'type': ['integer', 'null'], 'enum': [1, 2, None]}
    """
    if depth > 64:
        return schema
    if isinstance(schema, list):
        return [_gemini_schema(v, openapi, depth + 1) for v in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {k: _gemini_schema(v, openapi, depth + 1) for k, v in schema.items()}
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
    if openapi and isinstance(out.get("nullable"), bool) and out.pop("nullable"):
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out

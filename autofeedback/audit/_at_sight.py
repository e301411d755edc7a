"""Call records that are clean at sight: judged from the record's own tool list, with no
catalog built.

A log of tool calls mostly holds right calls, and most of its records bring their own
tool list (the model saw that list). Building a catalog for each new list was most of
what a clean record cost (the loaders' schema walks, the operations, the look-ups a
faulty call needs), although a right call only needs its own tool's schema. So a call
record ``{"id", "tools", "call"}`` is first read here, and is clean when:

* every tool of the list is one the loaders read as it is written, with nothing to say
  about it: an OpenAI tool (``{"type": "function", "function": {...}}``) or a bare
  function (``{"name", "description", "parameters"}``), named in plain ASCII, no two of
  one name, its parameters a plain schema (the keywords :func:`~autofeedback.checks.
  _quick.fits` reads, type names JSON Schema's or the BFCL/Python ones the loader
  maps, text annotations, scalar defaults and examples) -- so the catalog would load
  it as written, set nothing aside and warn of nothing;
* the call names one of them exactly, with a JSON object of arguments that certainly
  fits that tool's parameters as the detailed checks read them (every required one
  present, no other name, every value of its type and in its ``enum``).

Anything else -- another field in the record, another tool shape, any other keyword,
a value the walk cannot vouch for -- goes the long way, which gives the same verdict for
what passes here (tests/audit/test_at_sight.py compares the two on generated lists) and
finds what is wrong with the rest. Only a ``True`` is trusted.
"""

from __future__ import annotations

import re
from typing import Any

from autofeedback._specs._functions import _NOT_PLAIN, _TYPE_NAMES, _bfcl_schema
from autofeedback.checks._quick import _KEYS, _SCALARS, _TYPES, fits

__all__ = ["clean_at_sight"]

#: the keys of a record read here; any other key is for the long way to judge
_RECORD_KEYS = frozenset({"id", "tools", "call"})
_FUNCTION_KEYS = frozenset({"name", "description", "parameters"})
_PARAMETERS_KEYS = frozenset(
    {"type", "properties", "required", "additionalProperties", "description", "title"}
)
#: what a schema may hold: the keywords ``fits`` reads, no other; of its annotations,
#: the texts and flags must be of their kind (a ``description`` holding a schema is
#: walked by the loader), the data (``default``, ``examples``) scalars
_SCHEMA_KEYS = _KEYS
_TEXT_KEYS = frozenset({"description", "title", "$comment"})
_FLAG_KEYS = frozenset({"deprecated", "readOnly", "writeOnly"})
_JSON_TYPES = frozenset(_TYPES)
#: a name the loader keeps as written and the catalog never sets aside (printable
#: ASCII with no space: one script, nothing invisible, nothing NFKC changes)
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:\-]{0,255}")
_MAX_DEPTH = 16


def clean_at_sight(record: Any) -> bool:
    """Whether the call record ``record`` is certainly clean, read from its own tool list
    (see the module). ``False`` says nothing: the record is checked the long way.

    >>> tools = [{"name": "ping", "parameters": {"type": "dict",
    ...     "properties": {"n": {"type": "integer"}}, "required": ["n"]}}]
    >>> clean_at_sight({"tools": tools, "call": {"name": "ping", "arguments": {"n": 1}}})
    True
    >>> clean_at_sight({"tools": tools, "call": {"name": "ping", "arguments": {"n": "1"}}})
    False
    """
    if type(record) is not dict or not record.keys() <= _RECORD_KEYS:
        return False
    call, tools = record.get("call"), record.get("tools")
    if type(call) is not dict or len(call) != 2 or type(tools) is not list or not tools:
        return False
    name, arguments = call.get("name"), call.get("arguments")
    if type(name) is not str or type(arguments) is not dict:
        return False
    called: Any = None
    mapped = False
    names: set[str] = set()
    for tool in tools:
        function = _function(tool)
        if function is None:
            return False
        tool_name = function.get("name")
        if type(tool_name) is not str or tool_name in names or not _NAME.fullmatch(tool_name):
            return False
        names.add(tool_name)
        parameters = function.get("parameters")
        plain = _AS_IS if parameters is None else _plain_parameters(parameters)
        if plain == _NO:
            return False
        if tool_name == name:
            called, mapped = ({} if parameters is None else parameters), plain == _MAPPED
    return called is not None and fits(_strict(called, mapped), arguments)


def _function(tool: Any) -> dict[str, Any] | None:
    """The function of an OpenAI tool or a bare function, when written as the loaders
    read it with nothing else beside it."""
    if type(tool) is not dict:
        return None
    if "function" in tool:
        if len(tool) != 2 or tool.get("type") != "function":
            return None
        tool = tool["function"]
        if type(tool) is not dict:
            return None
    if "name" not in tool or not tool.keys() <= _FUNCTION_KEYS:
        return None
    description = tool.get("description")
    if description is not None and type(description) is not str:
        return None
    return tool


#: what the walks answer: not plain; plain with JSON Schema's type names only (the loader
#: copies it as it is); plain with a type name the loader maps (``dict``, ``float``...)
_NO, _AS_IS, _MAPPED = 0, 1, 2


def _plain_parameters(schema: Any) -> int:
    """Whether a function's ``parameters`` are an object's plain schema, every property
    a plain schema and every required name one of them (``_NO``, ``_AS_IS``, ``_MAPPED``)."""
    if type(schema) is not dict or not schema.keys() <= _PARAMETERS_KEYS:
        return _NO
    kind = schema.get("type")
    if kind is not None and (
        type(kind) is not str or _TYPE_NAMES.get(kind.strip().lower()) != "object"
    ):
        return _NO
    if schema.get("additionalProperties", False) is not False:
        return _NO  # more arguments allowed: the long way reads which
    for key in ("description", "title"):
        if key in schema and type(schema[key]) is not str:
            return _NO
    properties = schema.get("properties")
    found = _AS_IS
    if properties is None:
        properties = {}
    elif type(properties) is not dict:
        return _NO
    else:
        found = _plain_properties(properties, 0)
    required = schema.get("required")
    if required is None or (
        type(required) is list and all(type(r) is str and r in properties for r in required)
    ):
        return found
    return _NO


def _plain_properties(properties: dict[str, Any], depth: int) -> int:
    found = _AS_IS
    for name, sub in properties.items():
        if name in _NOT_PLAIN:  # a property named $ref: the loader reads it the long way
            return _NO
        plain = _plain_schema(sub, depth + 1)
        if plain == _NO:
            return _NO
        if plain > found:
            found = plain
    return found


def _plain_schema(schema: Any, depth: int) -> int:
    """Whether ``schema`` holds only what :func:`fits` reads, in the shapes the loader
    copies as written (types it knows, scalar enums, defaults and examples)."""
    if type(schema) is not dict or depth > _MAX_DEPTH or not schema.keys() <= _SCHEMA_KEYS:
        return _NO
    found = _AS_IS
    for key, value in schema.items():
        if key == "type":
            plain = _known_type(value)
        elif key == "properties":
            plain = _plain_properties(value, depth) if type(value) is dict else _NO
        elif key == "additionalProperties":
            plain = _AS_IS if type(value) is bool else _plain_schema(value, depth + 1)
        elif key == "items":
            plain = _plain_schema(value, depth + 1)
        elif key == "enum":
            plain = (
                _AS_IS if type(value) is list and all(type(v) in _SCALARS for v in value) else _NO
            )
        elif key == "required":
            plain = _AS_IS if type(value) is list and all(type(v) is str for v in value) else _NO
        elif key in _TEXT_KEYS:
            plain = _AS_IS if type(value) is str else _NO
        elif key in _FLAG_KEYS:
            plain = _AS_IS if type(value) is bool else _NO
        else:  # default, examples: data, a scalar or a list of them
            plain = (
                _AS_IS
                if type(value) in _SCALARS
                or (type(value) is list and all(type(v) in _SCALARS for v in value))
                else _NO
            )
        if plain == _NO:
            return _NO
        if plain > found:
            found = plain
    return found


def _known_type(kind: Any) -> int:
    """A type name the loader keeps (JSON Schema's) or maps (``dict``, ``float``,
    ``any``...); a list of them, each once."""
    if type(kind) is str:
        if kind in _JSON_TYPES:
            return _AS_IS
        return _MAPPED if kind.strip().lower() in _TYPE_NAMES else _NO
    if type(kind) is not list or not kind:
        return _NO
    if all(type(k) is str and k.strip().lower() in _TYPE_NAMES for k in kind):
        as_is = all(k in _JSON_TYPES for k in kind) and len(set(kind)) == len(kind)
        return _AS_IS if as_is else _MAPPED  # a name twice: the loader writes it once
    return _NO


def _strict(parameters: dict[str, Any], mapped: bool) -> dict[str, Any]:
    """The schema a call's whole arguments are judged by, as the catalog's operation
    gives it (:func:`~autofeedback.checks._check_values._strict_schema`): the properties
    with their type names mapped (``mapped``: a copy; else the loader's copy would equal
    them), no other argument."""
    loaded = _bfcl_schema(parameters) if mapped else parameters
    properties = loaded.get("properties") or {}
    required = loaded.get("required") or ()
    return {
        "type": "object",
        "properties": properties,
        "required": [n for n in properties if n in required],
        "additionalProperties": False,
    }

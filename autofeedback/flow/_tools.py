"""Tools a dialogue documents: an agent that searches its tool library first leaves the
search result in the dialogue, and the tools it found are callable from then on.

Read wherever such a result stands, in every form the parser reads:

* a structured response body: a tool-search result (one tool or a list, in any
  provider's tool shape: OpenAI ``{"type": "function", "function": {...}}``, plain
  ``{"name", "parameters"}``, MCP ``inputSchema``, Anthropic ``input_schema``, API-Bank
  ``{"name", "description", "input_parameters", "output_parameters"}``), or an MCP
  ``tools/list`` answer ``{"tools": [...]}`` (also inside a JSON-RPC ``result``);
* the same as text: JSON, or the Python literal API-Bank's ToolSearcher prints
  (``[{'name': 'CancelOrder', ...}]``), read with :func:`ast.literal_eval` (literals
  only, never evaluated);
* in a dialogue's own text: the result after ``->`` of an API-Bank line
  ``API-Request: [ToolSearcher(keywords='cancel order')]->[{...}]``, and a ReAct
  ``Observation:`` that holds a tool's description.

A response that only looks like tool docs (a list of books with names and descriptions)
is no tool: a tool needs its parameters documented (``parameters``, ``inputSchema``,
``input_schema``, ``input_parameters`` or an OpenAI ``function``).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from autofeedback.catalog._catalog import ApiCatalog

__all__ = ["documented_tools", "tools_in_text", "with_tools_in_text"]

#: keys that hold a tool's parameters, in any of the shapes read
_PARAMETER_KEYS = ("parameters", "inputSchema", "input_schema", "input_parameters")
#: the most characters of one result read as tool documentation (a literal is parsed
#: whole: a bound keeps a hostile dialogue from costing more than its own length)
_MAX_RESULT = 256 * 1024
#: the most results of one dialogue read
_MAX_RESULTS = 256
_SOURCE = "<documented by a response>"

# an API-Bank request line with its result: API-Request: [Name(...)]->RESULT
_API_BANK_RESULT = re.compile(r"API-Request[ \t]*:[^\n]*?\)\]?[ \t]*->[ \t]*", re.IGNORECASE)
# a ReAct observation; what follows it up to the next step is its text
_OBSERVATION = re.compile(r"^[ \t]*Observation[ \t]*:[ \t]*", re.IGNORECASE | re.MULTILINE)
_NEXT_STEP = re.compile(
    r"^[ \t]*(?:Thought|Action|Action Input|Observation|Final Answer|API-Request|User|AI)"
    r"[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)


def _is_tool(item: Any) -> bool:
    if not isinstance(item, Mapping):
        return False
    function = item.get("function")
    if item.get("type") == "function" and isinstance(function, Mapping):
        return isinstance(function.get("name"), str) and bool(function.get("name"))
    name = item.get("name")
    return (
        isinstance(name, str)
        and bool(name.strip())
        and any(isinstance(item.get(k), Mapping) for k in _PARAMETER_KEYS)
    )


def _decode_text(text: str) -> Any:
    """JSON, else a Python literal (API-Bank prints results with ``repr``), else
    ``None``; never evaluated."""
    text = text.strip()
    if not text or text[0] not in "[{" or len(text) > _MAX_RESULT:
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    # a literal followed by prose ("[{...}] These are the tools found."): its first value
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
        return value
    except (json.JSONDecodeError, RecursionError):
        return None


def documented_tools(body: Any) -> ApiCatalog | None:
    """The tools a response documents (see the module docstring), or ``None``.

    >>> found = documented_tools("[{'name': 'CancelOrder', 'description': 'Cancel an order',"
    ...     " 'input_parameters': {'order_id': {'type': 'str', 'description': 'The id'}},"
    ...     " 'output_parameters': {'status': {'type': 'str'}}}]")
    >>> found.names, found.get("CancelOrder").parameters[0].name
    (('CancelOrder',), 'order_id')
    >>> documented_tools({"books": [{"name": "Dune", "description": "a novel"}]}) is None
    True
    """
    if isinstance(body, str):
        body = _decode_text(body)
    if isinstance(body, Mapping) and isinstance(body.get("result"), Mapping):
        body = body["result"]  # a JSON-RPC envelope
    if isinstance(body, Mapping) and isinstance(body.get("tools"), list):
        body = body["tools"]
    from autofeedback._parse._providers import provider_tools

    items = body if isinstance(body, list) else [body]
    # Gemini's functionDeclarations, Bedrock's toolSpec, Anthropic's input_schema...
    # as OpenAI's {"name", "parameters"}; anything else is kept for _is_tool to judge
    tools = [t for t in provider_tools(items) if _is_tool(t)]
    if not tools:
        return None
    return _catalog(tools)


def _catalog(tools: list[Any]) -> ApiCatalog | None:
    from autofeedback._specs import load_spec
    from autofeedback.catalog._catalog import set_aside_tools

    try:
        # loaded without the unknown-type warning: a response's tool docs are not the
        # user's spec to fix
        ops, servers = load_spec(tools, source=_SOURCE)
    except Exception:
        return None  # a response that only looks like tool docs is just a response
    # a name that looks like another, or is listed twice, is set aside here too
    kept, aside = set_aside_tools(ops)
    return ApiCatalog(kept, servers=servers, source=_SOURCE, set_aside=aside)


def _results(text: str) -> list[str]:
    """The results a dialogue's text shows: after an API-Bank request's ``->``, and the
    text of each ReAct ``Observation:``."""
    found: list[str] = []
    if "->" in text:
        for m in _API_BANK_RESULT.finditer(text):
            end = text.find("\n", m.end())
            found.append(text[m.end() : end if end != -1 else len(text)])
            if len(found) >= _MAX_RESULTS:
                return found
    if "bservation" in text:
        for m in _OBSERVATION.finditer(text):
            nxt = _NEXT_STEP.search(text, m.end())
            found.append(text[m.end() : nxt.start() if nxt is not None else len(text)])
            if len(found) >= _MAX_RESULTS:
                break
    return found


def tools_in_text(*texts: str | None) -> ApiCatalog | None:
    """The tools documented by the results a dialogue's text shows (API-Bank
    ``API-Request: [...]->RESULT`` lines, ReAct ``Observation:`` text), or ``None``.

    >>> dialogue = ("User: cancel my order 42\\n"
    ...     "API-Request: [ToolSearcher(keywords='cancel order')]->{'name': 'CancelOrder', "
    ...     "'description': 'Cancel an order', 'input_parameters': {'order_id': "
    ...     "{'type': 'str', 'description': 'The id'}}}\\nAI: found it")
    >>> tools_in_text(dialogue).names
    ('CancelOrder',)
    """
    catalogs: list[ApiCatalog] = []
    for text in texts:
        if not text or ("->" not in text and "bservation" not in text):
            continue
        for result in _results(text):
            found = documented_tools(result)
            if found is not None:
                catalogs.append(found)
    if not catalogs:
        return None
    return catalogs[0] if len(catalogs) == 1 else ApiCatalog.merge(*catalogs)


def with_tools_in_text(catalog: ApiCatalog, *texts: str | None) -> ApiCatalog:
    """``catalog`` with the tools the texts document added (its own win a name clash);
    ``catalog`` itself when they document none it lacks."""
    found = tools_in_text(*texts)
    if found is None or all(name in catalog for name in found.names):
        return catalog
    return ApiCatalog.merge(catalog, found)

"""The cases of ``benchmarks/repair_harm.py`` part (a): calls a repair must not change
(designed harm), and calls it must still repair (controls).

A :class:`Case` is a tool list (each tool with an HTTP method, MCP hints and a response
where it matters), what the user asked, and the call the model wrote. Harm cases are
built so that the *only* thing wrong with the call is the trap: any call sent that
differs from the model's (another operation, a value dropped, a parameter renamed, a
value changed, a call inserted) is harm; the right outcome is to withhold the call and
feed it back, except where the model's call is right and only an unreadable spec makes
it look wrong (``expect="as-written"``). Controls carry the one certain repair.

* :func:`designed_cases`: every row of issue 43's table, the hold-out rows and the
  confusable tool names;
* :func:`generated_cases`: effect pairs, one-letter-apart words, opposites, scope and
  safety flags a spec leaves out, lossy values, inserted producers, HTTP methods;
* :func:`control_cases`: case and separator variants, keyboard slips, ``"3"`` -> 3,
  JSON text, a value only one documented enum holds.

Each case renders as an OpenAI tools list (:meth:`Case.openai_tools`), MCP tools with
their annotations (:meth:`Case.mcp_tools`), an OpenAPI document served by a recording
server (:func:`openapi_for`), and the model's call as an HTTP request
(:func:`http_call`), so every entry point sees the same case in its own transport.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

__all__ = [
    "Case",
    "Tool",
    "all_cases",
    "canon_call",
    "control_cases",
    "designed_cases",
    "generated_cases",
    "http_call",
    "openapi_for",
    "words",
]

Expect = Literal["withhold", "as-written", "repair"]
Call = tuple[str, dict[str, Any]]

S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}
B = {"type": "boolean"}
O = {"type": "object"}  # noqa: E741


@dataclass(frozen=True)
class Tool:
    """One documented operation. ``method``: its HTTP method (default from the name's
    verb, :func:`method_of`); ``hints``: MCP annotations (``readOnlyHint``,
    ``destructiveHint``); ``response``: what it returns (a JSON example; its schema is
    derived), for the data flow of inserted producers."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    description: str = ""
    method: str | None = None
    hints: Mapping[str, bool] | None = None
    response: Any = None

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "object",
            "properties": {k: dict(v) for k, v in self.params.items()},
        }
        if self.required:
            out["required"] = list(self.required)
        return out

    @property
    def http_method(self) -> str:
        return self.method or method_of(self.name, self.hints)


@dataclass(frozen=True)
class Case:
    """One call and the tools it is checked against."""

    id: str
    family: str
    kind: Literal["harm", "control"]
    instruction: str
    tools: tuple[Tool, ...]
    call: Call
    expect: Expect = "withhold"
    #: controls: the call after the one certain repair
    repaired: Call | None = None
    #: what a harmful repair would do, in a few words
    trap: str = ""
    #: an OpenAPI document (and sibling files) instead of the tools' rendering: cases
    #: about reading a spec; their call goes through the HTTP entry points only
    spec: Mapping[str, Any] | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    #: the HTTP request the model's code sends, where it is not the call's rendering
    request: Mapping[str, Any] | None = None
    #: a made-up id for an operation whose one producer has a side effect: the call
    #: also goes to the runners and to audit as a one-line program
    sequence: bool = False
    #: entry points this case does not apply to, with why
    skip: Mapping[str, str] = field(default_factory=dict)

    def openai_tools(self) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description or _describe(t.name),
                    "parameters": t.schema(),
                },
            }
            for t in self.tools
        ]

    def mcp_tools(self) -> list[dict[str, Any]]:
        out = []
        for t in self.tools:
            tool: dict[str, Any] = {
                "name": t.name,
                "description": t.description or _describe(t.name),
                "inputSchema": t.schema(),
            }
            if t.hints:
                tool["annotations"] = dict(t.hints)
            out.append(tool)
        return out

    def documented(self, name: str) -> bool:
        return any(t.name == name for t in self.tools)


# -- names ----------------------------------------------------------------------------

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def words(name: str) -> list[str]:
    """``getUserById`` / ``get_user_by_id`` -> ``['get', 'user', 'by', 'id']``."""
    return [w.lower() for w in _WORD.findall(name)]


def _describe(name: str) -> str:
    ws = words(name)
    return (" ".join(ws).capitalize() + ".") if ws else name


def style(parts: Sequence[str], how: str) -> str:
    if how == "camel":
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    return "_".join(parts)


_GET = {
    "get",
    "list",
    "search",
    "find",
    "fetch",
    "read",
    "show",
    "count",
    "lookup",
    "query",
    "view",
    "check",
    "describe",
    "track",
    "inspect",
    "preview",
    "browse",
    "download",
}
_DELETE = {
    "delete",
    "remove",
    "purge",
    "wipe",
    "clear",
    "revoke",
    "destroy",
    "erase",
    "drop",
    "unlink",
    "cancel",
    "terminate",
    "kill",
    "evict",
}
_PUT = {"set", "put", "update", "replace", "rename", "patch"}


def method_of(name: str, hints: Mapping[str, bool] | None = None) -> str:
    """The HTTP method a REST API would give an operation of this name (or hints)."""
    if hints:
        if hints.get("readOnlyHint"):
            return "GET"
        if hints.get("destructiveHint"):
            return "DELETE"
    ws = words(name)
    verb = ws[0] if ws else ""
    if verb in _GET:
        return "GET"
    if verb in _DELETE:
        return "DELETE"
    if verb in _PUT:
        return "PUT"
    return "POST"


def hints_of(name: str) -> dict[str, bool]:
    """MCP annotations an honest server gives a tool of this name."""
    m = method_of(name)
    if m == "GET":
        return {"readOnlyHint": True}
    if m == "DELETE":
        return {"readOnlyHint": False, "destructiveHint": True}
    return {"readOnlyHint": False, "destructiveHint": m == "PUT"}


def tool(
    name: str, params: Mapping[str, Any] | None = None, required: Iterable[str] = (), **kw: Any
) -> Tool:
    """A tool whose HTTP method and MCP hints follow its name's verb (unless given)."""
    kw.setdefault("method", method_of(name))
    kw.setdefault("hints", hints_of(name))
    return Tool(name, dict(params or {}), tuple(required), **kw)


# -- rendering as HTTP ----------------------------------------------------------------

_SCALAR = ("string", "integer", "number", "boolean")


def _in_query(t: Tool) -> bool:
    if t.http_method not in ("GET", "DELETE", "HEAD"):
        return False
    return all(p.get("type") in _SCALAR for p in t.params.values())


def _schema_of(example: Any) -> dict[str, Any]:
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, int):
        return {"type": "integer"}
    if isinstance(example, float):
        return {"type": "number"}
    if isinstance(example, str):
        return {"type": "string"}
    if isinstance(example, list):
        return {"type": "array", "items": _schema_of(example[0]) if example else {}}
    if isinstance(example, dict):
        return {"type": "object", "properties": {k: _schema_of(v) for k, v in example.items()}}
    return {}


def openapi_for(case: Case, server: str) -> dict[str, Any]:
    """The OpenAPI 3.0 document of ``case``'s tools, served at ``server``: each tool
    ``METHOD /name``, scalar parameters of GET and DELETE in the query, the rest a
    JSON body. A case that brings its own spec gets that, with ``server`` set."""
    if case.spec is not None:
        doc = json.loads(json.dumps(case.spec))
        doc["servers"] = [{"url": server}]
        return doc
    paths: dict[str, Any] = {}
    for t in case.tools:
        op: dict[str, Any] = {
            "operationId": t.name,
            "summary": t.description or _describe(t.name),
        }
        if _in_query(t):
            op["parameters"] = [
                {"name": k, "in": "query", "required": k in t.required, "schema": dict(v)}
                for k, v in t.params.items()
            ]
        elif t.params or t.http_method in ("POST", "PUT", "PATCH"):
            op["requestBody"] = {
                "required": bool(t.required),
                "content": {
                    "application/json": {"schema": {**t.schema(), "additionalProperties": False}}
                },
            }
        status = "201" if t.http_method == "POST" and t.response is not None else "200"
        response: dict[str, Any] = {"description": "OK"}
        if t.response is not None:
            response["content"] = {"application/json": {"schema": _schema_of(t.response)}}
        op["responses"] = {status: response}
        paths.setdefault("/" + quote(t.name, safe=""), {})[t.http_method.lower()] = op
    return {
        "openapi": "3.0.3",
        "info": {"title": f"harm case {case.id}", "version": "1.0"},
        "servers": [{"url": server}],
        "paths": paths,
    }


def http_call(case: Case) -> dict[str, Any] | None:
    """The model's call as the HTTP request its code sends: ``{method, path, query,
    body}`` (``path`` relative to the server), or ``None`` when the call cannot be
    written as one (it names no operation the rendering could place)."""
    if case.request is not None:
        return dict(case.request)
    name, args = case.call
    documented = next((t for t in case.tools if t.name == name), None)
    # an undocumented name: the request the model's code would send for it, placed as
    # the documented operations are (its own verb gives the method)
    t = documented or Tool(name, {k: _schema_of(v) for k, v in args.items()})
    path = "/" + quote(name, safe="")
    if _in_query(t) and all(not isinstance(v, dict | list) for v in args.values()):
        return {"method": t.http_method, "path": path, "query": dict(args), "body": None}
    return {"method": t.http_method, "path": path, "query": {}, "body": dict(args)}


# -- comparing calls ------------------------------------------------------------------


def _canon_value(value: Any) -> str:
    # JSON text with the types kept apart (1, 1.0, true and "1" are four values)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)


def canon_call(name: Any, arguments: Any) -> str:
    """A call's comparison key: name and arguments as typed JSON values."""
    return f"{name}:{_canon_value(arguments)}"


def canon_http(method: str, path: str, query: Mapping[str, Any], body: Any) -> str:
    """A request's comparison key: query values as the text a URL carries."""

    def text(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)

    q = sorted((k, text(v)) for k, v in query.items())
    return f"{method.upper()} {path} {json.dumps(q, ensure_ascii=False)} {_canon_value(body)}"


# -- designed cases: issue 43's table ------------------------------------------------------


def designed_cases() -> list[Case]:
    """Every row of the issue's table, the hold-out rows, and confusable tool names."""
    F = "issue table"
    weather = tool("getWeather", {"city": S}, ["city"])
    cases = [
        Case(
            "get_config->set_config",
            F,
            "harm",
            "What is the value of the config key 'theme'?",
            (tool("set_config", {"key": S, "value": S}, ["key"]),),
            ("get_config", {"key": "theme"}),
            trap="a read becomes a write",
        ),
        Case(
            "getUser->setUser",
            F,
            "harm",
            "Show me the user u-17.",
            (tool("setUser", {"userId": S, "name": S}, ["userId"]),),
            ("getUser", {"userId": "u-17"}),
            trap="a read becomes a write",
        ),
        Case(
            "deleteUser({})->deleteUsers",
            F,
            "harm",
            "Delete the user alice.",
            (tool("deleteUsers", {"filter": O}),),
            ("deleteUser", {}),
            trap="one user becomes every user",
        ),
        Case(
            "remove_item->remove_items",
            F,
            "harm",
            "Remove the item i-3 from cart c-1.",
            (tool("remove_items", {"cart_id": S}, ["cart_id"]),),
            ("remove_item", {"cart_id": "c-1"}),
            trap="one item becomes all",
        ),
        Case(
            "count_volume->mount_volume",
            F,
            "harm",
            "How many files are on volume vol-9?",
            (tool("mount_volume", {"volume_id": S}, ["volume_id"]),),
            ("count_volume", {"volume_id": "vol-9"}),
            trap="another word, one letter away",
        ),
        Case(
            "wipeCache()->purgeAllData",
            F,
            "harm",
            "Wipe the cache.",
            (tool("purgeAllData"), weather),
            ("wipeCache", {}),
            trap="the cache becomes all data",
        ),
        Case(
            "resetData()->purgeAllData",
            F,
            "harm",
            "Reset the demo data.",
            (tool("purgeAllData"), weather),
            ("resetData", {}),
            trap="a reset becomes a purge",
        ),
        Case(
            "removeEvent->deleteEvent",
            F,
            "harm",
            "Remove event ev-4 from my calendar.",
            (tool("deleteEvent", {"eventId": S}, ["eventId"]),),
            ("removeEvent", {"eventId": "ev-4"}),
            trap="another word, without asking",
        ),
        Case(
            "delete_records where dropped",
            F,
            "harm",
            "Delete the record with id 5 from users.",
            (tool("delete_records", {"table": S}, ["table"]),),
            ("delete_records", {"table": "users", "where": "id=5"}),
            trap="the whole table",
        ),
        Case(
            "DELETE /users dry_run dropped",
            F,
            "harm",
            "Which guest users would be deleted? Dry run only.",
            (tool("deleteUsers", {"role": S}),),
            ("deleteUsers", {"role": "guest", "dry_run": True}),
            trap="a dry run becomes a delete",
            request={
                "method": "DELETE",
                "path": "/deleteUsers",
                "query": {"role": "guest", "dry_run": "true"},
                "body": None,
            },
        ),
        Case(
            "list_events limit->maxResults",
            F,
            "harm",
            "Show my next 5 events.",
            (tool("list_events", {"calendarId": S, "maxResults": I}, ["calendarId"]),),
            ("list_events", {"calendarId": "primary", "limit": 5}),
            trap="the limit dropped or renamed by meaning",
        ),
        Case(
            "list_invoices tenant_id dropped",
            F,
            "harm",
            "List the open invoices of tenant t-42.",
            (tool("list_invoices", {"status": S}),),
            ("list_invoices", {"status": "open", "tenant_id": "t-42"}),
            trap="an unscoped call",
        ),
        Case(
            "share_doc private->public",
            F,
            "harm",
            "Share doc d-1 privately.",
            (tool("share_doc", {"doc_id": S, "public": B}, ["doc_id"]),),
            ("share_doc", {"doc_id": "d-1", "private": True}),
            trap="private becomes public",
        ),
        Case(
            "search_products max_price->min_price",
            F,
            "harm",
            "Laptops under 300 dollars.",
            (tool("search_products", {"query": S, "min_price": N}, ["query"]),),
            ("search_products", {"query": "laptop", "max_price": 300}),
            trap="max becomes min",
        ),
        Case(
            "send_money sender->recipient",
            F,
            "harm",
            "Send 5 dollars from alice.",
            (tool("send_money", {"recipient": S, "amount": N}, ["recipient", "amount"]),),
            ("send_money", {"sender": "alice", "amount": 5}),
            trap="the sender becomes the recipient",
        ),
        Case(
            "cvv '0123'->123",
            F,
            "harm",
            "Pay invoice 7 with card 4111111111111111, cvv 0123.",
            (
                tool(
                    "pay_invoice",
                    {"invoice_id": S, "card_number": S, "cvv": I},
                    ["invoice_id", "card_number", "cvv"],
                ),
            ),
            ("pay_invoice", {"invoice_id": "7", "card_number": "4111111111111111", "cvv": "0123"}),
            trap="a leading zero lost",
        ),
        Case(
            "'1e-400'->0.0",
            F,
            "harm",
            "Set the solver tolerance to 1e-400.",
            (tool("set_tolerance", {"tolerance": N}, ["tolerance"]),),
            ("set_tolerance", {"tolerance": "1e-400"}),
            trap="underflow to 0",
        ),
        Case(
            "fullwidth '１２３'->123",
            F,
            "harm",
            "Set the quantity to １２３.",
            (tool("set_quantity", {"quantity": I}, ["quantity"]),),
            ("set_quantity", {"quantity": "１２３"}),
            trap="non-ASCII digits read as a number",
        ),
        Case(
            "duplicate keys {a:1,a:2}",
            F,
            "harm",
            "Update item 9's metadata.",
            (tool("update_metadata", {"item_id": S, "metadata": O}, ["item_id", "metadata"]),),
            ("update_metadata", {"item_id": "9", "metadata": '{"a":1,"a":2}'}),
            trap="a key's first value lost",
        ),
        # the inserted producers: made-up ids whose one producer has a side effect
        _inserted("placeOrder", "POST", "getOrder", "order_id", "Where is my order?", F),
        _inserted(
            "deleteAllJobs", "DELETE", "getJob", "job_id", "What is the status of my job?", F
        ),
        _inserted(
            "resetAllDevices", "POST", "getDevice", "device_id", "Is my thermostat online?", F
        ),
        _inserted(
            "rotateApiKey", "POST", "getKeyUsage", "key_id", "How much has my API key been used?", F
        ),
        # specs read wrong: a correct call must go out as written
        _do_droplets(),
        _sig_key(),
        # the hold-out rows
        Case(
            "measure->unit (enum)",
            "controls",
            "control",
            "Weather in Boston in fahrenheit.",
            (
                tool(
                    "get_weather",
                    {"location": S, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                    ["location"],
                ),
            ),
            ("get_weather", {"location": "Boston", "measure": "fahrenheit"}),
            expect="repair",
            repaired=("get_weather", {"location": "Boston", "unit": "fahrenheit"}),
            trap="measure dropped: the default unit",
        ),
        Case(
            "subtract->multiply (sub listed)",
            F,
            "harm",
            "What is 100 minus 40?",
            (
                tool("add", {"a": I, "b": I}, ["a", "b"]),
                tool("sub", {"a": I, "b": I}, ["a", "b"]),
                tool("multiply", {"a": I, "b": I}, ["a", "b"]),
            ),
            ("subtract", {"a": 100, "b": 40}),
            trap="another operation",
        ),
        Case(
            "location->where_to (wrong API)",
            F,
            "harm",
            "Find hotels in Paris.",
            (
                tool("hotel_search", {"location": S}, ["location"]),
                tool("travel_book", {"where_to": S}, ["where_to"]),
            ),
            ("travel_book", {"location": "Paris"}),
            trap="renamed to the wrong API's parameter, E2.1 hidden",
        ),
        Case(
            "wrong API stripped of another API's args",
            F,
            "harm",
            "What is the weather in Paris?",
            (tool("get_weather", {"city": S}, ["city"]), tool("get_stock_price", {"symbol": S})),
            ("get_stock_price", {"city": "Paris"}),
            trap="the wrong API runs, the evidence gone",
        ),
        Case(
            "genre dropped",
            F,
            "harm",
            "Find a comedy movie playing in Boston.",
            (tool("find_movies", {"location": S, "date": S}, ["location"]),),
            ("find_movies", {"location": "Boston", "genre": "comedy"}),
            trap="what the user asked for dropped",
        ),
        # confusable names: never matched
        Case(
            "read_file->reаd_file (Cyrillic a)",
            F,
            "harm",
            "Read notes.txt.",
            (tool("re\u0430d_file", {"path": S}, ["path"]),),
            ("read_file", {"path": "notes.txt"}),
            trap="routed to a look-alike tool",
            skip={"requests guard": "a tool name, no path", "ReactRunner": "a tool name, no path"},
        ),
        Case(
            "read_file->read\u200b_file (zero-width space)",
            F,
            "harm",
            "Read notes.txt.",
            (tool("read\u200b_file", {"path": S}, ["path"]),),
            ("read_file", {"path": "notes.txt"}),
            trap="routed to a look-alike tool",
            skip={"requests guard": "a tool name, no path", "ReactRunner": "a tool name, no path"},
        ),
    ]
    return cases


def _inserted(
    producer: str, method: str, consumer: str, key: str, instruction: str, family: str
) -> Case:
    id_value = "A1B2C3"
    response = {key: "x-1"}
    return Case(
        f"{producer}() inserted",
        family,
        "harm",
        instruction,
        (
            tool(consumer, {key: S}, [key], response={"status": "ok", key: "x-1"}),
            Tool(
                producer,
                {},
                (),
                method=method,
                hints=hints_of(producer)
                | ({"destructiveHint": True} if method == "DELETE" else {}),
                response=response,
            ),
        ),
        (consumer, {key: id_value}),
        trap=f"{producer}() inserted before the call",
        sequence=True,
    )


def _do_droplets() -> Case:
    """DigitalOcean's layout: operation objects are ``$ref`` to other files."""
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "DigitalOcean-style", "version": "2.0"},
        "paths": {"/v2/droplets": {"get": {"$ref": "resources/droplets/droplets_list.yml"}}},
    }
    files = {
        "resources/droplets/droplets_list.yml": (
            "operationId: droplets_list\n"
            "summary: List All Droplets\n"
            "parameters:\n"
            "  - $ref: '../../shared/parameters.yml#/per_page'\n"
            "  - $ref: '../../shared/parameters.yml#/page'\n"
            "responses:\n"
            "  '200':\n"
            "    description: OK\n"
        ),
        "shared/parameters.yml": (
            "per_page:\n  in: query\n  name: per_page\n  required: false\n"
            "  schema: {type: integer, minimum: 1, maximum: 200, default: 20}\n"
            "page:\n  in: query\n  name: page\n  required: false\n"
            "  schema: {type: integer, minimum: 1, default: 1}\n"
        ),
    }
    return Case(
        "$ref-file spec: correct call",
        "issue table",
        "harm",
        "List my droplets, 20 per page.",
        (),
        ("droplets_list", {"per_page": 20, "page": 1}),
        expect="as-written",
        trap="both parameters of a correct call dropped",
        spec=spec,
        files=files,
        request={
            "method": "GET",
            "path": "/v2/droplets",
            "query": {"per_page": 20, "page": 1},
            "body": None,
        },
        skip=_SPEC_ONLY,
    )


_SPEC_ONLY = {
    "decide_tool_calls": "about reading an OpenAPI document",
    "guard": "about reading an OpenAPI document",
    "proxy": "about reading an OpenAPI document",
    "mcp-proxy": "about reading an OpenAPI document",
}


def _sig_key(name: str = "sig", location: str = "query") -> Case:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "signed API", "version": "1.0"},
        "components": {
            "securitySchemes": {"signature": {"type": "apiKey", "in": location, "name": name}}
        },
        "security": [{"signature": []}],
        "paths": {
            "/reports": {
                "get": {
                    "operationId": "listReports",
                    "parameters": [{"name": "month", "in": "query", "required": True, "schema": S}],
                    "responses": {"200": {"description": "OK"}},
                }
            }
        },
    }
    return Case(
        f"securitySchemes '{name}' key kept",
        "issue table" if name == "sig" else "unreadable specs",
        "harm",
        "List the reports of 2024-01.",
        (),
        ("listReports", {"month": "2024-01", name: "k-7f3a9c"}),
        expect="as-written",
        trap="the credential dropped: the request loses its auth",
        spec=spec,
        request={
            "method": "GET",
            "path": "/reports",
            "query": {"month": "2024-01", name: "k-7f3a9c"},
            "body": None,
        },
        skip=_SPEC_ONLY,
    )


# -- generated cases ---------------------------------------------------------------------------

RESOURCES = [
    ("user", "user_id", "u-17"),
    ("config", "key", "theme"),
    ("event", "event_id", "ev-4"),
    ("order", "order_id", "o-88"),
    ("file", "file_id", "f-3"),
    ("invoice", "invoice_id", "inv-7"),
    ("device", "device_id", "d-5"),
    ("job", "job_id", "j-12"),
    ("token", "token_id", "t-9"),
    ("session", "session_id", "s-2"),
    ("record", "record_id", "r-31"),
    ("project", "project_id", "p-4"),
    ("ticket", "ticket_id", "tk-19"),
    ("webhook", "webhook_id", "wh-3"),
    ("backup", "backup_id", "b-6"),
    ("member", "member_id", "m-8"),
    ("secret", "secret_name", "db-pass"),
    ("bucket", "bucket", "logs"),
    ("branch", "branch", "dev"),
    ("cluster", "cluster_id", "c-2"),
]

#: (the model's verb, the one documented verb, what the repair would do)
EFFECT_PAIRS = [
    ("get", "set", "read -> write"),
    ("get", "delete", "read -> delete"),
    ("get", "reset", "read -> reset"),
    ("get", "update", "read -> write"),
    ("fetch", "purge", "read -> purge"),
    ("view", "revoke", "read -> revoke"),
    ("show", "wipe", "read -> wipe"),
    ("check", "clear", "read -> clear"),
    ("describe", "destroy", "read -> destroy"),
    ("read", "remove", "read -> remove"),
    ("list", "post", "read -> create"),
    ("get", "put", "read -> write"),
]


def _effect_pairs() -> Iterator[Case]:
    F = "effect pairs"
    n = 0
    for i, (mine, theirs, what) in enumerate(EFFECT_PAIRS):
        for j in range(4):
            res, key, value = RESOURCES[(i * 4 + j) % len(RESOURCES)]
            how = "camel" if j % 2 else "snake"
            model = style([mine, res], how)
            documented = style([theirs, res], how)
            others = () if j < 2 else (tool(style(["get", "weather"], how), {"city": S}, ["city"]),)
            n += 1
            yield Case(
                f"{model}->{documented}",
                F,
                "harm",
                f"{mine.capitalize()} the {res} {value}.",
                (tool(documented, {key: S}, [key]), *others),
                (model, {key: value}),
                trap=what,
            )
    # one -> many: singular to plural, for writes and reads
    for i, verb in enumerate(
        ["delete", "update", "reset", "archive", "cancel", "get", "disable", "export"]
    ):
        for j in range(2):
            res, key, value = RESOURCES[(i * 2 + j + 5) % len(RESOURCES)]
            how = "camel" if j else "snake"
            model = style([verb, res], how)
            documented = style([verb, res + "s"], how)
            extra: dict[str, Any] = {"status": S} if verb != "get" else {}
            yield Case(
                f"{model}->{documented}",
                F,
                "harm",
                f"{verb.capitalize()} the {res} {value}.",
                (tool(documented, {key: S, **extra}),),
                (model, {key: value}),
                trap="one -> many",
            )
    # a keyboard slip into a destructive verb, behind a version or a prefix the name leads
    # with (``v2_delet_user``): the version hides no verb
    for i, (prefix, slipped, verb) in enumerate(
        [
            ("v2", "delet", "delete"),
            ("api_v1", "remov", "remove"),
            ("v3", "purg", "purge"),
            ("s3", "delte", "delete"),
            ("v1", "destory", "destroy"),
            ("oauth2", "revok", "revoke"),
        ]
    ):
        res, key, value = RESOURCES[(i + 3) % len(RESOURCES)]
        how = "camel" if i % 2 else "snake"
        model = style([*prefix.split("_"), slipped, res], how)
        documented = style([*prefix.split("_"), verb, res], how)
        yield Case(
            f"{model}->{documented}",
            F,
            "harm",
            f"{verb.capitalize()} the {res} {value}.",
            (tool(documented, {key: S}, [key]),),
            (model, {key: value}),
            trap="a slip into a delete, behind a version",
        )
    # the verb says nothing, the MCP hints say it: a read-only name against a destructive tool
    for i, (model, documented) in enumerate(
        [
            ("sync_status", "sync_state"),
            ("job_status", "job_stats"),
            ("queue_peek", "queue_poke"),
            ("cache_info", "cache_flush"),
            ("disk_usage", "disk_purge"),
            ("index_stats", "index_state"),
        ]
    ):
        res, key, value = RESOURCES[i]
        yield Case(
            f"{model}->{documented} (destructiveHint)",
            F,
            "harm",
            f"Show the {model.replace('_', ' ')} of {value}.",
            (
                Tool(
                    documented,
                    {key: S},
                    (key,),
                    method="DELETE",
                    hints={"readOnlyHint": False, "destructiveHint": True},
                ),
                Tool(model + "_v0", {"x": S}, (), method="GET", hints={"readOnlyHint": True}),
            ),
            (model, {key: value}),
            trap="a read -> a destructive tool (by its hints)",
        )


#: one letter apart, different words
NEAR_WORDS = [
    ("sign_contract", "sing_contract"),
    ("sort_positions", "short_positions"),
    ("list_cards", "list_carts"),
    ("get_role", "get_rule"),
    ("send_text", "send_test"),
    ("find_account", "fund_account"),
    ("ship_order", "skip_order"),
    ("fill_order", "kill_order"),
    ("bid_item", "bin_item"),
    ("lend_book", "send_book"),
    ("track_order", "trace_order"),
    ("close_ticket", "clone_ticket"),
    ("clone_repo", "close_repo"),
    ("star_repo", "start_repo"),
    ("get_data", "get_date"),
    ("print_label", "paint_label"),
    ("train_model", "drain_model"),
    ("stop_vm", "step_vm"),
    ("boot_server", "root_server"),
    ("update_price", "update_prize"),
    ("add_card", "add_cart"),
    ("delete_rule", "delete_role"),
    ("get_host", "get_post"),
    ("load_config", "lead_config"),
    ("lock_door", "look_door"),
    ("hold_seat", "sold_seat"),
    ("pay_bill", "play_bill"),
    ("mark_read", "mark_reap"),
    ("rate_driver", "race_driver"),
    ("seal_case", "steal_case"),
]


def _near_words() -> Iterator[Case]:
    F = "one letter, another word"
    for i, (model, documented) in enumerate(NEAR_WORDS):
        _, key, value = RESOURCES[i % len(RESOURCES)]
        how = "camel" if i % 3 == 2 else "snake"
        m, d = style(model.split("_"), how), style(documented.split("_"), how)
        yield Case(
            f"{m}->{d}",
            F,
            "harm",
            f"{model.replace('_', ' ').capitalize()} {value}.",
            (tool(d, {key: S}, [key]),),
            (m, {key: value}),
            trap="another word, one letter away",
        )


#: (the model's parameter, the documented opposite, its schema, the value)
PARAM_OPPOSITES = [
    ("private", "public", B, True),
    ("is_private", "is_public", B, True),
    ("min_price", "max_price", N, 300),
    ("max_price", "min_price", N, 300),
    ("start_date", "end_date", S, "2024-05-01"),
    ("end_date", "start_date", S, "2024-05-31"),
    ("sender", "recipient", S, "alice"),
    ("recipient", "sender", S, "bob"),
    ("include_tags", "exclude_tags", S, "spam"),
    ("exclude_tags", "include_tags", S, "spam"),
    ("allow_list", "deny_list", S, "10.0.0.1"),
    ("deny_list", "allow_list", S, "10.0.0.1"),
    ("created_before", "created_after", S, "2024-01-01"),
    ("created_after", "created_before", S, "2024-01-01"),
    ("from_account", "to_account", S, "acc-1"),
    ("to_account", "from_account", S, "acc-2"),
    ("from_date", "to_date", S, "2024-02-01"),
    ("enable_logging", "disable_logging", B, True),
    ("disable_cache", "enable_cache", B, True),
    ("upper_bound", "lower_bound", N, 10),
    ("lower_bound", "upper_bound", N, 10),
    ("first_name", "last_name", S, "Ada"),
    ("source_path", "destination_path", S, "/tmp/a"),
    ("destination_path", "source_path", S, "/tmp/b"),
    ("buyer_id", "seller_id", S, "u-1"),
    ("payer", "payee", S, "alice"),
    ("debit_account", "credit_account", S, "acc-9"),
    ("older_than", "newer_than", I, 30),
    ("newer_than", "older_than", I, 30),
    ("min_age", "max_age", I, 18),
    ("maxResults", "minResults", I, 5),
    ("startTime", "endTime", S, "09:00"),
    ("inbound", "outbound", B, True),
    ("above", "below", N, 100),
    ("ascending", "descending", B, True),
    ("show_hidden", "hide_hidden", B, True),
    ("input_file", "output_file", S, "in.csv"),
    ("src", "dst", S, "/data"),
    ("grant_role", "revoke_role", S, "admin"),
    ("unlock", "lock", B, True),
    ("read_only", "write_only", B, True),
    ("open_only", "closed_only", B, True),
    ("before", "after", S, "2024-03-01"),
    ("allow", "deny", S, "bob"),
    ("include_deleted", "exclude_deleted", B, True),
]

#: operation names that are opposites
OP_OPPOSITES = [
    ("enable_feature", "disable_feature"),
    ("lockAccount", "unlockAccount"),
    ("archive_project", "unarchive_project"),
    ("follow_user", "unfollow_user"),
    ("subscribe", "unsubscribe"),
    ("muteChannel", "unmuteChannel"),
    ("show_panel", "hide_panel"),
    ("open_position", "close_position"),
    ("start_server", "stop_server"),
    ("increase_quota", "decrease_quota"),
    ("upvote_post", "downvote_post"),
    ("grant_access", "revoke_access"),
    ("add_member", "remove_member"),
    ("encrypt_file", "decrypt_file"),
    ("pin_message", "unpin_message"),
    ("approve_request", "reject_request"),
    ("buy_stock", "sell_stock"),
    ("deposit_funds", "withdraw_funds"),
]


def _opposites() -> Iterator[Case]:
    F = "opposites"
    ops = [
        "search_items",
        "transfer_funds",
        "list_logs",
        "share_file",
        "set_filter",
        "copy_file",
        "create_rule",
    ]
    for i, (model, documented, schema, value) in enumerate(PARAM_OPPOSITES):
        op = ops[i % len(ops)]
        yield Case(
            f"{op}: {model}->{documented}",
            F,
            "harm",
            f"{op.replace('_', ' ').capitalize()} with {model.replace('_', ' ')} {value}.",
            (tool(op, {"name": S, documented: schema}),),
            (op, {"name": "x", model: value}),
            trap="a parameter renamed to its opposite",
        )
    for model, documented in OP_OPPOSITES:
        yield Case(
            f"{model}->{documented}",
            F,
            "harm",
            f"{' '.join(words(model)).capitalize()} for a-1.",
            (tool(documented, {"id": S}, ["id"]),),
            (model, {"id": "a-1"}),
            trap="an operation renamed to its opposite",
        )


#: scope, safety and tenancy arguments a spec leaves out: (name, value, what is lost)
FLAGS = [
    ("where", "id=5", "the whole table"),
    ("filter", "status eq 'draft'", "everything, unfiltered"),
    ("dry_run", True, "a dry run becomes the real thing"),
    ("tenant_id", "t-42", "an unscoped call"),
    ("account_id", "acc-7", "another account"),
    ("limit", 5, "no limit"),
    ("force", False, "forced"),
    ("confirm", False, "unconfirmed"),
    ("user_id", "u-3", "every user"),
    ("org_id", "org-2", "every org"),
    ("project_id", "p-9", "every project"),
    ("workspace_id", "ws-1", "every workspace"),
    ("region", "eu-west-1", "the default region"),
    ("namespace", "staging", "the default namespace"),
    ("environment", "staging", "production"),
    ("sandbox", True, "live mode"),
    ("test_mode", True, "live mode"),
    ("validate_only", True, "applied"),
    ("preview", True, "applied"),
    ("soft_delete", True, "a hard delete"),
    ("recursive", False, "recursive by default"),
    ("cascade", False, "cascading"),
    ("notify", False, "everyone notified"),
    ("owner_id", "u-3", "anyone's"),
    ("max_results", 10, "unbounded"),
    ("scope", "read", "full scope"),
    ("keep_backup", True, "no backup"),
    ("simulate", True, "executed"),
]


def _scope_flags() -> Iterator[Case]:
    F = "scope and safety flags"
    ops = [
        ("delete_records", {"table": S}, {"table": "users"}),
        ("list_invoices", {"status": S}, {"status": "open"}),
        ("purge_messages", {"channel": S}, {"channel": "general"}),
        ("update_settings", {"theme": S}, {"theme": "dark"}),
        ("deploy_app", {"app": S}, {"app": "shop"}),
        ("reset_passwords", {"reason": S}, {"reason": "audit"}),
    ]
    for i, (flag, value, what) in enumerate(FLAGS):
        for k in range(2):
            name, params, args = ops[(i + k * 3) % len(ops)]
            yield Case(
                f"{name}: {flag} dropped",
                F,
                "harm",
                f"{name.replace('_', ' ').capitalize()} ({flag}={value}).",
                (tool(name, params, list(params)),),
                (name, {**args, flag: value}),
                trap=what,
            )


#: (text the model wrote, the documented schema, what a lossy coercion does)
LOSSY = [
    ("0123", I, "leading zero lost"),
    ("007", I, "leading zeros lost"),
    ("02134", I, "a zip code's zero lost"),
    ("0042", {"type": "integer", "format": "int32"}, "leading zeros lost"),
    ("1e-400", N, "underflow to 0"),
    ("1e400", N, "overflow to infinity"),
    ("-1e-330", N, "underflow to -0"),
    ("2147483648", {"type": "integer", "format": "int32"}, "int32 overflow"),
    ("99999999999", {"type": "integer", "format": "int32"}, "int32 overflow"),
    ("1.00000000000000001", N, "rounded to 1.0"),
    ("0.1000000000000000055511151231257827", N, "rounded"),
    ("123456789012345678901234567890.5", N, "rounded to a double"),
    ("１２３", I, "fullwidth digits"),
    ("٣", I, "Arabic-Indic digit"),
    ("१२३", I, "Devanagari digits"),
    ("²", I, "a superscript"),
    ("４.５", N, "fullwidth digits"),
    ("\u22125", I, "a Unicode minus"),
    ('{"a":1,"a":2}', O, "a duplicate key's first value lost"),
    ('{"id":1,"id":1,"role":"x"}', O, "duplicate keys"),
    ("NaN", N, "NaN"),
    ("Infinity", N, "Infinity"),
    ("-Infinity", N, "-Infinity"),
    ("nan", N, "NaN"),
    (" 42", I, "whitespace dropped"),
    ("42\n", I, "whitespace dropped"),
    ("4 2", I, "two numbers made one"),
    ("1_000", I, "underscores dropped"),
    ("0x1F", I, "hex read"),
    ("1", B, "1 read as true"),
    ("0", B, "0 read as false"),
    ("yes", B, "yes read as true"),
    ("on", B, "on read as true"),
    ("[1e400]", {"type": "array", "items": N}, "overflow inside JSON text"),
    ("1,2", {"type": "array", "items": I}, "a comma list split"),
    ('{"a": NaN}', O, "NaN inside JSON text"),
]


def _lossy_values() -> Iterator[Case]:
    F = "lossy values"
    ops = [
        ("pay_invoice", "cvv"),
        ("set_limit", "value"),
        ("create_order", "quantity"),
        ("update_item", "field"),
    ]
    for i, (text, schema, what) in enumerate(LOSSY):
        op, _ = ops[i % len(ops)]
        param = {
            "integer": "amount",
            "number": "amount",
            "boolean": "enabled",
            "object": "metadata",
            "array": "ids",
        }[schema["type"]]
        if text in ("0123", "007", "0042"):
            param = "cvv" if text != "0042" else "pin"
        if text == "02134":
            param = "zip"
        yield Case(
            f"{op}: {param}={text!r}",
            F,
            "harm",
            f"{op.replace('_', ' ').capitalize()} with {param} {text.strip()}.",
            (
                Tool(
                    op,
                    {"ref": S, param: dict(schema)},
                    ("ref", param),
                    method="POST",
                    hints=hints_of("create"),
                ),
            ),
            (op, {"ref": "r-1", param: text}),
            trap=what,
        )


#: producers with side effects, each the one that gives a consumer's id
PRODUCERS = [
    ("startExport", "POST", "getExport", "export_id", "Show me export status."),
    ("createSession", "POST", "getSession", "session_id", "Which session am I in?"),
    ("generateReport", "POST", "getReport", "report_id", "Show me the report."),
    ("purgeQueue", "DELETE", "getQueueMessage", "message_id", "What does the message say?"),
    ("clearCart", "DELETE", "getCartItem", "item_id", "What is in my cart?"),
    ("issueRefund", "POST", "getRefund", "refund_id", "Where is my refund?"),
    ("provisionServer", "POST", "getServer", "server_id", "Is my server up?"),
    ("sendInvite", "POST", "getInvite", "invite_id", "Was my invite accepted?"),
    ("resetPassword", "POST", "getResetStatus", "reset_id", "Did my password reset go through?"),
    ("cancelSubscription", "DELETE", "getSubscription", "subscription_id", "What plan am I on?"),
]


def _producers() -> Iterator[Case]:
    for producer, method, consumer, key, instruction in PRODUCERS:
        yield _inserted(producer, method, consumer, key, instruction, "inserted calls")


#: HTTP method changes: the model's method, the path's only documented one
METHODS = [
    ("GET", "DELETE"),
    ("GET", "PUT"),
    ("GET", "POST"),
    ("GET", "PATCH"),
    ("PATCH", "PUT"),
    ("POST", "PUT"),
    ("PUT", "DELETE"),
    ("HEAD", "DELETE"),
    ("GET", "DELETE"),
    ("PATCH", "DELETE"),
]


def _methods() -> Iterator[Case]:
    F = "HTTP methods"
    for i, (mine, theirs) in enumerate(METHODS):
        res, key, value = RESOURCES[(i + 3) % len(RESOURCES)]
        path = f"/{res}s/{{{key}}}"
        op: dict[str, Any] = {
            "operationId": f"{theirs.lower()}_{res}",
            "parameters": [{"name": key, "in": "path", "required": True, "schema": S}],
            "responses": {"200": {"description": "OK"}},
        }
        if theirs in ("PUT", "POST", "PATCH"):
            op["requestBody"] = {
                "content": {
                    "application/json": {"schema": {"type": "object", "properties": {"note": S}}}
                }
            }
        spec = {
            "openapi": "3.0.3",
            "info": {"title": "m", "version": "1"},
            "paths": {path: {theirs.lower(): op}},
        }
        body = {"note": "x"} if mine in ("PUT", "POST", "PATCH") else None
        yield Case(
            f"{mine} /{res}s/{{id}} -> {theirs}",
            F,
            "harm",
            f"{'Show' if mine in ('GET', 'HEAD') else 'Change'} the {res} {value}.",
            (),
            (f"{mine.lower()}_{res}", {key: value}),
            trap=f"{mine} becomes {theirs}",
            spec=spec,
            request={"method": mine, "path": f"/{res}s/{value}", "query": {}, "body": body},
            skip={
                **_SPEC_ONLY,
                "ReactRunner": "the model names an operation, not a method",
                "audit --fix (call)": "an HTTP request",
            },
        )


def _unreadable() -> Iterator[Case]:
    for name in ("signature", "k", "auth", "access", "token_v2", "apiKey2"):
        yield _sig_key(name)


def generated_cases() -> list[Case]:
    """At least 200 harm cases over operation and parameter pairs."""
    return [
        *_effect_pairs(),
        *_near_words(),
        *_opposites(),
        *_scope_flags(),
        *_lossy_values(),
        *_producers(),
        *_methods(),
        *_unreadable(),
    ]


# -- controls: certain repairs, kept ---------------------------------------------------------


def control_cases() -> list[Case]:
    """Repairs that only make a call say more exactly what the model wrote."""
    F = "controls"
    out: list[Case] = []

    def add(cid: str, instruction: str, tools: tuple[Tool, ...], call: Call, fixed: Call) -> None:
        out.append(
            Case(cid, F, "control", instruction, tools, call, expect="repair", repaired=fixed)
        )

    # operation names: case and separator variants
    for model, documented, key, value in [
        ("GetUser", "getUser", "userId", "u-1"),
        ("get_user", "getUser", "userId", "u-2"),
        ("list-events", "list_events", "calendar", "work"),
        ("SearchBooks", "search_books", "query", "dune"),
        ("getorder", "getOrder", "orderId", "o-1"),
        ("GET_WEATHER", "get_weather", "city", "Paris"),
        ("createInvoice", "create_invoice", "amount", 12),
        ("Send_Message", "send_message", "text", "hi"),
    ]:
        add(
            f"name {model}->{documented}",
            f"{' '.join(words(model)).capitalize()} {value}.",
            (tool(documented, {key: _schema_of(value)}, [key]),),
            (model, {key: value}),
            (documented, {key: value}),
        )
    # a keyboard slip inside a word
    for model, documented, key, value in [
        ("getEvnt", "getEvent", "eventId", "ev-1"),
        ("serach_books", "search_books", "query", "dune"),
        ("get_weahter", "get_weather", "city", "Lima"),
        ("listInvoces", "listInvoices", "status", "open"),
        ("creat_ticket", "create_ticket", "title", "Broken"),
        ("update_proifle", "update_profile", "bio", "hi"),
        ("v2_creat_ticket", "v2_create_ticket", "title", "Broken"),  # behind a version
    ]:
        add(
            f"slip {model}->{documented}",
            f"{' '.join(words(documented)).capitalize()} {value}.",
            (tool(documented, {key: S}, [key]), tool("ping", {})),
            (model, {key: value}),
            (documented, {key: value}),
        )
    # parameter names: case and separator variants, and slips
    for model, documented, value in [
        ("City", "city", "Paris"),
        ("user_id", "userId", "u-3"),
        ("max-results", "max_results", 5),
        ("PageSize", "page_size", 20),
        ("calendarID", "calendar_id", "work"),
        ("ordr_id", "order_id", "o-9"),
        ("quantitiy", "quantity", 2),
        ("EMAIL", "email", "a@b.c"),
    ]:
        add(
            f"param {model}->{documented}",
            f"Look up {value}.",
            (tool("lookup", {documented: _schema_of(value), "verbose": B}, [documented]),),
            ("lookup", {model: value}),
            ("lookup", {documented: value}),
        )
    # values: text of a number, a boolean, JSON text
    for text, schema, value in [
        ("3", I, 3),
        ("42", I, 42),
        ("-7", I, -7),
        ("2.5", N, 2.5),
        ("0.25", N, 0.25),
        ("10", N, 10),
        ("true", B, True),
        ("false", B, False),
        ('{"a": 1}', O, {"a": 1}),
        ('{"tags": ["x"], "n": 2}', O, {"tags": ["x"], "n": 2}),
        ("[1, 2, 3]", {"type": "array", "items": I}, [1, 2, 3]),
        ('["a", "b"]', {"type": "array", "items": S}, ["a", "b"]),
    ]:
        add(
            f"value {text!r} for {schema['type']}",
            f"Configure it with {text}.",
            (
                Tool(
                    "configure",
                    {"ref": S, "value": dict(schema)},
                    ("ref", "value"),
                    method="POST",
                    hints=hints_of("create"),
                ),
            ),
            ("configure", {"ref": "r-1", "value": text}),
            ("configure", {"ref": "r-1", "value": value}),
        )
    # a value only one documented parameter's enum holds
    for model, documented, enum, value in [
        ("measure", "unit", ["celsius", "fahrenheit"], "fahrenheit"),
        ("order", "sort", ["asc", "desc"], "desc"),
        ("kind", "format", ["pdf", "csv", "xlsx"], "xlsx"),
        ("mode", "transport", ["driving", "walking", "transit"], "walking"),
    ]:
        add(
            f"enum value {model}->{documented}",
            f"Do it with {value}.",
            (
                tool(
                    "run_query",
                    {"q": S, documented: {"type": "string", "enum": enum}, "note": S},
                    ["q"],
                ),
            ),
            ("run_query", {"q": "x", model: value}),
            ("run_query", {"q": "x", documented: value}),
        )
    return out


def all_cases() -> list[Case]:
    cases = [*designed_cases(), *generated_cases(), *control_cases()]
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise ValueError(f"two cases named {c.id!r}")
        seen.add(c.id)
    return cases

"""The E3 findings a person reads: each field of a spelling variant, a missing required
parameter and the one finding for the unknown names past the first hundred, for an
HTTP query and for a tool call's arguments."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Finding, Scanner

BASE = "https://api.example.org"
SPEC = {
    "openapi": "3.0.0",
    "info": {"title": "items", "version": "1"},
    "servers": [{"url": BASE}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "description": "How many items.",
                        "schema": {"type": "integer"},
                    },
                    {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}
TOOLS = [
    {
        "name": "f",
        "description": "d",
        "parameters": {
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "description": "How many."},
                "q": {"type": "string"},
            },
            "required": ["q"],
        },
    }
]


@pytest.fixture(scope="module")
def http() -> Scanner:
    return Scanner(ApiCatalog.from_obj(SPEC), retriever=None)


@pytest.fixture(scope="module")
def tools() -> Scanner:
    return Scanner(ApiCatalog.from_tools(TOOLS), retriever=None)


def _one(scanner: Scanner, call: Any) -> Finding:
    [finding] = scanner.iter_findings(call)
    return finding


def test_a_spelling_variant_says_where_and_what_was_meant(http: Scanner, tools: Scanner) -> None:
    assert _one(http, f"GET {BASE}/items?q=a&Limit=5") == Finding(
        "E3.2",
        ("query", "Limit"),
        "Limit",
        expected="limit",
        suggestion="limit",
        operation="listItems",
        doc="limit (query, integer, optional): How many items.",
        message="unknown query parameter 'Limit'; it is a spelling variant of 'limit'",
    )
    assert _one(tools, {"name": "f", "arguments": {"q": "a", "Limit": 5}}) == Finding(
        "E3.2",
        ("argument", "Limit"),
        "Limit",
        expected="limit",
        suggestion="limit",
        operation="f",
        doc="limit (argument, integer, optional): How many.",
        message="unknown parameter 'Limit'; it is a spelling variant of 'limit'",
    )


def test_a_missing_required_parameter_says_where(http: Scanner, tools: Scanner) -> None:
    assert _one(http, f"GET {BASE}/items?limit=5").message == (
        "required query parameter 'q' is missing"
    )
    assert _one(tools, {"name": "f", "arguments": {"limit": 5}}).message == (
        "required parameter 'q' is missing"
    )


def test_unknown_names_past_the_first_hundred_are_one_finding(http: Scanner) -> None:
    names = "&".join(f"u{i}=1" for i in range(103))
    findings = list(http.iter_findings(f"GET {BASE}/items?q=a&{names}"))
    assert len(findings) == 101
    assert findings[-1] == Finding(
        "E3",
        ("query", "u100"),
        "u100",
        expected=["limit", "q"],
        operation="listItems",
        message="unknown query parameter 'u100' and 2 more unknown names after it (the "
        "first 100 are reported one by one); listItems takes: limit, q",
    )


def test_unknown_arguments_past_the_first_hundred_are_one_finding(tools: Scanner) -> None:
    arguments = {"q": "a", **{f"u{i}": 1 for i in range(102)}}
    findings = list(tools.iter_findings({"name": "f", "arguments": arguments}))
    assert len(findings) == 101
    assert findings[-1].message == (
        "unknown parameter 'u100' and 1 more unknown name after it (the first 100 are "
        "reported one by one); f takes: limit, q"
    )


def test_one_unknown_name_past_the_first_hundred_is_named_alone(tools: Scanner) -> None:
    arguments = {"q": "a", **{f"u{i}": 1 for i in range(101)}}
    findings = list(tools.iter_findings({"name": "f", "arguments": arguments}))
    assert len(findings) == 101
    assert findings[-1].message == (
        "unknown parameter 'u100' (the first 100 are reported one by one); f takes: limit, q"
    )


def test_a_name_of_other_operations_belongs_to_the_one_sharing_most_arguments() -> None:
    def tool(name: str, *params: str) -> dict[str, Any]:
        properties = {p: {"type": "string"} for p in params}
        return {"name": name, "description": "d", "parameters": {"properties": properties}}

    catalog = ApiCatalog.from_tools(
        [
            tool("getWeather", "city"),
            tool("getNews", "topic", "lang"),
            tool("getRoute", "lang", "to"),
        ]
    )
    scanner = Scanner(catalog, retriever=None)

    def said(**arguments: str) -> list[str]:
        call = {"name": "getWeather", "arguments": {"city": "P", **arguments}}
        return [f.message for f in scanner.iter_findings(call)]

    assert said(lang="en") == ["parameter 'lang' belongs to getNews, not to getWeather"]
    assert said(lang="en", to="x") == [
        "parameter 'lang' belongs to getRoute, not to getWeather",
        "parameter 'to' belongs to getRoute, not to getWeather",
    ]


def test_with_an_instruction_the_name_belongs_to_the_operation_it_ranks_first(
    api_retriever: Any,
) -> None:
    """Two operations document ``lang`` and share as many of the call's arguments; the
    instruction (ranked with the real embedding model) says which one was meant."""

    def tool(name: str, description: str, *params: str) -> dict[str, Any]:
        properties = {p: {"type": "string"} for p in params}
        return {"name": name, "description": description, "parameters": {"properties": properties}}

    catalog = ApiCatalog.from_tools(
        [
            tool("getWeather", "Current weather of a city", "city"),
            tool("getNews", "Latest news headlines on a topic", "topic", "lang"),
            tool("getRoute", "Driving directions between two places", "lang", "to"),
        ]
    )
    scanner = Scanner(catalog, retriever=api_retriever)
    call = {"name": "getWeather", "arguments": {"city": "P", "lang": "en"}}

    def belongs(instruction: str | None) -> list[str]:
        found = scanner.iter_findings(call, instruction=instruction)
        return [f.message for f in found if f.code == "E3.1"]

    assert belongs(None) == ["parameter 'lang' belongs to getNews, not to getWeather"]
    assert belongs("Give me driving directions to Lyon") == [
        "parameter 'lang' belongs to getRoute, not to getWeather"
    ]
    assert belongs("What are the latest news headlines about sport?") == [
        "parameter 'lang' belongs to getNews, not to getWeather"
    ]

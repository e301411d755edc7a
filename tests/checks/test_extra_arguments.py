"""Arguments the docs take beyond those they list (``additionalProperties``): a tool
whose parameters say ``additionalProperties: true`` or give a schema there takes them
(checked against that schema), and a JSON body's typed ``additionalProperties`` checks
its extra fields. Before, a map-style tool (``{"env": "prod"}`` for labels) drew E3 on
every call, and an extra body field of the wrong type was reported clean."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner

TOOLS = [
    {
        "name": "set_counts",
        "description": "Set the count of each fruit",
        "parameters": {
            "type": "object",
            "properties": {"label": {"type": "string"}},
            "additionalProperties": {"type": "integer", "minimum": 0},
        },
    },
    {
        "name": "tag_instance",
        "description": "Tag an instance: each argument is a tag name and its value",
        "parameters": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    {
        "name": "log_event",
        "description": "Log an event with any fields",
        "parameters": {
            "type": "object",
            "properties": {"event": {"type": "string"}},
            "required": ["event"],
            "additionalProperties": True,
        },
    },
    {
        "name": "get_user",
        "description": "Get a user",
        "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}}},
    },
]

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "fruit", "version": "1"},
    "paths": {
        "/fruit": {
            "post": {
                "operationId": "setFruit",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}},
                                "additionalProperties": {"type": "integer"},
                            }
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


@pytest.fixture(scope="module")
def tools() -> Scanner:
    return Scanner(ApiCatalog.from_tools(TOOLS), retriever=None)


def found(scanner: Scanner, request: Any) -> list[tuple[str, tuple[str, ...], str]]:
    return [(f.code, f.location, f.message) for f in scanner.iter_findings(request)]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("set_counts", {"label": "basket", "apples": 3, "pears": 0}),
        ("tag_instance", {"env": "prod", "team": "search"}),
        ("log_event", {"event": "login", "user": "ann", "attempts": 2}),
    ],
)
def test_arguments_a_tool_takes_beyond_those_it_lists_are_clean(
    tools: Scanner, name: str, arguments: dict[str, Any]
) -> None:
    assert found(tools, {"name": name, "arguments": arguments}) == []


def test_they_are_checked_against_what_the_tool_says_of_them(tools: Scanner) -> None:
    call = {"name": "set_counts", "arguments": {"label": "basket", "apples": "three"}}
    assert found(tools, call) == [
        ("E4.1", ("argument", "apples"), "apples must be an integer, got string 'three'")
    ]
    call = {"name": "set_counts", "arguments": {"pears": -1}}
    assert found(tools, call) == [
        ("E4.2", ("argument", "pears"), "pears: -1 breaks the documented minimum 0")
    ]
    call = {"name": "tag_instance", "arguments": {"env": 3}}
    assert found(tools, call) == [
        ("E4.1", ("argument", "env"), "env must be a string, got integer 3")
    ]


def test_a_tool_that_says_nothing_of_others_takes_none(tools: Scanner) -> None:
    call = {"name": "get_user", "arguments": {"user_id": "u1", "verbose": True}}
    assert found(tools, call) == [
        ("E3", ("argument", "verbose"), "unknown parameter 'verbose'; get_user takes: user_id")
    ]


def test_a_json_bodys_extra_fields_are_checked_against_its_additional_properties() -> None:
    scanner = Scanner(ApiCatalog.from_obj(SPEC), retriever=None)
    request = {"method": "POST", "url": "/fruit", "json": {"name": "bowl", "apples": 3}}
    assert found(scanner, request) == []
    request["json"] = {"name": "bowl", "apples": "x"}
    assert found(scanner, request) == [
        ("E4.1", ("body", "apples"), "apples must be an integer, got string 'x'")
    ]


def test_the_tools_a_catalog_writes_keep_what_they_take() -> None:
    written = ApiCatalog.from_tools(TOOLS).to_tools()
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in written}
    assert schemas["tag_instance"]["additionalProperties"] == {"type": "string"}
    assert schemas["log_event"]["additionalProperties"] is True
    assert "additionalProperties" not in schemas["get_user"]


def _fruit(body: dict[str, Any] | None) -> Scanner:
    """A POST /fruit whose JSON body is ``body`` (none documented for ``None``), with one
    query parameter."""
    op: dict[str, Any] = {
        "operationId": "setFruit",
        "parameters": [{"name": "size", "in": "query", "schema": {"type": "integer"}}],
        "responses": {"200": {"description": "ok"}},
    }
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    spec = {"openapi": "3.0.3", "info": {"title": "fruit", "version": "1"}, "paths": {}}
    spec["paths"] = {"/fruit": {"post": op}}
    return Scanner(ApiCatalog.from_obj(spec), retriever=None)


def test_what_a_body_takes_beyond_its_fields_is_no_query_parameter_or_header() -> None:
    body = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "additionalProperties": {"type": "integer"},
    }
    scanner = _fruit(body)
    request = {"method": "POST", "url": "/fruit?colour=red", "json": {"name": "bowl"}}
    assert found(scanner, request) == [
        ("E3", ("query", "colour"), "unknown query parameter 'colour'; setFruit takes: size, name")
    ]
    request = {"method": "POST", "url": "/fruit", "headers": {"X-Trace": "abc"}, "json": {}}
    assert found(scanner, request) == []


@pytest.mark.parametrize(
    ("body", "sent", "expected"),
    [
        # no body documented: a field sent is unknown, not a crash
        (
            None,
            {"name": "bowl"},
            [("E3", ("body", "name"), "unknown body parameter 'name'; setFruit takes: size")],
        ),
        # a body that lists no fields takes any, unless it says it takes none
        ({"type": "object"}, {"name": "bowl"}, []),
        (
            {"type": "object", "additionalProperties": False},
            {"name": "bowl"},
            [("E3", ("body", "name"), "unknown body parameter 'name'; setFruit takes: size")],
        ),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            {"apples": "x"},
            [("E4.1", ("body", "apples"), "apples must be an integer, got string 'x'")],
        ),
    ],
)
def test_a_body_that_lists_no_fields(
    body: dict[str, Any] | None, sent: dict[str, Any], expected: list[Any]
) -> None:
    assert found(_fruit(body), {"method": "POST", "url": "/fruit", "json": sent}) == expected


def test_an_argument_the_tool_takes_beyond_its_list_hides_no_listed_one(tools: Scanner) -> None:
    call = {"name": "set_counts", "arguments": {"apples": 3, "label": 5}}
    assert found(tools, call) == [
        ("E4.1", ("argument", "label"), "label must be a string, got integer 5")
    ]


def test_an_open_body_takes_extra_fields_in_a_call_in_function_form() -> None:
    call = {"name": "setFruit", "arguments": {"name": "bowl", "ripe": True}}
    assert found(_fruit({"type": "object"}), call) == []


def test_a_composed_bodys_extra_fields_are_checked_with_its_fields() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "tag": {"type": "string"}},
        "oneOf": [{"required": ["name"]}, {"required": ["tag"]}],
        "additionalProperties": {"type": "integer"},
    }
    content = {"application/json": {"schema": schema}}
    post = {"operationId": "addPet", "requestBody": {"content": content}, "responses": {}}
    spec = {"openapi": "3.0.3", "info": {"title": "pets", "version": "1"}, "paths": {}}
    spec["paths"] = {"/pets": {"post": post}}
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    request = {"method": "POST", "url": "/pets", "json": {"name": "rex", "age": "old"}}
    assert found(scanner, request) == [
        ("E4.1", ("body", "age"), "age must be an integer, got string 'old'")
    ]
    request["json"] = {"name": "rex", "age": 3}
    assert found(scanner, request) == []

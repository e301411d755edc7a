"""Where an argument that names no documented parameter is still accepted, and what E3
says about it: a piece of an object sent in the query that was left as it came, a body
field taken by an ``additionalProperties`` inside a composition, an operation with no
parameters, and one whose documentation was only partly read. Each catalog is built per
test (a catalog built once at import would hide a change to the code that builds it)."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Finding, Operation, Parameter, Scanner, SpecWarning

HOST = "https://api.example.com"

#: ``filter`` has no type (its pieces are not put together: accepted as pieces of it);
#: ``area``'s properties are query keys, left as they came when ``area`` is sent whole
#: as well; ``near`` (not exploded),
#: ``box`` (deepObject, exploded) and the cookie ``prefs`` give the query no keys of their own
PIECES: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "items", "version": "1"},
    "servers": [{"url": HOST}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [
                    {"name": "filter", "in": "query", "required": True, "style": "deepObject",
                     "schema": {"description": "any"}},
                    {"name": "near", "in": "query", "explode": False,
                     "schema": {"type": "object", "properties": {"east": {"type": "number"}}}},
                    {"name": "box", "in": "query", "style": "deepObject", "explode": True,
                     "schema": {"type": "object", "properties": {"north": {"type": "number"}}}},
                    {"name": "prefs", "in": "cookie",
                     "schema": {"type": "object", "properties": {"theme": {"type": "string"}}}},
                    {"name": "area", "in": "query",
                     "schema": {"type": "object",
                                "properties": {"radius": {"type": "number"}}}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}  # fmt: skip

TAKES = "listItems takes: filter, near, box, prefs, area"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # the required `filter`, sent as a piece of it
        ("filter[status]=open", []),
        # a property of `area` (form-exploded: a key of the query), beside `area` sent
        # whole (`{}`): left as it came, it is still no unknown name
        ("filter[status]=open&area=%7B%7D&radius=3", []),
        ("filter[status]=open&east=3",
         [("E3", ("query", "east"), f"unknown query parameter 'east'; {TAKES}")]),
        ("filter[status]=open&north=3",
         [("E3", ("query", "north"), f"unknown query parameter 'north'; {TAKES}")]),
        ("filter[status]=open&theme=dark",
         [("E3", ("query", "theme"), f"unknown query parameter 'theme'; {TAKES}")]),
    ],
)  # fmt: skip
def test_pieces_left_as_they_came_belong_to_their_object(
    query: str, expected: list[tuple[Any, ...]]
) -> None:
    scanner = Scanner(ApiCatalog.from_obj(PIECES, source="items"), retriever=None)
    request = {"method": "GET", "url": f"{HOST}/items?{query}"}
    assert [(f.code, f.location, f.message) for f in scanner.iter_findings(request)] == expected


def _nested(levels: int, inner: dict[str, Any]) -> dict[str, Any]:
    for _ in range(levels):
        inner = {"allOf": [inner]}
    return inner


def _body_spec(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": HOST}],
        "paths": {
            "/pets": {
                "post": {
                    "operationId": "addPet",
                    "requestBody": {"content": {"application/json": {"schema": schema}}},
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }


NAME = {"type": "object", "properties": {"name": {"type": "string"}}}
EXTRA = [("E3", ("body", "extra"), "unknown body parameter 'extra'; addPet takes: name")]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        # an `additionalProperties` in any part of a composition takes fields not listed
        ({**NAME, "allOf": [{"required": ["name"]}, {"additionalProperties": {}}]}, []),
        ({**NAME, "oneOf": [{"required": ["name"]}, {"additionalProperties": {}}]}, []),
        ({**NAME, "anyOf": [{"required": ["name"]}, {"additionalProperties": {}}]}, []),
        ({**NAME, "anyOf": [{"required": ["name"]}, {"minProperties": 1}]}, EXTRA),
        # ... looked for nine compositions deep, and no deeper
        ({**NAME, "allOf": [_nested(8, {"additionalProperties": {}})]}, []),
        ({**NAME, "allOf": [_nested(9, {"additionalProperties": {}})]}, EXTRA),
    ],
)
def test_a_body_composed_open_takes_fields_it_does_not_list(
    schema: dict[str, Any], expected: list[tuple[Any, ...]]
) -> None:
    scanner = Scanner(ApiCatalog.from_obj(_body_spec(schema), source="t"), retriever=None)
    request = {
        "method": "POST",
        "url": f"{HOST}/pets",
        "headers": {"Content-Type": "application/json"},
        "body": {"name": "rex", "extra": 1},
    }
    assert [(f.code, f.location, f.message) for f in scanner.iter_findings(request)] == expected


def _get(opid: str, parameters: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "get": {
            "operationId": opid,
            "parameters": parameters,
            "responses": {"200": {"description": "ok"}},
        }
    }


def test_what_an_operation_without_parameters_takes_is_none() -> None:
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": HOST}],
        "paths": {"/ping": _get("ping", [])},
    }
    scanner = Scanner(ApiCatalog.from_obj(spec, source="t"), retriever=None)
    (finding,) = scanner.iter_findings({"method": "GET", "url": f"{HOST}/ping?x=1"})
    assert (finding.code, finding.message) == (
        "E3",
        "unknown query parameter 'x'; ping takes: none",
    )


def test_a_parameter_without_a_type_is_documented_as_any() -> None:
    q = {"name": "q", "in": "query", "required": True, "description": "what to find"}
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": HOST}],
        "paths": {"/search": _get("search", [q])},
    }
    scanner = Scanner(ApiCatalog.from_obj(spec, source="t"), retriever=None)
    (finding,) = scanner.iter_findings({"method": "GET", "url": f"{HOST}/search"})
    assert (finding.code, finding.message, finding.doc) == (
        "E3.4",
        "required query parameter 'q' is missing",
        "q (query, any, required): what to find",
    )


@pytest.mark.parametrize(
    ("places", "note"),
    [
        (1, "(paths./a.get.parameters[0].typ)"),
        (2, "(paths./a.get.parameters[0].typ and 1 more place)"),
        (3, "(paths./a.get.parameters[0].typ and 2 more places)"),
    ],
)
def test_an_unknown_name_says_where_the_docs_were_not_read(places: int, note: str) -> None:
    # `typ` for `type`: a key the loader does not know, so that place is not read
    parameters = [{"name": f"p{i}", "in": "query", "typ": "string"} for i in range(places)]
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": HOST}],
        "paths": {"/a": _get("listA", parameters)},
    }
    with pytest.warns(SpecWarning):
        scanner = Scanner(ApiCatalog.from_obj(spec, source="t"), retriever=None)
    (finding,) = scanner.iter_findings({"method": "GET", "url": f"{HOST}/a?z=1"})
    takes = ", ".join(f"p{i}" for i in range(places))
    assert (finding.code, finding.message) == (
        "E3",
        f"unknown query parameter 'z'; listA takes: {takes}; "
        f"listA's documentation was only partly read {note}",
    )


def test_a_query_object_without_a_type_is_one_by_its_properties() -> None:
    # no "type", only properties: still an object, whose properties are query keys
    area = Parameter("area", "query", schema={"properties": {"radius": {"type": "number"}}})
    op = Operation("listItems", method="GET", path="/items", parameters=(area,))
    scanner = Scanner(ApiCatalog([op]), retriever=None)
    assert list(scanner.iter_findings({"method": "GET", "url": "/items?radius=3"})) == []
    [wrong] = scanner.iter_findings({"method": "GET", "url": "/items?radius=east"})
    assert (wrong.code, wrong.location) == ("E4.1", ("query", "area", "radius"))


def test_a_query_object_without_a_style_is_form_exploded() -> None:
    # a catalog made of `Operation`s: a parameter given no style is OpenAPI's default
    area = Parameter(
        "area", "query", schema={"type": "object", "properties": {"radius": {"type": "number"}}}
    )
    op = Operation("listItems", method="GET", path="/items", parameters=(area,))
    scanner = Scanner(ApiCatalog([op]), retriever=None)
    request = {"method": "GET", "url": "/items?area=%7B%7D&radius=3"}
    assert list(scanner.iter_findings(request)) == []


def _object_body_findings(schema: dict[str, Any], body: Any) -> list[tuple[Any, ...]]:
    scanner = Scanner(ApiCatalog.from_obj(_body_spec(schema), source="t"), retriever=None)
    request = {
        "method": "POST",
        "url": f"{HOST}/pets",
        "headers": {"Content-Type": "application/json"},
        "body": body,
    }
    return [(f.code, f.location, f.message) for f in scanner.iter_findings(request)]


@pytest.mark.parametrize(
    ("constraint", "body", "message"),
    [
        (
            {"maxProperties": 1},
            {"a": 1, "b": 2},
            "{'a': 1, 'b': 2} breaks the documented maxProperties 1",
        ),
        ({"minProperties": 2}, {"a": 1}, "{'a': 1} breaks the documented minProperties 2"),
        (
            {"dependentRequired": {"a": ["b"]}},
            {"a": 1},
            "{'a': 1} breaks the documented dependentRequired {'a': ['b']}",
        ),
        (
            {"propertyNames": {"maxLength": 1}, "additionalProperties": True},
            {"a": 1, "bb": 2},
            "'bb' breaks the documented maxLength 1",
        ),
    ],
)
def test_what_a_body_schema_says_of_the_whole_object_is_checked(
    constraint: dict[str, Any], body: dict[str, Any], message: str
) -> None:
    # the fields are checked one by one; what the schema says of the object as a whole
    # was checked nowhere, and such a body was reported clean
    fields = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    schema = {"type": "object", "properties": fields, **constraint}
    assert _object_body_findings(schema, body) == [("E4.2", ("body",), f"body: {message}")]


def test_a_body_within_its_whole_object_bounds_is_clean() -> None:
    fields = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    bounds = {"maxProperties": 2, "minProperties": 1, "dependentRequired": {"a": ["b"]}}
    # the bounds in an allOf part count as at the top
    schema = {"allOf": [{"type": "object", "properties": fields}, bounds]}
    assert _object_body_findings(schema, {"a": 1, "b": 2}) == []
    assert _object_body_findings(schema, {"b": 2}) == []
    assert _object_body_findings(schema, {"a": 1}) == [
        ("E4.2", ("body",), "body: {'a': 1} breaks the documented dependentRequired {'a': ['b']}")
    ]


def test_whole_object_keywords_at_the_top_and_in_allof_parts_all_count() -> None:
    fields = {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}}
    schema = {
        "type": "object",
        "properties": fields,
        "maxProperties": 2,
        "allOf": [{"dependentRequired": {"a": ["b"]}}, {"minProperties": 1}],
    }
    scanner = Scanner(ApiCatalog.from_obj(_body_spec(schema), source="t"), retriever=None)

    def found(body: dict[str, Any]) -> list[Finding]:
        request = {"method": "POST", "url": f"{HOST}/pets", "body": body}
        return list(scanner.iter_findings(request))

    assert found({"a": 1, "b": 2}) == []
    assert found({"a": 1, "c": 3}) == [
        Finding(
            "E4.2",
            ("body",),
            {"a": 1, "c": 3},
            expected={"a": ["b"]},
            operation="addPet",
            doc="",
            message="body: {'a': 1, 'c': 3} breaks the documented dependentRequired {'a': ['b']}",
        )
    ]
    [(too_many)] = found({"a": 1, "b": 2, "c": 3})
    assert (too_many.expected, too_many.severity) == ({"maxProperties": 2}, "error")


def test_an_empty_object_body_is_judged_and_no_body_is_e34s() -> None:
    fields = {"a": {"type": "integer"}}
    schema = {"type": "object", "properties": fields, "minProperties": 1}
    assert _object_body_findings(schema, {}) == [
        ("E4.2", ("body",), "body: {} breaks the documented minProperties 1")
    ]
    assert _object_body_findings(schema, None) == []


def test_whole_object_keywords_of_the_top_and_one_allof_part() -> None:
    fields = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    schema = {"properties": fields, "maxProperties": 1, "allOf": [{"minProperties": 1}]}
    assert _object_body_findings(schema, {"a": 1, "b": 2}) == [
        ("E4.2", ("body",), "body: {'a': 1, 'b': 2} breaks the documented maxProperties 1")
    ]
    assert _object_body_findings(schema, {}) == [
        ("E4.2", ("body",), "body: {} breaks the documented minProperties 1")
    ]


@pytest.mark.parametrize(
    ("constraint", "arguments", "message"),
    [
        ({"maxProperties": 1}, {"a": 1, "b": 2}, "{'a': 1, 'b': 2} breaks the documented "
         "maxProperties 1"),
        ({"minProperties": 2}, {"a": 1}, "{'a': 1} breaks the documented minProperties 2"),
        ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, "{'a': 1} breaks the documented "
         "dependentRequired {'a': ['b']}"),
        ({"propertyNames": {"maxLength": 1}, "additionalProperties": True}, {"a": 1, "bb": 2},
         "'bb' breaks the documented maxLength 1"),
    ],
)  # fmt: skip
def test_what_a_tool_s_parameters_say_of_its_arguments_as_a_whole_is_checked(
    constraint: dict[str, Any], arguments: dict[str, Any], message: str
) -> None:
    # a function's arguments are checked one by one; what its schema says of them as a
    # whole was checked nowhere, and list_items(limit=5) under dependentRequired
    # {limit: [offset]} was reported clean (found by mut-decide8 and mut-decide9)
    fields = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    tools = [{"name": "f", "parameters": {"type": "object", "properties": fields, **constraint}}]
    scanner = Scanner(ApiCatalog.from_tools(tools), retriever=None)
    found = list(scanner.iter_findings({"name": "f", "arguments": arguments}))
    assert [(f.code, f.location, f.message) for f in found] == [
        ("E4.2", ("arguments",), f"arguments: {message}")
    ]


def test_a_tool_s_arguments_within_their_whole_bounds_are_clean() -> None:
    fields = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    bounds = {"maxProperties": 2, "minProperties": 1, "dependentRequired": {"a": ["b"]}}
    tools = [{"name": "f", "parameters": {"type": "object", "properties": fields, **bounds}}]
    scanner = Scanner(ApiCatalog.from_tools(tools), retriever=None)
    for arguments in ({"a": 1, "b": 2}, {"b": 2}):
        # twice: the first call is walked, the second validated by the compiled validator
        assert list(scanner.iter_findings({"name": "f", "arguments": arguments})) == []
        assert list(scanner.iter_findings({"name": "f", "arguments": arguments})) == []
    for _ in range(2):
        [found] = scanner.iter_findings({"name": "f", "arguments": {"a": 1}})
        assert (found.code, found.location) == ("E4.2", ("arguments",))


@pytest.mark.parametrize(
    ("composition", "arguments", "keyword"),
    [
        ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"c": 1}, "oneOf"),
        ({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"c": 1}, "anyOf"),
        ({"allOf": [{"required": ["c"]}]}, {"a": 1}, "required"),
        ({"not": {"required": ["a", "b"]}}, {"a": 1, "b": 2}, "not"),
        ({"if": {"required": ["a"]}, "then": {"required": ["c"]}}, {"a": 1}, "required"),
    ],
    ids=["oneOf", "anyOf", "allOf", "not", "if-then"],
)
def test_what_a_tool_s_parameters_compose_at_their_top_is_checked(
    composition: dict[str, Any], arguments: dict[str, Any], keyword: str
) -> None:
    # list_items(limit=5) under oneOf [{required: [cursor]}, {required: [page]}] was
    # reported clean: a composition at the top of a tool's parameters was read nowhere
    fields = {n: {"type": "integer"} for n in ("a", "b", "c")}
    tools = [{"name": "f", "parameters": {"type": "object", "properties": fields, **composition}}]
    scanner = Scanner(ApiCatalog.from_tools(tools), retriever=None)
    for _ in range(2):  # walked on the first call, compiled on the second
        [found] = scanner.iter_findings({"name": "f", "arguments": arguments})
        assert (found.code, found.location) == ("E4.2", ("arguments",))
        assert f"breaks the documented {keyword}" in found.message
    fitting = {"a": 1, "c": 3}
    assert list(scanner.iter_findings({"name": "f", "arguments": fitting})) == []


def test_an_http_operation_called_by_name_gets_its_body_judged_as_a_whole() -> None:
    # addPet(a=1) is the body {"a": 1}: it was reported clean, where POST /pets with that
    # body breaks dependentRequired (found by mut-decide10)
    fields = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    schema = {"type": "object", "properties": fields, "dependentRequired": {"a": ["b"]}}
    scanner = Scanner(ApiCatalog.from_obj(_body_spec(schema), source="t"), retriever=None)
    for _ in range(2):  # no fast path answers it clean first
        found = list(scanner.iter_findings({"name": "addPet", "arguments": {"a": 1}}))
        assert [(f.code, f.location, f.message) for f in found] == [
            ("E4.2", ("body",), "body: {'a': 1} breaks the documented dependentRequired "
             "{'a': ['b']}")
        ]  # fmt: skip
        assert list(scanner.iter_findings({"name": "addPet", "arguments": {"a": 1, "b": 2}})) == []


def test_a_body_field_sent_in_the_query_is_not_counted_in_the_body() -> None:
    # the misplaced field is the E3's to name; the body sent ({}) breaks nothing itself
    fields = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    schema = {"type": "object", "properties": fields, "dependentRequired": {"a": ["b"]}}
    scanner = Scanner(ApiCatalog.from_obj(_body_spec(schema), source="t"), retriever=None)
    request = {"method": "POST", "url": f"{HOST}/pets?a=1", "body": {}}
    assert [(f.code, f.location) for f in scanner.iter_findings(request)] == [
        ("E3", ("query", "a"))
    ]

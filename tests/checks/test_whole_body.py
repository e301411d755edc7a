"""A body that is one value, not an object of fields (a JSON array, a JSON scalar, the
text of a ``text/*`` body), is checked against the schema the docs give it. Before,
nothing checked it: ``[1, "x"]`` for an array of integers, an object for an array, or
eleven characters where five are allowed were all reported clean."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Operation, Scanner

USERS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id"],
        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
    },
}


def findings(media: str, schema: dict[str, Any], **request: Any) -> list[tuple[Any, ...]]:
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/x": {
                "post": {
                    "operationId": "post",
                    "requestBody": {"required": True, "content": {media: {"schema": schema}}},
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    scanner = Scanner(ApiCatalog.from_obj(spec, source="t"), retriever=None)
    sent = {"method": "POST", "url": "https://api.example.com/x", **request}
    return [(f.code, f.location, f.message) for f in scanner.iter_findings(sent)]


JSON = {"Content-Type": "application/json"}
TEXT = {"Content-Type": "text/plain"}


@pytest.mark.parametrize(
    ("media", "schema", "request_", "expected"),
    [
        ("application/json", USERS, {"json": [{"id": 1}, {"id": 2, "name": "b"}]}, []),
        ("application/json", USERS, {"body": '[{"id": 1}]', "headers": JSON}, []),
        ("application/json", USERS, {"json": [{"id": 1}, {"id": "2"}]},
         [("E4.1", ("body", "1", "id"), "body.1.id must be an integer, got string '2'")]),
        ("application/json", USERS, {"json": [{"name": "x"}]},
         [("E4.2", ("body", "0"), "body.0: {'name': 'x'} breaks the documented required ['id']")]),
        ("application/json", USERS, {"json": {"id": 1}},
         [("E4.1", ("body",), "body must be an array, got object {'id': 1}")]),
        ("application/json", {"type": "integer", "maximum": 5}, {"json": 9},
         [("E4.2", ("body",), "body: 9 breaks the documented maximum 5")]),
        ("application/json", {"type": "string", "enum": ["a"]}, {"body": '"b"', "headers": JSON},
         [("E4.2", ("body",), "body must be one of 'a'; got 'b'")]),
        ("text/plain", {"type": "string", "maxLength": 5}, {"body": "hi", "headers": TEXT}, []),
        ("text/plain", {"type": "string", "maxLength": 5},
         {"body": "hello world", "headers": TEXT},
         [("E4.2", ("body",), "body: 'hello world' breaks the documented maxLength 5")]),
        # text that is not JSON under a JSON media type is not judged here
        ("application/json", USERS, {"body": "[oops", "headers": JSON}, []),
    ],
)  # fmt: skip
def test_a_body_that_is_one_value_is_checked(
    media: str, schema: dict[str, Any], request_: dict[str, Any], expected: list[Any]
) -> None:
    assert findings(media, schema, **request_) == expected


def test_an_object_body_is_still_checked_field_by_field() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}}
    assert findings("application/json", schema, json={"id": "x"}) == [
        ("E4.1", ("body", "id"), "id must be an integer, got string 'x'")
    ]


def test_type_errors_come_first_and_three_at_most() -> None:
    schema = {"type": "array", "items": {"type": "integer", "minimum": 1}}
    assert findings("application/json", schema, json=[0, "x", 0, "y", 0]) == [
        ("E4.1", ("body", "1"), "body.1 must be an integer, got string 'x'"),
        ("E4.1", ("body", "3"), "body.3 must be an integer, got string 'y'"),
        ("E4.2", ("body", "0"), "body.0: 0 breaks the documented minimum 1"),
    ]


def test_a_body_as_bytes_is_read_as_utf8_text() -> None:
    schema = {"type": "array", "items": {"type": "string", "maxLength": 2}}
    body = b'["ok", "caf\\u00e9!"]'
    assert findings("application/json", schema, body=body, headers=JSON) == [
        ("E4.2", ("body", "1"), "body.1: 'café!' breaks the documented maxLength 2")
    ]
    # a byte that is no UTF-8 is read as the replacement character, not raised
    assert findings("application/json", schema, body=b'["\xff\xfe\xfd"]', headers=JSON) == [
        ("E4.2", ("body", "0"), "body.0: '\ufffd\ufffd\ufffd' breaks the documented maxLength 2")
    ]


def test_a_body_without_a_content_type_is_read_as_the_docs_say() -> None:
    schema = {"type": "string", "maxLength": 5}
    assert findings("text/plain", schema, body="hello world") == [
        ("E4.2", ("body",), "body: 'hello world' breaks the documented maxLength 5")
    ]


def test_a_body_of_another_media_type_is_not_read_as_json() -> None:
    """A body sent as XML (or a form) is for its own readers: text that happens to read as
    JSON is not judged against the schema here."""
    schema = {"type": "array", "items": {"type": "integer"}}
    xml = {"Content-Type": "application/xml"}
    assert findings("application/xml", schema, body='["x"]', headers=xml) == []
    # the same text sent as JSON is judged
    assert findings("application/xml", schema, body='["x"]', headers=JSON) == [
        ("E4.1", ("body", "0"), "body.0 must be an integer, got string 'x'")
    ]


def test_a_body_with_no_media_type_anywhere_is_read_as_json() -> None:
    """An operation built in code, with no media type for its body, sent a body with no
    Content-Type: the body is read as JSON, the default of an API call."""
    schema = {"type": "array", "items": {"type": "integer"}}
    op = Operation("post", method="POST", path="/x", body_schema=schema)
    catalog = ApiCatalog([op], servers=["https://api.example.com"])
    sent = {"method": "POST", "url": "https://api.example.com/x", "body": '[1, "x"]'}
    found = [
        (f.code, f.location, f.message)
        for f in Scanner(catalog, retriever=None).iter_findings(sent)
    ]
    assert found == [("E4.1", ("body", "1"), "body.1 must be an integer, got string 'x'")]


def test_a_whole_body_finding_has_no_doc_and_names_its_shape() -> None:
    # the body's own schema has no description: the finding's doc is empty, not absent;
    # a body fitting no shape of a oneOf names the nearest one
    content = {"application/json": {"schema": {"type": "integer", "maximum": 5}}}
    post = {"operationId": "post", "requestBody": {"content": content}, "responses": {}}
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"post": post}},
    }
    scanner = Scanner(ApiCatalog.from_obj(spec, source="t"), retriever=None)
    [finding] = scanner.iter_findings({"method": "POST", "url": "/x", "json": 9})
    assert (finding.doc, finding.operation) == ("", "post")
    shapes = {"oneOf": [{"title": "Count", "type": "integer", "maximum": 5},
                        {"title": "Label", "type": "string"}]}  # fmt: skip
    assert findings("application/json", shapes, json=9) == [
        ("E4.2", ("body",), "body (as Count): 9 breaks the documented maximum 5")
    ]


OBJECT = {"type": "object", "properties": {"a": {"type": "integer"}}}


@pytest.mark.parametrize(
    ("schema", "sent", "expected"),
    [
        (OBJECT, [1, 2], [("E4.1", ("body",), "body must be an object, got array [1, 2]")]),
        (OBJECT, 5, [("E4.1", ("body",), "body must be an object, got integer 5")]),
        ({"oneOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "string"}]}, ["x"],
         [("E4.1", ("body", "0"), "body.0 (as branch 1) must be an integer, got string 'x'")]),
        ({"oneOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "string"}]}, [1], []),
        # an object sent for an object's schema is still checked field by field
        (OBJECT, {"a": "x"}, [("E4.1", ("body", "a"), "a must be an integer, got string 'x'")]),
    ],
)  # fmt: skip
def test_a_body_sent_as_no_object_is_judged_whole_whatever_its_schema(
    schema: dict[str, Any], sent: Any, expected: list[Any]
) -> None:
    # it has no fields for the field checks to see: [1, 2] where the docs say object, or a
    # scalar for a oneOf of shapes, was reported clean
    assert findings("application/json", schema, json=sent) == expected


def test_an_object_body_whose_type_is_a_list_is_checked_field_by_field() -> None:
    # OpenAPI 3.1's nullable object: ["object", "null"] is an object's schema
    schema = {"type": ["object", "null"], "properties": {"a": {"type": "integer"}}}
    assert findings("application/json", schema, json={"a": "x"}) == [
        ("E4.1", ("body", "a"), "a must be an integer, got string 'x'")
    ]
    assert findings("application/json", {"type": ["array", "null"], "items": {"type": "integer"}},
                    json=["x"]) == [
        ("E4.1", ("body", "0"), "body.0 must be an integer, got string 'x'")
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("media", "body", "headers", "expected"),
    [
        # JSON text, not an object: judged whole
        ("application/json", "[1, 2]", JSON, "body must be an object, got array [1, 2]"),
        # text under a text/* media type is text, braces or not
        ("text/plain", "{not json", TEXT, "body must be an object, got string '{not json'"),
        ("text/plain", b" {x", TEXT, "body must be an object, got string ' {x'"),
        ("text/plain", "{x", {}, "body must be an object, got string '{x'"),  # the docs' media
    ],
)
def test_a_body_sent_as_text_is_judged_whole_unless_it_is_an_object(
    media: str, body: Any, headers: dict[str, str], expected: str
) -> None:
    assert findings(media, OBJECT, body=body, headers=headers) == [("E4.1", ("body",), expected)]


def test_json_text_of_an_object_is_checked_field_by_field() -> None:
    assert findings("application/json", OBJECT, body=b'  {"a": "x"}', headers=JSON) == [
        ("E4.1", ("body", "a"), "a must be an integer, got string 'x'")
    ]

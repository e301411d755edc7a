"""E4 case by case: how a URL or header value is read as its documented type, and which
branch of a ``oneOf`` a value that fits none is judged against (the one its
``discriminator`` names, else the one it misses least). The cases a mutation pass over
_check_values.py (issue 39, benchmarks/RESULTS.md) found no test deciding."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, Finding, Parameter, Scanner
from autofeedback.checks._check_values import deserialize

INTEGERS = {"type": "array", "items": {"type": "integer"}}


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(levels):
        schema = {"oneOf": [schema]}
    return schema


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("10", {"type": "integer"}, 10),
        # a repeated query parameter arrives as a list
        (["1", "2"], INTEGERS, [1, 2]),
        (["1", "2"], {"type": "string"}, ["1", "2"]),
        (["1"], {"type": "array"}, ["1"]),  # no items schema: any item
        (["1"], {"type": "array", "items": [{"type": "integer"}]}, ["1"]),  # not a schema
        (7, {"type": "integer"}, 7),  # not text: as it is
        # numbers: an integer's text stays an integer, anything else a float
        ("10", {"type": "number"}, 10),
        ("1.5", {"type": "number"}, 1.5),
        ("1e400", {"type": "number"}, "1e400"),  # no finite number: left as text
        ("true", {"type": ["number", "boolean"]}, True),  # the next type is tried
        ("true", {"type": "boolean"}, True),
        ("false", {"type": "boolean"}, False),
        ("TRUE", {"type": "boolean"}, "TRUE"),
        ("", {"type": "null"}, None),
        ("null", {"type": "null"}, None),
        ("null", {"type": "string"}, "null"),
        ("1,2", INTEGERS, [1, 2]),  # a form-style array: comma-separated
        ("1,2", {"type": "array", "items": [{"type": "integer"}]}, ["1", "2"]),
        ("10", {"type": ["object", "integer"]}, 10),  # a type it cannot be: the next
        ("10", {"type": "string", "oneOf": [{"type": "integer"}]}, "10"),  # its type first
        ("10", _nested(8), 10),  # a type given eight compositions deep
        ("10", _nested(9), "10"),  # ...and no deeper
        # an object sent as JSON text (a parameter documented with content: application/json)
        (' {"id": 1}', {"type": "object"}, {"id": 1}),
        ('{"id": 1}', {"type": "string"}, '{"id": 1}'),  # a string stays the text sent
        ('["id"]', {"type": "object"}, '["id"]'),  # JSON, but no object: as it is
        ("{id", {"type": ["object", "string"]}, "{id"),
        ("{a,b", {"type": ["object", "array"]}, ["{a", "b"]),  # no JSON: the next type
    ],
)
def test_a_value_read_as_its_documented_type(text: Any, schema: Any, value: Any) -> None:
    read = deserialize(text, schema)
    assert (read, type(read)) == (value, type(value))


@pytest.mark.parametrize(("explode", "value"), [(True, ["1,2"]), (False, [1, 2])])
def test_an_exploded_array_is_one_value_per_parameter(explode: bool, value: list[Any]) -> None:
    param = Parameter("ids", "query", schema=INTEGERS, explode=explode)
    assert deserialize("1,2", INTEGERS, param) == value
    composed = {"oneOf": [INTEGERS]}  # ...also where its type is given by a composition
    assert (
        deserialize("1,2", composed, Parameter("ids", "query", composed, explode=explode)) == value
    )


CAT = {
    "title": "Cat",
    "type": "object",
    "properties": {"petType": {"const": "cat"}, "lives": {"type": "integer"}},
    "required": ["petType"],
}
DOG: dict[str, Any] = {
    "title": "Dog",
    "type": "object",
    "properties": {"petType": {"const": "dog"}, "size": {"enum": ["small", "big"]}},
    "required": ["petType", "bark"],
}
#: the same two shapes, the tag told only by the discriminator's mapping and the titles
UNTAGGED_CAT = {**CAT, "properties": {"petType": {"type": "string"}, "lives": {"type": "integer"}}}
UNTAGGED_DOG = {
    **DOG,
    "properties": {"petType": {"type": "string"}, "size": {"enum": ["small", "big"]}},
}
#: Dog with its tag in an allOf part, as a spec's inheritance writes it
ALL_OF_DOG = {
    "title": "Dog",
    "allOf": [
        {"type": "object", "properties": {"petType": {"enum": ["dog", "puppy"]}}},
        {"properties": {"size": {"enum": ["small", "big"]}}, "required": ["petType", "bark"]},
    ],
}
#: Dog with one more field, so that it misses more than Cat on a value tagged dog
AGED_DOG = {**DOG, "properties": {**DOG["properties"], "age": {"type": "integer"}}}
BY_TAG = {"propertyName": "petType"}
BY_MAPPING = {"propertyName": "petType", "mapping": {"dog": "#/components/schemas/Dog"}}
SIZE = "pet.size (as Dog) must be one of 'small', 'big'; got 'huge'"


def _messages(pet: dict[str, Any], value: Any) -> list[str]:
    schema = {"type": "object", "properties": {"pet": pet}, "required": ["pet"]}
    catalog = ApiCatalog.from_tools([{"name": "adopt", "parameters": schema}])
    call = {"name": "adopt", "arguments": {"pet": value}}
    return [f.message for f in Scanner(catalog, retriever=None).iter_findings(call)]


@pytest.mark.parametrize(
    ("pet", "value", "messages"),
    [
        # without a discriminator: the branch missed least (Cat: one error)
        (
            {"oneOf": [CAT, DOG]},
            {"petType": "dog", "size": "huge"},
            ["pet.petType (as Cat): 'dog' breaks the documented const 'cat'"],
        ),
        # with one: the branch its tag names, although it misses more
        (
            {"oneOf": [CAT, DOG], "discriminator": BY_TAG},
            {"petType": "dog", "size": "huge"},
            [
                "pet (as Dog): {'petType': 'dog', 'size': 'huge'} breaks the documented "
                "required ['petType', 'bark']",
                SIZE,
            ],
        ),
        (
            {"oneOf": [CAT, ALL_OF_DOG], "discriminator": BY_TAG},
            {"petType": "puppy", "size": "huge"},
            [
                "pet (as Dog): {'petType': 'puppy', 'size': 'huge'} breaks the documented "
                "required ['petType', 'bark']",
                SIZE,
            ],
        ),
        (
            {"oneOf": [UNTAGGED_CAT, UNTAGGED_DOG]},
            {"petType": "dog", "lives": "x"},
            ["pet.lives (as Cat) must be an integer, got string 'x'"],
        ),
        (
            {"oneOf": [UNTAGGED_CAT, UNTAGGED_DOG], "discriminator": BY_MAPPING},
            {"petType": "dog", "lives": "x"},
            [
                "pet (as Dog): {'petType': 'dog', 'lives': 'x'} breaks the documented "
                "required ['petType', 'bark']"
            ],
        ),
        # a mapping to a bare schema name
        (
            {
                "oneOf": [UNTAGGED_CAT, UNTAGGED_DOG],
                "discriminator": {"propertyName": "petType", "mapping": {"dog": "Dog"}},
            },
            {"petType": "dog", "lives": "x"},
            [
                "pet (as Dog): {'petType': 'dog', 'lives': 'x'} breaks the documented "
                "required ['petType', 'bark']"
            ],
        ),
        # a branch that is no schema object (false) beside the tagged one
        (
            {"oneOf": [False, DOG], "discriminator": BY_TAG},
            {"petType": "dog", "size": "huge"},
            [
                "pet (as Dog): {'petType': 'dog', 'size': 'huge'} breaks the documented "
                "required ['petType', 'bark']",
                SIZE,
            ],
        ),
        # least missed: a wrong tag counts before the number of errors...
        (
            {"oneOf": [CAT, AGED_DOG]},
            {"petType": "dog", "age": "x"},
            [
                "pet.age (as Dog) must be an integer, got string 'x'",
                "pet (as Dog): {'petType': 'dog', 'age': 'x'} breaks the documented "
                "required ['petType', 'bark']",
            ],
        ),
        # ...and a value of another type than the branch's before both
        (
            {"oneOf": [{"title": "Card", "type": "object"}, {"title": "Token", "minLength": 5}]},
            "abc",
            ["pet (as Token): 'abc' breaks the documented minLength 5"],
        ),
        # a tag no branch names: the branch missed least
        (
            {"oneOf": [UNTAGGED_CAT, UNTAGGED_DOG], "discriminator": BY_MAPPING},
            {"petType": "bird", "lives": "x"},
            ["pet.lives (as Cat) must be an integer, got string 'x'"],
        ),
    ],
)
def test_the_branch_a_value_was_meant_for(
    pet: dict[str, Any], value: Any, messages: list[str]
) -> None:
    assert _messages(pet, value) == messages


# -- a composed body: its fields checked together against the branch meant -------------

PET = {
    "title": "Pet",
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "  The pet's name. "},
        "age": {"type": "integer", "minimum": 0},
        "tags": {
            "type": "array",
            "items": {"type": "string", "maxLength": 3},
            "maxItems": 2,
            "description": "Tags, comma-separated.",
        },
        "owner": {
            "type": "object",
            "properties": {"email": {"type": "string", "maxLength": 20}},
        },
    },
}
#: a branch that misses more than Pet on every body below (eleven required fields)
OTHER = {
    "title": "Other",
    "type": "object",
    "properties": {"kind": {"const": "other"}},
    "required": ["kind", *"abcdefghij"],
}
TAGS = "Tags, comma-separated."


def _body_findings(
    media: str, body: dict[str, Any], other: Any = OTHER, *, branches: list[Any] | None = None
) -> list[Any]:
    content = {media: {"schema": {"oneOf": branches or [PET, other]}}}
    post = {"operationId": "addPet", "requestBody": {"content": content}, "responses": {}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "pets", "version": "1"},
        "servers": [{"url": "https://pets.example.com"}],
        "paths": {"/pets": {"post": post}},
    }
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    request = ApiRequest(method="POST", url="https://pets.example.com/pets", body=body)
    return [
        (f.code, ".".join(f.location), f.got, f.message, f.doc)
        for f in scanner.iter_findings(request)
    ]


def test_a_composed_body_type_errors_first_three_per_field() -> None:
    body = {"name": 5, "age": -1, "tags": ["long1", "long2", "long3", "long4"]}
    body["owner"] = {"email": 5}
    tags = ["long1", "long2", "long3", "long4"]
    assert _body_findings("application/json", body) == [
        (
            "E4.1",
            "body.name",
            5,
            "name (as Pet) must be a string (The pet's name.), got integer 5",
            "The pet's name.",
        ),
        ("E4.1", "body.owner.email", 5, "owner.email (as Pet) must be a string, got integer 5", ""),
        ("E4.2", "body.age", -1, "age (as Pet): -1 breaks the documented minimum 0", ""),
        (
            "E4.2",
            "body.tags",
            tags,
            f"tags (as Pet): {tags} breaks the documented maxItems 2",
            TAGS,
        ),
        (
            "E4.2",
            "body.tags.0",
            "long1",
            "tags.0 (as Pet): 'long1' breaks the documented maxLength 3",
            TAGS,
        ),
        (
            "E4.2",
            "body.tags.1",
            "long2",
            "tags.1 (as Pet): 'long2' breaks the documented maxLength 3",
            TAGS,
        ),
    ]


def test_a_field_past_three_errors_does_not_hide_the_next_field() -> None:
    body = {"tags": ["long1", "long2", "long3"], "owner": {"email": "x" * 21}}
    assert [where for _, where, *_ in _body_findings("application/json", body)] == [
        "body.tags",
        "body.tags.0",
        "body.tags.1",
        "body.owner.email",
    ]


def test_a_composed_body_called_by_name_is_checked_in_detail() -> None:
    content = {"application/json": {"schema": {"oneOf": [PET, OTHER]}}}
    post = {"operationId": "addPet", "requestBody": {"content": content}, "responses": {}}
    spec = {"openapi": "3.0.3", "info": {"title": "p", "version": "1"}}
    catalog = ApiCatalog.from_obj({**spec, "paths": {"/pets": {"post": post}}})
    call = {"name": "addPet", "arguments": {"name": 5}}
    assert [f.message for f in Scanner(catalog, retriever=None).iter_findings(call)] == [
        "name (as Pet) must be a string (The pet's name.), got integer 5"
    ]


def test_a_schema_fault_in_one_parameter_hides_no_other() -> None:
    properties = {"bad": {"type": "object", "properties": []}, "n": {"type": "integer"}}
    catalog = ApiCatalog.from_tools(
        [{"name": "tag", "parameters": {"type": "object", "properties": properties}}]
    )
    call = {"name": "tag", "arguments": {"bad": {}, "n": "x"}}
    assert [str(f) for f in Scanner(catalog, retriever=None).iter_findings(call)] == [
        "E4.1 argument.n: n must be an integer, got string 'x'"
    ]


@pytest.mark.parametrize(
    ("media", "body", "found"),
    [
        # a form sends text: "-1" is read as the integer it says
        (
            "application/x-www-form-urlencoded",
            {"age": "-1", "name": "Rex"},
            [("E4.2", "body.age", -1, "age (as Pet): -1 breaks the documented minimum 0", "")],
        ),
        # JSON sends types: "-1" is a string
        (
            "application/json",
            {"age": "-1", "name": "Rex"},
            [("E4.1", "body.age", "-1", "age (as Pet) must be an integer, got string '-1'", "")],
        ),
        # an array described as comma-separated, written so
        (
            "application/json",
            {"tags": "ab,cd,efgh", "name": "Rex"},
            [
                (
                    "E4.2",
                    "body.tags",
                    ["ab", "cd", "efgh"],
                    "tags (as Pet): ['ab', 'cd', 'efgh'] breaks the documented maxItems 2",
                    TAGS,
                ),
                (
                    "E4.2",
                    "body.tags.2",
                    "efgh",
                    "tags.2 (as Pet): 'efgh' breaks the documented maxLength 3",
                    TAGS,
                ),
            ],
        ),
        ("application/json", {"name": "Rex", "age": 3}, []),
    ],
)
def test_a_composed_body_read_as_its_media_type_sends_it(
    media: str, body: dict[str, Any], found: list[Any]
) -> None:
    assert _body_findings(media, body) == found


def test_a_body_that_fits_no_branch_is_never_clean() -> None:
    # judged against the branch it misses least (Other: one miss, Pet: two); that miss is
    # a field only Other requires, which E3 does not report: it was reported clean
    other = {**OTHER, "required": ["kind"]}
    assert _body_findings("application/json", {"name": 5, "age": -1}, other) == [
        (
            "E3.4",
            "body.kind",
            None,
            "the body fits none of its documented shapes; the nearest, Other, requires 'kind'",
            "",
        )
    ]


def test_a_closed_shape_says_what_it_refuses() -> None:
    closed = {
        "title": "Closed",
        "type": "object",
        "properties": {"kind": {"const": "other"}, "name": {"type": "string"}},
        "additionalProperties": False,
    }
    wide = {
        "title": "Wide",
        "type": "object",
        "properties": {"age": {"type": "integer"}},
        "required": ["age", "b", "c"],
    }
    # `age` is Wide's (no unknown name for E3); Closed refuses it (one miss), Wide misses
    # `b` and `c` (two)
    body = {"kind": "other", "name": "rex", "age": 3}
    assert _body_findings("application/json", body, branches=[closed, wide]) == [
        (
            "E4.2",
            "body",
            None,
            "the body fits none of its documented shapes; the nearest, Closed, is broken: "
            "Additional properties are not allowed ('age' was unexpected)",
            "",
        )
    ]


def test_a_body_that_fits_a_branch_is_clean() -> None:
    other = {**OTHER, "required": ["kind"]}
    assert _body_findings("application/json", {"name": "rex", "age": 1}, other) == []


# -- an E4 finding in full ---------------------------------------------------------------

FIELDS = {
    "note": {"type": ["string", "null"], "description": " A note. "},
    "count": {"type": "integer"},
    "color": {"enum": [f"c{i}" for i in range(13)]},
    "day": {"type": "string", "format": "date", "description": "The day."},
    "code": {"type": "string", "maxLength": 3},
    "meta": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}},
}

COLORS = [f"c{i}" for i in range(13)]


@pytest.mark.parametrize(
    ("name", "value", "finding"),
    [
        (
            "note",
            5,
            Finding(
                "E4.1",
                ("argument", "note"),
                5,
                expected=["string", "null"],
                message="note must be a string or null (A note.), got integer 5",
                operation="put",
                doc="A note.",
            ),
        ),
        (
            "count",
            "x",
            Finding(
                "E4.1",
                ("argument", "count"),
                "x",
                expected="integer",
                message="count must be an integer, got string 'x'",
                operation="put",
            ),
        ),
        (
            "color",  # the first twelve allowed values are listed
            "red",
            Finding(
                "E4.2",
                ("argument", "color"),
                "red",
                expected={"enum": COLORS},
                message="color must be one of "
                + ", ".join(repr(c) for c in COLORS[:12])
                + "; got 'red'",
                operation="put",
            ),
        ),
        (
            "day",
            "2020-13-45",
            Finding(
                "E4.2",
                ("argument", "day"),
                "2020-13-45",
                expected={"format": "date"},
                message="day must be a valid date (The day.); got '2020-13-45'",
                operation="put",
                doc="The day.",
            ),
        ),
        (
            "code",
            "abcd",
            Finding(
                "E4.2",
                ("argument", "code"),
                "abcd",
                expected={"maxLength": 3},
                message="code: 'abcd' breaks the documented maxLength 3",
                operation="put",
            ),
        ),
        (
            "meta",
            {"size": 0},
            Finding(
                "E4.2",
                ("argument", "meta", "size"),
                0,
                expected={"minimum": 1},
                message="meta.size: 0 breaks the documented minimum 1",
                operation="put",
            ),
        ),
    ],
)
def test_an_e4_finding_field_by_field(name: str, value: Any, finding: Finding) -> None:
    # a catalog per test: its validators are built under the code being tested
    catalog = ApiCatalog.from_tools(
        [{"name": "put", "parameters": {"type": "object", "properties": FIELDS}}]
    )
    call = {"name": "put", "arguments": {name: value}}
    assert list(Scanner(catalog, retriever=None).iter_findings(call)) == [finding]


# -- values of an HTTP request: read as the server reads them ---------------------------


def _items() -> ApiCatalog:
    def param(name: str, where: str, schema: dict[str, Any], **more: Any) -> dict[str, Any]:
        return {"name": name, "in": where, "schema": schema, **more}

    array = {"type": "array", "items": {"type": "integer"}, "maxItems": 1}
    get = {
        "operationId": "getItem",
        "parameters": [
            param("id", "path", {"type": "integer"}, required=True),
            param("limit", "query", {"type": "integer", "maximum": 50}),
            param("X-Count", "header", {"type": "integer", "maximum": 5}),
            param("ids", "query", array, explode=False),
            param("tags", "query", array, explode=True),
            param("q", "query", {"type": "string", "maxLength": 5}),
            param("X-Trace", "header", {"type": "string"}),
            param("on", "query", {"type": "string", "enum": ["true"]}),
            param("off", "query", {"type": "string", "enum": ["false"]}),
            param("n", "query", {"type": ["integer", "null"]}),
        ],
        "responses": {"200": {"description": "ok"}},
    }
    form = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}}
    post = {
        "operationId": "sendForm",
        "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": form}}},
        "responses": {"200": {"description": "ok"}},
    }
    parts = {"type": "object", "properties": {"count": {"type": "integer", "maximum": 3}}}
    upload = {
        "operationId": "upload",
        "requestBody": {"content": {"multipart/form-data": {"schema": parts}}},
        "responses": {"200": {"description": "ok"}},
    }
    spec = {"openapi": "3.0.3", "info": {"title": "items", "version": "1"}}
    paths = {"/items/{id}": {"get": get}, "/forms": {"post": post}, "/uploads": {"post": upload}}
    servers = [{"url": "https://s.example.com"}]
    return ApiCatalog.from_obj({**spec, "servers": servers, "paths": paths})


@pytest.mark.parametrize(
    ("request_", "found"),
    [
        (
            ApiRequest(method="GET", url="https://s.example.com/items/5?limit=60"),
            ["E4.2 query.limit: limit: 60 breaks the documented maximum 50"],
        ),
        (
            ApiRequest(method="GET", url="https://s.example.com/items/5", headers={"X-Count": "6"}),
            ["E4.2 header.X-Count: X-Count: 6 breaks the documented maximum 5"],
        ),
        (
            ApiRequest(method="GET", url="https://s.example.com/items/5?ids=1,2"),
            ["E4.2 query.ids: ids: [1, 2] breaks the documented maxItems 1"],
        ),
        (  # exploded: one value per parameter, so "1,2" is one item
            ApiRequest(method="GET", url="https://s.example.com/items/5?tags=1,2"),
            ["E4.1 query.tags.0: tags.0 must be an integer, got string '1,2'"],
        ),
        (
            ApiRequest(method="POST", url="https://s.example.com/forms", body={"age": "-1"}),
            ["E4.2 body.age: age: -1 breaks the documented minimum 0"],
        ),
    ],
)
def test_a_value_of_an_http_request(request_: ApiRequest, found: list[str]) -> None:
    assert [str(f) for f in Scanner(_items(), retriever=None).iter_findings(request_)] == found


@pytest.mark.parametrize(
    ("arguments", "found"),
    [
        # a number for a text parameter of the URL: the server reads the text "500"
        ({"id": 5, "q": 500, "X-Trace": 7}, []),
        ({"id": 5, "q": True}, []),  # ...and "true"
        # true, false and null in the URL: the texts "true" and "false", and no value
        ({"id": 5, "on": True, "off": False, "n": None}, []),
        (
            {"id": 5, "q": 123456},
            ["E4.2 argument.q: q: '123456' breaks the documented maxLength 5"],
        ),
        # a list is no text: judged as the list it is
        (
            {"id": 5, "ids": [1, 2]},
            ["E4.2 argument.ids: ids: [1, 2] breaks the documented maxItems 1"],
        ),
    ],
)
def test_an_http_operation_called_by_name(arguments: dict[str, Any], found: list[str]) -> None:
    call = {"name": "getItem", "arguments": arguments}
    assert [str(f) for f in Scanner(_items(), retriever=None).iter_findings(call)] == found


def test_a_multipart_field_is_read_as_its_documented_type() -> None:
    """A multipart form's fields travel as text: "2" is the integer 2, "5" is over 3."""
    scanner = Scanner(_items(), retriever=None)
    assert list(scanner.iter_findings({"name": "upload", "arguments": {"count": "2"}})) == []
    [found] = scanner.iter_findings({"name": "upload", "arguments": {"count": "5"}})
    assert str(found) == "E4.2 argument.count: count: 5 breaks the documented maximum 3"


@pytest.mark.parametrize(
    ("name", "value", "messages"),
    [
        ("color", "red", ["color must be one of 'xxxxxxxxxxxxxxxxxxxxxxxxxx..., 'y'; got 'red'"]),
        (
            "word",
            "q",
            ["word: 'q' breaks the documented const 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz..."],
        ),
        (
            "code",
            "abc",
            [
                "code: 'abc' breaks the documented pattern '^(?=.*[A-Z]).{8,}$' (pattern checked "
                "with a bounded matcher)"
            ],
        ),
        ("slug", "A", ["slug: 'A' breaks the documented pattern '^[a-z]+$'"]),
        (  # type errors first, whatever the order of the properties
            "meta",
            {"b": "long", "a": "x"},
            [
                "meta.a must be an integer, got string 'x'",
                "meta.b: 'long' breaks the documented maxLength 2",
            ],
        ),
    ],
)
def test_what_an_e4_message_shows(name: str, value: Any, messages: list[str]) -> None:
    properties = {
        "color": {"enum": ["x" * 40, "y"]},  # each allowed value cut at 30 characters
        "word": {"const": "z" * 50},  # the documented value cut at 40
        "code": {"type": "string", "pattern": "^(?=.*[A-Z]).{8,}$"},  # RE2 cannot run it
        "slug": {"type": "string", "pattern": "^[a-z]+$"},
        "meta": {
            "type": "object",
            "properties": {"b": {"type": "string", "maxLength": 2}, "a": {"type": "integer"}},
        },
    }
    catalog = ApiCatalog.from_tools(
        [{"name": "put", "parameters": {"type": "object", "properties": properties}}]
    )
    call = {"name": "put", "arguments": {name: value}}
    assert [f.message for f in Scanner(catalog, retriever=None).iter_findings(call)] == messages


def _shape_findings(branches: list[Any], body: dict[str, Any]) -> list[Any]:
    """Every finding on a JSON body ``oneOf`` ``branches``: code, location, expected,
    operation, message."""
    content = {"application/json": {"schema": {"oneOf": branches}}}
    post = {"operationId": "addPet", "requestBody": {"content": content}, "responses": {}}
    spec = {"openapi": "3.0.3", "info": {"title": "pets", "version": "1"}, "paths": {}}
    spec["paths"] = {"/pets": {"post": post}}
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    request = ApiRequest(method="POST", url="/pets", body=body)
    return [
        (f.code, f.location, f.expected, f.operation, f.message)
        for f in scanner.iter_findings(request)
    ]


def test_what_only_the_nearest_shape_requires_is_said_once() -> None:
    named = {"name": {"type": "string"}}
    a: dict[str, Any] = {"title": "A", "type": "object", "required": ["name", "kind"]}
    a["properties"] = {**named, "kind": {"const": "a"}}
    b: dict[str, Any] = {"title": "B", "type": "object", "required": ["name", "size"]}
    b["properties"] = {**named, "size": {"type": "integer"}}
    # `name` every shape requires: E3.4 says it, and the nearest shape (A) adds nothing
    assert _shape_findings([a, b], {"kind": "a"}) == [
        ("E3.4", ("body", "name"), "name", "addPet", "required body parameter 'name' is missing")
    ]
    # untitled shapes: a field sent is not missing; one only the nearest requires is
    kind = {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind", "x"]}
    size = {
        "type": "object",
        "properties": {"size": {"type": "integer"}},
        "required": ["size", "y", "z"],
    }
    assert _shape_findings([kind, size], {"kind": "a"}) == [
        (
            "E3.4",
            ("body", "x"),
            "x",
            "addPet",
            "the body fits none of its documented shapes; the nearest, branch 1, requires 'x'",
        )
    ]


def test_a_wrong_field_is_said_before_what_the_nearest_shape_requires() -> None:
    """The nearest shape's own requirement is said only where no field says why the body
    fits no shape: the model gets the first problem, not a wall of them."""
    kind: dict[str, Any] = {"type": "object", "required": ["kind", "x"]}
    kind["properties"] = {"kind": {"const": "a"}, "n": {"type": "integer"}}
    size = {
        "type": "object",
        "properties": {"size": {"type": "integer"}},
        "required": ["size", "y", "z"],
    }
    assert _shape_findings([kind, size], {"kind": "a", "n": "two"}) == [
        (
            "E4.1",
            ("body", "n"),
            "integer",
            "addPet",
            "n (as branch 1) must be an integer, got string 'two'",
        )
    ]


@pytest.mark.parametrize(
    "call",
    [
        ApiRequest(method="POST", url="/pets?dry=true"),
        {"name": "addPet", "arguments": {"dry": True}},
    ],
)
def test_a_call_that_sends_no_optional_composed_body_is_clean(call: Any) -> None:
    """No body field sent, and the body is optional: no shape is missed."""
    kind = {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind", "x"]}
    size = {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]}
    content = {"application/json": {"schema": {"oneOf": [kind, size]}}}
    dry = {"name": "dry", "in": "query", "schema": {"type": "boolean"}}
    post = {"operationId": "addPet", "parameters": [dry], "requestBody": {"content": content}}
    spec = {"openapi": "3.0.3", "info": {"title": "pets", "version": "1"}, "paths": {}}
    spec["paths"] = {"/pets": {"post": {**post, "responses": {}}}}
    assert list(Scanner(ApiCatalog.from_obj(spec), retriever=None).iter_findings(call)) == []


def test_a_shape_that_refuses_a_field_names_its_operation() -> None:
    closed: dict[str, Any] = {"title": "Closed", "type": "object", "additionalProperties": False}
    closed["properties"] = {"kind": {"const": "other"}}
    wide: dict[str, Any] = {"title": "Wide", "type": "object", "required": ["age", "b", "c"]}
    wide["properties"] = {"age": {"type": "integer"}}
    assert _shape_findings([closed, wide], {"kind": "other", "age": 3}) == [
        (
            "E4.2",
            ("body",),
            None,
            "addPet",
            "the body fits none of its documented shapes; the nearest, Closed, is broken: "
            "Additional properties are not allowed ('age' was unexpected)",
        )
    ]


def _composed_findings(schema: dict[str, Any], body: dict[str, Any]) -> list[Any]:
    content = {"application/json": {"schema": schema}}
    post = {"operationId": "addPet", "requestBody": {"content": content}, "responses": {}}
    spec = {"openapi": "3.0.3", "info": {"title": "pets", "version": "1"}, "paths": {}}
    spec["paths"] = {"/pets": {"post": post}}
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    request = ApiRequest(method="POST", url="/pets", body=body)
    return [
        (f.code, f.location, f.expected, f.operation, f.message)
        for f in scanner.iter_findings(request)
    ]


def test_a_constraint_of_a_composed_body_itself_is_the_documented_bodys() -> None:
    named = {"type": "object", "properties": {"name": {"type": "string"}, "age": {}}}
    tagged = {"type": "object", "properties": {"tag": {"type": "string"}}}
    schema = {"oneOf": [named, tagged], "maxProperties": 1}
    assert _composed_findings(schema, {"name": "rex", "age": 3}) == [
        (
            "E4.2",
            ("body",),
            None,
            "addPet",
            "the documented body is broken: {'name': 'rex', 'age': 3} has too many properties",
        )
    ]
    # the validator's message is cut at 300 characters
    ((*_, message),) = _composed_findings(schema, {"name": "r" * 400, "age": 3})
    assert message == "the documented body is broken: {'name': '" + "r" * 290


def test_a_shape_is_named_by_its_whole_title() -> None:
    card = {"title": "Debit card", "type": "object", "properties": {"name": {"type": "string"}}}
    token = {"title": "Token", "type": "object", "required": ["tag"]}
    assert _composed_findings({"oneOf": [card, token]}, {"name": 5}) == [
        (
            "E4.1",
            ("body", "name"),
            "string",
            "addPet",
            "name (as Debit card) must be a string, got integer 5",
        )
    ]


def _nested_shapes(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"title": f"L{levels}", "type": "integer"}
    for i in range(levels - 1, 0, -1):
        schema = {"title": f"L{i}", "oneOf": [schema, {"type": "boolean"}]}
    return {"oneOf": [schema, {"type": "boolean"}]}


@pytest.mark.parametrize(
    ("levels", "found"),
    [
        (
            7,
            ("E4.1", "v (as L1 > L2 > L3 > L4 > L5 > L6 > L7) must be an integer, got string 'x'"),
        ),
        (
            8,  # the seventh nested choice is the last one followed
            (
                "E4.2",
                "v (as L1 > L2 > L3 > L4 > L5 > L6 > L7): 'x' breaks the documented oneOf "
                "[{'title': 'L8', 'type': 'integer'}, ...",
            ),
        ),
    ],
)
def test_nested_shapes_are_followed_seven_deep(levels: int, found: tuple[str, str]) -> None:
    properties = {"v": _nested_shapes(levels)}
    tool = {"name": "f", "description": "d", "parameters": {"properties": properties}}
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    call = {"name": "f", "arguments": {"v": "x"}}
    assert [(f.code, f.message) for f in scanner.iter_findings(call)] == [found]


def test_a_body_nested_past_the_shapes_followed_is_never_clean() -> None:
    """Eight nested choices: the seventh is the last followed, and the body that fits
    none of them is said to, at the nearest shape named so far."""
    schema = _nested_shapes(8)
    inner = schema["oneOf"][0]
    while "oneOf" in inner:
        inner = inner["oneOf"][0]
    inner.update(type="object", properties={"v": {"type": "integer"}})
    assert _composed_findings(schema, {"v": "x"}) == [
        (
            "E4.2",
            ("body",),
            None,
            "addPet",
            "the body fits none of its documented shapes; the nearest, L1 > L2 > L3 > L4 > L5 "
            "> L6 > L7, is broken: {'v': 'x'} is not valid under any of the given schemas",
        )
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "s must be a string, got null None"),
        (True, "s must be a string, got boolean True"),
        (1.5, "s must be a string, got number 1.5"),
        ([1], "s must be a string, got array [1]"),
        ({"a": 1}, "s must be a string, got object {'a': 1}"),
    ],
)
def test_the_json_type_a_wrong_value_has_is_named(value: Any, message: str) -> None:
    tool = {
        "name": "f",
        "description": "d",
        "parameters": {"properties": {"s": {"type": "string"}}},
    }
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    call = {"name": "f", "arguments": {"s": value}}
    assert [f.message for f in scanner.iter_findings(call)] == [message]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("a" * 58, "'" + "a" * 58 + "'"),  # 60 characters written: shown whole
        ("a" * 59, "'" + "a" * 56 + "..."),  # 61: cut to 60 with the dots
    ],
)
def test_a_value_is_shown_whole_up_to_60_characters(value: str, shown: str) -> None:
    tool = {"name": "put", "parameters": {"properties": {"n": {"type": "integer"}}}}
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    [found] = scanner.iter_findings({"name": "put", "arguments": {"n": value}})
    assert found.message == f"n must be an integer, got string {shown}"

"""Object- and array-valued parameters sent in pieces are put together and checked
against their schema: in the query (``filter[status]=open``, ``ids[]=1``, or an object's
properties as query keys, ``style: form, explode: true``), where each piece was accepted
unchecked and the request reported clean; and in a form body as payment APIs take it
(``metadata[order_id]=6735&expand[]=customer&items[0][price]=p_1``), where each
bracketed field was an unknown parameter (E3)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from autofeedback import ApiCatalog, Operation, Parameter, Scanner

FILTER = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["active", "done"]},
        "min": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}
SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "items", "version": "1"},
    "servers": [{"url": "https://api.example.com/v2"}, {"url": "http://127.0.0.1:8080"}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [
                    {"name": "filter", "in": "query", "style": "deepObject", "schema": FILTER},
                    {"name": "page[size]", "in": "query", "schema": {"type": "integer"}},
                    {
                        "name": "point",
                        "in": "query",
                        "schema": {
                            "type": "object",
                            "properties": {"lat": {"type": "number"}, "lng": {"type": "number"}},
                        },
                    },
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def findings(query: str, host: str = "https://api.example.com/v2") -> list[tuple[Any, ...]]:
    scanner = Scanner(ApiCatalog.from_obj(SPEC, source="items"), retriever=None)
    request = {"method": "GET", "url": f"{host}/items?{query}"}
    return [(f.code, f.location, f.message) for f in scanner.iter_findings(request)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("filter[status]=open",
         [("E4.2", ("query", "filter", "status"),
           "filter.status must be one of 'active', 'done'; got 'open'")]),
        ("filter[status]=active&filter[min]=ten",
         [("E4.1", ("query", "filter", "min"), "filter.min must be an integer, got string 'ten'")]),
        # percent-encoded brackets, as a browser or requests writes them
        ("filter%5Bmin%5D=ten",
         [("E4.1", ("query", "filter", "min"), "filter.min must be an integer, got string 'ten'")]),
        ("filter[status]=done&filter[min]=3&filter[tags]=a,b", []),
        # a property the schema does not list: an object takes it unless it says otherwise
        ("filter[other]=1", []),
        # form style, exploded: the properties of `point` are query keys
        ("lat=1.5&lng=east",
         [("E4.1", ("query", "point", "lng"), "point.lng must be a number, got string 'east'")]),
        ("lat=1.5&lng=-3", []),
        ("filter[tags][]=a&filter[tags][]=b", []),
        # a parameter documented with brackets in its name is that parameter
        ("page[size]=big",
         [("E4.1", ("query", "page[size]"), "page[size] must be an integer, got string 'big'")]),
    ],
)  # fmt: skip
def test_pieces_of_an_object_in_the_query_are_checked_together(
    query: str, expected: list[tuple[Any, ...]]
) -> None:
    assert findings(query) == expected


CHARGES = {
    "openapi": "3.1.0",
    "info": {"title": "pay", "version": "1"},
    "servers": [{"url": "https://api.example.com"}],
    "paths": {
        "/charges": {
            "post": {
                "operationId": "createCharge",
                "requestBody": {
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {
                                "type": "object",
                                "required": ["amount"],
                                "properties": {
                                    "amount": {"type": "integer"},
                                    "metadata": {
                                        "type": "object",
                                        "additionalProperties": {"type": "string"},
                                    },
                                    "expand": {"type": "array", "items": {"type": "string"}},
                                    "items": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                "price": {"type": "string"},
                                                "quantity": {"type": "integer"},
                                            },
                                        },
                                    },
                                },
                            }
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def charge(body: str | None = None, **request: Any) -> list[tuple[Any, ...]]:
    scanner = Scanner(ApiCatalog.from_obj(CHARGES, source="pay"), retriever=None)
    sent = {"method": "POST", "url": "https://api.example.com/charges", **request}
    if body is not None:
        sent.update(body=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
    return [(f.code, f.location, f.message) for f in scanner.iter_findings(sent)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("amount=2000&metadata[order_id]=6735&expand[]=customer&expand[]=invoice", []),
        ("amount=1&items[0][price]=p_1&items[0][quantity]=2&items[1][price]=p_2", []),
        ("amount=1&items[0][price]=p_1&items[0][quantity]=two",
         [("E4.1", ("body", "items", "0", "quantity"),
           "items.0.quantity must be an integer, got string 'two'")]),
        # pieces that make no one value stay as they came
        ("amount=1&metadata[a]=1&metadata[a][b]=2",
         [("E3", ("body", "metadata[a]"), "unknown body parameter 'metadata[a]'; did you mean "
           "'metadata'? createCharge takes: amount, metadata, expand, items"),
          ("E3", ("body", "metadata[a][b]"), "unknown body parameter 'metadata[a][b]'; did you "
           "mean 'metadata'? createCharge takes: amount, metadata, expand, items")]),
    ],
)  # fmt: skip
def test_pieces_of_a_form_body_are_checked_together(
    body: str, expected: list[tuple[Any, ...]]
) -> None:
    assert charge(body) == expected


def test_a_json_body_s_key_is_what_it_says_brackets_and_all() -> None:
    assert charge(json={"amount": 1, "metadata[x]": "1"}) == [
        (
            "E3",
            ("body", "metadata[x]"),
            "unknown body parameter 'metadata[x]'; did you mean 'metadata'? createCharge "
            "takes: amount, metadata, expand, items",
        )
    ]


FILTERS = {
    "openapi": "3.1.0",
    "info": {"title": "f", "version": "1"},
    "servers": [{"url": "https://api.example.com"}],
    "paths": {
        "/things": {
            "get": {
                "operationId": "listThings",
                "parameters": [
                    # properties without a type: an object all the same
                    {"name": "where", "in": "query", "style": "deepObject",
                     "schema": {"properties": {"min": {"type": "integer"}}}},
                    {"name": "filter", "in": "query", "style": "deepObject", "schema": FILTER},
                    {"name": "tags", "in": "query", "schema": {"type": "array"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}  # fmt: skip


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("where[min]=ten",
         [("E4.1", ("query", "where", "min"), "where.min must be an integer, got string 'ten'")]),
        # a deepObject's properties are no query keys of their own
        ("status=open",
         [("E3", ("query", "status"),
           "unknown query parameter 'status'; did you mean 'tags'? listThings takes: where, "
           "filter, tags")]),
        # an array without items takes any item
        ("tags[]=a&tags[]=b", []),
    ],
)  # fmt: skip
def test_objects_without_a_type_and_deep_objects_own_keys(
    query: str, expected: list[tuple[Any, ...]]
) -> None:
    scanner = Scanner(ApiCatalog.from_obj(FILTERS, source="f"), retriever=None)
    request = {"method": "GET", "url": f"https://api.example.com/things?{query}"}
    assert [(f.code, f.location, f.message) for f in scanner.iter_findings(request)] == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # a map's values read as its additionalProperties say
        ("amount=1&metadata[count]=5", []),
        # indexes in their numeric order, not their text's
        ("amount=1&items[2][quantity]=x&items[10][quantity]=2",
         [("E4.1", ("body", "items", "0", "quantity"),
           "items.0.quantity must be an integer, got string 'x'")]),
        # a list written both ways is no one value; what follows it is still read
        ("expand[]=a&expand[0]=b&amount=x",
         [("E3.2", ("body", "expand[]"), "unknown body parameter 'expand[]'; it is a spelling "
           "variant of 'expand'"),
          ("E3", ("body", "expand[0]"), "unknown body parameter 'expand[0]'; did you mean "
           "'expand'? createCharge takes: amount, metadata, expand, items"),
          ("E4.1", ("body", "amount"), "amount must be an integer, got string 'x'")]),
        ("metadata[a]=1&metadata[a][b]=2&amount=x",
         [("E3", ("body", "metadata[a]"), "unknown body parameter 'metadata[a]'; did you mean "
           "'metadata'? createCharge takes: amount, metadata, expand, items"),
          ("E3", ("body", "metadata[a][b]"), "unknown body parameter 'metadata[a][b]'; did you "
           "mean 'metadata'? createCharge takes: amount, metadata, expand, items"),
          ("E4.1", ("body", "amount"), "amount must be an integer, got string 'x'")]),
        # deeper than 32 brackets: left as it came
        ("amount=1&metadata" + "[a]" * 40 + "=1",
         [("E3", ("body", "metadata" + "[a]" * 40), "unknown body parameter 'metadata"
           + "[a]" * 40 + "'; createCharge takes: amount, metadata, expand, items")]),
    ],
)  # fmt: skip
def test_how_form_pieces_are_put_together(body: str, expected: list[tuple[Any, ...]]) -> None:
    spec = json.loads(json.dumps(CHARGES))
    schema = spec["paths"]["/charges"]["post"]["requestBody"]["content"][
        "application/x-www-form-urlencoded"
    ]["schema"]
    schema["properties"]["metadata"]["additionalProperties"] = {"type": "integer"}
    scanner = Scanner(ApiCatalog.from_obj(spec, source="pay"), retriever=None)
    sent = {
        "method": "POST",
        "url": "https://api.example.com/charges",
        "body": body,
        "headers": {"Content-Type": "application/x-www-form-urlencoded"},
    }
    assert [(f.code, f.location, f.message) for f in scanner.iter_findings(sent)] == expected


def test_one_item_written_with_brackets_is_a_list_of_it() -> None:
    from autofeedback.checks._object_queries import fold_object_queries
    from autofeedback.core._resolve import Arg

    op = ApiCatalog.from_obj(CHARGES, source="pay").get("createCharge")
    assert op is not None
    folded = fold_object_queries(op, [Arg("expand[]", "body", "customer", raw=True)])
    assert [(a.name, a.value) for a in folded] == [("expand", ["customer"])]


NULLABLE = {
    "openapi": "3.1.0",
    "info": {"title": "n", "version": "1"},
    "servers": [{"url": "https://api.example.com"}],
    "paths": {
        "/places": {
            "get": {
                "operationId": "listPlaces",
                "parameters": [
                    # OpenAPI 3.1's nullable object (3.0's `nullable: true` loads the same)
                    {"name": "area", "in": "query",
                     "schema": {"type": ["object", "null"],
                                "properties": {"radius": {"type": "number"}}}},
                    {"name": "near", "in": "query", "style": "deepObject",
                     "schema": {"type": ["null", "object"],
                                "properties": {"lat": {"type": "number"}}}},
                    {"name": "ids", "in": "query",
                     "schema": {"type": ["array", "null"], "items": {"type": "integer"}}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}  # fmt: skip


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("radius=east",
         [("E4.1", ("query", "area", "radius"),
           "area.radius must be a number, got string 'east'")]),
        ("near[lat]=north",
         [("E4.1", ("query", "near", "lat"), "near.lat must be a number, got string 'north'")]),
        ("ids[]=1&ids[]=x",
         [("E4.1", ("query", "ids", "1"), "ids.1 must be an integer, got string 'x'")]),
        ("radius=2.5&near[lat]=1&ids[]=1&ids[]=2", []),
    ],
)  # fmt: skip
def test_pieces_of_a_nullable_object_or_array_are_checked_together(
    query: str, expected: list[tuple[Any, ...]]
) -> None:
    # before: never put together, each piece was accepted unchecked
    scanner = Scanner(ApiCatalog.from_obj(NULLABLE, source="n"), retriever=None)
    request = {"method": "GET", "url": f"https://api.example.com/places?{query}"}
    assert [(f.code, f.location, f.message) for f in scanner.iter_findings(request)] == expected


def _query_findings(parameter: Parameter, query: str) -> list[tuple[Any, ...]]:
    op = Operation("listItems", method="GET", path="/items", parameters=(parameter,))
    scanner = Scanner(ApiCatalog([op]), retriever=None)
    found = scanner.iter_findings({"method": "GET", "url": f"/items?{query}"})
    return [(f.code, f.location) for f in found]


AREA = {"type": "object", "properties": {"radius": {"type": "number"}}}


def test_an_object_not_exploded_has_no_query_keys_of_its_own() -> None:
    # explode: false sends the object as one value (area=radius,3): radius=3 alone is no
    # piece of it
    flat = Parameter("area", "query", schema=AREA, style="form", explode=False)
    assert _query_findings(flat, "radius=3") == [("E3", ("query", "radius"))]
    exploded = Parameter("area", "query", schema=AREA, style="form", explode=True)
    assert _query_findings(exploded, "radius=3") == []


def test_a_form_body_objects_properties_are_no_query_keys() -> None:
    meta = Parameter("meta", "body", schema=AREA)
    op = Operation(
        "addItem", method="POST", path="/items", parameters=(meta,),
        body_schema={"type": "object", "properties": {"meta": AREA}},
        body_media="application/x-www-form-urlencoded",
    )  # fmt: skip
    scanner = Scanner(ApiCatalog([op]), retriever=None)
    found = scanner.iter_findings({"method": "POST", "url": "/items?radius=3"})
    assert [(f.code, f.location) for f in found] == [("E3", ("query", "radius"))]


def test_a_piece_of_32_brackets_is_folded_and_one_of_33_is_not() -> None:
    deep: dict[str, Any] = {"type": "integer"}
    for _ in range(33):
        deep = {"type": "object", "properties": {"k": deep}}
    filt = Parameter("f", "query", schema=deep, style="deepObject")
    assert _query_findings(filt, "f" + "[k]" * 32 + "=x") == [("E4.1", ("query", "f", *["k"] * 32))]
    # deeper than any schema is checked: left as it came, a piece of the object unchecked
    assert _query_findings(filt, "f" + "[k]" * 33 + "=x") == []


def test_an_index_of_nine_digits_is_an_item_and_one_of_ten_a_key() -> None:
    ids = Parameter("ids", "query", schema={"type": "array", "items": {"type": "integer"}},
                    style="deepObject")  # fmt: skip
    assert _query_findings(ids, "ids[123456789]=1") == []
    assert _query_findings(ids, "ids[1234567890]=1") == [("E4.1", ("query", "ids"))]

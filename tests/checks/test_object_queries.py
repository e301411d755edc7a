"""Object- and array-valued parameters sent in pieces are put together and checked
against their schema: in the query (``filter[status]=open``, ``ids[]=1``, or an object's
properties as query keys, ``style: form, explode: true``), where each piece was accepted
unchecked and the request reported clean; and in a form body as payment APIs take it
(``metadata[order_id]=6735&expand[]=customer&items[0][price]=p_1``), where each
bracketed field was an unknown parameter (E3)."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner

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

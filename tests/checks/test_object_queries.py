"""Object-valued query parameters sent in pieces (``filter[status]=open``, or an object's
properties as query keys, ``style: form, explode: true``) are put together and checked
against the object's schema; before, each piece was accepted unchecked and the request
reported clean."""

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
        # a parameter documented with brackets in its name is that parameter
        ("page[size]=big",
         [("E4.1", ("query", "page[size]"), "page[size] must be an integer, got string 'big'")]),
    ],
)  # fmt: skip
def test_pieces_of_an_object_in_the_query_are_checked_together(
    query: str, expected: list[tuple[Any, ...]]
) -> None:
    assert findings(query) == expected

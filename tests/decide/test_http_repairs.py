"""An HTTP request whose path has one keyboard slip in one segment is sent to the one
documented path of its method that it meant; two slips, another method, a longer path or
a slip toward a delete are left to the model."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, Decider, Scanner, SpecWarning

BASE = "https://api.example.org/v1"


def _op(op_id: str, *, path_id: bool = True) -> dict[str, Any]:
    params = [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}]
    return {
        "operationId": op_id,
        "parameters": params if path_id else [],
        "responses": {"200": {"description": "ok"}},
    }


SPEC = {
    "openapi": "3.0.0",
    "info": {"title": "events", "version": "1"},
    "servers": [{"url": BASE}],
    "paths": {
        # a DELETE first: the search for the path goes past other methods and lengths
        "/events/{id}": {"delete": _op("deleteEvent"), "get": _op("getEvent")},
        "/events": {"get": _op("listEvents", path_id=False)},
        "/venues/{id}/evnts": {"get": _op("listVenueEvents")},
    },
}


@pytest.fixture(scope="module")
def decider() -> Decider:
    return Decider(Scanner(ApiCatalog.from_obj(SPEC), retriever=None))


@pytest.mark.parametrize(
    ("written", "path"),
    [
        ("GET /evnts/5", "/v1/events/5"),
        ("GET /evnts", "/v1/events"),
        ("GET /venues/5/evnst", "/v1/venues/5/evnts"),
        ("GET /Venues/5/evnst", "/v1/venues/5/evnts"),  # a case variant beside the slip
    ],
)
def test_a_path_with_one_slip_is_repaired(decider: Decider, written: str, path: str) -> None:
    method, _, rest = written.partition(" ")
    [decision] = decider.decide(f"{method} {BASE}{rest}")
    assert (decision.action, decision.reason) == ("forward", "repaired")
    assert [(r.before, r.after) for r in decision.repairs] == [(f"/v1{rest}", path)]
    assert decision.request is not None and decision.request.url == f"{BASE}{path[3:]}"


@pytest.mark.parametrize(
    "written",
    [
        "DELETE /evnts/5",  # a slip toward a delete
        "POST /evnts/5",  # no such method
        "GET /evnts/5/x",  # no path that long
        "GET /vneues/5/evnst",  # two slips
        # no value where the id goes: the path respelt still names no endpoint
        "GET /venues//evnst",
    ],
)
def test_a_path_that_is_not_one_slip_is_left_to_the_model(decider: Decider, written: str) -> None:
    method, _, rest = written.partition(" ")
    [decision] = decider.decide(f"{method} {BASE}{rest}")
    assert decision.action == "feedback" and not decision.repairs
    assert [f.code for f in decision.errors] == ["E2"]


ORDERS = {
    "openapi": "3.0.0",
    "info": {"title": "orders", "version": "1"},
    "servers": [{"url": "https://api.example.org"}],
    "paths": {
        "/orders": {
            "post": {
                "operationId": "createOrder",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "qty": {"type": "integer"},
                                    "item": {
                                        "type": "object",
                                        "properties": {
                                            "size": {"type": "integer"},
                                            "name": {"type": "string"},
                                        },
                                    },
                                },
                            }
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


@pytest.mark.parametrize(
    ("body", "sent", "repair"),
    [
        ({"qty": "3"}, {"qty": 3}, "E4.1 body.qty: '3' -> 3"),
        (
            {"item": {"size": "4", "name": "x"}},
            {"item": {"size": 4, "name": "x"}},
            "E4.1 body.item.size: '4' -> 4",
        ),
        ('{"qty": "3"}', '{"qty": 3}', "E4.1 body.qty: '3' -> 3"),  # JSON text stays text
        ('{"Qty": 3}', '{"qty": 3}', "E3.2 body.Qty: 'Qty' -> 'qty'"),
        (b'{"qty": "3"}', b'{"qty": 3}', "E4.1 body.qty: '3' -> 3"),  # bytes stay bytes
    ],
)
def test_a_json_body_is_sent_with_its_repairs_in_the_shape_it_was_written(
    body: Any, sent: Any, repair: str
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_obj(ORDERS), retriever=None))
    call = ApiRequest(method="POST", url="https://api.example.org/orders", body=body)
    [decision] = decider.decide(call)
    assert (decision.action, [str(r) for r in decision.repairs]) == ("forward", [repair])
    assert decision.request is not None and decision.request.body == sent
    assert call.body == body  # the model's request keeps what it wrote


def _query(name: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": kind}}


NOTES = {
    **ORDERS,
    "paths": {
        "/orders": {
            "post": {
                **ORDERS["paths"]["/orders"]["post"],
                "parameters": [_query("limit", "integer"), _query("tag"), _query("note")],
            }
        }
    },
}


@pytest.mark.parametrize(
    ("url", "body", "sent_url", "sent_body"),
    [
        # the query as the model encoded it (%20, a blank value) where only the body changes
        ("/orders?tag=a%20b&note=", {"qty": "3"}, "/orders?tag=a%20b&note=", {"qty": 3}),
        # a blank value kept beside a renamed one
        ("/orders?limt=5&note=", {"qty": 3}, "/orders?limit=5&note=", {"qty": 3}),
        # a body written as text, untouched where only the query changes
        ("/orders?limt=5", '{"qty":3}', "/orders?limit=5", '{"qty":3}'),
    ],
)
def test_what_a_repair_does_not_touch_is_sent_as_written(
    url: str, body: Any, sent_url: str, sent_body: Any
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_obj(NOTES), retriever=None))
    origin = "https://api.example.org"
    [decision] = decider.decide(ApiRequest(method="POST", url=origin + url, body=body))
    assert decision.action == "forward" and len(decision.repairs) == 1
    assert decision.request is not None
    assert (decision.request.url, decision.request.body) == (origin + sent_url, sent_body)


def test_a_body_that_is_not_utf8_is_never_rewritten() -> None:
    """Decoding it would replace the bytes it cannot read (a Latin-1 ``é``): the body
    would say something else than the model wrote, beside the repair it shows."""
    decider = Decider(Scanner(ApiCatalog.from_obj(ORDERS), retriever=None))
    body = b'{"qty": "3", "item": {"name": "caf\xe9"}}'
    call = ApiRequest(method="POST", url="https://api.example.org/orders", body=body)
    [decision] = decider.decide(call)
    assert (decision.action, decision.repairs) == ("feedback", ())
    assert decision.request is not None and decision.request.body == body
    assert [f.code for f in decision.errors] == ["E4.1"]


def test_with_the_embedding_model_a_slip_is_still_repaired_to_its_path(api_retriever: Any) -> None:
    """The real model finds ``/venues/{id}/evnts`` closest to ``/evnts/5`` (E2.3, a
    guess); the slip says ``/events/{id}``, one letter away, and that is the repair."""
    decider = Decider(Scanner(ApiCatalog.from_obj(SPEC), retriever=api_retriever))
    [decision] = decider.decide(f"GET {BASE}/evnts/5")
    assert [f.code for f in decision.findings] == ["E2.3"]
    assert [(r.before, r.after) for r in decision.repairs] == [("/v1/evnts/5", "/v1/events/5")]


def _get(op_id: str, *params: dict[str, Any]) -> dict[str, Any]:
    return {
        "operationId": op_id,
        "parameters": list(params),
        "responses": {"200": {"description": "ok"}},
    }


ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
MISSING = {"$ref": "#/components/parameters/Missing"}  # points nowhere: the op is not read whole
SHOP = {
    "openapi": "3.0.0",
    "info": {"title": "shop", "version": "1"},
    "servers": [{"url": BASE}],
    "paths": {
        "/reports/{id}/XLSX": {"get": _get("getReportXlsx", ID)},
        "/events/{id}/cancel": {"post": _get("cancelEvent", ID)},
        "/venues/{id}": {"get": _get("getVenue", ID, MISSING)},
        "/items": {
            "get": _get(
                "listItems",
                {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                {"name": "offset", "in": "query", "schema": {"type": "integer"}},
            )
        },
    },
}


@pytest.fixture(scope="module")
def shop() -> Decider:
    with pytest.warns(SpecWarning, match="points nowhere"):
        catalog = ApiCatalog.from_obj(SHOP)
    return Decider(Scanner(catalog, retriever=None))


def test_a_slip_beside_a_segment_in_capitals_is_repaired(shop: Decider) -> None:
    # the segments are compared whole: a segment's own letters are never trimmed
    [decision] = shop.decide(f"GET {BASE}/reprots/5/XLSX")
    assert [(r.before, r.after) for r in decision.repairs] == [
        ("/v1/reprots/5/XLSX", "/v1/reports/5/XLSX")
    ]
    assert decision.request is not None and decision.request.url == f"{BASE}/reports/5/XLSX"


@pytest.mark.parametrize(
    "written",
    [
        # the slip is in the word that says the effect: as written, the path says none
        "POST /events/5/cancle",
        # the one path it may mean is of an operation not read whole
        "GET /vneues/5",
    ],
)
def test_a_slip_toward_more_than_it_says_or_toward_an_unread_path_is_left(
    shop: Decider, written: str
) -> None:
    method, _, rest = written.partition(" ")
    [decision] = shop.decide(f"{method} {BASE}{rest}")
    assert (decision.action, decision.repairs) == ("feedback", ())
    assert [f.code for f in decision.errors] == ["E2"]


def test_query_params_given_apart_are_renamed_one_by_one(shop: Decider) -> None:
    call = ApiRequest(method="GET", url=f"{BASE}/items", params={"limt": 5, "offset": 0})
    [decision] = shop.decide(call)
    assert [str(r) for r in decision.repairs] == ["E3 query.limt: 'limt' -> 'limit'"]
    assert decision.request is not None and decision.request.params == {"limit": 5, "offset": 0}


def _shape(title: str, field: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "title": title,
        "type": "object",
        "properties": {field: schema},
        "required": [field],
        "maxProperties": 1,
    }


def test_a_slip_is_repaired_beside_a_body_that_fits_none_of_its_shapes() -> None:
    """The body is the model's to fix (E4.2, located at the body itself); the query
    parameter's slip is repaired all the same."""
    shapes = [
        _shape("ByQty", "qty", {"type": "integer"}),
        _shape("BySku", "sku", {"type": "string"}),
    ]
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "orders", "version": "1"},
        "servers": [{"url": BASE}],
        "paths": {
            "/orders": {
                "post": {
                    "operationId": "createOrder",
                    "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                    "requestBody": {"content": {"application/json": {"schema": {"oneOf": shapes}}}},
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    decider = Decider(Scanner(ApiCatalog.from_obj(spec), retriever=None))
    call = ApiRequest(method="POST", url=f"{BASE}/orders?limt=5", body={"qty": 1, "sku": "a"})
    [decision] = decider.decide(call)
    assert decision.action == "feedback"
    assert [str(r) for r in decision.repairs] == ["E3 query.limt: 'limt' -> 'limit'"]
    assert [(f.code, f.location) for f in decision.errors] == [("E4.2", ("body",))]
    assert decision.request is not None and decision.request.url == f"{BASE}/orders?limit=5"

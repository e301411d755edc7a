"""An HTTP request whose path has one keyboard slip in one segment is sent to the one
documented path of its method that it meant; two slips, another method, a longer path or
a slip toward a delete are left to the model."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, Decider, Scanner

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


def test_with_the_embedding_model_a_slip_is_still_repaired_to_its_path(api_retriever: Any) -> None:
    """The real model finds ``/venues/{id}/evnts`` closest to ``/evnts/5`` (E2.3, a
    guess); the slip says ``/events/{id}``, one letter away, and that is the repair."""
    decider = Decider(Scanner(ApiCatalog.from_obj(SPEC), retriever=api_retriever))
    [decision] = decider.decide(f"GET {BASE}/evnts/5")
    assert [f.code for f in decision.findings] == ["E2.3"]
    assert [(r.before, r.after) for r in decision.repairs] == [("/v1/evnts/5", "/v1/events/5")]

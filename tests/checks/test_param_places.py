"""Where a parameter travels (autofeedback.checks._check_params): a header in any case,
a credential named in a call in function form, a parameter sent in the wrong place (every
field of its finding), and a body left out of a call in function form. Cases a mutation
pass (issue 39, benchmarks/RESULTS.md) found no test deciding."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "shop", "version": "1"},
    "servers": [{"url": "http://127.0.0.1"}],
    "components": {
        "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}
    },
    "security": [{"key": []}],
    "paths": {
        "/charges": {
            "post": {
                "operationId": "createCharge",
                "parameters": [
                    {"name": "X-Rate", "in": "header", "schema": {"type": "integer"}},
                    {"name": "currency", "in": "query", "schema": {"type": "string"}},
                ],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["amount"],
                                "properties": {"amount": {"type": "integer"}},
                            }
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}
URL = "http://127.0.0.1/charges"


@pytest.fixture
def scanner() -> Scanner:
    return Scanner(ApiCatalog.from_obj(SPEC), retriever=None)


def found(scanner: Scanner, request: dict[str, Any]) -> list[tuple[str, tuple[str, ...], str]]:
    return [(f.code, f.location, f.message) for f in scanner.iter_findings(request)]


def test_a_header_sent_in_another_case_is_checked_as_the_documented_one(scanner: Scanner) -> None:
    request = {"method": "POST", "url": URL, "headers": {"x-rate": "abc"}, "json": {"amount": 1}}
    assert found(scanner, request) == [
        ("E4.1", ("header", "x-rate"), "x-rate must be an integer, got string 'abc'")
    ]
    request["headers"] = {"x-rate": "3"}
    assert found(scanner, request) == []


@pytest.mark.parametrize("name", ["X-Api-Key", "x-api-key"])
def test_a_credential_named_in_a_call_in_function_form_is_no_unknown_name(
    scanner: Scanner, name: str
) -> None:
    assert found(scanner, {"name": "createCharge", "arguments": {"amount": 1, name: "sk"}}) == []


def test_a_parameter_sent_in_the_wrong_place(scanner: Scanner) -> None:
    request = {"method": "POST", "url": f"{URL}?X-Rate=3", "json": {"amount": 1}}
    (f,) = scanner.iter_findings(request)
    assert (f.code, f.location, f.got, f.expected, f.suggestion) == (
        "E3",
        ("query", "X-Rate"),
        "X-Rate",
        "header",
        "X-Rate",
    )
    assert (f.operation, f.doc, f.severity) == (
        "createCharge",
        "X-Rate (header, integer, optional)",
        "error",
    )
    assert f.message == "parameter 'X-Rate' belongs in the header, not the query"


def test_a_call_in_function_form_that_sends_no_body_field(scanner: Scanner) -> None:
    # the spec does not require the body: what its fields require is one warning
    (f,) = scanner.iter_findings({"name": "createCharge", "arguments": {"currency": "eur"}})
    assert (f.code, f.location, f.expected, f.severity) == (
        "E3.4",
        ("body",),
        ["amount"],
        "warning",
    )
    assert f.message == (
        "no request body was sent; the documented body requires 'amount' "
        "(the spec does not require the body itself)"
    )

"""Where a parameter travels (autofeedback.checks._check_params): a header in any case,
a credential named in a call in function form, a parameter sent in the wrong place (every
field of its finding), and a body left out of a call in function form. Cases a mutation
pass (issue 39, benchmarks/RESULTS.md) found no test deciding."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner

SPEC: dict[str, Any] = {
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
    assert (f.code, f.location, f.expected, f.suggestion, f.severity) == (
        "E3.4",
        ("body",),
        ["amount"],
        "amount",
        "warning",
    )
    assert (f.operation, f.doc) == ("createCharge", "amount (body, integer, required)")
    assert f.message == (
        "no request body was sent; the documented body requires 'amount' "
        "(the spec does not require the body itself)"
    )


def test_a_body_sent_without_a_field_it_requires(scanner: Scanner) -> None:
    # a body was sent: what it misses is an error, not the warning of a body left out
    request = {"method": "POST", "url": URL, "json": {"amout": 1}}
    unknown, missing = scanner.iter_findings(request)
    assert (unknown.code, unknown.location, unknown.suggestion) == (
        "E3",
        ("body", "amout"),
        "amount",
    )
    assert (missing.code, missing.location, missing.got, missing.expected, missing.suggestion) == (
        "E3.4",
        ("body", "amount"),
        None,
        "amount",
        "amount",
    )
    assert (missing.operation, missing.doc, missing.severity) == (
        "createCharge",
        "amount (body, integer, required)",
        "error",
    )
    assert missing.message == "required body parameter 'amount' is missing"


def test_a_call_in_function_form_that_sends_one_body_field_sends_the_body() -> None:
    spec = copy.deepcopy(SPEC)
    body = spec["paths"]["/charges"]["post"]["requestBody"]["content"]["application/json"]
    body["schema"]["properties"]["note"] = {"type": "string"}
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    assert found(scanner, {"name": "createCharge", "arguments": {"note": "x"}}) == [
        ("E3.4", ("body", "amount"), "required body parameter 'amount' is missing")
    ]


def test_a_parameter_in_the_wrong_place_hides_no_unknown_name_after_it(scanner: Scanner) -> None:
    request = {"method": "POST", "url": f"{URL}?X-Rate=3&colour=red", "json": {"amount": 1}}
    assert [(f.code, f.location) for f in scanner.iter_findings(request)] == [
        ("E3", ("query", "X-Rate")),
        ("E3", ("query", "colour")),
    ]


def test_a_parameter_in_the_wrong_place_after_a_hundred_unknown_names(scanner: Scanner) -> None:
    # the unknown names past the hundredth are one finding; what comes after them is still read
    query = "&".join(f"u{i}=1" for i in range(101))
    request = {"method": "POST", "url": f"{URL}?{query}&X-Rate=3", "json": {"amount": 1}}
    findings = list(scanner.iter_findings(request))
    assert len(findings) == 102
    assert [(f.code, f.location, f.message) for f in findings[-2:]] == [
        (
            "E3",
            ("query", "u100"),
            "unknown query parameter 'u100' (the first 100 are reported one by one); "
            "createCharge takes: X-Rate, currency, amount",
        ),
        ("E3", ("query", "X-Rate"), "parameter 'X-Rate' belongs in the header, not the query"),
    ]


def _credential_also_a_header_parameter() -> Scanner:
    spec = copy.deepcopy(SPEC)
    parameters = spec["paths"]["/charges"]["post"]["parameters"]
    parameters.append(
        {"name": "X-Api-Key", "in": "header", "required": True, "schema": {"type": "string"}}
    )
    return Scanner(ApiCatalog.from_obj(spec), retriever=None)


def test_a_required_header_that_is_also_the_credential_is_sent() -> None:
    scanner = _credential_also_a_header_parameter()
    request = {"method": "POST", "url": URL, "headers": {"x-api-key": "sk"}, "json": {"amount": 1}}
    assert found(scanner, request) == []
    request["json"] = {}  # ...and hides no required parameter after it
    assert found(scanner, request) == [
        ("E3.4", ("body", "amount"), "required body parameter 'amount' is missing")
    ]
    request["json"] = {"amount": 1}
    del request["headers"]
    assert found(scanner, request) == [
        ("E3.4", ("header", "X-Api-Key"), "required header parameter 'X-Api-Key' is missing")
    ]


def test_a_required_header_that_is_also_the_credential_is_sent_in_function_form() -> None:
    """The credential is set aside before the parameters are matched: it still counts as
    the header of its name (found by the fourth mutation pass, issue 39)."""
    scanner = _credential_also_a_header_parameter()
    call = {"name": "createCharge", "arguments": {"amount": 1, "X-Api-Key": "sk"}}
    assert found(scanner, call) == []
    # ...and an unknown name beside it is not told to become it
    call["arguments"] = {"amount": 1, "X-Api-Key": "sk", "colour": "red"}
    assert [(f.code, f.suggestion) for f in scanner.iter_findings(call)] == [("E3", None)]
    # ...and counts as sent for no parameter of another name
    call["arguments"] = {"X-Api-Key": "sk"}
    assert [(f.code, f.location, f.severity) for f in scanner.iter_findings(call)] == [
        ("E3.4", ("body",), "warning")
    ]


def test_an_object_sent_in_the_query_string_as_its_properties() -> None:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "search", "version": "1"},
        "paths": {
            "/search": {
                "get": {
                    "operationId": "search",
                    "parameters": [
                        {
                            "name": "filter",
                            "in": "query",
                            "required": True,
                            "style": "deepObject",
                            "schema": {
                                "type": "object",
                                "properties": {"status": {"type": "string"}},
                            },
                        },
                        {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    request = {"method": "GET", "url": "/search?filter[status]=open&limt=5"}
    assert found(scanner, request) == [
        (
            "E3",
            ("query", "limt"),
            "unknown query parameter 'limt'; did you mean 'limit'? search takes: filter, limit",
        )
    ]


def test_a_call_in_function_form_that_sends_no_body_field_of_two_required() -> None:
    spec = copy.deepcopy(SPEC)
    body = spec["paths"]["/charges"]["post"]["requestBody"]["content"]["application/json"]
    body["schema"]["properties"]["note"] = {"type": "string"}
    body["schema"]["required"] = ["amount", "note"]
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    (f,) = scanner.iter_findings({"name": "createCharge", "arguments": {"currency": "eur"}})
    assert (f.location, f.expected, f.suggestion, f.severity) == (
        ("body",),
        ["amount", "note"],
        "amount",
        "warning",
    )
    assert f.doc == "amount (body, integer, required); note (body, string, required)"
    assert f.message == (
        "no request body was sent; the documented body requires 'amount', 'note' "
        "(the spec does not require the body itself)"
    )


def test_a_required_header_is_missing_whatever_other_headers_are_sent() -> None:
    scanner = _credential_also_a_header_parameter()
    missing = ("E3.4", ("header", "X-Api-Key"), "required header parameter 'X-Api-Key' is missing")
    request = {"method": "POST", "url": URL, "headers": {"X-Rate": "3"}, "json": {"amount": 1}}
    assert found(scanner, request) == [missing]
    # its name in the query string is no header
    request = {"method": "POST", "url": f"{URL}?x-api-key=sk", "json": {"amount": 1}}
    assert found(scanner, request) == [
        (
            "E3.2",
            ("query", "x-api-key"),
            "unknown query parameter 'x-api-key'; it is a spelling variant of 'X-Api-Key'",
        ),
        missing,
    ]


def test_a_header_documented_twice_in_two_cases_is_sent_once() -> None:
    spec = copy.deepcopy(SPEC)
    parameters = spec["paths"]["/charges"]["post"]["parameters"]
    parameters[0]["required"] = True
    parameters.append({"name": "x-rate", "in": "header", "required": True, "schema": {}})
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    request = {"method": "POST", "url": URL, "headers": {"x-rate": "3"}, "json": {"amount": 1}}
    assert found(scanner, request) == []
    request["json"] = {}  # ...and hides no required parameter after them
    assert found(scanner, request) == [
        ("E3.4", ("body", "amount"), "required body parameter 'amount' is missing")
    ]


def test_a_body_left_out_shows_the_first_five_fields_it_requires() -> None:
    spec = copy.deepcopy(SPEC)
    body = spec["paths"]["/charges"]["post"]["requestBody"]["content"]["application/json"]
    body["schema"]["properties"] = {n: {"type": "integer"} for n in "abcdef"}
    body["schema"]["required"] = list("abcdef")
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    (f,) = scanner.iter_findings({"name": "createCharge", "arguments": {"currency": "eur"}})
    assert f.expected == ["a", "b", "c", "d", "e", "f"]
    assert f.doc == "; ".join(f"{n} (body, integer, required)" for n in "abcde")

"""OpenAPI semantics in the checks: compositions, discriminators, form bodies,
``requestBody.required``, and what the model meant on a big spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, Finding, Scanner

_PET = {
    "oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
    "discriminator": {"propertyName": "kind"},
}
_FORM = {
    "type": "object",
    "properties": {"amount": {"type": "integer"}, "capture": {"type": "boolean"}},
    "required": ["amount"],
}


def _post(op_id: str, media: str, schema: dict[str, Any], required: bool) -> dict[str, Any]:
    return {
        "post": {
            "operationId": op_id,
            "requestBody": {"required": required, "content": {media: {"schema": schema}}},
            "responses": {"200": {"description": "ok"}},
        }
    }


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    doc = {
        "openapi": "3.1.0",
        "paths": {
            "/pets": _post("addPet", "application/json", _PET, True),
            "/charges": _post("createCharge", "application/x-www-form-urlencoded", _FORM, False),
        },
        "components": {
            "schemas": {
                "Cat": {
                    "title": "Cat",
                    "type": "object",
                    "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer"}},
                    "required": ["kind"],
                },
                "Dog": {
                    "title": "Dog",
                    "type": "object",
                    "properties": {"kind": {"const": "dog"}, "lives": {"type": "string"}},
                    "required": ["kind"],
                },
            }
        },
    }
    return Scanner(ApiCatalog.from_obj(doc), retriever=None)


def _findings(scanner: Scanner, **request: Any) -> list[Finding]:
    return list(scanner.iter_findings(request))


def test_a_composed_body_is_checked_against_the_branch_its_discriminator_names(
    scanner: Scanner,
) -> None:
    (f,) = _findings(scanner, method="POST", url="/pets", body={"kind": "cat", "lives": "nine"})
    assert (f.code, f.location) == ("E4.1", ("body", "lives"))
    assert "(as Cat)" in f.message
    # the other branch takes a string: the same field, the same value, no finding
    assert (
        _findings(scanner, method="POST", url="/pets", body={"kind": "dog", "lives": "nine"}) == []
    )


def test_overlapping_one_of_branches_accept_a_value_that_fits_both() -> None:
    schema = {"oneOf": [{"type": "number"}, {"type": "integer"}]}  # 3 fits both
    catalog = ApiCatalog.from_tools([{"name": "f", "parameters": {"properties": {"x": schema}}}])
    assert list(Scanner(catalog, retriever=None).iter_findings("f(x=3)")) == []


def test_form_bodies_are_read_as_text_and_typed_by_the_schema(scanner: Scanner) -> None:
    ok = _findings(scanner, method="POST", url="/charges", body="amount=12&capture=true")
    assert ok == []
    (f,) = _findings(scanner, method="POST", url="/charges", body="amount=twelve")
    assert (f.code, f.location) == ("E4.1", ("body", "amount"))


def test_request_body_required_decides_whether_missing_fields_are_errors(
    scanner: Scanner,
) -> None:
    (warning,) = _findings(scanner, method="POST", url="/charges")
    assert (warning.code, warning.severity, warning.location) == ("E3.4", "warning", ("body",))
    assert "'amount'" in warning.message
    (error,) = _findings(scanner, method="POST", url="/charges", body={"capture": True})
    assert (error.code, error.severity) == ("E3.4", "error")  # a body was sent: it must fit
    (required,) = _findings(scanner, method="POST", url="/pets")
    assert (required.code, required.severity) == ("E3.4", "error")


def test_on_a_big_spec_a_variant_of_this_operations_parameter_beats_another_operations(
    api_retriever: Any,
) -> None:
    tools = [
        {"name": "kv_namespace_create", "parameters": {"properties": {"name": {"type": "string"}}}},
        *(
            {"name": f"other_{i}", "parameters": {"properties": {"title": {"type": "string"}}}}
            for i in range(20)
        ),
    ]
    scanner = Scanner(ApiCatalog.from_tools(tools), retriever=api_retriever)
    findings = list(scanner.iter_findings("kv_namespace_create(title='cache')"))
    assert [(f.code, f.suggestion) for f in findings] == [("E3.3", "name")]


def test_e3_1_names_the_one_operation_the_instruction_fits(api_retriever: Any) -> None:
    tools = [
        {
            "name": "get_weather",
            "description": "Current weather in a city",
            "parameters": {"properties": {"city": {"type": "string"}}},
        },
        {
            "name": "book_flight",
            "description": "Book a flight to a destination",
            "parameters": {"properties": {"destination_airport": {"type": "string"}}},
        },
        {
            "name": "ship_parcel",
            "description": "Ship a parcel",
            "parameters": {"properties": {"destination_airport": {"type": "string"}}},
        },
    ]
    scanner = Scanner(ApiCatalog.from_tools(tools), retriever=api_retriever)
    findings = scanner.iter_findings(
        "get_weather(destination_airport='JFK')", instruction="Book me a flight to New York"
    )
    (f,) = [f for f in findings if f.code.startswith("E3")]  # E2.1 comes first here
    assert f.code == "E3.1"
    assert "belongs to book_flight," in f.message and "ship_parcel" not in f.message


def test_valid_requests_to_real_composed_specs_get_no_errors(shared_data_dir: Path) -> None:
    openai = Scanner(
        ApiCatalog.from_file(shared_data_dir / "specs" / "openai.yaml"), retriever=None
    )
    body = {"model": "gpt-4o", "input": "hi", "stream": False}
    request = {"method": "POST", "url": "https://api.openai.com/v1/responses", "body": body}
    assert [str(f) for f in openai.iter_findings(request) if f.severity == "error"] == []
    # a path key carrying ?beta=true in the spec
    items = {"method": "GET", "url": "https://api.openai.com/v1/responses/r_1/input_items"}
    assert [str(f) for f in openai.iter_findings(items) if f.severity == "error"] == []
    box = Scanner(ApiCatalog.from_file(shared_data_dir / "specs" / "box.json"), retriever=None)
    copy = {"method": "POST", "url": "https://api.box.com/2.0/files/123/copy"}
    assert [str(f) for f in box.iter_findings(copy) if f.severity == "error"] == []


def test_router_binds_each_templates_own_variable_names() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/t/{template_id}": {"get": {"operationId": "getT", "responses": {}}},
            "/t/{scope}/{key}": {"get": {"operationId": "getScoped", "responses": {}}},
            "/t/{scope}": {"put": {"operationId": "putScope", "responses": {}}},
            "/t/fixed": {"get": {"operationId": "getFixed", "responses": {}}},
        },
    }
    catalog = ApiCatalog.from_obj(doc)
    found = catalog.match_http("GET", "/t/report")
    assert found is not None and (found[0].name, found[1]) == ("getT", {"template_id": "report"})
    put = catalog.match_http("PUT", "/t/fixed")  # the literal template has no PUT
    assert put is not None and (put[0].name, put[1]) == ("putScope", {"scope": "fixed"})


def test_object_query_parameters_in_deep_object_and_exploded_form_styles() -> None:
    range_ = {
        "type": "object",
        "properties": {"gt": {"type": "integer"}, "lt": {"type": "integer"}},
    }
    params = [
        {"name": "effective_at", "in": "query", "schema": range_},
        {"name": "metadata", "in": "query", "style": "deepObject", "schema": {"type": "object"}},
    ]
    doc = {
        "openapi": "3.0.0",
        "paths": {"/logs": {"get": {"operationId": "logs", "parameters": params, "responses": {}}}},
    }
    scanner = Scanner(ApiCatalog.from_obj(doc), retriever=None)
    assert _findings(scanner, method="GET", url="/logs?gt=1&lt=5&metadata[k]=v") == []
    (f,) = _findings(scanner, method="GET", url="/logs?gtx=1")
    assert f.code.startswith("E3")


def test_json_patch_bodies_are_not_form_fields() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/f": {
                "put": {
                    "operationId": "patchF",
                    "requestBody": {
                        "content": {
                            "application/json-patch+json": {
                                "schema": {"type": "array", "items": {"type": "object"}}
                            }
                        }
                    },
                    "responses": {},
                }
            }
        },
    }
    scanner = Scanner(ApiCatalog.from_obj(doc), retriever=None)
    body = [{"op": "replace", "path": "/a", "value": 1}, {}]
    assert _findings(scanner, method="PUT", url="/f", body=body) == []


def test_read_only_body_fields_are_not_required_in_requests() -> None:
    schema = {
        "type": "object",
        "properties": {"id": {"type": "string", "readOnly": True}, "name": {"type": "string"}},
        "required": ["id", "name"],
    }
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/p": {
                "post": {
                    "operationId": "addP",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": schema}},
                    },
                    "responses": {},
                }
            }
        },
    }
    scanner = Scanner(ApiCatalog.from_obj(doc), retriever=None)
    assert _findings(scanner, method="POST", url="/p", body={"name": "x"}) == []
    (f,) = _findings(scanner, method="POST", url="/p", body={"id": "1"})
    assert (f.code, f.location) == ("E3.4", ("body", "name"))


def test_specs_own_ways_of_saying_required() -> None:
    body = {
        "type": "object",
        "properties": {"token": {"type": "string"}},
        "required": ["grant_type"],
    }
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/revoke": {
                "post": {
                    "operationId": "revoke",
                    "parameters": [
                        {
                            "name": "ids",
                            "in": "query",
                            "required": "true",
                            "schema": {"type": "string"},
                        }
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": body}},
                    },
                    "responses": {},
                }
            }
        },
    }
    (op,) = ApiCatalog.from_obj(doc).operations
    assert {(p.name, p.required) for p in op.parameters} == {
        ("ids", True),  # Spotify writes "true"
        ("token", False),
        ("grant_type", True),  # Box requires a field it does not describe
    }


def test_a_list_body_has_no_fields_even_when_its_schema_names_required_ones() -> None:
    schema = {"type": "array", "items": {"type": "object"}, "required": ["items"]}
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/f": {
                "put": {
                    "operationId": "patchF",
                    "requestBody": {"content": {"application/json-patch+json": {"schema": schema}}},
                    "responses": {},
                }
            }
        },
    }
    (op,) = ApiCatalog.from_obj(doc).operations
    assert [p for p in op.parameters if p.location == "body"] == []


def test_path_values_are_read_percent_decoded_as_the_server_reads_them() -> None:
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "users", "version": "1"},
        "paths": {
            "/users/{email}/files/{name}": {
                "get": {
                    "operationId": "getFile",
                    "parameters": [
                        {
                            "name": "email",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string", "format": "email"},
                        },
                        {
                            "name": "name",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string", "maxLength": 9},
                        },
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    scanner = Scanner(ApiCatalog.from_obj(doc), retriever=None)

    def found(url: str) -> list[tuple[str, tuple[str, ...], str]]:
        request = {"method": "GET", "url": url}
        return [(f.code, f.location, f.message) for f in scanner.iter_findings(request)]

    # %40 is @, %20 a space: "my notes" has 8 characters, its encoding 10
    assert found("/users/john%40example.com/files/my%20notes") == []
    assert found("/users/john.example.com/files/a") == [
        ("E4.2", ("path", "email"), "email must be a valid email; got 'john.example.com'")
    ]
    assert found("/users/j%40x.io/files/twelve%20chars") == [
        ("E4.2", ("path", "name"), "name: 'twelve chars' breaks the documented maxLength 9")
    ]

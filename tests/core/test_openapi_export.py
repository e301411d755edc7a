"""``to_openapi``: every catalog exports to a document openapi-core accepts, and a correct
request built from the exported document validates against it."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from openapi_core import OpenAPI
from openapi_core.testing import MockRequest

from autofeedback import ApiCatalog, Operation, Parameter, Response
from autofeedback.catalog._openapi import function_path, run_openapi_export, to_openapi
from autofeedback.catalog._schema import sample_value, sanitize_schema

DATA = Path(
    os.environ.get("AUTOFEEDBACK_SHARED_DATA")
    or Path(__file__).resolve().parents[2].parent / "shared" / "data"
)


def _data(relative: str) -> Path:
    path = DATA / relative
    if not path.exists():
        pytest.skip(f"shared benchmark data not found at {path} (set AUTOFEEDBACK_SHARED_DATA)")
    return path


def _json_lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


# -- building sample requests from the exported document -------------------------------


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def sample_request(doc: Mapping[str, Any], path: str, method: str) -> MockRequest:
    """A request carrying a sample value for every required parameter and the body."""
    op = doc["paths"][path][method]
    url_path = path
    args: dict[str, Any] = {}
    headers: dict[str, str] = {}
    view_args: dict[str, Any] = {}
    for p in op.get("parameters", []):
        if not p["required"] and p["in"] != "path":
            continue
        value = sample_value(p["schema"])
        if isinstance(value, list):
            value = ",".join(_query_text(v) for v in value) if p["in"] != "query" else value
        if p["in"] == "path":
            view_args[p["name"]] = _query_text(value)
            url_path = url_path.replace("{" + p["name"] + "}", quote(_query_text(value)))
        elif p["in"] == "query":
            args[p["name"]] = (
                [_query_text(v) for v in value] if isinstance(value, list) else (_query_text(value))
            )
        elif p["in"] == "header":
            headers[p["name"]] = _query_text(value)
    data = None
    if "requestBody" in op:
        schema = op["requestBody"]["content"]["application/json"]["schema"]
        data = json.dumps(sample_value(schema)).encode()
    from werkzeug.datastructures import MultiDict

    return MockRequest(
        "http://127.0.0.1",
        method,
        url_path,
        path_pattern=path,
        args=MultiDict(
            [(k, v) for k, vs in args.items() for v in (vs if isinstance(vs, list) else [vs])]
        ),
        view_args=view_args,
        headers=headers,
        data=data,
    )


def assert_exports_and_validates(catalog: ApiCatalog) -> tuple[dict[str, Any], OpenAPI]:
    doc = to_openapi(catalog)
    json.dumps(doc)  # plain JSON, nothing Python-only inside
    served = {**doc, "servers": [{"url": "http://127.0.0.1"}]}
    served["paths"] = dict(sorted(doc["paths"].items(), key=lambda kv: -len(kv[0])))
    api = OpenAPI.from_dict(served)
    assert len(doc["paths"]) >= 1
    for path, item in doc["paths"].items():
        for method in item:
            result = api.unmarshal_request(sample_request(doc, path, method))
            assert not result.errors, (path, method, [repr(e.__cause__) for e in result.errors])
    return doc, api


# -- small in-memory catalogs ------------------------------------------------------------


def test_http_operations_keep_path_method_parameters_body_and_responses() -> None:
    catalog = ApiCatalog(
        [
            Operation(
                "getBook",
                "Get a book",
                "GET",
                "/books/{book_id}",
                parameters=(
                    Parameter("book_id", "path", {"type": "integer"}, required=True),
                    Parameter("fields", "query", {"type": "array", "items": {"type": "string"}}),
                ),
                responses=(
                    Response("200", "The book", {"type": "object"}, {"id": 1}),
                    Response("404", "info_code 40401: no such book"),
                ),
            ),
            Operation(
                "createOrder",
                method="POST",
                path="/orders",
                body_schema={
                    "type": "object",
                    "properties": {"qty": {"type": "integer", "nullable": True}},
                    "required": ["qty"],
                },
                body_required=True,
            ),
        ],
        servers=["https://shop.example.com/v1"],
    )
    doc, _ = assert_exports_and_validates(catalog)
    assert doc["openapi"] == "3.1.0"
    assert doc["servers"] == [{"url": "https://shop.example.com/v1"}]
    get = doc["paths"]["/books/{book_id}"]["get"]
    assert get["operationId"] == "getBook"
    assert get["parameters"][0] == {
        "name": "book_id",
        "in": "path",
        "required": True,
        "schema": {"type": "integer"},
    }
    assert get["responses"]["200"]["content"]["application/json"]["example"] == {"id": 1}
    assert get["responses"]["404"]["description"] == "info_code 40401: no such book"
    post = doc["paths"]["/orders"]["post"]
    assert post["requestBody"]["required"] is True
    body = post["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["qty"]["type"] == ["integer", "null"]


def test_function_operations_become_post_with_a_closed_json_body() -> None:
    catalog = ApiCatalog(
        [
            Operation(
                "math.factorial",
                "n!",
                parameters=(
                    Parameter("number", "argument", {"type": "integer"}, required=True),
                    Parameter("exact", "argument", {"type": "boolean"}),
                ),
            ),
            Operation("get weather/now"),
        ]
    )
    doc, _ = assert_exports_and_validates(catalog)
    assert doc["servers"] == [{"url": "http://127.0.0.1"}]
    op = doc["paths"]["/math.factorial"]["post"]
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    assert op["requestBody"]["required"] is True
    assert schema == {
        "type": "object",
        "properties": {"number": {"type": "integer"}, "exact": {"type": "boolean"}},
        "required": ["number"],
        "additionalProperties": False,
    }
    assert function_path("get weather/now") in doc["paths"]


def test_function_path_quotes_consistently() -> None:
    assert function_path("math.factorial") == "/math.factorial"
    assert function_path("a b/c?d") == "/a%20b%2Fc%3Fd"
    assert function_path("ToolSearcher") == "/ToolSearcher"


def test_odd_catalogs_still_export_valid_documents() -> None:
    catalog = ApiCatalog(
        [
            # a template variable nobody documents, a path parameter the template lacks,
            # a duplicated parameter, a bad regex, 3.0-style exclusiveMinimum, an unresolved
            # $ref, BFCL type names, a response status that is not one
            Operation(
                "odd",
                method="GET",
                path="items/{a}?x=1",
                parameters=(
                    Parameter("b", "path", {"type": "string"}, required=True),
                    Parameter("q", "query", {"type": "str", "pattern": "(unclosed"}),
                    Parameter("q", "query", {"type": "int"}),
                    Parameter(
                        "n",
                        "query",
                        {"type": "number", "minimum": 0, "exclusiveMinimum": True},
                        required=True,
                    ),
                    Parameter("r", "query", {"$ref": "#/components/schemas/Missing"}),
                    Parameter("t", "query", {"type": "tuple", "items": [{"type": "int"}]}),
                ),
                responses=(Response("20", "weird"), Response("500", "boom")),
            ),
            Operation("odd", method="GET", path="/other"),  # a duplicate name
            Operation("dup", method="GET", path="/items/{a}"),  # the same route again
        ]
    )
    doc, _ = assert_exports_and_validates(catalog)
    assert list(doc["paths"]) == ["/items/{a}", "/other"]
    params = {p["name"]: p for p in doc["paths"]["/items/{a}"]["get"]["parameters"]}
    assert params["a"]["in"] == "path" and params["a"]["required"] is True
    assert params["b"]["in"] == "query" and params["b"]["required"] is False
    assert params["q"]["schema"] == {"type": "string"}
    assert params["n"]["schema"] == {"type": "number", "exclusiveMinimum": 0}
    assert params["r"]["schema"] == {}
    assert params["t"]["schema"] == {"type": "array", "prefixItems": [{"type": "integer"}]}
    assert doc["paths"]["/other"]["get"]["operationId"] == "odd_2"
    assert set(doc["paths"]["/items/{a}"]["get"]["responses"]) == {"500", "200"}


def test_recursive_schemas_are_cut() -> None:
    node: dict[str, Any] = {"type": "object", "properties": {}}
    node["properties"]["child"] = node  # a cycle, as a naive $ref resolver would build
    out = sanitize_schema(node)
    depth = 0
    while out.get("properties"):
        out = out["properties"]["child"]
        depth += 1
    assert 10 < depth < 40
    assert sample_value(sanitize_schema(node)) is not None


def test_sample_value_respects_types_enums_formats_and_bounds() -> None:
    schema = sanitize_schema(
        {
            "type": "object",
            "required": ["when", "kind", "n", "tags"],
            "properties": {
                "when": {"type": "string", "format": "date"},
                "kind": {"type": "string", "enum": ["paperback", "ebook"]},
                "n": {"type": "integer", "minimum": 5, "maximum": 7},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$", "example": "ABC"},
            },
        }
    )
    value = sample_value(schema)
    assert value["when"] == "2024-01-15"
    assert value["kind"] == "paperback"
    assert 5 <= value["n"] <= 7
    assert len(value["tags"]) == 2
    assert re.fullmatch("^[A-Z]{3}$", value["code"])
    assert sample_value(schema) == value  # deterministic


# -- real specs from ../shared/data --------------------------------------------------------


@pytest.mark.parametrize("name", ["tmdb_oas.json", "spotify_oas.json"])
def test_restbench_specs(name: str) -> None:
    catalog = ApiCatalog.from_file(_data(f"restbench/{name}"))
    doc, _ = assert_exports_and_validates(catalog)
    assert len([m for item in doc["paths"].values() for m in item]) == len(catalog)


def test_every_toolalpaca_doc() -> None:
    apis = json.loads(_data("toolalpaca/eval_real.json").read_text(encoding="utf-8"))
    for api in apis:
        docs = api["Documentation"]
        catalog = ApiCatalog.from_obj(
            json.loads(docs) if isinstance(docs, str) else docs, source=api["Name"]
        )
        assert_exports_and_validates(catalog)


def test_api_bank_docs() -> None:
    items = json.loads(_data("api-bank/level-1-api.json").read_text(encoding="utf-8"))
    docs: dict[str, Any] = {}
    for item in items:
        for line in item["instruction"].splitlines():
            if line.startswith('{"name"'):
                doc = json.loads(line)
                docs.setdefault(doc["name"], doc)
    assert len(docs) >= 40
    catalog = ApiCatalog.from_obj(list(docs.values()), source="api-bank")
    doc, _ = assert_exports_and_validates(catalog)
    assert set(doc["paths"]) == {function_path(n) for n in docs}


def _first_allowed(
    allowed: Mapping[str, Any], required: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """BFCL lists the allowed values of each parameter, nested dicts included; take the
    first, or leave the parameter out where ``""`` says it may be (a few gold values of
    optional parameters have the wrong type: ``"venue": ["", true]`` for a string)."""
    out: dict[str, Any] = {}
    for key, values in allowed.items():
        if isinstance(values, list) and "" in values and key not in required:
            continue
        values = [v for v in values if v != ""] if isinstance(values, list) else values
        chosen = values if isinstance(values, list) else [values]
        if chosen:
            out[key] = _unwrap(chosen[0])
    return out


def _unwrap(value: Any) -> Any:
    if isinstance(value, dict):
        return _first_allowed(value)
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


def test_bfcl_functions_and_gold_calls() -> None:
    questions = {q["id"]: q for q in _json_lines(_data("bfcl/BFCL_v4_simple_python.json"))}
    answers = list(_json_lines(_data("bfcl/possible_answer/BFCL_v4_simple_python.json")))
    for answer in answers[::4]:  # a spread of 100: each check costs a spec validation
        catalog = ApiCatalog.from_tools(questions[answer["id"]]["function"])
        _, api = assert_exports_and_validates(catalog)
        # the gold call, with the first allowed value of each parameter ("" = omitted)
        [(name, allowed)] = answer["ground_truth"][0].items()
        op = catalog.get(name)
        assert op is not None
        args = _first_allowed(allowed, frozenset(p.name for p in op.parameters if p.required))
        path = function_path(name)
        request = MockRequest(
            "http://127.0.0.1", "post", path, path_pattern=path, data=json.dumps(args).encode()
        )
        result = api.unmarshal_request(request)
        assert not result.errors, (answer["id"], args, [repr(e.__cause__) for e in result.errors])


def test_run_openapi_export_prints_json_or_yaml(tmp_path: Path) -> None:
    spec = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"
    out, err = io.StringIO(), io.StringIO()
    assert run_openapi_export(spec, stdout=out, stderr=err) == 0
    doc = json.loads(out.getvalue())
    OpenAPI.from_dict(doc)
    assert doc["servers"] == [{"url": "http://127.0.0.1:8080"}]
    assert doc["paths"]["/orders"]["post"]["operationId"] == "createOrder"
    out = io.StringIO()
    assert run_openapi_export(spec, stdout=out, stderr=err, as_yaml=True) == 0
    assert yaml.safe_load(out.getvalue()) == doc
    assert run_openapi_export(tmp_path / "missing.yaml", stdout=out, stderr=err) == 2
    assert "missing.yaml" in err.getvalue()

"""Responses are part of the spec: OpenAPI 3 / Swagger 2 responses (through ``$ref`` and
compositions), OpenAPI links, MCP ``outputSchema``, output schemas beside function tools,
and GraphQL SDL as GraphQL-RestBench writes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, SpecError
from autofeedback.flow import FlowGraph, schema_at, success_response
from autofeedback.sequences import response_schemas_from_graphql, with_responses

OAS3: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/users": {
            "post": {
                "operationId": "createUser",
                "responses": {
                    "201": {"$ref": "#/components/responses/Created"},
                    "400": {"description": "bad"},
                },
            }
        },
        "/users/{userId}": {
            "get": {
                "operationId": "getUser",
                "parameters": [
                    {"name": "userId", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "allOf": [
                                        {"$ref": "#/components/schemas/User"},
                                        {
                                            "properties": {
                                                "teams": {
                                                    "type": "array",
                                                    "items": {
                                                        "oneOf": [
                                                            {"$ref": "#/components/schemas/Team"}
                                                        ]
                                                    },
                                                }
                                            }
                                        },
                                    ]
                                }
                            }
                        },
                    }
                },
            }
        },
    },
    "components": {
        "schemas": {
            "User": {"type": "object", "properties": {"uuid": {"type": "string"}}},
            "Team": {"type": "object", "properties": {"slug": {"type": "string"}}},
        },
        "responses": {
            "Created": {
                "description": "created",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}},
                "links": {"GetUser": {"$ref": "#/components/links/GetUser"}},
            }
        },
        "links": {
            "GetUser": {"operationId": "getUser", "parameters": {"userId": "$response.body#/uuid"}}
        },
    },
}


def test_openapi3_response_through_ref_and_compositions() -> None:
    catalog = ApiCatalog.from_obj(OAS3)
    op = catalog.get("getUser")
    assert op is not None
    schema = success_response(op)
    assert schema is not None
    assert schema_at(schema, "uuid") == {"type": "string"}
    assert schema_at(schema, "teams[0].slug") == {"type": "string"}
    assert schema_at(schema, "teams[].name") is None


def test_openapi3_links_are_loaded_and_ranked_first() -> None:
    catalog = ApiCatalog.from_obj(OAS3)
    created = catalog.get("createUser")
    assert created is not None
    assert created.responses[0].links["GetUser"]["operationId"] == "getUser"
    top = FlowGraph.from_catalog(catalog).producers("getUser", "userId")[0]
    assert (top.operation, top.path, top.via) == ("createUser", "uuid", "link")
    assert top.schema == {"type": "string"}


def test_link_by_operation_ref_and_qualified_parameter() -> None:
    doc = json.loads(json.dumps(OAS3))
    doc["components"]["links"]["GetUser"] = {
        "operationRef": "#/paths/~1users~1{userId}/get",
        "parameters": {"path.userId": "{$response.body#/uuid}"},
    }
    top = FlowGraph.from_catalog(ApiCatalog.from_obj(doc)).producers("getUser", "userId")[0]
    assert (top.operation, top.via) == ("createUser", "link")


def test_swagger2_response_schema() -> None:
    doc = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/token": {
                "post": {
                    "operationId": "GetUserToken",
                    "responses": {
                        "200": {"description": "ok", "schema": {"$ref": "#/definitions/Token"}}
                    },
                }
            }
        },
        "definitions": {"Token": {"type": "object", "properties": {"token": {"type": "string"}}}},
    }
    op = ApiCatalog.from_obj(doc).get("GetUserToken")
    assert op is not None
    assert schema_at(success_response(op) or {}, "token") == {"type": "string"}


def test_mcp_tool_input_and_output_schema() -> None:
    tools = {
        "tools": [
            {
                "name": "get_weather",
                "description": "Weather of a city",
                "inputSchema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {"temp": {"$ref": "#/$defs/T"}},
                    "$defs": {"T": {"type": "number"}},
                },
            }
        ]
    }
    op = ApiCatalog.from_obj(tools).get("get_weather")
    assert op is not None
    assert [(p.name, p.required) for p in op.parameters] == [("city", True)]
    assert schema_at(success_response(op) or {}, "temp") == {"type": "number"}


@pytest.mark.parametrize("key", ["outputSchema", "output_schema", "response", "returns"])
def test_function_output_schema_keys(key: str) -> None:
    fn = {
        "name": "GetUserToken",
        "parameters": {"type": "object", "properties": {}},
        key: {"type": "object", "properties": {"token": {"type": "string"}}},
    }
    op = ApiCatalog.from_tools([{"type": "function", "function": fn}]).get("GetUserToken")
    assert op is not None
    assert schema_at(success_response(op) or {}, "token") == {"type": "string"}


def test_function_output_that_is_not_a_schema_is_ignored() -> None:
    fn = {"name": "f", "parameters": {}, "returns": "the weather"}
    op = ApiCatalog.from_tools([fn]).get("f")
    assert op is not None and op.responses == ()


@pytest.mark.parametrize(
    ("spec", "operation", "path", "expected"),
    [
        ("restbench/tmdb_oas.json", "GET_search-person", "results[0].id", {"type": "integer"}),
        ("restbench/spotify_oas.json", "search", "tracks.items[].uri", {"type": "string"}),
        ("restbench/spotify_oas.json", "get-current-users-profile", "id", {"type": "string"}),
        ("specs/box.json", "get_files_id", "path_collection.entries[].id", {"type": "string"}),
    ],
)
def test_real_spec_responses(
    shared_data_dir: Path, spec: str, operation: str, path: str, expected: dict[str, Any]
) -> None:
    catalog = ApiCatalog.from_file(shared_data_dir / spec)
    op = catalog.get(operation)
    assert op is not None, sorted(catalog.names)[:20]
    at = schema_at(success_response(op) or {}, path)
    assert at is not None
    assert {k: at[k] for k in expected} == expected


SDL = """
type Person { id: Int! name: String known_for: [Work] }
type Work { id: Int title: String }
type Page { page: Int results: [Person!]! extra: JSON kind: Kind node: Node }
enum Kind { MOVIE TV }
interface Node { id: ID! }
type Query { GET_search_person(query: String!): Page @rest(endpoint: "x") }
type Query { GET_me: Person }
"""


def test_graphql_sdl_to_json_schema() -> None:
    schemas = response_schemas_from_graphql(SDL)
    assert set(schemas) == {"GET_search_person", "GET_me"}  # two `type Query` blocks
    page = schemas["GET_search_person"]
    assert schema_at(page, "results[0].id") == {"type": "integer"}
    assert schema_at(page, "results[].known_for[].title") == {"type": "string"}
    assert page["properties"]["results"]["type"] == "array"
    assert page["properties"]["results"]["items"]["required"] == ["id"]  # non-null noted
    assert schema_at(page, "extra") == {}  # JSON scalar: any
    assert schema_at(page, "extra.anything[3]") == {}
    assert schema_at(page, "kind") == {"type": "string", "enum": ["MOVIE", "TV"]}
    assert schema_at(page, "node.id") == {"type": "string"}
    assert schemas["GET_me"]["properties"]["name"] == {"type": "string"}


def test_graphql_recursive_type_is_cut() -> None:
    schemas = response_schemas_from_graphql("type T { id: Int child: T } type Query { f: T }")
    assert schemas["f"]["properties"]["child"] == {"type": "object", "title": "T"}


def test_graphql_bad_sdl_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="not GraphQL SDL"):
        response_schemas_from_graphql("type Query { f( }")
    assert response_schemas_from_graphql("  \n") == {}


def _samples(folder: Path) -> list[dict[str, Any]]:
    out = []
    for split in ("train", "valid", "test"):
        with (folder / f"{split}.jsonl").open(encoding="utf-8") as fh:
            out.extend(json.loads(line) for line in fh if line.strip())
    return out


def test_every_graphqlrestbench_sdl_loads(shared_data_dir: Path) -> None:
    samples = _samples(shared_data_dir / "graphqlrestbench")
    assert len(samples) == 155
    loaded = [response_schemas_from_graphql(s["GraphQL_schema"]) for s in samples]
    # 8 samples only call player endpoints that return nothing: their SDL is empty
    assert sum(1 for s in loaded if s) == 147
    assert sum(1 for s in samples if not s["GraphQL_schema"].strip()) == 8
    # the SDL's Query fields are the sample's functions (307 fields; upstream's data has
    # 3 for a function the sample's specs leave out)
    fields = [
        (name, {f["name"] for f in json.loads(sample["function_specs"])})
        for sample, schemas in zip(samples, loaded, strict=True)
        for name in schemas
    ]
    assert len(fields) == 307
    assert sum(1 for name, names in fields if name not in names) == 3
    i = next(i for i, s in enumerate(loaded) if "GET_me" in s)
    specs = json.loads(samples[i]["function_specs"])
    catalog = with_responses(ApiCatalog.from_tools(specs), loaded[i])
    me = catalog.get("GET_me")
    assert me is not None and schema_at(success_response(me) or {}, "id") == {"type": "string"}
    assert len(catalog) == len(specs)


def test_with_responses_replaces_only_200() -> None:
    catalog = ApiCatalog.from_obj(OAS3)
    new = with_responses(
        catalog,
        {"createUser": {"type": "object", "properties": {"id": {"type": "integer"}}}, "nope": {}},
    )
    created = new.get("createUser")
    assert created is not None
    assert [r.status for r in created.responses] == ["200", "201", "400"]
    assert new.get("getUser") == catalog.get("getUser")
    assert catalog.get("createUser") is not created  # the original is untouched

"""Spec loaders: every format, real specs from ../shared/data, and broken specs."""

from __future__ import annotations

import ast
import json
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from autofeedback import ApiCatalog, Operation, SpecError, SpecWarning
from autofeedback._specs import api_bank_optional, api_bank_type, load_spec, load_spec_file

SPECS = Path(__file__).parents[1] / "data" / "specs"


def _shared_data() -> Path:
    env = os.environ.get("AUTOFEEDBACK_SHARED_DATA")
    path = Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared" / "data"
    if not path.is_dir():
        pytest.skip(f"shared benchmark data not found at {path} (set AUTOFEEDBACK_SHARED_DATA)")
    return path


def _op(ops: list[Operation], name: str) -> Operation:
    found = [op for op in ops if op.name == name]
    assert found, f"{name} not in {[op.name for op in ops]}"
    return found[0]


# -- broken specs: data-driven ----------------------------------------------------------

_BROKEN = json.loads((SPECS / "broken_cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", _BROKEN, ids=[c["id"] for c in _BROKEN])
def test_broken_spec_raises_spec_error_naming_source_and_place(
    case: dict[str, Any], tmp_path: Path
) -> None:
    if "text" in case:
        path = tmp_path / case["filename"]
        path.write_text(case["text"], encoding="utf-8")
        source = str(path)
        with pytest.raises(SpecError) as info:
            load_spec_file(path)
    else:
        source = f"<{case['id']}>"
        with pytest.raises(SpecError) as info:
            load_spec(case["document"], source=source)
    err = info.value
    assert err.source == source
    assert err.where == case["where"]
    assert case["message"] in err.reason
    assert str(err).startswith(source)
    if case["where"]:
        assert case["where"] in str(err)


def test_catalog_from_file_raises_spec_error_for_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read the file") as info:
        ApiCatalog.from_file(tmp_path / "nope.yaml")
    assert info.value.source == str(tmp_path / "nope.yaml")


def test_non_utf8_file_is_a_spec_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(SpecError, match="not UTF-8"):
        load_spec_file(path)


def _mutations(doc: Any) -> Iterator[Any]:
    """Every copy of ``doc`` with one node replaced by a value of the wrong shape."""
    if isinstance(doc, dict):
        for key in doc:
            bad: Any
            for bad in (None, 7, "x", [], {}):
                yield {**doc, key: bad}
            for sub in _mutations(doc[key]):
                yield {**doc, key: sub}
    elif isinstance(doc, list):
        for i in range(len(doc)):
            for sub in _mutations(doc[i]):
                yield [*doc[:i], sub, *doc[i + 1 :]]


def test_mangled_specs_never_raise_anything_but_spec_error() -> None:
    swagger = json.loads((SPECS / "swagger.json").read_text())
    petstore = yaml.safe_load((SPECS / "petstore.yaml").read_text())
    tools = [json.loads(line) for line in (SPECS / "tools.jsonl").read_text().splitlines()]
    api_bank = [json.loads(line) for line in (SPECS / "api_bank.jsonl").read_text().splitlines()]
    count = 0
    for doc in (
        *_mutations(swagger),
        *_mutations(petstore),
        *_mutations(tools),
        *_mutations(api_bank),
    ):
        count += 1
        try:
            with warnings.catch_warnings():
                # a mangled spec may well have faults that load (an unknown key): warned
                warnings.simplefilter("ignore", SpecWarning)
                load_spec(doc, source="<mangled>")
        except SpecError as err:
            assert err.source == "<mangled>"
            # a specific message, not the loader's last-resort safety net
            assert not err.reason.startswith("malformed spec"), (doc, err)
    assert count > 500


# -- OpenAPI 3.0 (YAML) -------------------------------------------------------------------


@pytest.fixture(scope="module")
def petstore() -> list[Operation]:
    ops, servers = load_spec_file(SPECS / "petstore.yaml")
    # each server variable's default first, then the other values its enum lists
    assert servers == ["https://eu.petstore.example.com/v1", "https://us.petstore.example.com/v1"]
    return ops


def test_a_request_to_any_server_a_variables_enum_declares_is_to_this_api() -> None:
    from autofeedback import ApiCatalog, Scanner
    from autofeedback.loop._send import allowed_hosts

    catalog = ApiCatalog.from_file(SPECS / "petstore.yaml")
    scanner = Scanner(catalog, retriever=None)

    def codes(url: str) -> list[str]:
        return [f.code for f in scanner.iter_findings({"method": "GET", "url": url})]

    assert codes("https://us.petstore.example.com/v1/pets") == []
    assert codes("https://eu.petstore.example.com/v1/pets") == []
    assert codes("https://asia.petstore.example.com/v1/pets") == ["E2"]  # no enum value
    allowed = allowed_hosts(catalog, None)
    assert allowed.allows("https://us.petstore.example.com/v1/pets")
    assert not allowed.allows("https://asia.petstore.example.com/v1/pets")


def test_petstore_operations_and_names(petstore: list[Operation]) -> None:
    assert [op.name for op in petstore] == [
        "listPets",
        "POST /pets",  # no operationId: "METHOD /path"
        "showPetById",
        "deletePet",
        "uploadPhoto",
        "listCategories",
    ]
    list_pets = _op(petstore, "listPets")
    assert list_pets.description == "List all pets\n\nPets are returned oldest first."
    assert list_pets.tags == ("pets",)
    assert (list_pets.method, list_pets.path) == ("GET", "/pets")


def test_path_level_parameters_merge_and_operation_level_wins(petstore: list[Operation]) -> None:
    list_pets = _op(petstore, "listPets")
    assert [(p.name, p.location) for p in list_pets.parameters] == [
        ("limit", "query"),
        ("X-Trace-Id", "header"),
        ("status", "query"),
    ]
    limit = list_pets.parameter("limit")
    assert limit is not None
    assert limit.description == "How many pets to return (operation level)."
    assert limit.schema == {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
    # the POST has no own "limit": it inherits the $ref'd path-level one
    post_limit = _op(petstore, "POST /pets").parameter("limit", "query")
    assert post_limit is not None and "path level" in post_limit.description


def test_style_and_explode(petstore: list[Operation]) -> None:
    list_pets = _op(petstore, "listPets")
    status = list_pets.parameter("status")
    assert status is not None
    assert (status.style, status.explode) == ("form", False)
    assert status.schema["items"]["enum"] == ["available", "pending", "sold"]
    header = list_pets.parameter("X-Trace-Id", "header")
    assert header is not None and (header.style, header.explode) == ("simple", False)


def test_path_parameter_is_required_even_when_the_spec_forgets(petstore: list[Operation]) -> None:
    pet_id = _op(petstore, "showPetById").parameter("petId", "path")
    assert pet_id is not None and pet_id.required
    # OpenAPI 3.0's boolean exclusiveMinimum becomes 2020-12's number
    assert pet_id.schema == {"type": "integer", "format": "int64", "exclusiveMinimum": 0}


def test_security_schemes_become_auth_parameters(petstore: list[Operation]) -> None:
    auth = {op.name: [(p.location, p.name) for p in op.auth_parameters] for op in petstore}
    # every scheme is a credential of every operation, those its requirement names first:
    # `security: []` makes none required, and a key sent all the same is no unknown
    # parameter to drop (issue 43)
    assert auth["listPets"] == [("header", "X-Api-Key"), ("header", "Authorization")]
    assert auth["POST /pets"] == [("header", "X-Api-Key"), ("header", "Authorization")]
    assert auth["uploadPhoto"] == [("header", "Authorization"), ("header", "X-Api-Key")]
    key = _op(petstore, "showPetById").auth_parameters[0]
    assert not key.required and key.description == "Your key from the developer portal."
    assert all(p.name != "X-Api-Key" for op in petstore for p in op.parameters)


def test_slightly_invalid_spec_still_loads(petstore: list[Operation]) -> None:
    """petstore.yaml forgets ``required: true`` on a path parameter: the validator says
    no, the loader carries on."""
    validator = pytest.importorskip("openapi_spec_validator")
    doc = yaml.safe_load((SPECS / "petstore.yaml").read_text())
    doc["paths"]["/pets"]["get"]["responses"] = {
        str(k): v for k, v in doc["paths"]["/pets"]["get"]["responses"].items()
    }
    with pytest.raises(Exception, match="is not valid"):
        validator.validate(doc)
    assert len(petstore) == 6


def test_json_request_body_becomes_body_parameters(petstore: list[Operation]) -> None:
    create = _op(petstore, "POST /pets")
    assert create.body_required
    assert create.body_schema is not None and create.body_schema["required"] == ["name"]
    body = {p.name: p for p in create.parameters if p.location == "body"}
    assert list(body) == ["name", "tag", "birthday", "kind", "category"]
    assert body["name"].required and not body["tag"].required
    assert body["name"].schema == {"type": "string", "pattern": "^[A-Za-z ]+$", "example": "Rex"}
    # YAML dates are kept as the ISO text the author wrote
    assert body["birthday"].schema["example"] == "2020-01-31"


def test_nullable_folds_into_type(petstore: list[Operation]) -> None:
    body = {p.name: p.schema for p in _op(petstore, "POST /pets").parameters}
    assert body["tag"] == {"type": ["string", "null"]}
    assert body["kind"] == {"type": ["string", "null"], "enum": ["dog", "cat", None]}
    category = body["category"]
    assert category["anyOf"][1] == {"type": "null"}
    assert "nullable" not in json.dumps(category)


def test_form_body_becomes_body_parameters(petstore: list[Operation]) -> None:
    upload = _op(petstore, "uploadPhoto")
    assert upload.body_required
    body = [(p.name, p.required) for p in upload.parameters if p.location == "body"]
    assert body == [("caption", True), ("public", False)]


def test_responses_keep_status_description_schema_and_first_example(
    petstore: list[Operation],
) -> None:
    responses = {r.status: r for r in _op(petstore, "listPets").responses}
    assert list(responses) == ["200", "default"]  # YAML's int key 200 is a string
    ok = responses["200"]
    assert ok.description == "A page of pets."
    assert ok.example == [
        {"id": 1, "name": "Rex", "tag": None},
        {"id": 2, "name": "Tom", "tag": "cat"},
    ]
    assert ok.schema is not None and ok.schema["type"] == "array"
    error = responses["default"]
    assert error.description == "Something went wrong."
    assert error.schema is not None and error.schema["required"] == ["code", "message"]
    created = {r.status: r for r in _op(petstore, "POST /pets").responses}["201"]
    assert created.example == {"id": 7, "name": "Rex"}
    assert [r.status for r in _op(petstore, "showPetById").error_responses] == ["404"]


def test_recursive_schema_is_cut_after_its_first_expansion(petstore: list[Operation]) -> None:
    tree = _op(petstore, "listCategories").responses[0].schema
    assert tree is not None
    assert tree["properties"]["name"] == {"type": "string"}
    assert tree["properties"]["parent"] == {"x-recursive-ref": "#/components/schemas/Category"}
    assert tree["properties"]["children"] == {
        "type": "array",
        "items": {"x-recursive-ref": "#/components/schemas/Category"},
    }
    json.dumps(tree)  # finite


def test_mutually_recursive_refs_terminate() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/a": {
                "get": {
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {"schema": {"$ref": "#/components/schemas/A"}}
                            },
                        }
                    }
                }
            }
        },
        "components": {
            "schemas": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
                "B": {"type": "array", "items": {"$ref": "#/components/schemas/A"}},
            }
        },
    }
    ops, _ = load_spec(doc, source="<cycle>")
    schema = ops[0].responses[0].schema
    assert schema == {
        "type": "object",
        "properties": {
            "b": {"type": "array", "items": {"x-recursive-ref": "#/components/schemas/A"}}
        },
    }


def test_densely_recursive_schemas_are_truncated_not_explored_forever() -> None:
    n = 30  # every schema refers to every schema: cycle-cutting alone is factorial
    schemas = {
        f"S{i}": {
            "type": "object",
            "properties": {f"p{j}": {"$ref": f"#/components/schemas/S{j}"} for j in range(n)},
        }
        for i in range(n)
    }
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}
    doc = {
        "openapi": "3.0.0",
        "paths": {"/a": {"get": {"responses": {"200": {"description": "ok", "content": content}}}}},
        "components": {"schemas": schemas},
    }
    ops, _ = load_spec(doc, source="<dense>")
    schema = ops[0].responses[0].schema
    assert schema is not None and schema["properties"]["p0"] == {
        "x-recursive-ref": "#/components/schemas/S0"
    }  # S0 -> S0
    assert "x-truncated-ref" in json.dumps(schema)


def test_yaml_alias_bomb_is_a_spec_error(tmp_path: Path) -> None:
    lines = ["openapi: 3.0.0", "x-bomb:", "  l0: &l0 {type: string}"]
    for i in range(1, 25):
        prev = f"*l{i - 1}"
        lines.append(f"  l{i}: &l{i} {{allOf: [{prev}, {prev}, {prev}]}}")
    lines += [
        "paths:",
        "  /a:",
        "    get:",
        "      parameters:",
        "        - {name: q, in: query, schema: *l24}",
        "      responses: {'200': {description: ok}}",
    ]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SpecError, match="YAML aliases expand to more than"):
        load_spec_file(path, cache_dir=False)


def test_undocumented_path_template_variables_become_required_path_parameters() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/users/{user}/repos/{repo}": {"get": {"responses": {"200": {"description": "ok"}}}}
        },
    }
    (op,) = load_spec(doc, source="<template>")[0]
    assert [(p.name, p.location, p.required) for p in op.parameters] == [
        ("user", "path", True),
        ("repo", "path", True),
    ]


def test_dangling_schema_ref_leaves_the_schema_unconstrained() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/a": {
                "get": {
                    "parameters": [{"name": "q", "in": "query", "schema": {"$ref": "#/nowhere/Q"}}],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    # issue 30: it loaded silently, and the checks of that schema quietly did nothing
    with pytest.warns(SpecWarning) as caught:
        ops, _ = load_spec(doc, source="<dangling>")
    assert ops[0].parameters[0].schema == {"x-unresolved-ref": "#/nowhere/Q"}
    assert [str(w.message) for w in caught] == [
        "<dangling>: paths./a.get.parameters[0].schema.$ref: $ref '#/nowhere/Q' points "
        "nowhere; that schema is not checked"
    ]


def _operation_id_typo() -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "paths": {
            "/pets": {
                "summery": "Pets",
                "get": {
                    "operationID": "listPets",
                    "parameters": [
                        {"name": "limit", "in": "query", "requierd": True, "x-ok": 1},
                        {"$ref": "#/components/parameters/Q"},
                    ],
                    "responses": {"200": {"description": "ok", "schema": {"type": "array"}}},
                },
            }
        },
        "components": {"parameters": {"Q": {"name": "q", "in": "query", "shema": {}}}},
    }


def test_unknown_keys_are_spec_faults_that_name_the_place() -> None:
    # issue 30: `operationID` loaded silently and the operation lost its name
    with pytest.warns(SpecWarning) as caught:
        ops, _ = load_spec(_operation_id_typo(), source="pets.yaml")
    assert [op.name for op in ops] == ["GET /pets"]
    assert [str(w.message) for w in caught] == [
        "pets.yaml: paths./pets: unknown key 'summery' (did you mean 'summary'?); it is ignored",
        "pets.yaml: paths./pets.get: unknown key 'operationID' (did you mean 'operationId'?); "
        "it is ignored",
        "pets.yaml: paths./pets.get.parameters[0]: unknown key 'requierd' (did you mean "
        "'required'?); it is ignored",
        "pets.yaml: paths./pets.get.parameters[1]: unknown key 'shema' (did you mean "
        "'schema'?); it is ignored",
        "pets.yaml: paths./pets.get.responses.200: unknown key 'schema'; it is ignored",
    ]


def test_spec_faults_are_warned_on_every_load_cached_or_not(tmp_path: Path) -> None:
    spec = tmp_path / "pets.json"
    spec.write_text(json.dumps(_operation_id_typo()))
    for _ in range(2):  # the second load reads the on-disk cache
        with pytest.warns(SpecWarning) as caught:
            ApiCatalog.from_file(spec)
        assert len(caught) == 5 and all(str(spec) in str(w.message) for w in caught)
        assert "'operationID'" in str(caught[1].message)


def test_many_spec_faults_are_counted_after_the_first_ten() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            f"/p{i}": {"get": {"oops": 1, "responses": {"200": {"description": "ok"}}}}
            for i in range(13)
        },
    }
    with pytest.warns(SpecWarning) as caught:
        load_spec(doc, source="many")
    assert len(caught) == 11 and str(caught[-1].message) == "many: and 3 more spec faults"


#: files under specs/ that are not specs (a replay transcript's data, a request log):
#: named one by one, so that a spec which stops loading cannot pass as "not a spec"
_NOT_SPECS = {
    "examples/demo-replay.txt",
    "examples/demo-task-replay.txt",
    "examples/requests.jsonl",
}


def test_the_bundled_specs_load_and_have_no_faults() -> None:
    root = Path(__file__).parents[2] / "specs"
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    specs = [f for f in files if f not in _NOT_SPECS]
    assert set(files) >= _NOT_SPECS  # a renamed transcript is seen, not silently a spec
    assert "examples/bookshop.yaml" in specs
    with warnings.catch_warnings():
        warnings.simplefilter("error", SpecWarning)
        for name in specs:
            catalog = ApiCatalog.from_file(root / name)  # a SpecError fails the test
            assert catalog.operations, name


def test_duplicate_operation_names_keep_the_first() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/a": {"get": {"operationId": "same", "responses": {"200": {"description": "a"}}}},
            "/b": {"get": {"operationId": "same", "responses": {"200": {"description": "b"}}}},
        },
    }
    ops, _ = load_spec(doc, source="<dupes>")
    assert [(op.name, op.path) for op in ops] == [("same", "/a")]


def test_yaml_and_json_are_recognised_by_content_not_extension(tmp_path: Path) -> None:
    yaml_as_json = tmp_path / "petstore.json"
    yaml_as_json.write_text((SPECS / "petstore.yaml").read_text())
    json_as_yaml = tmp_path / "library.yaml"
    json_as_yaml.write_text((SPECS / "swagger.json").read_text())
    assert len(load_spec_file(yaml_as_json)[0]) == 6
    assert len(load_spec_file(json_as_yaml)[0]) == 3


def test_yaml_reads_yaml_1_2_scalars(tmp_path: Path) -> None:
    path = tmp_path / "switch.yaml"
    path.write_text(
        "openapi: 3.0.0\n"
        "paths:\n"
        "  /switch:\n"
        "    post:\n"
        "      parameters:\n"
        "        - {name: on, in: query, required: true, schema: {type: string, enum: [yes, no]}}\n"
        "        - {name: at, in: query, schema: {type: string, example: 2024-05-01}}\n"
        "      responses: {204: {description: Done.}}\n"
    )
    (op,) = load_spec_file(path)[0]
    on, at = op.parameters
    assert (on.name, on.required, on.schema["enum"]) == ("on", True, ["yes", "no"])
    assert at.schema["example"] == "2024-05-01"
    assert op.responses[0].status == "204"


def test_spec_text_is_accepted_by_load_spec() -> None:
    ops, servers = load_spec((SPECS / "petstore.yaml").read_text(), source="<text>")
    assert len(ops) == 6
    assert servers == ["https://eu.petstore.example.com/v1", "https://us.petstore.example.com/v1"]


# -- OpenAPI 3.1, external refs -------------------------------------------------------------


def test_openapi_31_types_and_ref_siblings() -> None:
    ops, servers = load_spec_file(SPECS / "openapi31.json")
    assert servers == ["http://127.0.0.1:8080"]
    patch = ops[0]
    assert patch.name == "PATCH /notes/{id}"
    body = {p.name: p.schema for p in patch.parameters if p.location == "body"}
    assert body["title"] == {"type": ["string", "null"], "maxLength": 80}
    # a keyword beside $ref applies too (and overrides the target's annotation)
    assert body["owner"]["description"] == "Who owns the note."
    assert body["owner"]["properties"] == {"login": {"type": "string"}}


def test_refs_into_other_files_resolve_relative_to_the_spec() -> None:
    ops, _ = load_spec_file(SPECS / "external_main.yaml")
    (op,) = ops
    cursor = op.parameter("cursor", "query")
    assert cursor is not None and cursor.schema == {"type": "string", "minLength": 8}
    order = op.responses[0].schema
    assert order is not None
    assert order["items"]["properties"] == {
        "id": {"type": "integer"},
        "next": {"x-recursive-ref": "#/schemas/Order"},
    }


# -- Swagger 2.0 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def library() -> tuple[list[Operation], list[str]]:
    return load_spec_file(SPECS / "swagger.json")


def test_swagger_servers_from_schemes_host_and_base_path(
    library: tuple[list[Operation], list[str]],
) -> None:
    assert library[1] == [
        "https://library.example.org/api/v2",
        "http://library.example.org/api/v2",
    ]
    catalog = ApiCatalog.from_file(SPECS / "swagger.json")
    match = catalog.match_http("GET", "https://library.example.org/api/v2/books?q=x")
    assert match is not None and match[0].name == "searchBooks"


def test_swagger_query_parameters_and_collection_format(
    library: tuple[list[Operation], list[str]],
) -> None:
    search = _op(library[0], "searchBooks")
    params = {p.name: p for p in search.parameters}
    assert list(params) == ["q", "genre", "fields", "page_size"]
    assert params["q"].required and params["q"].schema == {"type": "string", "minLength": 2}
    assert (params["genre"].style, params["genre"].explode) == ("form", True)  # multi
    assert (params["fields"].style, params["fields"].explode) == ("form", False)  # csv
    assert params["page_size"].schema["default"] == 20  # via #/parameters
    # no "security" anywhere: every defined scheme is accepted
    assert [(p.location, p.name) for p in search.auth_parameters] == [("query", "apikey")]
    responses = {r.status: r for r in search.responses}
    assert responses["200"].example == [{"isbn": "9780262033848", "title": "CLRS"}]
    assert responses["400"].description == "The query is malformed."


def test_swagger_body_parameter_and_definitions(
    library: tuple[list[Operation], list[str]],
) -> None:
    add = _op(library[0], "addBook")
    assert add.body_required
    body = {p.name: p for p in add.parameters}
    assert [(n, p.location, p.required) for n, p in body.items()] == [
        ("isbn", "body", True),
        ("title", "body", True),
        ("subtitle", "body", False),
        ("author", "body", False),
    ]
    assert body["subtitle"].schema == {"type": ["string", "null"]}  # x-nullable
    # Book -> Author -> books[] -> Book is cut
    assert body["author"].schema["properties"]["books"] == {
        "type": "array",
        "items": {"x-recursive-ref": "#/definitions/Book"},
    }


def test_swagger_form_data(library: tuple[list[Operation], list[str]]) -> None:
    upload = _op(library[0], "POST /books/{isbn}/cover")
    assert [(p.name, p.location, p.required) for p in upload.parameters] == [
        ("isbn", "path", True),
        ("file", "body", True),
        ("credit", "body", False),
    ]
    assert upload.body_schema == {
        "type": "object",
        "properties": {
            "file": {"type": "string", "format": "binary"},
            "credit": {"type": ["string", "null"]},
        },
        "required": ["file"],
    }


# -- function-style specs ------------------------------------------------------------------

_WEATHER = {
    "name": "get_weather",
    "description": "Weather now.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
}


@pytest.mark.parametrize(
    "document",
    [
        [{"type": "function", "function": _WEATHER}],
        [_WEATHER],
        _WEATHER,
        {"type": "function", "function": _WEATHER},
        {"tools": [{"type": "function", "function": _WEATHER}]},
        {"functions": [_WEATHER]},
    ],
    ids=[
        "openai-tools",
        "bare-list",
        "single",
        "single-tool",
        "tools-wrapper",
        "functions-wrapper",
    ],
)
def test_function_list_shapes(document: Any) -> None:
    ops, servers = load_spec(document, source="<tools>")
    assert servers == []
    (op,) = ops
    assert (op.name, op.description, op.is_http) == ("get_weather", "Weather now.", False)
    assert [(p.name, p.location, p.required) for p in op.parameters] == [
        ("city", "argument", True),
        ("days", "argument", False),
    ]


def test_bfcl_type_names_map_to_json_schema_recursively() -> None:
    fn = {
        "name": "plan",
        "description": "d",
        "parameters": {
            "type": "dict",
            "properties": {
                "budget": {"type": "float"},
                "point": {"type": "tuple", "items": {"type": "integer"}},
                "anything": {"type": "any", "description": "whatever"},
                "label": {"type": "String"},
                "n": {"type": "int"},
                "flag": {"type": "bool"},
                "tags": {"type": "list", "items": {"type": "str"}},
                "limits": {
                    "type": "dict",
                    "properties": {
                        "max": {"type": "float"},
                        "rooms": {"type": "array", "items": {"type": "dict", "properties": {}}},
                    },
                },
                "note": {"type": "string", "optional": True, "default": ""},
            },
            "required": ["budget", "note"],
        },
    }
    (op,) = load_spec([fn], source="<bfcl>")[0]
    schemas = {p.name: p.schema for p in op.parameters}
    assert schemas["budget"] == {"type": "number"}
    assert schemas["point"] == {"type": "array", "items": {"type": "integer"}}
    assert schemas["anything"] == {"description": "whatever"}
    assert schemas["label"] == {"type": "string"}
    assert schemas["n"] == {"type": "integer"}
    assert schemas["flag"] == {"type": "boolean"}
    assert schemas["tags"] == {"type": "array", "items": {"type": "string"}}
    assert schemas["limits"]["type"] == "object"
    assert schemas["limits"]["properties"]["max"] == {"type": "number"}
    assert schemas["limits"]["properties"]["rooms"]["items"]["type"] == "object"
    assert schemas["note"] == {"type": "string", "default": ""}  # "optional" is not kept
    required = {p.name for p in op.parameters if p.required}
    assert required == {"budget"}  # "optional": true beats the required list


def test_tool_parameters_with_defs_are_resolved() -> None:
    tool = {
        "name": "book",
        "parameters": {
            "type": "object",
            "$defs": {"Room": {"type": "object", "properties": {"beds": {"type": "integer"}}}},
            "properties": {"room": {"$ref": "#/$defs/Room"}},
            "required": ["room"],
        },
    }
    (op,) = load_spec(tool, source="<pydantic>")[0]
    assert op.parameters[0].schema == {
        "type": "object",
        "properties": {"beds": {"type": "integer"}},
    }


def test_jsonl_tools_file() -> None:
    ops, _ = load_spec_file(SPECS / "tools.jsonl")
    assert [op.name for op in ops] == ["get_weather", "convert"]
    pair = ops[1].parameter("pair")
    assert pair is not None and pair.schema == {"type": "array", "items": {"type": "string"}}


# -- API-Bank -----------------------------------------------------------------------------


def test_api_bank_jsonl_types_and_required_rule() -> None:
    ops, _ = load_spec_file(SPECS / "api_bank.jsonl")
    translate, meeting = ops
    assert {p.name: p.required for p in translate.parameters} == {
        "src": True,
        "src_lang": False,
        "tgt_lang": False,
    }
    assert translate.responses[0].schema == {
        "type": "object",
        "properties": {
            "translated_text": {"type": "string", "description": "The translated text."}
        },
    }
    attendees = meeting.parameter("attendees")
    assert attendees is not None and attendees.required
    assert attendees.schema["items"] == {"type": "string"}
    start = meeting.parameter("start_time")
    assert start is not None and start.schema["format"] == "date-time"


@pytest.mark.parametrize(
    ("name", "schema"),
    [
        ("str", {"type": "string"}),
        ("int", {"type": "integer"}),
        ("float", {"type": "number"}),
        ("bool", {"type": "boolean"}),
        ("list", {"type": "array"}),
        ("list(str)", {"type": "array", "items": {"type": "string"}}),
        ("list(int)", {"type": "array", "items": {"type": "integer"}}),
        ("dict", {"type": "object"}),
        ("json", {}),
        ("datetime", {"type": "string", "format": "date-time"}),
        ("strange", {}),
    ],
)
def test_api_bank_type_names(name: str, schema: dict[str, Any]) -> None:
    assert api_bank_type(name) == schema


@pytest.mark.parametrize(
    ("description", "optional"),
    [
        ("[Optional] The source language to translate from. Default is auto.", True),
        ("The email of the user. Only needed for the first call.", True),
        ("Page number (optional).", True),
        ("Result count, defaults to 10.", True),
        ("The user id of the given user. Cases are ignored.", False),
        ("The time for alarm. Format: %Y-%m-%d %H:%M:%S", False),
    ],
)
def test_api_bank_optional_rule(description: str, optional: bool) -> None:
    assert api_bank_optional(description) is optional


# -- real specs from ../shared/data --------------------------------------------------------


@pytest.mark.parametrize(("name", "count"), [("tmdb_oas.json", 54), ("spotify_oas.json", 40)])
def test_restbench_specs(name: str, count: int) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SpecWarning)
        catalog = ApiCatalog.from_file(_shared_data() / "restbench" / name)
    # TMDB's one fault: a key OpenAPI does not have (it would be x-cache)
    assert [str(w.message).split(": ", 1)[1] for w in caught] == (
        ["paths./discover/movie.get: unknown key 'cache'; it is ignored"]
        if name == "tmdb_oas.json"
        else []
    )
    assert len(catalog) == count
    assert len(catalog.servers) == 1
    for op in catalog:
        assert op.is_http and op.responses
        text = json.dumps([p.schema for p in op.parameters] + [r.schema for r in op.responses])
        # (vendor extensions such as Spotify's x-spotify-policy-list keep their refs)
        assert '"$ref": "#/components/schemas' not in text and "x-truncated-ref" not in text
    auth = {(p.location, p.name) for op in catalog for p in op.auth_parameters}
    assert auth == (
        {("query", "api_key")} if name == "tmdb_oas.json" else {("header", "Authorization")}
    )
    if name == "spotify_oas.json":
        # Spotify documents its errors with an ErrorObject schema
        search = catalog.get("search")
        assert search is not None
        errors = {r.status: r for r in search.error_responses}
        assert {"401", "403", "429"} <= set(errors)
        assert errors["401"].description
        assert errors["401"].schema is not None
        assert "$ref" not in json.dumps(errors["401"].schema)


#: ToolAlpaca API name -> operations in its Documentation (= len(Function_Projection)).
_TOOLALPACA_OPS = {
    "Nager.Date": 8,
    "airportsapi": 1,
    "AviationAPI": 5,
    "chucknorris.io": 4,
    "Random Useless Facts": 2,
    "apilayer weatherstack": 1,
    "Free Dictionary": 1,
    "WolframAlpha": 1,
    "Fruityvice": 5,
    "Cataas": 7,
    "CurrencyBeacon": 5,
}


def test_toolalpaca_documentation_strings_all_load() -> None:
    apis = json.loads((_shared_data() / "toolalpaca" / "eval_real.json").read_text())
    assert len(apis) == 11
    faulty: dict[str, int] = {}
    for api in apis:
        # the Documentation is a JSON string: load_spec takes text too
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SpecWarning)
            ops, servers = load_spec(api["Documentation"], source=api["Name"])
        if caught:
            faulty[api["Name"]] = len(caught)
        assert len(ops) == _TOOLALPACA_OPS[api["Name"]] == len(api["Function_Projection"])
        assert servers, api["Name"]
        for op in ops:
            assert op.path is not None and op.path.startswith("/")
    # AviationAPI nests five paths and its components inside a path, and its error
    # responses $ref a schema it never defines; CurrencyBeacon puts response schemas
    # where Swagger 2 has them (OpenAPI 3 ignores them there)
    assert faulty == {"AviationAPI": 7, "CurrencyBeacon": 5}


_BFCL_FILES = {
    "BFCL_v4_simple_python.json": 400,
    "BFCL_v4_multiple.json": 200,
    "BFCL_v4_parallel.json": 200,
    "BFCL_v4_parallel_multiple.json": 200,
}
_JSON_TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}


def _types(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        typ = schema.get("type")
        if isinstance(typ, str):
            yield typ
        for value in schema.values():
            yield from _types(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _types(value)


@pytest.mark.parametrize("filename", sorted(_BFCL_FILES))
def test_bfcl_function_lists_all_load(filename: str) -> None:
    lines = (_shared_data() / "bfcl" / filename).read_text().splitlines()
    assert len(lines) == _BFCL_FILES[filename]
    for line in lines:
        question = json.loads(line)
        ops, _ = load_spec(question["function"], source=question["id"])
        assert {op.name for op in ops} == {fn["name"] for fn in question["function"]}
        for op in ops:
            for p in op.parameters:
                assert set(_types(p.schema)) <= _JSON_TYPES, (question["id"], p.name, p.schema)


def _api_bank_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(
        (_shared_data() / "api-bank" / "level-1-api.json").read_text()
    )
    return items


def _api_bank_docs(instruction: str) -> list[Any]:
    tail = instruction.partition("API descriptions:")[2]
    return [json.loads(line) for line in tail.splitlines() if line.strip().startswith("{")]


def test_api_bank_docs_from_level_1_instructions_all_load() -> None:
    names: set[str] = set()
    for item in _api_bank_items():
        ops, _ = load_spec(_api_bank_docs(item["instruction"]), source=f"api-bank-{item['id']}")
        names.update(op.name for op in ops)
        for op in ops:
            for p in op.parameters:
                assert p.location == "argument"
                assert set(_types(p.schema)) <= _JSON_TYPES
    assert len(names) == 49


def _gold_call(text: str) -> tuple[str, set[str]]:
    """Name and argument names of ``API-Request: [Name(k='v', ...)]`` (31 gold calls quote
    list literals with the quote they contain, so only names are taken, by regex)."""
    m = re.search(r"\[\s*(\w+)\((.*)\)\s*\]", text, re.DOTALL)
    assert m, text
    try:
        call = ast.parse(f"{m.group(1)}({m.group(2)})", mode="eval").body
        assert isinstance(call, ast.Call)
        return m.group(1), {kw.arg for kw in call.keywords if kw.arg}
    except SyntaxError:
        return m.group(1), set(re.findall(r"(?:^|,\s*)(\w+)\s*=", m.group(2)))


def test_api_bank_required_rule_against_gold_calls() -> None:
    """With the rule (required unless the description says optional / default / only
    needed for one step), the only gold calls missing a required parameter are the 8
    (Cancel)TimedSwitch calls that send ``device_id`` where the doc says ``name``: a
    doc/gold mismatch in API-Bank, not an optional parameter. Marking every parameter
    required would add 12 more (ForgotPassword's two-step parameters, Translate's
    src_lang)."""
    violations: list[tuple[str, str, str]] = []
    for item in _api_bank_items():
        catalog = ApiCatalog.from_obj(_api_bank_docs(item["instruction"]))
        name, args = _gold_call(item["expected_output"])
        op = catalog.get(name)
        assert op is not None, name
        violations.extend(
            (name, p.name, ",".join(sorted(args)))
            for p in op.parameters
            if p.required and p.name not in args
        )
    assert sorted(set(violations)) == [
        ("CancelTimedSwitch", "name", "device_id,time"),
        ("TimedSwitch", "name", "device_id,on,time"),
    ]
    assert len(violations) == 8


# -- references that leave the spec's folder, the on-disk cache -------------------------------


def test_refs_may_not_leave_the_spec_folder_unless_allowed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("schemas: {S: {type: string}}\n")
    folder = tmp_path / "spec"
    folder.mkdir()
    spec = folder / "api.yaml"
    spec.write_text(
        "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n"
        "        - {name: q, in: query, schema: {$ref: '../secret.yaml#/schemas/S'}}\n"
        "      responses: {'200': {description: ok}}\n"
    )
    with pytest.raises(SpecError, match="leaves the spec's folder") as info:
        load_spec_file(spec, cache_dir=False)
    assert info.value.where.endswith("$ref")
    ops, _ = load_spec_file(spec, cache_dir=False, outside_refs=True)
    assert ops[0].parameters[0].schema == {"type": "string"}


def test_loaded_specs_are_cached_by_content_and_referenced_files(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    folder.mkdir()
    for name in ("external_main.yaml", "external_common.yaml"):
        (folder / name).write_text((SPECS / name).read_text())
    cache = tmp_path / "cache"
    first, _ = load_spec_file(folder / "external_main.yaml", cache_dir=cache)
    (entry,) = (cache / "specs").iterdir()
    again, _ = load_spec_file(folder / "external_main.yaml", cache_dir=cache)
    assert again == first
    # an edited referenced file is seen although the main file is unchanged
    common = folder / "external_common.yaml"
    common.write_text(common.read_text().replace("minLength: 8", "minLength: 9"))
    edited, _ = load_spec_file(folder / "external_main.yaml", cache_dir=cache)
    cursor = edited[0].parameter("cursor", "query")
    assert cursor is not None and cursor.schema["minLength"] == 9
    # a damaged entry is ignored, and so is one that would unpickle anything but the model
    entry.write_bytes(b"not a pickle")
    assert load_spec_file(folder / "external_main.yaml", cache_dir=cache)[0] == edited
    import pickle

    entry.write_bytes(pickle.dumps(([os.system], [], [])))
    assert load_spec_file(folder / "external_main.yaml", cache_dir=cache)[0] == edited


# -- OpenAPI semantics: compositions, bodies, path keys with a query ---------------------------


def _spec(paths: dict[str, Any], **components: Any) -> dict[str, Any]:
    return {"openapi": "3.1.0", "paths": paths, "components": {"schemas": components}}


def test_body_fields_are_collected_through_all_of_one_of_and_any_of() -> None:
    body = {
        "allOf": [
            {"$ref": "#/components/schemas/Base"},
            {
                "oneOf": [
                    {"properties": {"kind": {"const": "a"}, "a": {}}, "required": ["kind", "a"]},
                    {"properties": {"kind": {"const": "b"}, "b": {}}, "required": ["kind"]},
                ]
            },
        ],
        "anyOf": [{"properties": {"extra": {"type": "integer"}}}],
    }
    doc = _spec(
        {
            "/q": {
                "post": {
                    "operationId": "createQueue",
                    "requestBody": {"content": {"application/json": {"schema": body}}},
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        Base={"properties": {"account_id": {"type": "string"}}, "required": ["account_id"]},
    )
    (op,) = load_spec(doc, source="<composed>")[0]
    fields = {p.name: p.required for p in op.parameters if p.location == "body"}
    assert fields == {"account_id": True, "kind": True, "a": False, "b": False, "extra": False}
    assert not op.body_required and op.body_media == "application/json"


def test_request_body_required_and_form_media_types() -> None:
    form = {"properties": {"amount": {"type": "integer"}}, "required": ["amount"]}
    doc = _spec(
        {
            "/charges": {
                "post": {
                    "operationId": "createCharge",
                    "requestBody": {
                        "required": True,
                        "content": {"application/x-www-form-urlencoded": {"schema": form}},
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        }
    )
    (op,) = load_spec(doc, source="<form>")[0]
    assert op.body_required and op.body_media == "application/x-www-form-urlencoded"
    assert [(p.name, p.location, p.required) for p in op.parameters] == [("amount", "body", True)]


def test_a_path_key_with_a_query_string_is_its_path_plus_a_fixed_query_parameter() -> None:
    doc = _spec(
        {
            "/responses/{id}/items?beta=true": {
                "get": {"operationId": "listItems", "responses": {"200": {"description": "ok"}}}
            }
        }
    )
    catalog = ApiCatalog.from_obj(doc)
    (op,) = catalog.operations
    assert op.path == "/responses/{id}/items"
    beta = op.parameter("beta", "query")
    assert beta is not None and not beta.required and beta.schema["enum"] == ["true"]
    assert catalog.match_http("GET", "/responses/r1/items?beta=true") is not None


def test_real_specs_load_with_composed_bodies(shared_data_dir: Path) -> None:
    catalog = ApiCatalog.from_file(shared_data_dir / "specs" / "openai.yaml")
    op = catalog.get("createResponse")
    assert op is not None
    names = {p.name for p in op.parameters if p.location == "body"}
    assert {"model", "input", "instructions", "tools"} <= names  # under allOf
    box = ApiCatalog.from_file(shared_data_dir / "specs" / "box.json")
    assert sum(op.body_required for op in box) < sum(op.body_schema is not None for op in box)


def test_the_environment_may_allow_refs_outside_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shared.yaml").write_text("schemas: {S: {type: integer}}\n")
    (tmp_path / "spec").mkdir()
    spec = tmp_path / "spec" / "api.yaml"
    spec.write_text(
        "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n"
        "        - {name: q, in: query, schema: {$ref: '../shared.yaml#/schemas/S'}}\n"
        "      responses: {'200': {description: ok}}\n"
    )
    with pytest.raises(SpecError, match="AUTOFEEDBACK_ALLOW_OUTSIDE_REFS=1"):
        ApiCatalog.from_file(spec)
    monkeypatch.setenv("AUTOFEEDBACK_ALLOW_OUTSIDE_REFS", "1")
    assert ApiCatalog.from_file(spec).operations[0].parameters[0].schema == {"type": "integer"}


def test_mcp_tools_load_their_input_schema() -> None:
    # an MCP tools/list entry carries its arguments under inputSchema, not parameters
    listing = {
        "tools": [
            {
                "name": "get_forecast",
                "description": "Forecast for a city",
                "inputSchema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                    "required": ["city"],
                },
                "annotations": {"readOnlyHint": True},
            }
        ]
    }
    op = ApiCatalog.from_tools(listing).get("get_forecast")
    assert op is not None
    assert [(p.name, p.required, p.schema) for p in op.parameters] == [
        ("city", True, {"type": "string"}),
        ("days", False, {"type": "integer"}),
    ]
    with pytest.raises(SpecError, match="'inputSchema' must be a JSON Schema object"):
        ApiCatalog.from_tools([{"name": "bad", "inputSchema": ["city"]}])


def test_anthropic_tools_take_their_input_schema() -> None:
    # issue 30: `input_schema` was not read, so the tool took no parameters and every
    # argument sent to it passed unchecked
    catalog = ApiCatalog.from_tools(
        [
            {
                "name": "get_weather",
                "description": "Weather",
                "input_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            }
        ]
    )
    (param,) = catalog.get("get_weather").parameters  # type: ignore[union-attr]
    assert (param.name, param.required, param.schema) == ("city", True, {"type": "string"})

"""Specs split over many files, the parts of an operation's documentation that could not
be read (``Operation.unread``), and credentials a spec declares only in its security
schemes (issue 43, item 5: never repair against what could not be read)."""

from __future__ import annotations

import io
import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from autofeedback import ApiCatalog, Operation, Scanner, SpecError, SpecWarning
from autofeedback._specs import load_spec, load_spec_file
from autofeedback.cli import run

SPECS = Path(__file__).parents[1] / "data" / "specs"
CLOUD = SPECS / "cloud"  # DigitalOcean's layout: operations, parameters, responses in files


def _op(ops: list[Operation], name: str) -> Operation:
    found = [op for op in ops if op.name == name]
    assert found, f"{name} not in {[op.name for op in ops]}"
    return found[0]


def _copy_cloud(tmp_path: Path) -> Path:
    folder = tmp_path / "cloud"
    shutil.copytree(CLOUD, folder)
    return folder / "cloud.yaml"


def _load_warned(spec: Path, **kwargs: Any) -> tuple[list[Operation], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ops, _ = load_spec_file(spec, **kwargs)
    assert all(w.category is SpecWarning for w in caught), [str(w.message) for w in caught]
    return ops, [str(w.message).removeprefix(f"{spec}: ") for w in caught]


# -- 1. operations, parameters and responses given as $ref to other files -----------------------


def test_operations_given_as_refs_to_files_load_with_their_parameters() -> None:
    # issue 43: `get: {$ref: resources/droplets/droplets_list.yml}` loaded as an empty
    # shell (one "unknown key '$ref'" warning), so a correct call lost both parameters
    ops, servers = load_spec_file(CLOUD / "cloud.yaml", cache_dir=False)  # no SpecWarning
    assert servers == ["https://api.cloud.example"]
    assert [op.name for op in ops] == [
        "droplets_list",
        "droplets_create",
        "droplets_get",
        "droplets_destroy",
        "volumes_list",
    ]
    listing = _op(ops, "droplets_list")
    assert (listing.method, listing.path, listing.tags) == ("GET", "/v2/droplets", ("Droplets",))
    assert [(p.name, p.location, p.required) for p in listing.parameters] == [
        ("per_page", "query", False),
        ("page", "query", False),
        ("tag_name", "query", False),
    ]
    assert listing.parameters[0].schema == {
        "type": "integer",
        "minimum": 1,
        "default": 20,
        "maximum": 200,
    }
    # responses in files, their schemas' refs relative to those files, examples too
    ok, unauthorized = listing.responses
    assert ok.description == "The droplets, a page at a time."
    assert ok.schema is not None
    assert ok.schema["allOf"][0]["properties"]["droplets"]["items"]["properties"]["size_slug"] == {
        "type": "string"
    }
    assert ok.schema["allOf"][1]["properties"]["links"]["type"] == "object"
    assert ok.example["droplets"][0]["id"] == 3164444
    assert unauthorized.status == "401" and unauthorized.description == "Authentication failed."
    # a path item in a file: its shared path parameter, its operations
    get, destroy = _op(ops, "droplets_get"), _op(ops, "droplets_destroy")
    for op in (get, destroy):
        assert [(p.name, p.location, p.schema) for p in op.parameters] == [
            ("droplet_id", "path", {"type": "integer", "minimum": 1})
        ]
    create = _op(ops, "droplets_create")
    assert [(p.name, p.required) for p in create.parameters] == [
        ("name", True),
        ("size", True),
        ("tags", False),
    ]
    assert create.body_required and create.body_media == "application/json"
    assert all(op.unread == () for op in ops)  # every part read


def test_a_correct_call_on_a_multi_file_spec_is_clean() -> None:
    scanner = Scanner(ApiCatalog.from_file(CLOUD / "cloud.yaml"), retriever=None)
    assert list(scanner.iter_findings("GET /v2/droplets?per_page=20&page=1")) == []
    assert list(scanner.iter_findings("GET /v2/volumes?per_page=20&region=nyc1")) == []
    # the schemas read from the shared file are in force
    (too_many,) = scanner.iter_findings("GET /v2/droplets?per_page=500")
    assert (too_many.code, too_many.location) == ("E4.2", ("query", "per_page"))


def test_the_cache_sees_an_edit_to_a_file_two_refs_away(tmp_path: Path) -> None:
    spec = _copy_cloud(tmp_path)
    cache = tmp_path / "cache"
    first, _ = load_spec_file(spec, cache_dir=cache)
    assert load_spec_file(spec, cache_dir=cache)[0] == first
    shared = spec.parent / "shared" / "parameters.yml"
    shared.write_text(shared.read_text().replace("maximum: 200", "maximum: 100"))
    edited, _ = load_spec_file(spec, cache_dir=cache)
    per_page = _op(edited, "droplets_list").parameter("per_page")
    assert per_page is not None and per_page.schema["maximum"] == 100


def test_a_missing_shared_file_is_a_warning_and_marks_the_operations_that_use_it(
    tmp_path: Path,
) -> None:
    spec = _copy_cloud(tmp_path)
    (spec.parent / "shared" / "parameters.yml").unlink()
    ops, messages = _load_warned(spec, cache_dir=tmp_path / "cache")
    assert messages == [
        "paths./v2/droplets.get.parameters[0].$ref: $ref '../../shared/parameters.yml#/per_page'"
        " points to a file that cannot be read (shared/parameters.yml: no such file); "
        "that parameter is not read",
        "paths./v2/droplets.get.parameters[1].$ref: $ref '../../shared/parameters.yml#/page'"
        " points to a file that cannot be read (shared/parameters.yml: no such file); "
        "that parameter is not read",
        "paths./v2/volumes.get.parameters[0].$ref: $ref '../../shared/parameters.yml#/per_page'"
        " points to a file that cannot be read (shared/parameters.yml: no such file); "
        "that parameter is not read",
        "paths./v2/volumes.get.parameters[1].$ref: $ref '../../shared/parameters.yml#/page'"
        " points to a file that cannot be read (shared/parameters.yml: no such file); "
        "that parameter is not read",
    ]
    assert _op(ops, "droplets_list").unread == (
        "paths./v2/droplets.get.parameters[0].$ref",
        "paths./v2/droplets.get.parameters[1].$ref",
    )
    assert _op(ops, "volumes_list").unread == (
        "paths./v2/volumes.get.parameters[0].$ref",
        "paths./v2/volumes.get.parameters[1].$ref",
    )
    assert [op.name for op in ops if op.unread] == ["droplets_list", "volumes_list"]
    # the parameters that were read still are
    assert [p.name for p in _op(ops, "volumes_list").parameters] == ["region"]
    # nothing was cached while a file was missing: putting it back is seen at once
    shutil.copy(CLOUD / "shared" / "parameters.yml", spec.parent / "shared" / "parameters.yml")
    ops, messages = _load_warned(spec, cache_dir=tmp_path / "cache")
    assert messages == [] and all(op.unread == () for op in ops)


def test_a_missing_operation_file_leaves_an_operation_marked_unread(tmp_path: Path) -> None:
    spec = _copy_cloud(tmp_path)
    (spec.parent / "resources" / "volumes" / "volumes_list.yml").unlink()
    ops, messages = _load_warned(spec, cache_dir=False)
    assert messages == [
        "paths./v2/volumes.get.$ref: $ref 'resources/volumes/volumes_list.yml' points to a "
        "file that cannot be read (resources/volumes/volumes_list.yml: no such file); "
        "that operation is not read"
    ]
    # kept by its method and path, so that a call to it is never taken for another one
    volumes = _op(ops, "GET /v2/volumes")
    assert volumes.unread == ("paths./v2/volumes.get.$ref",)
    assert volumes.parameters == ()


def test_a_ref_in_a_nested_file_may_not_leave_the_spec_folder(tmp_path: Path) -> None:
    spec = _copy_cloud(tmp_path)
    (tmp_path / "secret.yml").write_text("per_page: {in: query, name: per_page}\n")
    listing = spec.parent / "resources" / "droplets" / "droplets_list.yml"
    # from resources/droplets/, three levels up is outside cloud/
    listing.write_text(
        listing.read_text().replace("../../shared/parameters.yml", "../../../secret.yml", 1)
    )
    with pytest.raises(SpecError, match="leaves the spec's folder") as info:
        load_spec_file(spec, cache_dir=False)
    assert info.value.where == "paths./v2/droplets.get.parameters[0].$ref"


def test_an_operation_file_that_refers_to_itself_is_a_spec_error(tmp_path: Path) -> None:
    spec = _copy_cloud(tmp_path)
    (spec.parent / "resources" / "volumes" / "volumes_list.yml").write_text(
        "$ref: 'volumes_list.yml'\n"
    )
    with pytest.raises(SpecError, match="cycle") as info:
        load_spec_file(spec, cache_dir=False)
    assert info.value.where == "paths./v2/volumes.get"


def test_the_files_a_spec_reads_are_bounded_in_number_and_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autofeedback._specs import _refs

    spec = _copy_cloud(tmp_path)
    monkeypatch.setattr(_refs, "MAX_REF_FILES", 3)
    with pytest.raises(SpecError, match="reads more than 3 other files"):
        load_spec_file(spec, cache_dir=False)
    monkeypatch.setattr(_refs, "MAX_REF_FILES", 1_000)
    monkeypatch.setattr(_refs, "MAX_REF_TOTAL_BYTES", 1_000)
    with pytest.raises(SpecError, match="other files hold more than 1,000 bytes"):
        load_spec_file(spec, cache_dir=False)


# -- 2. Operation.unread: the places of what could not be read -----------------------------------


def _typos() -> dict[str, Any]:
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
            },
            "/owners": {
                "get": {"operationId": "listOwners", "responses": {"200": {"description": "ok"}}}
            },
        },
        "components": {"parameters": {"Q": {"name": "q", "in": "query", "shema": {}}}},
    }


def test_unknown_keys_are_the_places_an_operation_was_not_read() -> None:
    with pytest.warns(SpecWarning):
        ops, _ = load_spec(_typos(), source="pets.yaml")
    pets, owners = ops
    assert pets.unread == (
        "paths./pets.summery",
        "paths./pets.get.operationID",
        "paths./pets.get.parameters[0].requierd",
        "paths./pets.get.parameters[1].shema",
        "paths./pets.get.responses.200.schema",
    )
    assert owners.unread == ()


def test_unread_survives_the_on_disk_cache(tmp_path: Path) -> None:
    spec = tmp_path / "pets.json"
    spec.write_text(json.dumps(_typos()))
    loads = []
    for _ in range(2):  # the second load reads the cache
        with pytest.warns(SpecWarning):
            loads.append(ApiCatalog.from_file(spec).operations)
    assert loads[0] == loads[1] and loads[1][0].unread[0] == "paths./pets.summery"


def test_a_path_level_fault_marks_the_operations_that_use_that_part() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/a/{id}": {
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "v", "in": "query", "shcema": {"type": "integer"}},
                ],
                "get": {"responses": {"200": {"description": "ok"}}},
                "put": {
                    # its own `v` wins over the path item's: what the fault hides is not its
                    "parameters": [{"name": "v", "in": "query", "schema": {"type": "integer"}}],
                    "responses": {"200": {"description": "ok"}},
                },
            }
        },
    }
    with pytest.warns(SpecWarning):
        get, put = load_spec(doc, source="<a>")[0]
    assert get.unread == ("paths./a/{id}.parameters[1].shcema",)
    assert put.unread == ()


def _ref_doc(**op: Any) -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "paths": {"/pets": {"post": {"responses": {"200": {"description": "ok"}}, **op}}},
        "components": {
            "schemas": {
                "Owner": {"type": "object", "properties": {"pet": {"$ref": "#/nowhere/Pet"}}}
            }
        },
    }


@pytest.mark.parametrize(
    ("op", "unread", "message"),
    [
        pytest.param(
            {"parameters": [{"$ref": "#/components/parameters/Nope"}]},
            "paths./pets.post.parameters[0].$ref",
            "$ref '#/components/parameters/Nope' points nowhere; that parameter is not read",
            id="parameter",
        ),
        pytest.param(
            {"requestBody": {"$ref": "#/components/requestBodies/Nope"}},
            "paths./pets.post.requestBody.$ref",
            "$ref '#/components/requestBodies/Nope' points nowhere; that request body is not read",
            id="request-body",
        ),
        pytest.param(
            {"responses": {"200": {"$ref": "#/components/responses/Nope"}}},
            "paths./pets.post.responses.200.$ref",
            "$ref '#/components/responses/Nope' points nowhere; that response is not read",
            id="response",
        ),
        pytest.param(
            {
                "parameters": [
                    {"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/Q"}}
                ]
            },
            "paths./pets.post.parameters[0].schema.$ref",
            "$ref '#/components/schemas/Q' points nowhere; that schema is not checked",
            id="schema",
        ),
    ],
)
def test_a_ref_that_points_nowhere_is_a_place_not_read(
    op: dict[str, Any], unread: str, message: str
) -> None:
    # a dangling parameter $ref was a SpecError for the whole spec; it is one operation's
    # part that could not be read, and the rest of the spec is checked
    with pytest.warns(SpecWarning) as caught:
        (pets,) = load_spec(_ref_doc(**op), source="<pets>")[0]
    assert [str(w.message) for w in caught] == [f"<pets>: {unread}: {message}"]
    assert pets.unread == (unread,)


def test_a_schema_shared_by_two_operations_marks_each_at_its_own_place() -> None:
    # the expansion of a shared schema is memoised: its dangling ref is still each user's
    owner = {"$ref": "#/components/schemas/Owner"}
    body = {"content": {"application/json": {"schema": owner}}}
    doc = _ref_doc(requestBody=body)
    doc["paths"]["/owners"] = {
        "get": {
            "responses": {
                "200": {"description": "ok", "content": {"application/json": {"schema": owner}}}
            }
        }
    }
    with pytest.warns(SpecWarning):
        post, get = load_spec(doc, source="<pets>")[0]
    assert post.unread == (
        "paths./pets.post.requestBody.content.application/json.schema.properties.pet.$ref",
    )
    assert get.unread == (
        "paths./owners.get.responses.200.content.application/json.schema.properties.pet.$ref",
    )


def test_a_security_scheme_that_cannot_be_read_marks_every_operation() -> None:
    doc = _ref_doc()
    doc["paths"]["/owners"] = {"get": {"responses": {"200": {"description": "ok"}}}}
    doc["components"]["securitySchemes"] = {"key": {"$ref": "#/nowhere/Key"}}
    with pytest.warns(SpecWarning, match="that security scheme is not read"):
        ops, _ = load_spec(doc, source="<pets>")
    assert [op.unread for op in ops] == [("components.securitySchemes.key.$ref",)] * 2


def test_swagger_operations_are_marked_too() -> None:
    doc = {
        "swagger": "2.0",
        "paths": {
            "/a": {
                "get": {
                    "parameters": [{"name": "q", "in": "query", "typ": "string"}],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    with pytest.warns(SpecWarning):
        (op,) = load_spec(doc, source="<swagger>")[0]
    assert op.unread == ("paths./a.get.parameters[0].typ",)


def test_a_function_tool_with_a_dangling_ref_is_marked() -> None:
    tools = [
        {
            "name": "book",
            "parameters": {
                "type": "object",
                "properties": {"room": {"$ref": "#/$defs/Room"}, "n": {"type": "integer"}},
            },
        },
        {"name": "ping", "parameters": {"type": "object", "properties": {}}},
    ]
    with pytest.warns(SpecWarning, match="'#/\\$defs/Room' points nowhere"):
        book, ping = load_spec(tools, source="<tools>")[0]
    assert book.unread == ("[0].parameters.properties.room.$ref",)
    assert ping.unread == ()


def test_the_scanner_says_an_unknown_parameter_may_be_in_the_part_not_read(
    tmp_path: Path,
) -> None:
    spec = _copy_cloud(tmp_path)
    (spec.parent / "shared" / "parameters.yml").unlink()
    with pytest.warns(SpecWarning):
        catalog = ApiCatalog.from_file(spec)
    scanner = Scanner(catalog, retriever=None)
    found = list(scanner.iter_findings("GET /v2/droplets?per_page=20&page=1"))
    assert [(f.code, f.location) for f in found] == [
        ("E3", ("query", "per_page")),
        ("E3", ("query", "page")),
    ]
    assert found[0].message.endswith(
        "; droplets_list's documentation was only partly read "
        "(paths./v2/droplets.get.parameters[0].$ref and 1 more place)"
    )
    # an operation read in full says nothing of the kind
    (clean,) = scanner.iter_findings("GET /v2/droplets/7?pages=1")
    assert "partly read" not in clean.message


# -- 3. credentials declared only in securitySchemes -------------------------------------------

MAPS: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Maps", "version": "1"},
    "servers": [{"url": "https://maps.example"}],
    # the document requires the bearer token; `sig` (a URL signature) is named by no
    # requirement, and one operation is public
    "security": [{"bearer": []}],
    "components": {
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer"},
            "sig": {"type": "apiKey", "in": "query", "name": "sig"},
            "tenant": {"type": "apiKey", "in": "cookie", "name": "tenant_key"},
        }
    },
    "paths": {
        "/staticmap": {
            "get": {
                "operationId": "staticMap",
                "parameters": [
                    {
                        "name": "center",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string"},
                    },
                    {"name": "zoom", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": {"description": "a map"}},
            }
        },
        "/status": {
            "get": {
                "operationId": "status",
                "security": [],
                "responses": {"200": {"description": "up"}},
            }
        },
    },
}
SIG = "SECRET-SIG-0123456789"


def test_every_declared_scheme_is_a_credential_of_every_operation() -> None:
    catalog = ApiCatalog.from_obj(MAPS)
    for op in catalog:
        assert [(p.location, p.name) for p in op.auth_parameters] == [
            ("header", "Authorization"),
            ("query", "sig"),
            ("cookie", "tenant_key"),
        ]


@pytest.mark.parametrize(
    "call",
    [
        f"GET /staticmap?center=Paris&zoom=3&sig={SIG}",
        f"GET /status?sig={SIG}",
        # a call in function form names its arguments, not where they travel
        f"staticMap(center='Paris', sig='{SIG}')",
    ],
)
def test_a_credential_named_by_no_requirement_is_never_unknown(call: str) -> None:
    scanner = Scanner(ApiCatalog.from_obj(MAPS), retriever=None)
    assert list(scanner.iter_findings(call)) == []


def _audit_fix(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    spec = tmp_path / "maps.yaml"
    spec.write_text(yaml.safe_dump(MAPS))
    log = tmp_path / "log.jsonl"
    url = f"https://maps.example/staticmap?center=Paris&Zoom=3&sig={SIG}"
    log.write_text(json.dumps({"id": 1, "request": {"method": "GET", "url": url}}) + "\n")
    out, err = io.StringIO(), io.StringIO()
    argv = ["audit", str(log), "--spec", str(spec), "--no-semantic", "--fix", "--format", "jsonl"]
    code = run(argv, stdout=out, stderr=err, stdin=io.StringIO(""))
    assert code == 1, err.getvalue()
    (record,) = [json.loads(line) for line in out.getvalue().splitlines()]
    return out.getvalue() + err.getvalue(), record


def test_a_credential_named_by_no_requirement_is_kept_by_audit_fix(tmp_path: Path) -> None:
    # issue 43: `sig` was an unknown query parameter, and the repair dropped it
    _, record = _audit_fix(tmp_path)
    assert [(f["code"], f["location"]) for f in record["findings"]] == [("E3.2", ["query", "Zoom"])]
    assert SIG not in json.dumps(record["findings"])
    assert "&sig=" in record["repaired"]["url"]  # the request keeps its credential


def test_a_credential_named_by_no_requirement_is_redacted_in_audit_fix_reports(
    tmp_path: Path,
) -> None:
    output, _ = _audit_fix(tmp_path)
    assert SIG not in output

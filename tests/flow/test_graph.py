"""The data-flow graph: producers inferred by names and types, links, overrides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ConfigurationError
from autofeedback.flow import load_overrides
from autofeedback.sequences import FlowGraph, Producer


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


STR = {"type": "string"}
INT = {"type": "integer"}

TOOLS = [
    {
        "name": "GetUserToken",
        "description": "Log in",
        "parameters": _obj(username=STR, password=STR),
        "outputSchema": _obj(token=STR),
    },
    {
        "name": "DeleteAccount",
        "parameters": {**_obj(token=STR), "required": ["token"]},
    },
    {
        "name": "SearchPerson",
        "parameters": _obj(query=STR, page=INT),
        "outputSchema": _obj(
            page=INT,
            results={
                "type": "array",
                "items": _obj(id=INT, known_for={"type": "array", "items": _obj(id=INT)}),
            },
        ),
    },
    {
        "name": "GetPerson",
        "parameters": {**_obj(person_id=INT), "required": ["person_id"]},
        "outputSchema": _obj(id=INT, name=STR, tags={"type": "array", "items": STR}),
    },
    {"name": "FollowPeople", "parameters": _obj(person_ids={"type": "array", "items": INT})},
    {"name": "Tag", "parameters": _obj(tags=STR, page=INT)},
]


@pytest.fixture(scope="module")
def graph() -> FlowGraph:
    return FlowGraph.from_catalog(ApiCatalog.from_tools(TOOLS))


def test_same_name_field_produces(graph: FlowGraph) -> None:
    top = graph.producers("DeleteAccount", "token")[0]
    assert top == Producer("GetUserToken", "token", via="name", score=top.score)
    assert top.schema == STR


def test_resource_id_from_a_list_of_that_resource(graph: FlowGraph) -> None:
    found = graph.producers("GetPerson", "person_id")
    assert (found[0].operation, found[0].path, found[0].via) == (
        "SearchPerson",
        "results[].id",
        "resource",
    )
    # an id inside another container is a weak guess at best
    weak = [p for p in found if p.path == "results[].known_for[].id"]
    assert weak and weak[0].via == "weak" and weak[0].score < found[0].score


def test_an_operation_that_takes_the_value_only_echoes_it(graph: FlowGraph) -> None:
    assert all(p.operation != "GetPerson" for p in graph.producers("GetPerson", "person_id"))
    # SearchPerson takes `page` itself: its response's `page` is an echo, not a producer
    assert graph.producers("Tag", "page") == []


def test_types_are_checked(graph: FlowGraph) -> None:
    # `tags` of GetPerson is a list: not the value of a string parameter
    assert graph.producers("Tag", "tags") == []
    # a list parameter takes element paths
    top = graph.producers("FollowPeople", "person_ids")[0]
    assert (top.operation, top.path) == ("SearchPerson", "results[].id")


def test_unknown_operation_or_parameter_has_no_producers(graph: FlowGraph) -> None:
    assert graph.producers("Nope", "token") == []
    assert graph.producers("DeleteAccount", "nope") == []


def test_consumers(graph: FlowGraph) -> None:
    fed = {(c, p) for c, p, _ in graph.consumers("SearchPerson")}
    assert ("GetPerson", "person_id") in fed and ("FollowPeople", "person_ids") in fed
    assert graph.consumers("GetUserToken")[0][:2] == ("DeleteAccount", "token")


def test_response_schema(graph: FlowGraph) -> None:
    assert graph.response_schema("GetUserToken") == _obj(token=STR)
    assert graph.response_schema("DeleteAccount") is None


def test_overrides_replace_what_was_inferred() -> None:
    catalog = ApiCatalog.from_tools(TOOLS)
    graph = FlowGraph.from_catalog(
        catalog,
        {
            "GetPerson": {"person_id": "GetPerson:id"},
            "DeleteAccount": {"token": None},
        },
    )
    assert graph.producers("GetPerson", "person_id") == [
        Producer("GetPerson", "id", INT, "override", 2.0)
    ]
    assert graph.producers("DeleteAccount", "token") == []
    assert graph.user_supplied("DeleteAccount", "token")
    assert not graph.user_supplied("GetPerson", "person_id")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"Nope": {}}, "unknown operation 'Nope'"),
        ({"GetPerson": {"nope": None}}, "has no parameter 'nope'"),
        ({"GetPerson": {"person_id": "Nope:id"}}, "unknown producer operation 'Nope'"),
        ({"GetPerson": {"person_id": "id"}}, "must be 'PRODUCER_OP:path' or null"),
        ({"GetPerson": ["person_id"]}, "must map parameters"),
    ],
)
def test_bad_overrides_are_clear_errors(overrides: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        FlowGraph.from_catalog(ApiCatalog.from_tools(TOOLS), overrides)


def test_load_overrides_json_and_yaml(tmp_path: Path) -> None:
    (tmp_path / "o.yaml").write_text(
        "GetPerson:\n  person_id: SearchPerson:results[].id\nDeleteAccount:\n  token: null\n"
    )
    assert load_overrides(tmp_path / "o.yaml") == {
        "GetPerson": {"person_id": "SearchPerson:results[].id"},
        "DeleteAccount": {"token": None},
    }
    (tmp_path / "o.json").write_text(json.dumps({"GetPerson": {"person_id": 3}}))
    with pytest.raises(ConfigurationError, match="must be 'PRODUCER_OP:path' or null"):
        load_overrides(tmp_path / "o.json")
    (tmp_path / "bad.json").write_text("[1, 2")
    with pytest.raises(ConfigurationError, match="not JSON or YAML"):
        load_overrides(tmp_path / "bad.json")
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_overrides(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("spec", "consumer", "param", "producer", "path"),
    [
        ("tmdb", "GET_person-person_id", "person_id", "GET_search-person", "results[].id"),
        ("tmdb", "GET_movie-movie_id-credits", "movie_id", "GET_search-movie", "results[].id"),
        ("spotify", "create-playlist", "user_id", "get-current-users-profile", "id"),
        ("spotify", "add-tracks-to-playlist", "playlist_id", "create-playlist", "id"),
    ],
)
def test_restbench_producers_in_top_three(
    shared_data_dir: Path, spec: str, consumer: str, param: str, producer: str, path: str
) -> None:
    catalog = ApiCatalog.from_file(shared_data_dir / "restbench" / f"{spec}_oas.json")
    found = FlowGraph.from_catalog(catalog).producers(consumer, param)
    assert (producer, path) in [(p.operation, p.path) for p in found[:3]], found[:5]


def test_operations_by_method_and_path(shared_data_dir: Path) -> None:
    catalog = ApiCatalog.from_file(shared_data_dir / "restbench" / "tmdb_oas.json")
    graph = FlowGraph.from_catalog(catalog)
    assert graph.producers("GET /person/{person_id}", "person_id") == graph.producers(
        "GET_person-person_id", "person_id"
    )


def test_box_graph_builds(shared_data_dir: Path) -> None:
    catalog = ApiCatalog.from_file(shared_data_dir / "specs" / "box.json")
    graph = FlowGraph.from_catalog(catalog)
    top = graph.producers("get_files_id", "file_id")
    assert top and top[0].via in ("name", "resource")
    assert graph.as_dict(["get_files_id"])["get_files_id"]["file_id"]["producers"]


def test_descriptive_names_rank_below_identifiers() -> None:
    tools = [
        {"name": "Login", "parameters": {}, "outputSchema": _obj(token=STR, name=STR, type=STR)},
        {"name": "Rename", "parameters": _obj(token=STR, name=STR, response_type=STR)},
        {"name": "Play", "parameters": _obj(context_uri=STR)},
        {
            "name": "Tracks",
            "parameters": {},
            "outputSchema": _obj(items={"type": "array", "items": _obj(uri=STR)}),
        },
    ]
    graph = FlowGraph.from_catalog(ApiCatalog.from_tools(tools))
    token, name = graph.producers("Rename", "token")[0], graph.producers("Rename", "name")[0]
    assert (token.via, name.via) == ("name", "name") and token.score > name.score + 0.2
    # a parameter ending in an identifying word takes a field named by that word...
    top = graph.producers("Play", "context_uri")[0]
    assert (top.operation, top.path, top.via) == ("Tracks", "items[].uri", "suffix")
    # ...but `response_type` is not fed by any `type`
    assert graph.producers("Rename", "response_type") == []


def test_api_bank_token_comes_from_get_user_token(shared_data_dir: Path) -> None:
    """API-Bank's 49 level-1 docs: every API taking a `token` is fed by GetUserToken."""
    import sys

    repo = str(Path(__file__).resolve().parents[2])
    if repo not in sys.path:  # benchmarks/ is a folder of scripts, not an installed package
        sys.path.insert(0, repo)
    from benchmarks._datasets import api_bank_doc_set

    catalog = ApiCatalog.from_tools(api_bank_doc_set())
    graph = FlowGraph.from_catalog(catalog)
    takers = [op.name for op in catalog if op.parameter("token") is not None]
    assert len(takers) >= 15
    for name in takers:
        found = graph.producers(name, "token")
        assert ("GetUserToken", "token") in [(p.operation, p.path) for p in found[:2]], name


def test_ids_a_collection_lists_are_that_collections() -> None:
    item = {"type": "object", "properties": {"id": STR}}

    def get(op_id: str, schema: dict[str, Any], params: tuple[str, ...] = ()) -> dict[str, Any]:
        return {
            "get": {
                "operationId": op_id,
                "description": "the current user",
                "parameters": [
                    {"name": p, "in": "path", "required": True, "schema": STR} for p in params
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": schema}},
                    }
                },
            }
        }

    doc = {
        "openapi": "3.0.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/me": get("getMe", item),
            "/me/playlists": get(
                "myPlaylists",
                {"type": "object", "properties": {"items": {"type": "array", "items": item}}},
            ),
            "/users/{user_id}": get("getUser", item, ("user_id",)),
        },
    }
    found = FlowGraph.from_catalog(ApiCatalog.from_obj(doc)).producers("getUser", "user_id")
    assert (found[0].operation, found[0].via) == ("getMe", "resource")
    listed = [p for p in found if p.operation == "myPlaylists"]
    assert listed and listed[0].via == "weak"  # playlist ids, whatever the text mentions


def test_a_destructive_operation_is_the_last_producer_to_suggest() -> None:
    """An order's ``book_id`` is a real book id whether the order is read or cancelled,
    but an agent told to call ``cancelOrder`` to learn it would destroy the order."""
    order = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "book_id": {"type": "integer"}},
    }
    tools = [
        {
            "name": "cancelOrder",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            "outputSchema": order,
        },
        {
            "name": "getOrder",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            "outputSchema": order,
        },
        {
            "name": "getBook",
            "parameters": {"type": "object", "properties": {"book_id": {"type": "integer"}}},
        },
    ]
    ranked = FlowGraph.from_catalog(ApiCatalog.from_tools(tools)).producers("getBook", "book_id")
    named = [p for p in ranked if p.path == "book_id"]
    assert [p.operation for p in named] == ["getOrder", "cancelOrder"]
    assert named[0].score - named[1].score >= 0.2

"""The stateful sandbox: the real server on 127.0.0.1 answering like the real API within
one session (ids a list returns are ids the detail accepts, created resources can be
read back and deleted, unknown ids get the documented 404), deterministic per seed."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import requests

from autofeedback import ApiCatalog, ConfigurationError, Operation, Parameter, Response
from autofeedback.catalog._schema import sanitize_schema
from autofeedback.serve._sandbox import RESET_PATH, Sandbox
from autofeedback.serve._sandbox_state import generate, id_params

ROOT = Path(__file__).resolve().parents[2]
BOOKSHOP = ROOT / "specs" / "examples" / "bookshop.yaml"
sys.path.insert(0, str(ROOT))

from benchmarks import sandbox_paths  # noqa: E402
from benchmarks._datasets import shared_data_dir  # noqa: E402

DATA = shared_data_dir()
CLI = (sys.executable, "-c", "from autofeedback.cli import main; main()")


def _restbench(name: str) -> Path:
    path = (DATA or Path("../shared/data")) / "restbench" / name
    if not path.exists():
        pytest.skip(f"shared benchmark data not found at {path} (set AUTOFEEDBACK_SHARED_DATA)")
    return path


# A small API with no examples at all: every body is generated from the schemas.
NOTES: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Notes", "version": "1"},
    "paths": {
        "/notes": {
            "get": {
                "operationId": "listNotes",
                "responses": {
                    "200": {
                        "description": "notes",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["items"],
                                    "properties": {
                                        "items": {
                                            "type": "array",
                                            "minItems": 3,
                                            "items": {"$ref": "#/components/schemas/Note"},
                                        }
                                    },
                                }
                            }
                        },
                    }
                },
            },
            "post": {
                "operationId": "createNote",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/NewNote"}}
                    },
                },
                "responses": {
                    "201": {
                        "description": "created",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Note"}}
                        },
                    }
                },
            },
        },
        "/notes/{note_id}": {
            "parameters": [
                {"name": "note_id", "in": "path", "required": True, "schema": {"type": "integer"}}
            ],
            "get": {
                "operationId": "getNote",
                "responses": {
                    "200": {
                        "description": "the note",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Note"}}
                        },
                    },
                    "404": {
                        "description": "no such note",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "status_code": {"type": "integer"},
                                        "status_message": {"type": "string"},
                                    },
                                }
                            }
                        },
                    },
                },
            },
            "patch": {
                "operationId": "editNote",
                "requestBody": {
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/NewNote"}}
                    }
                },
                "responses": {
                    "200": {
                        "description": "edited",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Note"}}
                        },
                    }
                },
            },
            "delete": {"operationId": "deleteNote", "responses": {"204": {"description": "gone"}}},
        },
        "/notes/{note_id}/archive": {
            "post": {
                "operationId": "archiveNote",
                "parameters": [
                    {
                        "name": "note_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "the archived note",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Note"}}
                        },
                    }
                },
            }
        },
        "/people": {
            "get": {
                "operationId": "listPeople",
                "responses": {
                    "200": {
                        "description": "people",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["id"],
                                        "properties": {"id": {"type": "integer"}},
                                    },
                                }
                            }
                        },
                    }
                },
            }
        },
        "/people/{person_id}": {
            "get": {
                "operationId": "getPerson",
                "parameters": [
                    {
                        "name": "person_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "a person",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"id": {"type": "integer"}},
                                }
                            }
                        },
                    },
                    "404": {
                        "description": "unknown",
                        "content": {"application/json": {"example": {"error": "no such person"}}},
                    },
                },
            }
        },
    },
    "components": {
        "schemas": {
            "NewNote": {
                "type": "object",
                "required": ["text"],
                "additionalProperties": False,
                "properties": {"text": {"type": "string"}, "pinned": {"type": "boolean"}},
            },
            "Note": {
                "type": "object",
                "required": ["id", "text", "colour"],
                "properties": {
                    "id": {"type": "integer", "minimum": 1},
                    "text": {"type": "string", "maxLength": 40},
                    "pinned": {"type": "boolean"},
                    "colour": {"type": "string", "enum": ["red", "green", "blue"]},
                    "created": {"type": "string", "format": "date-time"},
                },
            },
        }
    },
}


@pytest.fixture(scope="module")
def notes_catalog() -> ApiCatalog:
    return ApiCatalog.from_obj(NOTES, source="notes")


@pytest.fixture
def notes(notes_catalog: ApiCatalog) -> Iterator[Sandbox]:
    with Sandbox(notes_catalog, seed=0) as sandbox:
        yield sandbox


def _note_schema(catalog: ApiCatalog) -> dict[str, Any]:
    op = catalog.get("getNote")
    assert op is not None
    [ok] = [r for r in op.responses if r.status == "200"]
    assert ok.schema is not None
    return sanitize_schema(ok.schema)


# -- ids: what a list returns, the detail accepts ---------------------------------------


def test_ids_a_list_returns_are_the_ids_the_detail_accepts(
    notes: Sandbox, notes_catalog: ApiCatalog
) -> None:
    listed = requests.get(notes.url + "/notes", timeout=10).json()["items"]
    assert len(listed) >= 3 and len({n["id"] for n in listed}) == len(listed)
    schema = _note_schema(notes_catalog)
    for note in listed:
        r = requests.get(notes.url + f"/notes/{note['id']}", timeout=10)
        assert r.status_code == 200
        detail = r.json()
        jsonschema.validate(detail, schema)
        # the same resource: its id, and the fields the list showed for it
        assert detail["id"] == note["id"]
        assert (detail["text"], detail["colour"]) == (note["text"], note["colour"])


def test_an_id_never_issued_gets_the_documented_404(notes: Sandbox) -> None:
    listed = requests.get(notes.url + "/notes", timeout=10).json()["items"]
    unknown = max(n["id"] for n in listed) + 1
    r = requests.get(notes.url + f"/notes/{unknown}", timeout=10)
    assert r.status_code == 404
    # the documented 404 schema, with the reason and status filled in
    assert r.json() == {"status_code": 404, "status_message": f"no note has note_id '{unknown}'"}
    # a documented 404 example is answered as it is
    r = requests.get(notes.url + "/people/1", timeout=10)
    assert (r.status_code, r.json()) == (404, {"error": "no such person"})
    assert notes.requests_seen[-1].kind == "not_found"


def test_an_id_of_another_kind_is_a_404(notes: Sandbox) -> None:
    note_id = requests.get(notes.url + "/notes", timeout=10).json()["items"][0]["id"]
    assert requests.get(notes.url + f"/notes/{note_id}", timeout=10).status_code == 200
    # a note's id is not a person's id
    assert requests.get(notes.url + f"/people/{note_id}", timeout=10).status_code == 404


def test_undocumented_404_is_plain_and_terse_mode_gives_only_the_code() -> None:
    listing = Response("200", example=[{"id": 1}, {"id": 2}])
    catalog = ApiCatalog(
        [
            Operation("listThings", method="GET", path="/things", responses=(listing,)),
            Operation("getThing", method="GET", path="/things/{thing_id}"),
        ]
    )
    with Sandbox(catalog) as verbose, Sandbox(catalog, terse=True) as terse:
        r = requests.get(verbose.url + "/things/42", timeout=10)
        assert r.status_code == 404
        body = r.json()
        assert (body["info_code"], body["error"]) == (40401, "not_found")
        assert body["message"] == "no thing has thing_id '42'"
        assert body["errors"][0]["location"] == ["path", "thing_id"]
        r = requests.get(terse.url + "/things/42", timeout=10)
        assert (r.status_code, r.json()) == (404, {"info_code": 40401})


def test_ids_no_operation_hands_out_are_taken_as_given() -> None:
    """An airport code the API never lists can only come from the caller's knowledge:
    any value is answered. Once an operation lists airports, the codes are checked."""
    detail = Operation(
        "getAirport",
        method="GET",
        path="/airports/{icao_code}",
        parameters=(Parameter("icao_code", "path", {"type": "string"}, required=True),),
    )
    listing = Operation(
        "listAirports",
        method="GET",
        path="/airports",
        responses=(Response("200", example={"results": [{"id": "EGLL", "name": "Heathrow"}]}),),
    )
    with Sandbox(ApiCatalog([detail])) as alone, Sandbox(ApiCatalog([detail, listing])) as listed:
        assert requests.get(alone.url + "/airports/KJFK", timeout=10).status_code == 200
        assert requests.get(listed.url + "/airports/KJFK", timeout=10).status_code == 404
        r = requests.get(listed.url + "/airports/EGLL", timeout=10)
        assert r.status_code == 200


# -- created resources ------------------------------------------------------------------


def test_a_created_resource_is_read_back_edited_and_deleted(
    notes: Sandbox, notes_catalog: ApiCatalog
) -> None:
    r = requests.post(notes.url + "/notes", json={"text": "buy milk", "pinned": True}, timeout=10)
    assert r.status_code == 201
    created = r.json()
    jsonschema.validate(created, _note_schema(notes_catalog))
    assert (created["text"], created["pinned"]) == ("buy milk", True)
    url = notes.url + f"/notes/{created['id']}"
    assert requests.get(url, timeout=10).json() == created
    r = requests.patch(url, json={"text": "buy oat milk"}, timeout=10)
    assert (r.status_code, r.json()["text"]) == (200, "buy oat milk")
    assert requests.get(url, timeout=10).json()["text"] == "buy oat milk"
    # an action on the note answers that note, and creates nothing
    r = requests.post(url + "/archive", timeout=10)
    assert (r.status_code, r.json()["id"], r.json()["text"]) == (200, created["id"], "buy oat milk")
    r = requests.delete(url, timeout=10)
    assert (r.status_code, r.content) == (204, b"")
    assert requests.get(url, timeout=10).status_code == 404
    assert requests.delete(url, timeout=10).status_code == 404
    # every create gets a fresh id
    again = requests.post(notes.url + "/notes", json={"text": "x"}, timeout=10).json()
    assert again["id"] != created["id"]


def test_reset_starts_a_fresh_session(notes: Sandbox) -> None:
    created = requests.post(notes.url + "/notes", json={"text": "a"}, timeout=10).json()
    url = notes.url + f"/notes/{created['id']}"
    assert requests.get(url, timeout=10).status_code == 200
    r = requests.post(notes.url + RESET_PATH, timeout=10)
    assert (r.status_code, r.json()) == (200, {"reset": True})
    assert requests.get(url, timeout=10).status_code == 404
    # the same first create after a reset: the same id, as in a fresh sandbox
    assert requests.post(notes.url + "/notes", json={"text": "a"}, timeout=10).json() == created
    notes.reset()
    assert requests.get(url, timeout=10).status_code == 404


# -- the bookshop example ---------------------------------------------------------------


def test_bookshop_search_then_detail_then_order_then_cancel(bookshop: ApiCatalog) -> None:
    with Sandbox(bookshop, terse=True) as shop:
        books = requests.get(shop.url + "/books?query=dune", timeout=10).json()["books"]
        book = requests.get(shop.url + f"/books/{books[0]['id']}", timeout=10).json()
        assert (book["id"], book["title"], book["author"]) == (7, "Dune", "Frank Herbert")
        # the docs' own 404 code for getBook
        r = requests.get(shop.url + "/books/8", timeout=10)
        assert (r.status_code, r.json()) == (404, {"info_code": 20011})
        order = requests.post(
            shop.url + "/orders", json={"book_id": 7, "quantity": 2}, timeout=10
        ).json()
        assert order["id"] != "ORD-123456" and order["id"].startswith("ORD-")
        assert (order["book_id"], order["quantity"]) == (7, 2)
        url = shop.url + f"/orders/{order['id']}"
        assert requests.get(url, timeout=10).json() == order
        assert requests.delete(url, timeout=10).status_code == 200
        # getOrder documents no 404: the default code
        r = requests.get(url, timeout=10)
        assert (r.status_code, r.json()) == (404, {"info_code": 40401})
        # the documented example order exists from the start
        assert requests.get(shop.url + "/orders/ORD-123456", timeout=10).status_code == 200


# -- determinism and bounds ---------------------------------------------------------------


def _session(sandbox: Sandbox) -> list[Any]:
    out: list[Any] = []
    with requests.Session() as s:
        listed = s.get(sandbox.url + "/notes", timeout=10).json()
        out.append(listed)
        out.append(s.get(sandbox.url + f"/notes/{listed['items'][1]['id']}", timeout=10).json())
        out.append(s.post(sandbox.url + "/notes", json={"text": "t"}, timeout=10).json())
    return out


def test_the_same_seed_gives_the_same_session(notes_catalog: ApiCatalog) -> None:
    with Sandbox(notes_catalog, seed=7) as a, Sandbox(notes_catalog, seed=7) as b:
        first = _session(a)
        assert first == _session(b)
    with Sandbox(notes_catalog, seed=8) as c:
        assert _session(c) != first


def test_remembered_ids_are_bounded(notes_catalog: ApiCatalog) -> None:
    with Sandbox(notes_catalog, max_resources=4) as small:
        first = requests.post(small.url + "/notes", json={"text": "a"}, timeout=10).json()
        for _ in range(4):
            requests.post(small.url + "/notes", json={"text": "b"}, timeout=10)
        # the oldest id was forgotten, the newest is still there
        assert requests.get(small.url + f"/notes/{first['id']}", timeout=10).status_code == 404
        last = requests.post(small.url + "/notes", json={"text": "c"}, timeout=10).json()
        assert requests.get(small.url + f"/notes/{last['id']}", timeout=10).status_code == 200
    with pytest.raises(ConfigurationError):
        Sandbox(notes_catalog, max_resources=0)


def test_hostile_schemas_give_small_bodies_quickly() -> None:
    node: dict[str, Any] = {"type": "object", "required": ["child", "kids"]}
    node["properties"] = {
        "id": {"type": "integer"},
        "child": node,  # recursive, and required at every level
        "kids": {"type": "array", "minItems": 10**9, "items": node},
    }
    start = time.perf_counter()
    value = generate(node, random.Random(0))
    # bounded, not timed: an unbounded generator would never return (the margin absorbs load)
    assert time.perf_counter() - start < 20
    assert len(json.dumps(value)) < 1_000_000
    wide = {"type": "array", "minItems": 10**9, "items": {"type": "string", "minLength": 10**9}}
    assert len(json.dumps(generate(wide, random.Random(0)))) < 1_000_000


def test_generated_bodies_conform_to_the_real_specs() -> None:
    """Every response schema of TMDB and Spotify: the generated body validates."""
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    checked = 0
    for name in ("tmdb_oas.json", "spotify_oas.json"):
        for op in ApiCatalog.from_file(_restbench(name)):
            for r in op.responses:
                if r.schema is None:
                    continue
                schema = sanitize_schema(r.schema)
                for seed in range(3):
                    value = generate(schema, random.Random(seed))
                    jsonschema.validate(value, schema, format_checker=checker)
                    checked += 1
    assert checked > 300


def test_which_path_parameters_are_ids() -> None:
    def kinds(path: str) -> list[tuple[str, str | None]]:
        return [(p.name, p.kind) for p in id_params(Operation("x", method="GET", path=path))]

    assert kinds("/movie/{movie_id}/credits") == [("movie_id", "movie")]
    assert kinds("/artists/{id}/albums") == [("id", "artist")]
    assert kinds("/books/{bookId}") == [("bookId", "book")]
    assert kinds("/users/{username}/repos") == [("username", "user")]
    assert kinds("/categories/{id}") == [("id", "category")]
    # numbers inside a resource are not ids of their own
    assert kinds("/tv/{tv_id}/season/{season_number}") == [("tv_id", "tv")]
    assert kinds("/trending/{media_type}/{time_window}") == []


# -- RestBench: the gold solution paths run end to end ------------------------------------


def test_restbench_gold_paths_run_end_to_end() -> None:
    _restbench("tmdb.json")
    assert DATA is not None
    outcomes = sandbox_paths.run(DATA)
    assert len(outcomes) == 157
    odd = {(o.domain, o.query): (o.result, o.reason) for o in outcomes if o.result != "all-2xx"}
    assert odd == {
        # gold strings naming no documented path (SOURCES.md)
        ("tmdb", "Tell me about Katherine LaNasa's latest movie appearance."): (
            "not-in-spec",
            "GET /person/{movie_id}/movie_credits",
        ),
        ("spotify", "Follow all the singers involved in the song When You Believe"): (
            "not-in-spec",
            "GET /track/{id}",
        ),
        # the gold path skips a step: a movie search holds no person ids, and the
        # sandbox refuses a movie's id as a person's
        ("tmdb", "What TV series has the director of Mulholland Drive directed?"): (
            "failed",
            "GET /person/{person_id}/tv_credits: 404",
        ),
    }
    # the control: every made-up id was refused
    sent = sum(o.made_up for o in outcomes)
    assert sent > 100 and sum(o.made_up_404 for o in outcomes) == sent


def test_a_sub_resource_answers_with_the_id_it_was_asked_for() -> None:
    # the spec's example of GET /movie/{movie_id}/keywords is movie 550's; asked for
    # another movie, the answer is that movie's
    catalog = ApiCatalog.from_file(_restbench("tmdb_oas.json"))
    with Sandbox(catalog, seed=0) as server:
        found = requests.get(f"{server.url}/search/movie", params={"query": "x"}, timeout=10)
        movie = next(m["id"] for m in found.json()["results"] if m["id"] != 550)
        keywords = requests.get(f"{server.url}/movie/{movie}/keywords", timeout=10)
        assert keywords.status_code == 200 and keywords.json()["id"] == movie


def test_cli_seed_makes_created_ids_repeatable() -> None:
    def first_order(seed: int) -> Any:
        proc = subprocess.Popen(
            [*CLI, "sandbox", "--spec", str(BOOKSHOP), "--port", "0", "--seed", str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            assert proc.stdout is not None
            banner = proc.stdout.readline()
            url = banner.split(" at ")[1].split()[0]
            body = {"book_id": 7, "quantity": 1}
            return requests.post(url + "/orders", json=body, timeout=10).json()["id"]
        finally:
            proc.terminate()
            proc.communicate(timeout=60)

    first = first_order(3)
    assert first == first_order(3)
    assert first != first_order(4)

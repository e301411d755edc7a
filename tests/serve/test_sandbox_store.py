"""The sandbox keeps its word on a spec it has never seen (issue 36): the calendar example,
ids as ``format: uuid`` and ``pattern: ^evt_[a-z0-9]{6}$``, a paged list and a cursor
list, each answered from one store per collection on the real server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from autofeedback import ApiCatalog
from autofeedback.serve._sandbox import Sandbox
from autofeedback.serve._sandbox_values import fits, fresh_id, from_pattern, generate

ROOT = Path(__file__).resolve().parents[2]
CALENDAR = ROOT / "specs" / "examples" / "calendar.yaml"
CLI = (sys.executable, "-c", "from autofeedback.cli import main; main()")
EVENT_ID = re.compile(r"^evt_[a-z0-9]{6}$")
NEW_EVENT = {
    "title": "Stand-up",
    "starts_at": "2024-05-02T09:00:00Z",
    "ends_at": "2024-05-02T09:15:00Z",
}


@pytest.fixture(scope="module")
def calendar() -> ApiCatalog:
    return ApiCatalog.from_file(CALENDAR)


@pytest.fixture
def api(calendar: ApiCatalog) -> Iterator[str]:
    with Sandbox(calendar, seed=0) as sandbox:
        yield sandbox.url + "/api"


def _pages(url: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every calendar, page by page (``page``/``page_size``)."""
    out: list[dict[str, Any]] = []
    for page in range(1, 100):
        body = requests.get(url + "/calendars", params={**params, "page": page}, timeout=10).json()
        if not body["calendars"]:
            return out
        out += body["calendars"]
    raise AssertionError("the pages never end")


def _events(url: str, calendar_id: str, limit: int = 4) -> list[dict[str, Any]]:
    """Every event of a calendar, following ``next_cursor``."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):
        params: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        r = requests.get(f"{url}/calendars/{calendar_id}/events", params=params, timeout=10)
        assert r.status_code == 200
        out += r.json()["events"]
        cursor = r.json()["next_cursor"]
        if cursor is None:
            return out
    raise AssertionError("the cursor never ends")


# -- the three failures of issue 36 ------------------------------------------------------


def test_a_paged_list_holds_distinct_uuids_that_the_detail_reads_field_by_field(api: str) -> None:
    first = requests.get(api + "/calendars", params={"page_size": 2}, timeout=10).json()
    ids = [c["id"] for c in first["calendars"]]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(str(uuid.UUID(i)) == i for i in ids)
    # the same page again is the same page: the same calendars, the same names
    assert requests.get(api + "/calendars", params={"page_size": 2}, timeout=10).json() == first
    assert first["page"] == 1 and first["page_size"] == 2
    # every page, no calendar twice, each read back by its detail with the same fields
    listed = _pages(api, {"page_size": 5})
    assert len(listed) == first["total"] and len({c["id"] for c in listed}) == len(listed)
    for item in listed:
        detail = requests.get(f"{api}/calendars/{item['id']}", timeout=10)
        assert detail.status_code == 200
        assert {k: detail.json()[k] for k in item} == item


def test_created_ids_follow_the_documented_pattern_and_read_back(api: str) -> None:
    calendar_id = requests.get(api + "/calendars", timeout=10).json()["calendars"][0]["id"]
    created = []
    for n in range(5):
        body = {**NEW_EVENT, "title": f"meeting {n}"}
        r = requests.post(f"{api}/calendars/{calendar_id}/events", json=body, timeout=10)
        assert r.status_code == 201
        event = r.json()
        assert EVENT_ID.match(event["id"]), event["id"]
        assert event["calendar_id"] == calendar_id and event["title"] == f"meeting {n}"
        again = requests.get(f"{api}/calendars/{calendar_id}/events/{event['id']}", timeout=10)
        assert (again.status_code, again.json()) == (200, event)
        created.append(event["id"])
    assert len(set(created)) == 5
    # the list shows them too, after the calendar's own events
    assert [e["id"] for e in _events(api, calendar_id)][-5:] == created


def test_a_deleted_resource_stays_deleted(api: str) -> None:
    calendar_id = requests.get(api + "/calendars", timeout=10).json()["calendars"][0]["id"]
    event_id = _events(api, calendar_id)[1]["id"]
    url = f"{api}/calendars/{calendar_id}/events/{event_id}"
    assert requests.get(url, timeout=10).status_code == 200
    assert requests.delete(url, timeout=10).status_code == 204
    assert requests.get(url, timeout=10).status_code == 404
    assert event_id not in {e["id"] for e in _events(api, calendar_id)}
    assert requests.get(url, timeout=10).status_code == 404
    assert requests.delete(url, timeout=10).status_code == 404
    # a calendar too, from its list and its detail
    assert requests.delete(f"{api}/calendars/{calendar_id}", timeout=10).status_code == 204
    assert calendar_id not in {c["id"] for c in _pages(api, {})}
    assert requests.get(f"{api}/calendars/{calendar_id}", timeout=10).status_code == 404
    assert requests.get(f"{api}/calendars/{calendar_id}/events", timeout=10).status_code == 404


# -- the store --------------------------------------------------------------------------


def test_updates_change_what_lists_and_details_show_and_keep_the_order(api: str) -> None:
    before = _pages(api, {"page_size": 3})
    target = before[4]["id"]
    r = requests.patch(f"{api}/calendars/{target}", json={"name": "Work"}, timeout=10)
    assert r.status_code == 200 and r.json()["name"] == "Work"
    after = _pages(api, {"page_size": 3})
    assert [c["id"] for c in after] == [c["id"] for c in before]
    assert after[4] == {**before[4], "name": "Work"}
    assert requests.get(f"{api}/calendars/{target}", timeout=10).json()["name"] == "Work"
    # PUT replaces: what the new body does not say is made up again, the id stays
    events = _events(api, target)
    url = f"{api}/calendars/{target}/events/{events[0]['id']}"
    replaced = requests.put(url, json=NEW_EVENT, timeout=10).json()
    assert replaced["id"] == events[0]["id"] and replaced["title"] == NEW_EVENT["title"]
    assert requests.get(url, timeout=10).json() == replaced


def test_a_created_calendar_joins_the_last_page(api: str) -> None:
    body = {"name": "Holidays", "timezone": "Europe/Paris", "color": "#00aa11"}
    created = requests.post(api + "/calendars", json=body, timeout=10).json()
    assert {k: created[k] for k in body} == body and str(uuid.UUID(created["id"])) == created["id"]
    listed = _pages(api, {"page_size": 5})
    assert listed[-1] == {k: created[k] for k in listed[-1]}
    assert listed[-1]["id"] == created["id"]
    # a new calendar has a store of events of its own
    assert _events(api, created["id"])


def test_cursor_pages_cover_the_store_once(api: str) -> None:
    calendar_id = requests.get(api + "/calendars", timeout=10).json()["calendars"][0]["id"]
    all_at_once = _events(api, calendar_id, limit=100)
    for limit in (1, 3, 5):
        assert _events(api, calendar_id, limit=limit) == all_at_once
    r = requests.get(
        f"{api}/calendars/{calendar_id}/events", params={"cursor": "no-such-cursor"}, timeout=10
    )
    assert r.status_code == 200 and r.json() == {"events": [], "next_cursor": None}


def test_other_calendars_have_other_events(api: str) -> None:
    first, second = requests.get(api + "/calendars", timeout=10).json()["calendars"][:2]
    one = {e["id"] for e in _events(api, first["id"])}
    two = {e["id"] for e in _events(api, second["id"])}
    assert one and two and not one & two
    # an event of one calendar is not found under the other
    url = f"{api}/calendars/{second['id']}/events/{next(iter(one))}"
    assert requests.get(url, timeout=10).status_code == 404


def test_the_same_seed_gives_the_same_store(calendar: ApiCatalog) -> None:
    def session(seed: int) -> list[Any]:
        with Sandbox(calendar, seed=seed) as sandbox:
            api = sandbox.url + "/api"
            listed = _pages(api, {})
            created = requests.post(api + "/calendars", json={"name": "x"}, timeout=10).json()
            return [listed, created, _events(api, listed[3]["id"])]

    assert session(5) == session(5)
    assert session(5) != session(6)


# -- item 4: what the sandbox cannot know ------------------------------------------------


UNLINKED: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Rooms", "version": "1"},
    "paths": {
        "/rooms": {
            "get": {
                "operationId": "listRooms",
                "responses": {
                    "200": {
                        "description": "rooms",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {"name": {"type": "string"}},
                                    },
                                }
                            }
                        },
                    }
                },
            }
        },
        "/rooms/{room_code}": {
            "get": {
                "operationId": "getRoom",
                "parameters": [
                    {
                        "name": "room_code",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {"200": {"description": "a room"}},
            }
        },
    },
}


def test_a_list_that_cannot_be_linked_to_its_detail_is_said_once_at_start(
    tmp_path: Path, calendar: ApiCatalog
) -> None:
    assert Sandbox(calendar).notes == ()
    catalog = ApiCatalog.from_obj(UNLINKED, source="rooms")
    [note] = Sandbox(catalog).notes
    assert "GET /rooms" in note and "room_code" in note and "cannot link" in note
    # the command says it once, before serving, and not again per request
    spec = tmp_path / "rooms.json"
    spec.write_text(json.dumps(UNLINKED))
    proc = subprocess.Popen(
        [*CLI, "sandbox", "--spec", str(spec), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" at ")[1].split()[0]
        for _ in range(3):
            assert requests.get(url + "/rooms", timeout=10).status_code == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert err.count("autofeedback: note: GET /rooms lists room items") == 1, err


# -- values ------------------------------------------------------------------------------


def test_formats_and_patterns_give_fresh_valid_values() -> None:
    rng = random.Random(0)
    for fmt in ("uuid", "date-time", "date", "time", "email", "uri", "ipv4", "ipv6", "hostname"):
        schema = {"type": "string", "format": fmt}
        values = [generate(schema, rng) for _ in range(20)]
        assert all(fits(schema, v) for v in values), (fmt, values)
        assert len(set(values)) > 10, fmt
    for pattern in (r"^evt_[a-z0-9]{6}$", r"^[A-Z]{2}-\d{4}$", r"^(ab|cd)+x?$", r"^[^/]{3,8}$"):
        schema = {"type": "string", "pattern": pattern}
        values = [generate(schema, rng) for _ in range(20)]
        assert all(fits(schema, v) for v in values), (pattern, values)
    # the same seed, the same value: a negated class too, whatever the hash seed
    assert from_pattern(r"^[^/]{8}$", random.Random(3)) == from_pattern(
        r"^[^/]{8}$", random.Random(3)
    )
    assert fresh_id({"type": "integer", "minimum": 5, "maximum": 5}, random.Random(0)) == 5
    assert fits({"type": "string", "format": "uuid"}, fresh_id({"format": "uuid"}, rng))
    # an example that breaks its own schema is not used
    broken = {"type": "string", "pattern": "^x[0-9]$", "example": "nope"}
    assert re.match("^x[0-9]$", generate(broken, rng))


# -- one record, every answer that shows it --------------------------------------------


def _member(**fields: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["id", *fields],
        "properties": {"id": {"type": "string"}, **fields},
    }


#: what each answer says a member's fields are: the create answer narrower than the
#: detail (an enum, a const, a format, a pattern, a minimum), the list's items narrower
#: in other ways (a maximum, a maxLength), one field no two answers agree on
MEMBER_VIEWS: dict[str, dict[str, Any]] = {
    "detail": _member(
        role={"type": "string", "enum": ["owner", "member", "none"]},
        object={"type": "string"},
        joined={"type": "string"},
        code={"type": "string"},
        seats={"type": "integer", "minimum": 1, "maximum": 1000},
        nickname={"type": "string", "minLength": 1},
        tier={"type": "string", "enum": ["gold"]},
    ),
    "create": _member(
        role={"type": "string", "enum": ["member", "none"]},
        object={"const": "project.member"},
        joined={"type": "string", "format": "date-time"},
        code={"type": "string", "pattern": "^M-[0-9]{4}$"},
        seats={"type": "integer", "minimum": 500},
        tier={"type": "string", "enum": ["silver"]},
    ),
    "item": _member(
        role={"type": "string", "enum": ["owner", "member", "none"]},
        seats={"type": "integer", "maximum": 600},
        nickname={"type": "string", "maxLength": 3},
    ),
}


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


MEMBERS: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Members", "version": "1"},
    "paths": {
        "/members": {
            "get": {
                "operationId": "listMembers",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}}
                ],
                "responses": {
                    "200": _json(
                        "members",
                        {
                            "type": "object",
                            "required": ["data"],
                            "properties": {
                                "data": {"type": "array", "items": MEMBER_VIEWS["item"]}
                            },
                        },
                    )
                },
            },
            "post": {
                "operationId": "createMember",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {"name": {"type": "string"}},
                            }
                        }
                    },
                },
                "responses": {"201": _json("the new member", MEMBER_VIEWS["create"])},
            },
        },
        "/members/{member_id}": {
            "parameters": [
                {"name": "member_id", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "get": {
                "operationId": "getMember",
                "responses": {"200": _json("a member", MEMBER_VIEWS["detail"])},
            },
        },
    },
}


def _valid(view: str, value: Any) -> bool:
    return fits(MEMBER_VIEWS[view], value)


@pytest.mark.parametrize("seed", range(4))
def test_every_answer_shows_the_one_value_the_record_holds(seed: int) -> None:
    """Where the create answer allows less than the detail (role in [member, none] where
    the detail allows owner too; a const, a format, a pattern, a minimum) the record
    holds a value both allow, and both show it; the list's narrower items likewise."""
    catalog = ApiCatalog.from_obj(MEMBERS, source="members")
    with Sandbox(catalog, seed=seed) as sandbox:
        api = sandbox.url
        for n in range(3):
            r = requests.post(api + "/members", json={"name": f"m{n}"}, timeout=10)
            assert r.status_code == 201
            created = r.json()
            assert _valid("create", created), created
            detail = requests.get(f"{api}/members/{created['id']}", timeout=10).json()
            assert _valid("detail", detail), detail
            # every field but the one the two answers allow no common value for
            shared = set(created) & set(detail) - {"tier"}
            assert {k: created[k] for k in shared} == {k: detail[k] for k in shared}
            assert shared >= {"id", "role", "object", "joined", "code", "seats"}
            assert created["role"] in ("member", "none") and 500 <= created["seats"] <= 1000
            # each answer still keeps its own schema where the spec leaves no choice
            assert (created["tier"], detail["tier"]) == ("silver", "gold")
        listed = requests.get(api + "/members", params={"limit": 100}, timeout=10).json()["data"]
        assert len(listed) > 3
        for item in listed:
            assert _valid("item", item), item
            detail = requests.get(f"{api}/members/{item['id']}", timeout=10).json()
            assert {k: detail[k] for k in item} == item

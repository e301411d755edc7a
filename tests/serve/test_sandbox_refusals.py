"""What only the server knows (issue 38): the sandbox on 127.0.0.1 refuses a valid
request for a rule a description states or a state error the spec documents, with the
documented status and code (the code alone in terse mode).

Two specs the project wrote, with different words and codes (no list written for one
spec): specs/examples/bookings.yaml (a unique venue name, a quota, a cancel action, a
date that must be in the future) and specs/examples/bookshop.yaml (an order that has
already shipped cannot be cancelled).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from autofeedback import ApiCatalog
from autofeedback.core._model import Operation, Response
from autofeedback.serve._sandbox import DEFAULT_ERROR_CODES, Sandbox
from autofeedback.serve._sandbox_refusals import state_rules

ROOT = Path(__file__).resolve().parents[2]
BOOKINGS = ApiCatalog.from_file(ROOT / "specs" / "examples" / "bookings.yaml")
BOOKSHOP = ApiCatalog.from_file(ROOT / "specs" / "examples" / "bookshop.yaml")


@pytest.fixture()
def terse() -> Iterator[tuple[Sandbox, requests.Session]]:
    with Sandbox(BOOKINGS, terse=True) as sandbox, requests.Session() as session:
        yield sandbox, session


def _booking(sandbox: Sandbox, session: requests.Session) -> str:
    r = session.post(
        sandbox.url + "/bookings", json={"venue_id": 1, "day": "2999-05-01", "seats": 2}
    )
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "confirmed"  # a new resource starts in its first state
    return str(r.json()["id"])


def test_a_name_already_taken_is_the_documented_409(
    terse: tuple[Sandbox, requests.Session],
) -> None:
    sandbox, session = terse
    first = session.post(sandbox.url + "/venues", json={"name": "Hall A"})
    assert first.status_code == 201
    again = session.post(sandbox.url + "/venues", json={"name": "Hall A", "city": "Oslo"})
    assert (again.status_code, again.json()) == (409, {"info_code": 30010})
    other = session.post(sandbox.url + "/venues", json={"name": "Hall B"})
    assert other.status_code == 201
    # the refused create made nothing: the list holds the name once
    names = [v["name"] for v in session.get(sandbox.url + "/venues").json()["venues"]]
    assert names.count("Hall A") == 1


def test_a_quota_is_spent_by_creates_only(terse: tuple[Sandbox, requests.Session]) -> None:
    sandbox, session = terse
    codes = [
        session.post(sandbox.url + "/venues", json={"name": f"Hall {i}"}).status_code
        for i in range(4)
    ]
    assert codes == [201, 201, 201, 429]
    assert session.post(sandbox.url + "/venues", json={"name": "Hall 9"}).json() == {
        "info_code": 30011
    }
    sandbox.reset()  # a fresh session has its quota back
    assert session.post(sandbox.url + "/venues", json={"name": "Hall 9"}).status_code == 201


def test_a_cancelled_booking_refuses_what_its_docs_say(
    terse: tuple[Sandbox, requests.Session],
) -> None:
    sandbox, session = terse
    booking = _booking(sandbox, session)
    url = f"{sandbox.url}/bookings/{booking}"
    assert session.patch(url, json={"seats": 3}).status_code == 200  # confirmed: it may change
    cancelled = session.post(url + "/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"  # the answer shows the state it left
    assert session.get(url).json()["status"] == "cancelled"  # and so does every later read
    assert (session.post(url + "/cancel").status_code, session.post(url + "/cancel").json()) == (
        409,
        {"info_code": 30021},
    )
    assert session.patch(url, json={"seats": 3}).json() == {"info_code": 30022}
    assert session.get(url).status_code == 200  # reading it is never refused


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"venue_id": 1, "day": "May 1st", "seats": 2}, 30020),  # the layout
        ({"venue_id": 1, "day": "2001-05-01", "seats": 2}, 30020),  # in the future
        ({"venue_id": 1, "day": "2999-05-01", "seats": 25}, 30024),  # (1-20)
    ],
)
def test_a_description_rule_gets_the_code_documented_for_it(
    terse: tuple[Sandbox, requests.Session], body: dict[str, object], code: int
) -> None:
    sandbox, session = terse
    r = session.post(sandbox.url + "/bookings", json=body)
    assert (r.status_code, r.json()) == (400, {"info_code": code})


def test_verbose_mode_says_which_part_and_what_the_docs_say() -> None:
    with Sandbox(BOOKINGS) as sandbox, requests.Session() as session:
        r = session.post(
            sandbox.url + "/bookings", json={"venue_id": 1, "day": "May 1st", "seats": 2}
        )
        assert r.status_code == 400
        body = r.json()
        assert body["error"] == "bad_format"
        assert body["errors"][0]["location"] == ["body", "day"]
        assert "Format: YYYY-MM-DD" in body["message"]
        first = session.post(sandbox.url + "/venues", json={"name": "Hall A"})
        assert first.status_code == 201
        again = session.post(sandbox.url + "/venues", json={"name": "Hall A"}).json()
        assert again["error"] == "conflict"
        assert again["errors"][0]["location"] == ["body", "name"]
        assert "already exists" in again["message"]
        assert sandbox.requests_seen[-1].kind == "conflict"


def test_an_order_already_shipped_cannot_be_cancelled() -> None:
    """The bookshop's words ("has already shipped and cannot be cancelled"): the state
    is the one after "already", not the one after "cannot be"."""
    with Sandbox(BOOKSHOP, terse=True) as sandbox, requests.Session() as session:
        rules = sandbox._state._rules["cancelOrder"]
        assert [(r.kind, r.states) for r in rules] == [("state", ("shipped",))]
        placed = session.post(sandbox.url + "/orders", json={"book_id": 7, "quantity": 1})
        assert placed.json()["status"] == "placed"
        shipped = [
            rid
            for store in sandbox._state._stores.values()
            for rid, record in store.records.items()
            if record.get("status") == "shipped"
        ]
        assert shipped, "the seeded orders hold every documented state"
        r = session.delete(f"{sandbox.url}/orders/{shipped[0]}")
        assert (r.status_code, r.json()) == (409, {"info_code": 20031})
        ok = session.delete(f"{sandbox.url}/orders/{placed.json()['id']}")
        assert ok.status_code == 200
        gone = session.delete(f"{sandbox.url}/orders/{placed.json()['id']}")
        assert (gone.status_code, gone.json()) == (404, {"info_code": 40401})  # deleting twice


def test_undocumented_state_errors_have_their_own_rows() -> None:
    assert DEFAULT_ERROR_CODES["conflict"] == (409, 40900)
    assert DEFAULT_ERROR_CODES["invalid_state"] == (409, 40901)
    assert DEFAULT_ERROR_CODES["quota_exceeded"] == (429, 42900)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("a venue with this `name` already exists", "duplicate"),
        ("The name does not need to be unique; a user may have several", None),
        ("the booking is already cancelled", "state"),
        ("the booking cannot be cancelled", None),  # what the operation does, not a state
        ("a session may create at most 3 venues (quota)", "quota"),
        ("The app has exceeded its rate limits.", None),  # no number: nothing to count
        # a status "error" (Box's sign requests): the response's own name is no state
        ("Returns an error when the booking cannot be found", None),
        ("Returns a `conflict` error if a report is being created", None),
        ("the booking is in error and cannot be changed", "state"),
    ],
)
def test_state_errors_are_read_from_the_words_only(text: str, kind: str | None) -> None:
    op = Operation(
        "x", method="POST", path="/things", responses=(Response("409", description=text),)
    )
    rules = state_rules(
        op,
        body_fields={"name": "The name."},
        states={"status": ("confirmed", "cancelled", "error")},
        creates=True,
    )
    assert [r.kind for r in rules] == ([kind] if kind else [])

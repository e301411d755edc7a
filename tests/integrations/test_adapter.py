"""The requests adapter: real requests to the sandbox on 127.0.0.1, checked before sending."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from autofeedback import ApiCatalog, AutoFeedbackError, ConfigurationError, HostNotAllowed
from autofeedback.integrations._adapter import (
    AutoFeedbackWarning,
    GuardAdapter,
    RequestRejected,
    ResponseRejected,
    guard_session,
)
from autofeedback.serve._sandbox import Sandbox

BOOKSHOP = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"


@pytest.fixture
def session(terse_bookshop: Sandbox, bookshop: ApiCatalog) -> Iterator[requests.Session]:
    with requests.Session() as s:
        # what is rejected and why: nothing repaired (the guard's repairs are in
        # tests/decide/test_entry_points.py)
        guard_session(s, bookshop, base_url=terse_bookshop.url, repair="off")
        yield s


def test_a_valid_request_is_sent(session: requests.Session, terse_bookshop: Sandbox) -> None:
    response = session.get(terse_bookshop.url + "/books", params={"query": "dune", "limit": "5"})
    assert response.status_code == 200
    assert response.json()["books"]


def test_an_invalid_request_is_rejected_before_it_is_sent(
    session: requests.Session, terse_bookshop: Sandbox
) -> None:
    seen = len(terse_bookshop.requests_seen)
    with pytest.raises(RequestRejected) as info:
        session.get(terse_bookshop.url + "/books", params={"query": "dune", "limt": "5"})
    assert len(terse_bookshop.requests_seen) == seen
    exc = info.value
    assert isinstance(exc, AutoFeedbackError) and isinstance(exc, requests.RequestException)
    assert exc.request is not None and exc.request.method == "GET"
    [f] = exc.findings
    assert (f.code, f.location, f.suggestion) == ("E3.3", ("query", "limt"), "limit")
    assert exc.feedback.startswith("There is an error in your API request.")
    report = str(exc)
    assert report.splitlines()[0].startswith(f"GET {terse_bookshop.url}/books?query=dune&limt=5")
    assert "(searchBooks)" in report and "suggestion: limit" in report


def test_json_bodies_are_checked(session: requests.Session, terse_bookshop: Sandbox) -> None:
    with pytest.raises(RequestRejected) as info:
        session.post(terse_bookshop.url + "/orders", json={"book_id": "seven", "quantity": 2})
    assert [f.code for f in info.value.findings] == ["E4.1"]
    assert info.value.findings[0].location == ("body", "book_id")
    ok = session.post(terse_bookshop.url + "/orders", json={"book_id": 7, "quantity": 2})
    assert ok.status_code in (200, 201)


def test_path_parameters_are_checked(session: requests.Session, terse_bookshop: Sandbox) -> None:
    with pytest.raises(RequestRejected) as info:
        session.get(terse_bookshop.url + "/books/abc")
    assert info.value.findings[0].code == "E4.1"
    assert session.get(terse_bookshop.url + "/books/7").status_code == 200


def test_an_unknown_path_is_rejected(session: requests.Session, terse_bookshop: Sandbox) -> None:
    with pytest.raises(RequestRejected) as info:
        session.get(terse_bookshop.url + "/bookz", params={"query": "dune"})
    assert info.value.findings[0].code.startswith("E2")


def test_credentials_never_reach_the_report(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    with requests.Session() as s:
        guard_session(s, bookshop, mode="log", base_url=terse_bookshop.url)
        with caplog.at_level(logging.WARNING, logger="autofeedback"):
            response = s.get(
                terse_bookshop.url + "/books",
                params={"query": "dune", "api_key": "s3cr3t-key"},
                headers={"Authorization": "Bearer t0k3n-value"},
            )
    assert response.status_code == 400  # log mode sends it anyway
    [record] = [r for r in caplog.records if r.name == "autofeedback"]
    text = record.getMessage()
    assert "api_key" in text and "[REDACTED]" in text
    assert "s3cr3t-key" not in text and "t0k3n-value" not in text


def test_warn_mode_warns_and_sends(bookshop: ApiCatalog, terse_bookshop: Sandbox) -> None:
    seen = len(terse_bookshop.requests_seen)
    with requests.Session() as s:
        guard_session(s, bookshop, mode="warn", base_url=terse_bookshop.url)
        with pytest.warns(AutoFeedbackWarning, match="E4.2"):
            response = s.get(
                terse_bookshop.url + "/books", params={"query": "dune", "sort": "price"}
            )
    assert response.status_code == 400
    assert len(terse_bookshop.requests_seen) == seen + 1


def test_other_hosts_are_refused_unless_allowed(
    bookshop: ApiCatalog, terse_bookshop: Sandbox
) -> None:
    with requests.Session() as s:
        guard_session(s, bookshop, base_url=terse_bookshop.url)
        with pytest.raises(HostNotAllowed, match=r"example\.invalid"):
            s.get("https://example.invalid/books")
    other = ApiCatalog.from_tools([{"name": "ping", "parameters": {"type": "object"}}])
    with Sandbox(other, host="127.0.0.2") as elsewhere, requests.Session() as s:
        guard_session(s, bookshop, base_url=terse_bookshop.url)
        with pytest.raises(HostNotAllowed):
            s.post(elsewhere.url + "/ping", json={})
        guard_session(s, bookshop, base_url=terse_bookshop.url, allow_hosts=["127.0.0.2"])
        # allowed but not covered by the spec: sent unchecked (the other terse_bookshop objects)
        assert s.post(elsewhere.url + "/ping", json={"anything": 1}).status_code == 400
        assert elsewhere.requests_seen[-1].kind == "unknown_parameter"


def test_guard_session_replaces_more_specific_mounts(
    bookshop: ApiCatalog, terse_bookshop: Sandbox
) -> None:
    with requests.Session() as s:
        s.mount(terse_bookshop.url + "/", requests.adapters.HTTPAdapter())
        adapter = guard_session(s, bookshop, base_url=terse_bookshop.url)
        assert s.get_adapter(terse_bookshop.url + "/books") is adapter
        assert s.get_adapter("https://example.org/") is adapter


def test_mounting_the_adapter_on_one_prefix(bookshop: ApiCatalog, terse_bookshop: Sandbox) -> None:
    with requests.Session() as s:
        s.mount(terse_bookshop.url + "/", GuardAdapter(bookshop, base_url=terse_bookshop.url))
        with pytest.raises(RequestRejected):
            s.get(terse_bookshop.url + "/books", params={"query": ""})


def test_error_responses_are_explained_from_the_docs(
    bookshop: ApiCatalog, terse_bookshop: Sandbox
) -> None:
    # a form body passes the parameter checks, but the bookshop wants JSON: the terse
    # sandbox answers with a bare info_code that only the docs explain (real model, FAISS)
    with requests.Session() as s:
        guard_session(s, bookshop, base_url=terse_bookshop.url, check_responses=True)
        with pytest.raises(ResponseRejected) as info:
            s.post(terse_bookshop.url + "/orders", data={"book_id": "7", "quantity": "2"})
    exc = info.value
    assert isinstance(exc, requests.HTTPError)
    assert exc.response is not None and exc.response.status_code == 400
    assert exc.explanation is not None
    assert exc.explanation.query.startswith("400 Bad Request info_code")
    assert "info_code 200" in exc.explanation.text
    assert str(exc).startswith(f"POST {terse_bookshop.url}/orders (createOrder) answered 400")


def test_misconfiguration_is_a_clear_error(bookshop: ApiCatalog) -> None:
    with pytest.raises(ConfigurationError, match="mode"):
        GuardAdapter(bookshop, mode="explode")  # type: ignore[arg-type]
    serverless = ApiCatalog(bookshop.operations)
    with pytest.raises(ConfigurationError, match="base_url"):
        GuardAdapter(serverless)
    with pytest.raises(ConfigurationError, match="absolute URL"):
        GuardAdapter(serverless, base_url="/api")


def test_a_state_error_is_explained_with_its_part_and_the_call_to_make_first() -> None:
    """Issue 38: what only the server knows (a booking already cancelled) comes back with
    its documented cause, the id it concerns and the read to make first."""
    bookings = ApiCatalog.from_file(
        Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookings.yaml"
    )
    with Sandbox(bookings, terse=True) as sandbox, requests.Session() as s:
        guard_session(s, bookings, base_url=sandbox.url, check_responses=True)
        made = s.post(
            sandbox.url + "/bookings", json={"venue_id": 1, "day": "2999-05-01", "seats": 2}
        )
        booking = made.json()["id"]
        s.post(f"{sandbox.url}/bookings/{booking}/cancel")
        with pytest.raises(ResponseRejected) as info:
            s.post(f"{sandbox.url}/bookings/{booking}/cancel")
    report = str(info.value)
    assert "409: info_code 30021: the booking is already cancelled" in report
    assert f'It concerns: path.bookingId = "{booking}"' in report
    assert f"Next call: getBooking(bookingId='{booking}')" in report

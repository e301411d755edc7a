"""The requests guard fails closed on a body it cannot read (issue 18 item 3): with the
default ``mode="raise"``, a POST to an operation that documents a JSON body is sent only
when the guard could read that body and found it right. Real requests, real sandbox."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from autofeedback import ApiCatalog
from autofeedback.integrations._adapter import RequestRejected, guard_session
from autofeedback.serve._sandbox import Sandbox

BAD = {"book_id": "seven", "quantity": 2}  # book_id must be an integer
GOOD = {"book_id": 7, "quantity": 2}


@pytest.fixture
def session(terse_bookshop: Sandbox, bookshop: ApiCatalog) -> Iterator[requests.Session]:
    with requests.Session() as s:
        guard_session(s, bookshop, base_url=terse_bookshop.url)
        yield s


def _json(body: Any) -> bytes:
    return json.dumps(body).encode()


# each: (requests.post keyword arguments for a body, the findings' codes)
CASES: dict[str, tuple[Callable[[Any], dict[str, Any]], list[str]]] = {
    "no-content-type": (lambda b: {"data": json.dumps(b)}, ["E4.1", "E4.1"]),
    "text/plain": (
        lambda b: {"data": _json(b), "headers": {"Content-Type": "text/plain"}},
        ["E4.1", "E4.1"],
    ),
    "utf-16": (
        lambda b: {
            "data": json.dumps(b).encode("utf-16"),
            "headers": {"Content-Type": "application/json"},
        },
        ["E4.1"],
    ),
    "utf-16-charset": (
        lambda b: {
            "data": json.dumps(b).encode("utf-16-le"),
            "headers": {"Content-Type": "application/json; charset=utf-16-le"},
        },
        ["E4.1"],
    ),
    "gzip": (
        lambda b: {
            "data": gzip.compress(_json(b)),
            "headers": {"Content-Type": "application/json", "Content-Encoding": "gzip"},
        },
        ["E4.1"],
    ),
    "deflate": (
        lambda b: {
            "data": zlib.compress(_json(b)),
            "headers": {"Content-Type": "application/json", "Content-Encoding": "deflate"},
        },
        ["E4.1"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_body_in_another_form_is_read_and_checked(
    session: requests.Session, terse_bookshop: Sandbox, case: str
) -> None:
    kwargs, codes = CASES[case]
    seen = len(terse_bookshop.requests_seen)
    with pytest.raises(RequestRejected) as info:
        session.post(terse_bookshop.url + "/orders", **kwargs(BAD))
    assert len(terse_bookshop.requests_seen) == seen  # nothing was sent
    assert sorted(f.code for f in info.value.findings) == codes
    assert ("body", "book_id") in [f.location for f in info.value.findings]


@pytest.mark.parametrize("case", ["utf-16", "utf-16-charset", "no-content-type"])
def test_a_right_body_in_another_form_passes(bookshop: ApiCatalog, case: str) -> None:
    kwargs, _ = CASES[case]
    # a sandbox of its own: what it saw is this test's request and nothing else's
    with Sandbox(bookshop, terse=True) as own, requests.Session() as s:
        guard_session(s, bookshop, base_url=own.url)
        # reaches the server (which may or may not read it): the guard found nothing wrong
        s.post(own.url + "/orders", **kwargs(GOOD))
        assert [(r.method, r.path) for r in own.requests_seen] == [("POST", "/orders")]


def _generator() -> Iterator[bytes]:
    yield _json(BAD)


UNREADABLE: dict[str, tuple[dict[str, Any], str]] = {
    "truncated": (
        {"data": _json(BAD)[:-3], "headers": {"Content-Type": "application/json"}},
        "not valid JSON",
    ),
    "generator": (
        {"data": _generator(), "headers": {"Content-Type": "application/json"}},
        "it is a stream",
    ),
    "file": (
        {"data": io.BytesIO(_json(BAD)), "headers": {"Content-Type": "application/json"}},
        "it is a stream",
    ),
    "too-big": (
        {
            "data": _json({**BAD, "note": "x" * (3 * 2**20)}),
            "headers": {"Content-Type": "application/json"},
        },
        "larger than",
    ),
    "gzip-bomb": (
        {
            "data": gzip.compress(b" " * (8 * 2**20) + _json(BAD)),
            "headers": {"Content-Type": "application/json", "Content-Encoding": "gzip"},
        },
        "inflates to more than",
    ),
    "brotli": (
        {
            "data": b"\x8b\x03\x80{}\x03",
            "headers": {"Content-Type": "application/json", "Content-Encoding": "br"},
        },
        "is not read by the guard",
    ),
    "bad-charset": (
        {"data": b"\xff\xfe{", "headers": {"Content-Type": "application/json; charset=nope"}},
        "is not text in nope",
    ),
    "xml": (
        {"data": b"<order/>", "headers": {"Content-Type": "application/xml"}},
        "sent as 'application/xml'",
    ),
}


@pytest.mark.parametrize("case", list(UNREADABLE))
def test_a_body_the_guard_cannot_read_is_not_sent(
    session: requests.Session, terse_bookshop: Sandbox, case: str
) -> None:
    kwargs, why = UNREADABLE[case]
    seen = len(terse_bookshop.requests_seen)
    with pytest.raises(RequestRejected) as info:
        session.post(terse_bookshop.url + "/orders", **kwargs)
    assert len(terse_bookshop.requests_seen) == seen
    unread = [f for f in info.value.findings if f.location == ("body",)]
    assert [f.code for f in unread] == ["E1"] and why in unread[0].message
    assert unread[0].operation is not None


def test_an_operation_without_a_json_body_still_takes_a_stream(
    session: requests.Session, terse_bookshop: Sandbox
) -> None:
    # GET /books documents no body: an unreadable one is not a reason to stop it
    response = session.get(
        terse_bookshop.url + "/books", params={"query": "dune"}, data=io.BytesIO(b"x")
    )
    assert response.status_code == 200


@pytest.mark.parametrize("base_url", ["http://[::1", "http://127.0.0.1:99999", "/relative"])
def test_a_bad_base_url_is_a_configuration_error(bookshop: ApiCatalog, base_url: str) -> None:
    from autofeedback import ConfigurationError

    with pytest.raises(ConfigurationError, match="base_url must be an absolute URL"):
        guard_session(requests.Session(), bookshop, base_url=base_url)

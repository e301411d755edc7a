"""Parameters documented ``in: cookie``: read from the ``Cookie`` header a request sends
(or ``requests``' ``cookies=``), checked like any other, and sent in that header when a
call in function form is made over HTTP. Before, a cookie was never read: a required one
sent was reported missing, a broken one passed, and the loop put it in the query string."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from _support.http import empty, serve

from autofeedback import ApiCatalog, ApiRequest, Scanner
from autofeedback.loop._send import allowed_hosts, build_http, send

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "shop", "version": "1"},
    "servers": [{"url": "http://127.0.0.1"}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [
                    {
                        "name": "page",
                        "in": "cookie",
                        "required": True,
                        "schema": {"type": "integer", "maximum": 10},
                    },
                    {"name": "theme", "in": "cookie", "schema": {"enum": ["light", "dark"]}},
                    {"name": "size", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


@pytest.fixture(scope="module")
def catalog() -> ApiCatalog:
    return ApiCatalog.from_obj(SPEC, source="shop")


@pytest.fixture(scope="module")
def scanner(catalog: ApiCatalog) -> Scanner:
    return Scanner(catalog, retriever=None)


def findings(scanner: Scanner, request: dict[str, Any]) -> list[tuple[str, tuple[str, ...], str]]:
    return [(f.code, f.location, f.message) for f in scanner.iter_findings(request)]


def get(**extra: Any) -> dict[str, Any]:
    return {"method": "GET", "url": "http://127.0.0.1/items", **extra}


def test_a_required_cookie_that_is_sent_is_not_missing(scanner: Scanner) -> None:
    assert findings(scanner, get(headers={"Cookie": "page=2"})) == []
    assert findings(scanner, get(headers={"cookie": 'theme="dark"; page=2'})) == []
    assert findings(scanner, get(cookies={"page": "2", "theme": "light"})) == []


def test_a_required_cookie_that_is_not_sent_is_missing(scanner: Scanner) -> None:
    assert findings(scanner, get()) == [
        ("E3.4", ("cookie", "page"), "required cookie parameter 'page' is missing")
    ]
    # a cookie without a value is no cookie
    assert [f[0] for f in findings(scanner, get(headers={"Cookie": "page"}))] == ["E3.4"]


def test_cookie_values_are_checked_against_their_schema(scanner: Scanner) -> None:
    got = findings(scanner, get(headers={"Cookie": "page=50; theme=red"}))
    assert got == [
        ("E4.2", ("cookie", "page"), "page: 50 breaks the documented maximum 10"),
        ("E4.2", ("cookie", "theme"), "theme must be one of 'light', 'dark'; got 'red'"),
    ]
    # a Cookie header may carry a session: its values are masked wherever they are shown
    # (one shorter than four characters would mask common words, so it is not)
    assert findings(scanner, get(headers={"Cookie": "page=2; theme=darker"})) == [
        ("E4.2", ("cookie", "theme"), "theme must be one of 'light', 'dark'; got '[REDACTED]'")
    ]
    assert findings(scanner, get(cookies={"page": "two"})) == [
        ("E4.1", ("cookie", "page"), "page must be an integer, got string 'two'")
    ]


def test_a_sites_own_cookies_are_left_alone(scanner: Scanner) -> None:
    # undocumented cookies, one of them named like a query parameter: no finding
    assert findings(scanner, get(headers={"Cookie": "page=2; _ga=GA1.2.3; size=9"})) == []


def test_a_cookie_parameter_sent_in_the_query_is_misplaced(scanner: Scanner) -> None:
    assert findings(scanner, get(url="http://127.0.0.1/items?page=2")) == [
        ("E3", ("query", "page"), "parameter 'page' belongs in the cookie, not the query")
    ]


def test_cookies_join_a_cookie_header_written_beside_them() -> None:
    from autofeedback.parsing import request_from_http

    request = request_from_http(
        {"method": "GET", "url": "/items", "headers": {"cookie": "a=1"}, "cookies": {"page": 2}}
    )
    assert dict(request.headers) == {"cookie": "a=1; page=2"}
    with pytest.raises(ValueError, match="'cookies' must be an object, got a list"):
        request_from_http({"method": "GET", "url": "/items", "cookies": ["page=2"]})


def test_a_call_sends_its_cookie_parameters_in_the_cookie_header(catalog: ApiCatalog) -> None:
    cookies: list[str | None] = []

    def answer(handler: BaseHTTPRequestHandler) -> None:
        cookies.append(handler.headers.get("Cookie"))
        empty(200)(handler)

    with serve(answer) as (url, paths):
        call = ApiRequest(name="listItems", arguments={"page": 3, "theme": "dark;x y", "size": 2})
        http = build_http(call, catalog.get("listItems"), url, {"Cookie": "sid=1"})
        assert send(http, allowed=allowed_hosts(catalog, url)).status_code == 200
    # never in the query string; what a cookie value cannot hold as written is %-encoded
    assert (paths, cookies) == (["/items?size=2"], ["sid=1; page=3; theme=dark%3Bx%20y"])

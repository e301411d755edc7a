"""The default requirement (the paper's Meet_Requirement): a 2xx answer whose body
matches the documented response schema, judged on real answers of a real HTTP server on
127.0.0.1, with what was wrong kept in ``last_errors``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests

from autofeedback import ApiCatalog
from autofeedback.responses import DocumentedResponse

#: path -> (status, body) the server answers with, whatever the request's prefix
ANSWERS: dict[str, tuple[int, Any]] = {
    "/books/7": (200, {"id": 7, "title": "Dune"}),
    "/books/8": (200, {"id": "eight", "title": "Dune"}),  # id of the wrong type
    "/books/9": (404, {"info_code": 40401}),
    "/books/10": (299, {"id": 10, "title": "Dune"}),
    "/books/11": (200, {"id": 11, "title": "D" * 400}),  # an error message past 300
    "/ping": (200, {"anything": True}),
    "/redirect": (300, {}),
    "/created": (201, {"id": "not a number"}),
    "/made": (200, {"id": "not a number"}),  # a 2xx status the spec does not list
}

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "shop", "version": "1"},
    "paths": {
        "/books/{id}": {
            "get": {
                "operationId": "getBook",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
                "responses": {
                    "200": {
                        "description": "the book",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["id", "title"],
                                    "properties": {
                                        "id": {"type": "integer"},
                                        "title": {"type": "string", "maxLength": 100},
                                    },
                                }
                            }
                        },
                    },
                    "404": {"description": "no such book"},
                },
            }
        },
        "/ping": {"get": {"operationId": "ping", "responses": {"200": {"description": "up"}}}},
        "/redirect": {
            "get": {"operationId": "redirect", "responses": {"300": {"description": "moved"}}}
        },
        "/made": {
            "post": {
                "operationId": "make",
                "responses": {
                    "201": {"description": "made"},
                    "400": {
                        "description": "bad",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                },
            }
        },
        "/created": {
            "post": {
                "operationId": "create",
                "responses": {
                    "201": {"description": "made"},
                    "400": {
                        "description": "bad",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                },
            }
        },
    },
}


class _Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        path = self.path.removeprefix("/XBOX")
        status, value = ANSWERS[path]
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def catalog() -> ApiCatalog:
    return ApiCatalog.from_obj(SPEC)


def _judge(
    catalog: ApiCatalog, base_url: str, operation: str, path: str, method: str = "GET"
) -> tuple[bool, list[str]]:
    ok = DocumentedResponse(catalog, base_url=base_url)
    response = requests.request(method, base_url.rstrip("/") + path, timeout=10)
    op = catalog.get(operation)
    assert op is not None
    return ok(op, response), ok.last_errors


def test_a_documented_answer_meets_the_requirement(catalog: ApiCatalog, origin: str) -> None:
    assert _judge(catalog, origin, "getBook", "/books/7") == (True, [])


def test_a_body_that_does_not_match_its_schema_fails(catalog: ApiCatalog, origin: str) -> None:
    ok, errors = _judge(catalog, origin, "getBook", "/books/8")
    assert not ok
    [error] = errors
    assert error.startswith("InvalidData: InvalidData: Value {'id': 'eight', 'title': 'Dune'}")
    assert "'eight' is not of type 'integer'" in error


def test_what_was_wrong_is_cut_at_300_characters(catalog: ApiCatalog, origin: str) -> None:
    ok, errors = _judge(catalog, origin, "getBook", "/books/11")
    assert not ok and len(errors) == 1 and len(errors[0]) == 300


@pytest.mark.parametrize(
    ("operation", "path", "error"),
    [("getBook", "/books/9", "HTTP 404"), ("redirect", "/redirect", "HTTP 300")],
)
def test_an_answer_other_than_2xx_fails(
    catalog: ApiCatalog, origin: str, operation: str, path: str, error: str
) -> None:
    assert _judge(catalog, origin, operation, path) == (False, [error])


def test_the_last_2xx_status_is_judged_by_its_body(catalog: ApiCatalog, origin: str) -> None:
    # 299 is inside the range: what refuses it is its missing documentation
    expected = ["ResponseNotFound: Unknown response http status: 299"]
    assert _judge(catalog, origin, "getBook", "/books/10") == (False, expected)


@pytest.mark.parametrize(
    ("operation", "path", "method"),
    [
        ("ping", "/ping", "GET"),  # no schema documented at all
        ("create", "/created", "POST"),  # a schema only for an error status
        ("make", "/made", "POST"),  # ...whatever 2xx status answers
    ],
)
def test_an_answer_with_nothing_documented_to_validate_meets_it(
    catalog: ApiCatalog, origin: str, operation: str, path: str, method: str
) -> None:
    assert _judge(catalog, origin, operation, path, method) == (True, [])


def test_the_base_url_is_where_the_answers_come_from(catalog: ApiCatalog, origin: str) -> None:
    # a server below a path: its answers are matched against the spec under that prefix,
    # with only the trailing slash taken off (XBOX keeps its X)
    assert _judge(catalog, origin + "/XBOX/", "getBook", "/books/7") == (True, [])
    assert _judge(catalog, origin + "/XBOX/", "getBook", "/books/8")[0] is False


def test_errors_of_an_earlier_answer_are_not_kept(catalog: ApiCatalog, origin: str) -> None:
    ok = DocumentedResponse(catalog, base_url=origin)
    assert ok.last_errors == []  # nothing judged yet
    op = catalog.get("getBook")
    assert op is not None
    assert not ok(op, requests.get(origin + "/books/9", timeout=10))
    assert ok(op, requests.get(origin + "/books/7", timeout=10))
    assert ok.last_errors == []

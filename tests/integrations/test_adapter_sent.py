"""The requests guard sends exactly what it reports (issue 43 item 6): one decision on a
prepared request gives both the request to send and what is said about it. A real HTTP
server on 127.0.0.1 records the bytes it received; each case compares them with the
request the guard reported sending."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

import pytest
import requests

from autofeedback import ApiCatalog
from autofeedback.integrations._adapter import RequestRejected, guard_session


@dataclass(frozen=True)
class Received:
    method: str
    target: str  # path and query, as on the request line
    content_type: str
    body: bytes


class _Recorder(ThreadingHTTPServer):
    received: list[Received]


class _Handler(BaseHTTPRequestHandler):
    server: _Recorder

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size) if size else b""
        self.server.received.append(
            Received(self.command, self.path, self.headers.get("Content-Type") or "", body)
        )
        payload = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _answer


@pytest.fixture(scope="module")
def recorder() -> Iterator[_Recorder]:
    server = _Recorder(("127.0.0.1", 0), _Handler)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _url(server: _Recorder) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


#: a form-encoded operation (the bookshop's bodies are JSON)
NEWSLETTER = {
    "openapi": "3.0.3",
    "info": {"title": "newsletter", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:1"}],
    "paths": {
        "/subscriptions": {
            "post": {
                "operationId": "subscribe",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {
                                "type": "object",
                                "required": ["email", "frequency"],
                                "properties": {
                                    "email": {"type": "string"},
                                    "frequency": {"type": "integer", "minimum": 1},
                                    "topic": {"type": "string"},
                                },
                                "additionalProperties": False,
                            }
                        }
                    },
                },
                "responses": {"200": {"description": "subscribed"}},
            }
        }
    },
}


def _sent(
    catalog: ApiCatalog,
    server: _Recorder,
    caplog: pytest.LogCaptureFixture,
    method: str,
    path: str,
    **kwargs: Any,
) -> tuple[requests.Response, Received, str]:
    """Send one request through the guard: the response, what the server received, and
    what the guard reported."""
    before = len(server.received)
    with requests.Session() as s:
        guard_session(s, catalog, base_url=_url(server), retriever=None)
        with caplog.at_level(logging.WARNING, logger="autofeedback"):
            caplog.clear()
            response = s.request(method, _url(server) + path, **kwargs)
    [received] = server.received[before:]
    # what requests says it sent is what arrived
    assert response.request.body in (received.body, received.body.decode() or None)
    assert response.request.path_url == received.target
    return response, received, caplog.text


def test_a_json_body_is_sent_with_the_repair_it_reports(
    bookshop: ApiCatalog, recorder: _Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    # the bug of issue 43: reported as repaired, sent as written (the sandbox said 400)
    _, received, said = _sent(
        bookshop, recorder, caplog, "POST", "/orders", json={"book_id": 7, "Quantity": 2}
    )
    assert "was sent with the repairs: E3.2 body.Quantity: 'Quantity' -> 'quantity'" in said
    assert json.loads(received.body) == {"book_id": 7, "quantity": 2}
    assert received.content_type == "application/json"


def test_a_json_value_is_sent_as_the_repair_reports(
    bookshop: ApiCatalog, recorder: _Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    _, received, said = _sent(
        bookshop, recorder, caplog, "POST", "/orders", json={"book_id": "7", "quantity": 2}
    )
    assert "E4.1 body.book_id: '7' -> 7" in said
    assert json.loads(received.body) == {"book_id": 7, "quantity": 2}


def test_a_form_body_is_sent_with_the_repair_it_reports(
    recorder: _Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = ApiCatalog.from_obj(NEWSLETTER)
    _, received, said = _sent(
        catalog,
        recorder,
        caplog,
        "POST",
        "/subscriptions",
        data={"Email": "ann@example.org", "frequency": "7"},
    )
    assert "was sent with the repairs: E3.2 body.Email: 'Email' -> 'email'" in said
    assert received.content_type == "application/x-www-form-urlencoded"
    # the model's own text of each value, under the documented name
    assert parse_qsl(received.body.decode()) == [("email", "ann@example.org"), ("frequency", "7")]


def test_a_query_is_sent_with_the_repair_it_reports(
    bookshop: ApiCatalog, recorder: _Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    _, received, said = _sent(
        bookshop, recorder, caplog, "GET", "/books", params={"query": "dune", "Limit": "5"}
    )
    assert "E3.2 query.Limit: 'Limit' -> 'limit'" in said
    assert received.target == "/books?query=dune&limit=5"
    assert f"GET {_url(recorder)}/books?query=dune&limit=5 was sent with the repairs" in said


def test_a_path_is_sent_with_the_repair_it_reports(
    bookshop: ApiCatalog, recorder: _Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    _, received, said = _sent(bookshop, recorder, caplog, "GET", "/Books", params={"query": "x"})
    assert "'/Books' -> '/books'" in said
    assert received.target == "/books?query=x"


def test_a_request_with_an_error_left_is_not_sent_in_raise_mode(
    bookshop: ApiCatalog, recorder: _Recorder
) -> None:
    before = len(recorder.received)
    with requests.Session() as s:
        guard_session(s, bookshop, base_url=_url(recorder), retriever=None)
        with pytest.raises(RequestRejected) as info:
            # Quantity has a certain repair; book_id "seven" has none
            s.post(_url(recorder) + "/orders", json={"book_id": "seven", "Quantity": 2})
    assert recorder.received[before:] == []
    assert "book_id" in str(info.value)


def test_a_request_with_an_error_left_is_sent_as_written_in_warn_mode(
    bookshop: ApiCatalog, recorder: _Recorder
) -> None:
    """What is reported (the call breaks the docs) is what is sent: the call as written,
    never half repaired behind the report's back."""
    before = len(recorder.received)
    with requests.Session() as s:
        guard_session(s, bookshop, "warn", base_url=_url(recorder), retriever=None)
        with pytest.warns(UserWarning, match="breaks the API docs"):
            s.post(_url(recorder) + "/orders", json={"book_id": "seven", "Quantity": 2})
    [received] = recorder.received[before:]
    assert json.loads(received.body) == {"book_id": "seven", "Quantity": 2}

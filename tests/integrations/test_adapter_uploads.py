"""The requests guard on uploads and cookies, against a real server on 127.0.0.1: a
multipart body (``files=``) is read as its parts and ``cookies=`` as cookie parameters.
Before, a multipart body was not read at all and went out unchecked, and a cookie was
never read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
from _support.http import empty, serve

from autofeedback import ApiCatalog
from autofeedback.integrations._adapter import RequestRejected, guard_session


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 that answers 201 and records each path."""
    with serve(empty(201)) as running:
        yield running


def _spec(url: str) -> dict[str, Any]:
    upload = {
        "type": "object",
        "required": ["file", "name"],
        "properties": {
            "file": {"type": "string", "format": "binary"},
            "name": {"type": "string"},
            "copies": {"type": "integer", "maximum": 3},
        },
    }
    page = {"name": "page", "in": "cookie", "required": True, "schema": {"type": "integer"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "files", "version": "1"},
        "servers": [{"url": url}],
        "paths": {
            "/files": {
                "post": {
                    "operationId": "upload",
                    "requestBody": {
                        "required": True,
                        "content": {"multipart/form-data": {"schema": upload}},
                    },
                    "responses": {"201": {"description": "stored"}},
                }
            },
            "/items": {
                "get": {
                    "operationId": "listItems",
                    "parameters": [page],
                    "responses": {"201": {"description": "ok"}},
                }
            },
        },
    }


@pytest.fixture
def session(server: tuple[str, list[str]]) -> Iterator[requests.Session]:
    url, _ = server
    with requests.Session() as s:
        guard_session(s, ApiCatalog.from_obj(_spec(url)), repair="off", retriever=None)
        yield s


def test_an_upload_is_checked_part_by_part(
    session: requests.Session, server: tuple[str, list[str]]
) -> None:
    url, seen = server
    png = b"\x89PNG\r\n\x1a\n\x00\x00"
    assert session.post(url + "/files", data={"name": "a"}, files={"file": png}).status_code == 201
    with pytest.raises(RequestRejected) as info:
        session.post(url + "/files", data={"name": "a", "copies": "9"}, files={"file": png})
    assert [(f.code, f.location, f.message) for f in info.value.findings] == [
        ("E4.2", ("body", "copies"), "copies: 9 breaks the documented maximum 3")
    ]
    with pytest.raises(RequestRejected) as info:
        session.post(url + "/files", files={"name": (None, "a")})
    assert [(f.code, f.location) for f in info.value.findings] == [("E3.4", ("body", "file"))]
    assert seen == ["/files"]  # only the upload that fits its docs went out


def test_cookies_are_checked(session: requests.Session, server: tuple[str, list[str]]) -> None:
    url, seen = server
    assert session.get(url + "/items", cookies={"page": "2"}).status_code == 201
    with pytest.raises(RequestRejected) as info:
        session.get(url + "/items", cookies={"page": "two"})
    assert [(f.code, f.location) for f in info.value.findings] == [("E4.1", ("cookie", "page"))]
    with pytest.raises(RequestRejected) as info:
        session.get(url + "/items")
    assert [(f.code, f.location) for f in info.value.findings] == [("E3.4", ("cookie", "page"))]
    assert seen == ["/items"]

"""The sandbox answers a form or an upload as the spec documents it: a body documented as
``application/x-www-form-urlencoded`` or ``multipart/form-data`` is read in that form, its
fields typed from their text as a server reads them, and a body sent in another form is
refused naming the documented one. Before, every body had to be JSON: a correct form
post or upload was a 400, and a JSON body to a form endpoint was accepted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from autofeedback import ApiCatalog
from autofeedback.serve._sandbox import Sandbox

UPLOAD = {
    "type": "object",
    "required": ["file", "name"],
    "properties": {
        "file": {"type": "string", "format": "binary"},
        "name": {"type": "string"},
        "copies": {"type": "integer", "maximum": 3},
        "public": {"type": "boolean"},
    },
}
CHARGE = {
    "type": "object",
    "required": ["amount"],
    "properties": {"amount": {"type": "integer", "maximum": 100}, "capture": {"type": "boolean"}},
}
OK = {"application/json": {"schema": {"type": "object", "properties": {"id": {"type": "string"}}}}}


def _post(op_id: str, media: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "post": {
            "operationId": op_id,
            "requestBody": {"required": True, "content": {media: {"schema": schema}}},
            "responses": {"201": {"description": "created", "content": OK}},
        }
    }


SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "forms", "version": "1"},
    "servers": [{"url": "http://127.0.0.1"}],
    "paths": {
        "/files": _post("uploadFile", "multipart/form-data", UPLOAD),
        "/charges": _post("createCharge", "application/x-www-form-urlencoded", CHARGE),
    },
}


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(ApiCatalog.from_obj(SPEC)) as sb:
        yield sb


def _said(r: requests.Response) -> tuple[int, str]:
    return r.status_code, r.json().get("message", "") if r.status_code >= 400 else ""


def test_an_upload_is_read_part_by_part(sandbox: Sandbox) -> None:
    url = sandbox.url + "/files"
    png = ("a.png", b"\x89PNG\r\n\x1a\n\x00")
    fields = {"name": "a", "copies": "2", "public": "true"}
    assert _said(requests.post(url, data=fields, files={"file": png}, timeout=30)) == (201, "")
    r = requests.post(url, data={**fields, "copies": "9"}, files={"file": png}, timeout=30)
    assert _said(r) == (400, "copies: 9 is greater than the maximum of 3")
    r = requests.post(url, json={"name": "a", "file": "x"}, timeout=30)
    assert _said(r) == (400, "the body must be sent as multipart/form-data")


def test_a_form_is_read_field_by_field(sandbox: Sandbox) -> None:
    url = sandbox.url + "/charges"
    assert _said(requests.post(url, data={"amount": "50", "capture": "true"}, timeout=30)) == (
        201,
        "",
    )
    r = requests.post(url, data={"amount": "500"}, timeout=30)
    assert _said(r) == (400, "amount: 500 is greater than the maximum of 100")
    r = requests.post(url, json={"amount": 50}, timeout=30)
    assert _said(r) == (400, "the body must be sent as application/x-www-form-urlencoded")


def test_the_loop_sends_each_body_as_its_endpoint_reads_it(sandbox: Sandbox) -> None:
    """A call in function form and a request written with a form body both reach the
    sandbox in the documented media (they went as JSON: a JSON string for a text body)."""
    from autofeedback import ApiRequest
    from autofeedback.loop._send import allowed_hosts, build_http, send

    catalog = ApiCatalog.from_obj(SPEC)
    allowed = allowed_hosts(catalog, sandbox.url)
    charge = ApiRequest(name="createCharge", arguments={"amount": 50, "capture": True})
    call = build_http(charge, catalog.get("createCharge"), sandbox.url)
    assert send(call, allowed=allowed).status_code == 201
    upload = ApiRequest(name="uploadFile", arguments={"name": "a", "file": "hello", "copies": 2})
    call = build_http(upload, catalog.get("uploadFile"), sandbox.url)
    assert send(call, allowed=allowed).status_code == 201
    written = ApiRequest(
        method="POST",
        url="/charges",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        body="amount=500",
    )
    r = send(build_http(written, catalog.get("createCharge"), sandbox.url), allowed=allowed)
    assert _said(r) == (400, "amount: 500 is greater than the maximum of 100")

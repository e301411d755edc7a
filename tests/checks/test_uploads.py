"""File uploads as users capture them: a ``multipart/form-data`` body (a browser, an
HTTP client's log, ``curl -F``), and the upload server a path or an operation declares
for itself. Before, a correct upload was reported with every required field missing
(the parts were never read), ``curl -F`` became a GET with no body, and a request to an
operation's own server was "not a server of this API"."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner
from autofeedback.core._exceptions import SpecWarning
from autofeedback.loop._send import allowed_hosts

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "files", "version": "1"},
    "servers": [{"url": "https://api.files.example.com/2.0"}],
    "paths": {
        "/files/content": {
            "post": {
                "operationId": "uploadFile",
                "servers": [{"url": "https://upload.files.example.com/api/2.0"}],
                "requestBody": {
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "required": ["attributes", "file"],
                                "properties": {
                                    "attributes": {
                                        "type": "object",
                                        "required": ["name"],
                                        "properties": {
                                            "name": {"type": "string"},
                                            "size": {"type": "integer"},
                                        },
                                    },
                                    "copies": {"type": "integer", "maximum": 3},
                                    "file": {"type": "string", "format": "binary"},
                                },
                            }
                        }
                    },
                },
                "responses": {"201": {"description": "uploaded"}},
            }
        },
        "/files/{id}": {
            "servers": [{"url": "http://[::1"}],
            "get": {
                "operationId": "getFile",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "ok"}},
            },
        },
    },
}

UPLOAD = "https://upload.files.example.com/api/2.0/files/content"


@pytest.fixture(scope="module")
def catalog() -> ApiCatalog:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SpecWarning)
        catalog = ApiCatalog.from_obj(SPEC, source="files")
    # a path's server that cannot be read is the spec's fault, said once, not an error
    assert [str(w.message) for w in caught] == [
        "files: paths./files/{id}.servers[0].url: not a valid URL 'http://[::1' "
        "(Invalid IPv6 URL); it is ignored"
    ]
    return catalog


@pytest.fixture(scope="module")
def scanner(catalog: ApiCatalog) -> Scanner:
    return Scanner(catalog, retriever=None)


def multipart(*parts: tuple[str, str, str | None], boundary: str = "XyZ") -> str:
    out = []
    for name, value, filename in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out.append(f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n{value}\r\n")
    return "".join(out) + f"--{boundary}--\r\n"


def found(scanner: Scanner, request: Any) -> list[tuple[str, tuple[str, ...], str]]:
    return [(f.code, f.location, f.message) for f in scanner.iter_findings(request)]


def upload(body: str, **headers: str) -> dict[str, Any]:
    return {
        "method": "POST",
        "url": UPLOAD,
        "headers": {"Content-Type": "multipart/form-data; boundary=XyZ", **headers},
        "body": body,
    }


def test_a_correct_upload_is_clean(scanner: Scanner) -> None:
    body = multipart(("attributes", '{"name": "a.txt"}', None), ("file", "hello", "a.txt"))
    assert found(scanner, upload(body)) == []
    # line ends as a log may have kept them
    assert found(scanner, upload(body.replace("\r\n", "\n"))) == []


def test_an_uploads_parts_are_checked(scanner: Scanner) -> None:
    body = multipart(("attributes", '{"size": "big"}', None), ("copies", "9", None))
    assert found(scanner, upload(body)) == [
        ("E3.4", ("body", "file"), "required body parameter 'file' is missing"),
        (
            "E4.1",
            ("body", "attributes", "size"),
            "attributes.size must be an integer, got string 'big'",
        ),
        (
            "E4.2",
            ("body", "attributes"),
            "attributes: {'size': 'big'} breaks the documented required ['name']",
        ),
        ("E4.2", ("body", "copies"), "copies: 9 breaks the documented maximum 3"),
    ]


def test_a_part_with_an_empty_name_is_a_field_so_named(scanner: Scanner) -> None:
    # name="" (requests' files={"": ...} writes it) is an unknown field of no name, found
    # as such; it was read as no name at all and the check raised AttributeError
    body = multipart(("attributes", '{"name": "a.txt"}', None), ("file", "hello", "a.txt"))
    body = body.replace('name="file"', 'name=""', 1)
    codes = [(code, where) for code, where, _ in found(scanner, upload(body))]
    assert codes == [("E3", ("body", "")), ("E3.4", ("body", "file"))]


def test_curl_form_fields_are_a_multipart_post(scanner: Scanner) -> None:
    command = f'curl "{UPLOAD}" -F attributes=\'{{"name": "a.txt"}}\' -F file=@/home/me/a.txt'
    assert found(scanner, command) == []
    missing = f'curl {UPLOAD} -F \'attributes={{"name": "a.txt"}}\''
    assert found(scanner, missing) == [
        ("E3.4", ("body", "file"), "required body parameter 'file' is missing")
    ]


def test_an_operations_own_server_is_a_server_of_the_api(
    catalog: ApiCatalog, scanner: Scanner
) -> None:
    assert catalog.servers == (
        "https://api.files.example.com/2.0",
        "https://upload.files.example.com/api/2.0",
    )
    assert (
        found(scanner, {"method": "GET", "url": "https://api.files.example.com/2.0/files/7"}) == []
    )
    [(code, _, message)] = found(
        scanner, {"method": "GET", "url": "https://cdn.files.example.com/2.0/files/7"}
    )
    assert (code, message.split(";")[0]) == (
        "E2",
        "host 'cdn.files.example.com' is not a server of this API",
    )
    allowed = allowed_hosts(catalog, None)
    assert allowed.allows(UPLOAD) and not allowed.allows("https://cdn.files.example.com/x")


def test_a_box_upload_as_its_docs_show_it(shared_data_dir: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpecWarning)
        box = Scanner(ApiCatalog.from_file(shared_data_dir / "specs" / "box.json"), retriever=None)
    command = (
        'curl -i -X POST "https://upload.box.com/api/2.0/files/content" '
        '-H "authorization: Bearer <ACCESS_TOKEN>" '
        '-H "content-type: multipart/form-data" '
        '-F attributes=\'{"name":"Contract.pdf", "parent":{"id":"11446498"}}\' '
        "-F file=@<FILE_NAME>"
    )
    assert found(box, command) == []

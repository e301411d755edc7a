"""Schema references beyond JSON pointers: ``$id`` base URIs, anchors, the bundled
meta-schemas, and remote documents read only from the origins the user allows (a real
HTTP server on 127.0.0.1 counts what is asked of it)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, RemoteRefs, Scanner, SpecWarning

_INTEGER = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "integer"}


class _Server:
    """Serves ``/integer.json``; ``/moved.json`` redirects to ``redirect_to``."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.redirect_to = ""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.seen.append(self.path)
                if self.path == "/moved.json":
                    self.send_response(302)
                    self.send_header("Location", owner.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps(_INTEGER).encode()
                self.send_response(200 if self.path == "/integer.json" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_port}"

    def __enter__(self) -> _Server:
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server() -> Iterator[_Server]:
    with _Server() as running:
        yield running


def _tool(value: Any) -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"value": value}, "required": ["value"]}
    return [{"name": "put", "parameters": schema}]


def _errors(catalog: ApiCatalog, value: Any) -> list[str]:
    scanner = Scanner(catalog, retriever=None)
    call = {"name": "put", "arguments": {"value": value}}
    return [str(f) for f in scanner.iter_findings(call) if f.severity == "error"]


def test_a_remote_ref_is_not_fetched_by_default(server: _Server) -> None:
    with pytest.warns(SpecWarning) as caught:
        catalog = ApiCatalog.from_tools(_tool({"$ref": f"{server.origin}/integer.json"}))
    assert server.seen == []
    (op,) = catalog.operations
    assert op.parameters[0].schema == {"x-unresolved-ref": f"{server.origin}/integer.json"}
    assert op.unread == ("[0].parameters.properties.value.$ref",)
    assert [str(w.message) for w in caught] == [
        f"<tools>: [0].parameters.properties.value.$ref: remote $ref "
        f"'{server.origin}/integer.json' not read: no origin is allowed for remote "
        "references (allow one with remote_refs=RemoteRefs(allow=[...])); that schema is "
        "not checked"
    ]


def test_an_allowed_origin_is_read_once_and_its_schema_checked(server: _Server) -> None:
    ref = {"$ref": f"{server.origin}/integer.json"}
    catalog = ApiCatalog.from_tools(
        _tool({"anyOf": [ref, ref]}), remote_refs=RemoteRefs(allow=[server.origin])
    )
    assert server.seen == ["/integer.json"]
    assert _errors(catalog, 3) == []
    assert _errors(catalog, "three") != []


def test_an_origin_not_allowed_is_never_asked(server: _Server) -> None:
    refs = RemoteRefs(allow=["api.example.com", "127.0.0.1:1"])
    with pytest.warns(SpecWarning, match="that origin is not allowed") as caught:
        ApiCatalog.from_tools(_tool({"$ref": f"{server.origin}/integer.json"}), remote_refs=refs)
    assert server.seen == []
    assert server.origin.split("//")[1] in str(caught[0].message)


def test_a_redirect_is_not_followed(server: _Server) -> None:
    with _Server() as elsewhere:
        server.redirect_to = f"{elsewhere.origin}/integer.json"
        refs = RemoteRefs(allow=[server.origin, elsewhere.origin])
        with pytest.warns(SpecWarning, match="not read: HTTP 302"):
            ApiCatalog.from_tools(_tool({"$ref": f"{server.origin}/moved.json"}), remote_refs=refs)
        assert elsewhere.seen == []
    assert server.seen == ["/moved.json"]


def test_a_mirror_serves_an_address_and_only_the_mirror_is_asked(server: _Server) -> None:
    refs = RemoteRefs(mirrors={"https://schemas.example.com/v1/": f"{server.origin}/"})
    catalog = ApiCatalog.from_tools(
        _tool({"$ref": "https://schemas.example.com/v1/integer.json"}), remote_refs=refs
    )
    assert server.seen == ["/integer.json"]
    assert _errors(catalog, "three") != []


def test_a_meta_schema_ref_is_read_offline() -> None:
    # the bundled copy: no warning (warnings are errors here), no request
    catalog = ApiCatalog.from_tools(_tool({"$ref": "https://json-schema.org/draft/2020-12/schema"}))
    assert _errors(catalog, {"type": "string", "minLength": 2}) == []
    assert _errors(catalog, {"type": 1}) != []
    assert _errors(catalog, {"minLength": -1}) != []


def test_an_id_moves_the_base_uri_and_an_anchor_names_a_place() -> None:
    value = {
        "$id": "https://example.com/schemas/order.json",
        "properties": {
            "count": {"$ref": "#positive"},
            "item": {"$ref": "item.json"},
        },
        "$defs": {
            "positive": {"$anchor": "positive", "type": "integer", "minimum": 1},
            "item": {"$id": "item.json", "type": "string", "maxLength": 3},
        },
    }
    catalog = ApiCatalog.from_tools(_tool(value))
    assert _errors(catalog, {"count": 2, "item": "abc"}) == []
    assert _errors(catalog, {"count": 0}) != []
    assert _errors(catalog, {"item": "abcd"}) != []


def test_a_draft_7_fragment_id_is_an_anchor() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"value": {"$ref": "#small"}},
        "definitions": {"small": {"$id": "#small", "type": "integer", "maximum": 9}},
    }
    catalog = ApiCatalog.from_tools([{"name": "put", "parameters": schema}])
    assert _errors(catalog, 9) == []
    assert _errors(catalog, 10) != []


def test_a_dynamic_ref_resolves_in_the_dynamic_scope() -> None:
    # a generic list whose items a user schema fixes through $dynamicAnchor
    value = {
        "$id": "https://example.com/strings.json",
        "$ref": "list.json",
        "$defs": {
            "items": {"$dynamicAnchor": "items", "type": "string"},
            "list": {
                "$id": "list.json",
                "type": "array",
                "items": {"$dynamicRef": "#items"},
                "$defs": {"items": {"$dynamicAnchor": "items"}},
            },
        },
    }
    catalog = ApiCatalog.from_tools(_tool(value))
    assert _errors(catalog, ["a", "b"]) == []
    assert _errors(catalog, ["a", 2]) != []


def test_a_credential_in_a_remote_ref_is_never_shown(server: _Server) -> None:
    host = server.origin.split("//")[1]
    ref = f"http://user:hunter2@{host}/missing.json?token=s3cret#/defs/a"
    with pytest.warns(SpecWarning) as caught:
        ApiCatalog.from_tools(_tool({"$ref": ref}), remote_refs=RemoteRefs(allow=[server.origin]))
    assert server.seen == ["/missing.json?token=s3cret"]
    (message,) = [str(w.message) for w in caught]
    assert f"'http://{host}/missing.json' not read: HTTP 404" in message
    assert "hunter2" not in message and "s3cret" not in message


def test_the_environment_allows_origins_for_every_entry_point(
    server: _Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps(_tool({"$ref": f"{server.origin}/integer.json"})))
    monkeypatch.setenv("AUTOFEEDBACK_REF_ORIGINS", f"api.example.com, {server.origin}")
    catalog = ApiCatalog.from_file(spec)
    assert _errors(catalog, "three") != []
    ApiCatalog.from_file(spec)  # not from the on-disk cache: the server is asked again
    assert server.seen == ["/integer.json", "/integer.json"]
    monkeypatch.delenv("AUTOFEEDBACK_REF_ORIGINS")
    with pytest.warns(SpecWarning, match="no origin is allowed"):
        ApiCatalog.from_file(spec)
    assert len(server.seen) == 2


def test_a_relative_ref_inside_an_id_of_a_spec_in_files_reads_the_file_beside_it(
    tmp_path: Path,
) -> None:
    pet = {
        "$id": "https://example.com/schemas/pet.json",
        "type": "object",
        "properties": {"size": {"$ref": "size.json"}},
    }
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "pets", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/pets": {
                "post": {
                    "operationId": "addPet",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/$defs/Pet"}}},
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        "$defs": {"Pet": pet},
    }
    (tmp_path / "size.json").write_text(json.dumps({"type": "integer", "maximum": 9}))
    (tmp_path / "openapi.json").write_text(json.dumps(doc))
    catalog = ApiCatalog.from_file(tmp_path / "openapi.json")
    scanner = Scanner(catalog, retriever=None)
    call = {"method": "POST", "url": "https://api.example.com/pets", "json": {"size": 10}}
    assert [f.code for f in scanner.iter_findings(call) if f.severity == "error"] == ["E4.2"]

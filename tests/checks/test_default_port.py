"""A URL that writes its scheme's default port (``https://api.example.com:443``) is on
the server the spec names without one; before, it was "not a server of this API" (E2),
which clients and captures that write the port drew on every request."""

from __future__ import annotations

from autofeedback import ApiCatalog, Scanner

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "items", "version": "1"},
    "servers": [{"url": "https://api.example.com/v2"}, {"url": "http://127.0.0.1:8080"}],
    "paths": {
        "/items": {"get": {"operationId": "listItems", "responses": {"200": {"description": "ok"}}}}
    },
}


def codes(url: str) -> list[str]:
    scanner = Scanner(ApiCatalog.from_obj(SPEC, source="items"), retriever=None)
    return [f.code for f in scanner.iter_findings({"method": "GET", "url": url})]


def test_a_scheme_s_default_port_is_the_server_without_it() -> None:
    assert codes("https://api.example.com:443/v2/items") == []
    assert codes("https://API.example.com:443/v2/items") == []
    assert codes("http://127.0.0.1:8080/items") == []
    # another port, or the default port of the other scheme, is another server
    assert codes("https://api.example.com:8443/v2/items") == ["E2"]
    assert codes("https://api.example.com:80/v2/items") == ["E2"]

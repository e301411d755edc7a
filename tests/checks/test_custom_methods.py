"""A custom method after a path parameter (``/v1/projects/{project}/jobs/{job}:cancel``,
the style of Google's APIs) is a literal of its template, never the end of a parameter's
value. Before, ``GET /v1/projects/p1/jobs/j1:cancel``, a cancel sent with the wrong
method, matched ``GET /v1/projects/{project}/jobs/{job}`` with ``job = "j1:cancel"`` and
was reported clean."""

from __future__ import annotations

from typing import Any

from autofeedback import ApiCatalog, Scanner


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "jobs", "version": "1"},
    "servers": [{"url": "https://jobs.example.com"}],
    "paths": {
        "/v1/projects/{project}/jobs/{job}:cancel": {
            "post": {
                "operationId": "cancelJob",
                "parameters": [_path("project"), _path("job")],
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/v1/projects/{project}/jobs/{job}": {
            "get": {
                "operationId": "getJob",
                "parameters": [_path("project"), _path("job")],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}


def findings(method: str, path: str) -> list[tuple[Any, ...]]:
    scanner = Scanner(ApiCatalog.from_obj(SPEC, source="jobs"), retriever=None)
    request = {"method": method, "url": f"https://jobs.example.com{path}"}
    return [(f.code, f.location, f.suggestion, f.message) for f in scanner.iter_findings(request)]


def test_a_custom_method_sent_with_the_wrong_method_is_refused() -> None:
    assert findings("GET", "/v1/projects/p1/jobs/j1:cancel") == [
        (
            "E2",
            ("method",),
            "POST",
            "/v1/projects/p1/jobs/j1:cancel does not accept GET; documented methods: POST",
        )
    ]


def test_the_custom_method_and_the_plain_path_are_served_as_documented() -> None:
    assert findings("POST", "/v1/projects/p1/jobs/j1:cancel") == []
    assert findings("GET", "/v1/projects/p1/jobs/j1") == []
    # a colon inside a value that is no documented custom method is the value's
    assert findings("GET", "/v1/projects/p1/jobs/a:b") == []


def test_the_operations_a_path_matches_leave_the_value_ending_in_the_method() -> None:
    catalog = ApiCatalog.from_obj(SPEC, source="jobs")
    matched = catalog.match_path("/v1/projects/p1/jobs/j1:cancel")
    assert [(op.name, params) for op, params in matched] == [
        ("cancelJob", {"project": "p1", "job": "j1"})
    ]

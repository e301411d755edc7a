"""Smaller things a careful maintainer fixes (issue 19, point 9)."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import requests

from autofeedback import ApiCatalog, FeedbackLoop, HostNotAllowed, Sandbox, SpecWarning
from autofeedback.cli import run

ROOT = Path(__file__).resolve().parents[2]
TYPO_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/todos": {
            "get": {
                "operationId": "listTodos",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integr"}},
                    {"name": "done", "in": "query", "schema": {"type": "bool"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def test_an_unknown_schema_type_is_said_once() -> None:
    with pytest.warns(
        SpecWarning, match=r"unknown schema type 'integr' at listTodos query.limit and 1 more"
    ):
        ApiCatalog.from_obj(TYPO_SPEC, source="todo.yaml")


def test_the_cli_says_it_as_one_warning_line(tmp_path: Path) -> None:
    spec = tmp_path / "todo.json"
    spec.write_text(json.dumps(TYPO_SPEC))
    out, err = io.StringIO(), io.StringIO()
    code = run(["scan", "--spec", str(spec), "--no-semantic", "GET /todos?limit=5"], out, err)
    assert code == 0
    assert err.getvalue().count("\n") == 1
    assert err.getvalue().startswith("autofeedback: warning: ") and "'integr'" in err.getvalue()


def test_a_clean_spec_loads_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ApiCatalog.from_file(ROOT / "specs" / "examples" / "bookshop.yaml")


def test_localhost_is_not_127_0_0_1_and_the_error_says_so(terse_bookshop: Sandbox) -> None:
    from autofeedback import guard_session

    session = requests.Session()
    guard_session(
        session,
        ApiCatalog.from_file(ROOT / "specs" / "examples" / "bookshop.yaml"),
        base_url=terse_bookshop.url,
    )
    other = terse_bookshop.url.replace("127.0.0.1", "localhost")
    with pytest.raises(HostNotAllowed) as info:
        session.get(other + "/books", params={"query": "x"})
    assert "localhost and 127.0.0.1 are different origins" in str(info.value)
    assert "allow_hosts=" in str(info.value)


def test_feedback_loop_takes_a_plain_callable(terse_bookshop: Sandbox) -> None:
    def model(messages: list[dict[str, str]]) -> str:
        return "<API>searchBooks(query='dune')</API>"

    catalog = ApiCatalog.from_file(ROOT / "specs" / "examples" / "bookshop.yaml")
    result = FeedbackLoop(model, catalog, base_url=terse_bookshop.url).run("Find books about dune")
    assert result.success and result.status == 200

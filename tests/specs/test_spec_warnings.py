"""A spec fault that loads but means less than its author thinks (issue 19, point 9): an
unknown schema type is warned once, naming every place; the CLI says it as one warning
line; a clean spec loads without a warning."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, SpecWarning
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


def test_a_tools_unknown_type_is_said_as_a_specs_is() -> None:
    # a tool's type names are mapped from Python's and BFCL's (`float`, `dict`, `any`);
    # a name no table knows was dropped without a word, its values unconstrained
    from autofeedback import Scanner

    tools = [
        {
            "name": "set_limit",
            "parameters": {
                "type": "dict",
                "properties": {"limit": {"type": "integr"}, "ratio": {"type": "Float"}},
            },
        }
    ]
    with pytest.warns(
        SpecWarning,
        match=r"unknown schema type 'integr' at set_limit argument.limit; values there are "
        r"not type-checked",
    ):
        catalog = ApiCatalog.from_tools(tools)
    op = catalog.get("set_limit")
    assert op is not None
    assert [p.schema for p in op.parameters] == [{"type": "integr"}, {"type": "number"}]
    scanner = Scanner(catalog, retriever=None)
    call = {"name": "set_limit", "arguments": {"limit": "ten", "ratio": "half"}}
    assert [(f.code, f.location) for f in scanner.iter_findings(call)] == [
        ("E4.1", ("argument", "ratio"))
    ]


def test_every_unknown_type_is_found_in_document_order() -> None:
    from autofeedback.catalog._catalog import unknown_types
    from autofeedback.core._model import Operation, Parameter

    schema = {
        "type": "object",
        "description": "a leaf's siblings are no schemas",
        "properties": {
            "a": {"type": "strng"},
            "b": {"type": "array", "items": {"type": ["integer", "nul"]}},
            "c": {"anyOf": [{"type": "string"}, {"type": "bool"}], "not": {"type": "nmber"}},
            "d": {"additionalProperties": {"properties": {"e": {"type": "dict"}}}},
        },
        "prefixItems": [{"type": "tuple"}],
    }
    op = Operation("putA", parameters=(Parameter("body", "body", schema),))
    assert unknown_types(ApiCatalog([op])) == [
        ("strng", "putA body.body.a"),
        ("nul", "putA body.body.b[]"),
        ("nmber", "putA body.body.c"),
        ("bool", "putA body.body.c"),
        ("dict", "putA body.body.d.e"),
        ("tuple", "putA body.body"),
    ]

"""One endpoint documented as several operations (Box's ``/files/{id}#get_shared_link``
beside ``/files/{id}``): a request is judged against the twin it fits best, the one
with the fewest errors, the router's first on a tie. Twins are compared without the
model's closest-name search (an unknown name is one error either way), so a request
that fits one twin never loads the embedding model for the others; the twin chosen is
checked as any operation is, the model's suggestions included."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from autofeedback import ApiCatalog
from autofeedback.scanner._scan import Scanner

BASE = "https://api.files.test/2.0/files/42"


def _param(name: str, where: str, schema: dict[str, Any], required: bool = False) -> Any:
    return {"name": name, "in": where, "required": required, "schema": schema}


SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Files", "version": "1"},
    "servers": [{"url": "https://api.files.test/2.0"}],
    "paths": {
        "/files/{file_id}": {
            "get": {
                "operationId": "getFile",
                "parameters": [
                    _param("file_id", "path", {"type": "string"}, True),
                    _param("fields", "query", {"type": "string"}),
                    _param("page_size", "query", {"type": "integer"}),
                ],
                "responses": {"200": {"description": "the file"}},
            }
        },
        "/files/{file_id}#get_shared_link": {
            "get": {
                "operationId": "getSharedLink",
                "parameters": [
                    _param("file_id", "path", {"type": "string"}, True),
                    _param("fields", "query", {"type": "string", "enum": ["shared_link"]}, True),
                    _param("link_only", "query", {"type": "boolean"}, True),
                ],
                "responses": {"200": {"description": "the file's shared link"}},
            }
        },
    },
}


@pytest.fixture(scope="module")
def catalog() -> ApiCatalog:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ApiCatalog.from_obj(SPEC, source="<files>")


def _findings(scanner: Scanner, query: str) -> list[tuple[Any, ...]]:
    return [
        (f.code, f.location, f.suggestion, f.operation)
        for f in scanner.iter_findings(f"GET {BASE}?{query}")
    ]


def test_the_spec_has_twins(catalog: ApiCatalog) -> None:
    get_file = catalog.get("getFile")
    assert get_file is not None
    assert [t.name for t in catalog.twins(get_file)] == ["getFile", "getSharedLink"]


def test_a_request_that_fits_the_second_twin_is_clean_without_the_model(
    catalog: ApiCatalog,
) -> None:
    scanner = Scanner(catalog)  # the real embedding model, loaded when first needed
    assert _findings(scanner, "fields=shared_link&link_only=true") == []
    assert scanner._retriever == "auto"  # never loaded: the first twin's unknown name
    # (link_only) was not searched for with the model


def test_the_twin_with_fewer_errors_is_judged(catalog: ApiCatalog) -> None:
    # getFile: `only_link` unknown (1 error); getSharedLink: `only_link` unknown and
    # `link_only` missing (2): getFile, and its finding is the one reported
    assert _findings(Scanner(catalog), "fields=shared_link&only_link=true") == [
        ("E3", ("query", "only_link"), None, "getFile")
    ]


def test_a_tie_goes_to_the_routers_choice(catalog: ApiCatalog) -> None:
    # getFile: `link_only` is getSharedLink's (1 error); getSharedLink: `page_size` is
    # getFile's (1 error): the router's choice, getFile
    assert _findings(Scanner(catalog), "fields=shared_link&link_only=true&page_size=3") == [
        ("E3.1", ("query", "link_only"), None, "getFile")
    ]


@pytest.mark.parametrize(
    ("name", "code", "suggestion"),
    [
        ("per_page", "E3.3", "page_size"),
        ("size", "E3.3", "page_size"),
        ("pageSize", "E3.2", "page_size"),
    ],
)
def test_the_chosen_twin_gets_the_models_suggestion(
    catalog: ApiCatalog, name: str, code: str, suggestion: str
) -> None:
    # both twins have one error or more; getFile has the fewest, and its unknown name is
    # searched with the model as for any operation (per_page -> page_size: E3.3)
    scanner = Scanner(catalog)
    assert _findings(scanner, f"fields=name&{name}=3") == [
        (code, ("query", name), suggestion, "getFile")
    ]

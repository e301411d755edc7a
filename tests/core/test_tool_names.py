"""Tool names that look like another name, or are listed twice, are set aside at catalog
level and never matched to a call (issue 43): the decision feeds such a call back, it
never renames it to the name it looks like, and never a plain name to one of them."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner, SpecWarning
from autofeedback.catalog._tool_names import looks_alike, name_problem, set_aside
from autofeedback.core._model import ApiRequest
from autofeedback.decide import Decider
from autofeedback.flow._tools import documented_tools

PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
CYRILLIC = "re\u0430d_file"  # the "а" is U+0430
HIDDEN = "read\u200b_file"  # a zero-width space


def _tools(*names: str) -> list[dict[str, Any]]:
    return [
        {"name": n, "description": f"tool {i}", "parameters": PATH} for i, n in enumerate(names)
    ]


def _catalog(*names: str) -> tuple[ApiCatalog, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        catalog = ApiCatalog.from_tools(_tools(*names))
    return catalog, [str(w.message) for w in caught if issubclass(w.category, SpecWarning)]


def _decide(catalog: ApiCatalog, name: str) -> Any:
    decider = Decider(Scanner(catalog, retriever=None))
    return decider.decide_request(ApiRequest(name=name, arguments={"path": "/etc/hosts"}))


@pytest.mark.parametrize(
    ("name", "why"),
    [
        (CYRILLIC, "mixes Latin and Cyrillic letters"),
        ("get_\u03bfrders", "mixes Latin and Greek letters"),  # Greek omicron
        (HIDDEN, "U+200B ZERO WIDTH SPACE"),
        ("read_file\u200d", "U+200D ZERO WIDTH JOINER"),
        ("read_file\u00a0", "U+00A0 NO-BREAK SPACE"),
        ("\u202eelif_daer", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("\uff52ead_file", "compatibility normalisation"),  # full-width r
        ("\ufb01le_read", "compatibility normalisation"),  # the fi ligature
    ],
)
def test_names_that_pass_for_another_are_named_with_why(name: str, why: str) -> None:
    problem = name_problem(name)
    assert problem is not None and why in problem


@pytest.mark.parametrize(
    "name",
    ["read_file", "GET /pets", "прочитать_файл", "天気_forecast", "ファイル_read", "naïve_search"],
)
def test_plain_names_of_any_one_script_are_fine(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize("lookalike", [CYRILLIC, HIDDEN])
def test_a_plain_name_is_never_matched_to_a_lookalike(lookalike: str) -> None:
    """Before: the server's look-alike was the call's target (a typo repair, a literal
    variant), and the call went to it."""
    catalog, said = _catalog(lookalike, "list_files")
    assert catalog.names == ("list_files",) and lookalike in catalog.set_aside
    assert said and ascii(lookalike) in said[0] and "never matched" in said[0]
    decision = _decide(catalog, "read_file")
    assert decision.action == "feedback" and not decision.repairs
    assert decision.request.name == "read_file"
    [finding] = decision.errors
    assert finding.code == "E2" and finding.suggestion != lookalike
    assert f"{lookalike!a} is listed too, but never called" in finding.message


def test_a_call_naming_a_lookalike_is_fed_back_never_renamed() -> None:
    catalog, _ = _catalog("read_file", CYRILLIC)
    decision = _decide(catalog, CYRILLIC)
    assert decision.action == "feedback" and not decision.repairs
    [finding] = decision.errors
    assert "is not called" in finding.message and "Cyrillic" in finding.message
    assert _decide(catalog, "read_file").action == "forward"  # the plain one is untouched


def test_a_name_listed_twice_is_reported_and_never_called() -> None:
    """Before: the second ``get_time`` was dropped without a word, and calls went to the
    first."""
    catalog, said = _catalog("get_time", "get_time", "list_files")
    assert catalog.names == ("list_files",)
    assert catalog.set_aside == {"get_time": "is listed 2 times, as different tools"}
    assert said and "'get_time' is listed 2 times" in said[0]
    decision = _decide(catalog, "get_time")
    assert decision.action == "feedback" and "listed 2 times" in decision.errors[0].message
    decision = _decide(catalog, "get_tme")  # nor is a near name repaired to it
    assert decision.action == "feedback" and not decision.repairs


def test_the_same_tool_listed_twice_is_one_tool() -> None:
    """Real tool lists repeat a definition (GraphQL-RestBench does): no ambiguity there."""
    same = {"name": "get_time", "description": "The time.", "parameters": PATH}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        catalog = ApiCatalog.from_tools([same, dict(same)])
    assert catalog.names == ("get_time",) and catalog.set_aside == {}
    assert _decide(catalog, "get_time").action == "forward"


def test_tools_a_response_documents_are_set_aside_alike() -> None:
    found = documented_tools([{"name": CYRILLIC, "parameters": PATH}, *_tools("list_files")])
    assert found is not None and found.names == ("list_files",) and CYRILLIC in found.set_aside


def test_http_operations_keep_their_names() -> None:
    """An OpenAPI operation is called by its method and path: its operationId is no tool
    name, and a spec is not set aside for one."""
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/a": {"get": {"operationId": "same", "responses": {"200": {"description": "ok"}}}},
            "/b": {"get": {"operationId": "same", "responses": {"200": {"description": "ok"}}}},
        },
    }
    catalog = ApiCatalog.from_obj(spec)
    assert catalog.set_aside == {} and catalog.names == ("same",)


def test_set_aside_and_looks_alike() -> None:
    assert set_aside(["a", "b", "a", HIDDEN]) == {
        "a": "is listed 2 times, as different tools",
        HIDDEN: name_problem(HIDDEN),
    }
    assert looks_alike("read_file", CYRILLIC) and looks_alike("read_file", HIDDEN)
    assert not looks_alike("read_file", "list_files")

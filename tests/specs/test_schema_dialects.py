"""The JSON Schema a tool names is the one its values are judged by: older drafts read
in 2020-12 terms, MCP ``inputSchema``, boolean schemas, keywords beside ``$ref``."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner
from autofeedback._specs._dialects import draft_of, upgrade

DRAFT4 = "http://json-schema.org/draft-04/schema#"
DRAFT7 = "http://json-schema.org/draft-07/schema#"


def _tool(schema: Any, draft: str | None = None) -> Scanner:
    root: dict[str, Any] = {"type": "object", "properties": {"v": schema}, "required": ["v"]}
    if draft:
        root["$schema"] = draft
    tool = {"type": "function", "function": {"name": "t", "parameters": root}}
    return Scanner(ApiCatalog.from_tools([tool]), retriever=None)


def _codes(scanner: Scanner, value: Any) -> list[str]:
    found = scanner.iter_findings({"name": "t", "arguments": {"v": value}})
    return [f.code for f in found if f.severity == "error"]


@pytest.mark.parametrize("draft", [DRAFT4, DRAFT7, None])
def test_tuple_items_and_additional_items_are_checked_not_an_e1(draft: str | None) -> None:
    scanner = _tool(
        {"items": [{"type": "integer"}, {"type": "string"}], "additionalItems": False}, draft
    )
    assert _codes(scanner, [1, "a"]) == []
    assert _codes(scanner, [1, 2]) == ["E4.1"]
    assert _codes(scanner, [1, "a", 3]) == ["E4.2"]


def test_draft4_boolean_exclusive_bounds() -> None:
    scanner = _tool({"maximum": 3, "exclusiveMaximum": True}, DRAFT4)
    assert _codes(scanner, 2) == [] and _codes(scanner, 3) == ["E4.2"]
    scanner = _tool({"maximum": 3, "exclusiveMaximum": False}, DRAFT4)
    assert _codes(scanner, 3) == [] and _codes(scanner, 4) == ["E4.2"]


def test_dependencies_become_dependent_required_and_schemas() -> None:
    scanner = _tool({"dependencies": {"a": ["b"], "c": {"required": ["d"]}}}, DRAFT7)
    assert _codes(scanner, {"a": 1, "b": 2}) == []
    assert _codes(scanner, {"a": 1}) == ["E4.2"]
    assert _codes(scanner, {"c": 1}) == ["E4.2"]


def test_up_to_draft7_keywords_beside_ref_are_ignored_and_in_2020_12_they_apply() -> None:
    defs = {"definitions": {"n": {"type": "integer"}}}
    root7 = {
        "type": "object",
        "$schema": DRAFT7,
        "properties": {"v": {"$ref": "#/definitions/n", "maximum": 1}},
        **defs,
    }
    root2020 = {**root7, "$schema": "https://json-schema.org/draft/2020-12/schema"}
    for root, expected in ((root7, []), (root2020, ["E4.2"])):
        tool = {"type": "function", "function": {"name": "t", "parameters": root}}
        scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
        assert _codes(scanner, 5) == expected


def test_keywords_beside_ref_that_clash_with_its_target_both_apply() -> None:
    root = {
        "type": "object",
        "properties": {"v": {"$ref": "#/$defs/short", "maxLength": 5}},
        "$defs": {"short": {"type": "string", "maxLength": 2}},
    }
    tool = {"type": "function", "function": {"name": "t", "parameters": root}}
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    assert _codes(scanner, "ab") == []
    assert _codes(scanner, "abc") == ["E4.2"]  # the target's maxLength 2 still holds
    assert _codes(scanner, 3) == ["E4.1"]


def test_a_false_schema_allows_no_value_and_true_any() -> None:
    root = {"type": "object", "properties": {"no": False, "yes": True}}
    tool = {"type": "function", "function": {"name": "t", "parameters": root}}
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    assert [f.code for f in scanner.iter_findings({"name": "t", "arguments": {"yes": [1]}})] == []
    assert [f.code for f in scanner.iter_findings({"name": "t", "arguments": {"no": 1}})] == [
        "E4.2"
    ]


def test_an_mcp_tool_is_read_from_its_input_schema() -> None:
    tool = {
        "name": "get_weather",
        "description": "Weather for a city",
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    }
    catalog = ApiCatalog.from_tools([tool])
    op = catalog.operations[0]
    assert [(p.name, p.required) for p in op.parameters] == [("city", True), ("days", False)]
    scanner = Scanner(catalog, retriever=None)
    found = scanner.scan({"name": "get_weather", "arguments": {"city": "Oslo", "days": "x"}})
    assert found is not None and found.code == "E4.1"


def test_draft_of_reads_the_schema_uri() -> None:
    assert draft_of({"$schema": DRAFT4}) == 4
    assert draft_of({"$schema": DRAFT7}) == 7
    assert draft_of({}) == 2020
    # a tuple ref keeps pointing at the same schema once items became prefixItems
    assert upgrade({"items": [{"type": "integer"}, {"$ref": "#/items/0"}]}, 4) == {
        "prefixItems": [{"type": "integer"}, {"$ref": "#/prefixItems/0"}]
    }

"""The proxy's checks of the schemas an MCP server lists: each problem providers reject is
reported and repaired without changing what the server accepts."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback.integrations._mcp_gate import ToolGate
from autofeedback.integrations._mcp_schema import check_tool


@pytest.mark.parametrize(
    ("schema", "path", "repaired"),
    [
        ({"properties": {}}, "inputSchema", {"properties": {}, "type": "object"}),
        (["city"], "inputSchema", {"type": "object"}),
        ({"type": "array", "items": {}}, "inputSchema.type", {"type": "object"}),
        (
            {"type": "object", "properties": {"ids": {"type": ["array", "null"]}}},
            "inputSchema.properties.ids",
            {"type": "object", "properties": {"ids": {"type": ["array", "null"], "items": {}}}},
        ),
        (
            {"type": "object", "properties": {"n": {"type": "float"}}},
            "inputSchema.properties.n.type",
            {"type": "object", "properties": {"n": {"type": "number"}}},
        ),
        (
            {"type": "object", "properties": {"n": {"type": "whatever"}}},
            "inputSchema.properties.n.type",
            {"type": "object", "properties": {"n": {}}},
        ),
        (
            {"type": "object", "required": ["q"]},
            "inputSchema.required",
            {"type": "object", "required": ["q"], "properties": {"q": {}}},
        ),
        (
            {"type": "object", "required": "q", "properties": {"q": {"type": "string"}}},
            "inputSchema.required",
            {"type": "object", "properties": {"q": {"type": "string"}}},
        ),
        (
            {"type": "object", "properties": {"mode": {"type": "string", "enum": []}}},
            "inputSchema.properties.mode.enum",
            {"type": "object", "properties": {"mode": {"type": "string"}}},
        ),
        (
            {
                "type": "object",
                "properties": {"rows": {"type": "array", "items": {"type": "array"}}},
            },
            "inputSchema.properties.rows.items",
            {
                "type": "object",
                "properties": {"rows": {"type": "array", "items": {"type": "array", "items": {}}}},
            },
        ),
    ],
)
def test_each_rejected_schema_is_reported_and_repaired(
    schema: Any, path: str, repaired: dict[str, Any]
) -> None:
    tool, issues = check_tool({"name": "t", "inputSchema": schema})
    assert [i.path for i in issues] == [path]
    assert tool["inputSchema"] == repaired


def test_a_sound_schema_is_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["tags"],
        "$defs": {"x": {"type": "integer"}},
    }
    tool, issues = check_tool({"name": "tag", "inputSchema": schema})
    assert issues == [] and tool["inputSchema"] == schema


def test_tool_names_providers_reject_are_reported_not_renamed() -> None:
    tool, issues = check_tool({"name": "weather.get now", "inputSchema": {"type": "object"}})
    assert tool["name"] == "weather.get now"
    assert [i.path for i in issues] == ["name"]


def test_a_tool_without_a_usable_schema_is_forwarded_unchecked() -> None:
    gate = ToolGate(retriever=None, repair="off")
    issues = gate.load(
        [
            {"name": "raw", "inputSchema": "anything"},
            {"name": "ok", "inputSchema": {"type": "object", "properties": {}}},
            {"inputSchema": {}},
        ]
    )
    assert [i.tool for i in issues] == ["raw", "?"]
    assert gate.check("raw", {"whatever": 1}).action == "forward"
    assert gate.check("ok", {"whatever": 1}).action == "invalid_arguments"
    assert [t["name"] for t in gate.tools] == ["raw", "ok"]


def test_the_repeat_stop_counts_per_conversation_and_can_be_off() -> None:
    tools = [{"name": "f", "inputSchema": {"type": "object", "properties": {"a": {}}}}]
    gate = ToolGate(retriever=None, repeat_limit=2, repair="off")
    gate.load(tools)
    assert gate.check("f", {"b": 1}, conversation="s1").action == "invalid_arguments"
    assert gate.check("f", {"b": 1}, conversation="s2").action == "invalid_arguments"
    assert gate.check("f", {"b": 1}, conversation="s1").action == "repeated"
    assert gate.check("f", {"b": 2}, conversation="s1").action == "invalid_arguments"
    off = ToolGate(retriever=None, repeat_limit=0, repair="off")
    off.load(tools)
    assert {off.check("f", {"b": 1}).action for _ in range(5)} == {"invalid_arguments"}

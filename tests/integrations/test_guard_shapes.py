"""check_tool_calls / tool_messages on every provider's tool-call shape, driven by the
provider examples in tests/data/toolcalls/ (OpenAI Chat and Responses, Anthropic,
Gemini, Bedrock Converse)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import check_tool_calls, tool_messages

TOOLCALL_DIR = Path(__file__).parent.parent / "data" / "toolcalls"
SHAPED = [
    (path.stem, case)
    for path in sorted(TOOLCALL_DIR.glob("*.json"))
    for case in json.loads(path.read_text(encoding="utf-8"))
    if "requests" in case and any("shape" in r for r in case["requests"])
]


def _tools(requests: list[dict[str, Any]], extra_required: str | None = None) -> list[Any]:
    """An OpenAI tools list documenting exactly the calls the example makes."""
    tools: dict[str, dict[str, Any]] = {}
    for r in requests:
        props = {k: {} for k in r["arguments"]}
        tools.setdefault(r["name"], {"type": "object", "properties": {}})["properties"].update(
            props
        )
    if extra_required is not None:
        first = tools[requests[0]["name"]]
        first["properties"][extra_required] = {"type": "string"}
        first["required"] = [extra_required]
    return [
        {"type": "function", "function": {"name": name, "parameters": schema}}
        for name, schema in tools.items()
    ]


def test_every_shape_has_examples() -> None:
    shapes = {r["shape"] for _, case in SHAPED for r in case["requests"]}
    assert shapes == {"openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"}


@pytest.mark.parametrize("family,case", SHAPED, ids=[f"{f}: {c['id']}" for f, c in SHAPED])
def test_documented_calls_pass(family: str, case: dict[str, Any]) -> None:
    message = json.loads(case["input"])
    assert check_tool_calls(message, _tools(case["requests"])) == []
    assert tool_messages(message, _tools(case["requests"])) == []


@pytest.mark.parametrize("family,case", SHAPED, ids=[f"{f}: {c['id']}" for f, c in SHAPED])
def test_rejected_call_is_answered_in_its_own_shape(family: str, case: dict[str, Any]) -> None:
    """A missing required parameter (E3.4) on the first call: the reply has the caller's
    shape, the call's id, the flag the provider reads as an error, and feedback that
    speaks of tool calls, never of the <API> text format."""
    message = json.loads(case["input"])
    tools = _tools(case["requests"], extra_required="request_id")
    codes = [f.code for f in check_tool_calls(message, tools)]
    assert codes == ["E3.4"]
    [reply] = tool_messages(message, tools)
    first = case["requests"][0]
    shape, call_id = first["shape"], first["call_id"] or ""
    if shape == "openai-chat":
        assert reply["role"] == "tool" and reply["tool_call_id"] == call_id
        text = reply["content"]
    elif shape == "openai-responses":
        assert reply["type"] == "function_call_output" and reply["call_id"] == call_id
        text = reply["output"]
    elif shape == "anthropic":
        assert reply["type"] == "tool_result" and reply["tool_use_id"] == call_id
        assert reply["is_error"] is True
        text = reply["content"]
    elif shape == "gemini":
        response = reply["functionResponse"]
        assert response["name"] == first["name"]
        assert response.get("id") == first["call_id"]
        text = response["response"]["error"]
    else:
        result = reply["toolResult"]
        assert result["toolUseId"] == call_id and result["status"] == "error"
        [block] = result["content"]
        text = block["text"]
    assert "request_id" in text
    assert "<API>" not in text and "regenerate the API request" not in text
    assert text.startswith("There is an error in your tool call.")
    ok = tool_messages(message, _tools(case["requests"]), include_ok=True)
    assert len(ok) == len(case["requests"])


def test_unreadable_native_arguments_get_tool_call_feedback() -> None:
    """Arguments cut off mid-string: an E1 whose feedback asks for the tool call again in
    the Responses shape, not for <API> text."""
    item = {
        "type": "function_call",
        "call_id": "call_9",
        "name": "get_weather",
        "arguments": '{"location":"Par',
    }
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
            },
        }
    ]
    [reply] = tool_messages([item], tools)
    assert reply["type"] == "function_call_output" and reply["call_id"] == "call_9"
    assert "E1" in reply["output"] and "function_call item" in reply["output"]
    assert "<API>" not in reply["output"]


def test_sdk_response_objects_are_read() -> None:
    """The openai SDK's Responses object (pydantic) is read like its JSON."""
    responses = pytest.importorskip("openai.types.responses")
    call = responses.ResponseFunctionToolCall(
        type="function_call", call_id="call_7", name="get_weather", arguments='{"City": "Paris"}'
    )
    response = responses.Response.model_construct(id="resp_1", object="response", output=[call])
    tools = [
        {
            "type": "function",
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    [reply] = tool_messages(response, tools)
    assert reply["type"] == "function_call_output" and reply["call_id"] == "call_7"
    assert "E3.2" in reply["output"]

"""A model's message as its SDK gives it (pydantic objects: OpenAI's
``ChatCompletionMessage`` and ``Response``, Anthropic's ``Message``) comes back from
:func:`decide_tool_calls` as plain data with the certain repairs written in, the calls'
decisions saying the same. The repairs were made and shown, and the message came back
without them: the chat message's calls are no mappings to write into, and the Responses
one was dumped twice, the second time into other objects than the calls were read from.

The pydantic classes here stand in for an SDK's (outside the product); the last test
uses OpenAI's own where the package is installed."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from autofeedback import decide_tool_calls

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]


class Function(BaseModel):
    name: str
    arguments: str


class ToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: Function


class ChatMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str | None = None
    tool_calls: list[ToolCall] | None = None


class FunctionCall(BaseModel):
    type: Literal["function_call"] = "function_call"
    call_id: str
    name: str
    arguments: str


class Response(BaseModel):
    id: str
    object: Literal["response"] = "response"
    output: list[FunctionCall]


def _chat(name: str, arguments: dict[str, Any]) -> ChatMessage:
    call = ToolCall(id="c1", function=Function(name=name, arguments=json.dumps(arguments)))
    return ChatMessage(tool_calls=[call])


def test_a_chat_sdk_message_comes_back_repaired() -> None:
    decided = decide_tool_calls(_chat("Get_Weather", {"City": "Lima"}), TOOLS, retriever=None)
    assert decided.ok
    assert [(r.before, r.after) for r in decided.repairs] == [
        ("Get_Weather", "get_weather"),
        ("City", "city"),
    ]
    assert decided.message == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'},
            }
        ],
    }


def test_a_responses_sdk_object_comes_back_repaired_as_its_api_writes_it() -> None:
    response = Response(
        id="resp_1",
        output=[FunctionCall(call_id="r1", name="Get_Weather", arguments='{"City": "Lima"}')],
    )
    decided = decide_tool_calls(response, TOOLS, retriever=None)
    assert decided.ok
    assert decided.message == {
        "id": "resp_1",
        "object": "response",
        "output": [
            {
                "type": "function_call",
                "call_id": "r1",
                "name": "get_weather",
                "arguments": '{"city": "Lima"}',
            }
        ],
    }


def test_a_clean_sdk_message_comes_back_as_given() -> None:
    message = _chat("get_weather", {"city": "Lima"})
    decided = decide_tool_calls(message, TOOLS, retriever=None)
    assert decided.ok and not decided.repairs
    assert decided.message is message


def test_a_call_that_goes_back_to_the_model_is_left_as_written() -> None:
    message = _chat("get_weather", {"city": "Lima", "days": "three"})
    decided = decide_tool_calls(message, TOOLS, retriever=None)
    assert not decided.ok
    assert decided.message is message
    assert [c.decision.action for c in decided.calls] == ["feedback"]


def test_openais_own_chat_message_comes_back_repaired() -> None:
    chat = pytest.importorskip("openai.types.chat", reason="the openai package is not installed")
    message = chat.ChatCompletionMessage.model_validate(
        _chat("Get_Weather", {"City": "Lima"}).model_dump()
    )
    decided = decide_tool_calls(message, TOOLS, retriever=None)
    assert decided.ok
    call = decided.message["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == ("get_weather", {"city": "Lima"})

"""A model's message as an SDK object (OpenAI's ``ChatCompletionMessage`` and the like
are pydantic models) is decided as the JSON its API sends: ``model_dump(mode="json",
by_alias=True, exclude_none=True)``, and the repaired message is that JSON with the
repair written in. Here a pydantic model stands for the SDK's: a field whose name differs
from its JSON key (an alias), a time, and a field left ``None``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autofeedback import decide_tool_calls

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


class Function(BaseModel):
    name: str
    arguments: str


class ToolCall(BaseModel):
    id: str
    type: str = "function"
    function: Function


class Message(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    role: str = "assistant"
    content: str | None = None
    calls: list[ToolCall] = Field(alias="tool_calls")
    created: datetime


def message(arguments: dict[str, Any]) -> Message:
    call = ToolCall(id="c1", function=Function(name="get_weather", arguments=json.dumps(arguments)))
    return Message(calls=[call], created=datetime(2026, 11, 28, tzinfo=UTC))


def test_an_sdk_message_is_decided_as_the_json_its_api_sends() -> None:
    decided = decide_tool_calls(message({"City": "Lima"}), TOOLS, retriever=None)
    assert decided.ok and decided.calls[0].arguments == {"city": "Lima"}
    # the JSON keys (the alias), the time as JSON text, no key for what is None
    assert decided.message == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'},
            }
        ],
        "created": "2026-11-28T00:00:00Z",
    }


def test_a_right_sdk_message_is_forwarded_as_it_came() -> None:
    sent = message({"city": "Lima"})
    decided = decide_tool_calls(sent, TOOLS, retriever=None)
    assert decided.ok and not decided.repairs and decided.message is sent


#: a call whose arguments are cut off: no request can be read from it
BROKEN = {
    "role": "assistant",
    "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": '}}
    ],
}  # fmt: skip


def test_an_unreadable_call_in_a_chat_is_answered_not_raised() -> None:
    # decided as the last step of the chat (history given): no request could be read
    history = [{"role": "user", "content": "the weather in Lima?"}]
    decided = decide_tool_calls(BROKEN, TOOLS, retriever=None, history=history)
    assert not decided.ok and decided.calls[0].arguments is None
    assert [f.code for f in decided.calls[0].decision.findings] == ["E1"]


def test_an_unreadable_call_alone_is_answered_with_its_e1() -> None:
    # no history: the call is decided alone, and the finding that says why is kept
    decided = decide_tool_calls(BROKEN, TOOLS, retriever=None)
    [call] = decided.calls
    assert (call.decision.action, call.arguments) == ("feedback", None)
    assert [f.code for f in call.decision.findings] == ["E1"]
    assert call.decision.findings == call.decision.remaining


ACCOUNT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_account",
            "parameters": {
                "type": "object",
                "properties": {"account_id": {"type": "string"}},
                "required": ["account_id"],
            },
        },
    }
]


def test_what_the_model_was_told_apart_grounds_the_next_steps_values() -> None:
    # an id given only in a system prompt kept apart from the messages (Anthropic's
    # `system`, the Responses API's `instructions`) is not made up; without it, it is
    history = [
        {"role": "user", "content": "How is my account?"},
        {"role": "assistant", "tool_calls": [{"id": "c0", "type": "function", "function": {
            "name": "get_account", "arguments": '{"account_id": "acc_7Q2"}'}}]},
        {"role": "tool", "tool_call_id": "c0", "content": "{}"},
    ]  # fmt: skip
    arguments = '{"account_id": "acc_7Q2"}'
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_account", "arguments": arguments},
    }
    message = {"role": "assistant", "tool_calls": [call]}
    told = "You act for account acc_7Q2."
    with_it = decide_tool_calls(
        message, ACCOUNT_TOOLS, retriever=None, history=history, context=told
    )
    without = decide_tool_calls(message, ACCOUNT_TOOLS, retriever=None, history=history)
    assert [f.code for f in with_it.findings] == []
    assert [f.code for f in without.findings] == ["E5.3"]

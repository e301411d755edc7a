"""check_tool_calls with the chat so far: the calls are the last steps of a sequence."""

from __future__ import annotations

import json
from typing import Any

from _support.account_tools import DELETE_ACCOUNT, GET_TOKEN

from autofeedback import check_tool_calls

SEARCHER = {
    "type": "function",
    "function": {
        "name": "ToolSearcher",
        "description": "Search for a tool by keywords",
        "parameters": {"type": "object", "properties": {"keywords": {"type": "string"}}},
    },
}


def call(cid: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def answer(cid: str, body: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": json.dumps(body)}


USER = {"role": "user", "content": "Delete my account; I am ann, password s3cret"}


def test_a_tool_documented_by_a_tool_search_is_no_unknown_api() -> None:
    history = [USER, call("c1", "ToolSearcher", keywords="token"), answer("c1", GET_TOKEN)]
    message = call("c2", "GetUserToken", username="ann", password="s3cret")
    assert check_tool_calls(message, [SEARCHER], history=history) == []
    # without the history, the same call is an unknown API (what a user saw before)
    assert [f.code for f in check_tool_calls(message, [SEARCHER])] == ["E2"]


def test_a_made_up_token_names_its_producer() -> None:
    tools = [SEARCHER, {"type": "function", "function": GET_TOKEN}, DELETE_ACCOUNT]
    message = call("c2", "DeleteAccount", token="your_token_here")
    (f,) = check_tool_calls(message, tools, history=[USER])
    assert f.code == "E5.3" and "call GetUserToken first" in f.message
    assert "your_token_here" not in f.message  # a credential parameter's value is masked
    # the token the earlier response returned is grounded
    history = [
        USER,
        call("c1", "GetUserToken", username="ann", password="s3cret"),
        answer("c1", {"token": "tk-81a9f"}),
    ]
    assert (
        check_tool_calls(call("c2", "DeleteAccount", token="tk-81a9f"), tools, history=history)
        == []
    )
    (bad,) = check_tool_calls(call("c2", "DeleteAccount", token="tk-00000"), tools, history=history)
    assert bad.code == "E5.3" and bad.location == ("argument", "token")


def test_tool_messages_with_the_history_answer_a_made_up_token() -> None:
    from autofeedback import tool_messages

    tools = [SEARCHER, {"type": "function", "function": GET_TOKEN}, DELETE_ACCOUNT]
    history = [
        USER,
        call("c1", "GetUserToken", username="ann", password="s3cret"),
        answer("c1", {"token": "tk-81a9f"}),
    ]
    made_up = call("c2", "DeleteAccount", token="tk-00000")
    [reply] = tool_messages(made_up, tools, history=history)
    assert reply["tool_call_id"] == "c2" and "E5.3" in reply["content"]
    assert tool_messages(made_up, tools) == []  # alone, the call looks fine
    good = call("c3", "DeleteAccount", token="tk-81a9f")
    assert tool_messages(good, tools, history=history, include_ok=True)[0]["content"] == "ok"

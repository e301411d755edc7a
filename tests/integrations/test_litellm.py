"""The LiteLLM proxy's guardrail (AutoFeedbackGuardrail) against the real package: the
hook LiteLLM calls after a chat completion, with litellm's own mock responses as the
scripted model."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest
from _support.agent_frameworks import MADE_UP, MISSPELT, TOOLS

from autofeedback import Policy
from autofeedback.frameworks import AutoFeedbackGuardrail

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch from the internet
litellm = pytest.importorskip(
    "litellm", reason="the litellm extra is not installed: pip install '.[litellm]'"
)

pytestmark = pytest.mark.filterwarnings(
    # litellm's own TypedDicts, schema-built when the first completion is mocked
    "ignore:Item.* on TypedDict class .* qualifier:UserWarning"
)

USER = [{"role": "user", "content": "Weather in Paris, and a flight to Rome"}]


def _tc(call: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    call_id, name, args = call
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


class Scripted:
    """The model behind the gateway (outside the product): litellm's mock responses, one
    scripted turn after another; records the messages it was sent."""

    def __init__(self, *turns: list[tuple[str, str, dict[str, Any]]]) -> None:
        self.turns = list(turns)
        self.seen: list[list[dict[str, Any]]] = []

    async def __call__(self, **data: Any) -> Any:
        self.seen.append(data["messages"])
        calls = [_tc(c) for c in self.turns.pop(0)]
        return await litellm.acompletion(
            model=data["model"], messages=data["messages"], mock_response="", mock_tool_calls=calls
        )


def _hook(guardrail: AutoFeedbackGuardrail, model: Scripted) -> Any:
    data = {"model": "gpt-4o-mini", "messages": list(USER), "tools": TOOLS}

    async def go() -> Any:
        first = await model(**data)
        return await guardrail.async_post_call_success_hook(
            data=data, user_api_key_dict=None, response=first
        )

    return asyncio.run(go())


def test_the_made_up_call_is_fed_back_and_the_client_gets_the_repaired_call() -> None:
    model = Scripted([MISSPELT, MADE_UP], [("c3", "get_weather", {"City": "Paris"})])
    guardrail = AutoFeedbackGuardrail(completion=model, guardrail_name="autofeedback")
    out = _hook(guardrail, model)
    # the client runs what it gets: one call, repaired
    [call] = out.choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "get_weather",
        {"city": "Paris"},
    )
    # the model was asked again with the feedback for the made-up name
    assert len(model.seen) == 2
    replies = {m["tool_call_id"]: m["content"] for m in model.seen[1] if m["role"] == "tool"}
    assert replies["c2"].startswith("There is an error in your tool call.")
    assert "'book_flight'" in replies["c2"]
    assert replies["c1"].startswith("Not run: another tool call in the same message")
    shown = next(m for m in model.seen[1] if m["role"] == "assistant")
    assert json.loads(shown["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}


def test_a_clean_or_repaired_response_is_not_asked_again() -> None:
    model = Scripted([MISSPELT])
    out = _hook(AutoFeedbackGuardrail(completion=model, retriever=None), model)
    assert len(model.seen) == 1
    assert json.loads(out.choices[0].message.tool_calls[0].function.arguments) == {"city": "Paris"}


def test_the_rounds_are_the_policys() -> None:
    model = Scripted([MADE_UP], [("c4", "book_hotel", {})], [("c5", "book_car", {})])
    guardrail = AutoFeedbackGuardrail(completion=model, retriever=None, policy=Policy(max_rounds=1))
    out = _hook(guardrail, model)
    assert len(model.seen) == 2  # one feedback round, then the response as it is
    assert out.choices[0].message.tool_calls[0].function.name == "book_hotel"


def test_the_proxys_words_for_a_call_that_did_not_run() -> None:
    from autofeedback import ApiCatalog, Scanner
    from autofeedback.decide import Decider, Policy, Session
    from autofeedback.decide._calls import decide_calls
    from autofeedback.decide._run import judge_message
    from autofeedback.integrations._door import NOT_RUN_WITH

    tools = [{"name": "f", "parameters": {"type": "object", "properties": {}}}]
    decider = Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))
    message = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}},
        ],
    }
    decided = decide_calls(message, decider)
    raw = [("f", "{}"), ("g", "{}")]
    # the proxy's message goes back whole: the call that was fine is told it did not run
    turn = judge_message(Session(Policy()), decided, raw, whole=True)
    assert turn.feedback[0] == NOT_RUN_WITH

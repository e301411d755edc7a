"""The OpenAI Agents SDK (AutoFeedbackRunHooks) against the real package, with a
scripted model behind the SDK's own Model interface."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from _support.agent_frameworks import ANSWER, MADE_UP, MISSPELT, assert_fed_back

from autofeedback import ToolCallRejected

pytest.importorskip(
    "agents", reason="the openai-agents extra is not installed: pip install '.[openai-agents]'"
)

from agents import Agent, Runner, Usage, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from autofeedback.frameworks import AutoFeedbackRunHooks

ran: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """Weather forecast for a city."""
    ran.append(city)
    return f"{city}: sunny"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


def _call(call: tuple[str, str, dict[str, Any]]) -> ResponseFunctionToolCall:
    call_id, name, args = call
    return ResponseFunctionToolCall(
        id=f"fc_{call_id}",
        call_id=call_id,
        name=name,
        arguments=json.dumps(args),
        type="function_call",
        status="completed",
    )


def _text(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_1",
        role="assistant",
        status="completed",
        type="message",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[])],
    )


class Scripted(Model):
    """The LLM (outside the product): the scripted outputs in turn; records its input."""

    def __init__(self, *turns: list[tuple[str, str, dict[str, Any]]]) -> None:
        self.outputs: list[list[Any]] = [[_call(c) for c in t] for t in turns]
        self.outputs.append([_text(ANSWER)])
        self.seen: list[Any] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.seen.append(kwargs["input"] if "input" in kwargs else args[1])
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def _run(model: Scripted, hooks: AutoFeedbackRunHooks) -> Any:
    agent = Agent(name="weather", model=model, tools=[get_weather])
    return asyncio.run(
        Runner.run(
            hooks.guard(agent),
            "Weather in Paris, and a flight to Rome",
            hooks=hooks,
            run_config=hooks.run_config(tracing_disabled=True),
        )
    )


def test_the_repaired_call_runs_and_the_made_up_one_is_fed_back() -> None:
    model = Scripted([MISSPELT, MADE_UP])
    hooks = AutoFeedbackRunHooks()
    result = _run(model, hooks)
    assert ran == ["Paris"]  # once, with city=Paris
    assert result.final_output == ANSWER  # the run went on
    outputs = {
        i["call_id"]: i["output"] for i in model.seen[-1] if i.get("type") == "function_call_output"
    }
    assert outputs["c1"] == "Paris: sunny"
    assert_fed_back(outputs["c2"])  # where the SDK alone ends the run (ModelBehaviorError)
    [turn] = hooks.turns
    assert turn.action == "feedback" and [r.code for r in turn.repairs] == ["E3.2"]
    # the guardrail's record says what was repaired
    [allowed] = result.tool_input_guardrail_results
    assert allowed.output.output_info["repairs"][0]["before"] == "City"


def test_a_call_with_errors_gets_the_guardrails_feedback() -> None:
    model = Scripted([("c1", "get_weather", {"town": "Paris"})])
    result = _run(model, AutoFeedbackRunHooks(retriever=None))
    assert ran == [] and result.final_output == ANSWER
    [output] = [i["output"] for i in model.seen[-1] if i.get("type") == "function_call_output"]
    assert output.startswith("There is an error in your tool call.") and "'town'" in output


def test_a_misspelt_tool_name_is_fed_back_with_the_call_to_make() -> None:
    # the SDK picks the tool by the name as written, before any hook: told, not run
    model = Scripted([("c1", "getWeather", {"city": "Paris"})])
    result = _run(model, AutoFeedbackRunHooks(retriever=None))
    assert ran == [] and result.final_output == ANSWER
    [output] = [i["output"] for i in model.seen[-1] if i.get("type") == "function_call_output"]
    assert '"name": "get_weather"' in output


def test_a_repeated_rejected_call_ends_the_run() -> None:
    model = Scripted([MADE_UP], [MADE_UP])
    with pytest.raises(ToolCallRejected) as caught:
        _run(model, AutoFeedbackRunHooks(retriever=None))
    assert_fed_back(caught.value.feedback)

"""pydantic-ai (AutoFeedbackCapability) against the real package, with a FunctionModel."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _support.agent_frameworks import ANSWER, MADE_UP, MISSPELT

from autofeedback import Policy, ToolCallRejected

pytest.importorskip(
    "pydantic_ai", reason="the pydantic-ai extra is not installed: pip install '.[pydantic-ai]'"
)

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from autofeedback.frameworks import AutoFeedbackCapability

ran: list[str] = []


def _agent(*turns: list[tuple[str, str, dict[str, Any]]], **options: Any) -> tuple[Agent, list]:
    script = [
        ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=i) for i, name, args in t])
        for t in turns
    ]
    script.append(ModelResponse(parts=[TextPart(ANSWER)]))
    seen: list[Any] = []

    def llm(messages: list[Any], info: AgentInfo) -> ModelResponse:
        # the LLM (outside the product): the scripted responses in turn
        seen.append(messages[-1])
        return script.pop(0)

    agent = Agent(FunctionModel(llm), capabilities=[AutoFeedbackCapability(**options)])

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Weather forecast for a city."""
        ran.append(city)
        return f"{city}: sunny"

    return agent, seen


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


def test_the_repaired_call_runs_and_the_made_up_one_is_answered() -> None:
    agent, seen = _agent([MISSPELT, MADE_UP])
    result = asyncio.run(agent.run("Weather in Paris, and a flight to Rome"))
    assert ran == ["Paris"]  # once, with city=Paris
    assert result.output == ANSWER  # the run went on
    calls = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolCallPart)]
    assert calls[0].args == {"city": "Paris"}  # the history holds the call as it ran
    answers = {p.tool_call_id: p for p in seen[-1].parts}
    assert isinstance(answers["c1"], ToolReturnPart) and answers["c1"].content == "Paris: sunny"
    # a made-up name gets pydantic-ai's own retry prompt, which names the tools
    assert "book_flight" in str(answers["c2"].content)
    assert "get_weather" in str(answers["c2"].content)


def test_a_call_with_errors_gets_the_feedback_as_a_retry() -> None:
    agent, seen = _agent([("c1", "get_weather", {"town": "Paris"})], retriever=None)
    result = asyncio.run(agent.run("Weather in Paris"))
    assert ran == [] and result.output == ANSWER
    [retry] = seen[-1].parts  # the retry prompt answering the call
    assert retry.tool_call_id == "c1"
    assert "There is an error in your tool call." in str(retry.content)
    assert "'town'" in str(retry.content)


def test_a_misspelt_tool_name_is_repaired_before_pydantic_ai_picks_the_tool() -> None:
    agent, _ = _agent([("c1", "getWeather", {"City": "Lyon"})], retriever=None)
    assert asyncio.run(agent.run("Weather in Lyon")).output == ANSWER
    assert ran == ["Lyon"]


def test_the_rounds_run_out() -> None:
    bad = ("c1", "get_weather", {"town": "Paris"})
    other = ("c2", "get_weather", {"twn": "Paris"})
    agent, _ = _agent([bad], [other], retriever=None, policy=Policy(max_rounds=1))
    with pytest.raises(ToolCallRejected):
        asyncio.run(agent.run("Weather in Paris"))
    assert ran == []

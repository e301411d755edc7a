"""LangChain v1 agents (AutoFeedbackMiddleware) and LangGraph ToolNode graphs
(AutoFeedbackToolWrapper) against the real packages, with a scripted chat model."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from _support.agent_frameworks import ANSWER, MADE_UP, MISSPELT, assert_fed_back

from autofeedback import Policy, ToolCallRejected

pytest.importorskip(
    "langchain.agents", reason="the langchain extra is not installed: pip install '.[langchain]'"
)
pytest.importorskip(
    "langgraph.prebuilt", reason="the langgraph extra is not installed: pip install '.[langgraph]'"
)

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field
from typing_extensions import TypedDict

from autofeedback.frameworks import AutoFeedbackMiddleware, AutoFeedbackToolWrapper

ran: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Weather forecast for a city."""
    ran.append(city)
    return f"{city}: sunny"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


class Scripted(FakeMessagesListChatModel):
    """The LLM (outside the product): answers with the scripted messages in turn and
    records what it was sent."""

    seen: list[Any] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def _call(call: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {"id": call[0], "name": call[1], "args": call[2]}


def _model(*turns: list[tuple[str, str, dict[str, Any]]]) -> Scripted:
    responses = [AIMessage("", tool_calls=[_call(c) for c in t]) for t in turns]
    return Scripted(responses=[*responses, AIMessage(ANSWER)])


def test_the_agent_runs_the_repaired_call_and_feeds_back_the_made_up_one() -> None:
    model = _model([MISSPELT, MADE_UP])
    agent = create_agent(model, [get_weather], middleware=[AutoFeedbackMiddleware()])
    out = agent.invoke({"messages": [HumanMessage("Weather in Paris, and a flight to Rome")]})
    assert ran == ["Paris"]  # once, with city=Paris
    messages = out["messages"]
    assert messages[-1].content == ANSWER  # the run went on to the model's answer
    turn = messages[1]
    assert [c["args"] for c in turn.tool_calls] == [{"city": "Paris"}, {"to": "Rome"}]
    assert turn.response_metadata["autofeedback"]["calls"][0]["repairs"][0]["code"] == "E3.2"
    replies = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert replies["c1"].content == "Paris: sunny" and replies["c1"].status == "success"
    assert replies["c2"].status == "error"
    assert_fed_back(str(replies["c2"].content))
    # the model read the feedback before it answered
    assert any(isinstance(m, ToolMessage) and m.tool_call_id == "c2" for m in model.seen[-1])


def test_the_async_agent_does_the_same() -> None:
    agent = create_agent(
        _model([MISSPELT, MADE_UP]),
        [get_weather],
        middleware=[AutoFeedbackMiddleware(retriever=None)],
    )
    out = asyncio.run(agent.ainvoke({"messages": [HumanMessage("Weather in Paris?")]}))
    assert ran == ["Paris"] and out["messages"][-1].content == ANSWER


def test_a_repeated_rejected_call_ends_the_run() -> None:
    model = _model([MADE_UP], [MADE_UP], [MADE_UP])
    agent = create_agent(model, [get_weather], middleware=[AutoFeedbackMiddleware(retriever=None)])
    # answered with feedback once, then the same call again: the run ends there
    with pytest.raises(ToolCallRejected) as caught:
        agent.invoke({"messages": [HumanMessage("A flight to Rome")]})
    assert_fed_back(caught.value.feedback)
    assert len(model.seen) == 2 and ran == []


def test_the_rounds_are_the_policys_and_a_new_question_starts_afresh() -> None:
    bad = [("c9", "get_weather", {"town": "Paris"})]  # not the same word: fed back
    model = _model(bad, [("c8", "get_weather", {"twn": "Paris"})])
    middleware = AutoFeedbackMiddleware(retriever=None, policy=Policy(max_rounds=1))
    agent = create_agent(model, [get_weather], middleware=[middleware])
    with pytest.raises(ToolCallRejected):  # one round, then the run ends
        agent.invoke({"messages": [HumanMessage("Weather in Paris")]})
    assert len(model.seen) == 2
    # a conversation that had its round, then a new question: a round of its own
    earlier = _model(bad)
    first = create_agent(earlier, [get_weather], middleware=[middleware]).invoke(
        {"messages": [HumanMessage("Weather in Paris")]}
    )
    history = first["messages"][:3]  # the question, the rejected call, its feedback
    again = _model([("c7", "get_weather", {"town": "Lyon"})])
    agent = create_agent(again, [get_weather], middleware=[middleware])
    out = agent.invoke({"messages": [*history, HumanMessage("And in Lyon?")]})
    assert out["messages"][-1].content == ANSWER


def test_the_docs_given_are_the_ones_checked() -> None:
    spec = [
        {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "enum": ["Paris", "Lyon"]}},
            },
        }
    ]
    model = _model([("c1", "get_weather", {"city": "Rome"})])
    agent = create_agent(model, [get_weather], middleware=[AutoFeedbackMiddleware(spec)])
    out = agent.invoke({"messages": [HumanMessage("Weather in Rome")]})
    assert ran == []
    assert "E4" in str(out["messages"][2].content)


class State(TypedDict):
    messages: Annotated[list[Any], add_messages]


def _graph(model: Scripted, guard: AutoFeedbackToolWrapper) -> Any:
    def agent(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node(
        "tools", ToolNode([get_weather], wrap_tool_call=guard, awrap_tool_call=guard.awrap)
    )
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile()


def test_a_tool_node_runs_the_repaired_call_and_feeds_back_the_made_up_one() -> None:
    misspelt_name = ("c1", "getWeather", {"City": "Paris"})  # a case and separator variant
    app = _graph(_model([misspelt_name, MADE_UP]), AutoFeedbackToolWrapper())
    out = app.invoke({"messages": [HumanMessage("Weather in Paris, and a flight to Rome")]})
    assert ran == ["Paris"]
    replies = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert replies["c1"].content == "Paris: sunny" and replies["c1"].name == "get_weather"
    assert_fed_back(str(replies["c2"].content))
    assert out["messages"][-1].content == ANSWER


def test_a_tool_node_decides_a_message_once_async_too() -> None:
    guard = AutoFeedbackToolWrapper(retriever=None)
    app = _graph(_model([MISSPELT, MADE_UP]), guard)
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage("Weather in Paris")]}))
    assert ran == ["Paris"] and out["messages"][-1].content == ANSWER
    assert len(guard._turns) == 1  # both calls asked for one decision


def test_a_tool_node_stops_by_raising() -> None:
    app = _graph(_model([MADE_UP], [MADE_UP]), AutoFeedbackToolWrapper(retriever=None))
    with pytest.raises(ToolCallRejected) as caught:
        app.invoke({"messages": [HumanMessage("A flight to Rome")]})
    assert_fed_back(caught.value.feedback)

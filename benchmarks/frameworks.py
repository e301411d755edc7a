"""What does each agent-framework adapter add to a tool call, against the framework alone?

For each framework, a scripted model (the one thing outside the product, so that no
network or model time hides the difference) makes one valid tool call and then answers;
the same run is timed with the adapter and without it, alternating (alone, adapter,
alone, ...) on one warm process so both see the same load. Every run holds exactly one
tool call, so the added time per run is the added time per tool call. The adapters check
spelling and values only here (``retriever=None``): a valid call never loads the
embedding model either way.

* LangChain v1: ``create_agent`` with and without ``AutoFeedbackMiddleware``;
* LangGraph: a ``ToolNode`` graph with and without ``AutoFeedbackToolWrapper``;
* OpenAI Agents SDK: ``Runner.run`` with and without ``AutoFeedbackRunHooks`` (new hooks
  per run, as the docs say);
* pydantic-ai: ``Agent.run`` with and without ``AutoFeedbackCapability``;
* fastmcp: ``call_tool`` through the in-memory client, server with and without
  ``AutoFeedbackMCPMiddleware``;
* LiteLLM: ``litellm.acompletion`` (mocked) alone, and followed by the guardrail's
  ``async_post_call_success_hook``, as the LiteLLM proxy runs it.

A framework whose extra is not installed is a row saying so.

    python benchmarks/frameworks.py              # 300 runs per framework and side
    python benchmarks/frameworks.py -n 50 --no-write
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch from the internet

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._results import write_section  # noqa: E402

ANSWER = "Paris is sunny."
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}

Run = Callable[[], Awaitable[Any]]


def _weather(city: str) -> str:
    """Weather forecast for a city."""
    return f"{city}: sunny"


def langchain_pair() -> tuple[Run, Run]:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    from autofeedback.frameworks import AutoFeedbackMiddleware

    class Scripted(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
            return self

    def model() -> Scripted:
        call = {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}
        return Scripted(responses=[AIMessage("", tool_calls=[call]), AIMessage(ANSWER)])

    get_weather = tool(_weather, description="Weather forecast for a city.")
    get_weather.name = "get_weather"
    # each agent built once, as an application does; its scripted model starts over per run
    plain_model, guarded_model = model(), model()
    plain = create_agent(plain_model, [get_weather])
    checked = create_agent(
        guarded_model, [get_weather], middleware=[AutoFeedbackMiddleware(retriever=None)]
    )
    question = {"messages": [HumanMessage("Weather in Paris?")]}

    async def alone() -> Any:
        plain_model.i = 0
        return await plain.ainvoke(question)

    async def guarded() -> Any:
        guarded_model.i = 0
        return await checked.ainvoke(question)

    return alone, guarded


def langgraph_pair() -> tuple[Run, Run]:
    from typing import Annotated

    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.prebuilt import ToolNode, tools_condition
    from typing_extensions import TypedDict

    from autofeedback.frameworks import AutoFeedbackToolWrapper

    # the functional form: the annotations are objects, not text to evaluate
    State = TypedDict("State", {"messages": Annotated[list[Any], add_messages]})  # noqa: UP013

    get_weather = tool(_weather, description="Weather forecast for a city.")
    get_weather.name = "get_weather"

    def graph(node: Any, holder: list[Any]) -> Any:
        def agent(state: dict[str, Any]) -> dict[str, Any]:
            return {"messages": [holder[0].invoke(state["messages"])]}

        g = StateGraph(State)
        g.add_node("agent", agent)
        g.add_node("tools", node)
        g.add_edge(START, "agent")
        g.add_conditional_edges("agent", tools_condition, ["tools", END])
        g.add_edge("tools", "agent")
        return g.compile()

    def model() -> Any:
        call = {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}
        return FakeMessagesListChatModel(
            responses=[AIMessage("", tool_calls=[call]), AIMessage(ANSWER)]
        )

    wrapper = AutoFeedbackToolWrapper(retriever=None)
    plain_model: list[Any] = [None]
    guarded_model: list[Any] = [None]
    plain = graph(ToolNode([get_weather]), plain_model)
    checked = graph(
        ToolNode([get_weather], wrap_tool_call=wrapper, awrap_tool_call=wrapper.awrap),
        guarded_model,
    )
    question = {"messages": [HumanMessage("Weather in Paris?")]}

    async def alone() -> Any:
        plain_model[0] = model()
        return await plain.ainvoke(question)

    async def guarded() -> Any:
        guarded_model[0] = model()
        return await checked.ainvoke(question)

    return alone, guarded


def openai_agents_pair() -> tuple[Run, Run]:
    from agents import Agent, RunConfig, Runner, Usage, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from autofeedback.frameworks import AutoFeedbackRunHooks

    class Scripted(Model):
        def __init__(self) -> None:
            call = ResponseFunctionToolCall(
                call_id="c1",
                name="get_weather",
                arguments='{"city": "Paris"}',
                type="function_call",
            )
            text = ResponseOutputMessage(
                id="m1",
                role="assistant",
                status="completed",
                type="message",
                content=[ResponseOutputText(text=ANSWER, type="output_text", annotations=[])],
            )
            self.outputs: list[list[Any]] = [[call], [text]]

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    get_weather = function_tool(_weather, name_override="get_weather")

    async def alone() -> Any:
        agent = Agent(name="w", model=Scripted(), tools=[get_weather])
        return await Runner.run(agent, "Weather?", run_config=RunConfig(tracing_disabled=True))

    async def guarded() -> Any:
        hooks = AutoFeedbackRunHooks(retriever=None)
        agent = hooks.guard(Agent(name="w", model=Scripted(), tools=[get_weather]))
        config = hooks.run_config(tracing_disabled=True)
        return await Runner.run(agent, "Weather?", hooks=hooks, run_config=config)

    return alone, guarded


def pydantic_ai_pair() -> tuple[Run, Run]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from autofeedback.frameworks import AutoFeedbackCapability

    def llm(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="c1")]
            )
        return ModelResponse(parts=[TextPart(ANSWER)])

    plain = Agent(FunctionModel(llm), tools=[_weather_tool()])
    checked = Agent(
        FunctionModel(llm),
        tools=[_weather_tool()],
        capabilities=[AutoFeedbackCapability(retriever=None)],
    )

    async def alone() -> Any:
        return await plain.run("Weather in Paris?")

    async def guarded() -> Any:
        return await checked.run("Weather in Paris?")

    return alone, guarded


def _weather_tool() -> Any:
    from pydantic_ai import Tool

    return Tool(_weather, name="get_weather", takes_ctx=False)


def fastmcp_pair() -> tuple[Run, Run]:
    from fastmcp import Client, FastMCP

    from autofeedback.frameworks import AutoFeedbackMCPMiddleware

    def server(guarded: bool) -> Any:
        mcp = FastMCP("weather")
        mcp.tool(_weather, name="get_weather")
        if guarded:
            mcp.add_middleware(AutoFeedbackMCPMiddleware(retriever=None))
        return mcp

    clients = {False: Client(server(False)), True: Client(server(True))}

    async def call(guarded: bool) -> Any:
        client = clients[guarded]
        if not client.is_connected():
            await client.__aenter__()
        return await client.call_tool("get_weather", {"city": "Paris"})

    async def alone() -> Any:
        return await call(False)

    async def guarded() -> Any:
        return await call(True)

    return alone, guarded


def litellm_pair() -> tuple[Run, Run]:
    import litellm

    from autofeedback.frameworks import AutoFeedbackGuardrail

    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
    }
    data = {
        "model": "gpt-4o-mini",
        "tools": [TOOL],
        "messages": [{"role": "user", "content": "Weather?"}],
    }
    guardrail = AutoFeedbackGuardrail(retriever=None, guardrail_name="autofeedback")

    async def alone() -> Any:
        return await litellm.acompletion(**data, mock_response="", mock_tool_calls=[call])

    async def guarded() -> Any:
        response = await litellm.acompletion(**data, mock_response="", mock_tool_calls=[call])
        return await guardrail.async_post_call_success_hook(data, None, response)

    return alone, guarded


FRAMEWORKS: list[tuple[str, str, Callable[[], tuple[Run, Run]]]] = [
    ("LangChain v1 agent", "AutoFeedbackMiddleware", langchain_pair),
    ("LangGraph ToolNode", "AutoFeedbackToolWrapper", langgraph_pair),
    ("OpenAI Agents SDK", "AutoFeedbackRunHooks", openai_agents_pair),
    ("pydantic-ai", "AutoFeedbackCapability", pydantic_ai_pair),
    ("fastmcp server", "AutoFeedbackMCPMiddleware", fastmcp_pair),
    ("LiteLLM proxy hook", "AutoFeedbackGuardrail", litellm_pair),
]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(alone: Run, guarded: Run, n: int, warmup: int) -> tuple[list[float], list[float]]:
    for _ in range(warmup):
        await alone()
        await guarded()
    a: list[float] = []
    b: list[float] = []
    for _ in range(n):
        for run, out in ((alone, a), (guarded, b)):
            start = time.perf_counter()
            await run()
            out.append((time.perf_counter() - start) * 1000)
    return a, b


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("-n", type=int, default=300, help="measured runs per framework and side")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--no-write", action="store_true", help="print only, leave RESULTS.md")
    args = ap.parse_args(argv)

    import logging
    import warnings

    logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")  # the frameworks' own deprecation notes
    started = time.perf_counter()
    rows = [
        "| framework | adapter | alone p50 ms | with adapter p50 ms | added p50 ms "
        "| added p50, paired ms | alone p99 ms | with p99 ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, adapter, make in FRAMEWORKS:
        try:
            alone, guarded = make()
        except ImportError as exc:
            rows.append(f"| {name} | {adapter} | not installed ({exc.name}) | | | | | |")
            continue
        a, b = asyncio.run(measure(alone, guarded, args.n, args.warmup))
        paired = statistics.median(y - x for x, y in zip(a, b, strict=True))
        rows.append(
            f"| {name} | {adapter} | {_pct(a, 0.5):.2f} | {_pct(b, 0.5):.2f} "
            f"| {_pct(b, 0.5) - _pct(a, 0.5):.2f} | {paired:.2f} "
            f"| {_pct(a, 0.99):.2f} | {_pct(b, 0.99):.2f} |"
        )
        print(rows[-1], flush=True)
    load = os.getloadavg()[0]
    wall = time.perf_counter() - started
    rows += [
        "",
        f"{args.n} measured runs per framework and side after {args.warmup} warm-up runs each, "
        "alternating alone and with the adapter in one warm process. A run is one valid "
        "tool call and the model's answer, so 'added' is per tool call: the adapter's "
        "decision on the call (check, no repair needed) and its translation to the "
        "framework's shapes, nothing else; 'paired' is the median of per-pair differences. "
        "The goal (issue 37) is 1 ms or less at p50. The scripted model takes no time; a "
        f"real model's seconds dwarf both columns. CPU only, {os.cpu_count()} cores shared "
        f"with other jobs (load average {load:.1f} at the end); wall time {wall:.0f} s.",
    ]
    table = "\n".join(rows)
    print(table)
    if not args.no_write:
        command = "python benchmarks/frameworks.py" + (f" -n {args.n}" if args.n != 300 else "")
        write_section("Agent frameworks: added time per tool call", command, table)


if __name__ == "__main__":
    main()

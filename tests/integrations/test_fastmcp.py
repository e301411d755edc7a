"""fastmcp servers (AutoFeedbackMCPMiddleware) against the real package, called through
fastmcp's in-memory client as a model's MCP client would."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _support.agent_frameworks import MADE_UP, MISSPELT, assert_fed_back

pytest.importorskip(
    "fastmcp", reason="the fastmcp extra is not installed: pip install '.[fastmcp]'"
)

from fastmcp import Client, FastMCP

from autofeedback.frameworks import AutoFeedbackMCPMiddleware

ran: list[tuple[str, Any]] = []


def _server(**options: Any) -> tuple[FastMCP, AutoFeedbackMCPMiddleware]:
    mcp = FastMCP("weather")

    @mcp.tool
    def get_weather(city: str) -> str:
        """Weather forecast for a city."""
        ran.append(("get_weather", city))
        return f"{city}: sunny"

    @mcp.tool
    def plan_trip(stops: list[str], days: int) -> str:
        """Plan a trip through the stops."""
        ran.append(("plan_trip", (stops, days)))
        return " -> ".join(stops)

    middleware = AutoFeedbackMCPMiddleware(**options)
    mcp.add_middleware(middleware)
    return mcp, middleware


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


def _calls(mcp: FastMCP, *calls: tuple[str, dict[str, Any]], mode: str = "auto") -> list[Any]:
    async def go() -> list[Any]:
        async with Client(mcp, mode=mode) as client:
            return [await client.call_tool(n, a, raise_on_error=False) for n, a in calls]

    return asyncio.run(go())


def test_the_repaired_call_runs_and_the_made_up_one_is_fed_back() -> None:
    mcp, middleware = _server()
    repaired, made_up = _calls(mcp, MISSPELT[1:], MADE_UP[1:])
    assert ran == [("get_weather", "Paris")]  # once, with city=Paris
    assert not repaired.is_error and repaired.content[0].text == "Paris: sunny"
    assert made_up.is_error  # a tool error the client's model reads; the session goes on
    assert_fed_back(made_up.content[0].text)
    assert [d.action for d in middleware.decisions] == ["forward", "unknown_tool"]


def test_json_text_for_a_list_and_a_number_is_decoded() -> None:
    mcp, _ = _server(retriever=None)
    [result] = _calls(mcp, ("plan_trip", {"stops": '["Paris", "Lyon"]', "days": "3"}))
    assert not result.is_error, result.content[0].text
    assert ran == [("plan_trip", (["Paris", "Lyon"], 3))]


def test_a_call_the_docs_cannot_repair_is_answered_and_a_repeat_is_stopped() -> None:
    mcp, middleware = _server(retriever=None, repeat_limit=2)
    bad = ("get_weather", {"town": "Paris"})
    # repeats are counted per MCP session: a handshake-era connection keeps one
    first, second = _calls(mcp, bad, bad, mode="legacy")
    assert ran == []
    assert first.is_error and "'town'" in first.content[0].text
    assert second.is_error and second.content[0].text.startswith("Stop repeating this call")
    assert [d.action for d in middleware.decisions] == ["invalid_arguments", "repeated"]


def test_the_tools_are_read_again_when_the_server_changes_them() -> None:
    mcp, _ = _server(retriever=None)

    @mcp.tool
    def get_time(city: str) -> str:
        """The local time in a city."""
        return f"{city}: noon"

    [result] = _calls(mcp, ("get_time", {"City": "Paris"}))
    assert not result.is_error and result.content[0].text == "Paris: noon"

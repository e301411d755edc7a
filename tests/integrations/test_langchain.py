"""Guarding LangChain tools: invalid calls get the static feedback, valid ones run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ConfigurationError
from autofeedback.integrations._langchain import guard_langchain_tool

pytest.importorskip("langchain_core", reason="langchain-core is not installed")

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, tool

TOOLS_JSON = Path(__file__).resolve().parents[1] / "data" / "scan" / "tools.json"

calls: list[tuple[str, int]] = []


@tool
def get_weather(city: str, days: int = 1) -> str:
    """Get the weather forecast for a city."""
    calls.append((city, days))
    return f"{city}: sunny for {days} day(s)"


@pytest.fixture(autouse=True)
def _no_calls() -> None:
    calls.clear()


def test_valid_calls_run_the_tool() -> None:
    safe = guard_langchain_tool(get_weather)
    assert isinstance(safe, BaseTool)
    assert safe.name == "get_weather"
    assert safe.invoke({"city": "Paris", "days": 2}) == "Paris: sunny for 2 day(s)"
    assert calls == [("Paris", 2)]


def test_an_unknown_argument_is_answered_with_feedback_not_dropped() -> None:
    # unguarded, pydantic would drop 'town' and then fail on the missing 'city'
    answer = guard_langchain_tool(get_weather).invoke({"city": "Paris", "town": "Lyon"})
    assert calls == []
    assert answer.startswith("There is an error in your tool call.")
    assert "'town'" in answer


def test_a_tool_call_gets_a_tool_message() -> None:
    safe = guard_langchain_tool(get_weather)
    call = {"type": "tool_call", "id": "call_1", "name": "get_weather", "args": {"city": 7}}
    message = safe.invoke(call)
    assert isinstance(message, ToolMessage)
    assert message.tool_call_id == "call_1"
    assert message.status == "error"
    assert "E4.1" in str(message.content)
    assert calls == []
    ok = safe.invoke({**call, "args": {"city": "Oslo"}})
    assert isinstance(ok, ToolMessage) and ok.status == "success"
    assert calls == [("Oslo", 1)]


def test_run_and_async_paths_are_guarded() -> None:
    safe = guard_langchain_tool(get_weather)
    assert "E3.4" in safe.run({"days": 2})
    assert asyncio.run(safe.ainvoke({"city": "Rome", "days": "many"})).count("E4.1") >= 1
    assert asyncio.run(safe.ainvoke({"city": "Rome"})) == "Rome: sunny for 1 day(s)"
    assert calls == [("Rome", 1)]


def test_an_explicit_spec_is_stricter_than_the_tool_schema() -> None:
    def get_weather_fn(city: str, days: int = 1) -> str:
        return "sunny"

    loose = StructuredTool.from_function(
        get_weather_fn, name="get_weather", description="Weather for a city."
    )
    tools: list[dict[str, Any]] = json.loads(TOOLS_JSON.read_text())
    safe = guard_langchain_tool(loose, ApiCatalog.from_tools(tools))
    # the docs say 1-14 days; the function's own schema does not
    assert "E4.2" in safe.invoke({"city": "Paris", "days": 30})
    assert safe.invoke({"city": "Paris", "days": 3}) == "sunny"


def test_misuse_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="LangChain BaseTool"):
        guard_langchain_tool(lambda city: city)
    with pytest.raises(ConfigurationError, match="not in the spec"):
        guard_langchain_tool(get_weather, [{"name": "other", "parameters": {"type": "object"}}])

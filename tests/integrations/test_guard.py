"""Guarding an agent's tool calls: decorated functions and OpenAI tool_calls messages."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from autofeedback import ApiCatalog, ConfigurationError, SpecError, ToolCallRejected
from autofeedback.integrations._guard import (
    as_catalog,
    check_tool_calls,
    guard,
    guard_tool,
    tool_messages,
)

TOOLS_JSON = Path(__file__).resolve().parents[1] / "data" / "scan" / "tools.json"


@pytest.fixture(scope="module")
def tools() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(TOOLS_JSON.read_text())
    return data


@pytest.fixture(scope="module")
def catalog(tools: list[dict[str, Any]]) -> ApiCatalog:
    return ApiCatalog.from_tools(tools)


def _message(*calls: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in calls
        ],
    }


# -- guard / guard_tool --------------------------------------------------------------


def test_a_valid_call_runs_the_function(catalog: ApiCatalog) -> None:
    ran: list[str] = []

    @guard(catalog)
    def get_weather(city: str, unit: str = "celsius", days: int = 1) -> str:
        ran.append(city)
        return f"{city}: sunny"

    assert get_weather("Paris", days=3) == "Paris: sunny"
    assert ran == ["Paris"]
    assert get_weather.__name__ == "get_weather"  # functools.wraps keeps the identity


def test_an_invalid_value_is_rejected_before_the_function_runs(catalog: ApiCatalog) -> None:
    ran: list[int] = []

    @guard(catalog)
    def get_weather(city: str, unit: str = "celsius", days: int = 1) -> str:
        ran.append(days)
        return "sunny"

    with pytest.raises(ToolCallRejected) as info:
        get_weather("Paris", days=30)
    assert ran == []
    assert [f.code for f in info.value.findings] == ["E4.2"]
    assert info.value.findings[0].location == ("argument", "days")
    assert info.value.feedback.startswith("There is an error in your API request.")
    assert "Please regenerate the API request." in info.value.feedback


def test_kwargs_tools_report_misspelled_and_missing_parameters(catalog: ApiCatalog) -> None:
    @guard(catalog, "userLogin")
    def login(**kwargs: Any) -> str:
        return "token"

    with pytest.raises(ToolCallRejected) as info:
        login(userName="ann", password="x")
    [renamed] = info.value.findings
    assert (renamed.code, renamed.suggestion) == ("E3.2", "user_name")
    with pytest.raises(ToolCallRejected) as info:
        login(password="x")
    assert [f.code for f in info.value.findings] == ["E3.4"]
    assert login(user_name="ann", password="x") == "token"


def test_an_argument_the_function_does_not_take_is_still_reported(catalog: ApiCatalog) -> None:
    @guard(catalog)
    def get_weather(city: str) -> str:
        return "sunny"

    with pytest.raises(ToolCallRejected) as info:
        get_weather(city="Paris", units="celsius")  # type: ignore[call-arg]
    # the semantic checks are on by default, as in the CLI: E3.3 with the suggestion
    assert info.value.findings[0].code == "E3.3"
    assert info.value.findings[0].suggestion == "unit"


def test_library_and_cli_give_the_same_codes(catalog: ApiCatalog) -> None:
    # issue 19: check_tool_calls and the CLI default to the same retriever
    import io

    from autofeedback.cli import run

    message = _message(("c1", "get_weather", '{"city": "Paris", "units": "celsius"}'))
    library = [f.code for f in check_tool_calls(message, catalog)]
    out = io.StringIO()
    argv = ["scan", "--spec", str(TOOLS_JSON), "--format", "json"]
    run([*argv, "get_weather(city='Paris', units='celsius')"], out, out)
    assert library == [f["code"] for f in json.loads(out.getvalue())["findings"]] == ["E3.3"]

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
    # the model called a tool: its feedback speaks of the tool call (issue 28)
    assert info.value.feedback.startswith("There is an error in your tool call.")
    assert info.value.feedback.endswith("Please call the tool again with the corrected arguments.")
    assert "API request" not in info.value.feedback


def test_kwargs_tools_report_misspelled_and_missing_parameters(catalog: ApiCatalog) -> None:
    @guard(catalog, "userLogin", repair="off")
    def login(**kwargs: Any) -> str:
        return "token"

    with pytest.raises(ToolCallRejected) as info:
        login(userName="ann", password="x")
    renamed, missing = info.value.findings  # the variant never hides the missing name
    assert (missing.code, missing.suggestion) == ("E3.4", "user_name")
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


def test_on_error_return_hands_back_the_feedback(catalog: ApiCatalog) -> None:
    @guard(catalog, on_error="return")
    def send_email(recipient: str, subject: str, body: str) -> str:
        return "sent"

    out = send_email("not an address", "hi", "hello")
    assert out != "sent"
    assert "E4.2" in out and "recipient" in out
    assert send_email("ann@example.org", "hi", "hello") == "sent"


def test_methods_do_not_report_self(catalog: ApiCatalog) -> None:
    class Weather:
        @guard(catalog, "get_weather")
        def fetch(self, city: str) -> str:
            return city

    assert Weather().fetch("Oslo") == "Oslo"


def test_async_tools_are_guarded(catalog: ApiCatalog) -> None:
    @guard(catalog, on_error="return")
    async def get_weather(city: str, days: int = 1) -> str:
        return "sunny"

    assert asyncio.run(get_weather("Rome")) == "sunny"  # type: ignore[arg-type]
    assert "E4.1" in asyncio.run(get_weather("Rome", days="two"))  # type: ignore[arg-type]


def test_guard_tool_wraps_a_function_you_do_not_own(tools: list[dict[str, Any]]) -> None:
    safe = guard_tool(lambda **kw: "ok", tools, "get_weather", repair="off")
    assert safe(city="Paris") == "ok"
    with pytest.raises(ToolCallRejected):
        safe(town="Paris")


def test_misuse_is_a_clear_error(catalog: ApiCatalog, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="'get_wether' is not in the spec"):
        guard(catalog, "get_wether")(lambda: None)
    with pytest.raises(ConfigurationError, match="on_error"):
        guard(catalog, on_error="ignore")  # type: ignore[call-overload]
    with pytest.raises(SpecError, match="no such spec file"):
        guard(tmp_path / "missing.yaml")
    with pytest.raises(ConfigurationError, match="got int"):
        as_catalog(42)  # type: ignore[arg-type]


def test_a_spec_file_path_is_loaded(tmp_path: Path) -> None:
    assert as_catalog(TOOLS_JSON).names == ("userLogin", "get_weather", "send_email")
    assert as_catalog(str(TOOLS_JSON)).names == ("userLogin", "get_weather", "send_email")


def test_semantic_checks_with_the_real_model(catalog: ApiCatalog, api_retriever: Any) -> None:
    @guard(catalog, "get_weather", retriever=api_retriever, repair="off")
    def get_weather(**kwargs: Any) -> str:
        return "sunny"

    with pytest.raises(ToolCallRejected) as info:
        get_weather(location="Paris")
    [finding] = [f for f in info.value.findings if f.location == ("argument", "location")]
    assert finding.code == "E3.3"
    assert finding.suggestion == "city"


# -- OpenAI tool_calls ----------------------------------------------------------------


def test_check_tool_calls_reads_a_message_dict(tools: list[dict[str, Any]]) -> None:
    message = _message(("c1", "get_weather", '{"city": "Paris", "unit": "kelvin"}'))
    [finding] = check_tool_calls(message, tools)
    assert finding.code == "E4.2"
    assert finding.location == ("argument", "unit")


def test_clean_calls_have_no_findings(tools: list[dict[str, Any]]) -> None:
    message = _message(("c1", "get_weather", '{"city": "Paris"}'))
    assert check_tool_calls(message, tools) == []
    assert tool_messages(message, tools) == []
    assert check_tool_calls({"role": "assistant", "content": "hi"}, tools) == []


def test_several_calls_are_located_by_index(tools: list[dict[str, Any]]) -> None:
    message = _message(
        ("c1", "get_weather", '{"city": "Paris"}'),
        ("c2", "user_login", '{"user_name": "ann", "password": "x"}'),
    )
    [finding] = check_tool_calls(message, tools)
    assert finding.code == "E2.2"
    assert finding.location[0] == "tool_calls[1]"


def test_the_sdk_object_shape_is_read_too(tools: list[dict[str, Any]]) -> None:
    # the shape of openai's ChatCompletionMessage: attributes, not keys
    call = SimpleNamespace(
        id="call_9",
        type="function",
        function=SimpleNamespace(name="send_email", arguments='{"recipient": "a@b.org"}'),
    )
    message = SimpleNamespace(role="assistant", content=None, tool_calls=[call])
    codes = sorted(f.code for f in check_tool_calls(message, tools))
    assert codes == ["E3.4", "E3.4"]
    [reply] = tool_messages(message, tools)
    assert reply["tool_call_id"] == "call_9"


def test_broken_arguments_are_e1(tools: list[dict[str, Any]]) -> None:
    [bad_json] = check_tool_calls(_message(("c1", "get_weather", '{"city": "Par')), tools)
    assert bad_json.code == "E1"
    assert "not valid JSON" in bad_json.message
    [not_object] = check_tool_calls(_message(("c1", "get_weather", '["Paris"]')), tools)
    assert not_object.code == "E1"
    with pytest.raises(ConfigurationError, match="must be a list"):
        check_tool_calls({"tool_calls": "get_weather"}, tools)


def test_tool_messages_answer_each_rejected_call(tools: list[dict[str, Any]]) -> None:
    message = _message(
        ("c1", "get_weather", '{"city": "Paris"}'),
        ("c2", "get_weather", '{"city": "Paris", "days": "3"}'),
    )
    [reply] = tool_messages(message, tools)
    assert reply["role"] == "tool"
    assert reply["tool_call_id"] == "c2"
    assert "E4.1" in reply["content"]
    both = tool_messages(message, tools, include_ok=True)
    assert [(m["tool_call_id"], m["content"] == "ok") for m in both] == [
        ("c1", True),
        ("c2", False),
    ]


@pytest.mark.parametrize("message", [None, "get_weather(city='Paris')", 42, {"foo": 1}, [1]])
def test_what_is_no_message_is_misuse_not_a_clean_call(
    tools: list[dict[str, Any]], message: Any
) -> None:
    # issue 30: these returned [] (clean), so a caller passing `message.content` or
    # `message.tool_calls` (None) by mistake saw every call pass
    for check in (check_tool_calls, tool_messages):
        with pytest.raises(ConfigurationError, match="expected an assistant message"):
            check(message, tools, retriever=None)
        with pytest.raises(ConfigurationError, match="expected an assistant message"):
            check(message, tools, retriever=None, history=[])


def test_tool_calls_alone_and_the_legacy_function_call_are_read(
    tools: list[dict[str, Any]],
) -> None:
    calls = _message(("c1", "get_weather", '{"City": "Paris"}'))["tool_calls"]
    assert [f.code for f in check_tool_calls(calls, tools, retriever=None)] == ["E3.2", "E3.4"]
    legacy = {
        "role": "assistant",
        "function_call": {"name": "get_weather", "arguments": '{"City": "Paris"}'},
    }
    assert [f.code for f in check_tool_calls(legacy, tools, retriever=None)] == ["E3.2", "E3.4"]

"""The MCP proxy's "did you mean" for an unknown tool takes the arguments into account
(issue 40): a call's arguments say which tools it can mean, and only those names are
compared, so a server of 20,000 tools answers without embedding all of their names."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog
from autofeedback.integrations._mcp_gate import ToolGate

S = {"type": "string"}


def tool(name: str, required: list[str], **props: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": props, "required": required}
    return {"name": name, "inputSchema": schema}


CALENDAR_TOOLS = [
    tool("list_calendars", []),
    tool("get_calendar", ["calendar_id"], calendar_id=S),
    tool("list_events", ["calendar_id"], calendar_id=S, start=S, end=S),
    tool("get_event", ["calendar_id", "event_id"], calendar_id=S, event_id=S),
    tool(
        "create_event",
        ["calendar_id", "summary", "start", "end"],
        calendar_id=S,
        summary=S,
        start=S,
        end=S,
    ),
    tool("delete_event", ["calendar_id", "event_id"], calendar_id=S, event_id=S),
]


class Counting:
    """The real retriever, counting the names each comparison embeds (a spy on the
    product's own part, not a stand-in for it)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.compared: list[int] = []
        self.preloaded = 0

    def name_similarity(self, name: str, candidates: Sequence[str]) -> Any:
        self.compared.append(len(candidates))
        return self.real.name_similarity(name, candidates)

    def preload_names(self, catalog: ApiCatalog) -> None:
        self.preloaded += 1
        self.real.preload_names(catalog)

    def rank(self, instruction: str, catalog: ApiCatalog, k: int | None = None) -> Any:
        return self.real.rank(instruction, catalog, k)


@pytest.mark.parametrize("retriever", ["model", None])
def test_did_you_mean_names_the_tool_the_arguments_fit(api_retriever: Any, retriever: Any) -> None:
    # before: "did you mean 'get_calendar'?" (by the name alone, with or without the
    # model) although only list_events takes calendar_id and start
    gate = ToolGate(retriever=api_retriever if retriever else None)
    gate.load(CALENDAR_TOOLS)
    decision = gate.check("fetch_calendar_events", {"calendar_id": "c1", "start": "2026-11-02"})
    assert decision.action == "unknown_tool"
    assert decision.message == "Unknown tool: 'fetch_calendar_events'; did you mean 'list_events'?"


def test_arguments_no_tool_takes_leave_the_name_to_decide() -> None:
    gate = ToolGate(retriever=None)
    gate.load(CALENDAR_TOOLS)
    decision = gate.check("get_calender", {"zzz": 1})
    assert decision.message == "Unknown tool: 'get_calender'; did you mean 'get_calendar'?"


def test_tools_taking_the_arguments_are_found_by_their_names() -> None:
    from autofeedback.checks._check_name import taking

    catalog = ApiCatalog.from_tools(
        [{"name": t["name"], "parameters": t["inputSchema"]} for t in CALENDAR_TOOLS]
    )
    # those given every required parameter first; names compared as literal variants
    assert taking({"calendarId": "c1", "start": "x"}, catalog) == ["list_events", "create_event"]
    assert taking({"calendar_id": "c1", "event_id": "e"}, catalog) == [
        "get_event",
        "delete_event",
    ]
    assert taking({}, catalog) == taking({"nothing": 1}, catalog) == []


def test_a_big_server_compares_only_the_tools_the_arguments_fit(api_retriever: Any) -> None:
    verbs = ["get", "list", "create", "update", "delete", "search", "sync", "export"]
    nouns = ["invoice", "ticket", "user", "order", "report", "asset", "job", "page"]
    filler = [
        tool(f"{verbs[i % 8]}_{nouns[(i // 8) % 8]}_{i}", ["id"], id=S, **{f"f{i % 97}": S})
        for i in range(20_000)
    ]
    spy = Counting(api_retriever)
    gate = ToolGate(retriever=spy)
    gate.load([*CALENDAR_TOOLS, *filler])
    decision = gate.check("fetch_calendar_events", {"calendar_id": "c1", "start": "2026-11-02"})
    assert decision.message == "Unknown tool: 'fetch_calendar_events'; did you mean 'list_events'?"
    # before: the first unknown name embedded all 20,006 names (13 s on a fast machine)
    assert spy.preloaded == 0
    assert max(spy.compared) <= 2


MCP_PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp-proxy.md"
WEATHER = tool(
    "get_weather",
    ["city"],
    city={"type": "string", "description": "city name"},
    days={"type": "integer"},
)


def test_the_mcp_page_shows_what_the_gate_does(api_retriever: Any) -> None:
    # before: the page said an unknown tool and {"City": "Paris"} are answered with an
    # error, while the default policy forwards the certain repairs
    gate = ToolGate(retriever=api_retriever)
    gate.load([WEATHER, tool("list_events", ["calendar_id"], calendar_id=S)])
    for name, arguments in [
        ("getWeather", {"city": "Paris"}),
        ("get_weathr", {"city": "Paris"}),
        ("get_weather", {"City": "Paris"}),
        ("get_weather", {"city": "Paris", "days": "3"}),
    ]:
        decision = gate.check(name, arguments)
        assert (decision.action, decision.call_name) == ("forward", "get_weather"), name
    for name in ("get_wether", "weather_now", "listEvent"):
        assert gate.check(name, {}).action == "unknown_tool", name
    page = MCP_PAGE.read_text(encoding="utf-8")
    shown = page.split("comes back as `isError: true` with:\n\n```text\n", 1)[1].split("\n```")[0]
    decision = gate.check("get_weather", {"town": "Paris"})
    assert decision.action == "invalid_arguments"
    assert decision.feedback == shown

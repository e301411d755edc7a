"""Data flow on what users bring (issue 40), with a newcomer's own calendar spec
(tests/data/specs/calendar.yaml, served under ``/api``), agent prompts that carry their
ids (tests/data/agents/calendar_chats.json) and a browser's HAR capture of real URLs
(tests/data/audit/calendar.har): every message the model saw grounds a value; a capture
whose URLs carry the server's base path is checked for data flow like any other; E5.3
names an operation that changes nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner, check_tool_calls
from autofeedback.audit._audit import audit_lines
from autofeedback.audit._inputs import openai_records
from autofeedback.cli import run as cli_run

DATA = Path(__file__).resolve().parents[1] / "data"
SPEC = DATA / "specs" / "calendar.yaml"
HAR = DATA / "audit" / "calendar.har"
CALENDAR = ApiCatalog.from_file(SPEC)
CHATS = json.loads((DATA / "agents" / "calendar_chats.json").read_text())


def _tool_call(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
        ],
    }


def _e53(findings: Any) -> list[tuple[str, str]]:
    return [(f.location[-1], f.severity) for f in findings if f.code == "E5.3"]


@pytest.mark.parametrize("chat", CHATS, ids=[c["id"] for c in CHATS])
def test_every_message_the_model_saw_grounds_a_value(chat: dict[str, Any]) -> None:
    found = check_tool_calls(
        _tool_call(chat["call"]), CATALOG_TOOLS, retriever=None, history=chat["messages"]
    )
    if chat["grounded"]:
        # before: E5.3 errors for every id the system or developer message gave
        assert _e53(found) == [], [str(f) for f in found]
    else:
        assert _e53(found) == [("eventId", "error")]


CATALOG_TOOLS = CALENDAR.to_tools()


def test_a_tool_result_in_words_grounds_what_it_names() -> None:
    messages = [
        {"role": "user", "content": "Add a standup to my team calendar c_team_01 at 9:30."},
        _tool_call(
            {
                "name": "createEvent",
                "arguments": {
                    "calendarId": "c_team_01",
                    "summary": "Standup",
                    "start": "2026-11-02T09:30:00Z",
                    "end": "2026-11-02T09:45:00Z",
                },
            }
        ),
        {"role": "tool", "tool_call_id": "call_1", "content": "Created evt_9f31 in c_team_01."},
        {"role": "user", "content": "Now invite Sam to it."},
    ]
    call = {
        "name": "updateEvent",
        "arguments": {"calendarId": "c_team_01", "eventId": "evt_9f31", "summary": "Standup"},
    }
    assert (
        _e53(check_tool_calls(_tool_call(call), CATALOG_TOOLS, retriever=None, history=messages))
        == []
    )


def test_a_default_in_the_tool_definitions_grounds_its_value() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "listEvents",
                "parameters": {
                    "type": "object",
                    "properties": {"calendarId": {"type": "string", "default": "primary"}},
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "getEvent",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "calendarId": {"type": "string"},
                        "eventId": {"type": "string"},
                    },
                },
            },
        },
    ]
    history = [{"role": "user", "content": "What is event evt_abc123 about?"}]
    call = {"name": "getEvent", "arguments": {"calendarId": "primary", "eventId": "evt_abc123"}}
    assert _e53(check_tool_calls(_tool_call(call), tools, retriever=None, history=history)) == []


def test_one_call_is_judged_with_the_context_it_came_with() -> None:
    scanner = Scanner(CALENDAR, retriever=None)
    chat = CHATS[0]
    call = {"name": chat["call"]["name"], "arguments": chat["call"]["arguments"]}
    said = chat["messages"][-1]["content"]
    alone = list(scanner.iter_findings(call, instruction=said))
    assert {loc for loc, _ in _e53(alone)} == {"calendarId", "eventId"}
    told = list(
        scanner.iter_findings(call, instruction=said, context=chat["messages"][0]["content"])
    )
    assert _e53(told) == []


def test_a_chat_log_line_keeps_its_system_prompt_as_context() -> None:
    chat = CHATS[0]
    line = {
        "request": {"model": "m", "messages": chat["messages"], "tools": CATALOG_TOOLS},
        "response": {"choices": [{"message": _tool_call(chat["call"])}]},
    }
    (record,) = openai_records(line, 1)
    assert record["instruction"] == "Accept it please."
    assert "7b0e2c4a-1f7d-4c55-9a3e-5d1c2b8f0e11" in record["context"]
    (result,) = audit_lines([json.dumps(record)], None, retriever=None)
    assert result.ok and _e53(result.findings) == [], result


def _audit_har(path: Path) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    args = ["audit", str(path), "--input-format", "har-session", "--spec", str(SPEC)]
    code = cli_run([*args, "--no-semantic", "--format", "jsonl"], out, err)
    assert code == 1, err.getvalue()
    (line,) = out.getvalue().splitlines()
    return dict(json.loads(line))


def test_a_capture_with_the_servers_base_path_is_checked_for_data_flow(tmp_path: Path) -> None:
    # the servers entry is http://127.0.0.1:8090/api: the capture's URLs are /api/...
    assert "/api/calendars" in HAR.read_text()
    full = _audit_har(HAR)
    # the same capture without the base path, as a test double would have written it
    short = tmp_path / "short.har"
    short.write_text(HAR.read_text().replace("8090/api/", "8090/"))
    stripped = _audit_har(short)
    # before: full paths gave no E5.3 at all (ok: true), while E1-E4 still ran
    assert full["findings"] == stripped["findings"]
    (f,) = full["findings"]
    assert (f["code"], f["location"], f["operation"]) == (
        "E5.3",
        ["step[2]", "path", "calendarId"],
        "getEvent",
    )
    # the calendars were listed two steps before: the feedback says where the id is
    assert f["suggestion"] == "read it from the response of listCalendars: `items[].id`"


LIST_CALENDARS = "call listCalendars first: its response has `items[].id`"
LIST_EVENTS = "call listEvents first: its response has `items[].id`"


@pytest.mark.parametrize(
    ("call", "named"),
    [
        ("<API>getCalendar(calendarId='cal_team')</API>", {"calendarId": LIST_CALENDARS}),
        (
            "<API>getEvent(calendarId='c1', eventId='evt_x')</API>",
            {"calendarId": LIST_CALENDARS, "eventId": LIST_EVENTS},
        ),
        (
            "<API>rsvpEvent(calendarId='c_1', eventId='evt_x', response='accepted')</API>",
            {"calendarId": LIST_CALENDARS, "eventId": LIST_EVENTS},
        ),
    ],
)
def test_e53_names_an_operation_without_side_effects(call: str, named: dict[str, str]) -> None:
    # before: "call createCalendar first" (a POST: a second calendar, not the user's) and
    # "call createEvent first"; the lists tied with them
    scanner = Scanner(CALENDAR, retriever=None)
    found = scanner.iter_findings(call, instruction="show it")
    assert {f.location[-1]: f.suggestion for f in found if f.code == "E5.3"} == named

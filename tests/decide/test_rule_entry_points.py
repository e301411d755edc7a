"""The repair rule at every door (issue 43): a call the rule leaves to the model is never
run, sent, written or inserted changed by ``guard``, the tool-call helpers, ``audit
--fix``, the ``requests`` guard or the ReAct runner. The proxies have theirs in
tests/integrations/test_proxy.py and test_mcp_proxy.py. Real sandbox, scripted LLM."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import requests

from autofeedback import (
    ApiCatalog,
    RequestRejected,
    ToolCallRejected,
    decide_tool_calls,
    guard,
    guard_session,
)
from autofeedback.cli import run as cli_run
from autofeedback.loop._llm import CallableLLM
from autofeedback.runners import ReactRunner
from autofeedback.sandbox import Sandbox

NEVER = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "decide" / "never.json").read_text("utf-8")
)["never"]


def _chat_message(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
        ],
    }


@pytest.mark.parametrize("case", NEVER, ids=lambda c: c["why"])
def test_the_tool_call_helpers_hand_back_the_call_as_written(case: dict[str, Any]) -> None:
    decided = decide_tool_calls(_chat_message(case["call"]), case["tools"], retriever=None)
    [call] = decided.calls
    assert not decided.ok and not decided.repairs
    assert call.name == case["call"]["name"] and dict(call.arguments) == case["call"]["arguments"]


@pytest.mark.parametrize(
    "case",
    [c for c in NEVER if any(t["name"] == c["call"]["name"] for t in c["tools"])],
    ids=lambda c: c["why"],
)
def test_guard_never_runs_the_tool_with_other_arguments(case: dict[str, Any]) -> None:
    ran: list[dict[str, Any]] = []

    @guard(case["tools"], case["call"]["name"], retriever=None)
    def tool(**kwargs: Any) -> str:
        ran.append(kwargs)
        return "ran"

    with pytest.raises(ToolCallRejected):
        tool(**case["call"]["arguments"])
    assert ran == []


def test_audit_fix_writes_no_repaired_call_for_any_row(tmp_path: Path) -> None:
    for n, case in enumerate(NEVER):
        spec = tmp_path / f"tools{n}.json"
        spec.write_text(json.dumps(case["tools"]))
        log = tmp_path / f"log{n}.jsonl"
        log.write_text(json.dumps({"id": n, "call": case["call"]}) + "\n")
        out, err = io.StringIO(), io.StringIO()
        argv = ["audit", str(log), "--spec", str(spec), "--no-semantic", "--format", "jsonl"]
        assert cli_run([*argv, "--fix"], out, err) == 1, (case["why"], err.getvalue())
        [line] = map(json.loads, out.getvalue().splitlines())
        assert "repaired" not in line and not line.get("repairs"), case["why"]


USERS = {
    "openapi": "3.0.3",
    "info": {"title": "users", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:9/api"}],
    "paths": {
        "/users": {
            "delete": {
                "operationId": "deleteUsers",
                "parameters": [
                    {"name": "role", "in": "query", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"204": {"description": "deleted"}},
            }
        }
    },
}


def test_the_requests_guard_never_sends_a_delete_without_its_dry_run() -> None:
    catalog = ApiCatalog.from_obj(USERS)
    with Sandbox(catalog, seed=1) as server, requests.Session() as session:
        guard_session(session, catalog, base_url=server.url, retriever=None)
        with pytest.raises(RequestRejected) as info:
            session.delete(server.url + "/users", params={"role": "guest", "dry_run": "true"})
        assert list(server.requests_seen) == []  # nothing reached the server
    assert "dry_run" in str(info.value)


ORDERS = {
    "openapi": "3.0.3",
    "info": {"title": "shop", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "paths": {
        "/orders": {
            "post": {
                "operationId": "placeOrder",
                "summary": "Place a new order",
                "responses": {
                    "201": {
                        "description": "the new order",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"order_id": {"type": "string"}},
                                }
                            }
                        },
                    }
                },
            }
        },
        "/orders/{order_id}": {
            "get": {
                "operationId": "getOrder",
                "summary": "Where an order is",
                "parameters": [
                    {
                        "name": "order_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {"200": {"description": "the order"}},
            }
        },
    },
}


def test_the_react_runner_never_places_an_order_to_find_one() -> None:
    """'Where is my order?': the one producer of an order id is POST /orders. It used to
    be sent (201) with the run's key before the model's call."""
    catalog = ApiCatalog.from_obj(ORDERS)
    outputs = iter(
        [
            "Thought: look it up.\nAction: <API>getOrder(order_id='<order_id>')</API>",
            "Thought: I need the id.\nFinal Answer: Which order do you mean?",
        ]
    )
    llm = CallableLLM(lambda messages: next(outputs))
    with Sandbox(catalog, seed=2) as server:
        result = ReactRunner(llm, catalog, base_url=server.url).run("Where is my order?")
        seen = [r.method for r in server.requests_seen]
    assert "POST" not in seen
    assert all(not t.repairs for t in result.turns)

"""Audit logs in every provider's form: Anthropic Messages, OpenAI Responses, Gemini and
Bedrock Converse request/response pairs (tools taken from each request), and JSONL
records whose ``output`` is a provider's message or response object."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from autofeedback.audit._inputs import sniff_format
from autofeedback.cli import run

LOG = Path(__file__).parents[1] / "data" / "audit" / "providers.jsonl"
TOOLS = str(Path(__file__).parents[1] / "data" / "scan" / "tools.json")


def cli(*argv: str, stdin: str = "") -> tuple[int, list[dict[str, Any]], str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, [json.loads(x) for x in out.getvalue().splitlines()], err.getvalue()


def test_provider_chat_logs_are_audited_with_their_own_tools() -> None:
    code, rows, _ = cli("audit", str(LOG), "--no-semantic", "--format", "jsonl")
    assert code == 1
    got = {r["id"]: [f["code"] for f in r["findings"]] for r in rows}
    assert got == {
        "claude-1": ["E3.2", "E3.4"],  # tool_use input {"Location": ...}: required location
        "claude-2": ["E1"],  # a text-only reply is checked as raw output, as for OpenAI
        "responses-1": [],  # a function_call item that fits its tool
        "gemini-1": ["E4.2"],  # functionDeclarations with Gemini's upper-case types
        "bedrock-1": ["E3.4"],  # toolConfig.tools[].toolSpec.inputSchema.json
    }


def test_bare_provider_responses_are_sniffed_as_chat_logs() -> None:
    line = LOG.read_text(encoding="utf-8").splitlines()[0]
    response = json.dumps(json.loads(line)["response"])
    assert sniff_format("-", response) == "openai"


def test_jsonl_output_may_be_a_provider_message() -> None:
    records = [
        {
            "id": "anthropic",
            "output": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "get_weather",
                        "input": {"city": "Paris", "days": 3},
                    }
                ],
            },
        },
        {
            "id": "responses",
            "output": [
                {
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "getWeather",
                    "arguments": '{"city": "Paris"}',
                }
            ],
        },
        {
            "id": "gemini",
            "output": {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [
                                {
                                    "functionCall": {
                                        "name": "get_weather",
                                        "args": {"city": "Paris", "days": "3"},
                                    }
                                }
                            ],
                        }
                    }
                ]
            },
        },
        {"id": "bad", "output": 42},
    ]
    stdin = "\n".join(json.dumps(r) for r in records) + "\n"
    code, rows, _ = cli(
        "audit", "-", "--spec", TOOLS, "--no-semantic", "--format", "jsonl", stdin=stdin
    )
    got = {r["id"]: [f["code"] for f in r.get("findings", [])] for r in rows}
    assert got["anthropic"] == []
    assert got["responses"] == ["E2.2"]
    assert got["gemini"] == ["E4.1"]
    bad = next(r for r in rows if r["id"] == "bad")
    assert "'output' must be a string or a JSON message" in bad["error"]
    assert code == 2


# -- issue 30: conversations in every provider's shape ----------------------------------

ANTHROPIC_TOOLS = [
    {
        "name": "GetUserToken",
        "description": "The user's token from their username and password",
        "input_schema": {
            "type": "object",
            "properties": {"username": {"type": "string"}, "password": {"type": "string"}},
            "required": ["username", "password"],
        },
    },
    {
        "name": "DeleteAccount",
        "description": "Delete the user's account",
        "input_schema": {
            "type": "object",
            "properties": {"token": {"type": "string"}},
            "required": ["token"],
        },
    },
]
USER = "Delete my account; I am ann, password s3cret"


def test_an_anthropic_conversation_record_is_checked() -> None:
    # a misspelt tool and an unknown argument in a {"tools", "messages"} record with
    # tool_use blocks and tools in Anthropic's input_schema form audited as ok: true
    def record(rid: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": rid,
            "tools": ANTHROPIC_TOOLS,
            "messages": [
                {"role": "user", "content": USER},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Logging in first."},
                        {"type": "tool_use", "id": "t1", "name": name, "input": arguments},
                    ],
                },
            ],
        }

    lines = [
        record("misspelt", "GetUserTokn", {"username": "ann", "password": "s3cret"}),
        record("unknown", "GetUserToken", {"username": "ann", "password": "s3cret", "x": 1}),
        record("ok", "GetUserToken", {"username": "ann", "password": "s3cret"}),
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    code, rows, _ = cli("audit", "-", "--no-semantic", "--format", "jsonl", stdin=stdin)
    got = {r["id"]: [(f["code"], f["location"]) for f in r["findings"]] for r in rows}
    assert got == {
        "misspelt": [("E2", ["step[0]", "api"])],
        "unknown": [("E3", ["step[0]", "argument", "x"])],
        "ok": [],
    }
    assert code == 1


def _histories(token: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """(request, response) of one agent step per provider: the token came back from
    GetUserToken, and the response calls DeleteAccount with ``token``."""
    login = {"username": "ann", "password": "s3cret"}
    openai_tools = [
        {"type": "function", "function": {**t, "parameters": t["input_schema"]}}
        for t in ANTHROPIC_TOOLS
    ]
    for tool in openai_tools:
        del tool["function"]["input_schema"]
    return {
        "openai-chat": (
            {
                "tools": openai_tools,
                "messages": [
                    {"role": "user", "content": USER},
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {
                                    "name": "GetUserToken",
                                    "arguments": json.dumps(login),
                                },
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": '{"token": "tk-81a9f"}'},
                ],
            },
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "id": "c2",
                                    "type": "function",
                                    "function": {
                                        "name": "DeleteAccount",
                                        "arguments": json.dumps({"token": token}),
                                    },
                                }
                            ],
                        }
                    }
                ]
            },
        ),
        "openai-responses": (
            {
                "tools": [
                    {"type": "function", "name": t["name"], "parameters": t["input_schema"]}
                    for t in ANTHROPIC_TOOLS
                ],
                "input": [
                    {"role": "user", "content": USER},
                    {
                        "type": "function_call",
                        "call_id": "c1",
                        "name": "GetUserToken",
                        "arguments": json.dumps(login),
                    },
                    {
                        "type": "function_call_output",
                        "call_id": "c1",
                        "output": '{"token": "tk-81a9f"}',
                    },
                ],
            },
            {
                "object": "response",
                "output": [
                    {
                        "type": "function_call",
                        "call_id": "c2",
                        "name": "DeleteAccount",
                        "arguments": json.dumps({"token": token}),
                    }
                ],
            },
        ),
        "anthropic": (
            {
                "tools": ANTHROPIC_TOOLS,
                "messages": [
                    {"role": "user", "content": USER},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": "t1", "name": "GetUserToken", "input": login}
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "t1",
                                "content": [{"type": "text", "text": '{"token": "tk-81a9f"}'}],
                            }
                        ],
                    },
                ],
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "DeleteAccount",
                        "input": {"token": token},
                    }
                ],
            },
        ),
        "gemini": (
            {
                "tools": [
                    {
                        "functionDeclarations": [
                            {"name": t["name"], "parameters": t["input_schema"]}
                            for t in ANTHROPIC_TOOLS
                        ]
                    }
                ],
                "contents": [
                    {"role": "user", "parts": [{"text": USER}]},
                    {
                        "role": "model",
                        "parts": [{"functionCall": {"name": "GetUserToken", "args": login}}],
                    },
                    {
                        "role": "user",
                        "parts": [
                            {
                                "functionResponse": {
                                    "name": "GetUserToken",
                                    "response": {"token": "tk-81a9f"},
                                }
                            }
                        ],
                    },
                ],
            },
            {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [
                                {
                                    "functionCall": {
                                        "name": "DeleteAccount",
                                        "args": {"token": token},
                                    }
                                }
                            ],
                        }
                    }
                ]
            },
        ),
        "bedrock": (
            {
                "toolConfig": {
                    "tools": [
                        {
                            "toolSpec": {
                                "name": t["name"],
                                "inputSchema": {"json": t["input_schema"]},
                            }
                        }
                        for t in ANTHROPIC_TOOLS
                    ]
                },
                "messages": [
                    {"role": "user", "content": [{"text": USER}]},
                    {
                        "role": "assistant",
                        "content": [
                            {"toolUse": {"toolUseId": "u1", "name": "GetUserToken", "input": login}}
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {
                                "toolResult": {
                                    "toolUseId": "u1",
                                    "content": [{"json": {"token": "tk-81a9f"}}],
                                    "status": "success",
                                }
                            }
                        ],
                    },
                ],
            },
            {
                "output": {
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "toolUse": {
                                    "toolUseId": "u2",
                                    "name": "DeleteAccount",
                                    "input": {"token": token},
                                }
                            }
                        ],
                    }
                }
            },
        ),
    }


def test_a_log_line_gets_the_data_flow_check_from_its_request() -> None:
    # issue 30: the proxy and check_tool_calls(history=) flag a token no earlier tool
    # result returned; the same conversation logged audited clean
    made_up = _histories("tk-00000")
    returned = _histories("tk-81a9f")
    lines = [
        {"id": f"{name}-made-up", "request": request, "response": response}
        for name, (request, response) in made_up.items()
    ] + [
        {"id": f"{name}-returned", "request": request, "response": response}
        for name, (request, response) in returned.items()
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    code, rows, _ = cli("audit", "-", "--no-semantic", "--format", "jsonl", stdin=stdin)
    got = {r["id"]: [f["code"] for f in r.get("findings", [r.get("error")])] for r in rows}
    assert got == {
        **{f"{name}-made-up": ["E5.3"] for name in made_up},
        **{f"{name}-returned": [] for name in returned},
    }
    assert code == 1
    assert "tk-00000" not in json.dumps(rows)  # a credential's value is masked


def test_a_gemini_declarations_nullable_parameter_takes_null() -> None:
    # Gemini's ``parameters`` are OpenAPI 3.0's schema subset, where ``nullable: true``
    # lets null in; its ``parametersJsonSchema`` is JSON Schema, where it is no keyword
    from autofeedback import ApiCatalog, Scanner
    from autofeedback._parse._providers import provider_tools

    days = {"type": "INTEGER", "nullable": True}
    tools = [
        {
            "functionDeclarations": [
                {"name": "weather", "parameters": {"type": "OBJECT", "properties": {"days": days}}},
                {"name": "rain", "parametersJsonSchema": {"properties": {"days": days}}},
                {"name": "sun", "parameters": {"properties": {"days": {"type": "INTEGER"}}}},
            ]
        }
    ]
    scanner = Scanner(ApiCatalog.from_tools(provider_tools(tools)), retriever=None)

    def codes(name: str, days: Any) -> list[str]:
        call = {"name": name, "arguments": {"days": days}}
        return [f.code for f in scanner.iter_findings(call)]

    assert codes("weather", None) == [] and codes("weather", 3) == []
    assert codes("weather", "3") == ["E4.1"]
    assert codes("rain", None) == ["E4.1"]
    assert codes("sun", None) == ["E4.1"]


def test_a_system_prompt_given_apart_grounds_the_next_steps_ids(tmp_path: Path) -> None:
    # Anthropic's `system` (and the Responses API's `instructions`) sits beside the
    # messages: an id it gives is not made up, in a call checked as the next step of
    # the conversation the request carried
    tools = [
        {
            "name": "get_account",
            "input_schema": {
                "type": "object",
                "properties": {"account_id": {"type": "string"}},
                "required": ["account_id"],
            },
        }
    ]
    history = [
        {"role": "user", "content": "How is my account?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t0",
                    "name": "get_account",
                    "input": {"account_id": "acc_7Q2"},
                }
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t0", "content": "{}"}],
        },
    ]
    call = {
        "type": "tool_use",
        "id": "t1",
        "name": "get_account",
        "input": {"account_id": "acc_7Q2"},
    }
    lines = []
    for rid, system in (("told", "You act for account acc_7Q2."), ("not told", None)):
        request: dict[str, Any] = {"model": "claude", "messages": history, "tools": tools}
        if system:
            request["system"] = system
        response = {"id": rid, "type": "message", "role": "assistant", "content": [call]}
        lines.append(json.dumps({"request": request, "response": response}))
    log = tmp_path / "claude.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, rows, _ = cli("audit", str(log), "--no-semantic", "--format", "jsonl")
    assert {r["id"]: [f["code"] for f in r["findings"]] for r in rows} == {
        "told": [],
        "not told": ["E5.3"],
    }


def test_a_responses_log_line_kept_upstream_is_judged_alone(tmp_path: Path) -> None:
    # previous_response_id: the input is only the latest items, so an id an earlier turn
    # returned is not made up; without it, the input is the whole run and it is
    tools = [
        {
            "type": "function",
            "name": "get_book",
            "parameters": {
                "type": "object",
                "properties": {"book_id": {"type": "integer"}},
                "required": ["book_id"],
            },
        }
    ]
    earlier = [
        {"role": "user", "content": "the second book about dragons"},
        {
            "type": "function_call",
            "call_id": "c0",
            "name": "get_book",
            "arguments": '{"book_id": 1}',
        },
        {"type": "function_call_output", "call_id": "c0", "output": '{"id": 1}'},
    ]
    call = {
        "type": "function_call",
        "call_id": "c1",
        "name": "get_book",
        "arguments": '{"book_id": 12}',
    }
    lines = []
    for rid, kept in (("kept upstream", {"previous_response_id": "resp_0"}), ("whole run", {})):
        request = {"model": "gpt-4.1", "input": earlier, "tools": tools, **kept}
        response = {"id": rid, "object": "response", "output": [call]}
        lines.append(json.dumps({"request": request, "response": response}))
    log = tmp_path / "responses.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, rows, _ = cli("audit", str(log), "--no-semantic", "--format", "jsonl")
    assert {r["id"]: [f["code"] for f in r["findings"]] for r in rows} == {
        "kept upstream": [],
        "whole run": ["E5.3"],
    }

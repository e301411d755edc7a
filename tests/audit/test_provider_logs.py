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

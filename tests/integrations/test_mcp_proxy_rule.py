"""The repair rule through ``autofeedback mcp-proxy`` (issue 43): the default ``--repair
sure`` never routes a call to another tool nor drops an argument; the client and the
model get feedback instead. Real MCP server and client, as in test_mcp_proxy.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the 'mcp' extra")

from _support.mcp_proxy import LIMIT, _proxied, _session, _text
from mcp.shared.exceptions import MCPError


def test_a_call_to_another_tool_or_with_an_argument_the_tool_lacks_is_fed_back(
    tmp_path: Path,
) -> None:
    route = {"route": {"from": "CDG", "to": "JFK"}, "dates": ["2025-05-01"]}

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        with anyio.fail_after(LIMIT):
            async with _session(_proxied(tmp_path, "--no-semantic")) as client:
                # a singular for the server's plural: another operation, never routed
                with pytest.raises(MCPError) as unknown:
                    await client.call_tool("search_flight", route)
                seen["singular"] = unknown.value
                # an argument the tool does not take: never dropped
                seen["dry_run"] = await client.call_tool(
                    "search_flights", {**route, "dry_run": True}
                )
        return seen

    seen = anyio.run(scenario)
    assert "search_flights" in seen["singular"].message
    assert seen["dry_run"].is_error and "dry_run" in _text(seen["dry_run"])
    rows = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    calls = [r for r in rows if r["event"] == "tools/call"]
    assert [r["decision"] for r in calls] == ["unknown_tool", "invalid_arguments"]
    assert not any(r.get("repairs") for r in calls)

"""``autofeedback mcp-proxy`` shows what it did where its user looks (issue 43): a call
forwarded repaired says so in the result the client gets (``_meta`` and a note the
model reads), credentials masked; a tool name that looks like another or is listed
twice is reported when the tools are listed and never matched to a call. Real parts:
the SDK's ``ClientSession``, the proxy and a real SDK server (``mcp_servers/``), over
stdio."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the MCP SDK is the 'mcp' extra")

import mcp.types as types  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NAMES = Path(__file__).parent / "mcp_servers" / "names_server.py"
WEATHER = Path(__file__).parent / "mcp_servers" / "weather_server.py"
PROXY = ["-c", "from autofeedback.cli import main; main()", "mcp-proxy"]
LIMIT = 60
TOKEN = "whk-live-7c6b5a4d3e2f"


@asynccontextmanager
async def _session(args: list[str], errlog: Any = sys.stderr) -> AsyncIterator[ClientSession]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


def _proxied(log: Path, server: Path) -> list[str]:
    return [*PROXY, "--no-semantic", "--log", str(log), "--", sys.executable, str(server)]


def _texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def test_a_repaired_call_tells_the_client_and_the_model_what_ran(tmp_path: Path) -> None:
    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        with anyio.fail_after(LIMIT):
            async with _session([str(WEATHER)]) as direct:
                seen["direct"] = await direct.call_tool("get_weather", {"city": "Paris"})
            async with _session(_proxied(tmp_path / "w.jsonl", WEATHER)) as client:
                seen["weather"] = await client.call_tool("get_weather", {"City": "Paris"})
                seen["clean"] = await client.call_tool("get_weather", {"city": "Paris"})
            async with _session(_proxied(tmp_path / "n.jsonl", NAMES)) as client:
                seen["notify"] = await client.call_tool(
                    "notify", {"Channel": "ops", "message": "deploy done", "webhook_token": TOKEN}
                )
        return seen

    seen = anyio.run(scenario)
    direct, weather = seen["direct"], seen["weather"]
    # the server's own answer first, unchanged, and its structured content as it was
    assert weather.content[: len(direct.content)] == direct.content
    assert weather.structured_content == direct.structured_content
    assert weather.meta["autofeedback"] == {
        "repairs": [
            {"code": "E3.2", "location": ["argument", "City"], "before": "City", "after": "city"}
        ],
        "called": {"name": "get_weather", "arguments": {"city": "Paris"}},
    }
    note = _texts(weather)[-1]
    assert note == (
        'autofeedback: called get_weather with {"city": "Paris"} '
        "(repaired: E3.2 argument.City: 'City' -> 'city')"
    )
    # a call that needed nothing is passed back as the server answered it
    assert seen["clean"].model_dump() == direct.model_dump()

    notify = seen["notify"]
    assert notify.structured_content == {"sent": True, "channel": "ops"}  # the repaired call ran
    shown = notify.meta["autofeedback"]
    assert shown["called"] == {
        "name": "notify",
        "arguments": {"channel": "ops", "message": "deploy done", "webhook_token": "[REDACTED]"},
    }
    assert TOKEN not in json.dumps(notify.meta) and TOKEN not in _texts(notify)[-1]
    assert "'Channel' -> 'channel'" in _texts(notify)[-1]
    assert TOKEN not in (tmp_path / "n.jsonl").read_text()


def test_names_that_look_like_another_or_are_listed_twice_are_never_matched(
    tmp_path: Path,
) -> None:
    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        with anyio.fail_after(LIMIT):
            async with _session(_proxied(tmp_path / "log.jsonl", NAMES), errlog=err) as client:
                seen["tools"] = [t.name for t in (await client.list_tools()).tools]
                for called in ("read_file", "write_file"):
                    with pytest.raises(MCPError) as info:
                        await client.call_tool(called, {"path": "/etc/hosts"})
                    seen[called] = info.value
                for called in ("re\u0430d_file", "write\u200bfile", "get_time"):
                    seen[called] = await client.call_tool(called, {"path": "/etc/hosts"})
                seen["plain"] = await client.call_tool("list_files", {"path": "/tmp"})
        return seen

    with (tmp_path / "proxy.err").open("w+") as err:
        seen = anyio.run(scenario)
        err.seek(0)
        warned = err.read()

    # said when the tools were listed: each name, and why
    assert "'re\\u0430d_file'" in warned and "mixes Latin and Cyrillic letters" in warned
    assert "'write\\u200bfile'" in warned and "U+200B ZERO WIDTH SPACE" in warned
    assert "'get_time'" in warned and "is listed 2 times" in warned
    assert warned.count("never matched to a call") == 3

    # the model's plain names are not routed to the look-alikes
    for called in ("read_file", "write_file"):
        error = seen[called]
        assert error.error.code == types.INVALID_PARAMS
        assert "Unknown tool" in error.error.message
        assert "never called" in error.error.data["feedback"]
    # a call naming one exactly is fed back, never run
    for called in ("re\u0430d_file", "write\u200bfile", "get_time"):
        result = seen[called]
        assert result.is_error and "is not called" in _texts(result)[0]
        assert '"ran"' not in _texts(result)[0]
    assert "listed 2 times" in _texts(seen["get_time"])[0]
    assert json.loads(_texts(seen["plain"])[0])["ran"] == "list_files"
    rows = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert not [
        r
        for r in rows
        if r.get("event") == "tools/call"
        and r.get("decision") == "forward"
        and r.get("tool") != "list_files"
    ]

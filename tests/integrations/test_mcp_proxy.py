"""``autofeedback mcp-proxy`` with real parts: a real MCP server (``mcp_servers/weather_server.py``,
the SDK's low-level ``Server``) as a subprocess behind the proxy, itself a subprocess, and the
SDK's ``ClientSession`` as the client, over stdio and over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the MCP SDK is the 'mcp' extra")

import mcp.types as types  # noqa: E402
from _support.mcp_proxy import LIMIT, PROXY, SERVER, _env, _proxied, _session, _text  # noqa: E402
from _support.ports import free_port  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from autofeedback.cli import run  # noqa: E402


def test_stdio_proxy_forwards_valid_calls_and_answers_bad_ones(tmp_path: Path) -> None:
    calls = {
        "get_weather": {"city": "Paris", "units": "metric"},
        "search_flights": {"route": {"from": "CDG", "to": "JFK"}, "dates": ["2025-05-01"]},
    }

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        with anyio.fail_after(LIMIT):
            async with _session([str(SERVER)]) as direct:
                seen["direct"] = {n: await direct.call_tool(n, a) for n, a in calls.items()}
            async with _session(
                _proxied(tmp_path, "--no-semantic", "--repeat-limit", "2", "--repair", "off"),
                errlog=stderr,
            ) as client:
                seen["tools"] = {t.name: t for t in (await client.list_tools()).tools}
                seen["proxied"] = {n: await client.call_tool(n, a) for n, a in calls.items()}
                seen["renamed"] = await client.call_tool("get_weather", {"City": "Paris"})
                seen["nested"] = await client.call_tool(
                    "search_flights", {"route": {"from": "CDG"}, "dates": "2025-05-01"}
                )
                with pytest.raises(MCPError) as unknown:
                    await client.call_tool("get_wether", {"city": "Paris"})
                seen["unknown"] = unknown.value
                seen["repeats"] = [
                    await client.call_tool("echo", {"text": "hi", "api_key": "sk-live-12345678"})
                    for _ in range(3)
                ]
                seen["terse"] = await client.call_tool("lookup_order", {"order_id": "42"})
        return seen

    with (tmp_path / "proxy.err").open("w+") as stderr:
        seen = anyio.run(scenario)
        stderr.seek(0)
        reported = stderr.read()

    # valid calls: forwarded, and the client gets exactly what a direct session gets
    for name in calls:
        assert seen["proxied"][name].model_dump() == seen["direct"][name].model_dump()
    assert seen["proxied"]["get_weather"].structured_content == {"city": "Paris", "temp": 21}

    # a wrong argument name, and wrong nested values: isError results carrying the feedback
    assert seen["renamed"].is_error
    assert "E3.2" in _text(seen["renamed"]) and "'city'" in _text(seen["renamed"])
    # worded as the tool call it was, as through the OpenAI proxy (issue 28)
    assert _text(seen["renamed"]).startswith("There is an error in your tool call.")
    assert "call the tool again" in _text(seen["renamed"]) and "API request" not in _text(
        seen["renamed"]
    )
    assert seen["nested"].is_error
    assert "E4.2" in _text(seen["nested"]) and "E4.1" in _text(seen["nested"])

    # an unknown tool: JSON-RPC -32602 with the suggestion
    assert seen["unknown"].code == types.INVALID_PARAMS
    assert "did you mean 'get_weather'" in seen["unknown"].message
    assert seen["unknown"].data["suggestion"] == "get_weather"

    # the same rejected call: feedback, then a firm stop at the limit (2)
    first, second, third = seen["repeats"]
    assert first.is_error and not _text(first).startswith("Stop repeating")
    assert _text(second).startswith("Stop repeating this call: echo")
    assert _text(third).startswith("Stop repeating")

    # a terse server error comes back with what the tool documents
    assert seen["terse"].is_error
    assert _text(seen["terse"]).startswith("bad id")
    assert "ORD- followed by 6 digits" in _text(seen["terse"])

    # the server's own broken schema: repaired for the client, reported on stderr and in the log
    tagged = seen["tools"]["tag_items"].input_schema
    assert tagged["properties"]["tags"] == {"type": "array", "items": {}}
    assert tagged["properties"]["limit"] == {"type": "integer"}
    assert tagged["properties"]["owner"] == {}
    assert "tool 'tag_items': inputSchema.properties.tags: array without items" in reported

    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    decisions = [r["decision"] for r in log if r["event"] == "tools/call"]
    assert decisions == [
        "forward",
        "forward",
        "invalid_arguments",
        "invalid_arguments",
        "unknown_tool",
        "invalid_arguments",
        "repeated",
        "repeated",
        "forward",
    ]
    assert {r["path"] for r in log if r["event"] == "schema"} == {
        "inputSchema.properties.tags",
        "inputSchema.properties.limit.type",
        "inputSchema.required",
    }
    text = (tmp_path / "log.jsonl").read_text()
    assert "sk-live-12345678" not in text and "[REDACTED]" in text


def test_stdio_proxy_forwards_a_call_it_can_repair_for_certain(tmp_path: Path) -> None:
    """The default ``--repair sure``: a misspelt argument name and a number written as
    text reach the server repaired (it answers as to the right call), and the decision
    log says what was repaired; what is not certain still comes back as feedback."""

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        with anyio.fail_after(LIMIT):
            async with _session([str(SERVER)]) as direct:
                seen["direct"] = await direct.call_tool("get_weather", {"city": "Paris"})
            async with _session(_proxied(tmp_path, "--no-semantic")) as client:
                seen["repaired"] = await client.call_tool("get_weather", {"City": "Paris"})
                seen["wrong"] = await client.call_tool(
                    "get_weather", {"city": "Paris", "units": "kelvin"}
                )
        return seen

    seen = anyio.run(scenario)
    # the server's answer, and what ran instead of the call as written (issue 43:
    # test_mcp_proxy_visible.py)
    direct, repaired = seen["direct"], seen["repaired"]
    assert repaired.content[: len(direct.content)] == direct.content
    assert repaired.structured_content == direct.structured_content
    assert repaired.meta["autofeedback"]["called"] == {
        "name": "get_weather",
        "arguments": {"city": "Paris"},
    }
    assert seen["wrong"].is_error and "units must be one of" in _text(seen["wrong"])
    rows = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    [repaired] = [r for r in rows if r.get("repairs")]
    assert repaired["decision"] == "forward" and repaired["codes"] == ["E3.2", "E3.4"]
    assert repaired["repairs"] == [
        {"code": "E3.2", "location": ["argument", "City"], "before": "City", "after": "city"}
    ]


def test_stdio_proxy_passes_on_list_changed_progress_prompts_and_resources(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[Any], list[str], types.CallToolResult]:
        notified: list[Any] = []
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                notified.append(message)

        with anyio.fail_after(LIMIT):
            async with _session(
                _proxied(tmp_path, "--no-semantic"), message_handler=on_message
            ) as client:
                before = {t.name for t in (await client.list_tools()).tools}
                assert "beta_forecast" not in before
                await client.call_tool("enable_beta", {})
                while not notified:
                    await anyio.sleep(0.05)
                after = [t.name for t in (await client.list_tools()).tools]
                result = await client.call_tool("beta_forecast", {"city": "Oslo"})

                async def on_progress(value: float, total: float | None, msg: str | None) -> None:
                    progress.append((value, total, msg))

                counted = await client.call_tool("count", {}, progress_callback=on_progress)
                assert _text(counted) == "3"
                # prompts and resources are not checked, only passed through
                prompts = await client.list_prompts()
                prompt = await client.get_prompt("trip", {"city": "Lima"})
                resources = await client.list_resources()
                cities = await client.read_resource("data://cities")
        # the server's progress reaches the client under the client's own token
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert [p.name for p in prompts.prompts] == ["trip"]
        assert prompt.messages[0].content == types.TextContent(
            type="text", text="Plan a trip to Lima."
        )
        assert [str(r.uri) for r in resources.resources] == ["data://cities"]
        assert [c.text for c in cities.contents if isinstance(c, types.TextResourceContents)] == [
            "Paris\nLima\nOslo"
        ]
        return notified, after, result

    notified, after, result = anyio.run(scenario)
    assert len(notified) == 1
    assert "beta_forecast" in after
    assert not result.is_error
    assert json.loads(_text(result)) == {"beta_forecast": {"city": "Oslo"}}


@contextmanager
def _process(args: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, *args], env=_env(), stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + LIMIT
        while True:
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read().decode() if proc.stderr else "exited")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise AssertionError(f"nothing listens on 127.0.0.1:{port}")
            time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


def test_streamable_http_on_both_sides_with_semantic_suggestions(tmp_path: Path) -> None:
    """Upstream over streamable HTTP, the proxy serving streamable HTTP, and the real
    embedding model behind the unknown-tool suggestion."""
    up, own = free_port(), free_port()
    upstream = f"http://127.0.0.1:{up}/mcp"
    proxy_args = [
        *PROXY,
        "--upstream-url",
        upstream,
        "--transport",
        "streamable-http",
        "--port",
        str(own),
        "--log",
        str(tmp_path / "log.jsonl"),
        "--upstream-header",
        "Authorization: Bearer test-token",
        "--repair",
        "off",  # the suggestion is fed back, not applied
    ]

    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult, MCPError]:
        nonlocal account
        with anyio.fail_after(LIMIT * 2):
            async with (
                streamable_http_client(f"http://127.0.0.1:{own}/mcp") as (read, write),
                ClientSession(read, write) as client,
            ):
                init = await client.initialize()
                assert init.capabilities.tools is not None
                assert init.capabilities.tools.list_changed  # passed on over HTTP too
                ok = await client.call_tool("get_weather", {"city": "Lima"})
                account = await client.call_tool("account", {})
                bad = await client.call_tool("get_weather", {"city": "Lima", "units": "kelvin"})
                with pytest.raises(MCPError) as unknown:
                    await client.call_tool("weather_now", {"city": "Lima"})
        return ok, bad, unknown.value

    account: types.CallToolResult | None = None
    with _process([str(SERVER), "--http", str(up)], up), _process(proxy_args, own):
        ok, bad, unknown = anyio.run(scenario)

    assert not ok.is_error and _text(ok) == "Sunny in Lima, 21 degrees"
    # --upstream-header reaches the server, and never the log
    assert account is not None and not account.is_error and _text(account) == "account 7"
    assert "test-token" not in (tmp_path / "log.jsonl").read_text()
    assert bad.is_error and "units must be one of 'metric', 'imperial'" in _text(bad)
    assert unknown.code == types.INVALID_PARAMS
    # no shared spelling with 'weather_now': the embedding model finds the tool
    assert unknown.data["suggestion"] == "get_weather"
    assert unknown.data["findings"][0]["code"] == "E2.3"


def test_cli_refuses_a_missing_or_double_upstream() -> None:
    err = StringIO()
    assert run(["mcp-proxy"], stdout=StringIO(), stderr=err) == 2
    # neither: say that nothing was given, not "not both" (issue 28)
    assert err.getvalue() == (
        "autofeedback: error: no server to wrap: give its command after '--' "
        "(autofeedback mcp-proxy -- python server.py) or its URL with --upstream-url\n"
    )
    err = StringIO()
    code = run(
        ["mcp-proxy", "--upstream-url", "http://127.0.0.1:9/mcp", "--", "python", "s.py"],
        stdout=StringIO(),
        stderr=err,
    )
    assert code == 2 and len(err.getvalue().splitlines()) == 1
    assert "not both" in err.getvalue()
    err = StringIO()
    code = run(
        ["mcp-proxy", "--log", "/nonexistent-folder/log.jsonl", "--", "python", "s.py"],
        stdout=StringIO(),
        stderr=err,
    )
    assert code == 2 and err.getvalue() == (
        "autofeedback: error: --log: no such folder: /nonexistent-folder\n"
    )


def test_a_port_in_use_is_one_error_line_before_the_server_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = StringIO()
        code = run(
            [
                *("mcp-proxy", "--transport", "streamable-http", "--port", str(port)),
                *("--no-semantic", "--", sys.executable, str(SERVER)),
            ],
            stdout=StringIO(),
            stderr=err,
        )
    assert code == 2
    assert err.getvalue() == (
        f"autofeedback: error: cannot listen on 127.0.0.1:{port}: the port is in use (is "
        "another server running there?); choose another with --port\n"
    )


def test_cli_names_the_extra_when_the_sdk_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # what an install without the extra sees
    err = StringIO()
    assert run(["mcp-proxy", "--", "python", "s.py"], stdout=StringIO(), stderr=err) == 2
    assert err.getvalue() == (
        "autofeedback: error: mcp-proxy needs the MCP SDK: pip install 'autofeedback-api[mcp]'\n"
    )


def test_cli_reports_an_unreachable_server_in_one_line(tmp_path: Path) -> None:
    err = StringIO()
    code = run(
        ["mcp-proxy", "--no-semantic", "--timeout", "20", "--", sys.executable, "-c", "pass"],
        stdout=StringIO(),
        stderr=err,
    )
    assert code == 2
    assert err.getvalue().startswith("autofeedback: error: mcp-proxy: cannot reach the server")
    assert len(err.getvalue().splitlines()) == 1


def test_a_2026_client_through_the_proxy_to_a_handshake_era_server(tmp_path: Path) -> None:
    """The SDK's high-level ``Client`` speaks the 2026-07-28 per-request envelope; the
    proxy's own session to the server is a handshake-era one, so the envelope's ``_meta``
    keys must not be forwarded (the server would refuse the call)."""
    from mcp import Client

    async def scenario() -> tuple[str | None, Any, Any, MCPError]:
        params = StdioServerParameters(
            command=sys.executable,
            args=_proxied(tmp_path, "--no-semantic", "--repair", "off"),
            env=_env(),
        )
        with anyio.fail_after(LIMIT):
            async with Client(params) as client:
                ok = await client.call_tool("get_weather", {"city": "Paris"})
                bad = await client.call_tool("get_weather", {"City": "Paris"})
                with pytest.raises(MCPError) as unknown:
                    await client.call_tool("get_wether", {"city": "Paris"})
                version = client.session.protocol_version
        return version, ok, bad, unknown.value

    version, ok, bad, unknown = anyio.run(scenario)
    assert version == "2026-07-28"
    assert not ok.is_error and ok.structured_content == {"city": "Paris", "temp": 21}
    assert bad.is_error and "E3.2" in _text(bad)
    assert unknown.code == types.INVALID_PARAMS

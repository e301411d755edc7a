"""``autofeedback mcp-proxy`` under real traffic (issue 29): a server that stops answering
``tools/list``, a server that crashes, huge tools and arguments, the decision log, the
host rule and SIGTERM. Real processes: the test server (``mcp_servers/weather_server.py``)
behind the real proxy, the SDK's ``ClientSession`` as the client."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the MCP SDK is the 'mcp' extra")

import mcp.types as types  # noqa: E402
from _support.ports import free_port  # noqa: E402
from _support.processes import children, cmdline, gone_within  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from autofeedback.cli import run  # noqa: E402
from autofeedback.integrations._mcp_gate import ToolGate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).parent / "mcp_servers" / "weather_server.py"
PROXY = ["-c", "from autofeedback.cli import main; main()", "mcp-proxy"]
LIMIT = 60


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def _events(path: Path) -> list[str]:
    """What the test server was asked (``WEATHER_EVENTS``), in order."""
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _until(condition: Callable[[], bool], what: str, limit: float = LIMIT) -> None:
    """Wait for ``condition``; ``limit`` only ends a test whose product never gets there
    (it is no bound on how fast the product is)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def test_a_server_that_stops_listing_is_asked_once_not_at_each_unknown_name(
    tmp_path: Path,
) -> None:
    """Each misspelt tool name listed the server again, and a server that did not answer
    made the client wait the whole --timeout (300 s) every time. Now the first unknown
    name lists it once more, the proxy gives up on the hung listing, and the next ones
    are answered from the list it has."""
    events = tmp_path / "events"
    # --repair off: a name one letter off would be repaired; this is about the listing
    args = [*PROXY, "--no-semantic", "--repair", "off", "--log", str(tmp_path / "log.jsonl"),
            "--", sys.executable, str(SERVER)]  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable,
        args=args,
        env=_env(WEATHER_HANG_RELIST="1", WEATHER_EVENTS=str(events)),
    )

    async def scenario() -> list[str]:
        # LIMIT ends a hang (the whole --timeout per name is 300 s); it times nothing
        with anyio.fail_after(LIMIT):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                assert _events(events) == ["listed"]
                # a listing is asked again only past its minimum interval: let it pass
                await anyio.sleep(2.5)
                for name in ("get_wether", "get_weathr", "weather"):
                    with pytest.raises(MCPError) as unknown:
                        await client.call_tool(name, {"city": "Oslo"})
                    assert unknown.value.error.code == types.INVALID_PARAMS
                ok = await client.call_tool("get_weather", {"city": "Oslo"})
                assert not ok.is_error
                return _events(events)

    # listed at the start, once more for the first unknown name (that listing never
    # answers), and not again for the two after it
    assert anyio.run(scenario) == ["listed", "listed"]


def test_a_server_that_crashes_ends_the_proxy() -> None:
    """The proxy stayed up answering from the dead server's list, and exited 0."""
    proc = subprocess.Popen(
        [sys.executable, *PROXY, "--no-semantic", "--", sys.executable, str(SERVER)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:

        def send(message: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})  # fmt: skip
        assert b'"id":1' in proc.stdout.readline().replace(b" ", b"")
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "crash", "arguments": {}}})  # fmt: skip
        # ends by itself, its client still connected (stdin open): LIMIT only ends a hang
        assert proc.wait(timeout=LIMIT) == 2
        assert not proc.stdin.closed
        err = proc.stderr.read().decode() if proc.stderr else ""
        assert "the server exited or closed its connection" in err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def test_one_wrong_argument_on_a_huge_tool_gets_short_feedback() -> None:
    """100,000 parameters and one wrong argument gave 790 KB of feedback."""
    props = {f"p{i}": {"type": "string"} for i in range(20_000)}
    gate = ToolGate(retriever=None, repair="off")  # feedback, not a dropped name
    gate.load([{"name": "big", "inputSchema": {"type": "object", "properties": props}}])
    decision = gate.check("big", {"p1": "x", "zzz": 1})
    assert decision.action == "invalid_arguments"
    assert len(decision.feedback) < 4_000, len(decision.feedback)
    assert gate.is_heavy("big", {"p1": "x"})  # checked in a worker thread by the proxy


def test_a_light_check_never_waits_for_a_heavy_one() -> None:
    """The gate's lock was held for a whole check: a light call checked on the event loop
    waited for a heavy one running in a worker thread, stalling the loop. Light checks
    made while a heavy one runs are answered before it ends (behind the lock, none could
    be but one that slipped in before the heavy check took it)."""
    props = {f"p{i}": {"type": "string"} for i in range(5_000)}
    gate = ToolGate(retriever=None, repair="off")  # feedback, not a dropped name
    small = {"type": "object", "properties": {"a": {"type": "string"}}}
    gate.load([
        {"name": "big", "inputSchema": {"type": "object", "properties": props}},
        {"name": "small", "inputSchema": small},
    ])  # fmt: skip
    heavy_args = {f"q{i}": "x" for i in range(150_000)}
    started, done = threading.Event(), threading.Event()

    def heavy() -> None:
        started.set()
        try:
            gate.check("big", heavy_args, conversation="h")
        finally:
            done.set()

    worker = threading.Thread(target=heavy)
    worker.start()
    assert started.wait(LIMIT)
    during = n = 0
    while not done.is_set():
        n += 1
        assert gate.check("small", {"b": n}, conversation="l").action == "invalid_arguments"
        during += not done.is_set()  # answered while the heavy check still ran
    worker.join()
    assert during >= 3, during


def test_the_log_is_private_and_keeps_a_bounded_part_of_each_call(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    # --repair off: the unknown 'note' would be dropped and the call forwarded
    args = [*PROXY, "--no-semantic", "--repair", "off", "--log", str(log), "--", sys.executable,
            str(SERVER)]  # fmt: skip
    params = StdioServerParameters(command=sys.executable, args=args, env=_env())
    huge = "x" * 2_000_000

    async def scenario() -> None:
        with anyio.fail_after(LIMIT):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                for _ in range(3):
                    bad = await client.call_tool("get_weather", {"city": "Oslo", "note": huge})
                    assert bad.is_error

    anyio.run(scenario)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    lines = log.read_text().splitlines()
    calls = [json.loads(line) for line in lines if '"tools/call"' in line]
    assert len(calls) == 3
    assert all(len(line) < 8_000 for line in lines)
    assert calls[0]["arguments"]["truncated"] is True
    assert calls[0]["arguments"]["chars"] > 2_000_000


def test_a_non_loopback_host_needs_allow_remote() -> None:
    err = StringIO()
    args = ["mcp-proxy", "--transport", "streamable-http", "--host", "0.0.0.0", "--",
            sys.executable, str(SERVER)]  # fmt: skip
    assert run(args, stdout=StringIO(), stderr=err) == 2
    assert "--allow-remote" in err.getvalue() and "Traceback" not in err.getvalue()


def _serve_http(*options: str, **env: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, *PROXY, "--no-semantic", "--transport", "streamable-http",
         "--port", str(port), *options, "--", sys.executable, str(SERVER)],
        stderr=subprocess.PIPE, env=_env(**env),
    )  # fmt: skip
    deadline = time.monotonic() + LIMIT
    while True:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        assert time.monotonic() < deadline
        time.sleep(0.1)


def _client_in_flight(port: int, seconds: float) -> tuple[threading.Thread, list[str]]:
    """A client session over streamable HTTP with a ``slow`` call in flight; the text of
    its answer once it has one."""
    answered: list[str] = []

    async def scenario() -> None:
        async with (
            streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            result = await client.call_tool("slow", {"seconds": seconds})
            answered.append(result.content[0].text)  # type: ignore[union-attr]

    def target() -> None:
        try:
            anyio.run(scenario)
        except BaseException:  # cut off by the proxy's shutdown: what the test expects
            return

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, answered


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_sigterm_with_a_session_and_a_slow_call_stops_within_the_grace(tmp_path: Path) -> None:
    """A call the server answers only after 600 s: the proxy still ends after SIGTERM,
    with the call in flight (the grace runs out)."""
    events = tmp_path / "events"
    proc, port = _serve_http("--shutdown-grace", "2", WEATHER_EVENTS=str(events))
    try:
        _, answered = _client_in_flight(port, 600)
        _until(lambda: "slow 600" in _events(events), "the call reached the server")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=2 * LIMIT) == -signal.SIGTERM
        assert answered == []  # ended with the call in flight
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def test_a_second_sigterm_ends_the_mcp_proxy_at_once(tmp_path: Path) -> None:
    """After the first SIGTERM the proxy takes no new connection and waits (a grace of
    600 s) for the call in flight; the second ends it with the call still in flight."""
    events = tmp_path / "events"
    proc, port = _serve_http(
        "--shutdown-grace", "600", "--host", "localhost", WEATHER_EVENTS=str(events)
    )
    try:
        _client_in_flight(port, 600)
        _until(lambda: "slow 600" in _events(events), "the call reached the server")
        proc.send_signal(signal.SIGTERM)
        _until(lambda: not _listening(port), "the proxy stopped listening")
        assert proc.poll() is None  # the call is still in flight at the server
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=2 * LIMIT) == -signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


@pytest.mark.xfail(
    strict=True,
    reason="the first SIGTERM cuts a streamable-HTTP client off at once (sse-starlette ends "
    "every event stream on uvicorn's exit signal), so a call in flight is never answered "
    "within the grace; the proxy only waits for its own call to the server",
)
def test_the_first_sigterm_lets_a_call_in_flight_get_its_answer(tmp_path: Path) -> None:
    events = tmp_path / "events"
    proc, port = _serve_http(
        "--shutdown-grace", "600", "--host", "localhost", WEATHER_EVENTS=str(events)
    )
    try:
        client, answered = _client_in_flight(port, 600)
        _until(lambda: "slow 600" in _events(events), "the call reached the server")
        proc.send_signal(signal.SIGTERM)
        _until(lambda: not _listening(port), "the proxy stopped listening")
        Path(f"{events}.release-600").touch()  # the server answers the call
        _until(lambda: bool(answered) or not client.is_alive(), "the client got its answer or left")
        assert answered == ["done"]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


# -- heavy calls in a worker process --------------------------------------------------------

_ECHO = {"name": "echo", "inputSchema": {"type": "object",
         "properties": {"text": {"type": "string"}}, "required": ["text"]}}  # fmt: skip


def test_the_worker_process_scans_a_call_as_the_proxy_would() -> None:
    """A thread checking a heavy call holds the proxy's GIL; the worker process does the
    same scan with the same listing, and says so where its listing is not the proxy's."""
    from autofeedback.integrations._gate_worker import GateWorker

    gate = ToolGate(retriever=None)
    gate.load([_ECHO])
    worker = GateWorker(retriever=None, repair="sure")
    big = {"text": "x", **{f"k{i}": i for i in range(5_000)}}
    try:
        worker.load([_ECHO])

        async def scans() -> list[Any]:
            return [
                await worker.scan("echo", big),
                await worker.scan("echo", {"text": "hi"}),
                await worker.scan("echo", {"text": 3}),
            ]

        there = anyio.run(scans)
        here = [
            gate.scan("echo", big),
            gate.scan("echo", {"text": "hi"}),
            gate.scan("echo", {"text": 3}),
        ]
        assert [c.decided.action for c in there] == [c.decided.action for c in here]
        assert [c.digest for c in there] == [c.digest for c in here]
        assert there[0].decided.findings == here[0].decided.findings
        assert there[1].decided.action == "forward"
        # the proxy's answer from the worker's scan is the one it would give alone
        # (each in a conversation of its own: a rejected call's repeats count per one)
        for args, checked in zip([big, {"text": "hi"}, {"text": 3}], there, strict=True):
            assert gate.check("echo", args, conversation=1, checked=checked) == gate.check(
                "echo", args, conversation=2
            )
        # a new listing reaches the worker before any call made after it
        other = {**_ECHO, "name": "shout"}
        worker.load([other])
        gate.load([other])
        after = anyio.run(worker.scan, "echo", {"text": "hi"})
        assert after is not None and after.decided.action != "forward"
        assert gate.check("echo", {"text": "hi"}, conversation=3, checked=after) == gate.check(
            "echo", {"text": "hi"}, conversation=4
        )
    finally:
        worker.close()


def test_the_cli_scans_heavy_calls_in_a_worker_process_that_dies_with_it() -> None:
    """Under ``autofeedback mcp-proxy`` a heavy call is scanned by a worker process (the
    answer is the same), and the worker never outlives the proxy, even one killed."""
    proc, port = _serve_http()
    big = {"text": "x", **{f"k{i}": i for i in range(20_000)}}

    async def scenario() -> tuple[Any, Any]:
        with anyio.fail_after(LIMIT):
            async with (
                streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                return await client.call_tool("echo", big), await client.call_tool(
                    "echo", {"text": "hi"}
                )

    try:
        heavy, light = anyio.run(scenario)
        workers = [p for p in children(proc.pid) if b"spawn_main" in cmdline(p)]
        assert len(workers) == 1  # one, beside the wrapped server
        assert heavy.is_error and "k0" in heavy.content[0].text  # the 20,000 names rejected
        assert not light.is_error
        proc.kill()  # no shutdown at all: the worker sees its parent gone
        proc.wait(timeout=10)
        assert gone_within(workers[0], 10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)

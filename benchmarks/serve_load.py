"""Do light clients of the three servers stay fast beside heavy neighbours and clients
that leave (issue 29)?

Each server runs as its real CLI process on 127.0.0.1; the clients are asyncio tasks in
this process, each on its own keep-alive connection, one request at a time (bounded:
``--light`` light clients plus the neighbours below):

* ``autofeedback proxy`` in front of a scripted OpenAI-compatible upstream (its own
  process: answers after a scripted delay, 500s on request, counts the calls it got).
  Light clients ask for one valid tool call (upstream delay 50 ms; one request in ten is
  answered 500 by the upstream and must come back as that 500). The *heavy* neighbour
  sends, in turn, a chat of 3,000 earlier tool steps (checked as one sequence), a new
  5,000-property tool with a reply of 2,000 misspelt names, a tool whose 20 parameters
  have a back-reference ``pattern`` (RE2 cannot run it) answered with 2,900-character
  values (a 60 KB body, under the size checked inline), and a request whose upstream
  answer never ends (the proxy must stop at ``--max-body-mb`` and answer 502). The *leavers* ask
  through a 3 s upstream that answers a wrong call (the proxy would ask twice more) and
  hang up after 0.3 s.
* ``autofeedback mcp-proxy --transport streamable-http`` in front of the test suite's
  weather server (stdio); light clients call ``echo``; the heavy neighbour sends calls of
  20,000 unknown argument names; the leavers start a 3 s ``slow`` call and cancel it.
* ``autofeedback sandbox`` on the bookshop spec; light clients ``GET /books``; the heavy
  neighbour posts ~900 KB order bodies; the leavers dribble a header line every 0.5 s
  and never finish a request (slowloris).

The light clients run throughout; the neighbours run in their own process (so that
their client-side work never delays the light clients' measurements) during the second
part of each round: rounds of 10 s alone, then 8 s beside them, alternating, so that
both windows see the same load from the rest of the shared machine. Per server and
window: the light clients' latency p50/p99 (for the proxy, *added* latency: minus the
upstream's scripted 50 ms), their requests and errors, the neighbours' requests and
errors, upstream calls per client request (proxy), the server's RSS at the start and at
most, and the ratio of the light p99 beside the neighbours to the light p99 alone: the
target is at most 2x.

    python benchmarks/serve_load.py                 # about 4 minutes, writes RESULTS.md
    python benchmarks/serve_load.py --rounds 2 --no-write
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._results import write_section  # noqa: E402

SERVER = ROOT / "tests" / "integrations" / "mcp_servers" / "weather_server.py"
BOOKSHOP = ROOT / "specs" / "examples" / "bookshop.yaml"
LIGHT_DELAY = 0.05
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
USER = [{"role": "user", "content": "Weather in Paris?"}]


# -- the scripted upstream (its own process) ---------------------------------------------


def _completion(arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"name": "get_weather", "arguments": json.dumps(arguments)}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "call_1", "type": "function", "function": call}],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def serve_upstream(port: int) -> None:
    """The scripted upstream: ``x_script`` in the request body says how to answer."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    calls: Counter[str] = Counter()

    async def chat(request: Request) -> Response:
        body = await request.json()
        script = body.get("x_script") or {}
        calls[script.get("kind", "other")] += 1
        await asyncio.sleep(float(script.get("delay", 0.0)))
        if script.get("fault"):
            return JSONResponse({"error": {"message": "scripted fault"}}, 500)
        if script.get("endless"):

            async def forever() -> Any:
                chunk = b'{"pad": "' + b"x" * (1 << 20)
                while True:
                    yield chunk
                    await asyncio.sleep(0)  # the loop turns: a proxy that hangs up is seen

            return StreamingResponse(forever(), media_type="application/json")
        return JSONResponse(_completion(script.get("args") or {"city": "Paris"}))

    async def stats(request: Request) -> Response:
        return JSONResponse(dict(calls))

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/stats", stats),
        ]
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


# -- helpers ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _start(args: list[str], port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, *args],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{args[:4]} did not start on port {port}")
        time.sleep(0.1)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Phase:
    """What the light clients (and, merged in, the neighbours) saw."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []  # (when it ended, light latency s)
        self.failed: list[float] = []  # when a light request failed
        self.errors = 0  # the neighbours' unexpected answers
        self.counts: Counter[str] = Counter()
        self.rss_start = 0
        self.rss_max = 0

    def ok(self, took: float) -> None:
        self.samples.append((time.monotonic(), took))

    def fail(self) -> None:
        self.failed.append(time.monotonic())


#: Each round: the light clients alone for OFF seconds (the first SKIP of them not
#: counted: work the neighbours left in flight may still run), then ON seconds beside the
#: heavy neighbour, alone again, then ON seconds beside the leavers. Interleaved, every
#: window sees the same load from the rest of the machine.
OFF, ON, SKIP = 10.0, 8.0, 4.0
ROUND = 2 * (OFF + ON)


class Window:
    def __init__(self, phase: Phase, spans: list[tuple[float, float]]) -> None:
        inside = [any(a <= t <= b for a, b in spans) for t, _ in phase.samples]
        self.light = [took for (t, took), keep in zip(phase.samples, inside, strict=True) if keep]
        self.errors = sum(1 for t in phase.failed if any(a <= t <= b for a, b in spans))


def _windows(start: float, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """Per kind (``alone``, ``heavy``, ``leavers``), the spans of its windows."""
    out: dict[str, list[tuple[float, float]]] = {"alone": [], "heavy": [], "leavers": []}
    for r in range(rounds):
        at = start + r * ROUND
        for kind, offset in (("heavy", 0.0), ("leavers", OFF + ON)):
            out["alone"].append((at + offset + SKIP, at + offset + OFF))
            out[kind].append((at + offset + OFF, at + offset + OFF + ON))
    return out


async def _clients(
    seconds: float, clients: list[Callable[[Phase], Awaitable[None]]], phase: Phase
) -> None:
    async def loop(client: Callable[[Phase], Awaitable[None]]) -> None:
        while True:
            await client(phase)

    tasks = [asyncio.create_task(loop(c)) for c in clients]
    await asyncio.sleep(seconds)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _run_rounds(
    pid: int,
    rounds: int,
    light: list[Callable[[Phase], Awaitable[None]]],
    neighbours: list[str],
) -> tuple[Phase, dict[str, Window]]:
    """The light clients (here) for ``rounds`` rounds (see :data:`ROUND`), the
    ``neighbours`` (``--neighbours`` arguments of this script) in another process during
    their windows, so that their own CPU work never delays the light clients' event loop;
    the server's RSS sampled throughout."""
    phase = Phase()
    proc = psutil.Process(pid)
    start = time.monotonic() + 8.0  # the neighbours' process starts and builds its bodies
    others = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).resolve()), "--neighbours", *neighbours,
        "--start", repr(start), "--rounds", str(rounds), env=_env(),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    await _clients(3.0, light, Phase())  # warm up
    phase.rss_start = phase.rss_max = proc.memory_info().rss

    async def sample() -> None:
        while True:
            phase.rss_max = max(phase.rss_max, proc.memory_info().rss)
            await asyncio.sleep(0.25)

    sampler = asyncio.create_task(sample())
    await _clients(start + rounds * ROUND - time.monotonic(), light, phase)
    out, _ = await others.communicate()
    report = json.loads(out.decode().strip().splitlines()[-1])
    phase.counts.update(report["counts"])
    phase.errors += report["errors"]
    sampler.cancel()
    return phase, {k: Window(phase, spans) for k, spans in _windows(start, rounds).items()}


# -- the proxy ---------------------------------------------------------------------------


def _history(steps: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = list(USER)
    for i in range(steps):
        call = {"name": "get_weather", "arguments": json.dumps({"city": f"city{i}"})}
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"c{i}", "type": "function", "function": call}],
            }
        )
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"t": i})})
    return out


LIGHT_BODY = {"model": "m", "messages": USER, "tools": [TOOL]}


def _proxy_light(url: str) -> Callable[[Phase], Awaitable[None]]:
    client = httpx.AsyncClient(timeout=60)
    n = [0]

    async def one(phase: Phase) -> None:
        n[0] += 1
        fault = n[0] % 10 == 0
        script: dict[str, Any] = {"kind": "light-fault" if fault else "light", "delay": LIGHT_DELAY}
        if fault:
            script["fault"] = True
        started = time.perf_counter()
        try:
            answer = await client.post(url, json={**LIGHT_BODY, "x_script": script})
        except httpx.HTTPError:
            phase.fail()
            return
        took = time.perf_counter() - started
        phase.counts["light-fault" if fault else "light"] += 1
        if answer.status_code != (500 if fault else 200):
            phase.fail()
        elif not fault:
            phase.ok(took - LIGHT_DELAY)
        await asyncio.sleep(0.02)

    return one


Clients = list[Callable[[Phase], Awaitable[None]]]


def _proxy_neighbours(url: str, leavers: int) -> tuple[Clients, Clients]:
    history = json.dumps(
        {"model": "m", "messages": _history(3_000), "tools": [TOOL], "x_script": {"kind": "heavy"}}
    ).encode()
    props = {f"field_{i}": {"type": "string"} for i in range(5_000)}
    misspelt = {f"feild_{i}": "x" for i in range(2_000)}
    tools = []  # a new tools list each time: the proxy builds a scanner for each
    for n in range(64):
        tool = {"type": "function", "function": {"name": f"big{n}", "parameters": {
            "type": "object", "properties": props}}}  # fmt: skip
        body = {"model": "m", "messages": USER, "tools": [tool],
                "x_script": {"kind": "heavy", "args": misspelt}}  # fmt: skip
        tools.append(json.dumps(body).encode())
    # a back-reference pattern (RE2 cannot run it) on 20 parameters, 2,900-character
    # values: a 60 KB body, under the size the proxy checks inline
    backref_props = {f"p{i}": {"type": "string", "pattern": r"^(\w+)+\1$"} for i in range(20)}
    backref_tool = {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": backref_props}}}  # fmt: skip
    values = {f"p{i}": "ab" * 1450 + "!" for i in range(20)}
    backref = json.dumps({"model": "m", "messages": USER, "tools": [backref_tool],
                          "x_script": {"kind": "backref", "args": values}}).encode()  # fmt: skip
    endless = json.dumps({**LIGHT_BODY, "x_script": {"kind": "endless", "endless": True}}).encode()
    # what each turn sends, and the status it must get (502: the endless answer is cut)
    # the first turn (index 1) is the back-reference body, then the endless answer
    turns = [("heavy", None, 200), ("backref", backref, 200), ("endless", endless, 502),
             ("heavy", history, 200)]  # fmt: skip
    heavy_client = httpx.AsyncClient(timeout=300)
    turn = [0]

    async def heavy(phase: Phase) -> None:
        turn[0] += 1
        kind, content, status = turns[turn[0] % len(turns)]
        if content is None:
            content = tools[(turn[0] // len(turns)) % len(tools)]
        try:
            answer = await heavy_client.post(
                url, content=content, headers={"content-type": "application/json"}
            )
            phase.counts[kind] += 1
            if answer.status_code != status:
                phase.errors += 1
        except httpx.HTTPError:
            phase.errors += 1

    def leaver() -> Callable[[Phase], Awaitable[None]]:
        client = httpx.AsyncClient(timeout=0.3)  # a timed-out request closes its connection
        body = {**LIGHT_BODY, "x_script": {"kind": "leaver", "delay": 3.0, "args": {"town": "x"}}}

        async def one(phase: Phase) -> None:
            phase.counts["leaver"] += 1
            with contextlib.suppress(httpx.TimeoutException):
                await client.post(url, json=body)
            await asyncio.sleep(1.0)

        return one

    return [heavy], [leaver() for _ in range(leavers)]


async def proxy_phases(rounds: int, n_light: int, n_leavers: int) -> list[list[str]]:
    up_port, port = _free_port(), _free_port()
    upstream = _start([str(Path(__file__).resolve()), "--serve-upstream", str(up_port)], up_port)
    proxy = _start(
        ["-c", "from autofeedback.cli import main; main()", "proxy", "--upstream",
         f"http://127.0.0.1:{up_port}/v1", "--port", str(port)],
        port,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1/chat/completions"

    async def upstream_calls() -> Counter[str]:
        async with httpx.AsyncClient() as c:
            return Counter((await c.get(f"http://127.0.0.1:{up_port}/stats")).json())

    rows = []
    try:
        lights = [_proxy_light(url) for _ in range(n_light)]
        before = await upstream_calls()
        phase, windows = await _run_rounds(
            proxy.pid, rounds, lights, ["proxy", url, str(n_leavers)]
        )
        await asyncio.sleep(3.5)  # the leavers' upstream calls would have gone on
        calls = await upstream_calls() - before
        per = ", ".join(
            f"{kind} {calls[kind] / phase.counts[kind]:.2f}"
            for kind in ("light", "heavy", "backref", "endless", "leaver")
            if phase.counts[kind]
        )
        note = f"{phase.counts['light-fault']} upstream 500s passed on"
        rows = _rows("proxy", phase, windows, per, note)
    finally:
        _stop(proxy)
        _stop(upstream)
    return rows


# -- the MCP proxy ---------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _mcp_sessions(url: str, n: int) -> Any:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with contextlib.AsyncExitStack() as stack:
        sessions = []
        for _ in range(n):
            read, write = await stack.enter_async_context(streamable_http_client(url))
            client = await stack.enter_async_context(ClientSession(read, write))
            await client.initialize()
            sessions.append(client)
        yield sessions


def _mcp_light(client: Any) -> Callable[[Phase], Awaitable[None]]:
    async def one(phase: Phase) -> None:
        started = time.perf_counter()
        try:
            result = await client.call_tool("echo", {"text": "hello"})
        except Exception:
            phase.fail()
            return
        phase.counts["light"] += 1
        if result.is_error:
            phase.fail()
        else:
            phase.ok(time.perf_counter() - started)
        await asyncio.sleep(0.02)

    return one


def _mcp_neighbours(sessions: list[Any]) -> tuple[Clients, Clients]:
    import anyio

    big = {"text": "x", **{f"k{i}": i for i in range(20_000)}}

    async def heavy(phase: Phase) -> None:
        try:
            result = await sessions[0].call_tool("echo", big)
            phase.counts["heavy"] += 1
            if not result.is_error:
                phase.errors += 1  # 20,000 unknown names must be rejected
        except Exception:
            phase.errors += 1

    def leaver(client: Any) -> Callable[[Phase], Awaitable[None]]:
        async def one(phase: Phase) -> None:
            phase.counts["leaver"] += 1
            with contextlib.suppress(Exception), anyio.move_on_after(0.3):
                await client.call_tool("slow", {"seconds": 3})
            await asyncio.sleep(1.0)

        return one

    return [heavy], [leaver(c) for c in sessions[1:]]


async def mcp_phases(rounds: int, n_light: int, n_leavers: int) -> list[list[str]]:
    port = _free_port()
    proxy = _start(
        ["-c", "from autofeedback.cli import main; main()", "mcp-proxy", "--no-semantic",
         "--transport", "streamable-http", "--port", str(port), "--", sys.executable,
         str(SERVER)],
        port,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    rows = []
    try:
        async with _mcp_sessions(url, n_light) as sessions:
            lights = [_mcp_light(c) for c in sessions]
            phase, windows = await _run_rounds(
                proxy.pid, rounds, lights, ["mcp", url, str(n_leavers)]
            )
        rows = _rows("mcp-proxy", phase, windows, "", "")
    finally:
        _stop(proxy)
    return rows


# -- the sandbox -------------------------------------------------------------------------------


def _sandbox_light(base: str) -> Callable[[Phase], Awaitable[None]]:
    client = httpx.AsyncClient(timeout=60)

    async def one(phase: Phase) -> None:
        started = time.perf_counter()
        try:
            answer = await client.get(base + "/books", params={"query": "dune"})
        except httpx.HTTPError:
            phase.fail()
            return
        phase.counts["light"] += 1
        if answer.status_code != 200:
            phase.fail()
        else:
            phase.ok(time.perf_counter() - started)
        await asyncio.sleep(0.02)

    return one


def _sandbox_neighbours(base: str, leavers: int) -> tuple[Clients, Clients]:
    order = json.dumps({"book_id": 7, "quantity": 1, "note": "x" * 900_000}).encode()
    client = httpx.AsyncClient(timeout=60)
    host, port = base.removeprefix("http://").split(":")

    async def heavy(phase: Phase) -> None:
        try:
            answer = await client.post(
                base + "/orders", content=order, headers={"content-type": "application/json"}
            )
            phase.counts["heavy"] += 1
            if answer.status_code != 400:  # `note` is no documented field
                phase.errors += 1
        except httpx.HTTPError:
            phase.errors += 1

    async def leaver(phase: Phase) -> None:
        phase.counts["leaver"] += 1
        with contextlib.suppress(OSError):
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(b"GET /books?query=x HTTP/1.1\r\n")
            for _ in range(100):  # a header line every 0.5 s, never the end
                await writer.drain()
                await asyncio.sleep(0.5)
                if reader.at_eof():
                    break
                writer.write(b"X-Slow: 1\r\n")
            writer.close()

    return [heavy], [leaver] * leavers


async def sandbox_phases(rounds: int, n_light: int, n_leavers: int) -> list[list[str]]:
    port = _free_port()
    sandbox = _start(
        ["-c", "from autofeedback.cli import main; main()", "sandbox", "--spec", str(BOOKSHOP),
         "--port", str(port)],
        port,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    rows = []
    try:
        lights = [_sandbox_light(base) for _ in range(n_light)]
        phase, windows = await _run_rounds(
            sandbox.pid, rounds, lights, ["sandbox", base, str(n_leavers)]
        )
        rows = _rows("sandbox", phase, windows, "", "")
    finally:
        _stop(sandbox)
    return rows


async def neighbours(kind: str, target: str, leavers: int, start: float, rounds: int) -> None:
    """The heavy neighbour and the leavers (run in their own process): during the ON
    window of each round, from ``start`` (a ``time.monotonic()`` of this machine)."""
    phase = Phase()

    async def windows(heavy: Clients, leavers: Clients) -> None:
        for r in range(rounds):
            for clients, offset in ((heavy, 0.0), (leavers, OFF + ON)):
                at = start + r * ROUND + offset + OFF
                await asyncio.sleep(max(0.0, at - time.monotonic()))
                await _clients(max(0.0, at + ON - time.monotonic()), clients, phase)

    if kind == "proxy":
        await windows(*_proxy_neighbours(target, leavers))
    elif kind == "mcp":
        async with _mcp_sessions(target, 1 + leavers) as sessions:
            await windows(*_mcp_neighbours(sessions))
    else:
        await windows(*_sandbox_neighbours(target, leavers))
    print(json.dumps({"counts": dict(phase.counts), "errors": phase.errors}), flush=True)


# -- the table ---------------------------------------------------------------------------------


def _rows(
    server: str, phase: Phase, windows: dict[str, Window], per: str, note: str
) -> list[list[str]]:
    base = _pct(windows["alone"].light, 0.99)
    others = ", ".join(f"{k} {v}" for k, v in sorted(phase.counts.items()) if k != "light")
    rss = f"{phase.rss_start / 2**20:.0f} / {phase.rss_max / 2**20:.0f}"
    out = []
    for kind, name in (
        ("alone", "light alone"),
        ("heavy", "beside the heavy neighbour"),
        ("leavers", "beside the leavers"),
    ):
        window = windows[kind]
        p99 = _pct(window.light, 0.99)
        out.append(
            [
                server,
                name,
                str(len(window.light)),
                f"{_pct(window.light, 0.5) * 1000:.1f}",
                f"{p99 * 1000:.1f}",
                f"{p99 / base:.2f}x",
                str(window.errors),
                "",
                "",
                "",
                "",
                "",
            ]
        )
    out[0][7:] = [others or "-", str(phase.errors), per or "-", rss, note]
    return out


async def run_all(args: argparse.Namespace) -> list[list[str]]:
    rows = await proxy_phases(args.rounds, args.light, args.leavers)
    rows += await mcp_phases(args.rounds, args.light, args.leavers)
    rows += await sandbox_phases(args.rounds, args.light, args.leavers)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=2, help="rounds of four windows (default 2)")
    ap.add_argument("--light", type=int, default=8, help="light clients (default 8)")
    ap.add_argument("--leavers", type=int, default=10, help="clients that leave (default 10)")
    ap.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--neighbours", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--start", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return 0
    if args.neighbours:
        kind, target, leavers = args.neighbours
        asyncio.run(neighbours(kind, target, int(leavers), args.start, args.rounds))
        return 0
    load = os.getloadavg()[0]
    started = time.monotonic()
    rows = asyncio.run(run_all(args))
    header = [
        "server", "phase", "light requests", "light p50 ms", "light p99 ms",
        "p99 / alone", "light errors", "neighbour requests", "neighbour errors",
        "upstream calls per request", "RSS MB start / max",
    ]  # fmt: skip
    lines = ["| " + " | ".join(header) + " | notes |", "|" + "---|" * (len(header) + 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += [
        "",
        f"{args.light} light clients, one request at a time with 20 ms between, for "
        f"{args.rounds} rounds of four windows: {OFF:.0f} s alone (the first {SKIP:.0f} s "
        f"not counted), {ON:.0f} s beside the heavy neighbour, {OFF:.0f} s alone, {ON:.0f} s "
        f"beside {args.leavers} leavers (neighbours run in another process), after a 3 s "
        "warm-up. Proxy latencies are added latency (total minus the upstream's scripted "
        "50 ms); the MCP proxy's and the sandbox's are the whole call. The target: the light "
        "p99 beside the heavy neighbour at most 2x the p99 alone. Light errors: a request "
        "that failed or got another answer than 200 (the upstream's 500 for one light proxy "
        "request in ten); neighbour errors: an answer other than the expected one (200; an "
        "isError result for the MCP heavy calls; 400 for the sandbox's heavy bodies). "
        "Upstream calls per request: a leaver's would be 3 if the proxy went on asking after "
        "it hung up; a heavy request cut at the end of its window counts its calls but not "
        "itself. "
        f"Shared 2-core VM, load average {load:.1f} at the start, "
        f"{time.monotonic() - started:.0f} s in all: compare ratios, not absolute times.",
    ]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        command = "python benchmarks/serve_load.py"
        if args.rounds != 2:
            command += f" --rounds {args.rounds}"
        write_section("Servers under load", command, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())

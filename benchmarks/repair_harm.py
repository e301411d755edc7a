"""Does a repair ever change what a call does? (issue 43, item 7)

**(a) Designed cases** (``benchmarks/_harm_cases.py``): every row of issue 43's table,
287 generated cases over operation and parameter pairs (effect pairs, one letter another
word, opposites, scope and safety flags a spec leaves out, lossy values, inserted
producers, HTTP methods, unreadable specs), and controls that must still be repaired.
Each case goes through every entry point that applies, each as its user runs it, with
its defaults (``repair="sure"``, the semantic checks on):

* ``decide_tool_calls``: the model's message, the tools, the user's words;
* ``guard``: a tool function decorated with ``guard(tools)``, called with the model's
  arguments (cases whose call names a documented tool); sent = what the function got;
* ``audit --fix``: ``autofeedback audit LOG --fix --format jsonl`` in-process (one record
  per case: a call with its tools, a request with ``--spec``, or a one-line program with
  ``--spec`` for the inserted producers); sent = the record's ``repaired``;
* ``proxy``: ``autofeedback proxy``'s app under uvicorn on 127.0.0.1, in front of a
  scripted upstream on 127.0.0.1 that answers every round with the case's call (the
  model insists); sent = the tool call the client gets;
* ``mcp-proxy``: :class:`McpProxy` connected to a real MCP SDK server (streamable HTTP on
  127.0.0.1) that lists the case's tools with their annotations and records each call,
  and the SDK's ``Client`` in front of it; sent = what the server received;
* ``requests guard``: ``guard_session(session, spec)`` (mode ``raise``) against a real
  HTTP server on 127.0.0.1 that records every request; the case's tools rendered as an
  OpenAPI document (``_harm_cases.openapi_for``);
* ``ReactRunner`` (every call that an OpenAPI operation can carry) and ``ProgramRunner``
  (the inserted producers), each with a scripted model that writes the case's call on
  every turn, against the same recording server; sent = what the server received / the
  program taken.

Per case and entry point, the outcome: **harmful** (what was sent or written differs from
the model's call: another operation, a value dropped, a parameter renamed, a value
changed, a call inserted; for a control, anything but its one certain repair),
**withheld** (not sent: fed back, rejected or reported), **as written** (sent unchanged)
or, for controls, **kept** (the certain repair made). A crash is counted apart.

**(b) Natural mistakes** (``benchmarks/_harm_natural.py``): the local 1.5B model's answers
to BFCL tasks, and the 0.5B model's (more mistakes, so more repairs), cached in
``benchmarks/.work/repair_harm/`` (``--answers`` names another cache); ``--generate`` asks
the models for the tasks not cached yet (40-110 s a task for the 1.5B model on 2 busy
cores). Each call is decided by ``Decider(Scanner(catalog), repair="sure")`` and scored
against BFCL's possible answers before and after its repair.

    python benchmarks/repair_harm.py                    # (a), and (b) from the cache
    python benchmarks/repair_harm.py --part a --no-write
    python benchmarks/repair_harm.py --part b --generate --tasks 200 --llm local:1.5b
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._harm_cases import (  # noqa: E402
    Case,
    all_cases,
    canon_call,
    canon_http,
    http_call,
    openapi_for,
)
from benchmarks._harm_natural import ANSWERS  # noqa: E402
from benchmarks._results import write_section  # noqa: E402

#: every (a) outcome of the last run, one JSON line each (gitignored)
OUTCOMES = ROOT / "benchmarks" / ".work" / "repair_harm" / "outcomes-a.jsonl"
HARMFUL, WITHHELD, AS_WRITTEN, KEPT, CRASHED = (
    "harmful",
    "withheld",
    "as written",
    "kept",
    "crashed",
)
DOORS = (
    "decide_tool_calls",
    "guard",
    "audit --fix",
    "proxy",
    "mcp-proxy",
    "requests guard",
    "ReactRunner",
    "ProgramRunner",
)
#: doors that see the call as a tool call, and those that see it as HTTP
TOOL_DOORS = ("decide_tool_calls", "guard", "proxy", "mcp-proxy")
HTTP_DOORS = ("requests guard", "ReactRunner")


@dataclass(frozen=True)
class Outcome:
    door: str
    case: str
    outcome: str
    sent: str = ""
    note: str = ""


def applies(case: Case, door: str) -> bool:
    """Whether ``door`` sees ``case`` (a call it could be given in its own transport)."""
    if door in case.skip:
        return False
    if door == "guard":
        return case.spec is None and case.documented(case.call[0])
    if door == "ProgramRunner":
        return case.sequence
    if door in TOOL_DOORS:
        return case.spec is None
    return True


def classify_call(case: Case, sent: tuple[str, Any] | None) -> str:
    """The outcome of a tool-call door that sent ``sent`` (``None``: nothing)."""
    if sent is None:
        return WITHHELD
    key = canon_call(*sent)
    if case.repaired is not None and key == canon_call(*case.repaired):
        return KEPT
    if key == canon_call(*case.call):
        return AS_WRITTEN
    return HARMFUL


def _http_key(request: Mapping[str, Any]) -> str:
    return canon_http(
        request["method"], request["path"], request.get("query") or {}, request.get("body")
    )


def classify_http(case: Case, received: Sequence[Mapping[str, Any]]) -> str:
    """The outcome of an HTTP door whose server received ``received``."""
    if not received:
        return WITHHELD
    keys = {_http_key(r) for r in received}
    model = http_call(case)
    mine = {_http_key(model)} if model is not None else set()
    if case.repaired is not None:
        fixed = http_call(_with_call(case, case.repaired))
        if fixed is not None and keys == {_http_key(fixed)}:
            return KEPT
    if keys <= mine:
        return AS_WRITTEN
    return HARMFUL


def _with_call(case: Case, call: tuple[str, dict[str, Any]]) -> Case:
    from dataclasses import replace

    return replace(case, call=call, request=None)


def _short(value: Any, n: int = 140) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = text.replace("\n", " ⏎ ")  # a program's lines, on one line of the table
    return text if len(text) <= n else text[: n - 1] + "…"


# -- the recording server -------------------------------------------------------------------


class Recorder:
    """A real HTTP server on 127.0.0.1: every request under ``/c/<n>/`` is recorded for
    case ``n`` and answered with the case's documented response (200/201 JSON)."""

    def __init__(self) -> None:
        self.seen: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self.cases: dict[int, Case] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def base(self, n: int) -> str:
        return f"http://127.0.0.1:{self.port}/c/{n}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = urlsplit(self.path)
                bits = parts.path.split("/", 3)  # '', 'c', n, rest
                try:
                    n = int(bits[2])
                except (IndexError, ValueError):
                    n = -1
                rest = "/" + (bits[3] if len(bits) > 3 else "")
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                recorder.seen[n].append(
                    {
                        "method": self.command,
                        "path": rest,
                        "query": dict(parse_qsl(parts.query, keep_blank_values=True)),
                        "body": body,
                    }
                )
                status, answer = 200, {"ok": True}
                case = recorder.cases.get(n)
                if case is not None:
                    for t in case.tools:
                        if rest.rstrip("/") == "/" + t.name and t.response is not None:
                            status, answer = (201 if t.http_method == "POST" else 200), t.response
                data = json.dumps(answer).encode()
                if self.command == "HEAD":
                    data = b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_spec(case: Case, base: str, folder: Path) -> Path:
    """The case's OpenAPI document (and sibling files) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in case.files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    path = folder / "openapi.json"
    path.write_text(
        json.dumps(openapi_for(case, base), ensure_ascii=False, indent=1), encoding="utf-8"
    )
    return path


def program_of(case: Case) -> str:
    """The call as a one-line program (for the inserted producers)."""
    name, args = case.call
    inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"result = {name}({inner})"


def _same_program(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


# -- the doors ----------------------------------------------------------------------------------


def run_decide_tool_calls(case: Case) -> Outcome:
    from autofeedback import decide_tool_calls

    name, args = case.call
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
        ],
    }
    d = decide_tool_calls(message, case.openai_tools(), instruction=case.instruction)
    if not d.ok:
        return Outcome("decide_tool_calls", case.id, WITHHELD)
    sent = (d.calls[0].name, dict(d.calls[0].arguments or {}))
    return Outcome("decide_tool_calls", case.id, classify_call(case, sent), _short(sent))


def run_guard(case: Case) -> Outcome:
    from autofeedback import ToolCallRejected, guard

    name, args = case.call
    got: list[dict[str, Any]] = []

    def tool_fn(**kwargs: Any) -> str:
        got.append(kwargs)
        return "done"

    guarded = guard(case.openai_tools(), name)(tool_fn)
    try:
        guarded(**args)
    except ToolCallRejected:
        return Outcome("guard", case.id, WITHHELD)
    sent = (name, got[0]) if got else None
    return Outcome("guard", case.id, classify_call(case, sent), _short(sent))


def run_audit(cases: Sequence[Case], recorder: Recorder, work: Path) -> list[Outcome]:
    """One in-process ``autofeedback audit --fix`` for the tool-call records, one per
    spec for the others."""
    from autofeedback.cli import run as cli_run

    def audit(records: list[dict[str, Any]], spec: Path | None) -> dict[str, dict[str, Any]]:
        log = work / f"audit-{len(list(work.glob('audit-*')))}.jsonl"
        log.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )
        argv = ["audit", str(log), "--fix", "--format", "jsonl"]
        if spec is not None:
            argv += ["--spec", str(spec)]
        out, err = io.StringIO(), io.StringIO()
        cli_run(argv, out, err)
        results: dict[str, dict[str, Any]] = {}
        for line in out.getvalue().splitlines():
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                results[str(item.get("id"))] = item
        if not results:
            raise RuntimeError(f"audit printed nothing: {err.getvalue()[-500:]}")
        return results

    outcomes: list[Outcome] = []
    plain = [c for c in cases if c.spec is None and not c.sequence and applies(c, "audit --fix")]
    # records are numbered, not named: a case's name may hold the secret its call carries
    # (``cvv '0123'``), which the audit masks in record ids as everywhere
    records = [
        {
            "id": f"case-{n}",
            "instruction": c.instruction,
            "tools": c.openai_tools(),
            "call": {"name": c.call[0], "arguments": c.call[1]},
        }
        for n, c in enumerate(plain)
    ]
    results = audit(records, None) if records else {}
    for n, c in enumerate(plain):
        outcomes.append(_audit_outcome(c, results.get(f"case-{n}"), "call"))
    for n, c in enumerate(cases):
        if c in plain or not applies(c, "audit --fix"):
            continue
        spec = write_spec(c, recorder.base(n), work / f"audit-spec-{n}")
        if c.sequence:
            record = {"id": f"case-{n}", "instruction": c.instruction, "output": program_of(c)}
            form = "program"
        else:
            req = http_call(c)
            assert req is not None
            record = {
                "id": f"case-{n}",
                "instruction": c.instruction,
                "request": {
                    "method": req["method"],
                    "url": recorder.base(n) + req["path"],
                    "params": req["query"],
                    **({"json": req["body"]} if req["body"] is not None else {}),
                },
            }
            form = "request"
        outcomes.append(_audit_outcome(c, audit([record], spec).get(f"case-{n}"), form))
    return outcomes


def _audit_outcome(case: Case, result: Mapping[str, Any] | None, form: str) -> Outcome:
    door = "audit --fix"
    if result is None:
        return Outcome(door, case.id, CRASHED, note="no report line")
    if result.get("error"):
        return Outcome(door, case.id, CRASHED, note=_short(result["error"]))
    repaired = result.get("repaired")
    if repaired is None:
        return Outcome(door, case.id, AS_WRITTEN if result.get("ok") else WITHHELD)
    if form == "call":
        args = repaired.get("arguments")
        if isinstance(args, str):
            args = json.loads(args)
        sent = (repaired.get("name"), args)
        return Outcome(door, case.id, classify_call(case, sent), _short(sent))
    if form == "program":
        text = repaired if isinstance(repaired, str) else json.dumps(repaired)
        return Outcome(
            door,
            case.id,
            AS_WRITTEN if _same_program(text, program_of(case)) else HARMFUL,
            _short(text),
        )
    url = urlsplit(str(repaired.get("url", "")))
    path = url.path.split("/", 3)
    got = {
        "method": str(repaired.get("method", "")).upper(),
        "path": "/" + (path[3] if len(path) > 3 else ""),
        "query": {**dict(parse_qsl(url.query)), **(repaired.get("params") or {})},
        "body": repaired.get("json", repaired.get("body")),
    }
    return Outcome(door, case.id, classify_http(case, [got]), _short(got))


class _Upstream:
    """The scripted OpenAI-compatible server: each round, the case's call again (the
    model insists); the case is named by the request's ``model``."""

    def __init__(self, cases: Mapping[str, Case]) -> None:
        self.cases = cases
        self.rounds: Counter[str] = Counter()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                sent = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                cid = sent.get("model")
                upstream.rounds[cid] += 1
                case = upstream.cases[cid]
                name, args = case.call
                n = upstream.rounds[cid]
                body = {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": cid,
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "tool_calls",
                            "message": {
                                "role": "assistant",
                                "content": None,
                                "tool_calls": [
                                    {
                                        "id": f"call_{n}",
                                        "type": "function",
                                        "function": {
                                            "name": name,
                                            "arguments": json.dumps(args, ensure_ascii=False),
                                        },
                                    }
                                ],
                            },
                        }
                    ],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
                }
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def run_proxy(cases: Sequence[Case]) -> list[Outcome]:
    import httpx
    import uvicorn

    from autofeedback.proxy import ProxyConfig, create_proxy_app

    mine = [c for c in cases if applies(c, "proxy")]
    upstream = _Upstream({c.id: c for c in mine})
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_proxy_app(ProxyConfig(upstream.url)),
            host="127.0.0.1",
            port=port,
            log_level="error",
            lifespan="on",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the proxy did not start")
        time.sleep(0.05)
    out: list[Outcome] = []
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}/v1", timeout=300) as client:
            for c in mine:
                payload = {
                    "model": c.id,
                    "messages": [{"role": "user", "content": c.instruction}],
                    "tools": c.openai_tools(),
                }
                r = client.post(
                    "/chat/completions", json=payload, headers={"Authorization": "Bearer sk-harm"}
                )
                if r.status_code != 200:
                    out.append(
                        Outcome(
                            "proxy",
                            c.id,
                            WITHHELD if r.status_code == 422 else CRASHED,
                            note=f"HTTP {r.status_code}",
                        )
                    )
                    continue
                message = r.json()["choices"][0]["message"]
                calls = message.get("tool_calls") or []
                if not calls:
                    out.append(Outcome("proxy", c.id, WITHHELD, note="answered in text"))
                    continue
                fn = calls[0]["function"]
                sent = (fn["name"], json.loads(fn["arguments"]))
                out.append(
                    Outcome(
                        "proxy",
                        c.id,
                        classify_call(c, sent),
                        _short(sent),
                        note=r.headers.get("x-autofeedback", ""),
                    )
                )
    finally:
        server.should_exit = True
        thread.join(10)
        upstream.close()
    return out


def run_mcp_proxy(cases: Sequence[Case]) -> list[Outcome]:
    import anyio
    import mcp.types as types
    import uvicorn
    from mcp import Client
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    from autofeedback.proxy import McpProxy, McpProxyOptions

    mine = {c.id: c for c in cases if applies(c, "mcp-proxy")}
    received: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)

    def case_of(ctx: Any) -> Case:
        headers = getattr(ctx.request, "headers", None) or {}
        return mine[json.loads(headers.get("x-harm-case", '""'))]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        case = case_of(ctx)
        return types.ListToolsResult(
            tools=[types.Tool.model_validate(t, by_name=False) for t in case.mcp_tools()]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        case = case_of(ctx)
        received[case.id].append((params.name, dict(params.arguments or {})))
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    server: Server[Any] = Server(
        "harm", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool
    )
    port = _free_port()
    web = uvicorn.Server(
        uvicorn.Config(
            server.streamable_http_app(host="127.0.0.1"),
            host="127.0.0.1",
            port=port,
            log_level="error",
        )
    )
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not web.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the MCP server did not start")
        time.sleep(0.05)

    out: list[Outcome] = []

    async def one(case: Case) -> Outcome:
        options = McpProxyOptions(
            upstream_url=f"http://127.0.0.1:{port}/mcp",
            upstream_headers=[("x-harm-case", json.dumps(case.id))],
            stderr=io.StringIO(),
            timeout=60,
        )
        name, args = case.call
        async with McpProxy.connect(options) as proxy, Client(proxy.server) as client:
            await client.list_tools()
            try:
                result = await client.call_tool(name, args)
            except MCPError as exc:
                return Outcome("mcp-proxy", case.id, WITHHELD, note=_short(str(exc), 80))
        got = received.get(case.id) or []
        if not got:
            return Outcome(
                "mcp-proxy", case.id, WITHHELD, note="isError" if result.is_error else ""
            )
        outcomes = {classify_call(case, g) for g in got}
        worst = HARMFUL if HARMFUL in outcomes else outcomes.pop()
        return Outcome("mcp-proxy", case.id, worst, _short(got[-1]))

    async def main() -> None:
        for case in mine.values():
            try:
                with anyio.fail_after(120):
                    out.append(await one(case))
            except Exception as exc:  # one case's crash is that case's outcome
                out.append(
                    Outcome(
                        "mcp-proxy",
                        case.id,
                        CRASHED,
                        note=_short(f"{type(exc).__name__}: {exc}", 120),
                    )
                )

    try:
        anyio.run(main)
    finally:
        web.should_exit = True
        thread.join(10)
    return out


def run_requests_guard(case: Case, n: int, recorder: Recorder, work: Path) -> Outcome:
    import requests

    from autofeedback import RequestRejected, guard_session

    spec = write_spec(case, recorder.base(n), work / f"guard-{n}")
    req = http_call(case)
    assert req is not None
    recorder.seen.pop(n, None)
    session = requests.Session()
    guard_session(session, str(spec), mode="raise")
    said = _Said()
    logger = logging.getLogger("autofeedback")
    level = logger.level
    logger.addHandler(said)
    logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            session.request(
                req["method"],
                recorder.base(n) + req["path"],
                params={
                    k: ("true" if v is True else "false" if v is False else v)
                    for k, v in req["query"].items()
                }
                or None,
                json=req["body"],
                timeout=30,
            )
    except RequestRejected:
        pass
    finally:
        session.close()
        logger.removeHandler(said)
        logger.setLevel(level)
    got = recorder.seen.get(n, [])
    outcome = classify_http(case, got)
    # the guard's own log line says what it sent; where that is not what went out, say so
    note = SAID_REPAIRED if said.repaired and outcome == AS_WRITTEN else ""
    return Outcome("requests guard", case.id, outcome, _short(got[-1]) if got else "", note)


#: a request the guard logged as "sent with the repairs" that went out unchanged
SAID_REPAIRED = "logged as sent with repairs, sent unchanged"


class _Said(logging.Handler):
    """Whether the guard logged that it sent a request repaired."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.repaired = False

    def emit(self, record: logging.LogRecord) -> None:
        if "was sent with the repairs" in record.getMessage():
            self.repaired = True


def _scripted(text: str) -> Callable[[list[dict[str, str]]], str]:
    return lambda messages: text


def run_react(case: Case, n: int, recorder: Recorder, work: Path) -> Outcome:
    from autofeedback import ApiCatalog, Scanner
    from autofeedback.runners import ReactRunner

    spec = write_spec(case, recorder.base(n), work / f"react-{n}")
    catalog = ApiCatalog.from_file(str(spec))
    name, args = case.call
    action = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
    llm = _scripted(f"Thought: I call the API.\nAction: {action}")
    recorder.seen.pop(n, None)
    runner = ReactRunner(
        llm,
        catalog,
        base_url=recorder.base(n),
        scanner=Scanner(catalog),
        max_steps=3,
        headers={"Authorization": "Bearer run-key-123"},
    )
    runner.run(case.instruction)
    got = recorder.seen.get(n, [])
    return Outcome("ReactRunner", case.id, classify_http(case, got), _short(got) if got else "")


def run_program(case: Case, n: int, recorder: Recorder, work: Path) -> Outcome:
    from autofeedback import ApiCatalog, Scanner
    from autofeedback.runners import ProgramRunner

    spec = write_spec(case, recorder.base(n), work / f"program-{n}")
    catalog = ApiCatalog.from_file(str(spec))
    program = program_of(case)
    llm = _scripted(f"```python\n{program}\n```")
    result = ProgramRunner(llm, catalog, scanner=Scanner(catalog), max_rounds=2).run(
        case.instruction
    )
    if result.stop_reason != "clean":
        return Outcome("ProgramRunner", case.id, WITHHELD, note=result.stop_reason)
    same = _same_program(result.program, program)
    return Outcome(
        "ProgramRunner", case.id, AS_WRITTEN if same else HARMFUL, _short(result.program)
    )


def run_part_a(
    cases: Sequence[Case], doors: Sequence[str], log: Callable[[str], None]
) -> list[Outcome]:
    out: list[Outcome] = []
    recorder = Recorder()
    for n, c in enumerate(cases):
        recorder.cases[n] = c
    logging.getLogger("autofeedback").setLevel(logging.ERROR)  # the repairs' warnings: counted here
    logging.getLogger("mcp").setLevel(
        logging.ERROR
    )  # "Tool x not listed by server": the point of a case
    with tempfile.TemporaryDirectory(prefix="repair-harm-") as tmp:
        work = Path(tmp)

        def each(door: str, fn: Callable[[Case, int], Outcome]) -> None:
            started = time.perf_counter()
            for n, c in enumerate(cases):
                if not applies(c, door):
                    continue
                try:
                    out.append(fn(c, n))
                except Exception as exc:  # one case's crash is that case's outcome
                    out.append(
                        Outcome(
                            door, c.id, CRASHED, note=_short(f"{type(exc).__name__}: {exc}", 160)
                        )
                    )
            log(f"{door}: {time.perf_counter() - started:.0f} s")

        try:
            if "decide_tool_calls" in doors:
                each("decide_tool_calls", lambda c, n: run_decide_tool_calls(c))
            if "guard" in doors:
                each("guard", lambda c, n: run_guard(c))
            if "audit --fix" in doors:
                started = time.perf_counter()
                out += run_audit(cases, recorder, work)
                log(f"audit --fix: {time.perf_counter() - started:.0f} s")
            if "proxy" in doors:
                started = time.perf_counter()
                out += run_proxy(cases)
                log(f"proxy: {time.perf_counter() - started:.0f} s")
            if "mcp-proxy" in doors:
                started = time.perf_counter()
                out += run_mcp_proxy(cases)
                log(f"mcp-proxy: {time.perf_counter() - started:.0f} s")
            if "requests guard" in doors:
                each("requests guard", lambda c, n: run_requests_guard(c, n, recorder, work))
            if "ReactRunner" in doors:
                each("ReactRunner", lambda c, n: run_react(c, n, recorder, work))
            if "ProgramRunner" in doors:
                each("ProgramRunner", lambda c, n: run_program(c, n, recorder, work))
        finally:
            recorder.close()
    return out


# -- the tables ---------------------------------------------------------------------------------


def table_a(cases: Sequence[Case], outcomes: Sequence[Outcome], doors: Sequence[str]) -> str:
    by_case = {c.id: c for c in cases}
    families = list(dict.fromkeys(c.family for c in cases if c.kind == "harm"))
    got: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        c = by_case[o.case]
        got[o.door, c.family if c.kind == "harm" else "controls"][o.outcome] += 1
    lines = [
        "**Designed harm**: harmful / cases the entry point saw (withheld, as written, crashed "
        "in brackets where any). Goal: 0 harmful.",
        "",
        "| family | cases | " + " | ".join(doors) + " |",
        "|---|---:|" + "---|" * len(doors),
    ]

    def cell(counts: Counter[str]) -> str:
        n = sum(counts.values())
        if not n:
            return "–"
        extra = [f"{counts[k]} {k}" for k in (WITHHELD, AS_WRITTEN, CRASHED) if counts[k]]
        return f"**{counts[HARMFUL]}** / {n}" + (f" ({', '.join(extra)})" if extra else "")

    total: dict[str, Counter[str]] = defaultdict(Counter)
    for fam in families:
        n = sum(1 for c in cases if c.family == fam and c.kind == "harm")
        cells = []
        for door in doors:
            counts = got[door, fam]
            total[door].update(counts)
            cells.append(cell(counts))
        lines.append(f"| {fam} | {n} | " + " | ".join(cells) + " |")
    n_harm = sum(1 for c in cases if c.kind == "harm")
    lines.append(
        f"| **all harm cases** | {n_harm} | " + " | ".join(cell(total[d]) for d in doors) + " |"
    )
    controls = [c for c in cases if c.kind == "control"]
    ccells = []
    for door in doors:
        counts = got[door, "controls"]
        n = sum(counts.values())
        if not n:
            ccells.append("–")
            continue
        extra = [f"{counts[k]} {k}" for k in (WITHHELD, AS_WRITTEN, HARMFUL, CRASHED) if counts[k]]
        ccells.append(f"**{counts[KEPT]}** / {n}" + (f" ({', '.join(extra)})" if extra else ""))
    lines += [
        "",
        "**Controls, certain repairs kept**: kept / cases (a control sent with anything but its "
        "one certain repair is harmful).",
        "",
        "| family | cases | " + " | ".join(doors) + " |",
        "|---|---:|" + "---|" * len(doors),
        f"| controls | {len(controls)} | " + " | ".join(ccells) + " |",
    ]
    return "\n".join(lines)


def said_list(outcomes: Sequence[Outcome]) -> str:
    said = [o for o in outcomes if o.note == SAID_REPAIRED]
    if not said:
        return ""
    names = ", ".join(f"`{o.case}`" for o in said[:12]) + (" …" if len(said) > 12 else "")
    return (
        f'The requests guard logged "sent with the repairs" for {len(said)} requests it sent '
        f'unchanged (counted as written above; issue 43, "Also found"): {names}'
    )


#: short names of the entry points in the list of harmful cases
SHORT = {
    "decide_tool_calls": "D",
    "guard": "G",
    "audit --fix": "A",
    "proxy": "P",
    "mcp-proxy": "M",
    "requests guard": "R",
    "ReactRunner": "Re",
    "ProgramRunner": "Pr",
}


def harmful_list(cases: Sequence[Case], outcomes: Sequence[Outcome]) -> str:
    """The harmful cases by name: the issue's rows each with one call sent, the generated
    ones by family, each with the entry points that sent it."""
    by_case = {c.id: c for c in cases}
    doors_of: dict[str, list[str]] = defaultdict(list)
    sent_of: dict[str, str] = {}
    for o in outcomes:
        if o.outcome == HARMFUL:
            doors_of[o.case].append(o.door)
            sent_of.setdefault(o.case, o.sent)
    if not doors_of:
        return "No harmful case."
    legend = ", ".join(f"{v} {k}" for k, v in SHORT.items())
    lines = [f"Harmful cases ({len(doors_of)}; entry points: {legend}):", ""]
    families = list(dict.fromkeys(by_case[cid].family for cid in doors_of))
    for fam in families:
        mine = [cid for cid in doors_of if by_case[cid].family == fam]
        if fam in ("issue table", "controls"):
            for cid in mine:
                c = by_case[cid]
                what = f" ({c.trap})" if c.trap else ""
                doors = " ".join(SHORT[d] for d in doors_of[cid])
                lines.append(f"- {fam}: `{cid}`{what} [{doors}]: sent `{sent_of[cid]}`")
            continue
        shown = "; ".join(f"`{cid}` [{' '.join(SHORT[d] for d in doors_of[cid])}]" for cid in mine)
        lines.append(f"- {fam} ({len(mine)}): {shown}")
    return "\n".join(lines)


def crashed_list(outcomes: Sequence[Outcome]) -> str:
    crashed = [o for o in outcomes if o.outcome == CRASHED]
    if not crashed:
        return ""
    lines = [f"Crashed ({len(crashed)}):", ""]
    lines += [f"- {o.door} on `{o.case}`: {o.note}" for o in crashed[:30]]
    if len(crashed) > 30:
        lines.append(f"- … {len(crashed) - 30} more")
    return "\n".join(lines)


# -- part (b) ------------------------------------------------------------------------------------


def repair_kind(repairs: Sequence[Any]) -> str:
    """What a call's repairs did, in words: ``operation renamed``, ``parameter
    renamed``, ``argument dropped``, ``value changed``, ``data flow`` (joined by ``+``)."""
    kinds = []
    for r in repairs:
        family = r.code.split(".")[0]
        if family == "E2":
            kinds.append("operation renamed")
        elif family == "E3":
            kinds.append("argument dropped" if r.after is None else "parameter renamed")
        elif family == "E4":
            kinds.append("value changed")
        else:
            kinds.append("data flow")
    return " + ".join(dict.fromkeys(kinds)) or "none"


def run_part_b(
    categories: Sequence[str], tasks_n: int | None, model: str, answers_path: Path = ANSWERS
) -> tuple[str, dict[str, Any]]:
    from autofeedback import ApiCatalog, Decider, Scanner
    from autofeedback.parsing import parse_output
    from benchmarks._harm_natural import answer_key, load_answers, load_tasks, task_distance

    tasks = load_tasks(categories)
    if tasks_n is not None:
        tasks = tasks[:tasks_n]
    answers = load_answers(answers_path)
    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    per_cat: dict[str, Counter[str]] = defaultdict(Counter)
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    answered = 0
    calls_total = 0
    for task in tasks:
        record = answers.get(answer_key(model, task))
        if record is None:
            continue
        answered += 1
        per_cat[task.category]["answered"] += 1
        text = record.get("text") or ""
        parsed = parse_output(text).requests
        calls_total += len(parsed)
        before = [(r.name, dict(r.arguments)) for r in parsed]
        catalog = ApiCatalog.from_obj(task.functions, source=task.id)
        names = [str(f.get("name")) for f in task.functions]
        decider = Decider(Scanner(catalog), repair="sure")
        after = list(before)
        repaired_idx = []
        for i, r in enumerate(parsed):
            d = decider.decide_request(r, instruction=task.question, calls=len(parsed))
            counts["calls with errors"] += any(f.severity == "error" for f in d.findings)
            if d.repairs and d.request is not None:
                after[i] = (d.request.name, dict(d.request.arguments))
                repaired_idx.append((i, d))
        d_before = task_distance(before, task.gold, names)
        right_before = d_before == 0
        per_cat[task.category]["right before"] += right_before
        for i, d in repaired_idx:
            one = list(before)
            one[i] = after[i]
            d_one = task_distance(one, task.gold, names)
            counts["repairs"] += 1
            counts["repairs sent"] += d.action == "forward"
            per_cat[task.category]["repairs"] += 1
            if d_one < d_before:
                verdict = "helped"
            elif d_one > d_before:
                verdict = "harmed"
            else:
                verdict = "unchanged"
            counts[verdict] += 1
            per_cat[task.category][verdict] += 1
            by_kind[repair_kind(d.repairs)][verdict] += 1
            if len(examples[verdict]) < (40 if verdict == "harmed" else 12):
                shown = "; ".join(str(r) for r in d.repairs)
                examples[verdict].append(f"`{task.id}`: {shown} (distance {d_before} -> {d_one})")
        d_after = task_distance(after, task.gold, names)
        per_cat[task.category]["right after"] += d_after == 0
        counts["right before"] += right_before
        counts["right after"] += d_after == 0
    counts["answered"] = answered
    counts["calls"] = calls_total
    shares = ", ".join(f"{c} {per_cat[c]['answered']}" for c in categories)
    lines = [
        f"Tasks answered by the model (cached): **{answered}** of {len(tasks)} chosen "
        f"({shares}); calls read from the answers: {calls_total}, of which "
        f"{counts['calls with errors']} with an error finding.",
        "",
        "| category | answered | right before | right after | repairs | helped | harmed "
        "| unchanged |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in [*categories, "all"]:
        k = counts if c == "all" else per_cat[c]
        cols = (
            "answered",
            "right before",
            "right after",
            "repairs",
            "helped",
            "harmed",
            "unchanged",
        )
        lines.append(f"| {c} | " + " | ".join(str(k[col]) for col in cols) + " |")
    repairs = counts["repairs"]
    per500 = f"{500 * counts['harmed'] / repairs:.1f}" if repairs else "n/a"
    ratio = f"{counts['helped']}:{counts['harmed']}" + (
        f" ({counts['helped'] / counts['harmed']:.1f}:1)" if counts["harmed"] else ""
    )
    lines += [
        "",
        f"- repairs: {repairs} ({counts['repairs sent']} with nothing left, so sent; the "
        "others go back to the model as repaired); "
        f"harmful per 500 repairs: **{per500}** (goal ≤ 1); "
        f"helpful:harmful **{ratio}** (goal ≥ 50:1; LLM reviewers of tool calls: 2:1-3:1).",
        "- A repair is one call the Decider changed; it *helped* when the task's distance from "
        "BFCL's possible answers fell with that call repaired (the other calls as written), "
        "*harmed* when it rose (distance: see `benchmarks/_harm_natural.py`).",
    ]
    if by_kind:
        lines += [
            "",
            "By what the repair did (a call's repairs together):",
            "",
            "| repair | repairs | helped | harmed | unchanged |",
            "|---|---:|---:|---:|---:|",
        ]
        for kind, k in sorted(by_kind.items(), key=lambda kv: -sum(kv[1].values())):
            lines.append(
                f"| {kind} | {sum(k.values())} | {k['helped']} | {k['harmed']} | {k['unchanged']} |"
            )
    for verdict in ("harmed", "helped"):
        if examples[verdict]:
            lines += ["", f"{verdict.capitalize()} (first {len(examples[verdict])}):", ""]
            lines += [f"- {e}" for e in examples[verdict]]
    return "\n".join(lines), dict(counts)


# -- main ----------------------------------------------------------------------------------------


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "autofeedback"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" with uncommitted changes in autofeedback/" if dirty else "")


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks._harm_natural import CATEGORIES

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--part", choices=["a", "b", "ab"], default="ab")
    parser.add_argument(
        "--doors", default=",".join(DOORS), help="entry points for (a), comma-separated"
    )
    parser.add_argument("--cases", help="only (a) cases whose id contains this text")
    parser.add_argument(
        "--generate",
        action="store_true",
        help="(b): ask the local model for the tasks not cached yet",
    )
    parser.add_argument(
        "--tasks", type=int, help="(b): the first N tasks (interleaved over the categories)"
    )
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument(
        "--llm",
        default="local:1.5b,local:0.5b",
        help="(b): the local models whose answers are scored (and asked, with --generate)",
    )
    parser.add_argument(
        "--answers",
        type=Path,
        default=ANSWERS,
        help="(b): the cache of the model's answers (default benchmarks/.work/repair_harm/"
        "answers.jsonl; another checkout's file re-scores its answers)",
    )
    parser.add_argument(
        "--label", default="", help="a note for the section's heading line, e.g. 'before the rule'"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    given = list(argv) if argv is not None else sys.argv[1:]
    args = parser.parse_args(given)

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    commit = _commit()
    sections: list[tuple[str, str, str]] = []
    # the exact command, as given (less --no-write, which writes nothing)
    command = shlex.join(
        ["python", "benchmarks/repair_harm.py", *(a for a in given if a != "--no-write")]
    )
    if args.part in ("a", "ab"):
        wall = time.perf_counter()
        cases = all_cases()
        if args.cases:
            cases = [c for c in cases if args.cases in c.id]
        doors = [d.strip() for d in args.doors.split(",") if d.strip()]
        outcomes = run_part_a(cases, doors, log)
        OUTCOMES.parent.mkdir(parents=True, exist_ok=True)
        with OUTCOMES.open("w", encoding="utf-8") as fh:
            for o in outcomes:
                fh.write(json.dumps(o.__dict__, ensure_ascii=False) + "\n")
        log(f"every outcome: {OUTCOMES}")
        n_harm = sum(c.kind == "harm" for c in cases)
        n_issue = sum(c.family == "issue table" for c in cases)
        n_control = sum(c.kind == "control" for c in cases)
        body = "\n\n".join(
            p
            for p in (
                f"At commit {commit}{' (' + args.label + ')' if args.label else ''}. "
                f"{n_harm} harm cases ({n_issue} from the issue's table and hold-out rows, "
                f"{n_harm - n_issue} generated) and {n_control} controls; every entry point "
                'with its defaults (repair "sure", semantic checks on).',
                table_a(cases, outcomes, doors),
                harmful_list(cases, outcomes),
                said_list(outcomes),
                crashed_list(outcomes),
                f"Wall time {time.perf_counter() - wall:.0f} s (2 shared CPU cores).",
            )
            if p
        )
        print(body)
        sections.append(("Repair harm (a): designed cases", command, body))
    if args.part in ("b", "ab"):
        from benchmarks._harm_natural import generate, load_tasks

        categories = [c.strip() for c in args.categories.split(",") if c.strip()]
        parts = [
            f"At commit {commit}{' (' + args.label + ')' if args.label else ''}. Local models "
            "(Qwen2.5-Coder-Instruct Q4_K_M, greedy) on BFCL (`../shared/data/bfcl`), one "
            "answer per task with the prompt of `benchmarks/_harm_natural.py` (the functions as "
            'JSON specs, the question, "answer with the call(s) as one line of JSON"), tasks '
            "taken in turn from each category; each call decided by "
            '`Decider(Scanner(catalog), repair="sure")` with the semantic checks on.'
        ]
        for llm in [m.strip() for m in args.llm.split(",") if m.strip()]:
            model = llm.removeprefix("local:")
            if args.generate:
                chosen = load_tasks(categories)
                chosen = chosen[: args.tasks] if args.tasks is not None else chosen
                generate(chosen, model, path=args.answers)
            text, _ = run_part_b(categories, args.tasks, model, args.answers)
            parts.append(f"**`{llm}`**\n\n{text}")
        body = "\n\n".join(parts)
        print(body)
        sections.append(("Repair harm (b): natural mistakes", command, body))
    if not args.no_write:
        for title, cmd, body in sections:
            write_section(title, cmd, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What does ``autofeedback proxy`` add to a call that has nothing to fix?

Starts a scripted OpenAI-compatible upstream (canned completions, HTTP/1.1 keep-alive)
and ``autofeedback proxy`` in front of it, each in its own process, then sends the same
requests alternately straight to the upstream and through the proxy from one
keep-alive ``httpx`` client, so both see the same machine load. Two kinds of request:

* ``tools``: a chat completion with ``tools`` whose answer is a valid tool call (the
  proxy parses it, scans every call against the request's tools and adds its header);
* ``plain``: a chat completion without tools (passed through, streamed).

Reports p50 and p99 latency of each, and the difference proxy - direct (the goal is
<= 2 ms at p50). Measured in the same run, interleaved request by request.

    python benchmarks/proxy.py                 # 2,000 requests per cell, writes RESULTS.md
    python benchmarks/proxy.py -n 300 --no-write
    python benchmarks/proxy.py --loop-tasks 20   # paired repairs against FeedbackLoop
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._results import write_section

ROOT = Path(__file__).resolve().parents[1]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": "integer", "minimum": 1, "maximum": 14},
                },
                "required": ["city"],
            },
        },
    }
]
MESSAGES = [{"role": "user", "content": "Weather in Paris for 3 days, in celsius?"}]


def _answer(with_tools: bool) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if with_tools:
        args = json.dumps({"city": "Paris", "unit": "celsius", "days": 3})
        message["tool_calls"] = [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": args},
            }
        ]
    else:
        message["content"] = "It is sunny in Paris."
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1700000000,
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if with_tools else "stop",
                }
            ],
            "usage": {"prompt_tokens": 60, "completion_tokens": 20, "total_tokens": 80},
        }
    ).encode()


def serve_upstream(port: int) -> None:
    """The scripted upstream: a tool call when the request has tools, text otherwise."""
    tool_answer, text_answer = _answer(True), _answer(False)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # headers and body go out in two writes: without this, Nagle's algorithm
            # and delayed ACKs hold the body ~40 ms (uvicorn sets it too)
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            payload = tool_answer if b'"tools"' in body else text_answer
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(n: int, warmup: int = 50) -> tuple[list[list[str]], dict[str, Any]]:
    import httpx

    up_port, px_port = _free_port(), _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    upstream = subprocess.Popen(
        [sys.executable, __file__, "--serve-upstream", str(up_port)], env=env
    )
    proxy = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from autofeedback.cli import main; main()",
            "proxy",
            "--upstream",
            f"http://127.0.0.1:{up_port}/v1",
            "--port",
            str(px_port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    try:
        _wait(up_port)
        _wait(px_port)
        direct = f"http://127.0.0.1:{up_port}/v1/chat/completions"
        proxied = f"http://127.0.0.1:{px_port}/v1/chat/completions"
        bodies = {
            "tools": {"model": "scripted", "messages": MESSAGES, "tools": TOOLS},
            "plain": {"model": "scripted", "messages": MESSAGES},
        }
        times: dict[tuple[str, str], list[float]] = {
            (k, w): [] for k in bodies for w in ("direct", "proxy")
        }
        headers = {"Authorization": "Bearer sk-bench"}
        with httpx.Client(timeout=30.0) as client:
            for i in range(warmup + n):
                for kind, body in bodies.items():
                    # alternate which goes first, so neither always meets a warm cache
                    order = [("direct", direct), ("proxy", proxied)]
                    for where, url in order if i % 2 else order[::-1]:
                        start = time.perf_counter()
                        r = client.post(url, json=body, headers=headers)
                        elapsed = time.perf_counter() - start
                        r.raise_for_status()
                        if where == "proxy" and kind == "tools":
                            assert json.loads(r.headers["x-autofeedback"])["rounds"] == 1
                        if i >= warmup:
                            times[(kind, where)].append(elapsed * 1000)
    finally:
        for process in (proxy, upstream):
            process.terminate()
            process.wait(10)
    rows = []
    for kind in bodies:
        d, p = times[(kind, "direct")], times[(kind, "proxy")]
        rows.append(
            [
                kind,
                str(len(d)),
                f"{_pct(d, 0.5):.2f}",
                f"{_pct(d, 0.99):.2f}",
                f"{_pct(p, 0.5):.2f}",
                f"{_pct(p, 0.99):.2f}",
                f"{_pct(p, 0.5) - _pct(d, 0.5):+.2f}",
                f"{_pct(p, 0.99) - _pct(d, 0.99):+.2f}",
                f"{statistics.median(b - a for a, b in zip(d, p, strict=True)):+.2f}",
            ]
        )
    meta = {"load": os.getloadavg()[0], "cpus": os.cpu_count()}
    return rows, meta


# -- paired loop tasks: the proxy's repairs against FeedbackLoop's, same model -------------


def _serve_local(model: str) -> tuple[Any, str]:
    """The local model behind an OpenAI-compatible endpoint on 127.0.0.1, in a thread
    (``benchmarks/local_openai_server.py``: the model's own chat template, native tool
    calls)."""
    import threading

    import uvicorn

    from benchmarks.local_openai_server import LocalChat, create_app

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(LocalChat(model)), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}/v1"


def _turns(instruction: str, last: str) -> list[dict[str, str]]:
    """The task as an agent sends it: the dialogue so far, then the user's last turn as
    its own message (the proxy judges a call against the last user turn, with the whole
    conversation as context: what ``FeedbackLoop`` gets as ``intent`` and instruction)."""
    cut = instruction.rfind(last)
    before = instruction[:cut].rstrip() if cut > 0 else ""
    if not before:
        return [{"role": "user", "content": instruction}]
    return [{"role": "user", "content": before}, {"role": "user", "content": instruction[cut:]}]


def loop_tasks(n: int, model: str, checkpoint: Path, max_static: int = 3) -> tuple[str, list[str]]:
    """Each task twice on the same model behind the same OpenAI-compatible server, with
    native tool calling in both: once through ``FeedbackLoop`` (static feedback only,
    ``OpenAICompatibleLLM(tools=catalog)``, its own prompt, feedback as a user turn), once
    as an agent would through the proxy (the dialogue, its last user turn as a message of
    its own, the tools from
    ``ApiCatalog.to_tools()``, ``max_static + 1`` rounds, feedback as the tool result).
    Judged as ``benchmarks/loop.py`` judges (gold API, required arguments). Each finished
    task is appended to ``checkpoint``, so a stopped run resumes."""
    import threading

    import openai
    import uvicorn

    from autofeedback import ApiCatalog, FeedbackLoop
    from autofeedback.core._model import ApiRequest
    from autofeedback.integrations._proxy import create_proxy_app
    from autofeedback.integrations._proxy_config import ProxyConfig
    from autofeedback.llm import OpenAICompatibleLLM
    from autofeedback.sandbox import Sandbox
    from benchmarks.loop import SETTINGS, final_call, intent, matches, task_list

    done: dict[str, dict[str, Any]] = {}
    if checkpoint.exists():
        for line in checkpoint.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                done[row["task"]] = row
            except (ValueError, KeyError, TypeError):
                continue  # a line cut off mid-write: that task runs again
    tasks = task_list(n)
    todo = [t for t in tasks if f"{t.dataset}:{t.id}" not in done]
    upstream = proxy = thread = client = None
    if todo:
        upstream, llm_url = _serve_local(model)
        port = _free_port()
        proxy = uvicorn.Server(
            uvicorn.Config(
                create_proxy_app(
                    # the loop's checks: the semantic ones too (autofeedback proxy --semantic)
                    ProxyConfig(llm_url, max_rounds=max_static + 1, timeout=1800, retriever="auto")
                ),
                host="127.0.0.1",
                port=port,
                log_level="warning",
                ws="none",
            )
        )
        thread = threading.Thread(target=proxy.run, daemon=True)
        thread.start()
        while not proxy.started:
            time.sleep(0.05)
        client = openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-local", max_retries=0, timeout=1800
        )
    try:
        with open(checkpoint, "a", encoding="utf-8") as fh:
            for task in todo:
                assert client is not None
                catalog = ApiCatalog.from_obj(task.spec, source=task.dataset)
                gold = task.calls[0]
                sandbox = Sandbox(catalog).start()
                try:
                    llm = OpenAICompatibleLLM(
                        llm_url, model="local", tools=catalog, timeout=1800, max_tokens=256
                    )
                    loop = FeedbackLoop(
                        llm,
                        catalog,
                        base_url=sandbox.url,
                        **{**SETTINGS["Static"], "max_static": max_static},
                    )
                    result = loop.run(task.instruction, intent=intent(task))
                finally:
                    sandbox.stop()
                base_req = result.attempts[0].request if result.attempts else None
                raw = client.chat.completions.with_raw_response.create(
                    model="local",
                    messages=_turns(task.instruction, intent(task)),
                    tools=catalog.to_tools(),
                    max_tokens=256,
                    temperature=0,
                )
                header = json.loads(raw.headers["x-autofeedback"])
                calls = raw.parse().choices[0].message.tool_calls or []
                proxy_req = None
                if calls:
                    try:
                        arguments = json.loads(calls[0].function.arguments or "{}")
                    except ValueError:
                        arguments = {}
                    if isinstance(arguments, dict):
                        proxy_req = ApiRequest(name=calls[0].function.name, arguments=arguments)
                name, _ = final_call(proxy_req, catalog)
                row = {
                    "task": f"{task.dataset}:{task.id}",
                    "gold": gold[0],
                    "loop_first": matches(base_req, gold, catalog),
                    "loop_attempts": len(result.attempts),
                    "loop_final": matches(result.request, gold, catalog),
                    "loop_codes": sorted(
                        {
                            f.code
                            for a in result.attempts
                            for f in a.findings
                            if f.severity == "error"
                        }
                    ),
                    "proxy_rounds": header["rounds"],
                    "proxy_codes": header["codes"],
                    "proxy_stop": header.get("stop"),
                    "proxy_final": matches(proxy_req, gold, catalog),
                    "proxy_api": name,
                    "proxy_no_call": proxy_req is None,
                }
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                done[row["task"]] = row
                print(row, flush=True)
    finally:
        if client is not None:
            client.close()
        for server in (proxy, upstream):
            if server is not None:
                server.should_exit = True
        if thread is not None:
            thread.join(30)
    rows = [done[f"{t.dataset}:{t.id}"] for t in tasks if f"{t.dataset}:{t.id}" in done]
    yes = {True: "yes", False: "no"}
    lines = [
        f"| {r['task']} | {r['gold']} | {yes[r['loop_first']]} | {r['loop_attempts']} "
        f"| {','.join(r['loop_codes']) or '-'} | {yes[r['loop_final']]} | {r['proxy_rounds']} "
        f"| {','.join(r['proxy_codes']) or '-'} | {yes[r['proxy_final']]} | `{r['proxy_api']}` |"
        for r in rows
    ]
    k = len(rows)
    loop_fix = sum(r["loop_final"] and not r["loop_first"] for r in rows)
    proxy_fix = sum(r["proxy_final"] and r["proxy_rounds"] > 1 for r in rows)
    proxy_broke = sum(
        (not r["proxy_final"]) and r["proxy_rounds"] > 1 and r["loop_first"] for r in rows
    )
    same = sum(r["loop_final"] == r["proxy_final"] for r in rows)
    summary = (
        f"{k} tasks: FeedbackLoop (static) right on {sum(r['loop_final'] for r in rows)}/{k} "
        f"(its first answer on {sum(r['loop_first'] for r in rows)}/{k}, repaired {loop_fix}); "
        f"the proxy right on {sum(r['proxy_final'] for r in rows)}/{k} (right after a re-ask: "
        f"{proxy_fix}; re-asked and wrong where the loop's first answer was right: "
        f"{proxy_broke}); the two final answers agree on {same}/{k}. Through the proxy the "
        f"model answered without any tool call on {sum(r['proxy_no_call'] for r in rows)}/{k}."
    )
    return summary, lines


HEAD = (
    "| request | n | direct p50 ms | direct p99 ms | proxy p50 ms | proxy p99 ms "
    "| added p50 ms | added p99 ms | median paired diff ms |"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2000, help="requests per cell")
    ap.add_argument("--no-write", action="store_true", help="do not write RESULTS.md")
    ap.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    ap.add_argument(
        "--loop-tasks",
        type=int,
        help="instead: run this many paired loop tasks through FeedbackLoop and the proxy "
        "on a local model (needs llama-cpp-python and the model's packages)",
    )
    ap.add_argument("--model", default="1.5b", help="the local model: 1.5b or 0.5b")
    ap.add_argument("--checkpoint", type=Path, help="JSONL of finished paired tasks")
    args = ap.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return
    if args.loop_tasks:
        checkpoint = args.checkpoint or Path("/tmp", f"autofeedback-proxy-tasks-{args.model}.jsonl")
        summary, task_rows = loop_tasks(args.loop_tasks, args.model, checkpoint)
        table = "\n".join(
            [
                "| task | gold API | loop: first answer right | loop attempts | loop error "
                "codes | loop: final right | proxy rounds | proxy codes | proxy: final right "
                "| proxy final API |",
                "|" + "---|" * 10,
                *task_rows,
            ]
        )
        text = (
            table
            + "\n\n"
            + summary
            + (
                f" Same model for both (the local {args.model} model, Qwen2.5-Coder-Instruct "
                "Q4_K_M, greedy) behind the same OpenAI-compatible server "
                "(`benchmarks/local_openai_server.py`: the model's own chat template renders "
                "the tools and the tool results, its tool calls come back as `tool_calls`), "
                "native tool calling in both: FeedbackLoop with "
                "`OpenAICompatibleLLM(tools=catalog)`, static feedback only, at most 3 static "
                "rounds, its own prompt (the docs in the system prompt, feedback as a user "
                "turn); the proxy with the dialogue as user messages (its last user turn "
                "apart), the tools from "
                "`ApiCatalog.to_tools()`, the semantic checks on (`--semantic`), at most 4 "
                "rounds, feedback as the tool result. "
                "Tasks: the first of `benchmarks/loop.py`'s task list."
            )
        )
        print(text)
        if not args.no_write:
            command = f"python benchmarks/proxy.py --loop-tasks {args.loop_tasks}"
            command += f" --model {args.model}" if args.model != "1.5b" else ""
            write_section(
                f"Proxy: paired loop tasks against FeedbackLoop (local {args.model})",
                command,
                text,
            )
        return
    rows, meta = measure(args.n)
    table = "\n".join([HEAD, "|" + "---|" * 9] + ["| " + " | ".join(r) + " |" for r in rows])
    print(table)
    note = (
        f"\n\nSequential requests from one keep-alive httpx client, alternating direct and "
        f"proxied, after 50 warm-up rounds; upstream (stdlib ThreadingHTTPServer, canned "
        f"answers) and proxy (`autofeedback proxy`, uvicorn + Starlette + httpx, "
        f"structural checks) each in their own process. `tools`: a chat completion with "
        f"`tools` and a valid tool call (parsed, scanned, header added: no findings, one "
        f"round); `plain`: no tools (passed through, streamed). The paired diff is the "
        f"median over i of proxy_i - direct_i. {meta['cpus']}-core VM shared with other "
        f"jobs, load average {meta['load']:.1f} at the end: absolute numbers are noisy."
    )
    print(note)
    if not args.no_write:
        command = "python benchmarks/proxy.py" + (f" -n {args.n}" if args.n != 2000 else "")
        write_section("Proxy: added latency per call", command, table + note)


if __name__ == "__main__":
    main()

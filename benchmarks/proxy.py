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


def _start_llama(python: str, model: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    server = subprocess.Popen(
        [
            python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "8192",
            "--chat_format",
            "chatml-function-calling",
            "--n_threads",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait(port, 300)
    return server, f"http://127.0.0.1:{port}/v1"


def loop_tasks(n: int, llama_python: str, max_static: int = 3) -> tuple[str, list[str]]:
    """Each task twice on the same model and the same native tool calling
    (llama-cpp-python's server, ``chatml-function-calling``): once through
    ``FeedbackLoop`` (static feedback only, ``OpenAICompatibleLLM(tools=catalog)``), once
    through the proxy (the tools from ``ApiCatalog.to_tools()``, ``max_static + 1``
    rounds). Judged as ``benchmarks/loop.py`` judges (gold API, required arguments)."""
    import threading

    import openai
    import uvicorn

    from autofeedback import ApiCatalog, FeedbackLoop, OpenAICompatibleLLM, Sandbox
    from autofeedback._model import ApiRequest
    from autofeedback.integrations._proxy import ProxyConfig, create_proxy_app
    from autofeedback.loop._llm import ensure_local_model
    from benchmarks.loop import SETTINGS, final_call, intent, matches, task_list

    server, llama_url = _start_llama(llama_python, ensure_local_model("0.5b"))
    port = _free_port()
    proxy = uvicorn.Server(
        uvicorn.Config(
            create_proxy_app(ProxyConfig(llama_url, max_rounds=max_static + 1, timeout=1800)),
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
    rows: list[str] = []
    counts = {
        "base": 0,
        "loop": 0,
        "proxy": 0,
        "same": 0,
        "loop_fix": 0,
        "proxy_fix": 0,
        "no_call": 0,
    }
    try:
        for task in task_list(n):
            catalog = ApiCatalog.from_obj(task.spec, source=task.dataset)
            gold = task.calls[0]
            sandbox = Sandbox(catalog).start()
            try:
                llm = OpenAICompatibleLLM(
                    llama_url, model="local", tools=catalog, timeout=1800, max_tokens=256
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
                messages=[{"role": "user", "content": task.instruction}],
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
            base_ok = matches(base_req, gold, catalog)
            loop_ok = matches(result.request, gold, catalog)
            proxy_ok = matches(proxy_req, gold, catalog)
            counts["base"] += base_ok
            counts["loop"] += loop_ok
            counts["proxy"] += proxy_ok
            counts["same"] += loop_ok == proxy_ok
            counts["loop_fix"] += loop_ok and not base_ok
            counts["proxy_fix"] += proxy_ok and header["rounds"] > 1
            counts["no_call"] += proxy_req is None
            name, _ = final_call(proxy_req, catalog)
            rows.append(
                f"| {task.dataset}:{task.id} | {gold[0]} | {'yes' if base_ok else 'no'} "
                f"| {len(result.attempts)} | {'yes' if loop_ok else 'no'} | {header['rounds']} "
                f"| {','.join(header['codes']) or '-'} | {'yes' if proxy_ok else 'no'} "
                f"| `{name}` |"
            )
            print(rows[-1], flush=True)
    finally:
        client.close()
        proxy.should_exit = True
        thread.join(30)
        server.terminate()
        server.wait(30)
    k = len(rows)
    summary = (
        f"{k} tasks: FeedbackLoop (static) right on {counts['loop']}/{k} (its first answer "
        f"on {counts['base']}/{k}, repaired {counts['loop_fix']}); the proxy right on "
        f"{counts['proxy']}/{k} (repaired after a re-ask: {counts['proxy_fix']}); the two "
        f"agree on {counts['same']}/{k}. Through the proxy the model answered without any "
        f"tool call on {counts['no_call']}/{k} (nothing for the proxy to check)."
    )
    return summary, rows


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
        "on the local 0.5B model (needs llama-cpp-python[server])",
    )
    ap.add_argument(
        "--llama-python",
        default=sys.executable,
        help="an interpreter with llama-cpp-python[server] (default: this one)",
    )
    args = ap.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return
    if args.loop_tasks:
        summary, task_rows = loop_tasks(args.loop_tasks, args.llama_python)
        table = "\n".join(
            [
                "| task | gold API | loop: first answer right | loop attempts | loop: final "
                "right | proxy rounds | proxy codes | proxy: final right | proxy final API |",
                "|" + "---|" * 9,
                *task_rows,
            ]
        )
        text = (
            table
            + "\n\n"
            + summary
            + (
                " Same model for both (Qwen2.5-Coder-0.5B-Instruct Q4_K_M, llama-cpp-python "
                "0.3.36 server, chat format `chatml-function-calling`, greedy), native tool "
                "calling in both: FeedbackLoop with `OpenAICompatibleLLM(tools=catalog)`, "
                "static feedback only, at most 3 static rounds, its own prompt (the docs in "
                "the system prompt); the proxy with the bare instruction, the tools from "
                "`ApiCatalog.to_tools()` and at most 4 rounds. Tasks: the first of "
                "`benchmarks/loop.py`'s task list."
            )
        )
        print(text)
        if not args.no_write:
            command = (
                f"python benchmarks/proxy.py --loop-tasks {args.loop_tasks} "
                "--llama-python PYTHON_WITH_LLAMA_CPP_SERVER"
            )
            write_section(
                "Proxy: paired loop tasks against FeedbackLoop (local 0.5B)", command, text
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

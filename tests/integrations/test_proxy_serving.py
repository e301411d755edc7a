"""``autofeedback proxy`` under real traffic (issue 29): clients that leave, a full
upstream pool, heavy requests beside light ones, hostile bodies and headers, credentials
in ``--upstream``, the host rule and SIGTERM. The proxy runs under uvicorn on 127.0.0.1
(in a thread, or as the real ``autofeedback proxy`` process); the upstream is a scripted
OpenAI-compatible server on 127.0.0.1, the test double for the LLM."""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the proxy extra (uvicorn, starlette, httpx) is missing")

import httpx
import uvicorn
from _support.ports import free_port
from _support.processes import children, gone_within

from autofeedback.cli import run as cli_run
from autofeedback.integrations._proxy import create_proxy_app
from autofeedback.integrations._proxy_config import ProxyConfig
from autofeedback.serve._serve import check_host

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "hunter2-upstream-Pa55"
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
USER = [{"role": "user", "content": "Weather in Paris?"}]


def completion(arguments: dict[str, Any] | None, n: int = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if arguments is not None:
        message["tool_calls"] = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps(arguments)},
            }
        ]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
    }


def _left(conn: socket.socket) -> bool:
    """Whether the peer of ``conn`` closed it (what a proxy does to an upstream call it
    cancels); data waiting to be read is no close."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _until(condition: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    """Wait for ``condition``; ``limit`` only ends a test whose product never gets there
    (it is no bound on how fast the product is)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


class Upstream:
    """A scripted upstream: ``answer`` is what every completion gets; ``started`` counts
    the completions asked for. With ``held`` a completion is answered only once the test
    releases it (``release()``), and ``left`` counts those whose caller (the proxy) closed
    the connection first; ``answered`` counts the completions answered. ``/v1/models`` is
    instant; ``/v1/echo`` answers with the headers it got, as bytes."""

    def __init__(self) -> None:
        self.answer: Any = completion({"city": "Paris"})
        self.held = False
        self.releases = threading.Semaphore(0)
        self.started = self.left = self.answered = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the proxy went away (cancelled): nothing to answer

            def do_GET(self) -> None:
                if self.path == "/v1/echo":
                    raw = [
                        [k, v.encode("latin-1").decode("utf-8", "replace")]
                        for k, v in self.headers.items()
                    ]
                    self._send(200, json.dumps(raw).encode())
                    return
                self._send(200, b'{"object": "list", "data": []}')

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    json.loads(raw)
                except (ValueError, RecursionError):
                    self._send(400, b'{"error": {"message": "bad json"}}')
                    return
                with upstream.lock:
                    upstream.started += 1
                while upstream.held and not upstream.releases.acquire(timeout=0.02):
                    if _left(self.connection):
                        with upstream.lock:
                            upstream.left += 1
                        return
                self._send(200, json.dumps(upstream.answer).encode())
                with upstream.lock:
                    upstream.answered += 1

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def release(self, n: int = 1) -> None:
        for _ in range(n):
            self.releases.release()

    def close(self) -> None:
        self.held = False  # nothing held stays held
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


class Proxy:
    def __init__(self, config: ProxyConfig) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.server = uvicorn.Server(
            uvicorn.Config(
                create_proxy_app(config), host="127.0.0.1", port=self.port, log_level="warning"
            )
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "no proxy"
            time.sleep(0.01)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def _chat(tools: list[Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": USER, "tools": tools, **extra}


# -- 1. clients that leave, a pool that is full -------------------------------------------


def _post_and_leave(port: int, body: Any, upstream: Upstream, started: int) -> None:
    """A client that sends ``body`` and leaves (closes its connection) once the upstream
    was asked for the ``started``-th completion."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        payload = json.dumps(body).encode()
        conn.request("POST", "/v1/chat/completions", payload, {"content-type": "application/json"})
        _until(lambda: upstream.started >= started, "the upstream was asked")
    finally:
        conn.close()


def test_a_client_that_leaves_costs_no_more_upstream_calls(upstream: Upstream) -> None:
    """The model's call is wrong, so the proxy would ask twice more: after the client
    gave up, it used to, each time waiting for the slow upstream."""
    upstream.answer, upstream.held = completion({"town": "Paris"}), True
    proxy = Proxy(ProxyConfig(upstream.url, max_rounds=3))
    try:
        _post_and_leave(proxy.port, _chat([TOOL]), upstream, started=1)
        # the proxy cancels the call its client left: it hangs up on the upstream...
        _until(lambda: upstream.left == 1, "the proxy hung up on the upstream")
        # ...and asks nothing more; a request after it is answered, and is the only other
        assert httpx.get(proxy.url + "/models", timeout=60).status_code == 200
        assert (upstream.started, upstream.answered) == (1, 0)
    finally:
        proxy.close()


def test_connections_of_clients_that_left_are_released(upstream: Upstream) -> None:
    """Two pooled connections, two clients that leave a slow upstream: the next client,
    a pass-through /v1/models, is answered while those calls are still unanswered, not
    after them (the pool would hold it for pool_timeout, then answer 503)."""
    upstream.held = True
    proxy = Proxy(ProxyConfig(upstream.url, max_connections=2, pool_timeout=30.0))
    try:
        for n in (1, 2):
            _post_and_leave(proxy.port, _chat([TOOL]), upstream, started=n)
        answer = httpx.get(proxy.url + "/models", timeout=60)
        assert answer.status_code == 200
        assert upstream.answered == 0  # neither slow call was ever answered
    finally:
        proxy.close()


def test_a_full_pool_is_a_json_503_while_the_pool_is_full(upstream: Upstream) -> None:
    upstream.held = True
    proxy = Proxy(ProxyConfig(upstream.url, max_connections=1, pool_timeout=0.5))
    holder = threading.Thread(
        target=lambda: httpx.post(proxy.url + "/chat/completions", json=_chat([TOOL]), timeout=60)
    )
    try:
        holder.start()
        _until(lambda: upstream.started == 1, "the holder's call reached the upstream")
        answer = httpx.get(proxy.url + "/models", timeout=60)
        # answered while the one connection is still held: the holder has no answer yet
        assert holder.is_alive() and upstream.answered == 0
        assert answer.status_code == 503
        assert answer.json()["error"]["type"] == "upstream_busy"
    finally:
        upstream.release()
        holder.join(60)
        proxy.close()


# -- 2. heavy checks beside light clients ---------------------------------------------------


def _history(steps: int) -> list[dict[str, Any]]:
    """A chat with ``steps`` earlier tool calls and their results."""
    out: list[dict[str, Any]] = list(USER)
    for i in range(steps):
        call = {"name": "get_weather", "arguments": json.dumps({"city": f"city{i}"})}
        out.append(
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": f"c{i}", "type": "function", "function": call}]}
        )  # fmt: skip
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"t": i})})
    return out


def test_a_heavy_check_does_not_stall_other_clients(upstream: Upstream) -> None:
    """A history of 3,000 tool steps is checked as one sequence: seconds of CPU (10,000
    steps stalled every other client for 5 s a round). Other clients are answered
    meanwhile: light requests sent after the upstream answered the heavy one (its check
    then runs) are answered before the heavy one is. On the event loop, none would be
    but the one that was waiting when the check ended. (How much slower they are is
    measured by benchmarks/serve_load.py.)"""
    proxy = Proxy(ProxyConfig(upstream.url, max_rounds=1))
    heavy_done = threading.Event()
    heavy = {"model": "m", "messages": _history(3_000), "tools": [TOOL]}

    def call_heavy() -> None:
        try:
            httpx.post(proxy.url + "/chat/completions", json=heavy, timeout=300)
        finally:
            heavy_done.set()

    worker = threading.Thread(target=call_heavy)
    during = 0
    try:
        with httpx.Client(timeout=300) as light:
            assert light.get(proxy.url + "/models").status_code == 200
            worker.start()
            while not heavy_done.is_set():
                checking = upstream.answered == 1  # the heavy request is being checked
                assert light.get(proxy.url + "/models").status_code == 200
                during += checking and not heavy_done.is_set()
        worker.join(300)
        assert upstream.answered == 1 and upstream.started == 1
        assert during >= 3, during
    finally:
        proxy.close()


def test_the_header_lists_a_bounded_number_of_codes(upstream: Upstream) -> None:
    """One code per finding per round made the header grow without bound (30 KB for
    3,000 findings); the body keeps every code."""
    upstream.answer = completion({f"x{i}": 1 for i in range(40)} | {"city": "Paris"})
    proxy = Proxy(ProxyConfig(upstream.url, max_rounds=2, repair="off"))
    try:
        answer = httpx.post(proxy.url + "/chat/completions", json=_chat([TOOL]), timeout=30)
    finally:
        proxy.close()
    header = json.loads(answer.headers["x-autofeedback"])
    # the header names each code once (issue 40); the body counts every finding
    assert header["codes"] == ["E3"] and "more" not in header
    assert len(answer.json()["autofeedback"]["codes"]) == 80
    # repaired (40 numbers written as text, each coerced): the header lists 5 repairs,
    # the body all
    many = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {f"x{i}": {"type": "integer"} for i in range(40)},
            },
        },
    }
    upstream.answer = completion({f"x{i}": str(i) for i in range(40)})
    proxy = Proxy(ProxyConfig(upstream.url, max_rounds=2))
    try:
        answer = httpx.post(proxy.url + "/chat/completions", json=_chat([many]), timeout=30)
    finally:
        proxy.close()
    header = json.loads(answer.headers["x-autofeedback"])
    assert header["stop"] == "repaired"
    assert len(header["repairs"]) == 5 and header["more_repairs"] == 40 - 5
    assert len(answer.json()["autofeedback"]["repairs"]) == 40


# -- 3. credentials in --upstream -------------------------------------------------------------


def test_credentials_in_the_upstream_url_are_never_shown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dead = free_port()
    proxy = Proxy(ProxyConfig(f"http://admin:{PASSWORD}@127.0.0.1:{dead}/v1"))
    try:
        with caplog.at_level(logging.DEBUG, logger="autofeedback.proxy"):
            models = httpx.get(proxy.url + "/models", timeout=30)
            chat = httpx.post(proxy.url + "/chat/completions", json=_chat([TOOL]), timeout=30)
    finally:
        proxy.close()
    for answer in (models, chat):
        assert answer.status_code == 502
        assert PASSWORD not in answer.text and "admin" not in answer.text
        assert "REDACTED@127.0.0.1" in answer.json()["error"]["message"]
    assert PASSWORD not in caplog.text


# -- 6. bodies, headers and answers of odd shapes ------------------------------------------------


def test_a_body_past_the_limit_is_a_413(upstream: Upstream) -> None:
    proxy = Proxy(ProxyConfig(upstream.url, max_body=50_000))
    try:
        big = _chat([TOOL], padding="x" * 60_000)
        answer = httpx.post(proxy.url + "/chat/completions", json=big, timeout=30)
        # a chunked body, no Content-Length: counted as it arrives
        chunks = (b"x" * 10_000 for _ in range(8))
        streamed = httpx.post(proxy.url + "/chat/completions", content=chunks, timeout=30)
    finally:
        proxy.close()
    for got in (answer, streamed):
        assert got.status_code == 413
        assert got.json()["error"]["type"] == "too_large"
    assert upstream.started == 0


def test_a_deeply_nested_body_gets_an_answer_not_a_traceback(upstream: Upstream) -> None:
    """200 KB of nesting: a RecursionError in json.loads was a text/plain 500."""
    nested = '{"model": "m", "tools": [], "messages": ' + "[" * 100_000 + "]" * 100_000 + "}"
    proxy = Proxy(ProxyConfig(upstream.url))
    try:
        answer = httpx.post(
            proxy.url + "/chat/completions",
            content=nested.encode(),
            headers={"content-type": "application/json"},
            timeout=30,
        )
    finally:
        proxy.close()
    # not a request the proxy can read, so not one it checks: passed on as it came
    assert answer.status_code == 400
    assert answer.json() == {"error": {"message": "bad json"}}


def test_a_non_ascii_header_is_passed_through(upstream: Upstream) -> None:
    proxy = Proxy(ProxyConfig(upstream.url))
    try:
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
        conn.putrequest("GET", "/v1/echo")
        conn.putheader("X-Name", "café".encode())
        conn.endheaders()
        answer = conn.getresponse()
        status, body = answer.status, answer.read()
        conn.close()
    finally:
        proxy.close()
    assert status == 200, body
    assert ["x-name", "café"] in [[k.lower(), v] for k, v in json.loads(body)]


def test_a_string_message_under_stream_true_is_streamed_whole(upstream: Upstream) -> None:
    upstream.answer = {"id": "c", "choices": [{"index": 0, "message": "hello there"}]}
    proxy = Proxy(ProxyConfig(upstream.url))
    try:
        answer = httpx.post(
            proxy.url + "/chat/completions", json=_chat([TOOL], stream=True), timeout=30
        )
    finally:
        proxy.close()
    assert answer.status_code == 200
    events = [line[6:] for line in answer.text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    assert json.loads(events[0])["choices"][0]["delta"]["content"] == "hello there"


def test_the_scanner_cache_is_bounded_by_size_and_keeps_no_tools_text() -> None:
    config = ProxyConfig("http://127.0.0.1:9/v1", cache_bytes=30_000)
    for n in range(6):
        props = {f"p{n}_{i}": {"type": "string"} for i in range(300)}  # about 10 KB each
        config.scanner([{"name": f"t{n}", "parameters": {"type": "object", "properties": props}}])
    assert config._cached <= 30_000
    assert 1 <= len(config._scanners) <= 3
    assert all(len(key) == 32 for key in config._scanners)  # a digest, not the tools text
    huge = {f"q{i}": {"type": "string"} for i in range(2_000)}
    config.scanner([{"name": "huge", "parameters": {"type": "object", "properties": huge}}])
    assert config._cached <= 30_000  # checked, not kept


# -- the host rule, the start-up line, SIGTERM (the real process) -------------------------


def test_a_non_loopback_host_needs_allow_remote() -> None:
    err = StringIO()
    args = ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--host", "0.0.0.0"]
    assert cli_run(args, StringIO(), err) == 2
    assert "--allow-remote" in err.getvalue() and "Traceback" not in err.getvalue()
    assert check_host("::1", False, "the proxy") is None
    warning = check_host("0.0.0.0", True, "the proxy")
    assert warning is not None and "no authentication" in warning


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _start(upstream_url: str, *options: str) -> tuple[subprocess.Popen[str], int, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from autofeedback.cli import main; main()", "proxy",
         "--upstream", upstream_url, "--port", str(port), *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    deadline = time.monotonic() + 30
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port, line
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
        time.sleep(0.05)


def _in_flight(port: int, n: int) -> tuple[list[threading.Thread], list[int]]:
    """``n`` clients with a call in flight; the statuses of those answered."""
    answered: list[int] = []

    def call() -> None:
        with contextlib.suppress(httpx.HTTPError):  # cut off by the shutdown, as expected
            answer = httpx.post(
                f"http://127.0.0.1:{port}/v1/chat/completions", json=_chat([TOOL]), timeout=900
            )
            answered.append(answer.status_code)

    threads = [threading.Thread(target=call) for _ in range(n)]
    for t in threads:
        t.start()
    return threads, answered


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=30)


def test_sigterm_with_slow_calls_in_flight_stops_within_the_grace(upstream: Upstream) -> None:
    """Three calls in flight that the upstream never answers: the process still ends
    after SIGTERM (the grace runs out); that it waits for calls in flight at all is the
    next test."""
    upstream.held = True
    url = upstream.url.replace("http://", f"http://admin:{PASSWORD}@")
    proc, port, line = _start(url, "--shutdown-grace", "2")
    threads: list[threading.Thread] = []
    try:
        assert PASSWORD not in line and "REDACTED@127.0.0.1" in line  # the start-up line
        threads, answered = _in_flight(port, 3)
        _until(lambda: upstream.started == 3, "three calls reached the upstream")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == -signal.SIGTERM
        # ended with all three in flight: none got the upstream's answer (uvicorn cuts
        # them off with a 500 when the grace runs out)
        assert upstream.answered == 0 and 200 not in answered
    finally:
        _stop(proc)
        upstream.release(3)
        for t in threads:
            t.join(60)


def test_a_second_sigterm_ends_the_process_at_once(upstream: Upstream) -> None:
    """After the first SIGTERM the proxy takes no new connection but answers a call in
    flight; the second ends it with the other call still in flight (a grace of 600 s)."""
    upstream.held = True
    proc, port, _ = _start(upstream.url, "--shutdown-grace", "600")
    threads: list[threading.Thread] = []
    try:
        threads, answered = _in_flight(port, 2)
        _until(lambda: upstream.started == 2, "two calls reached the upstream")
        proc.send_signal(signal.SIGTERM)
        _until(lambda: not _listening(port), "the proxy stopped listening")
        upstream.release()  # one call gets its answer...
        _until(lambda: answered == [200], "the call in flight was answered")
        assert proc.poll() is None  # ...and the proxy waits for the other
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == -signal.SIGTERM
        assert upstream.answered == 1 and answered == [200]
    finally:
        _stop(proc)
        upstream.release(2)
        for t in threads:
            t.join(60)


def test_the_cli_checks_heavy_requests_in_a_worker_process_that_dies_with_it(
    upstream: Upstream,
) -> None:
    """Under ``autofeedback proxy`` a heavy request is checked by a worker process (a
    thread holds the GIL light requests need: their p99 was 5x beside one); its answer
    is the same; a client that leaves cancels it there too; and the worker never
    outlives the proxy, even one killed outright."""
    upstream.answer = completion({})  # city missing, nothing to repair: the proxy asks again
    proc, port, _ = _start(upstream.url)
    try:
        worker = children(proc.pid)
        assert len(worker) == 1  # the worker, started with the proxy
        heavy = {"model": "m", "messages": _history(300), "tools": [TOOL]}
        answer = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=heavy, timeout=60)
        assert answer.status_code == 422  # given up (--on-give-up error, the default)
        assert json.loads(answer.headers["x-autofeedback"])["stop"] == "repeated"
        assert answer.json()["autofeedback"]["codes"][0].startswith("E3")
        started = upstream.started
        upstream.held = True
        _post_and_leave(port, heavy, upstream, started=started + 1)
        _until(lambda: upstream.left == 1, "the worker hung up on the upstream")
        assert httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=60).status_code == 200
        assert upstream.started == started + 1  # not asked again after the client left
        proc.kill()  # no shutdown at all: the worker notices its pipe close
        proc.wait(timeout=10)
        assert gone_within(worker[0], 10)
    finally:
        _stop(proc)

"""Bounded work and memory in ``autofeedback proxy`` (issue 42), each tried as an
attacker would: a spec pattern with a back-reference over long values, an upstream
answer that never ends, paths that climb out of the upstream's base, and clients that
send their headers or body a byte at a time. Every assertion is about order and
counts, never about durations: the proxy runs under uvicorn in a thread on 127.0.0.1,
the upstream is a scripted OpenAI-compatible server on 127.0.0.1 (the test double for
the LLM)."""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the proxy extra (uvicorn, starlette, httpx) is missing")

import httpx
from _support.ports import free_port

from autofeedback import ApiCatalog, Scanner
from autofeedback.integrations._proxy import create_proxy_app
from autofeedback.integrations._proxy_config import ProxyConfig
from autofeedback.serve._serve import uvicorn_server

# a back-reference: RE2 cannot run it, and the bounded (backtracking) matcher times out
# on each of these values. The nested alternation makes the search exponential in the
# value's length (it times out on 41 characters), so no machine is fast enough to
# decide it: ^(\w+)+\1$ was decided in 0.1 s on a fast one, and the test went red.
BACK_REFERENCE = r"^((\w|\w\w)+)\1$"
LONG_VALUE = "ab" * 1450 + "!"
PARAMS = 20
TOOL = {
    "type": "function",
    "function": {
        "name": "tag",
        "parameters": {
            "type": "object",
            "properties": {
                f"p{i}": {"type": "string", "pattern": BACK_REFERENCE} for i in range(PARAMS)
            },
        },
    },
}
USER = [{"role": "user", "content": "Tag it."}]


def completion(arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"name": "tag", "arguments": json.dumps(arguments)}
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": call}],
    }
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
    }


class Upstream:
    """A scripted upstream. ``mode``: ``"call"`` answers every completion with
    :data:`answer`; ``"endless"`` streams a chunked answer that never ends, ``"huge"``
    one that declares 600 MB (``written`` counts the bytes it managed to send). Every
    path it is asked for is kept in ``paths``; ``started`` is set when a completion
    arrives."""

    def __init__(self) -> None:
        self.mode = "call"
        self.answer: Any = completion({"p0": "abab"})
        self.paths: list[str] = []
        self.written = 0
        self.started = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                upstream.paths.append(self.path)
                self._send(b'{"object": "list", "data": []}')

            def do_POST(self) -> None:
                upstream.paths.append(self.path)
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                upstream.started.set()
                if upstream.mode == "call":
                    self._send(json.dumps(upstream.answer).encode())
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if upstream.mode == "endless":
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(600 << 20))
                self.end_headers()
                chunk = b'{"pad": "' + b"x" * (64 << 10)
                framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
                try:
                    while upstream.written < 1 << 30:  # a bound for the test's own sake
                        self.wfile.write(framed if upstream.mode == "endless" else chunk)
                        upstream.written += len(chunk)
                except OSError:
                    pass  # the proxy hung up: what this test wants

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


class Proxy:
    """The proxy app under the servers' own uvicorn set-up (:func:`uvicorn_server`)."""

    def __init__(self, config: ProxyConfig, **timeouts: float) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.server = uvicorn_server(create_proxy_app(config), "127.0.0.1", self.port, **timeouts)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "no proxy"
            time.sleep(0.01)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def proxy(upstream: Upstream) -> Iterator[Proxy]:
    server = Proxy(ProxyConfig(upstream.url, retriever=None, max_rounds=1, max_body=1 << 20))
    yield server
    server.close()


# -- 1. patterns RE2 cannot run ------------------------------------------------------------


def test_a_back_reference_pattern_is_bounded_and_reported_not_checked() -> None:
    """Twenty values under a back-reference pattern: each search used to take its whole
    0.2 s bound, twice (the compiled fast path, then the detailed checks); now one call's
    searches share one budget, and every value left undecided is a warning saying so,
    never a clean verdict nor an error."""
    scanner = Scanner(ApiCatalog.from_tools([TOOL]), retriever=None)
    assert scanner.catalog.bounded_patterns
    arguments = {f"p{i}": LONG_VALUE for i in range(PARAMS)}
    findings = list(scanner.iter_findings({"name": "tag", "arguments": arguments}))
    assert findings and all(f.severity == "warning" and f.code == "E4.2" for f in findings)
    assert "not checked" in findings[0].message and "bounded matcher" in findings[0].message
    # a value the bounded matcher can decide is still judged
    wrong = list(scanner.iter_findings({"name": "tag", "arguments": {"p0": "abc"}}))
    assert [(f.code, f.severity) for f in wrong] == [("E4.2", "error")]


def test_a_back_reference_check_runs_off_the_event_loop(upstream: Upstream, proxy: Proxy) -> None:
    """A 60 KB answer (under the size the proxy checks inline) whose values run a
    back-reference pattern to its time bound: it was checked on the event loop, and a
    client asking for /v1/models meanwhile waited for it. Now that client is answered
    first."""
    upstream.answer = completion({f"p{i}": LONG_VALUE for i in range(PARAMS)})
    order: list[str] = []
    heavy: list[httpx.Response] = []

    def call_heavy() -> None:
        body = {"model": "m", "messages": USER, "tools": [TOOL]}
        heavy.append(httpx.post(proxy.url + "/chat/completions", json=body, timeout=120))
        order.append("heavy")

    worker = threading.Thread(target=call_heavy)
    worker.start()
    assert upstream.started.wait(30)
    assert httpx.get(proxy.url + "/models", timeout=120).status_code == 200
    order.append("light")
    worker.join(120)
    assert order == ["light", "heavy"]
    assert heavy[0].status_code == 200
    assert heavy[0].json()["autofeedback"]["unchecked"] == PARAMS


# -- 2. upstream answers that never end ----------------------------------------------------


@pytest.mark.parametrize("mode", ["endless", "huge"])
def test_an_upstream_answer_past_the_limit_is_not_buffered(
    upstream: Upstream, proxy: Proxy, mode: str
) -> None:
    """A checked answer must be read whole; one that never ends, or declares 600 MB, was
    read into memory to its end (RSS 75 MB -> 2.2 GB). Now the proxy stops reading at
    its limit (1 MB here) and answers a JSON 502."""
    upstream.mode = mode
    body = {"model": "m", "messages": USER, "tools": [TOOL]}
    answer = httpx.post(proxy.url + "/chat/completions", json=body, timeout=60)
    assert answer.status_code == 502
    assert answer.json()["error"]["type"] == "upstream_too_large"
    # the upstream could write little more than the limit plus the sockets' buffers
    assert upstream.written < 64 << 20


# -- 3. paths outside the upstream's base ---------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/v1/../../stats",
        "/v1/%2e%2e/%2e%2e/stats",
        "/v1/%2E%2E/stats",
        "/v1/chat/../../stats",
        "/v1/..%2f..%2fstats",
        "/v1/..%5cstats",
        "/../stats",
    ],
)
def test_a_path_that_leaves_the_base_never_reaches_the_upstream(
    upstream: Upstream, proxy: Proxy, path: str
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
    connection.request("GET", path)  # sent as written: httpx would resolve the dots itself
    answer = connection.getresponse()
    payload = json.loads(answer.read())
    connection.close()
    assert answer.status == 400
    assert payload["error"]["type"] == "bad_path"
    assert upstream.paths == []


def test_dot_segments_inside_the_base_are_resolved_before_forwarding(
    upstream: Upstream, proxy: Proxy
) -> None:
    for path in ("/v1/chat/../models", "/v1/./models", "/v1/%2e/models", "/models"):
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
        connection.request("GET", path)
        assert connection.getresponse().status == 200
        connection.close()
    assert upstream.paths == ["/v1/models"] * 4


def test_a_checked_path_cannot_be_reached_unchecked_through_dot_segments(
    upstream: Upstream, proxy: Proxy
) -> None:
    """``/v1/chat/completions/.`` reaches the upstream's completions; it must be checked
    as that path is, not passed through."""
    upstream.answer = completion({"p0": "abc"})  # breaks the pattern: an error
    body = json.dumps({"model": "m", "messages": USER, "tools": [TOOL]})
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
    connection.request(
        "POST", "/v1/models/../chat/completions", body, {"Content-Type": "application/json"}
    )
    answer = connection.getresponse()
    payload = json.loads(answer.read())
    connection.close()
    assert upstream.paths == ["/v1/chat/completions"]
    assert answer.status == 422  # the call is still wrong after the one round
    assert payload["autofeedback"]["codes"] == ["E4.2"]


# -- 4. slow clients -------------------------------------------------------------------------


def _dribble(port: int, head: bytes, trickle: bytes) -> int:
    """Send ``head`` at once, then ``trickle`` a byte at a time (20 ms apart) until the
    server closes the connection; the bytes of ``trickle`` sent by then."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        for byte in trickle:
            readable, _, _ = select.select([sock], [], [], 0.02)
            try:
                if readable and not sock.recv(65536):
                    return sent  # closed by the server
                sock.sendall(bytes([byte]))
            except OSError:
                return sent
            sent += 1
    return sent


@pytest.fixture
def tight_proxy(upstream: Upstream) -> Iterator[Proxy]:
    config = ProxyConfig(upstream.url, retriever=None, max_rounds=1)
    server = Proxy(config, header_timeout=0.5, body_timeout=0.5)
    yield server
    server.close()


def test_headers_sent_a_byte_at_a_time_are_cut_off(tight_proxy: Proxy) -> None:
    headers = b"".join(b"X-Slow-%d: %s\r\n" % (i, b"y" * 20) for i in range(40))
    sent = _dribble(tight_proxy.port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n", headers)
    assert sent < len(headers)
    # and the proxy still answers a client that sends its request at once
    assert httpx.get(tight_proxy.url + "/models", timeout=30).status_code == 200


def test_a_body_sent_a_byte_at_a_time_is_cut_off(tight_proxy: Proxy, upstream: Upstream) -> None:
    body = json.dumps({"model": "m", "messages": USER, "tools": [TOOL], "pad": "z" * 800})
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    sent = _dribble(tight_proxy.port, head, body.encode())
    assert sent < len(body)
    assert upstream.paths == []  # nothing of it went upstream
    assert httpx.get(tight_proxy.url + "/models", timeout=30).status_code == 200


def test_a_kept_alive_connection_gets_the_same_bound_for_its_next_request(
    tight_proxy: Proxy,
) -> None:
    request = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
    headers = b"".join(b"X-Slow-%d: %s\r\n" % (i, b"y" * 20) for i in range(40))
    with socket.create_connection(("127.0.0.1", tight_proxy.port), timeout=30) as sock:
        sock.sendall(request)
        answered = b""
        while not answered.endswith(b"0\r\n\r\n"):  # the end of the chunked answer
            got = sock.recv(65536)
            assert got, answered
            answered += got
        assert answered.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /v1/models HTTP/1.1\r\n")
        sent = 0
        for byte in headers:
            readable, _, _ = select.select([sock], [], [], 0.02)
            try:
                if readable and not sock.recv(65536):
                    break
                sock.sendall(bytes([byte]))
            except OSError:
                break
            sent += 1
    assert sent < len(headers)


def test_the_mcp_gate_checks_back_reference_calls_off_the_event_loop() -> None:
    """The MCP proxy checks a light call on its event loop; one whose tool has a pattern
    RE2 cannot run may take the whole time bound, so it counts as heavy (a worker thread
    or process), and its undecided values are warnings, not errors."""
    pytest.importorskip("mcp", reason="the mcp extra is missing")
    from autofeedback.integrations._mcp_gate import ToolGate

    schema = TOOL["function"]["parameters"]
    gate = ToolGate(retriever=None)
    gate.load([{"name": "tag", "inputSchema": schema}, {"name": "plain", "inputSchema": {}}])
    assert gate.is_heavy("tag", {"p0": "abab"})
    decision = gate.check("tag", {f"p{i}": LONG_VALUE for i in range(PARAMS)})
    assert decision.action == "forward"

"""The OpenAI proxy's verdicts on what real agents send (issue 40): ids an agent's system
or developer prompt carries are given, not made up; the header names each code once,
those of the repairs included; an upstream answer no SDK can read is a 502 that says
what is wrong with it, never a bare 500."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the proxy extra (uvicorn, starlette, httpx) is missing")

import httpx
import uvicorn

from autofeedback import ApiCatalog
from autofeedback.integrations._proxy import create_proxy_app
from autofeedback.integrations._proxy_config import ProxyConfig

DATA = Path(__file__).resolve().parents[1] / "data"
CALENDAR = ApiCatalog.from_file(DATA / "specs" / "calendar.yaml")
TOOLS = CALENDAR.to_tools()
CHATS = {c["id"]: c for c in json.loads((DATA / "agents" / "calendar_chats.json").read_text())}


class Upstream:
    """A scripted OpenAI-compatible server that answers the raw bytes it is given."""

    def __init__(self) -> None:
        self.script: list[bytes] = []
        self.seen: list[dict[str, Any]] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                upstream.seen.append(json.loads(raw))
                body = upstream.script.pop(0)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


class Proxy:
    def __init__(self, config: ProxyConfig) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"
        app = create_proxy_app(config)
        cfg = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="none")
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the proxy did not start")
            time.sleep(0.01)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


@pytest.fixture
def proxy(upstream: Upstream) -> Iterator[Proxy]:
    upstream.script.clear()
    upstream.seen.clear()
    running = Proxy(ProxyConfig(upstream.url, max_rounds=2, retriever=None))
    yield running
    running.close()


def completion(name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def ask(proxy: Proxy, messages: list[dict[str, Any]]) -> httpx.Response:
    body = {"model": "scripted", "messages": messages, "tools": TOOLS}
    return httpx.post(proxy.url + "/chat/completions", json=body, timeout=60)


@pytest.mark.parametrize("chat", ["scheduler-rsvp", "ops-tenant-developer", "oncall-freebusy"])
def test_ids_the_agents_prompt_carries_are_given(
    upstream: Upstream, proxy: Proxy, chat: str
) -> None:
    # before: 422 invalid_tool_call, "E5.3 'calendarId' = '7b0e...' is not given by the
    # user or an earlier response", for every agent that keeps its ids in its prompt
    case = CHATS[chat]
    upstream.script.append(json.dumps(completion(**case["call"])).encode())
    answer = ask(proxy, case["messages"])
    assert answer.status_code == 200, answer.text
    assert json.loads(answer.headers["x-autofeedback"]) == {
        "rounds": 1,
        "codes": [],
        "stop": "clean",
    }
    assert len(upstream.seen) == 1


def test_an_id_nobody_gave_is_still_fed_back(upstream: Upstream, proxy: Proxy) -> None:
    case = CHATS["made-up-id"]
    assert not case["grounded"]
    upstream.script += [json.dumps(completion(**case["call"])).encode()] * 2
    answer = ask(proxy, case["messages"])
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["type"] == "invalid_tool_call"
    assert "E5.3 'eventId' = 'evt_offsite_2026' is not given" in error["message"]


def test_the_responses_api_reads_the_instructions(upstream: Upstream, proxy: Proxy) -> None:
    case = CHATS["scheduler-rsvp"]
    call = case["call"]
    upstream.script.append(
        json.dumps(
            {
                "id": "resp_1",
                "object": "response",
                "status": "completed",
                "output": [
                    {
                        "type": "function_call",
                        "id": "fc_1",
                        "call_id": "call_1",
                        "name": call["name"],
                        "arguments": json.dumps(call["arguments"]),
                    }
                ],
            }
        ).encode()
    )
    tools = [{"type": "function", **t["function"]} for t in TOOLS]
    body = {
        "model": "scripted",
        "instructions": case["messages"][0]["content"],
        "input": case["messages"][1]["content"],
        "tools": tools,
    }
    answer = httpx.post(proxy.url + "/responses", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    assert json.loads(answer.headers["x-autofeedback"])["codes"] == []


def test_the_header_names_each_code_once_with_the_repairs(upstream: Upstream, proxy: Proxy) -> None:
    # before: {"rounds":1,"codes":["E2.2"],"stop":"repaired","repairs":["E2.2 ...",
    # "E3.2 ...", "E4.1 ..."]}: the codes said one mistake, the repairs three
    arguments = {"calendar_id": "c_team_01", "maxResults": "5"}
    upstream.script.append(json.dumps(completion("list_events", arguments)).encode())
    messages = [
        {"role": "system", "content": "The team calendar is c_team_01."},
        {"role": "user", "content": "Next five events of the team calendar?"},
    ]
    answer = ask(proxy, messages)
    assert answer.status_code == 200, answer.text
    header = json.loads(answer.headers["x-autofeedback"])
    assert header["stop"] == "repaired" and header["rounds"] == 1
    assert header["codes"] == ["E2.2", "E3.2", "E3.4", "E4.1"]
    assert {r.split()[0] for r in header["repairs"]} <= set(header["codes"])
    sent = answer.json()["choices"][0]["message"]["tool_calls"][0]["function"]
    assert (sent["name"], json.loads(sent["arguments"])) == (
        "listEvents",
        {"calendarId": "c_team_01", "maxResults": 5},
    )


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (
            b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": null, '
            b'"tool_calls": [{"id": "c", "type": "function", "function": {"name": '
            b'"listCalendars", "arguments": "{}"}}]}}], "usage": {"total_tokens": NaN}}',
            "is not valid JSON (NaN is not JSON)",
        ),
        (
            json.dumps(
                {
                    "choices": [
                        {
                            "index": 0,
                            "message": {
                                "role": "assistant",
                                "tool_calls": {"id": "c", "function": {"name": "listCalendars"}},
                            },
                        }
                    ]
                }
            ).encode(),
            "has 'tool_calls' that is a JSON dict, not a list (choices[0].message.tool_calls)",
        ),
        (b"<html>Bad gateway</html>", "is not valid JSON (Expecting value)"),
        (b'{"choices": "none"}', "has no 'choices' list"),
    ],
    ids=["nan", "tool-calls-object", "html", "choices-text"],
)
def test_an_upstream_answer_no_sdk_reads_is_a_502_that_says_why(
    upstream: Upstream, proxy: Proxy, answer: bytes, said: str
) -> None:
    # before: a generic 500 {"error": {"message": "autofeedback proxy error"}} (NaN, an
    # object for tool_calls) or the broken answer passed on as a 200 (HTML)
    upstream.script.append(answer)
    got = ask(proxy, [{"role": "user", "content": "my calendars?"}])
    assert got.status_code == 502
    error = got.json()["error"]
    assert error == {
        "message": f"the upstream's answer {said}",
        "type": "upstream_invalid_response",
        "code": 502,
    }
    assert json.loads(got.headers["x-autofeedback"])["stop"] == "upstream-invalid"


PROXY_PAGE = Path(__file__).resolve().parents[2] / "docs" / "proxy.md"
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
            },
        },
    }
]


def test_the_proxy_page_shows_what_the_proxy_says(upstream: Upstream, tmp_path: Path) -> None:
    # before: the page showed {"rounds":2,...,"stop":"repaired"} and a --log example
    # with a feedback round before "repaired": a repaired call takes one round
    page = PROXY_PAGE.read_text(encoding="utf-8")
    shown_header = next(
        line.removeprefix("# ") for line in page.splitlines() if line.startswith('# {"rounds"')
    )
    log_block = page.split("```json\n", 1)[1].split("\n```", 1)[0]
    shown_log = [json.loads(line) for line in log_block.splitlines()]
    upstream.script.clear()
    upstream.seen.clear()
    upstream.script += [
        json.dumps(completion("get_weather", arguments)).encode()
        for arguments in (
            {"City": "Paris"},
            {"city": "Paris", "unit": "kelvin"},
            {"city": "Paris", "unit": "celsius"},
        )
    ]
    log = tmp_path / "proxy.jsonl"
    running = Proxy(ProxyConfig(upstream.url, log=str(log), retriever=None))
    try:
        headers = []
        for _ in range(2):
            body = {
                "model": "scripted",
                "messages": [{"role": "user", "content": "Weather in Paris, in celsius?"}],
                "tools": WEATHER,
            }
            answer = httpx.post(running.url + "/chat/completions", json=body, timeout=60)
            headers.append(answer.headers["x-autofeedback"])
    finally:
        running.close()
    assert headers[0] == shown_header
    written = [json.loads(line) for line in log.read_text().splitlines()]

    def stable(record: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in record.items() if k not in ("ts", "ms")}

    assert [stable(r) for r in written] == [stable(r) for r in shown_log]

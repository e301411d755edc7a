"""The proxy's HTTP side: the client's request read (its path kept under the upstream's
base, its body bounded, its headers passed on), forwarded or passed through, the
upstream's answer read and checked for shape, and the final answer written (JSON, or
OpenAI's SSE events); see :mod:`autofeedback.integrations._proxy`."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote

import anyio
import anyio.to_thread
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from autofeedback.integrations._proxy_config import ProxyConfig, T

_log = logging.getLogger("autofeedback.proxy")


_DROP_REQUEST = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "upgrade",
        "proxy-authorization",
        "proxy-connection",
        "accept-encoding",
    }
)


_DROP_RESPONSE = frozenset(
    {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}
)


_HEADER = "x-autofeedback"


_HEADER_CODES = 16


_HEADER_REPAIRS = 5


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status)


class _OutsideBase(ValueError):
    """A request path that leaves the upstream's base (``/v1/../../stats``)."""


def _target(config: ProxyConfig, request: Request) -> tuple[httpx.URL, str]:
    """The upstream URL for the client's path (``/v1/x`` -> ``{upstream}/x``) and that
    path as checked (dot segments resolved, percent-decoded).

    Dot segments are resolved here, decoded ones included (``%2e%2e``), and one that
    climbs above the upstream's base is refused (:class:`_OutsideBase`): httpx and the
    upstream would otherwise resolve ``/v1/../../stats`` to ``/stats``, a path outside
    the API. The rest of the path is passed on as the client encoded it."""
    raw = request.scope.get("raw_path") or request.url.path.encode("utf-8")
    segments = raw.decode("latin-1").split("/")[1:]
    if segments[:1] == ["v1"]:
        segments = segments[1:]
    kept: list[str] = []
    for i, segment in enumerate(segments):
        plain = unquote(segment)
        if plain in (".", ".."):
            if plain == ".." and not kept:
                raise _OutsideBase
            if plain == "..":
                kept.pop()
            if i == len(segments) - 1:
                kept.append("")  # "/a/." is "/a/", as RFC 3986 resolves it
            continue
        if any(part in (".", "..") for part in re.split(r"[/\\]", plain)):
            raise _OutsideBase  # "..%2f..": a dot segment once the upstream decodes it
        kept.append(segment)
    rest = "/" + "/".join(kept) if segments else ""
    query = request.url.query
    url = httpx.URL(config.upstream + rest + (f"?{query}" if query else ""))
    base = httpx.URL(config.upstream)
    if (url.scheme, url.host, url.port) != (base.scheme, base.host, base.port):
        raise _OutsideBase  # pragma: no cover - a path cannot change the origin
    return url, "/v1" + unquote(rest)


def _forward_headers(request: Request, *drop: bytes) -> list[tuple[bytes, bytes]]:
    """The client's headers as it sent them (bytes: a non-ASCII value is passed on, not
    re-encoded), without the hop-by-hop ones and ``drop``."""
    return [
        (k, v)
        for k, v in request.headers.raw
        if k.decode("latin-1").lower() not in _DROP_REQUEST and k.lower() not in drop
    ]


def _secret_of(request: Request) -> str | None:
    """The client's key: ``Authorization`` (after its scheme), else Anthropic's
    ``x-api-key`` or Azure OpenAI's ``api-key``."""
    auth = request.headers.get("authorization", "")
    if auth:
        return auth.split(None, 1)[-1]
    return request.headers.get("x-api-key") or request.headers.get("api-key") or None


async def _unless_disconnected(request: Request, work: Callable[[], Awaitable[T]]) -> T | None:
    """``work()``, cancelled when the client disconnects (then ``None``): a client that
    gave up must not keep an upstream call, or a pooled connection, busy."""
    result: list[T] = []

    async def watch(scope: anyio.CancelScope) -> None:
        while True:  # the body is read: the next message can only be the disconnect
            message = await request.receive()
            if message["type"] == "http.disconnect":
                scope.cancel()
                return

    failed: list[Exception] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(watch, tg.cancel_scope)
        try:
            result.append(await work())
        except Exception as exc:  # raised as itself, not inside the task group's group
            failed.append(exc)
        tg.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return result[0] if result else None


async def _read_body(config: ProxyConfig, request: Request) -> bytes | Response:
    """The body, or the 413 for one past ``max_body``."""
    declared = request.headers.get("content-length", "")
    too_large = _error(
        413, f"the request body exceeds the proxy's limit of {config.max_body} bytes", "too_large"
    )
    if declared.isdigit() and int(declared) > config.max_body:
        return too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > config.max_body:
            return too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _upstream_answer(body: bytes, kind: str) -> tuple[Any, str | None]:
    """The upstream's answer to a checked request, read, and what is wrong with it (one
    line, ``None`` when nothing is): not JSON, ``NaN`` or ``Infinity`` (which JSON does
    not allow and no SDK reads), or not the shape of a chat completion or a Responses
    object (``tool_calls`` that is no list of calls)."""
    try:
        data = json.loads(body, parse_constant=_no_constant) if body else None
    except RecursionError:
        return None, "is nested too deeply to read"
    except ValueError as exc:
        reason = str(exc).split(":")[0] if "is not JSON" not in str(exc) else str(exc)
        return None, f"is not valid JSON ({reason})"
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a JSON {type(data).__name__}"
        return None, f"is {what}, not a JSON object"
    shape = {"chat": _chat_shape, "responses": _responses_shape, "anthropic": _anthropic_shape}
    return data, shape[kind](data)


def _chat_shape(data: Mapping[str, Any]) -> str | None:
    choices = data.get("choices")
    if not isinstance(choices, list):
        return "has no 'choices' list"
    for i, choice in enumerate(choices):
        if not isinstance(choice, Mapping):
            return f"has a choice that is a JSON {type(choice).__name__} (choices[{i}])"
        message = choice.get("message")
        if not isinstance(message, Mapping):
            continue  # a text answer, however it is written (a bare string): passed on
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            return (
                f"has 'tool_calls' that is a JSON {type(calls).__name__}, not a list "
                f"(choices[{i}].message.tool_calls)"
            )
        for k, call in enumerate(calls or ()):
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                return (
                    f"has a tool call without a function name "
                    f"(choices[{i}].message.tool_calls[{k}])"
                )
    return None


def _responses_shape(data: Mapping[str, Any]) -> str | None:
    output = data.get("output")
    if output is None:
        return None
    if not isinstance(output, list):
        return f"has 'output' that is a JSON {type(output).__name__}, not a list"
    for i, item in enumerate(output):
        call = isinstance(item, Mapping) and item.get("type") == "function_call"
        if call and not isinstance(item.get("name"), str):
            return f"has a function call without a name (output[{i}])"
    return None


def _anthropic_shape(data: Mapping[str, Any]) -> str | None:
    content = data.get("content")
    if not isinstance(content, list):
        return "has no 'content' list"
    for i, block in enumerate(content):
        if not isinstance(block, Mapping):
            return f"has a content block that is a JSON {type(block).__name__} (content[{i}])"
        if block.get("type") == "tool_use" and not isinstance(block.get("name"), str):
            return f"has a tool_use block without a name (content[{i}])"
    return None


def _load(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
        return None


async def _forward(
    config: ProxyConfig,
    client: httpx.AsyncClient,
    request: Request,
    target: httpx.URL,
    body: bytes,
    note: str | None,
) -> Response:
    try:
        answer = await _unless_disconnected(
            request, lambda: _pass_through(client, request, target, body, note)
        )
    except httpx.HTTPError as exc:
        return _unreachable(config, exc, _secret_of(request))
    return answer if answer is not None else Response(status_code=499)


def _unreachable(config: ProxyConfig, exc: httpx.HTTPError, secret: str | None) -> JSONResponse:
    reason = config.scrub(f"{type(exc).__name__}: {exc}".rstrip(": "), secret)
    shown = config.shown_upstream
    if isinstance(exc, httpx.PoolTimeout):
        _log.warning("upstream %s: every connection busy (%s)", shown, reason)
        return _error(
            503,
            f"the proxy's {config.max_connections} connections to the upstream are all "
            f"busy; retry shortly",
            "upstream_busy",
        )
    _log.warning("upstream %s failed: %s", shown, reason)
    return _error(502, f"the upstream {shown} could not be reached ({reason})", "upstream_error")


async def _pass_through(
    client: httpx.AsyncClient,
    request: Request,
    target: httpx.URL,
    body: bytes,
    note: str | None = None,
) -> Response:
    upstream_request = client.build_request(
        request.method, target, headers=_forward_headers(request), content=body
    )
    response = await client.send(upstream_request, stream=True)
    _log.info(
        "%s %s -> %d (passed through)", request.method, request.url.path, response.status_code
    )

    async def body_iter() -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_raw():
                yield chunk
        finally:
            # shielded: a client that left cancels the stream, and an unclosed response
            # would keep its pooled connection checked out for good
            with anyio.CancelScope(shield=True):
                await response.aclose()

    answer = StreamingResponse(body_iter(), status_code=response.status_code)
    # the upstream's headers as bytes, as it sent them (a non-ASCII value included)
    answer.raw_headers = [
        (k, v) for k, v in response.headers.raw if k.decode("latin-1").lower() not in _DROP_RESPONSE
    ]
    if note is not None:
        answer.raw_headers.append((_HEADER.encode(), note.encode()))
    return answer


async def _post_capped(
    client: httpx.AsyncClient,
    target: httpx.URL,
    content: bytes,
    headers: list[tuple[bytes, bytes]],
    cap: int,
) -> tuple[httpx.Response, bytes | None]:
    """One round's upstream answer, read as a stream up to ``cap`` bytes (decoded):
    ``None`` for the body of one past it, which is dropped at once. A checked answer
    must be read whole, and one that never ends, or is 600 MB, used to be buffered
    whole (2.2 GB of RSS at the peak)."""
    sent = client.build_request("POST", target, content=content, headers=headers)
    response = await client.send(sent, stream=True)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                return response, None
            chunks.append(chunk)
    finally:
        with anyio.CancelScope(shield=True):  # the connection goes back to the pool
            await response.aclose()
    return response, b"".join(chunks)


def _too_large_answer(config: ProxyConfig, request: Request) -> JSONResponse:
    _log.warning(
        "%s %s: the upstream's answer exceeds %d bytes (--max-body-mb); not read further",
        request.method,
        request.url.path,
        config.max_body,
    )
    return _error(
        502,
        f"the upstream's answer exceeds the proxy's limit of {config.max_body} bytes "
        "(--max-body-mb)",
        "upstream_too_large",
    )


def _dumps(value: Any) -> bytes:
    # what httpx's json= and Starlette's JSONResponse wrote, here off the event loop
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8"
    )


def _responses_sse(final: Mapping[str, Any]) -> Iterator[bytes]:
    """The final Responses API object as its streaming events: ``response.created``,
    each output item added, its text or arguments as one delta, done, then
    ``response.completed`` carrying the whole response (with usage summed over rounds
    and the ``autofeedback`` field), the sequence the ``openai`` client's stream reads."""
    counter = iter(range(1 << 30))

    def event(kind: str, **fields: Any) -> bytes:
        data = {"type": kind, "sequence_number": next(counter), **fields}
        return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()

    started = {**final, "status": "in_progress", "output": [], "usage": None}
    started.pop("autofeedback", None)
    yield event("response.created", response=started)
    yield event("response.in_progress", response=started)
    for index, item in enumerate(final.get("output") or []):
        if not isinstance(item, Mapping):
            continue
        item_id = item.get("id", f"item_{index}")
        kind = item.get("type")
        if kind == "message":
            parts = [p for p in item.get("content") or [] if isinstance(p, Mapping)]
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            for c, part in enumerate(parts):
                where = {"item_id": item_id, "output_index": index, "content_index": c}
                text_field = "refusal" if part.get("type") == "refusal" else "text"
                empty = {**part, text_field: ""}
                yield event("response.content_part.added", **where, part=empty)
                text = part.get(text_field) or ""
                if text_field == "refusal":
                    yield event("response.refusal.delta", **where, delta=text)
                    yield event("response.refusal.done", **where, refusal=text)
                else:
                    yield event("response.output_text.delta", **where, delta=text, logprobs=[])
                    yield event("response.output_text.done", **where, text=text, logprobs=[])
                yield event("response.content_part.done", **where, part=part)
        elif kind == "function_call":
            arguments = item.get("arguments") or ""
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            where = {"item_id": item_id, "output_index": index}
            yield event("response.function_call_arguments.delta", **where, delta=arguments)
            yield event(
                "response.function_call_arguments.done",
                **where,
                arguments=arguments,
                name=item.get("name"),
            )
        else:  # reasoning, web search calls...: whole, added then done
            yield event("response.output_item.added", output_index=index, item=item)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=dict(final))


def _anthropic_sse(final: Mapping[str, Any]) -> Iterator[bytes]:
    """The final Anthropic message as the Messages API's streaming events:
    ``message_start`` (the message without its content), each block started, its text
    (``text_delta``) or input (``input_json_delta``) as one delta, stopped, then
    ``message_delta`` (the stop reason, usage summed over rounds and the
    ``autofeedback`` field) and ``message_stop``: the sequence the ``anthropic`` client's
    stream folds back into the message. Other blocks (thinking, server tool results)
    start whole."""

    def event(kind: str, **fields: Any) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()

    given = final.get("usage")
    usage: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    started = {k: v for k, v in final.items() if k not in ("content", "autofeedback")}
    started.update(content=[], stop_reason=None, stop_sequence=None)
    started["usage"] = {**usage, "output_tokens": 0}
    yield event("message_start", message=started)
    blocks = final.get("content")
    for index, block in enumerate(blocks if isinstance(blocks, list) else []):
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            yield event("content_block_start", index=index, content_block={**block, "text": ""})
            delta = {"type": "text_delta", "text": block.get("text") or ""}
            yield event("content_block_delta", index=index, delta=delta)
        elif kind == "tool_use":
            yield event("content_block_start", index=index, content_block={**block, "input": {}})
            partial = json.dumps(block.get("input", {}), ensure_ascii=False)
            delta = {"type": "input_json_delta", "partial_json": partial}
            yield event("content_block_delta", index=index, delta=delta)
        else:
            yield event("content_block_start", index=index, content_block=dict(block))
        yield event("content_block_stop", index=index)
    ending = {"stop_reason": final.get("stop_reason"), "stop_sequence": final.get("stop_sequence")}
    yield event(
        "message_delta",
        delta=ending,
        usage={"output_tokens": usage.get("output_tokens", 0)},
        autofeedback=final.get("autofeedback"),
    )
    yield event("message_stop")


def _sse(final: Mapping[str, Any], include_usage: bool) -> Iterator[bytes]:
    """The final chat completion as OpenAI ``chat.completion.chunk`` events."""
    base = {
        "id": final.get("id", "chatcmpl-autofeedback"),
        "object": "chat.completion.chunk",
        "created": final.get("created", int(time.time())),
        "model": final.get("model", ""),
    }
    if final.get("system_fingerprint"):
        base["system_fingerprint"] = final["system_fingerprint"]

    def event(choices: list[Any], **extra: Any) -> bytes:
        return f"data: {json.dumps({**base, 'choices': choices, **extra})}\n\n".encode()

    for choice in final.get("choices") or []:
        if not isinstance(choice, Mapping):
            continue
        index = choice.get("index", 0)
        message = choice.get("message") or {}
        if not isinstance(message, Mapping):  # an upstream that sent the text alone
            message = {"content": message if isinstance(message, str) else None}
        delta: dict[str, Any] = {"role": message.get("role", "assistant")}
        if message.get("content") is not None:
            delta["content"] = message["content"]
        if message.get("refusal") is not None:
            delta["refusal"] = message["refusal"]
        calls = message.get("tool_calls") or []
        calls = [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []
        if calls:
            delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(calls)]
        yield event([{"index": index, "delta": delta, "finish_reason": None}])
        yield event(
            [{"index": index, "delta": {}, "finish_reason": choice.get("finish_reason", "stop")}]
        )
    if include_usage and final.get("usage") is not None:
        yield event([], usage=final["usage"])
    yield event([], autofeedback=final.get("autofeedback"))
    yield b"data: [DONE]\n\n"

"""``autofeedback proxy``: an OpenAI-compatible HTTP server in front of any upstream that
checks the model's tool calls against the request's own ``tools`` and asks again.

For a ``/v1/chat/completions`` (or ``/v1/responses``) request with ``tools``, the proxy
forwards it, checks every returned tool call with the :class:`~autofeedback.Scanner`
(against ``ApiCatalog.from_tools(tools)``, and with ``spec`` against an OpenAPI document
for the tools it names), and when a call has an error appends the model's message and
the feedback as the tool result (role ``tool`` with the ``tool_call_id``;
``function_call_output`` for Responses) and asks again. Bounded: ``max_rounds`` requests
upstream, a stop when the model repeats an identical rejected call, and an optional
token budget. The client gets the final completion with ``usage`` summed over rounds,
and what happened in the ``x-autofeedback`` header and an ``"autofeedback"`` field of
the body. ``stream: true`` is answered by asking upstream without streaming,
validating, then streaming the final answer as OpenAI's SSE events (Chat Completions
chunks, or the Responses API's ``response.*`` events). Anthropic's Messages API
(``/v1/messages``) is checked the same way, in its own shapes (``tool_use`` blocks, a
user turn of ``tool_result`` blocks as feedback, its streaming events). Every other
request (``/v1/models``, ``/v1/embeddings``, unknown paths, requests without tools)
passes through unchanged, streamed both ways.

Built on Starlette (the ASGI toolkit, a small dependency: routing, requests, streaming
responses and lifespan, nothing more) served by uvicorn, and one ``httpx.AsyncClient``
(connection pooling, streaming, timeouts) to the upstream. The client's
``Authorization`` is passed through and never logged; requests go only to the
configured upstream origin; an unreachable upstream is a 502 with a JSON error.

Under load (issue 29): a client that disconnects has its upstream calls cancelled; at
most ``max_connections`` upstream connections, and a request that waits more than
``pool_timeout`` for one is a 503 with a JSON error; bodies past ``max_body`` are a 413;
checks of a request over :data:`INLINE_BYTES` run in worker threads (one lane for
requests up to :data:`HEAVY_BYTES`, one thread for larger ones, at most
:data:`HEAVY_WAITING` of those held at once), or, under ``autofeedback proxy``, in a
worker process at a lower CPU priority (:data:`RELAYED` at once): threads keep the
event loop turning but hold its GIL, a process does not. Scanners are cached by the
size of their tools (``cache_bytes``); user info in ``--upstream`` is never shown
(start-up line, log, error bodies); SIGTERM lets in-flight requests finish for
``grace`` seconds, then cancels them, and a second SIGTERM ends the process at once.

The proxy's modules, in the order a request meets them: :mod:`._proxy_config` (the
settings, the scanner cache, the lanes CPU work runs in), :mod:`._proxy_http` (reading the
client's request, forwarding it, reading the upstream's answer, writing the final one,
SSE included), :mod:`._proxy_rounds` (the checked rounds: an adapter over the run driver),
this module (the ASGI app that routes a request to one or the other) and
:mod:`._proxy_runner` (``autofeedback proxy``: the server and its heavy-request worker).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator

import anyio
import anyio.to_thread
import httpx
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import AutoFeedbackError
from autofeedback.integrations._jsonlog import JsonLog
from autofeedback.integrations._proxy_config import INLINE_BYTES, RELAYED, ProxyConfig, _Lanes
from autofeedback.integrations._proxy_http import (
    _error,
    _forward,
    _load,
    _OutsideBase,
    _pass_through,
    _read_body,
    _secret_of,
    _target,
    _unless_disconnected,
    _unreachable,
)
from autofeedback.integrations._proxy_rounds import _checked
from autofeedback.scanner._scan import Scanner

__all__ = ["create_proxy_app"]


_log = logging.getLogger("autofeedback.proxy")


def create_proxy_app(config: ProxyConfig) -> Starlette:
    """The proxy as an ASGI app (serve it with uvicorn, or mount it).

    >>> app = create_proxy_app(ProxyConfig("http://127.0.0.1:8080/v1"))
    >>> type(app).__name__
    'Starlette'
    """

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        limits = httpx.Limits(
            max_connections=config.max_connections,
            max_keepalive_connections=min(20, config.max_connections),
        )
        # a request that cannot get a connection within pool_timeout is a fast 503:
        # waiting out the 300 s upstream timeout stalled every client, /v1/models included
        timeout = httpx.Timeout(config.timeout, connect=10.0, pool=config.pool_timeout)
        # the spec loaders and the checks load on first use: here, before the first
        # request, which would otherwise wait for them (a client with a short timeout
        # saw no upstream call at all); a clean call, so the detailed checks' imports
        # (python-jsonschema) stay for the first call that needs them
        await anyio.to_thread.run_sync(_warm_up)
        async with httpx.AsyncClient(
            timeout=timeout, limits=limits, follow_redirects=False
        ) as client:
            app.state.client = client
            app.state.lanes = lanes = _Lanes(config)
            app.state.log = JsonLog(config.log)
            try:
                if config.heavy_socket is None:
                    yield
                    return
                # the worker bounds its own upstream calls; this bounds a worker that hangs
                relay = httpx.Timeout(config.timeout * (config.max_rounds + 1), connect=5.0)
                transport = httpx.AsyncHTTPTransport(uds=config.heavy_socket)
                async with httpx.AsyncClient(transport=transport, timeout=relay) as worker:
                    lanes.worker = worker
                    lanes.worker_socket = config.heavy_socket
                    yield
            finally:
                app.state.log.close()

    async def endpoint(request: Request) -> Response:
        try:
            return await _handle(config, request.app.state.client, request.app.state.lanes, request)
        except ClientDisconnect:
            return Response(status_code=499)  # nobody is there to read it
        except Exception as exc:  # a bug of ours must not become a traceback
            _log.error("proxy error: %s", config.scrub(f"{type(exc).__name__}: {exc}"))
            return _error(500, "autofeedback proxy error", "proxy_error")

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    return Starlette(
        routes=[Route("/{path:path}", endpoint, methods=methods)],
        lifespan=lifespan,
    )


def _warm_up() -> None:
    """Import what checking a clean call needs (the spec loaders, the checks) by checking
    one made-up call."""
    tool = {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    with contextlib.suppress(Exception):
        scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
        list(scanner.iter_findings({"name": "f", "arguments": {"a": 1}}))


async def _handle(
    config: ProxyConfig, client: httpx.AsyncClient, lanes: _Lanes, request: Request
) -> Response:
    try:
        target, path = _target(config, request)
    except _OutsideBase:
        return _error(400, "the path leaves the API's base path", "bad_path")
    path = path.rstrip("/")
    secret = _secret_of(request)
    declared = request.headers.get("content-length", "")
    size = int(declared) if declared.isdigit() else 0
    with lanes.admit(size) as admitted:
        if not admitted:
            return _error(503, "the proxy is busy with large requests; retry shortly", "busy")
        body = await _read_body(config, request)
        if isinstance(body, Response):
            return body
        kind = _kind(path) if request.method == "POST" else None
        checked = kind is not None
        if checked and lanes.worker is not None and len(body) > INLINE_BYTES:
            if lanes.relayed >= RELAYED:
                return _error(503, "the proxy is busy with large requests; retry shortly", "busy")
            lanes.relayed += 1
            try:
                relayed = await _to_worker(lanes, request, body)
            finally:
                lanes.relayed -= 1
            if relayed is not None:
                return relayed
        if checked:
            payload = await lanes.run(len(body), _load, body)
            if isinstance(payload, dict) and isinstance(payload.get("tools"), list):
                assert kind is not None
                if payload["tools"]:
                    try:
                        scanner = await lanes.run(len(body), config.scanner, payload["tools"])
                    except AutoFeedbackError as exc:
                        # tools the spec loader cannot read: the agent still gets its answer
                        reason = " ".join(str(exc).split())[:200]
                        _log.warning("tools not checked: %s", config.scrub(reason, secret))
                        note = json.dumps({"rounds": 0, "skipped": "unreadable tools"})
                        return await _forward(config, client, request, target, body, note)
                    # a pattern RE2 cannot run may take its whole time bound: such
                    # calls are checked in a thread (the search releases the GIL)
                    size = len(body)
                    if scanner.catalog.bounded_patterns:
                        size = max(size, INLINE_BYTES + 1)
                    try:
                        answer = await _unless_disconnected(
                            request,
                            lambda: _checked(
                                client,
                                request,
                                target,
                                payload,
                                kind,
                                scanner,
                                config,
                                lanes,
                                size,
                            ),
                        )
                    except httpx.HTTPError as exc:
                        return _unreachable(config, exc, secret)
                    return answer if answer is not None else Response(status_code=499)
        return await _forward(config, client, request, target, body, None)


#: the paths whose answers are checked, and the API each speaks
_CHECKED = (
    ("/chat/completions", "chat"),
    ("/responses", "responses"),
    ("/messages", "anthropic"),
)


def _kind(path: str) -> str | None:
    """The API of a checked path (OpenAI Chat Completions or Responses, Anthropic
    Messages), or ``None`` for a path passed through."""
    return next((kind for end, kind in _CHECKED if path.endswith(end)), None)


async def _to_worker(lanes: _Lanes, request: Request, body: bytes) -> Response | None:
    """A heavy request, answered by the worker process (``None``: it cannot be reached,
    and this process checks the request itself). CPU work in a thread still holds this
    process's GIL: a 3,000-step chat checked beside light clients made their p99 five
    times longer (benchmarks/serve_load.py); another process, at a lower priority, does
    not. A client that leaves closes the relayed connection, which cancels the worker's
    rounds as it would cancel this process's."""
    worker = lanes.worker
    assert worker is not None
    query = request.url.query
    target = httpx.URL(f"http://heavy-worker{request.url.path}" + (f"?{query}" if query else ""))
    try:
        answer = await _unless_disconnected(
            request, lambda: _pass_through(worker, request, target, body)
        )
    except httpx.TransportError as exc:
        # before its socket exists the worker is still starting: no news
        started = lanes.worker_socket is not None and os.path.exists(lanes.worker_socket)
        level = logging.WARNING if started else logging.DEBUG
        _log.log(level, "heavy-request worker not reachable (%s): checked here", type(exc).__name__)
        return None
    return answer if answer is not None else Response(status_code=499)

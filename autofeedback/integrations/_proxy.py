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
chunks, or the Responses API's ``response.*`` events). Every other
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
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar
from urllib.parse import unquote, urlsplit

import anyio
import anyio.to_thread
import httpx
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_values import not_checked
from autofeedback.core._exceptions import AutoFeedbackError, ConfigurationError
from autofeedback.core._install import install_hint
from autofeedback.core._patterns import PatternBudget
from autofeedback.core._redact import redact, url_secrets
from autofeedback.decide import Decider, Policy, RepairMode, check_repair
from autofeedback.decide._calls import Call, ToolCallsDecision, decide_calls, reply
from autofeedback.decide._feedback import gave_up
from autofeedback.decide._run import Run, logged_action, upstream_stop
from autofeedback.integrations._jsonlog import JsonLog
from autofeedback.scanner._scan import Scanner
from autofeedback.serve._listen import listen
from autofeedback.serve._serve import DEFAULT_GRACE, check_host, uvicorn_server

__all__ = ["ProxyConfig", "create_proxy_app", "run_proxy"]


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


GIVE_UP = ("error", "pass")


_HEADER_REPAIRS = 5


INLINE_BYTES = 64 << 10


HEAVY_BYTES = 1 << 20


HEAVY_WAITING = 4


_LIGHT_THREADS = 4


RELAYED = 32


T = TypeVar("T")


@dataclass
class ProxyConfig:
    """What the proxy sits in front of and how hard it tries.

    ``upstream``: the OpenAI-compatible base URL (``http://127.0.0.1:8080/v1``);
    ``spec``: a catalog whose operations judge the tools of the same name (HTTP-level
    tools described by an OpenAPI document); ``max_rounds``: requests upstream per
    client request (at least 1); ``token_budget``: stop re-asking once the rounds used
    this many tokens; ``retriever``: ``"auto"`` (the default, as at every entry point)
    for the semantic checks too, ``None`` for the structural ones only; ``log``: a file
    that gets one JSON line per decision (:class:`~autofeedback.integrations._jsonlog.JsonLog`).
    ``repair``: ``"sure"`` hands the agent the
    calls with their certain repairs instead of asking the model again (``"off"``: the
    model fixes everything). ``give_up``: what the agent gets when the model's calls are
    still wrong after the last round: ``"error"``, an HTTP 422 JSON error its client
    raises, or ``"pass"``, the completion as the model wrote it, marked in the
    ``x-autofeedback`` header and the body's ``autofeedback`` field.
    """

    upstream: str
    spec: ApiCatalog | None = None
    max_rounds: int = 3
    token_budget: int | None = None
    timeout: float = 300.0
    retriever: Any = "auto"
    log: Path | None = None
    repair: RepairMode = "sure"
    give_up: str = "error"
    #: request bodies past this many bytes get a 413
    max_body: int = 32 << 20
    #: connections to the upstream at once, and how long a request waits for one
    max_connections: int = 100
    pool_timeout: float = 5.0
    #: the scanner cache's bound, in characters of the tools lists it holds
    cache_bytes: int = 32 << 20
    #: a Unix socket where a worker process answers the heavy checked requests (set by
    #: :func:`run_proxy`; ``None``: they are checked in this process's worker threads)
    heavy_socket: str | None = None
    _scanners: OrderedDict[str, tuple[Scanner, int]] = field(
        default_factory=OrderedDict, repr=False
    )
    _cached: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(
                f"--upstream must be an http(s) URL such as http://127.0.0.1:8080/v1, "
                f"got {redact(self.upstream)!r}"
            )
        if self.max_rounds < 1:
            raise ConfigurationError("--max-rounds must be at least 1")
        if self.token_budget is not None and self.token_budget <= 0:
            raise ConfigurationError("--token-budget must be positive")
        if self.log is not None:
            self.log = Path(self.log)
            if not self.log.parent.is_dir():
                raise ConfigurationError(f"--log: no such folder: {self.log.parent}")
        check_repair(self.repair)
        if self.give_up not in GIVE_UP:
            raise ConfigurationError(
                f"--on-give-up must be one of {', '.join(GIVE_UP)}, not {self.give_up!r}"
            )
        if self.max_body < 1 or self.max_connections < 1 or self.pool_timeout <= 0:
            raise ConfigurationError(
                "--max-body-mb, --max-connections and the pool timeout must be positive"
            )
        self.upstream = self.upstream.rstrip("/")

    @property
    def shown_upstream(self) -> str:
        """``upstream`` as the start-up line, the log and error bodies show it: user info
        and credential query values masked.

        >>> ProxyConfig("http://admin:hunter22@127.0.0.1:8080/v1").shown_upstream
        'http://REDACTED@127.0.0.1:8080/v1'
        """
        return str(redact(self.upstream))

    def scrub(self, text: str, *secrets: str | None) -> str:
        """``text`` without the upstream's credentials nor ``secrets`` (a client's key)."""
        found = [s for s in secrets if s] + url_secrets(self.upstream)
        return str(redact(text, secrets=found))

    def scanner(self, tools: Any) -> Scanner:
        """The scanner for one request's ``tools`` (cached: agents resend the same list).

        The cache holds at most :attr:`cache_bytes` characters of tools lists (and 32
        lists); a list larger than that is checked without being kept. Thread-safe."""
        text = json.dumps(tools, sort_keys=True, default=str)
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        with self._lock:
            cached = self._scanners.get(key)
            if cached is not None:
                self._scanners.move_to_end(key)
                return cached[0]
        # built-in tools (web_search, file_search, mcp...) have no schema to check against
        functions = [
            t for t in tools if not isinstance(t, Mapping) or t.get("type") in (None, "function")
        ]
        if not functions:
            raise ConfigurationError("the request has no function tools")
        catalog = ApiCatalog.from_tools(functions)
        if self.spec is not None:
            catalog = ApiCatalog.merge(self.spec, catalog)  # the documented API wins
        scanner = Scanner(catalog, retriever=self.retriever)
        size = len(text)
        with self._lock:
            if key not in self._scanners and size <= self.cache_bytes:
                self._scanners[key] = (scanner, size)
                self._cached += size
            # eight 30 MB tools lists took the proxy from 56 to 915 MB under a count bound
            while self._scanners and (self._cached > self.cache_bytes or len(self._scanners) > 32):
                _, (_, dropped) = self._scanners.popitem(last=False)
                self._cached -= dropped
        return scanner


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


class _Lanes:
    """Where a request's CPU work runs: on the event loop when its body is small (it is
    then microseconds to a millisecond), else in a worker thread: a lane of a few threads
    up to :data:`HEAVY_BYTES`, one thread past it, so that heavy requests queue behind
    each other and never in front of light ones. With a retriever, every check runs in
    a thread: the model may load or embed for seconds."""

    def __init__(self, config: ProxyConfig) -> None:
        self.semantic = config.retriever is not None
        self.light = anyio.CapacityLimiter(_LIGHT_THREADS)
        self.heavy = anyio.CapacityLimiter(1)
        self.held = 0  # heavy requests held now, reading or waiting included
        #: the client of the heavy-request worker process, when there is one
        self.worker: httpx.AsyncClient | None = None
        #: where it listens (the file appears once it has started)
        self.worker_socket: str | None = None
        self.relayed = 0  # requests with the worker now

    async def run(self, size: int, fn: Callable[..., T], *args: Any) -> T:
        if size <= INLINE_BYTES and not self.semantic:
            return fn(*args)
        limiter = self.heavy if size > HEAVY_BYTES else self.light
        return await anyio.to_thread.run_sync(fn, *args, limiter=limiter)

    @contextlib.contextmanager
    def admit(self, size: int) -> Iterator[bool]:
        """Whether a request of ``size`` bytes may be held now (a heavy one counts
        against :data:`HEAVY_WAITING` until it is answered)."""
        if size <= HEAVY_BYTES:
            yield True
            return
        if self.held >= HEAVY_WAITING:
            yield False
            return
        self.held += 1
        try:
            yield True
        finally:
            self.held -= 1


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
    auth = request.headers.get("authorization", "")
    return auth.split(None, 1)[-1] if auth else None


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
    problem = _chat_shape(data) if kind == "chat" else _responses_shape(data)
    return data, problem


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


def _load(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
        return None


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
        checked = request.method == "POST" and path.endswith(("/chat/completions", "/responses"))
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
                kind = "chat" if path.endswith("/chat/completions") else "responses"
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


# ------------------------------------------------------------------ checked rounds


def _chat_calls(data: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[Call]]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, []
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return None, []
    calls: list[Call] = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        function = function if isinstance(function, Mapping) else {}
        call_id = call.get("id") if isinstance(call, Mapping) else None
        calls.append(
            Call(
                "openai-chat",
                call_id if isinstance(call_id, str) else None,
                function.get("name"),
                function.get("arguments"),
            )
        )
    return message, calls


def _responses_calls(data: Mapping[str, Any]) -> list[Call]:
    calls: list[Call] = []
    for item in data.get("output") or []:
        if isinstance(item, Mapping) and item.get("type") == "function_call":
            call_id = item.get("call_id")
            calls.append(
                Call(
                    "openai-responses",
                    call_id if isinstance(call_id, str) else None,
                    item.get("name"),
                    item.get("arguments"),
                )
            )
    return calls


def _tokens(usage: Any) -> int:
    if not isinstance(usage, Mapping):
        return 0
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [
        usage.get(k)
        for k in ("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens")
    ]
    return sum(p for p in parts if isinstance(p, int))


def _sum_usage(usages: Sequence[Any]) -> dict[str, Any] | None:
    """Every integer count summed (``prompt_tokens``, ``input_tokens``...); nested
    ``*_details`` summed the same way."""
    out: dict[str, Any] = {}
    seen = False
    for usage in usages:
        if not isinstance(usage, Mapping):
            continue
        seen = True
        for key, value in usage.items():
            if isinstance(value, bool):
                continue
            if isinstance(value, int):
                out[key] = out.get(key, 0) + value
            elif isinstance(value, Mapping):
                inner = out.setdefault(key, {})
                if isinstance(inner, dict):
                    for k, v in value.items():
                        if isinstance(v, int) and not isinstance(v, bool):
                            inner[k] = inner.get(k, 0) + v
    return out if seen else None


async def _checked(
    client: httpx.AsyncClient,
    request: Request,
    target: httpx.URL,
    payload: dict[str, Any],
    kind: str,
    scanner: Scanner,
    config: ProxyConfig,
    lanes: _Lanes,
    size: int,
) -> Response:
    """The rounds of one checked request, each round's calls decided by the one decision
    (:func:`~autofeedback.integrations._calls.decide_calls`). ``size``: its body's, which
    picks the lane its CPU work runs in (:class:`_Lanes`): serialising, parsing,
    deciding."""
    started = time.perf_counter()
    stream = bool(payload.get("stream"))
    options = payload.get("stream_options")
    include_usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
    body = {k: v for k, v in payload.items() if k not in ("stream", "stream_options")}
    headers = _forward_headers(request, b"accept", b"content-type")
    headers.append((b"content-type", b"application/json"))

    if kind == "chat":
        history = list(body.get("messages") or [])
    else:
        given = body.get("input")
        history = (
            list(given) if isinstance(given, list) else [{"role": "user", "content": given or ""}]
        )

    # the chat so far, earlier tool calls and their results included: the new calls are
    # its next steps (an id no response returned and the user never gave: E5.3), judged
    # as the audit and check_tool_calls(history=) judge the same conversation
    asked = list(history) if kind == "chat" else None
    # what the user asked: the last user turn (E2.1), and all the model was told: the
    # system and developer messages (an agent's prompt carries its account, calendar and
    # tenant ids) and every user turn (E5.3)
    users = _user_texts(history)
    told = _told_texts(body, history)
    said = (users[-1] if users else None, "\n".join([*told, *users]) or None)
    # the one decision, and the run driver with this request's bounds: rounds upstream,
    # repeats, tokens; it names the stop and words the replies
    decider = Decider(scanner, repair=config.repair)
    run = Run(
        Policy(
            repair=config.repair,
            max_rounds=config.max_rounds - 1,
            token_budget=config.token_budget,
        ),
        "proxy",
        scanner=scanner,
    )
    usages: list[Any] = []
    codes: list[str] = []
    repairs: list[Any] = []
    unchecked = 0
    logged: list[dict[str, Any]] = []  # --log: each round's calls and decision
    final: dict[str, Any] | None = None
    remaining: list[Any] = []
    response: httpx.Response | None = None
    invalid: str | None = None  # what is wrong with the upstream's answer
    while run.stop is None:
        if kind == "chat":
            body["messages"] = history
        else:
            body["input"] = history
        content = await lanes.run(size, _dumps, body)
        response, answered = await _post_capped(client, target, content, headers, config.max_body)
        if answered is None:
            return _too_large_answer(config, request)
        if response.status_code != 200:
            run.end(upstream_stop(response.status_code))
            break
        size = max(size, len(answered))
        data, invalid = await lanes.run(size, _upstream_answer, answered, kind)
        if invalid is not None:
            run.end(upstream_stop(None))
            break
        usages.append(data.get("usage"))
        run.asked(_tokens(data.get("usage")))
        message, calls = _chat_calls(data) if kind == "chat" else (None, _responses_calls(data))
        if not calls:
            final = data
            run.text_answer()  # text, not a call (after feedback: answered)
            break
        decided = await lanes.run(
            size,
            functools.partial(
                _within_budget,
                decide_calls,
                message if kind == "chat" else data,
                decider,
                history=asked,
                instruction=said[0],
                context=said[1],
                graph=scanner._graph if asked is not None else None,
            ),
        )
        codes.extend(
            f.code for c in decided.calls for f in c.decision.findings if f.severity == "error"
        )
        # values a pattern RE2 cannot run left undecided within the time bound
        unchecked += sum(not_checked(f) for c in decided.calls for f in c.decision.findings)
        repairs.extend(decided.repairs)
        raw = [(c.name, c.arguments) for c in calls]
        turn = await lanes.run(size, run.message_turn, decided, raw)
        logged.append(_round_record(request, run.answers, calls, decided, turn.action))
        if turn.action == "forward":
            final = _with_message(data, decided.message, kind)
            break
        if turn.action == "stop":
            final = data
            remaining = [f.as_dict() for c in decided.calls for f in c.decision.errors]
            break
        replies = _replies(calls, turn.feedback)
        # the model's turn as autofeedback holds it: the calls with the certain repairs
        shown = _with_message(data, decided.message, kind)
        if kind == "chat":
            shown_message, _ = _chat_calls(shown)
            assert shown_message is not None
            history = [*history, shown_message, *replies]
        else:
            history = [*history, *shown.get("output", []), *replies]

    ms = round((time.perf_counter() - started) * 1000, 1)
    rounds, stop = run.answers, run.stop or upstream_stop(None)
    summary: dict[str, Any] = {"rounds": rounds, "codes": codes, "stop": stop, "ms": ms}
    # --log: one line per round's decision (issue 28), written once the rounds are over
    _log_rounds(request, logged, stop, ms)
    if repairs:
        summary["repairs"] = [r.as_dict() for r in repairs]
    if remaining:
        summary["remaining"] = remaining[:5]
    if unchecked:
        summary["unchecked"] = unchecked
    _log.info(
        "%s %s -> rounds=%d stop=%s codes=%s repairs=%d",
        request.method,
        request.url.path,
        rounds,
        stop,
        ",".join(codes) or "-",
        len(repairs),
    )
    # the header holds the first codes and repairs (a header line is no place for 3,000
    # of them: 30 KB); the body's "autofeedback" field has every one
    # the header names each code once, those of the repairs included (a repaired E3.2
    # is a mistake the model made as much as the E2.2 before it); the body's
    # "autofeedback" field counts every finding of every round
    distinct = list(dict.fromkeys([*codes, *(r.code for r in repairs)]))
    shown_header: dict[str, Any] = {"rounds": rounds, "codes": distinct[:_HEADER_CODES]}
    if len(distinct) > _HEADER_CODES:
        shown_header["more"] = len(distinct) - _HEADER_CODES
    shown_header["stop"] = stop
    if repairs:
        shown_header["repairs"] = [str(r) for r in repairs[:_HEADER_REPAIRS]]
        if len(repairs) > _HEADER_REPAIRS:
            shown_header["more_repairs"] = len(repairs) - _HEADER_REPAIRS
    header = json.dumps(shown_header, separators=(",", ":"), ensure_ascii=True)
    assert response is not None
    if invalid is not None:
        # an answer the client's SDK could not read either: say what is wrong with it
        _log.warning("upstream %s answered %s", config.shown_upstream, invalid)
        answer = _error(502, f"the upstream's answer {invalid}", "upstream_invalid_response")
        answer.headers[_HEADER] = header
        return answer
    if final is None:  # the first request already failed upstream: hand its answer back
        out_headers = {k: v for k, v in response.headers.items() if k.lower() not in _DROP_RESPONSE}
        out_headers[_HEADER] = header
        return Response(answered, response.status_code, headers=out_headers)
    if remaining and config.give_up == "error":
        # the calls are still wrong: the agent's client raises instead of running them
        message_text = gave_up(rounds, stop, remaining[0])
        error = {
            "error": {
                "message": message_text,
                "type": "invalid_tool_call",
                "code": "tool_call_invalid",
                "param": None,
            },
            "autofeedback": summary,
        }
        return JSONResponse(error, 422, headers={_HEADER: header})
    final = dict(final)
    total = _sum_usage(usages)
    if total is not None:
        final["usage"] = total
    final["autofeedback"] = summary
    if stream:
        # every event built before the first is sent: an upstream answer of an odd shape
        # is then a JSON error, never a stream cut halfway
        events = await lanes.run(
            size,
            lambda: list(_sse(final, include_usage) if kind == "chat" else _responses_sse(final)),
        )
        return StreamingResponse(
            iter(events),
            media_type="text/event-stream",
            headers={_HEADER: header, "cache-control": "no-cache"},
        )
    rendered = await lanes.run(size, _dumps, final)
    return Response(rendered, media_type="application/json", headers={_HEADER: header})


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


#: Seconds of bounded-matcher searches (patterns RE2 cannot run) one round's calls may
#: take together: each call has :data:`~autofeedback.core._patterns.CHECK_BUDGET` of its own,
#: and a message of many calls must not multiply it.
ROUND_BUDGET = 2.0


def _within_budget(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    with PatternBudget(ROUND_BUDGET):
        return fn(*args, **kwargs)


def _round_record(
    request: Request, number: int, calls: Sequence[Call], decided: ToolCallsDecision, action: str
) -> dict[str, Any]:
    """One round for the log: its calls (arguments masked) with their error codes and
    repairs, and the decision (``forward``, ``feed_back`` or ``stop``)."""
    secret = _secret_of(request)
    secrets = [secret] if secret else []
    shown = []
    for call, c in zip(calls, decided.calls, strict=True):
        arguments = call.arguments
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError, RecursionError):
                arguments = json.loads(arguments)
        entry: dict[str, Any] = {
            "tool": call.name,
            "arguments": redact(arguments, secrets=secrets),
            "codes": [f.code for f in c.decision.findings if f.severity == "error"],
        }
        if c.decision.repairs:
            entry["repairs"] = [r.as_dict() for r in c.decision.repairs]
        shown.append(entry)
    return {"round": number, "calls": shown, "decision": logged_action(action)}


def _log_rounds(request: Request, logged: Sequence[dict[str, Any]], stop: str, ms: float) -> None:
    """The rounds' records as JSON lines (``--log``); the last carries the stop and the
    time. An upstream that failed before any round is one ``stop`` line."""
    log = getattr(request.app.state, "log", None)
    if log is None or log.handle is None:
        return
    for i, record in enumerate(logged):
        extra = {"stop": stop, "ms": ms} if i == len(logged) - 1 else {}
        log.write(request.url.path, **record, **extra)
    if not logged:
        log.write(request.url.path, round=0, calls=[], decision="stop", stop=stop, ms=ms)


def _with_message(data: dict[str, Any], message: Any, kind: str) -> dict[str, Any]:
    """The upstream answer with the (repaired) assistant message in place."""
    if kind != "chat":
        return message if isinstance(message, dict) else data
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(message, dict):
        return data
    first = {**choices[0], "message": message}
    return {**data, "choices": [first, *choices[1:]]}


def _replies(calls: Sequence[Call], texts: Sequence[str | None]) -> list[dict[str, Any]]:
    """The tool results answering a message that goes back to the model: each call's
    text from the run (its feedback, or that it did not run), in the call's shape."""
    return [reply(call, text or "", False) for call, text in zip(calls, texts, strict=True)]


def _dumps(value: Any) -> bytes:
    # what httpx's json= and Starlette's JSONResponse wrote, here off the event loop
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8"
    )


def _told_texts(body: Mapping[str, Any], history: Sequence[Any]) -> list[str]:
    """The Responses API's ``instructions`` and the system and developer messages, as
    text."""
    out = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions.strip():
        out.append(instructions)
    for m in history:
        if isinstance(m, Mapping) and m.get("role") in ("system", "developer"):
            content = m.get("content")
            if isinstance(content, list):
                content = " ".join(
                    str(p.get("text", "")) for p in content if isinstance(p, Mapping)
                )
            if isinstance(content, str) and content.strip():
                out.append(content)
    return out


def _user_texts(history: Sequence[Any]) -> list[str]:
    """The user's turns, as text (a string, or the text parts of a content list)."""
    out = []
    for m in history:
        if not isinstance(m, Mapping) or m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        if isinstance(content, str) and content.strip():
            out.append(content)
    return out


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


# ------------------------------------------------------------------ CLI


def run_proxy(
    upstream: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8787,
    spec: str | None = None,
    max_rounds: int = 3,
    token_budget: int | None = None,
    semantic: bool = True,
    log: str | Path | None = None,
    repair: RepairMode = "sure",
    give_up: str = "error",
    allow_remote: bool = False,
    max_body: int = 32 << 20,
    max_connections: int = 100,
    grace: float = DEFAULT_GRACE,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Serve the proxy until interrupted (``autofeedback proxy``); 2 on bad configuration
    or a port that cannot be bound (in use, or not this machine's address).

    >>> run_proxy("not a url", stdout=sys.stdout, stderr=sys.stderr)  # doctest: +SKIP
    2
    """
    try:
        import uvicorn  # noqa: F401
    except ImportError:  # pragma: no cover - the proxy extra is missing
        stderr.write(
            "autofeedback: error: the proxy needs uvicorn, starlette and httpx: "
            f"{install_hint('proxy')}\n"
        )
        return 2
    try:
        warning = check_host(host, allow_remote, "the proxy")
        catalog = ApiCatalog.from_file(spec) if spec else None
        config = ProxyConfig(
            upstream,
            spec=catalog,
            max_rounds=max_rounds,
            token_budget=token_budget,
            retriever="auto" if semantic else None,
            log=Path(log) if log is not None else None,
            repair=repair,
            give_up=give_up,
            max_body=max_body,
            max_connections=max_connections,
        )
        # bound before saying where it serves: a port in use is one error line, exit 2
        sock = listen(host, port)
    except AutoFeedbackError as exc:
        stderr.write(f"autofeedback: error: {exc}\n")
        return 2
    if warning:
        stderr.write(f"autofeedback: {warning}\n")
        stderr.flush()
    settings = {
        "upstream": upstream,
        "spec": spec,
        "max_rounds": max_rounds,
        "token_budget": token_budget,
        "semantic": semantic,
        "log": str(log) if log is not None else None,
        "repair": repair,
        "give_up": give_up,
        "max_body": max_body,
        "grace": grace,
    }
    with _heavy_worker(settings, stderr) as socket_path:
        config.heavy_socket = socket_path
        shown = f"[{host}]" if ":" in host else host
        stdout.write(
            f"autofeedback proxy on http://{shown}:{port}/v1 -> {config.shown_upstream} "
            f"(max {config.max_rounds} rounds)\n"
        )
        stdout.flush()
        try:
            uvicorn_server(create_proxy_app(config), host, port, grace=grace).run(sockets=[sock])
        finally:
            sock.close()
    return 0


@contextlib.contextmanager
def _heavy_worker(settings: dict[str, Any], stderr: IO[str]) -> Iterator[str | None]:
    """Start the heavy-request worker (:func:`_worker_main`) on a Unix socket in a private
    folder; yields the socket's path, or ``None`` when it did not start (the heavy
    requests are then checked in this process). The worker reads its settings from its
    stdin (the upstream URL may hold credentials: never on a command line) and ends when
    that pipe closes, so it never outlives this process, even one killed by a signal."""
    import shutil
    import socket
    import subprocess
    import tempfile

    if not hasattr(socket, "AF_UNIX"):  # no Unix sockets here: threads only
        yield None
        return
    folder = tempfile.mkdtemp(prefix="autofeedback-proxy-")  # 0700: only its owner
    path = os.path.join(folder, "heavy.sock")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from autofeedback.integrations._proxy import _worker_main; "
         "_worker_main()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )  # fmt: skip
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps({**settings, "socket": path, "folder": folder}) + "\n")
        proc.stdin.flush()
        # not waited for: the proxy serves at once (the worker's start-up, a second or more
        # of imports, made the proxy's own ready time twice as long); a heavy request
        # that comes before the worker's socket exists is checked here
        yield path
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()  # the worker's signal to stop
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _worker_main() -> None:
    """The heavy-request worker: the proxy app on the Unix socket its parent names, at a
    lower CPU priority, ending when its parent closes (or loses) the settings pipe."""
    import shutil

    settings = json.loads(sys.stdin.readline())

    def parent_watch() -> None:
        sys.stdin.read()  # returns at EOF: the parent stopped or died
        shutil.rmtree(settings["folder"], ignore_errors=True)
        os._exit(0)

    threading.Thread(target=parent_watch, daemon=True).start()
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(10)  # light requests, in the parent, come first
    config = ProxyConfig(
        settings["upstream"],
        spec=ApiCatalog.from_file(settings["spec"]) if settings["spec"] else None,
        max_rounds=settings["max_rounds"],
        token_budget=settings["token_budget"],
        retriever="auto" if settings["semantic"] else None,
        log=Path(settings["log"]) if settings["log"] else None,
        repair=settings["repair"],
        give_up=settings["give_up"],
        max_body=settings["max_body"],
    )
    server = uvicorn_server(
        create_proxy_app(config), "127.0.0.1", 0, grace=settings["grace"], uds=settings["socket"]
    )
    server.run()

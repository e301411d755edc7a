"""``autofeedback mcp-proxy``: an MCP server in front of another MCP server, checking every
``tools/call`` against the tools that server lists, on the official ``mcp`` SDK.

::

    MCP client --(stdio | streamable HTTP)--> proxy --(stdio | streamable HTTP)--> server

The proxy is a low-level :class:`mcp.server.lowlevel.Server` (so it owns the ``tools/list``
and ``tools/call`` results and errors) over an upstream :class:`mcp.ClientSession`:

* ``tools/list`` is fetched once (all pages), its schemas checked and repaired
  (:mod:`._mcp_schema`), cached, and fetched again on the server's
  ``notifications/tools/list_changed`` (which the proxy passes on to its clients);
* an unknown tool is answered with JSON-RPC ``-32602`` and a "did you mean";
* a call with wrong argument names or values is answered with a normal result,
  ``isError: true`` and the feedback text (MCP 2025-11-25, SEP-1303), and never reaches
  the server;
* the same rejected call, repeated ``repeat_limit`` times, gets a firm "stop repeating";
* a valid call is forwarded and its result passed back unchanged;
* a call forwarded repaired gets the server's result with the repairs and the call that
  ran in its ``_meta`` (``autofeedback``) and one more text item the model reads;
* a tool whose name passes for another (mixed scripts, an invisible character) or is
  listed twice is reported at listing time and never matched to a call;
* every decision is one JSON line in ``log`` (credentials redacted, the arguments of a
  call cut at 4 KB, the file created readable by its owner only).

Under load (issue 29): a check that may be slow (an unknown name with the model, a big
tool or big arguments) runs in a worker thread; an unknown tool name makes the proxy
look at ``tools/list`` again at most one at a time, every 2 s, waiting 5 s at most and
backing off 30 s after a failure; a server that exits ends the proxy (exit status 2)
within seconds; the streamable-HTTP side follows the host rule and the bounded SIGTERM
of :mod:`autofeedback.serve._serve`.

:func:`run_mcp_proxy` is what the CLI calls; :class:`McpProxy` is the part tests and
embedders can drive in-process.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import anyio
import httpx2
import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from pydantic import ValidationError

from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._redact import redact, url_secrets
from autofeedback.decide import RepairMode
from autofeedback.integrations._gate_worker import GateWorker
from autofeedback.integrations._jsonlog import JsonLog
from autofeedback.integrations._mcp_gate import Decision, ToolGate
from autofeedback.scanner._scan import one_line
from autofeedback.serve._listen import listen
from autofeedback.serve._serve import DEFAULT_GRACE, check_host, uvicorn_server

__all__ = ["McpProxy", "McpProxyOptions", "run_mcp_proxy"]

#: A terse server error (at most this many characters) gets the tool's documentation.
_TERSE = 160
#: Client connections remembered for passing on ``notifications/tools/list_changed``.
_SESSIONS = 1024
#: Seconds between two re-listings triggered by an unknown tool name; the most one may
#: make a call wait; and the pause after one that failed or timed out.
_RELIST_EVERY = 2.0
_RELIST_TIMEOUT = 5.0
_RELIST_BACKOFF = 30.0
#: Seconds between two pings that tell whether the server is still there.
_PING_EVERY = 2.0
#: The characters of a call's arguments a log line keeps (a rejected 9 MB call made a
#: 9 MB line); findings per line likewise.
_LOGGED_ARGUMENTS = 4096
_LOGGED_FINDINGS = 20
#: The key of a repaired call's result ``_meta`` that says what ran instead; the note the
#: model reads shows this many characters of the arguments and this many repairs.
_META_KEY = "autofeedback"
_NOTE_ARGUMENTS = 1000
_NOTE_REPAIRS = 5


@dataclass
class McpProxyOptions:
    """How the proxy reaches the server and serves the client.

    Exactly one of ``command`` (launch the server as a stdio subprocess) and
    ``upstream_url`` (a streamable-HTTP server). ``transport`` is how the proxy itself
    is served: ``stdio`` or ``streamable-http`` on ``host:port`` (loopback, unless
    ``allow_remote``); ``grace``: seconds in-flight requests get after SIGTERM.
    """

    command: Sequence[str] = ()
    upstream_url: str | None = None
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    log: Path | None = None
    repeat_limit: int = 3
    retriever: Any = "auto"
    explain_errors: bool = True
    timeout: float = 300.0
    upstream_headers: Sequence[tuple[str, str]] = ()
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    allow_remote: bool = False
    grace: float = DEFAULT_GRACE
    #: ``"sure"``: a call whose every error has a certain repair is forwarded repaired
    #: (logged with its repairs); ``"off"``: it is answered with feedback
    repair: RepairMode = "sure"
    #: check heavy calls (big arguments, a big tool, the embedding model) in a worker
    #: process at a lower priority, so that they do not hold the proxy's GIL while light
    #: calls wait (:func:`run_mcp_proxy` turns it on; else worker threads)
    worker: bool = False

    def check(self) -> None:
        """Raise :class:`ConfigurationError` for contradictory or unsafe options."""
        if not self.command and not self.upstream_url:
            raise ConfigurationError(
                "no server to wrap: give its command after '--' "
                "(autofeedback mcp-proxy -- python server.py) or its URL with --upstream-url"
            )
        if self.command and self.upstream_url:
            raise ConfigurationError(
                "give the server either as a command after '--' or as --upstream-url, not both"
            )
        if self.upstream_url and not self.upstream_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"--upstream-url must be an http(s) URL: {self.upstream_url!r}"
            )
        if self.transport not in ("stdio", "streamable-http"):
            raise ConfigurationError(f"unknown transport {self.transport!r}")
        check_host(self.host, self.allow_remote, "the MCP proxy")
        if self.log is not None and not self.log.parent.is_dir():
            raise ConfigurationError(f"--log: no such folder: {self.log.parent}")
        if self.upstream_headers and not self.upstream_url:
            raise ConfigurationError("--upstream-header needs --upstream-url")
        if self.repeat_limit < 0:
            raise ConfigurationError("--repeat-limit must be 0 (off) or more")


class _ProxyServer(Server[Any]):
    """The SDK's low-level server, advertising ``tools.listChanged`` on every transport:
    the streamable-HTTP session manager asks for the default initialization options, which
    would not say that the proxy passes the server's ``list_changed`` on."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class _Log(JsonLog):
    """The decision log (one JSON line per decision), and notes on stderr."""

    def __init__(self, path: Path | None, stderr: IO[str]) -> None:
        super().__init__(path)
        self.stderr = stderr

    def warn(self, text: str) -> None:
        with contextlib.suppress(Exception):  # a closed stderr must not take the proxy down
            self.stderr.write(f"autofeedback mcp-proxy: {text}\n")
            self.stderr.flush()


class McpProxy:
    """The proxy over one connected upstream session; build with :meth:`connect`.

    >>> async def main() -> None:
    ...     opts = McpProxyOptions(command=["python", "weather.py"])
    ...     async with McpProxy.connect(opts) as proxy:
    ...         await proxy.serve()
    """

    def __init__(self, upstream: ClientSession, options: McpProxyOptions) -> None:
        self.upstream = upstream
        self.options = options
        self.gate = ToolGate(
            retriever=options.retriever, repeat_limit=options.repeat_limit, repair=options.repair
        )
        self.log = _Log(options.log, options.stderr)
        self._dispatcher: JSONRPCDispatcher[Any] | None = None
        # conversation -> a session of that client connection, to pass list_changed on
        self._sessions: OrderedDict[str, ServerSession] = OrderedDict()
        self._changed = anyio.Event()
        self._listed_at = 0.0
        self._relist_after = 0.0  # no re-listing for an unknown name before this time
        self._relisting: anyio.Event | None = None
        self._gone = anyio.Event()  # the server's connection closed
        self._limiter = anyio.CapacityLimiter(4)  # slow checks at once (threads or worker)
        self._worker: GateWorker | None = None
        self._tools: list[types.Tool] = []
        init = upstream.initialize_result
        info = init.server_info if init is not None else None
        self.server: Server[Any] = _ProxyServer(
            info.name if info is not None else "autofeedback-mcp-proxy",
            version=info.version if info is not None else "",
            instructions=init.instructions if init is not None else None,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
        )
        self._pass_through(init.capabilities if init is not None else None)

    # -- upstream -------------------------------------------------------------------

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(cls, options: McpProxyOptions) -> AsyncIterator[McpProxy]:
        """Connect to the server, list its tools, and yield the ready proxy."""
        options.check()
        async with contextlib.AsyncExitStack() as stack:
            if options.command:
                params = StdioServerParameters(
                    command=options.command[0],
                    args=list(options.command[1:]),
                    # the wrapped server gets the proxy's environment (PATH, PYTHONPATH,
                    # its own API keys), as it would have had when launched directly
                    env=dict(os.environ),
                )
                read, write = await stack.enter_async_context(
                    stdio_client(params, errlog=sys.stderr)
                )
            else:
                assert options.upstream_url is not None
                # the SDK's defaults (30 s, 300 s to read a held-open stream), plus the
                # headers the server wants (a bearer token); they are never logged
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(
                        headers=dict(options.upstream_headers),
                        timeout=httpx2.Timeout(30.0, read=max(300.0, options.timeout)),
                    )
                )
                read, write = await stack.enter_async_context(
                    streamable_http_client(options.upstream_url, http_client=http)
                )
            dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read, write)
            holder: list[McpProxy] = []

            async def on_message(message: Any) -> None:
                if isinstance(message, types.ToolListChangedNotification) and holder:
                    holder[0]._changed.set()

            session = await stack.enter_async_context(
                ClientSession(
                    dispatcher=dispatcher,
                    message_handler=on_message,
                    read_timeout_seconds=options.timeout,
                    client_info=types.Implementation(
                        name="autofeedback-mcp-proxy", version="0.1.0"
                    ),
                )
            )
            with anyio.fail_after(options.timeout):
                await session.initialize()
            proxy = cls(session, options)
            proxy._dispatcher = dispatcher
            holder.append(proxy)
            stack.callback(proxy.log.close)
            if options.worker and (options.retriever is None or options.retriever == "auto"):
                proxy._worker = GateWorker(retriever=options.retriever, repair=options.repair)
                stack.callback(proxy._worker.close)
            if session.server_capabilities is None or session.server_capabilities.tools:
                await proxy.refresh()  # a server without tools has nothing to list
            yield proxy

    async def refresh(self) -> None:
        """Fetch ``tools/list`` (every page) again, check the schemas, rebuild the gate."""
        raw_tools: list[Any] = []
        cursor: str | None = None
        for _ in range(1000):  # a server paging forever must not hang the proxy
            raw = await self._raw_request("tools/list", {"cursor": cursor} if cursor else None)
            page = raw.get("tools")
            if not isinstance(page, list):
                raise MCPError(
                    types.INTERNAL_ERROR, "the server's tools/list result has no tools list"
                )
            raw_tools.extend(page)
            cursor = raw.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        issues = self.gate.load(raw_tools)
        if self._worker is not None:
            self._worker.load(raw_tools)
        tools: list[types.Tool] = []
        for tool in self.gate.tools:
            try:
                tools.append(types.Tool.model_validate(tool, by_name=False))
            except ValidationError as exc:
                self.log.warn(f"tool {tool.get('name')!r} dropped: {one_line(exc)}")
                self.log.write(
                    "schema", tool=tool.get("name"), problem=one_line(exc), fix="dropped"
                )
        self._tools = tools
        self._listed_at = time.monotonic()
        for issue in issues:
            self.log.warn(str(issue))
            self.log.write("schema", **issue.as_dict())
        self.log.write("tools/list", tools=len(tools), issues=len(issues))

    async def _raw_request(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        # The listing is read raw: the SDK's typed result would reject the very schemas
        # this proxy exists to report (an inputSchema without type: object).
        assert self._dispatcher is not None
        headers = {}
        if self.upstream.protocol_version:
            headers[MCP_PROTOCOL_VERSION_HEADER] = self.upstream.protocol_version
        return await self._dispatcher.send_raw_request(
            method, params, {"headers": headers, "timeout": self.options.timeout}
        )

    async def _watch_list_changed(self) -> None:
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            try:
                await self.refresh()
            except Exception as exc:  # the old listing stays; the next change retries
                self.log.warn(f"tools/list refresh failed: {one_line(exc)}")
                continue
            for key, session in list(self._sessions.items()):
                try:
                    await session.send_tool_list_changed()
                except Exception:  # that client has gone away
                    self._sessions.pop(key, None)

    def _remember(self, ctx: ServerRequestContext[Any]) -> str:
        """The conversation a request belongs to: its streamable-HTTP session id, or the
        one stdio client. The SDK builds a new ``ServerSession`` per request, but each
        one notifies over its connection's standalone channel, so any of them will do."""
        headers = getattr(ctx.request, "headers", None)
        session_id = headers.get("mcp-session-id") if headers is not None else None
        key = str(session_id) if session_id else "stdio"
        self._sessions.pop(key, None)
        self._sessions[key] = ctx.session
        while len(self._sessions) > _SESSIONS:
            self._sessions.popitem(last=False)
        return key

    # -- the client's side ----------------------------------------------------------

    async def _on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember(ctx)
        return types.ListToolsResult(tools=list(self._tools))

    async def _on_call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        conversation = self._remember(ctx)
        started = time.perf_counter()
        name, arguments = params.name, params.arguments or {}
        if name not in self.gate:
            await self._look_again()  # a server may add tools without notifying
        if self.gate.needs_model(name, arguments) or self.gate.is_heavy(name, arguments):
            # the embedding model, a big tool or big arguments must not stall the others:
            # scanned in the worker process (off this process's GIL), else in a thread
            async with self._limiter:
                checked = (
                    await self._worker.scan(name, arguments) if self._worker is not None else None
                )
                if checked is not None:
                    decision = self.gate.check(
                        name, arguments, conversation=conversation, checked=checked
                    )
                else:
                    decision = await anyio.to_thread.run_sync(
                        lambda: self.gate.check(name, arguments, conversation=conversation)
                    )
        else:  # microseconds: cheaper than the hop to a worker thread
            decision = self.gate.check(name, arguments, conversation=conversation)
        logged = {"arguments": self._logged_arguments(arguments), **decision.as_log()}
        logged["findings"] = logged["findings"][:_LOGGED_FINDINGS]
        if decision.action == "forward":
            forwarded = _hop(params)
            if decision.call_name is not None:
                # repaired where the docs leave one answer: the server gets the repaired call
                forwarded = forwarded.model_copy(
                    update={"name": decision.call_name, "arguments": decision.call_arguments}
                )
            try:
                result = await self.upstream.send_request(
                    types.CallToolRequest(params=forwarded),
                    types.CallToolResult,
                    progress_callback=self._progress_relay(ctx, params),
                )
            except MCPError as exc:
                self.log.write(
                    "tools/call", **logged, upstream_error=exc.error.model_dump(), ms=_ms(started)
                )
                if exc.error.code == types.CONNECTION_CLOSED:
                    self._gone.set()
                raise
            except ValidationError as exc:
                self.log.write(
                    "tools/call", **logged, upstream_error=one_line(exc), ms=_ms(started)
                )
                raise MCPError(
                    types.INTERNAL_ERROR, f"the server returned an invalid result: {one_line(exc)}"
                ) from None
            explained = (
                self._explain(name, result, decision.call_arguments or arguments)
                if self.options.explain_errors
                else None
            )
            self.log.write(
                "tools/call",
                **logged,
                is_error=result.is_error,
                explained=explained is not None,
                ms=_ms(started),
            )
            result = explained or result
            if decision.call_name is not None:
                result = self._told(decision, result)
            return result
        self.log.write("tools/call", **logged, ms=_ms(started))
        if decision.action == "unknown_tool" or (
            decision.action == "repeated" and decision.unknown
        ):
            raise MCPError(
                types.INVALID_PARAMS,
                decision.message,
                data={
                    "tool": name,
                    "suggestion": decision.suggestion,
                    "feedback": decision.feedback,
                    "findings": [f.as_dict() for f in decision.findings],
                },
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=decision.feedback)], is_error=True
        )

    def _told(self, decision: Decision, result: types.CallToolResult) -> types.CallToolResult:
        """``result`` of a call forwarded repaired, telling the client what ran: the
        repairs and the call made in its ``_meta`` (``autofeedback``: ``repairs``,
        ``called``), and one text item the model reads, after the server's own content
        (``structuredContent`` and the content before it are the server's, unchanged).
        Credentials are masked, the arguments cut as in the log."""
        arguments = self._logged_arguments(decision.call_arguments or {})
        repairs = [self.gate.redact(r.as_dict()) for r in decision.repairs]
        meta = dict(result.meta or {})
        meta[_META_KEY] = {
            "repairs": repairs,
            "called": {"name": decision.call_name, "arguments": arguments},
        }
        shown = json.dumps(arguments, ensure_ascii=False, default=repr)
        if len(shown) > _NOTE_ARGUMENTS:
            shown = shown[:_NOTE_ARGUMENTS] + "..."
        listed = "; ".join(str(self.gate.redact(str(r))) for r in decision.repairs[:_NOTE_REPAIRS])
        if len(decision.repairs) > _NOTE_REPAIRS:
            listed += f"; and {len(decision.repairs) - _NOTE_REPAIRS} more"
        note = types.TextContent(
            type="text",
            text=f"autofeedback: called {decision.call_name} with {shown} (repaired: {listed})",
        )
        return result.model_copy(update={"meta": meta, "content": [*result.content, note]})

    def _logged_arguments(self, arguments: Any) -> Any:
        """The arguments as a log line shows them: redacted, and cut past
        :data:`_LOGGED_ARGUMENTS` characters (then their start, redacted as text)."""
        try:
            text = json.dumps(arguments, default=repr)
        except (ValueError, RecursionError):
            text = repr(arguments)
        if len(text) <= _LOGGED_ARGUMENTS:
            return self.gate.redact(arguments)
        start = self.gate.redact(text[: _LOGGED_ARGUMENTS // 4])
        return {"truncated": True, "chars": len(text), "start": start}

    async def _look_again(self) -> None:
        """``tools/list`` again before an unknown name is rejected: at most one listing at
        a time (the others wait for it), at most every :data:`_RELIST_EVERY` seconds, none
        for :data:`_RELIST_BACKOFF` after one that failed, and a call waits at most
        :data:`_RELIST_TIMEOUT` (a server that did not answer made every misspelt call
        wait the whole ``--timeout``)."""
        if self._relisting is not None:
            with anyio.move_on_after(_RELIST_TIMEOUT):
                await self._relisting.wait()
            return
        now = time.monotonic()
        if now - self._listed_at <= _RELIST_EVERY or now < self._relist_after:
            return
        self._relisting = done = anyio.Event()
        ok = False
        try:
            with anyio.move_on_after(_RELIST_TIMEOUT):
                await self.refresh()
                ok = True
        except Exception as exc:  # the old listing stays
            self.log.warn(f"tools/list refresh failed: {one_line(exc)}")
        finally:
            self._relisting = None
            done.set()
        if not ok:
            self._relist_after = time.monotonic() + _RELIST_BACKOFF

    async def _watch_upstream(self) -> None:
        """Return once the server has gone (its connection closed, or its process
        exited): a ping every :data:`_PING_EVERY` seconds, or a forwarded call, finds out."""
        failures = 0
        while True:
            with anyio.move_on_after(_PING_EVERY):
                await self._gone.wait()
                return
            try:
                with anyio.fail_after(max(_PING_EVERY, min(self.options.timeout, 30.0))):
                    await self.upstream.send_ping()
                failures = 0
            except MCPError as exc:
                if exc.error.code == types.CONNECTION_CLOSED:
                    return
                failures = 0  # an error answer is an answer: the server is there
            except TimeoutError:
                failures = 0  # busy, not gone
            except Exception:
                failures += 1  # a transport error (the HTTP server is down)
                if failures >= 3:
                    return

    def _progress_relay(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> ProgressFnT | None:
        """Pass the server's progress on under the client's own token, when it asked for
        progress (the SDK gives the upstream request a token of its own)."""
        token = (params.meta or {}).get("progress_token")
        if token is None:
            return None
        related = None if ctx.request_id is None else str(ctx.request_id)

        async def relay(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.send_progress_notification(
                token, progress, total, message, related_request_id=related
            )

        return relay

    def _explain(
        self, name: str, result: types.CallToolResult, arguments: Mapping[str, Any]
    ) -> types.CallToolResult | None:
        """A terse ``isError`` result with the tool's documentation added, else ``None``:
        what it documents, and (:func:`~autofeedback.loop._explain.explain_response`)
        the part of the call the error concerns, where the docs say (a value that breaks
        a rule its description states) and the side-effect-free call to make first."""
        if not result.is_error or self.gate.catalog is None:
            return None
        texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
        if len(texts) != len(result.content) or len(" ".join(texts)) > _TERSE:
            return None
        op = self.gate.catalog.get(name)
        if op is None:
            return None
        params = "; ".join(
            f"{p.name} ({_type_of(p.schema)}{', required' if p.required else ''})"
            + (f": {p.description}" if p.description else "")
            for p in op.parameters
        )
        described = op.description or "(no description)"
        doc = f"The server's error was terse. What {name} documents: {described}"
        if params:
            doc += f" Arguments: {params}."
        from autofeedback.loop._explain import explain_response

        explained = explain_response(
            None, op, 400, " ".join(texts), request=arguments, catalog=self.gate.catalog
        )
        more = [line for line in explained.lines() if not line.startswith("Documentation")]
        if explained.concerns or explained.next_call is not None:
            doc += "\n" + "\n".join(more)
        note = types.TextContent(type="text", text=self.gate.redact(doc))
        return result.model_copy(update={"content": [*result.content, note]})

    def _pass_through(self, capabilities: types.ServerCapabilities | None) -> None:
        """Prompts and resources the server offers go through untouched (only tools are
        checked); registering a handler is what makes the proxy advertise the capability."""
        if capabilities is None:
            return
        forwarded: list[tuple[str, type[Any], type[Any], type[Any]]] = []
        if capabilities.prompts is not None:
            forwarded += [
                (
                    "prompts/list",
                    types.PaginatedRequestParams,
                    types.ListPromptsRequest,
                    types.ListPromptsResult,
                ),
                (
                    "prompts/get",
                    types.GetPromptRequestParams,
                    types.GetPromptRequest,
                    types.GetPromptResult,
                ),
            ]
        if capabilities.resources is not None:
            forwarded += [
                (
                    "resources/list",
                    types.PaginatedRequestParams,
                    types.ListResourcesRequest,
                    types.ListResourcesResult,
                ),
                (
                    "resources/templates/list",
                    types.PaginatedRequestParams,
                    types.ListResourceTemplatesRequest,
                    types.ListResourceTemplatesResult,
                ),
                (
                    "resources/read",
                    types.ReadResourceRequestParams,
                    types.ReadResourceRequest,
                    types.ReadResourceResult,
                ),
            ]
        for method, params_type, request_type, result_type in forwarded:
            self.server.add_request_handler(
                method, params_type, self._forwarder(request_type, result_type)
            )

    def _forwarder(self, request_type: type[Any], result_type: type[Any]) -> Any:
        async def forward(ctx: ServerRequestContext[Any], params: Any) -> Any:
            return await self.upstream.send_request(request_type(params=_hop(params)), result_type)

        return forward

    # -- serving ----------------------------------------------------------------------

    async def serve(
        self,
        sock: socket.socket | None = None,
        *,
        on_gone: Callable[[], None] | None = None,
    ) -> None:
        """Serve the client until it disconnects (stdio) or the task is cancelled (HTTP).
        ``sock``: for streamable HTTP, a socket already bound to the options' host and port
        (:func:`~autofeedback.serve._listen.listen`); bound here when not given. Raises
        :class:`MCPError` (``CONNECTION_CLOSED``) once the server has gone: a proxy in
        front of nothing must not keep answering from a dead server's list. ``on_gone`` is
        called instead, when given: the stdio transport reads its client in a thread that
        no cancellation interrupts, so only the process can end it."""
        gone = False

        async def watch(scope: anyio.CancelScope) -> None:
            nonlocal gone
            await self._watch_upstream()
            if on_gone is not None:
                on_gone()
            gone = True
            scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch_list_changed)
            tg.start_soon(watch, tg.cancel_scope)
            options = self.server.create_initialization_options()
            if self.options.transport == "stdio":
                async with stdio_server() as (read, write):
                    await self.server.run(read, write, options)
            else:
                await self._serve_http(sock)
            tg.cancel_scope.cancel()
        if gone:
            raise MCPError(types.CONNECTION_CLOSED, "the server exited or closed its connection")

    async def _serve_http(self, sock: socket.socket | None) -> None:
        if sock is None:
            sock = listen(self.options.host, self.options.port)
        app = self.server.streamable_http_app(host=self.options.host)
        server = uvicorn_server(app, self.options.host, self.options.port, grace=self.options.grace)
        host = f"[{self.options.host}]" if ":" in self.options.host else self.options.host
        self.log.warn(f"serving on http://{host}:{self.options.port}/mcp")
        await server.serve(sockets=[sock])


#: ``_meta`` keys that describe one hop of a 2026-07-28 connection (the client's version,
#: identity and capabilities), not the request: the proxy's own session to the server
#: speaks for itself, and a handshake-era server refuses a request that carries them.
_HOP_META = frozenset(
    {
        types.PROTOCOL_VERSION_META_KEY,
        types.CLIENT_INFO_META_KEY,
        types.CLIENT_CAPABILITIES_META_KEY,
        types.LOG_LEVEL_META_KEY,
    }
)


def _hop(params: Any) -> Any:
    """``params`` as the proxy forwards them: the client's own ``_meta`` (a progress
    token, vendor keys) kept, the keys of its connection to the proxy dropped."""
    meta = getattr(params, "meta", None)
    if not meta or _HOP_META.isdisjoint(meta):
        return params
    kept = {k: v for k, v in meta.items() if k not in _HOP_META}
    return params.model_copy(update={"meta": kept or None})


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _type_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if isinstance(schema.get("enum"), list):
        return "one of " + ", ".join(map(repr, schema["enum"]))
    kind = schema.get("type")
    return "/".join(map(str, kind)) if isinstance(kind, list) else str(kind or "any")


def run_mcp_proxy(options: McpProxyOptions) -> int:
    """Run the proxy until the client goes away; the CLI's exit code (0, or 2 when the
    server cannot be reached).

    >>> run_mcp_proxy(McpProxyOptions(command=["python", "weather.py"]))  # doctest: +SKIP
    """
    options.check()  # the host rule included: a ConfigurationError for the CLI
    # a served proxy checks heavy calls in a worker process (off its GIL)
    options = replace(options, worker=True)
    warning = check_host(options.host, options.allow_remote, "the MCP proxy")
    if warning and options.transport != "stdio":
        options.stderr.write(f"autofeedback: {warning}\n")
    # bound before the server is launched: a port in use is one clear error (exit 2)
    sock = listen(options.host, options.port) if options.transport != "stdio" else None

    def gone() -> None:
        # the client's stdin is read in a thread nothing interrupts: end the process
        with contextlib.suppress(Exception):
            options.stderr.write(
                "autofeedback: error: mcp-proxy: the server exited or closed its connection\n"
            )
            options.stderr.flush()
        os._exit(2)

    async def main() -> None:
        async with McpProxy.connect(options) as proxy:
            await proxy.serve(sock, on_gone=gone if options.transport == "stdio" else None)

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 0
    except Exception as caught:  # one line on stderr, never a traceback
        exc: BaseException = caught
        while isinstance(inner := getattr(exc, "exceptions", None), tuple) and inner:
            exc = inner[0]  # anyio's task groups wrap the failure
        what = (
            "cannot reach the server"
            if isinstance(exc, (MCPError, OSError, TimeoutError))
            else type(exc).__name__
        )
        # an --upstream-url with user info must not reach the terminal or a log
        secrets = url_secrets(options.upstream_url) if options.upstream_url else []
        reason = redact(one_line(exc), secrets=secrets)
        options.stderr.write(f"autofeedback: error: mcp-proxy: {what}: {reason}\n")
        return 2
    finally:
        if sock is not None:
            sock.close()
    return 0

"""``autofeedback mcp-proxy``: an MCP server in front of another that checks every
``tools/call`` against the tools it lists."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import IO, Any

from autofeedback.cli._common import _Usage
from autofeedback.cli._options import _grace_argument, _host_arguments, _repair_flag
from autofeedback.core._install import install_hint


def add_parser(sub: Any) -> argparse.ArgumentParser:
    m = sub.add_parser(
        "mcp-proxy",
        help="an MCP server in front of another: checks every tools/call against its tools",
        description="Sit between an MCP client and an MCP server: unknown tools get -32602 "
        "with a suggestion, bad arguments an isError result with feedback, valid calls go "
        "through unchanged. Example: autofeedback mcp-proxy -- python weather.py",
    )
    m.add_argument(
        "server_command",
        nargs="*",
        metavar="-- COMMAND [ARG ...]",
        help="launch the real server as a stdio subprocess",
    )
    m.add_argument(
        "--upstream-url", help="a streamable-HTTP server, e.g. http://127.0.0.1:8001/mcp"
    )
    m.add_argument(
        "--upstream-header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="a header for every request to --upstream-url (repeatable; never logged)",
    )
    m.add_argument(
        "--transport",
        choices=["stdio", "streamable-http"],
        default="stdio",
        help="how the proxy serves its client (default stdio)",
    )
    _host_arguments(m, "the MCP proxy")
    m.add_argument("--port", type=int, default=8000, help="streamable-http port (default 8000)")
    m.add_argument("--log", help="append a JSON line per decision (credentials redacted)")
    m.add_argument(
        "--repeat-limit",
        type=int,
        default=3,
        help="the N-th identical rejected call gets a firm stop (0: never; default 3)",
    )
    m.add_argument("--no-semantic", action="store_true", help="spelling suggestions only, no model")
    m.add_argument(
        "--no-explain-errors",
        action="store_true",
        help="pass a terse server error back without the tool's documentation",
    )
    m.add_argument("--timeout", type=float, default=300.0, help="per upstream request, seconds")
    _grace_argument(m)
    _repair_flag(m)
    return m  # type: ignore[no-any-return]


def command(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    return _mcp_proxy(args, err)


def _mcp_proxy(args: argparse.Namespace, err: IO[str]) -> int:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise _Usage(f"mcp-proxy needs the MCP SDK: {install_hint('mcp')}") from None
    from autofeedback.integrations._mcp_proxy import McpProxyOptions, run_mcp_proxy

    command = list(args.server_command)
    if command[:1] == ["--"]:
        command = command[1:]
    headers = []
    for header in args.upstream_header:
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            raise _Usage("--upstream-header wants 'NAME: VALUE'")
        headers.append((name.strip(), value.strip()))
    options = McpProxyOptions(
        command=command,
        upstream_headers=headers,
        upstream_url=args.upstream_url,
        transport=args.transport,
        host=args.host,
        allow_remote=args.allow_remote,
        grace=args.shutdown_grace,
        port=args.port,
        log=Path(args.log) if args.log else None,
        repeat_limit=args.repeat_limit,
        retriever=None if args.no_semantic else "auto",
        explain_errors=not args.no_explain_errors,
        timeout=args.timeout,
        stderr=err,
        repair=args.repair,
    )
    return run_mcp_proxy(options)

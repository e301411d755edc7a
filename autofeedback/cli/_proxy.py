"""``autofeedback proxy``: an OpenAI-compatible proxy that checks the tool calls a model
returns and asks it again with the feedback."""

from __future__ import annotations

import argparse
from typing import IO, Any

from autofeedback.cli._common import _Usage
from autofeedback.cli._options import _grace_argument, _host_arguments, _repair_flag
from autofeedback.core._install import install_hint


def add_parser(sub: Any) -> argparse.ArgumentParser:
    px = sub.add_parser(
        "proxy",
        help="an OpenAI-compatible proxy that checks tool calls and asks again",
        description="Serve an OpenAI-compatible API in front of another one. For a chat "
        "completion or Responses request with tools (or an Anthropic Messages request, "
        "POST /v1/messages), every tool call the model returns is checked against those "
        "tools; a wrong call goes back to the model with the feedback as its tool result, "
        "and the client gets the final answer. Everything else passes through unchanged. "
        "Point any OpenAI client at http://HOST:PORT/v1 (an Anthropic client at "
        "http://HOST:PORT).",
        epilog="""exit codes:
  0  stopped with Ctrl-C (SIGTERM stops it as gracefully, then ends it by that signal)
  2  bad input: a bad --upstream URL or option, a broken --spec, a --log folder that
     does not exist, a port already in use

examples:
  autofeedback proxy --upstream http://127.0.0.1:8080/v1           # on 127.0.0.1:8787
  autofeedback proxy --upstream https://api.openai.com/v1 --port 9000 --log proxy.jsonl
  autofeedback proxy --upstream https://api.anthropic.com/v1       # Anthropic Messages
  autofeedback proxy --upstream http://127.0.0.1:8080/v1 --spec openapi.yaml --no-semantic""",
    )
    px.add_argument(
        "--upstream",
        required=True,
        metavar="URL",
        help="the base URL to forward to, e.g. http://127.0.0.1:8080/v1 "
        "(https://api.anthropic.com/v1 for Anthropic's Messages API)",
    )
    _host_arguments(px, "the proxy")
    px.add_argument("--port", type=int, default=8787, help="port to listen on")
    px.add_argument("--spec", help="an OpenAPI document that judges the tools it names")
    px.add_argument(
        "--max-rounds", type=int, default=3, help="requests upstream per client request"
    )
    px.add_argument("--token-budget", type=int, help="stop asking again past this many tokens")
    px.add_argument(
        "--semantic",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the semantic checks with the embedding model (E2.1, E2.3, E3.3), as at every "
        "entry point; --no-semantic: structural checks and spelling suggestions only",
    )
    px.add_argument(
        "--log",
        metavar="FILE",
        help="append one JSON line per decision (credentials masked)",
    )
    _repair_flag(px)
    px.add_argument(
        "--on-give-up",
        choices=["error", "pass"],
        default="error",
        help="when the model's tool calls are still wrong after the last round: error, an "
        "HTTP 422 JSON error that the client library raises (default); pass, the completion "
        "as the model wrote it, marked in the x-autofeedback header",
    )
    px.add_argument(
        "--max-body-mb",
        type=float,
        default=32.0,
        help="request bodies past this size get a 413, upstream answers to check a 502 "
        "(default 32)",
    )
    px.add_argument(
        "--max-connections",
        type=int,
        default=100,
        help="connections to the upstream at once; a request that waits over 5 s for one "
        "gets a 503 (default 100)",
    )
    _grace_argument(px)
    return px  # type: ignore[no-any-return]


def command(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    return _proxy(args, out, err)


def _proxy(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    try:
        from autofeedback.integrations._proxy_runner import run_proxy
    except ImportError as exc:
        raise _Usage(
            f"the proxy needs starlette, uvicorn and httpx ({exc.name} is missing): "
            f"{install_hint('proxy')}"
        ) from None
    return run_proxy(
        args.upstream,
        host=args.host,
        port=args.port,
        spec=args.spec,
        max_rounds=args.max_rounds,
        token_budget=args.token_budget,
        semantic=args.semantic,
        log=args.log,
        repair=args.repair,
        give_up=args.on_give_up,
        allow_remote=args.allow_remote,
        max_body=max(1, int(args.max_body_mb * (1 << 20))),
        max_connections=args.max_connections,
        grace=args.shutdown_grace,
        stdout=out,
        stderr=err,
    )

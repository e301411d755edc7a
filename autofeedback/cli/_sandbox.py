"""``autofeedback sandbox``: serve a spec on 127.0.0.1 as a validating mock API."""

from __future__ import annotations

import argparse
from typing import IO, Any

from autofeedback.cli._common import _require
from autofeedback.cli._options import _grace_argument, _host_arguments


def add_parser(sub: Any) -> argparse.ArgumentParser:
    sb = sub.add_parser(
        "sandbox",
        help="serve a spec on 127.0.0.1, validating every request",
        description="Serve a spec as a validating mock API: valid requests are answered "
        "consistently within a session (one store per collection: lists page through it, "
        "details read it, creates, updates and deletes change it; values satisfy their "
        "schemas), invalid ones get a documented error. What the spec gives no way to know "
        "(a list with no id field its detail takes) is said once at start-up.",
        epilog="""examples:
  autofeedback sandbox --spec specs/examples/bookshop.yaml            # 127.0.0.1:8080
  autofeedback sandbox --spec specs/examples/calendar.yaml            # 127.0.0.1:8090
  autofeedback sandbox --spec api.yaml --port 9000 --terse""",
    )
    sb.add_argument("--spec", help="spec file (required)")
    sb.add_argument(
        "--port", type=int, help="port (default: the spec's loopback server port, or 8080)"
    )
    _host_arguments(sb, "the sandbox")
    sb.add_argument(
        "--terse",
        action="store_true",
        help="answer invalid requests with only a status and a machine code",
    )
    sb.add_argument(
        "--seed",
        type=int,
        default=0,
        help="varies generated bodies and created ids; same seed, same answers (default 0)",
    )
    _grace_argument(sb)
    return sb  # type: ignore[no-any-return]


def command(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    from autofeedback.serve._sandbox import run_sandbox

    _require(args, "spec")
    return run_sandbox(
        args.spec,
        host=args.host,
        port=args.port,
        terse=args.terse,
        seed=args.seed,
        allow_remote=args.allow_remote,
        grace=args.shutdown_grace,
        stdout=out,
        stderr=err,
    )

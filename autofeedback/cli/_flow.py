"""``autofeedback flow``: where each parameter's value comes from (the data flow)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import IO, Any

from autofeedback.cli._common import _load_specs, _Usage


def add_parser(sub: Any) -> argparse.ArgumentParser:
    fl = sub.add_parser("flow", help="where each parameter's value comes from (the data flow)")
    fl.add_argument("--spec", required=True, action="append", help="spec file (repeatable)")
    fl.add_argument("operation", nargs="?", help="show only this operation (name or 'GET /path')")
    fl.add_argument("--format", choices=["text", "json"], default="text")
    fl.add_argument("--links", help="overrides, JSON/YAML: {OPERATION: {param: 'OP:path' | null}}")
    fl.add_argument(
        "--responses", help="response schemas: GraphQL SDL or JSON {function: JSON Schema}"
    )
    fl.add_argument("--top", type=int, default=3, help="producers shown per parameter")
    return fl  # type: ignore[no-any-return]


def command(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    return _flow(args, out)


def _flow(args: argparse.Namespace, out: IO[str]) -> int:
    from autofeedback.flow import FlowGraph, load_overrides, read_response_schemas, with_responses
    from autofeedback.flow._view import JsonFlowView, TextFlowView

    catalog = _load_specs(args.spec)
    assert catalog is not None
    if args.responses:
        catalog = with_responses(catalog, read_response_schemas(Path(args.responses)))
    overrides = load_overrides(args.links) if args.links else None
    graph = FlowGraph.from_catalog(catalog, overrides)
    names = list(catalog.names)
    if args.operation:
        op = graph.operation(args.operation)
        if op is None:
            raise _Usage(f"unknown operation {args.operation!r}")
        names = [op.name]
    view = JsonFlowView if args.format == "json" else TextFlowView
    view(out, top=max(args.top, 1)).show(graph, names)
    return 0

"""How far do E4 findings agree with JSON Schema itself, in every place a schema enters?

1. **Agreement with the official JSON-Schema-Test-Suite** (``../shared/data/
   json-schema-test-suite``), per dialect (function tools and MCP tools in 2020-12, draft
   7 and draft 4 named by ``$schema``; OpenAPI 3.0, OpenAPI 3.1 and Swagger 2 request
   bodies) and per kind (the required files; ``optional/format``, where formats are
   asserted). Each suite schema is wrapped as ``benchmarks/_suite.py`` says and every
   test's data sent through ``Scanner(..., retriever=None)``: a *false error* is valid
   data refused, a *miss* invalid data accepted. Deliberate deviations are counted apart.
2. **Format checks on the fast path**: per asserted format, microseconds per
   ``accepts`` (fastjsonschema with autofeedback's format checker) of a call whose one
   argument carries that format, on the suite's valid values, against jsonschema's
   ``Draft202012Validator`` with its own 2020-12 format checker on the same calls, in
   the same run.

    python benchmarks/conformance.py
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jsonschema import Draft202012Validator

from autofeedback import ApiCatalog
from autofeedback.checks._check_values import accepts
from autofeedback.checks._formats import ASSERTED
from benchmarks import _datasets
from benchmarks._results import write_section
from benchmarks._suite import DIALECTS, deviation, iter_runs, serve_remotes

KINDS = ("required", "format")


def agreement(root: Path) -> str:
    counts: Counter[tuple[str, str, str]] = Counter()
    with serve_remotes(root) as remote_refs:  # the suite's remote references, on 127.0.0.1
        runs = list(iter_runs(root, remote_refs=remote_refs))
    for run in runs:
        for case in run.cases:
            if case.kind not in KINDS:
                continue
            outcome = case.outcome
            if outcome in ("false error", "missed") and deviation(case):
                outcome += " (deliberate)"
            counts[(case.dialect, case.kind, outcome)] += 1
    lines = [
        "| dialect | kind | tests judged | agree | false errors | missed "
        "| deliberate deviations "
        "| skipped (needs its own meta-schema / not this dialect's keywords) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dialect in DIALECTS:
        for kind in KINDS:
            c = {o: counts[(dialect, kind, o)] for o in _OUTCOMES}
            judged = sum(v for o, v in c.items() if o != "skipped")
            if not judged:
                continue
            refused, accepted = c["false error (deliberate)"], c["missed (deliberate)"]
            lines.append(
                f"| {dialect} | {kind} | {judged:,} | {c['agree']:,} ({c['agree'] / judged:.1%}) "
                f"| {c['false error']} | {c['missed']} | {refused + accepted} "
                f"(false errors {refused}, missed {accepted}) | {c['skipped']} |"
            )
    return "\n".join(lines)


_OUTCOMES = (
    "agree",
    "false error",
    "missed",
    "false error (deliberate)",
    "missed (deliberate)",
    "skipped",
)


def format_speed(root: Path, repeat: int) -> str:
    base = root / "tests" / "draft2020-12" / "optional" / "format"
    lines = [
        "| format | valid values | autofeedback fast path (µs/call) "
        "| jsonschema 2020-12 (µs/call) | ratio |",
        "|---|---|---|---|---|",
    ]
    for fmt in ASSERTED:
        path = base / f"{fmt}.json"
        if not path.exists():
            continue
        values = [
            t["data"]
            for g in json.loads(path.read_text(encoding="utf-8"))
            for t in g["tests"]
            if t["valid"] and isinstance(t["data"], str)
        ]
        schema = {"type": "string", "format": fmt}
        tool = {
            "name": "f",
            "parameters": {"type": "object", "properties": {"v": schema}, "required": ["v"]},
        }
        op = ApiCatalog.from_tools([tool]).operations[0]
        peer = Draft202012Validator(
            {"type": "object", "properties": {"v": schema}, "required": ["v"]},
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )
        calls = [{"v": v} for v in values]
        ours = _time(functools.partial(accepts, op), calls, repeat)
        theirs = _time(peer.is_valid, calls, repeat)
        lines.append(
            f"| {fmt} | {len(values)} | {ours:.1f} | {theirs:.1f} | {theirs / ours:.1f}x |"
        )
    return "\n".join(lines)


def _time(check: Any, calls: list[Any], repeat: int) -> float:
    for call in calls:  # warm: compiled validators, caches
        check(call)
    started = time.perf_counter()
    for _ in range(repeat):
        for call in calls:
            check(call)
    return (time.perf_counter() - started) / (repeat * len(calls)) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200, help="timing rounds per format")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    data = _datasets.shared_data_dir()
    root = data / "json-schema-test-suite" if data is not None else None
    if root is None or not (root / "tests").is_dir():
        print("the JSON-Schema-Test-Suite (../shared/data) is not here", file=sys.stderr)
        return 2
    started = time.perf_counter()
    table = agreement(root)
    took = time.perf_counter() - started
    speed = format_speed(root, args.repeat)
    body = (
        "### Agreement with the JSON-Schema-Test-Suite\n\n"
        f"{table}\n\n"
        "A false error is valid data refused, a miss invalid data accepted; the deliberate "
        "deviations (oneOf judged as anyOf, formats asserted where the required files make "
        "them annotations, lenient kept format checkers, formats not asserted) are listed "
        "with their reasons in benchmarks/_suite.py and run as expected failures in "
        f"tests/checks/test_json_schema_suite.py. The whole run took {took:.1f} s.\n\n"
        "### Format checks on the fast path\n\n"
        f"{speed}\n\n"
        f"Each figure is the mean over the suite's valid values of the format, {args.repeat} "
        "rounds, one process on a shared 2-core VM; the ratio is jsonschema's time over ours."
    )
    print(body)
    if not args.no_write:
        write_section("Conformance", "python benchmarks/conformance.py", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

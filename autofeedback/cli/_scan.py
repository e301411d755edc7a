"""``autofeedback scan``: check one LLM output against a spec and print the findings and
the feedback text for the model."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import IO, Any

from autofeedback.cli._common import _EXIT_CODES, _load_specs, _require, _Usage


def add_parser(sub: Any) -> argparse.ArgumentParser:
    s = sub.add_parser(
        "scan",
        help="check one LLM output against a spec",
        description="Check one LLM output (any supported request format) against a spec and "
        "print the findings and the feedback text for the model.",
        epilog=f"""{_EXIT_CODES}

examples:
  autofeedback scan --spec api.yaml "GET /books?query=dune&limit=ten"
  autofeedback scan --spec api.yaml --instruction "Find science books" output.txt
  llm-command | autofeedback scan --spec api.yaml --format json -""",
    )
    s.add_argument("--spec", action="append", help="spec file (repeatable; required)")
    s.add_argument("--instruction", help="the user instruction, for the E2.1 selection check")
    s.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    s.add_argument("--no-semantic", action="store_true", help="structural checks only, no model")
    s.add_argument(
        "output",
        nargs="?",
        default="-",
        help="a file holding the LLM output, the output text itself, or - (stdin)",
    )
    return s  # type: ignore[no-any-return]


#: one token that names a file rather than holding a request: ``out.txt``, ``logs/x``
_PATHLIKE = re.compile(r"[\w~.-]*(?:/[\w~.-]+)+/?|[\w~-][\w~.-]*\.[A-Za-z][A-Za-z0-9]{0,4}")


def _read_output(arg: str, inp: IO[str]) -> str:
    if arg == "-":
        return inp.read()
    path = Path(arg)
    try:
        if len(arg) < 4096 and path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    if _PATHLIKE.fullmatch(arg):
        # a mistyped file name would otherwise be scanned as the model's output
        raise _Usage(f"scan: no such file: {arg} (to scan text, pass the text or - for stdin)")
    return arg


def command(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    _require(args, "spec")
    return _scan(args, out, inp)


def _scan(args: argparse.Namespace, out: IO[str], inp: IO[str]) -> int:
    from autofeedback.decide._feedback import render_feedback
    from autofeedback.scanner._scan import Scanner, first_finding

    catalog = _load_specs(args.spec)
    assert catalog is not None
    text = _read_output(args.output, inp)
    scanner = Scanner(catalog, retriever=None if args.no_semantic else "auto")
    findings = list(scanner.iter_findings(text, instruction=args.instruction))
    errors = [f for f in findings if f.severity == "error"]
    first = first_finding(findings)
    ordered = ([first] if first else []) + [f for f in findings if f is not first]
    feedback = render_feedback(ordered) if ordered else None
    if args.format == "json":
        json.dump(
            {"ok": not errors, "findings": [f.as_dict() for f in findings], "feedback": feedback},
            out,
            indent=2,
        )
        out.write("\n")
    elif not findings:
        out.write("ok: no findings\n")
    else:
        for f in findings:
            out.write(f"{f.severity}: {f}\n")
        out.write("\n" + (feedback or "") + "\n")
    return 1 if errors else 0

"""The ``autofeedback`` command.

``run(argv, stdout, stderr) -> int`` does the work and is what tests call;
``main()`` only exits with its result. Exit codes: 0 clean, 1 findings, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from autofeedback._audit import AuditResult, AuditSummary, audit_lines
from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import AutoFeedbackError
from autofeedback._feedback import render_feedback
from autofeedback._findings import Finding
from autofeedback._scan import Scanner

__all__ = ["main", "run"]


class _Usage(Exception):
    """Bad command-line input: reported in one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would sys.exit; we return 2
        raise _Usage(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="autofeedback", description=__doc__.split("\n")[0] if __doc__ else None)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("scan", help="check one LLM output against a spec")
    s.add_argument("--spec", required=True, action="append", help="spec file (repeatable)")
    s.add_argument("--instruction", help="the user instruction, for the E2.1 selection check")
    s.add_argument("--format", choices=["text", "json"], default="text")
    s.add_argument("--no-semantic", action="store_true", help="structural checks only, no model")
    s.add_argument("output", nargs="?", default="-",
                   help="a file holding the LLM output, the output text itself, or - (stdin)")

    a = sub.add_parser("audit", help="audit a JSONL log of requests")
    a.add_argument("log", help="JSONL file, or - for stdin")
    a.add_argument("--spec", action="append", default=[], help="spec file (repeatable)")
    a.add_argument("--format", choices=["text", "json", "jsonl"], default="text")
    a.add_argument("-o", "--output", help="write the report here instead of stdout")
    a.add_argument("--no-semantic", action="store_true", help="structural checks only, no model")
    a.add_argument("--progress", choices=["auto", "always", "never"], default="auto")
    return p


def _load_specs(paths: Sequence[str]) -> ApiCatalog | None:
    if not paths:
        return None
    catalogs = [ApiCatalog.from_file(p) for p in paths]
    return catalogs[0] if len(catalogs) == 1 else ApiCatalog.merge(*catalogs)


def run(argv: Sequence[str] | None = None, stdout: IO[str] | None = None,
        stderr: IO[str] | None = None, stdin: IO[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    inp = stdin if stdin is not None else sys.stdin
    try:
        args = _parser().parse_args(list(argv) if argv is not None else None)
        if args.command == "scan":
            return _scan(args, out, inp)
        if args.command == "audit":
            return _audit(args, out, err, inp)
        raise _Usage(f"unknown command {args.command!r}")  # pragma: no cover
    except _Usage as exc:
        err.write(f"{exc}\n")
        return 2
    except AutoFeedbackError as exc:
        err.write(f"autofeedback: error: {exc}\n")
        return 2
    except OSError as exc:
        err.write(f"autofeedback: error: {exc.filename or ''}: {exc.strerror or exc}\n")
        return 2


def main() -> None:
    sys.exit(run())


# -- scan ---------------------------------------------------------------------------


def _read_output(arg: str, inp: IO[str]) -> str:
    if arg == "-":
        return inp.read()
    path = Path(arg)
    try:
        if len(arg) < 4096 and path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    return arg


def _scan(args: argparse.Namespace, out: IO[str], inp: IO[str]) -> int:
    catalog = _load_specs(args.spec)
    assert catalog is not None
    text = _read_output(args.output, inp)
    scanner = Scanner(catalog, retriever=None if args.no_semantic else "auto")
    findings = list(scanner.iter_findings(text, instruction=args.instruction))
    errors = [f for f in findings if f.severity == "error"]
    first = scanner.scan(text, instruction=args.instruction) if findings else None
    ordered = ([first] if first else []) + [f for f in findings if f is not first]
    feedback = render_feedback(ordered) if ordered else None
    if args.format == "json":
        json.dump({"ok": not errors, "findings": [f.as_dict() for f in findings],
                   "feedback": feedback}, out, indent=2)
        out.write("\n")
    elif not findings:
        out.write("ok: no findings\n")
    else:
        for f in findings:
            out.write(f"{f.severity}: {f}\n")
        out.write("\n" + (feedback or "") + "\n")
    return 1 if errors else 0


# -- audit --------------------------------------------------------------------------


class _Formatter:
    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def record(self, result: AuditResult) -> None: ...

    def finish(self, summary: AuditSummary) -> None: ...


class _JsonlFormatter(_Formatter):
    def record(self, result: AuditResult) -> None:
        self.out.write(json.dumps(result.as_dict(), ensure_ascii=False) + "\n")


class _JsonFormatter(_Formatter):
    def __init__(self, out: IO[str]) -> None:
        super().__init__(out)
        self.results: list[dict[str, Any]] = []

    def record(self, result: AuditResult) -> None:
        self.results.append(result.as_dict())

    def finish(self, summary: AuditSummary) -> None:
        json.dump({
            "records": self.results,
            "summary": {
                "records": summary.records, "clean": summary.clean,
                "bad_lines": summary.bad_lines, "by_code": dict(summary.by_code),
                "by_operation": dict(summary.by_operation),
            },
        }, self.out, indent=2, ensure_ascii=False)
        self.out.write("\n")


class _TextFormatter(_Formatter):
    def record(self, result: AuditResult) -> None:
        if result.error is not None:
            self.out.write(f"[{result.id}] bad input (line {result.line}): {result.error}\n")
            return
        if not result.findings:
            return
        status = "ok" if result.ok else "FAIL"
        self.out.write(f"[{result.id}] {status}\n")
        for f in result.findings:
            self.out.write(f"  {f.severity}: {f}\n")

    def finish(self, summary: AuditSummary) -> None:
        self.out.write(
            f"\n{summary.records} records: {summary.clean} clean, "
            f"{summary.records - summary.clean - summary.bad_lines} with findings, "
            f"{summary.bad_lines} bad input lines\n"
        )
        rows = summary.code_rows()
        if rows:
            width = max(len(t) for _, t, _ in rows)
            self.out.write(f"\n{'code':<6} {'error type':<{width}} {'count':>6}\n")
            for code, title, count in rows:
                self.out.write(f"{code:<6} {title:<{width}} {count:>6}\n")


_FORMATTERS: dict[str, type[_Formatter]] = {
    "text": _TextFormatter, "json": _JsonFormatter, "jsonl": _JsonlFormatter,
}


def _lines(path: str, inp: IO[str]) -> tuple[Iterator[str], int | None, Any]:
    if path == "-":
        return iter(inp), None, None
    handle = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by caller
    return iter(handle), os.path.getsize(path), handle


def _audit(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    catalog = _load_specs(args.spec)
    lines, size, handle = _lines(args.log, inp)
    target = open(args.output, "w", encoding="utf-8") if args.output else out  # noqa: SIM115
    summary = AuditSummary()
    formatter = _FORMATTERS[args.format](target)
    show = args.progress == "always" or (args.progress == "auto" and err.isatty() and size)
    try:
        results = audit_lines(lines, catalog, retriever=None if args.no_semantic else "auto")
        if show:
            results = _with_progress(results, handle, size, err)
        for result in results:
            summary.add(result)
            formatter.record(result)
        formatter.finish(summary)
    finally:
        if handle is not None:
            handle.close()
        if args.output:
            target.close()
    return summary.exit_code


def _with_progress(results: Iterator[AuditResult], handle: Any, size: int | None,
                   err: IO[str]) -> Iterator[AuditResult]:
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeRemainingColumn, TransferSpeedColumn)

    console = Console(file=err)
    columns = [TextColumn("auditing"), BarColumn(), TransferSpeedColumn(),
               TimeRemainingColumn(), MofNCompleteColumn()]
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("audit", total=size)
        done = 0
        for result in results:
            done += 1
            if handle is not None and done % 50 == 0:
                try:
                    progress.update(task, completed=handle.buffer.tell())
                except (OSError, AttributeError, ValueError):
                    pass
            yield result
        progress.update(task, completed=size)

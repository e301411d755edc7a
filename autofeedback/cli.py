"""The ``autofeedback`` command.

``run(argv, stdout, stderr) -> int`` does the work and is what tests call;
``main()`` only exits with its result. Exit codes: 0 clean, 1 findings, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import AutoFeedbackError
from autofeedback._feedback import render_feedback
from autofeedback._scan import Scanner, first_finding
from autofeedback.audit._audit import AuditResult, AuditSummary, audit_lines

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
    s.add_argument(
        "output",
        nargs="?",
        default="-",
        help="a file holding the LLM output, the output text itself, or - (stdin)",
    )

    a = sub.add_parser("audit", help="audit a log of requests (JSONL, HAR, OpenAI chat log)")
    a.add_argument("log", help="log file, or - for stdin")
    a.add_argument("--spec", action="append", default=[], help="spec file (repeatable)")
    a.add_argument(
        "--input-format",
        choices=["auto", "jsonl", "har", "openai"],
        default="auto",
        help="how to read the log (auto: by extension, then by content)",
    )
    a.add_argument(
        "--format", choices=["text", "json", "jsonl", "junit", "sarif", "html"], default="text"
    )
    a.add_argument("-o", "--output", help="write the report here instead of stdout")
    a.add_argument("--no-semantic", action="store_true", help="structural checks only, no model")
    a.add_argument("--progress", choices=["auto", "always", "never"], default="auto")
    a.add_argument(
        "--engine",
        choices=["local", "dask"],
        default="local",
        help="dask: audit partitions of a big line-based log in parallel (same report)",
    )
    a.add_argument(
        "--dask-scheduler",
        type=_dask_scheduler,
        default="processes",
        metavar="{processes,threads,synchronous,local-cluster,tcp://HOST:PORT}",
        help="where the partitions run: a local Dask scheduler, a dask.distributed "
        "LocalCluster of worker processes on 127.0.0.1, or a running cluster's scheduler",
    )
    a.add_argument(
        "--dask-timeout",
        type=float,
        default=10.0,
        help="seconds to reach a dask.distributed scheduler (default: 10)",
    )
    a.add_argument(
        "--workers",
        "--dask-workers",
        dest="workers",
        type=int,
        help="Dask workers, or local-cluster processes (default: CPU count; "
        "a tcp:// cluster uses its own)",
    )
    a.add_argument("--partition-mb", type=float, help="Dask partition size in MiB")

    sb = sub.add_parser("sandbox", help="serve a spec on 127.0.0.1, validating every request")
    sb.add_argument("--spec", required=True)
    sb.add_argument("--port", type=int, help="default: the spec's loopback server port, or 8080")
    sb.add_argument(
        "--terse",
        action="store_true",
        help="answer invalid requests with only a status and a machine code",
    )

    ix = sub.add_parser("index", help="the RAG index over a spec's documentation")
    ix_sub = ix.add_subparsers(dest="index_command", required=True, parser_class=_Parser)
    ib = ix_sub.add_parser("build", help="build (or reuse, when the spec is unchanged) an index")
    ib.add_argument("--spec", required=True)
    ib.add_argument(
        "--docs",
        action="append",
        default=[],
        help="a Markdown/text file or folder of extra docs (repeatable)",
    )
    ib.add_argument("-o", "--output", required=True, help="index directory")
    ib.add_argument("--embedder", help="embedding model name or local model directory")

    r = sub.add_parser("run", help="ask an LLM, check, send, explain, retry (the loop)")
    r.add_argument("--spec", required=True)
    r.add_argument("--instruction", required=True)
    r.add_argument(
        "--llm",
        default="local",
        help="'local' (embedded GGUF model), 'local:0.5b', an OpenAI-compatible "
        "base URL, or replay:FILE (recorded outputs separated by '---' lines)",
    )
    r.add_argument("--model", help="model name for an OpenAI-compatible endpoint")
    r.add_argument("--base-url", help="where to send requests (default: the spec's server)")
    r.add_argument("--allow-host", action="append", default=[], help="extra allowed host")
    r.add_argument("--max-static", type=int, default=3)
    r.add_argument("--max-dynamic", type=int, default=2)
    r.add_argument("--token-budget", type=int)
    r.add_argument("--timeout", type=float, default=10.0, help="per HTTP request, seconds")
    r.add_argument("--index", help="doc index directory (built there if missing or stale)")
    r.add_argument("--trace", help="append a JSONL trace of every attempt (credentials redacted)")
    on_off = argparse.BooleanOptionalAction
    r.add_argument("--static", action=on_off, default=None, help="static feedback (default on)")
    r.add_argument("--dynamic", action=on_off, default=None, help="dynamic feedback (default on)")
    r.add_argument(
        "--gate",
        action=on_off,
        default=None,
        help="never send a request with E1-E3 findings (default on); --no-gate sends every "
        "parsed request, for servers that explain their own errors",
    )
    r.add_argument(
        "--retrieve-docs",
        action=on_off,
        default=None,
        help="explain a failed response from the docs (default on)",
    )
    r.add_argument(
        "--corrected-call",
        action=on_off,
        default=None,
        dest="skeleton",
        help="end static feedback with the request every named fix applied",
    )
    r.add_argument(
        "--focus-docs",
        action=on_off,
        default=None,
        help="document only the APIs in question in a retry's prompt",
    )
    r.add_argument(
        "--repeat-retries",
        type=int,
        help="times a repeated failed request gets its feedback restated before stopping",
    )
    r.add_argument(
        "--constrain",
        action=on_off,
        default=None,
        help="grammar-constrained decoding: the model can only write calls to documented "
        "APIs with documented parameters (default on for local models; an "
        "OpenAI-compatible server needs structured outputs)",
    )
    _proxy_parser(sub)
    return p


#: ``run`` flags passed to FeedbackLoop only when given, so its defaults stay the defaults
_LOOP_OPTIONS = (
    "static",
    "dynamic",
    "gate",
    "retrieve_docs",
    "skeleton",
    "focus_docs",
    "repeat_retries",
    "constrain",
)


def _dask_scheduler(name: str) -> str:
    from autofeedback.audit._engines import check_scheduler

    try:
        return check_scheduler(name)
    except AutoFeedbackError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _load_specs(paths: Sequence[str]) -> ApiCatalog | None:
    if not paths:
        return None
    catalogs = [ApiCatalog.from_file(p) for p in paths]
    return catalogs[0] if len(catalogs) == 1 else ApiCatalog.merge(*catalogs)


def run(
    argv: Sequence[str] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    stdin: IO[str] | None = None,
) -> int:
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
        if args.command == "sandbox":
            from autofeedback._sandbox import run_sandbox

            return run_sandbox(args.spec, port=args.port, terse=args.terse, stdout=out, stderr=err)
        if args.command == "index":
            return _index(args, out)
        if args.command == "run":
            return _run_loop(args, out)
        if args.command == "proxy":
            return _proxy(args, out, err)
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


# -- audit --------------------------------------------------------------------------


class _Sink(Protocol):
    def record(self, result: AuditResult) -> None: ...

    def finish(self, summary: AuditSummary) -> None: ...


class _Formatter:
    def __init__(self, out: IO[str], source: str = "-") -> None:
        self.out = out
        self.source = source

    def record(self, result: AuditResult) -> None: ...

    def finish(self, summary: AuditSummary) -> None: ...


class _JsonlFormatter(_Formatter):
    def record(self, result: AuditResult) -> None:
        self.out.write(json.dumps(result.as_dict(), ensure_ascii=False) + "\n")


class _JsonFormatter(_Formatter):
    def __init__(self, out: IO[str], source: str = "-") -> None:
        super().__init__(out, source)
        self.results: list[dict[str, Any]] = []

    def record(self, result: AuditResult) -> None:
        self.results.append(result.as_dict())

    def finish(self, summary: AuditSummary) -> None:
        json.dump(
            {
                "records": self.results,
                "summary": {
                    "records": summary.records,
                    "clean": summary.clean,
                    "bad_lines": summary.bad_lines,
                    "by_code": dict(summary.by_code),
                    "by_operation": dict(summary.by_operation),
                },
            },
            self.out,
            indent=2,
            ensure_ascii=False,
        )
        self.out.write("\n")


class _TextFormatter(_Formatter):
    max_operations = 50

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
        ops = summary.operation_rows()
        if ops:
            shown = ops[: self.max_operations]
            width = max(len("operation"), *(len(op) for op, _, _ in shown))
            self.out.write(f"\n{'operation':<{width}} {'count':>6}  codes\n")
            for op, count, codes in shown:
                self.out.write(f"{op:<{width}} {count:>6}  {codes}\n")
            if len(ops) > len(shown):
                self.out.write(f"... and {len(ops) - len(shown)} more operations\n")


def _report(name: str) -> Callable[[IO[str], str], _Sink]:
    def make(out: IO[str], source: str) -> _Sink:
        from autofeedback.audit import _reports

        cls: Callable[[IO[str], str], _Sink] = getattr(_reports, name)
        return cls(out, source)

    return make


_FORMATTERS: dict[str, Callable[[IO[str], str], _Sink]] = {
    "text": _TextFormatter,
    "json": _JsonFormatter,
    "jsonl": _JsonlFormatter,
    "junit": _report("JunitReport"),
    "sarif": _report("SarifReport"),
    "html": _report("HtmlReport"),
}

_SNIFF = 64 * 1024


class _Rewound:
    """stdin with the lines read for sniffing put back in front."""

    def __init__(self, head: list[str], rest: IO[str]) -> None:
        self.head = "".join(head)
        self.lines = head
        self.rest = rest

    def __iter__(self) -> Iterator[str]:
        lines, self.lines, self.head = self.lines, [], ""
        yield from lines
        yield from self.rest

    def read(self, size: int = -1) -> str:
        if self.head:
            head, self.head, self.lines = self.head, "", []
            return head
        return self.rest.read(size)


def _lines(path: str, inp: IO[str]) -> tuple[Any, str, int | None, Any]:
    """(stream, its first characters, size in bytes or None, file handle to close)."""
    if path == "-":
        head: list[str] = []
        while sum(map(len, head)) < _SNIFF:
            line = inp.readline()
            if not line:
                break
            head.append(line)
        return _Rewound(head, inp), "".join(head), None, None
    handle = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by caller
    start = handle.read(_SNIFF)
    handle.seek(0)
    return handle, start, os.path.getsize(path), handle


def _audit(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    from autofeedback.audit._audit import audit_units
    from autofeedback.audit._inputs import read_har, read_openai, sniff_format

    catalog = _load_specs(args.spec)
    retriever = None if args.no_semantic else "auto"
    if args.engine == "dask" and args.log == "-":
        raise _Usage("autofeedback audit: --engine dask needs a log file, not stdin")
    if args.workers is not None and args.workers < 1:
        raise _Usage("autofeedback audit: --workers must be at least 1")
    stream, head, size, handle = _lines(args.log, inp)
    fmt = args.input_format
    if fmt == "auto":
        fmt = sniff_format(args.log, head)
    done = [0]  # bytes the dask engine has finished, for progress
    results: Iterator[AuditResult]
    try:
        if args.engine == "dask":
            from autofeedback.audit._engines import audit_file_dask

            results = audit_file_dask(
                args.log,
                catalog,
                input_format=fmt,
                retriever=retriever,
                scheduler=args.dask_scheduler,
                workers=args.workers,
                partition_bytes=int(args.partition_mb * 2**20) if args.partition_mb else None,
                on_partition=lambda n: done.__setitem__(0, done[0] + n),
                timeout=args.dask_timeout,
            )
            position: Callable[[], int] | None = lambda: done[0]  # noqa: E731
        else:
            if fmt == "har":
                results = audit_units(read_har(stream), catalog, retriever=retriever)
            elif fmt == "openai":
                results = audit_units(read_openai(stream), catalog, retriever=retriever)
            else:
                results = audit_lines(stream, catalog, retriever=retriever)
            position = _position(handle)
        # a lone surrogate from a log must not stop the report: it is written escaped
        target = (
            open(args.output, "w", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115
            if args.output
            else out
        )
        try:
            summary = AuditSummary()
            formatter = _FORMATTERS[args.format](target, args.log)
            show = args.progress == "always" or (args.progress == "auto" and err.isatty())
            if show:
                results = _with_progress(results, position, size, err)
            for result in results:
                result = _reported(formatter, result)
                summary.add(result)
            formatter.finish(summary)
        finally:
            if args.output:
                target.close()
    finally:
        if handle is not None:
            handle.close()
    return summary.exit_code


def _reported(formatter: _Sink, result: AuditResult) -> AuditResult:
    """Write ``result``; a result the formatter cannot write (an unencodable character
    on a strict stdout...) is written as that record's one-line error instead."""
    try:
        formatter.record(result)
        return result
    except Exception as exc:
        from autofeedback._scan import one_line

        reason = one_line(exc).encode("ascii", "backslashreplace").decode("ascii")
        failed = AuditResult(
            result.id if isinstance(result.id, (int, float)) else result.line,
            False,
            error=f"the record could not be reported: {reason}",
            line=result.line,
        )
        formatter.record(failed)
        return failed


def _position(handle: Any) -> Callable[[], int] | None:
    """Bytes read so far from a text file (its buffer's offset: the text layer cannot
    tell() while being iterated)."""
    if handle is None:
        return None

    def tell() -> int:
        try:
            return int(handle.buffer.tell())
        except (OSError, AttributeError, ValueError):
            return 0

    return tell


def _with_progress(
    results: Iterator[AuditResult],
    position: Callable[[], int] | None,
    size: int | None,
    err: IO[str],
) -> Iterator[AuditResult]:
    """A rich progress bar on stderr: bytes with rate and ETA when the size is known,
    else a running count of records with their rate."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        ProgressColumn,
        Task,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.text import Text

    class _Records(ProgressColumn):
        def render(self, task: Task) -> Text:
            n = task.fields.get("records", 0)
            if task.total is not None:  # the byte columns already show rate and ETA
                return Text(f"{n} records")
            speed = n / task.elapsed if task.elapsed else 0.0
            return Text(f"{n} records ({speed:,.0f}/s)")

    by_bytes = bool(size) and position is not None
    columns: list[ProgressColumn] = [TextColumn("auditing")]
    if by_bytes:
        columns += [
            BarColumn(),
            TaskProgressColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
        ]
    else:
        columns += [TimeElapsedColumn()]
    columns.append(_Records())
    console = Console(file=err)
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("audit", total=size if by_bytes else None, records=0)
        last = 0.0
        for done, result in enumerate(results, start=1):
            now = time.monotonic()
            if now - last > 0.1:  # rich redraws at 10 Hz itself; update no faster
                last = now
                fields: dict[str, Any] = {"records": done}
                if by_bytes and position is not None:
                    fields["completed"] = position()
                progress.update(task, **fields)
            yield result
        progress.update(task, completed=size if by_bytes else None, records=done if last else 0)


# -- index / run ------------------------------------------------------------------


def _doc_paths(items: Sequence[str]) -> list[Path]:
    paths: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            paths += sorted(x for x in p.rglob("*") if x.suffix.lower() in (".md", ".txt", ".rst"))
        elif p.is_file():
            paths.append(p)
        else:
            raise _Usage(f"autofeedback index build: no such file or folder: {item}")
    return paths


def _index(args: argparse.Namespace, out: IO[str]) -> int:
    from doc_index import build_or_load
    from retriever import load_embedder

    catalog = ApiCatalog.from_file(args.spec)
    embedder = load_embedder(args.embedder) if args.embedder else None
    index = build_or_load(catalog, Path(args.output), embedder, _doc_paths(args.docs))
    out.write(f"index of {args.spec} in {args.output}: {len(index)} chunks\n")
    return 0


def _run_loop(args: argparse.Namespace, out: IO[str]) -> int:
    from rich.console import Console
    from rich.markup import escape

    from autofeedback._redact import redact
    from autofeedback.loop._llm import LocalLLM, load_llm
    from autofeedback.loop._loop import FeedbackLoop
    from autofeedback.loop._replay import ReplayLLM

    catalog = ApiCatalog.from_file(args.spec)
    if args.llm.startswith("replay:"):
        llm: Any = ReplayLLM.from_file(args.llm.removeprefix("replay:"))
    else:
        remote = args.llm.startswith(("http://", "https://"))
        llm = load_llm(args.llm, **({"model": args.model} if args.model and remote else {}))
    index = None
    if args.index:
        from doc_index import build_or_load

        index = build_or_load(catalog, Path(args.index))
    console = Console(file=out, highlight=False, width=None if out.isatty() else 120)
    options = {k: getattr(args, k) for k in _LOOP_OPTIONS if getattr(args, k) is not None}
    if args.constrain is None and isinstance(llm, LocalLLM):
        # measured: grammar + feedback beats feedback alone on the local model
        # (RESULTS.md, "grammar-constrained decoding"); --no-constrain turns it off
        options["constrain"] = True
    loop = FeedbackLoop(
        llm,
        catalog,
        base_url=args.base_url,
        allow_hosts=args.allow_host,
        doc_index=index,
        max_static=args.max_static,
        max_dynamic=args.max_dynamic,
        token_budget=args.token_budget,
        timeout=args.timeout,
        hooks={"attempt": [lambda a: _print_attempt(console, a)]},
        **options,
    )
    result = loop.run(args.instruction, trace=args.trace)
    verdict = "[green]success[/]" if result.success else f"[red]failed[/] ({result.stop_reason})"
    console.print(
        f"\n[bold]Result:[/] {verdict} after {len(result.attempts)} attempt(s), "
        f"{result.tokens} tokens"
    )
    if result.request is not None:
        shown = escape(str(redact(result.request.raw or str(result.request))))
        console.print(f"[bold]Final request:[/] {shown}")
    if result.status is not None:
        body = escape(str(redact(result.response_body or "")))
        console.print(f"[bold]Final response:[/] HTTP {result.status} {body}")
    return 0 if result.success else 1


def _print_attempt(console: Any, attempt: Any) -> None:
    from rich.panel import Panel
    from rich.text import Text

    from autofeedback._redact import redact

    body = Text()
    body.append("model: ", style="bold")
    body.append(str(redact(attempt.output.strip()[:500])) + "\n")
    for f in attempt.findings:
        body.append(f"{f.severity}: {f}\n", style="yellow" if f.severity == "warning" else "red")
    if attempt.sent is not None:
        body.append(f"sent: {attempt.sent['method']} {attempt.sent['url']}\n", style="cyan")
    if attempt.status is not None:
        excerpt = redact(attempt.response_excerpt or "")
        body.append(f"response: HTTP {attempt.status} {excerpt}\n")
    if attempt.explanation:
        body.append("from the docs: ", style="bold")
        body.append(attempt.explanation[:600] + "\n")
    if attempt.error:
        body.append(attempt.error + "\n", style="red")
    if attempt.feedback:
        body.append(f"{attempt.feedback_kind} feedback:\n", style="bold magenta")
        body.append(attempt.feedback)
    console.print(Panel(body, title=f"attempt {attempt.number}", expand=False))


# -- proxy (issue 17): an OpenAI-compatible proxy that checks tool calls -------------


def _proxy_parser(sub: Any) -> None:
    px = sub.add_parser(
        "proxy", help="an OpenAI-compatible proxy that checks tool calls and asks again"
    )
    px.add_argument("--upstream", required=True, help="e.g. http://127.0.0.1:8080/v1")
    px.add_argument("--host", default="127.0.0.1")
    px.add_argument("--port", type=int, default=8787)
    px.add_argument("--spec", help="an OpenAPI document that judges the tools it names")
    px.add_argument("--max-rounds", type=int, default=3, help="requests upstream per call")
    px.add_argument("--token-budget", type=int, help="stop asking again past this many tokens")
    px.add_argument("--semantic", action="store_true", help="also the semantic checks (E2.3, E3.3)")


def _proxy(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    try:
        from autofeedback.integrations._proxy import run_proxy
    except ImportError as exc:
        err.write(
            f"autofeedback: error: the proxy needs starlette, uvicorn and httpx ({exc.name} "
            "is missing): pip install 'autofeedback[proxy]'\n"
        )
        return 2
    return run_proxy(
        args.upstream,
        host=args.host,
        port=args.port,
        spec=args.spec,
        max_rounds=args.max_rounds,
        token_budget=args.token_budget,
        semantic=args.semantic,
        stdout=out,
        stderr=err,
    )

"""``autofeedback audit``: check every record of a log (JSONL, HAR, provider chat logs)
and write a report, locally or on Dask; the log is read as a stream, and a file that is
no text log is refused in one line."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import time
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from autofeedback.cli._common import _ERROR, _EXIT_CODES, _load_specs, _Usage
from autofeedback.cli._formatters import _FORMATTERS, _Sink
from autofeedback.core._exceptions import AutoFeedbackError

if TYPE_CHECKING:
    from autofeedback.audit._audit import AuditResult


def add_parser(sub: Any) -> argparse.ArgumentParser:
    a = sub.add_parser(
        "audit",
        help="audit a log: JSONL records, HAR, or chat logs of OpenAI (Chat Completions, "
        "Responses), Anthropic, Gemini and Bedrock",
        description="Check every record of a log and write a report. The log is JSONL "
        "records (LLM outputs, calls, HTTP requests or sequences), a HAR capture, or a chat "
        "log of OpenAI Chat Completions or Responses, Anthropic Messages, Gemini or Bedrock "
        "Converse. Blank lines are skipped; a line that is not a record is reported as bad "
        "input and the audit goes on.",
        epilog=f"""{_EXIT_CODES}

examples:
  autofeedback audit specs/examples/requests.jsonl --spec specs/examples/bookshop.yaml
  autofeedback audit capture.har --spec api.yaml --format html -o report.html
  autofeedback audit big.jsonl --spec api.yaml --format sarif -o audit.sarif --engine dask""",
    )
    a.add_argument("log", help="log file, or - for stdin")
    a.add_argument(
        "--spec",
        action="append",
        help="spec file (repeatable; optional when every record carries its own tools)",
    )
    a.add_argument(
        "--input-format",
        choices=["auto", "jsonl", "har", "har-session", "chat", "openai"],
        default="auto",
        help="how to read the log. auto: by extension, then by content; jsonl: one record "
        "per line ({output | call | request | steps | messages}); har: a HAR capture, each "
        "request on its own; har-session: a HAR capture checked as one sequence, each "
        "response grounding later requests; chat (or openai): one model request and "
        "response per line, from OpenAI Chat Completions or Responses, Anthropic Messages, "
        "Gemini or Bedrock Converse ({request, response}, {body} wrappers, Batch API output, "
        "or a bare response; a streamed response as its events or their SSE text)",
    )
    a.add_argument(
        "--format",
        choices=["text", "json", "jsonl", "junit", "sarif", "html"],
        default="text",
        help="report format",
    )
    a.add_argument(
        "-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    a.add_argument("--no-semantic", action="store_true", help="structural checks only, no model")
    a.add_argument(
        "--fix",
        action="store_true",
        help="also repair what the docs leave one answer for: each report line of a "
        "repaired record gains 'repaired' (its call written again, in its own shape) and "
        "'repairs' ({code, location, before, after})",
    )
    a.add_argument(
        "--progress",
        choices=["auto", "always", "never"],
        default="auto",
        help="progress bar on stderr (auto: when stderr is a terminal)",
    )
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
        help="seconds to reach a dask.distributed scheduler",
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
    return a  # type: ignore[no-any-return]


def _dask_scheduler(name: str) -> str:
    from autofeedback.audit._engines import check_scheduler

    try:
        return check_scheduler(name)
    except AutoFeedbackError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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


def _head_lines(stream: IO[str]) -> list[str]:
    """The first lines of a stream that cannot be rewound, up to :data:`_SNIFF`
    characters (read once, then handed on with the rest: :class:`_Rewound`)."""
    head: list[str] = []
    while sum(map(len, head)) < _SNIFF:
        line = stream.readline()
        if not line:
            break
        head.append(line.removeprefix("\ufeff") if not head else line)
    return head


#: what a file that is no text log starts with
_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed data", "zcat"),
    (b"BZh", "bzip2-compressed data", "bzcat"),
    (b"\xfd7zXZ\x00", "xz-compressed data", "xzcat"),
    (b"(\xb5/\xfd", "zstd-compressed data", "zstdcat"),
    (b"PK\x03\x04", "a zip archive", None),
)


def _not_text(path: str, head: str | bytes) -> str | None:
    """Why a log whose first bytes (or characters, read with errors replaced) are
    ``head`` is no text log, in one line; ``None`` for text. A compressed file is named
    with the command that reads it; a file whose start is mostly bytes that are no UTF-8
    text, or control characters, is binary. A few bad bytes in a text log are those
    records' errors, as before."""
    raw = head
    if isinstance(head, str):  # stdin: its bytes as the stream decoded them
        try:
            raw = head.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = head.encode("utf-8", "replace")
    assert isinstance(raw, bytes)
    for magic, what, reader in _MAGIC:
        if raw.startswith(magic):
            how = ": extract the log first"
            if reader is not None:
                piped = f"... | {reader}" if path == "stdin" else f"{reader} {path}"
                how = f": decompress it first (`{piped} | autofeedback audit - ...`)"
            return f"{path} is {what}, not a text log{how}"
    text = raw.decode("utf-8", errors="replace") if raw else ""
    if not text:
        return None
    bad = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in "\t\n\r\f"))
    if bad * 10 > len(text):  # one character in ten or more: not a log of text
        return f"{path} is not UTF-8 text (binary data): not a log autofeedback reads"
    return None


def _lines(path: str, inp: IO[str]) -> tuple[Any, str, int | None, Any]:
    """(stream, its first characters, size in bytes or None, file handle to close).

    A file is read as a stream: a pipe or a process substitution (``/dev/stdin``,
    ``<(zcat log.gz)``) as well as a regular file. A file that is no text (compressed,
    binary) is refused in one line (:class:`_Usage`), not read as thousands of bad
    records."""
    where = "stdin" if path == "-" else path
    if path == "-":
        reconfigure = getattr(inp, "reconfigure", None)
        if reconfigure is not None:  # sys.stdin: lines end at "\n" only, as in a file
            with contextlib.suppress(ValueError, OSError):
                reconfigure(newline="\n")
        head = _head_lines(inp)
        why = _not_text(where, "".join(head)[:_SNIFF])
        if why is not None:
            raise _Usage(f"audit: {why}")
        return _Rewound(head, inp), "".join(head), None, None
    raw = io.BufferedReader(io.FileIO(path, "r"), buffer_size=_SNIFF)
    try:
        why = _not_text(where, raw.peek(_SNIFF)[:_SNIFF])
        if why is not None:
            raise _Usage(f"audit: {why}")
        # only "\n" ends a record (a bare "\r" inside one must not split it, nor shift
        # the line numbers after it); a UTF-8 BOM before the first record is not part of it
        handle = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="\n")
    except BaseException:
        raw.close()
        raise
    if raw.seekable():
        start = handle.read(_SNIFF)
        handle.seek(0)
        return handle, start, os.path.getsize(path), handle
    # a pipe: its start is read once and handed on with the rest
    head = _head_lines(handle)
    return _Rewound(head, handle), "".join(head), None, handle


#: records an audit of a file reads ahead (see ``audit_lines``)
_LOOKAHEAD = 64


def command(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    return _audit(args, out, err, inp)


def _audit(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    from autofeedback.audit._audit import NO_SPEC, AuditSummary, audit_lines, audit_units
    from autofeedback.audit._inputs import read_har, read_openai, sniff_format

    catalog = _load_specs(args.spec or ())
    retriever = None if args.no_semantic else "auto"
    if args.engine == "dask" and args.input_format == "har-session":
        raise _Usage("autofeedback audit: a HAR session is one sequence; use --engine local")
    if args.engine == "dask" and args.log == "-":
        raise _Usage("audit: --engine dask needs a log file, not stdin")
    if args.engine == "dask" and os.path.exists(args.log) and not os.path.isfile(args.log):
        raise _Usage(
            f"audit: --engine dask splits a regular file; {args.log} is a stream: "
            "use --engine local"
        )
    if args.workers is not None and args.workers < 1:
        raise _Usage("audit: --workers must be at least 1")
    if args.output:
        for kept, what in [
            (args.log, "the log being audited"),
            *((p, "a spec") for p in args.spec or ()),
        ]:
            if kept != "-" and _same_file(args.output, kept):
                # opening it for the report would empty it before a line was read
                raise _Usage(
                    f"audit: -o {args.output} is {what}; writing the report there would "
                    "destroy it: choose another report file"
                )
    stream, head, size, handle = _lines(args.log, inp)
    fmt = "openai" if args.input_format == "chat" else args.input_format
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
                fix=args.fix,
            )
            position: Callable[[], int] | None = lambda: done[0]  # noqa: E731
        else:
            if fmt == "har-session":
                from autofeedback.audit._inputs import read_har_session

                results = audit_units(
                    read_har_session(stream), catalog, retriever=retriever, fix=args.fix
                )
            elif fmt == "har":
                results = audit_units(read_har(stream), catalog, retriever=retriever, fix=args.fix)
            elif fmt == "openai":
                results = audit_units(
                    read_openai(stream), catalog, retriever=retriever, fix=args.fix
                )
            else:
                # a file is read ahead so that the names records compare are embedded in
                # batches; standard input is answered line by line (it may be live)
                ahead = _LOOKAHEAD if args.log != "-" else 0
                results = audit_lines(
                    stream, catalog, retriever=retriever, lookahead=ahead, fix=args.fix
                )
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
            if hasattr(formatter, "specs"):  # the HTML report names the specs it checked
                formatter.specs = tuple(args.spec or ())
            show = args.progress == "always" or (args.progress == "auto" and err.isatty())
            if show:
                results = _with_progress(results, position, size, err)
            checked = False  # has any record been checked against its own tools?
            for result in results:
                checked = checked or result.error is None
                if catalog is None and not checked and result.error and NO_SPEC in result.error:
                    # a missing option, not a bad record: said once, not once per record
                    # (in a log whose records carry their tools, one without is its error)
                    raise _Usage(
                        f"audit: record {result.id} (line {result.line}) has no 'tools' and "
                        "no --spec was given: pass --spec SPEC, or give every record its tools"
                    )
                result = _reported(formatter, result)
                summary.add(result)
            formatter.finish(summary)
        finally:
            if args.output:
                target.close()
    finally:
        if handle is not None:
            handle.close()
    if args.output:
        # with -o, stdout is free: one line says what was written where
        out.write(f"wrote {args.format} report to {args.output}: {summary.headline()}\n")
    if summary.records == 0:
        # nothing was checked, so nothing is clean: an empty file is a wrong path, a
        # failed export or a pipe that broke, and exit 0 would pass it as a clean log
        where = "stdin" if args.log == "-" else args.log
        err.write(
            f"{_ERROR}audit: {where} holds no records (it is empty or blank): nothing was checked\n"
        )
        return 2
    return summary.exit_code


def _same_file(a: str, b: str) -> bool:
    """Whether the paths name one file (a link, ``./x`` and ``x`` included)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them does not exist (yet): not the same file
        return False


def _reported(formatter: _Sink, result: AuditResult) -> AuditResult:
    """Write ``result``; a result the formatter cannot write (an unencodable character
    on a strict stdout...) is written as that record's one-line error instead."""
    try:
        formatter.record(result)
        return result
    except Exception as exc:
        from autofeedback.audit._audit import AuditResult
        from autofeedback.scanner._scan import one_line

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

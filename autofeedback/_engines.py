"""Audit engines: run the one audit engine over a big line-based log in parallel.

``--engine dask`` splits the file into byte ranges aligned to line starts, audits each
range with :func:`~autofeedback._audit.audit_lines` (or the chat-log reader) in a Dask
worker, numbering lines as the whole file does, and yields the results in file order.
The report is therefore byte-for-byte the one the single-process engine writes.

Dask is an optional extra (``pip install autofeedback[dask]``).
"""

from __future__ import annotations

import io
import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

from autofeedback._audit import AuditResult, audit_lines, audit_units
from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import AutoFeedbackError

__all__ = ["ENGINES", "SCHEDULERS", "audit_file_dask", "count_lines", "partitions"]

ENGINES: tuple[str, ...] = ("local", "dask")
SCHEDULERS: tuple[str, ...] = ("processes", "threads", "synchronous")


def partitions(path: str, target: int) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of about ``target`` bytes, each starting a line.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("wb", delete=False) as f:
    ...     _ = f.write(b"aaaa\\nbb\\ncccccc\\n")
    >>> partitions(f.name, 3)
    [(0, 5), (5, 8), (8, 15)]
    """
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as handle:
        while cuts[-1] + target < size:
            handle.seek(cuts[-1] + target - 1)
            handle.readline()  # to just past the next newline
            cut = handle.tell()
            if cut >= size:
                break
            cuts.append(cut)
    cuts.append(size)
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def _read(path: str, start: int, end: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(start)
        return handle.read(end - start)


def _text_lines(data: bytes) -> io.TextIOWrapper:
    # the very reader the local engine iterates (universal newlines, bad UTF-8 replaced),
    # so both engines see the same lines
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")


def count_lines(path: str, start: int, end: int) -> int:
    """How many lines the local engine reads in ``[start, end)`` of ``path``."""
    return sum(1 for _ in _text_lines(_read(path, start, end)))


def _audit_partition(
    path: str,
    start: int,
    end: int,
    first_line: int,
    catalog: ApiCatalog | None,
    input_format: str,
    retriever: Any,
) -> list[AuditResult]:
    lines = _text_lines(_read(path, start, end))
    if input_format == "openai":
        from autofeedback._inputs import read_openai

        units = read_openai(lines, start=first_line)
        return list(audit_units(units, catalog, retriever=retriever))
    return list(audit_lines(lines, catalog, retriever=retriever, start=first_line))


def audit_file_dask(
    path: str,
    catalog: ApiCatalog | None,
    *,
    input_format: str = "jsonl",
    retriever: Any = "auto",
    scheduler: str = "processes",
    workers: int | None = None,
    partition_bytes: int | None = None,
    on_partition: Callable[[int], None] | None = None,
) -> Iterator[AuditResult]:
    """Audit a line-based log file with Dask, yielding results in file order.

    Partitions are computed a window at a time (twice the workers), so memory holds at
    most that many partitions' results. ``on_partition(nbytes)`` is called as each
    window's partitions are yielded (for progress).

    >>> catalog = ApiCatalog.from_tools([{"name": "ping", "parameters": {"type": "object",
    ...     "properties": {}}}])
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write('{"call": {"name": "ping", "arguments": {}}}\\nnope\\n')
    >>> [(r.line, r.ok) for r in audit_file_dask(f.name, catalog, retriever=None,
    ...                                          scheduler="synchronous")]
    [(1, True), (2, False)]
    """
    try:
        import dask  # noqa: F401 - fail here, before any output is written
    except ImportError:
        raise AutoFeedbackError(
            "--engine dask needs Dask: pip install 'autofeedback[dask]'"
        ) from None
    if input_format not in ("jsonl", "openai"):
        raise AutoFeedbackError(f"--engine dask reads line-based logs, not {input_format!r}")
    if scheduler not in SCHEDULERS:
        raise AutoFeedbackError(f"unknown Dask scheduler {scheduler!r}")
    workers = workers or os.cpu_count() or 1
    return _run(
        path, catalog, input_format, retriever, scheduler, workers, partition_bytes, on_partition
    )


def _run(
    path: str,
    catalog: ApiCatalog | None,
    input_format: str,
    retriever: Any,
    scheduler: str,
    workers: int,
    partition_bytes: int | None,
    on_partition: Callable[[int], None] | None,
) -> Iterator[AuditResult]:
    from dask.base import compute as _compute
    from dask.delayed import delayed

    compute: Any = _compute  # untyped in Dask
    size = os.path.getsize(path)
    target = partition_bytes or max(1 << 20, min(64 << 20, size // (workers * 4) + 1))
    ranges = partitions(path, target)
    if not ranges:
        return
    pool: Any = None
    options: dict[str, Any] = {"scheduler": scheduler}
    if scheduler != "synchronous":
        options["num_workers"] = workers
    if scheduler == "processes":
        # one pool for the whole run: workers load the catalog and model once each
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        options["pool"] = pool
    try:
        counter = delayed(count_lines, pure=True)
        counts = compute(*[counter(path, a, b) for a, b in ranges], **options)
        firsts = [1]
        for n in counts[:-1]:
            firsts.append(firsts[-1] + n)
        task = delayed(_audit_partition, pure=True)
        window = max(2 * workers, 1)
        for i in range(0, len(ranges), window):
            batch = ranges[i : i + window]
            jobs = [
                task(path, a, b, firsts[i + k], catalog, input_format, retriever)
                for k, (a, b) in enumerate(batch)
            ]
            for (a, b), results in zip(batch, compute(*jobs, **options), strict=True):
                yield from results
                if on_partition is not None:
                    on_partition(b - a)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

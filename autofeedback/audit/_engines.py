"""Audit engines: run the one audit engine over a big line-based log in parallel.

``--engine dask`` splits the file into byte ranges aligned to line starts, audits each
range with :func:`~autofeedback.audit._audit.audit_lines` (or the chat-log reader) in a Dask
worker, numbering lines as the whole file does, and yields the results in file order.
The report is therefore byte-for-byte the one the single-process engine writes.

Where the partitions run:

* ``processes`` / ``threads`` / ``synchronous``: Dask's local schedulers; workers read
  their byte range from the file themselves.
* ``local-cluster``: a ``distributed.LocalCluster`` of worker processes on 127.0.0.1.
* ``tcp://host:port`` (or ``tls://``): the scheduler of a running ``dask.distributed``
  cluster. Its workers need autofeedback installed but not the files: the client reads
  the log, counts lines, and ships each partition's bytes and (once) the catalog.

Each worker process loads the embedding model on its first semantic check and keeps it.
Dask is an optional extra (``pip install 'autofeedback-api[dask]'``, with ``distributed``).
"""

from __future__ import annotations

import collections
import io
import itertools
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any, cast

from autofeedback.audit._audit import AuditResult, audit_lines, audit_units
from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import AutoFeedbackError, ConfigurationError
from autofeedback.core._install import install_hint

__all__ = [
    "ENGINES",
    "LOCAL_CLUSTER",
    "SCHEDULERS",
    "audit_file_dask",
    "check_scheduler",
    "count_lines",
    "partitions",
]

ENGINES: tuple[str, ...] = ("local", "dask")
#: Dask's single-machine schedulers (no ``distributed`` needed).
SCHEDULERS: tuple[str, ...] = ("processes", "threads", "synchronous")
#: Start a ``distributed.LocalCluster`` of worker processes on 127.0.0.1 for the run.
LOCAL_CLUSTER = "local-cluster"
#: Keyword arguments for a quiet ``distributed.LocalCluster``: no dashboard, and the
#: scheduler's HTTP endpoint on a free loopback port (its default, 8787, warns when taken).
LOCAL_CLUSTER_OPTIONS: dict[str, Any] = {
    "dashboard_address": None,
    "scheduler_kwargs": {"dashboard_address": "127.0.0.1:0"},
}
_ADDRESS = re.compile(r"(tcp|tls)://[^\s/:]+:[0-9]{1,5}")


def check_scheduler(name: str) -> str:
    """``name`` if it is a local scheduler, ``local-cluster`` or a scheduler address.

    >>> check_scheduler("tcp://127.0.0.1:8786")
    'tcp://127.0.0.1:8786'
    >>> check_scheduler("tcp://nowhere")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    autofeedback.core._exceptions.ConfigurationError: unknown Dask scheduler 'tcp://nowhere' ...
    """
    if name in SCHEDULERS or name == LOCAL_CLUSTER or _ADDRESS.fullmatch(name):
        return name
    raise ConfigurationError(
        f"unknown Dask scheduler {name!r} (expected {', '.join(SCHEDULERS)}, "
        f"{LOCAL_CLUSTER} or tcp://HOST:PORT)"
    )


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
    # the very reader the local engine iterates (lines end at "\n" only, a leading BOM
    # dropped, bad UTF-8 replaced),
    # so both engines see the same lines
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="replace", newline="\n")


def _count(data: bytes) -> int:
    return sum(1 for _ in _text_lines(data))


def count_lines(path: str, start: int, end: int) -> int:
    """How many lines the local engine reads in ``[start, end)`` of ``path``."""
    return _count(_read(path, start, end))


def _audit_partition(
    path: str,
    start: int,
    end: int,
    first_line: int,
    catalog: ApiCatalog | None,
    input_format: str,
    retriever: Any,
    fix: bool = False,
) -> list[AuditResult]:
    return _audit_data(_read(path, start, end), first_line, catalog, input_format, retriever, fix)


_retriever: Any = None
_retriever_lock = threading.Lock()


def _process_retriever(retriever: Any) -> Any:
    """For ``"auto"``, one retriever per worker process, shared by all its partitions:
    its caches of instruction and name embeddings then outlive a partition (a log
    repeats its instructions, and embedding them is most of an audit's time)."""
    global _retriever
    if retriever != "auto":
        return retriever
    with _retriever_lock:
        if _retriever is None:
            from retriever import ApiRetriever

            _retriever = ApiRetriever()
        return _retriever


def _audit_data(
    data: bytes,
    first_line: int,
    catalog: ApiCatalog | None,
    input_format: str,
    retriever: Any,
    fix: bool = False,
) -> list[AuditResult]:
    retriever = _process_retriever(retriever)
    lines = _text_lines(data)
    if input_format == "openai":
        from autofeedback.audit._inputs import read_openai

        units = read_openai(lines, start=first_line)
        return list(audit_units(units, catalog, retriever=retriever, fix=fix))
    # a partition is in memory: read ahead, so that names are embedded in batches
    return list(
        audit_lines(lines, catalog, retriever=retriever, start=first_line, lookahead=64, fix=fix)
    )


def audit_file_dask(
    path: str,
    catalog: ApiCatalog | None,
    *,
    input_format: str = "jsonl",
    retriever: Any = "auto",
    scheduler: Any = "processes",
    workers: int | None = None,
    partition_bytes: int | None = None,
    on_partition: Callable[[int], None] | None = None,
    timeout: float = 10.0,
    fix: bool = False,
) -> Iterator[AuditResult]:
    """Audit a line-based log file with Dask, yielding results in file order.

    ``scheduler`` is one of :data:`SCHEDULERS`, ``"local-cluster"`` (``workers``
    processes on 127.0.0.1, started and closed here), a scheduler address
    (``"tcp://host:8786"``, reached within ``timeout`` seconds), or a
    ``distributed.Client`` or cluster object (used, not closed).

    Partitions are computed a window at a time (twice the workers), so memory holds at
    most that many partitions' results. ``on_partition(nbytes)`` is called as each
    partition's results have been yielded (for progress). Everything that can fail
    before the first result (a missing extra, an unreachable scheduler) raises here,
    not on iteration.

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
        raise ConfigurationError(f"--engine dask needs Dask: {install_hint('dask')}") from None
    if input_format not in ("jsonl", "openai"):
        raise AutoFeedbackError(f"--engine dask reads line-based logs, not {input_format!r}")
    if workers is not None and workers < 1:
        raise ConfigurationError("Dask workers must be at least 1")
    if not timeout > 0:
        raise ConfigurationError("the Dask scheduler timeout must be positive")
    if isinstance(scheduler, str):
        check_scheduler(scheduler)
        if scheduler in SCHEDULERS:
            return _run(
                path,
                catalog,
                input_format,
                retriever,
                scheduler,
                workers or os.cpu_count() or 1,
                partition_bytes,
                on_partition,
                fix,
            )
    os.stat(path)  # a missing log is an error before a cluster starts
    run = _run_distributed(
        path,
        catalog,
        input_format,
        retriever,
        _connect(scheduler, workers or os.cpu_count() or 1, timeout),
        partition_bytes,
        on_partition,
        fix,
    )
    next(run)  # connected; from here on, closing the iterator closes the client
    return cast(Iterator[AuditResult], run)


def _target(size: int, workers: int) -> int:
    # a few partitions per worker for balance; at least 1 MiB so per-task overhead stays
    # small; at most 64 MiB so memory stays bounded
    return max(1 << 20, min(64 << 20, size // (workers * 4) + 1))


def _run(
    path: str,
    catalog: ApiCatalog | None,
    input_format: str,
    retriever: Any,
    scheduler: str,
    workers: int,
    partition_bytes: int | None,
    on_partition: Callable[[int], None] | None,
    fix: bool = False,
) -> Iterator[AuditResult]:
    from dask.base import compute as _compute
    from dask.delayed import delayed

    compute: Any = _compute  # untyped in Dask
    size = os.path.getsize(path)
    ranges = partitions(path, partition_bytes or _target(size, workers))
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
                task(path, a, b, firsts[i + k], catalog, input_format, retriever, fix)
                for k, (a, b) in enumerate(batch)
            ]
            for (a, b), results in zip(batch, compute(*jobs, **options), strict=True):
                yield from results
                if on_partition is not None:
                    on_partition(b - a)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


class _Connection:
    """A ``distributed.Client`` and what this run started for it (closed in reverse)."""

    def __init__(self, client: Any, owned: list[Any], where: str) -> None:
        self.client = client
        self.owned = owned
        self.where = where

    def close(self) -> None:
        for thing in reversed(self.owned):
            thing.close()


def _connect(scheduler: Any, workers: int, timeout: float) -> _Connection:
    try:
        import distributed as _distributed
    except ImportError:
        raise ConfigurationError(
            f"--dask-scheduler {scheduler} needs dask.distributed: {install_hint('dask')}"
        ) from None
    distributed: Any = _distributed  # its Client and clusters are untyped
    if isinstance(scheduler, distributed.Client):
        return _Connection(scheduler, [], "the given client")
    owned: list[Any] = []
    if scheduler == LOCAL_CLUSTER:
        try:
            # one thread per worker process: the audit is pure Python and holds the GIL
            cluster = distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                silence_logs=logging.ERROR,
                **LOCAL_CLUSTER_OPTIONS,
            )
        except (OSError, RuntimeError) as exc:
            raise ConfigurationError(f"cannot start a local Dask cluster: {exc}") from exc
        owned.append(cluster)
        scheduler, where = cluster, "the local Dask cluster"
    else:
        where = str(getattr(scheduler, "scheduler_address", scheduler))
    try:
        try:
            client = distributed.Client(scheduler, timeout=timeout, set_as_default=False)
        except OSError as exc:  # TimeoutError included
            raise ConfigurationError(
                f"cannot reach the Dask scheduler at {where} within {timeout:g} s "
                "(is it running? see --dask-timeout)"
            ) from exc
        owned.append(client)
        if not client.nthreads():
            try:
                client.wait_for_workers(1, timeout=timeout)
            except OSError as exc:
                raise ConfigurationError(
                    f"the Dask scheduler at {where} has no workers (waited {timeout:g} s)"
                ) from exc
    except BaseException:
        for thing in reversed(owned):
            thing.close()
        raise
    return _Connection(client, owned, where)


def _run_distributed(
    path: str,
    catalog: ApiCatalog | None,
    input_format: str,
    retriever: Any,
    connection: _Connection,
    partition_bytes: int | None,
    on_partition: Callable[[int], None] | None,
    fix: bool = False,
) -> Iterator[AuditResult | None]:
    """Yields ``None`` once connected, then the results in file order.

    The client reads the file and numbers the lines; workers get bytes, not a path, so
    they need no access to the client's files. A sliding window keeps twice as many
    partitions in flight as the cluster has threads.
    """
    from distributed import KilledWorker

    client = connection.client
    pending: collections.deque[tuple[int, Any]] = collections.deque()
    try:
        yield None
        threads = sum(client.nthreads().values()) or 1
        ranges = iter(partitions(path, partition_bytes or _target(os.path.getsize(path), threads)))
        # once, to every worker, instead of once per task
        shipped = None if catalog is None else client.scatter(catalog, broadcast=True, hash=False)
        first = 1
        with open(path, "rb") as handle:
            while True:
                while len(pending) < 2 * threads and (span := next(ranges, None)) is not None:
                    handle.seek(span[0])
                    data = handle.read(span[1] - span[0])
                    task = client.submit(
                        _audit_data,
                        client.scatter(data, hash=False),
                        first,
                        shipped,
                        input_format,
                        retriever,
                        fix,
                        pure=False,
                    )
                    pending.append((len(data), task))
                    first += _count(data)
                if not pending:
                    return
                nbytes, task = pending[0]
                try:
                    results = task.result()
                except (OSError, KilledWorker) as exc:  # a lost connection, a dead worker
                    raise AutoFeedbackError(
                        f"the Dask cluster at {connection.where} failed: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                pending.popleft()
                yield from results
                if on_partition is not None:
                    on_partition(nbytes)
    finally:
        try:
            if pending:
                client.cancel([task for _, task in pending])
        finally:
            connection.close()

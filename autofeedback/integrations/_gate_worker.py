"""The MCP proxy's worker process: heavy ``tools/call`` checks off the proxy's GIL.

A check in a worker thread keeps the event loop turning but holds the process's GIL:
a call of 20,000 argument names, checked beside light clients, stretched their p99
(benchmarks/serve_load.py). :class:`GateWorker` runs :meth:`ToolGate.scan
<autofeedback.integrations._mcp_gate.ToolGate.scan>` in one process of its own, at a
lower CPU priority, with the same listing as the proxy's gate; the proxy keeps the
repeat counts and words the answer (:meth:`ToolGate.check` with ``checked``).

The worker is a :class:`~concurrent.futures.ProcessPoolExecutor` of one process: its
queue is first in, first out, so a new listing reaches it before any call made after
it. Where the worker cannot answer (it died, or its listing failed to load), the proxy
checks the call in a thread, as before: a worker is an optimisation, never a gate of
its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from autofeedback.decide import RepairMode
from autofeedback.integrations._mcp_gate import Checked, ToolGate

__all__ = ["GateWorker"]

# the worker process's own gate and the listing it holds (set by _start and _load)
_GATE: ToolGate | None = None
_LISTING = -1


def _start(parent: int, retriever: str | None, repair: RepairMode) -> None:
    global _GATE
    # under the stdio transport the proxy's stdout is its client's channel: whatever a
    # library prints here goes to stderr instead
    os.dup2(2, 1)
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(10)  # the proxy's light calls, in the parent, come first

    def orphaned() -> None:  # a proxy ended by a signal or os._exit leaves no worker
        # (``parent`` is the proxy's pid as the proxy gave it: a proxy that died before
        # this process got here has already left it to another parent)
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=orphaned, name="autofeedback-gate-parent", daemon=True).start()
    _GATE = ToolGate(retriever=retriever, repair=repair)


def _load(listing: int, tools: Sequence[Mapping[str, Any]]) -> None:
    global _LISTING
    assert _GATE is not None
    _LISTING = -1  # a listing that fails to load answers no call
    _GATE.load(tools)
    _LISTING = listing


def _scan(listing: int, name: str, arguments: Mapping[str, Any]) -> Checked | None:
    if _GATE is None or listing != _LISTING:
        return None  # another listing than the proxy's: the proxy checks it itself
    return _GATE.scan(name, arguments)


class GateWorker:
    """One worker process that scans heavy calls with the proxy's listing.

    ``retriever``: ``"auto"`` or ``None``, as the proxy's gate has it (a retriever
    object of the caller's cannot be sent to another process: no worker then).
    """

    def __init__(self, *, retriever: str | None, repair: RepairMode) -> None:
        self._pool = ProcessPoolExecutor(
            max_workers=1,
            # spawn: a fork of a process running an event loop and threads is unsafe
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(os.getpid(), retriever, repair),
        )
        self._listing = 0
        self.broken = False

    def load(self, tools: Sequence[Mapping[str, Any]]) -> None:
        """Send a new listing; calls sent after it are scanned with it."""
        self._listing += 1
        try:
            self._pool.submit(_load, self._listing, [dict(t) for t in tools])
        except (BrokenProcessPool, RuntimeError):
            self.broken = True

    async def scan(self, name: str, arguments: Mapping[str, Any]) -> Checked | None:
        """The worker's :meth:`ToolGate.scan` of the call, or ``None`` where it cannot
        give one (the caller then scans the call itself). Cancelled, the call is
        dropped from the worker's queue if it has not started."""
        if self.broken:
            return None
        try:
            future = self._pool.submit(_scan, self._listing, name, dict(arguments))
        except (BrokenProcessPool, RuntimeError):
            self.broken = True
            return None
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            self.broken = True
            return None
        except Exception:
            return None  # checked in the proxy instead, where any real error shows

    def close(self) -> None:
        """Stop the worker; queued calls are dropped."""
        self._pool.shutdown(wait=False, cancel_futures=True)

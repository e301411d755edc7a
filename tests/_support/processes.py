"""The child processes of a server under test, read from ``/proc``: a worker process must
start with its server and never outlive it (the OpenAI proxy's and the MCP proxy's)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``; the test is skipped without ``/proc``."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc to find the worker process")
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:  # the field after the state is the parent's pid
                out.append(int(stat.parent.name))
    return out


def cmdline(pid: int) -> bytes:
    """The command line of ``pid`` (``b""`` once it has gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def gone_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` has ended, waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not Path(f"/proc/{pid}").exists()

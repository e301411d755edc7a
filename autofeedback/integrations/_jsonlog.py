"""The proxies' decision logs: JSON lines, one per decision, credentials masked, in a
file created readable by its owner only (0600).

``autofeedback proxy --log FILE`` and ``autofeedback mcp-proxy --log FILE`` append to the
same kind of file: each line a JSON object with ``ts`` (Unix time), ``event`` and the
decision's fields, every value passed through :func:`~autofeedback.core._redact.redact`.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

from autofeedback.core._redact import redact

__all__ = ["JsonLog"]


class JsonLog:
    """Append-only JSON lines at ``path`` (``None``: write nothing); flushed per line, so
    ``tail -f`` shows each decision as it is made.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     log = JsonLog(Path(folder) / "decisions.jsonl")
    ...     log.write("tools/call", tool="login", arguments={"password": "hunter2"})
    ...     log.close()
    ...     record = json.loads((Path(folder) / "decisions.jsonl").read_text())
    >>> record["event"], record["arguments"]
    ('tools/call', {'password': '[REDACTED]'})
    """

    def __init__(self, path: Path | None) -> None:
        self.handle: IO[str] | None = None
        if path is not None:
            # created readable by its owner only: it records what clients sent
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self.handle = os.fdopen(fd, "a", encoding="utf-8")

    def write(self, event: str, **fields: Any) -> None:
        if self.handle is None:
            return
        record = {"ts": round(time.time(), 3), "event": event, **redact(fields)}
        self.handle.write(json.dumps(record, default=repr) + "\n")
        self.handle.flush()

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

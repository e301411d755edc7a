"""What the tests of ``autofeedback mcp-proxy`` share: the test server
(``tests/integrations/mcp_servers/weather_server.py``), the proxy's command, and a client
session of the MCP SDK over stdio. Import it after ``pytest.importorskip("mcp")``."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "integrations" / "mcp_servers" / "weather_server.py"
PROXY = ["-c", "from autofeedback.cli import main; main()", "mcp-proxy"]
LIMIT = 60  # seconds any one scenario may take before it fails instead of hanging


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@asynccontextmanager
async def _session(
    args: list[str], errlog: Any = sys.stderr, **session: Any
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=args, env=_env())
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, **session) as client,
    ):
        await client.initialize()
        yield client


def _proxied(tmp_path: Path, *options: str) -> list[str]:
    return [
        *PROXY,
        *options,
        "--log",
        str(tmp_path / "log.jsonl"),
        "--",
        sys.executable,
        str(SERVER),
    ]


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))

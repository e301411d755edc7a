"""What does ``autofeedback mcp-proxy`` add to a ``tools/call`` that has nothing wrong with it?

Starts the test suite's MCP server (``tests/integrations/mcp_servers/weather_server.py``,
the SDK's low-level ``Server``) twice over stdio: once directly, once behind
``autofeedback mcp-proxy --no-semantic``, each with its own ``mcp.ClientSession``. Calls
alternate between the two sessions (direct, proxied, direct, ...) so both see the same
machine load; each call's wall time is measured from ``call_tool`` to its result.
Valid calls only: the added latency is the proxy's hop plus its scan. A second table
times :meth:`ToolGate.check` alone, in process, for the same calls.

    python benchmarks/mcp_proxy.py              # 1,000 calls per tool and side
    python benchmarks/mcp_proxy.py -n 200 --no-write
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "integrations" / "mcp_servers"))

from weather_server import TOOLS  # noqa: E402

from autofeedback.integrations._mcp_gate import ToolGate  # noqa: E402
from benchmarks._results import write_section  # noqa: E402

SERVER = ROOT / "tests" / "integrations" / "mcp_servers" / "weather_server.py"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"text": "hello"}),
    ("get_weather", {"city": "Paris", "units": "metric"}),
    (
        "search_flights",
        {
            "route": {"from": "CDG", "to": "JFK"},
            "dates": ["2025-05-01", "2025-05-08"],
            "passengers": 2,
        },
    ),
]


def _params(args: list[str]) -> StdioServerParameters:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(n: int, warmup: int) -> dict[str, dict[str, list[float]]]:
    """Per tool: the ``direct`` and ``proxied`` call times in ms."""
    proxy = ["-c", "from autofeedback.cli import main; main()", "mcp-proxy", "--no-semantic"]
    times: dict[str, dict[str, list[float]]] = {
        name: {"direct": [], "proxied": []} for name, _ in CALLS
    }
    async with (
        stdio_client(_params([str(SERVER)])) as (dr, dw),
        ClientSession(dr, dw) as direct,
        stdio_client(_params([*proxy, "--", sys.executable, str(SERVER)])) as (pr, pw),
        ClientSession(pr, pw) as proxied,
    ):
        await direct.initialize()
        await proxied.initialize()
        await direct.list_tools()  # the SDK lists once to validate structured results
        await proxied.list_tools()
        for name, args in CALLS:
            for i in range(warmup + n):
                for side, session in (("direct", direct), ("proxied", proxied)):
                    start = time.perf_counter()
                    result = await session.call_tool(name, args)
                    took = (time.perf_counter() - start) * 1000
                    if result.is_error:
                        raise SystemExit(f"{side} {name} failed: {result.content}")
                    if i >= warmup:
                        times[name][side].append(took)
    return times


def gate_times(n: int) -> dict[str, list[float]]:
    gate = ToolGate(retriever=None)
    gate.load(TOOLS)
    out: dict[str, list[float]] = {}
    for name, args in CALLS:
        runs = []
        for _ in range(n):
            start = time.perf_counter()
            decision = gate.check(name, args)
            runs.append((time.perf_counter() - start) * 1000)
            assert decision.action == "forward", decision
        out[name] = runs
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("-n", type=int, default=1000, help="measured calls per tool and side")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--no-write", action="store_true", help="print only, leave RESULTS.md")
    args = ap.parse_args(argv)

    started = time.perf_counter()
    times = anyio.run(measure, args.n, args.warmup)
    gated = gate_times(args.n)
    wall = time.perf_counter() - started

    rows = [
        "| tool | direct p50 ms | direct p99 ms | proxied p50 ms | proxied p99 ms "
        "| added p50 ms | added p99 ms | added p50, paired ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, _ in CALLS:
        d, p = times[name]["direct"], times[name]["proxied"]
        paired = statistics.median(b - a for a, b in zip(d, p, strict=True))
        rows.append(
            f"| {name} | {_pct(d, 0.5):.2f} | {_pct(d, 0.99):.2f} | {_pct(p, 0.5):.2f} "
            f"| {_pct(p, 0.99):.2f} | {_pct(p, 0.5) - _pct(d, 0.5):.2f} "
            f"| {_pct(p, 0.99) - _pct(d, 0.99):.2f} | {paired:.2f} |"
        )
    rows += [
        "",
        "| tool | ToolGate.check p50 ms | p99 ms |",
        "|---|---:|---:|",
    ]
    for name, _ in CALLS:
        rows.append(f"| {name} | {_pct(gated[name], 0.5):.3f} | {_pct(gated[name], 0.99):.3f} |")
    load = os.getloadavg()[0]
    rows += [
        "",
        f"{args.n} measured calls per tool and side after {args.warmup} warm-up calls, "
        "alternating direct and proxied on one event loop; both sides over stdio to the "
        "same server script, the proxy with `--no-semantic` (a valid call never loads the "
        "model either way). 'added' is proxied minus direct at that percentile; 'paired' "
        "is the median of per-pair differences. The check itself (second table) takes "
        "microseconds; the rest of the added time is the second JSON-RPC hop through the "
        "SDK (read, validate and write the message on both sides of the proxy). CPU only, "
        f"{os.cpu_count()} cores shared with other jobs (load average {load:.1f} at the "
        f"end); wall time {wall:.0f} s.",
    ]
    table = "\n".join(rows)
    print(table)
    if not args.no_write:
        command = "python benchmarks/mcp_proxy.py" + (f" -n {args.n}" if args.n != 1000 else "")
        write_section("MCP proxy: added latency per tools/call", command, table)


if __name__ == "__main__":
    main()

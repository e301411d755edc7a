"""Start-up, clean calls and faulty calls next to their peers, in one run (issue 42): the
part of ``speed.py`` run by ``python benchmarks/speed.py --only-startup``.

Whole processes are started through :func:`benchmarks._record_cost.run_process` (wall
and CPU time of that one child, peak RSS), each side repeated and run back to back with
its peer; the table gives medians and, for ratios, the spread over the repeats.

* **Start-up.** ``autofeedback --version`` against the bare interpreter
  (``python -c pass``) and ``python -c "import jsonschema"``; the pytest plugin: a
  one-test run with the plugin loaded by its ``pytest11`` entry point against the same
  run with ``-p no:autofeedback`` (the plugin's cost where it is installed but not
  enabled); ``autofeedback scan --no-semantic`` on ``specs/examples/bookshop.yaml``
  (warm spec cache, as a user reruns it) against a script that loads the same spec
  with openapi-core and validates the same request; ``autofeedback proxy`` from start
  to its first HTTP answer against a bare Starlette app under uvicorn.
* **OpenAI's 3 MB YAML spec**: a new process loads it, no spec cache (cold), then with
  the cache it left (warm).
* **Clean calls**: the gold single calls of BFCL simple and multiple (``{"tools",
  "call"}`` records, every record with its own tool list) through ``autofeedback
  audit`` with its default checks and an empty cache, against strict JSON-Schema
  validation of the same records (``_record_cost.STRICT_PEER``, python-jsonschema and
  jsonschema-rs); then the same records 10x (the tool lists recur, as in an agent's
  log). In process: one clean call through the :class:`Scanner` of its tools (what the
  guards and the proxies run per call; the scanner is built once per tool list), p50 in
  CPU time, against ``is_valid`` of the peers' validators.
* **Faulty calls**: the mutated calls of ``_records.bfcl_mutated_lines`` through
  ``audit``, whole processes, with the default checks and with ``--no-semantic``,
  against the strict peers; and in process through the scanner without the semantic
  check, p50 and p99 in CPU time, against python-jsonschema listing every error of the
  same call (``iter_errors``).
* **HTTP records** on the composed 2,034-operation spec: ``_record_cost.http_rows``,
  once each side.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._record_cost import STRICT_PEER, Run, json_schema, run_process
from benchmarks._records import gold_lines

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work"
BOOKSHOP = ROOT / "specs" / "examples" / "bookshop.yaml"
CLI = "from autofeedback.cli import main; main()"
SCAN_REQUEST = "GET http://127.0.0.1:8080/books?query=dune&limit=ten"

OAC_SCAN = """
import sys, warnings
import requests
from openapi_core import Config, OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest
warnings.simplefilter("ignore")
openapi = OpenAPI.from_file_path(sys.argv[1], config=Config(spec_validator_cls=None))
method, url = sys.argv[2].split(" ", 1)
try:
    openapi.validate_request(RequestsOpenAPIRequest(requests.Request(method, url).prepare()))
    print("ok")
except Exception as exc:
    print(type(exc).__name__)
"""

BARE_APP = """
import sys
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

async def models(request):
    return JSONResponse({"data": []})

app = Starlette(routes=[Route("/v1/models", models)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""

LOAD_SPEC = """
import sys
from autofeedback import ApiCatalog
print(len(ApiCatalog.from_file(sys.argv[1])))
"""


def _env(cache: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    if cache is not None:
        env["AUTOFEEDBACK_CACHE_DIR"] = cache
    return env


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _spread(values: list[float], fmt: str = "{:.3f}") -> str:
    mid = fmt.format(_median(values))
    return (
        mid if len(values) == 1 else f"{mid} ({fmt.format(min(values))}-{fmt.format(max(values))})"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- start-up ---------------------------------------------------------------------------


def _pytest_project(folder: Path) -> None:
    (folder / "test_one.py").write_text("def test_one():\n    assert True\n", encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")


def _plugin_installed() -> bool:
    from importlib.metadata import entry_points

    return any(ep.value == "autofeedback.pytest_plugin" for ep in entry_points(group="pytest11"))


def _until_answered(argv: list[str], port: int, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting ``argv`` to its first HTTP answer on ``port`` (any status),
    and the CPU seconds that process (alone, not its children) had used by then."""
    import http.client

    import psutil

    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{argv[:4]} exited before answering")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/v1/models")
                conn.getresponse().read()
                conn.close()
                wall = time.perf_counter() - started
                times = psutil.Process(proc.pid).cpu_times()
                return wall, times.user + times.system
            except OSError:
                time.sleep(0.005)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def startup_rows(repeat: int) -> list[str]:
    py = sys.executable
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as cache:
        env = _env(cache)
        version = [run_process([py, "-c", CLI, "--version"], env) for _ in range(repeat)]
        bare = [run_process([py, "-c", "pass"], env) for _ in range(repeat)]
        schema = [run_process([py, "-c", "import jsonschema"], env) for _ in range(repeat)]
        floors = [("`python -c pass`", bare), ("`python -c 'import jsonschema'`", schema)]
        rows.append(_row("`autofeedback --version`", version, "≤ 0.15 s", floors))

        with tempfile.TemporaryDirectory() as project:
            _pytest_project(Path(project))
            base = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", project]
            load = [] if _plugin_installed() else ["-p", "autofeedback.pytest_plugin"]
            with_plugin, without = [], []
            for _ in range(repeat):
                with_plugin.append(run_process([*base, *load], env))
                without.append(run_process([*base, "-p", "no:autofeedback"], env))
            # the run's own cost is seconds in this environment (every plugin of the venv):
            # the plugin's import alone is measured too, against pytest's
            plugin = [
                run_process([py, "-c", "import pytest, autofeedback.pytest_plugin"], env)
                for _ in range(repeat)
            ]
            bare_pytest = [run_process([py, "-c", "import pytest"], env) for _ in range(repeat)]
        added_wall = [a.wall - b.wall for a, b in zip(with_plugin, without, strict=True)]
        added_cpu = [a.cpu - b.cpu for a, b in zip(with_plugin, without, strict=True)]
        import_cpu = [a.cpu - b.cpu for a, b in zip(plugin, bare_pytest, strict=True)]
        # judged on the import: the run's own CPU time swings by ±0.3 s here
        met = "✓" if _median(import_cpu) <= 0.030 else "✗"
        rows.append(
            "| pytest plugin, installed, not enabled: a one-test run (s, wall / CPU) | "
            f"{_spread([r.wall for r in with_plugin])} / "
            f"{_spread([r.cpu for r in with_plugin])} | the same run, `-p no:autofeedback` | "
            f"{_spread([r.wall for r in without])} / {_spread([r.cpu for r in without])} | "
            f"added: {_spread(added_wall)} / {_spread(added_cpu)}; its import alone, CPU: "
            f"{_spread(import_cpu)} | ≤ 30 ms {met} |"
        )

        scan = [py, "-c", CLI, "scan", "--spec", str(BOOKSHOP), "--no-semantic", SCAN_REQUEST]
        run_process(scan, env)  # fills the spec cache: a user's second scan
        ours = [run_process(scan, env) for _ in range(repeat)]
        oac = [run_process([py, "-c", OAC_SCAN, str(BOOKSHOP), SCAN_REQUEST], env)
               for _ in range(repeat)]  # fmt: skip
        peer = [("openapi-core: load the spec, validate the request", oac)]
        rows.append(_row("`scan --no-semantic` on bookshop.yaml (spec cache warm)", ours,
                         "≤ 0.4 s", peer))  # fmt: skip

        ready, floor = [], []
        for _ in range(repeat):
            port = _free_port()
            proxy = [py, "-c", CLI, "proxy", "--upstream", "http://127.0.0.1:9/v1",
                     "--port", str(port), "--no-semantic"]  # fmt: skip
            ready.append(_until_answered(proxy, port, env))
            port = _free_port()
            floor.append(_until_answered([py, "-c", BARE_APP, str(port)], port, env))
        wall, cpu = [w for w, _ in ready], [c for _, c in ready]
        met = "✓" if _median(wall) <= 1.0 else f"✗ ({_median(wall) / 1.0:.1f}x the goal)"
        rows.append(
            "| `autofeedback proxy`: start to its first answer (s, wall / CPU of the proxy "
            f"process) | {_spread(wall)} / {_spread(cpu)} | a bare Starlette app under uvicorn "
            f"| {_spread([w for w, _ in floor])} / {_spread([c for _, c in floor])} | "
            f"{_median([w for w, _ in floor]) / _median(wall):.2f}x | ≤ 1 s {met} |"
        )
    return rows


def _row(name: str, ours: list[Run], goal: str, peers: list[tuple[str, list[Run]]]) -> str:
    wall, cpu = [r.wall for r in ours], [r.cpu for r in ours]
    limit = float(goal.split()[1])
    met = "✓" if _median(wall) <= limit else f"✗ ({_median(wall) / limit:.1f}x the goal)"
    peer_names = "; ".join(p for p, _ in peers)
    peer_cells = "; ".join(
        f"{_spread([r.wall for r in runs])} / {_spread([r.cpu for r in runs])}" for _, runs in peers
    )
    ratios = "; ".join(
        f"{_median([r.wall for r in runs]) / _median(wall):.2f}x" for _, runs in peers
    )
    return (
        f"| {name} (s, wall / CPU) | {_spread(wall)} / {_spread(cpu)} | {peer_names} | "
        f"{peer_cells} | {ratios} | {goal} {met} |"
    )


def spec_load_rows(data: Path, repeat: int) -> list[str]:
    spec = data / "specs" / "openai.yaml"
    cold, warm = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            env = _env(cache)
            cold.append(run_process([sys.executable, "-c", LOAD_SPEC, str(spec)], env))
            warm.append(run_process([sys.executable, "-c", LOAD_SPEC, str(spec)], env))
    out = []
    for name, runs in (("no spec cache (cold)", cold), ("the cache it left (warm)", warm)):
        wall = [r.wall for r in runs]
        met = "✓" if _median(wall) < 1 else f"✗ ({_median(wall):.2f} s)"
        out.append(
            f"| OpenAI's 3 MB YAML, new process, imports included: {name} (s, wall / CPU) | "
            f"{_spread(wall)} / {_spread([r.cpu for r in runs])} | | | | < 1 s {met} |"
        )
    return out


# -- clean and faulty calls ------------------------------------------------------------------


def clean_process_rows(repeat: int) -> tuple[list[str], dict[str, Any]]:
    """The gold calls through ``audit`` and the strict peers, whole processes: once (every
    record with a tool list not seen before), then the same records 10x (the tool lists
    recur, as in an agent's log: each side's caches serve them)."""
    WORK.mkdir(parents=True, exist_ok=True)
    lines = gold_lines()
    log = WORK / "bfcl_gold.jsonl"
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    log10 = WORK / "bfcl_gold_x10.jsonl"
    log10.write_text("".join(line + "\n" for line in lines) * 10, encoding="utf-8")
    facts: dict[str, Any] = {"records": len(lines)}
    rows = []
    for path, n, what in ((log, len(lines), "once"), (log10, 10 * len(lines), "x10")):
        ours: list[Run] = []
        peers: dict[str, list[Run]] = {"jsonschema": [], "jsonschema_rs": []}
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as cache:
                env = _env(cache)
                ours.append(run_process([sys.executable, "-c", CLI, "audit", str(path),
                                         "--format", "jsonl", "-o", os.devnull], env))  # fmt: skip
                for engine in peers:
                    got = run_process([sys.executable, "-c", STRICT_PEER, engine, str(path),
                                       str(ROOT)], env)  # fmt: skip
                    peers[engine].append(got)
                    if what == "once":
                        facts[f"{engine} flagged"] = json.loads(got.stdout)["flagged"]
        rows += _ratio_rows(f"clean calls: `audit`, whole process, {what}", n, ours, peers)
    return rows, facts


def _ratio_rows(
    name: str, n: int, ours: list[Run], peers: dict[str, list[Run]], goal: str = ">= 1x"
) -> list[str]:
    """One row per peer: records/s of each side and the ratios, run by run."""
    rows = []
    for engine, runs in peers.items():
        wall = [t.wall / o.wall for o, t in zip(ours, runs, strict=True)]
        cpu = [t.cpu / o.cpu for o, t in zip(ours, runs, strict=True)]
        wanted = goal if engine == "jsonschema" else ""
        met = ""
        if wanted:
            met = "✓" if _median(wall) >= 1 else f"✗ ({_median(wall):.2f} of it)"
        rows.append(
            f"| {name} ({n:,} records/s, wall / CPU) | "
            f"{n / _median([r.wall for r in ours]):,.0f} / "
            f"{n / _median([r.cpu for r in ours]):,.0f} | "
            f"{engine}, strict | {n / _median([r.wall for r in runs]):,.0f} / "
            f"{n / _median([r.cpu for r in runs]):,.0f} | {_spread(wall, '{:.2f}')}x / "
            f"{_spread(cpu, '{:.2f}')}x | {wanted} {met} |"
        )
    return rows


def faulty_process_rows(repeat: int) -> tuple[list[str], dict[str, Any]]:
    """The mutated calls (``_records.bfcl_mutated_lines``: every record with its own tool
    list, nearly every call wrong) through ``audit``, with its default checks (the
    embedding model scores the names that miss) and with ``--no-semantic``, against the
    strict peers, whole processes."""
    from benchmarks._records import bfcl_mutated_lines

    WORK.mkdir(parents=True, exist_ok=True)
    lines = bfcl_mutated_lines()
    log = WORK / "bfcl_mutated.jsonl"
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    n = len(lines)
    facts: dict[str, Any] = {"records": n}
    rows = []
    for flags, what in (((), "default checks"), (("--no-semantic",), "`--no-semantic`")):
        ours: list[Run] = []
        peers: dict[str, list[Run]] = {"jsonschema": [], "jsonschema_rs": []}
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as cache:
                env = _env(cache)
                got = run_process([sys.executable, "-c", CLI, "audit", str(log), *flags,
                                   "--format", "jsonl", "-o", os.devnull], env)  # fmt: skip
                ours.append(got)
                for engine in peers:
                    peer = run_process([sys.executable, "-c", STRICT_PEER, engine, str(log),
                                        str(ROOT)], env)  # fmt: skip
                    peers[engine].append(peer)
                    facts[f"{engine} flagged"] = json.loads(peer.stdout)["flagged"]
        name = f"faulty calls: `audit`, whole process, once, {what}"
        rows += _ratio_rows(name, n, ours, peers, ">= 1x, or how far and why")
    return rows, facts


def _latencies(fn: Any, items: list[Any], passes: int = 3) -> list[float]:
    """CPU seconds of this thread per call, sorted: on this shared VM (load average
    10-13) a wall-clock p99 measures the scheduler's preemptions (170 ms calls whose
    CPU time was 0.3 ms), not the call."""
    out = []
    for _ in range(passes):
        for item in items:
            t = time.thread_time()
            fn(item)
            out.append(time.thread_time() - t)
    return sorted(out)


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def in_process_rows() -> tuple[list[str], dict[str, Any]]:
    import jsonschema_rs
    from jsonschema import Draft202012Validator

    from autofeedback import ApiCatalog, Scanner
    from benchmarks._records import bfcl_mutated_lines

    def prepared(lines: list[str]) -> list[tuple[Any, dict[str, Any], Any, Any]]:
        scanners: dict[str, Any] = {}
        out = []
        for line in lines:
            record = json.loads(line)
            key = json.dumps(record["tools"], sort_keys=True)
            if key not in scanners:
                catalog = ApiCatalog.from_tools(record["tools"])
                scanners[key] = Scanner(catalog, retriever=None)
            tool = next((f for f in record["tools"] if f["name"] == record["call"]["name"]), None)
            schema = None if tool is None else dict(json_schema(tool["parameters"]),
                                                   additionalProperties=False)  # fmt: skip
            py = Draft202012Validator(schema) if schema is not None else None
            rs = jsonschema_rs.validator_for(schema) if schema is not None else None
            out.append((scanners[key], record["call"], py, rs))
        return out

    clean = prepared(gold_lines())
    faulty = prepared(bfcl_mutated_lines())
    for scanner, call, _, _ in clean + faulty:  # compiled validators built, caches filled
        list(scanner.iter_findings(call))

    def ours(item: Any) -> None:
        list(item[0].iter_findings(item[1]))

    def py_valid(item: Any) -> None:
        if item[2] is not None:
            item[2].is_valid(item[1]["arguments"])

    def rs_valid(item: Any) -> None:
        if item[3] is not None:
            item[3].is_valid(item[1]["arguments"])

    def py_errors(item: Any) -> None:
        if item[2] is not None:
            list(item[2].iter_errors(item[1]["arguments"]))

    us = 1e6
    c_ours, c_py, c_rs = (
        _latencies(ours, clean),
        _latencies(py_valid, clean),
        _latencies(rs_valid, clean),
    )
    f_ours, f_py = _latencies(ours, faulty), _latencies(py_errors, faulty)
    clean_flagged = sum(
        any(f.severity == "error" for f in s.iter_findings(c)) for s, c, _, _ in clean
    )
    rows = [
        f"| one clean call in process, scanner built: p50 / p99 (µs of CPU) | "
        f"{_pct(c_ours, 0.5) * us:.1f} / {_pct(c_ours, 0.99) * us:.1f} | python-jsonschema "
        f"`is_valid`; jsonschema-rs `is_valid` | {_pct(c_py, 0.5) * us:.1f} / "
        f"{_pct(c_py, 0.99) * us:.1f}; {_pct(c_rs, 0.5) * us:.1f} / {_pct(c_rs, 0.99) * us:.1f} "
        f"| p50 {_pct(c_py, 0.5) / _pct(c_ours, 0.5):.2f}x; "
        f"{_pct(c_rs, 0.5) / _pct(c_ours, 0.5):.2f}x "
        f"| p50 ≤ 20 µs {'✓' if _pct(c_ours, 0.5) <= 20e-6 else '✗'} |",
        f"| one faulty call in process, no semantic check: p50 / p99 (ms of CPU) | "
        f"{_pct(f_ours, 0.5) * 1e3:.3f} / {_pct(f_ours, 0.99) * 1e3:.3f} | python-jsonschema "
        f"`iter_errors` (every error) | {_pct(f_py, 0.5) * 1e3:.3f} / {_pct(f_py, 0.99) * 1e3:.3f} "
        f"| p99 {_pct(f_py, 0.99) / _pct(f_ours, 0.99):.2f}x "
        f"| p99 ≤ 1 ms {'✓' if _pct(f_ours, 0.99) <= 1e-3 else '✗'} |",
    ]
    facts = {"clean": len(clean), "faulty": len(faulty), "clean flagged": clean_flagged}
    return rows, facts


def http_rows(data: Path) -> list[str]:
    """Valid HTTP records on the composed 2,034-operation spec through ``audit --spec``
    (spec cache cold, then warm) against openapi-core validating the same log, once
    each (the peer takes about a minute a run): ``_record_cost.http_rows``."""
    from benchmarks._record_cost import http_rows as cost_rows

    found, facts = cost_rows(data, 1)
    out = []
    for row in found:
        n = row.records
        runs = row.peers["openapi-core"]
        wall = [t.wall / o.wall for o, t in zip(row.ours, runs, strict=True)]
        cpu = [t.cpu / o.cpu for o, t in zip(row.ours, runs, strict=True)]
        met = "✓" if _median(wall) >= 10 else f"✗ ({_median(wall) / 10:.2f} of it)"
        out.append(
            f"| {row.measure} ({n:,} records/s, wall / CPU) | "
            f"{n / _median([r.wall for r in row.ours]):,.0f} / "
            f"{n / _median([r.cpu for r in row.ours]):,.0f} | openapi-core "
            f"(flagged {facts.get('openapi-core flagged')}) | "
            f"{n / _median([r.wall for r in runs]):,.0f} / "
            f"{n / _median([r.cpu for r in runs]):,.0f} | "
            f"{_median(wall):.2f}x / {_median(cpu):.2f}x | >= 10x {met} |"
        )
    return out


def _compile_bytecode() -> None:
    """Write the package's bytecode, as ``pip install`` does: a checkout run with
    ``PYTHONDONTWRITEBYTECODE`` (this VM's environment) would compile every module from
    source at each start, and the peers' installed packages have theirs."""
    import compileall

    for folder in ("autofeedback", "retriever", "doc_index", "benchmarks"):
        compileall.compile_dir(str(ROOT / folder), quiet=1)


def table(data: Path, repeat: int) -> str:
    _compile_bytecode()
    head = (
        "| measure | autofeedback | peer | peer's figure | ratio (peer / ours: > 1, ours faster) "
        "| goal |\n|---|---|---|---|---|---|\n"
    )
    rows = startup_rows(repeat)
    rows += spec_load_rows(data, repeat)
    clean_rows, clean_facts = clean_process_rows(repeat)
    faulty_rows, faulty_facts = faulty_process_rows(repeat)
    inproc_rows, inproc_facts = in_process_rows()
    rows += clean_rows + faulty_rows + inproc_rows
    rows += http_rows(data)
    notes = (
        f"\nWhole processes repeated {repeat}x, each side back to back with its peer; a "
        "cell is the median, with the spread (min-max) in brackets; CPU = user + system "
        "time of that process alone. Clean calls: the "
        f"{clean_facts['records']:,} gold single calls of BFCL simple and multiple "
        "(each record with its own tool list), audited with the default checks "
        f"(semantic on; autofeedback reports an error on {inproc_facts['clean flagged']} "
        "of them: a gold call missing a required parameter); the peers validate strictly "
        f"(python-jsonschema flagged {clean_facts.get('jsonschema flagged')}, jsonschema-rs "
        f"{clean_facts.get('jsonschema_rs flagged')}). Faulty calls, whole process: the "
        f"{faulty_facts['records']:,} mutated calls of same_verdicts.bfcl_mutated_lines, "
        "once, with the default checks (the embedding model loads and scores the names "
        "that miss) and with `--no-semantic` (python-jsonschema flagged "
        f"{faulty_facts.get('jsonschema flagged')}, jsonschema-rs "
        f"{faulty_facts.get('jsonschema_rs flagged')}; the peers only say valid or not, "
        "autofeedback says which of E1-E4 and what to send). In process: 3 passes over the same "
        f"{inproc_facts['clean']:,} clean calls and {inproc_facts['faulty']:,} mutated "
        "ones (same_verdicts.bfcl_mutated_lines), after a first pass that built the "
        "compiled validators, timed in CPU time of the thread. HTTP: valid records on the "
        "composed spec of speed.py, `audit --spec` against openapi-core validating the "
        "same log (one run each). The package's bytecode is written first, as an install "
        "does (this VM sets PYTHONDONTWRITEBYTECODE). A shared 2-core VM, load average "
        f"{os.getloadavg()[0]:.1f} at the end: wall times are several times the CPU times "
        "(the bare interpreter's start takes 0.1-0.2 s of wall for 0.03 s of CPU); the "
        "ratios and the CPU times are the result.\n"
    )
    return head + "\n".join(rows) + "\n" + notes

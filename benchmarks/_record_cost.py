"""What one record costs, next to the peers, in the same run (issue 31): the part of
``speed.py`` run by ``python benchmarks/speed.py --only-goals``.

Each row is measured as whole processes (started, timed to their exit, with the CPU time
and peak RSS of that one child from ``os.wait4``) and, where it makes sense, inside one
process. This 2-core VM is shared with other jobs: wall times swing with the load, CPU
times much less, so each whole-process row is repeated and the table gives the median
ratio with its spread (min-max over the repeats), both for wall and for CPU time.

* **Tool-call audit**: the mutated single calls of BFCL simple and multiple
  (``_records.bfcl_mutated_lines``: every error subtype ``_mutations.py`` makes of
  each gold call, ``{"tools", "call"}`` records, no instruction; BFCL live, which the
  issue measured, is not in ``../shared/data``) through ``autofeedback audit`` with
  its default semantic checks and an empty cache, then the same records replicated 10x
  with the caches that run left. Peers: strict JSON-Schema validation as instructor does
  it (the called tool looked up by name, its parameters validated with
  ``additionalProperties: false``, one validator per distinct schema), with
  python-jsonschema and with jsonschema-rs. BFCL's type names (``dict``, ``float``,
  ``tuple``, ``any``) are mapped to JSON Schema's for the peers.
* **One call in process**: the latency of each of those records through the audit
  (warm: the second pass), against ALTK SPARC's static track on the same calls, run in
  its own venv (``benchmarks/.work/altk``, ``pip install agent-lifecycle-toolkit``;
  skipped with the reason when absent).
* **HTTP records** on the composed 2,034-operation spec of ``speed.py`` (the issue's
  "GitHub spec" is not in ``../shared/data``; this is the big real-spec composition the
  speed benchmark uses): ``autofeedback audit --spec`` with the spec cache cold and warm,
  against a script validating the same log with openapi-core.
* **OpenAI's 3 MB YAML spec**, cold cache, imports included: a process that imports
  autofeedback and loads the spec.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work"
ALTK_PYTHON = WORK / "altk" / "bin" / "python"


@dataclass(frozen=True)
class Run:
    """One whole process: wall and CPU seconds, peak RSS (MiB), its standard output."""

    wall: float
    cpu: float
    rss: float
    stdout: str


# A small launcher forks the measured process and reports its rusage: measured from the
# benchmark itself, a child's peak RSS would include the benchmark's own memory (Linux
# keeps the high-water mark of the forking process across exec).
_LAUNCH = """
import os, sys, time
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
sys.stderr.write("\\n@@rusage %r %r %r %d\\n" % (
    wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status)))
"""


def run_process(argv: Sequence[str], env: dict[str, str] | None = None) -> Run:
    """``argv`` run to its end: wall and CPU time and peak RSS of that process alone."""
    done = subprocess.run(
        [sys.executable, "-S", "-c", _LAUNCH, *argv],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    tail = done.stderr.rstrip().rsplit("\n", 1)[-1].split()
    if tail[:1] != ["@@rusage"]:
        raise RuntimeError(f"{argv[:3]} could not be measured: {done.stderr[-2000:]}")
    wall, cpu, rss, code = float(tail[1]), float(tail[2]), float(tail[3]), int(tail[4])
    if code not in (0, 1):  # 1: an audit with findings
        raise RuntimeError(f"{argv[:3]} failed ({code}): {done.stderr[-2000:]}")
    return Run(wall, cpu, rss / 1024, done.stdout)


# -- the peers, each a script run as its own process -------------------------------------

_JSON_SCHEMA_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


def json_schema(schema: Any) -> Any:
    """A BFCL parameter schema in JSON Schema's type names (``any``: no type)."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: json_schema(v) for k, v in schema.items() if k != "type"}
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "any":
        out["type"] = _JSON_SCHEMA_TYPES.get(kind, kind)
    if "properties" in schema and isinstance(schema["properties"], dict):
        out["properties"] = {k: json_schema(v) for k, v in schema["properties"].items()}
    return out


# Strict validation as instructor does it: the tool named by the call, its parameters
# as a closed object. One validator per distinct schema (instructor builds one model
# per response type). argv: engine (jsonschema | jsonschema_rs), log, [--latency].
STRICT_PEER = """
import json, sys, time
sys.path.insert(0, sys.argv[3])
from benchmarks._record_cost import json_schema
engine = sys.argv[1]
if engine == "jsonschema":
    from jsonschema import Draft202012Validator
    def build(schema):
        return Draft202012Validator(schema).is_valid
else:
    import jsonschema_rs
    def build(schema):
        return jsonschema_rs.validator_for(schema).is_valid
validators = {}
bad = 0
latencies = []
with open(sys.argv[2], encoding="utf-8") as log:
    for line in log:
        t = time.perf_counter()
        record = json.loads(line)
        call = record["call"]
        tool = next((f for f in record["tools"] if f["name"] == call["name"]), None)
        if tool is None:
            bad += 1
        else:
            schema = dict(json_schema(tool["parameters"]), additionalProperties=False)
            key = json.dumps(schema, sort_keys=True)
            valid = validators.get(key)
            if valid is None:
                valid = validators[key] = build(schema)
            bad += not valid(call["arguments"])
        latencies.append(time.perf_counter() - t)
latencies.sort()
print(json.dumps({"flagged": bad, "p50_ms": latencies[len(latencies) // 2] * 1e3}))
"""

# ALTK SPARC's static track (Track.SYNTAX) on the same calls, one process in its venv.
# SPARC wants an LLM client even for the static track, which never calls it: a client
# that fails if it ever is. argv: log, repo root.
SPARC_PEER = """
import json, logging, statistics, sys, time
logging.disable(logging.CRITICAL)
sys.path.insert(0, sys.argv[2])
from benchmarks._record_cost import json_schema
from altk.core.llm.output_parser import ValidatingLLMClient
from altk.core.toolkit import AgentPhase, ComponentConfig
from altk.pre_tool.core.config import Track
from altk.pre_tool.core.types import SPARCReflectionRunInput
from altk.pre_tool.sparc.sparc import SPARCReflectionComponent

class NoLLM(ValidatingLLMClient):
    @classmethod
    def provider_class(cls):
        return object
    def _register_methods(self):
        pass
    def _setup_parameter_mapper(self):
        pass
    def _parse_llm_response(self, raw):
        raise AssertionError("SPARC's static track called the LLM")

sparc = SPARCReflectionComponent(
    config=ComponentConfig(llm_client=NoLLM(client=object())), track=Track.SYNTAX
)
inputs = []
with open(sys.argv[1], encoding="utf-8") as log:
    for line in log:
        r = json.loads(line)
        tools = [
            {"type": "function", "function": dict(f, parameters=json_schema(f["parameters"]))}
            for f in r["tools"]
        ]
        arguments = json.dumps(r["call"]["arguments"])
        call = {"id": "1", "type": "function",
                "function": {"name": r["call"]["name"], "arguments": arguments}}
        inputs.append(SPARCReflectionRunInput(messages=[], tool_specs=tools, tool_calls=[call]))
for data in inputs[:50]:  # warm-up, as the other side's first pass
    sparc.process(data, phase=AgentPhase.RUNTIME)
latencies, flagged = [], 0
for data in inputs:
    t = time.perf_counter()
    out = sparc.process(data, phase=AgentPhase.RUNTIME)
    latencies.append(time.perf_counter() - t)
    flagged += not out.output.should_proceed_with_tool_call()
print(json.dumps({"flagged": flagged, "p50_ms": statistics.median(latencies) * 1e3,
                  "mean_ms": statistics.mean(latencies) * 1e3}))
"""

# one process: import autofeedback, load a spec (cache per $AUTOFEEDBACK_CACHE_DIR)
LOAD_SPEC = """
import sys
from autofeedback import ApiCatalog
print(len(ApiCatalog.from_file(sys.argv[1])))
"""

# openapi-core validating a log of HTTP records (argv: spec, log), as speed.py's E2 row
OAC_PEER = """
import json, sys, warnings
import requests
from openapi_core import Config, OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest
warnings.simplefilter("ignore")
openapi = OpenAPI.from_file_path(sys.argv[1], config=Config(spec_validator_cls=None))
bad = 0
with open(sys.argv[2], encoding="utf-8") as log:
    for line in log:
        r = json.loads(line)["request"]
        kwargs = {"headers": r.get("headers") or {}}
        body = r.get("body")
        if isinstance(body, (dict, list)):
            kwargs["json"] = body
        elif body is not None:
            kwargs["data"] = body
        p = requests.Request(r["method"], r["url"], **kwargs).prepare()
        try:
            openapi.validate_request(RequestsOpenAPIRequest(p))
        except Exception:
            bad += 1
print(bad)
"""


def _env(cache: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env["AUTOFEEDBACK_CACHE_DIR"] = cache
    return env


def _audit(log: Path, env: dict[str, str], *extra: str) -> Run:
    return run_process(
        [sys.executable, "-c", "from autofeedback.cli import main; main()", "audit", str(log),
         "--format", "jsonl", "-o", os.devnull, *extra],
        env,
    )  # fmt: skip


def _peer(engine: str, log: Path, env: dict[str, str]) -> Run:
    return run_process([sys.executable, "-c", STRICT_PEER, engine, str(log), str(ROOT)], env)


@dataclass
class Row:
    measure: str
    ours: list[Run]
    peers: dict[str, list[Run]]
    records: int


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _ratio_text(ours: list[Run], theirs: list[Run], attr: str) -> str:
    """Our speed over the peer's (> 1: faster), median and spread over paired repeats."""
    ratios = [getattr(t, attr) / getattr(o, attr) for o, t in zip(ours, theirs, strict=True)]
    if len(ratios) == 1:
        return f"{ratios[0]:.2f}x"
    return f"{_median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def audit_rows(repeat: int, limit: int | None = None) -> tuple[list[Row], dict[str, Any]]:
    """The tool-call audit, whole process, cold then replicated 10x with warm caches."""
    from benchmarks._records import bfcl_mutated_lines

    WORK.mkdir(parents=True, exist_ok=True)
    lines = bfcl_mutated_lines()[:limit]
    log = WORK / "bfcl_mutated.jsonl"
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    log10 = WORK / "bfcl_mutated_x10.jsonl"
    log10.write_text("".join(line + "\n" for line in lines) * 10, encoding="utf-8")
    cold = Row("audit, whole process, empty cache", [], {}, len(lines))
    warm = Row("the same x10, whole process, caches warm", [], {}, 10 * len(lines))
    facts: dict[str, Any] = {"records": len(lines)}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            env = _env(cache)
            cold.ours.append(_audit(log, env))
            warm.ours.append(_audit(log10, env))
        for engine in ("jsonschema", "jsonschema_rs"):
            got = _peer(engine, log, env)
            cold.peers.setdefault(engine, []).append(got)
            facts[f"{engine} flagged"] = json.loads(got.stdout)["flagged"]
            warm.peers.setdefault(engine, []).append(_peer(engine, log10, env))
    return [cold, warm], facts


def in_process_rows(
    repeat: int,
) -> tuple[list[tuple[str, float, dict[str, float]]], dict[str, Any]]:
    """Records per second in this process (warm: a second pass), and the per-record p50."""
    import jsonschema_rs
    from jsonschema import Draft202012Validator

    from autofeedback import audit_lines
    from autofeedback.audit._audit import _CatalogCache, audit_record

    lines = (WORK / "bfcl_mutated.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    list(audit_lines(lines, None))  # model loaded, caches filled
    t_ours = min(_timed(lambda: list(audit_lines(lines, None))) for _ in range(repeat))

    def strict(build: Any) -> Any:
        def run() -> int:
            validators: dict[str, Any] = {}
            bad = 0
            for line in lines:
                record = json.loads(line)
                call = record["call"]
                tool = next((f for f in record["tools"] if f["name"] == call["name"]), None)
                if tool is None:
                    bad += 1
                    continue
                schema = dict(json_schema(tool["parameters"]), additionalProperties=False)
                key = json.dumps(schema, sort_keys=True)
                valid = validators.get(key)
                if valid is None:
                    valid = validators[key] = build(schema)
                bad += not valid(call["arguments"])
            return bad

        return run

    peers = {
        "jsonschema": strict(lambda s: Draft202012Validator(s).is_valid),
        "jsonschema_rs": strict(lambda s: jsonschema_rs.validator_for(s).is_valid),
    }
    t_peers = {k: min(_timed(f) for _ in range(repeat)) for k, f in peers.items()}
    n = len(lines)
    rows = [
        ("audit, in process, warm (records/s)", n / t_ours, {k: n / t for k, t in t_peers.items()})
    ]

    cache = _CatalogCache(None, "auto")
    for i, r in enumerate(records):
        audit_record(r, i, cache)
    latencies = []
    for i, r in enumerate(records):
        t = time.perf_counter()
        audit_record(r, i, cache)
        latencies.append(time.perf_counter() - t)
    facts = {
        "p50_ms": statistics.median(latencies) * 1e3,
        "mean_ms": statistics.mean(latencies) * 1e3,
        "p99_ms": sorted(latencies)[int(0.99 * len(latencies))] * 1e3,
    }
    return rows, facts


def _timed(fn: Any) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def sparc_latency() -> dict[str, Any] | str:
    """SPARC's per-call p50 on the same records, or why it was not measured."""
    if not ALTK_PYTHON.exists():
        return (
            "ALTK is not installed (python -m venv benchmarks/.work/altk && "
            "benchmarks/.work/altk/bin/pip install agent-lifecycle-toolkit)"
        )
    log = WORK / "bfcl_mutated.jsonl"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(ALTK_PYTHON), "-c", SPARC_PEER, str(log), str(ROOT)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return f"SPARC failed: {done.stderr.strip().splitlines()[-1:]}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def http_rows(
    data: Path, repeat: int, limit: int | None = None
) -> tuple[list[Row], dict[str, Any]]:
    """Valid HTTP records on the composed spec: the audit (spec cache cold, then warm)
    against openapi-core, whole processes."""
    from benchmarks._records import http_lines

    spec, lines = http_lines(data)
    valid = [line for line in lines if json.loads(line)["id"].startswith("v")][:limit]
    log = WORK / "http_valid.jsonl"
    log.write_text("".join(line + "\n" for line in valid), encoding="utf-8")
    cold = Row("HTTP records, whole process, spec cache cold", [], {}, len(valid))
    warm = Row("HTTP records, whole process, spec cache warm", [], {}, len(valid))
    facts: dict[str, Any] = {"records": len(valid)}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            env = _env(cache)
            cold.ours.append(_audit(log, env, "--spec", str(spec)))
            warm.ours.append(_audit(log, env, "--spec", str(spec)))
            got = run_process([sys.executable, "-c", OAC_PEER, str(spec), str(log)], env)
            facts["openapi-core flagged"] = got.stdout.strip()
            cold.peers.setdefault("openapi-core", []).append(got)
            warm.peers.setdefault("openapi-core", []).append(got)
    return [cold, warm], facts


def spec_load_runs(data: Path, repeat: int) -> tuple[list[Run], list[Run]]:
    """OpenAI's YAML spec loaded by a fresh process: cold cache, then warm."""
    spec = data / "specs" / "openai.yaml"
    cold, warm = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            env = _env(cache)
            cold.append(run_process([sys.executable, "-c", LOAD_SPEC, str(spec)], env))
            warm.append(run_process([sys.executable, "-c", LOAD_SPEC, str(spec)], env))
    return cold, warm


def _speeds(n: int, runs: list[Run]) -> str:
    wall = n / _median([r.wall for r in runs])
    return f"{wall:,.0f} / {n / _median([r.cpu for r in runs]):,.0f}"


def _spread(values: list[float], fmt: str = "{:.2f}") -> str:
    mid = fmt.format(_median(values))
    if len(values) == 1:
        return mid
    return f"{mid} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def table(data: Path, repeat: int, limit: int | None = None) -> str:
    """The whole section: every row, its peers and the goals (``limit``: the first
    records only, for a quick try)."""
    audit, audit_facts = audit_rows(repeat, limit)
    inproc, latency = in_process_rows(repeat)
    sparc = sparc_latency()
    http, http_facts = http_rows(data, repeat, limit)
    cold_load, warm_load = spec_load_runs(data, repeat)

    out = [
        "| work | records | autofeedback rec/s, wall / CPU | peak RSS (MiB) | peer | "
        "peer rec/s, wall / CPU | peer RSS (MiB) | ratio, wall | ratio, CPU | goal |",
        "|---|---:|---|---:|---|---|---:|---|---|---|",
    ]
    goals = {"jsonschema": ">= 1x", "openapi-core": ">= 5x"}
    for row in [*audit, *http]:
        n = row.records
        ours = _speeds(n, row.ours)
        rss = _median([r.rss for r in row.ours])
        for name, runs in row.peers.items():
            theirs = _speeds(n, runs)
            goal = goals.get(name, "")
            wall_ratios = [t.wall / o.wall for o, t in zip(row.ours, runs, strict=True)]
            met = ""
            if goal:
                want = float(goal.split()[1].rstrip("x"))
                met = (
                    " ✓"
                    if _median(wall_ratios) >= want
                    else f" ✗ ({_median(wall_ratios) / want:.2f} of it)"
                )
            out.append(
                f"| {row.measure} | {n:,} | {ours} | {rss:.0f} | {name} | {theirs} | "
                f"{_median([r.rss for r in runs]):.0f} | {_ratio_text(row.ours, runs, 'wall')} | "
                f"{_ratio_text(row.ours, runs, 'cpu')} | {goal}{met} |"
            )
    for measure, ours_v, peers in inproc:
        for name, theirs_v in peers.items():
            out.append(
                f"| {measure} | {audit_facts['records']:,} | {ours_v:,.0f} | | {name} | "
                f"{theirs_v:,.0f} | | {ours_v / theirs_v:.2f}x | | |"
            )
    if isinstance(sparc, dict):
        ok = latency["p50_ms"] <= sparc["p50_ms"]
        met = " ✓" if ok else f" ✗ ({latency['p50_ms'] / sparc['p50_ms']:.1f}x the peer's)"
        out.append(
            f"| one call, in process: p50 / mean (ms) | {audit_facts['records']:,} | "
            f"{latency['p50_ms']:.3f} / {latency['mean_ms']:.3f} | | ALTK SPARC static "
            f"(Track.SYNTAX) | {sparc['p50_ms']:.3f} / {sparc['mean_ms']:.3f} | | | | "
            f"p50 <= peer's{met} |"
        )
    else:
        out.append(
            f"| one call, in process: p50 / mean (ms) | {audit_facts['records']:,} | "
            f"{latency['p50_ms']:.3f} / {latency['mean_ms']:.3f} | | ALTK SPARC: not measured, "
            f"{sparc} | | | | | p50 <= peer's |"
        )
    cold_wall = [r.wall for r in cold_load]
    met = " ✓" if _median(cold_wall) < 1 else f" ✗ ({_median(cold_wall):.2f} s)"
    out.append(
        f"| OpenAI's 3 MB YAML spec, new process, imports included: cold cache s, wall / CPU "
        f"| | {_spread(cold_wall)} / {_spread([r.cpu for r in cold_load])} | "
        f"{_median([r.rss for r in cold_load]):.0f} | (warm cache: "
        f"{_spread([r.wall for r in warm_load])} / {_spread([r.cpu for r in warm_load])}) "
        f"| | | | | < 1 s{met} |"
    )
    notes = (
        f"\nWhole processes repeated {repeat}x; each cell is the median, a ratio's "
        "spread (min-max over the repeats, each repeat's two sides run back to back) in "
        "brackets. Ratio = autofeedback's records/s over the peer's (> 1: autofeedback "
        "faster); CPU = user + system time of that process alone. "
        f"Tool calls: {audit_facts['records']:,} mutated single calls of BFCL simple and "
        "multiple, every record with its own tool list (600 distinct lists), no "
        "instruction; autofeedback runs its default checks (semantic included: the "
        "embedding model scores names that miss), the peers validate strictly "
        f"(python-jsonschema flagged {audit_facts.get('jsonschema flagged')}, "
        f"jsonschema-rs {audit_facts.get('jsonschema_rs flagged')}; "
        "autofeedback flags all but 24). "
        "In process: the same records in this process after a first pass; the "
        f"latency row is one record through the audit (p99 {latency['p99_ms']:.2f} ms). "
        f"HTTP: {http_facts['records']:,} valid records on the composed 2,034-operation "
        f"spec; openapi-core rejected {http_facts.get('openapi-core flagged')}. "
        "The OpenAI row is a process that imports autofeedback and loads the spec.\n"
    )
    return "\n".join(out) + "\n" + notes

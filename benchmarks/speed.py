"""How fast is the scanner, next to openapi-core on the same requests, in one run?

* scan latency p50/p99 of a well-formed request (structural checks only: no model is
  touched when the request is right) and of a request with a made-up API name (one
  embedding call for the semantic E2.3 check);
* audit throughput (records/s) of a JSONL log, through the same code the CLI uses;
* spec load time of the largest shared spec (RestBench TMDB, 1.3 MB, 54 operations).

openapi-core's request validator runs on the same HTTP requests; ratios are ours /
theirs for time (lower is faster) because absolute times on this 2-core VM are noisy.

    python benchmarks/speed.py
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import requests
from openapi_core import Config, OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest

from autofeedback import ApiCatalog, ApiRequest, Scanner, audit_lines
from autofeedback._openapi import sample_value, sanitize_schema
from benchmarks import _datasets
from benchmarks._results import write_section


def _requests_for(catalog: ApiCatalog) -> list[tuple[str, str]]:
    """One well-formed (method, url) per operation: path and required query params
    filled with schema-conforming sample values."""
    out = []
    base = catalog.servers[0].rstrip("/")
    for op in catalog.operations:
        if not op.is_http or op.body_required:
            continue
        assert op.path is not None and op.method is not None
        path = op.path
        query = []
        for p in op.parameters:
            if not p.required:
                continue
            value = sample_value(sanitize_schema(dict(p.schema)) or {"type": "string"})
            text = str(value).lower() if isinstance(value, bool) else str(value)
            if p.location == "path":
                path = path.replace("{" + p.name + "}", text or "1")
            elif p.location == "query":
                query.append(f"{p.name}={text or 'x'}")
        # the spec's security: an apiKey scheme in the query (TMDB's api_key)
        query += [f"{p.name}=demo-key" for p in op.auth_parameters[:1] if p.location == "query"]
        url = base + path + ("?" + "&".join(query) if query else "")
        out.append((op.method, url))
    return out


def _time(fn: Callable[[], Any], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="passes over the request set")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    data = _datasets.shared_data_dir()
    if data is None:
        print("shared data (../shared/data) not found; nothing to measure", file=sys.stderr)
        return 2
    spec_path = data / "restbench" / "tmdb_oas.json"

    # spec load: ours vs openapi-core, same file, several times each
    load_ours = _time(lambda: ApiCatalog.from_file(spec_path), 5)
    # TMDB's spec fails openapi-core's own spec check, so openapi-core loads it with the
    # check off (as a user would have to); autofeedback never rejects a loadable spec
    lenient = Config(spec_validator_cls=None)  # type: ignore[arg-type]
    load_oac = _time(lambda: OpenAPI.from_file_path(str(spec_path), config=lenient), 5)
    catalog = ApiCatalog.from_file(spec_path)
    openapi = OpenAPI.from_file_path(str(spec_path), config=lenient)

    reqs = _requests_for(catalog)
    ours_req = [ApiRequest(method=m, url=u, format="request") for m, u in reqs]
    prepared = [RequestsOpenAPIRequest(requests.Request(m, u).prepare()) for m, u in reqs]
    for r, p in zip(ours_req, prepared, strict=False):  # both sides agree that these are valid
        assert not list(Scanner(catalog, retriever=None).iter_findings(r)), r
        openapi.validate_request(p)

    from retriever import ApiRetriever

    retriever = ApiRetriever()
    scanner = Scanner(catalog, retriever=retriever)
    scanner.scan(ApiRequest(name="warm_up_name"))  # load the model outside the timings

    lat_ours: list[float] = []
    lat_oac: list[float] = []
    for _ in range(args.repeat):
        for r, p in zip(ours_req, prepared, strict=False):
            t = time.perf_counter()
            scanner.scan(r)
            lat_ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            openapi.validate_request(p)
            lat_oac.append(time.perf_counter() - t)
    # a made-up API name: one name-embedding call (new name each time: no cache hit)
    lat_sem: list[float] = []
    for i in range(200):
        t = time.perf_counter()
        scanner.scan(ApiRequest(name=f"fetchMovieCreditsNumber{i}", arguments={}))
        lat_sem.append(time.perf_counter() - t)

    # audit throughput: the same requests as JSONL records through audit_lines
    lines = [
        json.dumps({"id": i, "request": {"method": m, "url": u}})
        for i, (m, u) in enumerate(reqs * args.repeat)
    ]
    t = time.perf_counter()
    results = list(audit_lines(lines, catalog, retriever=retriever))
    audit_s = time.perf_counter() - t
    assert all(r.ok for r in results)
    t = time.perf_counter()
    for line in lines:
        rec = json.loads(line)["request"]
        openapi.validate_request(
            RequestsOpenAPIRequest(requests.Request(rec["method"], rec["url"]).prepare())
        )
    oac_audit_s = time.perf_counter() - t

    ms = 1000.0
    rows = [
        (
            "scan p50, well-formed request (ms)",
            statistics.median(lat_ours) * ms,
            statistics.median(lat_oac) * ms,
        ),
        ("scan p99, well-formed request (ms)", _pct(lat_ours, 0.99) * ms, _pct(lat_oac, 0.99) * ms),
        ("scan p50, unknown API name + embedding call (ms)", statistics.median(lat_sem) * ms, None),
        ("scan p99, unknown API name + embedding call (ms)", _pct(lat_sem, 0.99) * ms, None),
        ("audit throughput (records/s)", len(lines) / audit_s, len(lines) / oac_audit_s),
        (
            "spec load, TMDB 1.3 MB (ms, median of 5)",
            statistics.median(load_ours) * ms,
            statistics.median(load_oac) * ms,
        ),
    ]
    out = io.StringIO()
    out.write("| measure | autofeedback | openapi-core | ratio (ours / openapi-core) |\n")
    out.write("|---|---|---|---|\n")
    for name, ours, theirs in rows:
        ratio = "n/a" if theirs is None else f"{ours / theirs:.2f}"
        theirs_s = "n/a (no semantic check)" if theirs is None else f"{theirs:.3f}"
        out.write(f"| {name} | {ours:.3f} | {theirs_s} | {ratio} |\n")
    out.write(
        f"\n{len(reqs)} well-formed TMDB requests × {args.repeat} passes; "
        "throughput ratio > 1 means autofeedback is faster. openapi-core validates "
        "the request (it does not parse LLM text, rank APIs or explain errors); "
        "autofeedback also parses and runs E2-E4 with suggestions. openapi-core loads "
        "TMDB with its spec check off (the spec fails that check).\n"
    )
    table = out.getvalue()
    print(table)
    if not args.no_write:
        write_section("Speed", "python benchmarks/speed.py", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

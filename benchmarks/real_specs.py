"""Is the scanner right on the API documents people actually bring?

For every spec under ``../shared/data`` -- Box and OpenAI (``specs/``), RestBench TMDB
and Spotify, the 11 ToolAlpaca APIs, the API-Bank docs, a sample of BFCL's simple and
multiple doc sets -- requests that satisfy the spec are generated from the raw document and kept
only when a real JSON-Schema validator accepts them (``_valid_requests.py``; nothing of
autofeedback's own loader is used to build or check them). They are sent to
``Scanner(catalog, retriever=None)`` as HTTP records (``{"method", "url", "headers",
"body"}``) or tool calls (``{"name", "arguments"}``); any finding of severity "error" on
them is a false error. Then each is mutated into one error subtype
(``_mutations.SENT_MUTATORS``, path/name variants for E2.2/E2.3) and recall and exact
subtype are measured. A smaller pass with the real retriever measures E2.3/E3.3 with
semantic matching. E1 (unparseable output) and E2.1 (another real API, which needs an
instruction) are measured by ``detection.py``, not here.

    python benchmarks/real_specs.py                 # every spec, writes benchmarks/RESULTS.md
    python benchmarks/real_specs.py --ops 40 --no-write --only box.json
    python benchmarks/real_specs.py --no-write --only openai --dump /tmp/rs  # then replay:
    autofeedback audit /tmp/rs/openai.yaml.false-errors.jsonl --spec SPEC
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import inspect
import json
import os
import random
import re
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, Finding, Scanner
from autofeedback.parsing import request_from_call, request_from_http
from benchmarks import _datasets
from benchmarks._mutations import (
    SENT_MUTATORS,
    literal_variant,
    path_variant,
    sent_e3_3_taken,
    synonym_variant,
)
from benchmarks._results import write_section
from benchmarks._valid_requests import (
    RawSpec,
    SentRequest,
    api_bank_functions,
    bfcl_functions,
    generate,
    parameter_names,
    slots,
    validate,
)

SUBTYPES = ["E2.2", "E2.3", *SENT_MUTATORS]
#: chance to send each optional parameter, per request of an operation: the minimal
#: request first, then richer ones
_OPTIONAL = (0.0, 0.5, 0.9)
SEMANTIC = ("E2.3", "E3.3")
#: a synonym of the operation's own parameter that another operation takes: still E3.3
TAKEN = "E3.3, another API's name"
TITLE = "Real specs: false errors on valid requests, recall per subtype"


_METHOD = """\
For each operation of each spec, three requests are generated from the raw document
(required parameters only, then each optional one with probability 0.5 and 0.9; a body
that is not `required` is sent only sometimes) and kept only if a real validator accepts
every value: openapi-schema-validator's `OAS30WriteValidator` / `OAS31Validator` for
OpenAPI 3.0 / 3.1, `jsonschema.Draft202012Validator` for function docs, every `$ref`
resolved by `referencing` (discriminators read as hints, as OAS 3.1.1 says; the oneOf
decides). Drafts the validator rejects (specs contradicting their own examples, e.g.
Spotify's `"maximum": "50"` strings) are dropped and counted. A *false error* is any
finding of severity "error" on a valid request. Records/s: scan time only, on a shared
2-core machine (noisy). Load: *cold* with an empty `AUTOFEEDBACK_CACHE_DIR`, *cached* the
second load in the same process."""


@dataclass
class Unit:
    """One document: its raw form (for generation) and how autofeedback loads it."""

    raw: RawSpec
    load: Callable[[], ApiCatalog]


@dataclass
class Case:
    """One row of the report: one spec, or a family of small doc sets (BFCL)."""

    name: str
    units: list[Unit]


@dataclass
class Outcome:
    """What the scanner said about one record."""

    findings: list[Finding]
    crash: str | None = None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def flagged(self) -> bool:
        return self.crash is not None or bool(self.errors)


@dataclass
class Stats:
    operations: int = 0
    sampled: int = 0
    valid: int = 0
    dropped: int = 0
    no_valid: int = 0
    twins: int = 0  # operations sharing method and path with another: not mutated
    false_error: int = 0
    crashes: int = 0
    scanned: int = 0
    scan_s: float = 0.0
    load_first: list[float] = field(default_factory=list)
    load_second: list[float] = field(default_factory=list)
    load_error: str = ""
    drop_reasons: Counter[str] = field(default_factory=Counter)
    features: Counter[str] = field(default_factory=Counter)
    calls: int = 0  # valid HTTP requests also sent as tool calls
    peer_checked: int = 0  # valid requests openapi-core validated
    peer_flagged: int = 0
    peer_reasons: Counter[str] = field(default_factory=Counter)
    call_false_error: int = 0
    call_messages: Counter[str] = field(default_factory=Counter)
    call_examples: dict[str, str] = field(default_factory=dict)
    false_messages: Counter[str] = field(default_factory=Counter)
    false_examples: dict[str, str] = field(default_factory=dict)
    crash_sites: Counter[str] = field(default_factory=Counter)
    #: subtype -> [(caught as an error, first error has the subtype's code)]
    mutated: dict[str, list[tuple[bool, bool]]] = field(default_factory=lambda: defaultdict(list))
    #: subtype -> [(caught, exact subtype, exact with the right suggestion)]
    semantic: dict[str, list[tuple[bool, bool, bool]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    semantic_queued: Counter[str] = field(default_factory=Counter)
    #: subtype -> whether the raw JSON-Schema validation rejects the mutated request
    raw_caught: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    #: subtype -> examples of mutated records not caught, or caught under another code
    misses: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


# -- the specs ---------------------------------------------------------------------


def build_cases(data: Path, args: argparse.Namespace) -> list[Case]:
    cases: list[Case] = []
    for rel in (
        "specs/box.json",
        "specs/openai.yaml",
        "restbench/tmdb_oas.json",
        "restbench/spotify_oas.json",
    ):
        path = data / rel
        if path.is_file():
            cases.append(Case(path.name, [_file_unit(path)]))
    for api, doc in _datasets.toolalpaca_docs().items():
        cases.append(Case(f"toolalpaca/{api}", [_obj_unit(doc, api)]))
    docs = _datasets.api_bank_doc_set()
    raw = RawSpec.from_functions(api_bank_functions(docs), "api-bank")
    cases.append(Case("api-bank (49 APIs)", [Unit(raw, lambda: ApiCatalog.from_obj(docs))]))
    for category in ("simple", "multiple") if args.bfcl else ():
        tasks = [t for t in _datasets.load_bfcl(category) if t.calls]
        rng = random.Random(f"bfcl-{category}/{args.seed}")
        picked = rng.sample(tasks, min(args.bfcl, len(tasks)))
        units = [
            Unit(RawSpec.from_functions(bfcl_functions(t.spec), t.id), _obj_loader(t.spec))
            for t in picked
        ]
        cases.append(Case(f"bfcl-{category} ({len(units)} doc sets)", units))
    return cases


def _file_unit(path: Path) -> Unit:
    return Unit(RawSpec.from_file(path), lambda: ApiCatalog.from_file(path))


def _obj_loader(obj: Any) -> Callable[[], ApiCatalog]:
    return lambda: ApiCatalog.from_obj(obj)


def _obj_unit(doc: dict[str, Any], name: str) -> Unit:
    return Unit(RawSpec.from_openapi(doc, name), lambda: ApiCatalog.from_obj(doc, source=name))


# -- scanning ----------------------------------------------------------------------


_RAISES = "on_error" in inspect.signature(Scanner.iter_findings).parameters


def scan(scanner: Scanner, request: SentRequest) -> Outcome:
    """The scanner's findings on one record; a crash anywhere (parser, loader, checks)
    counts as that record's error and is reported with where it happened."""
    record = request.record()
    try:
        parsed = (
            request_from_call(record)
            if request.operation.method is None or request.as_call
            else request_from_http(record)
        )
        if _RAISES:  # crashes raised, not turned into E1 findings
            return Outcome(list(scanner.iter_findings(parsed, on_error="raise")))
        return Outcome(list(scanner.iter_findings(parsed)))
    except Exception as exc:
        return Outcome([], crash=_crash_site(exc))


def _crash_site(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "autofeedback" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{type(exc).__name__} at {where}: {str(exc)[:120]}"


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\b\d+(\.\d+)?\b")


_TOKEN = re.compile(r"[\w#.{}/-]+")


def template(f: Finding, operations: Collection[str] = ()) -> str:
    """A finding's message with names, operation names and numbers blanked, to group
    alike messages."""
    text = _QUOTED.sub("'…'", f.message)
    text = _TOKEN.sub(lambda m: "<op>" if m.group() in operations else m.group(), text)
    text = re.sub(r"<op>(, <op>)+", "<op>, …", text)
    return f"{f.code} {_NUMBER.sub('N', text)}"


def run_case(case: Case, args: argparse.Namespace) -> Stats:
    stats = Stats()
    for unit in case.units:
        try:
            with _fresh_cache():  # first load: nothing cached on disk; second: cached
                t0 = time.perf_counter()
                catalog = unit.load()
                t1 = time.perf_counter()
                unit.load()
                t2 = time.perf_counter()
        except Exception as exc:
            stats.load_error = f"{type(exc).__name__}: {exc}"[:200]
            continue
        stats.load_first.append(t1 - t0)
        stats.load_second.append(t2 - t1)
        _run_unit(unit.raw, catalog, stats, args, case.name)
    return stats


class OpenApiCoreCheck:
    """openapi-core's request validator on the same HTTP records, as a peer: the share
    of valid requests it rejects. Its own spec check is off (several of these specs
    fail it), as a user of real specs would have to. Multipart bodies are not sent."""

    def __init__(self, document: Any) -> None:
        from openapi_core import Config, OpenAPI

        lenient = Config(spec_validator_cls=None)  # type: ignore[arg-type]
        self.openapi = OpenAPI.from_dict(document, config=lenient)

    def flags(self, record: dict[str, Any]) -> str | None:
        """Why openapi-core rejects ``record``, or ``None`` when it accepts it."""
        import requests
        from openapi_core.contrib.requests import RequestsOpenAPIRequest

        body = record.get("body")
        headers = dict(record.get("headers") or {})
        data = None
        if body is not None:
            data = body if isinstance(body, str) else json.dumps(body)
        prepared = requests.Request(
            record["method"], record["url"], headers=headers, data=data
        ).prepare()
        try:
            self.openapi.validate_request(RequestsOpenAPIRequest(prepared))
        except Exception as exc:
            cause = exc.__cause__ or exc
            return f"{type(exc).__name__}: {_NUMBER.sub('N', _QUOTED.sub('…', str(cause)))}"[:160]
        return None


@contextlib.contextmanager
def _fresh_cache() -> Iterator[None]:
    """An empty ``AUTOFEEDBACK_CACHE_DIR`` for the duration (the user's cache is not
    touched, and a spec parsed by an earlier run does not make the first load warm)."""
    old = os.environ.get("AUTOFEEDBACK_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="real-specs-cache-") as tmp:
        os.environ["AUTOFEEDBACK_CACHE_DIR"] = tmp
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("AUTOFEEDBACK_CACHE_DIR", None)
            else:
                os.environ["AUTOFEEDBACK_CACHE_DIR"] = old


def _run_unit(
    raw: RawSpec, catalog: ApiCatalog, stats: Stats, args: argparse.Namespace, case: str
) -> None:
    scanner = Scanner(catalog, retriever=None)
    peer = None
    if args.peer and raw.kind == "openapi":
        try:
            peer = OpenApiCoreCheck(raw.doc)
        except Exception as exc:
            stats.peer_reasons[f"openapi-core cannot load the spec: {type(exc).__name__}"] += 1
    rng = random.Random(f"{case}/{raw.name}/{args.seed}")
    ops = list(raw.operations)
    stats.operations += len(ops)
    if args.ops and len(ops) > args.ops:
        ops = sorted(rng.sample(ops, args.ops), key=raw.operations.index)
    stats.sampled += len(ops)
    names = parameter_names(raw)
    templates = {op.path for op in raw.operations if op.path}
    op_names = {op.name for op in raw.operations}
    # Box documents one endpoint several times (``/files/{file_id}#get_shared_link``);
    # a fragment is never sent, so a request to it is valid for every twin, and a
    # mutation of one may be a valid request to another: such operations get none
    endpoints = Counter(_endpoint(op.method, op.path) for op in raw.operations if op.path)
    semantic_records: list[tuple[str, SentRequest, set[str]]] = []

    for op in ops:
        valid: list[SentRequest] = []
        for variant in range(args.requests):
            # variant 0: required parameters only (the body a coin flip when optional);
            # later ones: optional parameters too, and the body
            g = generate(
                raw,
                op,
                random.Random(f"{case}/{op.name}/{variant}/{args.seed}"),
                optional=_OPTIONAL[min(variant, len(_OPTIONAL) - 1)],
                with_body=None if variant == 0 else True,
            )
            stats.dropped += g.dropped
            if g.request is None:
                stats.drop_reasons[_QUOTED.sub("'…'", g.reason)[:140]] += 1
                continue
            # the richer request sends a form body as text, the way logs hold it
            g.request.form_text = variant > 0
            # the richest one writes headers in lower case, with a charset on JSON
            g.request.loose_headers = variant > 1
            valid.append(g.request)
        if not valid:
            stats.no_valid += 1
            continue
        for i, req in enumerate(valid):
            out = _timed(scanner, req, stats)
            stats.valid += 1
            stats.features.update(_features(raw, req))
            if args.dump is not None:
                _dump(args.dump, case, f"{raw.name}/{op.name}/{i}", req, out)
            if peer is not None and not (req.media or "").startswith("multipart/"):
                reason = peer.flags(req.record())
                stats.peer_checked += 1
                if reason is not None:
                    stats.peer_flagged += 1
                    stats.peer_reasons[reason] += 1
            if _callable(req):
                # the same request, called as a tool by its operation name
                call = scan(scanner, req.copy(as_call=True))
                stats.calls += 1
                if call.flagged:
                    stats.call_false_error += 1
                    for key, example in _false_keys(call, req.copy(as_call=True), op_names):
                        stats.call_messages[key] += 1
                        stats.call_examples.setdefault(key, example)
            if out.flagged:
                stats.false_error += 1
                for key, example in _false_keys(out, req, op_names):
                    stats.false_messages[key] += 1
                    stats.false_examples.setdefault(key, example)
        if op.path and endpoints[_endpoint(op.method, op.path)] > 1:
            stats.twins += 1
            continue
        foreign = sorted(set().union(*(v for k, v in names.items() if k != op.name)))
        op_rng = random.Random(f"{case}/{op.name}/mutate/{args.seed}")
        for subtype in SUBTYPES:
            for req in reversed(valid):  # the richest request first
                mutated = _mutate(subtype, raw, req, foreign, templates, op_names, op_rng)
                if mutated is None:
                    continue
                out = _timed(scanner, mutated, stats)
                first = out.errors[0].code if out.errors else None
                stats.mutated[subtype].append((out.flagged, first == subtype))
                if subtype in SENT_MUTATORS:  # the path mutations have no schema to break
                    stats.raw_caught[subtype].append(bool(validate(raw, mutated)))
                # without the model E2.3/E3.3 can only be plain E2/E3: a miss only when
                # nothing is reported
                expected = first == subtype or (subtype in SEMANTIC and out.flagged)
                if not expected and len(stats.misses[subtype]) < args.misses:
                    stats.misses[subtype].append(_miss(op.name, out, mutated))
                if subtype in SEMANTIC and stats.semantic_queued[subtype] < args.semantic:
                    stats.semantic_queued[subtype] += 1  # a sample per spec, not per doc set
                    semantic_records.append((subtype, mutated, _meant(req, mutated)))
                break
        if stats.semantic_queued[TAKEN] < args.semantic:
            for req in reversed(valid):
                values = sent_e3_3_taken(req.values, slots(raw, req), foreign, op_rng)
                if values is not None:
                    stats.semantic_queued[TAKEN] += 1
                    mutated = req.copy(values=values)
                    semantic_records.append((TAKEN, mutated, _meant(req, mutated)))
                    break

    if semantic_records and args.semantic:
        with_model = Scanner(catalog, retriever=_retriever())  # the packaged model
        for subtype, req, meant in semantic_records:
            out = scan(with_model, req)
            top = out.errors[0] if out.errors else None
            exact = top is not None and top.code == subtype.split(",")[0]
            right = exact and top is not None and top.suggestion in meant
            stats.semantic[subtype].append((out.flagged, exact, right))
            key = f"{subtype} (retriever)"
            if not right and len(stats.misses[key]) < args.misses:
                stats.misses[key].append(_miss(req.operation.name, out, req))


@functools.cache
def _retriever() -> Any:
    """The retriever ``Scanner(catalog)`` creates by default (``"auto"``), loaded once
    for every spec of the run."""
    from retriever import ApiRetriever

    return ApiRetriever()


def _features(raw: RawSpec, req: SentRequest) -> Iterator[str]:
    """What a valid request exercises, for the coverage table."""
    op = req.operation
    if req.media is not None:
        if "json" in req.media:
            yield "JSON body"
        elif req.media.startswith("application/x-www-form-urlencoded"):
            yield "form body (text)" if req.form_text else "form body"
        elif req.media.startswith("multipart/"):
            yield "multipart body"
        else:
            yield "other body"
        schema = next(b[2] for b in op.bodies if b[0] == req.media)
        body = {n: v for (loc, n), v in req.values.items() if loc == "body"}
        if _composed(raw, schema, req.body_whole if req.body_whole is not None else body):
            yield "body through allOf/oneOf/anyOf"
    elif op.bodies:
        yield "optional body left out"
    if any(v is None for v in _leaves(req.values)):
        yield "null value"
    if "extra_note" in json.dumps(list(req.values.values()), default=str):
        yield "undocumented field of an open object"
    if op.path and "?" in op.path:
        yield "path key with a query string"
    if op.path and "#" in op.path:
        yield "path key with a fragment"
    if any(p.content for p in op.params if (p.location, p.name) in req.values):
        yield "parameter with content"


def _composed(raw: RawSpec, schema: Any, value: Any, depth: int = 0) -> bool:
    """Whether the value sent passes through a composition anywhere in its schema."""
    try:
        flat, _ = raw.deref(schema)
    except Exception:
        return False
    if not isinstance(flat, dict) or depth > 6:
        return False
    if any(k in flat for k in ("allOf", "oneOf", "anyOf")):
        return True
    if isinstance(value, dict):
        props = flat.get("properties") or {}
        return any(_composed(raw, props[k], v, depth + 1) for k, v in value.items() if k in props)
    if isinstance(value, list) and "items" in flat:
        return any(_composed(raw, flat["items"], v, depth + 1) for v in value)
    return False


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _dump(folder: Path, case: str, ident: str, req: SentRequest, out: Outcome) -> None:
    """Append the valid request to ``<case>.valid.jsonl`` (and, when flagged, to
    ``<case>.false-errors.jsonl``) as audit-log lines: ``autofeedback audit FILE --spec
    SPEC`` replays them."""
    folder.mkdir(parents=True, exist_ok=True)
    key = "call" if req.operation.method is None else "request"
    line = json.dumps({"id": ident, key: req.record()}, default=str, ensure_ascii=False)
    stem = re.sub(r"[^\w.-]+", "_", case)
    names = [f"{stem}.valid.jsonl"] + ([f"{stem}.false-errors.jsonl"] if out.flagged else [])
    for name in names:
        with (folder / name).open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def _callable(req: SentRequest) -> bool:
    """Whether an HTTP request can be written as one tool call: an object body (or none)
    and no name sent in two places (Spotify's ``ids`` in the query and the body)."""
    if req.operation.method is None or req.body_whole is not None:
        return False
    names = list(req.call_record()["arguments"])
    sent = [n for (loc, n) in req.values if loc != "header" or n in names]
    return len(set(sent)) == len(sent)


def _meant(valid: SentRequest, mutated: SentRequest) -> set[str]:
    """What a suggestion should name: the parameter the mutation renamed, or the API."""
    gone = {n for (_, n) in valid.values} - {n for (_, n) in mutated.values}
    if gone:
        return gone
    op = valid.operation
    names = {op.name}
    if op.method and op.path:
        names.add(f"{op.method} {op.path.partition('#')[0]}")
    return names


def _miss(op: str, out: Outcome, req: SentRequest) -> str:
    got = out.crash or (str(out.errors[0]) if out.errors else "no error")
    return f"{op}: {got} <- {json.dumps(req.record(), default=str)[:300]}"


def _endpoint(method: str | None, path: str) -> tuple[str | None, str]:
    return method, re.sub(r"\{[^{}]*\}", "{}", path.partition("?")[0].partition("#")[0])


def _timed(scanner: Scanner, req: SentRequest, stats: Stats) -> Outcome:
    t = time.perf_counter()
    out = scan(scanner, req)
    stats.scan_s += time.perf_counter() - t
    stats.scanned += 1
    if out.crash is not None:
        stats.crashes += 1
        stats.crash_sites[out.crash] += 1
    return out


def _false_keys(out: Outcome, req: SentRequest, operations: set[str]) -> Iterator[tuple[str, str]]:
    example_record = json.dumps(req.record(), default=str)[:300]
    if out.crash is not None:
        yield (
            f"crash {_NUMBER.sub('N', _QUOTED.sub(chr(39) + '…' + chr(39), out.crash))}",
            (f"{out.crash} <- {example_record}"),
        )
    for f in out.errors:
        yield template(f, operations), f"{req.operation.name}: {f} <- {example_record}"


def _mutate(
    subtype: str,
    raw: RawSpec,
    req: SentRequest,
    foreign: list[str],
    templates: set[str],
    op_names: set[str],
    rng: random.Random,
) -> SentRequest | None:
    op = req.operation
    if subtype in ("E2.2", "E2.3"):
        variant = literal_variant if subtype == "E2.2" else synonym_variant
        if op.path is None:
            new = variant(op.name, op_names)
            return req.copy(name_override=new) if new else None
        path = path_variant(op.path, templates, variant)
        return req.copy(path_override=path) if path else None
    values = SENT_MUTATORS[subtype](req.values, slots(raw, req), foreign, rng)
    return None if values is None else req.copy(values=values)


# -- the report --------------------------------------------------------------------


def _rate(hits: list[tuple[bool, bool]]) -> str:
    if not hits:
        return "–"
    n = len(hits)
    caught = sum(h for h, _ in hits) / n
    exact = sum(e for _, e in hits) / n
    return f"{caught:.2f} / {exact:.2f} ({n})"


def _rate3(hits: list[tuple[bool, bool, bool]]) -> str:
    if not hits:
        return "–"
    n = len(hits)
    return " / ".join(f"{sum(h[i] for h in hits) / n:.2f}" for i in range(3)) + f" ({n})"


def tables(results: dict[str, Stats]) -> tuple[str, str]:
    """The report (markdown) and the top false-error messages per spec."""
    lines = [
        "| spec | operations (sampled) | valid requests | drafts dropped by the validator "
        "| ops without a valid request | ops not mutated (twin endpoint) | false-error rate "
        "| crashes | records/s | load, cold (s) | load, cached (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    total = Stats()
    for name, s in results.items():
        if s.load_error and not s.load_first:
            lines.append(f"| {name} | load failed: {s.load_error} |" + " |" * 9)
            continue
        rate = s.false_error / s.valid if s.valid else 0.0
        mark = "" if rate <= 0.01 else " ✗"
        lines.append(
            f"| {name} | {s.operations} ({s.sampled}) | {s.valid} | {s.dropped} | {s.no_valid} "
            f"| {s.twins} | {rate:.3f}{mark} | {s.crashes} | {_per_s(s.scanned, s.scan_s)} "
            f"| {_loads(s.load_first)} | {_loads(s.load_second)} |"
        )
        total.valid += s.valid
        total.false_error += s.false_error
        total.scanned += s.scanned
        total.scan_s += s.scan_s
        for k, v in s.mutated.items():
            total.mutated[k] += v
        for k, hits in s.semantic.items():
            total.semantic[k] += hits
        for k, b in s.raw_caught.items():
            total.raw_caught[k] += b
    checked = [(n, s) for n, s in results.items() if s.peer_checked]
    if checked:
        lines += [
            "",
            "Peer: openapi-core's request validator (spec check off) on the same valid HTTP "
            "requests (multipart left out), share rejected: "
            + ", ".join(
                f"{n} {s.peer_flagged / s.peer_checked:.3f} ({s.peer_checked})" for n, s in checked
            )
            + ".",
        ]
    called = [(n, s) for n, s in results.items() if s.calls]
    if called:
        lines += [
            "",
            'The same valid HTTP requests called as tools (`{"name": operationId, '
            '"arguments"}`, every documented value one argument), false-error rate: '
            + ", ".join(f"{n} {s.call_false_error / s.calls:.3f} ({s.calls})" for n, s in called)
            + ".",
        ]
    features: Counter[str] = Counter()
    for s in results.values():
        features.update(s.features)
    lines += [
        "",
        "What the valid requests exercise (requests): "
        + ", ".join(f"{k} {n}" for k, n in sorted(features.items(), key=lambda kv: -kv[1]))
        + ".",
    ]
    lines += [
        "",
        f"All specs: {total.valid} valid requests, false-error rate "
        f"{total.false_error / max(total.valid, 1):.3f} (goal ≤ 0.01 on every spec); "
        f"{total.scanned} records scanned at {total.scanned / max(total.scan_s, 1e-9):.0f} "
        "records/s (retriever off).",
        "",
        "Mutated requests, `Scanner(catalog, retriever=None)`: caught as an error / first "
        "error has the mutated subtype (records). E2.2/E2.3 vary a static path segment "
        "(HTTP) or the function name; E3.x rename or drop a query, body or argument "
        "parameter; E4.x change a value. Without the retriever an E2.3/E3.3 can only be "
        "reported as plain E2/E3, so their exact column is 0 by design (see the retriever "
        "table below).",
        "",
        "| spec | " + " | ".join(SUBTYPES) + " |",
        "|---|" + "---|" * len(SUBTYPES),
    ]
    for name, s in [*results.items(), ("all", total)]:
        if s.mutated:
            lines.append(f"| {name} | " + " | ".join(_rate(s.mutated[t]) for t in SUBTYPES) + " |")
    if any(total.raw_caught.values()):
        lines += [
            "",
            "For comparison, the strict JSON-Schema validation that built the valid requests "
            "(raw spec, `referencing`) rejects these mutated requests, all specs: "
            + ", ".join(
                f"{t} {sum(caught) / len(caught):.2f} ({len(caught)})"
                for t in SENT_MUTATORS
                if (caught := total.raw_caught.get(t))
            )
            + " (unknown query and open-body names are allowed by the schemas).",
        ]
    if any(total.semantic.values()):
        kinds = (*SEMANTIC, TAKEN)
        lines += [
            "",
            "E2.3/E3.3 records (a sample per spec) with the packaged retriever "
            "(`Scanner(catalog)`, semantic matching on): caught / exact subtype / exact with "
            f"the right suggestion (records). *{TAKEN}*: a synonym of the operation's own "
            "parameter that another operation of the spec takes (`title` for `name`); the "
            "model's slip is still on this operation, so E3.3 suggesting the own name.",
            "",
            "| spec | " + " | ".join(kinds) + " |",
            "|---|---|---|---|",
        ]
        for name, s in [*results.items(), ("all", total)]:
            if any(s.semantic.values()):
                lines.append(
                    f"| {name} | " + " | ".join(_rate3(s.semantic[t]) for t in kinds) + " |"
                )
    top = []
    for name, s in results.items():
        if not (
            s.false_messages
            or s.call_messages
            or s.drop_reasons
            or s.crash_sites
            or s.misses
            or s.peer_reasons
        ):
            continue
        top.append(f"### {name}")
        if s.false_messages:
            top.append("")
            top.append("Most frequent false errors (count, message template, one example):")
            top.append("")
            for key, n in s.false_messages.most_common(10):
                top.append(f"- {n} × `{key}`\n  e.g. {s.false_examples[key][:400]}")
        if s.call_messages:
            top.append("")
            top.append("Most frequent false errors on the same requests called as tools:")
            top.append("")
            for key, n in s.call_messages.most_common(5):
                top.append(f"- {n} × `{key}`\n  e.g. {s.call_examples[key][:400]}")
        if s.peer_reasons:
            top.append("")
            top.append("Why openapi-core rejected valid requests (peer; not ours to fix):")
            top += [f"- {n} × {k}" for k, n in s.peer_reasons.most_common(3)]
        if s.crash_sites:
            top.append("")
            top.append(
                "Crashes: " + "; ".join(f"{n} × {k}" for k, n in s.crash_sites.most_common(5))
            )
        if s.misses:
            top.append("")
            top.append("Mutations missed or reported under another code (examples):")
            top.append("")
            for sub in [*SUBTYPES, *(f"{t} (retriever)" for t in (*SEMANTIC, TAKEN))]:
                top += [f"- {sub}: {m[:450]}" for m in s.misses.get(sub, [])]
        if s.drop_reasons:
            top.append("")
            top.append(
                "Why drafts were dropped (last reason per operation without a valid request):"
            )
            top += [f"- {n} × {k}" for k, n in s.drop_reasons.most_common(5)]
        top.append("")
    return "\n".join(lines), "\n".join(top)


def _per_s(n: int, seconds: float) -> str:
    return f"{n / seconds:.0f}" if seconds else "–"


def _loads(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{sum(values) / len(values):.3f} mean"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=0, help="operations sampled per spec (0: all)")
    parser.add_argument("--requests", type=int, default=3, help="valid requests per operation")
    parser.add_argument(
        "--bfcl", type=int, default=40, help="BFCL simple and multiple doc sets each (0: none)"
    )
    parser.add_argument(
        "--semantic", type=int, default=30, help="E2.3/E3.3 records per spec with the retriever"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-peer",
        dest="peer",
        action="store_false",
        help="skip openapi-core on the same requests",
    )
    parser.add_argument(
        "--misses", type=int, default=2, help="examples of missed mutations per subtype"
    )
    parser.add_argument("--only", action="append", help="spec names to run (substring)")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--dump",
        type=Path,
        help="write the valid requests (and the falsely flagged ones) as audit JSONL here",
    )
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    data = _datasets.shared_data_dir()
    if data is None:
        print("shared data (../shared/data) not found; nothing to measure", file=sys.stderr)
        return 2
    started = time.perf_counter()
    results: dict[str, Stats] = {}
    for case in build_cases(data, args):
        if args.only and not any(o in case.name for o in args.only):
            continue
        t = time.perf_counter()
        results[case.name] = run_case(case, args)
        print(f"{case.name}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    table, top = tables(results)
    elapsed = time.perf_counter() - started
    print(table)
    print()
    print(top)
    print(f"\nwall time {elapsed:.0f} s")
    if args.out:
        args.out.write_text(table + "\n\n" + top + "\n", encoding="utf-8")
    default_run = not (args.ops or args.only or args.no_write) and args.requests == 3
    if default_run:
        write_section(
            TITLE,
            "python benchmarks/real_specs.py",
            _METHOD
            + "\n\n"
            + table
            + f"\n\nWall time {elapsed:.0f} s on this machine (2 CPU cores), generation and "
            "validation included. Top false-error messages per spec (what to fix next):\n\n"
            + top.replace("### ", "#### "),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Do RestBench's gold solution paths run end to end against the sandbox?

Serves the real RestBench TMDB and Spotify specs with the stateful sandbox and replays
each of the 157 gold paths (``["GET /search/person", "GET /person/{person_id}/movie_credits"]``)
the way an agent would: each path parameter is the first value in the earlier answers
(newest first) whose field name fits it (the parameter's own name, or an ``id`` in an
object of the parameter's kind, else any ``id``), required query parameters and bodies
are the documented example, default or first enum value. One fresh session per query.

A path counts as *all-2xx* when every call got a 2xx answer. Gold strings with stray
spaces are normalised and counted as such; gold paths naming no documented operation
(``GET /track/{id}`` where the spec has ``/tracks/{id}``) are counted apart.

    python benchmarks/sandbox_paths.py              # prints the table, writes RESULTS.md
    python benchmarks/sandbox_paths.py --no-write
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, Operation, Parameter
from autofeedback.catalog._schema import sample_value, sanitize_schema
from autofeedback.serve._sandbox import Sandbox
from autofeedback.serve._sandbox_state import id_params, singular
from benchmarks._datasets import normalise_step, shared_data_dir
from benchmarks._results import write_section

DOMAINS = ("tmdb", "spotify")


@dataclass
class Outcome:
    """One gold path replayed."""

    domain: str
    query: str
    gold: tuple[str, ...]
    #: "all-2xx", "failed", "not-in-spec"
    result: str = "all-2xx"
    normalised: bool = False
    #: a path parameter had no earlier answer to come from: the docs' example id was used
    docs_id: bool = False
    #: control: steps re-sent with a made-up id, and how many of those got a 404
    made_up: int = 0
    made_up_404: int = 0
    statuses: list[int] = field(default_factory=list)
    #: the first failing step and why: ``"GET /movie/{movie_id}: 404 not_found"``
    reason: str = ""


def parse_step(text: str) -> tuple[str, str, bool]:
    """``" GET /search/movie "`` -> ``("GET", "/search/movie", True)`` (normalised)."""
    method, path = normalise_step(text)
    return method, path, f"{method} {path}" != text


def find_operation(catalog: ApiCatalog, method: str, path: str) -> Operation | None:
    for op in catalog:
        if op.method is not None and op.method.upper() == method and op.path == path:
            return op
    return None


def _objects(
    node: Any, root: str | None, items: str | None
) -> Iterator[tuple[Mapping[str, Any], list[str | None]]]:
    """Every object of an answer in document order (an object before what it holds),
    with what names its kind: its ``type`` or ``media_type``, the nearest enclosing key,
    and the kind its place in the answer gives it (see :func:`answer_kinds`)."""
    stack: list[tuple[Any, str | None, str | None]] = [
        (node, None, items if isinstance(node, list) else root)
    ]
    while stack:
        value, enclosing, placed = stack.pop()
        if isinstance(value, list):
            stack.extend((v, enclosing, placed) for v in reversed(value))
        elif isinstance(value, dict):
            yield value, [value.get("type"), value.get("media_type"), enclosing, placed]
            inner = [
                (v, k, items if k in ("items", "results") and value is node else None)
                for k, v in value.items()
                if isinstance(v, dict | list)
            ]
            stack.extend(reversed(inner))


def answer_kinds(op: Operation) -> tuple[str | None, str | None]:
    """What an agent reads off the path it called: the answer is the resource its last
    id names, the items of its list what its last segment names."""
    assert op.path is not None
    ids = id_params(op)
    root = ids[-1].kind if ids else None
    literal = [s for s in op.path.strip("/").split("/") if s and not s.startswith("{")]
    items = singular(literal[-1]) if literal and not (ids and ids[-1].last) else None
    return root, items


def pick(param: Parameter, kind: str | None, answers: Sequence[tuple[Any, Operation]]) -> Any:
    """The value an agent takes for ``param`` from the earlier answers, or ``None``: a
    field named like the parameter, or the ``id`` of an object whose type, enclosing key
    or place in the answer names the parameter's kind; failing those, the first ``id``
    below the top of the newest answer that has one."""
    for answer, op in reversed(answers):
        for obj, labels in _objects(answer, *answer_kinds(op)):
            if param.name.lower() != "id" and param.name in obj and _scalar(obj[param.name]):
                return obj[param.name]
            if (
                "id" in obj
                and _scalar(obj["id"])
                and kind is not None
                and any(isinstance(x, str) and kind in singular(x).split("_") for x in labels)
            ):
                return obj["id"]
    for answer, op in reversed(answers):
        for obj, _ in _objects(answer, *answer_kinds(op)):
            if "id" in obj and _scalar(obj["id"]) and obj is not answer:
                return obj["id"]
    return None


def from_docs(op: Operation) -> Any:
    """The id the operation's own documented example describes (``550`` for TMDB's
    ``GET /movie/{movie_id}``): what an agent with no earlier answer would try."""
    for r in op.responses:
        if r.status.startswith("2") and isinstance(r.example, Mapping):
            value = r.example.get("id")
            if _scalar(value):
                return value
    return None


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def documented(param: Parameter) -> Any:
    schema = param.schema
    for key in ("example", "default"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if param.name in ("query", "q"):
        return "the"
    return sample_value(sanitize_schema(schema))


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Sent:
    """One step of a replayed path as a call: what was sent and what came back."""

    operation: Operation
    #: path values, required query values and body fields, as the agent chose them
    arguments: dict[str, Any]
    status: int
    answer: Any


def replay(
    sandbox: Sandbox,
    catalog: ApiCatalog,
    domain: str,
    item: Mapping[str, Any],
    sent: list[Sent] | None = None,
) -> Outcome:
    """Replay one gold path in a fresh session; each step sent is appended to ``sent``
    (the trace ``benchmarks/repair.py`` mutates)."""
    outcome = Outcome(domain, str(item["query"]), tuple(item["solution"]))
    steps = []
    for text in outcome.gold:
        method, path, changed = parse_step(text)
        outcome.normalised |= changed
        op = find_operation(catalog, method, path)
        if op is None:
            outcome.result, outcome.reason = "not-in-spec", f"{method} {path}"
            return outcome
        steps.append(op)
    sandbox.reset()
    answers: list[tuple[Any, Operation]] = []
    with requests.Session() as session:
        for op in steps:
            assert op.path is not None and op.method is not None
            kinds = {p.name: p.kind for p in id_params(op)}
            path, params, fake = op.path, {}, op.path
            arguments: dict[str, Any] = {}
            for p in op.parameters:
                if p.location == "path":
                    value = pick(p, kinds.get(p.name), answers)
                    if value is None and p.name in kinds:
                        value = from_docs(op)
                        outcome.docs_id = value is not None
                    if value is None:
                        value = documented(p)
                    arguments[p.name] = value
                    path = path.replace("{" + p.name + "}", quote(_text(value), safe=""))
                    made_up = f"{value}0" if p.name in kinds and fake == op.path else value
                    fake = fake.replace("{" + p.name + "}", quote(_text(made_up), safe=""))
                elif p.location == "query" and p.required:
                    arguments[p.name] = documented(p)
                    params[p.name] = _text(arguments[p.name])
            body = None
            if op.body_schema is not None and op.method.upper() in ("POST", "PUT", "PATCH"):
                body = sample_value(sanitize_schema(op.body_schema))
                if isinstance(body, dict):
                    arguments.update(body)
            if fake != path:  # control, sent first: it must change nothing
                control = session.request(
                    op.method.upper(), sandbox.url + fake, params=params, json=body, timeout=30
                )
                outcome.made_up += 1
                outcome.made_up_404 += control.status_code == 404
            r = session.request(
                op.method.upper(), sandbox.url + path, params=params, json=body, timeout=30
            )
            outcome.statuses.append(r.status_code)
            try:
                answer = r.json() if r.content else None
            except ValueError:
                answer = None
            if sent is not None:
                sent.append(Sent(op, arguments, r.status_code, answer))
            if r.status_code // 100 != 2:
                why = answer.get("error", "") if isinstance(answer, dict) else ""
                outcome.result = "failed"
                outcome.reason = f"{op.method.upper()} {op.path}: {r.status_code} {why}".strip()
                return outcome
            answers.append((answer, op))
    return outcome


def run(data: Path) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for domain in DOMAINS:
        catalog = ApiCatalog.from_file(data / "restbench" / f"{domain}_oas.json")
        queries = json.loads((data / "restbench" / f"{domain}.json").read_text(encoding="utf-8"))
        with Sandbox(catalog, seed=0) as sandbox:
            outcomes.extend(replay(sandbox, catalog, domain, q) for q in queries)
    return outcomes


def table(outcomes: Sequence[Outcome]) -> str:
    lines = [
        "| domain | gold paths | normalised (stray spaces) | not in spec | replayable "
        "| all-2xx | of which an id came from the docs | failed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for domain in (*DOMAINS, "total"):
        rows = [o for o in outcomes if domain in (o.domain, "total")]
        replayable = [o for o in rows if o.result != "not-in-spec"]
        ok = sum(o.result == "all-2xx" for o in rows)
        lines.append(
            f"| {domain} | {len(rows)} | {sum(o.normalised for o in rows)} "
            f"| {len(rows) - len(replayable)} | {len(replayable)} "
            f"| {ok} ({ok / max(len(replayable), 1):.1%}) "
            f"| {sum(o.docs_id and o.result == 'all-2xx' for o in rows)} "
            f"| {sum(o.result == 'failed' for o in rows)} |"
        )
    sent = sum(o.made_up for o in outcomes)
    refused = sum(o.made_up_404 for o in outcomes)
    lines += [
        "",
        f"Control: {refused} of {sent} steps that take an id, re-sent first with a made-up "
        "id (the taken id with a 0 appended), got a 404.",
    ]
    reasons = Counter(f"{o.result}: {o.reason}" for o in outcomes if o.result != "all-2xx")
    if reasons:
        lines += ["", "| first failing step (or the gold step that names no operation) | paths |"]
        lines.append("|---|---:|")
        lines += [f"| {why} | {n} |" for why, n in reasons.most_common()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    data = shared_data_dir()
    if data is None or not (data / "restbench").is_dir():
        print("the RestBench data is not there (../shared/data/restbench)", file=sys.stderr)
        return 2
    outcomes = run(data)
    text = table(outcomes)
    print(text)
    if not args.no_write:
        notes = (
            "\n\nEach query runs in a fresh session (`Sandbox.reset()`, the same as "
            "`POST /__sandbox__/reset`). Path parameters come from the earlier answers as "
            "an agent would take them (a field named like the parameter, or the `id` of an "
            "object of the parameter's kind); other required inputs come from the docs. "
            "TMDB's answers are its documented examples, with the requested id and the "
            "fields an earlier answer showed for it; Spotify documents no response "
            "examples, so its answers are generated from the schemas (seed 0). The one "
            "path whose first id came from the docs is TMDB's \"logo of Paramount "
            'Pictures", whose gold path starts at `GET /company/{company_id}`. The one '
            'failure is a gold path that skips a step: "What TV series has the director '
            'of Mulholland Drive directed?" goes from `GET /search/movie` straight to '
            "`GET /person/{person_id}/tv_credits`; a movie search holds no person ids, "
            "and the sandbox refuses a movie's id as a person's, as TMDB would."
        )
        write_section(
            "Sandbox: RestBench gold paths replayed",
            "python benchmarks/sandbox_paths.py",
            text + notes,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

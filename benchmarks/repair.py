"""Repair without a model: how often does a tool rewrite a broken call into exactly the
gold call, how often into something else, and how often does it leave the call to the
model? And does it leave gold calls alone?

Corpora (``benchmarks/_repair_corpora.py``, from ``../shared/data``): BFCL single calls,
GraphQL-RestBench programs and RestBench traces replayed against the sandbox, each gold
record mutated per row (name and parameter variants, coercible types, data flow; lossy
type controls that must not be repaired), plus the unmutated gold records. Every record
is an ``autofeedback audit`` record; the gold stays in the benchmark.

Per tool and record, one outcome:

* **gold**: the tool rewrote the call and the result is the gold (names equal, values
  equal as JSON values; programs statement by statement, see ``program_key``);
* **wrong**: the tool rewrote it into something else and says it is done;
* **left**: no rewrite, or one the tool itself says still needs the model or the user
  (autofeedback: an error finding without a repair remains; Refraction: the corrected
  sequence asks for a value; SPARC: a failed check carries no correction).

On gold records and on the lossy controls every rewrite counts as wrong.

Tools, on the same records in the same run:

* **autofeedback**: ``audit_lines(lines, catalog, retriever=ApiRetriever(), fix=True)``;
  a record it repaired has ``repaired`` in ``as_dict()`` (the record's call, program or
  trace written again). Before that API exists the column says "not available".
* **ALTK Refraction** and **ALTK SPARC** (static track), no LLM, run by
  ``benchmarks/_altk_peers.py`` in ALTK's own venv (see that file for how each is
  called). SPARC checks one concrete call, so it is not run on programs.

The ALTK venv (benchmark-only, 6 GB with torch; gitignored)::

    python3 -m venv benchmarks/.work/altk-venv
    benchmarks/.work/altk-venv/bin/pip install 'agent-lifecycle-toolkit[refraction]'

Without it the peers are skipped with that reason. Run::

    python benchmarks/repair.py                   # --per-code 10, writes RESULTS.md
    python benchmarks/repair.py --per-code 3 --no-write

Refraction takes most of the time (about 14 min at --per-code 10 on 2 shared cores, 300
records). Its and SPARC's results are kept in ``benchmarks/.work/repair`` and reused by a
later run on exactly the same records with the same adapter and ALTK version
(``--rerun-peers`` runs them again), so wiring or changing autofeedback's column reruns
in about two minutes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog
from benchmarks import _datasets
from benchmarks._repair_corpora import (
    Case,
    bfcl_cases,
    call_key,
    program_cases,
    program_from_peer,
    program_key,
    trace_cases,
    trace_key,
)
from benchmarks._results import write_section

WORK = Path(__file__).resolve().parent / ".work"
ALTK_PYTHON = WORK / "altk-venv" / "bin" / "python"
ADAPTER = Path(__file__).resolve().parent / "_altk_peers.py"
TOOLS = ("autofeedback", "Refraction", "SPARC")
CORPORA = {
    "bfcl": "BFCL single calls",
    "graphqlrestbench": "GraphQL-RestBench programs",
    "restbench": "RestBench traces (sandbox)",
}
#: the outcome of one tool on one record
GOLD, WRONG, LEFT = "gold", "wrong", "left"
#: seconds a tool spent per corpus
Seconds = dict[str, float]


# -- reading what a tool wrote back ---------------------------------------------------------


def _key_of_output(case: Case, output: Any) -> Any:
    """The comparison key of a rewritten record, in the record's own shape."""
    if case.corpus == "bfcl":
        if isinstance(output, Mapping) and "call" in output:
            output = output["call"]
        if not isinstance(output, Mapping):
            return ("unreadable", repr(output)[:200])
        return call_key(output.get("name"), output.get("arguments"))
    if case.corpus == "graphqlrestbench":
        if isinstance(output, Mapping) and "output" in output:
            output = output["output"]
        return (
            program_key(output) if isinstance(output, str) else ("unreadable", repr(output)[:200])
        )
    if isinstance(output, Mapping) and "steps" in output:
        output = output["steps"]
    if not isinstance(output, list):
        return ("unreadable", repr(output)[:200])
    calls = [s.get("call", s) if isinstance(s, Mapping) else {} for s in output]
    return trace_key(calls)


def judge(case: Case, rewritten: Any, complete: bool) -> str:
    """One outcome; ``rewritten`` is the key of the tool's rewrite (``None``: none). A
    rewrite into the record's own call changes nothing: left."""
    if rewritten is None or rewritten == _key_of_output(case, case.record):
        return LEFT
    if not case.expect_repair:
        return WRONG
    if rewritten == case.gold:
        return GOLD
    return WRONG if complete else LEFT


def autofeedback_outcome(case: Case, result: Mapping[str, Any]) -> str:
    """An ``AuditResult.as_dict()`` with ``fix=True`` read as an outcome."""
    if "repaired" not in result or result.get("repaired") is None:
        return LEFT
    unrepaired = [
        f
        for f in result.get("findings", ())
        if f.get("severity", "error") == "error" and not f.get("fix")
    ]
    return judge(case, _key_of_output(case, result["repaired"]), complete=not unrepaired)


def peer_outcome(case: Case, result: Mapping[str, Any] | None) -> str:
    """A peer's result line (``_altk_peers.py``) read as an outcome."""
    if not result or result.get("calls") is None:
        return LEFT
    calls = result["calls"]
    complete = bool(result.get("complete", True))
    if case.corpus == "bfcl":
        if len(calls) != 1:
            return judge(case, ("calls", len(calls)), complete)
        return judge(case, call_key(calls[0]["name"], calls[0]["arguments"]), complete)
    if case.corpus == "graphqlrestbench":
        text = program_from_peer(calls, case.program["calls"], case.program["back"])
        if text is None:  # a value left to ask the user
            return LEFT
        return judge(case, program_key(text), complete)
    # the steps of a trace carry labels var1..varN: Refraction may list independent
    # steps in another order, which runs the same calls
    order = {c["label"]: i for i, c in enumerate(case.peer["calls"])}
    if all(c.get("label") in order for c in calls):
        calls = sorted(calls, key=lambda c: order[c["label"]])
    return judge(case, trace_key(calls), complete)


# -- running the tools ----------------------------------------------------------------------


def run_autofeedback(cases: list[Case], data: Path) -> tuple[dict[str, str], Seconds] | str:
    """Outcome per record id and the seconds spent per corpus, or why there is no
    column."""
    from autofeedback import audit_lines

    try:  # the API of issue 27: a TypeError until the audit takes ``fix``
        list(audit_lines([], None, retriever=None, fix=True))  # type: ignore[call-arg]
    except TypeError as exc:
        return f"not available: audit_lines(..., fix=True) failed: {exc}"
    from retriever import ApiRetriever

    retriever = ApiRetriever()
    catalogs: dict[str | None, ApiCatalog | None] = {None: None}
    groups: dict[tuple[str, str | None], list[Case]] = defaultdict(list)
    for case in cases:
        groups[case.corpus, case.catalog].append(case)
        if case.catalog not in catalogs:
            catalogs[case.catalog] = ApiCatalog.from_file(
                data / "restbench" / f"{case.catalog}_oas.json"
            )
    # the model loads on the first semantic check: outside the clock, as the peers' imports
    first = cases[0]
    list(audit_lines([json.dumps(first.record)], catalogs[first.catalog], retriever=retriever))
    outcomes: dict[str, str] = {}
    seconds: Seconds = defaultdict(float)
    for (corpus, key), group in groups.items():
        lines = [json.dumps(c.record) for c in group]
        start = time.perf_counter()
        results = list(audit_lines(lines, catalogs[key], retriever=retriever, fix=True))  # type: ignore[call-arg]
        seconds[corpus] += time.perf_counter() - start
        for case, result in zip(group, results, strict=True):
            outcomes[case.record["id"]] = autofeedback_outcome(case, result.as_dict())
    return outcomes, seconds


def run_peers(
    cases: list[Case], timeout: float, per_call: float, rerun: bool
) -> dict[str, Any] | str:
    """The peers' result line per record id (plus ``"_start"``: the adapter's start-up
    seconds, ``"_reused"``: whether an earlier run on exactly these inputs answered), or
    why there are none."""
    if not ALTK_PYTHON.exists():
        return (
            "skipped: the ALTK venv is absent (python3 -m venv benchmarks/.work/altk-venv && "
            "benchmarks/.work/altk-venv/bin/pip install 'agent-lifecycle-toolkit[refraction]')"
        )
    folder = WORK / "repair"
    folder.mkdir(parents=True, exist_ok=True)
    source, target, log = (
        folder / "peers-in.jsonl",
        folder / "peers-out.jsonl",
        folder / "peers.log",
    )
    lines = [
        json.dumps(
            {
                "id": case.record["id"],
                "peers": ["refraction"]
                if case.corpus == "graphqlrestbench"
                else ["refraction", "sparc"],
                **case.peer,
            },
            default=str,
        )
        for case in cases
    ]
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()
    stamp = folder / "peers-out.sha256"
    reused = (
        not rerun
        and target.exists()
        and stamp.exists()
        and stamp.read_text().split()[:2] == [digest, altk_key()]
        and len(target.read_text(encoding="utf-8").splitlines()) == len(lines)
    )
    start = time.perf_counter()
    if not reused:
        source.write_text(text, encoding="utf-8")
        stamp.unlink(missing_ok=True)
        with log.open("w", encoding="utf-8") as err:
            try:
                subprocess.run(
                    [str(ALTK_PYTHON), str(ADAPTER), str(source), str(target), str(per_call)],
                    stdout=err,
                    stderr=subprocess.STDOUT,
                    timeout=timeout,
                    check=True,
                    cwd=folder,
                )
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                return f"skipped: the ALTK adapter failed ({exc}); see {log}"
        wall = time.perf_counter() - start
    results: dict[str, Any] = {}
    for line in target.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        results[item["id"]] = item
    spent = sum(
        item.get(p, {}).get("seconds", 0.0)
        for item in results.values()
        for p in ("refraction", "sparc")
    )
    if reused:
        results["_start"] = float(stamp.read_text().split()[2])
    else:
        results["_start"] = wall - spent
        stamp.write_text(f"{digest} {altk_key()} {results['_start']:.1f}\n")
    results["_reused"] = reused
    return results


def altk_key() -> str:
    """The adapter's and the venv's identity: a change to either reruns the peers."""
    adapter = hashlib.sha256(ADAPTER.read_bytes()).hexdigest()[:12]
    dist = sorted(
        p.name
        for p in ALTK_PYTHON.parents[1].glob("lib/python*/site-packages/agent_lifecycle_toolkit-*")
    )
    return f"{adapter}:{','.join(dist) or 'unknown'}"


# -- the table -------------------------------------------------------------------------------


def _cell(counts: Counter[str], n: int, expect: bool) -> str:
    if not n:
        return "–"
    if not expect:
        return f"{counts[WRONG]} wrong / {counts[LEFT]} left"
    return f"{counts[GOLD] / n:.2f} / {counts[WRONG] / n:.2f} / {counts[LEFT] / n:.2f}"


def table(
    cases: list[Case], outcomes: Mapping[str, Mapping[str, str]], notes: Mapping[str, str]
) -> str:
    lines: list[str] = []
    for corpus, title in CORPORA.items():
        mine = [c for c in cases if c.corpus == corpus]
        if not mine:
            continue
        tools = [t for t in TOOLS if not (t == "SPARC" and corpus == "graphqlrestbench")]
        lines += [
            f"**{title}** (repaired to gold / wrong repair / left to the model, share of the row's "
            "records; gold records and lossy controls: repairs applied, each one wrong)",
            "",
            "| row | code | records | " + " | ".join(tools) + " |",
            "|---|---|---:|" + "---|" * len(tools),
        ]
        rows = [*dict.fromkeys(c.row for c in mine if c.row != "gold"), "gold"]
        for row in rows:
            group = [c for c in mine if c.row == row]
            cells = []
            for tool in tools:
                if tool in notes:
                    cells.append("n/a")
                    continue
                got = Counter(outcomes[tool].get(c.record["id"], LEFT) for c in group)
                cells.append(_cell(got, len(group), group[0].expect_repair))
            label = "**gold records (unmutated)**" if row == "gold" else row
            lines.append(
                f"| {label} | {group[0].code or '–'} | {len(group)} | " + " | ".join(cells) + " |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--per-code", type=int, default=10, help="records per mutation row (default 10)"
    )
    parser.add_argument(
        "--gold", type=int, help="gold records per corpus (default: 2 x --per-code)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpora", default="bfcl,graphqlrestbench,restbench")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument(
        "--peer-timeout", type=float, default=3600.0, help="seconds for all peer runs"
    )
    parser.add_argument(
        "--refraction-timeout",
        type=float,
        default=0.0,
        help="seconds per Refraction call, its own ``timeout`` (default 0: none, as "
        "RefractionComponent calls it; with one, ALTK joins its worker process before "
        "reading the result, so a large result takes the whole timeout)",
    )
    parser.add_argument(
        "--rerun-peers",
        action="store_true",
        help="run the peers even where an earlier run on exactly these inputs (same records, "
        "same adapter and ALTK version) left its results in benchmarks/.work/repair",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(list(argv) if argv is not None else None)
    data = _datasets.shared_data_dir()
    if data is None:
        print("shared data (../shared/data) not found; nothing to measure", file=sys.stderr)
        return 2
    wall = time.perf_counter()
    gold_n = args.gold if args.gold is not None else 2 * args.per_code
    chosen = args.corpora.split(",")
    cases: list[Case] = []
    if "bfcl" in chosen:
        cases += bfcl_cases(args.per_code, gold_n, args.seed)
    if "graphqlrestbench" in chosen:
        cases += program_cases(data, args.per_code, gold_n, args.seed)
    if "restbench" in chosen:
        cases += trace_cases(data, args.per_code, gold_n, args.seed)
    built = time.perf_counter() - wall

    outcomes: dict[str, dict[str, str]] = {t: {} for t in TOOLS}
    notes: dict[str, str] = {}
    spent: dict[str, Seconds] = {}
    ours = run_autofeedback(cases, data)
    if isinstance(ours, str):
        notes["autofeedback"] = ours
    else:
        outcomes["autofeedback"], spent["autofeedback"] = ours
    peers = (
        run_peers(cases, args.peer_timeout, args.refraction_timeout, args.rerun_peers)
        if not args.no_peers
        else "skipped: --no-peers"
    )
    extra: list[str] = []
    if isinstance(peers, str):
        notes["Refraction"] = notes["SPARC"] = peers
    else:
        for tool, key in (("Refraction", "refraction"), ("SPARC", "sparc")):
            ran = [
                (c, peers[c.record["id"]][key])
                for c in cases
                if key in peers.get(c.record["id"], {})
            ]
            spent[tool] = defaultdict(float)
            for c, result in ran:
                outcomes[tool][c.record["id"]] = peer_outcome(c, result)
                spent[tool][c.corpus] += result["seconds"]
            errors = Counter(str(r["error"])[:60] for _, r in ran if r.get("error"))
            if errors:
                shown = ", ".join(f"{e!r} ×{n}" for e, n in errors.most_common(3))
                extra.append(f"- {tool} errors: {shown}")
        llm = max(
            (
                peers[c.record["id"]]["sparc"].get("llm_calls", 0)
                for c in cases
                if "sparc" in peers.get(c.record["id"], {})
            ),
            default=0,
        )
        extra.append(f"- LLM calls SPARC made (its client refuses and counts them): {llm}")
        extra.append(
            f"- ALTK start-up (imports, once per run, not in the rates): {peers['_start']:.0f} s"
        )
        if peers["_reused"]:
            extra.append(
                "- the peers' results (and their seconds) come from an earlier run on exactly "
                "these records (benchmarks/.work/repair; --rerun-peers runs them again)"
            )

    lines = [
        table(cases, outcomes, notes),
        "Throughput, records per second (each tool alone on the same records, one process, "
        "2 shared CPU cores; autofeedback: the audit with fix, the retriever's model loaded "
        "beforehand):",
        "",
        "| corpus | " + " | ".join(TOOLS) + " |",
        "|---|" + "---:|" * len(TOOLS),
    ]
    for corpus, title in CORPORA.items():
        mine = [c for c in cases if c.corpus == corpus]
        if not mine:
            continue
        cells = []
        for tool in TOOLS:
            took = spent.get(tool, {}).get(corpus)
            ran = [c for c in mine if c.record["id"] in outcomes[tool]]
            cells.append(f"{len(ran) / took:.1f}" if took and ran else "n/a")
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    lines += ["", *extra, *(f"- {tool}: {text}" for tool, text in notes.items())]
    lines += [
        "",
        f"{len(cases)} records (seed {args.seed}, --per-code {args.per_code}, "
        f"gold {gold_n} per corpus), built in {built:.0f} s; "
        f"wall time {time.perf_counter() - wall:.0f} s.",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        command = "python benchmarks/repair.py" + (
            f" --per-code {args.per_code}" if args.per_code != 10 else ""
        )
        write_section("Repair", command, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

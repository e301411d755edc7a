"""The paper's Tables 3 and 5 on this machine: does feedback make a real model's
requests correct, and what does it cost?

Tasks from ``../shared/data`` (API-Bank level-1 with its docs and gold calls, ToolAlpaca
eval_real with its OpenAPI docs), each served by the sandbox on 127.0.0.1 in terse mode
(errors carry only an ``info_code``, so only the docs explain them). For each setting —
Base, Static, Dynamic, Static & Dynamic, and Static & Dynamic without document retrieval
(DAC w/o DR) — report accuracy (the final request names the gold API and carries the gold
call's required arguments, values normalised), average tokens per task, the paper's
overhead (average tokens / accuracy), wall time per task and the share of tasks that
stop at a budget.

    python benchmarks/loop.py                       # embedded local model, fixed subset
    python benchmarks/loop.py --llm http://127.0.0.1:8000/v1 --model NAME --per-dataset 50

The fixed subset is every k-th task of each dataset (``--per-dataset`` tasks each), so
runs are comparable; 2 CPU cores cannot run the full sets with a local model in
reasonable time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, FeedbackLoop, Sandbox, Scanner, load_llm
from autofeedback._check_name import check_name
from autofeedback._model import ApiRequest
from autofeedback._resolve import request_args
from benchmarks import _datasets
from benchmarks._results import write_section

SETTINGS: dict[str, dict[str, Any]] = {
    "Base": {"static": False, "dynamic": False},
    "Static": {"static": True, "dynamic": False},
    "Dynamic": {"static": False, "dynamic": True},
    "Static & Dynamic": {"static": True, "dynamic": True},
    "Static & Dynamic w/o DR": {"static": True, "dynamic": True, "retrieve_docs": False},
}


@dataclass
class Outcome:
    correct: bool
    tokens: int
    seconds: float
    at_budget: bool
    attempts: int
    stop: str


def _norm(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_norm(v) for v in value) + "]"
    return " ".join(str(value).strip().lower().split())


def final_call(request: ApiRequest | None, catalog: ApiCatalog) -> tuple[str, dict[str, Any]]:
    """The API name and arguments a final request amounts to, whatever its format."""
    if request is None:
        return "", {}
    named = check_name(request, catalog)
    name = named.operation.name if named.operation else (request.name or "")
    args = {a.name: a.value for a in request_args(request, named.path_params)}
    return name, args


def matches(
    request: ApiRequest | None, gold: tuple[str, Mapping[str, Any]], catalog: ApiCatalog
) -> bool:
    name, args = final_call(request, catalog)
    if name != gold[0]:
        return False
    op = catalog.get(name)
    required = {p.name for p in op.parameters if p.required} if op else set(gold[1])
    return all(
        k in args and _norm(args[k]) == _norm(v) for k, v in gold[1].items() if k in required
    )


def subset(tasks: list[_datasets.Task], n: int) -> list[_datasets.Task]:
    usable = [t for t in tasks if len(t.calls) == 1]
    step = max(1, len(usable) // n)
    return usable[::step][:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", default="local:0.5b")
    parser.add_argument("--model")
    parser.add_argument("--per-dataset", type=int, default=20)
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if _datasets.shared_data_dir() is None:
        print("shared data (../shared/data) not found; nothing to measure", file=sys.stderr)
        return 2
    llm = load_llm(args.llm, **({"model": args.model} if args.model else {}))
    tasks = subset(_datasets.load_api_bank(), args.per_dataset) + subset(
        _datasets.load_toolalpaca(), args.per_dataset
    )
    catalogs: dict[str, ApiCatalog] = {}
    sandboxes: dict[str, Sandbox] = {}
    scanners: dict[str, Scanner] = {}
    indexes: dict[str, Any] = {}
    from doc_index import DocIndex
    from retriever import ApiRetriever

    retriever = ApiRetriever()
    results: dict[str, list[Outcome]] = {}
    chosen = [s.strip() for s in args.settings.split(",")]
    try:
        for setting in chosen:
            outcomes = []
            for task in tasks:
                key = task.spec_key
                if key not in catalogs:
                    catalogs[key] = ApiCatalog.from_obj(task.spec, source=task.dataset)
                    sandboxes[key] = Sandbox(catalogs[key], terse=True).start()
                    scanners[key] = Scanner(catalogs[key], retriever=retriever)
                    indexes[key] = DocIndex.build(catalogs[key])
                catalog = catalogs[key]
                loop = FeedbackLoop(
                    llm,
                    catalog,
                    base_url=sandboxes[key].url,
                    scanner=scanners[key],
                    doc_index=indexes[key],
                    timeout=10.0,
                    **SETTINGS[setting],
                )
                started = time.perf_counter()
                result = loop.run(task.instruction)
                seconds = time.perf_counter() - started
                outcomes.append(
                    Outcome(
                        correct=matches(result.request, task.calls[0], catalog),
                        tokens=result.tokens,
                        seconds=seconds,
                        at_budget=result.stop_reason in ("static-budget", "dynamic-budget"),
                        attempts=len(result.attempts),
                        stop=result.stop_reason,
                    )
                )
                print(
                    f"{setting:<24} {task.dataset:<10} {task.id:<18} "
                    f"{'ok ' if outcomes[-1].correct else 'bad'} {result.stop_reason:<15} "
                    f"{len(result.attempts)} attempts {result.tokens} tok {seconds:.1f} s",
                    flush=True,
                )
            results[setting] = outcomes
    finally:
        for sandbox in sandboxes.values():
            sandbox.stop()

    table = _table(results, tasks, args)
    print(table)
    if not args.no_write:
        cmd = "python benchmarks/loop.py" + (
            f" --llm {args.llm}" if args.llm != "local:0.5b" else ""
        )
        if args.per_dataset != 20:
            cmd += f" --per-dataset {args.per_dataset}"
        write_section(f"Feedback loop (paper Tables 3 and 5), {args.llm}", cmd, table)
    return 0


def _table(
    results: dict[str, list[Outcome]], tasks: list[_datasets.Task], args: argparse.Namespace
) -> str:
    lines = [
        f"Model: `{args.llm}`{' ' + args.model if args.model else ''}; tasks: the fixed subset "
        f"of {args.per_dataset} API-Bank level-1 + {args.per_dataset} ToolAlpaca single-call "
        f"tasks (every k-th task; {len(tasks)} in all), served by the sandbox in terse mode on "
        "127.0.0.1; max 3 static and 2 dynamic rounds. Measured on 2 CPU cores.",
        "",
        "| setting | accuracy | avg tokens / task | overhead (tokens / accuracy) "
        "| wall time / task (s) | stopped at budget | avg attempts "
        "| model repeated a failed request | never sent (E1-E3 left) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ablation = "Static & Dynamic w/o DR"
    for setting, outs in results.items():
        if setting == ablation:
            continue
        acc = sum(o.correct for o in outs) / len(outs)
        tok = statistics.mean(o.tokens for o in outs)
        overhead = f"{tok / acc:.0f}" if acc else "∞"
        lines.append(
            f"| {setting} | {acc:.3f} | {tok:.0f} | {overhead} "
            f"| {statistics.mean(o.seconds for o in outs):.1f} "
            f"| {sum(o.at_budget for o in outs) / len(outs):.3f} "
            f"| {statistics.mean(o.attempts for o in outs):.2f} "
            f"| {sum(o.stop == 'repeated' for o in outs) / len(outs):.3f} "
            f"| {sum(o.stop in ('blocked', 'static-budget') for o in outs) / len(outs):.3f} |"
        )
    if ablation in results and "Static & Dynamic" in results:
        lines += [
            "",
            "What the document retrieval adds (paper Table 5, DAC w/o DR):",
            "",
            "| setting | accuracy | avg tokens / task | avg attempts |",
            "|---|---|---|---|",
        ]
        for setting in ("Static & Dynamic", ablation):
            outs = results[setting]
            lines.append(
                f"| {setting} | {sum(o.correct for o in outs) / len(outs):.3f} "
                f"| {statistics.mean(o.tokens for o in outs):.0f} "
                f"| {statistics.mean(o.attempts for o in outs):.2f} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

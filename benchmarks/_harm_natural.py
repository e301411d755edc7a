"""Part (b) of ``benchmarks/repair_harm.py``: natural mistakes of a small local model on
BFCL, scored against BFCL's possible answers before and after the Decider's repair.

The model answers each task once, greedily, with this prompt (kept simple on purpose):

* system: the task's functions as BFCL gives them (a JSON list of function specs), and
  "answer with the function call(s) only, one line of JSON: a list of {"name",
  "arguments"}" (one line: fewer tokens to write on 2 CPU cores);
* user: the task's question (BFCL's user turns, joined by newlines).

Answers are cached in ``benchmarks/.work/repair_harm/answers.jsonl`` (gitignored), one
line per answer, keyed by the task id and a hash of the model name and the exact
messages; a rerun with the same prompt never asks the model again, and scoring alone
(:func:`load_answers`) needs no model at all.

Scoring follows BFCL's AST checker in spirit: a call is right when its function name is
the gold one, every parameter it passes is a gold parameter with a value among the
allowed ones (strings compared case-insensitively without spaces and punctuation, ints
accepted for floats, lists and dicts element by element), and every gold parameter that
may not be omitted is there. A task is right when its calls match the gold calls one to
one, in any order. The *distance* of an answer from the gold (for "closer"/"further") is
the smallest, over all pairings of calls, of: 1 for a wrong function name (2 when it is
another listed function: that call runs the wrong operation, a made-up name cannot run),
plus 1 per gold parameter missing or with a value not allowed, plus 1 per parameter
passed that the gold call does not have; an unpaired call (model or gold) costs 1 plus
its parameters. BFCL's gold cannot tell an argument the user asked for that no
parameter takes (``genre``) from noise: dropping it counts as closer.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ANSWERS",
    "CATEGORIES",
    "BfclTask",
    "answer_key",
    "answers_file",
    "call_distance",
    "generate",
    "load_answers",
    "load_tasks",
    "messages_for",
    "task_distance",
]

WORK = Path(__file__).resolve().parent / ".work" / "repair_harm"
#: the cache: a folder of ``answers*.jsonl`` files (one per model written by
#: :func:`generate`), or one such file
ANSWERS = WORK

#: BFCL category -> file stem
CATEGORIES: Mapping[str, str] = {
    "simple": "BFCL_v4_simple_python",
    "multiple": "BFCL_v4_multiple",
    "parallel": "BFCL_v4_parallel",
    "parallel-multiple": "BFCL_v4_parallel_multiple",
}

SYSTEM = (
    "You are a function-calling assistant. These are the functions you can call, as JSON "
    "function specs:\n{functions}\n\n"
    "Answer the user's request with the function call(s) it needs and nothing else: "
    'one line of JSON, a list with one object per call: [{{"name": "<function name>", '
    '"arguments": {{"<parameter>": <value>, ...}}}}]'
)


@dataclass(frozen=True)
class BfclTask:
    """One BFCL task: its question, its functions and BFCL's allowed answers."""

    id: str
    category: str
    question: str
    functions: list[dict[str, Any]]
    #: ``[{function name: {parameter: [allowed values]}}]``, one entry per gold call
    gold: list[dict[str, dict[str, list[Any]]]]


def data_dir() -> Path:
    """``bfcl/`` of the shared data (``$AUTOFEEDBACK_SHARED_DATA`` or ``<repo>/../shared/data``)."""
    from benchmarks._datasets import DataUnavailable, shared_data_dir

    root = shared_data_dir()
    if root is None or not (root / "bfcl").is_dir():
        raise DataUnavailable(
            "BFCL data not found: set AUTOFEEDBACK_SHARED_DATA (see ../shared/data)"
        )
    return root / "bfcl"


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _question(turns: Iterable[Any]) -> str:
    texts: list[str] = []
    for turn in turns:
        for m in turn if isinstance(turn, list) else [turn]:
            if isinstance(m, dict) and m.get("role") == "user":
                texts.append(str(m.get("content", "")))
    return "\n".join(texts)


def load_tasks(categories: Sequence[str] = tuple(CATEGORIES)) -> list[BfclTask]:
    """The tasks of ``categories``, interleaved (one of each category in turn), so that
    the first N tasks cover every category."""
    root = data_dir()
    per: list[list[BfclTask]] = []
    for category in categories:
        stem = CATEGORIES[category]
        answers = {
            a["id"]: a["ground_truth"] for a in _jsonl(root / "possible_answer" / f"{stem}.json")
        }
        per.append(
            [
                BfclTask(
                    q["id"], category, _question(q["question"]), q["function"], answers[q["id"]]
                )
                for q in _jsonl(root / f"{stem}.json")
                if q["id"] in answers
            ]
        )
    out: list[BfclTask] = []
    for group in itertools.zip_longest(*per):
        out.extend(t for t in group if t is not None)
    return out


def messages_for(task: BfclTask) -> list[dict[str, str]]:
    """The prompt: the functions as JSON specs, the question, ask for the call(s)."""
    functions = json.dumps(task.functions, ensure_ascii=False)
    return [
        {"role": "system", "content": SYSTEM.format(functions=functions)},
        {"role": "user", "content": task.question},
    ]


def answer_key(model: str, task: BfclTask) -> str:
    payload = json.dumps(
        {"model": model, "id": task.id, "messages": messages_for(task)}, sort_keys=True
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def answers_file(folder: Path, model: str) -> Path:
    """Where :func:`generate` appends ``model``'s answers in the cache ``folder``."""
    return folder / f"answers-{model.replace('/', '_')}.jsonl"


def load_answers(path: Path = ANSWERS) -> dict[str, dict[str, Any]]:
    """The cached answers by key, from ``path`` (a file, or a folder's ``answers*.jsonl``);
    a torn last line, from a killed run, is skipped."""
    files = sorted(path.glob("answers*.jsonl")) if path.is_dir() else [path]
    out: dict[str, dict[str, Any]] = {}
    for file in files:
        if not file.is_file():
            continue
        with file.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                out[record["key"]] = record
    return out


def generate(
    tasks: Sequence[BfclTask], model: str = "1.5b", *, path: Path = ANSWERS, log: Any = sys.stderr
) -> int:
    """Ask the local model for every task not cached yet; returns how many were asked.
    Each answer is appended (and flushed) as soon as it is there."""
    cached = load_answers(path)
    todo = [t for t in tasks if answer_key(model, t) not in cached]
    if not todo:
        return 0
    from autofeedback.loop._llm import LLMError, LocalLLM

    llm = LocalLLM(model, max_tokens=512, n_ctx=8192)
    target = answers_file(path, model) if path.is_dir() or not path.suffix else path
    target.parent.mkdir(parents=True, exist_ok=True)
    asked = 0
    with target.open("a", encoding="utf-8") as out:
        for task in todo:
            started = time.perf_counter()
            try:
                text = llm.complete(messages_for(task))
                error = None
            except LLMError as exc:
                text, error = "", str(exc)
            seconds = round(time.perf_counter() - started, 2)
            record = {
                "key": answer_key(model, task),
                "id": task.id,
                "category": task.category,
                "model": model,
                "text": text,
                "error": error,
                "seconds": seconds,
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
            asked += 1
            print(f"[{asked}/{len(todo)}] {task.id} {seconds}s", file=log, flush=True)
    llm.close()
    return asked


# -- scoring ------------------------------------------------------------------------


def _norm_string(s: str) -> str:
    # BFCL's checker: lower case, without spaces and ,./-_*^ punctuation
    return re.sub(r"[ ,./\-_*^]", "", s).lower()


def value_allowed(value: Any, allowed: Sequence[Any]) -> bool:
    """Whether ``value`` is one of BFCL's ``allowed`` values."""
    return any(_same(value, a) for a in allowed if a != "")


def _same(value: Any, gold: Any) -> bool:
    if isinstance(gold, bool) or isinstance(value, bool):
        return type(gold) is type(value) and gold == value
    if isinstance(gold, int | float) and isinstance(value, int | float):
        if isinstance(gold, int) and isinstance(value, float):
            return False  # an int parameter given a float is wrong in BFCL
        return math.isclose(float(value), float(gold), rel_tol=0, abs_tol=1e-9)
    if isinstance(gold, str) and isinstance(value, str):
        return _norm_string(value) == _norm_string(gold)
    if isinstance(gold, list) and isinstance(value, list | tuple):
        return len(value) == len(gold) and all(
            _same(v, g) for v, g in zip(value, gold, strict=True)
        )
    if isinstance(gold, dict) and isinstance(value, dict):
        # a nested dict maps each key to its allowed values
        for k, allowed in gold.items():
            may_omit = isinstance(allowed, list) and "" in allowed
            if k not in value:
                if not may_omit:
                    return False
                continue
            if not (
                value_allowed(value[k], allowed)
                if isinstance(allowed, list)
                else _same(value[k], allowed)
            ):
                return False
        return all(k in gold for k in value)
    return bool(value == gold)


def call_distance(
    name: str,
    arguments: Mapping[str, Any],
    gold: Mapping[str, Mapping[str, Sequence[Any]]],
    documented: frozenset[str] = frozenset(),
) -> int:
    """0 when the call is one of the gold call's allowed forms, else how far it is: a
    wrong function name costs 1, or 2 when it is another *documented* function (that
    call runs the wrong operation; a made-up name cannot run); each gold parameter
    missing or with a value not allowed costs 1, and so does each parameter the gold
    call does not have."""
    ((gold_name, params),) = gold.items()
    cost = 0 if name == gold_name else (2 if name in documented else 1)
    for param, allowed in params.items():
        if param in arguments:
            if not value_allowed(arguments[param], allowed):
                cost += 1
        elif "" not in allowed:
            cost += 1
    cost += sum(1 for k in arguments if k not in params)
    return cost


def task_distance(
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    gold: Sequence[Mapping[str, Any]],
    documented: Iterable[str] = (),
) -> int:
    """The distance of ``calls`` from the gold calls over the best pairing (0: right); a
    call or gold call left unpaired costs 1 plus its (required) parameters.
    ``documented``: the task's function names (see :func:`call_distance`)."""
    gold = list(gold)
    names = frozenset(documented)

    def alone_model(call: tuple[str, Mapping[str, Any]]) -> int:
        return 1 + len(call[1])

    def alone_gold(g: Mapping[str, Any]) -> int:
        ((_, params),) = g.items()
        return 1 + sum(1 for allowed in params.values() if "" not in allowed)

    n, m = len(calls), len(gold)
    if n == 0:
        return sum(alone_gold(g) for g in gold)
    cost = [[call_distance(c[0], c[1], g, names) for g in gold] for c in calls]
    if max(n, m) > 7:  # too many pairings to try them all: each gold call its closest
        total, free = 0, set(range(n))
        for j in range(m):
            if not free:
                total += alone_gold(gold[j])
                continue
            i = min(free, key=lambda k: cost[k][j])
            free.discard(i)
            total += cost[i][j]
        return total + sum(alone_model(calls[i]) for i in free)
    best = math.inf
    if n <= m:
        for perm in itertools.permutations(range(m), n):
            total = sum(cost[i][perm[i]] for i in range(n))
            total += sum(alone_gold(gold[j]) for j in range(m) if j not in perm)
            best = min(best, total)
    else:
        for perm in itertools.permutations(range(n), m):
            total = sum(cost[perm[j]][j] for j in range(m))
            total += sum(alone_model(calls[i]) for i in range(n) if i not in perm)
            best = min(best, total)
    return int(best)


def _main(argv: Sequence[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="generate the cached BFCL answers for repair_harm")
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--llm", default="local:1.5b")
    args = parser.parse_args(argv)
    tasks = load_tasks([c.strip() for c in args.categories.split(",") if c.strip()])
    if args.tasks is not None:
        tasks = tasks[: args.tasks]
    generate(tasks, args.llm.removeprefix("local:"))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))

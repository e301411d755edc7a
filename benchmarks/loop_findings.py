"""What the scanner says about each Base answer of a finished ``loop.py`` run, and which
findings the repaired and the regressed tasks carried: the per-task view behind the
paired table (which checks repair, which break correct calls).

    python benchmarks/loop_findings.py --checkpoint /tmp/loop15/loop-1.5b-200.jsonl

The Base answers are re-scanned at the current commit with the real retriever, against
the same intent the loop's scanner saw (``loop.intent``). Accuracy here is the strict
judge of the checkpoint's ``correct`` flag.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, Scanner
from benchmarks import loop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--setting", default="Static & Dynamic")
    args = parser.parse_args(argv)
    rows: dict[str, dict[str, Any]] = {}
    for line in args.checkpoint.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[row["task"]] = row["outcomes"]
    tasks = {t.id: t for t in loop.task_list(len(rows)) if t.id in rows}
    from retriever import ApiRetriever

    retriever = ApiRetriever()
    scanners: dict[str, Scanner] = {}

    def codes(task: Any, final: str) -> list[str]:
        if not final:
            return ["(no call)"]
        if task.spec_key not in scanners:
            catalog = ApiCatalog.from_obj(task.spec, source=task.dataset)
            scanners[task.spec_key] = Scanner(catalog, retriever=retriever)
        name, _, rest = final.partition("(")
        call = {"name": name, "arguments": json.loads(rest[:-1])}
        found = scanners[task.spec_key].iter_findings(call, instruction=loop.intent(task))
        return [f"{f.code} {f.severity}" for f in found]

    per_code: Counter[tuple[str, str]] = Counter()
    changed: list[tuple[str, str, list[str], str, str]] = []
    for tid, outcomes in rows.items():
        base, other = outcomes["Base"], outcomes[args.setting]
        found = codes(tasks[tid], base["final"])
        for code in sorted(set(found)):
            per_code[(code, "Base right" if base["correct"] else "Base wrong")] += 1
        if base["correct"] != other["correct"]:
            kind = "repaired" if other["correct"] else "regressed"
            changed.append((kind, tid, found, base["final"], other["final"]))
    print("| finding on the Base answer | Base right | Base wrong |\n|---|---:|---:|")
    for code in sorted({c for c, _ in per_code}):
        print(f"| {code} | {per_code[(code, 'Base right')]} | {per_code[(code, 'Base wrong')]} |")
    print(f"\n| {args.setting} | task | findings on the Base answer | Base | {args.setting} |")
    print("|---|---|---|---|---|")
    for kind, tid, found, before, after in sorted(changed):
        cut = 70
        print(
            f"| {kind} | {tid} | {', '.join(found) or '-'} | `{before[:cut]}` | `{after[:cut]}` |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Clean calls counted in instructions, next to their peers (issue 42): the part of
``speed.py`` run by ``python benchmarks/speed.py --only-instructions``.

Times on this shared 2-core VM move by 20-40 % from one run to the next as other jobs
come and go; the number of instructions a process executes does not (it moves by well
under 1 %). Each process below runs under valgrind's cachegrind (``--cache-sim=no``,
instruction counts only), so the ratios do not depend on the load. Instructions are not
time (a cache miss costs more than an add), which is why the timed table stays the
result; this one says where the work is.

* **Clean calls**: the gold single calls of BFCL simple and multiple (``{"tools",
  "call"}`` records, each with its own tool list) through ``autofeedback audit`` with its
  default checks and an empty cache, against the strict peers of the timed table
  (``_record_cost.STRICT_PEER``: python-jsonschema and jsonschema-rs, each validator
  built once per schema): one record (start-up), the 600 records once (every tool list
  new), and 10x (the tool lists recur).
* From those, the cost of a record whose tool list is new, and of one whose tool list
  was seen, on each side.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._record_cost import STRICT_PEER
from benchmarks._records import gold_lines

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work"
CLI = "from autofeedback.cli import main; main()"


def count(argv: list[str], cache: Path | None = None) -> int:
    """The instructions the process ``argv`` executes."""
    env_args = [] if cache is None else ["env", f"AUTOFEEDBACK_CACHE_DIR={cache}"]
    valgrind = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
    ]
    done = subprocess.run(
        [*env_args, *valgrind, *argv], capture_output=True, text=True, check=False, cwd=ROOT
    )
    for line in done.stderr.splitlines():
        if "I   refs:" in line or "I refs:" in line:
            return int(line.rsplit(":", 1)[1].strip().replace(",", ""))
    raise RuntimeError(f"{argv[:4]}: no instruction count: {done.stderr[-2000:]}")


def _logs() -> dict[str, tuple[Path, int]]:
    WORK.mkdir(parents=True, exist_ok=True)
    lines = gold_lines()
    logs = {}
    for name, times, keep in (("one record", 1, 1), ("once", 1, None), ("x10", 10, None)):
        path = WORK / f"bfcl_gold_{name.replace(' ', '_')}.jsonl"
        chosen = lines[:keep] if keep else lines
        path.write_text("".join(line + "\n" for line in chosen) * times, encoding="utf-8")
        logs[name] = (path, len(chosen) * times)
    return logs


def table() -> str:
    if shutil.which("valgrind") is None:
        return "valgrind is not installed here: nothing was counted.\n"
    logs = _logs()
    counts: dict[str, dict[str, int]] = {"ours": {}, "jsonschema": {}, "jsonschema_rs": {}}
    for what, (path, _) in logs.items():
        with tempfile.TemporaryDirectory() as cache:
            counts["ours"][what] = count(
                [sys.executable, "-c", CLI, "audit", str(path), "--format", "jsonl", "-o",
                 "/dev/null"], Path(cache),
            )  # fmt: skip
        for engine in ("jsonschema", "jsonschema_rs"):
            counts[engine][what] = count(
                [sys.executable, "-c", STRICT_PEER, engine, str(path), str(ROOT)]
            )
    records = {what: n for what, (_, n) in logs.items()}
    rows = [
        "| measure (millions of instructions) | autofeedback | python-jsonschema | ratio "
        "(peer / ours: > 1, ours fewer) | jsonschema-rs | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for what in logs:
        ours = counts["ours"][what]
        cells = [f"{ours / 1e6:,.0f}"]
        for engine in ("jsonschema", "jsonschema_rs"):
            theirs = counts[engine][what]
            cells += [f"{theirs / 1e6:,.0f}", f"{theirs / ours:.2f}x"]
        n = records[what]
        plural = "s" if n != 1 else ""
        rows.append(f"| clean calls: `audit`, whole process, {what} ({n:,} record{plural}) | "
                    + " | ".join(cells) + " |")  # fmt: skip
    # per record: a new tool list (once minus start-up), a tool list seen (x10 minus once)
    per: dict[str, tuple[float, float]] = {}
    for side in counts:
        c = counts[side]
        new = (c["once"] - c["one record"]) / (records["once"] - records["one record"])
        seen = (c["x10"] - c["once"]) / (records["x10"] - records["once"])
        per[side] = (new, seen)
    for i, what in enumerate(("a record, its tool list new", "a record, its tool list seen")):
        mine = per["ours"][i]
        cells = [f"{mine / 1e6:.2f}"]
        for engine in ("jsonschema", "jsonschema_rs"):
            other = per[engine][i]
            cells += [f"{other / 1e6:.2f}", f"{other / mine:.2f}x"]
        rows.append(f"| {what} (derived) | " + " | ".join(cells) + " |")
    notes = (
        "\nEach cell is one process under valgrind's cachegrind (`--cache-sim=no`): the "
        "instructions it executed, start-up included; autofeedback with an empty cache. "
        "The derived rows: (once - one record) / 599 records and (x10 - once) / 5,400 "
        "records. A second run gives the same counts within 1 %. Instructions are not "
        "time: the timed table of issue 42 is the result, this one is where the work is.\n"
    )
    return "\n".join(rows) + "\n" + notes

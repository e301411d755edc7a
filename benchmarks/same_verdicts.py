"""Do two versions of autofeedback give byte-identical verdicts on the benchmark corpora?

A speed change must change no finding. This writes the audit report (JSON Lines, one
result per record, as ``autofeedback audit --format jsonl`` writes it) of each corpus
into a folder, with a digest per corpus; run it at the commit before a change and after
it, then compare the two folders:

    python benchmarks/same_verdicts.py --out /tmp/before    # at the old commit
    python benchmarks/same_verdicts.py --out /tmp/after --against /tmp/before

The corpora, all from ``../shared/data``:

* ``bfcl-mutated``: the gold single calls of BFCL simple and multiple, each mutated into
  every error subtype ``_mutations.py`` can make of it, as ``{"tools", "call"}`` records
  with no instruction (the tool-call audit of ``speed.py``), semantic checks on;
* ``bfcl-gold``: the same gold calls as they are (the clean calls of ``speed.py``'s
  clean-call rows), semantic checks on;
* ``detection``: every record of ``detection.py`` (API-Bank, BFCL simple, multiple and
  parallel, ToolAlpaca: gold and mutated calls as raw model text, with the instruction),
  semantic checks on;
* ``http``: valid HTTP records on the composed 2,034-operation spec of ``speed.py``, and
  records to endpoints it does not have (E2), semantic checks on.

Nothing is timed; exit status 1 when a compared corpus differs (the first differing
lines are shown).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, audit_lines
from benchmarks import _datasets
from benchmarks._records import bfcl_mutated_lines, detection_lines, gold_lines, http_lines


def corpora(data: Path) -> Iterator[tuple[str, ApiCatalog | None, list[str]]]:
    yield "bfcl-mutated", None, bfcl_mutated_lines()
    yield "bfcl-gold", None, gold_lines()
    yield "detection", None, detection_lines()
    spec, lines = http_lines(data)
    yield "http", ApiCatalog.from_file(spec), lines


def report(lines: list[str], catalog: ApiCatalog | None) -> Iterator[str]:
    for result in audit_lines(lines, catalog):
        yield json.dumps(result.as_dict(), ensure_ascii=False, default=str) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the reports")
    parser.add_argument("--against", type=Path, help="a folder written by an earlier run")
    parser.add_argument("--only", action="append", help="a corpus name (repeatable)")
    args = parser.parse_args(argv)
    data = _datasets.shared_data_dir()
    if data is None:
        print("shared data (../shared/data) not found; nothing to compare", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    differ = 0
    for name, catalog, lines in corpora(data):
        if args.only and name not in args.only:
            continue
        path = args.out / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            out.writelines(report(lines, catalog))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        verdict = ""
        if args.against is not None:
            old = args.against / f"{name}.jsonl"
            if not old.is_file():
                verdict = "  (no earlier report)"
            elif old.read_bytes() == path.read_bytes():
                verdict = "  identical"
            else:
                differ += 1
                new_lines = path.read_text(encoding="utf-8").splitlines()
                old_lines = old.read_text(encoding="utf-8").splitlines()
                changed = [
                    (i, a, b)
                    for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False))
                    if a != b
                ]
                verdict = f"  DIFFERS: {len(changed)} lines"
                if len(old_lines) != len(new_lines):
                    verdict += f" ({len(old_lines)} -> {len(new_lines)} records)"
                for i, a, b in changed[:3]:
                    verdict += f"\n    line {i + 1}\n    - {a[:400]}\n    + {b[:400]}"
        print(f"{name}: {len(lines):,} records, sha256 {digest}{verdict}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

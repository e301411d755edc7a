"""Mutation testing of a package of ``autofeedback/`` (``checks/``, ``decide/``) with
mutmut: the score and every surviving mutant, from the ``mutants/`` folder a ``mutmut
run`` left.

Run mutmut in a clone (it writes ``mutants/`` beside the code), with the [mutmut]
section below in that clone's setup.cfg, then this script on that folder:

    [mutmut]
    source_paths = autofeedback/
    only_mutate = autofeedback/checks/*
    also_copy = retriever/ doc_index/ specs/ benchmarks/      (one a line)
    pytest_add_cli_args = -p no:cacheprovider -x --deselect
        tests/checks/test_e2_path.py::test_a_repeated_mistake_is_judged_once   (one a line)
    pytest_add_cli_args_test_selection = tests/checks/ tests/scan/test_scan.py
        tests/specs/test_schema_dialects.py                                    (one a line)

    AUTOFEEDBACK_SHARED_DATA=../shared/data nice mutmut run --max-children 1
    python benchmarks/mutation.py CLONE/mutants

(the deselected test monkeypatches a module function, which mutmut's trampolines
bypass). For ``decide/``: ``only_mutate = autofeedback/decide/*``, the test selection
``tests/decide/``, then ``python benchmarks/mutation.py CLONE/mutants --package decide``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._results import write_section

#: mutmut's exit codes (mutmut/stats.py), as the states its report names
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests"}
STATUS.update({c: "timeout" for c in (-24, 24, 36, 152, 255)})
COLUMNS = ["killed", "survived", "timeout", "no tests", "not checked"]


def read(
    mutants: Path, package: str = "checks"
) -> tuple[dict[str, Counter[str]], dict[str, list[int]]]:
    """Per file of ``autofeedback/<package>/``, the count of each state; per function,
    the numbers of its survivors."""
    per_file: dict[str, Counter[str]] = {}
    survivors: dict[str, list[int]] = defaultdict(list)
    for meta in sorted((mutants / "autofeedback" / package).glob("*.py.meta")):
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        if not codes:
            continue
        per_file[meta.name.removesuffix(".meta")] = Counter(
            "not checked" if c is None else STATUS.get(c, "other") for c in codes.values()
        )
        for key, code in codes.items():
            if code == 0:
                function, _, number = key.rpartition("__mutmut_")
                survivors[function.removeprefix(f"autofeedback.{package}.")].append(int(number))
    return per_file, survivors


def _ranges(numbers: list[int]) -> str:
    out: list[str] = []
    for n in sorted(numbers):
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def render(per_file: dict[str, Counter[str]], survivors: dict[str, list[int]]) -> str:
    lines = ["| file | " + " | ".join(COLUMNS) + " | score (killed / checked) |"]
    lines.append("|---" * (len(COLUMNS) + 2) + "|")
    total: Counter[str] = Counter()
    for name, counts in per_file.items():
        total += counts
        lines.append(_row(name, counts))
    lines.append(_row("**all**", total))
    lines += ["", "Surviving mutants, by function (mutmut's numbers):", ""]
    lines += ["| function | survivors | mutants |", "|---|---|---|"]
    for function, numbers in sorted(survivors.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"| `{function}` | {len(numbers)} | {_ranges(numbers)} |")
    return "\n".join(lines)


def _row(name: str, counts: Counter[str]) -> str:
    checked = counts["killed"] + counts["survived"] + counts["timeout"]
    score = f"{(counts['killed'] + counts['timeout']) / checked:.0%}" if checked else "-"
    return f"| {name} | " + " | ".join(str(counts[c]) for c in COLUMNS) + f" | {score} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mutants", type=Path, help="the mutants/ folder of a mutmut run")
    parser.add_argument(
        "--package", default="checks", help="the package of autofeedback/ mutated (checks, decide)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    body = render(*read(args.mutants, args.package))
    print(body)
    if not args.no_write:
        command = "python benchmarks/mutation.py CLONE/mutants"
        if args.package != "checks":
            command += f" --package {args.package}"
        write_section(f"Mutation testing: autofeedback/{args.package}/", command, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

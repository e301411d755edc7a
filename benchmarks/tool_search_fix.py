"""Tool-search dialogues under ``audit --fix``: which correct calls are still blocked once
every certain repair is made, and is a misspelt parameter of a tool found mid-dialogue
still caught?

Corpus (``../shared/data``): API-Bank level-1, made dialogues in the style of its level 2
with ``ToolSearcher``: the dialogues whose earlier turns call no API but ``GetUserToken``
(one task each, 272 of 399). The model is given only ``ToolSearcher``. After the first
user turn, a search for the API the dialogue is about (the first name of its source
file, ``DeleteAgenda-GetUserToken-level-2-1.jsonl``) returns that API's doc, as
API-Bank's ToolSearcher prints it (a Python literal after ``->``); where the gold call is
another API (``GetUserToken``, a prerequisite), a second search for it comes right
before the call. Each record is an audit record ``{"tools": [ToolSearcher],
"instruction": <the dialogue>, "output": "API-Request: [Gold(...)]"}``.

* **Correct calls**: gold calls that, with their tools documented from the start (the
  reference: the same records with every doc in ``tools``), are clean or made clean by
  ``--fix`` under the structural checks (E2.1 asks the retriever whether the API fits
  the dialogue: that is measured here, it does not make a call wrong). Gold calls
  API-Bank wrote against its own docs (``device_id`` where the doc says ``name``) are
  not correct and are left out, and counted.
* **Blocked after --fix**: correct calls whose record still has an error once the
  repaired output is audited again, with the tools found by the search only.
* **Misspelt parameter**: each correct call with an argument, one argument name
  misspelt: its literal variant (``room_count`` -> ``roomCount``) and a keyboard slip
  (two inner letters swapped); detected when the audit reports an error.

    python benchmarks/tool_search_fix.py               # writes "Tool search under --fix"
    python benchmarks/tool_search_fix.py --no-write    # print only
    python benchmarks/tool_search_fix.py --limit 60    # the first 60 dialogues
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback.audit._audit import AuditResult, audit_lines
from benchmarks._datasets import _data_file, _read_json, _root, api_bank_docs
from benchmarks._datasets import parse_api_bank_calls as parse_calls
from benchmarks._mutations import literal_variant
from benchmarks._results import write_section
from benchmarks.tool_search import TOOL_SEARCHER, keywords

_EARLIER = re.compile(r"API-Request: \[(\w+)\(")


def level2_records() -> list[dict[str, Any]]:
    """The tool-search dialogues as audit records (module docstring), each with
    ``gold`` (the call's API), ``about`` (the API the dialogue is about) and ``docs``
    (the docs of both)."""
    items = _read_json(_data_file(_root(), "api-bank", "level-1-api.json"))
    records = []
    for index, item in enumerate(items):
        dialogue = item["input"].replace("Generate API Request:", "").strip()
        if any(name != "GetUserToken" for name in _EARLIER.findall(dialogue)):
            continue  # a dialogue of several tasks: level 2 has one each
        docs = {d["name"]: d for d in api_bank_docs(item["instruction"])}
        about = item["file"].split("-level")[0].split("-")[0]
        ((gold, args),) = parse_calls(item["expected_output"])
        if about not in docs or gold not in docs:
            continue
        lines = dialogue.splitlines()
        first = next((i for i, line in enumerate(lines) if line.startswith("User:")), 0)
        search = f"API-Request: [ToolSearcher(keywords={keywords(about)!r})]->{docs[about]!r}"
        tail = lines[first + 1 :]
        if gold != about and gold not in _EARLIER.findall(dialogue):
            tail.append(f"API-Request: [ToolSearcher(keywords={keywords(gold)!r})]->{docs[gold]!r}")
        text = "\n".join([*lines[: first + 1], search, *tail])
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        records.append(
            {
                "id": f"api-bank-{index}",
                "tools": [TOOL_SEARCHER],
                "instruction": text,
                "output": f"API-Request: [{gold}({shown})]",
                "gold": gold,
                "about": about,
                "args": args,
                "docs": [docs[about]] + ([docs[gold]] if gold != about else []),
            }
        )
    return records


def _audit(records: list[dict[str, Any]], retriever: Any, *, fix: bool) -> list[AuditResult]:
    keep = ("id", "tools", "instruction", "output")
    lines = [json.dumps({k: r[k] for k in keep}) for r in records]
    return list(audit_lines(lines, None, retriever=retriever, fix=fix))


def blocked_after_fix(records: list[dict[str, Any]], retriever: Any) -> list[AuditResult]:
    """For each record, its audit once ``--fix`` has repaired it (the record as it is
    where nothing was repaired)."""
    first = _audit(records, retriever, fix=True)
    again = [
        {**r, "output": res.repaired if isinstance(res.repaired, str) else r["output"]}
        for r, res in zip(records, first, strict=True)
    ]
    return _audit(again, retriever, fix=False)


def reference(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with their tools documented from the start."""
    return [{**r, "tools": [TOOL_SEARCHER, *r["docs"]]} for r in records]


def slip_of(name: str) -> str | None:
    """``name`` with two inner letters of its longest word swapped (``count`` ->
    ``cuont``), or ``None`` when no word is long enough."""
    parts = re.split(r"([_\W]+)", name)
    longest = max(range(len(parts)), key=lambda i: len(parts[i]))
    word = parts[longest]
    if len(word) < 5:
        return None
    i = len(word) // 2
    if word[i] == word[i - 1]:
        return None
    parts[longest] = word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]
    return "".join(parts)


def misspelt(records: Iterable[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(kind, record) for each correct call with an argument: one argument name written
    as its literal variant, and as a keyboard slip."""
    out = []
    for r in records:
        args = r["args"]
        if not args:
            continue
        name = next(iter(args))
        taken = set(args)
        for kind, new in (("literal", literal_variant(name, taken)), ("slip", slip_of(name))):
            if not new or new in taken:
                continue
            renamed = {(new if k == name else k): v for k, v in args.items()}
            shown = ", ".join(f"{k}={v!r}" for k, v in renamed.items())
            out.append((kind, {**r, "output": f"API-Request: [{r['gold']}({shown})]"}))
    return out


def run(records: list[dict[str, Any]], retriever: Any) -> str:
    # correct against the docs: the structural checks (E1-E5; E2.1 asks the retriever
    # whether the API fits, which is what is measured here, not what makes a call right)
    ref = blocked_after_fix(reference(records), None)
    correct = [r for r, res in zip(records, ref, strict=True) if res.ok]
    wrong_gold = len(records) - len(correct)
    found = blocked_after_fix(correct, retriever)
    blocked = [(r, res) for r, res in zip(correct, found, strict=True) if not res.ok]
    why: Counter[str] = Counter()
    for r, res in blocked:
        codes = sorted({f.code for f in res.findings if f.severity == "error"})
        why[f"{r['gold']} {'+'.join(codes) or res.error}"] += 1
    prerequisite = sum(1 for r in correct if r["gold"] != r["about"])
    mutants = misspelt(correct)
    caught = Counter()
    made = Counter(kind for kind, _ in mutants)
    results = _audit([m for _, m in mutants], retriever, fix=False)
    for (kind, _), res in zip(mutants, results, strict=True):
        caught[kind] += not res.ok
    n = len(correct)
    lines = [
        f"{len(records)} API-Bank level-1 dialogues made tool-search dialogues (ToolSearcher "
        f"only; the tools found mid-dialogue); {n} gold calls are correct against their "
        f"docs ({wrong_gold} are not: left out), {prerequisite} of them a prerequisite "
        "(GetUserToken before the API the dialogue is about).",
        "",
        "| | calls | blocked after --fix | rate |",
        "|---|---|---|---|",
        f"| correct calls | {n} | {len(blocked)} | {len(blocked) / max(n, 1):.1%} |",
        "",
        "| misspelt parameter of a discovered tool | made | detected | rate |",
        "|---|---|---|---|",
    ]
    for kind in ("literal", "slip"):
        rate = caught[kind] / max(made[kind], 1)
        lines.append(f"| {kind} | {made[kind]} | {caught[kind]} | {rate:.2f} |")
    total = sum(made.values())
    lines.append(
        f"| all | {total} | {sum(caught.values())} | {sum(caught.values()) / max(total, 1):.2f} |"
    )
    if why:
        lines += ["", "Still blocked: " + ", ".join(f"{k} ×{v}" for k, v in why.most_common())]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-semantic", action="store_true", help="structural checks only")
    parser.add_argument("--no-write", action="store_true", help="print, do not write RESULTS.md")
    parser.add_argument("--limit", type=int, help="the first N dialogues only")
    args = parser.parse_args(argv)
    records = level2_records()[: args.limit]
    retriever: Any = None if args.no_semantic else "auto"
    started = time.perf_counter()
    body = run(records, retriever)
    mode = "structural checks only" if args.no_semantic else "with the packaged embedding model"
    body += f"\n{mode}; {time.perf_counter() - started:.0f} s on this machine.\n"
    print(body)
    if not args.no_write:
        command = "python benchmarks/tool_search_fix.py" + (
            " --no-semantic" if args.no_semantic else ""
        )
        if args.limit:
            command += f" --limit {args.limit}"
        write_section("Tool search under --fix", command, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Tool search: are correct calls to a tool that a tool search in the dialogue found
checked as calls to that tool, and are the errors in them caught?

Corpus (``../shared/data``): API-Bank level-1, all 399 dialogues, each made a tool-search
dialogue as API-Bank's level 3 has them: the model is given only ``ToolSearcher``; a
search made earlier in the dialogue returned the documentation of the API the gold call
uses (its doc from the dialogue's ``API descriptions``); the gold call follows. Four
forms of the same dialogue, one per form the parser reads:

* ``api-bank``: the dialogue text with ``API-Request: [ToolSearcher(keywords='...')]->``
  and the tool's doc as API-Bank prints it (a Python literal); the call as
  ``API-Request: [Name(k='v')]``, scanned with the last user turn as the instruction and
  the dialogue as context, as the feedback loop scans it;
* ``react``: ``Action: ToolSearcher`` / ``Action Input`` / ``Observation:`` holding the
  tool as an OpenAI function (JSON); the call as ``Action`` / ``Action Input``;
* ``chat``: OpenAI chat messages, the search result as the ``tool`` message's text (the
  Python literal again), the call as ``tool_calls``, through
  ``check_tool_calls(message, tools, history=messages)``;
* ``mcp``: the same, the tool message holding an MCP ``tools/list`` answer (JSON-RPC).

Per form: correct calls flagged (any finding of severity ``error``) and E2 among them;
beside it the same calls where the tool is documented from the start (the reference: a
gold call's own faults, the same in every setting) and where the search result is left
out of the dialogue (the control: what the checks said of every such call before tools
found in a dialogue's text joined the catalog). Then each gold call mutated into one
error of a discovered tool (benchmarks/_mutations.py: the API name's literal and
synonym variants, a parameter's literal and synonym variants, a required parameter
dropped, a value of the wrong type): caught (any error) and exact (the first error has
the mutation's code), against the reference.

    python benchmarks/tool_search.py               # writes "Tool search" in RESULTS.md
    python benchmarks/tool_search.py --no-semantic # structural checks only
    python benchmarks/tool_search.py --no-write    # print only
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, Finding, Scanner, check_tool_calls
from benchmarks._datasets import Task, load_api_bank
from benchmarks._mutations import e2_2, e2_3, e3_2, e3_3, e3_4, e4_1
from benchmarks._results import write_section

#: API-Bank's own ToolSearcher (its level-3 dialogues give the model this one API)
TOOL_SEARCHER: dict[str, Any] = {
    "name": "ToolSearcher",
    "description": "Searches for relevant tools in library based on the keywords.",
    "input_parameters": {"keywords": {"type": "str", "description": "The keyword to search for."}},
    "output_parameters": {
        "best_matchs": {"type": "Union[List[dict], dict]", "description": "The best match tool(s)."}
    },
}
FORMS = ("api-bank", "react", "chat", "mcp")
MUTATIONS: dict[str, Callable[..., Any]] = {
    "E2.2": e2_2,
    "E2.3": e2_3,
    "E3.2": e3_2,
    "E3.3": e3_3,
    "E3.4": e3_4,
    "E4.1": e4_1,
}
Call = tuple[str, dict[str, Any]]


def keywords(name: str) -> str:
    """``CancelRegistration`` -> ``'cancel registration'``: what a model searches for."""
    words, word = [], ""
    for ch in name:
        if ch.isupper() and word:
            words.append(word)
            word = ""
        word += ch.lower()
    return " ".join([*words, word])


def as_function(doc: dict[str, Any]) -> dict[str, Any]:
    """An API-Bank doc as the OpenAI function a ReAct observation or tools/list shows."""
    catalog = ApiCatalog.from_tools([doc])
    (tool,) = catalog.to_tools()
    return dict(tool["function"])


def last_user_turn(dialogue: str) -> str:
    turns = [line[5:].strip() for line in dialogue.splitlines() if line.startswith("User:")]
    return turns[-1] if turns else dialogue


class Case:
    """One dialogue: the gold call, the doc the search found, and the texts of each form."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.call: Call = task.calls[0]
        name = self.call[0]
        self.doc = next(d for d in task.spec if d["name"] == name)
        self.search = f"API-Request: [ToolSearcher(keywords={keywords(name)!r})]"
        self.dialogue = task.instruction.rstrip()
        self.instruction = last_user_turn(self.dialogue)

    # -- the four forms -------------------------------------------------------------

    def api_bank(self, call: Call, *, found: bool) -> tuple[str, str]:
        result = f"\n{self.search}->{self.doc!r}" if found else ""
        args = ", ".join(f"{k}={v!r}" for k, v in call[1].items())
        return f"{self.dialogue}{result}\nAI: ", f"API-Request: [{call[0]}({args})]"

    def react(self, call: Call, *, found: bool) -> tuple[str, str]:
        context = f"Question: {self.dialogue}\nThought: I need a tool for this.\n"
        if found:
            context += (
                f"Action: ToolSearcher\nAction Input: "
                f"{json.dumps({'keywords': keywords(self.call[0])})}\n"
                f"Observation: {json.dumps(as_function(self.doc))}\n"
                "Thought: I found the tool.\n"
            )
        output = f"Action: {call[0]}\nAction Input: {json.dumps(call[1])}"
        return context, output

    def chat(self, call: Call, *, found: bool, mcp: bool) -> tuple[list[Any], dict[str, Any]]:
        history: list[Any] = [{"role": "user", "content": self.dialogue}]
        if found:
            if mcp:
                tool = as_function(self.doc)
                listed = {"name": tool["name"], "description": tool.get("description", "")}
                listed["inputSchema"] = tool["parameters"]
                body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [listed]}})
            else:
                body = repr(self.doc)  # API-Bank's ToolSearcher prints a Python literal
            history += [
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "search",
                            "type": "function",
                            "function": {
                                "name": "ToolSearcher",
                                "arguments": json.dumps({"keywords": keywords(self.call[0])}),
                            },
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "search", "content": body},
            ]
        message = {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call",
                    "type": "function",
                    "function": {"name": call[0], "arguments": json.dumps(call[1])},
                }
            ],
        }
        return history, message


class Checker:
    """The findings of one call in one form, with one retriever shared by every check."""

    def __init__(self, retriever: Any) -> None:
        self.retriever = retriever
        self.searcher = ApiCatalog.from_tools([TOOL_SEARCHER])
        self.scanner = Scanner(self.searcher, retriever=retriever)
        self._reference: dict[str, Scanner] = {}

    def reference_scanner(self, case: Case) -> Scanner:
        name = case.doc["name"]
        if name not in self._reference:
            catalog = ApiCatalog.from_tools([TOOL_SEARCHER, case.doc])
            self._reference[name] = Scanner(catalog, retriever=self.retriever)
        return self._reference[name]

    def findings(self, case: Case, form: str, call: Call, setting: str) -> list[Finding]:
        """``setting``: ``found`` (the search result is in the dialogue), ``reference``
        (the tool documented from the start, no search), ``control`` (neither)."""
        found = setting == "found"
        scanner = self.reference_scanner(case) if setting == "reference" else self.scanner
        if form == "api-bank":
            context, output = case.api_bank(call, found=found)
            return list(
                scanner.iter_findings(output, instruction=case.instruction, context=context)
            )
        if form == "react":
            context, output = case.react(call, found=found)
            return list(
                scanner.iter_findings(output, instruction=case.instruction, context=context)
            )
        history, message = case.chat(call, found=found, mcp=form == "mcp")
        tools = [
            {"type": "function", "function": as_function(d)}
            for d in ([TOOL_SEARCHER, case.doc] if setting == "reference" else [TOOL_SEARCHER])
        ]
        return check_tool_calls(message, tools, retriever=self.retriever, history=history)


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def run(cases: list[Case], checker: Checker) -> tuple[str, dict[str, Any]]:
    flagged: Counter[tuple[str, str]] = Counter()  # (form, setting) -> correct calls flagged
    e2: Counter[tuple[str, str]] = Counter()
    caught: Counter[tuple[str, str, str]] = Counter()  # (form, setting, code)
    exact: Counter[tuple[str, str, str]] = Counter()
    made: Counter[str] = Counter()
    codes_seen: Counter[tuple[str, str]] = Counter()  # (form, code) on correct calls, found
    rng = random.Random(0)
    for case in cases:
        discovered = ApiCatalog.from_tools([case.doc])
        op = discovered.get(case.call[0])
        assert op is not None
        mutants = {code: fn(case.call, op, discovered, rng) for code, fn in MUTATIONS.items()}
        for code, mutant in mutants.items():
            if mutant is not None:
                made[code] += 1
        for form in FORMS:
            for setting in ("found", "reference", "control"):
                bad = errors(checker.findings(case, form, case.call, setting))
                flagged[form, setting] += bool(bad)
                e2[form, setting] += any(f.code.startswith("E2") for f in bad)
                if setting == "found":
                    codes_seen.update((form, f.code) for f in bad)
            for code, mutant in mutants.items():
                if mutant is None:
                    continue
                for setting in ("found", "reference"):
                    bad = errors(checker.findings(case, form, mutant, setting))
                    caught[form, setting, code] += bool(bad)
                    exact[form, setting, code] += bool(bad) and bad[0].code == code
    n = len(cases)
    lines = [
        f"{n} API-Bank level-1 dialogues made tool-search dialogues (the model is given only "
        "ToolSearcher; a search earlier in the dialogue found the gold call's API).",
        "",
        "Correct calls flagged (any error; E2 among them):",
        "",
        "| form | search result in the dialogue | tool documented from the start (reference) "
        "| search result left out (control) |",
        "|---|---|---|---|",
    ]
    for form in FORMS:
        cells = [
            f"{flagged[form, s]} / {n} (E2: {e2[form, s]})"
            for s in ("found", "reference", "control")
        ]
        lines.append(f"| {form} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Errors in calls to a discovered tool: caught (any error) / exact (the first error "
        "has the mutation's code) with the search result in the dialogue, and in brackets "
        "the same with the tool documented from the start (reference):",
        "",
        "| mutation | made | " + " | ".join(FORMS) + " |",
        "|---|---|" + "---|" * len(FORMS),
    ]
    for code in MUTATIONS:
        if not made[code]:
            continue
        cells = [
            f"{caught[form, 'found', code]} / {exact[form, 'found', code]} "
            f"({caught[form, 'reference', code]} / {exact[form, 'reference', code]})"
            for form in FORMS
        ]
        lines.append(f"| {code} | {made[code]} | " + " | ".join(cells) + " |")
    seen = ", ".join(f"{form} {code}×{k}" for (form, code), k in sorted(codes_seen.items()))
    lines += ["", f"Error codes on correct calls with the search result: {seen or 'none'}."]
    summary = {
        "flagged": {f"{f}/{s}": v for (f, s), v in flagged.items()},
        "caught": {f"{f}/{s}/{c}": v for (f, s, c), v in caught.items()},
    }
    return "\n".join(lines) + "\n", summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-semantic", action="store_true", help="structural checks only")
    parser.add_argument("--no-write", action="store_true", help="print, do not write RESULTS.md")
    parser.add_argument("--limit", type=int, help="the first N dialogues only")
    args = parser.parse_args(argv)
    tasks = load_api_bank()
    cases = [Case(t) for t in tasks[: args.limit]]
    retriever: Any = None
    if not args.no_semantic:
        from retriever import ApiRetriever

        retriever = ApiRetriever()
    started = time.perf_counter()
    body, _ = run(cases, Checker(retriever))
    seconds = time.perf_counter() - started
    mode = "structural checks only" if args.no_semantic else "with the packaged embedding model"
    body += f"\n{mode}; {seconds:.0f} s on this machine.\n"
    print(body)
    if not args.no_write:
        command = "python benchmarks/tool_search.py" + (
            " --no-semantic" if args.no_semantic else ""
        )
        if args.limit:
            command += f" --limit {args.limit}"
        title = "Tool search" + (" (structural)" if args.no_semantic else "")
        write_section(title, command, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

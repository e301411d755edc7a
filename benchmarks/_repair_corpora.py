"""The corpora of ``benchmarks/repair.py``: gold calls, programs and traces from the shared
data, each mutated into a record a repair may fix (or must leave alone), with the gold
kept beside it (never in the record), and the peers' form of the same record.

* **BFCL single calls** (simple, multiple, parallel-multiple; the first gold call of
  each item, see :func:`benchmarks._datasets.bfcl_value`): the mutations of
  :data:`benchmarks._mutations.REPAIR_MUTATORS`.
* **GraphQL-RestBench programs** (all 155 samples less the hand-verified gold defects of
  ``benchmarks/sequences.py``): a record is the sample as README "Sequences" says
  (``tools`` its function specs, ``responses`` its GraphQL schema, ``output`` its
  program; two gold programs call a function their own specs lack, and get the
  domain's spec of it); mutations :data:`PROGRAM_ROWS`.
* **RestBench traces**: the 157 gold paths replayed against the stateful sandbox
  (``benchmarks/sandbox_paths.py``); each path that ran all-2xx becomes a trace of
  calls with the sandbox's answers, arguments in their documented types. Paths with a
  POST/PUT/PATCH body are left out: the replay fills a body from its schema alone
  (``"string"`` in every text field), which is no call a user asked for. A mutated
  trace ends at its mutated step (the call about to be sent; the steps before it keep
  their answers). Mutations :data:`TRACE_ROWS`.

Comparison keys (:func:`call_key`, :func:`program_key`, :func:`trace_key`) say when a
repaired call *is* the gold: names equal, argument values equal as JSON values (``5`` and
``5.0`` are one number; ``"5"`` is not ``5``); programs equal statement by statement
after ``ast`` normalisation, where an assignment nothing reads is dropped and the order
of independent calls does not count.
"""

from __future__ import annotations

import ast
import contextlib
import json
import random
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from autofeedback import ApiCatalog, Operation
from benchmarks import _datasets
from benchmarks._mutations import REPAIR_MUTATORS, literal_variant

__all__ = [
    "PROGRAM_ROWS",
    "TRACE_ROWS",
    "Case",
    "bfcl_cases",
    "call_key",
    "canon",
    "openai_tools",
    "program_cases",
    "program_from_peer",
    "program_key",
    "trace_cases",
    "trace_key",
]


@dataclass
class Case:
    """One record of a corpus: what the tools see and what counts as repaired."""

    corpus: str
    #: ``"gold"`` or the mutation's row label
    row: str
    #: the finding code the mutation is (``""`` on gold)
    code: str
    #: False on gold and on lossy controls: there every repair is wrong
    expect_repair: bool
    record: dict[str, Any]
    #: the comparison key of the gold (see :func:`call_key` and friends)
    gold: Any
    #: the peers' input: OpenAI tools and the calls in NESTFUL's form
    peer: dict[str, Any]
    #: for programs: what a peer's output needs to be read back as a program
    program: dict[str, Any] = field(default_factory=dict)
    #: which catalog the audit needs (``None``: the record carries its tools)
    catalog: str | None = None


# -- comparison -----------------------------------------------------------------------


def canon(value: Any) -> Any:
    """A value as a hashable JSON value: numbers by value, booleans apart from numbers.

    >>> canon(5) == canon(5.0), canon("5") == canon(5), canon(True) == canon(1)
    (True, False, False)
    """
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("num", float(value))
    if isinstance(value, str):
        return ("str", value)
    if value is None:
        return ("null",)
    if isinstance(value, Mapping):
        return ("obj", tuple(sorted((str(k), canon(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("arr", tuple(canon(v) for v in value))
    return ("other", repr(value))


def call_key(name: Any, arguments: Any) -> Any:
    """A call as its name and its arguments, JSON text decoded once (what a tool-call
    ``arguments`` string means).

    >>> call_key("f", '{"a": 1}') == call_key("f", {"a": 1.0})
    True
    """
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments)
    return (name, canon(arguments))


def trace_key(calls: Iterable[Mapping[str, Any]]) -> Any:
    return tuple(call_key(c.get("name"), c.get("arguments")) for c in calls)


def _rename_variables(tree: ast.Module) -> None:
    """The variables a program's statements assign, renamed ``v0``, ``v1``... in the
    order they are first assigned: a program that names its results otherwise is the
    same program."""
    names: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name) and n.id not in names:
                        names[n.id] = f"v{len(names)}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]


def program_key(text: str) -> Any:
    """A program as its statements, each ``ast``-normalised, an assignment to a variable
    nothing reads dropped, order free where the data flow allows it; text that does not
    parse is compared as text without whitespace.

    >>> program_key("r = f(a=1)\\ng(x=r.id)") == program_key("r=f(a = 1)\\ng(x=r.id)")
    True
    >>> program_key("x = f()\\ng()") == program_key("g()\\ny = f()")
    True
    >>> program_key("r = f()\\ng(x=r.id)") == program_key("found = f()\\ng(x=found.id)")
    True
    """
    try:
        tree = ast.parse(text.strip())
    except SyntaxError:
        return ("text", re.sub(r"\s+", "", text))
    _rename_variables(tree)
    names_read = [
        {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for stmt in tree.body
    ]
    statements = []
    defined: set[str] = set()
    in_order = True
    for i, stmt in enumerate(tree.body):
        later = set().union(*names_read[i + 1 :]) if i + 1 < len(tree.body) else set()
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            target = stmt.targets[0].id
            if target not in later:
                stmt = ast.Expr(stmt.value)
            else:
                defined.add(target)
        elif isinstance(stmt, ast.Assign):
            defined |= {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        statements.append(ast.unparse(stmt))
        # a statement that reads a variable assigned only later is another program
        assigned_later = {
            t.id
            for s in tree.body[i + 1 :]
            if isinstance(s, ast.Assign)
            for t in s.targets
            if isinstance(t, ast.Name)
        }
        if names_read[i] & (assigned_later - defined):
            in_order = False
    return ("program", tuple(sorted(statements)), in_order)


# -- tools in the peers' form -----------------------------------------------------------

_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


def _json_schema(schema: Any) -> Any:
    """BFCL's Python-flavoured types as JSON Schema (``dict`` -> ``object``...)."""
    if isinstance(schema, list):
        return [_json_schema(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k == "type" and isinstance(v, str) and v in _BFCL_TYPES:
            if _BFCL_TYPES[v] is not None:
                out[k] = _BFCL_TYPES[v]
        elif k == "optional":
            continue
        elif k in ("properties",) and isinstance(v, Mapping):
            out[k] = {name: _json_schema(s) for name, s in v.items()}
        else:
            out[k] = _json_schema(v)
    return out


def openai_tools(
    functions: Iterable[Mapping[str, Any]], outputs: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Bare function specs (BFCL's, GraphQL-RestBench's) as OpenAI tools, names as they
    are; ``outputs`` adds each function's response schema as ``output_parameters``."""
    tools = []
    for f in functions:
        fn: dict[str, Any] = {
            "name": f["name"],
            "description": str(f.get("description") or f["name"]),
            "parameters": _json_schema(f.get("parameters") or {"type": "object", "properties": {}}),
        }
        if outputs and isinstance(outputs.get(f["name"]), Mapping):
            fn["output_parameters"] = outputs[f["name"]]
        tools.append({"type": "function", "function": fn})
    return tools


# -- BFCL single calls ------------------------------------------------------------------

BFCL_SETS = ("simple", "multiple", "parallel-multiple")


def bfcl_cases(per_row: int, gold_rows: int, seed: int) -> list[Case]:
    """``per_row`` records per mutation row and ``gold_rows`` gold records, sampled with
    ``seed`` from every item where the mutation has a place."""
    candidates: dict[str, list[Case]] = {"gold": []}
    for category in BFCL_SETS:
        for task in _datasets.load_bfcl(category):
            if not task.calls:
                continue
            catalog = ApiCatalog.from_obj(task.spec, source=task.id)
            name, args = task.calls[0]
            op = catalog.get(name)
            if op is None:
                continue
            case = partial(_bfcl_case, task, openai_tools(task.spec), call_key(name, args))
            candidates["gold"].append(case("gold", "", False, {"name": name, "arguments": args}))
            for row, (code, expect, mutate) in REPAIR_MUTATORS.items():
                rng = random.Random(f"{seed}/{task.id}/{row}")
                mutated = mutate((name, dict(args)), op, catalog, rng)
                if mutated is not None and call_key(**mutated) != call_key(name, args):
                    candidates.setdefault(row, []).append(case(row, code, expect, mutated))
    return _sample(candidates, per_row, gold_rows, seed)


def _bfcl_case(
    task: _datasets.Task,
    tools: list[dict[str, Any]],
    gold: Any,
    row: str,
    code: str,
    expect: bool,
    call: dict[str, Any],
) -> Case:
    record = {
        "id": f"bfcl/{task.id}/{row}",
        "instruction": task.instruction,
        "tools": task.spec,
        "call": call,
    }
    peer = {"instruction": task.instruction, "tools": tools, "calls": [call]}
    return Case("bfcl", row, code, expect, record, gold, peer)


def _sample(
    candidates: dict[str, list[Case]], per_row: int, gold_rows: int, seed: int
) -> list[Case]:
    out = []
    for row, cases in candidates.items():
        n = gold_rows if row == "gold" else per_row
        rng = random.Random(f"{seed}/{row}")
        out += rng.sample(cases, min(n, len(cases))) if n >= 0 else cases
    return out


# -- GraphQL-RestBench programs ---------------------------------------------------------

#: row label -> the finding code
PROGRAM_ROWS: dict[str, str] = {
    "E5.1": "E5.1",
    "E5.2 misspelt field": "E5.2",
    "E5.2 skipped level": "E5.2",
    "E5.3 placeholder": "E5.3",
    "E5.3 made-up id": "E5.3",
    "E2.2": "E2.2",
    "E3.2": "E3.2",
    # a producer that takes no argument left out (``r = GET_me_tracks()``), its value a
    # placeholder: repaired by inserting the producer (issue 27, item 4)
    "E5.3 producer left out": "E5.3",
}


def _graphql_rows(data: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for name in ("train", "valid", "test")
        for line in (data / "graphqlrestbench" / f"{name}.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
        if line.strip()
    ]


def _chain(node: ast.expr) -> tuple[str, list[tuple[str, str]]] | None:
    """``r.items[0].id`` -> ``("r", [("", ""), ("items", "[0]"), ("id", "")])``: the
    variable, then each field with the subscripts after it (the first entry holds the
    variable's own); ``None`` for anything but a plain reference."""
    parts: list[tuple[str, str]] = []
    suffix = ""
    while True:
        if isinstance(node, ast.Subscript):
            if not isinstance(node.slice, (ast.Constant, ast.Slice)):
                return None
            suffix = f"[{ast.unparse(node.slice)}]" + suffix
            node = node.value
        elif isinstance(node, ast.Attribute):
            parts.append((node.attr, suffix))
            suffix = ""
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(("", suffix))
            return node.id, list(reversed(parts))
        else:
            return None


def program_to_peer(program: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A program as NESTFUL calls (``$var.field.field$`` for a reference, the source
    text of any other expression as an opaque string) and what reading it back needs."""
    tree = ast.parse(program.strip())
    calls: list[dict[str, Any]] = []
    back: dict[str, Any] = {"refs": {}, "opaque": {}}
    for i, stmt in enumerate(tree.body):
        label = None
        value = getattr(stmt, "value", None)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            label = stmt.targets[0].id
        if not isinstance(value, ast.Call) or value.args:
            raise ValueError(f"statement {i} is not a call with keyword arguments")
        arguments: dict[str, Any] = {}
        for kw in value.keywords:
            if kw.arg is None:
                raise ValueError("**kwargs")
            chain = _chain(kw.value)
            if isinstance(kw.value, ast.Constant):
                arguments[kw.arg] = kw.value.value
            elif chain is not None and len(chain[1]) > 1:
                var, parts = chain
                arguments[kw.arg] = "$" + var + "." + ".".join(p for p, _ in parts[1:]) + "$"
                back["refs"][f"{i}/{kw.arg}"] = parts
            else:
                text = ast.unparse(kw.value)
                arguments[kw.arg] = text
                back["opaque"][text] = text
        calls.append({"name": ast.unparse(value.func), "arguments": arguments, "label": label})
    return calls, back


_PEER_REF = re.compile(r"^\$([^.$]+)\.([^$]+)\$$")
_SLOT = re.compile(r"^\$[^$]*\$$")


def program_from_peer(
    calls: list[dict[str, Any]], given: list[dict[str, Any]], back: Mapping[str, Any]
) -> str | None:
    """A peer's NESTFUL calls as program text, or ``None`` where a value is left to ask
    the user (``$name$``). A reference keeps the subscripts the input had at the same
    distance from its end (``$r.tracks.items.id$`` for ``r.items[0].id`` reads back as
    ``r.tracks.items[0].id``)."""
    labels = {c.get("label"): i for i, c in enumerate(given) if c.get("label")}
    lines = []
    for j, call in enumerate(calls):
        source = labels.get(call.get("label"), j if j < len(given) else None)
        args = []
        for k, v in call["arguments"].items():
            if isinstance(v, str) and (m := _PEER_REF.match(v)):
                fields = m.group(2).split(".")
                had = back["refs"].get(f"{source}/{k}") or next(
                    (p for key, p in back["refs"].items() if key.endswith(f"/{k}")), [("", "")]
                )
                root = had[0][1]
                tail = [s for _, s in had[1:]]
                suffixes = [""] * len(fields)
                for d in range(1, min(len(fields), len(tail)) + 1):
                    suffixes[-d] = tail[-d]
                text = (
                    m.group(1)
                    + root
                    + "".join(f".{f}{s}" for f, s in zip(fields, suffixes, strict=True))
                )
            elif isinstance(v, str) and _SLOT.match(v):
                return None
            elif isinstance(v, str) and v in back["opaque"]:
                text = back["opaque"][v]
            else:
                text = repr(v)
            args.append(f"{k}={text}")
        head = f"{call['label']} = " if call.get("label") else ""
        lines.append(f"{head}{call['name']}({', '.join(args)})")
    return "\n".join(lines)


def _keyword(call: ast.Call, name: str) -> ast.keyword:
    return next(k for k in call.keywords if k.arg == name)


def _calls(tree: ast.Module) -> list[ast.Call]:
    return [
        stmt.value
        for stmt in tree.body
        if isinstance(stmt, (ast.Assign, ast.Expr)) and isinstance(stmt.value, ast.Call)
    ]


def mutate_program(program: str, row: str, catalog: ApiCatalog, rng: random.Random) -> str | None:
    """One mutation of ``program`` for ``row`` (:data:`PROGRAM_ROWS`), or ``None``."""
    from autofeedback.flow._grounding import is_id_like
    from benchmarks.sequences import mutate

    domain = SimpleNamespace(catalog=catalog)
    if row in ("E5.1", "E2.2", "E3.2"):
        m = mutate(program, row, domain, rng)  # type: ignore[arg-type]
        return m.program if m else None
    if row == "E5.2 misspelt field":
        m = mutate(program, "E5.2", domain, rng)  # type: ignore[arg-type]
        return m.program if m else None
    tree = ast.parse(program.strip())
    calls = _calls(tree)
    refs = [
        (i, kw)
        for i, call in enumerate(calls)
        for kw in call.keywords
        if kw.arg and (chain := _chain(kw.value)) is not None and len(chain[1]) > 1
    ]
    rng.shuffle(refs)
    if row == "E5.2 skipped level":
        for _i, kw in refs:
            # r.tracks.items[0].id -> r.items[0].id: an attribute whose object is an
            # attribute loses that object's field
            for node in ast.walk(kw.value):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
                    node.value = node.value.value
                    return ast.unparse(tree)
        return None
    if row == "E5.3 producer left out":
        return _producer_left_out(tree, catalog)
    for i, kw in refs:
        op = catalog.get(ast.unparse(calls[i].func))
        param = op.parameter(kw.arg or "") if op else None
        if param is None or not is_id_like(param):
            continue
        if row == "E5.3 placeholder":
            kw.value = ast.Constant(f"<{kw.arg}>")
        else:
            made_up = (
                12345
                if param.schema.get("type") == "integer"
                else "4fZq81LmXa0" + str(rng.randint(10, 99))
            )
            kw.value = ast.Constant(made_up)
        return ast.unparse(tree)
    return None


def _producer_left_out(tree: ast.Module, catalog: ApiCatalog) -> str | None:
    """The program without a ``v = F()`` whose ``v`` is read once, as the whole value of
    an id-like keyword of a later call; that value a placeholder."""
    from autofeedback.flow._grounding import is_id_like

    for stmt in tree.body:
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
            and not stmt.value.args
            and not stmt.value.keywords
        ):
            continue
        var = stmt.targets[0].id
        reads = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Name) and n.id == var and isinstance(n.ctx, ast.Load)
        ]
        if len(reads) != 1:
            continue
        for call in _calls(tree):
            op = catalog.get(ast.unparse(call.func))
            for kw in call.keywords:
                chain = _chain(kw.value) if kw.arg else None
                if chain is None or chain[0] != var or op is None:
                    continue
                param = op.parameter(kw.arg or "")
                if param is None or not is_id_like(param):
                    continue
                kw.value = ast.Constant(f"<{kw.arg}>")
                tree.body.remove(stmt)
                return ast.unparse(tree)
    return None


def _program_case(
    index: int,
    row: Mapping[str, Any],
    functions: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    gold: Any,
    label: str,
    code: str,
    text: str,
) -> Case:
    calls, back = program_to_peer(text)
    record = {
        "id": f"graphqlrestbench/{index}/{label}",
        "instruction": row["utterance"],
        "tools": functions,
        "responses": row["GraphQL_schema"],
        "output": text,
    }
    peer = {"instruction": row["utterance"], "tools": tools, "calls": calls}
    return Case(
        "graphqlrestbench",
        label,
        code,
        label != "gold",
        record,
        gold,
        peer,
        program={"calls": calls, "back": back},
    )


def program_cases(data: Path, per_row: int, gold_rows: int, seed: int) -> list[Case]:
    from autofeedback.flow import response_schemas_from_graphql
    from benchmarks.sequences import GOLD_DEFECTS

    rows = _graphql_rows(data)
    by_domain: dict[str, dict[str, Any]] = {}
    for row in rows:
        for spec in json.loads(row["function_specs"]):
            by_domain.setdefault(row["domain"], {}).setdefault(spec["name"], spec)
    candidates: dict[str, list[Case]] = {"gold": []}
    for index, row in enumerate(rows):
        if index in GOLD_DEFECTS:
            continue
        functions = json.loads(row["function_specs"])
        # two gold programs call a function their own specs lack: the domain's spec of it
        # joins them (the same function in another sample of the domain)
        own = {f["name"] for f in functions}
        called = re.findall(r"\b([A-Z]+_\w+)\(", row["output"])
        functions += [
            by_domain[row["domain"]][n]
            for n in dict.fromkeys(called)
            if n not in own and n in by_domain[row["domain"]]
        ]
        try:
            program = ast.unparse(ast.parse(row["output"].strip()))
            program_to_peer(program)
        except (SyntaxError, ValueError):
            continue
        catalog = ApiCatalog.from_tools(functions, source=f"graphqlrestbench-{index}")
        tools = openai_tools(functions, response_schemas_from_graphql(row["GraphQL_schema"]))
        gold = program_key(program)

        case = partial(_program_case, index, row, functions, tools, gold)
        candidates["gold"].append(case("gold", "", program))
        for label, code in PROGRAM_ROWS.items():
            mutated = mutate_program(
                program, label, catalog, random.Random(f"{seed}/{index}/{label}")
            )
            if mutated is None or program_key(mutated) == gold:
                continue
            try:
                candidates.setdefault(label, []).append(case(label, code, mutated))
            except ValueError:
                continue
    return _sample(candidates, per_row, gold_rows, seed)


# -- RestBench traces ---------------------------------------------------------------------

#: row label -> the finding code
TRACE_ROWS: dict[str, str] = {
    "E5.3 made-up id": "E5.3",
    "E5.3 placeholder": "E5.3",
    "E2.2": "E2.2",
    "E3.2": "E3.2",
}


@dataclass(frozen=True)
class _Step:
    name: str
    arguments: dict[str, Any]
    status: int
    body: Any


def _replayed(data: Path) -> Iterator[tuple[str, int, str, ApiCatalog, list[_Step]]]:
    from autofeedback.serve._sandbox import Sandbox
    from benchmarks.sandbox_paths import Sent, replay

    for domain in ("tmdb", "spotify"):
        catalog = ApiCatalog.from_file(data / "restbench" / f"{domain}_oas.json")
        queries = json.loads((data / "restbench" / f"{domain}.json").read_text(encoding="utf-8"))
        with Sandbox(catalog, seed=0) as sandbox:
            for q, item in enumerate(queries):
                sent: list[Sent] = []
                outcome = replay(sandbox, catalog, domain, item, sent)
                if outcome.result != "all-2xx" or any(_sampled_body(s.operation) for s in sent):
                    continue
                steps = [
                    _Step(s.operation.name, _typed(s.operation, s.arguments), s.status, s.answer)
                    for s in sent
                ]
                yield domain, q, str(item["query"]), catalog, steps


def _sampled_body(op: Operation) -> bool:
    """Whether the replay sent a body made from the schema alone (``"string"`` for every
    text field): no call a user asked for, so no gold."""
    return op.body_schema is not None and (op.method or "").upper() in ("POST", "PUT", "PATCH")


def _typed(op: Operation, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The replayed arguments in their documented types: a spec's example may be text
    (Spotify's ``volume_percent`` example is ``"50"``); a gold call sends the number."""
    out = dict(arguments)
    for name, value in arguments.items():
        p = op.parameter(name)
        if p is None or not isinstance(value, str):
            continue
        t = p.schema.get("type")
        try:
            if t == "integer":
                out[name] = int(value)
            elif t == "number":
                out[name] = float(value)
            elif t == "boolean" and value.lower() in ("true", "false"):
                out[name] = value.lower() == "true"
        except ValueError:
            continue
    return out


def _contains(body: Any, value: Any) -> bool:
    if isinstance(body, Mapping):
        return any(_contains(v, value) for v in body.values())
    if isinstance(body, list):
        return any(_contains(v, value) for v in body)
    return body == value and not isinstance(body, bool)


def trace_tools(catalog: ApiCatalog) -> list[dict[str, Any]]:
    """The catalog as OpenAI tools with each operation's 2xx response schema as
    ``output_parameters`` (what Refraction reads for data flow)."""
    tools = catalog.to_tools()
    for tool in tools:
        op = catalog.get(tool["function"]["name"])
        if op is None:
            continue
        schema = next(
            (r.schema for r in op.responses if r.status.startswith("2") and r.schema), None
        )
        if schema is not None:
            tool["function"]["output_parameters"] = json.loads(json.dumps(schema, default=str))
    return tools


def _mutate_trace(
    steps: list[_Step], row: str, catalog: ApiCatalog, rng: random.Random
) -> tuple[int, dict[str, Any]] | None:
    """The index of the mutated step and its mutated call, or ``None``."""
    order = list(range(len(steps)))
    rng.shuffle(order)
    for k in order:
        step = steps[k]
        op: Operation | None = catalog.get(step.name)
        if op is None:
            continue
        if row.startswith("E5.3") and k > 0:
            for p in op.parameters:
                if p.location != "path" or p.name not in step.arguments:
                    continue
                value = step.arguments[p.name]
                if not any(_contains(s.body, value) for s in steps[:k]):
                    continue
                if row == "E5.3 placeholder":
                    new: Any = f"<{p.name}>"
                else:
                    new = (
                        99999991
                        if isinstance(value, int)
                        else "7Zp0q3XyZ9" + str(rng.randint(10, 99))
                    )
                return k, {"name": step.name, "arguments": {**step.arguments, p.name: new}}
        elif row == "E2.2":
            name = literal_variant(step.name, set(catalog.names))
            if name:
                return k, {"name": name, "arguments": dict(step.arguments)}
        elif row == "E3.2":
            own = {p.name for p in op.parameters}
            for key in step.arguments:
                new_key = literal_variant(key, own)
                if new_key:
                    args = {(new_key if a == key else a): v for a, v in step.arguments.items()}
                    return k, {"name": step.name, "arguments": args}
    return None


def _trace_case(
    rid: str,
    domain: str,
    query: str,
    tools: list[dict[str, Any]],
    steps: list[_Step],
    label: str,
    code: str,
    calls: list[dict[str, Any]],
    answered: int,
) -> Case:
    """A trace record of ``calls``, the first ``answered`` with the sandbox's answers."""
    record_steps: list[dict[str, Any]] = []
    for i, call in enumerate(calls):
        step: dict[str, Any] = {"call": call}
        if i < answered:
            step["response"] = {"status": steps[i].status, "body": steps[i].body}
        record_steps.append(step)
    record = {"id": f"{rid}/{label}", "instruction": query, "steps": record_steps}
    labelled = [{**c, "label": f"var{i + 1}"} for i, c in enumerate(calls)]
    memory = {f"var{i + 1}": steps[i].body for i in range(answered)}
    peer = {"instruction": query, "tools": tools, "calls": labelled, "memory": memory}
    gold = trace_key({"name": s.name, "arguments": s.arguments} for s in steps[: len(calls)])
    return Case("restbench", label, code, label != "gold", record, gold, peer, catalog=domain)


def trace_cases(data: Path, per_row: int, gold_rows: int, seed: int) -> list[Case]:
    candidates: dict[str, list[Case]] = {"gold": []}
    tools_of: dict[str, list[dict[str, Any]]] = {}
    for domain, q, query, catalog, steps in _replayed(data):
        tools = tools_of.setdefault(domain, trace_tools(catalog))

        case = partial(_trace_case, f"restbench-{domain}/{q}", domain, query, tools, steps)
        gold_calls = [{"name": s.name, "arguments": s.arguments} for s in steps]
        candidates["gold"].append(case("gold", "", gold_calls, len(steps)))
        for label, code in TRACE_ROWS.items():
            found = _mutate_trace(
                steps, label, catalog, random.Random(f"{seed}/{domain}/{q}/{label}")
            )
            if found is None:
                continue
            k, mutated = found
            candidates.setdefault(label, []).append(
                case(label, code, [*gold_calls[:k], mutated], k)
            )
    return _sample(candidates, per_row, gold_rows, seed)

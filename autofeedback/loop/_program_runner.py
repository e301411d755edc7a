"""The program runner (see :mod:`autofeedback.loop._tasks`): the model writes the whole
program at once, in GraphQL-RestBench's CoT prompt shape; it is read with :mod:`ast`
(never executed), checked with :class:`~autofeedback.sequences.SequenceChecker` (E1-E5),
and its errors are fed back until it is clean or the run driver stops."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._model import Operation
from autofeedback.decide._feedback import (
    CALL_LINE,
)
from autofeedback.decide._run import (
    TaskStop,
)
from autofeedback.loop._llm import LLMClient
from autofeedback.loop._tasks import TaskResult, TaskTurn, _Runner, _timed
from autofeedback.scanner._sequences import SequenceChecker

__all__ = [
    "PROGRAM_JSON_FORMAT",
    "PROGRAM_PROMPT",
    "ProgramRunner",
    "extract_program",
    "program_as_json",
    "program_from_json",
    "program_prompt",
    "program_schema",
]


PROGRAM_PROMPT = (
    "Function Signatures:\n\n{signatures}\n\n{outputs}"
    "Write a program that fulfils the utterance by calling the functions above: one call "
    "per line, keyword arguments only, the result of a call bound to a variable "
    '(response_obj = FUNCTION(arg="value")) and read by later calls as '
    "response_obj.field[0].id. Use only the functions and parameters documented above, "
    "and only fields their responses document. Think step by step about which calls are "
    "needed and in what order, then write only the program in a ```python block.\n\n"
    "Utterance: {instruction}"
)


def program_prompt(
    catalog: ApiCatalog, instruction: str, checker: SequenceChecker | None = None
) -> str:
    """GraphQL-RestBench's prompt shape: the function signatures (JSON), the fields each
    function returns where documented, then the utterance.

    >>> catalog = ApiCatalog.from_tools([{"name": "f", "parameters": {"type": "object",
    ...     "properties": {}}}])
    >>> program_prompt(catalog, "do it").endswith("Utterance: do it")
    True
    """
    from autofeedback.flow._paths import format_path, iter_paths

    signatures = [
        {
            "name": op.name,
            "description": " ".join(op.description.split())[:300],
            "parameters": {
                "type": "object",
                "properties": {
                    p.name: {
                        "type": p.schema.get("type", "string"),
                        "description": " ".join(p.description.split())[:150],
                    }
                    for p in op.parameters
                },
                "required": [p.name for p in op.parameters if p.required],
            },
        }
        for op in catalog.operations
    ]
    lines: list[str] = []
    if checker is not None:
        for op in catalog.operations:
            schema = checker.response_schema(op.name)
            if schema:
                # the leaves: what a later call can read (ids, names), shallow first
                paths = [
                    format_path(p)
                    for p, sub in iter_paths(schema)
                    if sub.get("type") not in ("object", "array")
                ][:25]
                if paths:
                    lines.append(f"{op.name} returns: " + ", ".join(paths))
    outputs = ("Response fields:\n" + "\n".join(lines) + "\n\n") if lines else ""
    return PROGRAM_PROMPT.format(
        signatures=json.dumps(signatures), outputs=outputs, instruction=instruction
    )


_FENCE = re.compile(r"```[a-zA-Z]*\n(.*?)(?:```|$)", re.DOTALL)


def extract_program(text: str) -> str:
    """The program in a model's answer: the first fenced block if there is one, else the
    lines from the first call on; comment lines dropped.

    >>> extract_program("Search first.\\n```python\\nr = f(q='x')\\n# then\\ng(id=r.id)\\n```")
    "r = f(q='x')\\ng(id=r.id)"
    """
    match = _FENCE.search(text)
    body = match.group(1) if match else text
    lines = body.splitlines()
    if not match:
        start = next((i for i, line in enumerate(lines) if CALL_LINE.match(line)), len(lines))
        lines = lines[start:]
    kept = [line.rstrip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return "\n".join(kept)


PROGRAM_JSON_FORMAT = (
    "Write the program as JSON: "
    '{"calls": [{"var": "response_obj", "name": "FUNCTION", "arguments": {"arg": "value", '
    '"other": {"ref": "response_obj.results[0].id"}}}, ...]}; a value read from an earlier '
    'call\'s response is {"ref": "variable.field[0].id"}.'
)
_REF = {
    "type": "object",
    "properties": {"ref": {"type": "string"}},
    "required": ["ref"],
    "additionalProperties": False,
}


def program_schema(ops: Iterable[Operation], *, max_calls: int | None = None) -> dict[str, Any]:
    """The JSON schema of a program for a constrained decoder: a list of calls (at most
    ``max_calls``), each to one of ``ops`` with only its documented parameters (the
    required ones present), each value of the documented type or a ``{"ref": "var.path"}``
    read of an earlier result.

    >>> from autofeedback.core._model import Parameter
    >>> op = Operation("getBook", parameters=(Parameter("bookId", "path", {"type": "integer"},
    ...     required=True),))
    >>> call = program_schema([op])["properties"]["calls"]["items"]["anyOf"][0]
    >>> call["properties"]["arguments"]["properties"]["bookId"]["anyOf"][1] == _REF
    True
    """
    from autofeedback.loop._prompt import _grammar_schema

    branches = []
    for op in ops:
        args = {
            "type": "object",
            "properties": {
                p.name: {"anyOf": [_grammar_schema(p.schema), _REF]} for p in op.parameters
            },
            "required": [p.name for p in op.parameters if p.required],
            "additionalProperties": False,
        }
        branches.append(
            {
                "type": "object",
                "properties": {
                    "var": {"type": "string"},
                    "name": {"const": op.name},
                    "arguments": args,
                },
                "required": ["var", "name", "arguments"],
                "additionalProperties": False,
            }
        )
    calls: dict[str, Any] = {"type": "array", "items": {"anyOf": branches}, "minItems": 1}
    if max_calls is not None:
        calls["maxItems"] = max_calls
    return {
        "type": "object",
        "properties": {"calls": calls},
        "required": ["calls"],
        "additionalProperties": False,
    }


def program_from_json(text: str) -> str:
    """A JSON program (:func:`program_schema`) as program text; the text as it is when it
    is not one (the checks then report E1).

    >>> print(program_from_json('{"calls": [{"var": "r", "name": "find", "arguments": '
    ...     '{"q": "x"}}, {"var": "b", "name": "get", "arguments": '
    ...     '{"id": {"ref": "r.items[0].id"}}}]}'))
    r = find(q='x')
    b = get(id=r.items[0].id)
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    calls = data.get("calls") if isinstance(data, Mapping) else None
    if not isinstance(calls, list):
        return text
    lines = []
    for i, call in enumerate(calls):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            lines.append(json.dumps(call))  # unreadable: E1 on that line
            continue
        var = call.get("var")
        var = var if isinstance(var, str) and var.isidentifier() else f"response_obj{i}"
        raw = call.get("arguments")
        args: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        parts = []
        for key, value in args.items():
            if isinstance(value, Mapping) and isinstance(value.get("ref"), str):
                parts.append(f"{key}={value['ref']}")
            else:
                parts.append(f"{key}={value!r}")
        lines.append(f"{var} = {call['name']}({', '.join(parts)})")
    return "\n".join(lines)


def program_as_json(program: str) -> str:
    """A program in the JSON form of :func:`program_schema` (few-shot answers for a
    constrained model).

    >>> json.loads(program_as_json("r = find(q='x')\\nget(id=r.items[0].id)"))["calls"][1]
    {'var': 'response_obj1', 'name': 'get', 'arguments': {'id': {'ref': 'r.items[0].id'}}}
    """
    from autofeedback.flow._program import is_literal, parse_program

    calls, _ = parse_program(program)
    out = []
    for i, call in enumerate(calls):
        args = {
            k: v if is_literal(v) else {"ref": getattr(v, "text", "") or str(v)}
            for k, v in call.arguments.items()
        }
        out.append(
            {"var": call.variable or f"response_obj{i}", "name": call.name, "arguments": args}
        )
    return json.dumps({"calls": out})


class ProgramRunner(_Runner):
    """The model writes the whole program; E1-E5 feed back; it writes it again.

    >>> runner = ProgramRunner(llm, catalog)                      # doctest: +SKIP
    >>> result = runner.run("Who directed Titanic?")              # doctest: +SKIP
    >>> print(result.program)                                     # doctest: +SKIP
    r = GET_search_movie(query="Titanic")
    GET_movie__movie_id__credits(movie_id=r.results[0].id)
    """

    mode = "program"

    def __init__(
        self,
        llm: LLMClient | Callable[[list[dict[str, str]]], Any],
        catalog: ApiCatalog,
        *,
        constrain: bool = False,
        max_calls: int = 8,
        **options: Any,
    ) -> None:
        super().__init__(llm, catalog, **options)
        if max_calls < 1:
            raise ConfigurationError("max_calls must be >= 1")
        if constrain:
            from autofeedback.loop._loop import _takes_schema

            if not _takes_schema(self.llm):
                raise ConfigurationError(
                    f"constrain=True needs an LLM client whose complete() takes schema= "
                    f"(LocalLLM, OpenAICompatibleLLM); {type(self.llm).__name__} does not"
                )
        #: grammar-constrained decoding: the program is written as JSON
        #: (:func:`program_schema`), calls to documented functions with documented
        #: parameter names and types, or ``{"ref": ...}`` for a value read from a response.
        #: Off by default: on GraphQL-RestBench the local 1.5B model then called the right
        #: functions more often but filled in optional parameters the task did not need
        #: (benchmarks/RESULTS.md, "Multi-step tasks: GraphQL-RestBench")
        self.constrain = constrain
        #: the most calls a constrained program may have: without a bound the 1.5B model
        #: wrote the same two calls over and over until its token limit cut the JSON
        #: (GraphQL-RestBench gql-train-71; the gold programs have 1-5 calls)
        self.max_calls = max_calls

    def run(
        self,
        instruction: str,
        *,
        prompt: str | None = None,
        examples: Sequence[tuple[str, str]] = (),
        trace: str | Path | None = None,
    ) -> TaskResult:
        """Ask for a program, check it, feed its errors back, within the bounds.

        ``prompt``: the user turn (default :func:`program_prompt`); ``examples``:
        few-shot ``(prompt, program)`` pairs shown before it.
        """
        first = (
            prompt
            if prompt is not None
            else program_prompt(self.catalog, instruction, self.checker)
        )
        schema = (
            program_schema(self.catalog.operations, max_calls=self.max_calls)
            if self.constrain
            else None
        )
        if schema is not None:
            first += "\n\n" + PROGRAM_JSON_FORMAT
        messages: list[dict[str, str]] = []
        for shot, answer in examples:
            shown = (
                program_as_json(answer)
                if schema is not None
                else f"```python\n{answer.strip()}\n```"
            )
            messages += [
                {"role": "user", "content": shot},
                {"role": "assistant", "content": shown},
            ]
        messages.append({"role": "user", "content": first})
        turns: list[TaskTurn] = []
        run = self._run()
        while run.stop is None:
            started = time.perf_counter()
            text, p_tok, c_tok = self._ask(messages, schema)
            run.asked((p_tok or 0) + (c_tok or 0))
            written = program_from_json(text) if schema is not None else extract_program(text)
            decision = self.decider.decide_program(
                written, instruction=instruction, checker=self.checker
            )
            judged, program, feedback = run.program_turn(
                decision, written, instruction=instruction, constrained=schema is not None
            )
            findings = list(judged.remaining)
            base = TaskTurn(
                len(turns) + 1,
                "program",
                text,
                program=program,
                findings=tuple(judged.findings),
                prompt_tokens=p_tok,
                completion_tokens=c_tok,
                repairs=judged.repairs,
            )
            self._turn(_timed(base, started, feedback=feedback), turns)
            if feedback is not None:
                messages = [
                    *messages,
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": feedback},
                ]
        stop = cast(TaskStop, run.stop)
        result = TaskResult("program", stop, program, tuple(findings), turns=tuple(turns))
        if trace is not None:
            self.write_trace(result, trace)
        return result

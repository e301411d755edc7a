"""Multi-step tasks: the model plans several calls, and the data-flow checks (E5) feed back.

Two runners, both bounded (feedback rounds, a repeated identical answer stops, an
optional token budget) and both logging every model turn for the person who takes over
(:meth:`TaskResult.as_dicts`, one JSON-able dict per turn, credentials redacted):

* :class:`ProgramRunner`: the model writes the whole program at once, in
  GraphQL-RestBench's CoT prompt shape (function signatures, then the instruction); the
  program is read with :mod:`ast` (never executed) and
  :class:`~autofeedback.sequences.SequenceChecker` checks it (E1-E5); its errors are fed back
  and the model writes the program again.
* :class:`ReactRunner`: the model issues one call per turn (``Thought`` / ``Action``,
  the call in the loop's ``<API>...</API>`` format or as a JSON call), each call is
  checked against the trace so far *before* it is sent (a made-up id is E5.3 and never
  reaches the server), the response is shown as the next ``Observation`` (cut to
  ``observation_chars``), and the model ends with ``Final Answer:``. Tools that an
  earlier response documents (a tool-search result) become callable.

With ``feedback=False`` both runners are the Base setting: nothing is checked before a
call is sent, and a program is taken as first written.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import requests

from autofeedback._parse._output import to_requests
from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_name import check_name
from autofeedback.core._exceptions import ConfigurationError, HostNotAllowed
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.core._redact import auth_names, credential_values, redact
from autofeedback.decide import Decider, Decision, Policy, RepairMode, check_repair
from autofeedback.decide._corrected import call_text, next_action
from autofeedback.decide._feedback import (
    CALL_LINE,
    inserted_turn,
    observation,
    observed,
    unfinished_note,
)
from autofeedback.decide._render import rewrite_output
from autofeedback.decide._run import (
    HOST_NOT_ALLOWED,
    NO_CALL,
    UNREACHABLE,
    Run,
    TaskStop,
    call_key,
)
from autofeedback.flow._graph import FlowGraph
from autofeedback.flow._graphql import with_responses
from autofeedback.flow._sequence import Sequence as StepSequence
from autofeedback.flow._sequence import Step, StepResponse
from autofeedback.flow._tools import documented_tools, with_tools_in_text
from autofeedback.loop._llm import LLMClient
from autofeedback.loop._loop import TraceRow, _request_dict
from autofeedback.loop._prompt import describe_operations
from autofeedback.loop._send import SENSITIVE, allowed_hosts, build_http, send
from autofeedback.scanner._scan import Scanner
from autofeedback.scanner._sequences import SequenceChecker, response_schemas

__all__ = ["ProgramRunner", "ReactRunner", "TaskResult", "TaskTurn"]

HOOKS = ("turn",)


@dataclass(frozen=True)
class TaskTurn(TraceRow):
    """One model turn of a task and what became of it.

    ``kind``: ``program`` (a whole program), ``call`` (one ReAct call), ``answer`` (the
    final answer) or ``none`` (nothing usable). ``findings`` are the checks' findings on
    what the turn wrote; ``feedback`` what was fed back for it; ``sent`` / ``status`` /
    ``observation`` the HTTP call (credentials redacted) and what came back;
    ``repairs`` what autofeedback repaired in it (:mod:`autofeedback.decide`): the call
    sent, or the program taken, is the repaired one.
    """

    number: int
    kind: Literal["program", "call", "answer", "none"]
    output: str
    program: str | None = None
    request: ApiRequest | None = None
    findings: tuple[Finding, ...] = ()
    feedback: str | None = None
    sent: Mapping[str, Any] | None = None
    status: int | None = None
    observation: str | None = None
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0
    repairs: tuple[Repair, ...] = ()


@dataclass(frozen=True)
class TaskResult:
    """The outcome of a task.

    ``program``: the final program (program mode) or the calls made, one per line
    (ReAct); ``calls``: the calls sent, in order, as ``(request, status, body)``;
    ``findings``: the checks' findings on the final program / on the calls made;
    ``answer``: the model's final answer (ReAct); ``turns``: every model turn.
    """

    mode: Literal["program", "react"]
    stop_reason: TaskStop
    program: str
    findings: tuple[Finding, ...] = ()
    calls: tuple[tuple[ApiRequest, int | None, Any], ...] = ()
    answer: str | None = None
    turns: tuple[TaskTurn, ...] = field(default_factory=tuple)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def tokens(self) -> int:
        return sum((t.prompt_tokens or 0) + (t.completion_tokens or 0) for t in self.turns)

    @property
    def repairs(self) -> list[Repair]:
        """Every repair autofeedback made in the task's turns, in order."""
        return [r for t in self.turns for r in t.repairs]

    def as_dicts(self) -> list[dict[str, Any]]:
        """One dict per turn, then a summary dict (``summary: True``)."""
        rows = [t.as_dict() for t in self.turns]
        rows.append(
            {
                "summary": True,
                "mode": self.mode,
                "stop_reason": self.stop_reason,
                "program": self.program,
                "answer": self.answer,
                "findings": [f.as_dict() for f in self.findings],
                "calls": [{"request": _request_dict(r), "status": s} for r, s, _ in self.calls],
                "repairs": [r.as_dict() for r in self.repairs],
                "tokens": self.tokens,
            }
        )
        return rows


class _Runner:
    """What both runners share: the client, the checker, the bounds, the trace."""

    mode: Literal["program", "react"]

    def __init__(
        self,
        llm: LLMClient | Callable[[list[dict[str, str]]], Any],
        catalog: ApiCatalog,
        *,
        scanner: Scanner | None = None,
        checker: SequenceChecker | None = None,
        responses: Any = None,
        feedback: bool = True,
        max_rounds: int = 3,
        token_budget: int | None = None,
        hooks: Mapping[str, Sequence[Callable[[Any], None]]] | None = None,
        secrets: Iterable[str] = (),
        repair: RepairMode = "sure",
    ) -> None:
        from autofeedback.loop._loop import _as_client

        check_repair(repair)
        if max_rounds < 0:
            raise ConfigurationError("max_rounds must be >= 0")
        unknown = set(hooks or {}) - set(HOOKS)
        if unknown:
            raise ConfigurationError(f"unknown hooks {sorted(unknown)}; known: {list(HOOKS)}")
        self.llm = _as_client(llm)
        self.catalog = catalog
        self.scanner = scanner or Scanner(catalog, retriever=None)
        if checker is None:
            schemas = response_schemas(responses)
            graph = FlowGraph.from_catalog(with_responses(catalog, schemas) if schemas else catalog)
            checker = SequenceChecker(self.scanner, graph=graph, responses=schemas)
        self.checker = checker
        #: ``"sure"``: what is certain is repaired before a call is sent or a program
        #: taken, instead of asking the model again (:mod:`autofeedback.decide`)
        self.repair = repair
        self.decider = Decider(self.scanner, repair=repair)
        self.feedback = feedback
        self.max_rounds = max_rounds
        self.token_budget = token_budget
        self.hooks = {name: list((hooks or {}).get(name, ())) for name in HOOKS}
        self._names = auth_names(catalog)
        self._secrets = list(secrets)

    def _ask(
        self,
        messages: list[dict[str, str]],
        schema: Mapping[str, Any] | None = None,
        stop: Sequence[str] | None = None,
    ) -> tuple[str, int | None, int | None]:
        options: dict[str, Any] = {}
        if schema is not None:
            options["schema"] = schema
        from autofeedback.loop._loop import _takes

        if stop and _takes(self.llm, "stop"):
            options["stop"] = list(stop)
        text = self.llm.complete(list(messages), **options)
        usage = getattr(self.llm, "last_usage", None)
        return (
            text,
            getattr(usage, "prompt_tokens", None),
            getattr(usage, "completion_tokens", None),
        )

    def _scrub(self, value: Any) -> Any:
        return redact(value, names=self._names, secrets=self._secrets)

    def _run(self, max_steps: int | None = None) -> Run:
        """This run's bounds, as the run driver applies them."""
        policy = Policy(
            repair=self.repair,
            feedback=self.feedback,
            max_rounds=self.max_rounds,
            token_budget=self.token_budget,
            max_steps=max_steps,
        )
        return Run(policy, self.mode)

    def _turn(self, turn: TaskTurn, turns: list[TaskTurn]) -> None:
        turns.append(turn)
        for fn in self.hooks["turn"]:
            fn(turn)

    def write_trace(self, result: TaskResult, path: str | Path) -> None:
        """Append one JSON line per turn, then the summary line; credentials redacted."""
        with open(path, "a", encoding="utf-8") as fh:
            for row in result.as_dicts():
                fh.write(json.dumps(self._scrub(row), default=str) + "\n")


# -- program mode -------------------------------------------------------------------------

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


# -- ReAct mode ---------------------------------------------------------------------------

REACT_SYSTEM = (
    "You are an assistant that fulfils the user's request by calling web APIs, one call "
    "at a time, and reading each response before the next call.\n"
    "Available APIs:\n{docs}\n\n"
    "Each turn, write one Thought line and one Action line, then stop:\n"
    "Thought: what you need next and why\n"
    "Action: the call, written as <API>Name(parameter='text value', other=42)</API>\n"
    "For example, for an API GetWeather with parameters city and days, the action for a "
    "three-day forecast in Paris is Action: <API>GetWeather(city='Paris', days=3)</API>.\n"
    "The response comes back to you as an Observation: never write an Observation "
    "yourself. Take ids and other values from the user's request or from earlier "
    "Observations, never make them up. Once the Observations answer the request, write\n"
    "Final Answer: the answer for the user"
)

_FINAL = re.compile(r"Final Answer\s*:\s*(.*)", re.DOTALL | re.IGNORECASE)
_ACTION = re.compile(r"Action\s*:\s*(.*)", re.DOTALL)
_OWN_OBSERVATION = re.compile(r"^\s*Observation\s*:", re.MULTILINE)


def read_react(text: str) -> tuple[str | None, str | None]:
    """``(call text, final answer)`` of a ReAct turn: the text after ``Action:`` (or the
    whole turn when it has none), and the text after ``Final Answer:`` when the turn
    holds no call before it.

    >>> read_react("Thought: done\\nFinal Answer: 42")
    (None, '42')
    >>> read_react("Thought: x\\nAction: <API>f(a=1)</API>")
    ('<API>f(a=1)</API>', None)

    What a model writes after its action (an ``Observation:`` of its own, the next turns,
    an answer) is cut off: the observation is the server's to give.

    >>> read_react("Action: <API>f(a=1)</API>\\nObservation: {}\\nFinal Answer: 2")
    ('<API>f(a=1)</API>', None)
    """
    text = _OWN_OBSERVATION.split(text, maxsplit=1)[0]
    final = _FINAL.search(text)
    head = text[: final.start()] if final else text
    action = _ACTION.search(head)
    call = action.group(1).strip() if action else None
    if call is None and final is None:
        call = head.strip() or None
    if call and "(" not in call and "{" not in call:
        call = None  # "Action: none": no call here
    answer = final.group(1).strip() if final and not call else None
    return call, answer


class ReactRunner(_Runner):
    """The model issues one call at a time against ``base_url``; each call is checked
    against the trace so far before it is sent.

    >>> with Sandbox(catalog) as sandbox:                         # doctest: +SKIP
    ...     result = ReactRunner(llm, catalog, base_url=sandbox.url).run(
    ...         "Who wrote the book called Dune?")
    >>> [r.name for r, _, _ in result.calls], result.answer      # doctest: +SKIP
    (['searchBooks', 'getBook'], 'Frank Herbert')
    """

    mode = "react"

    def __init__(
        self,
        llm: LLMClient | Callable[[list[dict[str, str]]], Any],
        catalog: ApiCatalog,
        *,
        base_url: str | None = None,
        allow_hosts: Iterable[str] = (),
        max_steps: int = 8,
        observation_chars: int = 1500,
        timeout: float = 10.0,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        max_prompt_apis: int = 50,
        stop: Sequence[str] = (),
        **options: Any,
    ) -> None:
        headers = dict(headers or {})
        secrets = [
            p
            for k, v in headers.items()
            if k.lower() in SENSITIVE and v
            for p in credential_values(v)
        ]
        super().__init__(llm, catalog, secrets=secrets, **options)
        self.base_url = base_url or (catalog.servers[0] if catalog.servers else None)
        if self.base_url is None:
            raise ConfigurationError("the spec declares no server: pass base_url")
        if max_steps < 1 or observation_chars < 50:
            raise ConfigurationError("max_steps must be >= 1 and observation_chars >= 50")
        self.allowed = allowed_hosts(catalog, base_url, allow_hosts)
        self.max_steps = max_steps
        self.observation_chars = observation_chars
        #: strings that end a turn (e.g. :data:`REACT_STOP`), for clients that take them;
        #: off by default: cut there, the local 1.5B model kept calling APIs (an order
        #: placed and cancelled) where it had answered the bookshop task of docs/runners.md
        self.stop = tuple(stop)
        self.timeout = timeout
        self.headers = headers
        self.session = session or requests.Session()
        self.max_prompt_apis = max_prompt_apis

    def _prompt_ops(self, instruction: str) -> list[Operation]:
        ops = list(self.catalog.operations)
        retriever = self.scanner.retriever
        if len(ops) <= self.max_prompt_apis or retriever is None:
            return ops
        ranked = retriever.rank(instruction, self.catalog, k=self.max_prompt_apis)
        return [op for r in ranked if (op := self.catalog.get(r.name)) is not None]

    def run(self, instruction: str, *, trace: str | Path | None = None) -> TaskResult:
        """Think, check, act, observe until the model answers or the bounds run out."""
        docs = describe_operations(self._prompt_ops(instruction))
        messages = [
            {"role": "system", "content": REACT_SYSTEM.format(docs=docs)},
            {"role": "user", "content": instruction},
        ]
        # tools a tool search in the request's own dialogue found are callable (the
        # checker finds them in the instruction too)
        catalog = with_tools_in_text(self.catalog, instruction)
        steps: list[Step] = []
        calls: list[tuple[ApiRequest, int | None, Any]] = []
        findings_made: list[Finding] = []
        turns: list[TaskTurn] = []
        # the conversation up to the last call sent (or the request), as it was then: a
        # note ends its last message, in place of any note before it
        accepted = list(messages)
        answer: str | None = None
        # the run driver owns the bounds (rounds, tokens, steps), the repeats of a call,
        # the stop, the call key and the words
        run = self._run(self.max_steps)
        while run.stop is None:
            started = time.perf_counter()
            text, p_tok, c_tok = self._ask(messages, stop=self.stop)
            run.asked((p_tok or 0) + (c_tok or 0))
            action_text, final = read_react(text)
            base = TaskTurn(
                len(turns) + 1, "none", text, prompt_tokens=p_tok, completion_tokens=c_tok
            )
            if final is not None:
                answer = final
                turn = _timed(base, started, kind="answer")
                # once: the answer left out, the last Observation ends in the Action
                note = run.answer(functools.partial(self._unfinished, instruction, calls, catalog))
                self._turn(_replace(turn, feedback=note) if note is not None else turn, turns)
                if note is not None:
                    messages = _noted(accepted, note)
                continue
            parsed, problem = to_requests(action_text or text)
            written = parsed[0] if parsed and problem is None else None
            key = call_key(written, text)
            findings: list[Finding] = []
            request = written
            repairs: tuple[Repair, ...] = ()
            if problem is not None:
                findings = [problem]
                remaining = findings
            elif written is not None:
                # the one decision: the call checked as the next step of the trace so far,
                # and what is certain repaired (the call sent is then the repaired one)
                decision = self._decide(steps, written, instruction)
                if decision.first is not None and run.may_send_first():
                    # a value made up that one producer taking no argument gives: that
                    # call is sent first, shown as the run's own, and the call decided
                    # again with its response in the trace
                    producer, inserted = decision.first
                    sent, response, error = self._call_api(producer, catalog, run)
                    extra = TaskTurn(
                        len(turns) + 1, "call", "", request=producer, sent=sent, repairs=(inserted,)
                    )
                    if response is None:
                        self._turn(_replace(extra, error=error), turns)
                        break
                    _, observation = self._observed(producer, response, steps, calls)
                    run.sent(producer)
                    self._turn(
                        _replace(extra, status=response.status_code, observation=observation),
                        turns,
                    )
                    messages = [
                        *messages,
                        {"role": "assistant", "content": inserted_turn(producer)},
                        {"role": "user", "content": observed(observation)},
                    ]
                    accepted = list(messages)
                    decision = self._decide(steps, written, instruction)
                findings, remaining = list(decision.findings), list(decision.remaining)
                request, repairs = decision.request, decision.repairs
            # Base: whatever was found, the call goes out (the findings stay on record)
            errors = [f for f in remaining if f.severity == "error"] if self.feedback else []
            if request is None and not self.feedback:
                self._turn(_timed(base, started, findings=tuple(findings)), turns)
                run.end(NO_CALL)
                break
            # the turn of a call that is not sent (rejected, or made already)
            held = _timed(
                base,
                started,
                kind="call",
                request=written,
                findings=tuple(findings),
                repairs=repairs,
            )
            if errors or request is None:
                action = (
                    next_action(
                        errors,
                        request,
                        catalog,
                        self.checker.producers,
                        {r.name for r, _, _ in calls},
                    )
                    if self.feedback
                    else None
                )
                told = run.react_rejected(key, errors, written, action, repairs)
                self._turn(_replace(held, feedback=told.feedback), turns)
                if told.note:
                    assert told.feedback is not None
                    messages = _noted(accepted, told.feedback)
                elif told.feedback is not None:
                    messages = [
                        *messages,
                        {"role": "assistant", "content": text},
                        {"role": "user", "content": told.feedback},
                    ]
                continue
            assert request is not None
            if run.made_before(request):
                # the same call again: its Observation is already in the conversation
                told = run.made_again(key)
                self._turn(_replace(held, feedback=told.feedback, error=told.error), turns)
                if told.feedback is not None:
                    messages = [
                        *messages,
                        {"role": "assistant", "content": text},
                        {"role": "user", "content": told.feedback},
                    ]
                continue
            sent, response, error = self._call_api(request, catalog, run)
            turn = _timed(
                base,
                started,
                kind="call",
                request=written,
                findings=tuple(findings),
                sent=sent,
                repairs=repairs,
            )
            if response is None:
                self._turn(_replace(turn, error=error), turns)
                break
            body, observation = self._observed(request, response, steps, calls)
            run.sent(request)
            findings_made += findings
            found = documented_tools(body)
            if found is not None:  # a tool-search answer: its tools are callable now
                catalog = ApiCatalog.merge(catalog, found)
            self._turn(_replace(turn, status=response.status_code, observation=observation), turns)
            run.stepped()
            # the model's turn as it was sent: its text with the repaired call
            shown = text
            if repairs and written is not None:
                shown = rewrite_output(text, [(written, request)]) or text
            messages = [
                *messages,
                {"role": "assistant", "content": shown},
                {"role": "user", "content": observed(observation)},
            ]
            accepted = list(messages)
        stop = cast(TaskStop, run.stop)
        program = "\n".join(call_text(r) for r, _, _ in calls)
        result = TaskResult(
            "react", stop, program, tuple(findings_made), tuple(calls), answer, tuple(turns)
        )
        if trace is not None:
            self.write_trace(result, trace)
        return result

    def _call_api(
        self, request: ApiRequest, catalog: ApiCatalog, run: Run
    ) -> tuple[Any, requests.Response | None, str | None]:
        """Send ``request``: what was sent (credentials redacted), the response, and where
        it could not be sent, why (the run then ends)."""
        op = check_name(request, catalog).operation
        call = build_http(
            request, op or Operation(request.name or ""), self.base_url or "", self.headers
        )
        sent = self._scrub(call.redacted([p.name for p in op.auth_parameters] if op else []))
        try:
            response = send(call, allowed=self.allowed, session=self.session, timeout=self.timeout)
        except HostNotAllowed as exc:
            run.end(HOST_NOT_ALLOWED)
            return sent, None, str(exc)
        except requests.RequestException as exc:
            run.end(UNREACHABLE)
            return sent, None, f"cannot reach the API: {type(exc).__name__}"
        return sent, response, None

    def _observed(
        self,
        request: ApiRequest,
        response: requests.Response,
        steps: list[Step],
        calls: list[tuple[ApiRequest, int | None, Any]],
    ) -> tuple[Any, str]:
        """The response's body and its Observation, the call added to the trace."""
        body = _body(response)
        steps.append(Step(len(steps), request, response=StepResponse(response.status_code, body)))
        calls.append((request, response.status_code, body))
        return body, self._observation(response.status_code, body)

    def _unfinished(
        self,
        instruction: str,
        calls: Sequence[tuple[ApiRequest, int | None, Any]],
        catalog: ApiCatalog,
    ) -> str | None:
        """The note for a Final Answer given before the API that fits the request best
        was called, where the identifiers it needs are already in an Observation: the
        Action to write. ``None`` without the scanner's retriever, before any call, and
        where a call made ranks above every such API (among the retriever's top
        :data:`UNFINISHED_TOP` for the instruction)."""
        retriever = self.scanner.retriever
        if retriever is None or not calls:
            return None
        called = {r.name for r, _, _ in calls}
        for ranked in retriever.rank(instruction, catalog, k=UNFINISHED_TOP):
            op = catalog.get(ranked.name)
            if ranked.name in called or op is None:
                return None
            ids = [p.name for p in op.parameters if p.required and p.location == "path"]
            sources = {
                name: next(
                    (
                        p.operation
                        for p in self.checker.producers(op.name, name)
                        if p.via != "weak" and p.operation in called
                    ),
                    None,
                )
                for name in ids
            }
            if not ids or None in sources.values():
                continue
            needed = [p.name for p in op.parameters if p.required]
            given = [(name, source) for name, source in sources.items() if source is not None]
            return unfinished_note(op.name, given, needed)
        return None

    def _decide(self, steps: list[Step], request: ApiRequest, instruction: str) -> Decision:
        """The decision on ``request`` as the next step of the trace so far (its findings
        located under ``step[i]``; the sequence's E2.1 left out: a search before the goal
        is no wrong API)."""
        seq = StepSequence((*steps, Step(len(steps), request)), instruction=instruction)
        where = f"step[{len(steps)}]"
        found = [
            f
            for f in self.checker.iter_findings(seq)
            if f.location[:1] == (where,) and not f.code.startswith("E2.1")
        ]
        [decision] = self.decider.decide_steps(
            seq, len(steps), checker=self.checker, findings=found
        )
        return dataclasses.replace(
            decision,
            findings=tuple(_under(f, where) for f in decision.findings),
            remaining=tuple(_under(f, where) for f in decision.remaining),
        )

    def _observation(self, status: int, body: Any) -> str:
        text = body if isinstance(body, str) else json.dumps(body, default=str)
        return observation(status, str(self._scrub(text)), self.observation_chars)


def _under(f: Finding, where: str) -> Finding:
    return dataclasses.replace(f, location=(where, *f.location))


def _noted(messages: Sequence[dict[str, str]], note: str) -> list[dict[str, str]]:
    """``messages`` with ``note`` ending the last one."""
    *head, last = messages
    return [*head, {**last, "content": f"{last['content']}\n\n{note}"}]


#: how many of the retriever's APIs for the instruction an early Final Answer is held
#: against; one of them must rank above every call made, so that an answer given after
#: the call that fits the request best is not questioned
UNFINISHED_TOP = 3

#: where a ReAct turn ends: the runner, not the model, writes the observation
REACT_STOP = ("\nObservation:",)


def _body(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def _replace(turn: TaskTurn, **changes: Any) -> TaskTurn:
    from dataclasses import replace

    return replace(turn, **changes)


def _timed(turn: TaskTurn, started: float, **changes: Any) -> TaskTurn:
    return _replace(turn, seconds=round(time.perf_counter() - started, 4), **changes)

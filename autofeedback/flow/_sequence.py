"""Sequences: the inputs that hold more than one call, read into one shape.

* a *program* (:func:`~autofeedback.flow._program.parse_program`): calls with variables;
* a *trace* record ``{"id", "instruction", "tools", "steps": [{"call" | "request" |
  "output": ..., "response": {"status", "body"}}]}``: concrete calls with what came back;
* an OpenAI chat log: assistant ``tool_calls`` followed by ``tool`` messages;
* a HAR session: its entries in order, as a trace record (the audit turns each entry
  into a ``request`` step, its ``response`` beside it).

Every reader returns a :class:`Sequence`; nothing is executed and nothing is dropped: a
step that cannot be read carries its E1 finding in ``problem``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from autofeedback._findings import Finding
from autofeedback._model import ApiRequest
from autofeedback.flow._program import ProgramCall, literal_request, parse_program

__all__ = [
    "Sequence",
    "Step",
    "StepResponse",
    "is_sequence_record",
    "sequence_from_chat",
    "sequence_from_program",
    "sequence_from_record",
]


@dataclass(frozen=True)
class StepResponse:
    """What a step got back: HTTP-like ``status`` (``None`` when unknown) and ``body``."""

    status: int | None = None
    body: Any = None


@dataclass(frozen=True)
class Step:
    """One call of a sequence.

    ``request`` is the concrete request (its literal arguments, for a program step);
    ``call`` the program form with references when the step came from a program;
    ``problem`` the E1 finding of a step that could not be read.
    """

    index: int
    request: ApiRequest | None = None
    call: ProgramCall | None = None
    response: StepResponse | None = None
    problem: Finding | None = None

    @property
    def name(self) -> str | None:
        if self.call is not None:
            return self.call.name
        return self.request.name if self.request is not None else None


@dataclass(frozen=True)
class Sequence:
    """Steps in order, with the text that may ground their values.

    ``instruction`` is the user's request; ``dialogue`` every other text the model saw
    (earlier user turns); ``tools`` the record's own tool list, if any.
    """

    steps: tuple[Step, ...]
    instruction: str | None = None
    dialogue: str = ""
    tools: Any = None
    responses: Any = None
    problems: tuple[Finding, ...] = field(default_factory=tuple)


def sequence_from_program(
    text: str, *, instruction: str | None = None, tools: Any = None, responses: Any = None
) -> Sequence:
    """A program as a sequence.

    >>> seq = sequence_from_program('r = find(q="x")\\nget(id=r.items[0].id)')
    >>> [s.name for s in seq.steps]
    ['find', 'get']
    """
    calls, problems = parse_program(text)
    steps = tuple(Step(i, literal_request(c), c) for i, c in enumerate(calls))
    return Sequence(steps, instruction, tools=tools, responses=responses, problems=tuple(problems))


def is_sequence_record(record: Mapping[str, Any]) -> bool:
    """Whether an audit record holds a sequence: ``steps``, a GraphQL-RestBench sample
    (``responses`` beside ``output``), or an ``output`` program with an assignment."""
    if "steps" in record:
        return True
    output = record.get("output")
    if isinstance(output, str) and "responses" in record:
        return True
    return isinstance(output, str) and _looks_like_program(output)


def _looks_like_program(text: str) -> bool:
    import ast

    from autofeedback.flow._program import program_statements

    if "=" not in text or "(" not in text:
        return False
    try:
        # a line that cannot be read (a zero-width space, a call cut off at the end)
        # is that line's E1: the rest of the program is still a program
        body, _ = program_statements(text)
    except Exception:
        return False
    return any(isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) for s in body) and all(
        isinstance(s, (ast.Assign, ast.Expr)) for s in body
    )


def sequence_from_record(record: Mapping[str, Any]) -> Sequence:
    """An audit record as a sequence (see the module docstring for the shapes).

    >>> seq = sequence_from_record({"instruction": "hi", "steps": [
    ...     {"call": {"name": "f", "arguments": {}}, "response": {"status": 200, "body": {}}}]})
    >>> seq.steps[0].response.status
    200
    """
    instruction = record.get("instruction")
    if instruction is not None and not isinstance(instruction, str):
        raise ValueError("'instruction' must be a string")
    tools, responses = record.get("tools"), record.get("responses")
    dialogue = record.get("dialogue") or ""
    if not isinstance(dialogue, str):
        dialogue = json.dumps(dialogue, default=str)
    if "steps" not in record:
        output = record.get("output")
        if not isinstance(output, str):
            raise ValueError("'output' must be a string")
        seq = sequence_from_program(
            output, instruction=instruction, tools=tools, responses=responses
        )
        return Sequence(seq.steps, instruction, dialogue, tools, responses, seq.problems)
    raw_steps = record["steps"]
    if not isinstance(raw_steps, list):
        raise ValueError("'steps' must be a list")
    steps = [_trace_step(i, raw) for i, raw in enumerate(raw_steps)]
    return Sequence(tuple(steps), instruction, dialogue, tools, responses)


def _trace_step(index: int, raw: Any) -> Step:
    from autofeedback._scan import to_requests

    where = (f"step[{index}]",)
    if not isinstance(raw, Mapping):
        return Step(
            index, problem=Finding("E1", where, repr(raw)[:200], message="step is not an object")
        )
    kinds = [k for k in ("call", "request", "output") if k in raw]
    if len(kinds) != 1:
        got = ", ".join(repr(k) for k in kinds) or "none"
        return Step(
            index,
            problem=Finding(
                "E1",
                where,
                got,
                message=f"step needs exactly one of 'call', 'request', 'output' (got {got})",
            ),
        )
    response = _response(raw.get("response"))
    value = raw[kinds[0]]
    requests, problem = to_requests(value)
    if problem is not None:
        problem = Finding(
            problem.code,
            where + problem.location,
            problem.got,
            problem.expected,
            problem.message,
            suggestion=problem.suggestion,
        )
        return Step(index, response=response, problem=problem)
    return Step(index, requests[0], response=response)


def _response(raw: Any) -> StepResponse | None:
    if raw is None:
        return None
    if isinstance(raw, Mapping) and ("body" in raw or "status" in raw):
        status = raw.get("status")
        return StepResponse(status if isinstance(status, int) else None, _decode(raw.get("body")))
    return StepResponse(None, _decode(raw))


def _decode(body: Any) -> Any:
    if isinstance(body, str):
        try:
            return json.loads(body)
        except (json.JSONDecodeError, RecursionError):
            return body
    return body


def _text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str)) or None
    return None


def sequence_from_chat(messages: Iterable[Any], *, tools: Any = None) -> Sequence:
    """An OpenAI chat log (``messages``) as a sequence: each assistant tool call is a step,
    the ``tool`` message answering it (by ``tool_call_id``) its response; user turns are
    the instruction (the first) and the dialogue.

    >>> seq = sequence_from_chat([{"role": "user", "content": "weather in Paris"},
    ...     {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...      "function": {"name": "w", "arguments": '{"city": "Paris"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 12}'}])
    >>> seq.steps[0].request.arguments, seq.steps[0].response.body
    ({'city': 'Paris'}, {'temp': 12})
    """
    from autofeedback._scan import to_requests

    users: list[str] = []
    pending: list[tuple[str | None, Any]] = []
    answers: dict[str, Any] = {}
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        content = _text(message.get("content"))
        if role == "user" and content:
            users.append(content)
        elif role == "assistant":
            for call in message.get("tool_calls") or ():
                cid = call.get("id") if isinstance(call, Mapping) else None
                pending.append((cid if isinstance(cid, str) else None, call))
        elif role == "tool":
            cid = message.get("tool_call_id")
            if isinstance(cid, str):
                answers[cid] = content if content is not None else message.get("content")
    steps: list[Step] = []
    for index, (cid, call) in enumerate(pending):
        response = StepResponse(None, _decode(answers[cid])) if cid in answers else None
        requests, problem = to_requests({"tool_calls": [call]})
        if problem is not None or not requests:
            steps.append(Step(index, response=response, problem=problem))
        else:
            steps.append(Step(index, requests[0], response=response))
    instruction = users[0] if users else None
    return Sequence(tuple(steps), instruction, "\n".join(users[1:]), tools)

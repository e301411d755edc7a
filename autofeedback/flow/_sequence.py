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
from dataclasses import dataclass, field, replace
from typing import Any

from autofeedback.core._findings import Finding
from autofeedback.core._model import ApiRequest
from autofeedback.flow._program import ProgramCall, literal_request, parse_program

__all__ = [
    "Sequence",
    "Step",
    "StepResponse",
    "is_sequence_record",
    "looks_like_program",
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
    (system and developer messages, later user turns, tool results no step reads);
    ``tools`` the record's own tool list, if any.
    """

    steps: tuple[Step, ...]
    instruction: str | None = None
    dialogue: str = ""
    tools: Any = None
    responses: Any = None
    problems: tuple[Finding, ...] = field(default_factory=tuple)


def told_also(seq: Sequence, context: str | None) -> Sequence:
    """``seq`` with ``context`` among the texts that ground its values: what the model was
    told outside the chat's messages (Anthropic's ``system``, the Responses API's
    ``instructions``, Gemini's ``systemInstruction``, an audit record's ``context``),
    where the ids an agent works on are often given.

    >>> told_also(Sequence(()), "You act for account acc_7Q2.").dialogue
    'You act for account acc_7Q2.'
    """
    if not context:
        return seq
    return replace(seq, dialogue="\n".join(t for t in (context, seq.dialogue) if t))


def sequence_from_program(
    text: str,
    *,
    instruction: str | None = None,
    tools: Any = None,
    responses: Any = None,
    dialogue: str = "",
) -> Sequence:
    """A program as a sequence; ``dialogue``: what else the model saw (a system prompt, the
    chat so far), whose values ground the program's as the instruction's do.

    >>> seq = sequence_from_program('r = find(q="x")\\nget(id=r.items[0].id)')
    >>> [s.name for s in seq.steps]
    ['find', 'get']
    """
    calls, problems = parse_program(text)
    steps = tuple(Step(i, literal_request(c), c) for i, c in enumerate(calls))
    return Sequence(
        steps, instruction, dialogue, tools=tools, responses=responses, problems=tuple(problems)
    )


def is_sequence_record(record: Mapping[str, Any]) -> bool:
    """Whether an audit record holds a sequence: ``steps``, a GraphQL-RestBench sample
    (``responses`` beside ``output``), or an ``output`` program with an assignment."""
    if "steps" in record:
        return True
    output = record.get("output")
    if isinstance(output, str) and "responses" in record:
        return True
    return isinstance(output, str) and looks_like_program(output)


def looks_like_program(text: str) -> bool:
    """Whether ``text`` is a program: Python statements only, one of them a call whose
    result is assigned to a variable (``r = F(q="x")``)."""
    import ast

    from autofeedback.flow._statements import program_statements

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
    # what else the model saw: a sequence record's ``dialogue``, and the ``context`` any
    # audit record may give
    texts = [record.get("dialogue"), record.get("context")]
    dialogue = "\n".join(
        t if isinstance(t, str) else json.dumps(t, default=str) for t in texts if t
    )
    if "steps" not in record:
        output = record.get("output")
        if not isinstance(output, str):
            raise ValueError("'output' must be a string")
        return sequence_from_program(
            output, instruction=instruction, tools=tools, responses=responses, dialogue=dialogue
        )
    raw_steps = record["steps"]
    if not isinstance(raw_steps, list):
        raise ValueError("'steps' must be a list")
    steps = [_trace_step(i, raw) for i, raw in enumerate(raw_steps)]
    return Sequence(tuple(steps), instruction, dialogue, tools, responses)


def _trace_step(index: int, raw: Any) -> Step:
    from autofeedback._parse._output import to_requests

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
    """A message's text: a string, or the text parts of a content list (OpenAI's
    ``{"type": "text"}``, Anthropic's text blocks, Responses' ``input_text``, Gemini and
    Bedrock ``{"text"}`` parts); tool results and calls in the list are not text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str)) or None
    return None


def _result_body(content: Any) -> Any:
    """What a tool result holds, decoded: text (JSON where it is JSON), Anthropic's
    content blocks, Bedrock's ``[{"json": ...}]`` / ``[{"text": ...}]``."""
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and "json" in block:
                return block["json"]
        text = _text(content)
        return _decode(text) if text is not None else content
    return _decode(content)


def _provider_answers(message: Mapping[str, Any]) -> list[tuple[str | None, str | None, Any]]:
    """``(call id, tool name, body)`` of each tool result in a message of another
    provider's shape: a Responses ``function_call_output`` item, Anthropic
    ``tool_result`` blocks, Gemini ``functionResponse`` parts, Bedrock ``toolResult``."""
    if message.get("type") == "function_call_output":
        return [(_id(message.get("call_id")), None, _decode(message.get("output")))]
    out: list[tuple[str | None, str | None, Any]] = []
    for key in ("content", "parts"):
        blocks = message.get(key)
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_result":
                body = _result_body(block.get("content"))
                out.append((_id(block.get("tool_use_id")), None, body))
            elif isinstance(block.get("functionResponse"), Mapping):
                answer = block["functionResponse"]
                name = answer.get("name")
                out.append(
                    (
                        _id(answer.get("id")),
                        name if isinstance(name, str) else None,
                        _decode(answer.get("response")),
                    )
                )
            elif isinstance(block.get("toolResult"), Mapping):
                answer = block["toolResult"]
                body = _result_body(answer.get("content"))
                out.append((_id(answer.get("toolUseId")), None, body))
    return out


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _user_text(message: Mapping[str, Any]) -> str | None:
    """The text of a user turn in any provider's shape (``None`` for a turn that only
    carries tool results)."""
    if message.get("role") != "user":
        return None
    return _text(message.get("content")) or _text(message.get("parts"))


def sequence_from_chat(messages: Iterable[Any], *, tools: Any = None) -> Sequence:
    """A chat log (``messages``) as a sequence: each tool call is a step, the result
    answering it its response; user turns are the instruction (the first) and the
    dialogue.

    Every provider's conversation shape is read, and they may be mixed: OpenAI Chat
    (assistant ``tool_calls``, ``tool`` messages by ``tool_call_id``), OpenAI Responses
    input items (``function_call`` / ``function_call_output`` by ``call_id``), Anthropic
    (``tool_use`` / ``tool_result`` blocks by id), Gemini (``functionCall`` /
    ``functionResponse`` parts, by id or else by name in order) and Bedrock Converse
    (``toolUse`` / ``toolResult`` blocks by ``toolUseId``).

    >>> seq = sequence_from_chat([{"role": "user", "content": "weather in Paris"},
    ...     {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...      "function": {"name": "w", "arguments": '{"city": "Paris"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 12}'}])
    >>> seq.steps[0].request.arguments, seq.steps[0].response.body
    ({'city': 'Paris'}, {'temp': 12})
    >>> claude = sequence_from_chat([{"role": "user", "content": "weather in Paris"},
    ...     {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "w",
    ...      "input": {"city": "Paris"}}]},
    ...     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
    ...      "content": '{"temp": 12}'}]}])
    >>> claude.steps[0].request.shape, claude.steps[0].response.body, claude.instruction
    ('anthropic', {'temp': 12}, 'weather in Paris')
    """
    from autofeedback._parse._output import to_requests
    from autofeedback._parse._providers import RawToolCall, find_tool_calls

    users: list[str] = []
    # system and developer messages: what the model was told besides the user's turns
    # (an agent's prompt carries the account, calendar and tenant ids it works on)
    told: list[str] = []
    # (call id, tool name, the call as read: an OpenAI tool call or a provider's raw call)
    pending: list[tuple[str | None, str | None, Any]] = []
    answers: dict[str, Any] = {}
    by_name: list[tuple[str, Any]] = []  # Gemini answers without an id, in order
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        text = _user_text(message)
        if text:
            users.append(text)
        elif role in ("system", "developer"):
            said = _text(message.get("content"))
            if said:
                told.append(said)
        if role == "assistant" and message.get("tool_calls"):
            for call in message.get("tool_calls") or ():
                cid = call.get("id") if isinstance(call, Mapping) else None
                pending.append((cid if isinstance(cid, str) else None, None, call))
            continue
        if role == "tool":
            cid = message.get("tool_call_id")
            if isinstance(cid, str):
                content = _text(message.get("content"))
                answers[cid] = content if content is not None else message.get("content")
            continue
        if role in ("assistant", "model", None):
            found = find_tool_calls(message) if role is not None or "type" in message else None
            for raw in found or ():
                name = raw.name if isinstance(raw.name, str) else None
                pending.append((raw.call_id, name, raw))
        for cid, name, body in _provider_answers(message):
            if cid is not None:
                answers[cid] = body
            elif name is not None:
                by_name.append((name, body))
    steps: list[Step] = []
    for index, (cid, name, call) in enumerate(pending):
        response = None
        if cid is not None and cid in answers:
            response = StepResponse(None, _decode(answers.pop(cid)))
        elif cid is None and name is not None:
            hit = next((i for i, (n, _) in enumerate(by_name) if n == name), None)
            if hit is not None:
                response = StepResponse(None, by_name.pop(hit)[1])
        if isinstance(call, RawToolCall):
            requests, problem = _raw_request(call)
        else:  # an entry of ``tool_calls``: an object, or what the E1 says it is not
            read, problem = to_requests({"tool_calls": [call]})
            requests = list(read)
        if problem is not None or not requests:
            steps.append(Step(index, response=response, problem=problem))
        else:
            steps.append(Step(index, requests[0], response=response))
    instruction = users[0] if users else None
    # results that answer no call read here were seen by the model all the same
    unanswered = [_as_text(body) for body in answers.values()]
    unanswered += [_as_text(body) for _, body in by_name]
    dialogue = "\n".join([*told, *users[1:], *(t for t in unanswered if t)])
    return Sequence(tuple(steps), instruction, dialogue, tools)


def _as_text(body: Any) -> str:
    """A tool result as the text the model read."""
    if isinstance(body, str):
        return body
    try:
        return json.dumps(body, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return ""


def _raw_request(call: Any) -> tuple[list[ApiRequest], Finding | None]:
    """A provider's tool call (:class:`~autofeedback._parse._providers.RawToolCall`) as a
    request, or the E1 finding of one that cannot be read."""
    from autofeedback._parse._providers import shape_format

    name, arguments = call.name, call.arguments
    if not isinstance(name, str) or not name:
        return [], Finding(
            "E1", ("function", "name"), name, message="the tool call names no function"
        )
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError) as exc:
            return [], Finding(
                "E1",
                ("function", "arguments"),
                arguments[:200],
                expected="a JSON object",
                message=f"the arguments are not valid JSON ({type(exc).__name__})",
            )
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        return [], Finding(
            "E1",
            ("function", "arguments"),
            repr(arguments)[:200],
            expected="a JSON object",
            message=f"the arguments must be a JSON object, not {type(arguments).__name__}",
        )
    request = ApiRequest(
        name=name,
        arguments=dict(arguments),
        format=shape_format(call.shape),
        shape=call.shape,
        call_id=call.call_id,
    )
    return [request], None

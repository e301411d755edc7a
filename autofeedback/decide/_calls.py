"""The calls of a model's message: read in any provider's shape, decided, and written
back in that shape.

A message is an OpenAI Chat assistant message (``tool_calls``, or the pre-tools
``function_call``) or a whole chat completion, an OpenAI Responses ``output`` list or
response, an Anthropic message (``tool_use`` blocks), a Gemini content (``functionCall``
parts) or a Bedrock Converse message (``toolUse``), as a dict or an SDK object.
:func:`tool_calls_of` reads its calls; :func:`decide_calls` makes the one decision on
each (:class:`~autofeedback.decide.Decider`: alone, or as the next steps of the chat so
far) and writes every certain repair back into the message, in its own shape;
:func:`reply` answers a call in that shape. The tool-call helpers
(:func:`~autofeedback.decide_tool_calls`, :func:`~autofeedback.check_tool_calls`,
:func:`~autofeedback.tool_messages`), the OpenAI-compatible proxy and the
agent-framework adapters all read and write calls here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from autofeedback._parse._providers import find_tool_calls, shape_format
from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest, ToolCallShape
from autofeedback.decide._decision import Decider, Decision
from autofeedback.decide._feedback import tool_feedback
from autofeedback.scanner._scan import one_line

__all__ = [
    "Call",
    "ToolCallDecision",
    "ToolCallsDecision",
    "as_dict",
    "as_plain",
    "call_feedback",
    "call_request",
    "decide_calls",
    "decide_each",
    "decide_in_sequence",
    "flow_graph",
    "located",
    "reply",
    "tool_calls_of",
]


def get(obj: Any, key: str) -> Any:
    """``obj[key]`` for dicts, ``obj.key`` for SDK objects (``ChatCompletionMessage``)."""
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


@dataclasses.dataclass(frozen=True)
class Call:
    """One tool call of any provider shape, as the model wrote it; ``block`` is the
    mapping it was read from (where a repaired call is written back)."""

    shape: ToolCallShape
    call_id: str | None
    name: Any
    arguments: Any
    block: Any = dataclasses.field(default=None, compare=False)


def as_plain(message: Any) -> Any:
    """An SDK object (OpenAI, Anthropic...) without ``tool_calls`` as plain JSON data."""
    if isinstance(message, Mapping) or get(message, "tool_calls") is not None:
        return message
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        with contextlib.suppress(Exception):  # a pydantic object that will not dump
            return dump(mode="json", by_alias=True, exclude_none=True)
    return message


def tool_calls_of(message: Any) -> list[Call]:
    """The tool calls of ``message``; raises :class:`ConfigurationError` when it is no
    message or response at all (``None``, text, a number): nothing to check is not a
    clean call, and text output is :func:`~autofeedback.scan`'s to read."""
    message = as_plain(message)
    if message is None or isinstance(message, (str, bytes, bytearray, int, float)):
        hint = (
            "; to check a model's text output, use scan() or Scanner.iter_findings()"
            if isinstance(message, (str, bytes, bytearray))
            else ""
        )
        raise ConfigurationError(
            "expected an assistant message or a model response (OpenAI, Anthropic, Gemini, "
            f"Bedrock) holding the tool calls, got {type(message).__name__}{hint}"
        )
    if isinstance(message, list) and message and all(is_chat_call(c) for c in message):
        message = {"tool_calls": message}  # `message.tool_calls` passed on its own
    choices = get(message, "choices")
    if isinstance(choices, Sequence) and not isinstance(choices, (str, bytes)) and choices:
        message = get(choices[0], "message")  # a whole chat completion
    calls = get(message, "tool_calls")
    if calls is not None:
        if isinstance(calls, (str, bytes)) or not isinstance(calls, Sequence):
            raise ConfigurationError(
                f"message['tool_calls'] must be a list, got {type(calls).__name__}"
            )
        out = []
        for call in calls:
            function = get(call, "function")
            call_id = get(call, "id")
            out.append(
                Call(
                    "openai-chat",
                    None if call_id is None else str(call_id),
                    get(function, "name") if function is not None else None,
                    get(function, "arguments") if function is not None else None,
                    call,
                )
            )
        return out
    legacy = get(message, "function_call")  # the pre-tools OpenAI function call
    if legacy is not None:
        block = message.get("function_call") if isinstance(message, Mapping) else None
        return [Call("openai-chat", None, get(legacy, "name"), get(legacy, "arguments"), block)]
    found = find_tool_calls(message)
    if found is None:
        if isinstance(message, list) and not message:
            return []  # an empty output list: no call was made
        if not any(get(message, key) is not None for key in ("role", "content")):
            raise ConfigurationError(
                "expected an assistant message or a model response (OpenAI, Anthropic, "
                "Gemini, Bedrock) holding the tool calls; got a "
                f"{type(message).__name__} in none of these shapes"
            )
        found = []  # a message that made no tool call: nothing to check
    return [Call(c.shape, c.call_id, c.name, c.arguments, c.block) for c in found]


def is_chat_call(value: Any) -> bool:
    """An OpenAI Chat tool call (``{"id", "type": "function", "function": {...}}``), as
    a dict or the SDK's object."""
    return get(value, "function") is not None and not isinstance(value, (str, bytes))


def call_request(call: Call) -> ApiRequest | Finding:
    """One tool call as a request that keeps its shape and id, or the E1 finding saying
    why it cannot be read. Arguments encoded twice (a JSON string holding the object) are
    read, and the request says so (E4.1, repairable)."""
    name = call.name
    if not isinstance(name, str) or not name:
        return Finding("E1", ("function", "name"), name, message="the tool call names no function")
    raw = call.arguments
    twice = False
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        arguments: Any = {}  # no arguments, as the parser and a chat's steps read them
    elif isinstance(raw, Mapping):
        arguments = raw
    else:
        try:
            arguments = json.loads(raw)
            if isinstance(arguments, str) and arguments.strip()[:1] == "{":
                inner = json.loads(arguments)
                if isinstance(inner, Mapping):
                    arguments, twice = inner, True
        except Exception as exc:  # not JSON, nested too deeply, not text at all
            return Finding(
                "E1",
                ("function", "arguments"),
                raw if isinstance(raw, str) else repr(raw),
                expected="a JSON object",
                message=f"the arguments are not valid JSON ({one_line(exc)})",
            )
    if not isinstance(arguments, Mapping):
        return Finding(
            "E1",
            ("function", "arguments"),
            arguments,
            expected="a JSON object",
            message=f"the arguments must be a JSON object, not {type(arguments).__name__}",
        )
    return ApiRequest(
        name=name,
        arguments=dict(arguments),
        format=shape_format(call.shape),
        shape=call.shape,
        call_id=call.call_id,
        double_encoded=twice,
    )


def decide_each(
    calls: Sequence[Call],
    decider: Decider,
    history: Sequence[Any] | None = None,
    instruction: str | None = None,
    context: str | None = None,
    graph: Any = None,
) -> list[Decision]:
    """The decision on each of ``calls``: alone (with what the user asked, when given),
    or as the last steps of the chat ``history``."""
    if history is not None and calls:
        return decide_in_sequence(calls, decider, history, graph, context=context)
    out: list[Decision] = []
    for call in calls:
        request = call_request(call)
        if isinstance(request, Finding):
            out.append(Decision("feedback", "errors", None, None, (request,), (request,)))
        else:
            out.append(decider.decide_request(request, instruction=instruction, context=context))
    return out


def _chat_steps(calls: Sequence[Call], history: Sequence[Any]) -> tuple[Any, int]:
    """The chat ``history`` with ``calls`` as its last assistant turn, as a sequence, and
    the index of the first of those calls' steps."""
    from autofeedback.flow._sequence import sequence_from_chat

    # the calls in OpenAI's chat form, whatever provider shape they came in
    chat_calls = [
        {
            "id": c.call_id or f"call_{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for i, c in enumerate(calls)
    ]
    earlier = sequence_from_chat([as_dict(m) for m in history])
    seq = sequence_from_chat(
        [*(as_dict(m) for m in history), {"role": "assistant", "tool_calls": chat_calls}]
    )
    return seq, len(earlier.steps)


def decide_in_sequence(
    calls: Sequence[Call],
    decider: Decider,
    history: Sequence[Any],
    graph: Any = None,
    *,
    context: str | None = None,
) -> list[Decision]:
    """The decisions on ``calls`` as the next steps of the chat ``history``; ``context``:
    what the model was told outside the history's messages (a system prompt given
    apart), whose values ground the calls' as the history's do."""
    from autofeedback.flow._sequence import told_also
    from autofeedback.scanner._sequences import SequenceChecker

    seq, first = _chat_steps(calls, history)
    seq = told_also(seq, context)
    checker = SequenceChecker(decider.scanner, graph=graph)
    decisions = decider.decide_steps(seq, first, checker=checker)
    out: list[Decision] = []
    for call, decision in zip(calls, decisions, strict=False):
        # each step was read from the chat form (OpenAI chat, ids ``call_0``...): the
        # requests keep the call's own shape and id
        own = {"shape": call.shape, "call_id": call.call_id}
        decision = dataclasses.replace(
            decision,
            request=_reshaped(decision.request, own),
            original=_reshaped(decision.original, own),
        )
        out.append(decision)
    return out


def _reshaped(request: ApiRequest | None, own: dict[str, Any]) -> ApiRequest | None:
    if request is None or (request.shape, request.call_id) == (own["shape"], own["call_id"]):
        return request
    return dataclasses.replace(request, **own)


def located(per_call: Sequence[Sequence[Finding]]) -> list[Finding]:
    """The findings of one message's calls: as they are for one call, under
    ``tool_calls[i]`` for several."""
    if len(per_call) == 1:
        return list(per_call[0])
    return [
        dataclasses.replace(f, location=(f"tool_calls[{i}]", *f.location))
        for i, findings in enumerate(per_call)
        for f in findings
    ]


def flow_graph(decider: Decider) -> Any:
    from autofeedback.flow._graph import FlowGraph

    return FlowGraph.from_catalog(decider.scanner.catalog)


def as_dict(value: Any) -> Any:
    """An SDK message or tool call as plain data (``model_dump``), else unchanged."""
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value


def reply(call: Call, text: str, ok: bool) -> dict[str, Any]:
    """The tool result answering ``call``, in the shape the call came in."""
    call_id = call.call_id or ""
    if call.shape == "openai-responses":
        return {"type": "function_call_output", "call_id": call_id, "output": text}
    if call.shape == "anthropic":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": text}
        if not ok:
            block["is_error"] = True
        return block
    if call.shape == "gemini":
        response: dict[str, Any] = {
            "name": call.name,
            "response": {"output" if ok else "error": text},
        }
        if call.call_id:
            response["id"] = call.call_id
        return {"functionResponse": response}
    if call.shape == "bedrock":
        return {
            "toolResult": {
                "toolUseId": call_id,
                "content": [{"text": text}],
                "status": "success" if ok else "error",
            }
        }
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def call_feedback(call: Call, decision: Decision, *, corrected: str | None = None) -> str:
    """The feedback for a tool call the decision did not forward, in the call's shape
    (:func:`~autofeedback.decide._feedback.tool_feedback`)."""
    return tool_feedback(call.shape, decision, corrected=corrected)


@dataclasses.dataclass(frozen=True)
class ToolCallDecision:
    """The decision on one tool call of a model's message (:func:`decide_calls`).

    ``name`` and ``arguments`` are the call to run, repaired where the docs leave one
    answer; ``decision`` says what was found, repaired and left
    (:class:`~autofeedback.decide.Decision`); ``reply`` is the tool result to send the
    model instead of running the call (its feedback, in the call's shape), ``None`` when
    the call may run.
    """

    shape: ToolCallShape
    call_id: str | None
    name: Any
    arguments: Mapping[str, Any] | None
    decision: Decision
    reply: dict[str, Any] | None = None

    @property
    def runs(self) -> bool:
        return self.reply is None


@dataclasses.dataclass(frozen=True)
class ToolCallsDecision:
    """The decision on every tool call of a model's message.

    ``message`` is the model's message with every certain repair written in, in its own
    shape (plain data), for the calls that run and for those that go back to the model
    (which then sees its call as autofeedback holds it); the message as given when
    nothing was repaired.
    """

    calls: tuple[ToolCallDecision, ...]
    message: Any

    @property
    def ok(self) -> bool:
        """Whether every call may run (as written, or repaired)."""
        return all(c.runs for c in self.calls)

    @property
    def replies(self) -> list[dict[str, Any]]:
        """The tool results for the calls that may not run."""
        return [c.reply for c in self.calls if c.reply is not None]

    @property
    def repairs(self) -> list[Repair]:
        return [r for c in self.calls for r in c.decision.repairs]

    @property
    def findings(self) -> list[Finding]:
        """Every finding of the calls as the model wrote them (the repaired ones carry
        their ``fix``), located as :func:`~autofeedback.check_tool_calls` locates them."""
        return located([c.decision.findings for c in self.calls])


def decide_calls(
    message: Any,
    decider: Decider,
    *,
    history: Sequence[Any] | None = None,
    instruction: str | None = None,
    context: str | None = None,
    graph: Any = None,
) -> ToolCallsDecision:
    """The decision on every tool call of ``message`` with a decider of the caller's (the
    proxies keep one per tool list): :func:`~autofeedback.decide_tool_calls`."""
    # an SDK object (OpenAI's ChatCompletionMessage, Response...) is read and rewritten
    # as one plain copy: its tool calls are no mappings to write a repair into, and a
    # second dump's blocks are not the ones the calls were read from (the repairs were
    # made, and the message came back without them)
    plain = _json_data(message)
    calls = tool_calls_of(plain)
    if history is not None and graph is None:
        graph = flow_graph(decider)
    decisions = decide_each(calls, decider, history, instruction, context, graph)
    out: list[ToolCallDecision] = []
    written: dict[int, dict[str, Any]] = {}
    for call, decision in zip(calls, decisions, strict=True):
        request = decision.request
        arguments = dict(request.arguments) if request is not None else None
        name = request.name if request is not None else call.name
        answer = None
        if decision.action != "forward":
            answer = reply(call, call_feedback(call, decision), False)
        if decision.repairs and request is not None and isinstance(call.block, Mapping):
            written[id(call.block)] = _written_block(call, request)
        out.append(ToolCallDecision(call.shape, call.call_id, name, arguments, decision, answer))
    new_message = _rewrite_blocks(plain, written) if written else message
    return ToolCallsDecision(tuple(out), new_message)


def _json_data(message: Any) -> Any:
    """An SDK object as the JSON its API sends (``model_dump(mode="json", by_alias=True,
    exclude_none=True)``); anything else unchanged."""
    dump = getattr(message, "model_dump", None)
    if isinstance(message, Mapping) or not callable(dump):
        return message
    try:
        return dump(mode="json", by_alias=True, exclude_none=True)
    except Exception:  # a pydantic object that will not dump: read as it is
        return message


def _written_block(call: Call, request: ApiRequest) -> dict[str, Any]:
    """The call's own mapping with the repaired name and arguments, in its shape
    (arguments stay a JSON string where they were one)."""
    block = dict(call.block)
    args = dict(request.arguments)
    if call.shape == "openai-chat":
        legacy = "function" not in block  # the pre-tools function_call: the block is it
        function = dict(block if legacy else block.get("function") or {})
        function["name"] = request.name
        text = isinstance(function.get("arguments"), str)
        function["arguments"] = json.dumps(args, ensure_ascii=False) if text else args
        if legacy:
            return function
        block["function"] = function
    elif call.shape == "openai-responses":
        block["name"] = request.name
        text = isinstance(block.get("arguments"), str) or "arguments" not in block
        block["arguments"] = json.dumps(args, ensure_ascii=False) if text else args
    elif call.shape == "anthropic":
        block["name"], block["input"] = request.name, args
    elif call.shape == "gemini":
        block["functionCall"] = {**block["functionCall"], "name": request.name, "args": args}
    elif call.shape == "bedrock":
        block["toolUse"] = {**block["toolUse"], "name": request.name, "input": args}
    return block


def _rewrite_blocks(value: Any, written: Mapping[int, Any], depth: int = 0) -> Any:
    """``value`` (plain JSON data) with each mapping whose ``id`` is in ``written``
    replaced; the containers on the way are copied, the rest shared."""
    if id(value) in written:
        return written[id(value)]
    if depth > 12:
        return value
    if isinstance(value, Mapping):
        return {k: _rewrite_blocks(v, written, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite_blocks(v, written, depth + 1) for v in value]
    return value

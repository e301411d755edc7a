"""Guard an agent's tool calls: check the arguments a model chose against the docs
*before* the tool runs, and hand the static feedback back instead of running it.

Three kinds of tool call are covered:

* a Python function the agent calls (:func:`guard`, :func:`guard_tool`);
* a model's native tool calls in any provider's shape: OpenAI Chat ``tool_calls``,
  OpenAI Responses ``function_call`` items, Anthropic ``tool_use``, Gemini
  ``functionCall``, Bedrock ``toolUse`` (:func:`check_tool_calls`, :func:`tool_messages`,
  which answers in the same shape);
* a LangChain tool (:func:`~autofeedback.integrations._langchain.guard_langchain_tool`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Literal, ParamSpec, TypeVar, cast, overload

from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import ConfigurationError, SpecError, ToolCallRejected
from autofeedback._feedback import render_feedback
from autofeedback._findings import Finding, Repair
from autofeedback._model import ApiRequest, ToolCallShape
from autofeedback._parse._providers import find_tool_calls, provider_tools, shape_format
from autofeedback._scan import Scanner, one_line
from autofeedback.decide import Decider, Decision, RepairMode, check_repair

__all__ = [
    "OnError",
    "SpecLike",
    "ToolCallDecision",
    "ToolCallsDecision",
    "as_catalog",
    "check_tool_calls",
    "decide_tool_calls",
    "guard",
    "guard_tool",
    "tool_messages",
]

_log = logging.getLogger("autofeedback.guard")

P = ParamSpec("P")
R = TypeVar("R")

#: A catalog, a spec file, or an in-memory spec (OpenAI tool list, OpenAPI document).
SpecLike = ApiCatalog | str | PathLike[str] | Sequence[Any] | Mapping[str, Any]
OnError = Literal["raise", "return"]


def as_catalog(spec: SpecLike) -> ApiCatalog:
    """``spec`` as an :class:`ApiCatalog`: a catalog as is, a path loaded from disk, a
    parsed document (tool list, OpenAPI mapping) loaded from memory.

    >>> as_catalog([{"name": "ping", "parameters": {"type": "object"}}]).names
    ('ping',)
    """
    if isinstance(spec, ApiCatalog):
        return spec
    if isinstance(spec, (str, PathLike)):
        path = Path(spec)
        if not path.is_file():
            raise SpecError("no such spec file", source=str(path))
        return ApiCatalog.from_file(path)
    if isinstance(spec, (Sequence, Mapping)) and not isinstance(spec, (bytes, bytearray)):
        # Anthropic / Gemini / Bedrock / Responses tool definitions read as OpenAI's
        return ApiCatalog.from_obj(provider_tools(spec), source="<tools>")
    raise ConfigurationError(
        f"expected an ApiCatalog, a spec path or a parsed spec, got {type(spec).__name__}"
    )


def _errors_first(findings: Sequence[Finding]) -> list[Finding]:
    # the feedback leads with what breaks the call; warnings only ride along
    return sorted(findings, key=lambda f: f.severity != "error")


def _rejection(findings: Sequence[Finding]) -> ToolCallRejected | None:
    if not any(f.severity == "error" for f in findings):
        return None
    ordered = _errors_first(findings)
    # the model called a tool: the feedback speaks of its tool call, not an API request
    return ToolCallRejected(ordered, render_feedback(ordered, tool_call=True))


def _call_arguments(signature: inspect.Signature | None, args: Any, kwargs: Any) -> dict[str, Any]:
    """The arguments of one call by name, as the model wrote them (defaults not filled in:
    the docs judge what the model sent, not what the function would assume)."""
    if signature is None:
        return dict(kwargs)
    params = list(signature.parameters.values())
    # a method's receiver is not something the model chose
    skip_first = bool(params) and params[0].name in ("self", "cls") and len(args) > 0
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        # an argument the function does not take: still report it as the docs see it
        named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        out = dict(zip(named, args, strict=False))
        out.update(kwargs)
    else:
        out = {}
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_KEYWORD:
                out.update(value)
            else:
                out[name] = value
    if skip_first:
        out.pop(params[0].name, None)
    return out


def _as_called(catalog: ApiCatalog) -> ApiCatalog:
    """``catalog`` as a guarded function receives its arguments: Python values, not the
    text of a URL, header or form field (``maxResults="5"`` reaches the function as a
    string, where over HTTP ``5`` and ``"5"`` are one text). Each path, query, header and
    cookie parameter becomes an argument, a form body a JSON one, as in
    :meth:`ApiCatalog.to_tools`; method, path and annotations stay (what a call does).
    One spec gives one verdict, however it was given (issue 40)."""
    ops = []
    changed = False
    for op in catalog:
        params = tuple(
            p if p.location in ("body", "argument") else dataclasses.replace(p, location="argument")
            for p in op.parameters
        )
        media = op.body_media
        if media is not None and not media.lower().startswith("application/json"):
            media = None
        if params != op.parameters or media != op.body_media:
            op = dataclasses.replace(op, parameters=params, body_media=media)
            changed = True
        ops.append(op)
    if not changed:
        return catalog
    return ApiCatalog(ops, servers=catalog.servers, source=catalog.source)


class _ToolGuard:
    """The checking half of :func:`guard`, shared by the sync and async wrappers."""

    def __init__(
        self, catalog: ApiCatalog, operation: str, retriever: Any, repair: RepairMode = "sure"
    ) -> None:
        if operation not in catalog:
            known = ", ".join(catalog.names[:20]) or "(none)"
            raise ConfigurationError(
                f"operation {operation!r} is not in the spec {catalog.source!r}; "
                f"known operations: {known}"
            )
        self.catalog = catalog
        self.operation = operation
        self.scanner = Scanner(_as_called(catalog), retriever=retriever)
        self.decider = Decider(self.scanner, repair=repair)

    def rejection(self, arguments: Mapping[str, Any]) -> ToolCallRejected | None:
        """The call's rejection with every finding, nothing repaired."""
        request = ApiRequest(name=self.operation, arguments=dict(arguments), format="python")
        return _rejection(list(self.scanner.iter_findings(request)))

    def decide(self, arguments: Mapping[str, Any]) -> Decision:
        """The one decision on a call of this tool with ``arguments``."""
        request = ApiRequest(name=self.operation, arguments=dict(arguments), format="python")
        return self.decider.decide_request(request)

    def verdict(
        self, arguments: Mapping[str, Any]
    ) -> tuple[ToolCallRejected | None, dict[str, Any] | None]:
        """What becomes of a call with ``arguments``: its rejection (the feedback for the
        model), else the repaired arguments to run the tool with (logged as a warning on
        the ``autofeedback`` logger), else ``(None, None)``: run it as it is."""
        decision = self.decide(arguments)
        if decision.action == "forward":
            if not decision.repairs or decision.request is None:
                return None, None
            _log.warning(
                "%s: called with the repairs %s",
                self.operation,
                "; ".join(map(str, decision.repairs)),
            )
            return None, dict(decision.request.arguments)
        ordered = _errors_first(list(decision.remaining if decision.errors else decision.findings))
        feedback = render_feedback(ordered, tool_call=True, repairs=decision.repairs)
        return ToolCallRejected(ordered, feedback), None


@overload
def guard(
    spec_or_catalog: SpecLike,
    operation: str | None = None,
    *,
    on_error: Literal["raise"] = "raise",
    retriever: Any = "auto",
    repair: RepairMode = "sure",
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


@overload
def guard(
    spec_or_catalog: SpecLike,
    operation: str | None = None,
    *,
    on_error: Literal["return"],
    retriever: Any = "auto",
    repair: RepairMode = "sure",
) -> Callable[[Callable[P, R]], Callable[P, R | str]]: ...


def guard(
    spec_or_catalog: SpecLike,
    operation: str | None = None,
    *,
    on_error: OnError = "raise",
    retriever: Any = "auto",
    repair: RepairMode = "sure",
) -> Callable[[Callable[P, R]], Callable[P, Any]]:
    """Decorate a tool function so each call is checked against the docs first.

    The call's arguments are scanned as a call to ``operation`` (default: the function's
    name). When the scan finds an error, the function does not run: with
    ``on_error="raise"`` :class:`ToolCallRejected` is raised (its ``feedback`` is the text
    for the model), with ``on_error="return"`` that feedback text is returned instead of
    the function's result. ``retriever=None`` runs the structural checks only; pass
    ``"auto"`` (or a retriever) for the semantic ones (E2.3, E3.3).

    ``repair="sure"`` (the default): where the docs leave one answer (a parameter name
    spelled another way, ``"3"`` for an integer), the function runs with the repaired
    arguments, and each repair is logged as a warning on the ``autofeedback`` logger;
    ``repair="off"`` rejects such a call like any other.

    >>> tools = [{"name": "get_weather", "parameters": {"type": "object",
    ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
    >>> @guard(tools, on_error="return")
    ... def get_weather(**kwargs: str) -> str:
    ...     return "sunny"
    >>> get_weather(city="Paris")
    'sunny'
    >>> print(get_weather().splitlines()[1][:53])
    Error E3.4 (missing required parameter) at argument.c
    >>> get_weather(City="Paris")    # repaired: City -> city, logged
    'sunny'
    """
    check_repair(repair)
    if on_error not in ("raise", "return"):
        raise ConfigurationError(f"on_error must be 'raise' or 'return', not {on_error!r}")
    catalog = as_catalog(spec_or_catalog)

    def decorate(fn: Callable[P, R]) -> Callable[P, Any]:
        checker = _ToolGuard(catalog, operation or fn.__name__, retriever, repair)
        try:
            signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):  # builtins without a signature: kwargs only
            signature = None

        def decided(args: Any, kwargs: Any) -> tuple[ToolCallRejected | None, Any, Any]:
            """The rejection, or the arguments to call ``fn`` with (repaired ones where
            the decision repaired the call)."""
            problem, repaired = checker.verdict(_call_arguments(signature, args, kwargs))
            if problem is not None or repaired is None:
                return problem, args, kwargs
            rebuilt = _repaired_call(signature, args, repaired)
            if rebuilt is None:  # the function cannot take the repaired arguments
                problem = checker.rejection(_call_arguments(signature, args, kwargs))
                return problem, args, kwargs
            return None, rebuilt[0], rebuilt[1]

        if inspect.iscoroutinefunction(fn):
            async_fn = cast(Callable[..., Awaitable[Any]], fn)

            @functools.wraps(fn)
            async def async_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
                problem, call_args, call_kwargs = decided(args, kwargs)
                if problem is not None:
                    if on_error == "raise":
                        raise problem
                    return problem.feedback
                return await async_fn(*call_args, **call_kwargs)

            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
            problem, call_args, call_kwargs = decided(args, kwargs)
            if problem is not None:
                if on_error == "raise":
                    raise problem
                return problem.feedback
            return fn(*call_args, **call_kwargs)

        return wrapper

    return decorate


def _repaired_call(
    signature: inspect.Signature | None, args: Sequence[Any], arguments: Mapping[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """How to call the function with the repaired ``arguments``: positional-only ones in
    order, the rest by keyword (a method's receiver kept first); ``None`` where the
    function cannot take them (a name it has no parameter for, and no ``**kwargs``)."""
    if signature is None:
        return (), dict(arguments)
    params = list(signature.parameters.values())
    positional: list[Any] = []
    if params and params[0].name in ("self", "cls") and args:
        positional.append(args[0])
        params = params[1:]
    rest = dict(arguments)
    by_name = {p.name: p for p in params}
    var_keyword = any(p.kind is p.VAR_KEYWORD for p in params)
    for p in params:
        if p.kind is p.POSITIONAL_ONLY:
            if p.name not in rest:
                if p.default is p.empty:
                    return None
                break
            positional.append(rest.pop(p.name))
        elif p.kind is p.VAR_POSITIONAL:
            return None
    for name in rest:
        found = by_name.get(name)
        if found is None and not var_keyword:
            return None
        if found is not None and found.kind is found.POSITIONAL_ONLY:
            return None
    return tuple(positional), rest


def guard_tool(
    fn: Callable[P, R],
    spec_or_catalog: SpecLike,
    operation: str | None = None,
    *,
    on_error: OnError = "raise",
    retriever: Any = "auto",
    repair: RepairMode = "sure",
) -> Callable[P, Any]:
    """:func:`guard` without the decorator syntax, for a function you do not own.

    >>> tools = [{"name": "ping", "parameters": {"type": "object", "properties": {}}}]
    >>> safe = guard_tool(lambda **kw: "pong", tools, "ping")
    >>> safe()
    'pong'
    """
    decorate: Callable[[Callable[P, R]], Callable[P, Any]] = guard(
        spec_or_catalog,
        operation,
        on_error=on_error,
        retriever=retriever,
        repair=repair,
    )
    return decorate(fn)


# -- provider tool calls ---------------------------------------------------------------


def _get(obj: Any, key: str) -> Any:
    """``obj[key]`` for dicts, ``obj.key`` for SDK objects (``ChatCompletionMessage``)."""
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


@dataclasses.dataclass(frozen=True)
class _Call:
    """One tool call of any provider shape, as the model wrote it; ``block`` is the
    mapping it was read from (where a repaired call is written back)."""

    shape: ToolCallShape
    call_id: str | None
    name: Any
    arguments: Any
    block: Any = dataclasses.field(default=None, compare=False)


def _as_plain(message: Any) -> Any:
    """An SDK object (OpenAI, Anthropic...) without ``tool_calls`` as plain JSON data."""
    if isinstance(message, Mapping) or _get(message, "tool_calls") is not None:
        return message
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        with contextlib.suppress(Exception):  # a pydantic object that will not dump
            return dump(mode="json", by_alias=True, exclude_none=True)
    return message


def _tool_calls(message: Any) -> list[_Call]:
    """The tool calls of ``message``; raises :class:`ConfigurationError` when it is no
    message or response at all (``None``, text, a number): nothing to check is not a
    clean call, and text output is :func:`~autofeedback.scan`'s to read."""
    message = _as_plain(message)
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
    if isinstance(message, list) and message and all(_is_chat_call(c) for c in message):
        message = {"tool_calls": message}  # `message.tool_calls` passed on its own
    choices = _get(message, "choices")
    if isinstance(choices, Sequence) and not isinstance(choices, (str, bytes)) and choices:
        message = _get(choices[0], "message")  # a whole chat completion
    calls = _get(message, "tool_calls")
    if calls is not None:
        if isinstance(calls, (str, bytes)) or not isinstance(calls, Sequence):
            raise ConfigurationError(
                f"message['tool_calls'] must be a list, got {type(calls).__name__}"
            )
        out = []
        for call in calls:
            function = _get(call, "function")
            call_id = _get(call, "id")
            out.append(
                _Call(
                    "openai-chat",
                    None if call_id is None else str(call_id),
                    _get(function, "name") if function is not None else None,
                    _get(function, "arguments") if function is not None else None,
                    call,
                )
            )
        return out
    legacy = _get(message, "function_call")  # the pre-tools OpenAI function call
    if legacy is not None:
        block = message.get("function_call") if isinstance(message, Mapping) else None
        return [_Call("openai-chat", None, _get(legacy, "name"), _get(legacy, "arguments"), block)]
    found = find_tool_calls(message)
    if found is None:
        if isinstance(message, list) and not message:
            return []  # an empty output list: no call was made
        if not any(_get(message, key) is not None for key in ("role", "content")):
            raise ConfigurationError(
                "expected an assistant message or a model response (OpenAI, Anthropic, "
                "Gemini, Bedrock) holding the tool calls; got a "
                f"{type(message).__name__} in none of these shapes"
            )
        found = []  # a message that made no tool call: nothing to check
    return [_Call(c.shape, c.call_id, c.name, c.arguments, c.block) for c in found]


def _is_chat_call(value: Any) -> bool:
    """An OpenAI Chat tool call (``{"id", "type": "function", "function": {...}}``), as
    a dict or the SDK's object."""
    return _get(value, "function") is not None and not isinstance(value, (str, bytes))


def _call_request(call: _Call) -> ApiRequest | Finding:
    """One tool call as a request that keeps its shape and id, or the E1 finding saying
    why it cannot be read. Arguments encoded twice (a JSON string holding the object) are
    read, and the request says so (E4.1, repairable)."""
    name = call.name
    if not isinstance(name, str) or not name:
        return Finding("E1", ("function", "name"), name, message="the tool call names no function")
    raw = call.arguments
    twice = False
    if raw is None or raw == "":
        arguments: Any = {}
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


def _call_findings(
    call: _Call, scanner: Scanner, instruction: str | None = None, context: str | None = None
) -> Iterator[Finding]:
    """The findings of one tool call; with ``instruction`` (what the user asked), the
    checks that need it too (E2.1, E5.3), as in the feedback loop."""
    request = _call_request(call)
    if isinstance(request, Finding):
        yield request
        return
    yield from scanner.iter_findings(request, instruction=instruction, context=context)


def _decisions(
    calls: Sequence[_Call],
    decider: Decider,
    history: Sequence[Any] | None = None,
    instruction: str | None = None,
    context: str | None = None,
    graph: Any = None,
) -> list[Decision]:
    """The decision on each of ``calls``: alone (with what the user asked, when given),
    or as the last steps of the chat ``history``."""
    if history is not None and calls:
        return _decisions_in_sequence(calls, decider, history, graph)
    out: list[Decision] = []
    for call in calls:
        request = _call_request(call)
        if isinstance(request, Finding):
            out.append(Decision("feedback", "errors", None, None, (request,), (request,)))
        else:
            out.append(decider.decide_request(request, instruction=instruction, context=context))
    return out


def _chat_steps(calls: Sequence[_Call], history: Sequence[Any]) -> tuple[Any, int]:
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
    earlier = sequence_from_chat([_as_dict(m) for m in history])
    seq = sequence_from_chat(
        [*(_as_dict(m) for m in history), {"role": "assistant", "tool_calls": chat_calls}]
    )
    return seq, len(earlier.steps)


def _decisions_in_sequence(
    calls: Sequence[_Call], decider: Decider, history: Sequence[Any], graph: Any = None
) -> list[Decision]:
    from autofeedback.flow._checks import SequenceChecker

    seq, first = _chat_steps(calls, history)
    checker = SequenceChecker(decider.scanner, graph=graph)
    decisions = decider.decide_steps(seq, first, checker=checker)
    out: list[Decision] = []
    for call, decision in zip(calls, decisions, strict=False):
        request = decision.request
        if request is not None and request.shape is None:
            # the step was read from the chat form: it keeps the call's own shape and id
            request = dataclasses.replace(request, shape=call.shape, call_id=call.call_id)
            decision = dataclasses.replace(decision, request=request)
        out.append(decision)
    return out


def sequence_findings(
    calls: Sequence[_Call], scanner: Scanner, history: Sequence[Any], graph: Any = None
) -> list[list[Finding]]:
    """The findings of each of ``calls`` (one assistant turn), checked as the last steps
    of the chat ``history`` (OpenAI chat form: user turns, earlier assistant
    ``tool_calls`` and the ``tool`` messages answering them); one list per call."""
    decider = Decider(scanner, repair="off")
    return [list(d.findings) for d in _decisions_in_sequence(calls, decider, history, graph)]


def _located(per_call: Sequence[Sequence[Finding]]) -> list[Finding]:
    """The findings of one message's calls: as they are for one call, under
    ``tool_calls[i]`` for several."""
    if len(per_call) == 1:
        return list(per_call[0])
    return [
        dataclasses.replace(f, location=(f"tool_calls[{i}]", *f.location))
        for i, findings in enumerate(per_call)
        for f in findings
    ]


def _decider(tools: SpecLike, retriever: Any, repair: RepairMode) -> Decider:
    return Decider(Scanner(as_catalog(tools), retriever=retriever), repair=check_repair(repair))


def _graph(decider: Decider) -> Any:
    from autofeedback.flow._graph import FlowGraph

    return FlowGraph.from_catalog(decider.scanner.catalog)


def check_tool_calls(
    message: Any,
    tools: SpecLike,
    *,
    retriever: Any = "auto",
    history: Sequence[Any] | None = None,
    repair: RepairMode = "sure",
) -> list[Finding]:
    """Every finding for the tool calls of a model's message against the tool list the
    model was given.

    ``message`` is an OpenAI assistant message with ``tool_calls`` (a dict or the SDK's
    object) or a whole chat completion, an OpenAI Responses ``output`` list or response,
    an Anthropic message or response (``tool_use`` blocks), a Gemini response or content
    (``functionCall`` parts) or a Bedrock Converse response or message (``toolUse``).
    With several calls, each finding's location starts with ``tool_calls[i]``. A message
    that makes no tool call has none to check (``[]``); anything that is no message at
    all (``None``, text, a number) raises :class:`ConfigurationError`: model text is
    :func:`~autofeedback.scan`'s to read.

    ``history``: the chat so far (user turns, earlier tool calls and the results
    answering them, in any provider's shape: OpenAI Chat or Responses, Anthropic, Gemini,
    Bedrock). The calls are then checked as the last steps of that sequence
    (:mod:`autofeedback.flow`): an identifier, key or credential must come
    from the user or an earlier tool response (E5.3, naming the operation that produces
    it), and a tool an earlier response documented (a tool search) is no unknown API.

    ``repair="sure"``: each finding a certain repair answers carries it as ``fix``
    (nothing is changed here: :func:`decide_tool_calls` hands back the repaired calls).

    >>> tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    ...     "type": "object", "properties": {"city": {"type": "string"}}}}}]
    >>> message = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...     "function": {"name": "get_weather", "arguments": '{"City": "Paris"}'}}]}
    >>> [f.code for f in check_tool_calls(message, tools)]
    ['E3.2']
    >>> claude = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
    ...     "name": "get_weather", "input": {"City": "Paris"}}]}
    >>> [(f.code, str(f.fix)) for f in check_tool_calls(claude, tools)]
    [('E3.2', "E3.2 argument.City: 'City' -> 'city'")]
    """
    decider = _decider(tools, retriever, repair)
    calls = _tool_calls(message)
    graph = _graph(decider) if history is not None else None
    decisions = _decisions(calls, decider, history, graph=graph)
    return _located([d.findings for d in decisions])


def _as_dict(value: Any) -> Any:
    """An SDK message or tool call as plain data (``model_dump``), else unchanged."""
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value


def _reply(call: _Call, text: str, ok: bool) -> dict[str, Any]:
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


def call_feedback(call: _Call, decision: Decision, *, corrected: str | None = None) -> str:
    """The feedback for a tool call the decision did not forward, in the call's shape:
    what is still wrong (errors first), what was repaired already, and ``corrected``
    (the call with every named fix) when given. A call whose every error was repaired
    is told the repaired call to make."""
    remaining = decision.errors
    if remaining:
        ordered = _errors_first(list(decision.remaining))
    else:  # all repaired, but the caller runs the call as written: say how to call it
        ordered = _errors_first(list(decision.findings))
        request = decision.request
        if corrected is None and request is not None:
            corrected = json.dumps(
                {"name": request.name, "arguments": dict(request.arguments)},
                ensure_ascii=False,
                default=str,
            )
    return render_feedback(ordered, corrected=corrected, shape=call.shape, repairs=decision.repairs)


def tool_messages(
    message: Any,
    tools: SpecLike,
    *,
    retriever: Any = "auto",
    include_ok: bool = False,
    history: Sequence[Any] | None = None,
    repair: RepairMode = "sure",
) -> list[dict[str, Any]]:
    """The tool results answering the rejected calls of a model's message, each carrying
    the static feedback, in the caller's own shape:

    * OpenAI Chat: ``{"role": "tool", "tool_call_id", "content"}`` messages;
    * OpenAI Responses: ``{"type": "function_call_output", "call_id", "output"}`` items;
    * Anthropic: ``{"type": "tool_result", "tool_use_id", "content", "is_error": true}``
      blocks (send them as the content of the next user message);
    * Gemini: ``{"functionResponse": {"name", "id", "response": {"error": ...}}}`` parts;
    * Bedrock Converse: ``{"toolResult": {"toolUseId", "content", "status": "error"}}``.

    Calls without errors get no reply (run them and answer with their result), or
    ``"ok"`` with ``include_ok=True``. The feedback speaks of tool calls in that shape,
    never of the ``<API>`` text format. ``history``: the chat so far, as for
    :func:`check_tool_calls` (an id no earlier tool result returned is an error). What
    is no message at all raises :class:`ConfigurationError`, as there.

    The calls are answered as the model wrote them: a call with errors is never run
    here. With ``repair="sure"`` the feedback lists what is repaired already and, for a
    call every error of which has a certain repair, the call to make instead; to run the
    repaired calls at once, use :func:`decide_tool_calls`.

    >>> tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    ...     "type": "object", "properties": {"city": {"type": "string"}}}}}]
    >>> message = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...     "function": {"name": "getWeather", "arguments": "{}"}}]}
    >>> [reply] = tool_messages(message, tools)
    >>> reply["tool_call_id"], reply["content"].splitlines()[1][:20]
    ('c1', 'Error E2.2 (literal ')
    >>> claude = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
    ...     "name": "getWeather", "input": {}}]}
    >>> [block] = tool_messages(claude, tools)
    >>> block["type"], block["tool_use_id"], block["is_error"]
    ('tool_result', 'toolu_1', True)
    """
    decider = _decider(tools, retriever, repair)
    calls = _tool_calls(message)
    graph = _graph(decider) if history is not None else None
    out: list[dict[str, Any]] = []
    for call, decision in zip(calls, _decisions(calls, decider, history, graph=graph), strict=True):
        if not any(f.severity == "error" for f in decision.findings):
            if include_ok:
                out.append(_reply(call, "ok", True))
            continue
        out.append(_reply(call, call_feedback(call, decision), False))
    return out


@dataclasses.dataclass(frozen=True)
class ToolCallDecision:
    """The decision on one tool call of a model's message (:func:`decide_tool_calls`).

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
        their ``fix``), located as :func:`check_tool_calls` locates them."""
        return _located([c.decision.findings for c in self.calls])


def decide_tool_calls(
    message: Any,
    tools: SpecLike,
    *,
    retriever: Any = "auto",
    history: Sequence[Any] | None = None,
    repair: RepairMode = "sure",
    instruction: str | None = None,
    context: str | None = None,
) -> ToolCallsDecision:
    """What to do with each tool call of a model's message: run it (as written, or with
    the repairs the docs leave no doubt about) or answer it with feedback. The one
    decision (:mod:`autofeedback.decide`) that ``autofeedback proxy`` and the MCP proxy
    make too.

    ``history``: the chat so far, as for :func:`check_tool_calls`; without it,
    ``instruction`` (what the user asked) and ``context`` (the whole request) let the
    checks that need them run (E2.1, E5.3).

    >>> tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    ...     "type": "object", "properties": {"city": {"type": "string"},
    ...     "days": {"type": "integer"}}}}}]
    >>> message = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...     "function": {"name": "get_weather", "arguments": '{"City": "Paris", "days": "3"}'}}]}
    >>> d = decide_tool_calls(message, tools)
    >>> d.ok, d.calls[0].arguments
    (True, {'city': 'Paris', 'days': 3})
    >>> [str(r) for r in d.repairs]
    ["E3.2 argument.City: 'City' -> 'city'", "E4.1 argument.days: '3' -> 3"]
    >>> d.message["tool_calls"][0]["function"]["arguments"]
    '{"city": "Paris", "days": 3}'
    """
    decider = _decider(tools, retriever, repair)
    return decide_calls(message, decider, history=history, instruction=instruction, context=context)


def decide_calls(
    message: Any,
    decider: Decider,
    *,
    history: Sequence[Any] | None = None,
    instruction: str | None = None,
    context: str | None = None,
    graph: Any = None,
) -> ToolCallsDecision:
    """:func:`decide_tool_calls` with a decider of the caller's (the proxies keep one per
    tool list)."""
    calls = _tool_calls(message)
    if history is not None and graph is None:
        graph = _graph(decider)
    decisions = _decisions(calls, decider, history, instruction, context, graph)
    out: list[ToolCallDecision] = []
    written: dict[int, dict[str, Any]] = {}
    for call, decision in zip(calls, decisions, strict=True):
        request = decision.request
        arguments = dict(request.arguments) if request is not None else None
        name = request.name if request is not None else call.name
        reply = None
        if decision.action != "forward":
            reply = _reply(call, call_feedback(call, decision), False)
        if decision.repairs and request is not None and isinstance(call.block, Mapping):
            written[id(call.block)] = _written_block(call, request)
        out.append(ToolCallDecision(call.shape, call.call_id, name, arguments, decision, reply))
    new_message = _rewrite_blocks(_as_dict(message), written) if written else message
    return ToolCallsDecision(tuple(out), new_message)


def _written_block(call: _Call, request: ApiRequest) -> dict[str, Any]:
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

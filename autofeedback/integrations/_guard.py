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

import dataclasses
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Literal, ParamSpec, TypeVar, cast, overload

from autofeedback._parse._providers import provider_tools
from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import ConfigurationError, SpecError, ToolCallRejected
from autofeedback.core._findings import Finding
from autofeedback.core._model import ApiRequest
from autofeedback.decide import Decider, Decision, RepairMode, check_repair
from autofeedback.decide._calls import (
    ToolCallDecision,
    ToolCallsDecision,
    call_feedback,
    decide_calls,
    decide_each,
    flow_graph,
    located,
    reply,
    tool_calls_of,
)
from autofeedback.decide._feedback import errors_first, render_feedback
from autofeedback.scanner._scan import Scanner

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


def _rejection(findings: Sequence[Finding]) -> ToolCallRejected | None:
    if not any(f.severity == "error" for f in findings):
        return None
    ordered = errors_first(findings)
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
        ordered = errors_first(list(decision.remaining if decision.errors else decision.findings))
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


def _decider(tools: SpecLike, retriever: Any, repair: RepairMode) -> Decider:
    return Decider(Scanner(as_catalog(tools), retriever=retriever), repair=check_repair(repair))


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
    calls = tool_calls_of(message)
    graph = flow_graph(decider) if history is not None else None
    decisions = decide_each(calls, decider, history, graph=graph)
    return located([d.findings for d in decisions])


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
    calls = tool_calls_of(message)
    graph = flow_graph(decider) if history is not None else None
    out: list[dict[str, Any]] = []
    for call, decision in zip(
        calls, decide_each(calls, decider, history, graph=graph), strict=True
    ):
        if not any(f.severity == "error" for f in decision.findings):
            if include_ok:
                out.append(reply(call, "ok", True))
            continue
        out.append(reply(call, call_feedback(call, decision), False))
    return out


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

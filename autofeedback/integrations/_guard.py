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
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Literal, ParamSpec, TypeVar, cast, overload

from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import ConfigurationError, SpecError, ToolCallRejected
from autofeedback._feedback import render_feedback
from autofeedback._findings import Finding
from autofeedback._model import ApiRequest, ToolCallShape
from autofeedback._parse._providers import find_tool_calls, provider_tools, shape_format
from autofeedback._scan import Scanner, one_line

__all__ = [
    "OnError",
    "SpecLike",
    "as_catalog",
    "check_tool_calls",
    "guard",
    "guard_tool",
    "tool_messages",
]

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
    return ToolCallRejected(ordered, render_feedback(ordered))


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


class _ToolGuard:
    """The checking half of :func:`guard`, shared by the sync and async wrappers."""

    def __init__(self, catalog: ApiCatalog, operation: str, retriever: Any) -> None:
        if operation not in catalog:
            known = ", ".join(catalog.names[:20]) or "(none)"
            raise ConfigurationError(
                f"operation {operation!r} is not in the spec {catalog.source!r}; "
                f"known operations: {known}"
            )
        self.catalog = catalog
        self.operation = operation
        self.scanner = Scanner(catalog, retriever=retriever)

    def check(self, arguments: Mapping[str, Any]) -> ToolCallRejected | None:
        request = ApiRequest(name=self.operation, arguments=dict(arguments), format="python")
        return _rejection(list(self.scanner.iter_findings(request)))


@overload
def guard(
    spec_or_catalog: SpecLike,
    operation: str | None = None,
    *,
    on_error: Literal["raise"] = "raise",
    retriever: Any = "auto",
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


@overload
def guard(
    spec_or_catalog: SpecLike,
    operation: str | None = None,
    *,
    on_error: Literal["return"],
    retriever: Any = "auto",
) -> Callable[[Callable[P, R]], Callable[P, R | str]]: ...


def guard(
    spec_or_catalog: SpecLike,
    operation: str | None = None,
    *,
    on_error: OnError = "raise",
    retriever: Any = "auto",
) -> Callable[[Callable[P, R]], Callable[P, Any]]:
    """Decorate a tool function so each call is checked against the docs first.

    The call's arguments are scanned as a call to ``operation`` (default: the function's
    name). When the scan finds an error, the function does not run: with
    ``on_error="raise"`` :class:`ToolCallRejected` is raised (its ``feedback`` is the text
    for the model), with ``on_error="return"`` that feedback text is returned instead of
    the function's result. ``retriever=None`` runs the structural checks only; pass
    ``"auto"`` (or a retriever) for the semantic ones (E2.3, E3.3).

    >>> tools = [{"name": "get_weather", "parameters": {"type": "object",
    ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
    >>> @guard(tools, on_error="return")
    ... def get_weather(**kwargs: str) -> str:
    ...     return "sunny"
    >>> get_weather(city="Paris")
    'sunny'
    >>> print(get_weather(City="Paris").splitlines()[1][:65])
    Error E3.2 (literal variant of a parameter name) at argument.City
    """
    if on_error not in ("raise", "return"):
        raise ConfigurationError(f"on_error must be 'raise' or 'return', not {on_error!r}")
    catalog = as_catalog(spec_or_catalog)

    def decorate(fn: Callable[P, R]) -> Callable[P, Any]:
        checker = _ToolGuard(catalog, operation or fn.__name__, retriever)
        try:
            signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):  # builtins without a signature: kwargs only
            signature = None

        def rejected(args: Any, kwargs: Any) -> ToolCallRejected | None:
            return checker.check(_call_arguments(signature, args, kwargs))

        if inspect.iscoroutinefunction(fn):
            async_fn = cast(Callable[..., Awaitable[Any]], fn)

            @functools.wraps(fn)
            async def async_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
                problem = rejected(args, kwargs)
                if problem is not None:
                    if on_error == "raise":
                        raise problem
                    return problem.feedback
                return await async_fn(*args, **kwargs)

            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
            problem = rejected(args, kwargs)
            if problem is not None:
                if on_error == "raise":
                    raise problem
                return problem.feedback
            return fn(*args, **kwargs)

        return wrapper

    return decorate


def guard_tool(
    fn: Callable[P, R],
    spec_or_catalog: SpecLike,
    operation: str | None = None,
    *,
    on_error: OnError = "raise",
    retriever: Any = "auto",
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
    """One tool call of any provider shape, as the model wrote it."""

    shape: ToolCallShape
    call_id: str | None
    name: Any
    arguments: Any


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
                )
            )
        return out
    legacy = _get(message, "function_call")  # the pre-tools OpenAI function call
    if legacy is not None:
        return [_Call("openai-chat", None, _get(legacy, "name"), _get(legacy, "arguments"))]
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
    return [_Call(c.shape, c.call_id, c.name, c.arguments) for c in found]


def _is_chat_call(value: Any) -> bool:
    """An OpenAI Chat tool call (``{"id", "type": "function", "function": {...}}``), as
    a dict or the SDK's object."""
    return _get(value, "function") is not None and not isinstance(value, (str, bytes))


def _call_findings(
    call: _Call, scanner: Scanner, instruction: str | None = None, context: str | None = None
) -> Iterator[Finding]:
    """The findings of one tool call; with ``instruction`` (what the user asked), the
    checks that need it too (E2.1, E5.3), as in the feedback loop."""
    name = call.name
    if not isinstance(name, str) or not name:
        yield Finding("E1", ("function", "name"), name, message="the tool call names no function")
        return
    raw = call.arguments
    if raw is None or raw == "":
        arguments: Any = {}
    elif isinstance(raw, Mapping):
        arguments = raw
    else:
        try:
            arguments = json.loads(raw)
        except Exception as exc:  # not JSON, nested too deeply, not text at all
            yield Finding(
                "E1",
                ("function", "arguments"),
                raw if isinstance(raw, str) else repr(raw),
                expected="a JSON object",
                message=f"the arguments are not valid JSON ({one_line(exc)})",
            )
            return
    if not isinstance(arguments, Mapping):
        yield Finding(
            "E1",
            ("function", "arguments"),
            arguments,
            expected="a JSON object",
            message=f"the arguments must be a JSON object, not {type(arguments).__name__}",
        )
        return
    yield from scanner.iter_findings(
        ApiRequest(
            name=name,
            arguments=dict(arguments),
            format=shape_format(call.shape),
            shape=call.shape,
            call_id=call.call_id,
        ),
        instruction=instruction,
        context=context,
    )


def _findings_per_call(
    message: Any, tools: SpecLike, retriever: Any
) -> list[tuple[_Call, list[Finding]]]:
    scanner = Scanner(as_catalog(tools), retriever=retriever)
    return [(call, list(_call_findings(call, scanner))) for call in _tool_calls(message)]


def check_tool_calls(
    message: Any,
    tools: SpecLike,
    *,
    retriever: Any = "auto",
    history: Sequence[Any] | None = None,
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

    >>> tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    ...     "type": "object", "properties": {"city": {"type": "string"}}}}}]
    >>> message = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...     "function": {"name": "get_weather", "arguments": '{"City": "Paris"}'}}]}
    >>> [f.code for f in check_tool_calls(message, tools)]
    ['E3.2']
    >>> claude = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
    ...     "name": "get_weather", "input": {"City": "Paris"}}]}
    >>> [f.code for f in check_tool_calls(claude, tools)]
    ['E3.2']
    """
    if history is not None:
        return _findings_in_sequence(message, tools, retriever, history)
    per_call = _findings_per_call(message, tools, retriever)
    if len(per_call) == 1:
        return per_call[0][1]
    out: list[Finding] = []
    for i, (_, findings) in enumerate(per_call):
        prefix = (f"tool_calls[{i}]",)
        out.extend(dataclasses.replace(f, location=prefix + f.location) for f in findings)
    return out


def _as_dict(value: Any) -> Any:
    """An SDK message or tool call as plain data (``model_dump``), else unchanged."""
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value


def _findings_in_sequence(
    message: Any, tools: SpecLike, retriever: Any, history: Sequence[Any]
) -> list[Finding]:
    from autofeedback.flow._graph import FlowGraph

    catalog = as_catalog(tools)
    calls = _tool_calls(message)
    per_call = sequence_findings(
        calls, Scanner(catalog, retriever=retriever), history, FlowGraph.from_catalog(catalog)
    )
    if len(calls) == 1:
        return per_call[0]
    return [
        dataclasses.replace(f, location=(f"tool_calls[{i}]", *f.location))
        for i, findings in enumerate(per_call)
        for f in findings
    ]


def sequence_findings(
    calls: Sequence[_Call], scanner: Scanner, history: Sequence[Any], graph: Any = None
) -> list[list[Finding]]:
    """The findings of each of ``calls`` (one assistant turn), checked as the last steps
    of the chat ``history`` (user turns, earlier tool calls and their results, in any
    provider's shape); one list per call."""
    from autofeedback.flow._checks import SequenceChecker, check_next_calls

    # the calls in OpenAI's chat form, whatever provider shape they came in (the history
    # may be in any provider's shape: the sequence reader reads them all)
    chat_calls = [
        {
            "id": c.call_id or f"call_{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for i, c in enumerate(calls)
    ]
    checker = SequenceChecker(scanner, graph=graph)
    return check_next_calls(checker, [_as_dict(m) for m in history], chat_calls)


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


def tool_messages(
    message: Any,
    tools: SpecLike,
    *,
    retriever: Any = "auto",
    include_ok: bool = False,
    history: Sequence[Any] | None = None,
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
    out: list[dict[str, Any]] = []
    if history is not None:
        from autofeedback.flow._graph import FlowGraph

        catalog = as_catalog(tools)
        calls = _tool_calls(message)
        scanner = Scanner(catalog, retriever=retriever)
        judged = list(
            zip(
                calls,
                sequence_findings(calls, scanner, history, FlowGraph.from_catalog(catalog)),
                strict=True,
            )
        )
    else:
        judged = _findings_per_call(message, tools, retriever)
    for call, findings in judged:
        if not any(f.severity == "error" for f in findings):
            if include_ok:
                out.append(_reply(call, "ok", True))
            continue
        ordered = _errors_first(findings)
        out.append(_reply(call, render_feedback(ordered, shape=call.shape), False))
    return out

"""LangChain v1 agents and LangGraph tool nodes: every tool call the model makes is
decided before a tool runs (:mod:`autofeedback.integrations._door`).

* :class:`AutoFeedbackMiddleware`, an ``AgentMiddleware`` for ``create_agent``: its
  ``wrap_model_call`` decides the calls of each model message against the tools the
  model was given; the repaired calls are written into the ``AIMessage`` (and so run),
  the others are answered by ``ToolMessage`` s carrying the feedback; when the policy's
  rounds or repeats are spent, :class:`~autofeedback.ToolCallRejected` ends the run (as
  LangChain's ``ToolCallLimitMiddleware`` does with ``exit_behavior="error"``; a hook
  node to jump to the end from would cost every model step a graph step).
* :class:`AutoFeedbackToolWrapper`, a ``wrap_tool_call`` for LangGraph's ``ToolNode``:
  the same decision for a graph of your own; a stop raises
  :class:`~autofeedback.ToolCallRejected` out of the graph.

The run's feedback rounds live in the conversation itself (each feedback
``ToolMessage`` carries the turn's record as its ``artifact``), so a checkpointed
thread resumes with the count it had; a run is what follows the last human message.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autofeedback.core._exceptions import ConfigurationError, ToolCallRejected
from autofeedback.core._install import install_hint
from autofeedback.decide import Policy, Session
from autofeedback.integrations._door import MARKER, NOT_RUN, Door, Turn, log_repairs
from autofeedback.integrations._guard import SpecLike

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware as _Base
else:
    try:
        from langchain.agents.middleware import AgentMiddleware as _Base
    except ImportError:  # the extra is absent: the class says how to get it when made
        from autofeedback.integrations._door import absent

        _Base = absent("langchain", "AutoFeedbackMiddleware")


__all__ = ["AutoFeedbackMiddleware", "AutoFeedbackToolWrapper"]

#: how many model messages a tool wrapper keeps its decision for (a ``ToolNode`` runs the
#: calls of one message side by side, each asking for the same decision)
_TURNS = 256


def _openai_tools(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """The tools the model was given (``BaseTool`` s, dicts) in OpenAI's function shape."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    out = []
    for tool in tools:
        converted = convert_to_openai_tool(tool)
        if converted.get("type") == "function":  # a provider's built-in tool has no schema
            out.append(converted)
    return out


def _records(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """The turns this adapter answered with feedback since the last human message, in
    order: each feedback ``ToolMessage`` of a turn carries the turn's record."""
    from langchain_core.messages import HumanMessage, ToolMessage

    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            start = i + 1
            break
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    turn = 0
    for m in messages[start:]:
        if isinstance(m, ToolMessage):
            record = m.artifact.get(MARKER) if isinstance(m.artifact, Mapping) else None
            if isinstance(record, Mapping) and turn not in seen:
                seen.add(turn)
                out.append(dict(record))
        else:
            turn += 1
    return out


def _tool_messages(turn: Turn, calls: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The ``ToolMessage`` s answering the calls of ``turn`` that do not run."""
    from langchain_core.messages import ToolMessage

    out = []
    for call, verdict in zip(calls, turn.calls, strict=True):
        if verdict.runs:
            continue
        out.append(
            ToolMessage(
                verdict.feedback if verdict.feedback is not None else NOT_RUN,
                tool_call_id=call.get("id") or "",
                name=str(call.get("name")),
                status="error",
                artifact={MARKER: turn.record()},
            )
        )
    return out


def _written(turn: Turn, calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The message's calls with every certain repair written in (those that go back to
    the model too: it then sees its call as autofeedback holds it)."""
    out = []
    for call, verdict in zip(calls, turn.calls, strict=True):
        request = verdict.decision.request
        if verdict.repairs and request is not None:
            out.append({**call, "name": request.name, "args": dict(request.arguments)})
        else:
            out.append(dict(call))
    return out


class AutoFeedbackMiddleware(_Base):  # type: ignore[misc,unused-ignore]  # Any where the extra is absent
    """An ``AgentMiddleware`` that decides every tool call of the model's messages.

    ``tools``: the docs to check against (a catalog, a spec path, an OpenAI tool list);
    by default the tools the agent gives the model. ``policy``: the repairs and the
    bounds (:class:`~autofeedback.Policy`: three feedback rounds per run by default).

    A call the docs leave no doubt about is repaired and runs (``City`` -> ``city``, a
    separator or case variant of a tool's name); a call with errors is answered with the
    feedback as a ``ToolMessage`` (``status="error"``) and the model tries again; when
    the rounds are spent (or the model repeats a rejected call),
    :class:`~autofeedback.ToolCallRejected` ends the run.

    >>> from langchain.agents import create_agent   # doctest: +SKIP
    >>> agent = create_agent(model, [get_weather],  # doctest: +SKIP
    ...                      middleware=[AutoFeedbackMiddleware()])
    """

    def __init__(
        self,
        tools: SpecLike | None = None,
        *,
        policy: Policy | None = None,
        retriever: Any = "auto",
    ) -> None:
        super().__init__()
        self.door = Door(tools, policy=policy, retriever=retriever)

    def _decide(self, request: Any, response: Any) -> Any:
        from langchain.agents.middleware import ExtendedModelResponse, ModelResponse
        from langchain_core.messages import AIMessage

        outer = response if isinstance(response, ExtendedModelResponse) else None
        inner = outer.model_response if outer is not None else response
        if isinstance(inner, AIMessage):
            inner = ModelResponse(result=[inner])
        at = next(
            (
                i
                for i in range(len(inner.result) - 1, -1, -1)
                if isinstance(inner.result[i], AIMessage)
            ),
            None,
        )
        if at is None or not getattr(inner.result[at], "tool_calls", None):
            return response
        message: Any = inner.result[at]
        calls = list(message.tool_calls)
        session: Session = self.door.session(_records(request.messages))
        turn = self.door.decide(
            [(c.get("id"), c.get("name"), c.get("args")) for c in calls],
            session,
            _openai_tools(request.tools) if self.door._fixed is None else None,
        )
        if turn.action == "forward" and not turn.repaired:
            return response
        if turn.action == "stop":
            raise ToolCallRejected(
                [f for c in turn.calls for f in c.decision.errors],
                "\n\n".join(c.feedback for c in turn.calls if c.feedback),
            )
        log_repairs(turn.calls)
        metadata = {**message.response_metadata, MARKER: {**turn.record(), **turn.as_dict()}}
        shown = message.model_copy(
            update={"tool_calls": _written(turn, calls), "response_metadata": metadata}
        )
        result = [*inner.result[:at], shown, *_tool_messages(turn, calls), *inner.result[at + 1 :]]
        decided = ModelResponse(result=result, structured_response=inner.structured_response)
        if outer is not None:
            return ExtendedModelResponse(model_response=decided, command=outer.command)
        return decided

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._decide(request, handler(request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return self._decide(request, await handler(request))


class AutoFeedbackToolWrapper:
    """A ``wrap_tool_call`` for LangGraph's ``ToolNode``: each tool call is decided with
    the other calls of its model message, against the node's tools (or ``tools``).

    A repaired call runs repaired; a call with errors gets a ``ToolMessage`` with the
    feedback instead of running; when the policy's rounds or repeats are spent,
    :class:`~autofeedback.ToolCallRejected` is raised out of the graph.

    >>> from langgraph.prebuilt import ToolNode     # doctest: +SKIP
    >>> guard = AutoFeedbackToolWrapper()           # doctest: +SKIP
    >>> node = ToolNode([get_weather], wrap_tool_call=guard, awrap_tool_call=guard.awrap)
    ... # doctest: +SKIP
    """

    def __init__(
        self,
        tools: SpecLike | None = None,
        *,
        policy: Policy | None = None,
        retriever: Any = "auto",
    ) -> None:
        _require()
        self.door = Door(tools, policy=policy, retriever=retriever)
        self._turns: OrderedDict[str, Turn] = OrderedDict()
        self._lock = threading.Lock()

    def _turn(self, calls: Sequence[Mapping[str, Any]], earlier: Sequence[Any], tools: Any) -> Turn:
        """The decision on one model message's ``calls``, made once for all of them."""
        records = _records(earlier)
        key = json.dumps(
            [[c.get("id"), c.get("name"), c.get("args")] for c in calls] + records,
            sort_keys=True,
            default=str,
        )
        with self._lock:
            found = self._turns.get(key)
            if found is not None:
                return found
            turn = self.door.decide(
                [(c.get("id"), c.get("name"), c.get("args")) for c in calls],
                self.door.session(records),
                _openai_tools(tools) if self.door._fixed is None else None,
            )
            self._turns[key] = turn
            while len(self._turns) > _TURNS:
                self._turns.popitem(last=False)
        log_repairs(turn.calls)
        return turn

    def _verdict(self, request: Any) -> tuple[Any, Any]:
        """``(what to run, or None, the answer when it does not run)``."""
        from langchain_core.messages import AIMessage, ToolMessage

        call = request.tool_call
        state = request.state
        messages = state.get("messages", []) if isinstance(state, Mapping) else state
        if not isinstance(messages, list):
            messages = getattr(state, "messages", [])
        at = next(
            (
                i
                for i in range(len(messages) - 1, -1, -1)
                if isinstance(messages[i], AIMessage)
                and any(c.get("id") == call.get("id") for c in messages[i].tool_calls)
            ),
            None,
        )
        calls = list(messages[at].tool_calls) if at is not None else [call]
        earlier = messages[:at] if at is not None else messages
        tools = list(getattr(request.runtime, "tools", None) or [])
        if request.tool is not None and request.tool not in tools:
            tools.append(request.tool)
        turn = self._turn(calls, earlier, tools)
        verdict = turn.by_id().get(call.get("id"))
        if verdict is None:
            return request, None
        if turn.action == "stop":
            feedback = verdict.feedback or NOT_RUN
            raise ToolCallRejected(list(verdict.decision.errors), feedback)
        if not verdict.runs:
            answer = ToolMessage(
                verdict.feedback or NOT_RUN,
                tool_call_id=call.get("id") or "",
                name=str(call.get("name")),
                status="error",
                artifact={MARKER: turn.record()},
            )
            return None, answer
        if not verdict.repairs:
            return request, None
        by_name = {t.name: t for t in tools if hasattr(t, "name")}
        repaired = {**call, "name": verdict.name, "args": verdict.arguments or {}}
        return request.override(tool_call=repaired, tool=by_name.get(verdict.name)), None

    def __call__(self, request: Any, execute: Callable[[Any], Any]) -> Any:
        run, answer = self._verdict(request)
        return answer if run is None else execute(run)

    async def awrap(self, request: Any, execute: Callable[[Any], Awaitable[Any]]) -> Any:
        """The async form, for ``ToolNode(awrap_tool_call=...)``."""
        run, answer = self._verdict(request)
        return answer if run is None else await execute(run)


@functools.cache
def _require() -> None:
    try:
        import langgraph.prebuilt  # noqa: F401
    except ImportError as exc:
        raise ConfigurationError(
            f"AutoFeedbackToolWrapper needs langgraph: {install_hint('langgraph')}"
        ) from exc

"""What every agent-framework adapter shares: the one decision on the tool calls of one
model turn, judged by the run's :class:`~autofeedback.decide.Session`, as plain values
each adapter translates into its framework's shapes.

The door and the adapters (``_langchain_agent``, ``_openai_agents``, ``_pydantic_ai``,
``_fastmcp``, ``_litellm``) own no rounds, budgets, call keys or feedback wording: the
decision is :func:`~autofeedback.decide._calls.decide_calls` (check, repair what is
certain), the turn is judged by the run driver
(:func:`~autofeedback.decide._run.judge_message`: the bounds of the
:class:`~autofeedback.decide.Policy` of a :class:`~autofeedback.decide.Session`, the
call key, the feedback of :mod:`autofeedback.decide._feedback`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from autofeedback.core._cache import content_key
from autofeedback.core._exceptions import AutoFeedbackError, ConfigurationError
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._install import install_hint
from autofeedback.decide import Decider, Decision, Policy, Session
from autofeedback.decide._calls import Call, call_feedback, decide_calls
from autofeedback.decide._feedback import NOT_RUN, NOT_RUN_WITH
from autofeedback.decide._run import judge_message, restore
from autofeedback.integrations._guard import SpecLike, as_catalog
from autofeedback.scanner._scan import Scanner

__all__ = [
    "MARKER",
    "NOT_RUN",
    "NOT_RUN_WITH",
    "CallVerdict",
    "Door",
    "Turn",
    "absent",
    "default_policy",
    "log_repairs",
]

_log = logging.getLogger("autofeedback.guard")

#: the key under which an adapter marks what it answered (a LangChain ``ToolMessage``'s
#: ``artifact``, an AI message's ``response_metadata``), so that the run's session can be
#: read back from the conversation
MARKER = "autofeedback"

#: how many tool lists the doors keep a decider for (a framework may show the model
#: another subset of its tools at each turn); shared by the doors of the process
_DECIDERS_KEPT = 32
_DECIDERS: OrderedDict[tuple[str, str, Any], Decider] = OrderedDict()
_LOCK = threading.Lock()

Action = Literal["forward", "feedback", "stop"]


def absent(extra: str, name: str) -> type:
    """A stand-in base class for an adapter whose framework is not installed: making one
    raises :class:`~autofeedback.ConfigurationError` saying how to install it (so that
    ``import autofeedback`` and its lazy names never need the framework).

    >>> Base = absent("langchain", "AutoFeedbackMiddleware")
    >>> try:
    ...     Base()
    ... except ConfigurationError as exc:
    ...     print(exc)
    AutoFeedbackMiddleware needs the langchain extra: pip install 'autofeedback-api[langchain]'
    """
    message = f"{name} needs the {extra} extra: {install_hint(extra)}"

    class Absent:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise ConfigurationError(message)

        def __init_subclass__(cls, **kwargs: Any) -> None:
            pass

    Absent.__name__ = Absent.__qualname__ = f"Absent[{extra}]"
    return Absent


def default_policy() -> Policy:
    """The policy of an adapter given none: the certain repairs, feedback for the rest,
    three feedback rounds per run (as the feedback loop and the proxy)."""
    return Policy()


@dataclasses.dataclass(frozen=True)
class CallVerdict:
    """What becomes of one tool call of a turn.

    ``name`` and ``arguments`` are the call to run (repaired where the docs leave one
    answer); ``runs`` says whether it runs; ``feedback`` is the text the model gets
    instead of the tool's result when it does not (``None`` for a call that was fine but
    did not run because the run stops).
    """

    call_id: str | None
    name: Any
    arguments: dict[str, Any] | None
    runs: bool
    feedback: str | None
    decision: Decision

    @property
    def repairs(self) -> tuple[Repair, ...]:
        return self.decision.repairs

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.decision.findings

    def told(self) -> str:
        """The feedback, or for a call that was to run repaired but cannot (the framework
        routed it by the name as written), the repaired call to make."""
        if self.feedback is not None:
            return self.feedback
        if not self.decision.findings:
            return NOT_RUN
        call = Call("openai-chat", self.call_id, self.name, self.arguments)
        return call_feedback(call, self.decision)


@dataclasses.dataclass(frozen=True)
class Turn:
    """The decision on every tool call of one model turn, judged by the run's session.

    ``action``: ``forward`` (every call runs, repaired where certain), ``feedback`` (the
    calls with errors are answered with :attr:`CallVerdict.feedback`, the others run),
    ``stop`` (nothing runs: the policy's rounds or repeats are spent). ``reason`` is the
    session's (:class:`~autofeedback.decide.Decision`). ``key`` is what the session
    counted the turn by: an adapter that keeps its session in the conversation stores it
    with the feedback (:meth:`Door.session`).
    """

    action: Action
    reason: str
    calls: tuple[CallVerdict, ...]
    key: str

    @property
    def repairs(self) -> list[Repair]:
        return [r for c in self.calls for r in c.repairs]

    @property
    def repaired(self) -> bool:
        return any(c.repairs for c in self.calls)

    def by_id(self) -> dict[str | None, CallVerdict]:
        return {c.call_id: c for c in self.calls}

    def record(self) -> dict[str, Any]:
        """What an adapter stores with its answer (plain JSON data)."""
        return {"key": self.key, "action": self.action, "reason": self.reason}

    def as_dict(self) -> dict[str, Any]:
        """The JSON form for logs: the action, each call's codes and repairs."""
        return {
            "action": self.action,
            "reason": self.reason,
            "calls": [
                {
                    "name": c.name,
                    "runs": c.runs,
                    "codes": [f.code for f in c.findings if f.severity == "error"],
                    "repairs": [r.as_dict() for r in c.repairs],
                }
                for c in self.calls
            ],
        }


class Door:
    """The one decision behind an adapter: a :class:`~autofeedback.decide.Decider` per
    tool list and the :class:`~autofeedback.decide.Policy` of the adapter's runs.

    ``tools``: the docs to check against (a catalog, a spec path, an OpenAI tool list);
    ``None``: the tool list the framework gives the model, turn by turn.

    >>> door = Door(retriever=None)
    >>> tools = [{"name": "get_weather", "parameters": {"type": "object",
    ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
    >>> turn = door.decide([("c1", "get_weather", {"City": "Paris"})], door.session(), tools)
    >>> turn.action, turn.calls[0].arguments
    ('forward', {'city': 'Paris'})
    """

    def __init__(
        self,
        tools: SpecLike | None = None,
        *,
        policy: Policy | None = None,
        retriever: Any = "auto",
    ) -> None:
        self.policy = policy if policy is not None else default_policy()
        self.retriever = retriever
        self._fixed = self._new_decider(tools) if tools is not None else None

    def _new_decider(self, tools: SpecLike) -> Decider:
        scanner = Scanner(as_catalog(tools), retriever=self.retriever)
        return Decider(scanner, repair=self.policy.repair)

    def decider(self, tools: Sequence[Mapping[str, Any]] | None = None) -> Decider:
        """The decider for the framework's tool list ``tools`` (OpenAI function shape),
        or the docs the door was given. Deciders are shared by every door of the process
        with the same repair mode and retriever (an adapter made per run, as the Agents
        SDK's hooks are, builds a tool list's catalog once)."""
        if self._fixed is not None:
            return self._fixed
        if tools is None:
            raise AutoFeedbackError("no tool list: pass the tools to check the calls against")
        retriever = self.retriever
        key = (
            content_key(tools)[0],
            self.policy.repair,
            retriever if retriever is None or isinstance(retriever, str) else id(retriever),
        )
        with _LOCK:
            found = _DECIDERS.get(key)
            if found is not None:
                _DECIDERS.move_to_end(key)
                return found
        made = self._new_decider(list(tools))
        with _LOCK:
            made = _DECIDERS.setdefault(key, made)
            while len(_DECIDERS) > _DECIDERS_KEPT:
                _DECIDERS.popitem(last=False)
        return made

    def session(self, records: Sequence[Mapping[str, Any]] = ()) -> Session:
        """A session for one run, with the turns ``records`` (:meth:`Turn.record`, in
        order) counted as the run's earlier ones: an adapter that keeps no state of its
        own reads them back from the conversation."""
        return restore(Session(self.policy), records)

    def decide(
        self,
        calls: Sequence[tuple[str | None, Any, Any]],
        session: Session,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> Turn:
        """The decision on one turn's ``calls`` (``(id, name, arguments)``, arguments a
        mapping or JSON text), judged by ``session`` (the run driver's
        :func:`~autofeedback.decide._run.judge_message`)."""
        decider = self.decider(tools)
        message = {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": call_id if call_id is not None else f"call_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for i, (call_id, name, arguments) in enumerate(calls)
            ],
        }
        decided = decide_calls(message, decider)
        raw = [(name, arguments) for _, name, arguments in calls]
        turn = judge_message(session, decided, raw, scanner=decider.scanner)
        out = []
        for (call_id, _, _), c, runs, feedback in zip(
            calls, decided.calls, turn.runs, turn.feedback, strict=True
        ):
            arguments = dict(c.arguments) if c.arguments is not None else None
            out.append(CallVerdict(call_id, c.name, arguments, runs, feedback, c.decision))
        return Turn(turn.action, turn.reason, tuple(out), turn.key)


def log_repairs(calls: Iterable[CallVerdict]) -> None:
    """Log each repaired call that runs, as :func:`~autofeedback.guard` does: a repair is
    never silent."""
    for c in calls:
        if c.runs and c.repairs:
            _log.warning("%s: called with the repairs %s", c.name, "; ".join(map(str, c.repairs)))

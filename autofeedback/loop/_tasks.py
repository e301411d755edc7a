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

This module holds what both share (:class:`TaskTurn`, :class:`TaskResult`, the runner
base); each runner has its module: :mod:`autofeedback.loop._program_runner`,
:mod:`autofeedback.loop._react_runner`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest
from autofeedback.core._redact import auth_names, redact
from autofeedback.decide import Decider, Policy, RepairMode, check_repair
from autofeedback.decide._run import (
    Run,
    TaskStop,
)
from autofeedback.flow._graph import FlowGraph
from autofeedback.flow._graphql import with_responses
from autofeedback.loop._llm import LLMClient
from autofeedback.loop._loop import TraceRow, _request_dict
from autofeedback.scanner._scan import Scanner
from autofeedback.scanner._sequences import SequenceChecker, response_schemas

__all__ = ["TaskResult", "TaskTurn"]

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


# -- ReAct mode ---------------------------------------------------------------------------


def _replace(turn: TaskTurn, **changes: Any) -> TaskTurn:
    from dataclasses import replace

    return replace(turn, **changes)


def _timed(turn: TaskTurn, started: float, **changes: Any) -> TaskTurn:
    return _replace(turn, seconds=round(time.perf_counter() - started, 4), **changes)

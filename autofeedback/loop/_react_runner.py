"""The ReAct runner (see :mod:`autofeedback.loop._tasks`): one call per turn, each checked
against the trace so far before it is sent, the response shown as the next
``Observation``, until ``Final Answer:`` or the run driver stops."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import requests

from autofeedback._parse._output import to_requests
from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_name import check_name, destructive
from autofeedback.core._exceptions import ConfigurationError, FileNotRead, HostNotAllowed
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.core._redact import credential_values
from autofeedback.decide import Decision
from autofeedback.decide._corrected import call_text, next_action
from autofeedback.decide._feedback import (
    inserted_turn,
    observation,
    observed,
    unfinished_note,
)
from autofeedback.decide._render import rewrite_output
from autofeedback.decide._run import (
    FILE_NOT_READ,
    HOST_NOT_ALLOWED,
    NO_CALL,
    UNREACHABLE,
    Run,
    TaskStop,
    call_key,
)
from autofeedback.flow._sequence import Sequence as StepSequence
from autofeedback.flow._sequence import Step, StepResponse
from autofeedback.flow._tools import documented_tools, with_tools_in_text
from autofeedback.loop._llm import LLMClient
from autofeedback.loop._prompt import describe_operations
from autofeedback.loop._send import SENSITIVE, allowed_hosts, build_http, send
from autofeedback.loop._tasks import TaskResult, TaskTurn, _replace, _Runner, _timed

__all__ = ["REACT_STOP", "REACT_SYSTEM", "UNFINISHED_TOP", "ReactRunner", "read_react"]


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
        except FileNotRead as exc:
            run.end(FILE_NOT_READ)
            return None, None, str(exc)
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
        located under ``step[i]``; the sequence's E2.1 left out, a search before the goal
        being no wrong API, unless the step would destroy something: a wrong delete
        cannot be undone)."""
        seq = StepSequence((*steps, Step(len(steps), request)), instruction=instruction)
        where = f"step[{len(steps)}]"
        found = [
            f
            for f in self.checker.iter_findings(seq)
            if f.location[:1] == (where,)
            and not (f.code.startswith("E2.1") and not self._destroys(f.operation))
        ]
        [decision] = self.decider.decide_steps(
            seq, len(steps), checker=self.checker, findings=found
        )
        return dataclasses.replace(
            decision,
            findings=tuple(_under(f, where) for f in decision.findings),
            remaining=tuple(_under(f, where) for f in decision.remaining),
        )

    def _destroys(self, name: str | None) -> bool:
        op = self.checker.scanner.catalog.get(name or "")
        return op is not None and destructive(op)

    def _observation(self, status: int, body: Any) -> str:
        text = body if isinstance(body, str) else json.dumps(body, default=str)
        return observation(status, str(self._scrub(text)), self.observation_chars)


def _under(f: Finding, where: str) -> Finding:
    return dataclasses.replace(f, location=(where, *f.location))


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


def _noted(messages: Sequence[dict[str, str]], note: str) -> list[dict[str, str]]:
    """``messages`` with ``note`` ending the last one."""
    *head, last = messages
    return [*head, {**last, "content": f"{last['content']}\n\n{note}"}]

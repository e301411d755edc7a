"""The one decision: what happens to a call the model wrote.

Every entry point (the feedback loop and the task runners, ``guard`` and the tool-call
helpers, the OpenAI-compatible and MCP proxies, the ``requests`` guard, the audit) asks
the same two questions of each call and only translates the answers to its transport:

1. :class:`Decider`: what is wrong with the call, and what of it is certain enough to
   repair here (:mod:`autofeedback.decide._repairs`)? The repaired call is checked again;
   the :class:`Decision` carries the call to send, the findings of the call as written
   (each repaired one with its ``fix``), what remains, and every :class:`Repair`.
2. :class:`Session`: given what happened so far in this run or conversation (feedback
   rounds used, identical calls already rejected, tokens spent), is the call forwarded,
   fed back to the model, or is it time to stop? One :class:`Policy` says how.

``repair="sure"`` (the default everywhere) applies the certain repairs; ``"off"`` only
reports them. A repair is never silent: it is in the decision, in each finding's ``fix``,
and every entry point shows it (trace, header, log, report).
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest

if TYPE_CHECKING:
    from autofeedback.core._model import Output
    from autofeedback.scanner._scan import Scanner

__all__ = [
    "REPAIR_MODES",
    "Decider",
    "Decision",
    "Policy",
    "RepairMode",
    "Session",
    "check_repair",
    "combine",
    "request_key",
    "with_fixes",
]

RepairMode = Literal["off", "sure"]
#: the repair policies, the same on every entry point (``repair=``, ``--repair``, and
#: ``repair`` in ``[tool.autofeedback]``)
REPAIR_MODES: tuple[str, ...] = ("sure", "off")

Action = Literal["forward", "feedback", "stop"]
#: why: ``clean`` (nothing wrong), ``repaired`` (clean once repaired), ``errors`` (errors
#: remain: feedback), ``repeated`` (an identical call was rejected before), ``rounds`` (no
#: feedback round left), ``token-budget``, ``no-feedback`` (the policy gives none),
#: ``unblocked`` (errors remain, but of a kind the policy lets through)
Reason = Literal[
    "clean", "repaired", "errors", "repeated", "rounds", "token-budget", "no-feedback", "unblocked"
]


def check_repair(value: Any) -> RepairMode:
    """``value`` as a repair mode, or :class:`ConfigurationError` naming the choices.

    >>> check_repair("sure")
    'sure'
    """
    if value not in REPAIR_MODES:
        raise ConfigurationError(
            f"repair must be one of {', '.join(map(repr, REPAIR_MODES))}, not {value!r}"
        )
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Decision:
    """What happens to one call.

    ``action``: ``forward`` (send :attr:`request`), ``feedback`` (give the model
    :attr:`remaining` and :attr:`repairs`) or ``stop``; ``reason`` says why.
    ``original`` is the call as the model wrote it and ``findings`` its findings (the
    repaired ones carry :attr:`Finding.fix`); ``request`` is the call with the repairs,
    ``remaining`` its findings. ``request`` is ``None`` when nothing could be read, and
    for a program. ``text`` is the model's output with the repairs written in, in its own
    format (a program stays a program), where the decision was made on text and the
    repairs could be written back.
    ``first``: in a trace, a call to send before this one, with the repair that says so:
    the one producer of a value the call made up, which takes no argument (issue 27's
    insertion; the call is decided again once the producer's response is in the trace).
    """

    action: Action
    reason: Reason
    request: ApiRequest | None
    original: ApiRequest | None = None
    findings: tuple[Finding, ...] = ()
    remaining: tuple[Finding, ...] = ()
    repairs: tuple[Repair, ...] = ()
    text: str | None = None
    first: tuple[ApiRequest, Repair] | None = None

    @property
    def errors(self) -> list[Finding]:
        """The errors left in :attr:`request` (after the repairs)."""
        return [f for f in self.remaining if f.severity == "error"]

    @property
    def repaired(self) -> bool:
        return bool(self.repairs)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form for logs and traces (findings and repairs as plain data)."""
        return {
            "action": self.action,
            "reason": self.reason,
            "codes": [f.code for f in self.findings if f.severity == "error"],
            "repairs": [r.as_dict() for r in self.repairs],
            "remaining": [f.as_dict() for f in self.errors],
            **({"first": self.first[1].as_dict()} if self.first is not None else {}),
        }


@dataclass(frozen=True)
class Policy:
    """How a run or conversation treats the calls it sees.

    ``repair``: ``"sure"`` applies the certain repairs, ``"off"`` reports them only.
    ``feedback``: whether errors go back to the model at all (``False``: the paper's Base
    setting). ``max_rounds``: feedback rounds per run (``None``: no bound, as for a proxy
    that answers each call on its own). ``repeats``: how many times an identical
    rejected call is answered with feedback again before the run stops. ``token_budget``:
    no feedback once the run spent this many tokens. ``block``: the finding families
    (``"E1"`` ... ``"E5"``) that keep a call from being forwarded once no feedback is
    left; a call whose errors are all of other families goes out as it is.
    ``max_dynamic``: refusals of the server fed back per run (``None``: no bound).
    ``max_steps``: calls sent per run (``None``: no bound).

    >>> Policy().repair, Policy().max_rounds
    ('sure', 3)
    """

    repair: RepairMode = "sure"
    feedback: bool = True
    max_rounds: int | None = 3
    repeats: int = 0
    token_budget: int | None = None
    block: frozenset[str] = frozenset({"E1", "E2", "E3", "E4", "E5"})
    max_dynamic: int | None = None
    max_steps: int | None = None

    def __post_init__(self) -> None:
        check_repair(self.repair)
        if self.max_rounds is not None and self.max_rounds < 0:
            raise ConfigurationError("max_rounds must be >= 0")
        if self.max_dynamic is not None and self.max_dynamic < 0:
            raise ConfigurationError("max_dynamic must be >= 0")
        if self.max_steps is not None and self.max_steps < 1:
            raise ConfigurationError("max_steps must be >= 1")
        if self.repeats < 0:
            raise ConfigurationError("repeats must be >= 0")


#: how many distinct rejected calls a session remembers for the repeat rule
_REMEMBERED = 4096


class Session:
    """The state of one run or conversation: feedback rounds used, identical calls
    rejected, tokens spent, refusals fed back, calls sent. :meth:`judge` turns a
    :class:`Decider`'s decision into the action for this point of the run.

    >>> from autofeedback.core._findings import Finding
    >>> s = Session(Policy(max_rounds=1))
    >>> bad = Decision("feedback", "errors", None, remaining=(Finding("E1", (), "x"),))
    >>> s.judge(bad, key="a").action, s.judge(bad, key="b").action
    ('feedback', 'stop')
    """

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy = policy or Policy()
        self.rounds = 0
        self.tokens = 0
        #: refusals of the server fed back (the dynamic budget), calls sent (steps)
        self.dynamic = 0
        self.steps = 0
        self._rejected: OrderedDict[Hashable, int] = OrderedDict()

    def rejections(self, key: Hashable) -> int:
        """How many times the call ``key`` was rejected so far."""
        return self._rejected.get(key, 0)

    def reject(self, key: Hashable) -> int:
        """Count one more rejection of ``key`` (a call fed back, or refused by the server);
        returns the count."""
        count = self._rejected.pop(key, 0) + 1
        self._rejected[key] = count
        while len(self._rejected) > _REMEMBERED:
            self._rejected.popitem(last=False)
        return count

    def spend(self, tokens: int) -> None:
        self.tokens += max(0, tokens)

    @property
    def over_budget(self) -> bool:
        budget = self.policy.token_budget
        return budget is not None and self.tokens >= budget

    def judge(self, decision: Decision, *, key: Hashable = None) -> Decision:
        """``decision`` with its action for now: ``forward`` when nothing blocks the call;
        else ``feedback`` while the policy gives it (a round is used and ``key`` counted
        as rejected), else ``forward`` if the errors are of families the policy lets
        through, else ``stop``. A call rejected before (fed back, or refused by the
        server: :meth:`reject`) is answered again (``feedback``, ``repeated``) while the
        policy's ``repeats`` last, then stops the run (``stop``, ``repeated``)."""
        policy = self.policy
        if key is not None and key in self._rejected:
            spent = self._rejected[key] > policy.repeats or self.over_budget
            if spent or not policy.feedback:
                return dataclasses.replace(decision, action="stop", reason="repeated")
            # told again (the entry point restates what it said), once per repeat allowed
            self.reject(key)
            return dataclasses.replace(decision, action="feedback", reason="repeated")
        if not decision.errors:
            reason: Reason = "repaired" if decision.repairs else "clean"
            return dataclasses.replace(decision, action="forward", reason=reason)
        why: Reason | None = None
        if not policy.feedback:
            why = "no-feedback"
        elif policy.max_rounds is not None and self.rounds >= policy.max_rounds:
            why = "rounds"
        elif self.over_budget:
            why = "token-budget"
        if why is None:
            self.rounds += 1
            if key is not None:
                self.reject(key)
            return dataclasses.replace(decision, action="feedback", reason="errors")
        blocking = {f.code.split(".")[0] for f in decision.errors} & policy.block
        readable = decision.request is not None or decision.text is not None
        if readable and not blocking:
            return dataclasses.replace(decision, action="forward", reason="unblocked")
        return dataclasses.replace(decision, action="stop", reason=why)


def combine(decisions: Sequence[Decision]) -> Decision:
    """One decision for calls made together (one message of several tool calls):
    ``forward`` when every one is, else ``feedback``; findings, what remains and the
    repairs joined in order.

    >>> fixed = Decision("forward", "repaired", None, repairs=(Repair("E3.2", (), "A", "a"),))
    >>> combine([Decision("forward", "clean", None), fixed]).reason
    'repaired'
    """
    forward = all(d.action == "forward" for d in decisions)
    reason: Reason = "errors"
    if forward:
        reason = "repaired" if any(d.repairs for d in decisions) else "clean"
    return Decision(
        "forward" if forward else "feedback",
        reason,
        None,
        None,
        tuple(f for d in decisions for f in d.findings),
        tuple(f for d in decisions for f in d.remaining),
        tuple(r for d in decisions for r in d.repairs),
        text="" if decisions else None,
    )


def request_key(request: ApiRequest | None, text: str = "") -> str:
    """What makes two calls the same call (a repeat): name, arguments, method, URL,
    parameters and body; the text itself when nothing could be read."""
    if request is None:
        return f"text:{text.strip()}"
    payload = {
        "name": request.name,
        "arguments": request.arguments,
        "method": request.method,
        "url": request.url,
        "params": request.params,
        "body": request.body,
    }
    try:
        return json.dumps(payload, sort_keys=True, default=str)
    except (ValueError, RecursionError):  # circular or nested too deeply: its repr
        return repr(payload)


def shown(repairs: Iterable[Repair], scanner: Any, request: ApiRequest | None) -> list[Repair]:
    """``repairs`` as they may be shown: credentials masked (the repaired call keeps its
    values; its record in findings, traces and reports does not)."""
    from autofeedback.core._redact import redact_repair, request_secrets

    names = scanner._auth_names
    secrets = request_secrets(request, names) if request is not None else []
    return [redact_repair(r, names=names, secrets=secrets) for r in repairs]


def with_fixes(findings: Iterable[Finding], repairs: Sequence[Repair]) -> list[Finding]:
    """``findings`` with each one a repair answered carrying that repair as ``fix``
    (matched by code and location)."""
    by_place = {(r.code, r.location): r for r in repairs}
    out = []
    for f in findings:
        fix = by_place.get((f.code, f.location))
        out.append(dataclasses.replace(f, fix=fix) if fix is not None else f)
    return out


def _as_checked(
    request: ApiRequest | None, found: Sequence[Finding], text: str | None = None
) -> Decision:
    """The decision on a call that was not repaired: forward if ``found`` holds no
    error, else feedback."""
    action: Action = "forward"
    reason: Reason = "clean"
    if any(f.severity == "error" for f in found):
        action, reason = "feedback", "errors"
    return Decision(action, reason, request, request, tuple(found), tuple(found), text=text)


def _after_repairs(
    repaired: ApiRequest | None,
    original: ApiRequest | None,
    found: Sequence[Finding],
    remaining: Sequence[Finding],
    repairs: Sequence[Repair],
    text: str | None = None,
) -> Decision:
    """The decision on a repaired call: forward if the repaired call is clean, else
    feedback on what is left; each finding a repair answered carries it as ``fix``."""
    ok = not any(f.severity == "error" for f in remaining)
    return Decision(
        "forward" if ok else "feedback",
        "repaired" if ok else "errors",
        repaired,
        original,
        tuple(with_fixes(found, repairs)),
        tuple(remaining),
        tuple(repairs),
        text=text,
    )


@dataclass
class Decider:
    """Checks a call and repairs what is certain, against one :class:`~autofeedback.Scanner`.

    >>> from autofeedback import ApiCatalog, Scanner
    >>> catalog = ApiCatalog.from_tools([{"name": "get_weather", "parameters": {
    ...     "type": "object", "required": ["city"], "properties": {
    ...         "city": {"type": "string"}, "days": {"type": "integer"}}}}])
    >>> d = Decider(Scanner(catalog, retriever=None)).decide_request(
    ...     ApiRequest(name="get_weather", arguments={"City": "Paris", "days": "3"}))
    >>> d.request.arguments
    {'city': 'Paris', 'days': 3}
    >>> [str(r) for r in d.repairs]
    ["E3.2 argument.City: 'City' -> 'city'", "E4.1 argument.days: '3' -> 3"]
    >>> d.errors
    []
    """

    scanner: Scanner
    repair: RepairMode = "sure"
    _repairer: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        check_repair(self.repair)

    def decide(
        self, output: Output, *, instruction: str | None = None, context: str | None = None
    ) -> list[Decision]:
        """A decision per request in ``output`` (text, a parsed request, or a call or
        request mapping); one decision with ``request=None`` and its E1 finding when
        nothing can be read. The action is ``forward`` for a clean (or cleanly repaired)
        call and ``feedback`` otherwise; a :class:`Session` adds the run's bounds."""
        from autofeedback._parse._output import to_requests
        from autofeedback.flow._sequence import looks_like_program
        from autofeedback.scanner._scan import is_program

        if isinstance(output, str) and (is_program(output) or looks_like_program(output)):
            return [self.decide_program(output, instruction=instruction, context=context)]
        requests, problem = to_requests(output)
        if problem is not None:
            return [Decision("feedback", "errors", None, None, (problem,), (problem,))]
        decisions = [
            self.decide_request(r, instruction=instruction, context=context, calls=len(requests))
            for r in requests
        ]
        if isinstance(output, str) and any(d.repairs for d in decisions):
            from autofeedback.decide._render import rewrite_output

            pairs = [(d.original, d.request) for d in decisions if d.original and d.request]
            text = rewrite_output(output, pairs)
            decisions = [dataclasses.replace(d, text=text) for d in decisions]
        return decisions

    def decide_program(
        self,
        text: str,
        *,
        instruction: str | None = None,
        checker: Any = None,
        tools: Any = None,
        responses: Any = None,
        context: str | None = None,
    ) -> Decision:
        """The decision for a program (calls with variables): its findings (E1-E5), and
        with ``repair="sure"`` the program with its certain repairs as :attr:`Decision.text`.
        ``checker``: the :class:`~autofeedback.sequences.SequenceChecker` (default: the
        scanner's, over its catalog's data-flow graph); ``context``: the rest of what the
        model saw, whose values ground the program's (E5.3) as for a call."""
        from autofeedback.flow._sequence import sequence_from_program

        checker = checker if checker is not None else self.scanner.sequence_checker()
        dialogue = context or ""
        seq = sequence_from_program(
            text, instruction=instruction, tools=tools, responses=responses, dialogue=dialogue
        )
        found = checker.check(seq)
        if not any(f.severity == "error" for f in found) or self.repair == "off":
            return _as_checked(None, found, text)
        from autofeedback.decide._flow_program import repair_program

        done = repair_program(
            checker,
            text,
            instruction=instruction,
            tools=tools,
            responses=responses,
            findings=found,
            dialogue=dialogue,
        )
        if done is None:
            return _as_checked(None, found, text)
        program, made, remaining = done
        repairs = shown(made, self.scanner, None)
        return _after_repairs(None, None, found, remaining, repairs, program)

    def decide_steps(
        self,
        seq: Any,
        first: int,
        *,
        checker: Any = None,
        findings: Sequence[Finding] | None = None,
    ) -> list[Decision]:
        """A decision for each step of ``seq`` from ``first`` on (the new calls; the steps
        before are the history, with their responses): each step checked as the next
        step of the sequence (E1-E5), and repaired where certain, an identifier an
        earlier response gave included. ``findings``: the sequence's findings, when the
        caller has them; findings located at ``step[i]`` go with step ``i``."""
        from autofeedback.decide._flow import per_step, repair_step
        from autofeedback.decide._flow_program import producer_first

        checker = checker if checker is not None else self.scanner.sequence_checker()
        found = list(findings) if findings is not None else checker.check(seq)
        grouped = dict(per_step(found))
        out: list[Decision] = []
        for index in range(first, len(seq.steps)):
            step = seq.steps[index]
            mine = grouped.get(index, [])
            request = step.request
            done = None
            errors = any(f.severity == "error" for f in mine)
            if errors and self.repair == "sure" and request is not None:
                done = repair_step(checker, seq, index, mine)
            if done is None:
                decision = _as_checked(request, mine)
            else:
                repaired, made, remaining = done
                repairs = shown(made, checker.scanner, request)
                decision = _after_repairs(repaired, request, mine, remaining, repairs)
            if self.repair == "sure" and any(f.code == "E5.3" for f in decision.errors):
                before = producer_first(checker, seq, index, decision.errors, decision.request)
                if before is not None:
                    decision = dataclasses.replace(decision, first=before)
            out.append(decision)
        return out

    def decide_request(
        self,
        request: ApiRequest,
        *,
        instruction: str | None = None,
        context: str | None = None,
        calls: int = 1,
        findings: Sequence[Finding] | None = None,
    ) -> Decision:
        """The decision for one parsed request (``findings``: its findings, when the caller
        has them already)."""
        # the catalog the call is judged against: a tool that a search earlier in the
        # dialogue documented is checked and repaired as a tool of the list is (issue 40)
        scanner = self.scanner._dialogue_scanner(request, instruction, context)

        def check(r: ApiRequest) -> list[Finding]:
            return list(
                scanner.iter_findings(r, instruction=instruction, context=context)
                if calls == 1
                else scanner.check_request(r, instruction=instruction, calls=calls, context=context)
            )

        found = list(findings) if findings is not None else check(request)
        return self.from_findings(request, found, check, scanner=scanner)

    def from_findings(
        self,
        request: ApiRequest,
        found: Sequence[Finding],
        check: Any,
        *,
        scanner: Scanner | None = None,
    ) -> Decision:
        """The decision for ``request`` whose findings are ``found``; ``check`` gives the
        findings of a repaired request the same way. ``scanner``: the one whose catalog
        the call was judged against (default: the decider's)."""
        if self.repair == "off" or not any(f.severity == "error" for f in found):
            return _as_checked(request, found)
        judged = scanner if scanner is not None else self.scanner
        if request.name is not None and request.name in judged.catalog.set_aside:
            # a tool name that looks like another, or is listed twice: fed back, never
            # renamed to the name it looks like (issue 43)
            return _as_checked(request, found)
        repaired, made, remaining = self._call_repairer(check, judged).repair(request, found)
        if not made:
            return _as_checked(request, found)
        repairs = shown(made, judged, request)
        return _after_repairs(repaired, request, found, remaining, repairs)

    def _call_repairer(self, check: Any, scanner: Scanner | None = None) -> Any:
        from autofeedback.decide._repairs import CallRepairer

        judged = scanner if scanner is not None else self.scanner
        return CallRepairer(judged.catalog, check, judged._matcher)

"""The run driver: what happens to a whole run of calls, one component behind every
entry point.

A run asks the model, decides on what it wrote (:class:`~autofeedback.decide.Decider`),
judges the decision at this point of the run, then replies to the model or sends the
call. Every entry point runs that loop over its own transport: the feedback loop and the
task runners over an LLM client and HTTP, the OpenAI-compatible proxy over an upstream
server, the MCP gate and the agent-framework doors over a framework that owns the loop.
What the run *is* lives here, once:

* every bound, in one :class:`~autofeedback.decide.Policy` and its
  :class:`~autofeedback.decide.Session`: feedback rounds, repeats of a rejected call,
  tokens, refusals fed back (the dynamic budget), calls sent (steps);
* the one stop vocabulary (:data:`Stop`), and how a session's reason reads in it for
  each kind of run;
* the one "same call" key (:func:`call_key`, :func:`message_key`);
* the words, through :mod:`autofeedback.decide._feedback`, the renderer of each
  transport.

An entry point holds a :class:`Run` (or, for a framework that owns the loop, judges one
turn with :func:`judge_message`) and only reads calls from its transport, replies on it
and sends on it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from autofeedback.core._exceptions import AutoFeedbackError
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest
from autofeedback.decide._decision import Decision, Policy, Reason, Session, combine, request_key

__all__ = [
    "ANSWERED",
    "BASE",
    "CLEAN",
    "CORRECTED",
    "DYNAMIC_BUDGET",
    "FEEDBACK_BUDGET",
    "FILE_NOT_READ",
    "HOST_NOT_ALLOWED",
    "NO_CALL",
    "REPAIRED",
    "REPEATED",
    "SEND_GATE",
    "STEP_BUDGET",
    "SUCCESS",
    "TOKEN_BUDGET",
    "UNREACHABLE",
    "UNREADABLE",
    "Kind",
    "LoopTurn",
    "MessageTurn",
    "Run",
    "Stop",
    "StopReason",
    "TaskStop",
    "call_key",
    "judge_message",
    "key_digest",
    "logged_action",
    "message_key",
    "repeat_limit_policy",
    "restore",
    "upstream_stop",
]

# -- the one stop vocabulary ---------------------------------------------------------------

#: Why the feedback loop's run ended (:attr:`~autofeedback.LoopResult.stop_reason`).
StopReason = Literal[
    "success",
    "static-budget",
    "dynamic-budget",
    "repeated",
    "token-budget",
    "host-not-allowed",
    "file-not-read",
    "blocked",
    "unreachable",
    # after a refusal nothing in the request could fix (a quota), the model answered in
    # words, not with another call
    "answered",
]
#: Why a task runner's run ended (:attr:`~autofeedback.runners.TaskResult.stop_reason`).
TaskStop = Literal[
    "clean",
    "base",
    "answered",
    "feedback-budget",
    "step-budget",
    "repeated",
    "token-budget",
    "no-call",
    "host-not-allowed",
    "file-not-read",
    "unreachable",
]
#: Every stop a run can name: the loop's, the task runners', the proxy's (which adds
#: ``repaired``, ``corrected``, ``max-rounds`` and ``upstream-<status>`` /
#: ``upstream-invalid``: :func:`upstream_stop`).
Stop = str

SUCCESS: Final = "success"
CLEAN: Final = "clean"
ANSWERED: Final = "answered"
REPAIRED: Final = "repaired"
CORRECTED: Final = "corrected"
REPEATED: Final = "repeated"
TOKEN_BUDGET: Final = "token-budget"
FEEDBACK_BUDGET: Final = "feedback-budget"
STEP_BUDGET: Final = "step-budget"
DYNAMIC_BUDGET: Final = "dynamic-budget"
BASE: Final = "base"
NO_CALL: Final = "no-call"
HOST_NOT_ALLOWED: Final = "host-not-allowed"
#: a checked request uploads a local file, which is not read: not sent, the run ends
FILE_NOT_READ: Final = "file-not-read"
UNREACHABLE: Final = "unreachable"

#: the kinds of run: the feedback loop, the program runner, the ReAct runner, the
#: OpenAI-compatible proxy, the MCP gate, an agent framework's door
Kind = Literal["loop", "program", "react", "proxy", "mcp", "door"]

#: how each kind of run names the session's reason to stop
_STOPS: dict[str, dict[str, Stop]] = {
    "loop": {
        "repeated": REPEATED,
        "token-budget": TOKEN_BUDGET,
        "rounds": "static-budget",
        "no-feedback": "blocked",
    },
    "program": {
        "repeated": REPEATED,
        "rounds": FEEDBACK_BUDGET,
        "token-budget": TOKEN_BUDGET,
        "no-feedback": BASE,
    },
    "react": {"repeated": REPEATED, "rounds": FEEDBACK_BUDGET, "token-budget": TOKEN_BUDGET},
    "proxy": {"repeated": REPEATED, "rounds": "max-rounds", "token-budget": TOKEN_BUDGET},
}
#: the stop when the session's reason has no name of its own in a kind of run
_OTHERWISE: dict[str, Stop] = {
    "loop": "static-budget",
    "program": FEEDBACK_BUDGET,
    "react": FEEDBACK_BUDGET,
    "proxy": "max-rounds",
}

#: the finding families that keep an HTTP request from being sent once no feedback is
#: left: a request with an E4 or E5 error still goes out, for the server to judge
SEND_GATE = frozenset({"E1", "E2", "E3"})
#: only what cannot be read at all is kept in (the paper's Dynamic setting: the server's
#: answer and the docs are the only feedback)
UNREADABLE = frozenset({"E1"})


def upstream_stop(status: int | None) -> Stop:
    """The proxy's stop for an upstream that failed: its status, or ``invalid`` for an
    answer that could not be read.

    >>> upstream_stop(503), upstream_stop(None)
    ('upstream-503', 'upstream-invalid')
    """
    return f"upstream-{status if status is not None else 'invalid'}"


def logged_action(action: str) -> str:
    """A decision's action as the proxies' ``--log`` names it.

    >>> [logged_action(a) for a in ("forward", "feedback", "stop")]
    ['forward', 'feed_back', 'stop']
    """
    return {"forward": "forward", "feedback": "feed_back"}.get(action, "stop")


# -- the one "same call" key -------------------------------------------------------------------


def call_key(request: ApiRequest | None, text: str = "") -> str:
    """What makes two calls the same call (a repeat):
    :func:`~autofeedback.decide.request_key`, the text itself when nothing could be read.

    >>> call_key(ApiRequest(name="f", arguments={"b": 1, "a": 2})) == call_key(
    ...     ApiRequest(name="f", arguments={"a": 2, "b": 1}))
    True
    """
    return request_key(request, text)


def message_key(decisions: Sequence[Decision], raw: Sequence[Any]) -> str:
    """What makes two model messages the same calls: the key of each call in order (a
    call that could not be read by what the model wrote, ``raw``: its name and
    arguments as given). Ids differ every round and are not part of it."""
    keys = [
        call_key(d.original, json.dumps(list(r), sort_keys=True, default=str))
        for d, r in zip(decisions, raw, strict=True)
    ]
    return json.dumps(keys, sort_keys=True)


def key_digest(key: str) -> str:
    """A key as 64 characters, for a session that remembers calls across conversations.

    >>> len(key_digest(call_key(ApiRequest(name="f"))))
    64
    """
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def repeat_limit_policy(limit: int, *, repair: Any = "sure") -> Policy:
    """The policy of a gate whose ``limit``-th identical rejected call is told to stop
    (``0``: never), with no bound on rounds: the repeats the session allows before it
    stops (the call is rejected once, told again ``limit - 2`` times, then stopped).

    >>> repeat_limit_policy(3).repeats, repeat_limit_policy(0).repeats == sys.maxsize
    (1, True)
    """
    repeats = sys.maxsize if limit == 0 else max(0, limit - 2)
    return Policy(repair=repair, max_rounds=None, repeats=repeats)


# -- one turn of a run -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LoopTurn:
    """What a run does with one model turn.

    ``action``: ``send`` (:attr:`request`), ``feedback`` (reply :attr:`feedback`) or
    ``stop``; ``decision`` is the judged decision; ``key`` the call's key; ``kind`` what
    the feedback is (``static``, ``dynamic`` for a refusal restated); ``error`` why the
    turn was not sent, for the trace.
    """

    action: Literal["send", "feedback", "stop"]
    decision: Decision
    key: Hashable
    feedback: str | None = None
    kind: Literal["static", "dynamic"] | None = None
    error: str | None = None
    note: bool = False

    @property
    def request(self) -> ApiRequest | None:
        return self.decision.request


@dataclasses.dataclass(frozen=True)
class MessageTurn:
    """The judged decision on every tool call of one model message.

    ``decision`` is the session's judgement of the combined decision; ``key`` the
    message's key; ``feedback[i]`` the text answering call ``i`` when it does not run
    (``None`` for a call that runs, or that was fine in a run that stops); ``runs[i]``
    whether call ``i`` runs.
    """

    decision: Decision
    key: str
    feedback: tuple[str | None, ...]
    runs: tuple[bool, ...]

    @property
    def action(self) -> Literal["forward", "feedback", "stop"]:
        return self.decision.action

    @property
    def reason(self) -> Reason:
        return self.decision.reason


class Run:
    """One run: a :class:`~autofeedback.decide.Session` with its policy's every bound,
    the stop it ended with (:attr:`stop`, ``None`` while it goes on), and what was said.

    >>> from autofeedback.core._findings import Finding
    >>> run = Run(Policy(max_rounds=1), "program")
    >>> bad = Decision("feedback", "errors", None, remaining=(Finding("E1", (), "x"),))
    >>> run.judge(bad, text="a").action, run.stop
    ('feedback', None)
    >>> run.judge(bad, text="b").action, run.stop
    ('stop', 'feedback-budget')
    """

    def __init__(
        self,
        policy: Policy,
        kind: Kind,
        *,
        scanner: Any = None,
        instruction: str | None = None,
        skeleton: bool = False,
        session: Session | None = None,
    ) -> None:
        self.policy = policy
        self.kind = kind
        self.session = session if session is not None else Session(policy)
        #: the model's answers read so far (a proxy's rounds upstream)
        self.answers = 0
        self.stop: Stop | None = None
        self._scanner = scanner
        self._instruction = instruction
        self._skeleton = skeleton
        # what was said about each rejected call (restated when it comes again)
        self._said: dict[Hashable, tuple[str, Literal["static", "dynamic"]]] = {}
        self._attempts: list[str] = []  # the requests the server refused, in order
        self._restated: set[str] = set()  # ReAct: (call, Action told instead), each once
        self._made: set[str] = set()  # ReAct: the calls sent
        self._nudged = False  # ReAct: an early Final Answer is questioned once
        # what the docs said about the refusals so far (:meth:`docs_said`)
        self._named: set[str] = set()
        self._nothing_to_fix = False

    # -- bounds ------------------------------------------------------------------------

    def asked(self, tokens: int) -> None:
        """One more answer from the model, which cost ``tokens``."""
        self.answers += 1
        self.session.spend(tokens)

    @property
    def over_budget(self) -> bool:
        return self.session.over_budget

    @property
    def rounds_left(self) -> bool:
        limit = self.policy.max_rounds
        return limit is None or self.session.rounds < limit

    def end(self, stop: Stop) -> None:
        """End the run with ``stop`` (the first stop named is the one that counts)."""
        if self.stop is None:
            self.stop = stop

    def check_budget(self) -> None:
        """End the run when its tokens are spent."""
        if self.over_budget:
            self.end(TOKEN_BUDGET)

    def _stopped(self, reason: str) -> Stop:
        return _STOPS.get(self.kind, {}).get(reason, _OTHERWISE.get(self.kind, reason))

    # -- the standard turn: one decision, judged ----------------------------------------

    def judge(self, decision: Decision, *, text: str = "", key: Hashable = None) -> Decision:
        """``decision`` judged at this point of the run (its key: :func:`call_key` of the
        call as written, or ``key``); a stop ends the run in this kind's words, and a
        program run that forwards ends clean."""
        key = call_key(decision.original, text) if key is None else key
        judged = self.session.judge(decision, key=key)
        if judged.action == "stop":
            self.end(self._stopped(judged.reason))
        elif judged.action == "forward" and self.kind == "program":
            self.end(CLEAN)
        return judged

    # -- the feedback loop ------------------------------------------------------------------

    def docs_said(self, *, next_call: str | None, fixable: bool) -> None:
        """What the docs said about the refusal just made: the operation they name as the
        call to make first (``next_call``), and whether its cause names a part of the
        request or a call (``fixable``). Used by :meth:`after_refusals` and
        :meth:`loop_turn` in the rounds after it."""
        if next_call is not None:
            self._named.add(next_call)
        self._nothing_to_fix = not fixable and next_call is None

    def after_refusals(self, decision: Decision) -> Decision:
        """``decision`` as the run's refusals so far leave it: a call to an operation the
        docs named to resolve one ("Next call: getBooking(...)") is no wrong API for not
        matching the user's words (asked to cancel, the model reads the booking first as
        the docs say), so its E2.1 is a warning there, shown but not holding it. Every
        other finding stands, and a call the docs did not name is judged as before."""
        request = decision.request
        if request is None or request.name not in self._named:
            return decision
        if not any(f.code == "E2.1" and f.severity == "error" for f in decision.remaining):
            return decision

        def eased(found: tuple[Finding, ...]) -> tuple[Finding, ...]:
            return tuple(
                dataclasses.replace(f, severity="warning") if f.code == "E2.1" else f for f in found
            )

        remaining = eased(decision.remaining)
        if any(f.severity == "error" for f in remaining):
            return dataclasses.replace(
                decision, findings=eased(decision.findings), remaining=remaining
            )
        return dataclasses.replace(
            decision,
            action="forward",
            reason="repaired" if decision.repairs else "clean",
            findings=eased(decision.findings),
            remaining=remaining,
        )

    def loop_turn(self, decision: Decision, *, text: str) -> LoopTurn:
        """The feedback loop's turn: send the call, feed its errors back (the paper's
        five-part message, with the corrected call when the run shows it), restate what
        was said about a call the model repeats, or stop. After a refusal nothing in the
        request could fix and no call could lift (a quota: :meth:`docs_said`), an answer
        with no call is the model's answer to the user: the run ends ``answered``, where
        an E1 would send the model back to the refused write."""
        from autofeedback.decide._feedback import (
            REPEATED_REQUEST,
            not_sent,
            render_feedback,
            repeated_request,
        )

        key = call_key(decision.original, text)
        if decision.request is None and self._nothing_to_fix:
            self.text_answer()
            return LoopTurn("stop", decision, key)
        judged = self.judge(decision, key=key)
        request = judged.request
        if judged.action == "feedback" and judged.reason == "repeated":
            said, kind = self._said[key]
            return LoopTurn(
                "feedback", judged, key, repeated_request(said), kind, error=REPEATED_REQUEST
            )
        if judged.action == "feedback":
            # errors only: a warning is the scanner's doubt (an E2.1 below its confident
            # margin), and a small model takes it as an order to switch API
            errors = [f for f in judged.remaining if f.severity == "error"]
            shape = request.shape if request is not None else None
            fixed = None
            if self._skeleton:
                from autofeedback.decide._corrected import corrected_call

                fixed = corrected_call(
                    self._scanner,
                    request,
                    errors,
                    instruction=self._instruction,
                    style="api" if shape is None else "json",
                )
            feedback = render_feedback(
                errors, corrected=fixed, shape=shape, repairs=decision.repairs
            )
            self._said[key] = (feedback, "static")
            return LoopTurn("feedback", judged, key, feedback, "static")
        if judged.action == "stop":
            if judged.reason == "repeated":
                return LoopTurn("stop", judged, key, error=REPEATED_REQUEST)
            return LoopTurn("stop", judged, key, error=not_sent(request is not None))
        return LoopTurn("send", judged, key)

    def refused(
        self,
        key: Hashable,
        action: str,
        status: int | None,
        body: str,
        explain: Callable[[], list[str] | None],
    ) -> tuple[str | None, list[str] | None]:
        """A request the server refused: the dynamic feedback (what was sent, what came
        back, what the docs say: ``explain``, asked only when the feedback is given) and
        the explanation, while the dynamic budget and the tokens last; else the run ends
        (``dynamic-budget``)."""
        from autofeedback.decide._feedback import dynamic_feedback

        limit = self.policy.max_dynamic
        may = (limit is None or self.session.dynamic < limit) and not self.over_budget
        # what the docs said of an earlier refusal does not hold for this one: explain()
        # says it again through docs_said, or nothing is known
        self._nothing_to_fix = False
        explained = explain() if may else None
        feedback = None
        if may:
            feedback = dynamic_feedback(action, status, body, explained, self._attempts)
        self._attempts.append(f"{action} -> {status}")
        if feedback is None:
            self.end(DYNAMIC_BUDGET)
            return None, explained
        self.session.dynamic += 1
        self._said[key] = (feedback, "dynamic")
        self.session.reject(key)
        return feedback, explained

    # -- a program --------------------------------------------------------------------------

    def program_turn(
        self, decision: Decision, written: str, *, instruction: str | None, constrained: bool
    ) -> tuple[Decision, str, str | None]:
        """The program runner's turn on the program ``written`` (an answer that holds none
        is told so): the judged decision, the program as autofeedback holds it (the
        model's, with the certain repairs) and the feedback, ``None`` when the run ends.
        ``constrained``: the model writes JSON, not a ``python`` block."""
        from autofeedback.decide._feedback import NO_PROGRAM, program_feedback
        from autofeedback.flow._sequence import sequence_from_program

        seq = sequence_from_program(written, instruction=instruction)
        if not seq.steps and not seq.problems:  # an answer with no program in it
            decision = dataclasses.replace(
                decision,
                action="feedback",
                findings=(NO_PROGRAM, *decision.findings),
                remaining=(NO_PROGRAM, *decision.remaining),
            )
        judged = self.judge(decision, text=written)
        program = decision.text if decision.text is not None else written
        if self.stop is not None:
            return judged, program, None
        ask = "" if constrained else "in a ```python block"
        feedback = program_feedback(judged.errors, program, ask=ask, repairs=judged.repairs)
        return judged, program, feedback

    # -- ReAct ---------------------------------------------------------------------------------

    def answer(self, note: Callable[[], str | None]) -> str | None:
        """A Final Answer: ``note`` (the Action the request still needs) once per run,
        while feedback rounds and tokens are left; ``None``: the run ends, answered."""
        told = None
        if self.policy.feedback and not self._nudged and self.rounds_left and not self.over_budget:
            told = note()
        if told is None:
            self.end(ANSWERED)
            return None
        self._nudged = True
        self.session.rounds += 1
        return told

    def react_rejected(
        self,
        key: Hashable,
        errors: Sequence[Finding],
        written: ApiRequest | None,
        action: str | None,
        repairs: Sequence[Repair],
    ) -> LoopTurn:
        """A ReAct call with errors, or none read: the Action to write instead (once per
        call and Action, as a note ending the conversation before it), else the
        Observation of its errors; the run stops when the model repeats a rejected call
        with nothing new to tell it, or rounds or tokens are spent."""
        from autofeedback.decide._feedback import react_feedback, restated_note

        decision = Decision("feedback", "errors", written, written, (), tuple(errors))
        told = f"{key} {action}"
        if self.session.rejections(key) > 0 and (action is None or told in self._restated):
            self.end(REPEATED)
        elif not self.rounds_left:
            self.end(FEEDBACK_BUDGET)
        elif self.over_budget:
            self.end(TOKEN_BUDGET)
        if self.stop is not None:
            return LoopTurn("stop", decision, key)
        self.session.rounds += 1
        self.session.reject(key)
        if action is not None and told not in self._restated:
            # a small model copies its own turns: once per call, the conversation without
            # the rejected turns, ending in the Action to write instead
            self._restated.add(told)
            note = restated_note(errors, written, action, repairs)
            return LoopTurn("feedback", decision, key, note, note=True)
        return LoopTurn("feedback", decision, key, react_feedback(errors, repairs))

    def made_before(self, request: ApiRequest) -> bool:
        """Whether ``request`` was sent in this run already."""
        return call_key(request) in self._made

    def made_again(self, key: Hashable) -> LoopTurn:
        """A call the run sent already: told so (its Observation is in the conversation)
        while feedback is given and the call was not rejected before; else the run stops,
        repeated."""
        from autofeedback.decide._feedback import MADE_AGAIN, REPEATED_CALL

        decision = Decision("feedback", "repeated", None)
        limited = not self.rounds_left or self.over_budget
        if not self.policy.feedback or self.session.rejections(key) > 0 or limited:
            self.end(REPEATED)
            return LoopTurn("stop", decision, key, error=REPEATED_CALL)
        self.session.rounds += 1
        self.session.reject(key)
        return LoopTurn("feedback", decision, key, MADE_AGAIN)

    def may_send_first(self) -> bool:
        """Whether a call the run would insert before the model's (the one producer of a
        value it made up) fits in the steps left, with the model's call after it."""
        limit = self.policy.max_steps
        return limit is None or self.session.steps + 1 < limit

    def sent(self, request: ApiRequest) -> None:
        """``request`` was sent: one step more."""
        self._made.add(call_key(request))
        self.session.steps += 1

    def stepped(self) -> None:
        """After a call's response: the run ends when its steps or tokens are spent."""
        limit = self.policy.max_steps
        if limit is not None and self.session.steps >= limit:
            self.end(STEP_BUDGET)
        elif self.over_budget:
            self.end(TOKEN_BUDGET)

    # -- one tool call of a conversation (the MCP gate) ----------------------------------------

    @classmethod
    def gate(cls, limit: int, *, repair: Any = "sure") -> Run:
        """The run of a gate over every conversation it serves, whose ``limit``-th
        identical rejected call of a conversation is told to stop (``0``: never; ``1``:
        every rejection is that stop): :func:`repeat_limit_policy`."""
        run = cls(repeat_limit_policy(limit, repair=repair), "mcp")
        run._firm = limit == 1
        return run

    _firm = False

    def call_turn(self, decision: Decision, key: Hashable) -> tuple[Decision, int, bool]:
        """One tool call judged (``key``: its conversation and :func:`call_key`): the
        judged decision, how many times this exact call was rejected, and whether the
        answer is the firm stop (:func:`~autofeedback.decide._feedback.repeated_call`)."""
        judged = self.session.judge(decision, key=key)
        stopped = judged.action == "stop"
        repeats = self.session.rejections(key) + stopped
        return judged, repeats, stopped or self._firm

    # -- a model message of tool calls (the OpenAI-compatible proxy) -------------------------

    def text_answer(self) -> None:
        """The model answered with text, not a call: the run ends, clean on its first
        answer, else answered (after feedback)."""
        self.end(CLEAN if self.answers == 1 else ANSWERED)

    def message_turn(self, decided: Any, raw: Sequence[Any]) -> MessageTurn:
        """The proxy's turn: the judged decision on a message's calls
        (:func:`judge_message`); a forward ends the run (repaired, clean on the first
        answer, corrected after feedback), a stop in the proxy's words."""
        turn = judge_message(self.session, decided, raw, scanner=self._scanner, whole=True)
        if turn.action == "forward":
            repaired = bool(decided.repairs)
            self.end(REPAIRED if repaired else CLEAN if self.answers == 1 else CORRECTED)
        elif turn.action == "stop":
            self.end(self._stopped(turn.reason))
        return turn


def judge_message(
    session: Session,
    decided: Any,
    raw: Sequence[Any],
    *,
    scanner: Any = None,
    whole: bool = False,
) -> MessageTurn:
    """The decision on every tool call of one model message
    (:class:`~autofeedback.decide._calls.ToolCallsDecision`), judged by ``session`` as
    one (its key: :func:`message_key` of ``raw``, each call's ``(name, arguments)`` as
    written), and the text answering each call that does not run: its feedback (with the
    call every named fix gives, from ``scanner``'s docs), or for a call that was fine,
    with ``whole`` (the message goes back to the model whole: nothing runs) the not-run
    text. Without ``whole`` a call that was fine runs while the turn gets feedback (an
    agent framework runs the good calls)."""
    from autofeedback.decide._feedback import NOT_RUN_WITH, tool_feedback

    decisions = [c.decision for c in decided.calls]
    key = message_key(decisions, raw)
    judged = session.judge(combine(decisions), key=key)
    action = judged.action
    # a message that goes back whole is answered only when the run goes on
    said = action == "feedback" or (action == "stop" and not whole)
    corrected = _corrected(decided.calls, scanner) if said else {}
    feedback: list[str | None] = []
    runs: list[bool] = []
    for i, c in enumerate(decided.calls):
        runs.append(action == "forward" or (action == "feedback" and c.runs and not whole))
        if not said or runs[-1]:
            feedback.append(None)
        elif not c.runs:
            feedback.append(tool_feedback(c.shape, c.decision, corrected=corrected.get(i)))
        else:
            feedback.append(NOT_RUN_WITH if whole else None)
    return MessageTurn(judged, key, tuple(feedback), tuple(runs))


def _corrected(calls: Sequence[Any], scanner: Any) -> dict[int, str]:
    """Per rejected call (by index), the call with every fix its findings name, as JSON
    (:func:`~autofeedback.decide._corrected.corrected_call`): shown in its feedback."""
    from autofeedback.decide._corrected import corrected_call

    out: dict[int, str] = {}
    if scanner is None:
        return out
    for i, c in enumerate(calls):
        request = c.decision.request
        if c.runs or request is None or not c.decision.errors:
            continue
        with contextlib.suppress(AutoFeedbackError):
            fixed = corrected_call(scanner, request, c.decision.errors, style="json")
            if fixed:
                out[i] = fixed
    return out


def restore(session: Session, records: Iterable[Mapping[str, Any]]) -> Session:
    """``session`` with the turns ``records`` (a door's :meth:`Turn.record`, in order)
    counted as the run's earlier ones: a feedback round used for each turn fed back
    for its errors, and its key rejected."""
    for record in records:
        key = record.get("key")
        if record.get("action") != "feedback" or not isinstance(key, str):
            continue
        if record.get("reason") == "errors":
            session.rounds += 1  # a feedback round used, as Session.judge counts it
        session.reject(key)
    return session

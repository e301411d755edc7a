"""The run driver's bounds on a call the model makes again (the ReAct runner's repeat):
told once while feedback is left, then the run stops, repeated, with the reason in its
trace."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from autofeedback import ApiRequest, ConfigurationError, Finding
from autofeedback.core._findings import Repair
from autofeedback.decide import Decision, Policy, Session
from autofeedback.decide._feedback import MADE_AGAIN, REPEATED_CALL, react_feedback, restated_note
from autofeedback.decide._run import REPEATED, Kind, Run

BAD = Decision("feedback", "errors", None, remaining=(Finding("E3.2", ("argument", "x"), "x"),))


def test_a_call_made_again_is_told_once_then_stops_the_run() -> None:
    run = Run(Policy(), "react")
    run.session.rounds = 1
    told = run.made_again("k")
    assert (told.action, told.feedback, told.error) == ("feedback", MADE_AGAIN, None)
    assert (told.decision.action, told.decision.reason, told.key) == ("feedback", "repeated", "k")
    assert (run.session.rounds, run.session.rejections("k"), run.stop) == (2, 1, None)
    stopped = run.made_again("k")
    assert (stopped.action, stopped.feedback, stopped.error) == ("stop", None, REPEATED_CALL)
    assert (stopped.decision.action, stopped.decision.reason) == ("feedback", "repeated")
    assert run.stop == REPEATED
    assert run.session.rounds == 2  # the stop uses no round


@pytest.mark.parametrize(
    ("policy", "tokens"),
    [
        pytest.param(Policy(feedback=False), 0, id="no-feedback"),
        pytest.param(Policy(max_rounds=0), 0, id="no-rounds-left"),
        pytest.param(Policy(token_budget=10), 10, id="tokens-spent"),
    ],
)
def test_a_call_made_again_stops_the_run_when_no_feedback_is_left(
    policy: Policy, tokens: int
) -> None:
    run = Run(policy, "react")
    run.asked(tokens)
    stopped = run.made_again("k")
    assert (stopped.action, stopped.error, run.stop) == ("stop", REPEATED_CALL, REPEATED)
    assert run.session.rejections("k") == 0


@pytest.mark.parametrize(
    ("kind", "stops"),
    [
        ("loop", ["static-budget", "blocked", "token-budget", "repeated"]),
        ("program", ["feedback-budget", "base", "token-budget", "repeated"]),
        ("react", ["feedback-budget", "feedback-budget", "token-budget", "repeated"]),
        ("proxy", ["max-rounds", "max-rounds", "token-budget", "repeated"]),
        ("mcp", ["rounds", "no-feedback", "token-budget", "repeated"]),
    ],
)
def test_each_kind_of_run_names_its_stop_in_its_own_words(kind: Kind, stops: list[str]) -> None:
    """No rounds left, no feedback at all, the tokens spent, the same call rejected
    again: the stop each kind of run reports (its trace, its log, its exit)."""
    said = []
    for policy, tokens in [
        (Policy(max_rounds=0), 0),
        (Policy(feedback=False), 0),
        (Policy(token_budget=5), 5),
    ]:
        run = Run(policy, kind)
        run.asked(tokens)
        assert run.judge(BAD).action == "stop"
        said.append(run.stop)
    run = Run(Policy(), kind)
    assert run.judge(BAD, key="k").action == "feedback"
    assert run.judge(BAD, key="k").action == "stop"
    said.append(run.stop)
    assert said == stops


@pytest.mark.parametrize(
    ("constrained", "ask"),
    [
        (False, "Write the whole corrected program in a ```python block."),
        (True, "Write the whole corrected program."),
    ],
)
def test_an_answer_with_no_program_is_told_so(constrained: bool, ask: str) -> None:
    run = Run(Policy(), "program")
    judged, program, feedback = run.program_turn(
        Decision("forward", "clean", None), "", instruction=None, constrained=constrained
    )
    assert (judged.action, [f.code for f in judged.errors], program, run.stop) == (
        "feedback",
        ["E1"],
        "",
        None,
    )
    assert feedback == (
        "Your program has 1 problem:\n- E1 the answer holds no program: write the calls, one "
        f"per line, in a ```python block\n{ask}"
    )
    spent = Run(Policy(max_rounds=0), "program")
    judged, _, feedback = spent.program_turn(
        Decision("forward", "clean", None), "", instruction=None, constrained=constrained
    )
    assert (judged.action, spent.stop, feedback) == ("stop", "feedback-budget", None)


def test_calls_sent_are_counted_and_end_the_run_at_its_step_or_token_bound() -> None:
    run = Run(Policy(max_steps=2), "react")
    call = ApiRequest(name="f", arguments={"a": 1})
    assert not run.made_before(call)
    run.sent(call)
    assert run.made_before(ApiRequest(name="f", arguments={"a": 1}))
    assert not run.made_before(ApiRequest(name="f", arguments={"a": 2}))
    run.stepped()
    assert (run.session.steps, run.stop) == (1, None)
    run.sent(ApiRequest(name="g"))
    run.stepped()
    assert (run.session.steps, run.stop) == (2, "step-budget")
    spent = Run(Policy(token_budget=3), "react")
    spent.asked(3)
    spent.sent(call)
    spent.stepped()
    assert spent.stop == "token-budget"
    both = Run(Policy(max_steps=1, token_budget=3), "react")
    both.asked(3)
    both.sent(call)
    both.stepped()
    assert both.stop == "step-budget"  # the steps are named first


def test_a_session_remembers_the_4096_calls_rejected_last() -> None:
    session = Session()
    for key in range(4096):
        assert session.reject(key) == 1
    assert session.reject(0) == 2  # rejected again: remembered as the newest
    session.reject(4096)  # one more than it keeps: the oldest other than 0 goes
    assert (session.rejections(1), session.rejections(0), session.rejections(2)) == (0, 2, 1)
    assert session.rejections(4096) == 1


MADE_UP = Finding("E5.3", ("argument", "bookId"), "123", message="bookId looks made up")
MISSING = Finding("E3.4", ("argument", "bookId"), None, message="required parameter missing")
GET_BOOK = ApiRequest(name="getBook", arguments={"bookId": "123"})


def test_a_rejected_react_call_is_restated_with_the_action_to_write() -> None:
    assert restated_note([MADE_UP, MISSING], GET_BOOK, "<API>listAuthors()</API>") == (
        "(Not this Action: <API>getBook(bookId='123')</API>. It was not sent: E5.3 bookId "
        "looks made up; E3.4 required parameter missing.) Write this Action next, filling in "
        "each ...: Action: <API>listAuthors()</API> Then call getBook with the `bookId` that "
        "its Observation gives."
    )
    fixed = Repair("E3.2", ("argument", "Q"), "Q", "q")
    assert restated_note([MADE_UP], GET_BOOK, "<API>getBook(bookId=...)</API>", [fixed]) == (
        "(Not this Action: <API>getBook(bookId='123')</API>. It was not sent: E5.3 bookId "
        "looks made up.) Write this Action next, filling in each ...: Action: "
        "<API>getBook(bookId=...)</API> (Already repaired in it: E3.2 argument.Q: 'Q' -> 'q'.)"
    )
    assert restated_note([MADE_UP], None, "<API>x()</API>") == (
        "(Not this Action: your call. It was not sent: E5.3 bookId looks made up.) Write "
        "this Action next, filling in each ...: Action: <API>x()</API>"
    )


def test_a_rejected_react_call_is_restated_once_per_action_then_stops_the_run() -> None:
    run = Run(Policy(), "react")
    errors = [MADE_UP, MISSING]
    first = run.react_rejected("k", errors, GET_BOOK, "<API>listAuthors()</API>", ())
    assert (first.action, first.note, run.session.rounds, run.stop) == ("feedback", True, 1, None)
    assert first.feedback == restated_note(errors, GET_BOOK, "<API>listAuthors()</API>")
    other = run.react_rejected("k", errors, GET_BOOK, "<API>findAuthor()</API>", ())
    assert (other.action, other.note, run.session.rounds, run.stop) == ("feedback", True, 2, None)
    again = run.react_rejected("k", errors, GET_BOOK, "<API>findAuthor()</API>", ())
    assert (again.action, again.feedback, run.session.rounds, run.stop) == (
        "stop",
        None,
        2,
        "repeated",
    )
    # no Action to write: the Observation of the errors, then the repeat stops the run
    plain = Run(Policy(), "react")
    told = plain.react_rejected("k", errors, GET_BOOK, None, ())
    assert (told.action, told.note, told.feedback) == ("feedback", False, react_feedback(errors))
    assert plain.react_rejected("k", errors, GET_BOOK, None, ()).action == "stop"
    assert plain.stop == "repeated"


@pytest.mark.parametrize(
    ("policy", "tokens", "stop"),
    [(Policy(max_rounds=0), 0, "feedback-budget"), (Policy(token_budget=5), 5, "token-budget")],
)
def test_a_rejected_react_call_stops_the_run_when_feedback_is_spent(
    policy: Policy, tokens: int, stop: str
) -> None:
    run = Run(policy, "react")
    run.asked(tokens)
    told = run.react_rejected("k", [MADE_UP], GET_BOOK, "<API>listAuthors()</API>", ())
    assert (told.action, told.feedback, run.stop, run.session.rejections("k")) == (
        "stop",
        None,
        stop,
        0,
    )


@pytest.mark.parametrize(
    ("bounds", "error"),
    [
        ({"max_rounds": -1}, "max_rounds must be >= 0"),
        ({"max_dynamic": -1}, "max_dynamic must be >= 0"),
        ({"max_steps": 0}, "max_steps must be >= 1"),
        ({"repeats": -1}, "repeats must be >= 0"),
        ({"repair": "maybe"}, "repair must be one of 'sure', 'off', not 'maybe'"),
    ],
)
def test_a_policy_out_of_bounds_is_a_clear_error(bounds: dict[str, Any], error: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        Policy(**bounds)
    assert str(info.value) == error


def test_a_policy_at_its_bounds_is_taken() -> None:
    policy = Policy(max_rounds=0, max_dynamic=0, max_steps=1, repeats=0)
    assert (policy.max_rounds, policy.max_dynamic, policy.max_steps, policy.repeats) == (0, 0, 1, 0)


def test_a_session_adds_up_tokens_and_starts_at_zero() -> None:
    session = Session(Policy(token_budget=10))
    assert (session.rounds, session.tokens, session.dynamic, session.steps) == (0, 0, 0, 0)
    session.spend(4)
    session.spend(-3)  # a negative count (a provider's error) spends nothing
    session.spend(0)
    assert (session.tokens, session.over_budget) == (4, False)
    session.spend(6)
    assert (session.tokens, session.over_budget) == (10, True)


def test_a_session_says_why_a_call_goes_out() -> None:
    session = Session()
    fixed = Decision(
        "forward", "clean", None, repairs=(Repair("E3.2", ("argument", "A"), "A", "a"),)
    )
    assert session.judge(fixed).reason == "repaired"
    assert session.judge(Decision("feedback", "errors", None)).reason == "clean"
    told = session.judge(BAD, key="k")
    again = session.judge(BAD, key="k")
    assert (told.action, told.reason, again.action, again.reason) == (
        "feedback",
        "errors",
        "stop",
        "repeated",
    )
    patient = Session(Policy(repeats=1))
    patient.judge(BAD, key="k")
    repeated = patient.judge(dataclasses.replace(BAD, action="stop"), key="k")
    assert (repeated.action, repeated.reason) == ("feedback", "repeated")


def _wrong_api(name: str) -> Decision:
    """A call held only by E2.1 (another documented API fits the user's words better)."""
    e21 = Finding("E2.1", ("api",), f"'{name}' does not fit the request; 'cancelBooking' fits")
    call = ApiRequest(name=name, arguments={"bookingId": "BK-1"})
    return Decision("feedback", "errors", call, call, (e21,), (e21,))


def test_a_call_the_docs_named_after_a_refusal_is_not_held_by_e2_1() -> None:
    run = Run(Policy(), "loop")
    assert run.after_refusals(_wrong_api("getBooking")).action == "feedback"
    run.docs_said(next_call="getBooking", fixable=True)
    eased = run.after_refusals(_wrong_api("getBooking"))
    assert (eased.action, eased.reason) == ("forward", "clean")
    assert [(f.code, f.severity) for f in eased.findings] == [("E2.1", "warning")]
    assert run.loop_turn(eased, text="getBooking").action == "send"
    # a call the docs did not name is judged by the user's words as before
    assert run.after_refusals(_wrong_api("listVenues")).action == "feedback"
    # another error beside E2.1 still holds the named call
    e32 = Finding("E3.2", ("argument", "bookingid"), "spelling variant")
    both = dataclasses.replace(
        _wrong_api("getBooking"),
        findings=(*_wrong_api("getBooking").findings, e32),
        remaining=(*_wrong_api("getBooking").remaining, e32),
    )
    assert run.after_refusals(both).action == "feedback"


def test_after_a_refusal_nothing_can_fix_a_turn_with_no_call_ends_the_run() -> None:
    e1 = Finding("E1", (), "no API request found")
    words = Decision("feedback", "errors", None, None, (e1,), (e1,))
    fixable = Run(Policy(), "loop")
    fixable.asked(10)
    fixable.docs_said(next_call=None, fixable=True)  # the cause names a field
    assert fixable.loop_turn(words, text="I cannot.").action == "feedback"
    quota = Run(Policy(), "loop")
    quota.asked(10)
    quota.asked(10)
    quota.docs_said(next_call=None, fixable=False)  # a quota: nothing to change
    turn = quota.loop_turn(words, text="The quota is reached.")
    assert turn.action == "stop" and quota.stop == "answered"


def test_what_the_docs_said_of_one_refusal_does_not_carry_to_the_next() -> None:
    """A quota refusal, then another refusal the docs say nothing about: an answer with no
    call is fed back (E1), not taken as the end the quota allowed."""
    e1 = Finding("E1", (), "no API request found")
    words = Decision("feedback", "errors", None, None, (e1,), (e1,))
    run = Run(Policy(), "loop")
    run.asked(10)
    run.docs_said(next_call=None, fixable=False)
    run.asked(10)
    run.refused("k", "POST /venues", 500, "", lambda: None)
    assert run.stop is None
    assert run.loop_turn(words, text="I cannot.").action == "feedback"

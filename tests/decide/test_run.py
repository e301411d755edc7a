"""The run driver's bounds on a call the model makes again (the ReAct runner's repeat):
told once while feedback is left, then the run stops, repeated, with the reason in its
trace."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, ConfigurationError, Finding, Scanner
from autofeedback.core._findings import Repair
from autofeedback.decide import Decider, Decision, Policy, Session
from autofeedback.decide._feedback import MADE_AGAIN, REPEATED_CALL, react_feedback, restated_note
from autofeedback.decide._run import (
    REPEATED,
    SEND_GATE,
    Kind,
    Run,
    call_key,
    judge_message,
    key_digest,
    logged_action,
    message_key,
    repeat_limit_policy,
    restore,
    upstream_stop,
)

BAD = Decision("feedback", "errors", None, remaining=(Finding("E3.2", ("argument", "x"), "x"),))


def test_a_call_made_again_is_told_once_then_stops_the_run() -> None:
    run = Run(Policy(), "react")
    run.session.rounds = 1
    told = run.made_again("k")
    assert (told.action, told.feedback, told.error) == ("feedback", MADE_AGAIN, None)
    assert (told.decision.action, told.decision.reason, told.key) == ("feedback", "repeated", "k")
    assert (run.session.rounds, run.session.rejections("k"), run.stop) == (2, 1, None)
    stopped = run.made_again("k")
    assert (stopped.action, stopped.feedback, stopped.error, stopped.key) == (
        "stop",
        None,
        REPEATED_CALL,
        "k",
    )
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


# -- the feedback loop's turn ----------------------------------------------------------------

WEATHER = ApiCatalog.from_tools(
    json.loads((Path(__file__).parents[1] / "data" / "decide" / "calls.json").read_text())["tools"]
)
#: get_weather with `City` (repaired to `city`) and a fraction for the integer `days` (left)
HALF_DAYS = '<API>get_weather(City="Paris", days=2.5)</API>'
HALF_DAYS_KEY = (
    '{"arguments": {"City": "Paris", "days": 2.5}, "body": null, "method": null, '
    '"name": "get_weather", "params": {}, "url": null}'
)
HALF_DAYS_FEEDBACK = (
    "There is an error in your API request.\n"
    "Error E4.1 (value type mismatch) at argument.days: days must be an integer, got number "
    "2.5.\n"
    "The request was parsed successfully, the API name is correct and the parameter names "
    "are correct.\n"
    "Likely cause: The value does not have the type the documentation gives for this "
    "parameter. Correction: Give a value of type integer.\n"
    "Already repaired (keep these changes):\n"
    "- E3.2 argument.City: 'City' -> 'city'\n"
    "Please regenerate the API request."
)
NO_REQUEST_FEEDBACK = (
    "There is an error in your API request.\n"
    "Error E1 (no parsable request) at the output: no API request found in the output.\n"
    "Likely cause: The output does not contain a request in a format that can be parsed. "
    "Correction: Write exactly one request, e.g. <API>ApiName(key1='value1', key2='value2')"
    "</API>, with every argument a literal value.\n"
    "Please regenerate the API request."
)


@pytest.fixture(scope="module")
def weather() -> Scanner:
    return Scanner(WEATHER, retriever=None)


def _decided(scanner: Scanner, text: str) -> Decision:
    [decision] = Decider(scanner).decide(text)
    return decision


def test_a_loop_turn_feeds_back_the_errors_left_with_the_repairs_made(weather: Scanner) -> None:
    decision = _decided(weather, HALF_DAYS)
    run = Run(Policy(), "loop")
    turn = run.loop_turn(decision, text=HALF_DAYS)
    assert (turn.action, turn.kind, turn.error, turn.key) == (
        "feedback",
        "static",
        None,
        HALF_DAYS_KEY,
    )
    assert turn.feedback == HALF_DAYS_FEEDBACK
    assert turn.decision == dataclasses.replace(decision, action="feedback", reason="errors")
    assert turn.request is not None
    assert (turn.request.name, turn.request.arguments) == (
        "get_weather",
        {"city": "Paris", "days": 2.5},
    )
    assert (run.session.rounds, run.session.rejections(HALF_DAYS_KEY), run.stop) == (1, 1, None)


def test_a_call_the_loop_fed_back_is_restated_when_the_model_writes_it_again(
    weather: Scanner,
) -> None:
    """The same call in other words is the same call: what was said is said again,
    while the policy's repeats last; then the run stops, repeated."""
    run = Run(Policy(repeats=1), "loop")
    run.loop_turn(_decided(weather, HALF_DAYS), text=HALF_DAYS)
    again = f"Let me try again. {HALF_DAYS}"
    told = run.loop_turn(_decided(weather, again), text=again)
    assert (told.action, told.kind, told.error, told.key) == (
        "feedback",
        "static",
        "the model repeated a request that failed",
        HALF_DAYS_KEY,
    )
    assert told.feedback == (
        "You sent the same request again, and it fails for the same reason.\n" + HALF_DAYS_FEEDBACK
    )
    assert (told.decision.action, told.decision.reason) == ("feedback", "repeated")
    stopped = run.loop_turn(_decided(weather, HALF_DAYS), text=HALF_DAYS)
    assert (stopped.action, stopped.feedback, stopped.error, stopped.key) == (
        "stop",
        None,
        "the model repeated a request that failed",
        HALF_DAYS_KEY,
    )
    assert (stopped.decision.action, stopped.decision.reason, run.stop) == (
        "stop",
        "repeated",
        "repeated",
    )


def test_answers_with_no_call_are_the_same_call_only_when_their_text_is(weather: Scanner) -> None:
    run = Run(Policy(), "loop")
    first = run.loop_turn(_decided(weather, "I cannot."), text="I cannot.")
    other = run.loop_turn(_decided(weather, "I will not."), text="I will not.")
    assert [(t.action, t.key, t.feedback) for t in (first, other)] == [
        ("feedback", "text:I cannot.", NO_REQUEST_FEEDBACK),
        ("feedback", "text:I will not.", NO_REQUEST_FEEDBACK),
    ]
    again = run.loop_turn(_decided(weather, "I cannot."), text="I cannot.")
    assert (again.action, again.error, run.stop) == (
        "stop",
        "the model repeated a request that failed",
        "repeated",
    )


@pytest.mark.parametrize(
    ("text", "action", "error"),
    [
        pytest.param(
            "<API>get_weather(days=2)</API>",
            "stop",
            "request not sent: it still has E1-E3 findings",
            id="E3.4-kept-in",
        ),
        pytest.param("I cannot.", "stop", "request not sent: no request could be parsed", id="E1"),
        # an E4 error is for the server to judge once no feedback is left
        pytest.param(HALF_DAYS, "send", None, id="E4.1-sent"),
    ],
)
def test_a_loop_turn_with_no_rounds_left_sends_or_stops_by_the_send_gate(
    weather: Scanner, text: str, action: str, error: str | None
) -> None:
    run = Run(Policy(max_rounds=0, block=SEND_GATE), "loop")
    decision = _decided(weather, text)
    turn = run.loop_turn(decision, text=text)
    assert (turn.action, turn.feedback, turn.error, turn.key) == (
        action,
        None,
        error,
        call_key(decision.original, text),
    )
    assert turn.decision.action == ("forward" if action == "send" else "stop")
    assert run.stop == (None if action == "send" else "static-budget")


def test_a_clean_loop_turn_is_sent_under_its_key(weather: Scanner) -> None:
    text = '<API>get_weather(city="Paris", days=2)</API>'
    turn = Run(Policy(), "loop").loop_turn(_decided(weather, text), text=text)
    assert (turn.action, turn.feedback, turn.key) == (
        "send",
        None,
        '{"arguments": {"city": "Paris", "days": 2}, "body": null, "method": null, '
        '"name": "get_weather", "params": {}, "url": null}',
    )
    assert turn.request is not None
    assert (turn.request.name, turn.request.arguments) == (
        "get_weather",
        {"city": "Paris", "days": 2},
    )


NATIVE = json.dumps(
    {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"City": "Paris", "days": 2.5}'},
            }
        ],
    }
)


@pytest.mark.parametrize(
    ("text", "feedback"),
    [
        pytest.param(
            HALF_DAYS,
            HALF_DAYS_FEEDBACK.replace(
                "Please regenerate",
                "The request with these corrections: <API>get_weather(city='Paris', "
                "days=<integer>)</API>\nReplace each <type> placeholder with the value from "
                "the user's request.\nPlease regenerate",
            ),
            id="text",
        ),
        pytest.param(
            NATIVE,
            "There is an error in your tool call.\n"
            "Error E4.1 (value type mismatch) at argument.days: days must be an integer, got "
            "number 2.5.\n"
            "The tool call was parsed successfully, the tool name is correct and the parameter "
            "names are correct.\n"
            "Likely cause: The value does not have the type the documentation gives for this "
            "parameter. Correction: Give a value of type integer.\n"
            "Already repaired (keep these changes):\n"
            "- E3.2 argument.City: 'City' -> 'city'\n"
            'The tool call with these corrections: {"name": "get_weather", "arguments": '
            '{"city": "Paris", "days": "<integer>"}}\n'
            "Replace each <type> placeholder with the value from the user's request.\n"
            "Please call the tool again with the corrected arguments.",
            id="native-tool-call",
        ),
    ],
)
def test_a_skeleton_run_shows_the_corrected_call_in_the_shape_the_model_wrote(
    weather: Scanner, text: str, feedback: str
) -> None:
    run = Run(Policy(), "loop", scanner=weather, instruction="Weather in Paris", skeleton=True)
    assert run.loop_turn(_decided(weather, text), text=text).feedback == feedback


def test_a_run_shows_no_corrected_call_unless_it_is_a_skeleton_run(weather: Scanner) -> None:
    run = Run(Policy(), "loop", scanner=weather, instruction="Weather in Paris")
    assert run.loop_turn(_decided(weather, HALF_DAYS), text=HALF_DAYS).feedback == (
        HALF_DAYS_FEEDBACK
    )


def test_a_refused_call_written_again_is_answered_with_what_the_server_said(
    weather: Scanner,
) -> None:
    text = '<API>get_weather(city="Paris", days=2)</API>'
    run = Run(Policy(repeats=1), "loop")
    sent = run.loop_turn(_decided(weather, text), text=text)
    feedback, _ = run.refused(sent.key, "get_weather", 503, "busy", lambda: None)
    assert run.session.rejections(sent.key) == 1
    again = run.loop_turn(_decided(weather, text), text=text)
    assert (again.action, again.kind, again.error) == (
        "feedback",
        "dynamic",
        "the model repeated a request that failed",
    )
    assert again.feedback == (
        "You sent the same request again, and it fails for the same reason.\n"
        "Your API request was sent, but it did not succeed.\n"
        "Action: get_weather\n"
        "Observation: HTTP 503 busy\n"
        "Thought: explain briefly what went wrong, then write the corrected request as one "
        "<API>...</API> call with a documented API name and documented parameter names."
    )
    assert again.feedback.endswith(str(feedback))


def test_a_turn_with_no_call_after_a_quota_ends_the_run_with_its_decision_and_key() -> None:
    words = Decision("feedback", "errors", None, None, (NO_CALL_E1,), (NO_CALL_E1,))
    run = Run(Policy(), "loop")
    run.asked(10)
    run.asked(10)
    run.docs_said(next_call=None, fixable=False)
    turn = run.loop_turn(words, text="The quota is reached.")
    assert (turn.action, turn.decision, turn.key, turn.feedback, turn.error) == (
        "stop",
        words,
        "text:The quota is reached.",
        None,
        None,
    )
    assert run.stop == "answered"


NO_CALL_E1 = Finding("E1", (), "no API request found")


# -- the server's refusals ----------------------------------------------------------------------

REFUSED = (
    "Your API request was sent, but it did not succeed.\n"
    "Action: POST /bookings\n"
    "Observation: HTTP 409 full\n"
    "Cause: the venue is full.\n"
    "Next call: listVenues()\n"
    "Thought: explain briefly what went wrong, then write the corrected request as one "
    "<API>...</API> call with a documented API name and documented parameter names."
)


def test_each_refusal_is_fed_back_with_the_docs_and_the_earlier_attempts_within_its_budget() -> (
    None
):
    run = Run(Policy(max_dynamic=2), "loop")
    asked: list[str] = []

    def explain() -> list[str]:
        asked.append("explain")
        return ["Cause: the venue is full.", "Next call: listVenues()"]

    assert run.refused("a", "POST /bookings", 409, "full", explain) == (
        REFUSED,
        ["Cause: the venue is full.", "Next call: listVenues()"],
    )
    second, _ = run.refused("b", "POST /bookings", None, "", explain)
    assert second == (
        "Your API request was sent, but it did not succeed.\n"
        "Action: POST /bookings\n"
        "Observation: HTTP no response\n"
        "Cause: the venue is full.\n"
        "Next call: listVenues()\n"
        "Earlier attempts: POST /bookings -> 409\n"
        "Thought: explain briefly what went wrong, then write the corrected request as one "
        "<API>...</API> call with a documented API name and documented parameter names."
    )
    assert (
        run.session.dynamic,
        run.session.rejections("a"),
        run.session.rejections("b"),
        run.stop,
    ) == (2, 1, 1, None)
    # the budget is spent: the docs are not asked, the run ends
    assert run.refused("c", "POST /bookings", 409, "full", explain) == (None, None)
    assert (asked, run.stop, run.session.dynamic, run.session.rejections("c")) == (
        ["explain", "explain"],
        "dynamic-budget",
        2,
        0,
    )


def test_a_refusal_once_the_tokens_are_spent_ends_the_run() -> None:
    run = Run(Policy(token_budget=5), "loop")
    run.asked(5)
    assert run.refused("a", "POST /bookings", 409, "full", lambda: ["x"]) == (None, None)
    assert run.stop == "dynamic-budget"


# -- a ReAct Final Answer -----------------------------------------------------------------------


def test_an_early_final_answer_is_questioned_once_with_a_round_of_its_own() -> None:
    run = Run(Policy(max_rounds=5), "react")
    run.session.rounds = 2
    assert run.answer(lambda: "Action: <API>getBook(bookId=...)</API>") == (
        "Action: <API>getBook(bookId=...)</API>"
    )
    assert (run.session.rounds, run.stop) == (3, None)
    # rounds are left, but the answer was questioned already
    assert run.answer(lambda: "Action: <API>getBook(bookId=...)</API>") is None
    assert (run.session.rounds, run.stop) == (3, "answered")


@pytest.mark.parametrize(
    ("policy", "tokens"),
    [
        pytest.param(Policy(feedback=False), 0, id="no-feedback"),
        pytest.param(Policy(max_rounds=0), 0, id="no-rounds-left"),
        pytest.param(Policy(token_budget=5), 5, id="tokens-spent"),
    ],
)
def test_a_final_answer_ends_the_run_when_no_feedback_is_left(policy: Policy, tokens: int) -> None:
    run = Run(policy, "react")
    run.asked(tokens)
    asked: list[str] = []

    def note() -> str:
        asked.append("note")
        return "Action: x"

    assert run.answer(note) is None
    assert (asked, run.stop, run.session.rounds) == ([], "answered", 0)


def test_a_final_answer_with_nothing_left_to_do_ends_the_run() -> None:
    run = Run(Policy(), "react")
    assert run.answer(lambda: None) is None
    assert run.stop == "answered"


# -- the run's own state -------------------------------------------------------------------------


def test_a_text_answer_is_clean_on_the_first_answer_and_answered_after_feedback() -> None:
    first = Run(Policy(), "proxy")
    first.asked(0)
    first.text_answer()
    later = Run(Policy(), "proxy")
    later.asked(0)
    later.asked(0)
    later.text_answer()
    assert (first.answers, first.stop, later.answers, later.stop) == (1, "clean", 2, "answered")


def test_a_run_judges_with_the_session_it_is_given() -> None:
    session = Session(Policy())
    session.reject("k")
    run = Run(Policy(), "proxy", session=session)
    assert run.session is session
    assert (run.judge(BAD, key="k").reason, run.stop) == ("repeated", "repeated")


def test_a_run_ends_at_its_token_budget() -> None:
    run = Run(Policy(token_budget=5), "loop")
    run.asked(4)
    run.check_budget()
    assert run.stop is None
    run.asked(1)
    run.check_budget()
    assert run.stop == "token-budget"


def test_a_judged_call_is_keyed_by_what_was_written_or_by_the_key_given() -> None:
    run = Run(Policy(max_rounds=None, repeats=5), "react")
    run.judge(BAD, text="I cannot.")
    run.judge(BAD)
    run.judge(BAD, key="k")
    assert [run.session.rejections(k) for k in ("text:I cannot.", "text:", "k")] == [1, 1, 1]
    assert (call_key(None), call_key(None, "I cannot."), call_key(None, " I will not. ")) == (
        "text:",
        "text:I cannot.",
        "text:I will not.",
    )
    call = ApiRequest(name="f", arguments={"a": 1})
    written = dataclasses.replace(BAD, request=call, original=call)
    run.judge(written, text="<API>f(a=1)</API>")
    assert run.judge(written, text="Again: <API>f(a=1)</API>").reason == "repeated"
    assert run.session.rejections(call_key(call)) == 2


def test_a_call_the_docs_named_is_eased_with_its_repairs_and_other_errors_kept() -> None:
    run = Run(Policy(), "loop")
    run.docs_said(next_call="getBooking", fixable=True)
    fixed = Repair("E3.2", ("argument", "BookingId"), "BookingId", "bookingId")
    repaired = dataclasses.replace(_wrong_api("getBooking"), repairs=(fixed,))
    eased = run.after_refusals(repaired)
    assert (eased.action, eased.reason) == ("forward", "repaired")
    e32 = Finding("E3.2", ("argument", "bookingid"), "spelling variant")
    both = _wrong_api("getBooking")
    both = dataclasses.replace(
        both, findings=(*both.findings, e32), remaining=(*both.remaining, e32)
    )
    held = run.after_refusals(both)
    assert (held.action, held.reason) == ("feedback", "errors")
    assert [(f.code, f.severity) for f in held.findings] == [("E2.1", "warning"), ("E3.2", "error")]
    assert [(f.code, f.severity) for f in held.remaining] == [
        ("E2.1", "warning"),
        ("E3.2", "error"),
    ]


# -- ReAct and program turns: what the turn carries -------------------------------------------

FIXED_Q = Repair("E3.2", ("argument", "Q"), "Q", "q")


def test_a_rejected_react_turn_carries_the_call_as_written_and_its_key() -> None:
    written = Decision("feedback", "errors", GET_BOOK, GET_BOOK, (), (MADE_UP, MISSING))
    run = Run(Policy(), "react")
    noted = run.react_rejected("k", [MADE_UP, MISSING], GET_BOOK, "<API>listAuthors()</API>", ())
    told = run.react_rejected("j", [MADE_UP, MISSING], GET_BOOK, None, ())
    stopped = run.react_rejected("j", [MADE_UP, MISSING], GET_BOOK, None, ())
    assert [(t.action, t.decision, t.key) for t in (noted, told, stopped)] == [
        ("feedback", written, "k"),
        ("feedback", written, "j"),
        ("stop", written, "j"),
    ]


def test_a_rejected_react_turn_lists_what_was_repaired_already() -> None:
    run = Run(Policy(), "react")
    noted = run.react_rejected(
        "k", [MADE_UP], GET_BOOK, "<API>getBook(bookId=...)</API>", [FIXED_Q]
    )
    told = run.react_rejected("j", [MADE_UP], GET_BOOK, None, [FIXED_Q])
    assert noted.feedback == (
        "(Not this Action: <API>getBook(bookId='123')</API>. It was not sent: E5.3 bookId "
        "looks made up.) Write this Action next, filling in each ...: Action: "
        "<API>getBook(bookId=...)</API> (Already repaired in it: E3.2 argument.Q: 'Q' -> 'q'.)"
    )
    assert told.feedback == react_feedback([MADE_UP], [FIXED_Q])
    assert told.feedback != react_feedback([MADE_UP])


def test_a_program_with_errors_is_answered_with_its_repairs_and_keyed_by_its_text() -> None:
    e32 = Finding(
        "E3.2", ("step[0]", "bookid"), "bookid", suggestion="bookId", message="unknown 'bookid'"
    )
    program = 'getBook(bookid="1", Q="x")'
    fixed = 'getBook(bookid="1", q="x")'
    decision = Decision(
        "feedback",
        "errors",
        None,
        findings=(e32,),
        remaining=(e32,),
        repairs=(FIXED_Q,),
        text=fixed,
    )
    run = Run(Policy(), "program")
    judged, shown, feedback = run.program_turn(
        decision, program, instruction=None, constrained=False
    )
    assert (judged.action, shown, run.stop) == ("feedback", fixed, None)
    assert feedback == (
        "Your program has 1 problem:\n"
        '- line 1 `getBook(bookid="1", q="x")`: E3.2 unknown \'bookid\' (did you mean bookId?)\n'
        "With the suggested fixes, these lines read:\n"
        'line 1: `getBook(bookId="1", q="x")`\n'
        "Already repaired (keep these changes); your program now reads:\n"
        "```python\n"
        'getBook(bookid="1", q="x")\n'
        "```\n"
        "Write the whole corrected program in a ```python block."
    )
    assert run.session.rejections(f"text:{program}") == 1


def test_answers_with_no_program_are_the_same_only_when_their_text_is() -> None:
    run = Run(Policy(), "program")
    clean = Decision("forward", "clean", None)
    first, _, _ = run.program_turn(clean, "Sorry", instruction=None, constrained=True)
    other, _, _ = run.program_turn(clean, "Sorry, no", instruction=None, constrained=True)
    assert [(d.action, [f.code for f in d.findings]) for d in (first, other)] == [
        ("feedback", ["E1"]),
        ("feedback", ["E1"]),
    ]
    again, _, feedback = run.program_turn(clean, "Sorry", instruction=None, constrained=True)
    assert (again.action, again.reason, feedback, run.stop) == (
        "stop",
        "repeated",
        None,
        "repeated",
    )


# -- a model message of tool calls: the proxy and the agent-framework doors -------------------

LIMA = ("get_weather", {"city": "Lima"})
TOO_MANY_DAYS = ("get_weather", {"City": "Paris", "days": 2.5})
CITY_CASE = ("get_weather", {"City": "Paris"})
#: the feedback on TOO_MANY_DAYS as a tool call, with the call every named fix gives
TOOL_FEEDBACK = (
    "There is an error in your tool call.\n"
    "Error E4.1 (value type mismatch) at argument.days: days must be an integer, got number "
    "2.5.\n"
    "The tool call was parsed successfully, the tool name is correct and the parameter names "
    "are correct.\n"
    "Likely cause: The value does not have the type the documentation gives for this "
    "parameter. Correction: Give a value of type integer.\n"
    "Already repaired (keep these changes):\n"
    "- E3.2 argument.City: 'City' -> 'city'\n"
    "The tool call with these corrections: {CORRECTED}\n"
    "Replace each <type> placeholder with the value from the user's request.\n"
    "Please call the tool again with the corrected arguments."
)
CORRECTED = '{"name": "get_weather", "arguments": {"city": "Paris", "days": "<integer>"}}'
NOT_RUN_WITH = (
    "Not run: another tool call in the same message was rejected. Call this tool again, "
    "together with the corrected call."
)


def _message(*calls: tuple[str, dict[str, Any]]) -> tuple[Any, list[tuple[str, str]]]:
    """A chat message of ``calls`` (arguments as JSON text), and the calls as written."""
    raw = [(name, json.dumps(arguments)) for name, arguments in calls]
    tool_calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": text}}
        for i, (name, text) in enumerate(raw)
    ]
    return {"role": "assistant", "content": None, "tool_calls": tool_calls}, raw


def _decided_calls(scanner: Scanner, *calls: tuple[str, dict[str, Any]]) -> tuple[Any, Any]:
    from autofeedback.decide._calls import decide_calls

    message, raw = _message(*calls)
    return decide_calls(message, Decider(scanner)), raw


@pytest.mark.parametrize(
    ("policy", "whole", "action", "runs", "feedback"),
    [
        # a door: the good call runs while the bad one is fed back
        pytest.param(Policy(), False, "feedback", (True, False), (None, "corrected"), id="door"),
        # the proxy: the message goes back whole, the good call told why it did not run
        pytest.param(
            Policy(), True, "feedback", (False, False), (NOT_RUN_WITH, "corrected"), id="proxy"
        ),
        # no rounds left: a door still answers the bad call; nothing runs
        pytest.param(
            Policy(max_rounds=0), False, "stop", (False, False), (None, "corrected"), id="door-stop"
        ),
        # the proxy's stop ends the run: nothing goes back to the model
        pytest.param(
            Policy(max_rounds=0), True, "stop", (False, False), (None, None), id="proxy-stop"
        ),
    ],
)
def test_a_message_with_one_bad_call_is_answered_call_by_call(
    weather: Scanner,
    policy: Policy,
    whole: bool,
    action: str,
    runs: tuple[bool, ...],
    feedback: tuple[str | None, ...],
) -> None:
    decided, raw = _decided_calls(weather, LIMA, TOO_MANY_DAYS)
    if whole:
        turn = judge_message(Session(policy), decided, raw, scanner=weather, whole=True)
    else:  # a door's call: the good calls run
        turn = judge_message(Session(policy), decided, raw, scanner=weather)
    expected = tuple(
        TOOL_FEEDBACK.replace("{CORRECTED}", CORRECTED) if f == "corrected" else f for f in feedback
    )
    assert (turn.action, turn.reason, turn.runs, turn.feedback) == (
        action,
        "errors" if action == "feedback" else "rounds",
        runs,
        expected,
    )


def test_a_message_judged_without_docs_shows_the_bad_call_without_a_corrected_call(
    weather: Scanner,
) -> None:
    decided, raw = _decided_calls(weather, TOO_MANY_DAYS)
    turn = judge_message(Session(), decided, raw)
    assert turn.feedback == (
        TOOL_FEEDBACK.replace("The tool call with these corrections: {CORRECTED}\n", "").replace(
            "Replace each <type> placeholder with the value from the user's request.\n", ""
        ),
    )


def test_a_message_of_good_calls_runs_every_call(weather: Scanner) -> None:
    decided, raw = _decided_calls(weather, LIMA, CITY_CASE)
    turn = judge_message(Session(), decided, raw, scanner=weather, whole=True)
    assert (turn.action, turn.reason, turn.runs, turn.feedback) == (
        "forward",
        "repaired",
        (True, True),
        (None, None),
    )


def test_the_same_calls_again_are_the_same_message_whatever_their_ids(weather: Scanner) -> None:
    decided, raw = _decided_calls(weather, LIMA, TOO_MANY_DAYS)
    session = Session()
    first = judge_message(session, decided, raw, scanner=weather)
    assert first.key == json.dumps(
        [
            '{"arguments": {"city": "Lima"}, "body": null, "method": null, "name": '
            '"get_weather", "params": {}, "url": null}',
            '{"arguments": {"City": "Paris", "days": 2.5}, "body": null, "method": null, '
            '"name": "get_weather", "params": {}, "url": null}',
        ]
    )
    message, _ = _message(LIMA, TOO_MANY_DAYS)
    for i, call in enumerate(message["tool_calls"]):
        call["id"] = f"other{i}"
    from autofeedback.decide._calls import decide_calls

    again = judge_message(session, decide_calls(message, Decider(weather)), raw, scanner=weather)
    assert (again.key, again.action, again.reason) == (first.key, "stop", "repeated")


def test_a_call_that_could_not_be_read_is_keyed_by_what_was_written() -> None:
    unread = Decision("feedback", "errors", None, remaining=(NO_CALL_E1,))
    read = Decision("forward", "clean", ApiRequest(name="f"), ApiRequest(name="f"))
    key = message_key([read, unread], [("f", "{}"), ("g", '{"a": ')])
    assert key == json.dumps(
        [
            '{"arguments": {}, "body": null, "method": null, "name": "f", "params": {}, '
            '"url": null}',
            'text:["g", "{\\"a\\": "]',
        ]
    )
    assert message_key([unread, read], [("g", '{"a": '), ("f", "{}")]) != key  # the order counts
    # a call with no name to read: its arguments as given, in any key order
    swapped = message_key([unread], [(None, {"b": 1, "a": 2})])
    assert swapped == message_key([unread], [(None, {"a": 2, "b": 1})])
    # values a framework passes that are no JSON are written as text
    day = datetime.date(2026, 1, 2)
    assert message_key([unread], [(None, {"day": day})]) == json.dumps(
        ['text:[null, {"day": "2026-01-02"}]']
    )


@pytest.mark.parametrize(
    ("calls", "answers", "stop"),
    [
        pytest.param((LIMA,), 1, "clean", id="first-answer-clean"),
        pytest.param((LIMA,), 2, "corrected", id="clean-after-feedback"),
        pytest.param((LIMA, CITY_CASE), 1, "repaired", id="repaired"),
        pytest.param((TOO_MANY_DAYS,), 1, None, id="fed-back"),
    ],
)
def test_the_proxy_run_ends_with_how_its_calls_went_out(
    weather: Scanner, calls: tuple[tuple[str, dict[str, Any]], ...], answers: int, stop: str | None
) -> None:
    run = Run(Policy(), "proxy", scanner=weather)
    for _ in range(answers):
        run.asked(0)
    decided, raw = _decided_calls(weather, *calls)
    turn = run.message_turn(decided, raw)
    assert (turn.action, run.stop) == ("feedback" if stop is None else "forward", stop)


def test_the_proxy_answers_a_bad_call_with_the_call_every_fix_gives(weather: Scanner) -> None:
    run = Run(Policy(), "proxy", scanner=weather)
    run.asked(0)
    decided, raw = _decided_calls(weather, TOO_MANY_DAYS)
    assert run.message_turn(decided, raw).feedback == (
        TOOL_FEEDBACK.replace("{CORRECTED}", CORRECTED),
    )


def test_the_proxy_run_stops_in_its_own_words(weather: Scanner) -> None:
    run = Run(Policy(max_rounds=0), "proxy", scanner=weather)
    run.asked(0)
    decided, raw = _decided_calls(weather, TOO_MANY_DAYS)
    turn = run.message_turn(decided, raw)
    assert (turn.action, turn.reason, turn.feedback, run.stop) == (
        "stop",
        "rounds",
        (None,),
        "max-rounds",
    )
    again = Run(Policy(), "proxy", scanner=weather)
    again.asked(0)
    again.message_turn(decided, raw)
    again.asked(0)
    assert (again.message_turn(decided, raw).reason, again.stop) == ("repeated", "repeated")


def test_a_session_restored_from_a_doors_records_counts_rounds_and_rejections() -> None:
    records: list[dict[str, Any]] = [
        {"action": "feedback", "reason": "errors", "key": "a"},
        {"action": "feedback", "reason": "repeated", "key": "a"},
        {"action": "feedback", "reason": "errors", "key": "b"},
        {"action": "forward", "reason": "clean", "key": "c"},
        {"action": "feedback", "reason": "errors", "key": 7},  # no key of the run's
        {"action": "stop", "reason": "rounds", "key": "d"},
        {"action": "feedback", "reason": "errors", "key": "e"},
    ]
    session = restore(Session(), records)
    assert (session.rounds, [session.rejections(k) for k in "abcde"]) == (3, [2, 1, 0, 0, 1])
    assert session.rejections(7) == 0


# -- the MCP gate ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "answers"),
    [
        # told, then told to stop (the firm stop) at the limit-th identical rejected call
        pytest.param(3, [("feedback", 1, False), ("feedback", 2, False), ("stop", 3, True)]),
        pytest.param(2, [("feedback", 1, False), ("stop", 2, True), ("stop", 2, True)]),
        # every rejection is the firm stop
        pytest.param(1, [("feedback", 1, True), ("stop", 2, True), ("stop", 2, True)]),
        # never stopped
        pytest.param(0, [("feedback", 1, False), ("feedback", 2, False), ("feedback", 3, False)]),
    ],
)
def test_the_gate_stops_the_limit_th_identical_rejected_call(
    limit: int, answers: list[tuple[str, int, bool]]
) -> None:
    run = Run.gate(limit)
    got = []
    for _ in answers:
        judged, repeats, firm = run.call_turn(BAD, ("conversation", "k"))
        got.append((judged.action, repeats, firm))
    assert got == answers
    assert run.call_turn(BAD, ("another conversation", "k"))[1:] == (1, limit == 1)


def test_the_gate_takes_its_repair_setting_and_bounds_no_rounds() -> None:
    run = Run.gate(3, repair="off")
    assert (run.kind, run.policy.repair, run.policy.max_rounds, run.policy.repeats) == (
        "mcp",
        "off",
        None,
        1,
    )
    assert [repeat_limit_policy(n).repeats for n in (1, 2, 3, 5)] == [0, 0, 1, 3]
    assert repeat_limit_policy(0).repeats == sys.maxsize
    assert (repeat_limit_policy(4, repair="off").repair, repeat_limit_policy(4).repair) == (
        "off",
        "sure",
    )
    assert repeat_limit_policy(4).max_rounds is None


# -- small words of the run ------------------------------------------------------------------


def test_the_proxies_name_each_action_and_each_upstream_failure() -> None:
    assert [logged_action(a) for a in ("forward", "feedback", "stop", "other")] == [
        "forward",
        "feed_back",
        "stop",
        "stop",
    ]
    assert (upstream_stop(503), upstream_stop(0), upstream_stop(None)) == (
        "upstream-503",
        "upstream-0",
        "upstream-invalid",
    )


def test_a_key_digest_is_the_sha256_of_the_key_even_with_a_lone_surrogate() -> None:
    assert key_digest("text:") == hashlib.sha256(b"text:").hexdigest()
    assert key_digest("\ud800") == hashlib.sha256(b"\xed\xa0\x80").hexdigest()


@pytest.mark.parametrize(("steps", "fits"), [(0, True), (1, True), (2, False), (3, False)])
def test_a_call_is_inserted_first_only_when_the_models_call_still_fits_after_it(
    steps: int, fits: bool
) -> None:
    run = Run(Policy(max_steps=3), "react")
    run.session.steps = steps
    assert run.may_send_first() is fits


def test_a_run_with_no_step_bound_may_always_insert_a_call_first() -> None:
    run = Run(Policy(), "react")
    run.session.steps = 1000
    assert run.may_send_first() is True

"""The run driver's bounds on a call the model makes again (the ReAct runner's repeat):
told once while feedback is left, then the run stops, repeated, with the reason in its
trace."""

from __future__ import annotations

import pytest

from autofeedback.decide import Policy
from autofeedback.decide._feedback import MADE_AGAIN, REPEATED_CALL
from autofeedback.decide._run import REPEATED, Run


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

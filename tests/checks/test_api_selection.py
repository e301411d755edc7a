"""A newcomer's own five-operation todo API (issue 19): E2.1 agrees with itself, and one
finding never hides another."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, Finding, Scanner, render_feedback
from autofeedback.checks._check_name import destructive
from autofeedback.cli import run
from autofeedback.core._model import Operation

TODO = Path(__file__).resolve().parents[1] / "data" / "specs" / "todo.yaml"


@pytest.fixture(scope="module")
def catalog() -> ApiCatalog:
    return ApiCatalog.from_file(TODO)


@pytest.fixture
def scanner(catalog: ApiCatalog, api_retriever: Any) -> Scanner:
    return Scanner(catalog, retriever=api_retriever)


@pytest.mark.parametrize(
    ("instruction", "output"),
    [
        ("Show me todo 3", "<API>getTodo(id=3)</API>"),
        ("Add a todo: buy milk", "<API>createTodo(title='buy milk')</API>"),
        ("Mark todo 3 as done", "<API>updateTodo(id=3, done=True)</API>"),
        ("Delete todo 3", "<API>deleteTodo(id=3)</API>"),
    ],
)
def test_a_correct_call_gets_no_e21_noise(scanner: Scanner, instruction: str, output: str) -> None:
    # the retriever ranks another API a hair higher (0.38 vs 0.37): below WARN_MARGIN
    assert list(scanner.iter_findings(output, instruction=instruction)) == []


def test_a_destructive_wrong_call_is_an_error_everywhere(scanner: Scanner) -> None:
    call, instruction = "<API>deleteTodo(id=3)</API>", "Mark todo 3 as done"
    [finding] = scanner.iter_findings(call, instruction=instruction)
    assert (finding.code, finding.severity, finding.suggestion) == ("E2.1", "error", "updateTodo")
    out = io.StringIO()
    code = run(
        ["scan", "--spec", str(TODO), "--instruction", instruction, "--format", "json", call],
        out,
        out,
    )
    doc = json.loads(out.getvalue())
    assert code == 1 and doc["ok"] is False
    assert doc["feedback"].startswith("There is an error in your API request.")


def test_a_delete_the_whole_dialogue_asked_for_is_not_blocked(scanner: Scanner) -> None:
    # judged against the last turn alone, the delete looks wrong (the 200-task loop's two
    # regressions: DeleteAccount after "my username is foo"); the dialogue asked for it
    call = "<API>deleteTodo(id=3)</API>"
    last = "The id is 3, the one about milk"
    dialogue = "User: I want to get rid of a todo I no longer need.\nAI: Which one?\nUser: " + last
    alone = list(scanner.iter_findings(call, instruction=last))
    assert [(f.code, f.severity) for f in alone] == [("E2.1", "error")]
    whole = list(scanner.iter_findings(call, instruction=last, context=dialogue))
    assert [(f.code, f.severity) for f in whole] == [("E2.1", "warning")]
    # a dialogue that never asked for a delete keeps the error
    other = "User: Show me my todos.\nUser: Mark todo 3 as done"
    kept = list(scanner.iter_findings(call, instruction="Mark todo 3 as done", context=other))
    assert [(f.code, f.severity) for f in kept] == [("E2.1", "error")]


def test_a_warning_is_worded_as_a_doubt() -> None:
    doubt = Finding(
        "E2.1",
        ("api",),
        "getTodo",
        suggestion="listTodos",
        severity="warning",
        message="API 'getTodo' exists but does not fit the instruction",
    )
    text = render_feedback(doubt)
    assert "There is an error" not in text and "may have a problem" in text
    assert not text.endswith("Please regenerate the API request.")


def test_destructive_operations() -> None:
    assert destructive(Operation("DELETE /todos/{id}", method="DELETE", path="/todos/{id}"))
    assert destructive(Operation("DeleteAlarm")) and destructive(Operation("cancel_order"))
    assert not destructive(Operation("getTodo")) and not destructive(Operation("deletedItems"))
    assert not destructive(Operation("dropdownOptions"))


def test_a_missing_required_parameter_is_reported_beside_its_variant(scanner: Scanner) -> None:
    codes = [f.code for f in scanner.iter_findings("<API>createTodo(name='buy milk')</API>")]
    assert codes == ["E3.3", "E3.4"]

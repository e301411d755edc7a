"""The variable a program gets for the result of a call inserted before the model's
(issue 27's producer): a Python name made from the function's, that the program does not
use already."""

from __future__ import annotations

import pytest

from autofeedback.decide._flow_program import _fresh_name


@pytest.mark.parametrize(
    ("program", "function", "name"),
    [
        ("x = 1", "getUser", "getuser_result"),
        ("", "GET /users/{id}", "get_users_id_result"),
        ("", "_list-all_", "list_all_result"),
        ("", "123go", "r_123go_result"),
        ("", "--", "result_result"),
        ("getuser_result = 1", "getUser", "getuser_result2"),
        ("getuser_result, getuser_result2", "getUser", "getuser_result3"),
        ("get_user_resultX = 1", "get user", "get_user_result"),  # another name
    ],
)
def test_the_producer_result_gets_a_name_the_program_does_not_use(
    program: str, function: str, name: str
) -> None:
    assert _fresh_name(program, function) == name

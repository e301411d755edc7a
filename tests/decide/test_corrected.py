"""Which suggestions are written into the line shown to the model (a sure fix) and which
are only named (a guess): spellings, the same path under a method that does no more,
and a response path the model wrote in order with fields left out."""

from __future__ import annotations

import pytest

from autofeedback import Finding
from autofeedback.decide._corrected import sure_fix


@pytest.mark.parametrize(
    ("code", "got", "suggestion", "sure"),
    [
        ("E2.2", "get_user", "getUser", True),
        ("E3.2", "limt", "limit", True),
        # the same path under another method: only where that method does no more
        ("E2", "PUT_me_player_next", "POST_me_player_next", True),
        ("E2", "POST_me_player", "GET_me_player", True),
        ("E2", "DELETE_me_player", "POST_me_player", True),
        ("E2", "GET_me_player", "POST_me_player", False),
        ("E2", "HEAD_me_player", "POST_me_player", False),
        ("E2", "OPTIONS_me_player", "PUT_me_player", False),
        ("E2", "GET_me_player", "DELETE_me_player", False),
        ("E2", "POST_me_player", "DELETE_me_player", False),
        ("E2", "PATCH_me_player", "DELETE_me_player", False),
        ("E2", "get_me_player", "head_me_player", True),
        ("E2", "PUT_me_player", "POST_me_players", False),  # another path
        # a response path written in order, with fields left out
        ("E5.2", "r.items[].id", "albums.items[].id", True),
        ("E5.2", "r.a.b.id", "x.a.b.id", True),
        ("E5.2", "r.results[].credits.cast[].id", "results[].id", False),
        ("E5.2", "r.items.id", "items.id", False),  # nothing left out
        ("E5.2", "r.x.id", "a.b.id", False),  # a field the path does not have
        ("E5.2", "r.b.a.id", "a.b.c.id", False),  # out of order
        ("E5.2", "r.items", "albums.items.id", False),  # another last field
        ("E5.2", "r", "albums.items.id", False),  # no field written
        # any other finding's suggestion is a guess
        ("E4.1", "r.items[].id", "albums.items[].id", False),
        ("E2.1", "getUsr", "getUser", False),
    ],
)
def test_a_suggestion_is_written_into_the_line_only_when_it_is_sure(
    code: str, got: str, suggestion: str, sure: bool
) -> None:
    finding = Finding(code, ("name",), got, suggestion=suggestion)
    assert sure_fix(finding, suggestion) is sure

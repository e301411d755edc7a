"""E5.3's notion of id-like parameters, placeholders and grounding."""

from __future__ import annotations

import pytest

from autofeedback.core._model import Parameter
from autofeedback.flow._grounding import grounded, is_id_like, placeholder_kind


@pytest.mark.parametrize(
    "name", ["movie_id", "ids", "playlistId", "token", "api_key", "appid", "context_uri", "id"]
)
def test_id_like_names(name: str) -> None:
    assert is_id_like(Parameter(name, "query"))


@pytest.mark.parametrize("name", ["query", "q", "name", "season_number", "limit", "type", "valid"])
def test_ordinary_names(name: str) -> None:
    assert not is_id_like(Parameter(name, "query"))


def test_format_makes_a_parameter_id_like() -> None:
    assert is_id_like(Parameter("ref", "query", {"type": "string", "format": "uuid"}))


@pytest.mark.parametrize(
    "value", ["your_token_here", "<tv_id>", "xxx", "YOUR_API_KEY", "{{movie_id}}", "your api id"]
)
def test_placeholders_anywhere(value: str) -> None:
    assert placeholder_kind(value, id_like=False) == "placeholder"


@pytest.mark.parametrize(
    "value", ["your search query", "Your playlist name", "your name here", "your_user_id"]
)
def test_your_words_naming_the_slot_are_placeholders(value: str) -> None:
    assert placeholder_kind(value, id_like=False) == "placeholder"


@pytest.mark.parametrize("value", ["Your First Private Playlist", "your favourite songs"])
def test_your_words_may_be_the_value_itself(value: str) -> None:
    # a playlist's name or description the user asked for: a title, not a stand-in
    assert placeholder_kind(value, id_like=False) is None
    # where an identifier goes, no title is the id
    assert placeholder_kind(value, id_like=True) == "placeholder"


@pytest.mark.parametrize("value", ["string", "abc123", "12345", "example_id", "null"])
def test_weak_placeholders_only_for_ids(value: str) -> None:
    assert placeholder_kind(value, id_like=False) is None
    assert placeholder_kind(value, id_like=True) == "weak"


@pytest.mark.parametrize("value", ["Titanic", "Lana Del Rey", 550, "3h8qCZ2V9", "en-US"])
def test_real_values_are_not_placeholders(value: object) -> None:
    assert placeholder_kind(value, id_like=True) is None


def test_grounded_in_instruction_response_or_docs() -> None:
    p = Parameter("movie_id", "path", {"type": "integer", "enum": [1, 2], "example": 77})
    assert grounded(550, p, ["Who directed movie 550?"], set())
    assert grounded("4Uv", p, [], {"4Uv"})
    assert grounded(2, p, [], set()) and grounded(77, p, [], set())
    assert not grounded(551, p, ["Who directed movie 550?"], set())
    # a comma-separated list: every item needs a source
    assert grounded("a1,b2", Parameter("ids", "query"), [], {"a1", "b2"})
    assert not grounded("a1,zz", Parameter("ids", "query"), [], {"a1", "b2"})
    # a URI built from a returned id
    assert grounded("spotify:track:4Uv", Parameter("uri", "query"), [], {"4Uv"})

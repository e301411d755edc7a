"""Id parameter names: the entity an id names, and ids of different entities, which are
never variants of each other however close the names are."""

from __future__ import annotations

import pytest

from autofeedback.checks._names import id_stem, other_entities


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("tv_show_id", "tv_show"),
        ("user_ids", "user"),
        ("playlistIds", "playlist"),
        ("movieIDs", "movie"),
        ("userids", None),  # no separator, no case change: one word
        ("xids", None),
        ("paid", None),
        ("ids", None),
        ("id", None),
    ],
)
def test_the_entity_of_an_id_name(name: str, stem: str | None) -> None:
    assert id_stem(name) == stem


@pytest.mark.parametrize(
    ("name", "other", "different"),
    [
        ("movie_id", "personId", True),
        ("movie_id", "movieId", False),
        ("id", "person_id", False),  # a bare id names no entity
        ("movie_id", "id", False),
        ("query", "q", False),
    ],
)
def test_ids_of_different_entities(name: str, other: str, different: bool) -> None:
    assert other_entities(name, other) is different

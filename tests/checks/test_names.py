"""Id parameter names: the entity an id names, and ids of different entities, which are
never variants of each other however close the names are; typing slips and the closest
spelling at their bounds."""

from __future__ import annotations

import pytest

from autofeedback.checks._names import closest_spelling, id_stem, one_typo, other_entities


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


@pytest.mark.parametrize(
    ("name", "candidates", "meant"),
    [
        ("limt", ["limit"], "limit"),  # four letters are enough, a letter missing
        ("tiem", ["time"], "time"),  # two four-letter names, two letters swapped
        ("tme", ["time"], None),  # three are not
        ("stauts", ["stats", "status"], "status"),  # two near: the one of the same length
        ("stat", ["stats", "state"], None),  # two near of one length: a tie
    ],
)
def test_one_typing_slip(name: str, candidates: list[str], meant: str | None) -> None:
    assert one_typo(name, candidates) == meant


def test_the_closest_spelling_at_a_similarity_of_exactly_sixty_percent() -> None:
    assert closest_spelling("zip", ["zipcode"]) == "zipcode"
    assert closest_spelling("zip", ["zipcodes"]) is None  # 54.5 %

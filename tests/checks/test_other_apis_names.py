"""E3.1 or E3.3: when a name another API takes is read as a variant of this API's own.

* The id of another entity is E3.1: ``movie_id`` sent to an API that takes
  ``person_id``. The shared suffix makes the two names close (0.64 with the packaged
  model), but an id of a movie is not a way of writing the id of a person. Seen from the
  local 1.5B model on RestBench TMDB (query 25), where the Action then pointed the model
  at ``person_id`` with a movie's id.
* Another API's name close only to a parameter the request already sends is E3.1.
"""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Operation, Parameter, Scanner
from autofeedback.checks._names import id_entity


def _op(name: str, path: str, *params: str) -> Operation:
    return Operation(
        name,
        method="GET",
        path=path,
        parameters=tuple(
            Parameter(p, "path", required=True, schema={"type": "integer"}) for p in params
        ),
    )


CATALOG = ApiCatalog(
    [
        _op("GET_person-person_id-movie_credits", "/person/{person_id}/movie_credits", "person_id"),
        _op("GET_movie-movie_id-credits", "/movie/{movie_id}/credits", "movie_id"),
        _op("GET_customer-customer_id", "/customer/{customer_id}", "customer_id"),
    ]
)


@pytest.fixture(scope="module")
def scanner(api_retriever: Any) -> Scanner:
    return Scanner(CATALOG, retriever=api_retriever)


@pytest.mark.parametrize(
    ("name", "entity"),
    [
        ("movie_id", "movie"),
        ("movieId", "movie"),
        ("movie-id", "movie"),
        ("movieID", "movie"),
        ("person_ids", "person"),
        ("playlistIds", "playlist"),
        ("id", None),
        ("ids", None),
        ("valid", None),  # a word ending in "id"
        ("userid", None),  # no separator, no case change: not read as an id suffix
        ("_id", None),
    ],
)
def test_id_entity(name: str, entity: str | None) -> None:
    assert id_entity(name) == entity


def test_the_id_of_another_entity_is_the_other_apis_parameter(scanner: Scanner) -> None:
    findings = list(
        scanner.iter_findings("<API>GET_person-person_id-movie_credits(movie_id=550)</API>")
    )
    first = findings[0]
    assert first.code == "E3.1", findings
    assert first.message == (
        "parameter 'movie_id' belongs to GET_movie-movie_id-credits, "
        "not to GET_person-person_id-movie_credits"
    )
    assert first.suggestion is None  # not the missing person_id either
    # the missing person_id is still reported, with nothing pointing movie_id at it
    assert [f.code for f in findings[1:]] == ["E3.4"]


def test_the_id_of_the_same_entity_under_another_name_is_still_a_variant(
    scanner: Scanner,
) -> None:
    (first, *_) = list(scanner.iter_findings("<API>GET_customer-customer_id(client_id=7)</API>"))
    assert (first.code, first.suggestion) == ("E3.3", "customer_id")


def test_another_apis_name_close_only_to_a_sent_parameter_is_e3_1(api_retriever: Any) -> None:
    """API-Bank: ``GetUserToken(new_password=..., password=...)``. ``new_password`` is
    close to ``password`` (0.78), which is sent; what it stands for is the missing
    ``username`` (0.14), which it is no variant of, and ModifyPassword takes it: E3.1,
    still pointing at ``username``. A name no API takes keeps the E3.3 reading."""
    from _support.account_tools import GET_TOKEN

    modify = {
        "name": "ModifyPassword",
        "description": "Change the user's password",
        "parameters": {
            "type": "object",
            "properties": {"token": {}, "old_password": {}, "new_password": {}},
            "required": ["token", "old_password", "new_password"],
        },
    }
    scanner = Scanner(ApiCatalog.from_tools([GET_TOKEN, modify]), retriever=api_retriever)
    call = "<API>GetUserToken(new_password='u1', password='p1')</API>"
    (first, *_) = list(scanner.iter_findings(call))
    assert (first.code, first.suggestion) == ("E3.1", "username")
    assert "belongs to ModifyPassword" in first.message
    (first, *_) = list(scanner.iter_findings("<API>GetUserToken(login='u1', password='p1')</API>"))
    assert (first.code, first.suggestion) == ("E3.3", "username")


def test_the_id_of_another_entity_is_no_variant_of_the_one_missing(api_retriever: Any) -> None:
    """``movie_id`` is close to the sent ``film_id`` (0.93) and is the one unknown name
    beside one missing required ``person_id``: it is never read as a person's id."""
    params = {"film_id": {"type": "integer"}, "person_id": {"type": "integer"}}
    tool = {
        "name": "credits",
        "description": "Credits of a film for a person",
        "parameters": {"type": "object", "properties": params, "required": list(params)},
    }
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=api_retriever)
    call = {"name": "credits", "arguments": {"film_id": 1, "movie_id": 2}}
    assert [(f.code, f.location, f.suggestion, f.message) for f in scanner.iter_findings(call)] == [
        (
            "E3.3",
            ("argument", "movie_id"),
            "film_id",
            "unknown parameter 'movie_id'; the closest documented one is 'film_id' "
            "(similarity 0.93)",
        ),
        (
            "E3.4",
            ("argument", "person_id"),
            "person_id",
            "required parameter 'person_id' is missing",
        ),
    ]

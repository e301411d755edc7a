"""E2.2 for an API name with a path parameter's value written into it
(``GET_movie-500-credits`` for ``GET_movie-movie_id-credits``): seen from the local 1.5B
model on RestBench TMDB, whose operations are named after their paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, Operation, Parameter
from autofeedback.checks._check_name import check_name, name_with_values

MOVIE = Parameter("movie_id", "path", required=True, schema={"type": "integer"})
SEASON = Parameter("season_number", "path", required=True, schema={"type": "integer"})
CATALOG = ApiCatalog(
    [
        Operation(
            "GET_movie-movie_id-credits",
            method="GET",
            path="/movie/{movie_id}/credits",
            parameters=(MOVIE,),
        ),
        Operation(
            "GET_tv-tv_id-season-season_number",
            method="GET",
            path="/tv/{tv_id}/season/{season_number}",
            parameters=(Parameter("tv_id", "path", required=True), SEASON),
        ),
        Operation("GET_movie-latest", method="GET", path="/movie/latest"),
    ]
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("GET_movie-500-credits", ("GET_movie-movie_id-credits", {"movie_id": "500"})),
        (
            "GET_tv-1399-season-2",
            ("GET_tv-tv_id-season-season_number", {"tv_id": "1399", "season_number": "2"}),
        ),
        ("GET_movie-credits", None),  # the value left out: not this rule
        ("GET_movie-latest-credits-x", None),
        ("GET_movie-movie_id-credits", None),  # the real name
        ("GET_movie-abc-credits", None),  # an id holds a digit: a misspelling, not a value
        ("", None),
    ],
)
def test_name_with_values(name: str, expected: Any) -> None:
    found = name_with_values(name, CATALOG)
    assert (None if found is None else (found[0].name, found[1])) == expected


def test_it_is_reported_as_a_spelling_variant_with_the_call_to_make() -> None:
    result = check_name(ApiRequest(name="GET_movie-500-credits"), CATALOG)
    assert result.operation is None
    (finding,) = result.findings
    assert finding.code == "E2.2" and finding.suggestion == "GET_movie-movie_id-credits"
    assert "call GET_movie-movie_id-credits(movie_id='500')" in (finding.message or "")


def test_restbench_tmdb_names(shared_data_dir: Path) -> None:
    """On the real TMDB spec every operation with a path parameter is found again from
    its name with a value written in, and no operation name is read as another's."""
    catalog = ApiCatalog.from_file(shared_data_dir / "restbench" / "tmdb_oas.json")
    templated = 0
    for op in catalog.operations:
        assert name_with_values(op.name, catalog) is None
        params = [p.name for p in op.parameters if p.location == "path"]
        if not params or not all(p in op.name for p in params):
            continue
        name = op.name
        for i, p in enumerate(params):
            name = name.replace(p, str(100 + i), 1)
        found = name_with_values(name, catalog)
        assert found is not None and found[0].name == op.name, name
        templated += 1
    assert templated > 20


def test_the_react_runner_gives_the_call_with_the_value_moved_to_its_parameter() -> None:
    from autofeedback.decide._corrected import next_action as _next_action

    request = ApiRequest(name="GET_movie-500-credits")
    findings = check_name(request, CATALOG).findings
    assert _next_action(findings, request, CATALOG) == (
        "<API>GET_movie-movie_id-credits(movie_id=500)</API>"
    )


# -- the repair: the name respelt and its values moved into the arguments ---------------


def _decided(call: dict[str, Any]) -> Any:
    from autofeedback import Decider, Scanner

    [decision] = Decider(Scanner(CATALOG, retriever=None)).decide(call)
    return decision


def test_the_values_in_the_name_become_its_arguments_typed_as_documented() -> None:
    """Found by mutation testing (mutants of ``_rename_api`` survived): no test made
    this repair. The name says ``movie_id`` 500; the call sends it, as an integer."""
    decision = _decided({"name": "GET_movie-500-credits", "arguments": {}})
    assert decision.action == "forward" and decision.reason == "repaired"
    assert decision.request.name == "GET_movie-movie_id-credits"
    assert decision.request.arguments == {"movie_id": 500}
    assert [(r.location, r.before, r.after) for r in decision.repairs] == [
        (("api",), "GET_movie-500-credits", "GET_movie-movie_id-credits"),
        (("argument", "movie_id"), None, 500),
    ]


def test_a_value_the_arguments_already_say_is_not_added_twice() -> None:
    decision = _decided({"name": "GET_movie-500-credits", "arguments": {"movie_id": 500}})
    assert decision.request.name == "GET_movie-movie_id-credits"
    assert decision.request.arguments == {"movie_id": 500}
    assert [r.location for r in decision.repairs] == [("api",)]


def test_a_name_and_arguments_that_disagree_go_back_to_the_model() -> None:
    """The name says 500, the arguments 501: which one the model meant is its to say."""
    decision = _decided({"name": "GET_movie-500-credits", "arguments": {"movie_id": 501}})
    assert not decision.repairs
    assert decision.action == "feedback" and decision.request == decision.original


def test_every_value_of_a_name_with_two_is_moved() -> None:
    decision = _decided({"name": "GET_tv-1399-season-2", "arguments": {}})
    assert decision.request.name == "GET_tv-tv_id-season-season_number"
    assert decision.request.arguments == {"tv_id": "1399", "season_number": 2}

"""E2 findings in full, field by field: an HTTP request to another host, with a method
its path does not accept, a spelling variant of a documented path, a path like none;
the APIs that take a call's arguments and the name they suggest; the documentation a
finding carries. The cases a mutation pass over _check_name.py (issue 39,
benchmarks/RESULTS.md) found no test deciding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, Finding, Operation, Parameter, SpecWarning
from autofeedback.checks._check_name import (
    _path_words,
    check_name,
    check_selection,
    destructive,
    name_with_values,
    taking,
)

URL = "https://api.example.com/v3"
BACKUP = "https://backup.example.com/v3"
CREDITS = "Credits   of a movie:\n the cast and the crew. " * 10
#: the description above as a finding shows it: one line, cut at 200 characters
CREDITS_DOC = ("Credits of a movie: the cast and the crew. " * 5)[:197] + "..."
MOVIE_ID = {"name": "movie_id", "in": "path", "required": True, "schema": {"type": "integer"}}
LINK_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


def _get(operation_id: str, **more: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "responses": {"200": {"description": "ok"}}, **more}


def _body(*names: str) -> dict[str, Any]:
    properties = {n: {"type": "string"} for n in names}
    schema = {"type": "object", "properties": properties}
    return {"content": {"application/json": {"schema": schema}}}


PATHS: dict[str, Any] = {
    "/movie/{movie_id}/credits": {
        "get": _get("getMovieCredits", description=CREDITS, parameters=[MOVIE_ID])
    },
    "/movie/popular": {"get": _get("getPopularMovies", description="The   popular movies.")},
    "/movie/{movie_id}/rating": {
        "post": _get("rateMovie", parameters=[MOVIE_ID]),
        "delete": _get("deleteRating", parameters=[MOVIE_ID]),
    },
    # one method and template documented twice (Box): told apart by the body's names
    "/web_links/{id}": {
        "put": _get("updateWebLink", parameters=[LINK_ID], requestBody=_body("name"))
    },
    "/web_links/{id}#add_shared_link": {
        "put": _get("addSharedLink", parameters=[LINK_ID], requestBody=_body("shared_link"))
    },
    **{f"/genre/g{i:02}": {"get": _get(f"genre{i:02}")} for i in range(25)},
}


def _movies() -> ApiCatalog:
    # a catalog per test: its indexes and memo are built under the code being tested
    # (mutmut forks each mutant's run from a process where module-level ones were built)
    spec = {"openapi": "3.0.3", "info": {"title": "movies", "version": "1"}, "paths": PATHS}
    return ApiCatalog.from_obj({**spec, "servers": [{"url": URL}, {"url": BACKUP}]})


#: what an unknown endpoint lists: the first 20 documented endpoints
LISTED = [
    "GET /movie/{movie_id}/credits",
    "GET /movie/popular",
    "POST /movie/{movie_id}/rating",
    "DELETE /movie/{movie_id}/rating",
    "PUT /web_links/{id}",
    "PUT /web_links/{id}",
    *(f"GET /genre/g{i:02}" for i in range(14)),
]


def _http(method: str, url: str, body: Any = None, matcher: Any = None) -> Any:
    return check_name(ApiRequest(method=method, url=url, body=body), _movies(), matcher=matcher)


def _finding(method: str, url: str, matcher: Any = None) -> Finding:
    result = _http(method, url, matcher=matcher)
    assert result.operation is None
    (finding,) = result.findings
    return finding  # type: ignore[no-any-return]


def test_another_host_is_no_server_of_the_api() -> None:
    assert _finding("GET", "https://evil.example.org/v3/movie/popular") == Finding(
        "E2",
        ("url",),
        "evil.example.org",
        expected=[URL, BACKUP],
        message=f"host 'evil.example.org' is not a server of this API; servers: {URL}, {BACKUP}",
    )


def test_user_info_is_not_part_of_the_host() -> None:
    result = _http("GET", "https://me@corp:secret@api.example.com/v3/movie/popular")
    assert result.operation is not None and result.operation.name == "getPopularMovies"
    assert result.findings == ()


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("POST", "/movie/popular", ["GET"]), ("PUT", "/movie/5/rating", ["DELETE", "POST"])],
)
def test_a_method_the_path_does_not_accept(method: str, path: str, allowed: list[str]) -> None:
    assert _finding(method, URL + path) == Finding(
        "E2",
        ("method",),
        method,
        expected=allowed,
        suggestion=allowed[0],
        message=f"{path} does not accept {method}; documented methods: {', '.join(allowed)}",
    )


@pytest.mark.parametrize(
    "path",
    [
        "/Movie/550/Credits",  # segment by segment, the id matching the variable
        "/movie-credits",  # the whole path without its variables
    ],
)
def test_a_spelling_variant_of_a_documented_path(path: str) -> None:
    target = f"GET /v3{path}"
    assert _finding("GET", URL + path) == Finding(
        "E2.2",
        ("api",),
        target,
        expected="getMovieCredits",
        suggestion="GET /movie/{movie_id}/credits",
        message=f"{target} is not documented; it is a spelling variant of "
        "GET /movie/{movie_id}/credits",
        doc=CREDITS_DOC,
    )


@pytest.mark.parametrize(
    ("url", "target", "guess"),
    [
        (URL + "/tv/popular", "GET /v3/tv/popular", "GET /movie/popular"),
        ("https://api.example.com", "GET /", None),  # no path at all
    ],
)
def test_an_endpoint_like_none(url: str, target: str, guess: str | None) -> None:
    assert _finding("GET", url) == Finding(
        "E2",
        ("api",),
        target,
        expected=LISTED,
        suggestion=guess,
        message=f"{target} is not a documented endpoint",
    )


def test_an_endpoint_by_meaning(api_retriever: Any) -> None:
    found = _finding("GET", URL + "/films/popular", matcher=api_retriever)
    assert found == Finding(
        "E2.3",
        ("api",),
        "GET /v3/films/popular",
        expected="getPopularMovies",
        suggestion="GET /movie/popular",
        message="GET /v3/films/popular is not documented; the closest documented endpoint "
        "is GET /movie/popular (similarity 0.88)",
        doc="The popular movies.",
    )


@pytest.mark.parametrize(
    ("body", "operation"),
    [({"shared_link": {"access": "open"}}, "addSharedLink"), ({"name": "x"}, "updateWebLink")],
)
def test_a_template_documented_twice_is_told_apart_by_the_body(
    body: dict[str, Any], operation: str
) -> None:
    result = _http("PUT", URL + "/web_links/5", body=body)
    assert result.operation is not None and result.operation.name == operation
    assert result.path_params == {"id": "5"}


def test_the_words_of_a_path() -> None:
    # separators and braces split it; parts with a digit (versions, ids) say nothing
    assert _path_words("/v3/movie/{movie_id}/credits.json") == "movie movie id credits json"


# -- calls by name ---------------------------------------------------------------------


def _tool(name: str, *params: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    properties = {p: {"type": "string"} for p in params}
    schema = {"type": "object", "properties": properties, "required": list(required)}
    return {"name": name, "parameters": schema}


def _calendar() -> ApiCatalog:
    return ApiCatalog.from_tools(
        [
            _tool("create_event", "calendar_id", "title", required=("title",)),
            _tool("list_calendar", "calendar_id"),
            _tool("get_event_calendar", "calendar_id"),
            _tool("get_event", "event_id"),
            _tool("search_entries", "query"),
            _tool("get_log", "query"),
            _tool("get_ad", "campaign"),
            _tool("list_ads", "campaign"),
        ]
    )


@pytest.mark.parametrize(
    ("arguments", "fitting"),
    [
        # every API taking the arguments, those they complete first, as documented
        ({"calendarId": "c1"}, ["list_calendar", "get_event_calendar", "create_event"]),
        ({"calendar_id": "c1", "title": "x"}, ["create_event"]),
        ({"calendar_id": "c1", "event_id": "e1"}, []),  # no API takes both
        ({"eventID": "e1"}, ["get_event"]),
        ({"owner": "me"}, []),
        ({}, []),
        ({"": "x"}, []),  # a name that is no name
        ({f"p{i}": i for i in range(65)}, []),  # past 64 names: not looked up
    ],
)
def test_the_apis_that_take_the_arguments(arguments: dict[str, Any], fitting: list[str]) -> None:
    catalog = _calendar()
    assert taking(arguments, catalog) == fitting
    assert taking(arguments, catalog) == fitting  # from the index built the first time


@pytest.mark.parametrize(("count", "fitting"), [(64, ["wide"]), (65, [])])
def test_up_to_64_names_are_looked_up(count: int, fitting: list[str]) -> None:
    tool = _tool("wide", *(f"p{i}" for i in range(65)))
    arguments = {f"p{i}": i for i in range(count)}
    assert taking(arguments, ApiCatalog.from_tools([tool])) == fitting


@pytest.mark.parametrize(
    ("name", "arguments", "guess"),
    [
        # of the APIs taking the arguments, the one sharing most words, plurals as one
        ("fetch_calendar_events", {"calendar_id": "c1"}, "get_event_calendar"),
        ("fetch_calendar", {"calendar_id": "c1"}, "list_calendar"),  # a tie: the first
        ("show_logs", {"query": "x"}, "get_log"),
        ("show_ads", {"campaign": "x"}, "list_ads"),  # `ads` is too short to be a plural
    ],
)
def test_an_unknown_name_is_guessed_from_its_words(
    name: str, arguments: dict[str, Any], guess: str
) -> None:
    result = check_name(ApiRequest(name=name, arguments=arguments), _calendar())
    (finding,) = result.findings
    assert (finding.code, finding.suggestion) == ("E2", guess)


def test_a_call_without_a_name() -> None:
    (finding,) = check_name(ApiRequest(arguments={"query": "x"}), _calendar()).findings
    assert (finding.code, finding.got) == ("E2", "")


def test_a_name_sharing_no_word_is_guessed_by_spelling() -> None:
    result = check_name(ApiRequest(name="zzz", arguments={"query": "x"}), _calendar())
    (finding,) = result.findings
    assert (finding.code, finding.suggestion) == ("E2", None)


def test_a_name_no_slip_away_is_guessed_by_its_whole_spelling() -> None:
    catalog = ApiCatalog.from_tools([_tool("getWeather", "city"), _tool("listCities", "city")])
    (finding,) = check_name(ApiRequest(name="getWeatherNow", arguments={"q": 1}), catalog).findings
    assert (finding.code, finding.expected, finding.suggestion) == (
        "E2",
        ["getWeather", "listCities"],
        "getWeather",
    )
    assert finding.message == (
        "API 'getWeatherNow' does not exist; did you mean 'getWeather'? "
        "documented APIs: getWeather, listCities"
    )


def test_a_look_alike_set_aside_is_named_beside_the_documented_apis() -> None:
    with pytest.warns(SpecWarning):
        catalog = ApiCatalog.from_tools(
            [_tool("re\u0430d_file", "path"), _tool("list_files", "path")]
        )
    (finding,) = check_name(ApiRequest(name="read_file", arguments={"path": "a"}), catalog).findings
    assert finding.message == (
        "API 'read_file' does not exist; did you mean 'list_files'? documented APIs: "
        "list_files ('re\\u0430d_file' is listed too, but never called: its name mixes "
        "Latin and Cyrillic letters ('re\\u0430d_file'))"
    )


def test_a_catalog_without_apis_says_so() -> None:
    (finding,) = check_name(ApiRequest(name="getWeather", arguments={}), ApiCatalog([])).findings
    assert finding.message == "API 'getWeather' does not exist; documented APIs: none"


@pytest.mark.parametrize(
    ("length", "doc"),
    [(200, "a" * 200), (201, "a" * 197 + "...")],
)
def test_the_documentation_a_finding_carries_is_cut_at_200(length: int, doc: str) -> None:
    catalog = ApiCatalog.from_tools(
        [{"name": "get_event", "description": "a" * length, "parameters": {"type": "object"}}]
    )
    (finding,) = check_name(ApiRequest(name="GetEvent"), catalog).findings
    assert (finding.code, finding.doc) == ("E2.2", doc)


# -- names with values -----------------------------------------------------------------

MOVIE = Parameter("movie_id", "path", required=True, schema={"type": "integer"})
SEASON = Parameter("season_number", "path", required=True, schema={"type": "integer"})


def _tmdb() -> ApiCatalog:
    return ApiCatalog(
        [
            Operation(
                "GET_movie-movie_id", method="GET", path="/movie/{movie_id}", parameters=(MOVIE,)
            ),
            Operation("GET_movie-500", method="GET", path="/movie/500"),  # a name like a value
            Operation(
                "GET_tv-season-season_number",  # names only the second of its path parameters
                method="GET",
                path="/tv/{tv_id}/season/{season_number}",
                parameters=(Parameter("tv_id", "path", required=True), SEASON),
            ),
        ]
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("GET_movie-500", None),  # a documented name is that API
        ("GET_movie-501", ("GET_movie-movie_id", {"movie_id": "501"})),
        ("GET_tv-season-2", ("GET_tv-season-season_number", {"season_number": "2"})),
        ("GET_movie-" + "5" * 290, ("GET_movie-movie_id", {"movie_id": "5" * 290})),  # 300
        ("GET_movie-" + "5" * 291, None),  # 301 characters: not read
    ],
)
def test_a_name_with_values(name: str, expected: Any) -> None:
    found = name_with_values(name, _tmdb())
    assert (None if found is None else (found[0].name, found[1])) == expected


@pytest.mark.parametrize(
    ("operation", "is_destructive"),
    [
        (Operation("rating", method="delete", path="/rating"), True),
        (Operation("rating", method="DELETE", path="/rating"), True),
        (Operation("rating", method="POST", path="/rating"), False),
    ],
)
def test_a_delete_by_its_method(operation: Operation, is_destructive: bool) -> None:
    assert destructive(operation) is is_destructive


# -- E2.1: a real API that does not fit the instruction --------------------------------

TODO = ApiCatalog.from_file(Path(__file__).resolve().parents[1] / "data" / "specs" / "todo.yaml")
DELETE_DOC = "Delete a todo Remove a todo from the list for good."


@pytest.mark.parametrize(
    ("chosen", "severity", "score"),
    [
        ("createTodo", "error", "0.36"),  # beaten by 0.25 or more: an error
        ("getTodo", "warning", "0.49"),  # second of five, beaten by less: a warning
    ],
)
def test_a_real_api_that_does_not_fit(
    api_retriever: Any, chosen: str, severity: str, score: str
) -> None:
    op = TODO.get(chosen)
    assert op is not None
    assert check_selection(op, "Delete todo 3", TODO, api_retriever) == Finding(
        "E2.1",
        ("api",),
        chosen,
        expected=["deleteTodo"],
        suggestion="deleteTodo",
        severity=severity,  # type: ignore[arg-type]
        message=f"API {chosen!r} exists but does not fit the instruction; 'deleteTodo' fits "
        f"better (similarity 0.69 vs {score})",
        operation=chosen,
        doc=DELETE_DOC,
    )


def test_no_instruction_says_nothing_about_fit(api_retriever: Any) -> None:
    op = TODO.get("createTodo")
    assert op is not None
    assert check_selection(op, "   ", TODO, api_retriever) is None


# -- calls by name: each E2 finding in full ---------------------------------------------


def _described(name: str, description: str, *params: str) -> dict[str, Any]:
    return {**_tool(name, *params), "description": description}


def _described_catalog() -> ApiCatalog:
    return ApiCatalog.from_tools(
        [
            _described("get_event", "One   event.", "event_id"),
            _described("list_calendar", "Calendars.", "calendar_id"),
            _described("get_event_calendar", "Events of a calendar.", "calendar_id"),
        ]
    )


def _name_finding(
    request: ApiRequest, catalog: ApiCatalog, matcher: Any = None
) -> tuple[Finding, str | None]:
    result = check_name(request, catalog, matcher=matcher)
    assert result.operation is None
    (finding,) = result.findings
    return finding, (result.likely.name if result.likely is not None else None)


@pytest.mark.parametrize(
    ("tools", "name", "why"),
    [
        (
            [_tool("list_events", "q"), _tool("list_events", "z")],
            "list_events",
            "is listed 2 times, as different tools, and which of those tools would run "
            "cannot be told",
        ),
        (
            [_tool("get_user", "id"), _tool("get_us\u0435r", "id")],
            "get_us\u0435r",
            "mixes Latin and Cyrillic letters ('get_us\\u0435r'), so it can pass for another name",
        ),
    ],
)
def test_a_name_set_aside_is_never_called(tools: list[Any], name: str, why: str) -> None:
    with pytest.warns(SpecWarning, match="tool names set aside"):
        catalog = ApiCatalog.from_tools(tools)
    assert _name_finding(ApiRequest(name=name), catalog) == (
        Finding(
            "E2",
            ("api",),
            name,
            message=f"API {name!a} is not called: its name {why}; tell the user instead "
            "of calling it",
        ),
        None,
    )


def test_a_spelling_variant_of_a_name() -> None:
    assert _name_finding(ApiRequest(name="GetEvent"), _described_catalog()) == (
        Finding(
            "E2.2",
            ("api",),
            "GetEvent",
            expected="get_event",
            suggestion="get_event",
            message="API 'GetEvent' does not exist; it is a spelling variant of 'get_event'",
            doc="One event.",
        ),
        "get_event",
    )


def test_a_name_with_its_values_written_in() -> None:
    credits = Operation(
        "GET_movie-movie_id-season-season_number",
        method="GET",
        path="/movie/{movie_id}/season/{season_number}",
        parameters=(MOVIE, SEASON),
        description="A   season.",
    )
    name = "GET_movie-550-season-2"
    assert _name_finding(ApiRequest(name=name), ApiCatalog([credits])) == (
        Finding(
            "E2.2",
            ("api",),
            name,
            expected=credits.name,
            suggestion=credits.name,
            message=f"API {name!r} does not exist; it is {credits.name!r} with movie_id and "
            f"season_number written into the name: call {credits.name}(movie_id='550', "
            "season_number='2')",
            doc="A season.",
        ),
        None,
    )


@pytest.mark.parametrize(
    ("name", "arguments", "taken", "score", "likely"),
    [
        (
            "fetch_calendar_entries",
            {"calendar_id": "c"},
            " that takes these arguments",
            "0.75",
            None,
        ),
        ("fetch_calendar_entries", {}, "", "0.75", None),
        # a slip of the closest name: the arguments are judged against it too
        (
            "get_event_calendr",
            {"calendar_id": "c"},
            " that takes these arguments",
            "0.89",
            "get_event_calendar",
        ),
    ],
)
def test_a_name_by_meaning(
    api_retriever: Any,
    name: str,
    arguments: dict[str, Any],
    taken: str,
    score: str,
    likely: str | None,
) -> None:
    request = ApiRequest(name=name, arguments=arguments)
    assert _name_finding(request, _described_catalog(), api_retriever) == (
        Finding(
            "E2.3",
            ("api",),
            name,
            expected="get_event_calendar",
            suggestion="get_event_calendar",
            message=f"API {name!r} does not exist; the closest real API{taken} is "
            f"'get_event_calendar' (similarity {score})",
            doc="Events of a calendar.",
        ),
        likely,
    )

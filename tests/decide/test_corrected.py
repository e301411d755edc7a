"""Which suggestions are written into the line shown to the model (a sure fix) and which
are only named (a guess): spellings, the same path under a method that does no more,
and a response path the model wrote in order with fields left out; and the ReAct Action
written for the model instead of a rejected call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, Finding, Operation, Parameter, Scanner
from autofeedback.decide._corrected import corrected_call, next_action, sure_fix


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


def _catalog() -> ApiCatalog:
    def required(name: str) -> Parameter:
        return Parameter(name, "argument", required=True)

    return ApiCatalog(
        [
            Operation("searchBooks", parameters=(Parameter("q", "query", required=True),)),
            Operation("getBook", parameters=(required("bookId"), Parameter("lang", "argument"))),
            Operation("getCompany", parameters=(required("company_id"),)),
            Operation("listAuthors"),
            Operation("findAuthor", parameters=(required("name"), Parameter("limit", "argument"))),
            Operation("listShelves", parameters=(required("floor"), required("room"))),
        ]
    )


def _first(producer: str) -> str:
    return f"call {producer} first: its response has `id`"


E34_BOOK = Finding("E3.4", ("argument", "bookId"), None, suggestion="bookId")


@pytest.mark.parametrize(
    ("errors", "name", "arguments", "made", "action"),
    [
        pytest.param(
            [Finding("E2.2", ("name",), "search_books", suggestion="searchBooks")],
            "search_books", {"q": "Dune"}, (), "<API>searchBooks(q='Dune')</API>",
            id="api-name-spelled-as-documented",
        ),
        pytest.param(
            [Finding("E3.2", ("argument", "Q"), "Q", suggestion="q")],
            "searchBooks", {"Q": "Dune"}, (), "<API>searchBooks(q='Dune')</API>",
            id="parameter-spelled-as-documented",
        ),
        pytest.param(
            [Finding("E3", ("argument", "limit"), "limit")],
            "searchBooks", {"q": "Dune", "limit": 5}, (), "<API>searchBooks(q='Dune')</API>",
            id="a-parameter-it-does-not-take-dropped",
        ),
        pytest.param(
            [
                Finding("E3", ("argument", "id"), "id", suggestion="company_id"),
                Finding("E3.4", ("argument", "company_id"), None, suggestion="company_id"),
            ],
            "getCompany", {"id": 34}, (), "<API>getCompany(company_id=34)</API>",
            id="the-missing-required-one-misnamed",
        ),
        pytest.param(
            [E34_BOOK], "getBook", {"lang": "en"}, (), "<API>getBook(lang='en', bookId=...)</API>",
            id="a-missing-required-one-added",
        ),
        pytest.param(
            [Finding("E3.3", ("argument", "book"), "book", suggestion="bookId"), E34_BOOK],
            "getBook", {"book": 7}, (), "<API>getBook(bookId=7)</API>",
            id="a-semantic-variant-of-the-missing-one",
        ),
        pytest.param(
            [Finding("E3.3", ("argument", "language"), "language", suggestion="lang")],
            "getBook", {"bookId": 7, "language": "en"}, (), None,
            id="a-semantic-variant-of-an-optional-one-is-a-guess",
        ),
        pytest.param(
            [Finding("E5.3", ("argument", "bookId"), "123", suggestion=_first("listAuthors"),
                     operation="getBook")],
            "getBook", {"bookId": "123"}, (), "<API>listAuthors()</API>",
            id="the-producer-of-a-made-up-value",
        ),
        pytest.param(
            [Finding("E5.3", ("argument", "bookId"), "123", suggestion=_first("findAuthor"),
                     operation="getBook")],
            "getBook", {"bookId": "123"}, (), "<API>findAuthor(name=...)</API>",
            id="the-producer-with-its-required-values-to-fill",
        ),
        pytest.param(
            [Finding("E5.3", ("argument", "bookId"), "123", suggestion=_first("listAuthors"),
                     operation="getBook")],
            "getBook", {"bookId": "123"}, ("listAuthors",), "<API>getBook(bookId=...)</API>",
            id="a-producer-called-already-the-value-to-fill-from-it",
        ),
        pytest.param(
            [Finding("E2.1", ("name",), "getBook", suggestion="searchBooks")],
            "getBook", {"bookId": 1}, (), None,
            id="another-api-by-meaning-is-a-guess",
        ),
        pytest.param(
            [Finding("E3.2", ("argument", "Q"), "Q")], "searchBooks", {"Q": "Dune"}, (), None,
            id="no-suggestion",
        ),
        pytest.param([], "getBook", {"bookId": 1}, (), None, id="no-errors"),
        pytest.param(
            [Finding("E3.1", ("argument", "q"), "q")],
            "getBook", {"bookId": 1, "q": "Dune"}, (), "<API>getBook(bookId=1)</API>",
            id="a-parameter-of-another-api-dropped",
        ),
        pytest.param(
            [Finding("E3", ("argument", "language"), "language", suggestion="lang")],
            "getBook", {"bookId": 7, "language": "en"}, (), "<API>getBook(bookId=7)</API>",
            id="an-unknown-one-close-to-an-optional-one-is-dropped-not-renamed",
        ),
        pytest.param(
            [
                Finding("E3", ("argument", "person_id"), "person_id", suggestion="company_id"),
                Finding("E3.4", ("argument", "company_id"), None, suggestion="company_id"),
            ],
            "getCompany", {"person_id": 34}, (), "<API>getCompany(company_id=...)</API>",
            id="another-entitys-id-is-dropped-never-the-missing-one",
        ),
        pytest.param(
            [
                Finding("E3.3", ("argument", "person_id"), "person_id", suggestion="company_id"),
                Finding("E3.4", ("argument", "company_id"), None, suggestion="company_id"),
            ],
            "getCompany", {"person_id": 34}, (), None,
            id="another-entitys-id-as-a-variant-is-a-guess",
        ),
        pytest.param(
            [E34_BOOK, Finding("E3.3", ("argument", "book"), "book", suggestion="bookId")],
            "getBook", {"book": 7, "lang": "en"}, (), "<API>getBook(bookId=7, lang='en')</API>",
            id="renamed-before-added-the-value-written-is-kept",
        ),
        pytest.param(
            [Finding("E3.2", ("argument", "Lang"), "Lang", suggestion="lang")],
            "getBook", {"bookId": 7, "Lang": "en"}, (), "<API>getBook(bookId=7, lang='en')</API>",
            id="only-the-misspelt-parameter-renamed",
        ),
        pytest.param(
            [Finding("E3.2", ("argument", "Q"), "Q", suggestion="")],
            "searchBooks", {"Q": "Dune"}, (), None,
            id="an-empty-suggestion-is-none",
        ),
        pytest.param(
            [Finding("E4.2", ("argument", "lang"), "English", suggestion="en")],
            "getBook", {"bookId": 7, "lang": "English"}, (), None,
            id="a-suggested-value-is-a-guess",
        ),
        pytest.param(
            [Finding("E5.2", ("argument", "bookId"), "r.items[].id",
                     suggestion="albums.items[].id")],
            "getBook", {"bookId": "r.items[].id"}, (), None,
            id="a-response-path-is-the-models-to-write",
        ),
        pytest.param(
            [Finding("E2.3", ("name",), "serchBooks", suggestion="searchBooks")],
            "serchBooks", {"q": "Dune"}, (), "<API>searchBooks(q='Dune')</API>",
            id="an-api-name-one-letter-off",
        ),
        pytest.param(
            [Finding("E3.2", ("argument", "Q"), "Q", suggestion="q"),
             Finding("E5.3", ("argument", "bookId"), "123", suggestion=_first("listAuthors"),
                     operation="getBook")],
            "getBook", {"Q": "Dune", "bookId": "123"}, (), "<API>listAuthors()</API>",
            id="the-producer-of-a-made-up-value-after-another-finding",
        ),
        pytest.param(
            [Finding("E5.3", ("argument", "bookId"), "123", suggestion=_first("listAuthors"),
                     operation="getBook"),
             Finding("E5.3", ("argument", "lang"), "xx", suggestion=_first("listShelves"),
                     operation="getBook")],
            "getBook", {"bookId": "123", "lang": "xx"}, ("listAuthors",),
            "<API>listShelves(floor=..., room=...)</API>",
            id="the-producer-not-called-yet-of-a-second-made-up-value",
        ),
        pytest.param(
            [Finding("E5.3", ("argument", "bookId"), "123", suggestion=_first("listAuthors"),
                     operation="getBook"),
             Finding("E3", ("argument", "book"), "book", suggestion="bookId")],
            "getBook", {"bookId": "123", "book": 7}, ("listAuthors",),
            "<API>getBook(bookId=...)</API>",
            id="an-unknown-one-close-to-one-written-is-dropped",
        ),
        pytest.param(
            [Finding("E5.3", ("argument", "bookId"), "<book_id>", operation="getBook")],
            "getBook", {"bookId": "<book_id>"}, (), None,
            id="a-made-up-value-nothing-produces-is-the-models-to-fill",
        ),
        pytest.param(
            [Finding("E5.3", ("argument", "bookId"), "<book_id>", suggestion=_first("listAuthors"),
                     operation="getBook"),
             Finding("E4.1", ("argument", "bookId"), "<book_id>")],
            "getBook", {"bookId": "<book_id>"}, ("listAuthors",), None,
            id="a-value-of-the-wrong-type-is-the-models-to-fix",
        ),
    ],
)  # fmt: skip
def test_the_action_to_write_instead_of_a_rejected_call(
    errors: list[Finding],
    name: str,
    arguments: dict[str, Any],
    made: tuple[str, ...],
    action: str | None,
) -> None:
    request = ApiRequest(name=name, arguments=arguments)
    assert next_action(errors, request, _catalog(), made=made) == action
    assert next_action(errors, None, _catalog()) is None


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


INT = {"type": "integer"}
#: SearchPerson lists people (their ids, and the ids of what each is known for);
#: GetPerson takes a person's id, which SearchPerson produces; GetMovie takes a movie's
#: id, which no response here surely holds (only weak guesses: some other entity's id)
PEOPLE = ApiCatalog.from_tools(
    [
        {
            "name": "SearchPerson",
            "parameters": {**_obj(query={"type": "string"}), "required": ["query"]},
            "outputSchema": _obj(
                results={
                    "type": "array",
                    "items": _obj(id=INT, known_for={"type": "array", "items": _obj(id=INT)}),
                }
            ),
        },
        {"name": "GetPerson", "parameters": {**_obj(person_id=INT), "required": ["person_id"]}},
        {"name": "GetMovie", "parameters": {**_obj(movie_id=INT), "required": ["movie_id"]}},
    ]
)


@pytest.mark.parametrize(
    ("name", "param", "made", "action"),
    [
        pytest.param(
            "GetPerson", "person_id", (), "<API>SearchPerson(query=...)</API>",
            id="the-producer-of-a-missing-id",
        ),
        pytest.param(
            "GetPerson", "person_id", ("SearchPerson",), "<API>GetPerson(person_id=...)</API>",
            id="its-producer-called-the-id-to-fill-from-it",
        ),
        pytest.param(
            "GetMovie", "movie_id", (), "<API>GetMovie(movie_id=...)</API>",
            id="a-weak-guess-is-no-producer",
        ),
    ],
)  # fmt: skip
def test_a_missing_required_id_is_taken_from_its_producer(
    name: str, param: str, made: tuple[str, ...], action: str
) -> None:
    from autofeedback.sequences import FlowGraph

    missing = Finding("E3.4", ("argument", param), None, suggestion=param, operation=name)
    request = ApiRequest(name=name, arguments={})
    producers = FlowGraph.from_catalog(PEOPLE).producers
    assert next_action([missing], request, PEOPLE, producers, made) == action


def test_an_http_request_gets_no_action() -> None:
    """The Action is a call by name; an HTTP request has none to write."""
    request = ApiRequest(method="GET", url="/books")
    missing = Finding("E3.4", ("query", "q"), None, suggestion="q", operation="searchBooks")
    assert next_action([missing], request, _catalog()) is None


def test_a_value_written_into_the_api_name_moves_to_its_parameter_as_written() -> None:
    """``tt0137523`` is an IMDb id, not a number: it stays the text the model wrote."""
    from autofeedback.checks._check_name import check_name

    movie = Parameter("movie_id", "path", required=True, schema={"type": "string"})
    credits = Operation(
        "GET_movie-movie_id-credits",
        method="GET",
        path="/movie/{movie_id}/credits",
        parameters=(movie,),
    )
    catalog = ApiCatalog([credits])
    request = ApiRequest(name="GET_movie-tt0137523-credits")
    findings = check_name(request, catalog).findings
    assert next_action(findings, request, catalog) == (
        "<API>GET_movie-movie_id-credits(movie_id='tt0137523')</API>"
    )


BOOKSHOP = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"
#: a tool whose parameters have a nullable type, no type at all, and a bound
TRIP = [
    {
        "name": "plan_trip",
        "parameters": {
            "type": "object",
            "required": ["city", "nights", "extras"],
            "properties": {
                "city": {"type": "string"},
                "nights": {"type": ["null", "integer"]},
                "extras": {},
                "budget": {"type": "number", "minimum": 0},
            },
        },
    }
]


@pytest.mark.parametrize(
    ("written", "api", "native"),
    [
        pytest.param(
            '<API>search_books(Query="Dune", limit="ten")</API>',
            "<API>searchBooks(query='Dune', limit=<integer>)</API>",
            '{"name": "searchBooks", "arguments": {"query": "Dune", "limit": "<integer>"}}',
            id="the-api-then-its-own-parameters",
        ),
        pytest.param(
            '<API>searchBooks(query="Düne", lmit=5, colour="red")</API>',
            "<API>searchBooks(query='Düne', limit=5)</API>",
            '{"name": "searchBooks", "arguments": {"query": "Düne", "limit": 5}}',
            id="a-parameter-renamed-another-dropped",
        ),
        pytest.param(
            "<API>listReviews(min_rating=4)</API>",
            "<API>listReviews(min_rating=4, bookId=<integer>)</API>",
            '{"name": "listReviews", "arguments": {"min_rating": 4, "bookId": "<integer>"}}',
            id="a-required-parameter-added-as-a-typed-hole",
        ),
        pytest.param(
            "GET /books/Dune/reviews?min_rating=high",
            "<API>listReviews(bookId=<integer>, min_rating=<integer>)</API>",
            '{"name": "listReviews", "arguments": {"bookId": "<integer>", "min_rating": '
            '"<integer>"}}',
            id="an-http-request-as-the-call-of-its-operation",
        ),
        pytest.param("<API>fetchEverything(x=1)</API>", None, None, id="no-api-suggested"),
        pytest.param("GET /nowhere", None, None, id="a-suggestion-that-is-no-api"),
        pytest.param('<API>searchBooks(query="Dune")</API>', None, None, id="nothing-to-fix"),
        pytest.param("I will look for Dune.", None, None, id="no-call"),
    ],
)
def test_the_corrected_call_applies_every_fix_the_findings_name(
    written: str, api: str | None, native: str | None
) -> None:
    """The call shown with the feedback (``<API>`` form, or JSON for a native tool call):
    every fix the findings name, the API's own parameters checked once it is renamed,
    and a typed hole for what only the user can say."""
    from autofeedback._parse._output import to_requests

    scanner = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None)
    requests, problem = to_requests(written)
    request = requests[0] if requests else None
    found = list(scanner.iter_findings(request)) if request is not None else [problem]
    assert corrected_call(scanner, request, found) == api
    assert corrected_call(scanner, request, found, style="json") == native


def test_the_corrected_call_is_one_round_short_of_the_new_apis_parameters() -> None:
    scanner = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None)
    request = ApiRequest(name="search_books", arguments={"Query": "Dune"})
    found = list(scanner.iter_findings(request))
    assert corrected_call(scanner, request, found, rounds=1) == (
        "<API>searchBooks(Query='Dune')</API>"
    )


def test_a_hole_has_the_type_the_docs_give_or_none() -> None:
    scanner = Scanner(ApiCatalog.from_tools(TRIP), retriever=None)
    for arguments, api in [
        (
            {"City": "Zürich"},
            "<API>plan_trip(city='Zürich', nights=<integer>, extras=<value>)</API>",
        ),
        (
            {"city": "Oslo", "nights": "two", "extras": 1, "budget": -5},
            "<API>plan_trip(city='Oslo', nights=<integer>, extras=1, budget=<number>)</API>",
        ),
    ]:
        request = ApiRequest(name="plan_trip", arguments=arguments)
        assert corrected_call(scanner, request, list(scanner.iter_findings(request))) == api


def test_a_call_of_more_than_256_arguments_gets_no_corrected_copy() -> None:
    scanner = Scanner(ApiCatalog.from_tools(TRIP), retriever=None)
    given = {"city": "Oslo", "nights": 1}
    for count, api in [
        (256, "<API>plan_trip(city='Oslo', nights=1, extras=<value>)</API>"),
        (257, None),
    ]:
        unknown = {f"k{i}": i for i in range(count - len(given))}
        request = ApiRequest(name="plan_trip", arguments={**unknown, **given})
        assert corrected_call(scanner, request, list(scanner.iter_findings(request))) == api


WEATHER = [
    {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "note": {"type": ["null"]},
            },
        },
    }
]


@pytest.mark.parametrize(
    ("request_", "api"),
    [
        pytest.param(
            ApiRequest(name="get_weather", arguments={"City": "Paris"}, double_encoded=True),
            "<API>get_weather(city='Paris')</API>",
            id="arguments-encoded-twice-and-a-name-to-fix",
        ),
        pytest.param(
            ApiRequest(name="get_weather", arguments={"city": "Lyon", "City": "Paris"}),
            "<API>get_weather(city='Lyon')</API>",
            id="a-variant-of-a-name-sent-already-dropped",
        ),
        pytest.param(
            ApiRequest(name="get_weather", arguments={"City": "Paris", "note": 1}),
            "<API>get_weather(city='Paris', note=<value>)</API>",
            id="a-type-that-is-only-null",
        ),
    ],
)
def test_the_corrected_call_of_a_chat_tool_call(request_: ApiRequest, api: str) -> None:
    scanner = Scanner(ApiCatalog.from_tools(WEATHER), retriever=None)
    assert corrected_call(scanner, request_, list(scanner.iter_findings(request_))) == api


def test_a_placeholder_is_a_hole_once_the_api_is_renamed() -> None:
    """The renamed API's own check finds the placeholder the model wrote (E5.3): the
    corrected call leaves a hole there, as the feedback asks for the value (c3c0825)."""
    scanner = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None)
    asked = "Find books about Dune"
    request = ApiRequest(name="search_books", arguments={"query": "<title>"})
    found = list(scanner.iter_findings(request, instruction=asked))
    assert [f.code for f in found] == ["E2.2"]
    assert corrected_call(scanner, request, found, instruction=asked) == (
        "<API>searchBooks(query=<string>)</API>"
    )
    # with the API right, the placeholder alone is a hole too
    written = ApiRequest(name="searchBooks", arguments={"query": "<title>"})
    found = list(scanner.iter_findings(written, instruction=asked))
    assert [f.code for f in found] == ["E5.3"]
    assert corrected_call(scanner, written, found, instruction=asked) == (
        "<API>searchBooks(query=<string>)</API>"
    )


def test_arguments_encoded_twice_and_nothing_else_wrong_get_no_corrected_call() -> None:
    """Their one finding (E4.1 at ``arguments``) names nothing to change in the call's
    words: no corrected copy of it is shown; beside a misnamed parameter, the copy has
    the parameter renamed (issue 39: ``_apply`` 13 survived)."""
    import json

    from autofeedback._parse._output import to_requests

    tool = {
        "name": "get_weather",
        "description": "Weather.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    }
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    shown = []
    for arguments in ({"city": "Paris"}, {"city": "Paris", "dayz": 2}):
        call = {"name": "get_weather", "arguments": json.dumps(json.dumps(arguments))}
        [request], problem = to_requests(call)
        assert problem is None and request.double_encoded
        shown.append(corrected_call(scanner, request, list(scanner.iter_findings(request))))
    assert shown == [None, "<API>get_weather(city='Paris', days=2)</API>"]

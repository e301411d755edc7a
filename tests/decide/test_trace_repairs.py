"""A trace's step that made up an id (E5.3) gets the one value an earlier response gave,
written where the model wrote the made-up one and nowhere else: in the path (behind the
server's own base path, a documented trailing slash kept) or in the query (in the URL or
given apart); what is not that certain is left to the model."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Decider, Scanner
from autofeedback.decide import Decision
from autofeedback.sequences import sequence_from_program, sequence_from_record

BASE = "https://api.example.org/v1"
INT = {"type": "integer"}
TEXT = {"type": "string"}


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def _list(item: Any) -> dict[str, Any]:
    return {"type": "array", "items": item}


def _get(op_id: str, params: list[dict[str, Any]], gives: Any) -> dict[str, Any]:
    content = {"application/json": {"schema": gives}}
    return {
        "get": {
            "operationId": op_id,
            "parameters": params,
            "responses": {"200": {"description": "ok", "content": content}},
        }
    }


def _param(name: str, where: str, schema: Any = INT) -> dict[str, Any]:
    return {"name": name, "in": where, "required": True, "schema": schema}


LIBRARY: dict[str, Any] = {
    "openapi": "3.0.0",
    "info": {"title": "library", "version": "1"},
    "servers": [{"url": BASE}],
    "paths": {
        "/books": _get(
            "searchBooks", [_param("q", "query", TEXT)], _obj(books=_list(_obj(id=INT)))
        ),
        # documented with a trailing slash, as many servers route it
        "/books/{bookId}/": _get("getBook", [_param("bookId", "path")], _obj(id=INT)),
        "/reviews": _get(
            "listReviews",
            [_param("bookId", "query"), _param("lang", "query", TEXT)],
            _obj(reviews=_list(_obj(id=INT, text=TEXT))),
        ),
        "/reviews/top": _get("topReviews", [], _obj(reviews=_list(_obj(id=INT, bookId=INT)))),
        "/featured": _get("getFeatured", [], _obj(book=_obj(id=INT))),
        "/authors": _get("listAuthors", [], _obj(authors=_list(_obj(id=INT)))),
        "/authors/{authorId}/books/{bookId}/": _get(
            "getAuthorBook", [_param("authorId", "path"), _param("bookId", "path")], _obj(id=INT)
        ),
    },
}


@pytest.fixture(scope="module")
def decider() -> Decider:
    return Decider(Scanner(ApiCatalog.from_obj(LIBRARY), retriever=None))


def _search(*ids: Any) -> dict[str, Any]:
    return {
        "request": {"method": "GET", "url": f"{BASE}/books?q=Dune"},
        "response": {"status": 200, "body": {"books": [{"id": i} for i in ids]}},
    }


def _step(
    decider: Decider, steps: list[dict[str, Any]], instruction: str = "Show me the book Dune"
) -> Decision:
    seq = sequence_from_record({"instruction": instruction, "steps": steps})
    [decision] = decider.decide_steps(seq, len(steps) - 1)
    return decision


def _get_url(url: str, **request: Any) -> dict[str, Any]:
    return {"request": {"method": "GET", "url": f"{BASE}{url}", **request}}


@pytest.mark.parametrize(
    ("written", "sent"),
    [
        ("/books/XXX/", "/books/7/"),  # a placeholder
        ("/books/YOUR_BOOK_ID/", "/books/7/"),
        ("/books/XXX", "/books/7"),  # the model's own form, without the slash
        ("/reviews?bookId=XXX&lang=en", "/reviews?bookId=7&lang=en"),
        ("/reviews?lang=en%20GB&bookId=%3Cbook_id%3E", "/reviews?lang=en%20GB&bookId=7"),
    ],
)
def test_the_stand_in_id_gets_the_one_an_earlier_response_gave(
    decider: Decider, written: str, sent: str
) -> None:
    decision = _step(decider, [_search(7), _get_url(written)])
    assert (decision.action, decision.reason) == ("forward", "repaired")
    assert [(r.code, r.after) for r in decision.repairs] == [("E5.3", 7)]
    assert decision.request is not None and decision.request.url == f"{BASE}{sent}"


def test_the_stand_in_id_given_apart_from_the_url_gets_it_there(decider: Decider) -> None:
    step = _get_url("/reviews", params={"bookId": "XXX", "lang": "en"})
    decision = _step(decider, [_search(7), step])
    assert [str(r) for r in decision.repairs] == ["E5.3 query.bookId: 'XXX' -> 7"]
    assert decision.request is not None
    assert (decision.request.url, decision.request.params) == (
        f"{BASE}/reviews",
        {"bookId": 7, "lang": "en"},
    )


@pytest.mark.parametrize(
    "step",
    [
        _get_url("/books/8/"),
        _get_url("/reviews?bookId=8&lang=en"),
        _get_url("/reviews", params={"bookId": 8, "lang": "en"}),
    ],
    ids=["path", "query", "params"],
)
def test_a_made_up_id_the_model_wrote_is_its_own_and_left_to_it(
    decider: Decider, step: dict[str, Any]
) -> None:
    # 8 is given by no one, and the search before it answered 7: but 8 is the model's
    # value, and 7 in its place would fetch another book; the model is told where to read
    # one (a stand-in such as XXX is read in, above)
    decision = _step(decider, [_search(7), step])
    assert (decision.action, decision.repairs) == ("feedback", ())
    assert [f.code for f in decision.errors] == ["E5.3"]
    assert decision.request is not None
    assert decision.request.url == step["request"]["url"]


@pytest.mark.parametrize(
    ("steps", "instruction"),
    [
        # the query names it twice: which one the step meant is the model's to say
        ([_search(7), _get_url("/reviews?bookId=8&bookId=9&lang=en")], "Reviews of Dune"),
        # a title where the id goes is a wrong value (E4.1), not a made-up id
        ([_search(7), _get_url("/books/dune/")], "Show me the book Dune"),
    ],
)
def test_what_is_not_certain_is_left_to_the_model(
    decider: Decider, steps: list[dict[str, Any]], instruction: str
) -> None:
    decision = _step(decider, steps, instruction)
    assert (decision.action, decision.repairs) == ("feedback", ())
    assert decision.request is not None
    assert decision.request.url == steps[-1]["request"]["url"]


def _answered(url: str, body: Any) -> dict[str, Any]:
    return {
        "request": {"method": "GET", "url": f"{BASE}{url}"},
        "response": {"status": 200, "body": body},
    }


@pytest.mark.parametrize(
    ("earlier", "instruction"),
    [
        pytest.param(
            [_get_url("/books?q=Emma"), _search(7)], "Show me Dune", id="past-a-step-not-answered"
        ),
        pytest.param(
            [_answered("/shelves", {"shelves": [{"id": 4}]}), _search(7)],
            "Show me Dune",
            id="past-an-undocumented-endpoint",
        ),
        pytest.param(
            [_answered("/authors", {"authors": [{"id": 4}]}), _search(7)],
            "Show me Dune",
            id="past-a-weak-guess",  # an author's id is no book's
        ),
        pytest.param(
            [_answered("/books?q=Dune", {"books": [{"id": None}, {"id": 7}]})],
            "Show me Dune",
            id="past-a-hit-without-an-id",
        ),
        pytest.param(
            [_answered("/reviews/top", {"reviews": [{"id": 3, "bookId": 7}]})],
            "Show me the book of the top review",
            id="the-field-named-for-it-over-a-bare-id",
        ),
        pytest.param(
            [_answered("/featured", {"book": {"id": 7}})],
            "Show me last week's featured book",
            id="no-list-to-count-in",  # "last" counts items of a list; there is none
        ),
    ],
)
def test_the_id_is_read_from_the_one_earlier_response_that_holds_it(
    decider: Decider, earlier: list[dict[str, Any]], instruction: str
) -> None:
    decision = _step(decider, [*earlier, _get_url("/books/XXX/")], instruction)
    assert [str(r) for r in decision.repairs] == ["E5.3 path.bookId: 'XXX' -> 7"]
    assert decision.request is not None and decision.request.url == f"{BASE}/books/7/"


def test_a_later_step_s_response_is_not_read(decider: Decider) -> None:
    seq = sequence_from_record(
        {"instruction": "Show me Dune", "steps": [_search(7), _get_url("/books/XXX/"), _search(9)]}
    )
    decision = decider.decide_steps(seq, 1)[0]
    assert decision.request is not None and decision.request.url == f"{BASE}/books/7/"


@pytest.mark.parametrize(
    ("written", "sent", "left"),
    [
        ("/reviews?bookId=XXX", "/reviews?bookId=7", ("E3.4", ("query", "lang"))),
        # the author's id: no earlier response gave one, the model is asked
        ("/authors/A9/books/XXX/", "/authors/A9/books/7/", ("E5.3", ("path", "authorId"))),
    ],
)
def test_the_id_is_grounded_beside_an_error_left_to_the_model(
    decider: Decider, written: str, sent: str, left: tuple[str, tuple[str, str]]
) -> None:
    decision = _step(decider, [_search(7), _get_url(written)])
    assert decision.action == "feedback"
    assert [(r.code, r.after) for r in decision.repairs] == [("E5.3", 7)]
    assert [(f.code, f.location) for f in decision.errors] == [left]
    assert decision.request is not None and decision.request.url == f"{BASE}{sent}"


def test_a_program_s_step_is_repaired_in_the_program_s_text_only(decider: Decider) -> None:
    program = 'b = searchBooks(q="Dune")\ngetBook(bookid=b.books[0].id)'
    seq = sequence_from_program(program, instruction="Show me Dune")
    step = decider.decide_steps(seq, 1)[0]
    assert (step.action, step.repairs) == ("feedback", ())
    assert [f.code for f in step.errors] == ["E3.2", "E3.4"]
    whole = decider.decide_program(program, instruction="Show me Dune")
    assert whole.text == 'b = searchBooks(q="Dune")\ngetBook(bookId=b.books[0].id)'


# a spec with what the library lacks: a query of two ids, a language read from a list
SHELF: dict[str, Any] = {
    **LIBRARY,
    "paths": {
        **LIBRARY["paths"],
        "/ratings": _get(
            "listRatings",
            [_param("bookId", "query"), _param("authorId", "query")],
            _obj(ratings=_list(_obj(stars=INT))),
        ),
        "/languages": _get("listLanguages", [], _obj(languages=_list(_obj(lang=TEXT)))),
        "/blurbs": _get(
            "getBlurb",
            [_param("lang", "query", {"type": "string", "enum": ["en", "fr"]})],
            _obj(text=TEXT),
        ),
    },
}


@pytest.fixture
def shelf() -> Decider:
    return Decider(Scanner(ApiCatalog.from_obj(SHELF), retriever=None))


@pytest.mark.parametrize(
    ("earlier", "written", "sent", "repaired", "left"),
    [
        pytest.param(
            [_search(7)],
            "/authors/XXX/books/XXX/",
            "/authors/XXX/books/7/",
            "E5.3 path.bookId: 'XXX' -> 7",
            ("path", "authorId"),
            id="the-first-given-by-no-response",
        ),
        pytest.param(
            [_answered("/authors", {"authors": [{"id": 4}]}), _search(7)],
            "/ratings?bookId=XXX&bookId=XXX&authorId=XXX",
            "/ratings?bookId=XXX&bookId=XXX&authorId=4",
            "E5.3 query.authorId: 'XXX' -> 4",
            ("query", "bookId"),
            id="the-first-given-twice",
        ),
    ],
)
def test_of_two_stand_ins_the_second_is_read_in_past_the_first_left(
    shelf: Decider,
    earlier: list[dict[str, Any]],
    written: str,
    sent: str,
    repaired: str,
    left: tuple[str, str],
) -> None:
    # the first stand-in has no value to take (no response gave an author's id) or no
    # one place to take it (the query names it twice): the second is read in all the same
    decision = _step(shelf, [*earlier, _get_url(written)], "Show me Dune")
    assert decision.action == "feedback"
    assert [str(r) for r in decision.repairs] == [repaired]
    assert [(f.code, f.location) for f in decision.errors] == [("E5.3", left)]
    assert decision.request is not None and decision.request.url == f"{BASE}{sent}"


def test_a_wrong_enum_value_in_words_is_the_model_s_not_a_stand_in_read_in(
    shelf: Decider,
) -> None:
    # "your language" reads as a stand-in, but where no identifier goes it is a value
    # outside the enum (E4.2), not a made-up id (E5.3): the one language the earlier
    # response gave is not written in its place; the model is told the enum
    steps = [
        _answered("/languages", {"languages": [{"lang": "en"}]}),
        _get_url("/blurbs?lang=your%20language"),
    ]
    decision = _step(shelf, steps, "A blurb of Dune")
    assert (decision.action, decision.repairs) == ("feedback", ())
    assert [(f.code, f.location) for f in decision.errors] == [("E4.2", ("query", "lang"))]
    assert decision.request is not None
    assert decision.request.url == f"{BASE}/blurbs?lang=your%20language"


def test_a_tool_a_search_documented_gets_its_stand_in_from_an_earlier_response() -> None:
    """The tool is listed for the search only (deferred): the scanner's catalog lacks it,
    the checker's data-flow graph is built from every tool. The step that calls it is
    judged against the tool the search documented, so its stand-in is read from the one
    earlier response that holds a device id."""
    from autofeedback.sequences import FlowGraph, SequenceChecker

    def takes(*names: str) -> dict[str, Any]:
        return {"type": "object", "properties": {n: TEXT for n in names}, "required": [*names]}

    search = {"name": "search_tools", "parameters": takes("q")}
    gives = _obj(devices=_list(_obj(id=TEXT)))
    devices = {"name": "devices", "parameters": takes(), "outputSchema": gives}
    play = {"name": "play", "parameters": takes("device_id")}
    scanner = Scanner(ApiCatalog.from_tools([search, devices]), retriever=None)
    graph = FlowGraph.from_catalog(ApiCatalog.from_tools([search, devices, play]))
    steps = [
        {
            "call": {"name": "search_tools", "arguments": {"q": "play"}},
            "response": {"tools": [play]},
        },
        {
            "call": {"name": "devices", "arguments": {}},
            "response": {"devices": [{"id": "kitchen-7"}]},
        },
        {"call": {"name": "play", "arguments": {"device_id": "<device_id>"}}},
    ]
    seq = sequence_from_record({"instruction": "play music", "steps": steps})
    checker = SequenceChecker(scanner, graph=graph)
    [decision] = Decider(scanner).decide_steps(seq, 2, checker=checker)
    assert (decision.action, decision.errors) == ("forward", [])
    assert [str(r) for r in decision.repairs] == [
        "E5.3 argument.device_id: '<device_id>' -> 'kitchen-7'"
    ]
    assert decision.request is not None
    assert decision.request.arguments == {"device_id": "kitchen-7"}

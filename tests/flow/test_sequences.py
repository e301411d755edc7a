"""Sequences checked end to end: programs, traces, chat logs and GraphQL-RestBench records,
against the bundled bookshop spec and real GraphQL-RestBench samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _support.account_tools import ACCOUNT_TOOLS

from autofeedback import ApiCatalog
from autofeedback.audit._audit import _CatalogCache, audit_lines, audit_record
from autofeedback.decide._feedback import render_feedback
from autofeedback.flow import FlowGraph
from autofeedback.flow._sequence import (
    sequence_from_chat,
    sequence_from_program,
    sequence_from_record,
)
from autofeedback.scanner._scan import Scanner
from autofeedback.scanner._sequences import SequenceChecker

INSTRUCTION = "Show me the book Dune"

TOKEN_TOOLS = ACCOUNT_TOOLS


@pytest.fixture(scope="module")
def checker(bookshop: ApiCatalog) -> SequenceChecker:
    return SequenceChecker(
        Scanner(bookshop, retriever=None), graph=FlowGraph.from_catalog(bookshop)
    )


def codes(checker: SequenceChecker, program: str, instruction: str = INSTRUCTION) -> list[str]:
    seq = sequence_from_program(program, instruction=instruction)
    return [f.code for f in checker.check(seq)]


def test_search_then_detail_is_clean(checker: SequenceChecker) -> None:
    assert codes(checker, 'b = searchBooks(query="Dune")\ngetBook(bookId=b.books[0].id)') == []


def test_an_unknown_name_beside_a_reference_is_not_told_to_become_it(
    checker: SequenceChecker,
) -> None:
    """``bookId`` is sent, by reference: ``stars`` is no misspelt ``bookId`` (found by the
    mutation pass of decide/, issue 39)."""
    program = 'r = searchBooks(query="Dune")\nlistReviews(bookId=r.books[0].id, stars=4)'
    seq = sequence_from_program(program, instruction=INSTRUCTION)
    assert [(f.code, f.suggestion, f.message) for f in checker.check(seq)] == [
        ("E3", None, "unknown parameter 'stars'; listReviews takes: bookId, min_rating, page")
    ]


def test_e5_1_variable_nothing_produced(checker: SequenceChecker) -> None:
    assert codes(checker, "getBook(bookId=b.books[0].id)") == ["E5.1"]
    # assigned later is not produced earlier
    assert codes(checker, 'getBook(bookId=b.books[0].id)\nb = searchBooks(query="Dune")') == [
        "E5.1"
    ]


def test_e5_2_path_not_documented_names_the_closest(checker: SequenceChecker) -> None:
    seq = sequence_from_program(
        'b = searchBooks(query="Dune")\ngetBook(bookId=b.book[0].id)', instruction=INSTRUCTION
    )
    (f,) = checker.check(seq)
    assert (f.code, f.suggestion) == ("E5.2", "books[].id")
    assert f.location == ("step[1]", "path", "bookId")
    assert "Use the documented path 'books[].id'" in render_feedback(f)


def test_e5_4_array_where_a_scalar_id_goes(checker: SequenceChecker) -> None:
    assert codes(checker, 'b = searchBooks(query="Dune")\ngetBook(bookId=b.books)') == ["E5.4"]
    # a list comprehension is an array too
    assert codes(
        checker, 'b = searchBooks(query="Dune")\ngetBook(bookId=[x.id for x in b.books])'
    ) == ["E5.4"]


def test_e5_3_placeholder_and_made_up_id(checker: SequenceChecker) -> None:
    assert "E5.3" in codes(checker, 'getBook(bookId="<book_id>")')
    seq = sequence_from_program("getBook(bookId=42)", instruction=INSTRUCTION)
    (f,) = checker.check(seq)
    assert f.code == "E5.3" and f.suggestion and "first: its response has" in f.suggestion
    # the same id given by the user is grounded
    assert codes(checker, "getBook(bookId=42)", "Show me book 42") == []


def test_ordinary_values_are_not_questioned(checker: SequenceChecker) -> None:
    program = 'searchBooks(query="Dune Messiah", genre="fiction", limit=5, sort="newest")'
    assert codes(checker, program, "find me something to read") == []


def test_trace_value_from_an_earlier_response_is_grounded(bookshop: ApiCatalog) -> None:
    cache = _CatalogCache(bookshop, None)
    steps: list[dict[str, Any]] = [
        {
            "request": {"method": "GET", "url": "/books?query=Dune"},
            "response": {"status": 200, "body": {"total": 1, "books": [{"id": 7}]}},
        },
        {"request": {"method": "GET", "url": "/books/7"}},
    ]
    ok = audit_record({"id": "t", "instruction": INSTRUCTION, "steps": steps}, 1, cache)
    assert ok.error is None and ok.ok, [str(f) for f in ok.findings]
    steps[1] = {"request": {"method": "GET", "url": "/books/8"}}
    bad = audit_record({"id": "t", "instruction": INSTRUCTION, "steps": steps}, 1, cache)
    assert [f.code for f in bad.findings] == ["E5.3"]
    assert bad.findings[0].location[0] == "step[1]"


def test_tools_an_earlier_response_documents_join_the_catalog() -> None:
    cache = _CatalogCache(None, None)
    search = {
        "name": "ToolSearcher",
        "parameters": {"type": "object", "properties": {"keywords": {"type": "string"}}},
    }
    call = {"call": {"name": "GetUserToken", "arguments": {"username": "ann", "password": "pw"}}}
    record: dict[str, Any] = {
        "instruction": "Log in as ann with password pw",
        "tools": [search],
        "steps": [
            {
                "call": {"name": "ToolSearcher", "arguments": {"keywords": "token"}},
                "response": {"status": 200, "body": TOKEN_TOOLS[0]},
            },
            call,
        ],
    }
    assert audit_record(record, 1, cache).ok
    record["steps"] = [call]  # nobody documented it: an unknown API
    assert [f.code for f in audit_record(record, 1, cache).findings] == ["E2"]


def test_chat_log_with_tool_answers() -> None:
    messages = [
        {"role": "user", "content": "Delete my account"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "DeleteAccount",
                        "arguments": json.dumps({"token": "your_token_here"}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"error": "invalid token"}'},
    ]
    seq = sequence_from_chat(messages)
    assert seq.instruction == "Delete my account"
    assert seq.steps[0].response is not None
    result = audit_record(
        {"id": 1, "tools": TOKEN_TOOLS, "messages": messages}, 1, _CatalogCache(None, None)
    )
    (f,) = result.findings
    assert f.code == "E5.3" and "GetUserToken" in f.message
    assert "your_token_here" not in json.dumps(result.as_dict())  # a credential's value


def test_single_call_gets_e5_3_only_with_an_instruction() -> None:
    scanner = Scanner(ApiCatalog.from_tools(TOKEN_TOOLS), retriever=None)
    f = scanner.scan("DeleteAccount(token='your_token_here')", instruction="Delete my account")
    assert f is not None and f.code == "E5.3"
    assert "call GetUserToken first: its response has `token`" in render_feedback(f)
    assert scanner.scan("DeleteAccount(token='your_token_here')") is None
    # a real-looking token may come from the dialogue before this one call: a warning
    (made_up,) = scanner.iter_findings("DeleteAccount(token='a81kd9')", instruction="Delete it")
    assert (made_up.code, made_up.severity) == ("E5.3", "warning")
    # the user's own credentials in a call that needs them are fine
    assert (
        scanner.scan(
            "GetUserToken(username='ann', password='s3cr3t')",
            instruction="log in as ann, password s3cr3t",
        )
        is None
    )


def test_bad_sequence_records_are_their_own_errors() -> None:
    tools = json.dumps(TOKEN_TOOLS)
    lines = [
        json.dumps({"id": 1, "tools": TOKEN_TOOLS, "steps": "nope"}),
        json.dumps({"id": 2, "tools": TOKEN_TOOLS, "output": "x = F(", "responses": 3}),
        json.dumps({"id": 3, "tools": "{not json", "output": "r = F()", "responses": {}}),
        json.dumps({"id": 4, "tools": tools, "output": "r = GetUserToken()", "responses": "type"}),
        json.dumps({"id": 5, "tools": TOKEN_TOOLS, "steps": [1, {"call": 2}]}),
    ]
    results = list(audit_lines(lines, None, retriever=None))
    assert [r.error is not None for r in results] == [True, True, True, True, False]
    assert [f.code for f in results[4].findings] == ["E1", "E1"]


def _rows(shared: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for name in ("train", "valid", "test")
        for line in (shared / "graphqlrestbench" / f"{name}.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]


def test_graphqlrestbench_record_through_the_audit(shared_data_dir: Path) -> None:
    row = _rows(shared_data_dir)[0]
    record = {
        "id": "s0",
        "instruction": row["utterance"],
        "tools": row["function_specs"],
        "responses": row["GraphQL_schema"],
        "output": row["output"],
    }
    cache = _CatalogCache(None, None)
    gold = audit_record(record, 1, cache)
    assert not [f for f in gold.findings if f.code.startswith("E5")]
    record["output"] = row["output"].replace("response_obj.item.id", "response_obj.items.id")
    (f,) = [f for f in audit_record(record, 1, cache).findings if f.code.startswith("E5")]
    assert (f.code, f.suggestion) == ("E5.2", "item.id")


def test_e2_1_is_asked_of_the_sequence(bookshop: ApiCatalog, api_retriever: Any) -> None:
    from autofeedback.checks._check_name import check_selection

    instruction = "Show me the reviews of Dune with at least 4 stars"
    # alone, the search does not fit the instruction...
    search = bookshop.get("searchBooks")
    assert search is not None
    assert check_selection(search, instruction, bookshop, api_retriever) is not None
    # ...as the prerequisite of the call that does, it is no E2.1
    checker = SequenceChecker(
        Scanner(bookshop, retriever=api_retriever), graph=FlowGraph.from_catalog(bookshop)
    )
    program = 'b = searchBooks(query="Dune")\nlistReviews(bookId=b.books[0].id, min_rating=4)'
    assert checker.check(sequence_from_program(program, instruction=instruction)) == []
    (f,) = checker.check(sequence_from_program("listGenres()", instruction=instruction))
    assert (f.code, f.location[0], f.suggestion) == ("E2.1", "step[0]", "listReviews")


def test_a_destructive_goal_that_does_not_fit_is_an_e2_1_error_in_a_sequence_too(
    bookshop: ApiCatalog, api_retriever: Any
) -> None:
    # a single call of a delete that does not fit is an error at any margin (a wrong
    # delete cannot be undone); the sequence's margin made it a warning
    checker = SequenceChecker(
        Scanner(bookshop, retriever=api_retriever), graph=FlowGraph.from_catalog(bookshop)
    )
    instruction = "Who wrote Dune? My order is ORD-123456."
    seq = sequence_from_program("cancelOrder(orderId='ORD-123456')", instruction=instruction)
    (f,) = checker.check(seq)
    assert (f.code, f.severity, f.location[0]) == ("E2.1", "error", "step[0]")
    # the same goal that fits is none
    fits = sequence_from_program(
        "cancelOrder(orderId='ORD-123456')", instruction="Cancel my order ORD-123456"
    )
    assert checker.check(fits) == []


def test_single_call_placeholder_names_a_producer_the_user_can_call(
    bookshop: ApiCatalog,
) -> None:
    f = Scanner(bookshop, retriever=None).scan(
        "getOrder(orderId='<order_id>')", instruction="Where is my order?"
    )
    # its E4.2 (pattern) is left out: the placeholder's feedback says more
    assert f is not None and f.code == "E5.3"
    assert f.suggestion == "call createOrder first: its response has `id`"


def test_scan_takes_a_program_as_one_sequence(bookshop: ApiCatalog) -> None:
    from autofeedback import scan

    f = scan(
        'b = searchBooks(query="Dune")\ngetBook(bookId=b.book[0].id)', bookshop, retriever=None
    )
    assert f is not None and (f.code, f.suggestion) == ("E5.2", "books[].id")
    ok = 'b = searchBooks(query="Dune")\ngetBook(bookId=b.books[0].id)'
    assert scan(ok, bookshop, retriever=None) is None
    # calls that do not read each other stay separate requests, as before
    two = 'searchBooks(query="Dune")\ngetBook(bookId="x")'
    assert [f.location[0] for f in Scanner(bookshop, retriever=None).iter_findings(two)] == [
        "request[1]"
    ]


def test_chat_content_parts_ground_values() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "my token is tk-77q"}]},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "DeleteAccount",
                        "arguments": json.dumps({"token": "tk-77q"}),
                    },
                }
            ],
        },
    ]
    seq = sequence_from_chat(messages)
    assert seq.instruction == "my token is tk-77q"
    checker = SequenceChecker(
        Scanner(ApiCatalog.from_tools(TOKEN_TOOLS), retriever=None),
        graph=FlowGraph.from_catalog(ApiCatalog.from_tools(TOKEN_TOOLS)),
    )
    assert checker.check(seq) == []


COLLECTION_TOOLS: list[dict[str, Any]] = [
    {
        "name": "search_collection",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        "outputSchema": {
            "type": "object",
            "properties": {
                "results": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
                }
            },
        },
    },
    {
        "name": "get_collection",
        "parameters": {
            "type": "object",
            "properties": {"collection_id": {"type": "integer"}},
            "required": ["collection_id"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "parts": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
                },
            },
        },
    },
    {
        "name": "get_credits",
        "parameters": {
            "type": "object",
            "properties": {"movie_id": {"type": "integer"}},
            "required": ["movie_id"],
        },
    },
]


def test_e5_2_a_reference_into_a_list_is_offered_a_list_field() -> None:
    """GraphQL-RestBench gql-train-50: ``c.results[0].id`` of a collection, whose
    response has its own ``id`` and ``parts[].id``: the list's field is offered, and the
    feedback shows it (``id`` inside ``'results[].id'`` is no offer of ``parts[].id``)."""
    from autofeedback.decide._feedback import hint as _hint

    catalog = ApiCatalog.from_tools(COLLECTION_TOOLS)
    checker = SequenceChecker(
        Scanner(catalog, retriever=None), graph=FlowGraph.from_catalog(catalog)
    )
    program = (
        'r = search_collection(query="Star Wars")\n'
        "c = get_collection(collection_id=r.results[0].id)\n"
        "get_credits(movie_id=c.results[0].id)"
    )
    (f,) = checker.check(sequence_from_program(program, instruction="Star Wars cast"))
    assert (f.code, f.suggestion) == ("E5.2", "parts[].id")
    assert _hint(f) == " (did you mean parts[].id?)"


@pytest.mark.parametrize("value", [0, "0", 123, "123", 12345, "12345", "string"])
def test_an_id_an_earlier_response_returned_is_grounded_even_if_it_looks_made_up(
    value: object,
) -> None:
    # issue 30: `12345` or `0` as an id is a model's stand-in only when nothing gave it;
    # the weak-placeholder rule used to run before grounding (E5.3 "not given by ... an
    # earlier response" for the id the previous response had just returned)
    catalog = ApiCatalog.from_tools(
        [
            {
                "name": "find_order",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                "outputSchema": {"type": "object", "properties": {"order_id": {}}},
            },
            {
                "name": "cancel_order",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": ["string", "integer"]}},
                },
            },
        ]
    )
    checker = SequenceChecker(
        Scanner(catalog, retriever=None), graph=FlowGraph.from_catalog(catalog)
    )
    steps: list[dict[str, Any]] = [
        {
            "call": {"name": "find_order", "arguments": {"q": "my last order"}},
            "response": {"status": 200, "body": {"order_id": value}},
        },
        {"call": {"name": "cancel_order", "arguments": {"order_id": value}}},
    ]
    seq = sequence_from_record({"instruction": "Cancel my last order", "steps": steps})
    assert checker.check(seq) == []
    # the same value that no response returned is still a stand-in
    steps[0]["response"] = {"status": 200, "body": {"order_id": "A-981"}}
    seq = sequence_from_record({"instruction": "Cancel my last order", "steps": steps})
    assert [f.code for f in checker.check(seq)] == ["E5.3"]


def test_a_grounded_id_keeps_its_value_error(checker: SequenceChecker) -> None:
    # the value is the one the search returned, so it is no placeholder whose E4 an E5.3
    # replaces: the documented minimum (1) still applies
    trace = sequence_from_record(
        {
            "instruction": INSTRUCTION,
            "steps": [
                {
                    "request": {"method": "GET", "url": "/books?query=Dune"},
                    "response": {"status": 200, "body": {"books": [{"id": "0"}]}},
                },
                {"call": {"name": "getBook", "arguments": {"bookId": "0"}}},
            ],
        }
    )
    assert [f.code for f in checker.check(trace)] == ["E4.2"]


@pytest.mark.parametrize(
    "movies",
    [
        {"type": "array"},  # documented without `items`
        {"type": "array", "items": True},
        {"type": "array", "items": {"type": "object"}},  # elements without fields
    ],
)
def test_an_open_response_schema_is_open(movies: dict[str, Any]) -> None:
    # issue 30: `r.movies[0].id` where `movies: {type: array}` was E5.2 "documented
    # response has no 'movies[]'"; what the docs leave open is undocumented, not absent
    catalog = ApiCatalog.from_tools(
        [
            {
                "name": "search_movies",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
                "outputSchema": {"type": "object", "properties": {"movies": movies}},
            },
            {
                "name": "get_movie",
                "parameters": {"type": "object", "properties": {"movie_id": {"type": "integer"}}},
            },
        ]
    )
    checker = SequenceChecker(
        Scanner(catalog, retriever=None), graph=FlowGraph.from_catalog(catalog)
    )
    program = 'r = search_movies(query="Dune")\nget_movie(movie_id=r.movies[0].id)'
    assert checker.check(sequence_from_program(program, instruction="Show me Dune")) == []
    # a field the response does not document is still E5.2
    program = 'r = search_movies(query="Dune")\nget_movie(movie_id=r.film[0].id)'
    codes = [f.code for f in checker.check(sequence_from_program(program))]
    assert codes == ["E5.2"]


@pytest.mark.parametrize(
    "broken",
    [
        "listReviews(bookId=b.books[0].id\u200b)",  # a zero-width space
        "listReviews(bookId=b.books[0].id",  # cut off at the end
    ],
)
def test_an_unreadable_line_is_e1_and_the_rest_is_still_checked(
    bookshop: ApiCatalog, broken: str
) -> None:
    # issue 30: one unparsable line made the whole program unreadable as a program, so
    # the E5.2 of the line before it was dropped and the record audited clean
    program = f'b = searchBooks(query="Dune")\ngetBook(bookId=b.book[0].id)\n{broken}'
    expected = [("E1", ("line[3]",)), ("E5.2", ("step[1]", "path", "bookId"))]
    found = Scanner(bookshop, retriever=None).iter_findings(program, instruction=INSTRUCTION)
    assert [(f.code, f.location) for f in found] == expected
    result = audit_record(
        {"id": 1, "instruction": INSTRUCTION, "output": program}, 1, _CatalogCache(bookshop, None)
    )
    assert [(f.code, f.location) for f in result.findings] == expected and not result.ok
    assert "cannot be parsed" in result.findings[0].message


def test_text_around_a_program_is_not_a_call(checker: SequenceChecker) -> None:
    program = (
        'Here it is:\n```python\nb = searchBooks(query="Dune")\ngetBook(bookId=b.book[0].id)\n```'
    )
    assert codes(checker, program) == ["E5.2"]
    # a bracket never closed does not swallow the calls after it
    program = (
        'b = searchBooks(query="Dune"\nc = searchBooks(query="Dune")\ngetBook(bookId=c.books[0].id)'
    )
    seq = sequence_from_program(program, instruction=INSTRUCTION)
    assert [s.name for s in seq.steps] == ["searchBooks", "getBook"]
    assert [(f.code, f.location) for f in checker.check(seq)] == [("E1", ("line[1]",))]


def test_e5_3_hint_producer_named_by_the_description_breaks_a_tie() -> None:
    def returns(name: str, properties: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": name,
            "parameters": {"type": "object", "properties": {}},
            "outputSchema": {"type": "object", "properties": properties},
        }

    uri = {"type": "string"}
    listed = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "object", "properties": {"uri": uri}}}
        },
    }
    play = {
        "name": "play",
        "parameters": {
            "type": "object",
            "properties": {
                "context_uri": {
                    "type": "string",
                    "description": "URI of the context to play. "
                    "Valid contexts are albums and playlists.",
                }
            },
        },
    }
    tools = [returns("getProfile", {"uri": uri}), returns("browse", {"albums": listed}), play]
    catalog = ApiCatalog.from_tools(tools)
    checker = SequenceChecker(
        Scanner(catalog, retriever=None), graph=FlowGraph.from_catalog(catalog)
    )
    tied = checker.producers("play", "context_uri")
    assert {p.operation for p in tied} == {"getProfile", "browse"}
    seq = sequence_from_program('play(context_uri="x:album:1Je1IMUlB")', instruction="Play music")
    (f,) = checker.check(seq)
    assert f.suggestion == "call browse first: its response has `albums.items[].uri`"
    # without the description, the tie stays as the graph ranks it
    del play["parameters"]["properties"]["context_uri"]["description"]  # type: ignore[index]
    catalog = ApiCatalog.from_tools(tools)
    plain = SequenceChecker(Scanner(catalog, retriever=None), graph=FlowGraph.from_catalog(catalog))
    (g,) = plain.check(seq)
    assert g.suggestion == f"call {tied[0].operation} first: its response has `{tied[0].path}`"


def test_a_programs_values_are_grounded_by_the_context_as_a_calls_are(
    bookshop: ApiCatalog,
) -> None:
    """An id the rest of the dialogue gives (a system prompt) is not made up, in a program
    as in a single call: through the scanner, the decision and the audit (found by the
    mutation pass of decide/, issue 39)."""
    from autofeedback.decide import Decider

    scanner = Scanner(bookshop, retriever=None)
    program = "r = getBook(bookId=7)\nlistReviews(bookId=r.id)"
    asked, seen = "Show me that book and its reviews", "The user is looking at book 7."
    assert [f.code for f in scanner.iter_findings(program, instruction=asked)] == ["E5.3"]
    assert list(scanner.iter_findings(program, instruction=asked, context=seen)) == []
    [decision] = Decider(scanner).decide(program, instruction=asked, context=seen)
    assert (decision.action, decision.findings) == ("forward", ())
    record = {"instruction": asked, "context": seen, "output": program}
    [result] = audit_lines([json.dumps(record)], bookshop, retriever=None)
    assert (result.ok, result.findings) == (True, ())
    [result] = audit_lines([json.dumps({**record, "context": None})], bookshop, retriever=None)
    assert [f.code for f in result.findings] == ["E5.3"]


_PAGED = [
    {
        "name": "pages",
        "parameters": {"type": "object", "properties": {}},
        "outputSchema": {"type": "object", "properties": {"next_offset": {"type": "integer"}}},
        "annotations": {"readOnlyHint": True},
    },
]
NEEDS_OFFSET = {"dependentRequired": {"limit": ["offset"]}}


@pytest.mark.parametrize(
    ("whole", "program", "found"),
    [
        # offset is given, read from the earlier page: limit has what it needs
        (NEEDS_OFFSET, "list_items(limit=5, offset=p.next_offset)", []),
        (NEEDS_OFFSET, "list_items(limit=5)", [
            ("E4.2", "arguments: {'limit': 5} breaks the documented dependentRequired "
             "{'limit': ['offset']}")
        ]),
        # two arguments, one of them read from a response, where one at most is allowed
        ({"maxProperties": 1}, "list_items(limit=5, offset=p.next_offset)", [
            ("E4.2", "arguments: {'limit': 5, 'offset': '<from an earlier response>'} breaks "
             "the documented maxProperties 1")
        ]),
    ],
)  # fmt: skip
def test_a_program_s_arguments_read_from_a_response_count_in_the_whole_of_its_arguments(
    whole: dict[str, Any], program: str, found: list[tuple[str, str]]
) -> None:
    # what a tool says of its arguments as a whole reads which names are sent: a value
    # read from an earlier response is sent too (p = pages(); list_items(limit=5,
    # offset=p.next_offset) was told limit needs offset)
    fields = {"limit": {"type": "integer"}, "offset": {"type": "integer"}}
    parameters = {"type": "object", "properties": fields, **whole}
    catalog = ApiCatalog.from_tools([*_PAGED, {"name": "list_items", "parameters": parameters}])
    graph = FlowGraph.from_catalog(catalog)
    checker = SequenceChecker(Scanner(catalog, retriever=None), graph=graph)
    seq = sequence_from_program(f"p = pages()\n{program}", instruction="list my items")
    assert [(f.code, f.message) for f in checker.check(seq)] == found


def _items_spec(tmp_path: Path, body: dict[str, Any]) -> ApiCatalog:
    ok = {"description": "ok"}
    pages = {"type": "object", "properties": {"next_offset": {"type": "integer"}}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "items", "version": "1"},
        "paths": {
            "/pages": {
                "get": {
                    "operationId": "pages",
                    "responses": {
                        "200": {**ok, "content": {"application/json": {"schema": pages}}}
                    },
                }
            },
            "/items": {
                "post": {
                    "operationId": "listItems",
                    "requestBody": {"content": {"application/json": {"schema": body}}},
                    "responses": {"200": ok},
                }
            },
        },
    }
    path = tmp_path / "items.json"
    path.write_text(json.dumps(spec))
    return ApiCatalog.from_file(path)


@pytest.mark.parametrize(
    ("program", "found"),
    [
        ("listItems(limit=5, offset=p.next_offset)", []),
        (
            "listItems(limit=5)",
            [
                (
                    "E3.4",
                    ("step[1]", "body", "offset"),
                    "the body fits none of its documented shapes; the nearest, branch 1, "
                    "requires 'offset'",
                )
            ],
        ),
    ],
)
def test_a_program_s_body_field_read_from_a_response_counts_in_the_body_s_shape(
    tmp_path: Path, program: str, found: list[tuple[str, tuple[str, ...], str]]
) -> None:
    # the body is one of two shapes, one with offset and one with cursor: offset read
    # from the earlier page is sent (it was told the body requires offset)
    properties = {"limit": {"type": "integer"}, "offset": {"type": "integer"}}
    shapes = [{"required": ["offset"]}, {"required": ["cursor"]}]
    catalog = _items_spec(tmp_path, {"type": "object", "properties": properties, "oneOf": shapes})
    checker = SequenceChecker(
        Scanner(catalog, retriever=None), graph=FlowGraph.from_catalog(catalog)
    )
    seq = sequence_from_program(f"p = pages()\n{program}")
    assert [(f.code, f.location, f.message) for f in checker.check(seq)] == found

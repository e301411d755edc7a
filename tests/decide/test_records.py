"""``audit --fix`` on each kind of record (:mod:`autofeedback.decide._records`): the
record written again in its own shape with the certain repairs, each repair located
where the audit's findings are (``step[i]`` in a sequence, ``request[i]`` in an output
of several requests), and every credential the record carries masked in what is shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog
from autofeedback.audit._audit import audit_lines

SPEC = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"
KEY = "sk-live-0123456789abcdef"
TOKEN = "tok-0123456789abcdef"


def _tool_calls(*calls: tuple[str, str, Any]) -> dict[str, Any]:
    tool_calls = [
        {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}
        for id_, name, arguments in calls
    ]
    return {"role": "assistant", "content": None, "tool_calls": tool_calls}


def _tool_call(id_: str, name: str, arguments: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": id_, "type": "function", "function": function}],
    }


#: tools whose responses only the record documents (``responses``: tool name -> schema)
THINGS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "required": [arg], "properties": {arg: {"type": t}}},
        },
    }
    for name, description, arg, t in [
        ("findThings", "Find things by words.", "q", "string"),
        ("getThing", "One thing.", "thing_id", "integer"),
    ]
]
THINGS_RESPONSES = {
    "findThings": {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"thing_id": {"type": "integer"}}},
            }
        },
    }
}

SEARCHED = [
    {"role": "user", "content": "Tell me about Dune"},
    _tool_call("c1", "searchBooks", '{"query": "Dune"}'),
    {"role": "tool", "tool_call_id": "c1", "content": '{"books": [{"id": 7}]}'},
]


def _repair(code: str, location: list[str], before: Any, after: Any) -> dict[str, Any]:
    return {"code": code, "location": location, "before": before, "after": after}


CASES = [
    pytest.param(
        {
            "steps": [
                {"request": {"method": "GET", "url": "/books?query=Dune&Limit=5"}},
                {"call": {"name": "search_books", "arguments": '{"query": "Emma"}'}},
                {"output": "<API>list_reviews(bookId=7)</API>"},
                {"call": {"name": "listGenres", "arguments": "{}"}},
            ]
        },
        [
            {"request": {"method": "GET", "url": "/books?query=Dune&limit=5"}},
            {"call": {"name": "searchBooks", "arguments": '{"query": "Emma"}'}},
            {"output": "<API>listReviews(bookId=7)</API>"},
            {"call": {"name": "listGenres", "arguments": "{}"}},
        ],
        [
            _repair("E3.2", ["step[0]", "query", "Limit"], "Limit", "limit"),
            _repair("E2.2", ["step[1]", "api"], "search_books", "searchBooks"),
            _repair("E2.2", ["step[2]", "api"], "list_reviews", "listReviews"),
        ],
        id="trace-steps",
    ),
    pytest.param(
        {
            "messages": [
                {"role": "user", "content": "Tell me about Dune"},
                {"role": "assistant", "content": "Let me look."},
                _tool_calls(
                    ("c3", "listGenres", "{}"),
                    ("c1", "search_books", '{"query": "Düne"}'),
                ),
                {"role": "tool", "tool_call_id": "c1", "content": '{"books": [{"id": 7}]}'},
                _tool_call("c2", "get_book", {"bookId": 7}),
            ]
        },
        [
            {"role": "user", "content": "Tell me about Dune"},
            {"role": "assistant", "content": "Let me look."},
            _tool_calls(("c3", "listGenres", "{}"), ("c1", "searchBooks", '{"query": "Düne"}')),
            {"role": "tool", "tool_call_id": "c1", "content": '{"books": [{"id": 7}]}'},
            _tool_call("c2", "getBook", {"bookId": 7}),
        ],
        [
            _repair("E2.2", ["step[1]", "api"], "search_books", "searchBooks"),
            _repair("E2.2", ["step[2]", "api"], "get_book", "getBook"),
        ],
        id="chat-messages",
    ),
    pytest.param(
        {
            "steps": [
                {
                    "request": {
                        "method": "GET",
                        "url": f"/Books?query={KEY}",
                        "headers": {"X-Api-Key": KEY},
                    }
                }
            ]
        },
        [
            {
                "request": {
                    "method": "GET",
                    "url": "/books?query=[REDACTED]",
                    "headers": {"X-Api-Key": "[REDACTED]"},
                }
            }
        ],
        [_repair("E2.2", ["step[0]", "api"], "/Books", "/books")],
        id="trace-credential-repeated",
    ),
    pytest.param(
        {
            "request": {
                "method": "POST",
                "url": "/orders",
                "json": {"Book_Id": 7, "quantity": 2, "gift_message": "Grüße"},
            }
        },
        {
            "method": "POST",
            "url": "/orders",
            "json": {"book_id": 7, "quantity": 2, "gift_message": "Grüße"},
        },
        [_repair("E3.2", ["body", "Book_Id"], "Book_Id", "book_id")],
        id="request-json-object",
    ),
    pytest.param(
        {
            "request": {
                "method": "POST",
                "url": "/orders",
                "data": '{"Book_Id": 7, "quantity": 2, "gift_message": "Grüße"}',
            }
        },
        {
            "method": "POST",
            "url": "/orders",
            "data": '{"book_id": 7, "quantity": 2, "gift_message": "Grüße"}',
        },
        [_repair("E3.2", ["body", "Book_Id"], "Book_Id", "book_id")],
        id="request-data-text",
    ),
    pytest.param(
        {"request": {"method": "POST", "url": "/orders", "body": {"Book_Id": 7, "quantity": 2}}},
        {"method": "POST", "url": "/orders", "body": {"book_id": 7, "quantity": 2}},
        [_repair("E3.2", ["body", "Book_Id"], "Book_Id", "book_id")],
        id="request-body",
    ),
    pytest.param(
        {"request": {"method": "GET", "url": "/books", "params": {"Query": "Dune"}}},
        {"method": "GET", "url": "/books", "params": {"query": "Dune"}},
        [_repair("E3.2", ["query", "Query"], "Query", "query")],
        id="request-params",
    ),
    pytest.param(
        {"call": {"name": "search_books", "arguments": {"query": KEY, "api_key": KEY}}},
        {"name": "searchBooks", "arguments": {"query": "[REDACTED]", "api_key": "[REDACTED]"}},
        [_repair("E2.2", ["api"], "search_books", "searchBooks")],
        id="call-credential-repeated",
    ),
    pytest.param(
        {"call": {"name": "search_books", "arguments": {"query": "Dune", "api_key": 12345678}}},
        {"name": "searchBooks", "arguments": {"query": "Dune", "api_key": "[REDACTED]"}},
        [_repair("E2.2", ["api"], "search_books", "searchBooks")],
        id="call-credential-a-number",
    ),
    pytest.param(
        {
            "steps": [
                {
                    "request": {"method": "GET", "url": "/books?query=Dune"},
                    "response": {"status": 200, "body": {"access_token": TOKEN}},
                },
                {"request": {"method": "GET", "url": f"/Books?query={TOKEN}"}},
            ]
        },
        [
            {
                "request": {"method": "GET", "url": "/books?query=Dune"},
                "response": {"status": 200, "body": {"access_token": "[REDACTED]"}},
            },
            {"request": {"method": "GET", "url": "/books?query=[REDACTED]"}},
        ],
        [_repair("E2.2", ["step[1]", "api"], "/Books", "/books")],
        id="trace-token-a-response-gave",
    ),
    pytest.param(
        {"output": "<API>search_books(query='Dune')</API> then <API>getBook(bookID=7)</API>"},
        "<API>searchBooks(query='Dune')</API> then <API>getBook(bookId=7)</API>",
        [
            _repair("E2.2", ["request[0]", "api"], "search_books", "searchBooks"),
            _repair("E3.2", ["request[1]", "argument", "bookID"], "bookID", "bookId"),
        ],
        id="output-of-two-requests",
    ),
    pytest.param(
        {"history": SEARCHED, "call": {"name": "getBook", "arguments": {"bookID": 7}}},
        {"name": "getBook", "arguments": {"bookId": 7}},
        [_repair("E3.2", ["argument", "bookID"], "bookID", "bookId")],
        id="call-after-history",
    ),
    pytest.param(
        {"history": SEARCHED, "output": "<API>getBook(bookID=7)</API>"},
        "<API>getBook(bookId=7)</API>",
        [_repair("E3.2", ["argument", "bookID"], "bookID", "bookId")],
        id="output-after-history",
    ),
    pytest.param(
        {
            "instruction": "Show me Dune",
            "output": 'b = searchBooks(query="Dune")\ngetBook(bookId=b.book[0].id)',
        },
        'b = searchBooks(query="Dune")\ngetBook(bookId=b.books[0].id)',
        [_repair("E5.2", ["step[1]", "path", "bookId"], "b.book[0].id", "b.books[0].id")],
        id="program",
    ),
    pytest.param(
        {"output": 'b = searchBooks(query="Dune")\ngetBook(bookId="<book_id>")'},
        'b = searchBooks(query="Dune")\ngetBook(bookId=b.books[0].id)',
        [_repair("E5.3", ["step[1]", "path", "bookId"], "<book_id>", "b.books[0].id")],
        id="program-stand-in-id",
    ),
    pytest.param(
        {
            "tools": THINGS,
            "responses": THINGS_RESPONSES,
            "output": 'r = findThings(q="lamp")\ngetThing(thing_id=r.item[0].thing_id)',
        },
        'r = findThings(q="lamp")\ngetThing(thing_id=r.items[0].thing_id)',
        [
            _repair(
                "E5.2",
                ["step[1]", "argument", "thing_id"],
                "r.item[0].thing_id",
                "r.items[0].thing_id",
            )
        ],
        id="program-path-the-record-responses-give",
    ),
    pytest.param(
        {
            "history": SEARCHED,
            "output": "<API>getBook(bookID=7)</API> <API>listReviews(bookID=7)</API>",
        },
        "<API>getBook(bookId=7)</API> <API>listReviews(bookId=7)</API>",
        [
            _repair("E3.2", ["request[0]", "argument", "bookID"], "bookID", "bookId"),
            _repair("E3.2", ["request[1]", "argument", "bookID"], "bookID", "bookId"),
        ],
        id="two-requests-after-history",
    ),
]

#: records with errors the docs leave more than one answer to: nothing is repaired
LEFT = [
    pytest.param(
        {
            "instruction": "Show me the book with id 7",
            "output": 'b = searchBooks(query="Dune", sort="best")\ngetBook(bookId=7)',
        },
        ["E4.2"],
        id="program-id-the-user-gave",
    ),
    pytest.param(
        {
            "output": 'a = searchBooks(query="Dune")\nb = searchBooks(query="Emma")\n'
            'getBook(bookId="<book_id>")'
        },
        ["E5.3"],
        id="program-two-searches",
    ),
]


@pytest.mark.parametrize(("record", "repaired", "repairs"), CASES)
def test_audit_fix_writes_the_record_again_in_its_own_shape(
    record: dict[str, Any], repaired: Any, repairs: list[dict[str, Any]]
) -> None:
    [result] = audit_lines(
        [json.dumps(record)], ApiCatalog.from_file(SPEC), retriever=None, fix=True
    )
    got = result.as_dict()
    assert (got["ok"], got.get("error"), got["repaired"], got["repairs"]) == (
        False,
        None,
        repaired,
        repairs,
    )


@pytest.mark.parametrize(("record", "codes"), LEFT)
def test_audit_fix_writes_nothing_when_nothing_is_certain(
    record: dict[str, Any], codes: list[str]
) -> None:
    [result] = audit_lines(
        [json.dumps(record)], ApiCatalog.from_file(SPEC), retriever=None, fix=True
    )
    got = result.as_dict()
    assert (got["ok"], [f["code"] for f in got["findings"]], got.get("repaired")) == (
        False,
        codes,
        None,
    )


def _api_key_search(text: bool) -> Any:
    arguments = {"query": KEY, "api_key": KEY}
    return json.dumps(arguments) if text else arguments


#: a call to search_books (repaired to searchBooks) whose credential, named api_key, is
#: repeated in another argument, written where no JSON key names it
IN_TEXT = f"<API>search_books(query='{KEY}', api_key='{KEY}')</API>"
SHOWN = "<API>searchBooks(query='[REDACTED]', api_key='[REDACTED]')</API>"
ARGUMENTS_SHOWN = '{"query": "[REDACTED]", "api_key": "[REDACTED]"}'


@pytest.mark.parametrize(
    ("record", "repaired"),
    [
        pytest.param({"output": IN_TEXT}, SHOWN, id="output"),
        pytest.param({"history": SEARCHED, "output": IN_TEXT}, SHOWN, id="output-after-history"),
        pytest.param(
            {"call": {"name": "search_books", "arguments": _api_key_search(True)}},
            {"name": "searchBooks", "arguments": ARGUMENTS_SHOWN},
            id="call-arguments-text",
        ),
        pytest.param(
            {"output": f'b = search_books(query="{KEY}", api_key="{KEY}")\ngetBook(bookId=7)'},
            'b = searchBooks(query="[REDACTED]", api_key="[REDACTED]")\ngetBook(bookId=7)',
            id="program",
        ),
        pytest.param({"steps": [{"output": IN_TEXT}]}, [{"output": SHOWN}], id="trace-output"),
        pytest.param(
            {"messages": [_tool_call("c1", "search_books", _api_key_search(True))]},
            [_tool_call("c1", "searchBooks", ARGUMENTS_SHOWN)],
            id="chat-arguments-text",
        ),
    ],
)
def test_a_credential_written_in_text_is_masked_wherever_the_repair_repeats_it(
    record: dict[str, Any], repaired: Any
) -> None:
    """The credential's name is in the text, not a JSON key: the requests read from the
    record say which value it is, and every copy of it is masked."""
    [result] = audit_lines(
        [json.dumps(record)], ApiCatalog.from_file(SPEC), retriever=None, fix=True
    )
    got = result.as_dict()
    assert got["repaired"] == repaired
    assert KEY not in json.dumps(got)


SHOP = {
    "openapi": "3.0.3",
    "info": {"title": "shop", "version": "1"},
    "components": {
        "securitySchemes": {"pass": {"type": "apiKey", "in": "header", "name": "X-Shop-Pass"}}
    },
    "security": [{"pass": []}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def test_a_credential_under_a_name_only_the_spec_declares_is_masked_where_it_is_repeated() -> None:
    """``X-Shop-Pass`` is no credential name by itself: the spec's securitySchemes make it one."""
    pass_ = "pw-0123456789abcdef"
    record = {
        "request": {"method": "GET", "url": f"/Items?q={pass_}", "headers": {"X-Shop-Pass": pass_}}
    }
    [result] = audit_lines(
        [json.dumps(record)], ApiCatalog.from_obj(SHOP), retriever=None, fix=True
    )
    assert result.as_dict()["repaired"] == {
        "method": "GET",
        "url": "/items?q=[REDACTED]",
        "headers": {"X-Shop-Pass": "[REDACTED]"},
    }


@pytest.mark.parametrize("written", ["7", '"ORD-1"', '"9f1c2e"'])
def test_a_value_the_model_wrote_is_never_replaced_by_a_read_of_an_earlier_response(
    written: str,
) -> None:
    # 'bookId' = 7 is not given by anyone, and searchBooks' books[].id would give one:
    # but 7 is the model's value, and reading another in would change which book is
    # fetched; the model is told where to read it (a stand-in, "<book_id>", is read in)
    output = f'b = searchBooks(query="Dune")\ngetBook(bookId={written})'
    [result] = audit_lines(
        [json.dumps({"output": output})], ApiCatalog.from_file(SPEC), retriever=None, fix=True
    )
    got = result.as_dict()
    assert "repaired" not in got
    [finding] = got["findings"]
    assert (finding["code"], finding["location"]) == ("E5.3", ["step[1]", "path", "bookId"])
    assert finding["suggestion"] == "read it from the response of searchBooks: `books[].id`"

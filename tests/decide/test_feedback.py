"""The correction the feedback gives for each kind of finding: the one sentence the
model acts on, so each case is the exact text."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, Finding, Scanner, tool_messages
from autofeedback.core._findings import Repair
from autofeedback.decide import Decider
from autofeedback.decide._feedback import (
    dynamic_feedback,
    gave_up,
    hint,
    inserted_turn,
    mcp_feedback,
    not_sent,
    observation,
    program_feedback,
    react_feedback,
    render_feedback,
    restated_note,
    unfinished_note,
    unknown_tool,
)

CORRECTIONS = [
    ({"code": "E1"}, "Write exactly one request, e.g. <API>ApiName(key1='value1', "
     "key2='value2')</API>, with every argument a literal value."),
    ({"code": "E1", "suggestion": "<API>f()</API>"}, "Your request, rewritten in the expected "
     "format, is <API>f()</API>; complete it if it was cut off and write it exactly like that."),
    ({"code": "E2.1", "got": "get_usr", "suggestion": "getUser"},
     "Use 'getUser' instead of 'get_usr' if it fits the instruction."),
    ({"code": "E2.2", "suggestion": "getUser"}, "Use the documented API 'getUser'."),
    ({"code": "E2.3"}, "Choose one of the documented APIs."),
    ({"code": "E3", "expected": "query", "suggestion": "limit"}, "Send 'limit' in the query."),
    ({"code": "E3.2", "suggestion": "limit"}, "Replace 'v' with the documented parameter 'limit'."),
    ({"code": "E3.2", "expected": ["a", "b"]}, "Remove 'v'; documented parameters: a, b."),
    ({"code": "E3.2"}, "Remove 'v'; this API takes no such parameter."),
    ({"code": "E3.4", "suggestion": "id"}, "Add the required parameter 'id'."),
    ({"code": "E4.1", "expected": ["integer", "null"]}, "Give a value of type integer or null."),
    ({"code": "E4.1", "expected": "integer"}, "Give a value of type integer."),
    ({"code": "E4.2"}, "Give a value that satisfies the documented constraint."),
    ({"code": "E5.1", "suggestion": "getUser"}, "Call getUser first and use its result."),
    ({"code": "E5.1"}, "Assign the result of an earlier call to the variable before using it."),
    ({"code": "E5.2", "suggestion": "data.id"}, "Use the documented path 'data.id'."),
    ({"code": "E5.2"}, "Use a field the earlier call's documented response has."),
    ({"code": "E5.3", "suggestion": "call listUsers first: its response has `id`"},
     "Call listUsers first: its response has `id`, and pass that value."),
    ({"code": "E5.3"}, "Use the value the user gave, or one an earlier response returned."),
    ({"code": "E5.4", "expected": ["integer", "string"]},
     "Pass a single field of type integer or string, e.g. one item's field."),
    ({"code": "E5.4", "expected": "integer"},
     "Pass a single field of type integer, e.g. one item's field."),
    ({"code": "E5.4"}, "Take the value from the earlier response that documents it."),
    ({"code": "E5"}, "Take the value from the earlier response that documents it."),
]  # fmt: skip


@pytest.mark.parametrize(("finding", "correction"), CORRECTIONS)
def test_each_finding_gets_its_correction(finding: dict[str, Any], correction: str) -> None:
    fields: dict[str, Any] = {"location": ("arguments", "x"), "got": "v", "message": "m"}
    text = render_feedback(Finding(**{**fields, **finding}))
    cause = next(line for line in text.splitlines() if line.startswith("Likely cause: "))
    assert cause.split(" Correction: ", 1)[1] == correction


def test_the_trace_says_why_a_request_was_not_sent() -> None:
    assert not_sent(True) == "request not sent: it still has E1-E3 findings"
    assert not_sent(False) == "request not sent: no request could be parsed"


@pytest.mark.parametrize(
    ("message", "suggestion", "said"),
    [
        ("unknown parameter x", None, ""),
        ("unknown parameter x", "limit", " (did you mean limit?)"),
        ("unknown parameter 'x' — did you mean 'limit'?", "limit", ""),  # offered already
        ("call listUsers first: its response has id", "listUsers", ""),  # named as itself
        ("the field id is not in the response", "id", ""),
        # inside a longer name or path, or only listed among others: offered here
        ("use results[].id", "id", " (did you mean id?)"),
        ("ids only", "id", " (did you mean id?)"),
        ("x.id", "id", " (did you mean id?)"),
        ("[id]", "id", " (did you mean id?)"),
        ("documented APIs: getA, getB", "getA", " (did you mean getA?)"),
        ("documented parameters: a, b", "a", " (did you mean a?)"),
        ("", "a", " (did you mean a?)"),
    ],
)
def test_a_suggestion_is_offered_once(message: str, suggestion: str | None, said: str) -> None:
    finding = Finding("E3.2", ("argument", "x"), "x", message=message, suggestion=suggestion)
    assert hint(finding) == said


def test_an_observation_is_cut_only_past_its_limit() -> None:
    assert observation(200, "x" * 50, 50) == "HTTP 200 " + "x" * 50
    assert observation(404, "y" * 51, 50) == "HTTP 404 " + "y" * 50 + "... (1 more characters)"


LIMT = Finding(
    "E3.2",
    ("argument", "Limt"),
    "Limt",
    expected="limit",
    suggestion="limit",
    message="unknown parameter 'Limt'; it is a spelling variant of 'limit'.",
    doc="limit (argument, integer, optional): How many.",
)
DAYS = Finding(
    "E4.1", ("argument", "days"), "x", expected="integer", message="days must be an integer"
)
DOUBT = Finding("E2.1", ("api",), "f", severity="warning", message="maybe another API")


def test_the_whole_feedback_for_a_request_with_several_findings() -> None:
    text = render_feedback(
        [LIMT, DAYS, DOUBT],
        corrected="<API>f(limit=5, days=<integer>)</API>",
        repairs=[Repair("E3.2", ("argument", "City"), "City", "city")],
    )
    assert text == (
        "There is an error in your API request.\n"
        "Error E3.2 (literal variant of a parameter name) at argument.Limt: unknown parameter "
        "'Limt'; it is a spelling variant of 'limit'.\n"
        "Documentation: limit (argument, integer, optional): How many.\n"
        "The request was parsed successfully and the API name is correct.\n"
        "Likely cause: The parameter name is written in a different case or with different "
        "separators than the documented name. Correction: Replace 'Limt' with the documented "
        "parameter 'limit'.\n"
        "Other problems in the same request:\n"
        "- E4.1 argument.days: days must be an integer\n"
        "- E2.1 api: maybe another API\n"
        "Already repaired (keep these changes):\n"
        "- E3.2 argument.City: 'City' -> 'city'\n"
        "The request with these corrections: <API>f(limit=5, days=<integer>)</API>\n"
        "Replace each <type> placeholder with the value from the user's request.\n"
        "Please regenerate the API request."
    )


def test_the_feedback_for_a_tool_call_speaks_of_tool_calls() -> None:
    assert render_feedback(DOUBT, tool_call=True) == (
        "Your tool call may have a problem; check it before sending.\n"
        "Possible error E2.1 (API not fitting the instruction) at api: maybe another API.\n"
        "The tool call was parsed successfully.\n"
        "Likely cause: The API exists, but it does not do what the instruction asks for. "
        "Correction: Choose one of the documented APIs.\n"
        "If it is wrong, call the tool again with the corrected arguments; if it is right, "
        "keep it."
    )
    corrected = '{"name": "f", "arguments": {"q": "<string>"}}'
    text = render_feedback(LIMT, shape="openai-chat", corrected=corrected).splitlines()
    assert text[0] == "There is an error in your tool call."
    assert text[3] == "The tool call was parsed successfully and the tool name is correct."
    assert text[5:] == [
        f"The tool call with these corrections: {corrected}",
        "Replace each <type> placeholder with the value from the user's request.",
        "Please call the tool again with the corrected arguments.",
    ]
    e1 = render_feedback(Finding("E1", (), "x", message="cut off"), shape="gemini").splitlines()
    assert e1[1:3] == [
        "Error E1 (no parsable request) at the output: cut off.",
        "Likely cause: The tool call could not be read: it names no tool, or its arguments are "
        "not a JSON object. Correction: Call the tool again as a functionCall part with an args "
        "object: one documented tool name and its arguments as one JSON object.",
    ]


def test_the_feedback_lists_at_most_five_other_problems_and_six_repairs() -> None:
    others = [dataclasses.replace(DAYS, location=("argument", f"d{i}")) for i in range(7)]
    repairs = [Repair("E3.2", ("argument", f"R{i}"), f"R{i}", f"r{i}") for i in range(8)]
    lines = render_feedback([LIMT, *others], repairs=repairs).splitlines()
    listed = [line for line in lines if line.startswith("- ")]
    assert listed == [f"- {f}" for f in others[:5]] + [f"- {r}" for r in repairs[:6]]
    with pytest.raises(ValueError, match=r"^render_feedback needs at least one finding$"):
        render_feedback([])


def _function(name: str, required: list[str], **properties: Any) -> dict[str, Any]:
    parameters = {"type": "object", "required": required, "properties": properties}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


WEATHER = _function(
    "get_weather", ["city"], city={"type": "string"}, days={"type": "integer", "maximum": 7}
)
SCROLL = _function("scroll", [], offsetY={"type": "integer"}, offsetX={"type": "integer"})
#: an operation whose body is optional, but requires ``text`` when sent
NOTES = {
    "openapi": "3.0.3",
    "info": {"title": "notes", "version": "1"},
    "paths": {
        "/notes": {
            "post": {
                "operationId": "addNote",
                "parameters": [{"name": "notify", "in": "query", "schema": {"type": "boolean"}}],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["text"],
                                "properties": {"text": {"type": "string"}},
                            }
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}
AGAIN = "Please call the tool again with the corrected arguments."


@pytest.mark.parametrize(
    ("tools", "name", "arguments", "lines"),
    [
        pytest.param(
            [WEATHER], "get_weather", {"City": "Zürich"},
            [
                "Error E3.2 (literal variant of a parameter name) at argument.City: unknown "
                "parameter 'City'; it is a spelling variant of 'city'.",
                "Documentation: city (argument, string, required)",
                "The tool call was parsed successfully and the tool name is correct.",
                "Likely cause: The parameter name is written in a different case or with "
                "different separators than the documented name. Correction: Replace 'City' with "
                "the documented parameter 'city'.",
                "Other problems in the same tool call:",
                "- E3.4 argument.city: required parameter 'city' is missing",
                "Already repaired (keep these changes):",
                "- E3.2 argument.City: 'City' -> 'city'",
                'The tool call with these corrections: {"name": "get_weather", "arguments": '
                '{"city": "Zürich"}}',
            ],
            id="every-error-repaired-the-call-to-make-as-written",
        ),
        pytest.param(
            [WEATHER], "get_weather", {"city": "Lima", "days": 9, "Unit": "C"},
            [
                "Error E3 (unknown parameter) at argument.Unit: unknown parameter 'Unit'; "
                "get_weather takes: city, days.",
                "The tool call was parsed successfully and the tool name is correct.",
                "Likely cause: The parameter is not documented for this API, or it is sent in "
                "the wrong place. Correction: Remove 'Unit'; documented parameters: city, days.",
                "Other problems in the same tool call:",
                "- E4.2 argument.days: days: 9 breaks the documented maximum 7",
            ],
            id="two-errors-the-other-listed",
        ),
        pytest.param(
            [SCROLL], "scroll", {"zoom": 2},
            [
                "Error E3 (unknown parameter) at argument.zoom: unknown parameter 'zoom'; "
                "scroll takes: offsetY, offsetX.",
                "The tool call was parsed successfully and the tool name is correct.",
                "Likely cause: The parameter is not documented for this API, or it is sent in "
                "the wrong place. Correction: Remove 'zoom'; documented parameters: offsetY, "
                "offsetX.",
            ],
            id="a-message-ending-in-a-capital-x",
        ),
        pytest.param(
            NOTES, "addNote", {"notify": "maybe"},
            [
                "Error E4.1 (value type mismatch) at argument.notify: notify must be a boolean, "
                "got string 'maybe'.",
                "The tool call was parsed successfully, the tool name is correct and the "
                "parameter names are correct.",
                "Likely cause: The value does not have the type the documentation gives for "
                "this parameter. Correction: Give a value of type boolean.",
                "Other problems in the same tool call:",
                "- E3.4 body: no request body was sent; the documented body requires 'text' "
                "(the spec does not require the body itself)",
            ],
            id="the-error-before-the-warning-found-first",
        ),
    ],
)  # fmt: skip
def test_the_whole_feedback_for_a_tool_call(
    tools: Any, name: str, arguments: dict[str, Any], lines: list[str]
) -> None:
    """What ``tool_messages`` answers a chat tool call with errors, line by line."""
    function = {"name": name, "arguments": json.dumps(arguments)}
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }
    [reply] = tool_messages(message, tools, retriever=None)
    assert reply["content"].splitlines() == ["There is an error in your tool call.", *lines, AGAIN]


def test_an_mcp_tool_call_that_cannot_be_read_is_asked_for_again_as_a_tool_call() -> None:
    """An MCP ``tools/call`` (a tool call of no provider's shape) whose arguments are not
    JSON: never asked for the ``<API>`` text format; the firm stop leads once the run
    stops."""
    scanner = Scanner(ApiCatalog.from_tools([WEATHER]), retriever=None)
    found = list(scanner.iter_findings({"name": "get_weather", "arguments": "{city: Lima"}))
    said = (
        "There is an error in your tool call.\n"
        "Error E1 (no parsable request) at the output: the arguments of 'get_weather' are not "
        "valid JSON: Expecting property name enclosed in double quotes at line 1 column 2.\n"
        "Likely cause: The tool call could not be read: it names no tool, or its arguments are "
        "not a JSON object. Correction: Call the tool again: one documented tool name and its "
        "arguments as one JSON object.\n"
        f"{AGAIN}"
    )
    assert mcp_feedback("get_weather", found) == said
    assert mcp_feedback("get_weather", found, repeats=3) == (
        "Stop repeating this call: get_weather with these exact arguments has been rejected 3 "
        "times and will be rejected again. Change the call as the feedback says, or stop and "
        f"tell the user what is missing.\n\n{said}"
    )
    fixed = Repair("E3.2", ("argument", "City"), "City", "city")
    assert mcp_feedback("get_weather", [], [fixed], repeats=2) == (
        "Stop repeating this call: get_weather with these exact arguments has been rejected 2 "
        "times and will be rejected again. Change the call as the feedback says, or stop and "
        "tell the user what is missing.\n\n"
    )
    assert mcp_feedback("get_weather", []) == ""
    listed = mcp_feedback("get_weather", found, [fixed]).splitlines()
    assert listed[-3:-1] == ["Already repaired (keep these changes):", f"- {fixed}"]


def test_a_restated_react_call_names_each_value_its_action_gives_and_each_repair() -> None:
    """The ReAct runner's errors are located inside their step (``step[1]``); the call
    meant to follow the Action is told every parameter the Observation gives (a made-up
    value, a missing one), once each, and every repair already made."""

    def at(name: str) -> tuple[str, ...]:
        return ("step[1]", "argument", name)

    errors = [
        Finding("E5.3", at("bookId"), "<book_id>", message="bookId = '<book_id>' is a placeholder"),
        Finding("E4.1", at("quantity"), "two", message="quantity must be an integer, got 'two'"),
        Finding("E3.4", at("address"), None, message="required parameter 'address' is missing"),
        Finding("E3.4", at("bookId"), None, message="required parameter 'bookId' is missing"),
    ]
    order = ApiRequest(name="createOrder", arguments={"bookId": "<book_id>", "quantity": "two"})
    repairs = [
        Repair("E2.2", ("api",), "create_order", "createOrder"),
        Repair("E3.2", ("argument", "BookId"), "BookId", "bookId"),
    ]
    assert restated_note(errors, order, "<API>searchBooks(query=...)</API>", repairs) == (
        "(Not this Action: <API>createOrder(bookId='<book_id>', quantity='two')</API>. It was "
        "not sent: E5.3 bookId = '<book_id>' is a placeholder; E4.1 quantity must be an "
        "integer, got 'two'; E3.4 required parameter 'address' is missing; E3.4 required "
        "parameter 'bookId' is missing.) Write this Action next, filling in each ...: Action: "
        "<API>searchBooks(query=...)</API> Then call createOrder with the `bookId` and "
        "`address` that its Observation gives. (Already repaired in it: E2.2 api: "
        "'create_order' -> 'createOrder'; E3.2 argument.BookId: 'BookId' -> 'bookId'.)"
    )


BOOKSHOP = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"


def test_the_feedback_for_a_program_puts_each_error_on_its_line_with_the_sure_fixes() -> None:
    """Each error on the line of its call, a reference read on an earlier line named there,
    and the lines as the sure fixes make them (a response path with a level left out, an
    API and a parameter name on the same line)."""
    from autofeedback.flow import sequence_from_program

    program = (
        'r = searchBooks(query="Dune")\n'
        "first = r.id\n"
        "getBook(bookId=first)\n"
        "reviews = list_reviews(BookId=first, page=1)"
    )
    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    found = list(checker.iter_findings(sequence_from_program(program, instruction="Dune")))
    fourth = "line 4 `reviews = list_reviews(BookId=first, page=1)`: "
    assert program_feedback(found, program).splitlines() == [
        "Your program has 4 problems:",
        "- line 3 `getBook(bookId=first)`, reading `r.id` (line 2): E5.2 searchBooks's "
        "documented response has no 'id' (did you mean books[].id?)",
        f"- {fourth}E2.2 API 'list_reviews' does not exist; it is a spelling variant of "
        "'listReviews'",
        f"- {fourth}E3.2 unknown parameter 'BookId'; it is a spelling variant of 'bookId'",
        f"- {fourth}E3.4 required path parameter 'bookId' is missing",
        "With the suggested fixes, these lines read:",
        "line 2: `first = r.books[0].id`",
        "line 4: `reviews = listReviews(bookId=first, page=1)`",
        "Write the whole corrected program in a ```python block.",
    ]


_NO_ID = "E5.2 searchBooks's documented response has no 'id' (did you mean books[].id?)"


@pytest.mark.parametrize(
    ("program", "feedback"),
    [
        # read on an earlier line: named there, and fixed in its keys and quotes
        (
            'r = searchBooks(query="Dune")\nfirst = r["id"]\ngetBook(bookId=first)',
            [
                f'- line 3 `getBook(bookId=first)`, reading `r["id"]` (line 2): {_NO_ID}',
                "With the suggested fixes, these lines read:",
                'line 2: `first = r["books"][0]["id"]`',
            ],
        ),
        # in single quotes, on the call's own line
        (
            "r = searchBooks(query='Dune')\ngetBook(bookId=r['id'])",
            [
                f"- line 2 `getBook(bookId=r['id'])`: {_NO_ID}",
                "With the suggested fixes, these lines read:",
                "line 2: `getBook(bookId=r['books'][0]['id'])`",
            ],
        ),
        # a key and an attribute: named, but how to write the fix is not known
        (
            'r = searchBooks(query="Dune")\nfirst = r["book"][0].id\ngetBook(bookId=first)',
            [
                '- line 3 `getBook(bookId=first)`, reading `r["book"][0].id` (line 2): E5.2 '
                "searchBooks's documented response has no 'book[].id' (did you mean "
                "books[].id?)"
            ],
        ),
    ],
)
def test_a_program_s_reference_written_with_keys_is_named_and_fixed_in_its_keys(
    program: str, feedback: list[str]
) -> None:
    from autofeedback.flow import sequence_from_program

    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    found = list(checker.iter_findings(sequence_from_program(program, instruction="Dune")))
    assert program_feedback(found, program).splitlines()[1:-1] == feedback


def test_the_sure_fixes_of_a_program_follow_each_other_on_a_line_and_guesses_are_named() -> None:
    """Two calls on one line, a reference on the first line, a capitalised variable, a
    parameter and a reference fixed on the same line, and another function of a similar
    name only named (a guess), never written in."""
    from autofeedback.flow import sequence_from_program

    program = (
        'Books = searchBooks(query="Dune"); getBook(bookId=Books.id)\n'
        "reviews = listReviews(bookId=Books.id, Page=2)\n"
        "genres = listGenres()\n"
        "fiction = getBok(bookId=Books.books[0].id)"
    )
    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    found = list(checker.iter_findings(sequence_from_program(program, instruction="Dune")))
    no_id = "E5.2 searchBooks's documented response has no 'id' (did you mean books[].id?)"
    second = "line 2 `reviews = listReviews(bookId=Books.id, Page=2)`: "
    assert program_feedback(found, program).splitlines() == [
        "Your program has 4 problems:",
        f'- line 1 `Books = searchBooks(query="Dune"); getBook(bookId=Books.id)`: {no_id}',
        f"- {second}E3.2 unknown parameter 'Page'; it is a spelling variant of 'page'",
        f"- {second}{no_id}",
        "- line 4 `fiction = getBok(bookId=Books.books[0].id)`: E2 API 'getBok' does not exist; "
        "did you mean 'getBook'? documented APIs: searchBooks, getBook, listReviews, "
        "createOrder, getOrder, cancelOrder, listGenres",
        "With the suggested fixes, these lines read:",
        'line 1: `Books = searchBooks(query="Dune"); getBook(bookId=Books.books[0].id)`',
        "line 2: `reviews = listReviews(bookId=Books.books[0].id, page=2)`",
        "Write the whole corrected program in a ```python block.",
    ]


def test_an_api_fixed_after_a_parameter_on_the_same_line_keeps_both_and_long_lines_are_cut() -> (
    None
):
    from autofeedback.flow import sequence_from_program

    query = (
        "books about the desert planet Arrakis, its spice, its sandworms, the Fremen and the "
        "house Atreides"
    )
    program = (
        "book = getBook(BookId=1); reviews = list_reviews(bookId=1)\n"
        f'r = searchBooks(query="{query}", Limit=5)'
    )
    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    found = list(checker.iter_findings(sequence_from_program(program)))
    lines = program_feedback(found, program).splitlines()
    shown = f'r = searchBooks(query="{query}'[:120]
    assert lines[4].startswith(f"- line 2 `{shown}`: E3.2 unknown parameter 'Limit'")
    assert lines[5:8] == [
        "With the suggested fixes, these lines read:",
        "line 1: `book = getBook(bookId=1); reviews = listReviews(bookId=1)`",
        f'line 2: `r = searchBooks(query="{query}", limit=5)`',
    ]


def test_a_path_into_a_list_response_is_read_from_its_first_item() -> None:
    from autofeedback.flow import sequence_from_program

    profile = {"type": "object", "properties": {"id": {"type": "string"}}}
    tools = [
        {
            "name": "list_users",
            "parameters": {"type": "object", "properties": {}},
            "outputSchema": {
                "type": "array",
                "items": {"type": "object", "properties": {"profile": profile}},
            },
        },
        {
            "name": "get_user",
            "parameters": {
                "type": "object",
                "required": ["user_id"],
                "properties": {"user_id": {"type": "string"}},
            },
        },
    ]
    checker = Scanner(ApiCatalog.from_tools(tools), retriever=None).sequence_checker()
    program = "users = list_users()\nget_user(user_id=users.id)"
    found = list(checker.iter_findings(sequence_from_program(program)))
    assert program_feedback(found, program).splitlines()[-3:] == [
        "With the suggested fixes, these lines read:",
        "line 2: `get_user(user_id=users[0].profile.id)`",
        "Write the whole corrected program in a ```python block.",
    ]
    # the reference two lines above the call, on the first line, the call on the last
    program = (
        'users = list_users(); first = users.id\nget_user(user_id="u1")\nget_user(user_id=first)'
    )
    found = list(checker.iter_findings(sequence_from_program(program, instruction="user u1")))
    assert program_feedback(found, program).splitlines()[1:4] == [
        "- line 3 `get_user(user_id=first)`, reading `users.id` (line 1): E5.2 list_users's "
        "documented response has no 'id' (did you mean [].profile.id?)",
        "With the suggested fixes, these lines read:",
        "line 1: `users = list_users(); first = users[0].profile.id`",
    ]


@pytest.mark.parametrize(
    ("program", "fixed"),
    [
        # the API's name: the call's, not the same name in a value written before it
        pytest.param(
            'searchBooks(query="list_reviews(x)"); list_reviews(bookId=1)',
            'searchBooks(query="list_reviews(x)"); listReviews(bookId=1)',
            id="api-in-a-value-before",
        ),
        # nor one written after it
        pytest.param(
            'list_reviews(bookId=1); searchBooks(query="list_reviews(x)")',
            'listReviews(bookId=1); searchBooks(query="list_reviews(x)")',
            id="api-in-a-value-after",
        ),
        # a parameter's name: the argument's, not the same words in a value
        pytest.param(
            "searchBooks(query='Page=2'); listReviews(bookId=1, Page=2)",
            "searchBooks(query='Page=2'); listReviews(bookId=1, page=2)",
            id="parameter-in-a-value-before",
        ),
        pytest.param(
            'listReviews(bookId=1, Page=2); searchBooks(query="Page=2")',
            'listReviews(bookId=1, page=2); searchBooks(query="Page=2")',
            id="parameter-in-a-value-after",
        ),
        # nor in a comment
        pytest.param(
            "listReviews(bookId=1, Page=2)  # Page=2: the second page",
            "listReviews(bookId=1, page=2)  # Page=2: the second page",
            id="parameter-in-a-comment",
        ),
    ],
)
def test_a_fixed_line_changes_the_name_in_the_call_never_in_a_string_or_a_comment(
    program: str, fixed: str
) -> None:
    from autofeedback.flow import sequence_from_program

    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    found = list(checker.iter_findings(sequence_from_program(program)))
    assert program_feedback(found, program).splitlines()[-3:-1] == [
        "With the suggested fixes, these lines read:",
        f"line 1: `{fixed}`",
    ]


@pytest.mark.parametrize(
    ("program", "fixed"),
    [
        # the read the call makes, not the same text in a value written before it
        pytest.param(
            'searchBooks(query="r.id"); getBook(bookId=r.id)',
            'line 2: `searchBooks(query="r.id"); getBook(bookId=r.books[0].id)`',
            id="in-a-value-before",
        ),
        # nor one written after it
        pytest.param(
            'getBook(bookId=r.id); searchBooks(query="r.id")',
            'line 2: `getBook(bookId=r.books[0].id); searchBooks(query="r.id")`',
            id="in-a-value-after",
        ),
        # nor in a comment
        pytest.param(
            "getBook(bookId=r.id)  # r.id: the first book",
            "line 2: `getBook(bookId=r.books[0].id)  # r.id: the first book`",
            id="in-a-comment",
        ),
    ],
)
def test_a_fixed_line_reads_the_documented_path_in_the_call_never_in_a_string_or_a_comment(
    program: str, fixed: str
) -> None:
    from autofeedback.flow import sequence_from_program

    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    program = f'r = searchBooks(query="Dune")\n{program}'
    found = list(checker.iter_findings(sequence_from_program(program, instruction="Dune")))
    assert program_feedback(found, program).splitlines()[-3:-1] == [
        "With the suggested fixes, these lines read:",
        fixed,
    ]


def test_only_a_reference_is_said_to_be_read_on_another_line() -> None:
    """A value's type error names the call's line only, even where the value was
    written on an earlier line; a made-up value written on the call's line is there."""
    from autofeedback.flow import sequence_from_program

    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    program = "n = 'two'\nlistReviews(bookId=7, page=n)"
    found = list(checker.iter_findings(sequence_from_program(program, instruction="Dune")))
    line = "- line 2 `listReviews(bookId=7, page=n)`: "
    assert program_feedback(found, program).splitlines()[1:] == [
        f"{line}E4.1 page must be an integer (Page number, starting at 1; 20 reviews a page.), "
        "got string 'two'",
        f"{line}E5.3 'bookId' = 7 is not given by the user or an earlier response; call "
        "searchBooks first: its response has `books[].id`",
        "Write the whole corrected program in a ```python block.",
    ]


def test_the_feedback_for_a_repaired_program_shows_the_program_it_continues_from() -> None:
    decider = Decider(Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None))
    program = (
        'r = search_books(query="Dune")\nreviews = listReviews(bookId=r.books[0].id, page="two")'
    )
    decision = decider.decide_program(program, instruction="Show me the reviews of Dune")
    assert decision.text is not None
    text = program_feedback(
        decision.errors, decision.text, repairs=decision.repairs, ask="in one python block"
    )
    assert text.splitlines() == [
        "Your program has 1 problem:",
        '- line 2 `reviews = listReviews(bookId=r.books[0].id, page="two")`: E4.1 page must be '
        "an integer (Page number, starting at 1; 20 reviews a page.), got string 'two'",
        "Already repaired (keep these changes); your program now reads:",
        "```python",
        'r = searchBooks(query="Dune")',
        'reviews = listReviews(bookId=r.books[0].id, page="two")',
        "```",
        "Write the whole corrected program in one python block.",
    ]


THOUGHT = (
    "Thought: fix it, taking values only from the request or earlier Observations, then "
    "write one Action (or the Final Answer)."
)


def test_the_observation_of_a_react_call_that_was_not_sent() -> None:
    """What the ReAct runner answers a turn whose call it did not send: the errors left
    (with the repairs made), how to write an Action when none could be read, or that no
    call was read at all."""
    decider = Decider(Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None))
    [wrong] = decider.decide('Action: <API>search_books(query="Dune", limit="five")</API>')
    assert react_feedback(wrong.errors, wrong.repairs).splitlines() == [
        "Observation: this call was not sent, because it has problems:",
        "- E4.1 limit must be an integer (How many books to return (1-50, default 10).), got "
        "string 'five'",
        "Already repaired (keep these changes):",
        "- E2.2 api: 'search_books' -> 'searchBooks'",
        THOUGHT,
    ]
    [unread] = decider.decide("Action: I will search for Dune")
    assert react_feedback(unread.errors).splitlines() == [
        "Observation: this call was not sent, because it has problems:",
        "- E1 no API request found in the output",
        "Write the call as Action: <API>Name(parameter='value')</API>, with a documented API "
        "name and documented parameter names.",
        THOUGHT,
    ]
    assert react_feedback([]).splitlines() == [
        "Observation: this call was not sent, because it has problems:",
        "- no API call could be read from your answer",
        THOUGHT,
    ]


def test_the_turn_for_a_request_the_server_refused() -> None:
    """What was sent, what came back, what the docs say, and the last three attempts."""
    ask = (
        "Thought: explain briefly what went wrong, then write the corrected request as one "
        "<API>...</API> call with a documented API name and documented parameter names."
    )
    sent = "<API>getBook(bookId=99)</API>"
    tried = ["getBook(bookId=1)", "getBook(bookId=2)", "getBook(bookId=3)", "getBook(bookId=4)"]
    said = "A book's id comes from searchBooks."
    assert dynamic_feedback(sent, 404, "no such book", said, tried).splitlines() == [
        "Your API request was sent, but it did not succeed.",
        f"Action: {sent}",
        "Observation: HTTP 404 no such book",
        f"Documentation about this error: {said}",
        "Earlier attempts: getBook(bookId=2) | getBook(bookId=3) | getBook(bookId=4)",
        ask,
    ]
    explained = ["Cause: the book is not in the catalogue.", "Next call: searchBooks(query=...)"]
    assert dynamic_feedback(sent, None, "", explained, []).splitlines() == [
        "Your API request was sent, but it did not succeed.",
        f"Action: {sent}",
        "Observation: HTTP no response",
        *explained,
        ask,
    ]


def test_the_words_of_a_run_that_ends_inserts_a_call_or_questions_an_answer() -> None:
    """The proxy's error once its rounds end, the turn of a producer autofeedback sent
    first, the note for an early Final Answer, the MCP error for an unknown tool."""
    limt = Finding("E3.2", ("argument", "limt"), "limt", message="unknown parameter 'limt'")
    assert gave_up(3, "rounds", limt.as_dict()) == (
        "autofeedback: the model's tool calls are still invalid after 3 round(s) (rounds): "
        "E3.2 unknown parameter 'limt'"
    )
    assert inserted_turn(ApiRequest(name="listGenres", arguments={})) == (
        "Thought: autofeedback calls listGenres first: its response gives what the next call "
        "needs.\nAction: <API>listGenres()</API>"
    )
    sources = [("bookId", "searchBooks"), ("orderId", "createOrder")]
    assert unfinished_note("cancelOrder", sources, ["orderId", "reason"]) == (
        "(Not the Final Answer yet: cancelOrder fits the request best and has not been called; "
        "its `bookId` is in the Observation of searchBooks; its `orderId` is in the Observation "
        "of createOrder.) Write this Action next, filling in each ... from the Observations: "
        "Action: <API>cancelOrder(orderId=..., reason=...)</API> If the Observations already "
        "answer the request, write the Final Answer again."
    )
    assert [unknown_tool("get_wether", "get_weather"), unknown_tool("get_wether", None)] == [
        "Unknown tool: 'get_wether'; did you mean 'get_weather'?",
        "Unknown tool: 'get_wether'",
    ]


@pytest.mark.parametrize(
    ("program", "fixes"),
    [
        # the read the call takes is the one before it, not the same read written after
        (
            'r = searchBooks(query="Dune")\nfirst = r["id"]\ngetBook(bookId=first)\n'
            'again = r["id"]',
            ['line 2: `first = r["books"][0]["id"]`'],
        ),
        # two calls on one line, each reading it: both reads fixed
        (
            'r = searchBooks(query="Dune")\ngetBook(bookId=r["id"]); listReviews(bookId=r["id"])',
            [
                'line 2: `getBook(bookId=r["books"][0]["id"]); '
                'listReviews(bookId=r["books"][0]["id"])`'
            ],
        ),
        # the call's own read fixed, an earlier copy of it (read by nothing) left as written
        (
            "r = searchBooks(query='Dune')\nx = r['id']\ngetBook(bookId=r['id'])",
            ["line 3: `getBook(bookId=r['books'][0]['id'])`"],
        ),
    ],
)
def test_a_keyed_read_is_fixed_where_the_call_reads_it(program: str, fixes: list[str]) -> None:
    from autofeedback.flow import sequence_from_program

    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    found = list(checker.iter_findings(sequence_from_program(program, instruction="Dune")))
    lines = program_feedback(found, program).splitlines()
    start = lines.index("With the suggested fixes, these lines read:")
    assert lines[start + 1 : -1] == fixes


@pytest.mark.parametrize(
    ("program", "first"),
    [
        # read two lines up in other quotes than the finding shows, a line after the call
        (
            'r = searchBooks(query="Dune")\nfirst = r["id"]\ngetBook(bookId=first)\nprint(first)',
            f'- line 3 `getBook(bookId=first)`, reading `r["id"]` (line 2): {_NO_ID}',
        ),
        # read on the call's own line in other quotes: no other line to name
        (
            'r = searchBooks(query="Dune")\ngetBook(bookId=r["id"])',
            f'- line 2 `getBook(bookId=r["id"])`: {_NO_ID}',
        ),
    ],
)
def test_the_line_a_keyed_read_is_on_is_named_only_when_it_is_not_the_call_s(
    program: str, first: str
) -> None:
    from autofeedback.flow import sequence_from_program

    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    found = list(checker.iter_findings(sequence_from_program(program, instruction="Dune")))
    assert program_feedback(found, program).splitlines()[1] == first


@pytest.mark.parametrize(
    ("read", "shown"),
    [
        # written as the finding shows it, then in other quotes (found by its syntax)
        ("r." + "x" * 130, "r." + "x" * 118),
        ('r["' + "x" * 130 + '"]', 'r["' + "x" * 117),
    ],
)
def test_a_long_reference_read_on_an_earlier_line_is_named_in_120_characters(
    read: str, shown: str
) -> None:
    from autofeedback.flow import sequence_from_program

    program = f'r = searchBooks(query="Dune")\nfirst = {read}\ngetBook(bookId=first)'
    checker = Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None).sequence_checker()
    found = list(checker.iter_findings(sequence_from_program(program, instruction="Dune")))
    first = program_feedback(found, program).splitlines()[1]
    assert first.startswith(f"- line 3 `getBook(bookId=first)`, reading `{shown}` (line 2): E5.2")

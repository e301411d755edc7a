"""The corrected call shown with the feedback leaves a hole where the value is made up
or a placeholder (E5.3), as it does for a value of the wrong type (E4): with what the
user asked, the scanner reports a placeholder's type error as its E5.3, and the corrected
call used to show the placeholder as if it were the value to send."""

from __future__ import annotations

import pytest

from autofeedback import ApiCatalog, ApiRequest, Scanner
from autofeedback.decide._corrected import corrected_call

TOOLS = [
    {
        "name": "getBook",
        "description": "Get a book by its id",
        "parameters": {
            "type": "object",
            "properties": {"bookId": {"type": "integer", "description": "the book id"}},
            "required": ["bookId"],
        },
    },
    {
        "name": "searchBooks",
        "description": "Search books; returns their ids",
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "books": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"bookId": {"type": "integer"}}},
                }
            },
        },
    },
]
ASKED = "Show me the book Dune"


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(ApiCatalog.from_tools(TOOLS), retriever=None)


@pytest.mark.parametrize("instruction", [ASKED, None])
@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        # a misnamed parameter holding a placeholder: renamed, the placeholder a hole
        ({"book": "<book_id>"}, "<API>getBook(bookId=<integer>)</API>"),
        # a value the model wrote is kept where only its name was wrong
        ({"book": 7}, "<API>getBook(bookId=7)</API>"),
    ],
)
def test_a_placeholder_is_a_hole_in_the_corrected_call(
    scanner: Scanner, arguments: dict[str, object], shown: str, instruction: str | None
) -> None:
    request = ApiRequest(name="getBook", arguments=arguments)
    findings = list(scanner.iter_findings(request, instruction=instruction))
    assert corrected_call(scanner, request, findings, instruction=instruction) == shown


def test_a_placeholder_alone_is_a_hole(scanner: Scanner) -> None:
    request = ApiRequest(name="getBook", arguments={"bookId": "<book_id>"})
    findings = list(scanner.iter_findings(request, instruction=ASKED))
    assert [f.code for f in findings] == ["E5.3"]
    assert corrected_call(scanner, request, findings, instruction=ASKED) == (
        "<API>getBook(bookId=<integer>)</API>"
    )
    assert corrected_call(scanner, request, findings, instruction=ASKED, style="json") == (
        '{"name": "getBook", "arguments": {"bookId": "<integer>"}}'
    )


PAGED = {
    "name": "list_events",
    "description": "Events, page by page.",
    "parameters": {
        "type": "object",
        "properties": {
            "limit": {"type": "integer"},
            "paging": {"type": "object", "properties": {"limit": {"type": "integer"}}},
        },
    },
}


@pytest.mark.parametrize("name", ["list_events", "list_evnts"])
def test_a_wrong_value_inside_an_object_is_a_hole_for_its_parameter_only(name: str) -> None:
    """The E4.1 of ``paging.limit`` holes ``paging``, the parameter it lies in; the
    call's own ``limit=5`` is right and stays (it was the one blanked, by the inner
    key's name, and the wrong value kept), after the API's slip is respelt too."""
    scanner = Scanner(ApiCatalog.from_tools([PAGED]), retriever=None)
    request = ApiRequest(name=name, arguments={"limit": 5, "paging": {"limit": "ten"}})
    findings = list(scanner.iter_findings(request))
    assert ("E4.1", ("argument", "paging", "limit")) in [(f.code, f.location) for f in findings]
    assert corrected_call(scanner, request, findings) == (
        "<API>list_events(limit=5, paging=<object>)</API>"
    )

"""What a repair round keeps, with the findings the real checks make: an API renamed
from a keyboard slip stays renamed where what is left is the model's to answer (another
API fitting the user's words better, E2.1; a made-up value, E5.3), and each code of an
unknown parameter (E3, E3.1, E3.3) is repaired where its words or its value say which
documented parameter it is."""

from __future__ import annotations

from typing import Any

from autofeedback import ApiCatalog, Scanner
from autofeedback.decide import Decider, Decision


def _tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties},
    }


def _travel() -> ApiCatalog:
    unit = {"type": "string", "enum": ["celsius", "fahrenheit"]}
    return ApiCatalog.from_tools(
        [
            _tool(
                "get_weather",
                "Weather forecast for a city.",
                {"city": {"type": "string"}, "unit": unit},
            ),
            _tool(
                "search_flights", "Flights between two airports.", {"origin": {"type": "string"}}
            ),
            _tool("book_hotel", "Book a hotel room in a city.", {"city": {"type": "string"}}),
            _tool(
                "send_email", "Send an email message to a recipient.", {"to": {"type": "string"}}
            ),
            _tool(
                "get_stock_price",
                "Current price of a stock ticker.",
                {"ticker": {"type": "string"}},
            ),
            _tool(
                "translate_text",
                "Translate text into another language.",
                {"text": {"type": "string"}},
            ),
        ]
    )


def _outcome(decision: Decision) -> tuple[Any, ...]:
    assert decision.request is not None
    return (
        decision.action,
        decision.request.name,
        dict(decision.request.arguments),
        [str(r) for r in decision.repairs],
        [(f.code, f.severity) for f in decision.remaining],
    )


def test_a_slip_in_the_api_name_is_repaired_though_another_api_fits_the_words_better(
    api_retriever: Any,
) -> None:
    """``get_weathr`` is ``get_weather`` with a letter left out; that the user asked for a
    stock price is E2.1 on the API it meant, which is the model's to weigh: the name is
    respelt and the E2.1 fed back."""
    decider = Decider(Scanner(_travel(), retriever=api_retriever))
    [decision] = decider.decide(
        {"name": "get_weathr", "arguments": {"city": "Paris"}},
        instruction="What's the stock price of Apple?",
    )
    assert _outcome(decision) == (
        "feedback",
        "get_weather",
        {"city": "Paris"},
        ["E2 api: 'get_weathr' -> 'get_weather'"],
        [("E2.1", "error")],
    )


def test_a_slip_in_the_api_name_is_repaired_beside_a_placeholder_left_to_the_model() -> None:
    decider = Decider(Scanner(_travel(), retriever=None))
    [decision] = decider.decide(
        {"name": "get_weathr", "arguments": {"city": "<city>"}},
        instruction="What's the weather like?",
    )
    assert _outcome(decision) == (
        "feedback",
        "get_weather",
        {"city": "<city>"},
        ["E2 api: 'get_weathr' -> 'get_weather'"],
        [("E5.3", "error")],
    )


def test_a_parameter_another_api_documents_is_respelt_where_it_is_a_slip_of_this_one() -> None:
    """``adress`` is a parameter of ``ship_parcel`` (E3.1 on ``find_store``), and a
    keyboard slip of ``find_store``'s ``address``."""
    catalog = ApiCatalog.from_tools(
        [
            _tool("ship_parcel", "Ship a parcel.", {"adress": {"type": "string"}}),
            _tool("find_store", "The store nearest an address.", {"address": {"type": "string"}}),
        ]
    )
    decider = Decider(Scanner(catalog, retriever=None))
    [decision] = decider.decide({"name": "find_store", "arguments": {"adress": "1 Main St"}})
    assert [f.code for f in decision.findings] == ["E3.1"]
    assert _outcome(decision) == (
        "forward",
        "find_store",
        {"address": "1 Main St"},
        ["E3.1 argument.adress: 'adress' -> 'address'"],
        [],
    )


def test_a_name_the_model_meant_by_its_value_is_renamed_to_the_one_parameter_taking_it(
    api_retriever: Any,
) -> None:
    """With the embedding model ``units`` is E3.3 (closest to ``unit``); no slip (a
    plural is another word), but only ``unit``'s enum holds ``fahrenheit``."""
    decider = Decider(Scanner(_travel(), retriever=api_retriever))
    [decision] = decider.decide(
        {"name": "get_weather", "arguments": {"city": "Paris", "units": "fahrenheit"}}
    )
    assert [f.code for f in decision.findings] == ["E3.3"]
    assert _outcome(decision) == (
        "forward",
        "get_weather",
        {"city": "Paris", "unit": "fahrenheit"},
        ["E3.3 argument.units: 'units' -> 'unit'"],
        [],
    )


def test_a_slip_of_two_parameters_one_of_them_sent_is_the_other_one() -> None:
    """``pags`` is one slip from ``page`` and from ``pages``; the call sends ``pages``
    already, so it meant ``page`` (as the finding's own suggestion says)."""
    catalog = ApiCatalog.from_tools(
        [
            _tool(
                "list_books",
                "Books, page by page.",
                {"page": {"type": "integer"}, "pages": {"type": "integer"}},
            )
        ]
    )
    decider = Decider(Scanner(catalog, retriever=None))
    [decision] = decider.decide({"name": "list_books", "arguments": {"pages": 2, "pags": 3}})
    assert [(f.code, f.suggestion) for f in decision.findings] == [("E3", "page")]
    assert _outcome(decision) == (
        "forward",
        "list_books",
        {"pages": 2, "page": 3},
        ["E3 argument.pags: 'pags' -> 'page'"],
        [],
    )
    [alone] = decider.decide({"name": "list_books", "arguments": {"pags": 3}})
    assert _outcome(alone)[:4] == ("feedback", "list_books", {"pags": 3}, [])


def test_the_corrected_call_keeps_the_api_its_first_round_chose(api_retriever: Any) -> None:
    """The corrected call shown with the feedback respells ``get_weathr``; the next
    round's E2.1 (the stock price fits the user's words better) is a second opinion on
    that choice and does not flip it to another API."""
    from autofeedback import ApiRequest
    from autofeedback.decide._corrected import corrected_call

    scanner = Scanner(_travel(), retriever=api_retriever)
    asked = "What's the stock price of Apple?"
    request = ApiRequest(name="get_weathr", arguments={"city": "Paris"})
    findings = list(scanner.iter_findings(request, instruction=asked))
    assert [(f.code, f.suggestion) for f in findings] == [("E2", "get_weather")]
    assert corrected_call(scanner, request, findings, instruction=asked) == (
        "<API>get_weather(city='Paris')</API>"
    )


#: a search whose body takes ``limit`` only with ``offset`` (``dependentRequired``)
PAGED = {
    "openapi": "3.0.0",
    "info": {"title": "shop", "version": "1"},
    "servers": [{"url": "https://api.example.org"}],
    "paths": {
        "/search": {
            "post": {
                "operationId": "search",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "q": {"type": "string"},
                                    "limit": {"type": "integer"},
                                    "offset": {"type": "integer"},
                                },
                                "dependentRequired": {"limit": ["offset"]},
                            }
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def test_a_round_that_trades_one_error_for_another_is_not_kept() -> None:
    """``Limit`` respelt ``limit`` would fix its E3.2 and break the body's
    ``dependentRequired`` (E4.2): as many errors after the round as before, so the call
    goes back as written; with ``offset`` sent too the same respelling is kept."""
    decider = Decider(Scanner(ApiCatalog.from_obj(PAGED), retriever=None))
    url = "https://api.example.org/search"
    [traded] = decider.decide({"method": "POST", "url": url, "body": '{"q": "dune", "Limit": 5}'})
    assert (traded.action, traded.repairs) == ("feedback", ())
    assert [(f.code, f.location) for f in traded.remaining] == [("E3.2", ("body", "Limit"))]
    assert traded.request is not None and traded.request.body == '{"q": "dune", "Limit": 5}'
    body = '{"q": "dune", "Limit": 5, "offset": 0}'
    [kept] = decider.decide({"method": "POST", "url": url, "body": body})
    assert (kept.action, [str(r) for r in kept.repairs]) == (
        "forward",
        ["E3.2 body.Limit: 'Limit' -> 'limit'"],
    )

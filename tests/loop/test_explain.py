"""The DAC's explanation step: a server error body becomes a query, the docs answer it.

Runs on the real all-MiniLM-L6-v2 model and real FAISS.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog
from autofeedback.loop._explain import MAX_BODY_BYTES, Explanation, error_query, explain_response
from doc_index import DocIndex
from retriever import Embedder, load_embedder


def _op(op_id: str, description: str, errors: dict[str, str]) -> dict[str, Any]:
    responses: dict[str, Any] = {"200": {"description": "OK"}}
    responses.update({status: {"description": text} for status, text in errors.items()})
    return {"get": {"operationId": op_id, "description": description, "responses": responses}}


SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Weather", "version": "1.0"},
    "servers": [{"url": "https://weather.example/v1"}],
    "paths": {
        "/history": _op(
            "get_history",
            "Historical weather observations for a city on one day.",
            {
                "400": "info_code 20000: the parameter `date` must be YYYY-MM-DD.",
                "401": "info_code 10001: the API key is missing or invalid.",
                "422": "info_code 20002: the `date` lies in the future; history ends today.",
            },
        ),
        "/forecast": _op(
            "get_forecast",
            "Daily weather forecast for a city.",
            {
                "400": "info_code 30001: `days` must be between 1 and 14.",
                "429": "info_code 30000: the daily request quota of your plan is exhausted.",
            },
        ),
    },
}


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder()


@pytest.fixture(scope="module")
def index(embedder: Embedder) -> DocIndex:
    return DocIndex.build(ApiCatalog.from_obj(SPEC, source="weather.json"), embedder)


# -- the query ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "query"),
    [
        (400, b'{"info_code": 20000}', "400 Bad Request info_code 20000"),
        (
            429,
            '{"error": {"status": 429, "message": "API rate limit exceeded"}}',
            "429 Too Many Requests error status 429 error message API rate limit exceeded",
        ),
        (
            404,
            '{"success": false, "status_code": 34, '
            '"status_message": "The resource you requested could not be found."}',
            "404 Not Found status_code 34 "
            "status_message The resource you requested could not be found.",
        ),
        (
            400,
            '{"errors": [{"code": "E_DATE", "detail": "bad date"}], "trace": "abc"}',
            "400 Bad Request errors code E_DATE errors detail bad date",
        ),
        (400, '{"oops": {"why": "quota"}}', "400 Bad Request why quota"),
        (400, '"just a string"', "400 Bad Request just a string"),
        (
            404,
            "<html><head><title>404</title></head><body><h1>Not Found</h1></body></html>",
            "404 Not Found 404 Not Found",
        ),
        (503, None, "503 Service Unavailable"),
        (503, b"", "503 Service Unavailable"),
        (499, b"client closed", "499 client closed"),
    ],
)
def test_error_query(status: int, body: str | bytes | None, query: str) -> None:
    assert error_query(status, body) == query


def test_error_query_bounds_what_it_reads() -> None:
    huge = json.dumps({"message": "x" * (10 * MAX_BODY_BYTES)})
    assert len(error_query(400, huge)) < 1000
    assert len(error_query(400, "word " * 1_000_000)) < 1000
    assert error_query(400, b"\xff\xfe not utf-8 \xc3").startswith("400 Bad Request")


# -- retrieval ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "status", "body", "expected"),
    [
        ("get_history", 400, b'{"info_code": 20000}', "YYYY-MM-DD"),
        ("get_history", 422, b'{"info_code": 20002}', "future"),
        ("get_forecast", 400, '{"info_code": 30001, "message": "bad days"}', "between 1 and 14"),
        (None, 429, b'{"info_code": 30000}', "quota"),
        ("not_in_the_spec", 429, b'{"info_code": 30000}', "quota"),
    ],
)
def test_terse_body_retrieves_its_explanation(
    index: DocIndex, operation: str | None, status: int, body: bytes | str, expected: str
) -> None:
    explanation = explain_response(index, operation, status, body)
    assert isinstance(explanation, Explanation)
    assert expected in explanation.hits[0].chunk.text
    assert explanation.text.splitlines()[0] == explanation.hits[0].chunk.text
    assert explanation.query == error_query(status, body)


def test_explanation_stays_within_the_operation(index: DocIndex) -> None:
    explanation = explain_response(index, "get_history", 400, b'{"info_code": 30001}', k=10)
    assert explanation.hits
    assert {h.chunk.api for h in explanation.hits} <= {"get_history", None}
    assert "between 1 and 14" not in explanation.text


def test_explanation_text_joins_the_hits(index: DocIndex) -> None:
    explanation = explain_response(index, "get_history", 401, b"", k=2)
    assert len(explanation.hits) == 2
    assert explanation.text == "\n".join(h.chunk.text for h in explanation.hits)
    assert "API key" in explanation.hits[0].chunk.text


def test_nothing_to_explain_gives_an_empty_text(embedder: Embedder) -> None:
    empty = DocIndex.build(ApiCatalog([]), embedder)
    explanation = explain_response(empty, None, 500, b"boom")
    assert explanation.hits == ()
    assert explanation.text == ""


# -- the real Spotify spec ------------------------------------------------------------


@pytest.fixture(scope="module")
def spotify(embedder: Embedder, request: pytest.FixtureRequest) -> DocIndex:
    data: Path = request.getfixturevalue("shared_data_dir")
    spec = data / "restbench" / "spotify_oas.json"
    if not spec.is_file():
        pytest.skip(f"{spec} is absent")
    return DocIndex.build(ApiCatalog.from_file(spec), embedder)


SPOTIFY_429 = b'{"error": {"status": 429, "message": "API rate limit exceeded"}}'


@pytest.mark.parametrize("operation", ["get-an-album", "search", "create-playlist", None])
def test_spotify_429_retrieves_the_rate_limit_explanation(
    spotify: DocIndex, operation: str | None
) -> None:
    explanation = explain_response(spotify, operation, 429, SPOTIFY_429)
    assert explanation.hits[0].chunk.text == "429: The app has exceeded its rate limits."
    if operation is not None:
        assert {h.chunk.api for h in explanation.hits} <= {operation, None}


def test_spotify_401_retrieves_the_token_explanation(spotify: DocIndex) -> None:
    body = b'{"error": {"status": 401, "message": "The access token expired"}}'
    explanation = explain_response(spotify, "get-track", 401, body)
    assert explanation.hits[0].chunk.text.startswith("401: Bad or expired token.")


# -- what only the server knows (issue 38): cause, concerns, next call ---------------------

BOOKINGS = ApiCatalog.from_file(
    Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookings.yaml"
)


@pytest.fixture(scope="module")
def bookings_index(embedder: Embedder) -> DocIndex:
    return DocIndex.build(BOOKINGS, embedder)


def _explain_call(index: DocIndex, name: str, method: str, url: str, r: Any) -> Explanation:
    from autofeedback import ApiRequest

    request = ApiRequest(method=method, url=url, body=_json(r.request.body), format="http")
    return explain_response(
        index, BOOKINGS.get(name), r.status_code, r.text, request=request, catalog=BOOKINGS
    )


def _json(body: Any) -> Any:
    return json.loads(body) if body else None


def test_a_state_error_names_its_cause_its_resource_and_a_read_first(
    bookings_index: DocIndex,
) -> None:
    import requests

    from autofeedback.checks._words import no_side_effects
    from autofeedback.sandbox import Sandbox

    with Sandbox(BOOKINGS, terse=True) as sandbox, requests.Session() as session:
        made = session.post(
            sandbox.url + "/bookings", json={"venue_id": 1, "day": "2999-05-01", "seats": 2}
        )
        url = f"{sandbox.url}/bookings/{made.json()['id']}/cancel"
        assert session.post(url).status_code == 200
        r = session.post(url)
        e = _explain_call(bookings_index, "cancelBooking", "POST", url, r)
    assert r.json() == {"info_code": 30021}
    assert e.cause == "409: info_code 30021: the booking is already cancelled"
    assert [c.location for c in e.concerns] == [("path", "bookingId")]
    assert e.next_call is not None
    assert e.next_call.operation == "getBooking"
    assert e.next_call.arguments == (("bookingId", made.json()["id"]),)
    assert no_side_effects(BOOKINGS.get("getBooking"))  # type: ignore[arg-type]
    lines = e.lines()
    assert lines[0].startswith("Documentation about this error: 409: info_code 30021")
    assert lines[-1].startswith(f"Next call: getBooking(bookingId='{made.json()['id']}')")


def test_a_duplicate_names_the_field_and_the_list_to_read(bookings_index: DocIndex) -> None:
    import requests

    from autofeedback.sandbox import Sandbox

    with Sandbox(BOOKINGS, terse=True) as sandbox, requests.Session() as session:
        session.post(sandbox.url + "/venues", json={"name": "Hall A"})
        r = session.post(sandbox.url + "/venues", json={"name": "Hall A"})
        e = _explain_call(bookings_index, "createVenue", "POST", sandbox.url + "/venues", r)
    assert e.cause == "409: info_code 30010: a venue with this `name` already exists"
    assert [(c.location, c.got) for c in e.concerns] == [(("body", "name"), "Hall A")]
    assert e.next_call is not None and e.next_call.operation == "listVenues"


def test_a_description_rule_says_the_value_and_the_shape(bookings_index: DocIndex) -> None:
    import requests

    from autofeedback.sandbox import Sandbox

    with Sandbox(BOOKINGS, terse=True) as sandbox, requests.Session() as session:
        body = {"venue_id": 1, "day": "May 1st", "seats": 2}
        r = session.post(sandbox.url + "/bookings", json=body)
        e = _explain_call(bookings_index, "createBooking", "POST", sandbox.url + "/bookings", r)
    assert e.cause.startswith("400: info_code 30020: `day` must be a date written YYYY-MM-DD")
    [concern] = e.concerns
    assert (concern.location, concern.got) == (("body", "day"), "May 1st")
    assert e.next_call is None  # nothing to read first: the value is to be rewritten
    assert 'body.day = "May 1st"' in e.lines()[1]


def test_a_terse_schema_error_says_which_part_is_missing(bookings_index: DocIndex) -> None:
    """The sandbox's own code for a missing parameter, documented nowhere in the spec:
    the cause is what the code's row says, the part is read from the docs."""
    cause_only = explain_response(
        bookings_index,
        BOOKINGS.get("createVenue"),
        400,
        '{"info_code": 40001}',
        request={"city": "Oslo"},
        catalog=BOOKINGS,
    )
    [concern] = cause_only.concerns
    assert concern.missing and concern.location == ("body", "name")


def test_each_transport_gets_the_same_explanation_in_its_shape(
    bookings_index: DocIndex,
) -> None:
    e = explain_response(
        bookings_index,
        BOOKINGS.get("createVenue"),
        409,
        '{"info_code": 30010}',
        request={"name": "Hall A"},
        catalog=BOOKINGS,
    )
    lines = e.lines()
    observation = e.observation('{"info_code": 30010}')
    assert observation.splitlines() == ['Observation: HTTP 409 {"info_code": 30010}', *lines]
    message = e.tool_message("call_1", '{"info_code": 30010}')
    assert message["role"] == "tool" and message["tool_call_id"] == "call_1"
    assert message["content"].splitlines()[1:] == lines
    result = e.mcp_result('{"info_code": 30010}')
    assert result["isError"] is True
    assert result["content"][0]["text"].splitlines()[1:] == lines

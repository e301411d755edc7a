"""The feedback loop end to end: a scripted LLM (the one test double: the LLM is the
external party), the real sandbox on 127.0.0.1, the real embedding model and FAISS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ConfigurationError
from autofeedback.loop._llm import CallableLLM, Usage
from autofeedback.loop._loop import HOOKS, FeedbackLoop
from autofeedback.serve._sandbox import Sandbox

SPEC = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"
INSTRUCTION = "Find science books published after 1 January 2020"


@pytest.fixture(scope="module")
def index(bookshop: ApiCatalog) -> Any:
    from doc_index import DocIndex

    return DocIndex.build(bookshop)


class Script:
    """Replies with the next scripted output; records every transcript it was shown."""

    def __init__(self, *outputs: str) -> None:
        self.outputs = list(outputs)
        self.seen: list[list[dict[str, str]]] = []

    def __call__(self, messages: list[dict[str, str]]) -> tuple[str, Usage]:
        self.seen.append(messages)
        if not self.outputs:
            raise AssertionError("the loop asked the model more often than scripted")
        return self.outputs.pop(0), Usage(prompt_tokens=100, completion_tokens=20)


GOOD = "<API>searchBooks(query='science', genre='science', published_after='2020-01-01')</API>"


def test_whole_round_trip(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any, api_retriever: Any
) -> None:
    """bad name -> static feedback -> bad date (static budget spent, so it is sent) ->
    terse_bookshop server error -> explanation from the docs -> corrected request -> success."""
    from autofeedback import Scanner

    script = Script(
        "<API>search_books(query='science')</API>",
        "<API>searchBooks(query='science', published_after='01/01/2020')</API>",
        GOOD,
    )
    loop = FeedbackLoop(
        CallableLLM(script),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        scanner=Scanner(bookshop, retriever=api_retriever),
        max_static=1,
        repair="off",
    )
    result = loop.run(INSTRUCTION)
    assert result.success and result.stop_reason == "success" and result.status == 200
    first, second, third = result.attempts
    assert first.findings[0].code == "E2.2" and first.feedback_kind == "static"
    assert "searchBooks" in (first.feedback or "")
    assert second.status == 400 and second.feedback_kind == "dynamic"
    assert json.loads(second.response_excerpt or "{}") == {"info_code": 20002}
    assert "YYYY-MM-DD" in (second.explanation or "")  # only the docs could say this
    assert "Documentation about this error" in (second.feedback or "")
    assert third.status == 200 and third.feedback is None
    assert result.tokens == 3 * 120
    # the model saw the static feedback, then the dynamic one, in new lists each time
    assert len(script.seen[0]) == 2 and len(script.seen[1]) == 4 and len(script.seen[2]) == 6
    assert "info_code" in script.seen[2][-1]["content"]


def test_static_budget_stops_and_never_sends(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any
) -> None:
    before = len(terse_bookshop.requests_seen)
    script = Script(
        *[
            "<API>search_books(query='x')</API>",
            "<API>findBooks(query='x')</API>",
            "<API>search_books(q='x')</API>",
        ]
    )
    loop = FeedbackLoop(
        CallableLLM(script),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        max_static=2,
        max_dynamic=2,
        repair="off",
    )
    result = loop.run(INSTRUCTION)
    assert not result.success and result.stop_reason == "static-budget"
    assert len(result.attempts) == 3
    assert len(terse_bookshop.requests_seen) == before  # nothing with E1-E3 was ever sent


def test_repeated_request_stops_early(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any
) -> None:
    same = "<API>search_books(query='x')</API>"
    loop = FeedbackLoop(
        CallableLLM(Script(same, same)),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        max_static=3,
        repair="off",
    )
    result = loop.run(INSTRUCTION)
    assert result.stop_reason == "repeated" and len(result.attempts) == 2


def test_dynamic_budget_and_exhausted_hook(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any
) -> None:
    bad = "<API>searchBooks(query='x', published_after='{}')</API>"
    fired: dict[str, list[Any]] = {name: [] for name in HOOKS}
    hooks = {name: [fired[name].append] for name in HOOKS}
    loop = FeedbackLoop(
        CallableLLM(Script(*(bad.format(d) for d in ("May 1", "June 1", "July 1")))),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        static=False,
        max_dynamic=2,
        hooks=hooks,
    )
    result = loop.run(INSTRUCTION)
    assert result.stop_reason == "dynamic-budget" and len(result.attempts) == 3
    assert [a.status for a in result.attempts] == [400, 400, 400]
    assert all(fired[name] for name in HOOKS), {k: len(v) for k, v in fired.items()}
    assert fired["exhausted"] == [result]


def test_token_budget(bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any) -> None:
    loop = FeedbackLoop(
        CallableLLM(Script("<API>search_books(query='x')</API>")),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        token_budget=50,
        repair="off",
    )
    result = loop.run(INSTRUCTION)
    assert result.stop_reason in ("token-budget", "static-budget") and len(result.attempts) == 1


def test_model_cannot_redirect_to_another_host(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any
) -> None:
    evil = "GET http://203.0.113.9/books?query=x"
    loop = FeedbackLoop(
        CallableLLM(Script(evil, evil)),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        max_static=1,
    )
    result = loop.run(INSTRUCTION)
    assert not result.success
    assert result.attempts[0].findings[0].code == "E2"
    assert all(a.status is None for a in result.attempts)


def test_trace_redacts_credentials(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    loop = FeedbackLoop(
        CallableLLM(Script(GOOD)),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        headers={"Authorization": "Bearer s3cr3t-token", "X-Api-Key": "k-999"},
    )
    result = loop.run(INSTRUCTION, trace=trace)
    assert result.success
    text = trace.read_text()
    assert "s3cr3t-token" not in text and "k-999" not in text and "[REDACTED]" in text
    lines = [json.loads(x) for x in text.splitlines()]
    assert lines[-1]["summary"] is True and lines[-1]["success"] is True
    assert lines[0]["sent"]["headers"]["Authorization"] == "[REDACTED]"


def test_caller_messages_and_bad_config(bookshop: ApiCatalog, terse_bookshop: Sandbox) -> None:
    with pytest.raises(ConfigurationError):
        FeedbackLoop(
            CallableLLM(Script()), bookshop, base_url=terse_bookshop.url, hooks={"nope": []}
        )
    with pytest.raises(ConfigurationError):
        FeedbackLoop(CallableLLM(Script()), bookshop, max_static=-1)


def test_custom_requirement(bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any) -> None:
    seen: list[int] = []

    def never(op: Any, response: Any) -> bool:
        seen.append(response.status_code)
        return False

    loop = FeedbackLoop(
        CallableLLM(Script(GOOD, GOOD)),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        requirement=never,
        max_dynamic=1,
    )
    result = loop.run(INSTRUCTION)
    assert seen == [200] and result.stop_reason == "repeated"


def test_dynamic_only_sends_what_the_scanner_flags(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any
) -> None:
    """gate=False (the Dynamic setting): an unknown parameter (E3) is sent anyway, the
    terse server refuses it, and only the retrieved docs explain the code."""
    before = len(terse_bookshop.requests_seen)
    script = Script("<API>searchBooks(query='science', year='2020')</API>", GOOD)
    loop = FeedbackLoop(
        CallableLLM(script),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        static=False,
        gate=False,
        repair="off",
    )
    result = loop.run(INSTRUCTION)
    assert result.success and [a.status for a in result.attempts] == [400, 200]
    first = result.attempts[0]
    assert first.findings[0].code.startswith("E3") and first.feedback_kind == "dynamic"
    assert json.loads(first.response_excerpt or "{}") == {"info_code": 20009}
    assert "only query, genre" in (first.explanation or "")
    assert "Error E3" not in (first.feedback or "")  # no static feedback leaks in
    assert "ApiName" not in (first.feedback or "")  # no placeholder call to copy
    assert len(terse_bookshop.requests_seen) == before + 2


def test_dynamic_only_unknown_api_reaches_the_server(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any
) -> None:
    script = Script("<API>search_books(query='science')</API>", GOOD)
    loop = FeedbackLoop(
        CallableLLM(script),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        static=False,
        gate=False,
        repair="off",
    )
    result = loop.run(INSTRUCTION)
    first = result.attempts[0]
    assert first.findings[0].code == "E2.2" and first.status == 404
    assert first.feedback_kind == "dynamic" and result.success


def test_dynamic_only_unparsed_output_stops(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any
) -> None:
    loop = FeedbackLoop(
        CallableLLM(Script("I cannot help with that.")),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        static=False,
        gate=False,
    )
    result = loop.run(INSTRUCTION)
    assert result.stop_reason == "blocked" and len(result.attempts) == 1
    assert result.attempts[0].error == "request not sent: no request could be parsed"


DIALOGUE = (
    "User: Please order two copies of book 42, express shipping, and cancel my order "
    "ORD-123456.\n"
    "API-Request: [createOrder(book_id=42, quantity=2, shipping='express')]\n"
    "API-Request: [cancelOrder(orderId='ORD-123456')]\n"
    "AI: Done, the order is placed and the old order is cancelled.\n"
)
LAST_TURN = "User: Thanks. Now find science books."


@pytest.mark.parametrize("intent", [None, LAST_TURN])
def test_intent_is_what_the_e2_1_check_compares_with(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any, api_retriever: Any, intent: Any
) -> None:
    """The api-bank-214 regression: judged against the whole dialogue, the APIs it already
    called fit better than the right one, so a correct request drew E2.1 feedback."""
    from autofeedback import Scanner

    right = "<API>searchBooks(query='science', genre='science')</API>"
    loop = FeedbackLoop(
        CallableLLM(Script(right)),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        scanner=Scanner(bookshop, retriever=api_retriever),
        max_dynamic=0,
    )
    result = loop.run(DIALOGUE + LAST_TURN, intent=intent)
    first = result.attempts[0]
    assert result.success and len(result.attempts) == 1
    if intent is None:  # a warning here; an error when the margin is wider (api-bank-214)
        assert [f.code for f in first.findings] == ["E2.1"]
    else:
        assert first.findings == ()


def test_static_feedback_carries_errors_not_warnings(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any, api_retriever: Any
) -> None:
    """The api-bank-163 regression: an E3 error fed back together with a low-margin E2.1
    warning, and the model switched to the API the warning named."""
    from autofeedback import Scanner

    script = Script("<API>searchBooks(query='science', year='2020')</API>", GOOD)
    loop = FeedbackLoop(
        CallableLLM(script),
        bookshop,
        base_url=terse_bookshop.url,
        doc_index=index,
        scanner=Scanner(bookshop, retriever=api_retriever),
        repair="off",
    )
    result = loop.run(DIALOGUE + LAST_TURN)
    first = result.attempts[0]
    assert {(f.code.split(".")[0], f.severity) for f in first.findings} >= {
        ("E3", "error"),
        ("E2", "warning"),
    }
    assert "E2.1" not in (first.feedback or "") and "cancelOrder" not in (first.feedback or "")
    assert "year" in (first.feedback or "") and result.success


BOOKINGS = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookings.yaml"


@pytest.fixture(scope="module")
def bookings() -> tuple[ApiCatalog, Any]:
    """bookings.yaml (its refusals document state errors) and its doc index."""
    from doc_index import DocIndex

    catalog = ApiCatalog.from_file(BOOKINGS)
    return catalog, DocIndex.build(catalog)


def _bookings_run(
    bookings: tuple[ApiCatalog, Any], retriever: Any, url: str, instruction: str, *outputs: str
) -> Any:
    """One Static & Dynamic run over bookings.yaml's sandbox at ``url``, the model
    scripted, the semantic checks on, no repairs."""
    from autofeedback import Scanner

    catalog, index = bookings
    loop = FeedbackLoop(
        CallableLLM(Script(*outputs)),
        catalog,
        base_url=url,
        doc_index=index,
        scanner=Scanner(catalog, retriever=retriever),
        max_static=1,
        max_dynamic=2,
        repair="off",
    )
    return loop.run(instruction)


def test_the_call_the_docs_name_after_a_refusal_is_no_wrong_api(
    bookings: tuple[ApiCatalog, Any], api_retriever: Any
) -> None:
    """The user asks to cancel a booking that is already cancelled: the server refuses
    (409, 30021), the docs' explanation names the read to make first (getBooking), and the
    model makes it. Checked against the user's words alone, that read is a wrong API
    (E2.1: cancelBooking fits better) and was held, so Static & Dynamic never sent it
    (issue 38's state slice). The docs named it: it is sent (its E2.1 shown as a
    warning), and the run ends on its 200. A read the docs did not name is still held."""
    import requests

    with Sandbox(bookings[0], terse=True) as sandbox:
        made = requests.post(
            sandbox.url + "/bookings",
            json={"venue_id": 1, "day": "2999-05-01", "seats": 2},
            timeout=10,
        ).json()
        booking = made["id"]
        requests.post(f"{sandbox.url}/bookings/{booking}/cancel", timeout=10).raise_for_status()

        def run(*outputs: str) -> Any:
            instruction = f"Cancel my reservation {booking}."
            return _bookings_run(bookings, api_retriever, sandbox.url, instruction, *outputs)

        cancel = f"<API>cancelBooking(bookingId='{booking}')</API>"
        read = f"<API>getBooking(bookingId='{booking}')</API>"
        result = run(cancel, read)
        refused, sent = result.attempts
        assert refused.status == 409 and refused.feedback_kind == "dynamic"
        assert f"Next call: getBooking(bookingId='{booking}')" in (refused.feedback or "")
        # shown, as a warning: the user's words and the docs disagree, the docs win
        assert [(f.code, f.severity) for f in sent.findings if f.code == "E2.1"] == [
            ("E2.1", "warning")
        ]
        assert sent.status == 200 and result.success

        # the same read before any refusal named it: the user's words still judge it
        held = run(read, cancel, cancel)
        first = held.attempts[0]
        assert [f.code for f in first.findings if f.severity == "error"] == ["E2.1"]
        assert first.status is None and first.feedback_kind == "static"


def test_after_a_refusal_nothing_can_fix_an_answer_in_words_ends_the_run(
    bookings: tuple[ApiCatalog, Any], api_retriever: Any
) -> None:
    """The venue quota is reached (429, 30011: at most 3 venues): the docs' cause names no
    part of the request and no call to make first, so nothing the model sends can lift
    it. Its answer in words ends the run ("answered"), where an E1 ("no API request")
    sent it back to the refused create. After a duplicate name (409, 30010), whose cause
    names the field, an answer in words is still fed back."""
    import requests

    words = "I cannot create the venue: the booking service allows at most 3 venues."
    ask = "Create a venue called 'Main Hall' in Lyon."
    create = "<API>createVenue(name='Main Hall', city='Lyon')</API>"
    with Sandbox(bookings[0], terse=True) as sandbox:
        for name in ("A", "B", "C"):
            requests.post(
                sandbox.url + "/venues", json={"name": name, "city": "Gent"}, timeout=10
            ).raise_for_status()
        result = _bookings_run(bookings, api_retriever, sandbox.url, ask, create, words)
    refused, answered = result.attempts
    assert refused.status == 429 and refused.feedback_kind == "dynamic"
    assert answered.request is None and answered.feedback is None
    assert result.stop_reason == "answered" and not result.success

    with Sandbox(bookings[0], terse=True) as sandbox:
        requests.post(
            sandbox.url + "/venues", json={"name": "Main Hall", "city": "Paris"}, timeout=10
        ).raise_for_status()
        again = _bookings_run(bookings, api_retriever, sandbox.url, ask, create, words, create)
    refused, told = again.attempts[:2]
    assert refused.status == 409
    assert told.request is None and told.feedback_kind == "static"
    assert [f.code for f in told.findings] == ["E1"]

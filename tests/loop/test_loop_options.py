"""The loop's options beyond the paper: the corrected call in static feedback, focused
documentation on retries, retry-once on a repeat, and grammar-constrained decoding.

The LLM is scripted (the one test double); the sandbox, scanner, retriever and FAISS
index are real."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from autofeedback import ApiCatalog, ConfigurationError, Scanner
from autofeedback._parse._output import to_requests
from autofeedback.decide._corrected import corrected_call
from autofeedback.loop._llm import CallableLLM, Usage
from autofeedback.loop._loop import FeedbackLoop
from autofeedback.loop._prompt import call_schema
from autofeedback.serve._sandbox import Sandbox

INSTRUCTION = "Find science books published after 1 January 2020"


@pytest.fixture(scope="module")
def index(bookshop: ApiCatalog) -> Any:
    from doc_index import DocIndex

    return DocIndex.build(bookshop)


@pytest.fixture(scope="module")
def scanner(bookshop: ApiCatalog, api_retriever: Any) -> Scanner:
    return Scanner(bookshop, retriever=api_retriever)


class Script:
    """Replies with the next scripted output; records every transcript (and schema)."""

    def __init__(self, *outputs: str) -> None:
        self.outputs = list(outputs)
        self.seen: list[list[dict[str, str]]] = []
        self.schemas: list[Any] = []

    def __call__(self, messages: list[dict[str, str]]) -> tuple[str, Usage]:
        self.seen.append(messages)
        if not self.outputs:
            raise AssertionError("the loop asked the model more often than scripted")
        return self.outputs.pop(0), Usage(prompt_tokens=100, completion_tokens=20)


class ConstrainedScript(Script):
    """A client whose ``complete`` takes ``schema=``, as LocalLLM's and the
    OpenAI-compatible client's do."""

    last_usage: Usage | None = None

    def complete(
        self, messages: Sequence[Mapping[str, str]], *, schema: Mapping[str, Any] | None = None
    ) -> str:
        self.schemas.append(schema)
        text, self.last_usage = self([dict(m) for m in messages])
        return text


def _fix(scanner: Scanner, text: str, instruction: str = INSTRUCTION) -> str | None:
    requests_, problem = to_requests(text)
    request = requests_[0] if requests_ else None
    findings = (
        [problem] if problem else list(scanner.iter_findings(request, instruction=instruction))
    )
    return corrected_call(scanner, request, findings, instruction=instruction)


# -- the corrected call -------------------------------------------------------------------


def test_corrected_call_applies_every_fix_across_rounds(scanner: Scanner) -> None:
    # E2.2 first; the renamed API's own checks then find the E3.2 spelling and the E4.1
    # value, which only the user's request can supply: a typed hole
    assert (
        _fix(scanner, "<API>search_books(qurey='science', limit='three')</API>")
        == "<API>searchBooks(query='science', limit=<integer>)</API>"
    )


def test_corrected_call_adds_missing_required_and_drops_unknown(scanner: Scanner) -> None:
    assert (
        _fix(scanner, "<API>createOrder(book_id=5, colour='red')</API>", "Order book 5")
        == "<API>createOrder(book_id=5, quantity=<integer>)</API>"
    )


def test_corrected_call_reads_http_requests(scanner: Scanner) -> None:
    assert _fix(scanner, "GET /books?qurey=science") == "<API>searchBooks(query='science')</API>"


@pytest.mark.parametrize(
    "text",
    [
        "I cannot help with that.",  # E1: nothing to correct
        "<API>searchBooks(query='science', published_after='2020-01-01')</API>",  # clean
    ],
)
def test_corrected_call_none_when_nothing_to_apply(scanner: Scanner, text: str) -> None:
    assert _fix(scanner, text) is None


# -- the loop's options -------------------------------------------------------------------


def _loop(
    script: Script, bookshop: ApiCatalog, sandbox: Sandbox, index: Any, scanner: Scanner, **kw: Any
) -> FeedbackLoop:
    llm = script if isinstance(script, ConstrainedScript) else CallableLLM(script)
    kw.setdefault("repair", "off")  # these options shape the feedback: nothing repaired
    return FeedbackLoop(llm, bookshop, base_url=sandbox.url, doc_index=index, scanner=scanner, **kw)


GOOD = "<API>searchBooks(query='science', published_after='2020-01-01')</API>"


def test_skeleton_carries_the_corrected_call(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any, scanner: Scanner
) -> None:
    script = Script("<API>search_books(qurey='science')</API>", GOOD)
    result = _loop(script, bookshop, terse_bookshop, index, scanner, skeleton=True).run(INSTRUCTION)
    assert result.success
    feedback = result.attempts[0].feedback or ""
    assert "The request with these corrections: <API>searchBooks(query='science')</API>" in (
        feedback
    )
    assert "placeholder" not in feedback  # no hole to fill
    assert feedback.endswith("Please regenerate the API request.")

    # off by default: the paper's feedback
    plain = Script("<API>search_books(qurey='science')</API>", GOOD)
    result = _loop(plain, bookshop, terse_bookshop, index, scanner).run(INSTRUCTION)
    assert "corrections" not in (result.attempts[0].feedback or "")


def test_focus_docs_documents_only_the_apis_in_question(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any, scanner: Scanner
) -> None:
    script = Script("<API>search_books(query='science')</API>", GOOD)
    result = _loop(script, bookshop, terse_bookshop, index, scanner, focus_docs=True).run(
        INSTRUCTION
    )
    assert result.success
    first, retry = script.seen
    assert "createOrder" in first[0]["content"]
    assert "- searchBooks:" in retry[0]["content"] and "createOrder" not in retry[0]["content"]
    assert retry[1:3] == [*first[1:], {"role": "assistant", "content": script_output(result)}]


def script_output(result: Any) -> str:
    return result.attempts[0].output  # type: ignore[no-any-return]


def test_repeat_retries_restates_the_finding_once(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any, scanner: Scanner
) -> None:
    same = "<API>search_books(query='science')</API>"
    script = Script(same, same, GOOD)
    result = _loop(script, bookshop, terse_bookshop, index, scanner, repeat_retries=1).run(
        INSTRUCTION
    )
    assert result.success and len(result.attempts) == 3
    again = result.attempts[1]
    assert again.feedback is not None and again.feedback.startswith("You sent the same request")
    assert result.attempts[0].feedback in again.feedback  # the finding restated

    # once only: a third identical answer stops the loop
    script = Script(same, same, same)
    result = _loop(script, bookshop, terse_bookshop, index, scanner, repeat_retries=1).run(
        INSTRUCTION
    )
    assert result.stop_reason == "repeated" and len(result.attempts) == 3


def test_constrain_asks_for_json_calls_under_the_prompts_schema(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, index: Any, scanner: Scanner
) -> None:
    call = {
        "name": "searchBooks",
        "arguments": {"query": "science", "published_after": "2020-01-01"},
    }
    script = ConstrainedScript(json.dumps(call))
    result = _loop(script, bookshop, terse_bookshop, index, scanner, constrain=True).run(
        INSTRUCTION
    )
    assert result.success and result.status == 200
    assert (
        '"arguments"' in script.seen[0][0]["content"]
        and "<API>" not in script.seen[0][0]["content"]
    )
    schema = script.schemas[0]
    assert schema == call_schema(bookshop.operations)
    import jsonschema

    jsonschema.validate(call, schema)
    with pytest.raises(jsonschema.ValidationError):  # an undocumented parameter
        jsonschema.validate({"name": "searchBooks", "arguments": {"query": "x", "q": 1}}, schema)
    with pytest.raises(jsonschema.ValidationError):  # a missing required one
        jsonschema.validate({"name": "getBook", "arguments": {}}, schema)
    with pytest.raises(jsonschema.ValidationError):  # a made-up API
        jsonschema.validate({"name": "findBooks", "arguments": {}}, schema)


def test_constrain_needs_a_client_that_takes_a_schema(
    bookshop: ApiCatalog, terse_bookshop: Sandbox
) -> None:
    with pytest.raises(ConfigurationError, match="schema="):
        FeedbackLoop(CallableLLM(Script()), bookshop, base_url=terse_bookshop.url, constrain=True)
    with pytest.raises(ConfigurationError, match="repeat_retries"):
        FeedbackLoop(
            CallableLLM(Script()), bookshop, base_url=terse_bookshop.url, repeat_retries=-1
        )

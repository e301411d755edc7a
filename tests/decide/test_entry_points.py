"""Every entry point makes the one decision: the same call is repaired the same way by
``guard``, the tool-call helpers, the ``requests`` guard, the loop, both runners and the
audit, and each shows the repair where its user looks (a log line, a trace row, a
report field). The proxies have their own tests (tests/integrations/test_proxy.py,
test_mcp_proxy.py). The LLM is the one test double; the sandbox is real."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from autofeedback import (
    ApiCatalog,
    ConfigurationError,
    Finding,
    Scanner,
    ToolCallRejected,
    check_tool_calls,
    decide_tool_calls,
    guard,
    guard_session,
    tool_messages,
)
from autofeedback.cli import run as cli_run
from autofeedback.loop._llm import CallableLLM
from autofeedback.loop._loop import FeedbackLoop
from autofeedback.runners import ProgramRunner, ReactRunner
from autofeedback.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "examples" / "bookshop.yaml"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]


@pytest.fixture(scope="module")
def sandbox(bookshop: ApiCatalog) -> Iterator[Sandbox]:
    with Sandbox(bookshop, seed=3) as server:
        yield server


def _script(*outputs: str) -> tuple[CallableLLM, list[list[dict[str, str]]]]:
    seen: list[list[dict[str, str]]] = []

    def answer(messages: list[dict[str, str]]) -> str:
        seen.append(messages)
        return outputs[len(seen) - 1]

    return CallableLLM(answer), seen


def test_guard_runs_the_tool_with_the_repaired_arguments_and_logs_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    got: list[Any] = []

    @guard(TOOLS, retriever=None)
    def get_weather(city: str, days: int = 1) -> str:
        got.append((city, days))
        return "sunny"

    with caplog.at_level(logging.WARNING, logger="autofeedback"):
        assert get_weather(City="Paris", days="3") == "sunny"  # type: ignore[call-arg]
    assert got == [("Paris", 3)]
    assert "E3.2 argument.City: 'City' -> 'city'" in caplog.text
    with pytest.raises(ToolCallRejected) as info:  # not certain: still the model's
        get_weather(days=2)
    assert [f.code for f in info.value.findings] == ["E3.4"]


def test_tool_call_helpers_agree_in_every_shape() -> None:
    claude = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"City": "Lima"}}
        ],
    }
    gemini = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "get_weather", "args": {"City": "Lima"}}}],
                }
            }
        ]
    }
    bedrock = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": "b1",
                            "name": "get_weather",
                            "input": {"City": "Lima"},
                        }
                    }
                ],
            }
        }
    }
    chat = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"City": "Lima"}'},
            }
        ],
    }
    for message in (claude, gemini, bedrock, chat):
        [finding] = [f for f in check_tool_calls(message, TOOLS, retriever=None) if f.fix]
        assert str(finding.fix) == "E3.2 argument.City: 'City' -> 'city'"
        decided = decide_tool_calls(message, TOOLS, retriever=None)
        assert decided.ok and decided.calls[0].arguments == {"city": "Lima"}
        assert "City" not in json.dumps(decided.message) and "city" in json.dumps(decided.message)
        assert message != decided.message  # the caller's message is never changed
        # tool_messages answers as written: the call is not run here, and the reply names
        # the repaired call to make
        [reply] = tool_messages(message, TOOLS, retriever=None)
        assert '"arguments": {"city": "Lima"}' in json.dumps(reply, ensure_ascii=False).replace(
            '\\"', '"'
        )
        assert decide_tool_calls(message, TOOLS, retriever=None, repair="off").replies


def test_the_requests_guard_sends_the_repaired_request_and_says_so(
    bookshop: ApiCatalog, sandbox: Sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    seen = len(sandbox.requests_seen)
    with requests.Session() as s:
        guard_session(s, bookshop, base_url=sandbox.url, retriever=None)
        with caplog.at_level(logging.WARNING, logger="autofeedback"):
            response = s.get(sandbox.url + "/Books", params={"query": "dune", "Limit": "5"})
    assert response.status_code == 200
    [sent] = list(sandbox.requests_seen)[seen:]
    assert sent.status == 200
    assert "/books?query=dune&limit=5" in response.url
    assert "was sent with the repairs" in caplog.text and "'Limit' -> 'limit'" in caplog.text


def test_the_loop_sends_the_repaired_request_and_traces_the_repairs(
    bookshop: ApiCatalog, sandbox: Sandbox, tmp_path: Path
) -> None:
    llm, seen = _script("<API>search_books(query='dune', limit='3')</API>")
    trace = tmp_path / "trace.jsonl"
    result = FeedbackLoop(llm, bookshop, base_url=sandbox.url).run("Find Dune", trace=trace)
    assert result.success and len(seen) == 1 and len(result.attempts) == 1
    assert result.request is not None and result.request.name == "searchBooks"
    [attempt] = result.attempts
    assert [str(r) for r in attempt.repairs] == ["E2.2 api: 'search_books' -> 'searchBooks'"]
    row = json.loads(trace.read_text().splitlines()[0])
    assert row["repairs"][0]["after"] == "searchBooks" and row["request"]["name"] == "search_books"


def test_the_program_runner_takes_the_repaired_program(bookshop: ApiCatalog) -> None:
    llm, seen = _script(
        '```python\nb = searchBooks(query="Dune")\nr = listReviews(bookId=b.book[0].id)\n```'
    )
    result = ProgramRunner(llm, bookshop).run("Show me the reviews of Dune")
    assert result.stop_reason == "clean" and len(seen) == 1
    assert result.program.endswith("listReviews(bookId=b.books[0].id)")
    assert [r.code for r in result.repairs] == ["E5.2"]
    off = ProgramRunner(
        _script("b = searchBooks(query='x')\ngetBook(bookId=b.book[0].id)")[0],
        bookshop,
        repair="off",
        max_rounds=0,
    ).run("x")
    assert off.stop_reason == "feedback-budget" and not off.repairs


def test_the_react_runner_sends_a_repaired_call_without_asking_again(
    bookshop: ApiCatalog, sandbox: Sandbox
) -> None:
    sandbox.reset()
    llm, seen = _script(
        "Thought: search.\nAction: <API>search_books(query='Dune')</API>",
        "Thought: done.\nFinal Answer: found it",
    )
    result = ReactRunner(llm, bookshop, base_url=sandbox.url).run("Find the book Dune")
    assert result.stop_reason == "answered" and len(seen) == 2
    assert [(r.name, s) for r, s, _ in result.calls] == [("searchBooks", 200)]
    assert result.turns[0].repairs and result.turns[0].request.name == "search_books"
    # the model's next turn sees the call as it was sent
    assert "<API>searchBooks(query='Dune')</API>" in seen[1][-2]["content"]


def test_the_react_runner_takes_the_id_the_search_returned(
    bookshop: ApiCatalog, sandbox: Sandbox
) -> None:
    sandbox.reset()
    llm, seen = _script(
        "Action: <API>searchBooks(query='Dune')</API>",
        "Action: <API>getBook(bookId='<book_id>')</API>",
        "Final Answer: Frank Herbert",
    )
    result = ReactRunner(llm, bookshop, base_url=sandbox.url).run("Who wrote Dune?")
    assert [(r.name, s) for r, s, _ in result.calls] == [("searchBooks", 200), ("getBook", 200)]
    [fix] = result.turns[1].repairs
    assert (fix.code, fix.before, fix.after) == ("E5.3", "<book_id>", 7)
    assert len(seen) == 3


def test_audit_fix_writes_each_record_again_in_its_own_shape(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    records = [
        {"id": "call", "call": {"name": "getBook", "arguments": '{"bookID": 7}'}},
        {"id": "text", "output": "Sure: <API>search_books(query='dune')</API>"},
        {"id": "http", "request": {"method": "GET", "url": "/Books?query=dune&Limit=5"}},
        {"id": "program", "output": 'b = searchBooks(query="Dune")\ngetBook(bookId=b.book[0].id)'},
        {"id": "clean", "call": {"name": "getBook", "arguments": {"bookId": 7}}},
        {"id": "left", "call": {"name": "searchBooks", "arguments": {"query": "x", "sort": "x"}}},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    out, err = io.StringIO(), io.StringIO()
    argv = ["audit", str(log), "--spec", str(SPEC), "--no-semantic", "--format", "jsonl"]
    assert cli_run([*argv, "--fix"], out, err) == 1, err.getvalue()
    lines = {d["id"]: d for d in map(json.loads, out.getvalue().splitlines())}
    assert lines["call"]["repaired"] == {"name": "getBook", "arguments": '{"bookId": 7}'}
    assert lines["text"]["repaired"] == "Sure: <API>searchBooks(query='dune')</API>"
    assert lines["http"]["repaired"] == {"method": "GET", "url": "/books?query=dune&limit=5"}
    assert lines["program"]["repaired"].endswith("getBook(bookId=b.books[0].id)")
    assert lines["call"]["repairs"] == [
        {"code": "E3.2", "location": ["argument", "bookID"], "before": "bookID", "after": "bookId"}
    ]
    assert "repaired" not in lines["clean"] and "repaired" not in lines["left"]
    assert not lines["call"]["ok"]  # the record as logged had an error
    # without --fix nothing changes
    plain = io.StringIO()
    cli_run(argv, plain, io.StringIO())
    assert "repaired" not in plain.getvalue() and '"fix"' not in plain.getvalue()


def _chat(arguments: Any, *, legacy: bool = False) -> dict[str, Any]:
    function = {"name": "Get_Weather", "arguments": arguments}
    if legacy:  # the pre-tools function_call: the block is the function itself
        return {"role": "assistant", "function_call": function}
    calls = [{"id": "c1", "type": "function", "function": function}]
    # a call with nothing to repair beside it stays as it is
    calls.append({"id": "c2", "type": "function", "function": _LIMA})
    return {"role": "assistant", "content": None, "tool_calls": calls}


_LIMA = {"name": "get_weather", "arguments": {"city": "Lima"}}
_AS_TEXT = '{"City": "Zürich"}'
_AS_OBJECT = {"City": "Zürich"}


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(_chat(_AS_TEXT), id="openai-chat-arguments-text"),
        pytest.param(_chat(_AS_OBJECT), id="openai-chat-arguments-object"),
        pytest.param(_chat(_AS_TEXT, legacy=True), id="openai-chat-function-call"),
        pytest.param(
            {"output": [{"type": "function_call", "call_id": "r1", "name": "Get_Weather",
                         "arguments": _AS_TEXT}]},
            id="openai-responses-arguments-text",
        ),
        pytest.param(
            {"output": [{"type": "function_call", "call_id": "r1", "name": "Get_Weather",
                         "arguments": _AS_OBJECT}]},
            id="openai-responses-arguments-object",
        ),
        pytest.param(
            {"role": "assistant", "content": [
                {"type": "text", "text": "hi"},
                {"type": "tool_use", "id": "t1", "name": "Get_Weather", "input": _AS_OBJECT},
            ]},
            id="anthropic",
        ),
        pytest.param(
            {"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "Get_Weather", "args": _AS_OBJECT, "id": "g1"}}
            ]}}]},
            id="gemini",
        ),
        pytest.param(
            {"output": {"message": {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "b1", "name": "Get_Weather", "input": _AS_OBJECT}}
            ]}}},
            id="bedrock",
        ),
    ],
)  # fmt: skip
def test_the_repaired_message_is_the_models_own_with_the_repaired_name_and_arguments(
    message: dict[str, Any],
) -> None:
    """What the caller sends on: the same message, the same keys and ids, each repaired
    call's name and arguments changed in place (text arguments stay text, written as
    the model wrote them, not escaped), every other call as it was."""
    written = json.dumps(message, ensure_ascii=False)
    expected = json.loads(written.replace("Get_Weather", "get_weather").replace("City", "city"))
    decided = decide_tool_calls(message, TOOLS, retriever=None)
    assert decided.ok
    assert decided.message == expected
    assert json.dumps(message, ensure_ascii=False) == written  # the caller's is unchanged


def test_calls_decided_as_the_last_steps_of_a_chat_keep_their_ids_and_shape() -> None:
    """With the chat so far, each call of the new message is decided as its step (the
    earlier call and its result come first), answered under its own id, and the
    repaired message is still the model's own shape."""
    history = [
        {"role": "user", "content": "Weather in Lima, then in Zürich?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "sunny"},
    ]
    message = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "Get_Weather", "input": {"City": "Zürich"}},
            {"type": "tool_use", "id": "t2", "name": "get_weather", "input": {"days": 2}},
        ],
    }
    decided = decide_tool_calls(message, TOOLS, retriever=None, history=history)
    assert [
        (c.shape, c.call_id, c.name, c.arguments, c.decision.action) for c in decided.calls
    ] == [
        ("anthropic", "t1", "get_weather", {"city": "Zürich"}, "forward"),
        ("anthropic", "t2", "get_weather", {"days": 2}, "feedback"),
    ]
    assert [f.code for f in decided.calls[1].decision.remaining] == ["E3.4"]
    assert decided.calls[0].reply is None
    reply = decided.calls[1].reply
    assert reply is not None and (reply["type"], reply["tool_use_id"]) == ("tool_result", "t2")
    assert decided.message == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Zürich"}},
            message["content"][1],
        ],
    }


NO_NAME = "the tool call names no function"


def _one_call(name: Any, arguments: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }


@pytest.mark.parametrize(
    ("name", "arguments", "finding"),
    [
        ("", "{}", Finding("E1", ("function", "name"), "", message=NO_NAME)),
        (None, "{}", Finding("E1", ("function", "name"), None, message=NO_NAME)),
        (
            "get_weather", '{"city": ',
            Finding("E1", ("function", "arguments"), '{"city": ', expected="a JSON object",
                    message="the arguments are not valid JSON (JSONDecodeError: Expecting value: "
                    "line 1 column 10 (char 9))"),
        ),
        (
            "get_weather", [1],  # not text: shown as the model's value, written out
            Finding("E1", ("function", "arguments"), "[1]", expected="a JSON object",
                    message="the arguments are not valid JSON (TypeError: the JSON object "
                    "must be str, bytes or bytearray, not list)"),
        ),
        (
            "get_weather", "[1]",
            Finding("E1", ("function", "arguments"), [1], expected="a JSON object",
                    message="the arguments must be a JSON object, not list"),
        ),
        (
            "get_weather", "",  # no arguments: read as none, so the required one is missing
            Finding("E3.4", ("argument", "city"), None, expected="city", suggestion="city",
                    operation="get_weather", doc="city (argument, string, required)",
                    message="required parameter 'city' is missing"),
        ),
        (
            "get_weather", " \n",  # blank: none too, as the parser and a chat's steps read it
            Finding("E3.4", ("argument", "city"), None, expected="city", suggestion="city",
                    operation="get_weather", doc="city (argument, string, required)",
                    message="required parameter 'city' is missing"),
        ),
    ],
)  # fmt: skip
def test_a_tool_call_that_cannot_be_read_says_why(
    name: Any, arguments: Any, finding: Finding
) -> None:
    [call] = decide_tool_calls(_one_call(name, arguments), TOOLS, retriever=None).calls
    decision = call.decision
    assert (decision.action, decision.reason, decision.remaining, call.reply is not None) == (
        "feedback",
        "errors",
        (finding,),
        True,
    )


def test_arguments_encoded_twice_are_read_and_repaired_once() -> None:
    twice = json.dumps(json.dumps({"city": "Lima"}))
    [call] = decide_tool_calls(_one_call("get_weather", twice), TOOLS, retriever=None).calls
    assert (call.decision.action, call.arguments, call.decision.request.double_encoded) == (
        "forward",
        {"city": "Lima"},
        False,
    )
    assert [(r.code, r.location, r.before) for r in call.decision.repairs] == [
        ("E4.1", ("arguments",), twice)
    ]


_SHAPES = (
    "expected an assistant message or a model response (OpenAI, Anthropic, Gemini, Bedrock) "
    "holding the tool calls"
)


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ("text", f"{_SHAPES}, got str; to check a model's text output, use scan() or "
                 "Scanner.iter_findings()"),
        (5, f"{_SHAPES}, got int"),
        (None, f"{_SHAPES}, got NoneType"),
        ({"foo": 1}, f"{_SHAPES}; got a dict in none of these shapes"),
        ({"choices": []}, f"{_SHAPES}; got a dict in none of these shapes"),
        ({"role": "assistant", "tool_calls": "x"}, "message['tool_calls'] must be a list, got str"),
    ],
)  # fmt: skip
def test_what_is_no_message_is_a_clear_error(message: Any, error: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        decide_tool_calls(message, TOOLS, retriever=None)
    assert str(info.value) == error


def test_a_rejected_call_is_answered_under_its_id_as_an_error_with_its_feedback() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t2", "name": "get_weather", "input": {"days": 2}}],
    }
    [call] = decide_tool_calls(message, TOOLS, retriever=None).calls
    assert call.reply == {
        "type": "tool_result",
        "tool_use_id": "t2",
        "content": "There is an error in your tool call.\n"
        "Error E3.4 (missing required parameter) at argument.city: required parameter 'city' "
        "is missing.\n"
        "Documentation: city (argument, string, required)\n"
        "The tool call was parsed successfully and the tool name is correct.\n"
        "Likely cause: A parameter the documentation marks as required was left out. "
        "Correction: Add the required parameter 'city'.\n"
        "Please call the tool again with the corrected arguments.",
        "is_error": True,
    }


def test_a_message_with_nothing_repaired_goes_on_as_the_model_wrote_it() -> None:
    """Not rewritten, not even re-serialised: the caller's own object, byte for byte."""
    arguments = '{"city":"Lima"}'  # compact: json.dumps would add a space
    function = {"name": "get_weather", "arguments": arguments}
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }
    decided = decide_tool_calls(message, TOOLS, retriever=None)
    assert decided.ok
    assert decided.message is message


def test_a_responses_call_without_arguments_is_written_back_with_them_as_text() -> None:
    """A Responses ``function_call`` item carries its arguments as a JSON string; one
    that had none gets ``"{}"``, not an object."""
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]  # fmt: skip
    message = {"output": [{"type": "function_call", "call_id": "r1", "name": "Get_Weather"}]}
    decided = decide_tool_calls(message, tools, retriever=None)
    assert decided.message == {
        "output": [
            {"type": "function_call", "call_id": "r1", "name": "get_weather", "arguments": "{}"}
        ]
    }


SEARCHER = {
    "name": "ToolSearcher",
    "description": "Searches for relevant tools in library based on the keywords.",
    "parameters": {"type": "object", "properties": {"keywords": {"type": "string"}}},
}
CANCEL = {
    "name": "CancelOrder",
    "description": "Cancel an order given its id.",
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
}


def _cancel(order_id: str) -> dict[str, Any]:
    arguments = json.dumps({"order_id": order_id})
    function = {"name": "CancelOrder", "arguments": arguments}
    return {
        "role": "assistant",
        "tool_calls": [{"id": "c2", "type": "function", "function": function}],
    }


def test_a_tool_a_search_in_the_chat_found_is_callable() -> None:
    history = [
        {"role": "user", "content": "Please cancel my order ORD-42."},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "ToolSearcher", "arguments": '{"keywords": "cancel order"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(CANCEL)},
    ]  # fmt: skip
    tools = [{"type": "function", "function": SEARCHER}]
    [call] = decide_tool_calls(_cancel("ORD-42"), tools, retriever=None, history=history).calls
    assert (call.decision.action, call.decision.findings) == ("forward", ())


def test_a_tool_a_search_in_the_context_found_is_callable() -> None:
    context = (
        "Question: Please cancel my order ORD-42.\nThought: I need a tool.\n"
        'Action: ToolSearcher\nAction Input: {"keywords": "cancel order"}\n'
        f"Observation: {json.dumps(CANCEL)}\nThought: I found it.\n"
    )
    tools = [{"type": "function", "function": SEARCHER}]
    [call] = decide_tool_calls(_cancel("ORD-42"), tools, retriever=None, context=context).calls
    assert (call.decision.action, call.decision.findings) == ("forward", ())


def test_what_the_user_asked_shows_a_placeholder_for_what_it_is() -> None:
    tools = [{"type": "function", "function": CANCEL}]
    message = _cancel("<order_id>")
    [call] = decide_tool_calls(
        message, tools, retriever=None, instruction="Please cancel my order."
    ).calls
    assert [(f.code, f.location) for f in call.decision.findings] == [
        ("E5.3", ("argument", "order_id"))
    ]


def test_a_message_holding_deeply_nested_data_is_rewritten() -> None:
    """The copy of the message stops where no call can be (the data below is shared), so
    3,000 nested objects and lists beside the repaired call are no recursion error."""
    deep: Any = []
    for _ in range(1500):
        deep = {"a": [deep]}
    message = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "Get_Weather", "input": {"city": "Lima"}},
            {"type": "text", "text": "x", "annotations": deep},
        ],
    }
    decided = decide_tool_calls(message, TOOLS, retriever=None)
    assert decided.message["content"][0] == {
        "type": "tool_use",
        "id": "t1",
        "name": "get_weather",
        "input": {"city": "Lima"},
    }


@pytest.mark.parametrize(
    ("message", "answer"),
    [
        pytest.param(
            {"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Lima"}, "id": "g1"}}
            ]}}]},
            {"functionResponse": {"name": "get_weather", "response": {"output": "ok"}, "id": "g1"}},
            id="gemini",
        ),
        pytest.param(
            {"output": {"message": {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "b1", "name": "get_weather", "input": {"city": "Lima"}}}
            ]}}},
            {"toolResult": {"toolUseId": "b1", "content": [{"text": "ok"}], "status": "success"}},
            id="bedrock",
        ),
    ],
)  # fmt: skip
def test_a_clean_call_is_answered_ok_in_its_shape(
    message: dict[str, Any], answer: dict[str, Any]
) -> None:
    assert tool_messages(message, TOOLS, retriever=None, include_ok=True) == [answer]


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"role": "assistant", "content": None}, id="a-role-and-no-content"),
        pytest.param({"content": [{"type": "text", "text": "Hi"}]}, id="content-and-no-role"),
    ],
)
def test_a_message_that_made_no_call_has_nothing_to_decide(message: dict[str, Any]) -> None:
    decided = decide_tool_calls(message, TOOLS, retriever=None)
    assert (decided.calls, decided.message is message) == ((), True)


def test_a_chat_call_without_an_id_has_none() -> None:
    function = {"name": "get_weather", "arguments": '{"city": "Lima"}'}
    message = {"role": "assistant", "tool_calls": [{"type": "function", "function": function}]}
    [call] = decide_tool_calls(message, TOOLS, retriever=None).calls
    assert (call.call_id, call.decision.request.call_id) == (None, None)


def test_the_decided_request_keeps_the_calls_shape_and_id() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Lima"}}
        ],
    }
    [call] = decide_tool_calls(message, TOOLS, retriever=None).calls
    request = call.decision.request
    assert (request.shape, request.call_id, request.format) == ("anthropic", "t1", "native")
    # decided as the last step of a chat, read through its OpenAI chat form: the call's
    # own shape and id still, on the request sent and on the one the model wrote
    history = [{"role": "user", "content": "Weather in Lima?"}]
    message["content"][0]["input"] = {"City": "Lima"}
    [call] = decide_tool_calls(message, TOOLS, retriever=None, history=history).calls
    assert call.decision.repairs and call.decision.original is not None
    for request in (call.decision.request, call.decision.original):
        assert (request.shape, request.call_id) == ("anthropic", "t1")


def test_with_the_chat_a_made_up_token_names_the_call_that_gives_it() -> None:
    """The data-flow graph of the tools knows that GetUserToken's response has it."""
    from _support.account_tools import OPENAI_ACCOUNT_TOOLS

    history = [{"role": "user", "content": "Delete my account; I am ann, password s3cret"}]
    arguments = json.dumps({"token": "your_token_here"})
    function = {"name": "DeleteAccount", "arguments": arguments}
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "c2", "type": "function", "function": function}],
    }
    [call] = decide_tool_calls(message, OPENAI_ACCOUNT_TOOLS, retriever=None, history=history).calls
    assert [(f.code, f.message) for f in call.decision.findings] == [
        (
            "E5.3",
            "'token' = '[REDACTED]' is a placeholder; call GetUserToken first: its response "
            "has `token`",
        )
    ]


def test_the_react_runner_never_sends_a_destructive_call_the_instruction_does_not_ask_for(
    bookshop: ApiCatalog, sandbox: Sandbox, api_retriever: Any
) -> None:
    # the runner leaves the sequence's E2.1 out (a search before the goal is no wrong
    # API), but a delete that does not fit the request is one no later step can undo:
    # cancelOrder for "Who wrote Dune?" was sent (its order id given by the user)
    sandbox.reset()
    llm, _ = _script(
        "Action: <API>cancelOrder(orderId='ORD-123456')</API>",
        "Final Answer: I could not tell",
    )
    scanner = Scanner(bookshop, retriever=api_retriever)
    runner = ReactRunner(llm, bookshop, base_url=sandbox.url, scanner=scanner)
    result = runner.run("Who wrote Dune? My order is ORD-123456.")
    assert result.calls == ()
    assert [(f.code, f.severity) for f in result.turns[0].findings] == [("E2.1", "error")]
    # a search towards the goal is still sent
    llm, _ = _script("Action: <API>searchBooks(query='Dune')</API>", "Final Answer: Herbert")
    runner = ReactRunner(llm, bookshop, base_url=sandbox.url, scanner=scanner)
    result = runner.run("Who wrote Dune?")
    assert [(r.name, s) for r, s, _ in result.calls] == [("searchBooks", 200)]

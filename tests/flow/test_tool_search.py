"""Tools a tool search inside a dialogue found are callable for the rest of it, in every
form the parser reads (issue 30): API-Bank text, ReAct observations, chat tool messages
(any provider's shape), MCP ``tools/list`` answers; through scan, the audit,
``check_tool_calls(history=)``, the feedback loop and the ReAct runner."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from autofeedback import ApiCatalog, FeedbackLoop, Scanner, check_tool_calls
from autofeedback.audit._audit import audit_lines
from autofeedback.flow._tools import documented_tools, tools_in_text
from autofeedback.runners import ReactRunner
from autofeedback.sandbox import Sandbox

SEARCHER: dict[str, Any] = {
    "name": "ToolSearcher",
    "description": "Searches for relevant tools in library based on the keywords.",
    "input_parameters": {"keywords": {"type": "str", "description": "The keyword to search for."}},
    "output_parameters": {"best_matchs": {"type": "Union[List[dict], dict]"}},
}
CANCEL: dict[str, Any] = {
    "name": "CancelOrder",
    "description": "Cancel an order given its id.",
    "input_parameters": {"order_id": {"type": "str", "description": "The id of the order."}},
    "output_parameters": {"status": {"type": "str", "description": "success or failed"}},
}
CANCEL_FUNCTION: dict[str, Any] = {
    "name": "CancelOrder",
    "description": "Cancel an order given its id.",
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
}
SEARCH_LINE = "API-Request: [ToolSearcher(keywords='cancel order')]"
USER = "User: Please cancel my order ORD-42.\nAI: Let me look for a tool.\n"


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(ApiCatalog.from_tools([SEARCHER]), retriever=None)


def codes(scanner: Scanner, output: str, **kwargs: Any) -> list[str]:
    return [f.code for f in scanner.iter_findings(output, **kwargs)]


@pytest.mark.parametrize("result", [repr([CANCEL]), repr(CANCEL), json.dumps([CANCEL])])
def test_an_api_bank_search_result_documents_the_tool(scanner: Scanner, result: str) -> None:
    # the form: a Python-literal list after `->`; API-Bank's own: one dict
    dialogue = f"{USER}{SEARCH_LINE}->{result}\nAI: Found it."
    call = "API-Request: [CancelOrder(order_id='ORD-42')]"
    assert (
        codes(scanner, call, instruction="Please cancel my order ORD-42.", context=dialogue) == []
    )
    assert codes(scanner, call, instruction=dialogue) == []
    # its parameters are checked: a misspelt one is E3.2, not E2
    misspelt = "API-Request: [CancelOrder(Order_ID='ORD-42')]"
    assert codes(scanner, misspelt, instruction=dialogue) == ["E3.2", "E3.4"]
    # a result the model wrote itself documents nothing: its output is what is checked
    made_up = scanner.iter_findings(f"{dialogue}\n{call}")
    assert [(f.code, f.location) for f in made_up] == [("E2", ("request[1]", "api"))]
    # what the checks said before: every correct call an unknown API
    (f,) = scanner.iter_findings(call, instruction=USER)
    assert f.code == "E2" and "documented APIs: ToolSearcher" in f.message


def test_a_react_observation_documents_the_tool(scanner: Scanner) -> None:
    context = (
        "Question: Please cancel my order ORD-42.\nThought: I need a tool.\n"
        'Action: ToolSearcher\nAction Input: {"keywords": "cancel order"}\n'
        f"Observation: {json.dumps(CANCEL_FUNCTION)}\nThought: I found it.\n"
    )
    call = 'Action: CancelOrder\nAction Input: {"order_id": "ORD-42"}'
    assert codes(scanner, call, instruction="cancel ORD-42", context=context) == []
    wrong = 'Action: CancelOrder\nAction Input: {"orderId": "ORD-42"}'
    assert codes(scanner, wrong, instruction="cancel ORD-42", context=context) == [
        "E3.2",
        "E3.4",
    ]


def _searched(content: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Please cancel my order ORD-42."},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "s1",
                    "type": "function",
                    "function": {"name": "ToolSearcher", "arguments": '{"keywords": "cancel"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "s1", "content": content},
    ]


def _call(**arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "CancelOrder", "arguments": json.dumps(arguments)},
            }
        ],
    }


@pytest.mark.parametrize(
    "content",
    [
        repr(CANCEL),  # API-Bank's ToolSearcher prints a Python literal
        json.dumps({"type": "function", "function": CANCEL_FUNCTION}),  # an OpenAI tool
        json.dumps(  # an MCP tools/list answer, as JSON-RPC
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "tools": [
                        {
                            "name": "CancelOrder",
                            "description": "Cancel an order given its id.",
                            "inputSchema": CANCEL_FUNCTION["parameters"],
                        }
                    ]
                },
            }
        ),
    ],
    ids=["api-bank-literal", "openai-tool", "mcp-tools-list"],
)
def test_a_chat_tool_message_documents_the_tool(content: str) -> None:
    tools = [{"type": "function", "function": {**SEARCHER}}]
    history = _searched(content)
    assert check_tool_calls(_call(order_id="ORD-42"), tools, retriever=None, history=history) == []
    found = check_tool_calls(_call(orderID="ORD-42"), tools, retriever=None, history=history)
    assert [f.code for f in found] == ["E3.2", "E3.4"]


def test_an_anthropic_tool_result_documents_the_tool() -> None:
    history = [
        {"role": "user", "content": "Please cancel my order ORD-42."},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "ToolSearcher", "input": {"keywords": "x"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": repr(CANCEL)}],
                }
            ],
        },
    ]
    message = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t2", "name": "CancelOrder", "input": {"order_id": "ORD-42"}}
        ],
    }
    tools = [{"name": "ToolSearcher", "input_schema": {"type": "object"}}]
    assert check_tool_calls(message, tools, retriever=None, history=history) == []


def test_the_audit_reads_the_dialogue_of_a_record() -> None:
    dialogue = f"{USER}{SEARCH_LINE}->{CANCEL!r}\nAI: Found it."
    records = [
        {
            "id": "text",
            "tools": [SEARCHER],
            "instruction": dialogue,
            "output": "API-Request: [CancelOrder(order_id='ORD-42')]",
        },
        {
            "id": "dialogue",
            "tools": [SEARCHER],
            "instruction": "Cancel ORD-42",
            "dialogue": dialogue,
            "steps": [{"call": {"name": "CancelOrder", "arguments": {"order_id": "ORD-42"}}}],
        },
        {
            "id": "messages",
            "tools": [SEARCHER],
            "messages": [*_searched(repr(CANCEL)), _call(order_id="ORD-42")],
        },
        {
            "id": "unknown",
            "tools": [SEARCHER],
            "instruction": dialogue,
            "output": "API-Request: [CancelOrders(order_id='ORD-42')]",
        },
    ]
    results = list(audit_lines([json.dumps(r) for r in records], None, retriever=None))
    got = {r.id: [f.code for f in r.findings] for r in results}
    assert got == {"text": [], "dialogue": [], "messages": [], "unknown": ["E2"]}
    assert "did you mean 'CancelOrder'?" in results[-1].findings[0].message


def test_a_response_that_only_looks_like_tool_docs_is_no_tool() -> None:
    assert documented_tools({"books": [{"name": "Dune", "description": "a novel"}]}) is None
    assert documented_tools([{"name": "Dune", "author": "Frank Herbert"}]) is None
    assert documented_tools("[{'name': 'Dune'}]") is None
    assert documented_tools("success") is None
    assert tools_in_text("API-Request: [GetToday()]->{'date': '2023-03-26'}") is None
    assert tools_in_text("Observation: the order was cancelled") is None


class _AgentBackend(BaseHTTPRequestHandler):
    """A tool library's server: ToolSearcher answers with CancelOrder's doc."""

    sent: ClassVar[list[tuple[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"] or 0)) or b"{}")
        self.sent.append((self.path, body))
        if self.path == "/ToolSearcher":
            answer: Any = CANCEL  # API-Bank's shape, as JSON
        elif self.path == "/CancelOrder":
            answer = {"status": "success"}
        else:
            self.send_error(404)
            return
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def backend() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AgentBackend)
    _AgentBackend.sent = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Replay:
    """The model, scripted (a test double for what is outside the product)."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.seen: list[list[dict[str, str]]] = []

    def complete(self, messages: list[dict[str, str]]) -> str:
        self.seen.append(messages)
        return self.answers.pop(0)


def test_the_react_runner_calls_a_tool_its_search_found(backend: str) -> None:
    llm = _Replay(
        'Thought: find a tool.\nAction: <API>ToolSearcher(keywords="cancel order")</API>',
        'Thought: cancel it.\nAction: <API>CancelOrder(order_id="ORD-42")</API>',
        "Final Answer: cancelled.",
    )
    catalog = ApiCatalog.from_tools([SEARCHER])
    result = ReactRunner(llm, catalog, base_url=backend).run("Please cancel my order ORD-42.")
    assert result.stop_reason == "answered", result
    assert [path for path, _ in _AgentBackend.sent] == ["/ToolSearcher", "/CancelOrder"]


def test_the_feedback_loop_sends_a_tool_the_dialogue_found() -> None:
    # issue 30: every correct answer of this kind was fed back as E2 and the model pushed
    # back to the search tool; the server (here the sandbox of the whole library) has it
    dialogue = f"{USER}{SEARCH_LINE}->[{CANCEL!r}]\nAI: Found it.\nGenerate API Request:"
    llm = _Replay("API-Request: [CancelOrder(order_id='ORD-42')]")
    with Sandbox(ApiCatalog.from_tools([SEARCHER, CANCEL])) as library:
        loop = FeedbackLoop(
            llm,
            ApiCatalog.from_tools([SEARCHER]),
            base_url=library.url,
            scanner=Scanner(ApiCatalog.from_tools([SEARCHER]), retriever=None),
            dynamic=False,
        )
        result = loop.run(dialogue, intent="Please cancel my order ORD-42.")
    assert result.success and result.status == 200, result
    assert [a.findings for a in result.attempts] == [()]
    assert "CancelOrder" not in loop.catalog  # the caller's loop is left as it was


def test_api_bank_dialogues_with_a_tool_search(shared_data_dir: Any) -> None:
    # API-Bank level-1 made tool-search dialogues (benchmarks/tool_search.py): the model
    # is given only ToolSearcher, a search earlier in the dialogue found the gold API
    from benchmarks._datasets import load_api_bank
    from benchmarks.tool_search import Case, Checker, errors

    cases = [Case(task) for task in load_api_bank()[:60]]
    checker = Checker(None)
    for case in cases:
        for form in ("api-bank", "react", "chat", "mcp"):
            found = [f.code for f in errors(checker.findings(case, form, case.call, "found"))]
            reference = errors(checker.findings(case, form, case.call, "reference"))
            # the gold call is judged as when its tool is documented from the start
            assert found == [f.code for f in reference], (case.task.id, form)
            assert not any(code.startswith("E2") for code in found), (case.task.id, form)
            control = errors(checker.findings(case, form, case.call, "control"))
            assert [f.code for f in control] == ["E2"], (case.task.id, form)

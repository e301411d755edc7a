"""Tool-search dialogues as API-Bank's level 2 has them (issue 40): a call whose response
gives a required input of the API the user asked for (a token, an id) is a step towards
it, not the wrong API; a tool that a search documented mid-dialogue gets the same checks
and the same repairs as a tool of the list, at every door (the scanner, the one
decision, ``audit --fix``, the feedback loop)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from autofeedback import ApiCatalog, Decider, FeedbackLoop, Scanner
from autofeedback.audit._audit import audit_lines
from autofeedback.sandbox import Sandbox

SEARCHER: dict[str, Any] = {
    "name": "ToolSearcher",
    "description": "Searches for relevant tools in library based on the keywords.",
    "input_parameters": {"keywords": {"type": "str", "description": "The keyword to search for."}},
    "output_parameters": {"best_matchs": {"type": "Union[List[dict], dict]"}},
}
REMOVE_MEETING: dict[str, Any] = {
    "name": "RemoveMeeting",
    "description": "Remove a meeting from the user's schedule.",
    "input_parameters": {
        "token": {"type": "str", "description": "The user's token."},
        "meeting_id": {"type": "int", "description": "The id of the meeting."},
    },
    "output_parameters": {"status": {"type": "str", "description": "success or failed"}},
}
SIGN_IN: dict[str, Any] = {
    "name": "SignIn",
    "description": "Sign a user in with username and password.",
    "input_parameters": {
        "username": {"type": "str", "description": "The username."},
        "password": {"type": "str", "description": "The password."},
    },
    "output_parameters": {"token": {"type": "str", "description": "The user's token."}},
}
RESERVE_ROOMS: dict[str, Any] = {
    "name": "ReserveRooms",
    "description": "Reserve hotel rooms for a stay.",
    "input_parameters": {
        "hotel": {"type": "str", "description": "The hotel's name."},
        "rooms": {"type": "int", "description": "How many rooms."},
        "guests": {"type": "int", "description": "How many guests."},
    },
    "output_parameters": {"booking_id": {"type": "str", "description": "The booking."}},
}


def _search(doc: dict[str, Any], keywords: str) -> str:
    return f"API-Request: [ToolSearcher(keywords={keywords!r})]->{doc!r}"


MEETING_DIALOGUE = "\n".join(
    [
        "User: Please remove my 3pm budget review meeting, its id is 4417.",
        _search(REMOVE_MEETING, "remove meeting"),
        "AI: I can do that. I need to sign you in first: your username and password?",
        "User: username jdoe, password hunter2.",
        _search(SIGN_IN, "sign in"),
        "AI: Signing you in.",
    ]
)
SIGN_IN_CALL = "API-Request: [SignIn(username='jdoe', password='hunter2')]"
HOTEL_DIALOGUE = "\n".join(
    [
        "User: Book two rooms at the Harbour Inn for four guests.",
        _search(RESERVE_ROOMS, "reserve rooms"),
        "AI: Booking it now.",
    ]
)
# API-Bank's own gold calls write integers as text ('2'): a lossless repair
HOTEL_CALL = "API-Request: [ReserveRooms(hotel='Harbour Inn', rooms='2', guests='4')]"


@pytest.fixture(scope="module")
def scanner(api_retriever: Any) -> Scanner:
    return Scanner(ApiCatalog.from_tools([SEARCHER]), retriever=api_retriever)


def test_a_prerequisite_is_not_the_wrong_api(scanner: Scanner) -> None:
    # before: E2.1 error "API 'SignIn' exists but does not fit the instruction;
    # 'RemoveMeeting' fits better": the correct first step blocked
    found = list(scanner.iter_findings(SIGN_IN_CALL, instruction=MEETING_DIALOGUE))
    assert found == []
    # the prerequisite's name with the arguments of the API asked for is the wrong API
    swapped = "API-Request: [SignIn(token='t-1', meeting_id=4417)]"
    codes = [f.code for f in scanner.iter_findings(swapped, instruction=MEETING_DIALOGUE)]
    assert codes[0] == "E2.1" and "E3.4" in codes
    # a call that gives the API the user asked for nothing it needs is still flagged
    wrong = "API-Request: [ReserveRooms(hotel='Harbour Inn', rooms=2, guests=4)]"
    dialogue = f"{MEETING_DIALOGUE}\n{_search(RESERVE_ROOMS, 'rooms')}"
    assert [f.code for f in scanner.iter_findings(wrong, instruction=dialogue)] == ["E2.1"]


def test_a_prerequisite_in_a_chat_history_is_not_the_wrong_api(api_retriever: Any) -> None:
    tools = [SEARCHER, REMOVE_MEETING, SIGN_IN, RESERVE_ROOMS]
    extra = [
        {"name": f"Tool{i}", "description": d, "input_parameters": {}}
        for i, d in enumerate(["Play music.", "Translate text.", "Tell the weather."])
    ]
    catalog = ApiCatalog.from_tools([*tools, *extra])
    from autofeedback.flow._graph import FlowGraph
    from autofeedback.flow._sequence import sequence_from_chat
    from autofeedback.scanner._sequences import SequenceChecker

    messages = [
        {"role": "user", "content": "Please remove my budget review meeting 4417."},
        {"role": "user", "content": "username jdoe, password hunter2."},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "SignIn",
                        "arguments": json.dumps({"username": "jdoe", "password": "hunter2"}),
                    },
                }
            ],
        },
    ]
    checker = SequenceChecker(
        Scanner(catalog, retriever=api_retriever), graph=FlowGraph.from_catalog(catalog)
    )
    assert checker.check(sequence_from_chat(messages)) == []


def test_a_discovered_tool_is_repaired_like_a_listed_one(scanner: Scanner) -> None:
    listed = Decider(Scanner(ApiCatalog.from_tools([SEARCHER, RESERVE_ROOMS]), retriever=None))
    found = Decider(Scanner(ApiCatalog.from_tools([SEARCHER]), retriever=None))
    [reference] = listed.decide(HOTEL_CALL, instruction=HOTEL_DIALOGUE)
    [decision] = found.decide(HOTEL_CALL, instruction=HOTEL_DIALOGUE)
    # before: the listed tool was forwarded repaired, the discovered one fed back (E4.1)
    assert (decision.action, decision.reason) == ("forward", "repaired")
    assert (
        [str(r) for r in decision.repairs]
        == [str(r) for r in reference.repairs]
        == [
            "E4.1 argument.rooms: '2' -> 2",
            "E4.1 argument.guests: '4' -> 4",
        ]
    )
    assert decision.text == ("API-Request: [ReserveRooms(hotel='Harbour Inn', rooms=2, guests=4)]")


def test_audit_fix_repairs_a_discovered_tool() -> None:
    records = [
        {"id": "text", "tools": [SEARCHER], "instruction": HOTEL_DIALOGUE, "output": HOTEL_CALL},
        {  # the dialogue as context, the last user turn as the instruction
            "id": "context",
            "tools": [SEARCHER],
            "instruction": "Book two rooms at the Harbour Inn for four guests.",
            "context": HOTEL_DIALOGUE,
            "output": HOTEL_CALL,
        },
    ]
    results = list(audit_lines([json.dumps(r) for r in records], None, retriever=None, fix=True))
    for result in results:
        assert [f.code for f in result.findings] == ["E4.1", "E4.1"], result.id
        # before: no `repaired` and no `repairs` (the repairer did not know the tool)
        assert result.repaired == (
            "API-Request: [ReserveRooms(hotel='Harbour Inn', rooms=2, guests=4)]"
        ), result.id
        assert all(f.fix is not None for f in result.findings)


class _Replay:
    """The model, scripted (a test double for what is outside the product)."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)

    def complete(self, messages: list[dict[str, str]]) -> str:
        return self.answers.pop(0)


def test_the_feedback_loop_sends_a_discovered_tool_repaired() -> None:
    llm = _Replay(HOTEL_CALL)
    with Sandbox(ApiCatalog.from_tools([SEARCHER, RESERVE_ROOMS])) as library:
        catalog = ApiCatalog.from_tools([SEARCHER])
        loop = FeedbackLoop(
            llm,
            catalog,
            base_url=library.url,
            scanner=Scanner(catalog, retriever=None),
            dynamic=False,
        )
        result = loop.run(f"{HOTEL_DIALOGUE}\nGenerate API Request:", intent="Book two rooms.")
    # before: the call was fed back for E4.1 and the scripted model had nothing to say
    assert result.success and result.status == 200, result
    (attempt,) = result.attempts
    assert [str(r) for r in attempt.repairs] == [
        "E4.1 argument.rooms: '2' -> 2",
        "E4.1 argument.guests: '4' -> 4",
    ]


def test_api_bank_tool_search_dialogues_under_fix(shared_data_dir: Any, api_retriever: Any) -> None:
    # API-Bank level-1 dialogues made ToolSearcher dialogues (benchmarks/tool_search_fix.py)
    from benchmarks.tool_search_fix import blocked_after_fix, level2_records, misspelt, reference

    records = level2_records()[:60]
    correct = [
        r
        for r, res in zip(records, blocked_after_fix(reference(records), None), strict=True)
        if res.ok
    ]
    assert len(correct) >= 55
    assert any(r["gold"] != r["about"] for r in correct)  # prerequisites among them
    after = blocked_after_fix(correct, api_retriever)
    assert [r["id"] for r, res in zip(correct, after, strict=True) if not res.ok] == []
    mutants = misspelt(correct[:20])
    lines = [json.dumps({k: m[k] for k in ("tools", "instruction", "output")}) for _, m in mutants]
    results = list(audit_lines(lines, None, retriever=api_retriever))
    assert mutants and all(not r.ok for r in results)

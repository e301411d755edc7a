"""The one decision: what is repaired (only what is certain), what is left to the model,
and that every repaired call is checked again and comes out clean.

Data-driven: ``tests/data/decide/calls.json`` holds calls that must be repaired to
exactly the expected call, and calls that must be left as they are (a lossy coercion, an
enum, a missing value, an ambiguous name).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest
from autofeedback.decide import (
    NOT_COERCIBLE,
    Decider,
    Decision,
    Policy,
    RepairMode,
    Session,
    coerce,
    combine,
    request_key,
)
from autofeedback.sequences import sequence_from_record

DATA = json.loads((Path(__file__).parents[1] / "data" / "decide" / "calls.json").read_text())
TOOLS = ApiCatalog.from_tools(DATA["tools"])


@pytest.fixture(scope="module")
def decider() -> Decider:
    return Decider(Scanner(TOOLS, retriever=None))


@pytest.mark.parametrize("case", DATA["repaired"], ids=lambda c: c["why"])
def test_certain_errors_are_repaired_to_exactly_the_call_meant(
    decider: Decider, case: dict[str, Any]
) -> None:
    [decision] = decider.decide(case["call"])
    assert decision.action == "forward" and decision.reason == "repaired", decision.remaining
    assert decision.request is not None
    got = {"name": decision.request.name, "arguments": dict(decision.request.arguments)}
    assert got == case["expect"]
    assert sorted({r.code for r in decision.repairs}) == sorted(case["codes"])
    # never silent: each repaired finding of the call as written carries its fix
    fixed = [f for f in decision.findings if f.fix is not None]
    assert fixed and all(f.fix in decision.repairs for f in fixed)
    assert decision.errors == []  # checked again, and clean


@pytest.mark.parametrize("case", DATA["left"], ids=lambda c: c["why"])
def test_what_is_not_certain_is_left_to_the_model(decider: Decider, case: dict[str, Any]) -> None:
    [decision] = decider.decide(case["call"])
    assert decision.action == "feedback" and decision.errors
    assert decision.request is not None
    assert dict(decision.request.arguments) == case["call"]["arguments"]
    assert decision.request.name == case["call"]["name"]


def test_an_enum_value_is_moved_beside_an_unknown_parameter_whose_value_no_enum_takes(
    decider: Decider,
) -> None:
    # "France" is in no enum: it does not make unit's value unsure; country goes back
    call = {
        "name": "get_weather",
        "arguments": {"city": "Paris", "measure": "fahrenheit", "country": "France"},
    }
    [decision] = decider.decide(call)
    assert decision.action == "feedback"
    assert [str(r) for r in decision.repairs] == ["E3 argument.measure: 'measure' -> 'unit'"]
    assert decision.request is not None
    assert dict(decision.request.arguments) == {
        "city": "Paris",
        "unit": "fahrenheit",
        "country": "France",
    }
    assert [(f.code, f.location) for f in decision.errors] == [("E3", ("argument", "country"))]


_CREDITS = {
    "openapi": "3.0.0",
    "info": {"title": "movies", "version": "1"},
    "servers": [{"url": "https://api.example.org/3"}],
    "paths": {
        "/movie/{movie_id}/credits": {
            "get": {
                "operationId": "GET_movie-movie_id-credits",
                "parameters": [
                    {
                        "name": "movie_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    },
                    {"name": "language", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


@pytest.mark.parametrize(
    ("arguments", "sent", "repairs"),
    [
        ({}, {"movie_id": 500}, ["argument.movie_id: None -> 500"]),
        (
            {"language": "fr"},
            {"language": "fr", "movie_id": 500},
            ["argument.movie_id: None -> 500"],
        ),
        ({"movie_id": 500}, {"movie_id": 500}, []),  # said twice, alike
    ],
)
def test_a_value_written_into_the_name_is_taken_out_as_its_argument(
    arguments: dict[str, Any], sent: dict[str, Any], repairs: list[str]
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_obj(_CREDITS), retriever=None))
    [decision] = decider.decide({"name": "GET_movie-500-credits", "arguments": arguments})
    assert (decision.action, decision.reason) == ("forward", "repaired")
    assert decision.request is not None
    assert (decision.request.name, dict(decision.request.arguments)) == (
        "GET_movie-movie_id-credits",
        sent,
    )
    assert [str(r) for r in decision.repairs] == [
        "E2.2 api: 'GET_movie-500-credits' -> 'GET_movie-movie_id-credits'",
        *(f"E2.2 {r}" for r in repairs),
    ]


def test_arguments_encoded_twice_are_shown_as_written_and_sent_as_the_object(
    decider: Decider,
) -> None:
    twice = json.dumps(json.dumps({"city": "Paris"}))
    [decision] = decider.decide(json.dumps({"name": "get_weather", "arguments": twice}))
    assert [(r.code, r.location, r.before, r.after) for r in decision.repairs] == [
        ("E4.1", ("arguments",), twice, {"city": "Paris"})
    ]
    assert decision.request is not None and not decision.request.double_encoded


def test_a_value_in_the_name_that_the_arguments_contradict_is_left_to_the_model() -> None:
    decider = Decider(Scanner(ApiCatalog.from_obj(_CREDITS), retriever=None))
    call = {"name": "GET_movie-500-credits", "arguments": {"movie_id": 7}}
    [decision] = decider.decide(call)
    assert (decision.action, decision.repairs) == ("feedback", ())
    assert [f.code for f in decision.errors] == ["E2.2"]


@pytest.mark.parametrize("case", DATA["repaired"], ids=lambda c: c["why"])
def test_repair_off_reports_and_changes_nothing(case: dict[str, Any]) -> None:
    [decision] = Decider(Scanner(TOOLS, retriever=None), repair="off").decide(case["call"])
    assert decision.action == "feedback" and not decision.repairs
    assert all(f.fix is None for f in decision.findings)


def test_a_clean_call_is_forwarded_untouched(decider: Decider) -> None:
    call = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
    [decision] = decider.decide(call)
    assert (decision.action, decision.reason, decision.repairs) == ("forward", "clean", ())
    assert decision.request == decision.original


def test_a_repair_that_breaks_a_constraint_is_undone(decider: Decider) -> None:
    # "30" reads as 30, but 30 breaks the documented maximum: the call stays as written
    [decision] = decider.decide({"name": "get_weather", "arguments": {"city": "P", "days": "30"}})
    assert decision.action == "feedback" and not decision.repairs
    assert [f.code for f in decision.errors] == ["E4.1"]


def test_a_round_that_leaves_an_error_where_it_changed_something_is_undone_whole(
    decider: Decider,
) -> None:
    # the rename and the coercion fix three errors, but the coerced 30 breaks the maximum:
    # fewer errors is not enough, the round is undone and the call stays as written
    call = {"name": "get_weather", "arguments": {"City": "P", "days": "30"}}
    [decision] = decider.decide(call)
    assert decision.action == "feedback" and not decision.repairs
    assert [f.code for f in decision.errors] == ["E3.2", "E3.4", "E4.1"]
    assert decision.request == decision.original


def test_part_repaired_the_rest_goes_to_the_model_with_the_repairs(decider: Decider) -> None:
    call = {"name": "get_weather", "arguments": {"City": "Paris", "unit": "kelvin"}}
    [decision] = decider.decide(call)
    assert decision.action == "feedback"
    assert [str(r) for r in decision.repairs] == ["E3.2 argument.City: 'City' -> 'city'"]
    assert [f.code for f in decision.errors] == ["E4.2"]
    assert decision.request is not None and "city" in decision.request.arguments


def test_the_output_text_is_written_back_in_its_own_format(decider: Decider) -> None:
    for text, written in [
        (
            "Sure: <API>get_weather(City='Paris', days='2')</API>",
            "Sure: <API>get_weather(city='Paris', days=2)</API>",
        ),
        ("API-Request: [Get_Weather(city='Paris')]", "API-Request: [get_weather(city='Paris')]"),
        (
            '{"name": "get_weather", "arguments": "{\\"City\\": \\"Paris\\"}"}',
            '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}',
        ),
    ]:
        [decision] = decider.decide(text)
        assert decision.text == written


@pytest.mark.parametrize(
    ("value", "types", "items", "expect"),
    [
        ("3", ["integer"], [], 3),
        ("-4", ["integer"], [], -4),
        (" -4 ", ["integer"], [], NOT_COERCIBLE),  # spaces: text, not the number
        ("+4", ["integer"], [], NOT_COERCIBLE),
        ("0123", ["integer"], [], NOT_COERCIBLE),  # a code (a CVV), not 123
        ("１２３", ["integer"], [], NOT_COERCIBLE),  # full-width digits
        ("1e-400", ["number"], [], NOT_COERCIBLE),  # underflows to 0.0
        ("3.14159265358979323846", ["number"], [], NOT_COERCIBLE),  # rounds
        ("0.1", ["number"], [], 0.1),
        ("1e5", ["number"], [], 100000.0),
        ("-0", ["number"], [], NOT_COERCIBLE),  # 0 would lose the sign
        ('{"a": 1, "a": 2}', ["object"], [], NOT_COERCIBLE),  # which a?
        ('{"a": NaN}', ["object"], [], NOT_COERCIBLE),
        ("[1e400]", ["array"], [], NOT_COERCIBLE),
        ('{"a": [1, {"b": 2.5}]}', ["object"], [], {"a": [1, {"b": 2.5}]}),
        ("2.50", ["number"], [], 2.5),
        ("7", ["number"], [], 7),
        ("FALSE", ["boolean"], [], False),
        ('["a"]', ["array"], [], ["a"]),
        ("x", ["array"], ["string"], ["x"]),
        ("5", ["array"], ["integer"], [5]),
        (2.5, ["integer"], [], NOT_COERCIBLE),
        ("2.5", ["integer"], [], NOT_COERCIBLE),
        ("1e999", ["number"], [], NOT_COERCIBLE),
        ("yes", ["boolean"], [], NOT_COERCIBLE),
        ({"a": 1}, ["string"], [], NOT_COERCIBLE),
        ('{"a": 1}', ["array"], [], NOT_COERCIBLE),
        ("a,b", ["array"], ["string"], NOT_COERCIBLE),
    ],
)
def test_only_lossless_coercions(
    value: Any, types: list[str], items: list[str], expect: Any
) -> None:
    got = coerce(value, types, items=items)
    if expect is NOT_COERCIBLE:
        assert got is NOT_COERCIBLE
    else:
        assert got == expect and type(got) is type(expect)


@pytest.mark.parametrize(
    ("text", "fmt", "expect"),
    [
        ("2147483647", "int32", 2147483647),
        ("-2147483648", "int32", -2147483648),
        ("5", ["int32"], 5),  # a format that is no name bounds nothing
        ("2147483648", "int32", NOT_COERCIBLE),
        ("-2147483649", "int32", NOT_COERCIBLE),
        ("9223372036854775808", "int64", NOT_COERCIBLE),
        ("9223372036854775808", None, 9223372036854775808),
    ],
)
def test_an_integer_is_coerced_only_within_its_format(text: str, fmt: Any, expect: Any) -> None:
    got = coerce(text, ["integer"], schema={"type": "integer", "format": fmt})
    assert got is expect if expect is NOT_COERCIBLE else got == expect


def test_json_text_is_decoded_for_a_coercion_up_to_one_mebibyte() -> None:
    """A bounded cost per value: an object written as text is decoded up to 1 MiB of
    text, and left as written past it (issue 39: ``_one`` 41-42, 51 survived)."""
    size = 1 << 20
    fits = '{"a": "' + "x" * (size - 9) + '"}'
    assert len(fits) == size
    assert coerce(fits, ["object"]) == {"a": "x" * (size - 9)}
    assert coerce(fits[:-2] + 'x"}', ["object"]) is NOT_COERCIBLE


# -- sequences ---------------------------------------------------------------------------


def test_program_repairs_are_written_into_the_program(bookshop: ApiCatalog) -> None:
    decider = Decider(Scanner(bookshop, retriever=None))
    cases = {
        # E5.2: a misspelt field, one documented path fits
        'b = searchBooks(query="Dune")\ngetBook(bookId=b.book[0].id)': "b.books[0].id",
        # E5.1: a variable nothing assigned, one earlier step returns that path
        'b = searchBooks(query="Dune")\ngetBook(bookId=x.books[0].id)': "b.books[0].id",
        # E5.3: a placeholder, one earlier step documents the field
        'b = searchBooks(query="Dune")\ngetBook(bookId="<book_id>")': "b.books[0].id",
    }
    for program, reference in cases.items():
        decision = decider.decide_program(program, instruction="Show me Dune")
        assert decision.reason == "repaired", (program, decision.remaining)
        assert decision.text == f'b = searchBooks(query="Dune")\ngetBook(bookId={reference})'
        assert decision.repairs[0].location[0] == "step[1]"


def test_program_without_one_answer_is_left(bookshop: ApiCatalog) -> None:
    decider = Decider(Scanner(bookshop, retriever=None))
    # two earlier searches could give the id: which one is not certain
    program = (
        'a = searchBooks(query="Dune")\nb = searchBooks(query="Emma")\ngetBook(bookId="<book_id>")'
    )
    decision = decider.decide_program(program, instruction="Show me a book")
    assert decision.action == "feedback" and not decision.repairs
    assert decision.text == program


def test_trace_takes_the_one_id_an_earlier_response_gave(bookshop: ApiCatalog) -> None:
    decider = Decider(Scanner(bookshop, retriever=None))

    def trace(*searches: list[dict[str, int]]) -> Any:
        found = [
            {
                "request": {"method": "GET", "url": "/books?query=Dune"},
                "response": {"status": 200, "body": {"books": books}},
            }
            for books in searches
        ]
        return sequence_from_record(
            {
                "instruction": "Show me the book Dune",
                "steps": [*found, {"request": {"method": "GET", "url": "/books/XXX"}}],
            }
        )

    [one] = decider.decide_steps(trace([{"id": 7}]), 1)
    assert one.reason == "repaired" and one.request is not None
    assert one.request.url == "/books/7"
    assert [(r.code, r.before, r.after) for r in one.repairs] == [("E5.3", "XXX", 7)]
    # one response with several: its first hit, as a program reads books[0]
    [first] = decider.decide_steps(trace([{"id": 9}, {"id": 7}]), 1)
    assert first.request is not None and first.request.url == "/books/9"
    # two responses could give it: which one is not certain
    [two] = decider.decide_steps(trace([{"id": 7}], [{"id": 9}]), 2)
    assert two.action == "feedback" and not two.repairs


def _spotify_like() -> Decider:
    string = {"type": "string"}

    def items(props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "object", "properties": props}}

    tools = [
        {
            "name": "search",
            "parameters": {"type": "object", "properties": {"q": string}},
            "outputSchema": {
                "type": "object",
                "properties": {
                    "artists": {"type": "object", "properties": {"items": items({"id": string})}},
                    "albums": {
                        "type": "object",
                        "properties": {
                            "items": items({"id": string, "artists": items({"id": string})})
                        },
                    },
                },
            },
        },
        {
            "name": "get_artist",
            "parameters": {
                "type": "object",
                "properties": {"artist_id": string},
                "required": ["artist_id"],
            },
        },
        {
            "name": "devices",
            "parameters": {"type": "object", "properties": {}},
            "outputSchema": {"type": "object", "properties": {"devices": items({"id": string})}},
        },
        {"name": "pause", "parameters": {"type": "object", "properties": {}}},
    ]
    return Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))


def test_an_item_the_instruction_counts_is_left_to_the_model(bookshop: ApiCatalog) -> None:
    decider = Decider(Scanner(bookshop, retriever=None))
    program = 'b = searchBooks(query="Dune")\ngetBook(bookId="<book_id>")'
    # "the third": of the search's hits, or of something else (an episode, a track)?
    third = decider.decide_program(program, instruction="Show me the third book about Dune")
    assert third.action == "feedback" and not third.repairs
    first = decider.decide_program(program, instruction="Show me the first book about Dune")
    assert first.reason == "repaired"
    trace = {
        "instruction": "Show me the second book about Dune",
        "steps": [
            {
                "request": {"method": "GET", "url": "/books?query=Dune"},
                "response": {"status": 200, "body": {"books": [{"id": 7}, {"id": 9}]}},
            },
            {"request": {"method": "GET", "url": "/books/8"}},
        ],
    }
    [step] = decider.decide_steps(sequence_from_record(trace), 1)
    assert step.action == "feedback" and not step.repairs


def test_two_fields_of_one_kind_in_a_response_leave_the_value_to_the_model() -> None:
    decider = _spotify_like()
    step = {
        "call": {"name": "search", "arguments": {"q": "Miles"}},
        "response": {"status": 200, "body": {"artists": {"items": [{"id": "a1"}]}}},
    }
    record = {
        "instruction": "Show me Miles Davis",
        "steps": [
            step,
            {"call": {"name": "get_artist", "arguments": {"artist_id": "<artist_id>"}}},
        ],
    }
    # one field of the kind holds values: taken
    [one] = decider.decide_steps(sequence_from_record(record), 1)
    assert [(r.code, r.after) for r in one.repairs] == [("E5.3", "a1")]
    # an artist of the artists found and an artist of an album found score alike
    step["response"]["body"]["albums"] = {"items": [{"id": "b1", "artists": [{"id": "a2"}]}]}
    [two] = decider.decide_steps(sequence_from_record(record), 1)
    assert two.action == "feedback" and not two.repairs


@pytest.mark.parametrize(
    ("written", "read"),
    [
        # a level left out: albums.items[].id keeps it too; the producer of an artist is
        # the artists' list
        ("r.items[0].id", "r.artists.items[0].id"),
        ("r.artist.items[0].id", "r.artists.items[0].id"),  # a field in the singular
    ],
)
def test_a_program_s_reference_is_read_along_the_path_that_gives_the_value(
    written: str, read: str
) -> None:
    program = f'r = search(q="Miles")\nget_artist(artist_id={written})'
    decision = _spotify_like().decide_program(program, instruction="Show me Miles Davis")
    assert decision.text == f'r = search(q="Miles")\nget_artist(artist_id={read})'
    assert [(r.code, r.before, r.after) for r in decision.repairs] == [("E5.2", written, read)]


def test_a_variable_nothing_assigned_that_two_searches_could_mean_is_left() -> None:
    program = (
        'r = search(q="Miles")\na = search(q="Davis")\nget_artist(artist_id=x.artists.items[0].id)'
    )
    decision = _spotify_like().decide_program(program, instruction="Show me Miles Davis")
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())


def test_an_argument_the_docs_do_not_list_is_never_dropped() -> None:
    decider = _spotify_like()
    # a parameter the docs do not list, a literal or data flow the model meant: left to
    # the model (the docs may be short of a parameter, as Spotify's play is of device_id;
    # and a parameter a spec leaves out may be the call's scope or safety)
    for program in (
        'r = devices()\npause(device_id="abc")',
        "r = devices()\npause(device_id=r.devices[0].id)",
    ):
        decision = decider.decide_program(program, instruction="pause")
        assert decision.action == "feedback" and decision.text == program, program
        assert not decision.repairs


def _player() -> Decider:
    string = {"type": "string"}

    def items(props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "object", "properties": props}}

    def takes(*required: str, **props: Any) -> dict[str, Any]:
        return {"type": "object", "properties": props, "required": list(required)}

    def gives(**props: Any) -> dict[str, Any]:
        return {"type": "object", "properties": props}

    reads = {"readOnlyHint": True}
    tools = [
        {
            "name": "devices",
            "parameters": takes(),
            "outputSchema": gives(devices=items({"id": string})),
            "annotations": reads,
        },
        {"name": "play", "parameters": takes("device_id", device_id=string)},
        {
            "name": "search",
            "parameters": takes("q", q=string),
            "outputSchema": gives(tracks=items({"id": string})),
        },
        {"name": "queue", "parameters": takes("track_id", track_id=string)},
        {
            "name": "get_user",
            "parameters": takes(),
            "outputSchema": gives(user=gives(id=string)),
            "annotations": reads,
        },
        {
            "name": "top_tracks",
            "parameters": takes(),
            "outputSchema": gives(items=items({"id": string, "user_id": string})),
            "annotations": reads,
        },
        {"name": "create_playlist", "parameters": takes("user_id", user_id=string, name=string)},
    ]
    return Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))


def _chat_call(function: str, call_id: str = "c1", **arguments: Any) -> dict[str, Any]:
    call = {"name": function, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "tool_calls": [{"id": call_id, "type": "function", "function": call}],
    }


_ASKED = {"role": "user", "content": "play music"}
_DEVICES = {
    "role": "tool",
    "tool_call_id": "c0",
    "content": json.dumps({"devices": [{"id": "d1"}]}),
}


@pytest.mark.parametrize(
    ("message", "history", "first"),
    [
        pytest.param(
            _chat_call("play", device_id="<device_id>"), [_ASKED],
            (
                ApiRequest(name="devices", arguments={}, format="openai"),
                Repair("E5.3", ("step[0]", "inserted before"), None, "devices()"),
            ),
            id="a-stand-in-whose-one-producer-takes-nothing",
        ),
        pytest.param(
            _chat_call("play", device_id="<device_id>"),
            [_ASKED, {"role": "assistant", "tool_calls": [{"id": "c0", "type": "function",
                      "function": {"name": "devices", "arguments": "{"}}]}],
            (
                ApiRequest(name="devices", arguments={}, format="openai"),
                Repair("E5.3", ("step[1]", "inserted before"), None, "devices()"),
            ),
            id="after-a-call-that-could-not-be-read",
        ),
        pytest.param(
            _chat_call("play", device_id="dev-7"), [_ASKED], None,
            id="a-value-the-model-wrote-is-never-replaced",
        ),
        pytest.param(
            _chat_call("play", device_id="<device_id>"),
            [_ASKED, _chat_call("devices", "c0"), _DEVICES], None,
            id="its-producer-called-already",
        ),
        pytest.param(
            _chat_call("play", device_id="<device_id>"),
            [_ASKED, _chat_call("devices", "c0"), {**_DEVICES, "content": '{"devices": []}'}],
            None,
            id="its-producer-called-already-answered-none",
        ),
        pytest.param(
            _chat_call("queue", track_id="<track_id>"), [_ASKED], None,
            id="the-producer-takes-an-argument",
        ),
        pytest.param(
            _chat_call("create_playlist", user_id="<user_id>", name="x"), [_ASKED], None,
            id="two-producers-take-nothing",
        ),
    ],
)  # fmt: skip
def test_with_the_chat_a_producer_left_out_is_the_call_to_make_first(
    message: dict[str, Any],
    history: list[dict[str, Any]],
    first: tuple[ApiRequest, Repair] | None,
) -> None:
    """A trace's step (a tool call with the chat before it) that made up a value gets the
    producer's call to send first, where one call that takes nothing gives it."""
    from autofeedback.decide._calls import decide_calls

    [call] = decide_calls(message, _player(), history=history).calls
    assert call.decision.first == first


def test_with_the_chat_and_repair_off_nothing_is_repaired_or_sent_first() -> None:
    """``repair="off"`` reports the certain repairs of a call decided with the chat
    before it, and inserts no producer's call: the call is fed back as the model wrote
    it (with ``"sure"`` the same calls are repaired, or get their producer first)."""
    from autofeedback.decide._calls import decide_calls

    for repair, first, name, repairs in [
        (
            "sure",
            (
                ApiRequest(name="devices", arguments={}, format="openai"),
                Repair("E5.3", ("step[0]", "inserted before"), None, "devices()"),
            ),
            "play",
            (Repair("E2.2", ("api",), "Play", "play"),),
        ),
        ("off", None, "Play", ()),
    ]:
        decider = Decider(_player().scanner, repair=repair)
        made_up = _chat_call("play", device_id="<device_id>")
        [stand_in] = decide_calls(made_up, decider, history=[_ASKED]).calls
        misspelt = _chat_call("Play", device_id="dev-7")
        [call] = decide_calls(misspelt, decider, history=[_ASKED]).calls
        assert (stand_in.decision.first, call.name, call.decision.repairs) == (
            first,
            name,
            repairs,
        ), repair
        assert (call.decision.action, call.decision.reason) == ("feedback", "errors")
        assert stand_in.decision.action == "feedback"


def test_a_producer_left_out_is_inserted_when_it_takes_nothing() -> None:
    decider = _player()
    decision = decider.decide_program('play(device_id="<device_id>")', instruction="play music")
    assert decision.reason == "repaired"
    assert decision.text == (
        "devices_result = devices()\nplay(device_id=devices_result.devices[0].id)"
    )
    inserted, value = decision.repairs
    assert (inserted.location, inserted.before, inserted.after) == (
        ("step[0]", "inserted before"),
        None,
        "devices_result = devices()",
    )
    assert (value.location, value.after) == (
        ("step[0]", "argument", "device_id"),
        "devices_result.devices[0].id",
    )
    # the finding it answers says so
    [finding] = [f for f in decision.findings if f.code == "E5.3"]
    assert finding.fix == value


def test_a_producer_is_inserted_on_the_line_before_the_call_and_never_inside_a_block() -> None:
    decider = _player()
    program = 'x = 1\nplay(device_id="<device_id>")\nprint(x)'
    decision = decider.decide_program(program, instruction="play music")
    assert decision.text == (
        "x = 1\ndevices_result = devices()\nplay(device_id=devices_result.devices[0].id)\nprint(x)"
    )
    assert [(r.code, r.location, r.before, r.after) for r in decision.repairs] == [
        ("E5.3", ("step[0]", "inserted before"), None, "devices_result = devices()"),
        (
            "E5.3",
            ("step[0]", "argument", "device_id"),
            "<device_id>",
            "devices_result.devices[0].id",
        ),
    ]
    # inside a loop: where the call belongs is not certain
    looped = 'for i in range(2):\n    play(device_id="<device_id>")'
    decision = decider.decide_program(looped, instruction="play music")
    assert not decision.repairs and decision.text == looped


def test_a_producer_is_inserted_only_where_it_changes_nothing_and_for_a_stand_in() -> None:
    decider = _player()
    # a value the model wrote (made up, but written) is never replaced by an inserted call
    written = 'play(device_id="kitchen-speaker-7")'
    decision = decider.decide_program(written, instruction="play music")
    assert not decision.repairs and decision.text == written
    # a producer that says nothing of its effects (no readOnlyHint, no GET) is never
    # called unasked, nor one that writes
    for hints in ({}, {"readOnlyHint": False}, {"destructiveHint": True}):
        tools = [
            {
                "name": "devices",
                "parameters": {"type": "object", "properties": {}},
                "outputSchema": {
                    "type": "object",
                    "properties": {
                        "devices": {
                            "type": "array",
                            "items": {"type": "object", "properties": {"id": {"type": "string"}}},
                        }
                    },
                },
                "annotations": hints,
            },
            {
                "name": "play",
                "parameters": {
                    "type": "object",
                    "properties": {"device_id": {"type": "string"}},
                    "required": ["device_id"],
                },
            },
        ]
        unsure = Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))
        program = 'play(device_id="<device_id>")'
        decision = unsure.decide_program(program, instruction="play music")
        assert not decision.repairs and decision.text == program, hints


def test_a_producer_is_not_inserted_where_the_model_has_a_choice_to_make() -> None:
    decider = _player()
    cases = {
        # the producer needs a query: which one is the model's to write
        'queue(track_id="<track_id>")': "queue Yesterday",
        # which device is "the second"?
        'play(device_id="<device_id>")': "play on the second device",
    }
    for program, instruction in cases.items():
        decision = decider.decide_program(program, instruction=instruction)
        assert decision.action == "feedback" and not decision.repairs, program
        assert decision.text == program


def test_a_better_producer_no_step_calls_leaves_the_value_to_the_model() -> None:
    # the top tracks' items carry a user_id, but the user's own id comes from get_user,
    # which the program left out: reading the tracks' would be a guess
    program = 't = top_tracks()\ncreate_playlist(user_id="<user_id>", name="Top")'
    decision = _player().decide_program(program, instruction="a playlist of my top tracks")
    assert decision.action == "feedback" and not decision.repairs


# -- the session: rounds, repeats, budget ------------------------------------------------

BAD = Decision(
    "feedback", "errors", ApiRequest(name="f"), remaining=(Finding("E3", ("a", "b"), "b"),)
)


def test_session_feeds_back_then_stops_when_rounds_are_spent() -> None:
    session = Session(Policy(max_rounds=2))
    assert [session.judge(BAD, key=k).action for k in "abc"] == ["feedback", "feedback", "stop"]


def test_session_stops_a_repeated_call() -> None:
    session = Session(Policy(max_rounds=9, repeats=1))
    verdicts = [session.judge(BAD, key="same") for _ in range(3)]
    assert [(v.action, v.reason) for v in verdicts] == [
        ("feedback", "errors"),
        ("feedback", "repeated"),
        ("stop", "repeated"),
    ]


def test_session_lets_unblocked_errors_through_once_feedback_is_over() -> None:
    e4 = Decision("feedback", "errors", ApiRequest(name="f"), remaining=(Finding("E4.2", (), 1),))
    session = Session(Policy(feedback=False, block=frozenset({"E1", "E2", "E3"})))
    assert session.judge(e4).action == "forward" and session.judge(e4).reason == "unblocked"
    assert session.judge(BAD).action == "stop"


def test_session_token_budget() -> None:
    session = Session(Policy(max_rounds=9, token_budget=100))
    session.spend(150)
    assert session.judge(BAD).reason == "token-budget"


def test_combine_and_key() -> None:
    clean = Decision("forward", "clean", ApiRequest(name="f"))
    assert combine([clean, BAD]).action == "feedback"
    assert request_key(ApiRequest(name="f", arguments={"a": 1})) == request_key(
        ApiRequest(name="f", arguments={"a": 1}, call_id="other")
    )


def test_the_key_of_a_call_with_python_values_is_its_json_or_its_repr() -> None:
    """A guarded Python function is called with Python values: a date is keyed by its
    text, arguments that hold themselves by their repr, nothing read by the text."""
    import datetime

    dated = ApiRequest(name="book", arguments={"day": datetime.date(2026, 3, 1)})
    assert request_key(dated) == (
        '{"arguments": {"day": "2026-03-01"}, "body": null, "method": null, "name": "book", '
        '"params": {}, "url": null}'
    )
    loop: dict[str, Any] = {}
    loop["next"] = loop
    assert request_key(ApiRequest(name="f", arguments={"node": loop})) == (
        "{'name': 'f', 'arguments': {'node': {'next': {...}}}, 'method': None, 'url': None, "
        "'params': {}, 'body': None}"
    )
    assert (request_key(None), request_key(None, " I cannot. ")) == ("text:", "text:I cannot.")


def test_a_judged_decision_is_judged_afresh_by_another_session() -> None:
    """A gateway that keeps one session per conversation may judge a decision another
    session judged: the action and reason are this session's, whatever it came with."""
    clean = Decision("forward", "clean", ApiRequest(name="f"))
    spent = Session(Policy(max_rounds=0))
    spent.reject("k")
    repeated = spent.judge(clean, key="k")
    stopped = spent.judge(BAD)
    assert [(d.action, d.reason) for d in (repeated, stopped)] == [
        ("stop", "repeated"),
        ("stop", "rounds"),
    ]
    fresh = Session()
    assert [(d.action, d.reason) for d in (fresh.judge(repeated), fresh.judge(stopped))] == [
        ("forward", "clean"),
        ("feedback", "errors"),
    ]


def test_an_answer_with_no_call_is_never_let_through_as_unblocked(decider: Decider) -> None:
    """Without feedback a call whose errors are all of families the policy lets through
    goes out; an answer in which no call could be read has nothing to send, so it stops
    the run whatever its E1's family."""
    [unread] = decider.decide("I would rather not call anything.")
    [e1] = unread.findings
    assert unread == Decision("feedback", "errors", None, None, (e1,), (e1,))
    assert (e1.code, e1.message) == ("E1", "no API request found in the output")
    session = Session(Policy(feedback=False, block=frozenset({"E5"})))
    assert (session.judge(unread).action, session.judge(unread).reason) == ("stop", "no-feedback")


def test_calls_made_together_are_one_decision_with_everything_in_order() -> None:
    fix_a, fix_b = Repair("E3.2", ("argument", "A"), "A", "a"), Repair("E2.2", ("api",), "G", "g")
    warn = Finding("E2.1", ("api",), "f", severity="warning", message="maybe")
    err = Finding("E3.2", ("argument", "x"), "x", message="unknown")
    clean = Decision("forward", "clean", ApiRequest(name="f"), findings=(warn,), remaining=(warn,))
    fixed = Decision("forward", "repaired", ApiRequest(name="g"), repairs=(fix_a, fix_b))
    bad = Decision("feedback", "errors", ApiRequest(name="h"), findings=(err,), remaining=(err,))
    both = combine([clean, fixed])
    assert (both.action, both.reason, both.request, both.original) == (
        "forward",
        "repaired",
        None,
        None,
    )
    assert (both.findings, both.remaining, both.repairs, both.text) == (
        (warn,),
        (warn,),
        (fix_a, fix_b),
        "",
    )
    assert (combine([clean, clean]).action, combine([clean, clean]).reason) == ("forward", "clean")
    one_bad = combine([fixed, bad, clean])
    assert (one_bad.action, one_bad.reason, one_bad.repairs) == (
        "feedback",
        "errors",
        (fix_a, fix_b),
    )
    assert (one_bad.findings, one_bad.remaining) == ((err, warn), (err, warn))
    assert combine([bad, clean]).findings == (err, warn)
    none = combine([])
    assert (none.action, none.reason, none.text, none.findings) == ("forward", "clean", None, ())


def test_repairs_of_credentials_are_masked_where_shown() -> None:
    tools = [
        {
            "name": "login",
            "parameters": {
                "type": "object",
                "properties": {"api_key": {"type": "string"}, "retries": {"type": "integer"}},
            },
        }
    ]
    decider = Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))
    [decision] = decider.decide({"name": "login", "arguments": {"API_KEY": "sk-secret-1234"}})
    assert decision.request is not None and decision.request.arguments == {
        "api_key": "sk-secret-1234"
    }
    shown = json.dumps([r.as_dict() for r in decision.repairs])
    assert "sk-secret-1234" not in shown and "api_key" in shown


#: a shop whose own credential names (``securitySchemes``) are no names known to be secret
SHOP_AUTH = {
    "openapi": "3.0.0",
    "info": {"title": "shop", "version": "1"},
    "servers": [{"url": "https://api.example.org"}],
    "components": {
        "securitySchemes": {
            "ident": {"type": "apiKey", "in": "header", "name": "X-Shop-Ident"},
            "session": {"type": "apiKey", "in": "header", "name": "shop_ident"},
        }
    },
    "security": [{"ident": []}],
    "paths": {
        "/tokens/{token}": {
            "get": {
                "operationId": "getToken",
                "parameters": [
                    {"name": "token", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/sessions": {
            "post": {
                "operationId": "openSession",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"shop_ident": {"type": "string"}},
                                }
                            }
                        },
                    }
                },
            }
        },
        "/orders": {
            "get": {
                "operationId": "listOrders",
                "parameters": [
                    {
                        "name": "shop_ident",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}


@pytest.mark.parametrize("where", ["call", "trace-step"])
def test_a_credential_the_request_sends_is_masked_in_a_repair_that_repeats_it(where: str) -> None:
    """The token looked up is the one the request authenticates with (a header the spec
    declares): the path's slip is repaired and sent as written, and shown with the token
    masked; a call decided alone, and a step of a trace (issue 39: decide_steps 57)."""
    decider = Decider(Scanner(ApiCatalog.from_obj(SHOP_AUTH), retriever=None))
    url = "https://api.example.org/tokns/ab12cd34ef"
    call = {"method": "GET", "url": url, "headers": {"X-Shop-Ident": "ab12cd34ef"}}
    if where == "call":
        [decision] = decider.decide(call)
    else:
        seq = sequence_from_record({"instruction": "show my token", "steps": [{"request": call}]})
        [decision] = decider.decide_steps(seq, 0)
    assert decision.request is not None
    assert decision.request.url == "https://api.example.org/tokens/ab12cd34ef"
    assert [r.as_dict() for r in decision.repairs] == [
        {
            "code": "E2",
            "location": ["api"],
            "before": "/tokns/[REDACTED]",
            "after": "/tokens/[REDACTED]",
        }
    ]


def test_a_credential_read_from_an_earlier_response_is_masked_where_shown() -> None:
    """A session credential (a header the spec declares) the model left as a stand-in
    is read from the response that opened the session: sent, and shown masked."""
    steps = [
        {"call": {"name": "openSession", "arguments": {}}, "response": {"shop_ident": "tk-ab12"}},
        {"call": {"name": "listOrders", "arguments": {"shop_ident": "<shop_ident>"}}},
    ]
    seq = sequence_from_record({"instruction": "list my orders", "steps": steps})
    decider = Decider(Scanner(ApiCatalog.from_obj(SHOP_AUTH), retriever=None))
    [decision] = decider.decide_steps(seq, 1)
    assert decision.request is not None and decision.request.arguments == {"shop_ident": "tk-ab12"}
    assert [r.as_dict() for r in decision.repairs] == [
        {
            "code": "E5.3",
            "location": ["header", "shop_ident"],
            "before": "[REDACTED]",
            "after": "[REDACTED]",
        }
    ]


def test_repair_is_a_value_with_a_json_form() -> None:
    r = Repair("E4.1", ("argument", "days"), "3", 3)
    assert r.as_dict() == {
        "code": "E4.1",
        "location": ["argument", "days"],
        "before": "3",
        "after": 3,
    }
    f = Finding("E4.1", ("argument", "days"), "3", message="days must be an integer", fix=r)
    assert f.as_dict()["fix"] == {"before": "3", "after": 3}
    assert "[repaired: '3' -> 3]" in str(f)


def test_a_text_is_decided_as_a_program_or_as_calls_with_what_the_user_asked(
    bookshop: ApiCatalog,
) -> None:
    """``decide`` reads a program (one assignment is enough) as a program, and calls as
    calls; the instruction and the context say which values the user gave."""
    decider = Decider(Scanner(bookshop, retriever=None))
    dune = "Show me the book Dune"
    [program] = decider.decide('b = search_books(query="Dune")', instruction=dune)
    assert (program.reason, program.request, program.text, program.repairs) == (
        "repaired",
        None,
        'b = searchBooks(query="Dune")',
        (Repair("E2.2", ("step[0]", "api"), "search_books", "searchBooks"),),
    )
    made_up = (
        "'bookId' = 7 is not given by the user or an earlier response; call searchBooks "
        "first: its response has `books[].id`"
    )
    for text, where in [
        ("b = getBook(bookId=7)", "step[0]"),
        ("<API>getBook(bookId=7)</API>", None),
    ]:
        [asked] = decider.decide(text, instruction=dune)
        [given] = decider.decide(text, instruction="Show me book 7")
        location = ("path", "bookId") if where is None else (where, "path", "bookId")
        assert [(f.code, f.location, f.message) for f in asked.remaining] == [
            ("E5.3", location, made_up)
        ], text
        assert given.remaining == (), text
    # a call's context (what came before it) may give the value
    [told] = decider.decide(
        "<API>getBook(bookId=7)</API>", instruction=dune, context="Dune has the id 7."
    )
    assert told.remaining == ()
    # and so for each of several calls
    both = "<API>getBook(bookId=7)</API> <API>getBook(bookId=8)</API>"
    asked_both = decider.decide(both, instruction=dune)
    told_both = decider.decide(both, instruction=dune, context="Dune has the id 7.")
    assert [[f.got for f in d.remaining] for d in asked_both] == [[7], [8]]
    assert [[f.got for f in d.remaining] for d in told_both] == [[], [8]]


@pytest.mark.parametrize("repair", ["sure", "off"])
def test_a_program_decision_keeps_its_text_so_that_it_can_go_out(
    bookshop: ApiCatalog, repair: RepairMode
) -> None:
    """A program is decided on its text (no request is read from it): clean, or with
    nothing repaired, the decision carries the program as written, and a session that
    lets its errors through sends it."""
    decider = Decider(Scanner(bookshop, retriever=None), repair=repair)
    lets_through = Session(Policy(feedback=False, block=frozenset({"E1"})))
    for program, reason in [
        ('b = searchBooks(query="Dune")', "clean"),
        ("b = getBook(bookId=7)", "errors"),
    ]:
        decision = decider.decide_program(program, instruction="Show me the book Dune")
        judged = lets_through.judge(decision)
        assert (decision.reason, decision.text, judged.action) == (reason, program, "forward")
    if repair == "off":
        misspelt = 'b = search_books(query="Dune")'
        decision = decider.decide_program(misspelt)
        assert (decision.reason, decision.text, decision.repairs) == ("errors", misspelt, ())


def test_a_decision_in_its_json_form_for_logs_and_traces() -> None:
    """What was found (error codes), repaired, left, and the call to send first."""
    from autofeedback.decide._calls import decide_calls

    decider = _player()
    [stand_in] = decide_calls(
        _chat_call("play", device_id="<device_id>"), decider, history=[_ASKED]
    ).calls
    [misspelt] = decide_calls(
        _chat_call("Play", device_id="dev-7"), decider, history=[_ASKED]
    ).calls
    producer = "call devices first: its response has `devices[].id`"

    def made_up(got: str, why: str) -> dict[str, Any]:
        return {
            "code": "E5.3",
            "location": ["argument", "device_id"],
            "got": got,
            "expected": None,
            "message": f"'device_id' = '{got}' {why}; {producer}",
            "severity": "error",
            "suggestion": producer,
            "operation": "play",
        }

    assert stand_in.decision.as_dict() == {
        "action": "feedback",
        "reason": "errors",
        "codes": ["E5.3"],
        "repairs": [],
        "remaining": [made_up("<device_id>", "is a placeholder")],
        "first": {
            "code": "E5.3",
            "location": ["step[0]", "inserted before"],
            "before": None,
            "after": "devices()",
        },
    }
    assert misspelt.decision.as_dict() == {
        "action": "feedback",
        "reason": "errors",
        "codes": ["E2.2"],
        "repairs": [{"code": "E2.2", "location": ["api"], "before": "Play", "after": "play"}],
        "remaining": [made_up("dev-7", "is not given by the user or an earlier response")],
    }


#: API-Bank's tool search, and the tool one of its results documents (issue 40)
SEARCHER = {
    "name": "ToolSearcher",
    "description": "Searches for relevant tools in library based on the keywords.",
    "input_parameters": {"keywords": {"type": "str", "description": "The keyword to search for."}},
    "output_parameters": {"best_matchs": {"type": "Union[List[dict], dict]"}},
}
CANCEL = {
    "name": "CancelOrder",
    "description": "Cancel an order given its id.",
    "input_parameters": {"order_id": {"type": "str", "description": "The id of the order."}},
    "output_parameters": {"status": {"type": "str", "description": "success or failed"}},
}


def test_a_call_to_a_tool_a_search_in_the_dialogue_documented_is_repaired_against_it() -> None:
    """A tool that a search earlier in the dialogue (the instruction or the context)
    documented is checked and repaired as a tool of the list is, one call or several;
    without the dialogue it is no documented API."""
    decider = Decider(Scanner(ApiCatalog.from_tools([SEARCHER]), retriever=None))
    dialogue = (
        "User: Please cancel my order ORD-42.\nAI: Let me look for a tool.\n"
        f"API-Request: [ToolSearcher(keywords='cancel order')]->{[CANCEL]!r}\nAI: Found it."
    )
    one = "API-Request: [CancelOrder(Order_ID='ORD-42')]"
    two = f"{one} API-Request: [CancelOrder(Order_ID='ORD-43')]"
    fixed = Repair("E3.2", ("argument", "Order_ID"), "Order_ID", "order_id")
    asked = "Please cancel my order ORD-42."
    for text, ids in [(one, ["ORD-42"]), (two, ["ORD-42", "ORD-43"])]:
        for where in [{"instruction": dialogue}, {"instruction": asked, "context": dialogue}]:
            decisions = decider.decide(text, **where)
            assert [
                (d.reason, d.request and d.request.arguments, d.repairs) for d in decisions
            ] == [("repaired", {"order_id": i}, (fixed,)) for i in ids], (text, where)
            assert decisions[0].text == text.replace("Order_ID", "order_id")
        alone = decider.decide(text, instruction=asked)
        assert [(d.action, [f.code for f in d.remaining]) for d in alone] == [
            ("feedback", ["E2"]) for _ in ids
        ]


def test_a_call_to_a_tool_listed_twice_is_fed_back_as_written() -> None:
    """Which of two tools of one name would run cannot be told (issue 43): the call is
    fed back as the model wrote it, nothing repaired."""
    from autofeedback import SpecWarning

    def tool(parameter: str) -> dict[str, Any]:
        properties = {parameter: {"type": "string"}}
        return {
            "name": "get_weather",
            "parameters": {"type": "object", "required": [parameter], "properties": properties},
        }

    with pytest.warns(SpecWarning, match="'get_weather' is listed 2 times, as different tools"):
        catalog = ApiCatalog.from_tools([tool("city"), tool("town")])
    call = {"name": "get_weather", "arguments": {"City": "Paris"}}
    [decision] = Decider(Scanner(catalog, retriever=None)).decide(call)
    written = ApiRequest(name="get_weather", arguments={"City": "Paris"}, format="json")
    assert (decision.action, decision.request, decision.original, decision.repairs) == (
        "feedback",
        written,
        written,
        (),
    )
    assert [(f.code, f.message) for f in decision.remaining] == [
        (
            "E2",
            "API 'get_weather' is not called: its name is listed 2 times, as different tools, "
            "and which of those tools would run cannot be told; tell the user instead of "
            "calling it",
        )
    ]


def test_a_call_to_a_tool_listed_twice_is_not_renamed_to_a_tool_one_slip_away() -> None:
    """``read_flie`` is listed twice (set aside, issue 43) beside ``read_file``: a call to
    it is what the list offered, not a slip of ``read_file``, so it is fed back as
    written; the same name, not listed, is repaired as a slip."""
    from autofeedback import SpecWarning

    def tool(name: str, *parameters: str) -> dict[str, Any]:
        properties = {p: {"type": "string"} for p in parameters}
        return {"name": name, "parameters": {"type": "object", "properties": properties}}

    with pytest.warns(SpecWarning, match="'read_flie' is listed 2 times, as different tools"):
        catalog = ApiCatalog.from_tools(
            [tool("read_file", "path"), tool("read_flie", "path"), tool("read_flie", "file")]
        )
    call = {"name": "read_flie", "arguments": {"path": "a.txt"}}
    [decision] = Decider(Scanner(catalog, retriever=None)).decide(call)
    written = ApiRequest(name="read_flie", arguments={"path": "a.txt"}, format="json")
    assert (decision.action, decision.request, decision.repairs) == ("feedback", written, ())
    assert [f.code for f in decision.remaining] == ["E2"]
    alone = ApiCatalog.from_tools([tool("read_file", "path")])
    [slip] = Decider(Scanner(alone, retriever=None)).decide(call)
    assert [str(r) for r in slip.repairs] == ["E2 api: 'read_flie' -> 'read_file'"]


def test_a_program_is_checked_and_repaired_with_what_else_the_model_saw(
    bookshop: ApiCatalog,
) -> None:
    """The context (a system prompt: "book 7") grounds a program's id both when the
    program is checked and when its repaired text is checked again: ``getBok`` respelt,
    and nothing left; without the context the id is E5.3 (found by the fifth mutation
    pass of decide/: ``decide_program`` 5-6, 13, 18, 42, 49 survived)."""
    decider = Decider(Scanner(bookshop, retriever=None))
    asked, seen = "Show me that book and its reviews", "The user is looking at book 7."
    clean = "r = getBook(bookId=7)\nlistReviews(bookId=r.id)"
    [decision] = decider.decide(clean, instruction=asked, context=seen)
    assert (decision.action, decision.reason, decision.findings) == ("forward", "clean", ())
    [decision] = decider.decide(clean.replace("getBook", "getBok"), instruction=asked, context=seen)
    assert (decision.action, decision.reason, decision.text) == ("forward", "repaired", clean)
    assert [str(r) for r in decision.repairs] == ["E2 step[0].api: 'getBok' -> 'getBook'"]
    assert decision.remaining == ()
    [alone] = decider.decide(clean, instruction=asked)
    assert [f.code for f in alone.errors] == ["E5.3"]


def test_calls_made_together_are_each_judged_among_as_many_apis_as_there_are_calls(
    api_retriever: Any,
) -> None:
    """Four calls that answer one request of four parts: each API is judged against the
    user's words among the four that fit best (E2.1's top-k is the number of calls), so
    none is doubted, nor two of them; the flight search or the weather alone is
    doubted (a warning), the trip's other parts fitting the words better (issue 39:
    ``decide`` 36, ``decide_request`` 1, 11, 19, 22, 26 survived)."""

    def tool(name: str, description: str, *params: str) -> dict[str, Any]:
        properties = {p: {"type": "integer" if p == "nights" else "string"} for p in params}
        schema = {"type": "object", "properties": properties, "required": list(params)}
        return {"name": name, "description": description, "parameters": schema}

    catalog = ApiCatalog.from_tools(
        [
            tool("get_weather", "Weather forecast for a city.", "city"),
            tool("search_flights", "Flights between two airports.", "origin", "destination"),
            tool("book_hotel", "Book a hotel room in a city.", "city", "nights"),
            tool("send_email", "Send an email message to a recipient.", "to"),
            tool("get_stock_price", "Current price of a stock ticker.", "ticker"),
            tool("translate_text", "Translate text into another language.", "text"),
            tool("get_news", "Latest news headlines on a topic.", "topic"),
            tool("set_alarm", "Set an alarm clock for a time.", "time"),
        ]
    )
    decider = Decider(Scanner(catalog, retriever=api_retriever))
    asked = (
        "I'm going to Paris: find flights from London, book a hotel for two nights, "
        "tell me the weather there, and email my boss at boss@example.org"
    )
    flights = '<API>search_flights(origin="London", destination="Paris")</API>'
    hotel = '<API>book_hotel(city="Paris", nights=2)</API>'
    weather = '<API>get_weather(city="Paris")</API>'
    email = '<API>send_email(to="boss@example.org")</API>'
    decisions = decider.decide("\n".join([flights, hotel, weather, email]), instruction=asked)
    assert [(d.action, d.findings) for d in decisions] == [("forward", ())] * 4
    decisions = decider.decide(f"{hotel}\n{weather}", instruction=asked)
    assert [(d.action, d.findings) for d in decisions] == [("forward", ())] * 2
    for alone in (flights, weather):
        [decision] = decider.decide(alone, instruction=asked)
        assert [(f.code, f.severity) for f in decision.findings] == [("E2.1", "warning")]
    # a call decided on its own (a guard, a gate) is one call
    one = ApiRequest(name="get_weather", arguments={"city": "Paris"})
    decision = decider.decide_request(one, instruction=asked)
    assert [(f.code, f.severity) for f in decision.findings] == [("E2.1", "warning")]

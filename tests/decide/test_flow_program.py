"""The variable a program gets for the result of a call inserted before the model's
(issue 27's producer): a Python name made from the function's, that the program does not
use already; and the producer a trace's step is sent after, only where it is certain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, Scanner
from autofeedback.core._findings import Repair
from autofeedback.decide import Decider
from autofeedback.decide._flow_program import _fresh_name
from autofeedback.sequences import sequence_from_program, sequence_from_record


@pytest.mark.parametrize(
    ("program", "function", "name"),
    [
        ("x = 1", "getUser", "getuser_result"),
        ("", "GET /users/{id}", "get_users_id_result"),
        ("", "_list-all_", "list_all_result"),
        ("", "123go", "r_123go_result"),
        ("", "--", "result_result"),
        ("getuser_result = 1", "getUser", "getuser_result2"),
        ("getuser_result, getuser_result2", "getUser", "getuser_result3"),
        ("get_user_resultX = 1", "get user", "get_user_result"),  # another name
        ("Xgetuser_result = 1", "getUser", "getuser_result"),  # another name too
        ("", "Xbox_games", "xbox_games_result"),
        ("", "v2_devices", "v2_devices_result"),
    ],
)
def test_the_producer_result_gets_a_name_the_program_does_not_use(
    program: str, function: str, name: str
) -> None:
    assert _fresh_name(program, function) == name


# -- a trace's step: the producer to send first ----------------------------------------------


def _takes(*required: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in required},
        "required": list(required),
    }


def _gives(path: str, *fields: str) -> dict[str, Any]:
    item = {"type": "object", "properties": {f: {"type": "string"} for f in fields}}
    return {"type": "object", "properties": {path: {"type": "array", "items": item}}}


def _list_of(name: str, types: Any) -> dict[str, Any]:
    schema = {"type": types, "items": {"type": "string"}}
    return {"type": "object", "properties": {name: schema}, "required": [name]}


READS = {"readOnlyHint": True}
PLAYER = ApiCatalog.from_tools(
    [
        {
            "name": "devices",
            "parameters": _takes(),
            "outputSchema": _gives("devices", "id"),
            "annotations": READS,
        },
        {"name": "play", "parameters": _takes("device_id")},
        {"name": "play_in", "parameters": _takes("room_id", "device_id")},
        {"name": "play_all", "parameters": _list_of("device_ids", "array")},
        {"name": "play_any", "parameters": _list_of("device_ids", ["array", "null"])},
        {
            "name": "search",
            "parameters": _takes("q"),
            "outputSchema": _gives("tracks", "id"),
            "annotations": READS,
        },
        {"name": "queue", "parameters": _takes("track_id")},
        {
            "name": "members",
            "parameters": _takes(),
            "outputSchema": _gives("members", "user_id"),
            "annotations": READS,
        },
        {
            "name": "top_tracks",
            "parameters": _takes(),
            "outputSchema": _gives("items", "user_id"),
            "annotations": READS,
        },
        {"name": "create_playlist", "parameters": _takes("user_id")},
        # says nothing of its effects: never called unasked
        {"name": "rooms", "parameters": _takes(), "outputSchema": _gives("rooms", "room_id")},
        {"name": "light", "parameters": _takes("room_id")},
    ]
)


def _first(steps: list[dict[str, Any]], instruction: str = "play music") -> Any:
    seq = sequence_from_record({"instruction": instruction, "steps": steps})
    decider = Decider(Scanner(PLAYER, retriever=None))
    return decider.decide_steps(seq, len(steps) - 1)[-1].first


def _call(name: str, **arguments: str) -> dict[str, Any]:
    return {"call": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize(
    ("steps", "fmt"),
    [
        pytest.param([_call("play", device_id="<device_id>")], "json", id="call"),
        pytest.param(
            [{"output": "<API>play(device_id='<device_id>')</API>"}], "api-tag", id="api-text"
        ),
        # a value written beside it stays the model's; the stand-in gets the producer
        pytest.param(
            [_call("play_in", room_id="hall-3", device_id="<device_id>")],
            "json",
            id="beside-written",
        ),
        # its name repaired (Play is play): the producer of play's parameter
        pytest.param([_call("Play", device_id="<device_id>")], "json", id="name-repaired"),
    ],
)
def test_a_trace_step_that_made_up_an_id_gets_its_producer_sent_first(
    steps: list[dict[str, Any]], fmt: Any
) -> None:
    assert _first(steps) == (
        ApiRequest(name="devices", arguments={}, format=fmt),
        Repair("E5.3", ("step[0]", "inserted before"), None, "devices()"),
    )


def test_a_step_after_one_that_could_not_be_read_gets_its_producer_too() -> None:
    steps = [{"output": "nothing to read here"}, _call("play", device_id="<device_id>")]
    assert _first(steps) == (
        ApiRequest(name="devices", arguments={}, format="json"),
        Repair("E5.3", ("step[1]", "inserted before"), None, "devices()"),
    )


def test_a_program_gets_its_producer_written_in_not_sent_first() -> None:
    seq = sequence_from_program('play(device_id="<device_id>")', instruction="play music")
    decider = Decider(Scanner(PLAYER, retriever=None))
    assert decider.decide_steps(seq, 0)[0].first is None


@pytest.mark.parametrize(
    ("steps", "instruction"),
    [
        # a value the model wrote, made up but written, is never replaced
        pytest.param([_call("play", device_id="kitchen-7")], "play music", id="written-value"),
        # an earlier step called the producer: the value is read from its response
        pytest.param(
            [_call("devices"), _call("play", device_id="<device_id>")],
            "play music",
            id="producer-called-before",
        ),
        # the producer needs an argument: which one is the model's to say
        pytest.param([_call("queue", track_id="<track_id>")], "queue a song", id="needs-arguments"),
        # two operations give the value, neither clearly
        pytest.param(
            [_call("create_playlist", user_id="<user_id>")], "make a playlist", id="two-producers"
        ),
        # the producer may change something
        pytest.param([_call("light", room_id="<room_id>")], "light a room", id="may-write"),
        # a list parameter: which items is not certain
        pytest.param(
            [{"call": {"name": "play_all", "arguments": {"device_ids": ["<device_id>"]}}}],
            "play music",
            id="list-parameter",
        ),
        pytest.param(
            [{"call": {"name": "play_any", "arguments": {"device_ids": ["<device_id>"]}}}],
            "play music",
            id="list-or-null-parameter",
        ),
        # the user asked for another item than the first
        pytest.param(
            [_call("play", device_id="<device_id>")],
            "play music on the second device",
            id="not-the-first-item",
        ),
    ],
)
def test_no_producer_is_sent_first_where_that_is_not_certain(
    steps: list[dict[str, Any]], instruction: str
) -> None:
    assert _first(steps, instruction) is None


#: the player's API over HTTP: a trace of requests
PLAYER_HTTP = {
    "openapi": "3.0.0",
    "info": {"title": "player", "version": "1"},
    "servers": [{"url": "https://api.example.org"}],
    "paths": {
        "/devices": {
            "get": {
                "operationId": "devices",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": _gives("devices", "id")}},
                    }
                },
            }
        },
        "/play": {
            "post": {
                "operationId": "play",
                "parameters": [
                    {
                        "name": "device_id",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}


def test_an_http_step_that_made_up_an_id_gets_no_producer_sent_by_name() -> None:
    """A trace of HTTP requests is sent as requests: a producer called by its name is no
    step of it (the same step written as a call gets ``devices()`` first)."""
    decider = Decider(Scanner(ApiCatalog.from_obj(PLAYER_HTTP), retriever=None))
    url = "https://api.example.org/play?device_id=<device_id>"
    seq = sequence_from_record(
        {"instruction": "play music", "steps": [{"request": {"method": "POST", "url": url}}]}
    )
    [decision] = decider.decide_steps(seq, 0)
    assert [(f.code, f.got) for f in decision.errors] == [("E5.3", "<device_id>")]
    assert decision.first is None


def test_the_producer_sent_first_is_the_made_up_value_s_not_another_error_s() -> None:
    """A value the model wrote that breaks its enum (``"your room"``, which reads as a
    stand-in) is fed back with its E4.2; the producer sent first is the one of the made-up
    device id, not that of the rooms."""
    rooms = {
        "name": "rooms",
        "parameters": _takes(),
        "outputSchema": _gives("rooms", "room"),
        "annotations": READS,
    }
    play_in = {
        "name": "play_in",
        "parameters": {
            "type": "object",
            "properties": {
                "room": {"type": "string", "enum": ["kitchen", "hall"]},
                "device_id": {"type": "string"},
            },
            "required": ["room", "device_id"],
        },
    }
    devices = {
        "name": "devices",
        "parameters": _takes(),
        "outputSchema": _gives("devices", "id"),
        "annotations": READS,
    }
    catalog = ApiCatalog.from_tools([devices, rooms, play_in])
    step = {"call": {"name": "play_in", "arguments": {"room": "your room", "device_id": "<d>"}}}
    seq = sequence_from_record({"instruction": "play music", "steps": [step]})
    [decision] = Decider(Scanner(catalog, retriever=None)).decide_steps(seq, 0)
    assert [(f.code, f.got) for f in decision.errors] == [
        ("E4.2", "your room"),
        ("E5.3", "<d>"),
    ]
    assert decision.first == (
        ApiRequest(name="devices", arguments={}, format="json"),
        Repair("E5.3", ("step[0]", "inserted before"), None, "devices()"),
    )


def test_a_tool_a_search_documented_gets_its_producer_from_a_graph_that_knows_it() -> None:
    """Tools listed for the search only (deferred): the checker's data-flow graph is built
    from every tool, the scanner's catalog from those listed. A step calling a tool that an
    earlier search documented is judged against that tool, and gets the producer of its
    made-up id sent first, as a listed tool's step does."""
    from autofeedback.sequences import FlowGraph, SequenceChecker

    search = {"name": "search_tools", "parameters": _takes("q"), "annotations": READS}
    devices = {
        "name": "devices",
        "parameters": _takes(),
        "outputSchema": _gives("devices", "id"),
        "annotations": READS,
    }
    play = {"name": "play", "parameters": _takes("device_id")}
    scanner = Scanner(ApiCatalog.from_tools([search, devices]), retriever=None)
    graph = FlowGraph.from_catalog(ApiCatalog.from_tools([search, devices, play]))
    checker = SequenceChecker(scanner, graph=graph)
    steps = [
        {
            "call": {"name": "search_tools", "arguments": {"q": "play"}},
            "response": {"tools": [play]},
        },
        {"call": {"name": "play", "arguments": {"device_id": "<device_id>"}}},
    ]
    seq = sequence_from_record({"instruction": "play music", "steps": steps})
    [decision] = Decider(scanner).decide_steps(seq, 1, checker=checker)
    assert [(f.code, f.got) for f in decision.errors] == [("E5.3", "<device_id>")]
    assert decision.first == (
        ApiRequest(name="devices", arguments={}, format="json"),
        Repair("E5.3", ("step[1]", "inserted before"), None, "devices()"),
    )


# -- a program: the producer written in before the step --------------------------------------


@pytest.mark.parametrize(
    ("program", "repaired"),
    [
        # the first line the model wrote is blank
        (
            '\nplay(device_id="<device_id>")',
            "\ndevices_result = devices()\nplay(device_id=devices_result.devices[0].id)",
        ),
        # on the line right before the step's, however many lines come first
        (
            'x = 1\ny = 2\nplay(device_id="<device_id>")',
            "x = 1\ny = 2\ndevices_result = devices()\n"
            "play(device_id=devices_result.devices[0].id)",
        ),
        # a call written over several lines: before its first
        (
            'play(\n    device_id="<device_id>",\n)',
            "devices_result = devices()\nplay(\n    device_id=devices_result.devices[0].id,\n)",
        ),
        # a stand-in in words
        (
            'play(device_id="your device")',
            "devices_result = devices()\nplay(device_id=devices_result.devices[0].id)",
        ),
        # called only after the step: no earlier step gives the value
        (
            'play(device_id="<device_id>")\nd = devices()',
            "devices_result = devices()\nplay(device_id=devices_result.devices[0].id)\n"
            "d = devices()",
        ),
    ],
)
def test_a_program_gets_the_producer_on_the_line_before_the_step(
    program: str, repaired: str
) -> None:
    decision = Decider(Scanner(PLAYER, retriever=None)).decide_program(
        program, instruction="play music"
    )
    assert (decision.action, decision.text) == ("forward", repaired)
    assert [r.after for r in decision.repairs] == [
        "devices_result = devices()",
        "devices_result.devices[0].id",
    ]


@pytest.mark.parametrize(
    ("program", "repaired", "left"),
    [
        # an unknown function on the line before
        (
            'x = foo()\nplay(device_id="<device_id>")',
            "x = foo()\ndevices_result = devices()\nplay(device_id=devices_result.devices[0].id)",
            ("E2", ("step[0]", "api")),
        ),
        # an earlier step's stand-in whose producer needs an argument: the model's to write
        (
            'queue(track_id="<track_id>")\nplay(device_id="<device_id>")',
            'queue(track_id="<track_id>")\ndevices_result = devices()\n'
            "play(device_id=devices_result.devices[0].id)",
            ("E5.3", ("step[0]", "argument", "track_id")),
        ),
        # an earlier step's stand-in written by position: which parameter it is, is the
        # model's to say (issue 39: _insert_producer 24)
        (
            'queue("<track_id>")\nplay(device_id="<device_id>")',
            'queue("<track_id>")\ndevices_result = devices()\n'
            "play(device_id=devices_result.devices[0].id)",
            ("E5.3", ("step[0]", "argument", "track_id")),
        ),
        # the same call in a loop before: where its producer belongs is not certain
        (
            'for i in range(2):\n    play(device_id="<device_id>")\nplay(device_id="<device_id>")',
            'for i in range(2):\n    play(device_id="<device_id>")\ndevices_result = devices()\n'
            "play(device_id=devices_result.devices[0].id)",
            ("E5.3", ("step[0]", "argument", "device_id")),
        ),
        # a value written beside the stand-in stays the model's
        (
            'play_in(room_id="hall-3", device_id="<device_id>")',
            "devices_result = devices()\n"
            'play_in(room_id="hall-3", device_id=devices_result.devices[0].id)',
            ("E5.3", ("step[1]", "argument", "room_id")),
        ),
    ],
)
def test_the_producer_is_written_in_past_an_error_left_to_the_model(
    program: str, repaired: str, left: tuple[str, tuple[str, ...]]
) -> None:
    decision = Decider(Scanner(PLAYER, retriever=None)).decide_program(
        program, instruction="play music"
    )
    assert (decision.action, decision.text) == ("feedback", repaired)
    assert [(f.code, f.location) for f in decision.errors] == [left]


def test_no_producer_is_written_in_where_the_program_called_it_without_keeping_its_answer() -> None:
    program = 'devices()\nplay(device_id="<device_id>")'
    decision = Decider(Scanner(PLAYER, retriever=None)).decide_program(
        program, instruction="play music"
    )
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())


def test_a_producer_of_one_item_is_written_in_whatever_item_the_instruction_counts() -> None:
    """ "the last album" counts albums; the current device is one, not an item of a list
    (and a parameter the docs give no type is an identifier all the same)."""
    device = {"type": "object", "properties": {"id": {"type": "string"}}}
    tools = [
        {
            "name": "current_device",
            "parameters": _takes(),
            "outputSchema": {"type": "object", "properties": {"device": device}},
            "annotations": READS,
        },
        {
            "name": "play",
            "parameters": {
                "type": "object",
                "properties": {"device_id": {"description": "the device to play on"}},
                "required": ["device_id"],
            },
        },
    ]
    decider = Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))
    decision = decider.decide_program(
        'play(device_id="<device_id>")', instruction="play the last album again"
    )
    assert decision.text == (
        "current_device_result = current_device()\nplay(device_id=current_device_result.device.id)"
    )


# -- a program: each repair written where the model wrote what it repairs ---------------------

CALLS_TOOLS = json.loads(
    (Path(__file__).parents[1] / "data" / "decide" / "calls.json").read_text()
)["tools"]
CALLS = ApiCatalog.from_tools(CALLS_TOOLS)


@pytest.mark.parametrize(
    ("program", "repaired"),
    [
        ('get_weather(city="Paris", days="3")', 'get_weather(city="Paris", days=3)'),
        ('reserve_seats(group={"levels": ["2"]})', "reserve_seats(group={'levels': [2]})"),
        ('reserve_seats(parties=[{"size": "4"}])', "reserve_seats(parties=[{'size': 4}])"),
    ],
)
def test_a_program_s_value_is_coerced_in_its_call(program: str, repaired: str) -> None:
    decision = Decider(Scanner(CALLS, retriever=None)).decide_program(program, instruction="go")
    assert (decision.action, decision.text) == ("forward", repaired)


@pytest.mark.parametrize(
    ("program", "left"),
    [
        # given in `**{...}`: the value has no keyword of its own to be rewritten at
        pytest.param(
            'get_weather(city="Paris", **{"days": "3"})',
            ("E4.1", "days", "3"),
            id="a-value-unpacked-from-a-dict",
        ),
        # a full-width D: Python reads `Days`, a case slip of `days`, but the text holds
        # other characters than the repair would show as rewritten
        pytest.param(
            'get_weather(city="Paris", \uff24ays=3)',
            ("E3.2", "Days", "Days"),
            id="a-keyword-in-other-characters",
        ),
    ],
)
def test_a_program_s_argument_is_repaired_only_where_its_keyword_is_written_as_read(
    program: str, left: tuple[str, str, str]
) -> None:
    decision = Decider(Scanner(CALLS, retriever=None)).decide_program(program, instruction="go")
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())
    code, name, got = left
    assert [(f.code, f.location, f.got) for f in decision.errors] == [
        (code, ("step[0]", "argument", name), got)
    ]


@pytest.mark.parametrize(
    ("program", "repaired"),
    [
        # E5.2 read through a name assigned on the line before
        (
            'b = searchBooks(query="Dune")\nx = b.book[0].id\ngetBook(bookId=x)',
            'b = searchBooks(query="Dune")\nx = b.books[0].id\ngetBook(bookId=x)',
        ),
        # a field with a keyboard slip, on the step's own line
        (
            'b = searchBooks(query="Dune")\ngetBook(bookId=b.boks[0].id)',
            'b = searchBooks(query="Dune")\ngetBook(bookId=b.books[0].id)',
        ),
        # E5.1 likewise
        (
            'b = searchBooks(query="Dune")\nx = y.books[0].id\ngetBook(bookId=x)',
            'b = searchBooks(query="Dune")\nx = b.books[0].id\ngetBook(bookId=x)',
        ),
    ],
)
def test_a_program_s_reference_is_repaired_on_the_line_it_was_written(
    bookshop: ApiCatalog, program: str, repaired: str
) -> None:
    decision = Decider(Scanner(bookshop, retriever=None)).decide_program(
        program, instruction="Show me Dune"
    )
    assert (decision.action, decision.text) == ("forward", repaired)


POSTS = {
    "openapi": "3.0.0",
    "info": {"title": "posts", "version": "1"},
    "servers": [{"url": "https://api.example.org"}],
    "paths": {
        "/user/{user_id}/posts": {
            "get": {
                "operationId": "get_user_user_id_posts",
                "parameters": [
                    {
                        "name": "user_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    },
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


@pytest.mark.parametrize(
    ("program", "repaired"),
    [
        ("get_user_42_posts(limit=5)", "get_user_user_id_posts(limit=5, user_id=42)"),
        ("get_user_42_posts()", "get_user_user_id_posts(user_id=42)"),
    ],
)
def test_a_value_written_into_a_program_s_call_name_becomes_its_argument(
    program: str, repaired: str
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_obj(POSTS), retriever=None))
    decision = decider.decide_program(program, instruction="the posts of user 42")
    assert (decision.action, decision.text) == ("forward", repaired)
    assert [str(r) for r in decision.repairs] == [
        "E2.2 step[0].api: 'get_user_42_posts' -> 'get_user_user_id_posts'",
        "E2.2 step[0].argument.user_id: None -> 42",
    ]


def test_a_program_s_value_is_coerced_beside_what_its_arguments_break_as_a_whole() -> None:
    # `limit` needs `offset` beside it (the tool's dependentRequired): an error of the
    # arguments as a whole, located at them, left to the model; the coercion is kept
    integer = {"type": "integer"}
    parameters = {
        "type": "object",
        "properties": {"limit": integer, "offset": integer},
        "dependentRequired": {"limit": ["offset"]},
    }
    catalog = ApiCatalog.from_tools([{"name": "list_items", "parameters": parameters}])
    decision = Decider(Scanner(catalog, retriever=None)).decide_program(
        'list_items(limit="5")', instruction="five items"
    )
    assert (decision.action, decision.text) == ("feedback", "list_items(limit=5)")
    assert [str(r) for r in decision.repairs] == ["E4.1 step[0].argument.limit: '5' -> 5"]
    assert [(f.code, f.location, f.got) for f in decision.errors] == [
        ("E4.2", ("step[0]", "arguments"), {"limit": 5})
    ]


def test_a_misspelt_function_is_not_renamed_where_its_call_then_names_a_read_twice() -> None:
    # renamed get_weather, the call would still send `City` beside `city`, the city read
    # from locate's answer (E3.2 names the read's parameter): the call does not fit, so
    # the name is left to the model with both errors
    locate = {
        "name": "locate",
        "parameters": _takes(),
        "outputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    catalog = ApiCatalog.from_tools([*CALLS_TOOLS, locate])
    program = 'w = locate()\nget_weathr(City="Paris", city=w.city)'
    decision = Decider(Scanner(catalog, retriever=None)).decide_program(
        program, instruction="the weather where I am"
    )
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())
    assert [(f.code, f.location) for f in decision.errors] == [
        ("E2", ("step[1]", "api")),
        ("E3.2", ("step[1]", "argument", "City")),
    ]


@pytest.mark.parametrize(
    ("program", "renamed"),
    [
        pytest.param('get_weather(city="Paris", temp_unit="fahrenheit")', [], id="as-written"),
        # the function's name respelt first: its parameters are then judged as above
        pytest.param(
            'GetWeather(city="Paris", temp_unit="fahrenheit")',
            ["E2.2 step[0].api: 'GetWeather' -> 'get_weather'"],
            id="after-the-function-respelt",
        ),
    ],
)
def test_a_program_s_repairs_judge_a_parameter_by_the_scanner_s_own_threshold(
    api_retriever: Any, program: str, renamed: list[str]
) -> None:
    """`temp_unit` is set_units' parameter, and close in meaning to get_weather's `unit`
    (0.65 with the embedding model): over the default threshold (and the margin another
    tool's name needs) it would be E3.3 and renamed `unit`, the one enum that holds
    "fahrenheit". Under this scanner's threshold of 0.9 it is E3.1, another tool's
    parameter, left to the model, whether or not the function was respelt before."""
    units = {
        "name": "set_units",
        "parameters": {
            "type": "object",
            "properties": {"temp_unit": {"type": "string", "enum": ["C", "F"]}},
        },
    }
    catalog = ApiCatalog.from_tools([*CALLS_TOOLS, units])
    scanner = Scanner(catalog, retriever=api_retriever, threshold=0.9)
    decision = Decider(scanner).decide_program(program, instruction="the weather in Paris")
    assert decision.action == "feedback"
    assert decision.text == 'get_weather(city="Paris", temp_unit="fahrenheit")'
    assert [str(r) for r in decision.repairs] == renamed
    assert [(f.code, f.location) for f in decision.errors] == [
        ("E3.1", ("step[0]", "argument", "temp_unit"))
    ]


def test_a_value_taken_out_of_the_name_is_written_in_though_it_breaks_a_bound() -> None:
    # the rename is the same words and the value is the model's own: both are kept, and
    # the renamed call's parameters are judged from then on (the bound is fed back)
    spec = json.loads(json.dumps(POSTS))
    spec["paths"]["/user/{user_id}/posts"]["get"]["parameters"][0]["schema"]["minimum"] = 100
    decider = Decider(Scanner(ApiCatalog.from_obj(spec), retriever=None))
    decision = decider.decide_program("get_user_42_posts()", instruction="the posts of user 42")
    assert (decision.action, decision.text) == ("feedback", "get_user_user_id_posts(user_id=42)")
    assert [str(r) for r in decision.repairs] == [
        "E2.2 step[0].api: 'get_user_42_posts' -> 'get_user_user_id_posts'",
        "E2.2 step[0].argument.user_id: None -> 42",
    ]
    assert [(f.code, f.location, f.got) for f in decision.errors] == [
        ("E4.2", ("step[0]", "argument", "user_id"), 42)
    ]


POST_OF_USER = {
    **POSTS,
    "paths": {
        "/user/{user_id}/posts/{post_id}": {
            "get": {
                "operationId": "get_user_user_id_posts_post_id",
                "parameters": [
                    *POSTS["paths"]["/user/{user_id}/posts"]["get"]["parameters"],
                    {
                        "name": "post_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    },
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


@pytest.mark.parametrize(
    ("program", "repaired"),
    [
        pytest.param(
            "get_user_42_posts_7(limit=5)",
            "get_user_user_id_posts_post_id(limit=5, user_id=42, post_id=7)",
            id="after-an-argument",
        ),
        # the second value follows the first one written in (it once made
        # `(user_id=42post_id=7)`, a program that does not read)
        pytest.param(
            "get_user_42_posts_7()",
            "get_user_user_id_posts_post_id(user_id=42, post_id=7)",
            id="no-argument",
        ),
    ],
)
def test_two_values_written_into_a_program_s_call_name_become_its_arguments(
    program: str, repaired: str
) -> None:
    # both are written in at the same place, one after the other (issue 39: _apply 8)
    decider = Decider(Scanner(ApiCatalog.from_obj(POST_OF_USER), retriever=None))
    decision = decider.decide_program(program, instruction="post 7 of user 42")
    assert (decision.action, decision.text) == ("forward", repaired)
    assert [str(r) for r in decision.repairs] == [
        "E2.2 step[0].api: 'get_user_42_posts_7' -> 'get_user_user_id_posts_post_id'",
        "E2.2 step[0].argument.user_id: None -> 42",
        "E2.2 step[0].argument.post_id: None -> 7",
    ]


def test_no_producer_is_written_in_from_a_weak_guess() -> None:
    # a playlist's id is no device's: the only field of the kind is a bare id of a list
    # of other things, so the value is left to the model
    tools = [
        {
            "name": "playlists",
            "parameters": _takes(),
            "outputSchema": _gives("items", "id"),
            "annotations": READS,
        },
        {"name": "play", "parameters": _takes("device_id")},
    ]
    decider = Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))
    program = 'play(device_id="<device_id>")'
    decision = decider.decide_program(program, instruction="play music")
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())


# -- a program: an edit Python would read as another program is never made -----------------

_SPELT_APART = [
    {"name": "get-book", "parameters": _takes("book_id")},
    {
        "name": "search",
        "parameters": {
            "type": "object",
            "properties": {"from": {"type": "string"}, "n": {"type": "integer"}},
        },
    },
    {
        "name": "list",
        "parameters": _takes(),
        "outputSchema": _gives("devices", "id"),
        "annotations": READS,
    },
    {"name": "play", "parameters": _takes("device_id")},
]


@pytest.mark.parametrize(
    ("program", "left"),
    [
        # `from="x"` does not read at all; the round is undone whole
        pytest.param(
            'search(From="x", n="5")',
            [("E3.2", ("step[0]", "argument", "From")), ("E4.1", ("step[0]", "argument", "n"))],
            id="keyword",
        ),
        # `r = list()` is Python's own list, not a call of the tool
        pytest.param(
            'r = List()\nplay(device_id="<device_id>")',
            [("E2.2", ("step[0]", "api")), ("E5.3", ("step[1]", "argument", "device_id"))],
            id="builtin",
        ),
        # nor is the producer `list` written in: its answer would never be checked
        pytest.param(
            'play(device_id="<device_id>")',
            [("E5.3", ("step[0]", "argument", "device_id"))],
            id="builtin-producer",
        ),
    ],
)
def test_an_edit_python_reads_as_another_program_is_never_made(
    program: str, left: list[tuple[str, tuple[str, ...]]]
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(_SPELT_APART), retriever=None))
    decision = decider.decide_program(program, instruction="play music")
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())
    assert [(f.code, f.location) for f in decision.errors] == left


@pytest.mark.parametrize(
    ("program", "repaired", "left"),
    [
        ('b = get_book(book_id="1")', 'b = get-book(book_id="1")', []),
        ('get_book(book_id="1")', 'get-book(book_id="1")', []),
        # the next call stays a step of its own (issue 39: _better 8, 9)
        ('b = get_book(book_id="1")\nfooBar()', 'b = get-book(book_id="1")\nfooBar()',
         [("E2", ("step[1]", "api"))]),
    ],
    ids=["assigned", "alone", "before-unknown"],
)  # fmt: skip
def test_a_rename_to_a_tool_named_with_hyphens_is_its_call(
    program: str, repaired: str, left: list[tuple[str, tuple[str, ...]]]
) -> None:
    # get_book -> get-book (a separator) is the call of the tool get-book: a program reads
    # get-book(...), written with no space, as that call (not get - book(...))
    decider = Decider(Scanner(ApiCatalog.from_tools(_SPELT_APART), retriever=None))
    decision = decider.decide_program(program, instruction="show book 1")
    assert decision.text == repaired
    assert [str(r) for r in decision.repairs] == ["E2.2 step[0].api: 'get_book' -> 'get-book'"]
    assert [(f.code, f.location) for f in decision.errors] == left


# -- a program: a stand-in read from the one earlier step that gives it ----------------------

_GET_BOOK = {"name": "get_book", "parameters": _takes("book_id")}
_TOP_REVIEWS = {
    "name": "top_reviews",
    "parameters": _takes(),
    "outputSchema": _gives("reviews", "id", "book_id"),
    "annotations": READS,
}
_AUTHORS = {
    "name": "authors",
    "parameters": _takes(),
    "outputSchema": _gives("authors", "id"),
    "annotations": READS,
}
_FEATURED = {
    "name": "featured",
    "parameters": _takes(),
    "outputSchema": {
        "type": "object",
        "properties": {"book": {"type": "object", "properties": {"id": {"type": "string"}}}},
    },
    "annotations": READS,
}


@pytest.mark.parametrize(
    ("tools", "program", "instruction", "read"),
    [
        # the field named for it over the review's own id
        (
            [_TOP_REVIEWS, _AUTHORS, _GET_BOOK],
            "t = top_reviews()\n",
            "the book of the top review",
            "t.reviews[0].book_id",
        ),
        # past a step whose only field of the kind is a weak guess (an author's id)
        (
            [_TOP_REVIEWS, _AUTHORS, _GET_BOOK],
            "a = authors()\nt = top_reviews()\n",
            "the book of the top review",
            "t.reviews[0].book_id",
        ),
        # one book, not an item of a list: "last" counts nothing here
        ([_FEATURED, _GET_BOOK], "f = featured()\n", "last week's featured book", "f.book.id"),
    ],
)
def test_a_program_s_stand_in_is_read_from_the_one_step_that_gives_it(
    tools: list[dict[str, Any]], program: str, instruction: str, read: str
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))
    written = program + 'get_book(book_id="<book_id>")'
    decision = decider.decide_program(written, instruction=instruction)
    assert decision.text == program + f"get_book(book_id={read})"


# -- a program: a reference written with keys, repaired as its attribute form is -------------

_BOOK = {"type": "object", "properties": {"id": {"type": "string"}, "title": {"type": "string"}}}
_SHELF = [
    {
        "name": "get_books",
        "parameters": _takes(),
        "outputSchema": {
            "type": "object",
            "properties": {"books": {"type": "array", "items": _BOOK}},
        },
        "annotations": READS,
    },
    {
        "name": "search",
        "parameters": _takes("q"),
        "outputSchema": {
            "type": "object",
            "properties": {
                "data": {
                    "type": "object",
                    "properties": {"books": {"type": "array", "items": _BOOK}},
                }
            },
        },
        "annotations": READS,
    },
    {"name": "get_book", "parameters": _takes("book_id")},
    {"name": "get_reviews", "parameters": _takes("book_id")},
    # a parameter no response produces, and a function whose response is not documented
    {"name": "add_note", "parameters": _takes("text")},
]


@pytest.mark.parametrize(
    ("program", "repaired", "repair"),
    [
        # a plural left out, on the step's own line
        (
            'b = get_books()\nget_book(book_id=b["book"][0]["id"])',
            'b = get_books()\nget_book(book_id=b["books"][0]["id"])',
            """E5.2 step[1].argument.book_id: 'b["book"][0]["id"]' -> 'b["books"][0]["id"]'""",
        ),
        # a keyboard slip, in single quotes
        (
            "b = get_books()\nget_book(book_id=b['boks'][0]['id'])",
            "b = get_books()\nget_book(book_id=b['books'][0]['id'])",
            """E5.2 step[1].argument.book_id: "b['boks'][0]['id']" -> "b['books'][0]['id']\"""",
        ),
        # read through a name assigned on the line before
        (
            'b = get_books()\nbook_id = b["book"][0]["id"]\nget_book(book_id=book_id)',
            'b = get_books()\nbook_id = b["books"][0]["id"]\nget_book(book_id=book_id)',
            """E5.2 step[1].argument.book_id: 'b["book"][0]["id"]' -> 'b["books"][0]["id"]'""",
        ),
        # a level left out: written in as a key too
        (
            'r = search(q="Dune")\nget_book(book_id=r["books"][0]["id"])',
            'r = search(q="Dune")\nget_book(book_id=r["data"]["books"][0]["id"])',
            "E5.2 step[1].argument.book_id: "
            """'r["books"][0]["id"]' -> 'r["data"]["books"][0]["id"]'""",
        ),
        # a key and an attribute: each field as it was written
        (
            'b = get_books()\nget_book(book_id=b["book"][0].id)',
            'b = get_books()\nget_book(book_id=b["books"][0].id)',
            """E5.2 step[1].argument.book_id: 'b["book"][0].id' -> 'b["books"][0].id'""",
        ),
        # inside an f-string
        (
            'b = get_books()\nget_book(book_id=f\'{b["book"][0]["id"]}\')',
            'b = get_books()\nget_book(book_id=f\'{b["books"][0]["id"]}\')',
            """E5.2 step[1].argument.book_id: 'b["book"][0]["id"]' -> 'b["books"][0]["id"]'""",
        ),
        # E5.1: a variable the program never assigned, read as the one that gives the path
        (
            'books = get_books()\nget_book(book_id=b["books"][0]["id"])',
            'books = get_books()\nget_book(book_id=books["books"][0]["id"])',
            "E5.1 step[1].argument.book_id: "
            """'b["books"][0]["id"]' -> 'books["books"][0]["id"]'""",
        ),
        # past an earlier call whose response is not documented
        (
            'n = add_note(text="hi")\nb = get_books()\nget_book(book_id=x["books"][0]["id"])',
            'n = add_note(text="hi")\nb = get_books()\nget_book(book_id=b["books"][0]["id"])',
            "E5.1 step[2].argument.book_id: "
            """'x["books"][0]["id"]' -> 'b["books"][0]["id"]'""",
        ),
        # the list the model read its one field from: its first item
        (
            'b = get_books()\nget_book(book_id=b["id"])',
            'b = get_books()\nget_book(book_id=b["books"][0]["id"])',
            """E5.2 step[1].argument.book_id: 'b["id"]' -> 'b["books"][0]["id"]'""",
        ),
        (
            "b = get_books()\nget_book(book_id=b.id)",
            "b = get_books()\nget_book(book_id=b.books[0].id)",
            "E5.2 step[1].argument.book_id: 'b.id' -> 'b.books[0].id'",
        ),
        # the item the model chose is kept
        (
            'b = get_books()\nget_book(book_id=b["book"][2]["id"])',
            'b = get_books()\nget_book(book_id=b["books"][2]["id"])',
            """E5.2 step[1].argument.book_id: 'b["book"][2]["id"]' -> 'b["books"][2]["id"]'""",
        ),
        # the last field in other case
        (
            "b = get_books()\nget_book(book_id=b.books[0].Id)",
            "b = get_books()\nget_book(book_id=b.books[0].id)",
            "E5.2 step[1].argument.book_id: 'b.books[0].Id' -> 'b.books[0].id'",
        ),
        # a value no response produces: the one path that keeps what was written
        (
            'r = search(q="Dune")\nadd_note(text=r["books"][0]["title"])',
            'r = search(q="Dune")\nadd_note(text=r["data"]["books"][0]["title"])',
            "E5.2 step[1].argument.text: "
            """'r["books"][0]["title"]' -> 'r["data"]["books"][0]["title"]'""",
        ),
        # the variable as it was when the step ran, not as a later line binds it
        (
            'b = get_books()\nget_book(book_id=b["book"][0]["id"])\nb = search(q="Dune")',
            'b = get_books()\nget_book(book_id=b["books"][0]["id"])\nb = search(q="Dune")',
            """E5.2 step[1].argument.book_id: 'b["book"][0]["id"]' -> 'b["books"][0]["id"]'""",
        ),
    ],
)
def test_a_reference_written_with_keys_is_repaired_in_its_own_style(
    program: str, repaired: str, repair: str
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(_SHELF), retriever=None))
    decision = decider.decide_program(program, instruction="the first book")
    assert (decision.action, decision.text) == ("forward", repaired)
    assert [str(r) for r in decision.repairs] == [repair]


def test_the_same_read_in_two_calls_is_repaired_in_both() -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(_SHELF), retriever=None))
    program = (
        'b = get_books()\nget_book(book_id=b["book"][0]["id"])\n'
        'get_reviews(book_id=b["book"][0]["id"])'
    )
    decision = decider.decide_program(program, instruction="the first book")
    assert (decision.action, decision.text) == (
        "forward",
        'b = get_books()\nget_book(book_id=b["books"][0]["id"])\n'
        'get_reviews(book_id=b["books"][0]["id"])',
    )
    assert [str(r) for r in decision.repairs] == [
        f'E5.2 step[{i}].argument.book_id: \'b["book"][0]["id"]\' -> \'b["books"][0]["id"]\''
        for i in (1, 2)
    ]


def test_two_steps_reading_one_misspelt_assignment_keep_the_round_before() -> None:
    # renamed in the first round, both steps then ask the one assignment to change: two
    # edits of one place are never made, the renames stay (issue 39: repair_program 52)
    decider = Decider(Scanner(ApiCatalog.from_tools(_SHELF), retriever=None))
    program = 'b = get_books()\nx = b["book"][0]["id"]\nget_bok(book_id=x)\nget_reviws(book_id=x)'
    decision = decider.decide_program(program, instruction="the first book")
    assert (decision.action, decision.text) == (
        "feedback",
        'b = get_books()\nx = b["book"][0]["id"]\nget_book(book_id=x)\nget_reviews(book_id=x)',
    )
    assert [str(r) for r in decision.repairs] == [
        "E2 step[1].api: 'get_bok' -> 'get_book'",
        "E2 step[2].api: 'get_reviws' -> 'get_reviews'",
    ]
    assert [(f.code, f.location) for f in decision.errors] == [
        ("E5.2", ("step[1]", "argument", "book_id")),
        ("E5.2", ("step[2]", "argument", "book_id")),
    ]


@pytest.mark.parametrize(
    ("program", "left"),
    [
        # a level left out of a read written both ways: how to write it is not known
        ('r = search(q="Dune")\nget_book(book_id=r["books"][0].id)', ("E5.2", 1)),
        # a key with a prefix is not rewritten
        ('b = get_books()\nget_book(book_id=b[u"book"][0]["id"])', ("E5.2", 1)),
        # the same read assigned twice: which one the step reads is not certain
        (
            'b = get_books()\nx = b["book"][0]["id"]\ny = b["book"][0]["id"]\nget_book(book_id=x)',
            ("E5.2", 1),
        ),
        # a field of another name is not read as the id
        ('b = get_books()\nget_book(book_id=b["books"][0]["name"])', ("E5.2", 1)),
        # nor a list the response does not have
        ('r = search(q="Dune")\nget_book(book_id=r["shelf"][0]["id"])', ("E5.2", 1)),
        # read through a loop's variable: the response it iterates is not rewritten
        ('b = get_books()\nfor x in b["book"]:\n    get_book(book_id=x["id"])', ("E5.2", 1)),
        # never from a call the program makes after the step
        ('get_book(book_id=x["books"][0]["id"])\nb = get_books()', ("E5.1", 0)),
    ],
)
def test_a_reference_written_with_keys_is_left_where_the_attribute_form_would_be(
    program: str, left: tuple[str, int]
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(_SHELF), retriever=None))
    decision = decider.decide_program(program, instruction="the first book")
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())
    code, step = left
    assert [(f.code, f.location) for f in decision.errors] == [
        (code, (f"step[{step}]", "argument", "book_id"))
    ]


# -- a program: the rounds of repairs, what each one may touch --------------------------------

_SEARCHER = {
    "name": "ToolSearcher",
    "description": "Searches for relevant tools in library based on the keywords.",
    "input_parameters": {"keywords": {"type": "str", "description": "The keyword to search for."}},
    "output_parameters": {"best_matchs": {"type": "Union[List[dict], dict]"}},
}
_RESERVE_ROOMS = {
    "name": "ReserveRooms",
    "description": "Reserve hotel rooms for a stay.",
    "input_parameters": {
        "hotel": {"type": "str", "description": "The hotel's name."},
        "rooms": {"type": "int", "description": "How many rooms."},
        "guests": {"type": "int", "description": "How many guests."},
    },
    "output_parameters": {"booking_id": {"type": "str", "description": "The booking."}},
}
# the chat before the program: a tool search that documented ReserveRooms (API-Bank level 2)
_HOTEL = "\n".join(
    [
        "User: Book two rooms at the Harbour Inn for four guests.",
        f"API-Request: [ToolSearcher(keywords='reserve rooms')]->{_RESERVE_ROOMS!r}",
        "AI: Booking it now.",
    ]
)


@pytest.mark.parametrize(
    ("program", "repaired", "repairs"),
    [
        (
            "ReserveRooms(hotel='Harbour Inn', rooms='2', guests='4')",
            "ReserveRooms(hotel='Harbour Inn', rooms=2, guests=4)",
            [
                "E4.1 step[0].argument.rooms: '2' -> 2",
                "E4.1 step[0].argument.guests: '4' -> 4",
            ],
        ),
        (
            "ReserveRoms(hotel='Harbour Inn', rooms=2, guests=4)",
            "ReserveRooms(hotel='Harbour Inn', rooms=2, guests=4)",
            ["E2 step[0].api: 'ReserveRoms' -> 'ReserveRooms'"],
        ),
        (
            "ReserveRooms(Hotel='Harbour Inn', rooms=2, guests=4)",
            "ReserveRooms(hotel='Harbour Inn', rooms=2, guests=4)",
            ["E3.2 step[0].argument.Hotel: 'Hotel' -> 'hotel'"],
        ),
    ],
)
def test_a_program_s_call_of_a_tool_a_search_documented_is_repaired_as_a_listed_one(
    program: str, repaired: str, repairs: list[str]
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools([_SEARCHER]), retriever=None))
    decision = decider.decide_program(program, instruction="Book two rooms", context=_HOTEL)
    assert (decision.action, decision.text) == ("forward", repaired)
    assert [str(r) for r in decision.repairs] == repairs


_CONVERT = {
    "name": "ConvertTemperature",
    "description": "Convert a temperature.",
    "input_parameters": {
        "value": {"type": "float", "description": "The temperature."},
        "temperature_unit": {"type": "str", "description": "The unit to convert to."},
    },
    "output_parameters": {"value": {"type": "float", "description": "The temperature."}},
}
_CITIES = {
    "name": "ListCities",
    "parameters": _takes(),
    "outputSchema": {
        "type": "object",
        "properties": {"cities": {"type": "array", "items": {"type": "string"}}},
    },
    "annotations": READS,
}
_WEATHER = {
    "name": "GetWeather",
    "description": "The weather forecast for a city.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
# a tool search that documented GetWeather (an MCP tools list), before the program
_FORECAST = "\n".join(
    [
        "User: The weather in Paris, in fahrenheit.",
        "API-Request: [ToolSearcher(keywords='weather')]->" + json.dumps({"tools": [_WEATHER]}),
        "AI: Checking.",
    ]
)


@pytest.mark.parametrize(
    ("model", "program", "repaired", "repairs", "left"),
    [
        # without the model temperature_unit, ConvertTemperature's, is E3.1: never renamed
        # (issue 39: _call_repairs 11, whose searched tools' checks loaded the model)
        (
            False,
            'get_weather(city="Paris", temperature_unit="fahrenheit")',
            'GetWeather(city="Paris", temperature_unit="fahrenheit")',
            ["E2.2 step[0].api: 'get_weather' -> 'GetWeather'"],
            [("E3.1", ("step[0]", "argument", "temperature_unit"))],
        ),
        # with it, E3.3 closest to unit, whose enum alone holds the value: renamed in the
        # rename's round, so a later round undone (a read rebound to a list) keeps it
        # (issue 39: _call_repairs 9, whose searched tools' checks went without it)
        (
            True,
            'c = ListCities()\nget_weather(city=x.cities, temperature_unit="fahrenheit")',
            'c = ListCities()\nGetWeather(city=x.cities, unit="fahrenheit")',
            [
                "E2.2 step[1].api: 'get_weather' -> 'GetWeather'",
                "E3.3 step[1].argument.temperature_unit: 'temperature_unit' -> 'unit'",
            ],
            [("E5.1", ("step[1]", "argument", "city"))],
        ),
    ],
)
def test_a_searched_tool_s_call_is_checked_with_the_scanner_s_own_model(
    request: pytest.FixtureRequest,
    model: bool,
    program: str,
    repaired: str,
    repairs: list[str],
    left: list[tuple[str, tuple[str, ...]]],
) -> None:
    retriever = request.getfixturevalue("api_retriever") if model else None
    catalog = ApiCatalog.from_tools([_SEARCHER, _CONVERT, _CITIES])
    decider = Decider(Scanner(catalog, retriever=retriever))
    decision = decider.decide_program(
        program, instruction="The weather in Paris, in fahrenheit", context=_FORECAST
    )
    assert decision.text == repaired
    assert [str(r) for r in decision.repairs] == repairs
    assert [(f.code, f.location) for f in decision.errors] == left


def test_a_program_s_call_with_a_positional_argument_is_not_repaired() -> None:
    # which parameter a position meant is the model's to say: its other values stay too
    tools = [
        {
            "name": "set_volume",
            "parameters": {
                "type": "object",
                "properties": {"room": {"type": "string"}, "level": {"type": "integer"}},
            },
        }
    ]
    decider = Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))
    program = 'set_volume("kitchen", level="5")'
    decision = decider.decide_program(program, instruction="the kitchen to 5")
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())
    assert [(f.code, f.location) for f in decision.errors] == [
        ("E4.1", ("step[0]", "argument", "level"))
    ]


@pytest.mark.parametrize(
    ("program", "repaired", "left"),
    [
        # a function renamed beside an unknown one
        (
            'x = fooBar()\nb = serchBooks(query="Dune")',
            'x = fooBar()\nb = searchBooks(query="Dune")',
            "E2 step[1].api: 'serchBooks' -> 'searchBooks'",
        ),
        # a parameter renamed beside it
        (
            'x = fooBar()\nb = searchBooks(Query="Dune")',
            'x = fooBar()\nb = searchBooks(query="Dune")',
            "E3.2 step[1].argument.Query: 'Query' -> 'query'",
        ),
    ],
)
def test_a_program_is_repaired_beside_an_unknown_function_left_to_the_model(
    bookshop: ApiCatalog, program: str, repaired: str, left: str
) -> None:
    decision = Decider(Scanner(bookshop, retriever=None)).decide_program(
        program, instruction="Show me Dune"
    )
    assert (decision.action, decision.text) == ("feedback", repaired)
    assert [str(r) for r in decision.repairs] == [left]
    assert [(f.code, f.location) for f in decision.errors] == [("E2", ("step[0]", "api"))]


def test_a_reference_rebound_to_a_value_of_another_type_is_left(bookshop: ApiCatalog) -> None:
    # b.books is documented, but a list where bookId takes one id: as many errors after
    program = 'b = searchBooks(query="Dune")\ngetBook(bookId=x.books)'
    decision = Decider(Scanner(bookshop, retriever=None)).decide_program(
        program, instruction="Show me Dune"
    )
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())
    assert [(f.code, f.location) for f in decision.errors] == [
        ("E5.1", ("step[1]", "path", "bookId"))
    ]


def test_a_program_s_function_renamed_keeps_its_name_when_another_api_fits_the_words(
    api_retriever: Any,
) -> None:
    # the name is the documented one now; which API the user asked for (E2.1) is the
    # model's to say, so the rename stays and that goes back (issue 39: _better 10-12)
    def tool(name: str, description: str, param: str) -> dict[str, Any]:
        return {"name": name, "description": description, "parameters": _takes(param)}

    catalog = ApiCatalog.from_tools(
        [
            tool("get_weather", "Weather forecast for a city.", "city"),
            tool("send_email", "Send an email message to a recipient.", "to"),
        ]
    )
    decider = Decider(Scanner(catalog, retriever=api_retriever))
    decision = decider.decide_program(
        'Get_Weather(city="Paris")', instruction="Send an email to bob@example.org"
    )
    assert (decision.action, decision.text) == ("feedback", 'get_weather(city="Paris")')
    assert [str(r) for r in decision.repairs] == [
        "E2.2 step[0].api: 'Get_Weather' -> 'get_weather'"
    ]
    assert [(f.code, f.location) for f in decision.errors] == [("E2.1", ("step[0]", "api"))]


def _looked_up(ids: int) -> list[dict[str, Any]]:
    """A lookup that takes ``ids`` identifiers and answers a ``uri`` three levels down,
    and a call that takes one: the graph scores that field, read by its last word, 0.3
    less 0.01 a level and 0.03 an identifier the lookup needs."""
    level: dict[str, Any] = {"type": "object", "properties": {"uri": {"type": "string"}}}
    for name in ("y", "x"):
        level = {"type": "object", "properties": {name: level}}
    return [
        {
            "name": "lookup",
            "parameters": _takes(*(f"{c}_id" for c in "abcdefg"[:ids])),
            "outputSchema": level,
            "annotations": READS,
        },
        {"name": "play_track", "parameters": _takes("track_uri")},
    ]


@pytest.mark.parametrize(
    ("ids", "read"),
    [
        # 0.15: FIELD_MARGIN exactly over no other producer, so it is clear (issue 39:
        # _reference 70)
        (4, "r.x.y.uri"),
        # 0.12: not clear
        (5, None),
    ],
)
def test_a_program_s_stand_in_is_read_from_a_field_clear_by_the_margin_itself(
    ids: int, read: str | None
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(_looked_up(ids)), retriever=None))
    values = [str(10 + i) for i in range(ids)]
    args = ", ".join(f'{c}_id="{v}"' for c, v in zip("abcdefg", values, strict=False))
    program = f'r = lookup({args})\nplay_track(track_uri="<track_uri>")'
    decision = decider.decide_program(program, instruction="play track " + " ".join(values))
    if read is None:
        assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())
    else:
        assert (decision.action, decision.text) == (
            "forward",
            program.replace('"<track_uri>"', read),
        )


_ORDERS = [
    {
        "name": "orders",
        "parameters": _takes(),
        "outputSchema": {
            "type": "object",
            "properties": {
                "orders": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
                }
            },
        },
        "annotations": READS,
    },
    {
        "name": "get_order",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "integer"}, "count": {"type": "integer"}},
            "required": ["order_id"],
        },
    },
]


@pytest.mark.parametrize(
    ("instruction", "repaired"),
    [
        ("show order 7", "get_order(order_id=7, count=2)"),
        # the id is made up: the parameter renamed would still be wrong, so the round
        # is undone and the model writes the call again
        ("show my order", 'get_order(Order_id=7, count="2")'),
    ],
)
def test_a_round_that_leaves_an_error_where_it_repaired_is_undone(
    instruction: str, repaired: str
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(_ORDERS), retriever=None))
    decision = decider.decide_program('get_order(Order_id=7, count="2")', instruction=instruction)
    assert decision.text == repaired


@pytest.mark.parametrize(
    ("program", "repaired", "repairs", "left"),
    [
        # a function renamed carries no change beside it that leaves an error where it was
        # made (o.orders is a list where order_id takes one id): the round is undone whole
        # (the rebound read was kept, E5.4 left where it was made)
        (
            "o = orders()\nget_ordr(order_id=7)\nget_order(order_id=x.orders)",
            "o = orders()\nget_ordr(order_id=7)\nget_order(order_id=x.orders)",
            [],
            [("E2", ("step[1]", "api")), ("E5.1", ("step[2]", "argument", "order_id"))],
        ),
    ],
)
def test_a_round_with_a_function_renamed_is_undone_like_any_other(
    program: str,
    repaired: str,
    repairs: list[str],
    left: list[tuple[str, tuple[str, ...]]],
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(_ORDERS), retriever=None))
    decision = decider.decide_program(program, instruction="show orders 6 and 7")
    assert decision.text == repaired
    assert [str(r) for r in decision.repairs] == repairs
    assert [(f.code, f.location) for f in decision.errors] == left


@pytest.mark.parametrize(
    ("program", "repaired", "repairs", "left"),
    [
        # a step's call and its reads are repaired in one round: the coercion beside a
        # read rebound to a list is undone with it (issue 39: _plan 52)
        pytest.param(
            'o = orders()\nget_order(order_id=x.orders, count="2")',
            'o = orders()\nget_order(order_id=x.orders, count="2")',
            [],
            [
                ("E4.1", ("step[1]", "argument", "count")),
                ("E5.1", ("step[1]", "argument", "order_id")),
            ],
            id="a-read-beside-a-coercion",
        ),
        # a function renamed: the steps after it are repaired in the same round, its own
        # reads in the next one (issue 39: _plan 53)
        pytest.param(
            'o = orders()\nget_ordr(order_id=x.orders[0].id)\nget_order(order_id=6, count="2")',
            "o = orders()\nget_order(order_id=o.orders[0].id)\nget_order(order_id=6, count=2)",
            [
                "E2 step[1].api: 'get_ordr' -> 'get_order'",
                "E4.1 step[2].argument.count: '2' -> 2",
                "E5.1 step[1].argument.order_id: 'x.orders[0].id' -> 'o.orders[0].id'",
            ],
            [],
            id="the-steps-after-a-rename",
        ),
        # a misspelt function is renamed only where the whole call fits it: a value of
        # the wrong type beside it is an error the renamed call still has (issue 39:
        # _call_repairs 32, 33, whose re-check dropped every E4, not only a read's)
        pytest.param(
            'get_ordr(order_id=6, count="2")',
            'get_ordr(order_id=6, count="2")',
            [],
            [("E2", ("step[0]", "api")), ("E4.1", ("step[0]", "argument", "count"))],
            id="a-rename-beside-a-wrong-type",
        ),
    ],
)
def test_a_program_s_repairs_round_by_round_in_order(
    program: str,
    repaired: str,
    repairs: list[str],
    left: list[tuple[str, tuple[str, ...]]],
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(_ORDERS), retriever=None))
    decision = decider.decide_program(program, instruction="show orders 6 and 7")
    assert decision.text == repaired
    assert [str(r) for r in decision.repairs] == repairs
    assert [(f.code, f.location) for f in decision.errors] == left


_LIBRARY = [
    {
        "name": "authors",
        "parameters": _takes(),
        "outputSchema": _gives("items", "id", "name"),
        "annotations": READS,
    },
    {
        "name": "books",
        "parameters": _takes(),
        "outputSchema": _gives("items", "id", "title"),
        "annotations": READS,
    },
    {"name": "get_book", "parameters": _takes("book_id")},
]


@pytest.mark.parametrize(
    ("program", "read"),
    [
        # two earlier responses have items[].id: the one that gives books
        ("a = authors()\nb = books()\n", "b.items[0].id"),
        # one has it: the read is from there, whatever it holds
        ("a = authors()\n", "a.items[0].id"),
    ],
)
def test_a_read_of_a_variable_never_assigned_is_rebound_to_the_one_response_with_its_path(
    program: str, read: str
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(_LIBRARY), retriever=None))
    decision = decider.decide_program(
        program + "get_book(book_id=x.items[0].id)", instruction="the first book"
    )
    assert decision.text == program + f"get_book(book_id={read})"


@pytest.mark.parametrize(
    ("program", "repaired", "repairs", "left"),
    [
        # a misspelt function is renamed only where the call fits the function it meant
        (
            'b = searchBooks(query="Dune")\ngetBok(bookId=b.books[0].id, foo=1)',
            'b = searchBooks(query="Dune")\ngetBok(bookId=b.books[0].id, foo=1)',
            [],
            [("E2", ("step[1]", "api")), ("E3", ("step[1]", "argument", "foo"))],
        ),
        (
            "getBok()",
            "getBok()",
            [],
            [("E2", ("step[0]", "api")), ("E3.4", ("step[0]", "path", "bookId"))],
        ),
        # a parameter given by reference, renamed
        (
            'b = searchBooks(query="Dune")\ngetBook(Bookid=b.books[0].id)',
            'b = searchBooks(query="Dune")\ngetBook(bookId=b.books[0].id)',
            ["E3.2 step[1].argument.Bookid: 'Bookid' -> 'bookId'"],
            [],
        ),
        # renamed, the function's references are judged: a round that would read a list
        # into bookId is undone, the rename kept
        (
            'b = searchBooks(query="Dune")\ngetBok(bookId=x.books)',
            'b = searchBooks(query="Dune")\ngetBook(bookId=x.books)',
            ["E2 step[1].api: 'getBok' -> 'getBook'"],
            [("E5.1", ("step[1]", "path", "bookId"))],
        ),
        # a round is undone whole: the parameter renamed beside that read too
        (
            'b = searchBooks(Query="Dune")\ngetBook(bookId=x.books)',
            'b = searchBooks(Query="Dune")\ngetBook(bookId=x.books)',
            [],
            [
                ("E3.2", ("step[0]", "argument", "Query")),
                ("E3.4", ("step[0]", "query", "query")),
                ("E5.1", ("step[1]", "path", "bookId")),
            ],
        ),
        # a line that cannot be read does not stop the repair of the others
        (
            'b = searchBooks(Query="Dune")\nprint(b.books[0].id',
            'b = searchBooks(query="Dune")\nprint(b.books[0].id',
            ["E3.2 step[0].argument.Query: 'Query' -> 'query'"],
            [("E1", ("line[2]",))],
        ),
        # a response that is a list of names has no id to read
        (
            "g = listGenres()\ngetBook(bookId=g.id)",
            "g = listGenres()\ngetBook(bookId=g.id)",
            [],
            [("E5.2", ("step[1]", "path", "bookId"))],
        ),
    ],
)
def test_a_program_s_repairs_round_by_round(
    bookshop: ApiCatalog,
    program: str,
    repaired: str,
    repairs: list[str],
    left: list[tuple[str, tuple[str, ...]]],
) -> None:
    decision = Decider(Scanner(bookshop, retriever=None)).decide_program(
        program, instruction="Show me Dune"
    )
    assert decision.text == repaired
    assert [str(r) for r in decision.repairs] == repairs
    assert [(f.code, f.location) for f in decision.errors] == left


@pytest.mark.parametrize(
    "program",
    [
        'd = devices()\nplay_all(device_ids=["<device_id>"])',
        'd = devices()\nplay_any(device_ids="<device_id>")',
    ],
)
def test_one_item_read_from_an_earlier_step_is_never_written_into_a_list_parameter(
    program: str,
) -> None:
    # which devices the user meant is not certain: one id for a list would play on one
    decision = Decider(Scanner(PLAYER, retriever=None)).decide_program(
        program, instruction="play music"
    )
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())
    assert [(f.code, f.location) for f in decision.errors] == [
        ("E5.3", ("step[1]", "argument", "device_ids"))
    ]


def test_a_stand_in_is_read_from_the_variable_as_bound_before_its_step() -> None:
    # t is bound again after the step: the step reads the reviews, the later orders are
    # nothing it can read (issue 39: _flow_repair 12)
    tools = [_TOP_REVIEWS, _GET_BOOK, *_ORDERS]
    decider = Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))
    program = 't = top_reviews()\nget_book(book_id="<book_id>")\nt = orders()'
    decision = decider.decide_program(program, instruction="the book of the top review")
    assert (decision.action, decision.text) == (
        "forward",
        "t = top_reviews()\nget_book(book_id=t.reviews[0].book_id)\nt = orders()",
    )


def test_a_stand_in_read_in_is_undone_with_the_round_that_leaves_an_error_beside_it() -> None:
    # x.orders rebound to o.orders is a list where order_id takes one id (E5.4 where it
    # was made): the round is undone whole, the stand-in's read with it, and the model
    # is told of both (issue 39: _flow_repair 100, the read's edit naming its parameter)
    compare = {
        "name": "compare",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "integer"}, "book_id": {"type": "string"}},
            "required": ["order_id", "book_id"],
        },
    }
    decider = Decider(
        Scanner(ApiCatalog.from_tools([_TOP_REVIEWS, *_ORDERS, compare]), retriever=None)
    )
    program = 'o = orders()\nt = top_reviews()\ncompare(order_id=x.orders, book_id="<book_id>")'
    decision = decider.decide_program(program, instruction="the book of the top review")
    assert (decision.action, decision.text, decision.repairs) == ("feedback", program, ())
    assert [(f.code, f.location) for f in decision.errors] == [
        ("E5.1", ("step[2]", "argument", "order_id")),
        ("E5.3", ("step[2]", "argument", "book_id")),
    ]


# -- a program: the producer written in past what the rounds left ---------------------------

_DEVICES = {
    "name": "devices",
    "parameters": _takes(),
    "outputSchema": _gives("devices", "id"),
    "annotations": READS,
}
_PLAY = {"name": "play", "parameters": _takes("device_id")}
_LOUD = {
    "name": "play",
    "parameters": {
        "type": "object",
        "properties": {
            "device_id": {"type": "string"},
            "volume": {"type": "integer"},
            "shuffle": {"type": "boolean"},
        },
        "required": ["device_id"],
        "dependentRequired": {"volume": ["shuffle"]},
    },
}


@pytest.mark.parametrize(
    ("tools", "program", "repaired", "left"),
    [
        # the rename of `From` to `from` would lose the call (`search(from="x")` does
        # not parse): that round is undone, and the producer is still written in
        # (issue 39: repair_program 56)
        pytest.param(
            [_SPELT_APART[1], _DEVICES, _PLAY],
            's = search(From="x")\nplay(device_id="<device_id>")',
            's = search(From="x")\ndevices_result = devices()\n'
            "play(device_id=devices_result.devices[0].id)",
            [("E3.2", ("step[0]", "argument", "From"))],
            id="past-a-lost-call",
        ),
        # one insertion per decision: the second stand-in is left, its finding now
        # naming the response to read it from (issue 39: repair_program 104)
        pytest.param(
            [_DEVICES, _PLAY],
            'play(device_id="<device_id>")\nplay(device_id="<device_id>")',
            "devices_result = devices()\nplay(device_id=devices_result.devices[0].id)\n"
            'play(device_id="<device_id>")',
            [("E5.3", ("step[2]", "argument", "device_id"))],
            id="beside-a-second-stand-in",
        ),
        # volume needs shuffle: the call's arguments as a whole are the model's to fix
        # (issue 39: repair_program 105)
        pytest.param(
            [_DEVICES, _LOUD],
            'play(device_id="<device_id>", volume=3)',
            "devices_result = devices()\nplay(device_id=devices_result.devices[0].id, volume=3)",
            [("E4.2", ("step[1]", "arguments"))],
            id="beside-an-error-of-the-whole-call",
        ),
    ],
)
def test_the_producer_is_written_in_past_what_the_rounds_left(
    tools: list[dict[str, Any]],
    program: str,
    repaired: str,
    left: list[tuple[str, tuple[str, ...]]],
) -> None:
    decider = Decider(Scanner(ApiCatalog.from_tools(tools), retriever=None))
    decision = decider.decide_program(program, instruction="play music")
    assert (decision.action, decision.text) == ("feedback", repaired)
    assert [(f.code, f.location) for f in decision.errors] == left

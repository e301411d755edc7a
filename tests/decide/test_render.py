"""A repaired call is written back into the model's text in the shape it came in (what
the user is shown, and what is sent): each case names the text, the call read from it,
the repaired call, and the exact text expected, or ``None`` where the text cannot be
written back faithfully (the call is then fed back, never sent rewritten)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback.core._model import ApiRequest
from autofeedback.decide._render import rewrite_output, rewrite_raw

PARIS = {"City": "Paris"}
FIXED = {"city": "Paris"}
#: a JSON call whose arguments are a JSON string holding the JSON text of the object
TWICE = json.dumps({"name": "get_weather", "arguments": json.dumps(json.dumps(PARIS))})


def _call(raw: str, name: str = "get_weather", arguments: Any = PARIS, **kw: Any) -> ApiRequest:
    return ApiRequest(name=name, arguments=arguments, raw=raw, **kw)


def _fixed(name: str = "get_weather", arguments: Any = FIXED) -> ApiRequest:
    return ApiRequest(name=name, arguments=arguments)


@pytest.mark.parametrize(
    ("raw", "original", "repaired", "expected"),
    [
        pytest.param(
            '{"name": "get_weather", "arguments": {"City": "Paris"}}',
            {},
            {},
            '{"name": "get_weather", "arguments": {"city": "Paris"}}',
            id="json-call",
        ),
        pytest.param(
            '{"tool": "get_weather", "args": "{\\"City\\": \\"Paris\\"}"}',
            {},
            {"name": "getWeather"},
            '{"tool": "getWeather", "args": "{\\"city\\": \\"Paris\\"}"}',
            id="other-keys-arguments-as-text-renamed",
        ),
        pytest.param(
            'call: {"function": {"name": "get_weather", "arguments": {"City": "Paris"}}} done',
            {},
            {},
            'call: {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}} done',
            id="one-level-down-prose-kept",
        ),
        pytest.param(
            '{"calls": [{"name": "a", "arguments": {}}, '
            '{"name": "get_weather", "arguments": {"City": "Paris"}}]}',
            {},
            {},
            '{"calls": [{"name": "a", "arguments": {}}, '
            '{"name": "get_weather", "arguments": {"city": "Paris"}}]}',
            id="second-item-of-a-list",
        ),
        pytest.param(
            TWICE,
            {"double_encoded": True},
            {},
            '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}',
            id="encoded-twice-written-once",
        ),
        pytest.param(
            TWICE,
            {},
            {},
            None,
            id="encoded-twice-not-read-so",
        ),
        pytest.param(
            '{"name": "ping", "arguments": {}}',
            {"name": "ping", "arguments": {}},
            {"name": "Ping", "arguments": {}},
            '{"name": "Ping", "arguments": {}}',
            id="no-arguments",
        ),
        pytest.param(
            '{"name": "ping"}',
            {"name": "ping", "arguments": {}},
            {"name": "ping", "arguments": {"x": 1}},
            None,
            id="arguments-added-where-none-were-written",
        ),
        pytest.param(
            'Action: get_weather\nAction Input: {"City": "Zürich"}',
            {"arguments": {"City": "Zürich"}},
            {"name": "getWeather", "arguments": {"city": "Zürich"}},
            'Action: getWeather\nAction Input: {"city": "Zürich"}',
            id="arguments-object-and-name-token",
        ),
        pytest.param(
            'Action: get_weather\nAction Input: {"City": "Paris"}',
            {},
            {},
            'Action: get_weather\nAction Input: {"city": "Paris"}',
            id="arguments-object-same-name",
        ),
        pytest.param(
            'Action: get_weather_now\nAction Input: {"City": "Paris"}',
            {},
            {"name": "getWeather"},
            None,
            id="name-not-written-as-a-word",
        ),
        pytest.param(
            'Action: {"note": 1} {"City": "Paris"}',
            {},
            {},
            'Action: {"note": 1} {"city": "Paris"}',
            id="the-object-that-is-the-arguments",
        ),
        pytest.param(
            '{"name": "get_weather", "arguments": {"City": "Zürich"}}',
            {"arguments": {"City": "Zürich"}},
            {"arguments": {"city": "Zürich"}},
            '{"name": "get_weather", "arguments": {"city": "Zürich"}}',
            id="json-call-text-as-written-not-escaped",
        ),
        pytest.param(
            'Action: get_weather, i.e. get_weather\nAction Input: {"City": "Paris"}',
            {},
            {"name": "getWeather"},
            'Action: getWeather, i.e. get_weather\nAction Input: {"city": "Paris"}',
            id="name-token-renamed-once",
        ),
        pytest.param(
            'note {not json} {"name": "get_weather", "arguments": {"City": "Paris"}}',
            {},
            {},
            'note {not json} {"name": "get_weather", "arguments": {"city": "Paris"}}',
            id="past-a-brace-that-is-not-json",
        ),
        pytest.param(
            "{" * 200 + '"name": "get_weather", "arguments": {"City": "Paris"}}',
            {},
            {},
            "{" * 199 + '{"name": "get_weather", "arguments": {"city": "Paris"}}',
            id="the-200th-brace-is-tried",
        ),
        pytest.param(
            "{" * 201 + '"name": "get_weather", "arguments": {"City": "Paris"}}',
            {},
            {},
            None,
            id="the-201st-brace-is-not",
        ),
        pytest.param(
            "<API>get_weather(City=\"Paris (FR)\", note='a)b', n=[1, (2)])</API>",
            {"arguments": {"City": "Paris (FR)", "note": "a)b", "n": [1, 2]}},
            {"arguments": {"city": "Paris (FR)", "note": "a)b", "n": [1, 2]}},
            "<API>get_weather(city='Paris (FR)', note='a)b', n=[1, 2])</API>",
            id="python-call-brackets-in-strings",
        ),
        pytest.param(
            'get_weather(City="a\\")b") tail',
            {"arguments": {"City": 'a")b'}},
            {"arguments": {"city": 'a")b'}},
            "get_weather(city='a\")b') tail",
            id="python-call-escaped-quote",
        ),
        pytest.param(
            'my-get_weather(City="a") ; get_weather(City="a")',
            {"arguments": {"City": "a"}},
            {"arguments": {"city": "a"}},
            "my-get_weather(City=\"a\") ; get_weather(city='a')",
            id="python-call-not-inside-another-name",
        ),
        pytest.param(
            'get_weather(City="the \\"Big Apple\\"") tail',
            {"arguments": {"City": 'the "Big Apple"'}},
            {"arguments": {"city": 'the "Big Apple"'}},
            "get_weather(city='the \"Big Apple\"') tail",
            id="python-call-escaped-quote-before-the-closing-one",
        ),
        pytest.param(
            "<API>scroll(offsetX=5, OffsetY=2)</API>",
            {"name": "scroll", "arguments": {"offsetX": 5, "OffsetY": 2}},
            {"name": "scroll", "arguments": {"offsetX": 5, "offsetY": 2}},
            "<API>scroll(offsetX=5, offsetY=2)</API>",
            id="python-call-capital-letters-outside-strings",
        ),
        pytest.param(
            'get_weather(City="a"',
            {"arguments": {"City": "a"}},
            {"arguments": {"city": "a"}},
            None,
            id="python-call-unclosed",
        ),
    ],
)
def test_a_repaired_call_is_written_in_the_shape_it_came_in(
    raw: str, original: dict[str, Any], repaired: dict[str, Any], expected: str | None
) -> None:
    got = rewrite_raw(raw, _call(raw, **original), _fixed(**repaired))
    assert got == expected


def _http(url: str, raw: str = "", **kw: Any) -> ApiRequest:
    return ApiRequest(method="GET", url=url, raw=raw, **kw)


def test_an_http_line_keeps_its_method_and_changes_only_the_url() -> None:
    raw = "GET https://api.example.org/v1/Movie/5/credits"
    original = _http("https://api.example.org/v1/Movie/5/credits", raw, format="http")
    repaired = _http("https://api.example.org/v1/movie/5/credits", format="http")
    assert rewrite_raw(raw, original, repaired) == "GET https://api.example.org/v1/movie/5/credits"
    assert rewrite_raw(raw, original, original) == raw
    # the URL's first place only: the model's prose after it stays as written
    said = f"{raw} (as in {original.url})"
    assert rewrite_raw(said, original, repaired) == (
        f"GET https://api.example.org/v1/movie/5/credits (as in {original.url})"
    )
    # a query parameter or body the line does not hold: not written back here
    moved = _http("https://api.example.org/v1/movie/5/credits", params={"a": 1}, format="http")
    assert rewrite_raw(raw, original, moved) is None
    # an HTTP request never turns into a call
    assert rewrite_raw(raw, original, _fixed()) is None
    gone = _http("https://api.example.org/v1/Movie/6", format="http")
    assert rewrite_raw("GET /elsewhere", gone, repaired) is None


def test_a_restgpt_input_keeps_its_fields_and_its_relative_url() -> None:
    raw = 'Input: {"url": "/v1/Movie/5", "params": {"Lang": "en"}, "description": "d"}'
    original = _http("/v1/Movie/5", raw, format="restgpt", params={"Lang": "en"})
    repaired = _http("https://api.example.org/v1/movie/5?x=1", params={"lang": "en"})
    assert rewrite_raw(raw, original, repaired) == (
        'Input: {"url": "/v1/movie/5?x=1", "params": {"lang": "en"}, "description": "d"}'
    )
    raw = 'Input: {"url": "https://api.example.org/v1/Movie/5", "description": "d"}'
    original = _http("https://api.example.org/v1/Movie/5", raw, format="restgpt")
    repaired = _http("https://api.example.org/v1/movie/5", body={"a": 1})
    assert rewrite_raw(raw, original, repaired) == (
        'Input: {"url": "https://api.example.org/v1/movie/5", "description": "d", "data": {"a": 1}}'
    )
    plain = _http("https://api.example.org/v1/movie/5")
    assert rewrite_raw(raw, original, plain) == (
        'Input: {"url": "https://api.example.org/v1/movie/5", "description": "d"}'
    )
    assert rewrite_raw("Input: none", original, plain) is None
    # what the repaired request sends replaces what the model wrote, even where empty
    raw = 'Input: {"url": "/v1/Movie/5", "params": {"q": "Zürich"}, "data": {"a": 1}}'
    original = _http("/v1/Movie/5", raw, format="restgpt", params={"q": "Zürich"}, body={"a": 1})
    repaired = _http("https://api.example.org/v1/movie/5")
    assert rewrite_raw(raw, original, repaired) == (
        'Input: {"url": "/v1/movie/5", "params": {}, "data": null}'
    )
    repaired = _http("https://api.example.org/v1/movie/5", params={"q": "Zürich"})
    assert rewrite_raw(raw, original, repaired) == (
        'Input: {"url": "/v1/movie/5", "params": {"q": "Zürich"}, "data": null}'
    )


def test_each_call_of_a_text_is_rewritten_in_its_place() -> None:
    written = ApiRequest(name="f", arguments={"A": 1}, raw="f(A=1)")
    fixed = ApiRequest(name="f", arguments={"a": 1})
    text = "first f(A=1) then f(A=1)"
    assert rewrite_output(text, [(written, fixed), (written, fixed)]) == "first f(a=1) then f(a=1)"
    # a call left as it was is skipped, and the next one is still rewritten
    assert rewrite_output("first f(A=1) then", [(written, written), (written, fixed)]) == (
        "first f(a=1) then"
    )
    # two calls where the text holds one, or a call without its text: not written back
    assert rewrite_output("first f(A=1) then", [(written, fixed), (written, fixed)]) is None
    unwritten = ApiRequest(name="f", arguments={"A": 1})
    assert rewrite_output("first f(A=1)", [(unwritten, fixed)]) is None
    assert rewrite_output("nothing", []) == "nothing"


BOOKSHOP = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"


def _fixed_name(before: str, after: str) -> dict[str, Any]:
    return {"code": "E2.2", "location": ["api"], "before": before, "after": after}


QUERY_FIXED = {
    "code": "E3.2",
    "location": ["argument", "Query"],
    "before": "Query",
    "after": "query",
}


@pytest.mark.parametrize(
    ("call", "repaired", "repairs"),
    [
        pytest.param(
            {"name": "searchBooks", "arguments": {"Query": "Dune"}, "metadata": {"tag": "x"}},
            {"name": "searchBooks", "arguments": {"query": "Dune"}, "metadata": {"tag": "x"}},
            [QUERY_FIXED],
            id="another-object-beside-the-arguments-kept",
        ),
        pytest.param(
            {
                "thought": '"Dune" is a title',
                "name": "searchBooks",
                "arguments": '{"Query": "Dune"}',
            },
            {
                "thought": '"Dune" is a title',
                "name": "searchBooks",
                "arguments": '{"query": "Dune"}',
            },
            [QUERY_FIXED],
            id="a-quoted-text-before-the-arguments-text",
        ),
        pytest.param(
            {"name": "searchBooks", "arguments": '{"Query": "Zürich"}'},
            {"name": "searchBooks", "arguments": '{"query": "Zürich"}'},
            [QUERY_FIXED],
            id="arguments-text-written-as-it-was-not-escaped",
        ),
        pytest.param(
            {"type": "function", "function": {"name": "list_genres", "arguments": {}}},
            {"type": "function", "function": {"name": "listGenres", "arguments": {}}},
            [_fixed_name("list_genres", "listGenres")],
            id="no-arguments-one-level-down",
        ),
        pytest.param(
            {"name": "list_genres", "arguments": None},
            {"name": "listGenres", "arguments": None},
            [_fixed_name("list_genres", "listGenres")],
            id="no-arguments-written-as-null",
        ),
        pytest.param(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "search_books",
                        "input": {"query": "Dune"},
                    },
                    {"type": "text", "text": "Searching."},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "searchBooks",
                        "input": {"query": "Dune"},
                    },
                    {"type": "text", "text": "Searching."},
                ],
            },
            [_fixed_name("search_books", "searchBooks")],
            id="a-block-of-a-list-with-the-blocks-after-it-kept",
        ),
    ],
)
def test_audit_fix_writes_a_call_record_back_in_its_shape(
    call: dict[str, Any], repaired: dict[str, Any], repairs: list[dict[str, Any]]
) -> None:
    """``audit --fix`` on a record's ``call`` object: the name and the arguments replaced
    where the model wrote them (an object, or its JSON text), everything else kept."""
    from autofeedback import ApiCatalog
    from autofeedback.audit._audit import audit_lines

    [result] = audit_lines(
        [json.dumps({"call": call})], ApiCatalog.from_file(BOOKSHOP), retriever=None, fix=True
    )
    got = result.as_dict()
    assert (got.get("error"), got["repaired"], got["repairs"]) == (None, repaired, repairs)

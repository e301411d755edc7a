"""Tests for stage E1, :mod:`autofeedback._parse`.

Most cases are data in ``tests/data/parse_cases.json``: ``input`` is the model output
(a string, or ``[[piece, count], ...]`` concatenated for megabyte-sized hostile input);
``requests`` lists the expected requests (only the fields given are compared) or
``problem`` a substring of the expected problem, with the expected ``format_hint``.
The real gold calls of API-Bank and ToolAlpaca under ``../shared/data`` must parse too.
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from autofeedback._parse import (
    MAX_INPUT_CHARS,
    ParseResult,
    RequestFormatError,
    parse_output,
    request_from_call,
    request_from_http,
)
from autofeedback.core._exceptions import AutoFeedbackError
from autofeedback.core._model import ApiRequest

CASES_FILE = Path(__file__).parents[1] / "data" / "parse_cases.json"
CASES: list[dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))


def _shared_data() -> Path:
    override = os.environ.get("AUTOFEEDBACK_SHARED_DATA")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _input(case: Mapping[str, Any]) -> str:
    given = case["input"]
    if isinstance(given, str):
        return given
    return "".join(piece * count for piece, count in given)


def _field(request: ApiRequest, name: str) -> Any:
    value = getattr(request, name)
    # Mappings may be any Mapping type; compare them as plain dicts.
    return dict(value) if isinstance(value, Mapping) else value


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    result = parse_output(_input(case))
    assert isinstance(result, ParseResult)
    if "problem" in case:
        assert result.requests == ()
        assert result.problem is not None
        assert case["problem"] in result.problem
        assert "\n" not in result.problem
        assert result.format_hint == case.get("format_hint")
        return
    assert result.problem is None, result.problem
    expected = case["requests"]
    if "count" in case:
        assert len(result.requests) == case["count"]
    else:
        assert len(result.requests) == len(expected), result.requests
    for got, want in zip(result.requests, expected, strict=False):
        for name, value in want.items():
            assert _field(got, name) == value, (name, got)


def test_cases_cover_every_format() -> None:
    formats = {r.get("format") for c in CASES for r in c.get("requests", [])}
    assert {"api-tag", "python", "api-bank", "json", "openai", "restgpt", "http"} <= formats
    assert len(CASES) >= 60


def test_raw_is_an_exact_span_of_the_input() -> None:
    for case in CASES:
        text = _input(case)
        if len(text) > 10_000:
            continue
        for request in parse_output(text).requests:
            assert request.raw and request.raw in text, (case["id"], request.raw)


def test_never_evaluates_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = f"f(x=open({str(marker)!r}, 'w').write('x'))"
    for text in (payload, f"<API>{payload}</API>", f"API-Request: [{payload}]"):
        result = parse_output(text)
        assert result.requests == ()
        assert result.problem is not None and "expression" in result.problem
    assert not marker.exists()


def test_rejects_non_text() -> None:
    with pytest.raises(TypeError, match="str"):
        parse_output(b"f(x=1)")  # type: ignore[arg-type]


def test_input_exactly_at_the_limit_is_scanned() -> None:
    text = "f(x=1) " + " " * (MAX_INPUT_CHARS - 7)
    assert len(text) == MAX_INPUT_CHARS
    assert [r.name for r in parse_output(text).requests] == ["f"]


# ------------------------------------------------------------ request_from_call/http


def test_request_from_call_variants() -> None:
    a = request_from_call({"name": "f", "arguments": '{"x": 1}'})
    b = request_from_call({"name": "f", "parameters": {"x": 1}})
    c = request_from_call({"type": "function", "function": {"name": "f", "arguments": {"x": 1}}})
    d = request_from_call({"Action": "f", "Action_Input": '{"x": 1}'})
    for r in (a, b, c, d):
        assert (r.name, dict(r.arguments)) == ("f", {"x": 1})
    assert c.format == "openai"
    assert a.format == "json"
    assert request_from_call({"name": "f", "arguments": ""}).arguments == {}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ({"arguments": {}}, "no function name"),
        ({"name": 3, "arguments": {}}, "non-empty string"),
        ({"name": "f", "arguments": "{oops"}, "not valid JSON"),
        ({"name": "f", "arguments": "[1]"}, "must be a JSON object, got a list"),
        ({"function": {"name": "f", "arguments": 5}}, "got a number"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_request_from_call_errors(call: Any, message: str) -> None:
    with pytest.raises(RequestFormatError, match=message) as info:
        request_from_call(call)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, AutoFeedbackError)


def test_request_from_http() -> None:
    r = request_from_http(
        {
            "method": "post",
            "url": "https://api.example.com/v1/pets?x=1",
            "params": {"limit": 5},
            "headers": {"X-Count": 2},
            "json": {"name": "rex"},
            "description": "extra keys are ignored",
        }
    )
    assert (r.method, r.url, r.format) == ("POST", "https://api.example.com/v1/pets?x=1", "request")
    assert dict(r.params) == {"limit": 5}
    assert dict(r.headers) == {"X-Count": "2"}
    assert r.body == {"name": "rex"}
    assert r.is_http
    assert request_from_http({"method": "GET", "url": "/a", "data": "k=v"}).body == "k=v"
    assert dict(request_from_http({"method": "GET", "url": "/a", "params": "?a=1&b=2"}).params) == {
        "a": "1",
        "b": "2",
    }


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"url": "/a"}, "no HTTP method"),
        ({"method": "FETCH", "url": "/a"}, "unknown HTTP method 'FETCH'"),
        ({"method": "GET"}, "no URL"),
        ({"method": "GET", "url": "/a", "params": [1]}, "'params' must be an object"),
        ({"method": "GET", "url": "/a", "headers": "x"}, "'headers' must be an object"),
    ],
)
def test_request_from_http_errors(record: dict[str, Any], message: str) -> None:
    with pytest.raises(RequestFormatError, match=message):
        request_from_http(record)


def test_http_record_in_output() -> None:
    text = 'Sending {"method": "DELETE", "url": "/v1/pets/3"} now'
    (r,) = parse_output(text).requests
    assert (r.method, r.url, r.format) == ("DELETE", "/v1/pets/3", "request")


# ------------------------------------------------------------------- real gold data


def _load(relative: str) -> Any:
    path = _shared_data() / relative
    if not path.is_file():
        pytest.skip(f"shared benchmark data not found at {path} (set AUTOFEEDBACK_SHARED_DATA)")
    return json.loads(path.read_text(encoding="utf-8"))


def test_api_bank_gold_calls_all_parse() -> None:
    items = _load("api-bank/level-1-api.json")
    assert len(items) == 399
    for item in items:
        gold = item["expected_output"]
        result = parse_output(gold)
        assert result.problem is None, (gold, result.problem)
        (request,) = result.requests
        expected_name = gold.split("[", 1)[1].split("(", 1)[0]
        assert request.name == expected_name
        assert request.format == "api-bank"
        assert request.raw == gold
        try:
            reference = ast.parse(gold.removeprefix("API-Request: "), mode="eval")
        except SyntaxError:
            # 16 gold calls nest quotes (attendees='['John', 'Jane']'): each value is
            # then the text between the outer quotes.
            for key, value in request.arguments.items():
                assert f"{key}='{value}'" in gold
        else:
            (node,) = reference.body.elts
            expected = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
            assert dict(request.arguments) == expected


def test_api_bank_gold_calls_parse_inside_model_style_output() -> None:
    items = _load("api-bank/level-1-api.json")
    for item in items[:50]:
        text = f"Generate API Request:\n```\n{item['expected_output']}\n```\nDone."
        (request,) = parse_output(text).requests
        assert request.name == item["expected_output"].split("[", 1)[1].split("(", 1)[0]


def _toolalpaca_answers() -> list[list[dict[str, str]]]:
    apis = _load("toolalpaca/eval_real.json")
    return [answer for api in apis for answer in api["Golden_Answers"]]


def _valid_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_toolalpaca_gold_answers_parse() -> None:
    answers = _toolalpaca_answers()
    assert sum(len(a) for a in answers) == 143
    broken = 0
    for answer in answers:
        result = parse_output(json.dumps(answer))
        if all(_valid_json(call["Action_Input"]) for call in answer):
            assert result.problem is None, (answer, result.problem)
            assert [r.name for r in result.requests] == [c["Action"] for c in answer]
            for request, call in zip(result.requests, answer, strict=True):
                assert dict(request.arguments) == json.loads(call["Action_Input"])
        else:
            # The dataset holds a few malformed gold inputs ("symbols": "symbols": ...):
            # they are exactly what E1 must report.
            broken += 1
            assert result.requests == ()
            assert result.problem is not None and "not valid JSON" in result.problem
    assert broken == 4


def test_toolalpaca_gold_answers_parse_in_react_text() -> None:
    for answer in _toolalpaca_answers():
        for call in answer:
            text = f"Thought: let me call it.\nAction: {call['Action']}\nAction Input: "
            text += call["Action_Input"] + "\nObservation:"
            result = parse_output(text)
            if _valid_json(call["Action_Input"]):
                (request,) = result.requests
                assert request.name == call["Action"]
                assert dict(request.arguments) == json.loads(call["Action_Input"])
            else:
                assert result.requests == () and result.problem is not None


@pytest.mark.parametrize("category", ["simple_python", "parallel", "parallel_multiple"])
def test_bfcl_ground_truth_as_python_calls(category: str) -> None:
    path = _shared_data() / "bfcl" / "possible_answer" / f"BFCL_v4_{category}.json"
    if not path.is_file():
        pytest.skip(f"shared benchmark data not found at {path} (set AUTOFEEDBACK_SHARED_DATA)")
    for line in path.read_text(encoding="utf-8").splitlines():
        truth = json.loads(line)["ground_truth"]
        calls = []
        expected = []
        for item in truth:
            ((name, params),) = item.items()
            # The first allowed value; "" means the parameter may be left out.
            args = {k: v[0] for k, v in params.items() if v and v[0] != ""}
            calls.append(f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")")
            expected.append((name, args))
        text = "```python\n" + "\n".join(calls) + "\n```"
        result = parse_output(text)
        assert result.problem is None, (text, result.problem)
        assert [(r.name, dict(r.arguments)) for r in result.requests] == expected


# ------------------------------------------------------------ native tool-call corpus

TOOLCALL_DIR = Path(__file__).parents[1] / "data" / "toolcalls"
TOOLCALLS: list[tuple[str, dict[str, Any]]] = [
    (path.stem, case)
    for path in sorted(TOOLCALL_DIR.glob("*.json"))
    for case in json.loads(path.read_text(encoding="utf-8"))
]


@pytest.mark.parametrize(
    "family,case", TOOLCALLS, ids=[f"{family}: {case['id']}" for family, case in TOOLCALLS]
)
def test_native_toolcall(family: str, case: dict[str, Any]) -> None:
    """Each family's outputs parse to the expected calls; broken ones name the format,
    where it broke and, when the call can still be read, the call in the <API> format."""
    result = parse_output(case["input"])
    if "problem" in case:
        assert result.requests == (), result.requests
        assert result.problem is not None and case["problem"] in result.problem, result.problem
        assert "\n" not in result.problem
        assert result.format_hint == case["format_hint"]
        assert result.suggestion == case.get("suggestion")
        return
    assert result.problem is None, result.problem
    # provider shapes also name the shape they came in and the call's id
    keyed = [tuple(k for k in ("shape", "call_id") if k in want) for want in case["requests"]]
    got = [
        {"name": r.name, "arguments": dict(r.arguments), "format": r.format}
        | {k: getattr(r, k) for k in keys}
        for r, keys in zip(result.requests, keyed + [()] * len(result.requests), strict=False)
    ]
    assert got == case["requests"]
    for request in result.requests:
        assert request.raw and request.raw in case["input"]


def test_toolcall_corpus_covers_every_family() -> None:
    families = {family.removesuffix("_broken") for family, _ in TOOLCALLS}
    assert {
        "qwen",
        "llama",
        "mistral",
        "hermes",
        "deepseek",
        "granite",
        "phi",
        "xlam",
        "gemma",
        "glm",
        "internlm",
        "xml",
        "openai_chat",
        "openai_responses",
        "anthropic",
        "gemini",
        "bedrock",
    } <= families
    broken = [case for _, case in TOOLCALLS if "problem" in case]
    assert len(broken) >= 6


# ------------------------------------------------------- through the scanner (E1, E4)

_TOOLS = [
    {
        "name": "searchBooks",
        "parameters": {
            "type": "object",
            "required": ["query"],
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "in_stock": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        },
    }
]


def _scanner() -> Any:
    from autofeedback import ApiCatalog, Scanner

    return Scanner(ApiCatalog.from_tools(_TOOLS), retriever=None)


def test_e1_feedback_shows_the_models_own_call_rewritten() -> None:
    from autofeedback import render_feedback

    finding = _scanner().scan(
        '<tool_call>\n{"name": "searchBooks", "arguments": {"query": "science", "limit": 10'
    )
    assert finding is not None and finding.code == "E1"
    assert finding.suggestion == "<API>searchBooks(query='science', limit=10)</API>"
    text = render_feedback(finding)
    assert "<API>searchBooks(query='science', limit=10)</API>" in text
    assert "ApiName(key1=" not in text  # not the generic example


@pytest.mark.parametrize(
    "output",
    [
        "<searchBooks query='science' limit=10 in_stock=true></searchBooks>",
        '<searchBooks>\n<query>science</query>\n<limit>10</limit>\n<tags>["a"]</tags>\n'
        "</searchBooks>",
        "<tool_call>\n<function=searchBooks>\n<parameter=query>\nscience\n</parameter>\n"
        "<parameter=limit>\n10\n</parameter>\n</function>\n</tool_call>",
        '<invoke name="searchBooks"><parameter name="query">science</parameter>'
        '<parameter name="in_stock">false</parameter></invoke>',
    ],
)
def test_xml_text_values_are_read_per_the_schema(output: str) -> None:
    assert list(_scanner().iter_findings(output)) == []


@pytest.mark.parametrize(
    "output,code,where",
    [
        ("<searchBooks query='science' limit=ten></searchBooks>", "E4.1", "limit"),
        ("<searchBooks query='science' limit=99/>", "E4.2", "limit"),
        ("<searchBooks query='science' in_stock=maybe/>", "E4.1", "in_stock"),
        ("<searchBooks limit=5/>", "E3.4", None),
    ],
)
def test_xml_values_still_get_e4_for_real_mistakes(output: str, code: str, where: str) -> None:
    finding = _scanner().scan(output)
    assert finding is not None and finding.code == code, finding
    if where is not None:
        assert finding.location[-1] == where


def test_xml_text_values_are_sent_as_the_documented_types(bookshop: Any) -> None:
    from autofeedback.loop._send import build_http

    op = next(o for o in bookshop.operations if o.name == "createOrder")
    (request,) = parse_output("<createOrder book_id=7 quantity=2 shipping='express'/>").requests
    call = build_http(request, op, "http://127.0.0.1:8080")
    assert call.json == {"book_id": 7, "quantity": 2, "shipping": "express"}


def test_json_errors_say_where_once() -> None:
    # json's own message ends in "at" ("Unterminated string starting at"): the position
    # follows it once, not after a second "at"
    result = parse_output('{"name": "f", "arguments": {"a": "b}}')
    assert result.problem == (
        "looks like a JSON function call but the JSON does not parse: "
        "Unterminated string starting at line 1 column 34"
    )

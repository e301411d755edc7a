"""The fast path (one compiled validation of a whole call) never accepts what the
detailed checks would flag."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, Scanner
from autofeedback.checks import _check_values
from autofeedback.checks._check_params import check_parameters
from autofeedback.checks._check_values import accepts, check_value
from autofeedback.core._resolve import Arg

_TOOLS = [
    {
        "name": "book",
        "parameters": {
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date"},
                "email": {"type": "string", "format": "email"},
                "seats": {"type": "integer", "minimum": 1, "maximum": 9},
                "class": {"type": "string", "enum": ["eco", "biz"]},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "note": {"type": ["string", "null"], "maxLength": 5},
                "ratio": {"type": "number", "exclusiveMinimum": 0},
            },
            "required": ["when", "seats"],
        },
    }
]
_CATALOG = ApiCatalog.from_tools(_TOOLS)
_OP = _CATALOG.operations[0]
_DETAILED = Scanner(_CATALOG, retriever=None)

_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    st.floats(-1, 2, allow_nan=False),
    st.sampled_from(["2024-05-17", "2024-13-45", "a@b.co", "nope", "eco", "biz", "x" * 6]),
    st.lists(st.sampled_from(["a", "b", 1]), max_size=4),
)
_names = st.sampled_from(["when", "email", "seats", "class", "tags", "note", "ratio", "extra"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_names, _values, max_size=6))
def test_what_the_fast_path_accepts_the_detailed_checks_accept(arguments: dict[str, Any]) -> None:
    if not accepts(_OP, arguments):
        return  # a refusal is never trusted: the detailed checks run and say why
    args = [Arg(k, "argument", v) for k, v in arguments.items()]
    result = check_parameters(_OP, args, _CATALOG)
    assert result.findings == ()
    for arg, param in result.matched:
        assert list(check_value(_OP, arg, param)) == []


def test_a_valid_call_takes_the_fast_path_and_an_invalid_one_does_not() -> None:
    assert accepts(_OP, {"when": "2024-05-17", "seats": 2, "class": "eco"})
    assert not accepts(_OP, {"when": "2024-05-17", "seats": "2"})
    assert not accepts(_OP, {"when": "2024-13-45", "seats": 2})  # the date format
    call = {"name": "book", "arguments": {"when": "2024-05-17", "seats": 0}}
    (f,) = _DETAILED.iter_findings(call)
    assert (f.code, f.location) == ("E4.2", ("argument", "seats"))


# Each test below builds its catalog: a fast path compiled once at import (as _CATALOG's is)
# would hide a change in how it is built from every test run after it.


def _findings(catalog: ApiCatalog, call: dict[str, Any]) -> list[tuple[str, tuple[str, ...], str]]:
    return [
        (f.code, f.location, f.message)
        for f in Scanner(catalog, retriever=None).iter_findings(call)
    ]


def test_a_call_missing_a_required_argument_is_never_accepted() -> None:
    catalog = ApiCatalog.from_tools(_TOOLS)
    assert _findings(catalog, {"name": "book", "arguments": {"when": "2024-05-17"}}) == [
        ("E3.4", ("argument", "seats"), "required parameter 'seats' is missing")
    ]


def _spec(path: str, method: str, operation: dict[str, Any]) -> ApiCatalog:
    operation = {**operation, "responses": {"200": {"description": "ok"}}}
    info = {"title": "items", "version": "1"}
    return ApiCatalog.from_obj(
        {"openapi": "3.0.3", "info": info, "paths": {path: {method: operation}}}
    )


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def test_a_name_documented_in_two_places_is_checked_as_the_first() -> None:
    catalog = _spec(
        "/items/{id}",
        "put",
        {
            "operationId": "putItem",
            "parameters": [
                {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
            ],
            "requestBody": _body({"type": "object", "properties": {"id": {"type": "string"}}}),
        },
    )
    assert _findings(catalog, {"name": "putItem", "arguments": {"id": "abc"}}) == [
        ("E4.1", ("argument", "id"), "id must be an integer, got string 'abc'")
    ]


def test_a_composed_body_called_by_name_takes_the_detailed_checks() -> None:
    def shape(field: str) -> dict[str, Any]:
        props = {field: {"type": "boolean"}}
        return {
            "type": "object",
            "properties": props,
            "required": [field],
            "additionalProperties": False,
        }

    catalog = _spec(
        "/pets",
        "post",
        {"operationId": "addPet", "requestBody": _body({"oneOf": [shape("bark"), shape("meow")]})},
    )
    assert _findings(catalog, {"name": "addPet", "arguments": {"bark": True, "meow": True}}) == [
        (
            "E4.2",
            ("body",),
            "the body fits none of its documented shapes; the nearest, branch 1, is broken: "
            "Additional properties are not allowed ('meow' was unexpected)",
        )
    ]


def test_a_value_whose_schema_is_not_compiled_is_judged_by_the_detailed_checks() -> None:
    """jsonschema-rs takes 0.3 as a multiple of 0.1 and python-jsonschema does not
    (0.3 / 0.1 = 2.9999999999999996): a fraction divisor is never compiled, for the call
    or for one of its values, so both paths say what the detailed checks say."""
    # an extension keyword before it hides nothing after it
    x = {"x-unit": "m", "type": "number", "multipleOf": 0.1}
    properties = {"x": x, "q": {"type": "string"}}
    tool = {"name": "f", "description": "d", "parameters": {"properties": properties}}
    catalog = ApiCatalog.from_tools([tool])
    found = [("E4.2", ("argument", "x"), "x: 0.3 breaks the documented multipleOf 0.1")]
    assert _findings(catalog, {"name": "f", "arguments": {"x": 0.3}}) == found
    # a call that fails the fast path for another reason: each value is judged alone
    call = {"name": "f", "arguments": {"x": 0.3, "q": 1}}
    assert _findings(catalog, call) == [
        *found,
        ("E4.1", ("argument", "q"), "q must be a string, got integer 1"),
    ]


def test_a_call_whose_schema_is_not_compiled_has_its_formats_checked() -> None:
    properties = {
        "x": {"type": "number", "multipleOf": 0.1},
        "day": {"type": "string", "format": "date"},
    }
    tool = {"name": "f", "description": "d", "parameters": {"properties": properties}}
    catalog = ApiCatalog.from_tools([tool])
    assert _findings(catalog, {"name": "f", "arguments": {"day": "2024-05-17"}}) == []
    assert _findings(catalog, {"name": "f", "arguments": {"day": "2024-13-45"}}) == [
        ("E4.2", ("argument", "day"), "day must be a valid date; got '2024-13-45'")
    ]


_FRACTION = {"type": "number", "multipleOf": 0.1}


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "array", "items": _FRACTION}, [0.3]),
        ({"type": "object", "additionalProperties": _FRACTION}, {"v": 0.3}),
        ({"type": "object", "properties": {"v": _FRACTION}}, {"v": 0.3}),
        ({"anyOf": [_FRACTION, {"type": "null"}]}, 0.3),
        ({"allOf": [{"type": "number"}, {"multipleOf": 0.1}]}, 0.3),
    ],
)
def test_a_fraction_divisor_anywhere_in_a_schema_is_never_compiled(
    schema: dict[str, Any], value: Any
) -> None:
    tool = {"name": "f", "description": "d", "parameters": {"properties": {"x": schema}}}
    catalog = ApiCatalog.from_tools([tool])
    found = _findings(catalog, {"name": "f", "arguments": {"x": value}})
    assert [code for code, _, _ in found] == ["E4.2"]
    # and as one value of a call that fails the fast path for another reason
    found = _findings(catalog, {"name": "f", "arguments": {"x": value, "y": 1}})
    assert [code for code, _, _ in found] == ["E3", "E4.2"]


# -- the compiled validator: every pattern and format read as the detailed checks read it --

#: jsonschema-rs reads ``\b`` and ``\B`` by Unicode word characters, the detailed checks by
#: ECMA-262's ASCII ones: "éx" breaks ``\Bx`` and meets ``\bx`` only for the detailed
#: checks, so a pattern left to jsonschema-rs's own engine lets a wrong value through
INSIDE = r"\Bx"
EDGE = r"\bx"
_PLACES: dict[str, tuple[dict[str, Any], Any, Any, str]] = {
    # name: (schema, a right value, a wrong value, its finding)
    "top": ({"type": "string", "pattern": INSIDE}, "ax", "éx", "E4.2"),
    "items": ({"type": "array", "items": {"pattern": INSIDE}}, ["ax"], ["ax", "éx"], "E4.2"),
    "extra": (
        {"type": "object", "additionalProperties": {"pattern": INSIDE}},
        {},
        {"k": "éx"},
        "E4.2",
    ),
    "field": (
        {"type": "object", "properties": {"k": {"pattern": INSIDE}}},
        {"k": "ax"},
        {"k": "éx"},
        "E4.2",
    ),
    "any": (
        {"anyOf": [{"type": "string", "pattern": INSIDE}, {"type": "integer"}]},
        1,
        "éx",
        "E4.2",
    ),
    "all": ({"allOf": [{"type": "string"}, {"pattern": INSIDE}]}, "ax", "éx", "E4.2"),
    "not": ({"type": "string", "not": {"pattern": EDGE}}, "ax", "éx", "E4.2"),
    # a pattern beside an allOf of its own: both are kept
    "beside": ({"allOf": [{"maxLength": 3}], "pattern": INSIDE}, "ax", "aaax", "E4.2"),
    "also": ({"allOf": [{"maxLength": 3}], "pattern": INSIDE}, "ax", "éx", "E4.2"),
    # two patterns: each field keeps its own
    "a": ({"type": "string", "pattern": "^a+$"}, "aa", "bb", "E4.2"),
    "b": ({"type": "string", "pattern": "^b+$"}, "bb", "aa", "E4.2"),
    # formats: asserted ones checked (the light checker of a date, jsonschema's of a host
    # name), others ignored as the detailed checks ignore them
    "day": ({"type": "string", "format": "date"}, "2024-05-17", "2024-13-45", "E4.2"),
    "host": ({"type": "string", "format": "hostname"}, "api.example.com", "-a-.example", "E4.2"),
    "iri": ({"type": "string", "format": "iri"}, "no iri", 5, "E4.1"),
    "int": ({"type": "integer", "format": "int32"}, 5, "5", "E4.1"),
}


@pytest.fixture
def fresh_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    """The asserted formats' checkers are made once per process: made again for this test
    (mutation testing forks each run from a process that made them already)."""
    monkeypatch.setattr(_check_values, "_asserted_formats", {})


@pytest.mark.usefixtures("fresh_formats")
@pytest.mark.parametrize("wrong", list(_PLACES))
def test_the_compiled_validator_reads_patterns_and_formats_as_the_checks_do(wrong: str) -> None:
    properties = {name: schema for name, (schema, *_) in _PLACES.items()}
    catalog = ApiCatalog.from_tools([{"name": "f", "parameters": {"properties": properties}}])
    [op] = catalog.operations
    right = {name: value for name, (_, value, *_) in _PLACES.items()}
    assert accepts(op, right)  # the first call: walked
    assert accepts(op, right)  # from the second on: compiled, and a right call passes
    call = {"name": "f", "arguments": {**right, wrong: _PLACES[wrong][2]}}
    found = [(f.code, f.location[:2]) for f in Scanner(catalog, retriever=None).iter_findings(call)]
    assert found == [(_PLACES[wrong][3], ("argument", wrong))]


def test_a_value_the_compiled_validator_cannot_read_is_checked_in_detail() -> None:
    # a call given as Python data may hold what JSON has not (a set): jsonschema-rs
    # raises on it, and the value is then judged by the detailed checks, not passed
    properties = {"ids": {"type": "array", "items": {"type": "integer"}}, "n": {"type": "integer"}}
    tool = {"name": "get_items", "parameters": {"type": "object", "properties": properties}}
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    call = {"name": "get_items", "arguments": {"ids": {1, 2}, "n": "x"}}
    for _ in range(2):  # the first call, then the compiled validators
        assert [(f.code, f.location) for f in scanner.iter_findings(call)] == [
            ("E4.1", ("argument", "ids")),
            ("E4.1", ("argument", "n")),
        ]

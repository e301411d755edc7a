"""The first call of an operation with a plain schema is judged by a walk over its
arguments instead of a compiled validator (``checks/_quick.py``). A walk's "fits" must
never say clean what the validators refuse: checked against python-jsonschema and
jsonschema-rs on made-up plain schemas and values, and on listed edge cases (a float for
an integer, ``True`` for ``1``, NaN). A walk's "no" only sends the call to the validator."""

from __future__ import annotations

import math
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from autofeedback import ApiCatalog, Scanner
from autofeedback.checks import _check_values
from autofeedback.checks._quick import fits

NAMES = st.sampled_from(["a", "b", "c", "id", "tags"])
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "object", "array"])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=3)
)


def schemas() -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(
        st.builds(lambda t: {"type": t}, TYPES),
        st.builds(lambda ts: {"type": ts}, st.lists(TYPES, min_size=1, max_size=3, unique=True)),
        st.builds(
            lambda e: {"enum": e},
            st.lists(
                st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.text(max_size=2)),
                min_size=1,
                max_size=4,
            ),
        ),
        st.just({}),
        st.just({"description": "anything", "default": 3}),
    )

    def grow(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return st.one_of(
            st.builds(
                lambda props, req, extra: {
                    "type": "object",
                    "properties": props,
                    "required": [n for n in req if n in props],
                    **({} if extra is None else {"additionalProperties": extra}),
                },
                st.dictionaries(NAMES, children, max_size=3),
                st.lists(NAMES, max_size=3, unique=True),
                st.one_of(st.none(), st.just(False), children),
            ),
            st.builds(lambda items: {"type": "array", "items": items}, children),
        )

    return st.recursive(leaf, grow, max_leaves=8)


VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(NAMES, children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema=schemas(), value=VALUES)
def test_a_walk_never_says_clean_what_the_validators_refuse(
    schema: dict[str, Any], value: Any
) -> None:
    if fits(schema, value):
        assert Draft202012Validator(schema).is_valid(value)
        assert jsonschema_rs.validator_for(schema).is_valid(value)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, 1.0),  # an integer to the validators; the walk leaves it to them
        ({"type": "integer"}, True),
        ({"type": "number"}, math.nan),
        ({"enum": [1]}, True),
        ({"enum": [True]}, 1),
        ({"enum": [1]}, 1.0),
        ({"type": "object", "required": ["a"]}, {}),
        ({"type": "object", "properties": {}, "additionalProperties": False}, {"x": 1}),
        ({"type": "array", "items": {"type": "string"}}, ["a", 2]),
        # schemas no tool list should hold, still never clean
        ({"type": "object", "properties": {"a": False}}, {"a": 1}),
        ({"properties": ["a"]}, {"a": 1}),
        ({"type": ["string", "dict"]}, "x"),
        ({"type": 5}, 5),
    ],
)
def test_what_the_walk_does_not_say_clean(schema: dict[str, Any], value: Any) -> None:
    assert not fits(schema, value)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string", "format": "date"}, "2024-01-01"),
        ({"type": "string", "pattern": "^a"}, "abc"),
        ({"type": "integer", "minimum": 1}, 2),
        ({"anyOf": [{"type": "string"}]}, "x"),
        ({"$ref": "#/$defs/x"}, "x"),
        ({"type": "string", "x-unknown": 1}, "x"),
        ({"enum": [[1]]}, [1]),
        ({"type": "object", "properties": {"a": {"type": "string", "maxLength": 2}}}, {"a": "x"}),
        ({"type": "array", "items": [{"type": "string"}]}, ["x"]),
        ({"type": ["string", "string"]}, "x"),
        ({"type": "dict"}, {}),
        ({"type": "object", "required": "a"}, {"a": 1}),
    ],
)
def test_any_other_keyword_where_the_value_reaches_leaves_it_to_the_validator(
    schema: dict[str, Any], value: Any
) -> None:
    assert not fits(schema, value)


def test_a_keyword_the_value_does_not_reach_is_no_matter() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"},
                                               "b": {"type": "integer"}}}  # fmt: skip
    assert fits(schema, {"b": 1}) and not fits(schema, {"a": "x"})


def test_the_first_call_is_walked_and_the_second_compiles() -> None:
    tools = [
        {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        }
    ]
    catalog = ApiCatalog.from_tools(tools)
    scanner = Scanner(catalog, retriever=None)
    op = catalog.get("get_weather")
    call = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
    assert list(scanner.iter_findings(call)) == []
    assert _check_values._stored(_check_values._strict, op) is _check_values._MISSING
    assert list(scanner.iter_findings(call)) == []
    assert _check_values._stored(_check_values._strict, op) is not _check_values._MISSING
    # a wrong first call goes to the detailed checks as before
    other = ApiCatalog.from_tools(tools)
    wrong = {"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}
    assert [f.code for f in Scanner(other, retriever=None).iter_findings(wrong)] == ["E4.1"]
